//! What can go wrong with a model call, each case with a stable [`ErrorCode`] the UI branches on. None of these ever
//! carries a partial result, and none carries the API key.

use crate::api_key::KeyStoreError;
use chrono::{DateTime, Utc};
use pactwise_domain::ErrorCode;
use pactwise_domain::usage::{BudgetPeriod, BudgetSubject};
use std::time::Duration;

/// Why the model cannot be used right now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    #[error("no Anthropic API key is set; set one with `pactwise settings api-key` or in Settings")]
    NoApiKey,
    #[error("the API key was rejected ({0}); set a valid key with `pactwise settings api-key` or in Settings")]
    KeyRejected(String),
    #[error("{0}")]
    Keychain(KeyStoreError),
    #[error("the model API failed repeatedly; calls pause until {retry_at} (circuit breaker open)")]
    BreakerOpen { retry_at: DateTime<Utc> },
    #[error("the model API is overloaded; try again in a few minutes")]
    Overloaded,
    #[error("the model API answered with a server error (HTTP {status}); try again later")]
    ServerError { status: u16 },
    #[error("the model API could not be reached ({0}); check the network connection")]
    Network(String),
    /// No secure connection can be made from this computer (no trusted root certificates to check the API's TLS
    /// certificate with); the key is never sent without one.
    #[error(
        "this computer has no trusted root certificates, so the model API cannot be reached securely ({0}); install \
         the ca-certificates package"
    )]
    NoSecureConnection(String),
}

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the model is unavailable: {0}; everything that does not need the model keeps working")]
    ModelUnavailable(Unavailable),
    #[error(
        "the {} model budget of {} is spent ({} of {} micro-dollars); no request was sent. Raise the budget in \
         Settings or wait for the next period",
        period_name(*period), subject_name(subject), spent_micros, limit_micros
    )]
    BudgetExhausted { subject: BudgetSubject, period: BudgetPeriod, limit_micros: i64, spent_micros: i64 },
    #[error("the model API is rate limiting us{}; try again later", retry_after.map(|d| format!(" (retry after {}s)", d.as_secs())).unwrap_or_default())]
    RateLimited { retry_after: Option<Duration> },
    #[error("the model declined to answer{}", explanation.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Refused { explanation: Option<String> },
    #[error("the model's reply was cut off at {max_tokens} tokens; nothing partial was kept")]
    Truncated { max_tokens: u32 },
    #[error("the model's reply did not match the required shape after {attempts} attempts: {}", errors.join("; "))]
    SchemaInvalid { errors: Vec<String>, attempts: u32 },
    #[error("the tool conversation reached its cap of {iterations} model turns without a final answer")]
    ToolLoopCapReached { iterations: u32 },
    #[error("the model API rejected the request (HTTP {status}, {kind}): {message}")]
    Rejected { status: u16, kind: String, message: String },
    #[error("the model's reply could not be read: {0}")]
    Malformed(String),
    #[error("model budgets or usage could not be read: {0}")]
    Accounting(String),
    #[error("internal error in the model client: {0}")]
    Internal(String),
    /// `PACTWISE_MODEL_ENDPOINT` points where the API key must not go.
    #[error("{0}")]
    EndpointRefused(#[from] crate::config::EndpointRefused),
}

fn period_name(period: BudgetPeriod) -> &'static str {
    match period {
        BudgetPeriod::Daily => "daily",
        BudgetPeriod::Monthly => "monthly",
    }
}

fn subject_name(subject: &BudgetSubject) -> String {
    match subject {
        BudgetSubject::Organization => "the organization".to_string(),
        BudgetSubject::EachUser => "this user".to_string(),
        BudgetSubject::User(user) => format!("user {user}"),
    }
}

impl ModelError {
    pub fn code(&self) -> ErrorCode {
        match self {
            ModelError::ModelUnavailable(_) => ErrorCode::ModelUnavailable,
            ModelError::BudgetExhausted { .. } => ErrorCode::BudgetExhausted,
            ModelError::RateLimited { .. } => ErrorCode::RateLimited,
            ModelError::Refused { .. } => ErrorCode::ModelRefused,
            ModelError::Truncated { .. } => ErrorCode::ModelTruncated,
            ModelError::SchemaInvalid { .. } | ModelError::Malformed(_) => ErrorCode::ModelInvalidOutput,
            ModelError::ToolLoopCapReached { .. } => ErrorCode::ModelToolLoopCap,
            ModelError::Accounting(_) => ErrorCode::Storage,
            ModelError::Rejected { .. } | ModelError::Internal(_) => ErrorCode::Internal,
            ModelError::EndpointRefused(_) => ErrorCode::InvalidInput,
        }
    }

    /// A rate-limit error: the API's own 429, or one of our budgets refusing before any request.
    pub fn is_rate_limit(&self) -> bool {
        matches!(self, ModelError::RateLimited { .. } | ModelError::BudgetExhausted { .. })
    }

    /// Should the caller fall back to rules (the model cannot help now, through no fault of the input)?
    pub fn should_fall_back(&self) -> bool {
        matches!(
            self,
            ModelError::ModelUnavailable(_) | ModelError::BudgetExhausted { .. } | ModelError::RateLimited { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_maps_to_its_stable_code() {
        let cases = [
            (ModelError::ModelUnavailable(Unavailable::NoApiKey), "model_unavailable"),
            (
                ModelError::BudgetExhausted {
                    subject: BudgetSubject::Organization,
                    period: BudgetPeriod::Monthly,
                    limit_micros: 1,
                    spent_micros: 1,
                },
                "budget_exhausted",
            ),
            (ModelError::RateLimited { retry_after: None }, "rate_limited"),
            (ModelError::Refused { explanation: None }, "model_refused"),
            (ModelError::Truncated { max_tokens: 10 }, "model_truncated"),
            (ModelError::SchemaInvalid { errors: vec![], attempts: 3 }, "model_invalid_output"),
            (ModelError::ToolLoopCapReached { iterations: 4 }, "model_tool_loop_cap"),
        ];
        for (error, code) in cases {
            assert_eq!(error.code().as_str(), code, "{error}");
        }
    }

    #[test]
    fn the_no_key_message_says_what_to_do() {
        let message = ModelError::ModelUnavailable(Unavailable::NoApiKey).to_string();
        assert!(message.contains("pactwise settings api-key"), "{message}");
        assert!(message.contains("keeps working"), "{message}");
    }
}
