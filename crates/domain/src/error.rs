//! Stable error codes. The UI and scripts branch on these, never on message text; renaming one is a breaking change.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The input was malformed or out of range (a bad argument, a bad id).
    InvalidInput,
    /// The thing does not exist, or belongs to another organization (the two are indistinguishable on purpose).
    NotFound,
    /// The session's role does not allow this action.
    Forbidden,
    /// No usable session: sign in again.
    Unauthenticated,
    /// A file could not be read (missing, permissions, a directory).
    FileUnreadable,
    /// A file has no bytes, or no pages.
    FileEmpty,
    /// A file is larger than the configured import limit.
    FileTooLarge,
    /// A file's type is not one Pactwise can take in.
    UnsupportedFileType,
    /// A file is password-protected and no (or a wrong) password was given.
    FileEncrypted,
    /// A file is damaged, truncated, or not what its name says.
    FileCorrupt,
    /// A document has more pages than the configured limit.
    TooManyPages,
    /// A file would expand past a safety limit (image pixels, DOCX uncompressed size).
    ResourceLimit,
    /// A required external library is not installed (e.g. libpdfium: run `make setup`).
    DependencyMissing,
    /// The data directory's database is newer than this program.
    SchemaTooNew,
    /// The data directory could not be opened or written.
    Storage,
    /// Something unexpected; the details are in the log.
    Internal,
    /// The model cannot be reached now: no API key, the key was rejected, the network is down or the circuit breaker
    /// is open. Everything that does not need the model keeps working.
    ModelUnavailable,
    /// An organization's or user's model budget for this period is spent; no request was sent.
    BudgetExhausted,
    /// The model API asked us to slow down and the retries ran out.
    RateLimited,
    /// The model declined to answer.
    ModelRefused,
    /// The model's reply was cut off at its token limit; nothing partial was kept.
    ModelTruncated,
    /// The model's reply did not match the required shape, even after corrective re-asks.
    ModelInvalidOutput,
    /// A tool-using conversation reached its iteration cap without a final answer.
    ModelToolLoopCap,
    /// A review cannot be finalized yet (critical items not confirmed), or exported before it is finalized.
    ReviewIncomplete,
    /// The sync service cannot be reached or failed; local work goes on and sync retries by itself.
    SyncUnavailable,
    /// Another person holds the edit lease of this RFP package; it can be taken over once it expires.
    PackageLocked,
    /// The store's publish gate refused an RFP package; the violations say which rules failed.
    PublishBlocked,
    /// The package changed since it was read (another save came first); reload and apply the change again.
    EditConflict,
    /// An approval named content that is no longer the artifact's current content.
    ApprovalOutdated,
    /// The thing is no longer in the state the action needs: an approval already decided, a run already finished.
    /// Not bad input: reload to see what is true now.
    Conflict,
    /// An export would replace a file that is already there; choose another name, or say to replace it.
    FileExists,
    /// A quote a person chose may not be the clause (the table of contents, a heading, a definition, another
    /// section); the message says why. Choose the clause's words, or keep the quote knowingly.
    QuoteNeedsCheck,
    /// The update feed could not be read (offline, the server failed, an answer that is not a feed, no build for this
    /// computer); nothing was installed. Try again later.
    UpdateUnavailable,
    /// An update's signature is missing, does not match its file, was not made with the app's update key, or names
    /// another version: it was not installed and nothing changed.
    UpdateRefused,
    /// A verified update could not be installed (the administrator password was not given, the package manager
    /// failed); the installed version is unchanged.
    UpdateNotInstalled,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::Unauthenticated => "unauthenticated",
            ErrorCode::FileUnreadable => "file_unreadable",
            ErrorCode::FileEmpty => "file_empty",
            ErrorCode::FileTooLarge => "file_too_large",
            ErrorCode::UnsupportedFileType => "unsupported_file_type",
            ErrorCode::FileEncrypted => "file_encrypted",
            ErrorCode::FileCorrupt => "file_corrupt",
            ErrorCode::TooManyPages => "too_many_pages",
            ErrorCode::ResourceLimit => "resource_limit",
            ErrorCode::DependencyMissing => "dependency_missing",
            ErrorCode::SchemaTooNew => "schema_too_new",
            ErrorCode::Storage => "storage",
            ErrorCode::Internal => "internal",
            ErrorCode::ModelUnavailable => "model_unavailable",
            ErrorCode::BudgetExhausted => "budget_exhausted",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::ModelRefused => "model_refused",
            ErrorCode::ModelTruncated => "model_truncated",
            ErrorCode::ModelInvalidOutput => "model_invalid_output",
            ErrorCode::ModelToolLoopCap => "model_tool_loop_cap",
            ErrorCode::ReviewIncomplete => "review_incomplete",
            ErrorCode::SyncUnavailable => "sync_unavailable",
            ErrorCode::PackageLocked => "package_locked",
            ErrorCode::PublishBlocked => "publish_blocked",
            ErrorCode::EditConflict => "edit_conflict",
            ErrorCode::ApprovalOutdated => "approval_outdated",
            ErrorCode::Conflict => "conflict",
            ErrorCode::FileExists => "file_exists",
            ErrorCode::QuoteNeedsCheck => "quote_needs_check",
            ErrorCode::UpdateUnavailable => "update_unavailable",
            ErrorCode::UpdateRefused => "update_refused",
            ErrorCode::UpdateNotInstalled => "update_not_installed",
        }
    }

    /// Is this the caller's fault (bad input or usage) rather than a failure? The CLI exits 2 for these.
    pub fn is_bad_input(self) -> bool {
        matches!(
            self,
            ErrorCode::InvalidInput
                | ErrorCode::NotFound
                | ErrorCode::FileUnreadable
                | ErrorCode::FileEmpty
                | ErrorCode::FileTooLarge
                | ErrorCode::UnsupportedFileType
                | ErrorCode::FileEncrypted
                | ErrorCode::FileCorrupt
                | ErrorCode::TooManyPages
                | ErrorCode::ResourceLimit
                | ErrorCode::ReviewIncomplete
                | ErrorCode::PublishBlocked
                | ErrorCode::ApprovalOutdated
                | ErrorCode::Conflict
                | ErrorCode::FileExists
                | ErrorCode::QuoteNeedsCheck
        )
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialize_as_their_stable_names() {
        for code in [
            ErrorCode::InvalidInput,
            ErrorCode::NotFound,
            ErrorCode::FileTooLarge,
            ErrorCode::SchemaTooNew,
            ErrorCode::ModelUnavailable,
            ErrorCode::BudgetExhausted,
            ErrorCode::RateLimited,
            ErrorCode::ModelRefused,
            ErrorCode::ModelTruncated,
            ErrorCode::ModelInvalidOutput,
            ErrorCode::ModelToolLoopCap,
            ErrorCode::ReviewIncomplete,
            ErrorCode::SyncUnavailable,
            ErrorCode::PackageLocked,
            ErrorCode::PublishBlocked,
            ErrorCode::EditConflict,
            ErrorCode::ApprovalOutdated,
            ErrorCode::Conflict,
            ErrorCode::FileExists,
            ErrorCode::UpdateUnavailable,
            ErrorCode::UpdateRefused,
            ErrorCode::UpdateNotInstalled,
        ] {
            assert_eq!(serde_json::to_string(&code).unwrap(), format!("\"{}\"", code.as_str()));
        }
    }
}
