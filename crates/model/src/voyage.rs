//! The optional Voyage embedding provider: `voyage-law-2`, the legal-domain model the seed grounds retrieval in, for
//! organizations that are online and have set a Voyage key. The local model (`pactwise-embed`) stays the default;
//! this client is used only when a person chose it in Settings.
//!
//! It shares the Anthropic client's accounting: every request (failed ones too) is a priced `UsageRecord` in the
//! same usage ledger, and the same budgets are checked before each request, so spending on embeddings counts against
//! the organization's model budget. It has its own circuit breaker and retry policy (the two APIs fail apart), its
//! own key in the OS keychain (entry [`VOYAGE_KEYRING_USER`]), and the same endpoint rule as the Messages client:
//! the key travels only over `https://`, or plain `http://` to this computer (the fake server in tests).
//!
//! A reply is checked before use: one vector per text, in the request's order, all of [`VOYAGE_DIMENSIONS`] finite
//! numbers; anything else is [`VoyageError::Malformed`] and nothing is kept.

use crate::api_key::{ApiKey, ApiKeySource, KeyStoreError};
use crate::breaker::{BreakerPolicy, CircuitBreaker};
use crate::budget::{self, BudgetSource};
use crate::client::{CallContext, ModelClient};
use crate::config::ModelConfig;
use crate::ledger::LedgerWriter;
use crate::retry::{Jitter, RetryPolicy, SeededJitter, Sleeper, TokioSleeper, is_retryable_status, parse_retry_after};
use chrono::{DateTime, Utc};
use pactwise_domain::usage::{BudgetPeriod, BudgetSubject, TokenUsage, UsageOutcome, UsageRecord};
use pactwise_domain::{Clock, ErrorCode};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

/// The model asked for (the only one this client sends).
pub const VOYAGE_MODEL: &str = "voyage-law-2";
/// Length of its vectors.
pub const VOYAGE_DIMENSIONS: usize = 1024;
/// The real API.
pub const DEFAULT_VOYAGE_ENDPOINT: &str = "https://api.voyageai.com";
/// Environment variable that points the client elsewhere (the loopback fake server in tests).
pub const VOYAGE_ENDPOINT_ENV: &str = "PACTWISE_VOYAGE_ENDPOINT";
/// The keychain entry (user) of the Voyage key, beside the Anthropic key under the same service.
pub const VOYAGE_KEYRING_USER: &str = "voyage-api-key";
/// voyage-law-2's price: $0.12 per million tokens, in micro-dollars per million tokens.
pub const VOYAGE_LAW_2_MICROS_PER_MTOK: u64 = 120_000;
/// Texts in one request (the API's list limit for this model).
pub const MAX_TEXTS_PER_REQUEST: usize = 128;
/// Characters in one request: the API allows 120,000 tokens a request for this model; at ~4 characters a token
/// (legal English is close to that) 320,000 characters stays well under it.
pub const MAX_CHARS_PER_REQUEST: usize = 320_000;

/// What a text is for: the API embeds a query and a document differently (it prefixes an instruction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    Query,
    Document,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VoyageConfig {
    /// Base URL; requests go to `{endpoint}/v1/embeddings`.
    pub endpoint: String,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub retry: RetryPolicy,
    pub breaker: BreakerPolicy,
}

impl Default for VoyageConfig {
    fn default() -> Self {
        Self {
            endpoint: DEFAULT_VOYAGE_ENDPOINT.to_string(),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            breaker: BreakerPolicy::default(),
        }
    }
}

impl VoyageConfig {
    /// Defaults with `PACTWISE_VOYAGE_ENDPOINT` from the environment.
    pub fn from_env() -> Self {
        let mut config = Self::default();
        if let Some(endpoint) = std::env::var(VOYAGE_ENDPOINT_ENV).ok().filter(|v| !v.trim().is_empty()) {
            config.endpoint = endpoint.trim().to_string();
        }
        config
    }

    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = endpoint.into();
        self
    }

    pub fn embeddings_url(&self) -> String {
        format!("{}/v1/embeddings", self.endpoint.trim_end_matches('/'))
    }

    /// The Messages client's rule (one home: [`ModelConfig::check_endpoint`]), applied to this endpoint: `https://`,
    /// or `http://` to loopback only.
    fn check_endpoint(&self) -> Result<(), VoyageError> {
        ModelConfig::default()
            .with_endpoint(self.endpoint.clone())
            .check_endpoint()
            .map(|_| ())
            .map_err(|e| VoyageError::EndpointRefused { endpoint: e.endpoint, reason: e.reason })
    }
}

/// What can go wrong with an embedding request, each with a stable code. Never carries the key or any text sent.
#[derive(Debug, thiserror::Error)]
pub enum VoyageError {
    #[error(
        "no Voyage API key is set; set one in Settings (or `pactwise settings voyage-key`), or search with the local model"
    )]
    NoApiKey,
    #[error("the Voyage API key was rejected; set a valid key in Settings (or `pactwise settings voyage-key`)")]
    KeyRejected,
    #[error("{0}")]
    Keychain(KeyStoreError),
    #[error(
        "the {} model budget of {} is spent ({} of {} micro-dollars); no embedding request was sent. Raise the budget \
         in Settings or wait for the next period",
        match period { BudgetPeriod::Daily => "daily", BudgetPeriod::Monthly => "monthly" },
        match subject { BudgetSubject::Organization => "the organization".to_string(), BudgetSubject::EachUser => "this user".to_string(), BudgetSubject::User(u) => format!("user {u}") },
        spent_micros, limit_micros
    )]
    BudgetExhausted { subject: BudgetSubject, period: BudgetPeriod, limit_micros: i64, spent_micros: i64 },
    #[error("the Voyage API is rate limiting us; try again later")]
    RateLimited,
    #[error("the Voyage API cannot be used right now ({0}); search uses the local model meanwhile")]
    Unavailable(String),
    #[error("the Voyage API failed repeatedly; requests pause until {retry_at} (circuit breaker open)")]
    BreakerOpen { retry_at: DateTime<Utc> },
    #[error("the Voyage API refused the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    #[error("the Voyage API's reply could not be used: {0}")]
    Malformed(String),
    #[error("model budgets or usage could not be read: {0}")]
    Accounting(String),
    #[error(
        "the Voyage endpoint {endpoint:?} ({VOYAGE_ENDPOINT_ENV}) is refused: {reason}. The key is sent with every \
         request, so use an https:// address, or http:// only to this computer; unset {VOYAGE_ENDPOINT_ENV} to use \
         the default ({DEFAULT_VOYAGE_ENDPOINT})"
    )]
    EndpointRefused { endpoint: String, reason: String },
    #[error("internal error in the Voyage client: {0}")]
    Internal(String),
}

impl VoyageError {
    pub fn code(&self) -> ErrorCode {
        match self {
            VoyageError::NoApiKey
            | VoyageError::KeyRejected
            | VoyageError::Keychain(_)
            | VoyageError::Unavailable(_)
            | VoyageError::BreakerOpen { .. } => ErrorCode::ModelUnavailable,
            VoyageError::BudgetExhausted { .. } => ErrorCode::BudgetExhausted,
            VoyageError::RateLimited => ErrorCode::RateLimited,
            VoyageError::Malformed(_) => ErrorCode::ModelInvalidOutput,
            VoyageError::Accounting(_) => ErrorCode::Storage,
            VoyageError::EndpointRefused { .. } => ErrorCode::InvalidInput,
            VoyageError::Rejected { .. } | VoyageError::Internal(_) => ErrorCode::Internal,
        }
    }
}

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    input: &'a [&'a str],
    model: &'static str,
    input_type: InputType,
    /// Over-long texts are cut by the API rather than refused (our passages are ~500 characters).
    truncation: bool,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingRow>,
    #[serde(default)]
    model: Option<String>,
    usage: EmbeddingsUsage,
}

#[derive(Deserialize)]
struct EmbeddingRow {
    embedding: Vec<f32>,
    index: usize,
}

#[derive(Deserialize)]
struct EmbeddingsUsage {
    total_tokens: u64,
}

/// One failed attempt.
enum Failure {
    Status { status: u16, message: String, retry_after: Option<Duration>, retryable: bool },
    Transport(String),
    Malformed(String),
}

impl Failure {
    fn outcome(&self) -> UsageOutcome {
        match self {
            Failure::Status { status: 429, .. } => UsageOutcome::RateLimited,
            Failure::Status { status, .. } if *status >= 500 => UsageOutcome::ServerError,
            Failure::Status { .. } => UsageOutcome::Rejected,
            Failure::Transport(_) => UsageOutcome::TransportError,
            Failure::Malformed(_) => UsageOutcome::ServerError,
        }
    }

    fn retryable(&self) -> bool {
        match self {
            Failure::Status { retryable, .. } => *retryable,
            Failure::Transport(_) => true,
            // The same request gets the same wrong answer.
            Failure::Malformed(_) => false,
        }
    }

    fn into_error(self) -> VoyageError {
        match self {
            Failure::Status { status: 429, .. } => VoyageError::RateLimited,
            Failure::Status { status: 401 | 403, .. } => VoyageError::KeyRejected,
            Failure::Status { status, retryable: true, .. } => {
                VoyageError::Unavailable(format!("the service answered HTTP {status}"))
            }
            Failure::Status { status, message, .. } => VoyageError::Rejected { status, message },
            Failure::Transport(message) => VoyageError::Unavailable(message),
            Failure::Malformed(message) => VoyageError::Malformed(message),
        }
    }
}

/// The Voyage embeddings client. Cheap to share behind an `Arc`.
pub struct VoyageClient {
    config: VoyageConfig,
    http: reqwest::Client,
    keys: Arc<dyn ApiKeySource>,
    ledger: Arc<LedgerWriter>,
    budgets: Arc<dyn BudgetSource>,
    clock: Arc<dyn Clock>,
    sleeper: Arc<dyn Sleeper>,
    jitter: Arc<dyn Jitter>,
    breaker: CircuitBreaker,
}

impl std::fmt::Debug for VoyageClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoyageClient").field("endpoint", &self.config.endpoint).finish_non_exhaustive()
    }
}

impl VoyageClient {
    /// A client that records into `accounts`' usage ledger and checks its budgets (the process's one
    /// [`ModelClient`]), with its key from `keys` (the keychain entry [`VOYAGE_KEYRING_USER`] in the app).
    pub fn new(config: VoyageConfig, keys: Arc<dyn ApiKeySource>, accounts: &ModelClient) -> Result<Self, VoyageError> {
        config.check_endpoint()?;
        let http = crate::http_client(config.connect_timeout, config.request_timeout).map_err(VoyageError::Internal)?;
        let (ledger, budgets, clock) = accounts.accounts();
        let breaker = CircuitBreaker::new(config.breaker);
        Ok(Self {
            config,
            http,
            keys,
            ledger,
            budgets,
            clock,
            sleeper: Arc::new(TokioSleeper),
            jitter: Arc::new(SeededJitter::from_os()),
            breaker,
        })
    }

    /// Wait between attempts with this sleeper (tests: one that records and returns at once).
    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    /// Is a key set (read from the keychain, off the async threads)?
    pub async fn has_key(&self) -> Result<bool, VoyageError> {
        match self.api_key().await {
            Ok(_) => Ok(true),
            Err(VoyageError::NoApiKey) => Ok(false),
            Err(other) => Err(other),
        }
    }

    async fn api_key(&self) -> Result<ApiKey, VoyageError> {
        let keys = self.keys.clone();
        let read = tokio::task::spawn_blocking(move || keys.get())
            .await
            .map_err(|e| VoyageError::Internal(format!("the keychain read did not finish: {e}")))?;
        match read {
            Ok(Some(key)) => Ok(key),
            Ok(None) => Err(VoyageError::NoApiKey),
            Err(error) => Err(VoyageError::Keychain(error)),
        }
    }

    /// Unit-length vectors of `texts`, in their order, as many requests as the API's limits need (each priced in
    /// the ledger and checked against the budgets before it is sent). All or nothing: a failed request fails the
    /// call and no vector is returned.
    pub async fn embed(
        &self,
        ctx: &CallContext,
        texts: &[&str],
        input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, VoyageError> {
        let key = self.api_key().await?;
        let mut header =
            HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| VoyageError::KeyRejected)?;
        header.set_sensitive(true);
        let mut out = Vec::with_capacity(texts.len());
        for batch in batches(texts) {
            out.extend(self.embed_batch(ctx, &header, batch, input_type).await?);
        }
        Ok(out)
    }

    async fn embed_batch(
        &self,
        ctx: &CallContext,
        key: &HeaderValue,
        texts: &[&str],
        input_type: InputType,
    ) -> Result<Vec<Vec<f32>>, VoyageError> {
        let body =
            serde_json::to_vec(&EmbeddingsRequest { input: texts, model: VOYAGE_MODEL, input_type, truncation: true })
                .map_err(|e| VoyageError::Internal(format!("request encoding: {e}")))?;
        let url = self.config.embeddings_url();
        let retry = self.config.retry;
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            self.check_budgets(ctx)?;
            let permit =
                self.breaker.admit(self.clock.now()).map_err(|retry_at| VoyageError::BreakerOpen { retry_at })?;
            let span = tracing::info_span!("voyage_request", purpose = %ctx.purpose, texts = texts.len(), attempt);
            let started = self.clock.now();
            let result = self.attempt(&url, key, body.clone(), texts.len()).instrument(span.clone()).await;
            let finished = self.clock.now();
            let latency_ms = u32::try_from((finished - started).num_milliseconds().max(0)).unwrap_or(u32::MAX);
            let failure = match result {
                Ok((vectors, tokens)) => {
                    self.breaker.succeeded(permit);
                    let cost_micros = cost_micros(tokens);
                    let _enter = span.enter();
                    tracing::info!(purpose = %ctx.purpose, tokens, cost_micros, latency_ms, "voyage request finished");
                    self.record(ctx, started, latency_ms, tokens, cost_micros, UsageOutcome::Ok);
                    return Ok(vectors);
                }
                Err(failure) => failure,
            };
            self.record(ctx, started, latency_ms, 0, 0, failure.outcome());
            if !failure.retryable() {
                self.breaker.succeeded(permit);
                let _enter = span.enter();
                tracing::warn!(outcome = failure.outcome().as_str(), "voyage request refused");
                return Err(failure.into_error());
            }
            self.breaker.failed(permit, finished);
            let wait = match failure_retry_after(&failure) {
                Some(wait) if wait > retry.max_retry_after => return Err(failure.into_error()),
                Some(wait) => wait,
                None => retry.backoff(attempt - 1, self.jitter.unit()),
            };
            if attempt >= retry.max_attempts {
                let _enter = span.enter();
                tracing::warn!(outcome = failure.outcome().as_str(), attempts = attempt, "voyage request failed");
                return Err(failure.into_error());
            }
            self.sleeper.sleep(wait).await;
        }
    }

    fn check_budgets(&self, ctx: &CallContext) -> Result<(), VoyageError> {
        let unflushed = |user, since| self.ledger.pending_cost_micros(ctx.org, user, since);
        match budget::check(self.budgets.as_ref(), ctx.org, ctx.user, self.clock.now(), &unflushed) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(VoyageError::BudgetExhausted {
                subject: e.subject,
                period: e.period,
                limit_micros: e.limit_micros,
                spent_micros: e.spent_micros,
            }),
            Err(error) => Err(VoyageError::Accounting(error.to_string())),
        }
    }

    fn record(
        &self,
        ctx: &CallContext,
        at: DateTime<Utc>,
        latency_ms: u32,
        tokens: u64,
        cost_micros: i64,
        outcome: UsageOutcome,
    ) {
        self.ledger.record(UsageRecord {
            id: uuid::Uuid::now_v7(),
            org: ctx.org,
            user: ctx.user,
            purpose: ctx.purpose.clone(),
            model: VOYAGE_MODEL.to_string(),
            tokens: TokenUsage { input: u32::try_from(tokens).unwrap_or(u32::MAX), ..TokenUsage::default() },
            cost_micros,
            latency_ms,
            outcome,
            at,
        });
    }

    async fn attempt(
        &self,
        url: &str,
        key: &HeaderValue,
        body: Vec<u8>,
        expected: usize,
    ) -> Result<(Vec<Vec<f32>>, u64), Failure> {
        let response = self
            .http
            .post(url)
            .header(AUTHORIZATION, key.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| {
                Failure::Transport(if e.is_timeout() {
                    "the request timed out".into()
                } else {
                    "the connection failed".into()
                })
            })?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(|_| Failure::Transport("the reply was cut off".into()))?;
        if status == 200 {
            return read_reply(&bytes, expected).map_err(Failure::Malformed);
        }
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let retry_after = parse_retry_after(header("retry-after-ms"), header("retry-after"), self.clock.now());
        // The API's error body is `{"detail": "..."}`; only its first 200 characters are kept.
        let message = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("detail").and_then(|d| d.as_str()).map(|d| d.chars().take(200).collect()))
            .unwrap_or_default();
        Err(Failure::Status { status, message, retry_after, retryable: is_retryable_status(status, None) })
    }
}

fn failure_retry_after(failure: &Failure) -> Option<Duration> {
    match failure {
        Failure::Status { retry_after, .. } => *retry_after,
        _ => None,
    }
}

/// The cost of `tokens` at voyage-law-2's price, rounded half-up to a micro-dollar.
pub fn cost_micros(tokens: u64) -> i64 {
    let per_million = u128::from(tokens) * u128::from(VOYAGE_LAW_2_MICROS_PER_MTOK);
    i64::try_from((per_million + 500_000) / 1_000_000).unwrap_or(i64::MAX)
}

/// Splits `texts` into requests within the API's limits (text count and characters), in order.
fn batches<'a>(texts: &'a [&'a str]) -> Vec<&'a [&'a str]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = 0;
    for (i, text) in texts.iter().enumerate() {
        let len = text.chars().count();
        if i > start && (i - start >= MAX_TEXTS_PER_REQUEST || chars + len > MAX_CHARS_PER_REQUEST) {
            out.push(&texts[start..i]);
            start = i;
            chars = 0;
        }
        chars += len;
    }
    if start < texts.len() {
        out.push(&texts[start..]);
    }
    out
}

/// Checks a reply: one row per text, every index once, every vector of the model's length, finite, and not all
/// zero; returned in the request's order and normalised to unit length.
fn read_reply(bytes: &[u8], expected: usize) -> Result<(Vec<Vec<f32>>, u64), String> {
    let reply: EmbeddingsResponse =
        serde_json::from_slice(bytes).map_err(|e| format!("not an embeddings reply ({e})"))?;
    if let Some(model) = &reply.model
        && model != VOYAGE_MODEL
    {
        return Err(format!("it came from another model ({model})"));
    }
    if reply.data.len() != expected {
        return Err(format!("{} vectors for {expected} texts", reply.data.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for row in reply.data {
        if row.embedding.len() != VOYAGE_DIMENSIONS {
            return Err(format!("a vector of {} numbers, not {VOYAGE_DIMENSIONS}", row.embedding.len()));
        }
        let norm = row.embedding.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return Err("a vector that is not a direction (zero, infinite or not a number)".into());
        }
        let slot = out.get_mut(row.index).ok_or_else(|| format!("index {} out of range", row.index))?;
        if slot.is_some() {
            return Err(format!("index {} twice", row.index));
        }
        *slot = Some(row.embedding.into_iter().map(|x| x / norm).collect());
    }
    let vectors = out.into_iter().collect::<Option<Vec<_>>>().ok_or("a text without a vector")?;
    Ok((vectors, reply.usage.total_tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_stay_within_the_api_limits_and_keep_the_order() {
        let many: Vec<String> = (0..300).map(|i| format!("text {i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let split = batches(&refs);
        assert_eq!(split.iter().map(|b| b.len()).collect::<Vec<_>>(), [128, 128, 44]);
        assert_eq!(split.concat(), refs);
        let long = "x".repeat(200_000);
        let refs = [long.as_str(), long.as_str(), "short"];
        assert_eq!(batches(&refs).iter().map(|b| b.len()).collect::<Vec<_>>(), [1, 2]);
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn the_price_is_twelve_cents_a_million_tokens() {
        assert_eq!(cost_micros(1_000_000), 120_000);
        assert_eq!(cost_micros(1_000), 120);
        assert_eq!(cost_micros(4), 0);
        assert_eq!(cost_micros(5), 1, "half-up");
    }

    fn reply(rows: &[(usize, Vec<f32>)]) -> Vec<u8> {
        let data: Vec<_> =
            rows.iter().map(|(i, v)| serde_json::json!({"object": "embedding", "index": i, "embedding": v})).collect();
        serde_json::to_vec(
            &serde_json::json!({"object": "list", "data": data, "model": VOYAGE_MODEL, "usage": {"total_tokens": 7}}),
        )
        .unwrap()
    }

    #[test]
    fn a_reply_is_checked_and_put_back_in_the_request_order() {
        let mut a = vec![0.0; VOYAGE_DIMENSIONS];
        a[0] = 2.0;
        let mut b = vec![0.0; VOYAGE_DIMENSIONS];
        b[1] = 1.0;
        let (vectors, tokens) = read_reply(&reply(&[(1, b.clone()), (0, a.clone())]), 2).unwrap();
        assert_eq!(tokens, 7);
        assert_eq!(vectors[0][0], 1.0, "normalised, first text first");
        assert_eq!(vectors[1][1], 1.0);
        for (bytes, expected, why) in [
            (reply(&[(0, a.clone())]), 2, "vectors for 2 texts"),
            (reply(&[(0, a.clone()), (0, a.clone())]), 2, "twice"),
            (reply(&[(0, a.clone()), (5, b.clone())]), 2, "out of range"),
            (reply(&[(0, vec![1.0; 3])]), 1, "numbers"),
            (reply(&[(0, vec![0.0; VOYAGE_DIMENSIONS])]), 1, "not a direction"),
            (b"<html>".to_vec(), 1, "not an embeddings reply"),
        ] {
            let error = read_reply(&bytes, expected).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }

    #[test]
    fn the_key_goes_only_over_https_or_to_loopback() {
        assert!(VoyageConfig::default().check_endpoint().is_ok());
        assert!(VoyageConfig::default().with_endpoint("http://127.0.0.1:9").check_endpoint().is_ok());
        let refused = VoyageConfig::default().with_endpoint("http://voyage.example.com").check_endpoint().unwrap_err();
        assert!(refused.to_string().contains(VOYAGE_ENDPOINT_ENV), "{refused}");
    }
}
