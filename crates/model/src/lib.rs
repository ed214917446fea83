//! The one Anthropic Messages API client: every model call in the product goes through [`ModelClient`]. It owns the
//! model policy (exactly one model, Claude Haiku 5.5, resolved again at send time), structured output (schemars
//! schema as a forced tool call, jsonschema validation, corrective re-asks), tool-use loops with a per-request
//! allowlist, refusal and truncation as typed errors, prompt-cache markers, retries with full-jitter backoff, a
//! circuit breaker, pricing, budgets and the batched usage ledger. The API key comes from the OS keychain.
//!
//! It imports only `pactwise-domain`: the store plugs in through [`UsageLedger`] and [`BudgetSource`]. With the
//! `fake` feature it also has a loopback fake Messages API server ([`fake`]) and the `pactwise-fake-model` binary.
//!
//! Wiring, once per process: `ModelClient::new(ModelConfig::from_env(), Arc::new(KeyringApiKeySource::default()),
//! store_ledger, store_budgets, Arc::new(SystemClock))`, shared as `Arc<ModelClient>`, with
//! `spawn_ledger_flusher` started and `flush_ledger` called before exit. Each call takes a [`CallContext`] built
//! from the session (organization, user, purpose). Errors map to stable codes with [`ModelError::code`]; callers fall
//! back to rules when [`ModelError::should_fall_back`] says so.

pub mod api_key;
pub mod breaker;
pub mod budget;
pub mod client;
pub mod config;
pub mod error;
#[cfg(feature = "fake")]
pub mod fake;
#[cfg(feature = "fake")]
pub mod fake_voyage;
pub mod ledger;
pub mod policy;
pub mod pricing;
pub mod prompt;
pub mod retry;
pub mod schema;
pub mod structured;
pub mod tool_loop;
pub mod voyage;
pub mod wire;

pub use api_key::{ApiKey, ApiKeyError, ApiKeySource, InMemoryApiKeySource, KeyStoreError, KeyringApiKeySource};
pub use breaker::{BreakerPolicy, BreakerStatus};
pub use budget::{BudgetSource, BudgetSourceError, InMemoryUsage};
pub use client::{CallContext, ModelClient, ModelStatus, Reply};
pub use config::{DEFAULT_ENDPOINT, EndpointRefused, ModelConfig};
pub use error::{ModelError, Unavailable};
pub use ledger::{LedgerError, LedgerPolicy, UsageLedger};
pub use policy::MODEL_ID;
pub use prompt::PromptDocument;
pub use retry::{Jitter, RecordingSleeper, RetryPolicy, SeededJitter, Sleeper};
pub use structured::{Structured, StructuredRequest, ToolInput};
pub use tool_loop::{
    ToolAllowlist, ToolCallRecord, ToolCallResult, ToolDefinition, ToolExecutor, ToolFailure, ToolLoopLimits,
    ToolLoopOutcome, ToolLoopRequest, truncate_result,
};
pub use voyage::{InputType, VoyageClient, VoyageConfig, VoyageError};

/// The HTTPS client of the model API and of Voyage (rustls, this computer's root certificates), or why none could
/// be built: without trusted root certificates there is none, and the callers stay offline instead of failing.
pub(crate) fn http_client(
    connect_timeout: std::time::Duration,
    request_timeout: std::time::Duration,
) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .timeout(request_timeout)
        .build()
        .map_err(|e| format!("the HTTP client could not be built: {e}"))
}
