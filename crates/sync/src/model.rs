//! The synced models, their stable wire names and their conflict rules, and the merge functions every replica uses.
//!
//! - Ordinary records (documents, contracts, vendors, settings) merge **field by field, last writer wins by HLC**.
//!   The merge is commutative, associative and idempotent, so replicas that saw the same changes in any order hold
//!   the same state.
//! - Human corrections and audit entries are **append-only events**: each change is kept once (by its id), never
//!   replaced by a later writer; readers order them by HLC and the latest correction per item wins on the desktop.
//! - Approval decisions are **server-checked**: a desktop's offline decision is only a request. The server checks the
//!   requester's eligibility in the organization, stamps the approver's identity on the first eligible request for a
//!   step and refuses every later one. Until then the desktop shows the request as pending.

use crate::hlc::Hlc;
use crate::wire::{ApprovalDecision, ApprovalOutcome, ChangeBody, RefusalReason};
use pactwise_domain::UserId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

/// Everything that syncs. The serde names are the stable wire names: renaming one is a protocol change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncedModel {
    Document,
    Contract,
    Vendor,
    Setting,
    ReviewCorrection,
    AuditEntry,
    ApprovalDecision,
}

/// How concurrent changes to one model are reconciled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictRule {
    /// Per field, the change with the greater HLC wins.
    LastWriterWins,
    /// Every change is an event kept once; nothing replaces it.
    AppendOnly,
    /// A request the server decides: the first eligible request per step is stamped, later ones refused.
    ServerChecked,
}

impl SyncedModel {
    pub const ALL: [SyncedModel; 7] = [
        SyncedModel::Document,
        SyncedModel::Contract,
        SyncedModel::Vendor,
        SyncedModel::Setting,
        SyncedModel::ReviewCorrection,
        SyncedModel::AuditEntry,
        SyncedModel::ApprovalDecision,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SyncedModel::Document => "document",
            SyncedModel::Contract => "contract",
            SyncedModel::Vendor => "vendor",
            SyncedModel::Setting => "setting",
            SyncedModel::ReviewCorrection => "review_correction",
            SyncedModel::AuditEntry => "audit_entry",
            SyncedModel::ApprovalDecision => "approval_decision",
        }
    }

    pub fn rule(self) -> ConflictRule {
        match self {
            SyncedModel::Document | SyncedModel::Contract | SyncedModel::Vendor | SyncedModel::Setting => {
                ConflictRule::LastWriterWins
            }
            SyncedModel::ReviewCorrection | SyncedModel::AuditEntry => ConflictRule::AppendOnly,
            SyncedModel::ApprovalDecision => ConflictRule::ServerChecked,
        }
    }

    /// Does this change body fit the model's rule? The server refuses a change that does not.
    pub fn accepts(self, body: &ChangeBody) -> bool {
        matches!(
            (self.rule(), body),
            (ConflictRule::LastWriterWins, ChangeBody::Fields { .. })
                | (ConflictRule::AppendOnly, ChangeBody::Event { .. })
                | (ConflictRule::ServerChecked, ChangeBody::ApprovalRequest { .. })
        )
    }
}

impl fmt::Display for SyncedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SyncedModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SyncedModel::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| format!("unknown synced model {s:?}"))
    }
}

/// One record's merged state: each field's value and the HLC of the change that set it. `null` is a cleared field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordState {
    pub fields: BTreeMap<String, (Value, Hlc)>,
}

impl RecordState {
    /// Merge a change's fields: each field is taken only if the change's HLC is greater than the one that set the
    /// field. Returns whether anything changed.
    pub fn merge(&mut self, fields: &BTreeMap<String, Value>, hlc: Hlc) -> bool {
        let mut changed = false;
        for (name, value) in fields {
            let take = match self.fields.get(name) {
                Some((_, existing)) => hlc > *existing,
                None => true,
            };
            if take {
                self.fields.insert(name.clone(), (value.clone(), hlc));
                changed = true;
            }
        }
        changed
    }

    /// The plain values, without their timestamps.
    pub fn values(&self) -> BTreeMap<String, Value> {
        self.fields.iter().map(|(k, (v, _))| (k.clone(), v.clone())).collect()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hlc(ms: u64, node: u8) -> Hlc {
        Hlc { wall_ms: ms, counter: 0, node: Uuid::from_bytes([node; 16]) }
    }

    fn fields(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn every_model_round_trips_through_its_stable_name() {
        for m in SyncedModel::ALL {
            assert_eq!(m.as_str().parse::<SyncedModel>().unwrap(), m);
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.as_str()));
        }
    }

    #[test]
    fn corrections_audit_and_approvals_are_never_last_writer_wins() {
        assert_eq!(SyncedModel::ReviewCorrection.rule(), ConflictRule::AppendOnly);
        assert_eq!(SyncedModel::AuditEntry.rule(), ConflictRule::AppendOnly);
        assert_eq!(SyncedModel::ApprovalDecision.rule(), ConflictRule::ServerChecked);
        let lww = ChangeBody::Fields { fields: fields(&[("a", json!(1))]) };
        assert!(!SyncedModel::ReviewCorrection.accepts(&lww));
        assert!(!SyncedModel::ApprovalDecision.accepts(&lww));
        assert!(SyncedModel::Contract.accepts(&lww));
    }

    #[test]
    fn the_later_writer_wins_per_field_whatever_the_order_of_arrival() {
        let a = (fields(&[("title", json!("A")), ("value", json!(10))]), hlc(100, 1));
        let b = (fields(&[("title", json!("B"))]), hlc(200, 2));
        let c = (fields(&[("value", json!(30)), ("title", json!("C-old"))]), hlc(50, 3));
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let all = [a, b, c];
        let mut results = Vec::new();
        for order in orders {
            let mut state = RecordState::default();
            for i in order {
                state.merge(&all[i].0, all[i].1);
            }
            // Applying everything again changes nothing (idempotent).
            for change in &all {
                assert!(!state.merge(&change.0, change.1));
            }
            results.push(state);
        }
        assert!(results.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(results[0].values(), fields(&[("title", json!("B")), ("value", json!(10))]));
    }
}
