//! PactWise Source's rows as both backends store them (`crate::source_store` for SQLite, `crate::source_pg`), and
//! the one change to a tender they write in one transaction ([`SourceCommit`]).

use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, UserId};
use pactwise_source::audit::AuditEntry;
use uuid::Uuid;

/// A tender as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct TenderRow {
    pub id: Uuid,
    pub org: OrgId,
    pub version: u64,
    /// `awaiting_approval` (a second member must approve the publication) or `published`.
    pub status: String,
    pub title: String,
    pub requested_by: UserId,
    pub approved_by: Option<UserId>,
    pub published_hash: String,
    pub artifacts_json: String,
    /// The buyer's opening key (public half, hex).
    pub opening_key: String,
    /// The tender's deadline key (public half, hex; empty until published).
    pub deadline_key: String,
    /// The deadline key's secret half, sealed to the service's key-wrapping key (empty until published).
    pub deadline_key_wrapped: Vec<u8>,
    /// `pactwise_source::tender::Tender` as JSON.
    pub machine_json: String,
    pub created_at: DateTime<Utc>,
}

/// A vendor's account (vendors do not belong to an organization; they see only the tenders they joined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorAccount {
    pub id: Uuid,
    pub email: String,
    pub password_hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub token_hash: String,
    pub tender: Uuid,
    pub vendor_name: String,
    pub email: String,
    pub used: bool,
}

/// One sealed part of a submission: ciphertext only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeRow {
    pub tender: Uuid,
    pub account: Uuid,
    pub submission: u32,
    /// `technical` or `price`.
    pub kind: String,
    pub part: String,
    /// What the inspection found (pages, size), shown to the buyer before opening; never content.
    pub summary: String,
    pub sealed: Vec<u8>,
    pub created_at: DateTime<Utc>,
}

/// Everything one change to a tender writes, in one transaction: the tender's new row (its `version` must still be
/// `expected_version` in the database, else nothing is written: [`StorageError::Conflict`]), then the appended rows.
#[derive(Debug, Clone, Default)]
pub struct SourceCommit {
    pub expected_version: Option<u64>,
    pub tender: Option<TenderRow>,
    pub audit: Vec<AuditEntry>,
    pub envelopes: Vec<EnvelopeRow>,
    pub invitation: Option<Invitation>,
    /// An invitation accepted: its token hash and the vendor account that joined.
    pub accepted: Option<(String, Uuid, String)>,
    pub new_account: Option<VendorAccount>,
    pub question: Option<Question>,
    /// A question answered: its id and the answer.
    pub answer: Option<(Uuid, String, DateTime<Utc>)>,
    /// A score recorded (replacing the same evaluator's earlier score of that vendor and criterion).
    pub score: Option<StoredScore>,
    /// The package's OCDS tender release, kept from publication for the tender's record.
    pub tender_release: Option<String>,
    /// Finished uploads this submission sealed: deleted with their chunks in the same transaction.
    pub sealed_uploads: Vec<Uuid>,
}

/// A file a vendor sends in chunks (`crate::source_uploads`): what was declared, how much has arrived, and, once
/// finished, what the inspection found. Its chunks are stored sealed to the service's key-wrapping key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadRow {
    pub id: Uuid,
    pub tender: Uuid,
    pub account: Uuid,
    pub name: String,
    /// The size the vendor declared, in bytes.
    pub size: u64,
    /// The SHA-256 the vendor declared, lowercase hex.
    pub sha256: String,
    /// Bytes received so far (the next chunk must start here).
    pub received: u64,
    /// What the inspection found, once the upload finished and passed it.
    pub finished: Option<String>,
    pub created_at: DateTime<Utc>,
    /// After this (the service's clock) the upload is abandoned and deleted; each chunk moves it on.
    pub expires_at: DateTime<Utc>,
}

/// A vendor's question; the answer is published to every vendor of the tender without the asker's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub id: Uuid,
    pub tender: Uuid,
    pub account: Uuid,
    pub question: String,
    pub asked_at: DateTime<Utc>,
    pub answer: Option<String>,
    pub answered_at: Option<DateTime<Utc>>,
}

/// An evaluator's score, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredScore {
    pub tender: Uuid,
    pub account: Uuid,
    pub criterion_id: String,
    pub evaluator: UserId,
    pub points: u32,
    pub reason: String,
    pub scored_at: DateTime<Utc>,
}
