//! The load benchmark, on loopback: a server in this process on a fresh database, then
//! 1. one client syncing `single` changes: pushed by one device through `SyncClient`, then pulled by a second
//!    device of the same organization; timed end to end (goal: 10,000 changes in under 5 s);
//! 2. `clients` concurrent clients (10 devices per organization), each pushing `rounds` batches of `batch` changes
//!    and pulling everything new after each push; changes pushed and pulled per second, p50/p95 latencies.
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

pub async fn run(database: &str, clients: usize, rounds: usize, batch: usize, single: usize) -> Result<()> {
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

    let result = async {
        one_client(storage.as_ref(), &endpoint, clock.clone(), backend, single, run_id).await?;
        many_clients(storage.as_ref(), &endpoint, backend, clients, rounds, batch, run_id).await
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
