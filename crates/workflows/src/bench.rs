//! The engine benchmark: N procurement runs on a file database with `synchronous = FULL` (every commit synced), no
//! model calls, the approval given programmatically by an approver session. Runs move in groups of `concurrency`:
//! the group's starts (with research), analyses, and decisions (with the rule-based legal step each resumes) each
//! share one commit (group commit): three commits per group. A super-step counts only after its commit returned,
//! so grouping does not weaken durability.

use pactwise_domain::{Decision, Role, RunStatus, SystemClock};
use pactwise_engine::{Engine, EngineError, RunState};
use pactwise_store::{DecisionInput, Store};
use serde::Serialize;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub engine: &'static str,
    pub graph: &'static str,
    pub runs: usize,
    pub concurrency: usize,
    pub seconds: f64,
    pub runs_per_s: f64,
    pub supersteps_per_s: f64,
    pub supersteps: u64,
    /// Transactions committed (each one sync of the WAL with `synchronous = FULL`).
    pub commits: u64,
    pub commits_per_run: f64,
    pub checkpoints_written: u64,
    pub journal_mode: String,
    pub sqlite_synchronous: i64,
    pub all_agreements_drafted: bool,
    pub db_bytes: u64,
}

fn store_error(e: pactwise_store::StoreError) -> EngineError {
    EngineError::Store(e)
}

/// Runs the benchmark in `dir` (a fresh database file is created there).
pub fn run(dir: &Path, runs: usize, concurrency: usize) -> Result<BenchReport, EngineError> {
    let runs = runs.max(1);
    let concurrency = concurrency.clamp(1, runs);
    let path = dir.join("engine-bench.sqlite3");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let store = Store::open(&path, Arc::new(SystemClock)).map_err(store_error)?;
    store.set_full_sync().map_err(store_error)?;
    let platform = store.platform();
    let org = platform.create_organization("Bench").map_err(store_error)?;
    let buyer = platform.create_user("Bench buyer", None).map_err(store_error)?;
    let approver = platform.create_user("Bench approver", None).map_err(store_error)?;
    platform.set_membership(org, buyer, Role::Buyer).map_err(store_error)?;
    platform.set_membership(org, approver, Role::Approver).map_err(store_error)?;
    let buyer = store.sessions().open(platform.start_session(buyer, org).map_err(store_error)?).map_err(store_error)?;
    let approver =
        store.sessions().open(platform.start_session(approver, org).map_err(store_error)?).map_err(store_error)?;
    let registry = crate::registry()?;
    let (store, credential) = store.into_platform_worker("bench").into_parts();
    let engine = Engine::new(&store, &registry, &credential);

    let input = |i: usize| json!({ "request": format!("REQ-{i:06} office chairs"), "budget": 10000, "capabilities": ["office_furniture", "delivery"] });
    let group = |from: usize, to: usize| -> Result<Vec<pactwise_store::RunRecord>, EngineError> {
        let starts: Vec<_> = (from..to).map(|i| (&buyer, "procurement", input(i))).collect();
        let ids = engine.start_many(&starts)?;
        engine.drive_many(&ids)?;
        let pending = store.approvals().inbox(&approver).map_err(store_error)?;
        let decisions: Vec<DecisionInput<'_>> = pending
            .iter()
            .filter(|a| ids.contains(&a.run))
            .map(|a| DecisionInput {
                approval: a.id,
                decision: Decision::Approve,
                reason: "within budget",
                choice: Some("Globex"),
            })
            .collect();
        let (_, records) = engine.decide_many(&approver, &decisions)?;
        Ok(records)
    };
    // One warm-up run outside the timing, as the peer does.
    group(usize::MAX - 1, usize::MAX)?;
    let commits_before = engine.commits();
    let checkpoints_before = store.runs().checkpoints_total(&credential).map_err(store_error)?;

    let started = Instant::now();
    let mut finished = Vec::with_capacity(runs);
    let mut from = 0;
    while from < runs {
        let to = (from + concurrency).min(runs);
        finished.extend(group(from, to)?);
        from = to;
    }
    let seconds = started.elapsed().as_secs_f64();

    let commits = engine.commits() - commits_before;
    let checkpoints_written = store.runs().checkpoints_total(&credential).map_err(store_error)? - checkpoints_before;
    let mut supersteps = 0u64;
    let mut all_drafted = finished.len() == runs;
    for r in &finished {
        let state: RunState = serde_json::from_str(&r.state).map_err(|e| EngineError::Corrupt(e.to_string()))?;
        supersteps += state.completed.len() as u64;
        all_drafted &= r.status == RunStatus::Succeeded && state.channels["outcome"]["status"] == "agreement_drafted";
    }
    let journal_mode = store.pragma_text("journal_mode").map_err(store_error)?;
    let sqlite_synchronous = store.pragma_text("synchronous").map_err(store_error)?.parse().unwrap_or(-1);
    // Closing the last connection checkpoints the WAL into the main file, as the peer's figure is taken.
    drop(store);
    let db_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    Ok(BenchReport {
        engine: "pactwise",
        graph: "procurement",
        runs,
        concurrency,
        seconds: round(seconds, 4),
        runs_per_s: round(runs as f64 / seconds, 2),
        supersteps_per_s: round(supersteps as f64 / seconds, 2),
        supersteps,
        commits,
        commits_per_run: round(commits as f64 / runs as f64, 3),
        checkpoints_written,
        journal_mode,
        sqlite_synchronous,
        all_agreements_drafted: all_drafted,
        db_bytes,
    })
}

fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}
