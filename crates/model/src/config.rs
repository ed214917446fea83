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

    /// Checks where requests would go. The API key travels with every request, so the endpoint must be `https://`,
    /// or plain `http://` to this computer only (loopback: `localhost`, 127.0.0.0/8, `[::1]`; the fake server).
    /// Returns the endpoint's origin (scheme, host and port: no credentials, no path) when it is not the default,
    /// for the status line and the log; `None` for the default.
    pub fn check_endpoint(&self) -> Result<Option<String>, EndpointRefused> {
        let refused = |reason: &str| EndpointRefused { endpoint: self.endpoint.clone(), reason: reason.to_string() };
        let url = reqwest::Url::parse(self.endpoint.trim()).map_err(|e| refused(&format!("it is not a URL ({e})")))?;
        let loopback = match url.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => return Err(refused("it names no host")),
        };
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => return Err(refused("plain http:// is allowed only to this computer (127.0.0.1, localhost)")),
            other => return Err(refused(&format!("the scheme {other}:// is not https://"))),
        }
        let origin = url.origin().ascii_serialization();
        let default = reqwest::Url::parse(DEFAULT_ENDPOINT).map(|d| d.origin().ascii_serialization()).ok();
        let path = url.path().trim_end_matches('/');
        Ok((Some(&origin) != default.as_ref() || !path.is_empty()).then_some(origin))
    }
}

/// An endpoint the client will not send the API key to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the model endpoint {endpoint:?} (PACTWISE_MODEL_ENDPOINT) is refused: {reason}. The API key is sent with every \
     request, so use an https:// address, or http:// only to this computer; unset PACTWISE_MODEL_ENDPOINT to use \
     the default ({DEFAULT_ENDPOINT})"
)]
pub struct EndpointRefused {
    pub endpoint: String,
    pub reason: String,
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

    fn check(endpoint: &str) -> Result<Option<String>, EndpointRefused> {
        ModelConfig::default().with_endpoint(endpoint).check_endpoint()
    }

    #[test]
    fn the_key_goes_only_over_https_or_to_loopback() {
        assert_eq!(check(DEFAULT_ENDPOINT), Ok(None), "the default is not flagged");
        assert_eq!(check("https://api.anthropic.com/"), Ok(None));
        assert_eq!(check("https://proxy.example.com:8443").unwrap().as_deref(), Some("https://proxy.example.com:8443"));
        assert_eq!(check("http://127.0.0.1:4010").unwrap().as_deref(), Some("http://127.0.0.1:4010"));
        assert_eq!(check("http://127.3.4.5").unwrap().as_deref(), Some("http://127.3.4.5"));
        assert_eq!(check("http://localhost:9/").unwrap().as_deref(), Some("http://localhost:9"));
        assert_eq!(check("http://[::1]:4010").unwrap().as_deref(), Some("http://[::1]:4010"));
        // Credentials in the URL never reach the status line or the log.
        assert_eq!(
            check("https://user:secret@proxy.example.com").unwrap().as_deref(),
            Some("https://proxy.example.com")
        );
        for refused in [
            "http://api.anthropic.com",
            "http://10.0.0.5:8080",
            "http://localhost.evil.example",
            "http://0.0.0.0:4010",
            "ftp://127.0.0.1",
            "file:///etc/passwd",
            "api.anthropic.com",
            "",
        ] {
            let error = check(refused).expect_err(refused);
            assert!(error.to_string().contains("https://"), "{refused}: {error}");
        }
    }
}
