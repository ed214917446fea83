//! The watchdog: one sweep recovers expired leases, enforces deadlines, stops runs that keep failing, escalates
//! approvals that waited too long and requeues tasks whose worker vanished. It is the platform's work (it takes a
//! [`PlatformCredential`]) and reaches over runs, approvals and tasks, so it lives apart from each of them.

use crate::approvals::{ESCALATES_HERE, escalate_due};
use crate::audit::append_platform_audit;
use crate::runs::{
    Applied, COLUMNS, NewEvent, RunRecord, Runs, StepCommit, apply_step, cancel_tree, insert_event, run_from_row,
};
use crate::sql::{CachedStatements, parse_text, write_tx};
use crate::time::to_sql;
use crate::{PlatformCredential, StoreError};
use pactwise_domain::{RunId, RunStatus};
use rusqlite::params;
use serde::Serialize;
use serde_json::Value;

/// Thresholds of the watchdog.
#[derive(Debug, Clone, Copy)]
pub struct SweepPolicy {
    /// A run with this many failed attempts is stopped.
    pub max_failures: u32,
}

impl Default for SweepPolicy {
    fn default() -> Self {
        SweepPolicy { max_failures: 20 }
    }
}

/// What one watchdog sweep did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    pub leases_recovered: Vec<RunId>,
    pub deadlines_enforced: Vec<RunId>,
    pub stopped_for_failures: Vec<RunId>,
    pub escalated_approvals: usize,
    pub tasks_requeued: usize,
}

impl Runs<'_> {
    /// The watchdog: recovers expired leases, enforces deadlines, stops runs that keep failing, escalates approvals
    /// that waited too long (once) and requeues tasks whose worker vanished. One transaction.
    ///
    /// A run it stops is handed to `stop` (with the reason) inside that transaction: the engine turns it into the
    /// run's next checkpoint — compensating its completed steps, or failed when there is nothing to undo — which is
    /// applied like any super-step. If `stop` returns `None` the run is marked failed as it stands. Either way its
    /// child runs, queued tasks and pending approvals are cancelled, and it holds no lease, so any worker may run
    /// its compensation. A run already compensating is left to finish that.
    pub fn sweep(
        &self,
        _credential: &PlatformCredential,
        policy: SweepPolicy,
        stop: &mut dyn FnMut(&RunRecord, &str) -> Option<StepCommit>,
    ) -> Result<SweepReport, StoreError> {
        let now = to_sql(self.store().clock().now());
        let tx = write_tx(self.store())?;
        let mut report = SweepReport::default();
        let ids = |sql: &str, p: &[&dyn rusqlite::ToSql]| -> Result<Vec<String>, StoreError> {
            let mut stmt = tx.prepare(sql)?;
            Ok(stmt.query_map(p, |r| r.get(0))?.collect::<Result<_, _>>()?)
        };
        let expired = ids(
            "UPDATE engine_runs SET lease_owner = NULL, lease_expires_at = NULL
             WHERE status NOT IN ('succeeded', 'failed', 'cancelled') AND lease_expires_at < ?1 RETURNING id",
            &[&now],
        )?;
        for id in &expired {
            insert_event(
                &tx,
                id,
                &NewEvent {
                    key: format!("lease-expired/{now}"),
                    superstep: 0,
                    node: None,
                    kind: "lease_recovered".into(),
                    details: Value::Null,
                },
                &now,
            )?;
            report.leases_recovered.push(parse_text("run id", id)?);
        }
        let late = ids(
            "SELECT id FROM engine_runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled', 'compensating')
             AND deadline_at IS NOT NULL AND deadline_at < ?1",
            &[&now],
        )?;
        let failing = ids(
            "SELECT id FROM engine_runs WHERE status NOT IN ('succeeded', 'failed', 'cancelled', 'compensating')
             AND failures >= ?1",
            &[&policy.max_failures],
        )?;
        for (list, reason, target) in [
            (&late, "the run passed its deadline".to_string(), &mut report.deadlines_enforced),
            (
                &failing,
                format!("stopped after {} failed attempts", policy.max_failures),
                &mut report.stopped_for_failures,
            ),
        ] {
            for id in list {
                let record = tx.prepare_cached_query_row(
                    &format!("SELECT {COLUMNS} FROM engine_runs WHERE id = ?1"),
                    [id],
                    run_from_row,
                )?;
                // Stopped once: a run past its deadline that also keeps failing is in both lists.
                if record.status.is_terminal() || record.status == RunStatus::Compensating {
                    continue;
                }
                insert_event(
                    &tx,
                    id,
                    &NewEvent {
                        key: "stopped".into(),
                        superstep: 0,
                        node: None,
                        kind: "stopped".into(),
                        details: serde_json::json!({ "reason": reason }),
                    },
                    &now,
                )?;
                let stepped = match stop(&record, &reason) {
                    Some(step) => apply_step(&tx, &step, None, &now)? != Applied::Stale,
                    None => false,
                };
                if stepped {
                    tx.prepare_cached_execute(
                        "UPDATE engine_runs SET lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL
                         WHERE id = ?1",
                        [id],
                    )?;
                } else {
                    tx.prepare_cached_execute(
                        "UPDATE engine_runs SET status = 'failed', reason = ?2, finished_at = ?3, updated_at = ?3,
                             revision = revision + 1, lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL
                         WHERE id = ?1 AND status NOT IN ('succeeded', 'failed', 'cancelled')",
                        params![id, reason, now],
                    )?;
                    // A parent waiting on this run has work again (a finished child wakes it the same way).
                    tx.prepare_cached_execute(
                        "UPDATE engine_runs SET status = 'running', wake_at = NULL, updated_at = ?2
                         WHERE id = (SELECT parent_run_id FROM engine_runs WHERE id = ?1) AND status = 'waiting'",
                        params![id, now],
                    )?;
                }
                cancel_tree(&tx, std::slice::from_ref(id), false, &reason, &now)?;
                tx.prepare_cached_execute(
                    "UPDATE engine_approvals SET status = 'cancelled' WHERE run_id = ?1 AND status = 'pending'",
                    [id],
                )?;
                tx.prepare_cached_execute(
                    "UPDATE engine_tasks SET status = 'cancelled', finished_at = ?2
                     WHERE run_id = ?1 AND status IN ('pending', 'processing')",
                    params![id, now],
                )?;
                let org: String =
                    tx.prepare_cached_query_row("SELECT org_id FROM engine_runs WHERE id = ?1", [id], |r| r.get(0))?;
                append_platform_audit(
                    &tx,
                    &org,
                    &now,
                    "run_stopped",
                    "run",
                    id,
                    &serde_json::json!({ "reason": reason }),
                )?;
                target.push(parse_text("run id", id)?);
            }
        }
        report.escalated_approvals = escalate_due(&tx, &now)?;
        report.tasks_requeued = tx.prepare_cached_execute(
            "UPDATE engine_tasks SET status = 'pending', claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL
             WHERE status = 'processing' AND lease_expires_at < ?1",
            [&now],
        )?;
        tx.commit()?;
        Ok(report)
    }
}

impl Runs<'_> {
    /// When the watchdog or a worker next has something to do on its own, across organizations: a waiting run's
    /// timer or retry, a lease that runs out, a deadline, an approval's escalation time, a task's lease. `None`:
    /// nothing is scheduled (only a decision or a new run can make work). A time already past means work is due.
    pub fn next_due(
        &self,
        _credential: &PlatformCredential,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, StoreError> {
        let next: Option<String> = self
            .store()
            .conn()
            .prepare_cached(&format!(
                "SELECT MIN(t) FROM (
                 SELECT MIN(wake_at) AS t FROM engine_runs
                  WHERE deleted_at IS NULL AND status IN ('running', 'waiting', 'compensating') AND wake_at IS NOT NULL
                 UNION ALL
                 SELECT MIN(lease_expires_at) FROM engine_runs
                  WHERE status NOT IN ('succeeded', 'failed', 'cancelled') AND lease_expires_at IS NOT NULL
                 UNION ALL
                 SELECT MIN(deadline_at) FROM engine_runs
                  WHERE deleted_at IS NULL AND status NOT IN ('succeeded', 'failed', 'cancelled')
                    AND deadline_at IS NOT NULL
                 UNION ALL
                 SELECT MIN(escalate_at) FROM engine_approvals WHERE {ESCALATES_HERE}
                 UNION ALL
                 SELECT MIN(lease_expires_at) FROM engine_tasks
                  WHERE status = 'processing' AND lease_expires_at IS NOT NULL)"
            ))?
            .query_row([], |r| r.get(0))?;
        Ok(crate::time::from_sql_opt(next)?)
    }
}
