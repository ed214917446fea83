//! The agents' follow-up worker: tasks per second at concurrency 1 and 8, on a real data directory, beside a peer
//! doing the same work with the same resources — the same tasks claimed, run and finished one by one by a plain
//! loop over the store (no threads, no timeout), which is what the worker adds its bounds to. Then the manager's
//! plan time is `pactwise-agents`' `routing_eval`.
//!
//! cargo run --release -p pactwise-api --example bench_agent_worker [-- TASKS REPEAT]

use anyhow::Result;
use pactwise_api::{Api, ApiOptions, WorkerOptions};
use pactwise_model::InMemoryApiKeySource;
use pactwise_store::{NewTask, OrgScope, Store, TaskDone};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn payload(i: usize) -> serde_json::Value {
    serde_json::json!({
        "action": "agent.follow_up", "depth": 1, "why": "benchmark",
        "work": {"kind": "notice", "title": format!("Notice {i}"), "message": "Within budget.", "urgent": false}
    })
}

fn enqueue(store: &Store, scope: &OrgScope, round: usize, n: usize) -> Result<()> {
    for i in 0..n {
        store.tasks().enqueue(
            scope,
            &NewTask {
                idempotency_key: format!("bench/{round}/{i}"),
                agent_type: "notifications".into(),
                priority: 5,
                payload: payload(i),
                scheduled_at: None,
            },
        )?;
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let repeat: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(3);
    let tmp = tempfile::tempdir()?;
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options)?;
    let scope = api.local_session().await?;
    let side = Store::open(&api.data_dir().database(), Arc::new(pactwise_domain::SystemClock))?;
    let side_scope = side.sessions().open(scope.session())?;
    let mut round = 0;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{{\"machine_cores\":{cores},\"tasks\":{n},\"repeat\":{repeat}}}");
    for concurrency in [1usize, 8] {
        let mut ours = Vec::new();
        for _ in 0..repeat {
            round += 1;
            enqueue(&side, &side_scope, round, n)?;
            let start = Instant::now();
            let mut done = 0;
            while done < n {
                let r = api
                    .work_agent_tasks(WorkerOptions {
                        concurrency,
                        timeout: Duration::from_secs(30),
                        batches: usize::MAX,
                    })
                    .await?;
                anyhow::ensure!(r.failed == 0 && r.timed_out == 0, "tasks failed: {r:?}");
                done += r.done;
            }
            ours.push(n as f64 / start.elapsed().as_secs_f64());
        }
        println!(
            "{{\"figure\":\"worker_tasks_per_second\",\"concurrency\":{concurrency},\"median\":{:.1},\"runs\":{ours:?}}}",
            median(ours.clone())
        );
    }
    // The peer: the same tasks, claimed, run and finished one at a time by a plain loop on the store's thread.
    let (peer_store, cred) = Store::open(&api.data_dir().database(), Arc::new(pactwise_domain::SystemClock))?
        .into_platform_worker("peer")
        .into_parts();
    let mut peer = Vec::new();
    for _ in 0..repeat {
        round += 1;
        enqueue(&side, &side_scope, round, n)?;
        let start = Instant::now();
        loop {
            let claimed =
                peer_store.tasks().claim_action(&cred, "agent.follow_up", 1, chrono::Duration::seconds(300))?;
            let Some(t) = claimed.into_iter().next() else { break };
            let out = pactwise_agents::tasks::run_task(&t.payload).map_err(anyhow::Error::msg)?;
            let done = TaskDone {
                result: out.result,
                notices: out
                    .notices
                    .into_iter()
                    .map(|x| pactwise_store::NewNotice {
                        key: format!("task/{}", t.id),
                        title: x.title,
                        message: x.message,
                        urgent: x.urgent,
                    })
                    .collect(),
                follow_ups: Vec::new(),
            };
            peer_store.tasks().complete_with(&cred, t.id, &done)?;
        }
        peer.push(n as f64 / start.elapsed().as_secs_f64());
    }
    println!(
        "{{\"figure\":\"plain_loop_tasks_per_second\",\"concurrency\":1,\"median\":{:.1},\"runs\":{peer:?}}}",
        median(peer.clone())
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("{{\"load_average\":\"{}\"}}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    Ok(())
}
