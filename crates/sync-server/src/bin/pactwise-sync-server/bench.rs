//! The load benchmark, on loopback: a server in this process on a fresh database, then
//! 1. one client syncing `single` changes: pushed by one device through `SyncClient`, then pulled by a second
//!    device of the same organization; timed end to end (goal: 10,000 changes in under 5 s);
//! 2. `clients` concurrent clients (10 devices per organization), each pushing `rounds` batches of `batch` changes
//!    and pulling everything new after each push; changes pushed and pulled per second, p50/p95 latencies;
//! 3. propagation: two devices of one organization each running the desktop's background loop
//!    (`SyncClient::run`); device A writes one change and is woken as a local write wakes it, and the time until
//!    device B has applied it is taken, `samples` times with the push channel and `samples` times with the poll
//!    alone (every `poll_ms`), with the same gaps between writes (spread over a poll interval); p50/p95 of each
//!    side by side.
//!
//! Prints one JSON line per scenario. Bounded: every loop has a fixed count; it stops by itself.

use anyhow::{Context, Result, anyhow};
use pactwise_domain::{Clock, Role, SystemClock};
use pactwise_sync::client::{SyncConfig, TokioPause};
use pactwise_sync::wire::{Change, ChangeBody, PushRequest};
use pactwise_sync::{DeviceToken, Hlc, HttpApi, MemoryReplica, SyncClient, SyncedModel};
use pactwise_sync_server::rate::RateConfig;
use pactwise_sync_server::{AppState, ServerConfig, SyncStorage, admin, open_storage, serve};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The benchmark's knobs (see the binary's `bench` arguments).
pub struct Options {
    pub clients: usize,
    pub rounds: usize,
    pub batch: usize,
    pub single: usize,
    pub samples: usize,
    pub poll_ms: u64,
    /// Scenarios to run; empty: all.
    pub only: Vec<String>,
}

impl Options {
    fn runs(&self, scenario: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == scenario)
    }
}

pub async fn run(database: &str, options: &Options) -> Result<()> {
    let temp = std::env::temp_dir().join(format!("pactwise-sync-bench-{}", Uuid::now_v7()));
    let url = if database == "sqlite" {
        format!("sqlite:{}", temp.join("sync.sqlite3").display())
    } else {
        database.to_string()
    };
    // Storage calls block (the PostgreSQL client runs a small runtime of its own): keep them off the async workers.
    let storage = tokio::task::block_in_place(|| open_storage(&url)).context("opening the benchmark database")?;
    let backend = storage.backend();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let config = ServerConfig {
        rate: RateConfig { burst: 1e9, per_second: 1e9 },
        sign_in_rate: RateConfig { burst: 1e9, per_second: 1e9 },
        ..ServerConfig::default()
    };
    let state = AppState::new(storage.clone(), clock.clone(), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, state, async move {
        let _ = stopped.await;
    }));
    let endpoint = format!("http://{addr}");
    let run_id: String = Uuid::now_v7().simple().to_string().chars().skip(20).collect();
    let run_id = run_id.as_str();

    let o = options;
    let result = async {
        if o.runs("one_client") {
            one_client(storage.as_ref(), &endpoint, clock.clone(), backend, o.single, run_id).await?;
        }
        if o.runs("concurrent_clients") {
            many_clients(storage.as_ref(), &endpoint, backend, o.clients, o.rounds, o.batch, run_id).await?;
        }
        if o.runs("propagation") {
            let poll = Duration::from_millis(o.poll_ms.max(1));
            propagation(storage.as_ref(), &endpoint, clock.clone(), backend, o.samples.max(1), poll, run_id).await?;
        }
        Ok(())
    }
    .await;
    let _ = stop.send(());
    let _ = server.await;
    if database == "sqlite" {
        let _ = std::fs::remove_dir_all(&temp);
    }
    result
}

fn device(storage: &dyn SyncStorage, org: &str, email: &str, name: &str) -> Result<String> {
    let (token, _) = tokio::task::block_in_place(|| {
        admin::issue_device(storage, org, email, name, SystemClock.now(), chrono::Duration::days(1))
    })?;
    Ok(token)
}

fn org_with_user(storage: &dyn SyncStorage, slug: &str) -> Result<String> {
    let now = SystemClock.now();
    let email = format!("bench@{slug}.example");
    tokio::task::block_in_place(|| -> Result<()> {
        admin::create_org(storage, slug, slug, now)?;
        admin::create_user(storage, slug, &email, "bench-password-123", Role::Reviewer, now)?;
        Ok(())
    })?;
    Ok(email)
}

async fn one_client(
    storage: &dyn SyncStorage,
    endpoint: &str,
    clock: Arc<dyn Clock>,
    backend: &str,
    n: usize,
    run_id: &str,
) -> Result<()> {
    let slug = format!("solo-{run_id}");
    let email = org_with_user(storage, &slug)?;
    let writer = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
    for i in 0..n {
        let fields: BTreeMap<_, _> =
            [("title".to_string(), json!(format!("Contract {i}"))), ("value".to_string(), json!(i))].into();
        writer.set_fields(SyncedModel::Contract, &format!("contract-{i}"), fields);
    }
    let reader = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
    let make = |replica: Arc<MemoryReplica>, token: String| -> Result<SyncClient<MemoryReplica>> {
        let api = HttpApi::new(endpoint, Some(DeviceToken::new(token)))?;
        Ok(SyncClient::with_api(replica, api, clock.clone(), Arc::new(TokioPause), SyncConfig::default()))
    };
    let a = make(writer.clone(), device(storage, &slug, &email, "writer")?)?;
    let b = make(reader.clone(), device(storage, &slug, &email, "reader")?)?;
    let started = Instant::now();
    let pushed = a.sync_now(Some(3)).await?;
    let push_s = started.elapsed().as_secs_f64();
    let pulled = b.sync_now(Some(3)).await?;
    let total_s = started.elapsed().as_secs_f64();
    if pulled.pulled as usize != n || reader.snapshot().len() != n {
        return Err(anyhow!("the second device received {} of {n} changes", pulled.pulled));
    }
    println!(
        "{}",
        json!({
            "bench": "sync", "backend": backend, "scenario": "one_client",
            "changes": n, "pushed": pushed.pushed, "pulled": pulled.pulled,
            "push_s": round3(push_s), "pull_s": round3(total_s - push_s), "total_s": round3(total_s),
            "changes_per_s": (n as f64 / total_s).round(), "goal_s": 5.0, "met_goal": total_s < 5.0,
        })
    );
    Ok(())
}

async fn many_clients(
    storage: &dyn SyncStorage,
    endpoint: &str,
    backend: &str,
    clients: usize,
    rounds: usize,
    batch: usize,
    run_id: &str,
) -> Result<()> {
    let per_org = 10;
    let orgs = clients.div_ceil(per_org);
    let mut tokens = Vec::with_capacity(clients);
    for o in 0..orgs {
        let slug = format!("load-{o}-{run_id}");
        let email = org_with_user(storage, &slug)?;
        for d in 0..per_org.min(clients - o * per_org) {
            tokens.push(device(storage, &slug, &email, &format!("device-{d}"))?);
        }
    }
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for (c, token) in tokens.into_iter().enumerate() {
        let endpoint = endpoint.to_string();
        tasks.push(tokio::spawn(async move { client_task(c, endpoint, token, rounds, batch).await }));
    }
    let (mut push_lat, mut pull_lat, mut pushed, mut pulled) = (Vec::new(), Vec::new(), 0u64, 0u64);
    for task in tasks {
        let r = task.await.map_err(|e| anyhow!("client task failed: {e}"))??;
        push_lat.extend(r.0);
        pull_lat.extend(r.1);
        pushed += r.2;
        pulled += r.3;
    }
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{}",
        json!({
            "bench": "sync", "backend": backend, "scenario": "concurrent_clients",
            "clients": clients, "organizations": orgs, "rounds": rounds, "batch": batch,
            "wall_s": round3(wall),
            "pushed_changes": pushed, "pulled_changes": pulled,
            "pushed_per_s": (pushed as f64 / wall).round(), "pulled_per_s": (pulled as f64 / wall).round(),
            "push_requests": push_lat.len(), "pull_requests": pull_lat.len(),
            "push_p50_ms": pct(&mut push_lat, 0.50), "push_p95_ms": pct(&mut push_lat, 0.95),
            "pull_p50_ms": pct(&mut pull_lat, 0.50), "pull_p95_ms": pct(&mut pull_lat, 0.95),
        })
    );
    Ok(())
}

type ClientFigures = (Vec<f64>, Vec<f64>, u64, u64);

async fn client_task(c: usize, endpoint: String, token: String, rounds: usize, batch: usize) -> Result<ClientFigures> {
    let api = HttpApi::new(&endpoint, Some(DeviceToken::new(token)))?;
    let node = Uuid::now_v7();
    let (mut push_lat, mut pull_lat, mut pushed, mut pulled, mut cursor) = (Vec::new(), Vec::new(), 0, 0, 0);
    for r in 0..rounds {
        let changes: Vec<Change> = (0..batch)
            .map(|i| Change {
                id: Uuid::now_v7(),
                model: SyncedModel::Contract,
                record_id: format!("c{c}-{i}"),
                hlc: Hlc { wall_ms: (r * batch + i) as u64 + 1, counter: 0, node },
                body: ChangeBody::Fields { fields: [("round".to_string(), json!(r))].into() },
            })
            .collect();
        let t = Instant::now();
        let response = api.push(&PushRequest { idempotency_key: Uuid::now_v7(), changes }).await?;
        push_lat.push(ms(t.elapsed()));
        pushed += response.results.len() as u64;
        loop {
            let t = Instant::now();
            let page = api.pull(cursor, 1_000).await?;
            pull_lat.push(ms(t.elapsed()));
            pulled += page.changes.len() as u64;
            cursor = page.next_cursor;
            if !page.has_more {
                break;
            }
        }
    }
    Ok((push_lat, pull_lat, pushed, pulled))
}

async fn propagation(
    storage: &dyn SyncStorage,
    endpoint: &str,
    clock: Arc<dyn Clock>,
    backend: &str,
    samples: usize,
    poll: Duration,
    run_id: &str,
) -> Result<()> {
    let slug = format!("propagation-{run_id}");
    let email = org_with_user(storage, &slug)?;
    // The same gaps for both modes, spread over a poll interval so a write lands anywhere in B's poll cycle.
    let mut seed = 0x5eed_u64;
    let gaps: Vec<Duration> = (0..samples).map(|_| poll.mul_f64(unit(&mut seed))).collect();
    let mut figures = Vec::new();
    for push in [true, false] {
        let a = device(storage, &slug, &email, "propagation-a")?;
        let b = device(storage, &slug, &email, "propagation-b")?;
        figures.push(propagation_mode(endpoint, clock.clone(), (a, b), push, poll, &gaps).await?);
    }
    let (mut with_push, mut with_poll) = (figures[0].clone(), figures[1].clone());
    let (push_p50, poll_p50) = (pct(&mut with_push, 0.50), pct(&mut with_poll, 0.50));
    println!(
        "{}",
        json!({
            "bench": "sync", "backend": backend, "scenario": "propagation", "samples": samples,
            "poll_interval_ms": poll.as_millis() as u64,
            "push_p50_ms": push_p50, "push_p95_ms": pct(&mut with_push, 0.95), "push_max_ms": pct(&mut with_push, 1.0),
            "poll_p50_ms": poll_p50, "poll_p95_ms": pct(&mut with_poll, 0.95), "poll_max_ms": pct(&mut with_poll, 1.0),
            "p50_ratio_poll_to_push": round3(poll_p50 / push_p50.max(0.001)),
        })
    );
    Ok(())
}

/// One mode of the propagation scenario: both devices run the background loop; each write on A is timed until B's
/// loop has applied it (B's progress says so).
async fn propagation_mode(
    endpoint: &str,
    clock: Arc<dyn Clock>,
    (token_a, token_b): (String, String),
    push: bool,
    poll: Duration,
    gaps: &[Duration],
) -> Result<Vec<f64>> {
    let push_wait = if push { SyncConfig::default().push_wait } else { None };
    let config = SyncConfig { interval: poll, push_wait, ..SyncConfig::default() };
    let client = |token: String| -> Result<(Arc<MemoryReplica>, Arc<SyncClient<MemoryReplica>>)> {
        let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
        let api = HttpApi::new(endpoint, Some(DeviceToken::new(token)))?;
        Ok((replica.clone(), Arc::new(SyncClient::with_api(replica, api, clock.clone(), Arc::new(TokioPause), config))))
    };
    let ((writer, a), (reader, b)) = (client(token_a)?, client(token_b)?);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut loops = Vec::new();
    for c in [a.clone(), b.clone()] {
        let mut stopped = stopped.clone();
        loops.push(tokio::spawn(async move {
            c.run(async move {
                let _ = stopped.wait_for(|s| *s).await;
            })
            .await
        }));
    }
    let bound = poll * 3 + Duration::from_secs(30);
    let mut progress = b.progress();
    tokio::time::timeout(bound, progress.wait_for(|p| p.rounds >= 1)).await.context("B's first round")??;
    let mut latencies = Vec::with_capacity(gaps.len());
    for (i, gap) in gaps.iter().enumerate() {
        tokio::time::sleep(*gap).await;
        let before = progress.borrow_and_update().pulled;
        let record = format!("p-{}-{i}", if push { "push" } else { "poll" });
        let started = Instant::now();
        writer.set_fields(SyncedModel::Contract, &record, [("n".to_string(), json!(i))].into());
        a.wake();
        tokio::time::timeout(bound, progress.wait_for(|p| p.pulled > before))
            .await
            .with_context(|| format!("write {i} did not reach the second device"))??;
        latencies.push(ms(started.elapsed()));
        if reader.record(SyncedModel::Contract, &record).is_none() {
            return Err(anyhow!("the second device pulled something else than write {i}"));
        }
    }
    let _ = stop.send(true);
    for l in loops {
        l.await.map_err(|e| anyhow!("a sync loop failed: {e}"))?;
    }
    Ok(latencies)
}

/// A number in [0, 1) from a seeded splitmix64, so both modes get the same gaps.
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

fn round3(x: f64) -> f64 {
    (x * 1_000.0).round() / 1_000.0
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    round3(v[i])
}
