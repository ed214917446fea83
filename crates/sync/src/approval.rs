//! Approval steps as a desktop sees them: a decision made offline is only a request until the sync service stamps
//! it (the first eligible request per step, checked with `pactwise_rules::approval`) or refuses it; the desktop
//! shows pending, then the step's one decision, or the refusal.

use crate::wire::{ApprovalDecision, ApprovalOutcome, RefusalReason};
use pactwise_domain::UserId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// One approval step as a desktop knows it: the server's stamped decision (if any has arrived) and the state of
/// each request this desktop made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalStep {
    pub decided: Option<StampedDecision>,
    pub requests: BTreeMap<Uuid, RequestState>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StampedDecision {
    pub decision: ApprovalDecision,
    pub approver: UserId,
    /// The stamped request's place in the organization's log.
    pub seq: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RequestState {
    /// Not decided by the server yet (offline, or not pushed).
    Pending {
        decision: ApprovalDecision,
    },
    Stamped,
    Refused {
        reason: RefusalReason,
    },
}

/// What the desktop shows for a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ApprovalView {
    /// Decided by the server: the step's one decision.
    Decided { decision: ApprovalDecision, approver: UserId },
    /// Our request waits for the server.
    Pending { decision: ApprovalDecision },
    /// Our request was refused and nothing is decided yet (for example: not eligible).
    Refused { reason: RefusalReason },
}

impl ApprovalStep {
    /// Record a local (offline) request.
    pub fn request(&mut self, id: Uuid, decision: ApprovalDecision) {
        self.requests.insert(id, RequestState::Pending { decision });
    }

    /// Fold the server's outcome for one request (ours or another device's) into the step. The first stamped
    /// decision (lowest seq) is the step's decision; the server stamps only one, so this is a guard, not a merge.
    pub fn apply(&mut self, request: Uuid, seq: u64, outcome: &ApprovalOutcome) {
        match outcome {
            ApprovalOutcome::Stamped { decision, approver, .. } => {
                let stamped = StampedDecision { decision: *decision, approver: *approver, seq };
                if self.decided.is_none_or(|d| seq < d.seq) {
                    self.decided = Some(stamped);
                }
                if let Some(state) = self.requests.get_mut(&request) {
                    *state = RequestState::Stamped;
                }
            }
            ApprovalOutcome::Refused { reason } => {
                if let Some(state) = self.requests.get_mut(&request) {
                    *state = RequestState::Refused { reason: *reason };
                }
            }
        }
    }

    pub fn view(&self) -> Option<ApprovalView> {
        if let Some(d) = self.decided {
            return Some(ApprovalView::Decided { decision: d.decision, approver: d.approver });
        }
        let mut refused = None;
        for state in self.requests.values() {
            match state {
                RequestState::Pending { decision } => return Some(ApprovalView::Pending { decision: *decision }),
                RequestState::Refused { reason } => refused = Some(ApprovalView::Refused { reason: *reason }),
                RequestState::Stamped => {}
            }
        }
        refused
    }
}
