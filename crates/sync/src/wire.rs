//! The wire format of the sync service, version 1. Every route lives under [`API_PREFIX`]; a future incompatible
//! version gets a new prefix and the server keeps answering this one. Requests refuse unknown fields, so nothing
//! a client adds (an organization id, say) can be mistaken for something the server honours: the organization
//! always comes from the bearer token.
//!
//! Routes:
//! - `POST /api/v1/sign-in` [`SignInRequest`] → [`SignInResponse`] (no token needed)
//! - `POST /api/v1/sign-out` → 204 (revokes the calling device's token)
//! - `GET  /api/v1/session` → [`SessionInfo`]
//! - `POST /api/v1/changes` [`PushRequest`] → [`PushResponse`]
//! - `GET  /api/v1/changes?since=N&limit=M` → [`PullResponse`]
//! - `GET  /api/v1/changes/wait?since=N&wait_s=S` → [`WaitResponse`]: the push channel, a long poll that answers
//!   as soon as the organization's log holds a change past `since`, or after `S` seconds (at most
//!   [`MAX_WAIT_S`]) with nothing new; a device may hold [`MAX_WAITS_PER_DEVICE`] at once
//! - `PUT  /api/v1/blobs/{sha256}` raw bytes → 201 (or 200 when already stored); the bytes must hash to the name
//! - `GET|HEAD /api/v1/blobs/{sha256}` → the bytes; `Range: bytes=N-` answers 206 for resuming
//!
//! Errors are `{"error": {"code": "...", "message": "..."}}` ([`ErrorBody`]) with a stable code.

use crate::hlc::Hlc;
use crate::model::{ConflictRule, SyncedModel};
use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, Role, UserId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use uuid::Uuid;

pub const API_PREFIX: &str = "/api/v1";
/// The most changes one push may carry.
pub const MAX_PUSH_CHANGES: usize = 1_000;
/// The largest page a pull may ask for.
pub const MAX_PULL_LIMIT: u32 = 1_000;
/// The most bytes one change body may take when serialized.
pub const MAX_CHANGE_BYTES: usize = 64 * 1024;
/// The longest record id.
pub const MAX_RECORD_ID_LEN: usize = 200;
/// The largest file (blob) the service stores and a client downloads.
pub const MAX_BLOB_BYTES: u64 = 64 * 1024 * 1024;
/// The longest a wait for changes is held open, in seconds: under the idle timeouts of common proxies (30 s and up).
/// A longer `wait_s` is shortened to this.
pub const MAX_WAIT_S: u64 = 25;
/// How many waits for changes one device may hold open at once; one more is refused (429) until one ends.
pub const MAX_WAITS_PER_DEVICE: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignInRequest {
    /// The organization's short name (slug), as given by its administrator.
    pub org: String,
    pub email: String,
    pub password: String,
    pub device_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInResponse {
    /// The device token: shown once, stored by the server only as a hash. Send it as `Authorization: Bearer`.
    pub token: String,
    pub device_id: Uuid,
    pub user_id: UserId,
    pub org_id: OrgId,
    pub role: Role,
    pub expires_at: DateTime<Utc>,
}

/// Who the token belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub org_id: OrgId,
    pub org_name: String,
    pub user_id: UserId,
    pub role: Role,
    pub device_id: Uuid,
}

/// One local change, as the client's outbox holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    /// Chosen by the client when it writes the change; the server stores each id once per organization.
    pub id: Uuid,
    pub model: SyncedModel,
    pub record_id: String,
    pub hlc: Hlc,
    pub body: ChangeBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ChangeBody {
    /// Ordinary fields, merged last-writer-wins per field.
    Fields { fields: BTreeMap<String, Value> },
    /// An append-only event (a correction, an audit entry).
    Event { event: Value },
    /// An offline approval decision: a request until the server stamps it. `record_id` is the approval step;
    /// `eligible_roles` are the step's (the server decides with `pactwise_rules::approval`; a step keeps the roles
    /// its first request named). Requests stored before this field existed read as naming none.
    ApprovalRequest {
        decision: ApprovalDecision,
        note: Option<String>,
        #[serde(default)]
        eligible_roles: Vec<Role>,
        /// The option picked (a procurement approval picks a vendor from the step's choices).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choice: Option<String>,
        /// The decider's display name as their desktop knows it: a hint for showing the decision, never authority
        /// (the approver is the token's user).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decider_name: Option<String>,
    },
}

impl ChangeBody {
    /// Does this body fit the model's conflict rule? The server refuses a change whose body does not.
    pub fn fits(&self, model: SyncedModel) -> bool {
        matches!(
            (model.rule(), self),
            (ConflictRule::LastWriterWins, ChangeBody::Fields { .. })
                | (ConflictRule::AppendOnly, ChangeBody::Event { .. })
                | (ConflictRule::ServerChecked, ChangeBody::ApprovalRequest { .. })
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    Approve,
    Reject,
}

impl ApprovalDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::Approve => "approve",
            ApprovalDecision::Reject => "reject",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushRequest {
    /// The same batch sent again (after a timeout, a crash) carries the same key and gets the first answer back.
    pub idempotency_key: Uuid,
    pub changes: Vec<Change>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushResponse {
    /// One per change, in the request's order.
    pub results: Vec<PushResult>,
    /// True when the key had been seen: these are the first push's results and nothing was stored again.
    pub replayed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushResult {
    pub change_id: Uuid,
    /// The change's place in the organization's log (an earlier place if the id had been stored before); 0 when
    /// the change was refused and not stored.
    pub seq: u64,
    /// Why the service refused to store this change (the author's role may not make it, say). The change is not in
    /// the log, so no other device receives it; the desktop keeps it with the reason and shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<ErrorDetail>,
}

impl PushResult {
    pub fn stored(change_id: Uuid, seq: u64) -> Self {
        Self { change_id, seq, refused: None }
    }
}

/// A change as stored by the server: the client's change plus what the server stamped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerChange {
    pub seq: u64,
    pub change: Change,
    /// The user whose token pushed it (never taken from the body).
    pub author: UserId,
    pub device_id: Uuid,
    pub received_at: DateTime<Utc>,
    /// For approval requests: the server's decision on it.
    pub outcome: Option<ApprovalOutcome>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ApprovalOutcome {
    /// This request is the step's decision; the approver is the requester, as checked by the server.
    Stamped {
        decision: ApprovalDecision,
        approver: UserId,
        decided_at: DateTime<Utc>,
        /// The approver's role in the organization when the service stamped the decision. Outcomes stored before
        /// this field existed read as none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approver_role: Option<Role>,
    },
    Refused {
        reason: RefusalReason,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalReason {
    /// Another request for the step was stamped first.
    AlreadyDecided,
    /// The requester's role is not one of the step's eligible roles.
    NotEligible,
    /// Four-eyes: the requester started the run, or decided another step of it.
    FourEyes,
    /// The step is closed (its run was cancelled or ended) and takes no decision.
    StepClosed,
}

impl RefusalReason {
    /// What the deciding person is told, in their words.
    pub fn message(self) -> &'static str {
        match self {
            RefusalReason::AlreadyDecided => "someone else decided this step first",
            RefusalReason::NotEligible => "your role may not decide this step",
            RefusalReason::FourEyes => {
                "four-eyes: the person who started the run, or who decided another of its steps, may not decide this one"
            }
            RefusalReason::StepClosed => "the run was cancelled or has ended; this step takes no decision any more",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PullResponse {
    /// Changes with `seq > since`, in order.
    pub changes: Vec<ServerChange>,
    /// Ask with `since = next_cursor` for the next page.
    pub next_cursor: u64,
    pub has_more: bool,
}

/// The answer to a wait for changes (`GET /api/v1/changes/wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitResponse {
    /// True when the organization's log holds changes past the `since` the client sent: pull them. False when the
    /// wait ended with nothing new (its time was up, or the service is shutting down): wait again.
    pub changed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// A stable snake_case code (`pactwise_domain::ErrorCode` names).
    pub code: String,
    /// What happened and what to do; never internals.
    pub message: String,
}

/// Lowercase hex SHA-256 of some bytes: the name of a blob.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

/// Is this a well-formed blob name (64 lowercase hex characters)?
pub fn is_blob_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Change {
    /// Is the change well-formed for its model (body kind, id length, size)? The server checks this before storing.
    pub fn check(&self) -> Result<(), String> {
        if !self.body.fits(self.model) {
            return Err(format!("a {} change cannot carry this kind of body", self.model));
        }
        if let ChangeBody::ApprovalRequest { eligible_roles, .. } = &self.body {
            pactwise_rules::approval::check_eligible_roles(eligible_roles)
                .map_err(|m| format!("an approval request must name its step's eligible roles: {m}"))?;
        }
        if self.record_id.is_empty() || self.record_id.len() > MAX_RECORD_ID_LEN {
            return Err(format!("record_id must be 1 to {MAX_RECORD_ID_LEN} bytes"));
        }
        if let ChangeBody::Fields { fields } = &self.body
            && fields.is_empty()
        {
            return Err("a fields change must set at least one field".to_string());
        }
        let size = serde_json::to_vec(&self.body).map(|b| b.len()).unwrap_or(usize::MAX);
        if size > MAX_CHANGE_BYTES {
            return Err(format!("a change body may take at most {MAX_CHANGE_BYTES} bytes"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_push_with_an_unknown_field_is_refused_so_no_organization_can_be_smuggled_in() {
        let body = json!({"idempotency_key": Uuid::nil(), "changes": [], "org_id": Uuid::nil()});
        assert!(serde_json::from_value::<PushRequest>(body).is_err());
    }

    #[test]
    fn a_change_round_trips_with_its_stable_names() {
        let change = Change {
            id: Uuid::nil(),
            model: SyncedModel::ApprovalDecision,
            record_id: "step-1".into(),
            hlc: Hlc { wall_ms: 1, counter: 2, node: Uuid::nil() },
            body: ChangeBody::ApprovalRequest {
                decision: ApprovalDecision::Approve,
                note: None,
                eligible_roles: vec![Role::Owner, Role::Reviewer],
                choice: None,
                decider_name: None,
            },
        };
        let text = serde_json::to_value(&change).unwrap();
        assert_eq!(text["model"], "approval_decision");
        assert_eq!(text["body"]["kind"], "approval_request");
        assert_eq!(serde_json::from_value::<Change>(text).unwrap(), change);
        assert!(change.check().is_ok());
    }

    #[test]
    fn an_approval_request_names_valid_eligible_roles_and_old_stored_requests_still_read() {
        let mut change = Change {
            id: Uuid::nil(),
            model: SyncedModel::ApprovalDecision,
            record_id: "step-1".into(),
            hlc: Hlc { wall_ms: 1, counter: 2, node: Uuid::nil() },
            body: ChangeBody::ApprovalRequest {
                decision: ApprovalDecision::Approve,
                note: None,
                eligible_roles: vec![],
                choice: None,
                decider_name: None,
            },
        };
        assert!(change.check().unwrap_err().contains("eligible roles"));
        change.body = ChangeBody::ApprovalRequest {
            decision: ApprovalDecision::Approve,
            note: None,
            eligible_roles: vec![Role::Viewer],
            choice: None,
            decider_name: None,
        };
        assert!(change.check().is_err(), "viewers never approve");
        let old = json!({"id": Uuid::nil(), "model": "approval_decision", "record_id": "s",
            "hlc": {"wall_ms": 1, "counter": 0, "node": Uuid::nil()},
            "body": {"kind": "approval_request", "decision": "approve", "note": null}});
        let read: Change = serde_json::from_value(old).unwrap();
        assert!(
            matches!(read.body, ChangeBody::ApprovalRequest { ref eligible_roles, .. } if eligible_roles.is_empty())
        );
    }

    #[test]
    fn bodies_fit_only_their_model_rule() {
        let lww = ChangeBody::Fields { fields: [("a".to_string(), json!(1))].into() };
        assert!(!lww.fits(SyncedModel::ReviewCorrection));
        assert!(!lww.fits(SyncedModel::ApprovalDecision));
        assert!(lww.fits(SyncedModel::Contract));
    }

    #[test]
    fn blob_names_are_lowercase_sha256_hex() {
        assert!(is_blob_name(&sha256_hex(b"abc")));
        assert!(!is_blob_name("ABC"));
        assert!(!is_blob_name(&sha256_hex(b"abc").to_uppercase()));
    }
}
