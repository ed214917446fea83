//! Decision propagation across desktops with `desktops` desktops connected to one sync service (issue 19), run by
//! `bench/sync.sh` (scenario `decisions`): an approver decides on their desktop, and the time until the run is no
//! longer waiting on its home desktop is taken.
//!
//! - The service is its own process: the release `pactwise-sync-server serve` binary (`--server-bin`) over a fresh
//!   SQLite file or the PostgreSQL URL given (`--database`); the organization and its three users are made with its
//!   `admin` subcommand, the other desktops' device tokens through its storage API (`admin::issue_device`, as an
//!   operator provisions a kiosk: no password hash per device). Its memory is read from `/proc/<pid>/status` (VmRSS)
//!   with no desktop connected (after the two measured desktops signed in), with half and with all of them connected
//!   (each holding a device token and an open long poll, `GET /api/v1/changes/wait`), and its peak (VmHWM) after each
//!   mode.
//! - Two measured desktops are real `pactwise_api::Api` instances, each over its own data directory, signed in with
//!   `sync_sign_in` and running their `sync_loop()`: home = a buyer who starts procurement runs, approver = an
//!   approver who decides them.
//! - The other `desktops - 2` are real sync clients too: `pactwise_sync::SyncClient` loops over a `MemoryReplica`,
//!   each with its own device token; they hold the push channel and pull every change of the organization, which is
//!   the load that matters (they run no workflow engine and keep no SQLite store).
//!
//! Per sample: the home starts a run (it waits for the approval), the approver's desktop gets the step in its inbox
//! (not timed), a seeded gap spreads the decision over a poll interval, then the time from the approver's
//! `decide_approval` call until a round of the home's loop ends with the run no longer waiting (the round's hook has
//! resumed it by then). Twice: with the push channel, then with it disabled (every desktop polls every `poll_ms`;
//! the two measured desktops reach the service through a loopback proxy that answers the push channel with 503, so
//! their loop falls back to its poll, as it does when a service has no push channel), with the same gaps.
//!
//! Prints one JSON line. A benchmark may poll (the inbox check loop); nothing here is a test.
//! Usage: `bench_decisions --server-bin PATH [--database sqlite|postgres://…] [--desktops 200] [--samples 30]
//! [--poll-ms 3000]`. `PACTWISE_LOG` filters this process's log (stderr); `PACTWISE_BENCH_SPANS=1` adds each
//! span's timing when it closes (`sync_loop_round`, `sync_now`, …), to see where the time goes.

use anyhow::{Context, Result, anyhow, bail};
use pactwise_api::{Api, ApiOptions, MemorySyncTokens, OrgScope, RunView, SignInInput};
use pactwise_domain::{Clock, Decision, RunId, RunStatus, SystemClock};
use pactwise_model::InMemoryApiKeySource;
use pactwise_sync::client::{SyncConfig, TokioPause};
use pactwise_sync::{DeviceToken, HttpApi, LoopProgress, MemoryReplica, SyncClient};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use uuid::Uuid;

const PASSWORD: &str = "a-long-password-for-the-bench";

struct Options {
    server_bin: PathBuf,
    database: String,
    desktops: usize,
    samples: usize,
    poll: Duration,
}

fn options() -> Result<Options> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let number = |name: &str, default: u64| -> Result<u64> {
        flag(name).map_or(Ok(default), |v| v.parse().with_context(|| format!("{name} takes a number")))
    };
    let options = Options {
        server_bin: flag("--server-bin").context("usage: bench_decisions --server-bin PATH [--database …]")?.into(),
        database: flag("--database").unwrap_or_else(|| "sqlite".into()),
        desktops: number("--desktops", 200)? as usize,
        samples: number("--samples", 30)?.max(1) as usize,
        poll: Duration::from_millis(number("--poll-ms", 3_000)?.max(1)),
    };
    if options.desktops < 2 {
        bail!("--desktops counts the two measured desktops: at least 2");
    }
    Ok(options)
}

fn main() -> Result<()> {
    let spans = std::env::var("PACTWISE_BENCH_SPANS").is_ok_and(|v| v == "1");
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("PACTWISE_LOG").unwrap_or_else(|_| "warn".into()))
        .with_span_events(if spans {
            tracing_subscriber::fmt::format::FmtSpan::CLOSE
        } else {
            tracing_subscriber::fmt::format::FmtSpan::NONE
        })
        .with_writer(std::io::stderr)
        .init();
    let o = options()?;
    let temp = tempfile::tempdir().context("a temporary directory")?;
    let url = if o.database == "sqlite" {
        format!("sqlite:{}", temp.path().join("sync.sqlite3").display())
    } else {
        o.database.clone()
    };
    let backend = if url.starts_with("sqlite:") { "sqlite" } else { "postgres" };
    let org = format!("decisions-{}", &Uuid::now_v7().simple().to_string()[20..]);
    let others = o.desktops - 2;

    // The organization and its people, through the service's own admin command; the other desktops' tokens (one
    // set per mode) through its storage API. The service is not running yet.
    admin(&o.server_bin, &url, &["create-org", "--slug", &org, "--name", "Decisions bench"], None)?;
    for (email, role) in [("home", "buyer"), ("approver", "approver"), ("desk", "reviewer")] {
        let email = format!("{email}@{org}.example");
        admin(&o.server_bin, &url, &["create-user", "--org", &org, "--email", &email, "--role", role], Some(PASSWORD))?;
    }
    let tokens = {
        let storage = pactwise_sync_server::open_storage(&url).context("opening the service's database")?;
        let issue = |mode: &str| -> Result<Vec<String>> {
            (0..others)
                .map(|i| {
                    let email = format!("desk@{org}.example");
                    let now = SystemClock.now();
                    let ttl = chrono::Duration::days(1);
                    let name = format!("{mode}-{i}");
                    Ok(pactwise_sync_server::admin::issue_device(storage.as_ref(), &org, &email, &name, now, ttl)?.0)
                })
                .collect()
        };
        (issue("push")?, issue("poll")?)
    };

    let service = Service::start(&o.server_bin, &url)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let result = runtime.block_on(async {
        let (service_url, health) = (service.url.clone(), reqwest::Client::new());
        service.ready(&health).await?;
        let bench = Bench { o: &o, org: &org, data: temp.path(), service: &service, http: health };
        let push = bench.mode(true, &service_url, tokens.0).await.context("with the push channel")?;
        let idle = push.idle.context("the push mode reads the service's memory")?;
        let connected = push.connected.context("the push mode reads the service's memory")?;
        let half = push.half_connected;
        let proxy = refusing_proxy(service_url.clone()).await?;
        let poll = bench.mode(false, &proxy, tokens.1).await.context("with the poll alone")?;
        let end = memory(service.pid())?;
        Ok::<_, anyhow::Error>((idle, half, connected, end, push, poll))
    });
    drop(service);
    let (idle, half, connected, end, mut push, mut poll) = result?;
    let per_desktop = (connected.rss_kb as f64 - idle.rss_kb as f64) / o.desktops as f64;
    let second_half = (o.desktops - o.desktops / 2) as f64;
    let per_desktop_marginal = half.map(|h| round1((connected.rss_kb as f64 - h.rss_kb as f64) / second_half));
    let p95 = pct(&mut push.latencies, 0.95);
    println!(
        "{}",
        json!({
            "bench": "sync", "backend": backend, "scenario": "decisions", "samples": o.samples,
            "desktops": o.desktops,
            "measured_desktops": "2 pactwise_api::Api (own data directory, sync_sign_in, sync_loop): a buyer's home \
                                  desktop running procurement runs, an approver's deciding them",
            "other_desktops": format!("{others} pactwise_sync::SyncClient loops over a MemoryReplica, each with its \
                                       own device token, holding the push channel and pulling every change"),
            "p50_ms": pct(&mut push.latencies, 0.50), "p95_ms": p95, "max_ms": pct(&mut push.latencies, 1.0),
            "goal_p95_ms": 1000, "met_goal": p95 < 1000.0,
            "home_round_woken_by": push.woken_by, "breakdown": push.breakdown,
            "waits_open_connected": push.waits_open, "other_desktops_failing": push.failing + poll.failing,
            "service_rss_idle_kb": idle.rss_kb, "service_rss_connected_kb": connected.rss_kb,
            "per_desktop_kb": round1(per_desktop), "service_rss_half_connected_kb": half.map(|h| h.rss_kb),
            "per_desktop_marginal_kb": per_desktop_marginal,
            "service_hwm_connected_kb": connected.hwm_kb, "service_hwm_after_push_kb": push.end_hwm_kb,
            "service_hwm_end_kb": end.hwm_kb,
            "connected_desktop_holds": "a device token and one open long poll (GET /api/v1/changes/wait)",
            "poll_interval_ms": o.poll.as_millis() as u64,
            "poll_p50_ms": pct(&mut poll.latencies, 0.50), "poll_p95_ms": pct(&mut poll.latencies, 0.95),
            "poll_max_ms": pct(&mut poll.latencies, 1.0),
            "poll_home_round_woken_by": poll.woken_by, "poll_breakdown": poll.breakdown,
        })
    );
    Ok(())
}

/// `pactwise-sync-server admin --database URL ARGS…`, the password (if any) on its standard input.
fn admin(bin: &Path, url: &str, args: &[&str], password: Option<&str>) -> Result<()> {
    let mut child = Command::new(bin)
        .arg("admin")
        .args(["--database", url])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    if let Some(password) = password {
        child.stdin.take().context("the admin command's stdin")?.write_all(password.as_bytes())?;
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("pactwise-sync-server admin {args:?} failed: {status}");
    }
    Ok(())
}

/// The service process; killed when dropped.
struct Service {
    child: Child,
    url: String,
}

impl Service {
    fn start(bin: &Path, url: &str) -> Result<Service> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let listen = format!("127.0.0.1:{port}");
        let child = Command::new(bin)
            .args(["serve", "--listen", &listen, "--database", url])
            .env("PACTWISE_LOG", std::env::var("PACTWISE_LOG").unwrap_or_else(|_| "warn".into()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {} serve", bin.display()))?;
        Ok(Service { child, url: format!("http://{listen}") })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    async fn ready(&self, http: &reqwest::Client) -> Result<()> {
        for _ in 0..300 {
            if http.get(format!("{}/health", self.url)).send().await.is_ok_and(|r| r.status().is_success()) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("the service did not answer /health within 30 s")
    }

    /// The push channel's open waits, from the service's `/metrics` (loopback).
    async fn waits_open(&self, http: &reqwest::Client) -> Result<u64> {
        let text = http.get(format!("{}/metrics", self.url)).send().await?.error_for_status()?.text().await?;
        text.lines()
            .find_map(|l| l.strip_prefix("pactwise_sync_waits_open "))
            .and_then(|v| v.trim().parse().ok())
            .context("no pactwise_sync_waits_open in /metrics")
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug, Clone, Copy)]
struct Memory {
    rss_kb: u64,
    hwm_kb: u64,
}

fn memory(pid: u32) -> Result<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).context("reading the service's memory")?;
    let field = |name: &str| -> Result<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("no {name} in /proc/{pid}/status"))
    };
    Ok(Memory { rss_kb: field("VmRSS:")?, hwm_kb: field("VmHWM:")? })
}

struct Bench<'a> {
    o: &'a Options,
    org: &'a str,
    data: &'a Path,
    service: &'a Service,
    http: reqwest::Client,
}

struct Mode {
    latencies: Vec<f64>,
    /// What woke the home's rounds between each decision and its run's resumption: only the push channel, the
    /// poll (alone or with a push), or neither (a local write, or a round already running).
    woken_by: Value,
    /// Since the decision: its `decide_approval` call returned; the approver's round (its push) ended.
    breakdown: Value,
    /// With the push channel: the service's memory once half the desktops, then every desktop, is connected.
    /// With the push channel: the service's memory with no desktop connected (the two measured ones signed in).
    idle: Option<Memory>,
    half_connected: Option<Memory>,
    connected: Option<Memory>,
    /// The service's peak memory at the end of the mode.
    end_hwm_kb: u64,
    waits_open: u64,
    /// Other desktops whose last round ended in an error.
    failing: usize,
}

struct Desktop {
    api: Api,
    scope: OrgScope,
    progress: watch::Receiver<LoopProgress>,
    running: tokio::task::JoinHandle<()>,
}

impl Bench<'_> {
    /// One mode: connect everyone, take the samples, disconnect everyone.
    async fn mode(&self, push: bool, measured_endpoint: &str, tokens: Vec<String>) -> Result<Mode> {
        let o = self.o;
        let name = if push { "push" } else { "poll" };
        let bound = o.poll * 3 + Duration::from_secs(60);
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let (stop, stopped) = watch::channel(false);
        let config = SyncConfig {
            interval: if push { SyncConfig::default().interval } else { o.poll },
            push_wait: if push { SyncConfig::default().push_wait } else { None },
            ..SyncConfig::default()
        };
        // The two measured desktops sign in first: the service's password hash (Argon2, some MiB per sign-in, which
        // its allocator keeps) is a sign-in's cost, not a connection's, so it falls before the idle reading.
        let home = self.sign_in(measured_endpoint, "home", name, push).await?;
        let approver = self.sign_in(measured_endpoint, "approver", name, push).await?;
        let idle = if push {
            tokio::time::sleep(Duration::from_millis(500)).await;
            Some(memory(self.service.pid())?)
        } else {
            None
        };
        let mut seed = 0xdec1_5105_u64 ^ u64::from(push);
        let (mut loops, mut clients) = (Vec::with_capacity(tokens.len()), Vec::with_capacity(tokens.len()));
        // With the push channel, the service's memory is also read with half the desktops connected, so the cost of
        // one more connection shows apart from what the first connections warm up (threads, pools, caches).
        let half = if push && self.o.desktops / 2 < tokens.len() { self.o.desktops / 2 } else { 0 };
        let mut half_connected = None;
        for (i, token) in tokens.into_iter().enumerate() {
            if i == half && half > 0 {
                half_connected = Some(self.settled(&clients, bound).await?);
            }
            let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
            let api = HttpApi::new(&self.service.url, Some(DeviceToken::new(token)))?;
            let client = Arc::new(SyncClient::with_api(replica, api, clock.clone(), Arc::new(TokioPause), config));
            clients.push(client.clone());
            // Polling desktops start spread over an interval, as real ones are (not all in one burst).
            let start = if push { Duration::ZERO } else { o.poll.mul_f64(unit(&mut seed)) };
            let mut stopped = stopped.clone();
            loops.push(tokio::spawn(async move {
                tokio::time::sleep(start).await;
                client.run(async move { drop(stopped.wait_for(|s| *s).await) }).await;
            }));
        }
        let home = self.connect(home).await?;
        let approver = self.connect(approver).await?;
        let (connected, waits_open) = if push {
            let connected = self.settled(&clients, bound).await?;
            (Some(connected), self.service.waits_open(&self.http).await?)
        } else {
            (None, 0)
        };

        // The same gaps in both modes, spread over a poll interval, so a decision lands anywhere in the home's cycle.
        let mut gap_seed = 0x5eed_u64;
        let mut latencies = Vec::with_capacity(o.samples);
        let (mut decide_calls, mut approver_rounds) = (Vec::new(), Vec::new());
        let (mut by_push, mut by_poll, mut by_other) = (0u64, 0u64, 0u64);
        let mut home_progress = home.progress.clone();
        for i in 0..o.samples {
            let input = json!({
                "request": format!("REQ-{i} standing desks ({name})"), "budget": 10000,
                "capabilities": ["office_furniture", "delivery"],
            });
            let run = home.api.start_run(&home.scope, "procurement".into(), input).await.map_err(api_err)?;
            if run.status != RunStatus::Waiting {
                bail!("run {i} did not wait for an approval: {:?}", run.status);
            }
            let step = tokio::time::timeout(bound, in_inbox(&approver, &run)).await.context("the step's arrival")??;
            tokio::time::sleep(o.poll.mul_f64(unit(&mut gap_seed))).await;

            let before = home_progress.borrow_and_update().clone();
            let mut approver_progress = approver.progress.clone();
            let approver_rounds_before = approver_progress.borrow_and_update().rounds;
            let started = Instant::now();
            // Where the time goes: the decision's local write, then the approver's round (its push, which the
            // service stamps), then the home's round (woken, pull, apply, the hook resuming the run).
            let approver_round = async {
                let _ = approver_progress.wait_for(|p| p.rounds > approver_rounds_before).await;
                started.elapsed()
            };
            let decided_and_resumed = async {
                approver
                    .api
                    .decide_approval(&approver.scope, step, Decision::Approve, "cheapest capable vendor".into(), None)
                    .await
                    .map_err(api_err)?;
                let decided = started.elapsed();
                let status = tokio::time::timeout(bound, resumed(&home, &mut home_progress, run.id))
                    .await
                    .with_context(|| format!("the decision on run {i} did not reach its home"))??;
                Ok::<_, anyhow::Error>((decided, status))
            };
            let (approver_round, decided) = tokio::join!(approver_round, decided_and_resumed);
            let (decided, status) = decided?;
            latencies.push(started.elapsed().as_secs_f64() * 1_000.0);
            decide_calls.push(ms(decided));
            approver_rounds.push(ms(approver_round));
            let after = home_progress.borrow().clone();
            match (after.push_wakes > before.push_wakes, after.poll_wakes > before.poll_wakes) {
                (_, true) => by_poll += 1,
                (true, false) => by_push += 1,
                (false, false) => by_other += 1,
            }
            if status != RunStatus::Succeeded {
                tracing::warn!(?status, "run {i} resumed but did not finish in the round");
            }
        }

        // A client whose last round failed would have stopped pulling: say so rather than count it as load.
        let failing = clients.iter().filter(|c| c.status().last_error.is_some()).count();
        let _ = stop.send(true);
        for l in loops {
            l.await.map_err(|e| anyhow!("a sync client failed: {e}"))?;
        }
        for d in [home, approver] {
            d.api.sync_sign_out().await.map_err(api_err)?;
            let _ = tokio::time::timeout(Duration::from_secs(30), d.running).await;
        }
        let woken_by = json!({"push": by_push, "poll": by_poll, "other": by_other});
        let breakdown = json!({
            "decide_call_p50_ms": pct(&mut decide_calls, 0.5), "decide_call_p95_ms": pct(&mut decide_calls, 0.95),
            "approver_round_done_p50_ms": pct(&mut approver_rounds, 0.5),
            "approver_round_done_p95_ms": pct(&mut approver_rounds, 0.95),
        });
        let end_hwm_kb = memory(self.service.pid())?.hwm_kb;
        Ok(Mode { latencies, woken_by, breakdown, idle, half_connected, connected, end_hwm_kb, waits_open, failing })
    }

    /// The service's memory once every client started so far has finished its first round and, between rounds,
    /// listens (a second for the last waits to register).
    async fn settled(&self, clients: &[Arc<SyncClient<MemoryReplica>>], bound: Duration) -> Result<Memory> {
        for client in clients {
            let mut progress = client.progress();
            tokio::time::timeout(bound, progress.wait_for(|p| p.rounds >= 1))
                .await
                .context("a client's first round")??;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        memory(self.service.pid())
    }

    /// A measured desktop: its own data directory, signed in (not yet connected).
    async fn sign_in(&self, endpoint: &str, who: &str, mode: &str, push: bool) -> Result<(Api, OrgScope)> {
        let options = ApiOptions {
            keys: Arc::new(InMemoryApiKeySource::empty()),
            sync_tokens: Arc::new(MemorySyncTokens::default()),
            sync_interval: if push { SyncConfig::default().interval } else { self.o.poll },
            ..ApiOptions::default()
        };
        let api = Api::open_with(self.data.join(format!("{who}-{mode}")), options).map_err(api_err)?;
        let sign_in = SignInInput {
            server: endpoint.to_string(),
            org: self.org.to_string(),
            email: format!("{who}@{}.example", self.org),
            password: PASSWORD.into(),
        };
        let scope = api.sync_sign_in(sign_in).await.map_err(api_err).context("signing in to the service")?;
        Ok((api, scope))
    }

    /// A signed-in measured desktop's background loop, started and through its first round.
    async fn connect(&self, (api, scope): (Api, OrgScope)) -> Result<Desktop> {
        let sync = api.sync_loop().await.map_err(api_err)?.context("the desktop does not sync after its sign-in")?;
        let mut progress = sync.progress();
        let running = tokio::spawn(sync.run());
        let bound = self.o.poll * 3 + Duration::from_secs(60);
        tokio::time::timeout(bound, progress.wait_for(|p| p.rounds >= 1))
            .await
            .context("a desktop's first round")??;
        Ok(Desktop { api, scope, progress, running })
    }
}

/// The step of `run` in the approver's inbox (checked every 20 ms: a benchmark may poll).
async fn in_inbox(approver: &Desktop, run: &RunView) -> Result<pactwise_domain::ApprovalId> {
    loop {
        let inbox = approver.api.inbox(&approver.scope).await.map_err(api_err)?;
        if let Some(step) = inbox.iter().find(|a| a.run == run.id) {
            return Ok(step.id);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits for rounds of the home's loop until one ends with the run no longer waiting; its status then.
async fn resumed(home: &Desktop, progress: &mut watch::Receiver<LoopProgress>, run: RunId) -> Result<RunStatus> {
    loop {
        let rounds = progress.borrow_and_update().rounds;
        progress.wait_for(|p| p.rounds > rounds).await?;
        let status = home.api.show_run(&home.scope, run).await.map_err(api_err)?.run.status;
        if status != RunStatus::Waiting {
            return Ok(status);
        }
    }
}

/// A loopback proxy to the service that answers the push channel with 503 and forwards everything else: the two
/// measured desktops' loops then fall back to their poll, as with a service that has no push channel.
async fn refusing_proxy(upstream: String) -> Result<String> {
    use axum::http::{StatusCode, header};
    use axum::response::{IntoResponse, Response};
    let client = reqwest::Client::new();
    let forward = move |request: axum::extract::Request| {
        let (client, upstream) = (client.clone(), upstream.clone());
        async move {
            let (parts, body) = request.into_parts();
            let Ok(body) = axum::body::to_bytes(body, 64 << 20).await else {
                return StatusCode::PAYLOAD_TOO_LARGE.into_response();
            };
            let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
            let mut headers = parts.headers;
            for h in [header::HOST, header::CONTENT_LENGTH, header::CONNECTION, header::TRANSFER_ENCODING] {
                headers.remove(h);
            }
            let sent = client.request(parts.method, format!("{upstream}{path}")).headers(headers).body(body).send();
            let Ok(answer) = sent.await else { return StatusCode::BAD_GATEWAY.into_response() };
            let (status, mut headers) = (answer.status(), answer.headers().clone());
            let Ok(body) = answer.bytes().await else { return StatusCode::BAD_GATEWAY.into_response() };
            for h in [header::CONTENT_LENGTH, header::CONNECTION, header::TRANSFER_ENCODING] {
                headers.remove(h);
            }
            let mut response = Response::new(axum::body::Body::from(body));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            response
        }
    };
    let app = axum::Router::new()
        .route(
            "/api/v1/changes/wait",
            axum::routing::get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "no push channel in this mode") }),
        )
        .fallback(forward);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(format!("http://{addr}"))
}

fn api_err(e: pactwise_api::ApiError) -> anyhow::Error {
    anyhow!("{}: {}", e.code.as_str(), e.message)
}

/// A number in [0, 1) from a seeded splitmix64 (the same sequence as the service's `propagation` scenario).
fn unit(seed: &mut u64) -> f64 {
    *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    (v[i] * 1_000.0).round() / 1_000.0
}
