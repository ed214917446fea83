//! The engine's work loop, for a long-running process (the desktop app; `pactwise runs work` does one round
//! headless): the watchdog's sweep (expired leases, deadlines, escalations, tasks whose worker vanished), then the
//! runs that have work — due retries, timers that rang, woken parents — claimed a bounded batch at a time and
//! driven on. Between rounds it sleeps until the store's next due time (`Runs::next_due`), or until new work wakes
//! it ([`Api::wake_work`]: a run started, a decision, a cancellation), never in a fixed busy poll. Time comes from
//! the `Clock`; the wait goes through an injected [`Pause`], so tests drive it without sleeping.

use crate::runs::{RunView, with_engine};
use crate::{Api, ApiError};
use chrono::{DateTime, Utc};
use pactwise_domain::RunId;
use pactwise_store::SweepPolicy;
use pactwise_sync::Pause;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Runs claimed and driven together in one batch (their super-steps share commits): the loop's concurrency bound.
pub const WORK_BATCH: usize = 16;
/// Batches in one round at most; the store's thread serves the app's other requests between batches.
const MAX_BATCHES: usize = 8;
/// The longest the loop sleeps with nothing scheduled: work another process (the CLI) scheduled is seen then.
pub const MAX_IDLE: Duration = Duration::from_secs(60);
/// Renewal reminders started in one round at most (the rest go out in the next rounds).
const REMINDERS_PER_ROUND: u32 = 64;
/// The shortest sleep when work is due but nothing could move (another worker holds the run's lease).
const MIN_PAUSE: Duration = Duration::from_secs(1);

/// What one round of the work loop did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkRound {
    /// Runs that moved (any organization), with where they stand now.
    pub moved: Vec<RunView>,
    pub escalated_approvals: usize,
    pub leases_recovered: usize,
    /// Runs the watchdog stopped (deadline passed, too many failures).
    pub stopped: usize,
    /// When there is next something to do on its own; `None`: only new work can make some.
    pub next_due: Option<DateTime<Utc>>,
    /// The last batch was full: more work may be waiting now.
    pub more: bool,
    /// Renewal notice runs started because a contract's reminder fell due (each now waits in the inbox).
    pub reminders_started: Vec<RunId>,
    /// What the agents' follow-up worker did (notices left, tasks done, failed or timed out).
    pub tasks: crate::TaskRound,
}

impl WorkRound {
    /// Whether runs or the inbox changed (the UI is told).
    pub fn changed(&self) -> bool {
        !self.moved.is_empty()
            || self.escalated_approvals > 0
            || self.stopped > 0
            || !self.reminders_started.is_empty()
            || self.tasks.done + self.tasks.failed + self.tasks.timed_out > 0
    }

    /// How long to sleep after this round, from `now`.
    pub fn pause_after(&self, now: DateTime<Utc>) -> Duration {
        if self.more {
            return Duration::ZERO;
        }
        match self.next_due {
            None => MAX_IDLE,
            Some(at) => (at - now).to_std().unwrap_or(Duration::ZERO).clamp(MIN_PAUSE, MAX_IDLE),
        }
    }
}

impl Api {
    /// One round of the work loop across the organizations of this data directory (the platform's work; what the
    /// runs belong to is never changed by it).
    pub async fn work_round(&self) -> Result<WorkRound, ApiError> {
        let mut round = with_engine(self, |_, engine| {
            let report = engine.sweep(SweepPolicy::default())?;
            Ok(WorkRound {
                escalated_approvals: report.escalated_approvals,
                leases_recovered: report.leases_recovered.len(),
                stopped: report.deadlines_enforced.len() + report.stopped_for_failures.len(),
                ..WorkRound::default()
            })
        })
        .await?;
        let (reminded, views) = self.start_due_reminders().await?;
        round.reminders_started = reminded;
        round.moved.extend(views);
        for _ in 0..MAX_BATCHES {
            let (moved, full) = with_engine(self, |_, engine| {
                let records = engine.work(WORK_BATCH)?;
                let full = records.len() >= WORK_BATCH;
                Ok((records.iter().map(crate::runs::run_view).collect::<Vec<_>>(), full))
            })
            .await?;
            let seen: Vec<RunId> = round.moved.iter().map(|r| r.id).collect();
            round.moved.extend(moved.into_iter().filter(|r| !seen.contains(&r.id)));
            round.more = full;
            if !full {
                break;
            }
        }
        round.tasks = self.work_agent_tasks(crate::WorkerOptions::default()).await?;
        let credential = self.platform.clone();
        round.next_due = self
            .db
            .call(move |store| {
                let runs = store.runs().next_due(&credential)?;
                let tasks = store.tasks().next_scheduled(&credential, pactwise_agents::tasks::ACTION)?;
                Ok::<_, pactwise_store::StoreError>(runs.into_iter().chain(tasks).min())
            })
            .await?;
        Ok(round)
    }

    /// Starts a renewal notice run for each contract whose reminder fell due today or earlier (any organization:
    /// the platform's work; each run belongs to the contract's organization) and drives it to its inbox decision.
    /// The reminder is marked with its run, so it goes out once per notice deadline.
    async fn start_due_reminders(&self) -> Result<(Vec<RunId>, Vec<RunView>), ApiError> {
        let credential = self.platform.clone();
        let today = self.clock.now().date_naive();
        with_engine(self, move |store, engine| {
            let due = store.contracts().due_reminders_for_worker(&credential, today, REMINDERS_PER_ROUND)?;
            let (mut ids, mut views) = (Vec::new(), Vec::new());
            for r in due {
                let mut input = serde_json::json!({
                    "contract": r.name, "document": r.document.to_string(), "notice_by": r.notice_by.to_string(),
                });
                if let Some(end) = r.expires_on {
                    input["expires_on"] = serde_json::json!(end.to_string());
                }
                let id = engine.start_for_platform(r.org, RENEWAL_NOTICE, input.clone())?;
                record_start(store, &credential, RENEWAL_NOTICE, &input, id)?;
                views.push(crate::runs::run_view(&engine.drive(id)?));
                ids.push(id);
            }
            Ok((ids, views))
        })
        .await
    }

    /// Wakes the work loop now (new work may change what is due next).
    pub fn wake_work(&self) {
        self.work_wake.notify_one();
    }

    /// The work loop: a round, then a sleep until the next due time, new work, or `stop`. `on_change` hears of
    /// every round that moved runs or escalated approvals (the desktop tells its windows). A failed round is
    /// logged and tried again after the longest pause; the loop never ends on an error.
    pub async fn run_work_loop(
        &self,
        pause: Arc<dyn Pause>,
        on_change: impl Fn(&WorkRound) + Send,
        stop: impl Future<Output = ()> + Send,
    ) {
        tokio::pin!(stop);
        tracing::info!("work loop started");
        loop {
            let wait = match self.work_round().await {
                Ok(round) => {
                    if round.changed() {
                        on_change(&round);
                    }
                    round.pause_after(self.clock.now())
                }
                Err(e) => {
                    tracing::warn!(code = e.code.as_str(), error = %e.message, "a work round failed; trying again later");
                    MAX_IDLE
                }
            };
            if wait.is_zero() {
                tokio::task::yield_now().await;
                continue;
            }
            tokio::select! {
                biased;
                _ = &mut stop => break,
                _ = self.work_wake.notified() => {}
                _ = pause.pause(wait) => {}
            }
        }
        tracing::info!("work loop stopped");
    }

    /// The desktop's work loop: real sleeps, until the process ends.
    pub async fn run_work_loop_forever(&self, on_change: impl Fn(&WorkRound) + Send) {
        self.run_work_loop(Arc::new(pactwise_sync::TokioPause), on_change, std::future::pending()).await
    }
}

/// The built-in graph a contract's renewal reminder starts.
const RENEWAL_NOTICE: &str = "renewal_notice";

/// The contract and notice deadline a renewal notice run's input names.
fn renewal_of(input: &serde_json::Value) -> Option<(pactwise_domain::DocumentId, chrono::NaiveDate)> {
    let document = input["document"].as_str()?.parse().ok()?;
    let notice_by = input["notice_by"].as_str()?.parse().ok()?;
    Some((document, notice_by))
}

/// Whether the work a start of `graph` would do was already started by someone else: for a renewal notice, its
/// contract's reminder for that deadline already went out. Read in the same store call as the start and
/// [`record_start`], so nothing else on the store's thread comes between them.
pub(crate) fn already_started(
    store: &pactwise_store::Store,
    credential: &pactwise_store::PlatformCredential,
    graph: &str,
    input: &serde_json::Value,
) -> Result<bool, pactwise_store::StoreError> {
    match renewal_of(input).filter(|_| graph == RENEWAL_NOTICE) {
        Some((document, notice_by)) => store.contracts().reminder_went_out_for_worker(credential, document, notice_by),
        None => Ok(false),
    }
}

/// What a started run of a built-in graph changes beside itself, whoever started it (the work loop, or an agent's
/// follow-up): a renewal notice marks its contract's reminder for that deadline as gone out, so the reminder does
/// not start another. Other graphs change nothing here.
pub(crate) fn record_start(
    store: &pactwise_store::Store,
    credential: &pactwise_store::PlatformCredential,
    graph: &str,
    input: &serde_json::Value,
    run: RunId,
) -> Result<(), pactwise_store::StoreError> {
    if let Some((document, notice_by)) = renewal_of(input).filter(|_| graph == RENEWAL_NOTICE) {
        store.contracts().reminder_started_for_worker(credential, document, notice_by, run)?;
    }
    Ok(())
}
