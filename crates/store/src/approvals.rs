//! Approval steps of workflow runs and their notifications. Who may resolve an approval is decided here, in the
//! store, not by callers, with `pactwise_rules::approval::may_decide` (the same function the sync service uses):
//! only a member of the approval's organization whose role is one of the step's eligible roles, with the identity
//! taken from the session (`OrgScope`), never from input; with four-eyes, not someone who decided another step of the
//! same run. A trigger in the schema (`engine_approvals_decider_is_eligible`) encodes the same eligibility (the
//! decider's membership role is in the step's `eligible_roles`, the step still pending) and refuses any other
//! decider even from raw SQL. An approval that waits too long is
//! escalated exactly once (an urgent notification); escalation never decides.

use crate::audit::{append_audit, append_platform_audit};
use crate::runs::{Applied, RunRecord, StepCommit, apply_step};
use crate::sql::{CachedStatements, parse_text, write_tx};
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, PlatformCredential, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::{ApprovalId, ApprovalStatus, Decision, OrgId, Role, RunId, UserId};
use pactwise_rules::approval as rule;
use rusqlite::{OptionalExtension, Row, Transaction, params};
use serde::Serialize;
use serde_json::Value;

pub struct Approvals<'s> {
    store: &'s Store,
}

/// An approval step as stored: what the approver saw, and the decision (who, when, why) once made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRecord {
    pub id: ApprovalId,
    pub org: OrgId,
    pub run: RunId,
    pub node: String,
    pub superstep: u32,
    pub title: String,
    pub eligible_roles: Vec<Role>,
    pub four_eyes: bool,
    pub state_seen: Value,
    pub choices: Vec<String>,
    pub status: ApprovalStatus,
    pub due_at: Option<DateTime<Utc>>,
    pub escalate_at: Option<DateTime<Utc>>,
    pub escalated_at: Option<DateTime<Utc>>,
    pub decided_by: Option<UserId>,
    /// The decider's display name (for documents and the timeline; the id is what counts).
    pub decided_by_name: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    pub reason: Option<String>,
    pub choice: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A member of the organization by name and role: who may decide a step, who started or decided something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub user: UserId,
    pub name: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Notification {
    pub approval: ApprovalId,
    pub kind: String,
    pub urgent: bool,
    pub message: String,
    pub created_at: DateTime<Utc>,
}

pub(crate) const COLUMNS: &str =
    "id, org_id, run_id, node, superstep, title, eligible_roles, four_eyes, state_seen, choices, status,
     due_at, escalate_at, escalated_at, decided_by, decided_at, reason, choice, created_at,
     (SELECT display_name FROM users WHERE users.id = decided_by)";

pub(crate) fn approval_from_row(r: &Row<'_>) -> rusqlite::Result<ApprovalRecord> {
    let roles: String = r.get(6)?;
    Ok(ApprovalRecord {
        id: parse_text("approval id", &r.get::<_, String>(0)?)?,
        org: parse_text("org id", &r.get::<_, String>(1)?)?,
        run: parse_text("run id", &r.get::<_, String>(2)?)?,
        node: r.get(3)?,
        superstep: r.get(4)?,
        title: r.get(5)?,
        eligible_roles: roles.split(',').map(|x| parse_text("role", x)).collect::<Result<_, _>>()?,
        four_eyes: r.get::<_, i64>(7)? != 0,
        state_seen: serde_json::from_str(&r.get::<_, String>(8)?).unwrap_or(Value::Null),
        choices: serde_json::from_str(&r.get::<_, String>(9)?).unwrap_or_default(),
        status: parse_text("approval status", &r.get::<_, String>(10)?)?,
        due_at: from_sql_opt(r.get(11)?)?,
        escalate_at: from_sql_opt(r.get(12)?)?,
        escalated_at: from_sql_opt(r.get(13)?)?,
        decided_by: r.get::<_, Option<String>>(14)?.map(|v| parse_text("user id", &v)).transpose()?,
        decided_by_name: r.get(19)?,
        decided_at: from_sql_opt(r.get(15)?)?,
        reason: r.get(16)?,
        choice: r.get(17)?,
        created_at: from_sql(&r.get::<_, String>(18)?)?,
    })
}

/// The approvals this desktop escalates by itself: pending, not escalated, with an escalation time, of an
/// organization that does not sync. When the organization syncs, the sync service escalates (by its clock, once,
/// whether or not this desktop is online) and [`escalate`] applies what it wrote. One home for the rule: the
/// watchdog's sweep and the work loop's next due time both read it.
pub(crate) const ESCALATES_HERE: &str = "status = 'pending' AND escalated_at IS NULL AND escalate_at IS NOT NULL
     AND org_id NOT IN (SELECT org_id FROM sync_state)";

/// Marks approvals whose escalation time has passed as escalated and writes one urgent notification each (only
/// those that escalate here: [`ESCALATES_HERE`]). Never decides.
pub(crate) fn escalate_due(tx: &Transaction<'_>, now: &str) -> Result<usize, StoreError> {
    let due: Vec<String> = tx
        .prepare_cached(&format!("SELECT id FROM engine_approvals WHERE {ESCALATES_HERE} AND escalate_at <= ?1"))?
        .query_map([now], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut n = 0;
    for id in &due {
        n += usize::from(escalate(tx, id, now)?);
    }
    Ok(n)
}

/// What an escalated approval's urgent notification says, on every desktop.
pub fn escalation_notice(title: &str) -> String {
    format!("Urgent: \"{title}\" has waited past its escalation time and still needs a decision")
}

/// Escalates one pending approval at `now`: marks it and writes its urgent notification, once (the
/// `escalated_at IS NULL` guard and the notification's unique key); `false` when it was not pending or already
/// escalated. Never decides. Used by the local sweep and for the sync service's escalation.
pub(crate) fn escalate(tx: &Transaction<'_>, id: &str, now: &str) -> Result<bool, StoreError> {
    let marked: Option<(String, String)> = tx
        .prepare_cached(
            "UPDATE engine_approvals SET escalated_at = ?2
             WHERE id = ?1 AND status = 'pending' AND escalated_at IS NULL
             RETURNING org_id, title",
        )?
        .query_row(params![id, now], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((org, title)) = marked else { return Ok(false) };
    tx.prepare_cached_execute(
        "INSERT OR IGNORE INTO engine_notifications (id, org_id, approval_id, kind, urgent, message, created_at)
         VALUES (?1, ?2, ?3, 'urgent_escalation', 1, ?4, ?5)",
        params![uuid::Uuid::now_v7().to_string(), org, id, escalation_notice(&title), now],
    )?;
    append_platform_audit(tx, &org, now, "approval_escalated", "approval", id, &Value::Null)?;
    Ok(true)
}

/// The option a decision picks among a step's choices: none when rejecting without one; the only choice when
/// there is one; else the named one (any case), refused with the list when it is missing or unknown.
pub(crate) fn pick_choice(
    choices: &[String],
    decision: Decision,
    choice: Option<&str>,
) -> Result<Option<String>, StoreError> {
    Ok(match (choices.is_empty(), choice.map(str::trim).filter(|c| !c.is_empty())) {
        (_, None) if decision == Decision::Reject => None,
        (true, c) => c.map(str::to_string),
        (false, None) if choices.len() == 1 => Some(choices[0].clone()),
        (false, None) => {
            return Err(StoreError::Invalid(format!("pick one of: {} (--choice NAME)", choices.join(", "))));
        }
        (false, Some(c)) => match choices.iter().find(|x| x.eq_ignore_ascii_case(c)) {
            Some(x) => Some(x.clone()),
            None => {
                return Err(StoreError::Invalid(format!("{c:?} is not one of the choices: {}", choices.join(", "))));
            }
        },
    })
}

/// One decision of a batch.
#[derive(Debug, Clone, Copy)]
pub struct DecisionInput<'a> {
    pub approval: ApprovalId,
    pub decision: Decision,
    pub reason: &'a str,
    pub choice: Option<&'a str>,
}

fn decide_in(
    tx: &Transaction<'_>,
    scope: &OrgScope,
    now: &str,
    input: &DecisionInput<'_>,
    then: &mut dyn FnMut(&ApprovalRecord, &RunRecord) -> Vec<StepCommit>,
) -> Result<(ApprovalRecord, Vec<Applied>), StoreError> {
    let DecisionInput { approval: id, decision, reason, choice } = *input;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(StoreError::Invalid("give a reason for the decision (--reason TEXT)".into()));
    }
    let approval = tx
        .prepare_cached_query_row(
            &format!("SELECT {COLUMNS} FROM engine_approvals WHERE id = ?1 AND org_id = ?2"),
            params![id.to_string(), scope.org().to_string()],
            approval_from_row,
        )
        .optional()?
        .ok_or(StoreError::NotFound)?;
    // Who may decide is `pactwise_rules::approval::may_decide`, the rule the sync service stamps offline requests
    // with; the trigger `engine_approvals_decider_is_eligible` encodes its eligibility part again in SQL.
    let decided_another_step_of_the_run = approval.four_eyes
        && tx
            .query_row(
                "SELECT id FROM engine_approvals WHERE run_id = ?1 AND id <> ?2 AND decided_by = ?3 LIMIT 1",
                params![approval.run.to_string(), id.to_string(), scope.user().to_string()],
                |r| r.get::<_, String>(0),
            )
            .optional()?
            .is_some();
    let started_the_run = approval.four_eyes
        && tx
            .query_row(
                "SELECT 1 FROM engine_runs WHERE id = ?1 AND started_by = ?2",
                params![approval.run.to_string(), scope.user().to_string()],
                |r| r.get::<_, i64>(0),
            )
            .optional()?
            .is_some();
    let step = rule::Step {
        eligible_roles: &approval.eligible_roles,
        four_eyes: approval.four_eyes,
        decided: approval.status != ApprovalStatus::Pending,
    };
    let decider = rule::Decider { role: scope.role(), decided_another_step_of_the_run, started_the_run };
    match rule::may_decide(&step, &decider) {
        Ok(()) => {}
        Err(rule::Refusal::AlreadyDecided) => {
            return Err(StoreError::Conflict(format!(
                "this approval was already resolved ({}); a decision is recorded once",
                approval.status
            )));
        }
        Err(rule::Refusal::NotEligible) => return Err(StoreError::Forbidden { role: scope.role() }),
        Err(rule::Refusal::FourEyes) => return Err(StoreError::FourEyes),
        Err(rule::Refusal::OwnRequest) => return Err(StoreError::OwnRequest),
    }
    let choice = pick_choice(&approval.choices, decision, choice)?;
    let status = match decision {
        Decision::Approve => ApprovalStatus::Approved,
        Decision::Reject => ApprovalStatus::Rejected,
    };
    tx.prepare_cached_execute(
        "UPDATE engine_approvals SET status = ?2, decided_by = ?3, decided_at = ?4, reason = ?5, choice = ?6
             WHERE id = ?1 AND status = 'pending'",
        params![id.to_string(), status.as_str(), scope.user().to_string(), now, reason, choice],
    )?;
    append_audit(
        tx,
        scope,
        now,
        "approval_decided",
        "approval",
        Some(&id.to_string()),
        &serde_json::json!({
            "run": approval.run, "node": approval.node, "decision": decision, "reason": reason,
            "choice": choice, "state_seen": approval.state_seen,
        }),
    )?;
    // The decided approval is the one read above with the decision written into it (not read a second time).
    let decided_by_name =
        tx.prepare_cached_query_row("SELECT display_name FROM users WHERE id = ?1", [scope.user().to_string()], |r| {
            r.get::<_, Option<String>>(0)
        })?;
    let decided = ApprovalRecord {
        status,
        decided_by: Some(scope.user()),
        decided_by_name,
        decided_at: Some(from_sql(now)?),
        reason: Some(reason.to_string()),
        choice,
        ..approval
    };
    let run = tx.prepare_cached_query_row(
        &format!("SELECT {} FROM engine_runs WHERE id = ?1", crate::runs::COLUMNS),
        [decided.run.to_string()],
        crate::runs::run_from_row,
    )?;
    let steps = then(&decided, &run);
    if steps.is_empty() {
        tx.prepare_cached_execute(
            "UPDATE engine_runs SET status = 'running', wake_at = NULL, updated_at = ?2
                 WHERE id = ?1 AND status = 'waiting'",
            params![decided.run.to_string(), now],
        )?;
    }
    // Each super-step is fenced on the revision the one before it left, so they apply in order or not at all.
    let mut applied = Vec::with_capacity(steps.len());
    for step in &steps {
        let outcome = apply_step(tx, step, None, now)?;
        applied.push(outcome);
        if outcome == Applied::Stale {
            break;
        }
    }
    Ok((decided, applied))
}

impl<'s> Approvals<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Approvals { store }
    }

    /// The session organization's members (live users), by name: the people an approval names as its deciders.
    pub fn members(&self, scope: &OrgScope) -> Result<Vec<Member>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT u.id, u.display_name, m.role FROM memberships m JOIN users u ON u.id = m.user_id
             WHERE m.org_id = ?1 AND u.deleted_at IS NULL ORDER BY u.display_name, u.id",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            Ok(Member {
                user: parse_text("user id", &r.get::<_, String>(0)?)?,
                name: r.get(1)?,
                role: parse_text("role", &r.get::<_, String>(2)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Pending approvals of the organization that the session's role may resolve, oldest first.
    pub fn inbox(&self, scope: &OrgScope) -> Result<Vec<ApprovalRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT {COLUMNS} FROM engine_approvals
             WHERE org_id = ?1 AND status = 'pending'
               AND instr(',' || eligible_roles || ',', ',' || ?2 || ',') > 0
               AND EXISTS (SELECT 1 FROM engine_runs r WHERE r.id = engine_approvals.run_id AND r.deleted_at IS NULL)
             ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map(params![scope.org().to_string(), scope.role().as_str()], approval_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One approval of the organization (any status).
    pub fn get(&self, scope: &OrgScope, id: ApprovalId) -> Result<ApprovalRecord, StoreError> {
        self.store
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM engine_approvals WHERE id = ?1 AND org_id = ?2"),
                params![id.to_string(), scope.org().to_string()],
                approval_from_row,
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// A run's approvals, oldest first (scoped).
    pub fn for_run(&self, scope: &OrgScope, run: RunId) -> Result<Vec<ApprovalRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare(&format!(
            "SELECT {COLUMNS} FROM engine_approvals WHERE run_id = ?1 AND org_id = ?2 ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map(params![run.to_string(), scope.org().to_string()], approval_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A run's approvals as the platform sees them (the engine reads decisions when it resumes a run).
    pub fn for_run_as_worker(
        &self,
        _credential: &PlatformCredential,
        run: RunId,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT {COLUMNS} FROM engine_approvals WHERE run_id = ?1 ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map([run.to_string()], approval_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Resolves a pending approval as the session's user. Refused unless the approval is in the session's
    /// organization (else `NotFound`), still pending, the role is eligible, the reason is given, the choice (if the
    /// step offers choices) is one of them, and — with four-eyes — the user decided no other step of the run.
    ///
    /// In the same transaction, `then` may turn the decision into the run's next checkpoints (the engine's pure step:
    /// the approval's super-step, and possibly the super-step it leads to), applied in order, each fenced on the
    /// revision the one before left; if it returns none the run is only woken. Returns the decided approval and what
    /// happened to each commit.
    pub fn decide<F>(
        &self,
        scope: &OrgScope,
        id: ApprovalId,
        decision: Decision,
        reason: &str,
        choice: Option<&str>,
        mut then: F,
    ) -> Result<(ApprovalRecord, Vec<Applied>), StoreError>
    where
        F: FnMut(&ApprovalRecord, &RunRecord) -> Vec<StepCommit>,
    {
        let now = to_sql(self.store.clock().now());
        let tx = write_tx(self.store)?;
        let out = decide_in(&tx, scope, &now, &DecisionInput { approval: id, decision, reason, choice }, &mut then)?;
        tx.commit()?;
        Ok(out)
    }

    /// Several decisions of one person in ONE transaction (approving a selection from the inbox): all or none.
    pub fn decide_many<F>(
        &self,
        scope: &OrgScope,
        decisions: &[DecisionInput<'_>],
        mut then: F,
    ) -> Result<Vec<(ApprovalRecord, Vec<Applied>)>, StoreError>
    where
        F: FnMut(&ApprovalRecord, &RunRecord) -> Vec<StepCommit>,
    {
        let now = to_sql(self.store.clock().now());
        let tx = write_tx(self.store)?;
        let mut out = Vec::with_capacity(decisions.len());
        for d in decisions {
            out.push(decide_in(&tx, scope, &now, d, &mut then)?);
        }
        tx.commit()?;
        Ok(out)
    }

    /// The organization's notifications about approvals (new ones and urgent escalations), oldest first.
    pub fn notifications(&self, scope: &OrgScope) -> Result<Vec<Notification>, StoreError> {
        let mut stmt = self.store.conn().prepare(
            "SELECT approval_id, kind, urgent, message, created_at FROM engine_notifications WHERE org_id = ?1
             ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            Ok(Notification {
                approval: parse_text("approval id", &r.get::<_, String>(0)?)?,
                kind: r.get(1)?,
                urgent: r.get::<_, i64>(2)? != 0,
                message: r.get(3)?,
                created_at: from_sql(&r.get::<_, String>(4)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Escalates the approvals that are due (also part of the watchdog's sweep). Returns how many.
    pub fn escalate_due(&self, _credential: &PlatformCredential) -> Result<usize, StoreError> {
        let now = to_sql(self.store.clock().now());
        let tx = write_tx(self.store)?;
        let n = escalate_due(&tx, &now)?;
        tx.commit()?;
        Ok(n)
    }
}
