//! The synced models, their stable wire names and their conflict rules, and the merge functions every replica uses.
//!
//! - Ordinary records (documents, contracts, vendors, settings) merge **field by field, last writer wins by HLC**.
//!   The merge is commutative, associative and idempotent, so replicas that saw the same changes in any order hold
//!   the same state. A contract's `vendor` link is the one field with its own order (`pactwise_rules::vendor_link`:
//!   a person's link before an automatic one, then the later stamp), equally commutative.
//! - Human corrections and audit entries are **append-only events**: each change is kept once (by its id), never
//!   replaced by a later writer; readers order them by HLC and the latest correction per item wins on the desktop.
//! - Workflow runs and their approval steps (`run`, `approval_step`) are published by the desktop the run lives on
//!   (its home) as last-writer-wins fields; other desktops keep a read-only copy. Only the home desktop writes them,
//!   so the rule never has to pick between two writers.
//! - Approval decisions are **server-checked**: a desktop's offline decision is only a request. The server checks the
//!   requester's eligibility in the organization, stamps the approver's identity on the first eligible request for a
//!   step and refuses every later one. Until then the desktop shows the request as pending.

use crate::hlc::Hlc;
use pactwise_rules::lww;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

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
    /// A workflow run's summary and timeline, published by the desktop the run lives on.
    Run,
    /// An approval step of a run, published by the run's desktop; decisions on it are `ApprovalDecision` requests.
    ApprovalStep,
    /// A request from another desktop to cancel a run; the run's home desktop carries it out.
    RunCancel,
    /// A member of the organization (email, display name, role, removed), written only by the service when an owner
    /// or admin changes the members; desktops never push one.
    Member,
    /// An approval step waited past its escalation time: written once per step, only by the service (its clock),
    /// never by a desktop. Escalation never decides.
    ApprovalEscalation,
    /// A contract review report a run assembled, published once by the run's desktop (append-only); its sign-off is
    /// the run's approval step, decided by a request the service stamps.
    ReviewReport,
    /// An RFP package of Prep Studio: its title, content, creation and publication as last-writer-wins fields
    /// (only the holder of the package's edit lease on the sync service writes it).
    PrepPackage,
    /// A package's edit lease was taken, taken over or released: written only by the service, never by a desktop.
    PrepLease,
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
    pub const ALL: [SyncedModel; 15] = [
        SyncedModel::Document,
        SyncedModel::Contract,
        SyncedModel::Vendor,
        SyncedModel::Setting,
        SyncedModel::ReviewCorrection,
        SyncedModel::AuditEntry,
        SyncedModel::ApprovalDecision,
        SyncedModel::Run,
        SyncedModel::ApprovalStep,
        SyncedModel::RunCancel,
        SyncedModel::Member,
        SyncedModel::ApprovalEscalation,
        SyncedModel::ReviewReport,
        SyncedModel::PrepPackage,
        SyncedModel::PrepLease,
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
            SyncedModel::Run => "run",
            SyncedModel::ApprovalStep => "approval_step",
            SyncedModel::RunCancel => "run_cancel",
            SyncedModel::Member => "member",
            SyncedModel::ApprovalEscalation => "approval_escalation",
            SyncedModel::ReviewReport => "review_report",
            SyncedModel::PrepPackage => "prep_package",
            SyncedModel::PrepLease => "prep_lease",
        }
    }

    pub fn rule(self) -> ConflictRule {
        match self {
            SyncedModel::Document
            | SyncedModel::Contract
            | SyncedModel::Vendor
            | SyncedModel::Setting
            | SyncedModel::Run
            | SyncedModel::ApprovalStep
            | SyncedModel::Member
            | SyncedModel::PrepPackage => ConflictRule::LastWriterWins,
            SyncedModel::ReviewCorrection
            | SyncedModel::AuditEntry
            | SyncedModel::RunCancel
            | SyncedModel::ApprovalEscalation
            | SyncedModel::ReviewReport
            | SyncedModel::PrepLease => ConflictRule::AppendOnly,
            SyncedModel::ApprovalDecision => ConflictRule::ServerChecked,
        }
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
    /// Merge a change's fields: each field is taken only if the change's HLC wins over the one that set the field
    /// (`pactwise_rules::lww::wins`). Returns whether anything changed.
    pub fn merge(&mut self, fields: &BTreeMap<String, Value>, hlc: Hlc) -> bool {
        let mut changed = false;
        for (name, value) in fields {
            if lww::wins(&hlc, self.fields.get(name).map(|(_, set_by)| set_by)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hlc(ms: u64, node: u8) -> Hlc {
        Hlc { wall_ms: ms, counter: 0, node: uuid::Uuid::from_bytes([node; 16]) }
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
