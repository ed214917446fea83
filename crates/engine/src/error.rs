use pactwise_domain::ErrorCode;
use pactwise_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("there is no graph named {0:?}; list the built-in graphs with `pactwise runs graphs`")]
    UnknownGraph(String),
    #[error("the graph definition is invalid: {0}")]
    InvalidGraph(String),
    #[error("the run's input must be a JSON object: {0}")]
    InvalidInput(String),
    #[error("stored run state is inconsistent: {0}")]
    Corrupt(String),
}

impl EngineError {
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::Store(e) => e.code(),
            EngineError::UnknownGraph(_) | EngineError::InvalidInput(_) => ErrorCode::InvalidInput,
            EngineError::InvalidGraph(_) | EngineError::Corrupt(_) => ErrorCode::Internal,
        }
    }
}
