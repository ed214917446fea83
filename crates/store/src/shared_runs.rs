//! Workflow runs across an organization's desktops (migration 0015). A run executes on its home desktop, which
//! publishes the run and its approval steps ([`SharedRuns::unpublished`], then [`SyncLog::publish`]); other desktops
//! keep a read-only copy ([`SyncApply::shared_run`], [`SyncApply::shared_approval`]). When the organization syncs,
//! a decision — on this desktop's step or another's — is a request to the sync service
//! ([`SharedRuns::request_decision`]): checked here first with the same rule the service applies
//! (`pactwise_rules::approval::may_decide`), queued with its outbox entry in one transaction, shown as waiting to
//! sync, and only a stamp from the service decides ([`SyncApply::approval_outcome`]): on the run's home desktop the
//! stamped decision is written into the step like a local one and the run is marked to resume. The records other
//! desktops publish are JSON owned by `pactwise-sync`, checked by the caller before they reach these functions.

use crate::approvals::{COLUMNS, approval_from_row, pick_choice};
use crate::audit::append_audit_as;
use crate::sql::parse_text;
use crate::sync_log::{ApprovalRequestPayload, ChangePayload, emit_returning_id_in, org_syncs};
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{ApprovalRecord, OrgScope, RunRecord, Store, StoreError, SyncApply, SyncLog};
use chrono::{DateTime, Utc};
use pactwise_domain::{ApprovalStatus, Decision, Role, RunId, UserId};
use pactwise_rules::approval as rule;
use rusqlite::{OptionalExtension, Row, params};
use serde_json::Value;

pub struct SharedRuns<'s> {
    pub(crate) store: &'s Store,
}

/// A run another desktop of the organization published (read-only here).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedRunRow {
    pub run: String,
    /// `pactwise_sync::SharedRun` as published.
    pub record: Value,
    pub updated_at: DateTime<Utc>,
}

/// Where a step of another desktop stands here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedStepState {
    Open,
    Decided,
    Closed,
}

/// An approval step of another desktop's run, and its stamped decision once it arrived.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedApprovalRow {
    pub step: String,
    pub run: String,
    /// Who published it first (the run's starter), as the sync service stamped it.
    pub requester: UserId,
    pub requester_name: Option<String>,
    /// `pactwise_sync::SharedApproval` as published.
    pub record: Value,
    pub state: SharedStepState,
    pub decision: Option<Decision>,
    pub decided_by: Option<UserId>,
    pub decided_by_name: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    pub reason: Option<String>,
    pub choice: Option<String>,
}

/// Where one of this desktop's decision requests stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestStatus {
    /// Queued or sent; the sync service has not answered yet.
    Waiting,
    Stamped,
    Refused,
}

/// A decision this desktop sent to the sync service.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequestRow {
    pub id: String,
    pub step: String,
    pub user: UserId,
    pub decision: Decision,
    pub reason: String,
    pub choice: Option<String>,
    pub status: RequestStatus,
    /// The service's reason, in people's words, when refused.
    pub refusal: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A stamped or refused request as the sync service answered it (from the pulled log).
#[derive(Debug, Clone, PartialEq)]
pub enum RequestOutcome {
    Stamped {
        approve: bool,
        approver: UserId,
        /// The approver's role when stamped (older services send none).
        approver_role: Option<Role>,
        approver_name: Option<String>,
        decided_at: DateTime<Utc>,
        note: Option<String>,
        choice: Option<String>,
    },
    Refused {
        message: String,
    },
}

fn decision_text(d: Decision) -> &'static str {
    match d {
        Decision::Approve => "approve",
        Decision::Reject => "reject",
    }
}

fn parse_decision(text: &str) -> rusqlite::Result<Decision> {
    match text {
        "approve" => Ok(Decision::Approve),
        "reject" => Ok(Decision::Reject),
        other => Err(rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("unknown decision {other:?}").into(),
        )),
    }
}

const SHARED_APPROVAL_COLUMNS: &str = "step_id, run_id, requester, record_json, status, decision, decided_by,
     decided_by_name, decided_at, reason, choice, (SELECT display_name FROM users WHERE users.id = requester)";

fn shared_approval_from_row(r: &Row<'_>) -> rusqlite::Result<SharedApprovalRow> {
    let state = match r.get::<_, String>(4)?.as_str() {
        "open" => SharedStepState::Open,
        "decided" => SharedStepState::Decided,
        _ => SharedStepState::Closed,
    };
    Ok(SharedApprovalRow {
        step: r.get(0)?,
        run: r.get(1)?,
        requester: parse_text("user id", &r.get::<_, String>(2)?)?,
        record: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or(Value::Null),
        state,
        decision: r.get::<_, Option<String>>(5)?.as_deref().map(parse_decision).transpose()?,
        decided_by: r.get::<_, Option<String>>(6)?.map(|v| parse_text("user id", &v)).transpose()?,
        decided_by_name: r.get(7)?,
        decided_at: from_sql_opt(r.get(8)?)?,
        reason: r.get(9)?,
        choice: r.get(10)?,
        requester_name: r.get(11)?,
    })
}

const REQUEST_COLUMNS: &str = "id, step_id, user_id, decision, reason, choice, status, refusal, created_at";

fn request_from_row(r: &Row<'_>) -> rusqlite::Result<ApprovalRequestRow> {
    Ok(ApprovalRequestRow {
        id: r.get(0)?,
        step: r.get(1)?,
        user: parse_text("user id", &r.get::<_, String>(2)?)?,
        decision: parse_decision(&r.get::<_, String>(3)?)?,
        reason: r.get(4)?,
        choice: r.get(5)?,
        status: match r.get::<_, String>(6)?.as_str() {
            "waiting" => RequestStatus::Waiting,
            "stamped" => RequestStatus::Stamped,
            _ => RequestStatus::Refused,
        },
        refusal: r.get(7)?,
        created_at: from_sql(&r.get::<_, String>(8)?)?,
    })
}

/// The roles a published step names (`eligible_roles` of `pactwise_sync::SharedApproval`); unreadable ones are
/// dropped, so a malformed record names fewer roles, never more.
pub fn published_roles(record: &Value) -> Vec<Role> {
    record
        .get("eligible_roles")
        .and_then(Value::as_array)
        .map(|roles| roles.iter().filter_map(|r| r.as_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

/// A step, wherever it lives, as the decision rule needs it.
struct StepFacts {
    eligible_roles: Vec<Role>,
    four_eyes: bool,
    choices: Vec<String>,
    decided: bool,
    started_the_run: bool,
    decided_another_step_of_the_run: bool,
}

impl<'s> SharedRuns<'s> {
    /// Does the session's organization sync? Then decisions are requests ([`SharedRuns::request_decision`]).
    pub fn org_syncs(&self, scope: &OrgScope) -> Result<bool, StoreError> {
        org_syncs(self.store.conn(), &scope.org().to_string())
    }

    /// Runs other desktops published, newest first.
    pub fn runs(&self, scope: &OrgScope, limit: usize) -> Result<Vec<SharedRunRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT run_id, record_json, updated_at FROM shared_runs WHERE org_id = ?1
             ORDER BY json_extract(record_json, '$.created_at') DESC, run_id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), limit as i64], |r| {
            Ok(SharedRunRow {
                run: r.get(0)?,
                record: serde_json::from_str(&r.get::<_, String>(1)?).unwrap_or(Value::Null),
                updated_at: from_sql(&r.get::<_, String>(2)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One run another desktop published.
    pub fn run(&self, scope: &OrgScope, run: &str) -> Result<SharedRunRow, StoreError> {
        self.store
            .conn()
            .query_row(
                "SELECT run_id, record_json, updated_at FROM shared_runs WHERE org_id = ?1 AND run_id = ?2",
                params![scope.org().to_string(), run],
                |r| {
                    Ok(SharedRunRow {
                        run: r.get(0)?,
                        record: serde_json::from_str(&r.get::<_, String>(1)?).unwrap_or(Value::Null),
                        updated_at: from_sql(&r.get::<_, String>(2)?)?,
                    })
                },
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// Steps of other desktops' runs: those still open that the session's role may decide (the inbox), or all of
    /// a run's.
    pub fn approvals(&self, scope: &OrgScope, run: Option<&str>) -> Result<Vec<SharedApprovalRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT {SHARED_APPROVAL_COLUMNS} FROM shared_approvals
             WHERE org_id = ?1 AND (?2 IS NULL AND status = 'open' OR run_id = ?2)
             ORDER BY json_extract(record_json, '$.created_at'), step_id"
        ))?;
        let rows = stmt.query_map(params![scope.org().to_string(), run], shared_approval_from_row)?;
        let mut out: Vec<SharedApprovalRow> = rows.collect::<Result<_, _>>()?;
        if run.is_none() {
            out.retain(|a| published_roles(&a.record).contains(&scope.role()));
        }
        Ok(out)
    }

    /// One step of another desktop's run.
    pub fn approval(&self, scope: &OrgScope, step: &str) -> Result<SharedApprovalRow, StoreError> {
        self.store
            .conn()
            .query_row(
                &format!("SELECT {SHARED_APPROVAL_COLUMNS} FROM shared_approvals WHERE org_id = ?1 AND step_id = ?2"),
                params![scope.org().to_string(), step],
                shared_approval_from_row,
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// The session user's decision requests, newest first.
    pub fn requests(&self, scope: &OrgScope) -> Result<Vec<ApprovalRequestRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT {REQUEST_COLUMNS} FROM approval_requests WHERE org_id = ?1 AND user_id = ?2
             ORDER BY created_at DESC, id DESC"
        ))?;
        let rows = stmt.query_map(params![scope.org().to_string(), scope.user().to_string()], request_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// This desktop's runs whose published copy is out of date (never published, or changed since), oldest change
    /// first, at most `limit`.
    pub fn unpublished_runs(&self, scope: &OrgScope, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT {} FROM engine_runs r
             WHERE r.org_id = ?1 AND r.deleted_at IS NULL AND NOT EXISTS (
                 SELECT 1 FROM sync_published p WHERE p.org_id = r.org_id AND p.model = 'run' AND p.record_id = r.id
                   AND p.version = CAST(r.revision AS TEXT))
             ORDER BY r.updated_at, r.id LIMIT ?2",
            crate::runs::COLUMNS
        ))?;
        let rows = stmt.query_map(params![scope.org().to_string(), limit as i64], crate::runs::run_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// This desktop's approval steps whose published copy is out of date, with the version to mark them with.
    pub fn unpublished_approvals(
        &self,
        scope: &OrgScope,
        limit: usize,
    ) -> Result<Vec<(ApprovalRecord, String)>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT {COLUMNS}, status || '|' || coalesce(escalated_at, '') AS version FROM engine_approvals a
             WHERE a.org_id = ?1 AND NOT EXISTS (
                 SELECT 1 FROM sync_published p WHERE p.org_id = a.org_id AND p.model = 'approval_step'
                   AND p.record_id = a.id AND p.version = a.status || '|' || coalesce(a.escalated_at, ''))
             ORDER BY a.created_at, a.id LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![scope.org().to_string(), limit as i64], |r| {
            Ok((approval_from_row(r)?, r.get::<_, String>(20)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records a decision as a request to the sync service, with its outbox entry, in one transaction. Checked
    /// first as the service will check it (`pactwise_rules::approval::may_decide`, four-eyes over what this desktop
    /// knows), so a person is told at once when they may not decide; the service's stamp is what decides.
    /// `step` is a step of this desktop's run or of another desktop's.
    pub fn request_decision(
        &self,
        scope: &OrgScope,
        step: &str,
        decision: Decision,
        reason: &str,
        choice: Option<&str>,
    ) -> Result<ApprovalRequestRow, StoreError> {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(StoreError::Invalid("give a reason for the decision (--reason TEXT)".into()));
        }
        let tx = self.store.conn().unchecked_transaction()?;
        let org = scope.org().to_string();
        let me = scope.user().to_string();
        if !org_syncs(&tx, &org)? {
            return Err(StoreError::Invalid("this organization does not sync; decide the approval here".into()));
        }
        let local: Option<ApprovalRecord> = tx
            .prepare_cached(&format!("SELECT {COLUMNS} FROM engine_approvals WHERE id = ?1 AND org_id = ?2"))?
            .query_row(params![step, org], approval_from_row)
            .optional()?;
        let facts = match &local {
            Some(a) => StepFacts {
                eligible_roles: a.eligible_roles.clone(),
                four_eyes: a.four_eyes,
                choices: a.choices.clone(),
                decided: a.status != ApprovalStatus::Pending,
                started_the_run: tx
                    .prepare_cached("SELECT 1 FROM engine_runs WHERE id = ?1 AND started_by = ?2")?
                    .exists(params![a.run.to_string(), me])?,
                decided_another_step_of_the_run: a.four_eyes
                    && tx
                        .prepare_cached(
                            "SELECT 1 FROM engine_approvals WHERE run_id = ?1 AND id <> ?2 AND decided_by = ?3
                             UNION ALL
                             SELECT 1 FROM approval_requests q JOIN engine_approvals e ON e.id = q.step_id
                             WHERE e.run_id = ?1 AND q.step_id <> ?2 AND q.user_id = ?3 AND q.status <> 'refused'",
                        )?
                        .exists(params![a.run.to_string(), step, me])?,
            },
            None => {
                let shared = tx
                    .prepare_cached(&format!(
                        "SELECT {SHARED_APPROVAL_COLUMNS} FROM shared_approvals WHERE org_id = ?1 AND step_id = ?2"
                    ))?
                    .query_row(params![org, step], shared_approval_from_row)
                    .optional()?
                    .ok_or(StoreError::NotFound)?;
                let four_eyes = shared.record.get("four_eyes").and_then(Value::as_bool).unwrap_or(false);
                StepFacts {
                    eligible_roles: published_roles(&shared.record),
                    four_eyes,
                    choices: shared
                        .record
                        .get("choices")
                        .and_then(Value::as_array)
                        .map(|c| c.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                        .unwrap_or_default(),
                    decided: shared.state != SharedStepState::Open,
                    started_the_run: shared.requester == scope.user(),
                    decided_another_step_of_the_run: four_eyes
                        && tx
                            .prepare_cached(
                                "SELECT 1 FROM shared_approvals WHERE org_id = ?1 AND run_id = ?2 AND step_id <> ?3
                                   AND decided_by = ?4
                                 UNION ALL
                                 SELECT 1 FROM approval_requests q JOIN shared_approvals s
                                   ON s.org_id = q.org_id AND s.step_id = q.step_id
                                 WHERE q.org_id = ?1 AND s.run_id = ?2 AND q.step_id <> ?3 AND q.user_id = ?4
                                   AND q.status <> 'refused'",
                            )?
                            .exists(params![org, shared.run, step, me])?,
                }
            }
        };
        let rule_step =
            rule::Step { eligible_roles: &facts.eligible_roles, four_eyes: facts.four_eyes, decided: facts.decided };
        let decider = rule::Decider {
            role: scope.role(),
            decided_another_step_of_the_run: facts.decided_another_step_of_the_run,
            started_the_run: facts.started_the_run,
        };
        match rule::may_decide(&rule_step, &decider) {
            Ok(()) => {}
            Err(rule::Refusal::AlreadyDecided) => {
                return Err(StoreError::Conflict(
                    "this approval was already decided; a decision is recorded once".into(),
                ));
            }
            Err(rule::Refusal::NotEligible) => return Err(StoreError::Forbidden { role: scope.role() }),
            Err(rule::Refusal::FourEyes) => return Err(StoreError::FourEyes),
            Err(rule::Refusal::OwnRequest) => return Err(StoreError::OwnRequest),
        }
        let waiting = tx
            .prepare_cached(
                "SELECT 1 FROM approval_requests WHERE org_id = ?1 AND step_id = ?2 AND user_id = ?3
                   AND status = 'waiting'",
            )?
            .exists(params![org, step, me])?;
        if waiting {
            return Err(StoreError::Conflict(
                "your decision on this approval is waiting to sync; it cannot be changed before the service answers"
                    .into(),
            ));
        }
        let choice = pick_choice(&facts.choices, decision, choice)?;
        let name: Option<String> = tx
            .prepare_cached("SELECT display_name FROM users WHERE id = ?1")?
            .query_row([&me], |r| r.get(0))
            .optional()?;
        let payload = ApprovalRequestPayload {
            approve: decision == Decision::Approve,
            note: reason.to_string(),
            eligible_roles: facts.eligible_roles.clone(),
            choice: choice.clone(),
            decider_name: name,
        };
        let id = emit_returning_id_in(self.store, &tx, scope, "approval_decision", step, |_| {
            Ok(ChangePayload::ApprovalRequest(payload))
        })?
        .ok_or_else(|| StoreError::Invalid("this organization does not sync; decide the approval here".into()))?;
        let now = to_sql(self.store.clock().now());
        tx.prepare_cached(
            "INSERT INTO approval_requests (id, org_id, step_id, user_id, decision, reason, choice, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![id, org, step, me, decision_text(decision), reason, choice, now])?;
        crate::audit::append_audit(
            &tx,
            scope,
            &now,
            "approval_requested",
            "approval",
            Some(step),
            &serde_json::json!({ "decision": decision, "reason": reason, "choice": choice }),
        )?;
        let row = tx
            .prepare_cached(&format!("SELECT {REQUEST_COLUMNS} FROM approval_requests WHERE id = ?1"))?
            .query_row([&id], request_from_row)?;
        tx.commit()?;
        Ok(row)
    }
}

impl SharedRuns<'_> {
    /// Asks the home desktop of another desktop's run to cancel it (the same roles as a local cancel: every member
    /// but a viewer). Queued with its outbox entry in one transaction and audited; the home carries it out when the
    /// request arrives, with the cascade a local cancel has, and publishes the cancelled run.
    pub fn request_cancel(&self, scope: &OrgScope, run: &str, reason: &str) -> Result<(), StoreError> {
        if scope.role() == Role::Viewer {
            return Err(StoreError::Forbidden { role: scope.role() });
        }
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(StoreError::Invalid("give a reason for cancelling the run (--reason TEXT)".into()));
        }
        let tx = self.store.conn().unchecked_transaction()?;
        let org = scope.org().to_string();
        let status: String = tx
            .prepare_cached("SELECT status FROM shared_runs WHERE org_id = ?1 AND run_id = ?2")?
            .query_row(params![org, run], |r| r.get(0))
            .optional()?
            .ok_or(StoreError::NotFound)?;
        if matches!(status.as_str(), "succeeded" | "failed" | "cancelled") {
            return Err(StoreError::Conflict(format!("the run has already {status}; there is nothing to cancel")));
        }
        let name: Option<String> = tx
            .prepare_cached("SELECT display_name FROM users WHERE id = ?1")?
            .query_row([scope.user().to_string()], |r| r.get(0))
            .optional()?;
        let event = serde_json::json!({ "reason": reason, "requested_by_name": name });
        emit_returning_id_in(self.store, &tx, scope, "run_cancel", run, |_| Ok(ChangePayload::Event(event)))?
            .ok_or_else(|| StoreError::Invalid("this organization does not sync; the run is not here".into()))?;
        let now = to_sql(self.store.clock().now());
        crate::audit::append_audit(
            &tx,
            scope,
            &now,
            "run_cancel_requested",
            "run",
            Some(run),
            &serde_json::json!({ "reason": reason }),
        )?;
        tx.commit()?;
        Ok(())
    }
}

impl SyncLog<'_> {
    /// Queues this desktop's published runs and steps (already encoded by the caller) and marks what was
    /// published, with the HLC reading after them, in one transaction.
    pub fn publish(
        &self,
        scope: &OrgScope,
        entries: &[(crate::NewOutboxEntry, String)],
        published: &[(&str, String, String)],
        clock: (u64, u32),
    ) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        let now = to_sql(self.store.clock().now());
        let org = scope.org().to_string();
        for (entry, hlc) in entries {
            let fields: Vec<String> = serde_json::from_str::<Value>(&entry.change_json)
                .ok()
                .and_then(|c| c.pointer("/body/fields").and_then(Value::as_object).map(|f| f.keys().cloned().collect()))
                .unwrap_or_default();
            let fields: Vec<(&str, &str)> = fields.iter().map(|f| (f.as_str(), hlc.as_str())).collect();
            SyncLog::queue_in(&tx, scope, entry, &fields, &now)?;
        }
        {
            let mut mark = tx.prepare_cached(
                "INSERT INTO sync_published (org_id, model, record_id, version) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (org_id, model, record_id) DO UPDATE SET version = excluded.version",
            )?;
            for (model, record, version) in published {
                mark.execute(params![org, model, record, version])?;
            }
        }
        crate::sync_log::save_clock(&tx, &scope.org().to_string(), clock, &now)?;
        tx.commit()?;
        Ok(())
    }
}

impl SyncApply<'_> {
    /// Another desktop asked to cancel one of this desktop's runs: cancelled here with the local cascade (child
    /// runs, tasks, pending approvals), audited as the person who asked. Nothing when the run is not here or has
    /// ended. Returns whether it was cancelled.
    pub fn cancel_request(&self, run: &str, author: UserId, reason: &str) -> Result<bool, StoreError> {
        let status: Option<String> = self
            .tx
            .prepare_cached("SELECT status FROM engine_runs WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL")?
            .query_row(params![run, self.org], |r| r.get(0))
            .optional()?;
        let Some(status) = status else { return Ok(false) };
        if matches!(status.as_str(), "succeeded" | "failed" | "cancelled") {
            return Ok(false);
        }
        let reason = reason.trim();
        let reason = if reason.is_empty() { "cancelled from another desktop" } else { reason };
        let report = crate::runs::cancel_tree(self.tx, &[run.to_string()], true, reason, &self.now)?;
        append_audit_as(
            self.tx,
            &self.org,
            Some(&author.to_string()),
            &self.now,
            "run_cancelled",
            "run",
            Some(run),
            &serde_json::json!({ "reason": reason, "cancelled": report, "requested_from": "another desktop" }),
        )?;
        Ok(true)
    }

    fn is_local_run(&self, run: &str) -> Result<bool, StoreError> {
        Ok(self.tx.prepare_cached("SELECT 1 FROM engine_runs WHERE id = ?1")?.exists([run])?)
    }

    /// A run another desktop published (checked by the caller). A run that lives here is never overwritten.
    pub fn shared_run(&self, run: &str, record: &Value, status: &str) -> Result<(), StoreError> {
        if self.is_local_run(run)? {
            return Ok(());
        }
        self.tx
            .prepare_cached(
                "INSERT INTO shared_runs (org_id, run_id, record_json, status, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (org_id, run_id) DO UPDATE SET record_json = excluded.record_json,
                     status = excluded.status, updated_at = excluded.updated_at",
            )?
            .execute(params![self.org, run, record.to_string(), status, self.now])?;
        Ok(())
    }

    /// An approval step another desktop published (checked by the caller); `requester` is the change's author as
    /// the service stamped it, `open` whether the home still waits for a decision. A decided step stays decided;
    /// a step of a run that lives here is never overwritten.
    pub fn shared_approval(
        &self,
        step: &str,
        run: &str,
        requester: UserId,
        record: &Value,
        open: bool,
    ) -> Result<(), StoreError> {
        if self.is_local_run(run)?
            || self.tx.prepare_cached("SELECT 1 FROM engine_approvals WHERE id = ?1")?.exists([step])?
        {
            return Ok(());
        }
        let status = if open { "open" } else { "closed" };
        self.tx
            .prepare_cached(
                "INSERT INTO shared_approvals (org_id, step_id, run_id, requester, record_json, status, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (org_id, step_id) DO UPDATE SET
                     -- The service's escalation stays when the home publishes a revision written before it knew.
                     record_json = CASE
                         WHEN json_extract(shared_approvals.record_json, '$.escalated_at') IS NOT NULL
                              AND json_extract(excluded.record_json, '$.escalated_at') IS NULL
                         THEN json_set(excluded.record_json, '$.escalated_at',
                                       json_extract(shared_approvals.record_json, '$.escalated_at'))
                         ELSE excluded.record_json END,
                     status = CASE WHEN shared_approvals.status = 'decided' THEN 'decided' ELSE excluded.status END,
                     updated_at = excluded.updated_at",
            )?
            .execute(params![self.org, step, run, requester.to_string(), record.to_string(), status, self.now])?;
        Ok(())
    }

    /// The sync service escalated `step` at `at` (its clock): on the run's home desktop the step is escalated like
    /// a local escalation (marked, one urgent notification, audited); elsewhere the step's copy shows it. Applied
    /// once; a decided or closed step stays as it is. Never decides.
    pub fn approval_escalated(&self, step: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        let at = to_sql(at);
        let home: bool = self
            .tx
            .prepare_cached("SELECT 1 FROM engine_approvals WHERE id = ?1 AND org_id = ?2")?
            .exists(params![step, self.org])?;
        if home {
            crate::approvals::escalate(self.tx, step, &at)?;
            return Ok(());
        }
        self.tx
            .prepare_cached(
                "UPDATE shared_approvals SET record_json = json_set(record_json, '$.escalated_at', ?3), updated_at = ?4
                 WHERE org_id = ?1 AND step_id = ?2 AND status = 'open'
                   AND json_extract(record_json, '$.escalated_at') IS NULL",
            )?
            .execute(params![self.org, step, at, self.now])?;
        Ok(())
    }

    /// The service's answer to a decision request on `step` (this desktop's request `request` or another's). A
    /// stamp decides the step: on the run's home desktop it is written into the step like a local decision (the
    /// approver known here as a member with the stamped role) and the run is marked to resume — its id is
    /// returned so the caller drives it at once; elsewhere the step's copy shows the decision. A refusal only
    /// settles this desktop's own request, with the reason.
    pub fn approval_outcome(
        &self,
        request: &str,
        step: &str,
        outcome: &RequestOutcome,
    ) -> Result<Option<RunId>, StoreError> {
        match outcome {
            RequestOutcome::Refused { message } => {
                self.tx
                    .prepare_cached(
                        "UPDATE approval_requests SET status = 'refused', refusal = ?3, settled_at = ?4
                         WHERE id = ?1 AND org_id = ?2 AND status = 'waiting'",
                    )?
                    .execute(params![request, self.org, message, self.now])?;
                Ok(None)
            }
            RequestOutcome::Stamped { approve, approver, approver_role, approver_name, decided_at, note, choice } => {
                self.tx
                    .prepare_cached(
                        "UPDATE approval_requests SET status = 'stamped', settled_at = ?3
                         WHERE id = ?1 AND org_id = ?2 AND status = 'waiting'",
                    )?
                    .execute(params![request, self.org, self.now])?;
                // Any other waiting request for the step lost.
                self.tx
                    .prepare_cached(
                        "UPDATE approval_requests SET status = 'refused', settled_at = ?4,
                             refusal = 'someone else decided this step first'
                         WHERE org_id = ?1 AND step_id = ?2 AND id <> ?3 AND status = 'waiting'",
                    )?
                    .execute(params![self.org, step, request, self.now])?;
                self.ensure_user(*approver, approver_name.as_deref())?;
                let (decision, status) =
                    if *approve { ("approve", ApprovalStatus::Approved) } else { ("reject", ApprovalStatus::Rejected) };
                let at = to_sql(*decided_at);
                let reason = note.as_deref().map(str::trim).filter(|n| !n.is_empty()).unwrap_or("(no reason given)");
                let home: Option<ApprovalRecord> = self
                    .tx
                    .prepare_cached(&format!("SELECT {COLUMNS} FROM engine_approvals WHERE id = ?1 AND org_id = ?2"))?
                    .query_row(params![step, self.org], approval_from_row)
                    .optional()?;
                let Some(home) = home else {
                    self.tx
                        .prepare_cached(
                            "UPDATE shared_approvals SET status = 'decided', decision = ?3, decided_by = ?4,
                                 decided_by_name = ?5, decided_at = ?6, reason = ?7, choice = ?8, updated_at = ?9
                             WHERE org_id = ?1 AND step_id = ?2 AND decided_by IS NULL",
                        )?
                        .execute(params![
                            self.org,
                            step,
                            decision,
                            approver.to_string(),
                            approver_name,
                            at,
                            reason,
                            choice,
                            self.now
                        ])?;
                    return Ok(None);
                };
                if home.status != ApprovalStatus::Pending {
                    return Ok(None);
                }
                // The service checked the approver against the step's pinned roles; the store's trigger checks the
                // membership again, so the approver is recorded as a member with the stamped role.
                if let Some(role) = approver_role {
                    // Through the one place a known member is recorded; the name stays the one known here.
                    let display_name: String = self
                        .tx
                        .prepare_cached("SELECT display_name FROM users WHERE id = ?1")?
                        .query_row([approver.to_string()], |r| r.get(0))?;
                    let member =
                        crate::members::KnownMember { user: *approver, display_name, email: None, role: *role };
                    crate::members::record_member_at(self.tx, &self.org, &member, &self.now)?;
                }
                let eligible_here: Option<String> = self
                    .tx
                    .prepare_cached("SELECT role FROM memberships WHERE org_id = ?1 AND user_id = ?2")?
                    .query_row(params![self.org, approver.to_string()], |r| r.get(0))
                    .optional()?;
                if !eligible_here.is_some_and(|r| home.eligible_roles.iter().any(|e| e.as_str() == r)) {
                    return Err(StoreError::Invalid(format!(
                        "a stamped decision on step {step} names an approver this desktop does not know as an eligible member"
                    )));
                }
                let choice = match pick_choice(
                    &home.choices,
                    if *approve { Decision::Approve } else { Decision::Reject },
                    choice.as_deref(),
                ) {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::warn!(step, "a stamped decision's choice is not one of the step's: {e}");
                        None
                    }
                };
                self.tx
                    .prepare_cached(
                        "UPDATE engine_approvals SET status = ?2, decided_by = ?3, decided_at = ?4, reason = ?5,
                             choice = ?6
                         WHERE id = ?1 AND status = 'pending'",
                    )?
                    .execute(params![step, status.as_str(), approver.to_string(), at, reason, choice])?;
                // Marked to resume: the work loop (or the caller, at once) drives it from its checkpoint, where the
                // engine reads the decided step.
                self.tx
                    .prepare_cached(
                        "UPDATE engine_runs SET status = 'running', wake_at = NULL, updated_at = ?2
                         WHERE id = ?1 AND status = 'waiting'",
                    )?
                    .execute(params![home.run.to_string(), self.now])?;
                append_audit_as(
                    self.tx,
                    &self.org,
                    Some(&approver.to_string()),
                    &self.now,
                    "approval_decided",
                    "approval",
                    Some(step),
                    &serde_json::json!({
                        "run": home.run, "node": home.node, "decision": decision, "reason": reason,
                        "choice": choice, "decided_by": approver, "decided_at": at, "stamped_by": "sync service",
                    }),
                )?;
                Ok(Some(home.run))
            }
        }
    }
}

/// A contract review report another desktop's run assembled (read-only here, kept once).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedReportRow {
    pub run: String,
    pub document: String,
    /// `pactwise_domain::ContractReport` as published.
    pub report: Value,
    pub published_by: UserId,
    pub received_at: DateTime<Utc>,
}

fn shared_report_from_row(r: &Row<'_>) -> rusqlite::Result<SharedReportRow> {
    Ok(SharedReportRow {
        run: r.get(0)?,
        document: r.get(1)?,
        report: serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or(Value::Null),
        published_by: parse_text("user id", &r.get::<_, String>(3)?)?,
        received_at: from_sql(&r.get::<_, String>(4)?)?,
    })
}

impl SharedRuns<'_> {
    /// Has this desktop published `record` of `model` (any version)? For records published once (a report).
    pub fn published(&self, scope: &OrgScope, model: &str, record: &str) -> Result<bool, StoreError> {
        Ok(self
            .store
            .conn()
            .prepare_cached("SELECT 1 FROM sync_published WHERE org_id = ?1 AND model = ?2 AND record_id = ?3")?
            .exists(params![scope.org().to_string(), model, record])?)
    }

    /// The reports other desktops' runs assembled for a document, newest first.
    pub fn reports(&self, scope: &OrgScope, document: &str) -> Result<Vec<SharedReportRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT run_id, document_id, report_json, published_by, received_at FROM shared_reports
             WHERE org_id = ?1 AND document_id = ?2 ORDER BY received_at DESC, run_id DESC",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), document], shared_report_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The report another desktop's run assembled, by run.
    pub fn report(&self, scope: &OrgScope, run: &str) -> Result<SharedReportRow, StoreError> {
        self.store
            .conn()
            .query_row(
                "SELECT run_id, document_id, report_json, published_by, received_at FROM shared_reports
                 WHERE org_id = ?1 AND run_id = ?2",
                params![scope.org().to_string(), run],
                shared_report_from_row,
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }
}

impl SyncApply<'_> {
    /// A report another desktop's run assembled (checked by the caller; `author` as the service stamped it): kept
    /// once, never changed (append-only). A report of a run that lives here is this desktop's own: nothing.
    pub fn shared_report(&self, run: &str, document: &str, author: UserId, report: &Value) -> Result<(), StoreError> {
        if self.is_local_run(run)? {
            return Ok(());
        }
        let owner: Option<String> =
            self.tx.query_row("SELECT org_id FROM documents WHERE id = ?1", [document], |r| r.get(0)).optional()?;
        if owner.as_deref().is_some_and(|o| o != self.org) {
            return Err(StoreError::Invalid("a report names another organization's document here; skipped".into()));
        }
        self.tx
            .prepare_cached(
                "INSERT INTO shared_reports (org_id, run_id, document_id, report_json, published_by, received_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (org_id, run_id) DO NOTHING",
            )?
            .execute(params![self.org, run, document, report.to_string(), author.to_string(), self.now])?;
        Ok(())
    }
}
