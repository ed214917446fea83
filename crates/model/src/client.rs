//! The client: one HTTP exchange with retries, the breaker, budgets, pricing and the ledger around it. Structured
//! output ([`crate::structured`]) and tool loops ([`crate::tool_loop`]) are built on [`ModelClient::exchange`].

use crate::api_key::{ApiKey, ApiKeySource};
use crate::breaker::{BreakerStatus, CircuitBreaker};
use crate::budget::{self, BudgetSource};
use crate::config::ModelConfig;
use crate::error::{ModelError, Unavailable};
use crate::ledger::{LedgerError, LedgerWriter, UsageLedger};
use crate::policy::{ANTHROPIC_VERSION, MAX_OUTPUT_TOKENS, resolve_model};
use crate::pricing::{HAIKU_5_5_PRICES, PriceTable};
use crate::retry::{Jitter, SeededJitter, Sleeper, TokioSleeper, is_retryable_status, parse_retry_after};
use crate::wire::{ErrorBody, MessagesRequest, MessagesResponse, StopReason, Thinking, ToolChoice};
use chrono::{DateTime, Utc};
use pactwise_domain::usage::{TokenUsage, UsageOutcome, UsageRecord};
use pactwise_domain::{Clock, OrgId, UserId};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tracing::Instrument;

/// Who a call is for and why; it goes to the ledger and the budget check. Build it from the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    pub org: OrgId,
    /// `None` for background work that no person started.
    pub user: Option<UserId>,
    /// A short stable name (`classify`, `checklist_section`, `assistant`, ...).
    pub purpose: String,
}

impl CallContext {
    pub fn new(org: OrgId, user: Option<UserId>, purpose: impl Into<String>) -> Self {
        Self { org, user, purpose: purpose.into() }
    }
}

/// One successful HTTP exchange, priced (not yet recorded: the caller knows the outcome).
#[derive(Debug, Clone)]
pub struct Exchange {
    pub response: MessagesResponse,
    pub tokens: TokenUsage,
    pub cost_micros: i64,
    pub latency_ms: u32,
    pub at: DateTime<Utc>,
    pub model: &'static str,
}

/// A complete reply to [`ModelClient::send`].
#[derive(Debug, Clone)]
pub struct Reply {
    pub response: MessagesResponse,
    pub tokens: TokenUsage,
    pub cost_micros: i64,
}

/// What the status line shows about the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelStatus {
    Ready,
    NoApiKey,
    KeychainUnavailable,
    BreakerOpen {
        until: DateTime<Utc>,
    },
    /// No HTTPS client could be built (no trusted root certificates on this computer).
    NoSecureConnection,
}

/// The one Anthropic Messages API client. Cheap to share behind an `Arc`; every method takes `&self`.
pub struct ModelClient {
    config: ModelConfig,
    /// The HTTPS client, or why none could be built (then every call is refused as unavailable, and the rest of
    /// the app works as without a key).
    http: Result<reqwest::Client, String>,
    keys: Arc<dyn ApiKeySource>,
    ledger: Arc<LedgerWriter>,
    budgets: Arc<dyn BudgetSource>,
    clock: Arc<dyn Clock>,
    sleeper: Arc<dyn Sleeper>,
    jitter: Arc<dyn Jitter>,
    breaker: CircuitBreaker,
    prices: PriceTable,
    /// The endpoint's origin when it is not the default (for the status line).
    endpoint_note: Option<String>,
}

impl std::fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelClient").field("endpoint", &self.config.endpoint).finish_non_exhaustive()
    }
}

/// How one failed attempt ended.
enum Failure {
    Status {
        status: u16,
        kind: String,
        message: String,
        retry_after: Option<Duration>,
        retryable: bool,
    },
    Transport(String),
    /// HTTP 200 with a body that is not a Messages reply.
    Malformed(String),
}

impl Failure {
    fn outcome(&self) -> UsageOutcome {
        match self {
            Failure::Status { status: 429, .. } => UsageOutcome::RateLimited,
            Failure::Status { status: 529, .. } => UsageOutcome::Overloaded,
            Failure::Status { kind, .. } if kind == "overloaded_error" => UsageOutcome::Overloaded,
            Failure::Status { status, .. } if *status >= 500 => UsageOutcome::ServerError,
            Failure::Status { .. } => UsageOutcome::Rejected,
            Failure::Transport(_) => UsageOutcome::TransportError,
            Failure::Malformed(_) => UsageOutcome::ServerError,
        }
    }

    fn retryable(&self) -> bool {
        match self {
            Failure::Status { retryable, .. } => *retryable,
            Failure::Transport(_) | Failure::Malformed(_) => true,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::Status { retry_after, .. } => *retry_after,
            Failure::Transport(_) | Failure::Malformed(_) => None,
        }
    }

    fn into_error(self) -> ModelError {
        match self {
            Failure::Status { status: 429, retry_after, .. } => ModelError::RateLimited { retry_after },
            Failure::Status { status: 401, kind, .. } => ModelError::ModelUnavailable(Unavailable::KeyRejected(kind)),
            Failure::Status { status: 529, .. } => ModelError::ModelUnavailable(Unavailable::Overloaded),
            Failure::Status { kind, .. } if kind == "overloaded_error" => {
                ModelError::ModelUnavailable(Unavailable::Overloaded)
            }
            Failure::Status { status, retryable: true, .. } => {
                ModelError::ModelUnavailable(Unavailable::ServerError { status })
            }
            Failure::Status { status, kind, message, .. } => ModelError::Rejected { status, kind, message },
            Failure::Transport(message) => ModelError::ModelUnavailable(Unavailable::Network(message)),
            Failure::Malformed(message) => ModelError::Malformed(message),
        }
    }
}

impl ModelClient {
    /// A client over the real HTTP stack, waiting with tokio timers and jittering from OS randomness.
    pub fn new(
        config: ModelConfig,
        keys: Arc<dyn ApiKeySource>,
        ledger: Arc<dyn UsageLedger>,
        budgets: Arc<dyn BudgetSource>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, ModelError> {
        // The API key goes with every request: only over TLS, or to this computer.
        let endpoint_note = config.check_endpoint()?;
        if let Some(origin) = &endpoint_note {
            tracing::warn!(endpoint = %origin, "model requests go to a non-default endpoint (PACTWISE_MODEL_ENDPOINT)");
        }
        let http = crate::http_client(config.connect_timeout, config.request_timeout);
        if let Err(why) = &http {
            tracing::warn!(why = %why, "no HTTPS client: the model API stays unreachable in this process");
        }
        // A configured model id is logged once here and has no further effect: `wire_body` resolves every request.
        resolve_model(config.model.as_deref());
        let ledger = Arc::new(LedgerWriter::new(ledger, config.ledger, clock.clone()));
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
            prices: HAIKU_5_5_PRICES,
            endpoint_note,
        })
    }

    /// The usage ledger, budgets and clock, for another priced API that must share them (`crate::voyage`).
    pub(crate) fn accounts(&self) -> (Arc<LedgerWriter>, Arc<dyn BudgetSource>, Arc<dyn Clock>) {
        (self.ledger.clone(), self.budgets.clone(), self.clock.clone())
    }

    /// Wait between attempts with this sleeper (tests: one that records and returns at once).
    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    /// Draw backoff jitter from this source (tests: a seeded one).
    pub fn with_jitter(mut self, jitter: Arc<dyn Jitter>) -> Self {
        self.jitter = jitter;
        self
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Where requests go (scheme, host and port) when that is not the default endpoint; `None` for the default.
    pub fn non_default_endpoint(&self) -> Option<&str> {
        self.endpoint_note.as_deref()
    }

    pub fn breaker_status(&self) -> BreakerStatus {
        self.breaker.status(self.clock.now())
    }

    /// For the status line: is a key set, is the breaker open.
    pub async fn status(&self) -> ModelStatus {
        if self.http.is_err() {
            return ModelStatus::NoSecureConnection;
        }
        if let BreakerStatus::Open { until } = self.breaker_status() {
            return ModelStatus::BreakerOpen { until };
        }
        match self.api_key().await {
            Ok(_) => ModelStatus::Ready,
            Err(ModelError::ModelUnavailable(Unavailable::NoApiKey)) => ModelStatus::NoApiKey,
            Err(_) => ModelStatus::KeychainUnavailable,
        }
    }

    /// Write waiting ledger records now (call before exiting; dropping the client does it too).
    pub fn flush_ledger(&self) -> Result<(), LedgerError> {
        self.ledger.flush()
    }

    /// Ledger records not yet written.
    pub fn unflushed_ledger_records(&self) -> usize {
        self.ledger.pending_len()
    }

    /// A background task that writes waiting ledger records once they are due. It stops when the client is gone.
    pub fn spawn_ledger_flusher(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let client: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            loop {
                ticks.tick().await;
                let Some(client) = client.upgrade() else { break };
                client.ledger.flush_if_due().ok();
            }
        })
    }

    /// The API key, read from its source on every call (off the async threads: keychains block).
    /// Every call reads it first, so a process without an HTTPS client refuses here, before anything is priced.
    pub(crate) async fn api_key(&self) -> Result<ApiKey, ModelError> {
        if let Err(why) = &self.http {
            return Err(ModelError::ModelUnavailable(Unavailable::NoSecureConnection(why.clone())));
        }
        let keys = self.keys.clone();
        let read = tokio::task::spawn_blocking(move || keys.get())
            .await
            .map_err(|e| ModelError::Internal(format!("the keychain read did not finish: {e}")))?;
        match read {
            Ok(Some(key)) => Ok(key),
            Ok(None) => Err(ModelError::ModelUnavailable(Unavailable::NoApiKey)),
            Err(error) => Err(ModelError::ModelUnavailable(Unavailable::Keychain(error))),
        }
    }

    pub(crate) fn cache_ttl(&self) -> crate::wire::CacheTtl {
        self.config.cache_ttl
    }

    pub(crate) fn max_tokens(&self, requested: Option<u32>) -> u32 {
        requested.unwrap_or(self.config.default_max_tokens).clamp(1, MAX_OUTPUT_TOKENS)
    }

    /// Send a complete request and return a complete reply. A refusal or a truncated reply is an error, never a
    /// partial result. Whatever `request.model` says, the one allowed model is sent.
    pub async fn send(&self, ctx: &CallContext, request: MessagesRequest) -> Result<Reply, ModelError> {
        let key = self.api_key().await?;
        let exchange = self.exchange(ctx, &key, &request).await?;
        match exchange.response.stop_reason {
            Some(StopReason::Refusal) => {
                self.record(ctx, &exchange, UsageOutcome::Refused);
                Err(ModelError::Refused { explanation: non_empty(exchange.response.text()) })
            }
            Some(StopReason::MaxTokens) | Some(StopReason::ModelContextWindowExceeded) => {
                self.record(ctx, &exchange, UsageOutcome::Truncated);
                Err(ModelError::Truncated { max_tokens: request.max_tokens })
            }
            _ => {
                self.record(ctx, &exchange, UsageOutcome::Ok);
                Ok(Reply { response: exchange.response, tokens: exchange.tokens, cost_micros: exchange.cost_micros })
            }
        }
    }

    /// Put an exchange in the ledger with the outcome the caller determined.
    pub(crate) fn record(&self, ctx: &CallContext, exchange: &Exchange, outcome: UsageOutcome) {
        tracing::info!(
            purpose = %ctx.purpose,
            outcome = outcome.as_str(),
            input_tokens = exchange.tokens.input,
            output_tokens = exchange.tokens.output,
            cache_write_tokens = exchange.tokens.cache_write_5m + exchange.tokens.cache_write_1h,
            cache_read_tokens = exchange.tokens.cache_read,
            cost_micros = exchange.cost_micros,
            latency_ms = exchange.latency_ms,
            "model request finished"
        );
        self.ledger.record(UsageRecord {
            id: uuid::Uuid::now_v7(),
            org: ctx.org,
            user: ctx.user,
            purpose: ctx.purpose.clone(),
            model: exchange.model.to_string(),
            tokens: exchange.tokens,
            cost_micros: exchange.cost_micros,
            latency_ms: exchange.latency_ms,
            outcome,
            at: exchange.at,
        });
    }

    fn record_failure(&self, ctx: &CallContext, model: &str, at: DateTime<Utc>, latency_ms: u32, failure: &Failure) {
        self.ledger.record(UsageRecord {
            id: uuid::Uuid::now_v7(),
            org: ctx.org,
            user: ctx.user,
            purpose: ctx.purpose.clone(),
            model: model.to_string(),
            tokens: TokenUsage::default(),
            cost_micros: 0,
            latency_ms,
            outcome: failure.outcome(),
            at,
        });
    }

    fn check_budgets(&self, ctx: &CallContext) -> Result<(), ModelError> {
        let now = self.clock.now();
        let unflushed =
            |user: Option<UserId>, since: DateTime<Utc>| self.ledger.pending_cost_micros(ctx.org, user, since);
        match budget::check(self.budgets.as_ref(), ctx.org, ctx.user, now, &unflushed) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(exhausted)) => {
                tracing::warn!(purpose = %ctx.purpose, limit_micros = exhausted.limit_micros, "model budget exhausted; no request sent");
                Err(ModelError::BudgetExhausted {
                    subject: exhausted.subject,
                    period: exhausted.period,
                    limit_micros: exhausted.limit_micros,
                    spent_micros: exhausted.spent_micros,
                })
            }
            Err(error) => Err(ModelError::Accounting(error.to_string())),
        }
    }

    /// The request exactly as it goes on the wire: the model resolved again here, thinking off (left at the model's
    /// default only where the caller asked for it on a request that forces no tool: the API refuses thinking with a
    /// forced tool choice), output tokens within the model's limit.
    fn wire_body(&self, request: &MessagesRequest) -> Result<(Vec<u8>, &'static str), ModelError> {
        let mut request = request.clone();
        // Resolve at send time: whatever the request field says (from configuration, the database or a caller),
        // the one allowed model is what goes on the wire.
        let model = resolve_model(Some(&request.model));
        request.model = model.to_string();
        let forces_a_tool = matches!(request.tool_choice, Some(ToolChoice::Any { .. } | ToolChoice::Tool { .. }));
        if forces_a_tool || !request.thinking.is_model_default() {
            request.thinking = Thinking::Disabled;
        }
        request.max_tokens = request.max_tokens.clamp(1, MAX_OUTPUT_TOKENS);
        let body = serde_json::to_vec(&request).map_err(|e| ModelError::Internal(format!("request encoding: {e}")))?;
        Ok((body, model))
    }

    /// One model request with budgets, the breaker and retries around it. Failed attempts are recorded in the
    /// ledger here; a successful exchange is returned for the caller to record with its outcome.
    pub(crate) async fn exchange(
        &self,
        ctx: &CallContext,
        key: &ApiKey,
        request: &MessagesRequest,
    ) -> Result<Exchange, ModelError> {
        self.exchange_with(ctx, key, request, self.config.retry).await
    }

    /// [`Self::exchange`] with its own retry policy (`max_attempts: 1`: exactly one HTTP request).
    pub(crate) async fn exchange_with(
        &self,
        ctx: &CallContext,
        key: &ApiKey,
        request: &MessagesRequest,
        retry: crate::retry::RetryPolicy,
    ) -> Result<Exchange, ModelError> {
        let (body, model) = self.wire_body(request)?;
        let mut key_header = HeaderValue::from_str(key.expose()).map_err(|_| {
            ModelError::ModelUnavailable(Unavailable::KeyRejected("the stored key is not a valid header value".into()))
        })?;
        key_header.set_sensitive(true);
        let url = self.config.messages_url();
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            self.check_budgets(ctx)?;
            let permit = self
                .breaker
                .admit(self.clock.now())
                .map_err(|retry_at| ModelError::ModelUnavailable(Unavailable::BreakerOpen { retry_at }))?;
            let span =
                tracing::info_span!("model_request", purpose = %ctx.purpose, model, attempt, probe = permit.is_probe());
            let started = self.clock.now();
            let result = self.attempt(&url, &key_header, body.clone()).instrument(span.clone()).await;
            let finished = self.clock.now();
            let latency_ms = u32::try_from((finished - started).num_milliseconds().max(0)).unwrap_or(u32::MAX);
            let failure = match result {
                Ok(response) => {
                    self.breaker.succeeded(permit);
                    let tokens = response.usage.tokens();
                    let cost_micros = self.prices.cost_micros(&tokens);
                    return Ok(Exchange { response, tokens, cost_micros, latency_ms, at: started, model });
                }
                Err(failure) => failure,
            };
            self.record_failure(ctx, model, started, latency_ms, &failure);
            if !failure.retryable() {
                // The API answered: it is up, whatever it thought of the request.
                self.breaker.succeeded(permit);
                let _enter = span.enter();
                tracing::warn!(outcome = failure.outcome().as_str(), "model request rejected");
                return Err(failure.into_error());
            }
            self.breaker.failed(permit, finished);
            let retry_after = failure.retry_after();
            let wait = match retry_after {
                Some(wait) if wait > retry.max_retry_after => {
                    let _enter = span.enter();
                    tracing::warn!(
                        retry_after_secs = wait.as_secs(),
                        "the server asks for a longer wait than we allow"
                    );
                    return Err(failure.into_error());
                }
                Some(wait) => wait,
                None => retry.backoff(attempt - 1, self.jitter.unit()),
            };
            if attempt >= retry.max_attempts {
                let _enter = span.enter();
                tracing::warn!(
                    outcome = failure.outcome().as_str(),
                    attempts = attempt,
                    "model request failed; no attempts left"
                );
                return Err(failure.into_error());
            }
            {
                let _enter = span.enter();
                tracing::warn!(
                    outcome = failure.outcome().as_str(),
                    wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    honours_retry_after = retry_after.is_some(),
                    "model request failed; retrying"
                );
            }
            self.sleeper.sleep(wait).await;
        }
    }

    async fn attempt(&self, url: &str, key: &HeaderValue, body: Vec<u8>) -> Result<MessagesResponse, Failure> {
        let Ok(http) = self.http.as_ref() else {
            return Err(Failure::Transport("no HTTPS client".into()));
        };
        let response = http
            .post(url)
            .header("x-api-key", key.clone())
            .header("anthropic-version", ANTHROPIC_VERSION)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| Failure::Transport(transport_message(&e)))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.map_err(|e| Failure::Transport(transport_message(&e)))?;
        if status == 200 {
            return serde_json::from_slice::<MessagesResponse>(&bytes)
                .map_err(|e| Failure::Malformed(format!("not a Messages reply: {e}")));
        }
        let (kind, message) = match serde_json::from_slice::<ErrorBody>(&bytes) {
            Ok(body) => (body.error.kind, body.error.message),
            Err(_) => ("unknown_error".to_string(), String::new()),
        };
        let retry_after =
            parse_retry_after(header(&headers, "retry-after-ms"), header(&headers, "retry-after"), self.clock.now());
        let should_retry = header(&headers, "x-should-retry").and_then(|v| v.parse::<bool>().ok());
        Err(Failure::Status {
            status,
            kind,
            message,
            retry_after,
            retryable: is_retryable_status(status, should_retry),
        })
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A transport error without the URL's query or anything from the request.
fn transport_message(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "the request timed out".to_string()
    } else if error.is_connect() {
        "the connection failed".to_string()
    } else {
        let mut message = error.to_string();
        if let Some(url) = error.url() {
            message = message.replace(url.as_str(), url.host_str().unwrap_or("the endpoint"));
        }
        message
    }
}

pub(crate) fn non_empty(text: String) -> Option<String> {
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}
