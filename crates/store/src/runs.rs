//! Workflow runs: the run rows (with the snapshot of their graph), checkpoints, the idempotent event log and leases
//! (the watchdog's sweep is in `watchdog.rs`). The store does not interpret a run's state (that is the engine's); it
//! keeps it durable: every super-step of every run is written by [`Runs::commit`], in one transaction for a whole batch of runs (group
//! commit), fenced by the revision the engine read, so a stale, repeated or cancelled-meanwhile commit changes
//! nothing. Users read their organization's runs through an [`OrgScope`]; only the platform writes them.

use crate::audit::{append_audit, append_platform_audit};
use crate::sql::{CachedStatements, parse_text, write_tx};
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, PlatformCredential, Store, StoreError};
use chrono::{DateTime, Duration, Utc};
use pactwise_domain::{OrgId, Role, RunId, RunStatus, UserId};
use rusqlite::{OptionalExtension, Row, Transaction, params};
use serde::Serialize;
use serde_json::Value;

pub struct Runs<'s> {
    store: &'s Store,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    pub id: RunId,
    pub org: OrgId,
    pub graph_name: String,
    pub graph_version: u32,
    /// The graph definition the run started with, kept once per distinct text ([`Runs::graph_snapshot`]).
    pub graph_snapshot_id: i64,
    pub input: String,
    pub status: RunStatus,
    pub superstep: u32,
    pub revision: u64,
    pub state: String,
    pub reason: Option<String>,
    pub parent: Option<RunId>,
    pub parent_node: Option<String>,
    pub started_by: Option<UserId>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub wake_at: Option<DateTime<Utc>>,
    pub deadline_at: Option<DateTime<Utc>>,
    pub failures: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// A top-level run about to be started. The organization and the starting user come from the session.
#[derive(Debug, Clone)]
pub struct NewRun {
    id: RunId,
    org: OrgId,
    started_by: Option<UserId>,
    pub graph_name: String,
    pub graph_version: u32,
    pub graph_snapshot: String,
    pub input: String,
    pub deadline_at: Option<DateTime<Utc>>,
}

impl NewRun {
    /// A run in the session's organization, started by the session's user.
    pub fn in_scope(
        scope: &OrgScope,
        graph_name: &str,
        graph_version: u32,
        graph_snapshot: String,
        input: String,
    ) -> Self {
        NewRun {
            id: RunId::new(),
            org: scope.org(),
            started_by: Some(scope.user()),
            graph_name: graph_name.to_string(),
            graph_version,
            graph_snapshot,
            input,
            deadline_at: None,
        }
    }

    /// A run the platform starts for an organization (a renewal reminder that fell due): nobody started it. The
    /// organization is the record's that made it due; only a platform worker may do this.
    pub fn for_platform(
        _credential: &crate::PlatformCredential,
        org: pactwise_domain::OrgId,
        graph_name: &str,
        graph_version: u32,
        graph_snapshot: String,
        input: String,
    ) -> Self {
        NewRun {
            id: RunId::new(),
            org,
            started_by: None,
            graph_name: graph_name.to_string(),
            graph_version,
            graph_snapshot,
            input,
            deadline_at: None,
        }
    }

    pub fn id(&self) -> RunId {
        self.id
    }

    /// The same run with the id the caller chose: a start made once per piece of work (a follow-up task) takes its
    /// id from that work, so a second start of it is refused by the store instead of running twice.
    pub fn with_id(mut self, id: RunId) -> Self {
        self.id = id;
        self
    }
}

/// A child run (subgraph) started by a parent's super-step; it belongs to the parent's organization.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChildRun {
    pub id: RunId,
    pub parent_node: String,
    pub graph_name: String,
    pub graph_version: u32,
    pub graph_snapshot: String,
    pub input: String,
    pub state: String,
    pub status: RunStatus,
    pub superstep: u32,
}

/// One entry of a run's event log. `key` must be deterministic for the fact it records (e.g. `s3/legal/succeeded`),
/// so recording it again is a no-op.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub key: String,
    /// The super-step the event belongs to.
    pub superstep: u32,
    pub node: Option<String>,
    pub kind: String,
    pub details: Value,
}

/// An approval step opened by a super-step.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApproval {
    pub node: String,
    pub title: String,
    pub eligible_roles: Vec<Role>,
    pub four_eyes: bool,
    pub state_seen: Value,
    pub choices: Vec<String>,
    pub due_at: Option<DateTime<Utc>>,
    pub escalate_at: Option<DateTime<Utc>>,
}

/// Work handed to the task queue by a super-step. The key is deterministic, so a handoff is dispatched once.
#[derive(Debug, Clone, PartialEq)]
pub struct NewHandoff {
    pub idempotency_key: String,
    pub node: String,
    pub agent_type: String,
    pub priority: i64,
    pub payload: Value,
    pub scheduled_at: Option<DateTime<Utc>>,
}

/// Everything one super-step of one run writes, applied atomically with its checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct StepCommit {
    pub run: RunId,
    /// The revision the engine read; the commit applies only if the run is still at it (and not cancelled).
    pub expected_revision: u64,
    pub superstep: u32,
    pub status: RunStatus,
    pub state: String,
    pub reason: Option<String>,
    pub wake_at: Option<DateTime<Utc>>,
    /// This commit records a failed attempt (counted for the watchdog).
    pub failed_attempt: bool,
    pub events: Vec<NewEvent>,
    pub approvals: Vec<NewApproval>,
    pub handoffs: Vec<NewHandoff>,
    pub children: Vec<NewChildRun>,
    /// Cancel the run's child runs and their tasks and approvals (when the run fails or is stopped).
    pub cancel_children: bool,
    /// Audit entries (action, details), written with the platform as actor.
    pub audit: Vec<(String, Value)>,
}

impl StepCommit {
    pub fn new(run: RunId, expected_revision: u64, superstep: u32, status: RunStatus, state: String) -> StepCommit {
        StepCommit {
            run,
            expected_revision,
            superstep,
            status,
            state,
            reason: None,
            wake_at: None,
            failed_attempt: false,
            events: Vec::new(),
            approvals: Vec::new(),
            handoffs: Vec::new(),
            children: Vec::new(),
            cancel_children: false,
            audit: Vec::new(),
        }
    }
}

/// What the platform writes in one group commit.
#[derive(Debug, Clone)]
pub enum RunWrite {
    /// A new run together with its first checkpoint.
    Start {
        run: NewRun,
        step: StepCommit,
    },
    Step(StepCommit),
}

/// The outcome of one write of a group commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Written; the run is now at this revision.
    Yes { revision: u64 },
    /// Not written: the run moved on (another worker, a cancel, a repeated commit) since the engine read it.
    Stale,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEvent {
    pub seq: i64,
    pub superstep: u32,
    pub node: Option<String>,
    pub kind: String,
    pub details: Value,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checkpoint {
    pub revision: u64,
    pub superstep: u32,
    pub status: RunStatus,
    pub state: String,
    pub at: DateTime<Utc>,
}

/// What cancelling a run touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CancelReport {
    pub runs: usize,
    pub tasks: usize,
    pub approvals: usize,
}

pub(crate) const COLUMNS: &str =
    "id, org_id, graph_name, graph_version, graph_snapshot_id, input, status, superstep, revision, state,
     reason, parent_run_id, parent_node, started_by, lease_owner, lease_expires_at, wake_at, deadline_at, failures,
     created_at, updated_at, finished_at";

pub(crate) fn run_from_row(r: &Row<'_>) -> rusqlite::Result<RunRecord> {
    let opt_time = |i: usize| -> rusqlite::Result<Option<DateTime<Utc>>> { from_sql_opt(r.get(i)?) };
    Ok(RunRecord {
        id: parse_text("run id", &r.get::<_, String>(0)?)?,
        org: parse_text("org id", &r.get::<_, String>(1)?)?,
        graph_name: r.get(2)?,
        graph_version: r.get(3)?,
        graph_snapshot_id: r.get(4)?,
        input: r.get(5)?,
        status: parse_text("run status", &r.get::<_, String>(6)?)?,
        superstep: r.get(7)?,
        revision: r.get::<_, i64>(8)? as u64,
        state: r.get(9)?,
        reason: r.get(10)?,
        parent: r.get::<_, Option<String>>(11)?.map(|v| parse_text("run id", &v)).transpose()?,
        parent_node: r.get(12)?,
        started_by: r.get::<_, Option<String>>(13)?.map(|v| parse_text("user id", &v)).transpose()?,
        lease_owner: r.get(14)?,
        lease_expires_at: opt_time(15)?,
        wake_at: opt_time(16)?,
        deadline_at: opt_time(17)?,
        failures: r.get(18)?,
        created_at: from_sql(&r.get::<_, String>(19)?)?,
        updated_at: from_sql(&r.get::<_, String>(20)?)?,
        finished_at: opt_time(21)?,
    })
}

/// The id of a graph snapshot's row, written the first time this text is seen.
fn intern_snapshot(
    tx: &Transaction<'_>,
    graph_name: &str,
    graph_version: u32,
    snapshot: &str,
    now: &str,
) -> Result<i64, StoreError> {
    let found = tx
        .prepare_cached_query_row("SELECT id FROM engine_graph_snapshots WHERE snapshot = ?1", [snapshot], |r| r.get(0))
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    tx.prepare_cached_execute(
        "INSERT INTO engine_graph_snapshots (graph_name, graph_version, snapshot, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![graph_name, graph_version, snapshot, now],
    )?;
    Ok(tx.last_insert_rowid())
}

pub(crate) fn insert_event(tx: &Transaction<'_>, run: &str, e: &NewEvent, at: &str) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT OR IGNORE INTO engine_events (run_id, key, superstep, node, kind, details, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![run, e.key, e.superstep, e.node, e.kind, e.details.to_string(), at])?;
    Ok(())
}

/// Cancels the runs in `roots` and all their descendants that are not finished, with their open tasks and pending
/// approvals. Returns what changed.
pub(crate) fn cancel_tree(
    tx: &Transaction<'_>,
    roots: &[String],
    include_roots: bool,
    reason: &str,
    at: &str,
) -> Result<CancelReport, StoreError> {
    let mut report = CancelReport::default();
    for root in roots {
        let tree: Vec<String> = {
            let mut stmt = tx.prepare_cached(
                "WITH RECURSIVE tree(id) AS (
                     SELECT ?1 UNION SELECT r.id FROM engine_runs r JOIN tree t ON r.parent_run_id = t.id)
                 SELECT id FROM tree",
            )?;
            stmt.query_map([root], |r| r.get(0))?.collect::<Result<_, _>>()?
        };
        for id in tree.iter().filter(|id| include_roots || *id != root) {
            report.runs += tx.prepare_cached_execute(
                "UPDATE engine_runs SET status = 'cancelled', reason = ?2, finished_at = ?3, updated_at = ?3,
                     revision = revision + 1, lease_owner = NULL, lease_expires_at = NULL, wake_at = NULL
                 WHERE id = ?1 AND status NOT IN ('succeeded', 'failed', 'cancelled')",
                params![id, reason, at],
            )?;
            report.tasks += tx.prepare_cached_execute(
                "UPDATE engine_tasks SET status = 'cancelled', finished_at = ?2, lease_expires_at = NULL
                 WHERE run_id = ?1 AND status IN ('pending', 'processing')",
                params![id, at],
            )?;
            report.approvals += tx.prepare_cached_execute(
                "UPDATE engine_approvals SET status = 'cancelled' WHERE run_id = ?1 AND status = 'pending'",
                params![id],
            )?;
            insert_event(
                tx,
                id,
                &NewEvent {
                    key: "cancelled".into(),
                    superstep: 0,
                    node: None,
                    kind: "cancelled".into(),
                    details: serde_json::json!({ "reason": reason }),
                },
                at,
            )?;
        }
    }
    Ok(report)
}

/// Applies one super-step's commit inside `tx`. `lease` renews the worker's lease; `None` leaves it as it is.
pub(crate) fn apply_step(
    tx: &Transaction<'_>,
    step: &StepCommit,
    lease: Option<(&str, &str)>,
    now: &str,
) -> Result<Applied, StoreError> {
    let run = step.run.to_string();
    let new_revision = step.expected_revision + 1;
    let finished = step.status.is_terminal().then_some(now);
    let changed = tx
        .prepare_cached(
            "UPDATE engine_runs SET status = ?3, superstep = ?4, revision = ?5, state = ?6, reason = ?7, wake_at = ?8,
                 failures = failures + ?9, updated_at = ?10, finished_at = ?11,
                 lease_owner = CASE WHEN ?14 THEN NULL WHEN ?12 IS NULL THEN lease_owner ELSE ?12 END,
                 lease_expires_at = CASE WHEN ?14 THEN NULL WHEN ?12 IS NULL THEN lease_expires_at ELSE ?13 END
             WHERE id = ?1 AND revision = ?2 AND status NOT IN ('succeeded', 'failed', 'cancelled')
               AND (?12 IS NULL OR lease_owner IS NULL OR lease_owner = ?12 OR lease_expires_at < ?10)",
        )?
        .execute(params![
            run,
            step.expected_revision as i64,
            step.status.as_str(),
            step.superstep,
            new_revision as i64,
            step.state,
            step.reason,
            step.wake_at.map(to_sql),
            step.failed_attempt as i64,
            now,
            finished,
            lease.map(|l| l.0),
            lease.map(|l| l.1),
            // A finished or paused run holds no lease: whoever resumes it next may take it at once.
            step.status.is_terminal() || step.status == RunStatus::Waiting,
        ])?;
    if changed == 0 {
        return Ok(Applied::Stale);
    }
    tx.prepare_cached(
        "INSERT OR IGNORE INTO engine_checkpoints (run_id, revision, superstep, status, state, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![run, new_revision as i64, step.superstep, step.status.as_str(), step.state, now])?;
    for e in &step.events {
        insert_event(tx, &run, e, now)?;
    }
    let needs_org = !(step.approvals.is_empty()
        && step.handoffs.is_empty()
        && step.children.is_empty()
        && step.audit.is_empty()
        && !step.status.is_terminal());
    if !needs_org {
        return Ok(Applied::Yes { revision: new_revision });
    }
    let (org, parent): (String, Option<String>) = tx
        .prepare_cached("SELECT org_id, parent_run_id FROM engine_runs WHERE id = ?1")?
        .query_row([&run], |r| Ok((r.get(0)?, r.get(1)?)))?;
    for a in &step.approvals {
        let id = pactwise_domain::ApprovalId::new().to_string();
        let roles: Vec<&str> = a.eligible_roles.iter().map(|r| r.as_str()).collect();
        let inserted = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO engine_approvals (id, org_id, run_id, node, superstep, title, eligible_roles,
                 four_eyes, state_seen, choices, status, due_at, escalate_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending', ?11, ?12, ?13)",
            )?
            .execute(params![
                id,
                org,
                run,
                a.node,
                step.superstep,
                a.title,
                roles.join(","),
                a.four_eyes as i64,
                a.state_seen.to_string(),
                serde_json::to_string(&a.choices).unwrap_or_else(|_| "[]".into()),
                a.due_at.map(to_sql),
                a.escalate_at.map(to_sql),
                now,
            ])?;
        if inserted == 1 {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO engine_notifications (id, org_id, approval_id, kind, urgent, message, created_at)
                 VALUES (?1, ?2, ?3, 'new_approval', 0, ?4, ?5)",
            )?
            .execute(params![uuid::Uuid::now_v7().to_string(), org, id, format!("Approval needed: {}", a.title), now])?;
        }
    }
    for h in &step.handoffs {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO engine_tasks (id, org_id, idempotency_key, agent_type, priority, payload, status,
                 run_id, node, scheduled_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?9, ?10)",
        )?
        .execute(params![
            pactwise_domain::TaskId::new().to_string(),
            org,
            h.idempotency_key,
            h.agent_type,
            h.priority,
            h.payload.to_string(),
            run,
            h.node,
            h.scheduled_at.map(to_sql),
            now,
        ])?;
    }
    for c in &step.children {
        let snapshot = intern_snapshot(tx, &c.graph_name, c.graph_version, &c.graph_snapshot, now)?;
        tx.prepare_cached_execute(
            "INSERT OR IGNORE INTO engine_runs (id, org_id, graph_name, graph_version, graph_snapshot_id, input, status,
                 superstep, revision, state, parent_run_id, parent_node, started_by, created_at, updated_at)
             SELECT ?1, org_id, ?2, ?3, ?4, ?5, ?6, ?7, 0, ?8, id, ?9, started_by, ?10, ?10 FROM engine_runs
             WHERE id = ?11",
            params![
                c.id.to_string(),
                c.graph_name,
                c.graph_version,
                snapshot,
                c.input,
                c.status.as_str(),
                c.superstep,
                c.state,
                c.parent_node,
                now,
                run,
            ],
        )?;
    }
    for (action, details) in &step.audit {
        append_platform_audit(tx, &org, now, action, "run", &run, details)?;
    }
    if step.cancel_children {
        cancel_tree(
            tx,
            std::slice::from_ref(&run),
            false,
            step.reason.as_deref().unwrap_or("parent run stopped"),
            now,
        )?;
    }
    if step.status.is_terminal() {
        tx.prepare_cached_execute(
            "UPDATE engine_tasks SET status = 'cancelled', finished_at = ?2 WHERE run_id = ?1 AND status = 'pending'
               AND ?3 <> 'succeeded'",
            params![run, now, step.status.as_str()],
        )?;
        if let Some(parent) = parent {
            // The parent waits on this child: it has work again.
            tx.prepare_cached_execute(
                "UPDATE engine_runs SET status = 'running', wake_at = NULL, updated_at = ?2
                 WHERE id = ?1 AND status = 'waiting'",
                params![parent, now],
            )?;
        }
    }
    Ok(Applied::Yes { revision: new_revision })
}

impl<'s> Runs<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Runs { store }
    }

    pub(crate) fn store(&self) -> &'s Store {
        self.store
    }

    /// Writes a batch of starts and super-steps of any number of runs in ONE transaction (one commit, one sync):
    /// group commit. Each write is fenced on its run's revision; the worker's lease is renewed for `lease_for`.
    pub fn commit(
        &self,
        credential: &PlatformCredential,
        writes: &[RunWrite],
        lease_for: Duration,
    ) -> Result<Vec<Applied>, StoreError> {
        let now_t = self.store.clock().now();
        let now = to_sql(now_t);
        let lease_until = to_sql(now_t + lease_for);
        let lease = Some((credential.worker(), lease_until.as_str()));
        let tx = write_tx(self.store)?;
        let mut out = Vec::with_capacity(writes.len());
        for write in writes {
            match write {
                RunWrite::Start { run, step } => {
                    let snapshot = intern_snapshot(&tx, &run.graph_name, run.graph_version, &run.graph_snapshot, &now)?;
                    tx.prepare_cached(
                        "INSERT INTO engine_runs (id, org_id, graph_name, graph_version, graph_snapshot_id, input, status,
                             superstep, revision, state, started_by, deadline_at, created_at, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', 0, 0, '{}', ?7, ?8, ?9, ?9)",
                    )?
                    .execute(params![
                        run.id.to_string(),
                        run.org.to_string(),
                        run.graph_name,
                        run.graph_version,
                        snapshot,
                        run.input,
                        run.started_by.map(|u| u.to_string()),
                        run.deadline_at.map(to_sql),
                        now,
                    ])?;
                    if let Some(user) = run.started_by {
                        tx.prepare_cached_execute(
                            "INSERT INTO audit_log (id, org_id, actor_id, at, action, entity_kind, entity_id, details)
                             VALUES (?1, ?2, ?3, ?4, 'run_started', 'run', ?5, ?6)",
                            params![
                                uuid::Uuid::now_v7().to_string(),
                                run.org.to_string(),
                                user.to_string(),
                                now,
                                run.id.to_string(),
                                serde_json::json!({ "graph": run.graph_name, "version": run.graph_version })
                                    .to_string(),
                            ],
                        )?;
                    }
                    out.push(apply_step(&tx, step, lease, &now)?);
                }
                RunWrite::Step(step) => out.push(apply_step(&tx, step, lease, &now)?),
            }
        }
        tx.commit()?;
        Ok(out)
    }

    /// Claims up to `limit` runs that have work and no live lease (running, compensating, or waiting with a timer
    /// that is due) for this worker, in one statement.
    pub fn claim(
        &self,
        credential: &PlatformCredential,
        lease_for: Duration,
        limit: usize,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let now_t = self.store.clock().now();
        let now = to_sql(now_t);
        let tx = write_tx(self.store)?;
        let ids: Vec<String> = {
            let mut stmt = tx.prepare_cached(
                "UPDATE engine_runs SET lease_owner = ?1, lease_expires_at = ?2
                 WHERE id IN (
                     SELECT id FROM engine_runs
                     WHERE deleted_at IS NULL
                       AND (status IN ('running', 'compensating') OR (status = 'waiting' AND wake_at IS NOT NULL))
                       AND (wake_at IS NULL OR wake_at <= ?3)
                       AND (lease_owner IS NULL OR lease_expires_at < ?3 OR lease_owner = ?1)
                     ORDER BY updated_at LIMIT ?4)
                 RETURNING id",
            )?;
            stmt.query_map(params![credential.worker(), to_sql(now_t + lease_for), now, limit as i64], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(tx.prepare_cached_query_row(
                &format!("SELECT {COLUMNS} FROM engine_runs WHERE id = ?1"),
                [id],
                run_from_row,
            )?);
        }
        tx.commit()?;
        Ok(out)
    }

    /// A run as the platform sees it (any organization).
    pub fn load(&self, _credential: &PlatformCredential, id: RunId) -> Result<RunRecord, StoreError> {
        self.store
            .conn()
            .prepare_cached(&format!("SELECT {COLUMNS} FROM engine_runs WHERE id = ?1 AND deleted_at IS NULL"))?
            .query_row([id.to_string()], run_from_row)
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// One of the organization's runs; another organization's id answers like a missing one.
    /// The text of a graph snapshot that a run points at.
    pub fn graph_snapshot(&self, _credential: &PlatformCredential, id: i64) -> Result<String, StoreError> {
        self.store
            .conn()
            .query_row("SELECT snapshot FROM engine_graph_snapshots WHERE id = ?1", [id], |r| r.get(0))
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    pub fn get(&self, scope: &OrgScope, id: RunId) -> Result<RunRecord, StoreError> {
        self.store
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM engine_runs WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL"),
                params![id.to_string(), scope.org().to_string()],
                run_from_row,
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// The organization's runs, newest first.
    pub fn list(&self, scope: &OrgScope, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare(&format!(
            "SELECT {COLUMNS} FROM engine_runs WHERE org_id = ?1 AND deleted_at IS NULL
             ORDER BY created_at DESC, id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![scope.org().to_string(), limit as i64], run_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A run's child runs (subgraphs), as the platform sees them.
    pub fn children(&self, _credential: &PlatformCredential, id: RunId) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT {COLUMNS} FROM engine_runs WHERE parent_run_id = ?1 AND deleted_at IS NULL ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map([id.to_string()], run_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ids of a run's child runs that have not finished.
    pub fn live_children(&self, _credential: &PlatformCredential, id: RunId) -> Result<Vec<RunId>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT id FROM engine_runs WHERE parent_run_id = ?1 AND deleted_at IS NULL
               AND status NOT IN ('succeeded', 'failed', 'cancelled') ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map([id.to_string()], |r| parse_text::<RunId>("run id", &r.get::<_, String>(0)?))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The ids of the unfinished child runs of any of `parents`, in one query (parents' order, then creation).
    pub fn live_children_of(
        &self,
        _credential: &PlatformCredential,
        parents: &[RunId],
    ) -> Result<Vec<RunId>, StoreError> {
        if parents.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = parents.iter().map(ToString::to_string).collect();
        let list = serde_json::to_string(&ids).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT r.id FROM json_each(?1) p JOIN engine_runs r ON r.parent_run_id = p.value
              WHERE r.deleted_at IS NULL AND r.status NOT IN ('succeeded', 'failed', 'cancelled')
              ORDER BY p.key, r.created_at, r.id",
        )?;
        let rows = stmt.query_map([list], |r| parse_text::<RunId>("run id", &r.get::<_, String>(0)?))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A run's event log, oldest first (scoped).
    pub fn events(&self, scope: &OrgScope, id: RunId) -> Result<Vec<RunEvent>, StoreError> {
        self.get(scope, id)?;
        self.events_unscoped(id)
    }

    pub(crate) fn events_unscoped(&self, id: RunId) -> Result<Vec<RunEvent>, StoreError> {
        let mut stmt = self.store.conn().prepare(
            "SELECT seq, superstep, node, kind, details, at FROM engine_events WHERE run_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([id.to_string()], |r| {
            Ok(RunEvent {
                seq: r.get(0)?,
                superstep: r.get(1)?,
                node: r.get(2)?,
                kind: r.get(3)?,
                details: serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or(Value::Null),
                at: from_sql(&r.get::<_, String>(5)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A run's event log as the platform sees it.
    pub fn events_for_worker(&self, _credential: &PlatformCredential, id: RunId) -> Result<Vec<RunEvent>, StoreError> {
        self.events_unscoped(id)
    }

    /// A run's checkpoints, oldest first (scoped).
    pub fn checkpoints(&self, scope: &OrgScope, id: RunId) -> Result<Vec<Checkpoint>, StoreError> {
        self.get(scope, id)?;
        let mut stmt = self.store.conn().prepare(
            "SELECT revision, superstep, status, state, at FROM engine_checkpoints WHERE run_id = ?1 ORDER BY revision",
        )?;
        let rows = stmt.query_map([id.to_string()], |r| {
            Ok(Checkpoint {
                revision: r.get::<_, i64>(0)? as u64,
                superstep: r.get(1)?,
                status: parse_text("run status", &r.get::<_, String>(2)?)?,
                state: r.get(3)?,
                at: from_sql(&r.get::<_, String>(4)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Checkpoints written in all (benchmarks).
    pub fn checkpoints_total(&self, _credential: &PlatformCredential) -> Result<u64, StoreError> {
        Ok(self.store.conn().query_row("SELECT COUNT(*) FROM engine_checkpoints", [], |r| r.get::<_, i64>(0))? as u64)
    }

    /// Cancels one of the organization's runs and, in the same transaction, its child runs, their queued tasks and
    /// pending approvals. A finished run cannot be cancelled.
    pub fn cancel(&self, scope: &OrgScope, id: RunId, reason: &str) -> Result<CancelReport, StoreError> {
        if !matches!(scope.role(), Role::Owner | Role::Admin | Role::Buyer | Role::Approver | Role::Reviewer) {
            return Err(StoreError::Forbidden { role: scope.role() });
        }
        let now = to_sql(self.store.clock().now());
        let tx = write_tx(self.store)?;
        let status: Option<String> = tx
            .query_row(
                "SELECT status FROM engine_runs WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
                params![id.to_string(), scope.org().to_string()],
                |r| r.get(0),
            )
            .optional()?;
        let status: RunStatus = match status {
            None => return Err(StoreError::NotFound),
            Some(s) => parse_text("run status", &s)?,
        };
        if status.is_terminal() {
            return Err(StoreError::Conflict(format!("the run has already {status}; there is nothing to cancel")));
        }
        let reason = if reason.trim().is_empty() { "cancelled" } else { reason.trim() };
        let report = cancel_tree(&tx, &[id.to_string()], true, reason, &now)?;
        append_audit(
            &tx,
            scope,
            &now,
            "run_cancelled",
            "run",
            Some(&id.to_string()),
            &serde_json::json!({ "reason": reason, "cancelled": report }),
        )?;
        tx.commit()?;
        Ok(report)
    }
}
