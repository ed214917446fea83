use pactwise_domain::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("your role ({role}) does not allow this; ask an owner or admin of the organization")]
    Forbidden { role: pactwise_domain::Role },
    #[error("no valid session: the session is missing, expired or revoked; start Pactwise again to sign in")]
    Unauthenticated,
    #[error(
        "the database was written by a newer version of Pactwise (schema {found}, this version knows up to \
         {supported}); update Pactwise, or point it at another data directory with --data-dir"
    )]
    SchemaTooNew { found: u32, supported: u32 },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("file error on {path}: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    #[error("the store's worker thread has stopped")]
    WorkerGone,
    /// The action does not fit the current state (an approval already decided, a finished run).
    #[error("{0}")]
    Conflict(String),
    /// The input was refused (a missing reason, a choice that is not offered).
    #[error("{0}")]
    Invalid(String),
    #[error("four-eyes rule: you already decided another step of this run; someone else must decide this one")]
    FourEyes,
    #[error("four-eyes rule: you started this run; someone else must decide its approvals")]
    OwnRequest,
    #[error("{holder} is editing this package until {until}; it can be taken over after that")]
    Locked { holder: String, until: chrono::DateTime<chrono::Utc> },
    #[error(
        "{holder}'s edit lease on this package expired at {expired_at}; take it over to edit (Prep Studio's Take \
         over, or `pactwise prep lock ID --take-over`)"
    )]
    LeaseExpired { holder: String, expired_at: chrono::DateTime<chrono::Utc> },
    #[error("take the package's edit lock first (`pactwise prep lock ID`, or open it in Prep Studio)")]
    LeaseRequired,
    #[error("the package changed since it was read (version {expected}, now {found}); reload it and try again")]
    EditConflict { expected: u32, found: u32 },
    #[error("a published package is not edited; start a new package from it instead")]
    AlreadyPublished,
    #[error("the publish gate refused the package: {}", violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("; "))]
    PublishRefused { violations: Vec<crate::prep::GateViolation> },
}

impl StoreError {
    pub fn code(&self) -> ErrorCode {
        match self {
            StoreError::NotFound => ErrorCode::NotFound,
            StoreError::Forbidden { .. } => ErrorCode::Forbidden,
            StoreError::Unauthenticated => ErrorCode::Unauthenticated,
            StoreError::SchemaTooNew { .. } => ErrorCode::SchemaTooNew,
            StoreError::Sqlite(_) | StoreError::Io { .. } | StoreError::WorkerGone => ErrorCode::Storage,
            StoreError::Corrupt(_) => ErrorCode::Internal,
            StoreError::Conflict(_) => ErrorCode::Conflict,
            StoreError::Invalid(_) => ErrorCode::InvalidInput,
            StoreError::FourEyes | StoreError::OwnRequest => ErrorCode::Forbidden,
            StoreError::Locked { .. } | StoreError::LeaseExpired { .. } | StoreError::LeaseRequired => {
                ErrorCode::PackageLocked
            }
            StoreError::EditConflict { .. } | StoreError::AlreadyPublished => ErrorCode::EditConflict,
            StoreError::PublishRefused { .. } => ErrorCode::PublishBlocked,
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> StoreError {
        StoreError::Io { path: path.to_path_buf(), source }
    }
}
