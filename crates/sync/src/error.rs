//! The sync client's errors. Each maps to a stable `ErrorCode` for the UI; messages say what to do and carry no
//! token, SQL or server internals.

use pactwise_domain::ErrorCode;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    #[error("the sync service cannot be reached ({0}); work goes on locally and sync retries by itself")]
    Unreachable(String),
    /// The address would send data unencrypted (plain `http://` to another computer), or a redirect tried to.
    #[error("{0}")]
    InsecureTransport(String),
    /// The TLS connection could not be trusted or set up.
    #[error("{0}")]
    Tls(String),
    #[error("the sync service did not accept this device's sign-in; sign in to sync again")]
    Unauthenticated,
    #[error("the sync service asked to slow down; sync retries by itself")]
    RateLimited { retry_after_s: Option<u64> },
    #[error("the sync service refused the request ({code}): {message}")]
    Rejected { code: String, message: String },
    #[error("the sync service failed (HTTP {status}); sync retries by itself")]
    Server { status: u16 },
    #[error("the sync service answered something this version does not understand: {0}")]
    Protocol(String),
    #[error("the downloaded file does not match its name (expected {expected}, got {actual}); it was discarded")]
    BlobCorrupt { expected: String, actual: String },
    #[error(
        "the sync service sent more than the {limit} bytes this file was announced with; the download was stopped \
         and discarded"
    )]
    BlobTooLarge { limit: u64 },
    #[error("a local file could not be written: {0}")]
    Io(String),
    #[error(transparent)]
    Replica(#[from] ReplicaError),
}

impl SyncError {
    pub fn code(&self) -> ErrorCode {
        match self {
            SyncError::Unreachable(_) | SyncError::Server { .. } | SyncError::Protocol(_) | SyncError::Tls(_) => {
                ErrorCode::SyncUnavailable
            }
            SyncError::InsecureTransport(_) => ErrorCode::InvalidInput,
            SyncError::Unauthenticated => ErrorCode::Unauthenticated,
            SyncError::RateLimited { .. } => ErrorCode::RateLimited,
            SyncError::Rejected { code, .. } => match code.as_str() {
                "forbidden" => ErrorCode::Forbidden,
                "not_found" => ErrorCode::NotFound,
                "resource_limit" => ErrorCode::ResourceLimit,
                "package_locked" => ErrorCode::PackageLocked,
                _ => ErrorCode::InvalidInput,
            },
            SyncError::BlobCorrupt { .. } | SyncError::BlobTooLarge { .. } => ErrorCode::FileCorrupt,
            SyncError::Io(_) => ErrorCode::Storage,
            SyncError::Replica(e) => e.code(),
        }
    }
}

/// The local replica (the desktop store) could not do what sync asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaError {
    #[error("the local store could not be read or written: {0}")]
    Storage(String),
    #[error("a synced change could not be applied: {0}")]
    Invalid(String),
}

impl ReplicaError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ReplicaError::Storage(_) => ErrorCode::Storage,
            ReplicaError::Invalid(_) => ErrorCode::InvalidInput,
        }
    }
}
