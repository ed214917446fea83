//! The per-organization task queue. Every task belongs to one organization and carries a priority and an optional
//! scheduled start. Workers claim atomically — highest priority first, then oldest, marked processing in the same
//! statement (SQLite serialises writers, and the statement only takes rows still pending), so no task is claimed
//! twice — and only with a [`PlatformCredential`]. Handoffs from runs carry a deterministic idempotency key.

use crate::sql::{parse_text, write_tx};
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, PlatformCredential, Store, StoreError};
use chrono::{DateTime, Duration, Utc};
use pactwise_domain::{OrgId, Role, RunId, TaskId, TaskStatus};
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

pub struct Tasks<'s> {
    store: &'s Store,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRecord {
    pub id: TaskId,
    pub org: OrgId,
    pub idempotency_key: String,
    pub agent_type: String,
    pub priority: i64,
    pub payload: Value,
    pub status: TaskStatus,
    pub run: Option<RunId>,
    pub node: Option<String>,
    pub scheduled_at: Option<DateTime<Utc>>,
    pub claimed_by: Option<String>,
    pub claimed_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// What the task did, in words, once done.
    pub result: Option<String>,
}

/// A task a member puts on the organization's queue.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTask {
    pub idempotency_key: String,
    pub agent_type: String,
    pub priority: i64,
    pub payload: Value,
    pub scheduled_at: Option<DateTime<Utc>>,
}

/// What a finished task did and left behind (see [`Tasks::complete_with`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskDone {
    /// What the task did, in words.
    pub result: String,
    pub notices: Vec<NewNotice>,
    /// Follow-up tasks; their idempotency keys say what makes two the same.
    pub follow_ups: Vec<NewTask>,
}

/// A notice the agents leave for the organization.
#[derive(Debug, Clone, PartialEq)]
pub struct NewNotice {
    /// What makes two notices the same (a notice is left once per key).
    pub key: String,
    pub title: String,
    pub message: String,
    pub urgent: bool,
}

/// A notice as kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentNotice {
    pub id: String,
    pub run: Option<RunId>,
    pub title: String,
    pub message: String,
    pub urgent: bool,
    pub created_at: DateTime<Utc>,
    pub seen: bool,
}

/// Thresholds of the queue's health check. Per organization: the setting `queue.health` (checked by
/// `pactwise_rules::settings`, which owns the defaults and bounds); missing names take their defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct HealthThresholds {
    /// Failures of one agent type in the last hour at which it is flagged.
    pub failures_per_hour: u32,
    /// Pending tasks of one organization and agent type at which the queue is flagged.
    pub backlog: u32,
}

impl Default for HealthThresholds {
    fn default() -> Self {
        let default = |name| pactwise_rules::settings::health_default(name).unwrap_or(1);
        HealthThresholds { failures_per_hour: default("failures_per_hour"), backlog: default("backlog") }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailingAgent {
    pub agent_type: String,
    pub failures_last_hour: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Backlog {
    pub org: OrgId,
    pub agent_type: String,
    pub pending: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueueHealth {
    pub failing_agents: Vec<FailingAgent>,
    pub backlogs: Vec<Backlog>,
}

impl QueueHealth {
    pub fn is_healthy(&self) -> bool {
        self.failing_agents.is_empty() && self.backlogs.is_empty()
    }
}

/// The setting that holds an organization's [`HealthThresholds`].
pub const QUEUE_HEALTH_SETTING: &str = pactwise_rules::settings::QUEUE_HEALTH;

const COLUMNS: &str = "id, org_id, idempotency_key, agent_type, priority, payload, status, run_id, node, scheduled_at,
     claimed_by, claimed_at, finished_at, error, created_at, result";

fn task_from_row(r: &Row<'_>) -> rusqlite::Result<TaskRecord> {
    Ok(TaskRecord {
        id: parse_text("task id", &r.get::<_, String>(0)?)?,
        org: parse_text("org id", &r.get::<_, String>(1)?)?,
        idempotency_key: r.get(2)?,
        agent_type: r.get(3)?,
        priority: r.get(4)?,
        payload: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or(Value::Null),
        status: parse_text("task status", &r.get::<_, String>(6)?)?,
        run: r.get::<_, Option<String>>(7)?.map(|v| parse_text("run id", &v)).transpose()?,
        node: r.get(8)?,
        scheduled_at: from_sql_opt(r.get(9)?)?,
        claimed_by: r.get(10)?,
        claimed_at: from_sql_opt(r.get(11)?)?,
        finished_at: from_sql_opt(r.get(12)?)?,
        error: r.get(13)?,
        created_at: from_sql(&r.get::<_, String>(14)?)?,
        result: r.get(15)?,
    })
}

impl<'s> Tasks<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Tasks { store }
    }

    /// Puts a task on the session's organization's queue. The same idempotency key gives back the existing task.
    pub fn enqueue(&self, scope: &OrgScope, task: &NewTask) -> Result<TaskRecord, StoreError> {
        if task.agent_type.trim().is_empty() || task.idempotency_key.trim().is_empty() {
            return Err(StoreError::Invalid("a task needs an agent type and an idempotency key".into()));
        }
        let now = to_sql(self.store.clock().now());
        let tx = write_tx(self.store)?;
        tx.execute(
            "INSERT OR IGNORE INTO engine_tasks (id, org_id, idempotency_key, agent_type, priority, payload, status,
                 scheduled_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8)",
            params![
                TaskId::new().to_string(),
                scope.org().to_string(),
                task.idempotency_key,
                task.agent_type.trim(),
                task.priority,
                task.payload.to_string(),
                task.scheduled_at.map(to_sql),
                now
            ],
        )?;
        let record = tx.query_row(
            &format!("SELECT {COLUMNS} FROM engine_tasks WHERE org_id = ?1 AND idempotency_key = ?2"),
            params![scope.org().to_string(), task.idempotency_key],
            task_from_row,
        )?;
        tx.commit()?;
        Ok(record)
    }

    /// The organization's tasks, newest first.
    pub fn list(&self, scope: &OrgScope) -> Result<Vec<TaskRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare(&format!(
            "SELECT {COLUMNS} FROM engine_tasks WHERE org_id = ?1 AND deleted_at IS NULL ORDER BY seq DESC"
        ))?;
        let rows = stmt.query_map([scope.org().to_string()], task_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The tasks a run handed off (scoped).
    pub fn for_run(&self, scope: &OrgScope, run: RunId) -> Result<Vec<TaskRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare(&format!(
            "SELECT {COLUMNS} FROM engine_tasks WHERE org_id = ?1 AND run_id = ?2 AND deleted_at IS NULL ORDER BY seq"
        ))?;
        let rows = stmt.query_map(params![scope.org().to_string(), run.to_string()], task_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Claims up to `limit` due tasks (optionally of one agent type) for the credential's worker: highest priority
    /// first, then oldest; marked processing in the same statement, under a lease of `lease_for`.
    pub fn claim(
        &self,
        credential: &PlatformCredential,
        agent_type: Option<&str>,
        limit: usize,
        lease_for: Duration,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.claim_where(credential, agent_type, None, limit, lease_for)
    }

    /// Claims like [`Tasks::claim`], only tasks whose payload's `action` is `action` (the agents' follow-ups, not
    /// other handoffs waiting for their own workers).
    pub fn claim_action(
        &self,
        credential: &PlatformCredential,
        action: &str,
        limit: usize,
        lease_for: Duration,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.claim_where(credential, None, Some(action), limit, lease_for)
    }

    fn claim_where(
        &self,
        credential: &PlatformCredential,
        agent_type: Option<&str>,
        action: Option<&str>,
        limit: usize,
        lease_for: Duration,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let now_t = self.store.clock().now();
        let now = to_sql(now_t);
        let tx = write_tx(self.store)?;
        let claimed = {
            let mut stmt = tx.prepare_cached(&format!(
                "UPDATE engine_tasks SET status = 'processing', claimed_by = ?1, claimed_at = ?2, lease_expires_at = ?3
                 WHERE seq IN (
                     SELECT seq FROM engine_tasks
                     WHERE status = 'pending' AND deleted_at IS NULL
                       AND (scheduled_at IS NULL OR scheduled_at <= ?2)
                       AND (?4 IS NULL OR agent_type = ?4)
                       AND (?6 IS NULL OR json_extract(payload, '$.action') = ?6)
                     ORDER BY priority DESC, created_at, seq LIMIT ?5)
                   AND status = 'pending'
                 RETURNING {COLUMNS}"
            ))?;
            stmt.query_map(
                params![credential.worker(), now, to_sql(now_t + lease_for), agent_type, limit as i64, action],
                task_from_row,
            )?
            .collect::<Result<Vec<_>, _>>()?
        };
        tx.commit()?;
        let mut claimed = claimed;
        claimed.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.created_at.cmp(&b.created_at)));
        Ok(claimed)
    }

    /// Marks a task this worker holds as done.
    pub fn complete(&self, credential: &PlatformCredential, id: TaskId) -> Result<(), StoreError> {
        self.finish(credential, id, "done", None)
    }

    /// Marks a task this worker holds as done with what it did, and in the same transaction leaves its notices and
    /// queues its follow-ups (each once: a notice or follow-up whose key the organization already has is not
    /// added again). The organization of every notice and follow-up is the task's own. `Conflict` when this worker
    /// no longer holds the task (its lease ran out and another took it, or it was timed out): nothing is written.
    pub fn complete_with(
        &self,
        credential: &PlatformCredential,
        id: TaskId,
        done: &TaskDone,
    ) -> Result<TaskRecord, StoreError> {
        let now = to_sql(self.store.clock().now());
        let tx = write_tx(self.store)?;
        let changed = tx.execute(
            "UPDATE engine_tasks SET status = 'done', finished_at = ?3, result = ?4, lease_expires_at = NULL
             WHERE id = ?1 AND claimed_by = ?2 AND status = 'processing'",
            params![id.to_string(), credential.worker(), now, done.result],
        )?;
        if changed == 0 {
            return Err(StoreError::Conflict("the task is not being processed by this worker".into()));
        }
        let task = tx.query_row(
            &format!("SELECT {COLUMNS} FROM engine_tasks WHERE id = ?1"),
            [id.to_string()],
            task_from_row,
        )?;
        let org = task.org.to_string();
        let run = task.run.map(|r| r.to_string());
        for n in &done.notices {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO agent_notices (id, org_id, run_id, idempotency_key, title, message, urgent,
                     created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                uuid::Uuid::now_v7().to_string(),
                org,
                run,
                n.key,
                n.title,
                n.message,
                n.urgent,
                now
            ])?;
        }
        for f in &done.follow_ups {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO engine_tasks (id, org_id, idempotency_key, agent_type, priority, payload, status,
                     run_id, scheduled_at, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8, ?9)",
            )?
            .execute(params![
                TaskId::new().to_string(),
                org,
                f.idempotency_key,
                f.agent_type,
                f.priority,
                f.payload.to_string(),
                run,
                f.scheduled_at.map(to_sql),
                now
            ])?;
        }
        tx.commit()?;
        Ok(task)
    }

    /// When the next pending task with `action` falls due (any organization: the platform's worker waits for it).
    pub fn next_scheduled(
        &self,
        _credential: &PlatformCredential,
        action: &str,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let next: Option<String> = self.store.conn().query_row(
            "SELECT MIN(scheduled_at) FROM engine_tasks
             WHERE status = 'pending' AND deleted_at IS NULL AND scheduled_at IS NOT NULL
               AND json_extract(payload, '$.action') = ?1",
            [action],
            |r| r.get(0),
        )?;
        Ok(from_sql_opt(next)?)
    }

    /// The notices the agents left for the session's organization, newest first (at most `limit`).
    pub fn notices(&self, scope: &OrgScope, limit: u32) -> Result<Vec<AgentNotice>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT id, run_id, title, message, urgent, created_at, seen_at FROM agent_notices
             WHERE org_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), limit], |r| {
            Ok(AgentNotice {
                id: r.get(0)?,
                run: r.get::<_, Option<String>>(1)?.map(|v| parse_text("run id", &v)).transpose()?,
                title: r.get(2)?,
                message: r.get(3)?,
                urgent: r.get(4)?,
                created_at: from_sql(&r.get::<_, String>(5)?)?,
                seen: r.get::<_, Option<String>>(6)?.is_some(),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Marks the session's organization's notices as seen (they are no longer announced).
    pub fn notices_seen(&self, scope: &OrgScope) -> Result<usize, StoreError> {
        let now = to_sql(self.store.clock().now());
        Ok(self.store.conn().execute(
            "UPDATE agent_notices SET seen_at = ?2 WHERE org_id = ?1 AND seen_at IS NULL",
            params![scope.org().to_string(), now],
        )?)
    }

    /// Marks a task this worker holds as failed (counted by the health check).
    pub fn fail(&self, credential: &PlatformCredential, id: TaskId, error: &str) -> Result<(), StoreError> {
        self.finish(credential, id, "failed", Some(error))
    }

    fn finish(
        &self,
        credential: &PlatformCredential,
        id: TaskId,
        status: &str,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        let now = to_sql(self.store.clock().now());
        let changed = self.store.conn().execute(
            "UPDATE engine_tasks SET status = ?3, finished_at = ?4, error = ?5, lease_expires_at = NULL
             WHERE id = ?1 AND claimed_by = ?2 AND status = 'processing'",
            params![id.to_string(), credential.worker(), status, now, error],
        )?;
        if changed == 0 {
            return Err(StoreError::Conflict("the task is not being processed by this worker".into()));
        }
        Ok(())
    }

    /// A task as the platform sees it.
    pub fn load(&self, _credential: &PlatformCredential, id: TaskId) -> Result<TaskRecord, StoreError> {
        self.store
            .conn()
            .query_row(&format!("SELECT {COLUMNS} FROM engine_tasks WHERE id = ?1"), [id.to_string()], task_from_row)
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// Agent types with many failures in the last hour, and queues (organization, agent type) with a large backlog,
    /// over every organization: the platform's view.
    pub fn health(
        &self,
        _credential: &PlatformCredential,
        thresholds: HealthThresholds,
    ) -> Result<QueueHealth, StoreError> {
        self.health_where(None, thresholds)
    }

    /// The same check for the session's organization only (owners and admins), with the organization's own
    /// thresholds (setting `queue.health`, defaults where unset): its agent types with many failures in the last hour
    /// and its queues with a large backlog. Other organizations' tasks never count.
    pub fn health_of(&self, scope: &OrgScope) -> Result<QueueHealth, StoreError> {
        if !matches!(scope.role(), Role::Owner | Role::Admin) {
            return Err(StoreError::Forbidden { role: scope.role() });
        }
        let thresholds = self.health_thresholds(scope)?;
        self.health_where(Some(scope.org()), thresholds)
    }

    /// The organization's health thresholds (its `queue.health` setting over the defaults).
    pub fn health_thresholds(&self, scope: &OrgScope) -> Result<HealthThresholds, StoreError> {
        Ok(self.store.settings().get::<HealthThresholds>(scope, QUEUE_HEALTH_SETTING)?.unwrap_or_default())
    }

    fn health_where(&self, org: Option<OrgId>, thresholds: HealthThresholds) -> Result<QueueHealth, StoreError> {
        let now = self.store.clock().now();
        let hour_ago = to_sql(now - Duration::hours(1));
        let org = org.map(|o| o.to_string());
        let conn = self.store.conn();
        let mut stmt = conn.prepare(
            "SELECT agent_type, COUNT(*) FROM engine_tasks
             WHERE status = 'failed' AND finished_at >= ?1 AND (?3 IS NULL OR org_id = ?3)
             GROUP BY agent_type HAVING COUNT(*) >= ?2 ORDER BY COUNT(*) DESC, agent_type",
        )?;
        let failing_agents = stmt
            .query_map(params![hour_ago, thresholds.failures_per_hour, org], |r| {
                Ok(FailingAgent { agent_type: r.get(0)?, failures_last_hour: r.get(1)? })
            })?
            .collect::<Result<_, _>>()?;
        let mut stmt = conn.prepare(
            "SELECT org_id, agent_type, COUNT(*) FROM engine_tasks
             WHERE status = 'pending' AND deleted_at IS NULL AND (?2 IS NULL OR org_id = ?2)
             GROUP BY org_id, agent_type HAVING COUNT(*) >= ?1 ORDER BY COUNT(*) DESC, agent_type",
        )?;
        let backlogs = stmt
            .query_map(params![thresholds.backlog, org], |r| {
                Ok(Backlog {
                    org: parse_text("org id", &r.get::<_, String>(0)?)?,
                    agent_type: r.get(1)?,
                    pending: r.get(2)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(QueueHealth { failing_agents, backlogs })
    }
}
