//! Approval steps on the service, one home for both backends: the first publication of a step (model
//! `approval_step`, from the desktop the run lives on) pins who requested it (the token's user), its run, its
//! eligible roles and four-eyes; a later publication may only come from the same requester and may close the step;
//! a decision request is stamped or refused with `pactwise_rules::approval::may_decide` over what was pinned. Each
//! backend implements [`StepTables`] over its open transaction, so the rule runs inside the push's one transaction.
//!
//! Escalation is the service's too: the first publication's `escalate_after_secs` pins the step's escalation time by
//! the service's clock; [`escalation_change`] is the one change the service writes when an open, undecided step
//! passes it (once per step, see `SyncStorage::escalate_due`), so every desktop hears of it even when the run's own
//! desktop is offline. Escalation never decides.

use crate::storage::{Actor, StorageError};
use chrono::{DateTime, Utc};
use pactwise_domain::{ErrorCode, Role, UserId};
use pactwise_rules::approval;
use pactwise_sync::SyncedModel;
use pactwise_sync::shared::{Escalation, SharedApproval, SharedStepStatus};
use pactwise_sync::wire::{ApprovalOutcome, Change, ChangeBody, ErrorDetail, RefusalReason};
use pactwise_sync::{Hlc, SyncedModel as Model};
use uuid::Uuid;

/// What a step's first publication pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub run_id: String,
    pub requester: UserId,
    pub four_eyes: bool,
    pub closed: bool,
}

/// The step tables of one organization inside the push's transaction.
pub trait StepTables {
    fn opening(&mut self, step: &str) -> Result<Option<Opening>, StorageError>;
    fn open(&mut self, step: &str, opening: &Opening) -> Result<(), StorageError>;
    /// Pins when an open step escalates if still undecided (the service's clock).
    fn schedule_escalation(&mut self, step: &str, at: DateTime<Utc>) -> Result<(), StorageError>;
    fn close(&mut self, step: &str) -> Result<(), StorageError>;
    fn pinned_roles(&mut self, step: &str) -> Result<Option<Vec<Role>>, StorageError>;
    fn pin_roles(&mut self, step: &str, roles: &[Role]) -> Result<(), StorageError>;
    fn decided(&mut self, step: &str) -> Result<bool, StorageError>;
    /// Did `approver` decide another step of `run` (a stamped decision)?
    fn decided_another_step(&mut self, run: &str, step: &str, approver: UserId) -> Result<bool, StorageError>;
    fn stamp(
        &mut self,
        step: &str,
        decision: &str,
        approver: UserId,
        seq: u64,
        at: DateTime<Utc>,
    ) -> Result<(), StorageError>;
}

fn refusal(code: ErrorCode, message: impl Into<String>) -> ErrorDetail {
    ErrorDetail { code: code.as_str().to_string(), message: message.into() }
}

/// Checks a published approval step before it is stored, and pins or closes the step. `Some` refuses the change
/// (nothing is stored for it). Other models pass untouched.
pub fn publish(
    actor: &Actor,
    change: &Change,
    now: DateTime<Utc>,
    tables: &mut dyn StepTables,
) -> Result<Option<ErrorDetail>, StorageError> {
    if change.model != SyncedModel::ApprovalStep {
        return Ok(None);
    }
    let ChangeBody::Fields { fields } = &change.body else {
        return Ok(Some(refusal(ErrorCode::InvalidInput, "an approval step is published as fields")));
    };
    let step = &change.record_id;
    match tables.opening(step)? {
        None => {
            let published = match SharedApproval::from_fields(fields) {
                Ok(p) => p,
                Err(why) => return Ok(Some(refusal(ErrorCode::InvalidInput, why))),
            };
            let opening = Opening {
                run_id: published.run_id.to_string(),
                requester: actor.user,
                four_eyes: published.four_eyes,
                closed: published.status != SharedStepStatus::Open,
            };
            tables.open(step, &opening)?;
            if let Some(secs) = published.escalate_after_secs.filter(|_| !opening.closed) {
                tables.schedule_escalation(step, escalation_time(published.created_at, secs, now))?;
            }
            if tables.pinned_roles(step)?.is_none() {
                tables.pin_roles(step, &published.eligible_roles)?;
            }
            Ok(None)
        }
        Some(opening) if opening.requester != actor.user => Ok(Some(refusal(
            ErrorCode::Forbidden,
            "only the desktop that runs this workflow publishes its approval steps",
        ))),
        Some(opening) => {
            let status = fields.get("status").map(|s| serde_json::from_value::<SharedStepStatus>(s.clone()));
            match status {
                Some(Err(_)) => Ok(Some(refusal(ErrorCode::InvalidInput, "an approval step's status is unknown"))),
                Some(Ok(SharedStepStatus::Closed)) if !opening.closed => {
                    tables.close(step)?;
                    Ok(None)
                }
                _ => Ok(None),
            }
        }
    }
}

/// When a step first published at `now` escalates: `escalate_after_secs` after the step opened on its desktop, but
/// never later than that long after the service first saw it (a desktop's clock cannot postpone it) and, for a step
/// that opened while its desktop was offline, at once (the next sweep) when that time has already passed.
pub fn escalation_time(opened: DateTime<Utc>, escalate_after_secs: u64, now: DateTime<Utc>) -> DateTime<Utc> {
    let after = chrono::Duration::seconds(i64::try_from(escalate_after_secs).unwrap_or(i64::MAX));
    let latest = now.checked_add_signed(after).unwrap_or(now);
    opened.checked_add_signed(after).unwrap_or(latest).clamp(now, latest)
}

/// The service's outcome for a decision request: the first eligible request per step is stamped with the token's
/// user and the service's clock; a closed step, a decided step, an ineligible role and a four-eyes conflict are
/// refused. Runs inside the push's transaction; `seq` is the request's place in the log.
pub fn decide(
    actor: &Actor,
    change: &Change,
    seq: u64,
    now: DateTime<Utc>,
    tables: &mut dyn StepTables,
) -> Result<Option<ApprovalOutcome>, StorageError> {
    let ChangeBody::ApprovalRequest { decision, eligible_roles, .. } = &change.body else {
        return Ok(None);
    };
    let step = &change.record_id;
    let refused = |reason| Ok(Some(ApprovalOutcome::Refused { reason }));
    let opening = tables.opening(step)?;
    let pinned = tables.pinned_roles(step)?;
    if pinned.is_none() {
        tables.pin_roles(step, eligible_roles)?;
    }
    let decided = tables.decided(step)?;
    if opening.as_ref().is_some_and(|o| o.closed) && !decided {
        return refused(RefusalReason::StepClosed);
    }
    let roles = pinned.as_deref().unwrap_or(eligible_roles);
    let same_roles = roles.len() == eligible_roles.len() && roles.iter().all(|r| eligible_roles.contains(r));
    if !same_roles && !decided && opening.is_none() {
        tracing::warn!(org = %actor.org, step = %step, "an approval request named other eligible roles than the step's first request");
        return refused(RefusalReason::NotEligible);
    }
    let four_eyes = opening.as_ref().is_some_and(|o| o.four_eyes);
    let decided_another_step_of_the_run = match &opening {
        Some(o) if four_eyes => tables.decided_another_step(&o.run_id, step, actor.user)?,
        _ => false,
    };
    let rule_step = approval::Step { eligible_roles: roles, four_eyes, decided };
    let decider = approval::Decider {
        role: actor.role,
        decided_another_step_of_the_run,
        started_the_run: opening.as_ref().is_some_and(|o| o.requester == actor.user),
    };
    match approval::may_decide(&rule_step, &decider) {
        Ok(()) => {
            tables.stamp(step, decision.as_str(), actor.user, seq, now)?;
            Ok(Some(ApprovalOutcome::Stamped {
                decision: *decision,
                approver: actor.user,
                decided_at: now,
                approver_role: Some(actor.role),
            }))
        }
        Err(approval::Refusal::AlreadyDecided) => refused(RefusalReason::AlreadyDecided),
        Err(approval::Refusal::NotEligible) => refused(RefusalReason::NotEligible),
        Err(approval::Refusal::FourEyes | approval::Refusal::OwnRequest) => refused(RefusalReason::FourEyes),
    }
}

/// The change the service writes when `step` of `run` passed its escalation time undecided: model
/// `approval_escalation`, by the service's clock (a nil HLC node: no desktop wrote it).
pub fn escalation_change(step: &str, run: &str, now: DateTime<Utc>, seq: u64) -> Result<Change, StorageError> {
    let run_id = Uuid::parse_str(run).map_err(|e| StorageError::Database(format!("a step's run id: {e}")))?;
    Ok(Change {
        id: Uuid::now_v7(),
        model: Model::ApprovalEscalation,
        record_id: step.to_string(),
        hlc: Hlc {
            wall_ms: u64::try_from(now.timestamp_millis()).unwrap_or(0),
            counter: (seq % u64::from(u32::MAX)) as u32,
            node: Uuid::nil(),
        },
        body: ChangeBody::Event { event: Escalation { run_id, escalated_at: now }.to_event() },
    })
}

/// One escalation sweep: every approval step past its escalation time is escalated once (by the storage, in one
/// transaction, at the service's clock) and the waits of each organization that received an escalation are woken.
/// Returns how many organizations received one. A storage failure is logged; the next sweep tries again.
pub async fn sweep(state: &crate::AppState) -> usize {
    use tracing::Instrument;
    let now = state.0.clock.now();
    let escalated = crate::http::blocking(state, move |storage| storage.escalate_due(now))
        .instrument(tracing::info_span!("escalation_sweep"))
        .await;
    match escalated {
        Ok(advanced) => {
            for (org, seq) in &advanced {
                tracing::info!(org = %org, seq, "approval steps escalated");
                state.0.notifier.advanced(*org, *seq);
            }
            advanced.len()
        }
        Err(e) => {
            tracing::warn!("the escalation sweep failed: {e:?}");
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_desktops_clock_can_bring_an_escalation_forward_to_now_but_never_postpone_it() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let hour = chrono::Duration::hours(1);
        assert_eq!(escalation_time(now, 3600, now), now + hour, "opened just now");
        assert_eq!(escalation_time(now - hour / 2, 3600, now), now + hour / 2, "opened offline half an hour ago");
        assert_eq!(escalation_time(now - hour * 5, 3600, now), now, "overdue already: the next sweep");
        assert_eq!(escalation_time(now + hour * 24, 3600, now), now + hour, "a clock in the future gains nothing");
    }
}
