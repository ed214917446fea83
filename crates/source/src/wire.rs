//! The buyer routes' requests and answers (`/api/v1/source/tenders…` on the sync service), one home for the
//! service that answers them and the desktop that calls them. Serde only: the desktop makes its own views for
//! people (words, not these enum names).
//!
//! The routes, all with the member's device token (the organization is the token's):
//! - `POST /source/tenders` [`PublicationRequest`] → 201 [`TenderStatus`] (waits for a second member)
//! - `GET  /source/tenders` → `Vec<TenderStatus>` (the organization's tenders, newest first)
//! - `GET  /source/tenders/{id}` → [`TenderStatus`]
//! - `GET  /source/tenders/{id}/package` → the published package's artifacts (`pactwise_rules::prep::Artifacts`)
//! - `POST /source/tenders/{id}/approve` → [`TenderStatus`]
//! - `POST /source/tenders/{id}/invitations` [`InvitationRequest`] → 201 [`InvitationCreated`]
//! - `GET  /source/tenders/{id}/questions` → `Vec<PublishedQuestion>`
//! - `POST /source/tenders/{id}/questions/{question}/answer` [`AnswerRequest`] → [`PublishedQuestion`]
//! - `POST /source/tenders/{id}/extension` [`ExtensionRequest`] → [`TenderStatus`]
//! - `POST /source/tenders/{id}/open` [`OpenRequest`] → [`Opened`]
//! - `POST /source/tenders/{id}/scores` [`ScoreRequest`] → 204
//! - `POST /source/tenders/{id}/lock` → [`TenderStatus`]
//! - `GET  /source/tenders/{id}/evaluation` → `Vec<VendorResult>`
//! - `POST /source/tenders/{id}/award` [`AwardRequest`] → [`TenderStatus`]
//! - `GET  /source/tenders/{id}/ocds` → the OCDS release package (JSON)
//! - `GET  /source/tenders/{id}/audit` → [`AuditTrail`]

use chrono::{DateTime, Utc};
use pactwise_rules::prep::Artifacts;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::audit::AuditEntry;
use crate::envelope::{EnvelopeContext, EnvelopeKind, PublicKey};
use crate::tender::{Deadlines, Phase};

/// The path prefix of the buyer routes under `/api/v1`.
pub const TENDERS: &str = "/source/tenders";

/// The points a score may have: 0 to this.
pub const MAX_POINTS: u32 = 10;

/// The status of a tender that waits for a second member's approval.
pub const AWAITING_APPROVAL: &str = "awaiting_approval";
/// The status of a published tender.
pub const PUBLISHED: &str = "published";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublicationRequest {
    pub title: String,
    pub artifacts: Artifacts,
    /// The buyer's opening key (public half, hex), made on the desktop; its secret half stays there.
    pub opening_key: PublicKey,
    /// The package's OCDS tender release (Prep Studio's export), kept for the tender's public record.
    #[serde(default)]
    pub tender_release: Option<serde_json::Value>,
    /// The desktop that keeps the opening key (its name, as the member knows it): told to a member whose desktop
    /// does not have the key.
    #[serde(default)]
    pub opening_key_holder: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TenderStatus {
    pub id: Uuid,
    pub title: String,
    /// [`AWAITING_APPROVAL`] or [`PUBLISHED`].
    pub status: String,
    pub phase: Phase,
    pub deadlines: Deadlines,
    /// How many vendors were invited (links made).
    #[serde(default)]
    pub invited: usize,
    pub vendors_joined: usize,
    /// How many vendors have submitted (content stays sealed until opening).
    pub submissions: usize,
    pub published_hash: String,
    /// The buyer's opening key (public half): the desktop finds its secret half in the keychain by it.
    #[serde(default)]
    pub opening_key: Option<PublicKey>,
    /// The desktop that keeps the opening key's secret half.
    #[serde(default)]
    pub opening_key_holder: String,
    /// Who asked for the publication (their name or email).
    #[serde(default)]
    pub requested_by: String,
    /// Whether the caller asked for it (then a colleague must approve it).
    #[serde(default)]
    pub requested_by_you: bool,
    /// The service's time when it answered: its clock decides the deadlines, so the desktop shows "closed" by it.
    #[serde(default)]
    pub service_now: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InvitationRequest {
    pub vendor_name: String,
    pub email: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InvitationCreated {
    /// Shown once: the desktop shows and copies the link; the service keeps only its hash.
    pub token: String,
    /// The vendor page's path with the token ([`invitation_path`]); the desktop puts the service's address before it.
    pub link: String,
}

/// The vendor page's path for an invitation token: the page (`vendor-page/app.js`) reads the token from the part
/// after `#` (never sent to any server) and drops it from the address bar.
pub fn invitation_path(token: &str) -> String {
    format!("/source/invitation#{token}")
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenRequest {
    pub kind: EnvelopeKind,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenedPart {
    pub vendor: String,
    pub vendor_account: Uuid,
    pub submission: u32,
    pub part: String,
    /// What the service's inspection found (pages, size): every file here passed it before it was sealed.
    pub summary: String,
    /// Still sealed to the buyer's opening key (base64): only the buyer's desktop reads it.
    pub sealed_for_opening_key: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Opened {
    pub phase: Phase,
    pub parts: Vec<OpenedPart>,
}

/// The context an envelope is bound to, as the service sealed it and the desktop opens it: the tender, the
/// vendor's account, the kind, the submission number, the published version's hash and the part's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundContext {
    pub tender_id: String,
    pub vendor_id: String,
    pub kind: EnvelopeKind,
    pub submission: u32,
    pub published_hash: String,
    pub part: String,
}

impl BoundContext {
    /// The context of an opened part of `tender` (whose published hash is `published_hash`).
    pub fn of_part(tender: Uuid, published_hash: &str, kind: EnvelopeKind, part: &OpenedPart) -> Self {
        Self {
            tender_id: tender.to_string(),
            vendor_id: part.vendor_account.to_string(),
            kind,
            submission: part.submission,
            published_hash: published_hash.to_owned(),
            part: part.part.clone(),
        }
    }

    pub fn context(&self) -> EnvelopeContext<'_> {
        EnvelopeContext {
            tender_id: &self.tender_id,
            vendor_id: &self.vendor_id,
            kind: self.kind,
            submission: self.submission,
            published_hash: &self.published_hash,
            part: &self.part,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuditTrail {
    pub entries: Vec<AuditEntry>,
    /// Whether the chain checks out on the service ([`crate::audit::verify`]); the desktop checks again.
    pub verified: bool,
    pub problem: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PublishedQuestion {
    pub id: Uuid,
    pub question: String,
    pub answer: Option<String>,
    pub answered_at: Option<DateTime<Utc>>,
    /// Shown to the asker only: the answer is published to every vendor without the asker's name.
    pub mine: bool,
    /// Shown to the buyer only.
    pub asked_by: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerRequest {
    pub answer: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExtensionRequest {
    pub questions_close: DateTime<Utc>,
    pub submissions_close: DateTime<Utc>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScoreRequest {
    pub vendor_account: Uuid,
    pub criterion_id: String,
    pub points: u32,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VendorResult {
    pub vendor: String,
    pub vendor_account: Uuid,
    /// Out of 100, rounded to two decimals for people (the arithmetic is exact).
    pub technical_total: String,
    /// Per criterion: id, mean points, weighted share (rounded for people).
    pub criteria: Vec<(String, String, String)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AwardRequest {
    pub vendor_account: Uuid,
    pub reason: String,
    /// The awarded price total as the buyer's desktop computed it from the opened price envelope, for the public
    /// record; a decimal string and the tender's currency.
    #[serde(default)]
    pub price_total: Option<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invitation_path_is_the_one_the_vendor_page_reads() {
        // vendor-page/app.js: `location.hash.slice(1)` starting with `pwi_`.
        assert_eq!(invitation_path("pwi_abc"), "/source/invitation#pwi_abc");
    }

    #[test]
    fn a_status_from_an_older_service_reads_with_defaults() {
        let json = serde_json::json!({
            "id": Uuid::nil(), "title": "T", "status": "published", "phase": "open",
            "deadlines": {"questions_close": "2026-01-01T00:00:00Z", "submissions_close": "2026-01-02T00:00:00Z"},
            "vendors_joined": 1, "submissions": 0, "published_hash": "h"
        });
        let status: TenderStatus = serde_json::from_value(json).unwrap();
        assert_eq!((status.invited, status.opening_key.is_none()), (0, true));
    }
}
