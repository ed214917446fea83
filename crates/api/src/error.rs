use pactwise_domain::ErrorCode;
use pactwise_store::StoreError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// An error as a person or a script sees it: a stable code to branch on and a message that says what happened and
/// what to do. Internals (SQL, stack traces) never appear in the message; they go to the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError { code, message: message.into() }
    }

    pub(crate) fn from_store_at(e: StoreError, data_dir: &Path) -> ApiError {
        match e {
            StoreError::Io { path, source } => ApiError::new(
                ErrorCode::Storage,
                format!(
                    "cannot use the data directory {} ({}: {source}); check its permissions or choose another with --data-dir",
                    data_dir.display(),
                    path.display()
                ),
            ),
            other => other.into(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        let code = e.code();
        let message = match &e {
            StoreError::NotFound => "no such item in your organization (it may have been deleted)".to_string(),
            StoreError::Forbidden { .. }
            | StoreError::Unauthenticated
            | StoreError::SchemaTooNew { .. }
            | StoreError::Conflict(_)
            | StoreError::Invalid(_)
            | StoreError::FourEyes
            | StoreError::OwnRequest
            | StoreError::Locked { .. }
            | StoreError::LeaseExpired { .. }
            | StoreError::LeaseRequired
            | StoreError::EditConflict { .. }
            | StoreError::AlreadyPublished
            | StoreError::PublishRefused { .. } => e.to_string(),
            StoreError::Sqlite(_) | StoreError::Corrupt(_) | StoreError::WorkerGone | StoreError::Io { .. } => {
                tracing::error!(error = %e, "store failure");
                "the local database could not complete this; nothing was changed. Details are in the log.".to_string()
            }
        };
        ApiError { code, message }
    }
}
