//! Client configuration: where the API is, timeouts, retries, breaker and ledger batching. A `model` field exists
//! only so that a configured identifier has somewhere to go: it is mapped to the one allowed model like any other.

use crate::breaker::BreakerPolicy;
use crate::ledger::LedgerPolicy;
use crate::retry::RetryPolicy;
use crate::wire::CacheTtl;
use std::time::Duration;

/// The real API.
pub const DEFAULT_ENDPOINT: &str = "https://api.anthropic.com";
/// Environment variable that points the client elsewhere (the loopback fake server in tests and demos).
pub const ENDPOINT_ENV: &str = "PACTWISE_MODEL_ENDPOINT";
/// Environment variable naming a model; read only to show that it cannot change the model.
pub const MODEL_ENV: &str = "PACTWISE_MODEL";

#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// Base URL; requests go to `{endpoint}/v1/messages`.
    pub endpoint: String,
    /// A model identifier from configuration; whatever it says, the one allowed model is used.
    pub model: Option<String>,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub retry: RetryPolicy,
    pub breaker: BreakerPolicy,
    pub ledger: LedgerPolicy,
    /// Output token limit when a request does not set one.
    pub default_max_tokens: u32,
    /// Lifetime of the cache markers on system prompts and document prefixes.
    pub cache_ttl: CacheTtl,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            endpoint: DEFAULT_ENDPOINT.to_string(),
            model: None,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
            breaker: BreakerPolicy::default(),
            ledger: LedgerPolicy::default(),
            default_max_tokens: 4096,
            cache_ttl: CacheTtl::FiveMinutes,
        }
    }
}

impl ModelConfig {
    /// Defaults with `PACTWISE_MODEL_ENDPOINT` (and `PACTWISE_MODEL`) from the environment.
    pub fn from_env() -> Self {
        Self::default().with_env(|name| std::env::var(name).ok())
    }

    /// Apply environment overrides read through `lookup`.
    pub fn with_env(mut self, lookup: impl Fn(&str) -> Option<String>) -> Self {
        if let Some(endpoint) = lookup(ENDPOINT_ENV).filter(|v| !v.trim().is_empty()) {
            self.endpoint = endpoint.trim().to_string();
        }
        if let Some(model) = lookup(MODEL_ENV).filter(|v| !v.trim().is_empty()) {
            self.model = Some(model);
        }
        self
    }

    /// Point at another base URL (the fake server).
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = endpoint.into();
        self
    }

    pub fn messages_url(&self) -> String {
        format!("{}/v1/messages", self.endpoint.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_comes_from_the_environment_when_set() {
        let config = ModelConfig::default().with_env(|name| match name {
            ENDPOINT_ENV => Some("http://127.0.0.1:4010/".to_string()),
            _ => None,
        });
        assert_eq!(config.messages_url(), "http://127.0.0.1:4010/v1/messages");
        assert_eq!(ModelConfig::default().messages_url(), "https://api.anthropic.com/v1/messages");
    }
}
