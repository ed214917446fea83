//! The HTTP surface: versioned routes under `/api/v1`, bearer-token auth (the organization comes from the token and
//! nothing else), body size limits, per-device and per-address rate limits, structured errors
//! (`{"error": {"code", "message"}}`) that never carry internals, `/health`, and `/metrics` (for a loopback peer or
//! with the metrics token). Serving connections (plain or TLS) is [`crate::listen`]'s.
//!
//! The push channel is `GET /api/v1/changes/wait`: a long poll over [`crate::notify::ChangeNotifier`], which the push
//! route feeds after each commit; its wait is bounded by [`ServerConfig::max_wait`] through an injected
//! [`Pause`] (tests end it by hand instead of sleeping).

use crate::auth;
use crate::metrics::Metrics;
use crate::notify::{ChangeNotifier, WaitLimits};
use crate::rate::{RateConfig, RateLimiter};
use crate::storage::{Actor, Login, StorageError, SyncStorage};
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequestParts, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header, request::Parts};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use pactwise_domain::{Clock, ErrorCode, Role};
use pactwise_sync::wire::{
    ErrorBody, ErrorDetail, MAX_BLOB_BYTES, MAX_PULL_LIMIT, MAX_PUSH_CHANGES, MAX_WAIT_S, PullResponse, PushRequest,
    PushResponse, SessionInfo, SignInRequest, SignInResponse, WaitResponse, is_blob_name, sha256_hex,
};
use pactwise_sync::{Pause, TokioPause};
use serde::Deserialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone)]
pub struct ServerConfig {
    /// Largest JSON body (a push).
    pub json_limit: usize,
    /// Largest blob upload.
    pub blob_limit: usize,
    /// How long a device token stays valid.
    pub token_ttl: chrono::Duration,
    /// Per device.
    pub rate: RateConfig,
    /// Per client address, for sign-in.
    pub sign_in_rate: RateConfig,
    /// The bearer token that opens `/metrics` to a peer that is not on this computer (None: loopback only).
    pub metrics_token: Option<String>,
    /// The longest a wait for changes is held open (a client's longer `wait_s` is shortened to this).
    pub max_wait: Duration,
    /// Waits for changes open at once, per device and per organization.
    pub wait_limits: WaitLimits,
    /// How long a new member's one-time sign-in code stays valid.
    pub code_ttl: chrono::Duration,
    /// How often the service looks for approval steps past their escalation time ([`crate::steps::sweep`]).
    pub escalation_sweep: Duration,
    /// How long an RFP package's edit lease lasts from its last take or renewal (the lease routes).
    pub lease_ttl: chrono::Duration,
    /// PactWise Source's key-wrapping key: the tenders' deadline keys are stored only sealed to it. Read from a file
    /// outside the database at start (`--source-key-file`); without it the Source routes say Source is not set up.
    pub source_wrapping_key: Option<Arc<pactwise_source::envelope::KeyPair>>,
}

impl std::fmt::Debug for MetricsTokenRedacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "<set>" } else { "<none>" })
    }
}

struct MetricsTokenRedacted<'a>(&'a Option<String>);

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("json_limit", &self.json_limit)
            .field("blob_limit", &self.blob_limit)
            .field("token_ttl", &self.token_ttl)
            .field("rate", &self.rate)
            .field("sign_in_rate", &self.sign_in_rate)
            .field("metrics_token", &MetricsTokenRedacted(&self.metrics_token))
            .field("max_wait", &self.max_wait)
            .field("wait_limits", &self.wait_limits)
            .field("code_ttl", &self.code_ttl)
            .field("escalation_sweep", &self.escalation_sweep)
            .field("lease_ttl", &self.lease_ttl)
            .field("source_wrapping_key", &self.source_wrapping_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            json_limit: 8 * 1024 * 1024,
            blob_limit: MAX_BLOB_BYTES as usize,
            token_ttl: chrono::Duration::days(90),
            rate: RateConfig { burst: 200.0, per_second: 50.0 },
            sign_in_rate: RateConfig { burst: 10.0, per_second: 0.2 },
            metrics_token: None,
            max_wait: Duration::from_secs(MAX_WAIT_S),
            wait_limits: WaitLimits::default(),
            code_ttl: chrono::Duration::days(7),
            escalation_sweep: Duration::from_secs(15),
            lease_ttl: chrono::Duration::minutes(pactwise_sync::lease::LEASE_MINUTES),
            source_wrapping_key: None,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) storage: Arc<dyn SyncStorage>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) limiter: RateLimiter,
    pub(crate) sign_in_limiter: RateLimiter,
    pub(crate) metrics: Metrics,
    pub(crate) config: ServerConfig,
    pub(crate) notifier: ChangeNotifier,
    /// Bounds a wait for changes.
    wait_timer: Arc<dyn Pause>,
}

#[derive(Clone)]
pub struct AppState(pub(crate) Arc<Inner>);

impl AppState {
    pub fn new(storage: Arc<dyn SyncStorage>, clock: Arc<dyn Clock>, config: ServerConfig) -> Self {
        Self::with_wait_timer(storage, clock, config, Arc::new(TokioPause))
    }

    /// The same, bounding waits for changes with `wait_timer` (tests pass one they end by hand).
    pub fn with_wait_timer(
        storage: Arc<dyn SyncStorage>,
        clock: Arc<dyn Clock>,
        config: ServerConfig,
        wait_timer: Arc<dyn Pause>,
    ) -> Self {
        Self(Arc::new(Inner {
            limiter: RateLimiter::new(config.rate, clock.clone()),
            sign_in_limiter: RateLimiter::new(config.sign_in_rate, clock.clone()),
            notifier: ChangeNotifier::new(config.wait_limits),
            storage,
            clock,
            metrics: Metrics::default(),
            config,
            wait_timer,
        }))
    }

    /// The push channel's notifier (tests read how many waits are open).
    pub fn notifier(&self) -> &ChangeNotifier {
        &self.0.notifier
    }

    pub fn storage(&self) -> &Arc<dyn SyncStorage> {
        &self.0.storage
    }

    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }
}

/// An error as a client sees it: a status, a stable code and a message that says what to do.
#[derive(Debug)]
pub enum ApiError {
    InvalidInput(String),
    Unauthenticated,
    /// A sign-in whose organization, email or password is wrong (which one is not said).
    SignInRefused,
    /// A sign-in with a one-time code that is wrong, used or expired, or names another member (which is not said).
    CodeRefused,
    Forbidden(String),
    NotFound(String),
    PayloadTooLarge(String),
    UnsupportedMediaType(String),
    MethodNotAllowed,
    RateLimited {
        retry_after_s: u64,
    },
    /// A wait for changes over a limit of open waits.
    TooManyWaits(String),
    RangeNotSatisfiable {
        size: u64,
    },
    /// Logged with its detail; the client gets a generic message.
    Internal(String),
}

impl From<StorageError> for ApiError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Conflict(what) => ApiError::InvalidInput(format!("{what} already exists")),
            StorageError::NotFound(what) => ApiError::NotFound(format!("{what} not found")),
            StorageError::Forbidden(why) => ApiError::Forbidden(why),
            StorageError::Database(detail) => ApiError::Internal(detail),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            ApiError::InvalidInput(m) => (StatusCode::BAD_REQUEST, ErrorCode::InvalidInput, m),
            ApiError::Unauthenticated => (
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthenticated,
                "a valid device token is required; sign in again".to_string(),
            ),
            ApiError::SignInRefused => (
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthenticated,
                "the email or password is wrong (or the organization does not exist); check them and sign in again"
                    .to_string(),
            ),
            ApiError::CodeRefused => (
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthenticated,
                "the sign-in code was not accepted: it is wrong, used already or expired (or the email or organization \
                 is wrong); check them, or ask your administrator for a new code"
                    .to_string(),
            ),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, ErrorCode::Forbidden, m),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, ErrorCode::NotFound, m),
            ApiError::PayloadTooLarge(m) => (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::ResourceLimit, m),
            ApiError::UnsupportedMediaType(m) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, ErrorCode::InvalidInput, m),
            ApiError::MethodNotAllowed => (
                StatusCode::METHOD_NOT_ALLOWED,
                ErrorCode::InvalidInput,
                "this route does not take that method".to_string(),
            ),
            ApiError::RateLimited { retry_after_s } => {
                let mut response = error_response(
                    StatusCode::TOO_MANY_REQUESTS,
                    ErrorCode::RateLimited,
                    format!("too many requests; retry in {retry_after_s} s"),
                );
                if let Ok(v) = HeaderValue::from_str(&retry_after_s.to_string()) {
                    response.headers_mut().insert(header::RETRY_AFTER, v);
                }
                return response;
            }
            ApiError::TooManyWaits(message) => {
                let mut response = error_response(StatusCode::TOO_MANY_REQUESTS, ErrorCode::RateLimited, message);
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(MAX_WAIT_S));
                return response;
            }
            ApiError::RangeNotSatisfiable { size } => {
                let mut response = error_response(
                    StatusCode::RANGE_NOT_SATISFIABLE,
                    ErrorCode::InvalidInput,
                    "the requested range is outside the file".to_string(),
                );
                if let Ok(v) = HeaderValue::from_str(&format!("bytes */{size}")) {
                    response.headers_mut().insert(header::CONTENT_RANGE, v);
                }
                return response;
            }
            ApiError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::Internal,
                    "something went wrong on the server; try again later".to_string(),
                )
            }
        };
        error_response(status, code, message)
    }
}

fn error_response(status: StatusCode, code: ErrorCode, message: String) -> Response {
    (status, Json(ErrorBody { error: ErrorDetail { code: code.as_str().to_string(), message } })).into_response()
}

pub(crate) fn json_rejection(r: JsonRejection) -> ApiError {
    match r.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge("the request body is too large".into()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            ApiError::UnsupportedMediaType("send JSON with Content-Type: application/json".into())
        }
        _ => ApiError::InvalidInput(format!("the request body is not valid: {}", clip(&r.body_text(), 300))),
    }
}

/// At most `max` characters of `text`, never cut inside a character.
pub fn clip(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let mut out: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

pub(crate) async fn blocking<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&dyn SyncStorage) -> Result<T, StorageError> + Send + 'static,
) -> Result<T, ApiError> {
    let storage = state.0.storage.clone();
    tokio::task::spawn_blocking(move || f(storage.as_ref()))
        .await
        .map_err(|e| ApiError::Internal(format!("storage task failed: {e}")))?
        .map_err(ApiError::from)
}

/// The request's bearer token when it has the shape of a token made by [`auth::new_token_with`] with `prefix`.
pub(crate) fn bearer_token<'h>(headers: &'h HeaderMap, prefix: &str) -> Option<&'h str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| t.starts_with(prefix) && t.len() == prefix.len() + 64)
}

impl FromRequestParts<AppState> for Actor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let unauthenticated = || {
            Metrics::add(&state.0.metrics.unauthenticated, 1);
            ApiError::Unauthenticated
        };
        let token = bearer_token(&parts.headers, auth::TOKEN_PREFIX).ok_or_else(unauthenticated)?;
        let hash = auth::token_hash(token);
        let record = blocking(state, move |s| s.find_device(&hash)).await?.ok_or_else(unauthenticated)?;
        if record.revoked || record.expires_at <= state.0.clock.now() {
            return Err(unauthenticated());
        }
        if let Err(retry_after_s) = state.0.limiter.check(&record.actor.device.to_string()) {
            Metrics::add(&state.0.metrics.rate_limited, 1);
            return Err(ApiError::RateLimited { retry_after_s });
        }
        Ok(record.actor)
    }
}

/// The peer's address, when the connection told it (tests without a socket use `MockConnectInfo`).
fn peer_addr(ext: &axum::http::Extensions) -> Option<SocketAddr> {
    ext.get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0)
        .or_else(|| ext.get::<axum::extract::connect_info::MockConnectInfo<SocketAddr>>().map(|m| m.0))
}

pub(crate) fn client_addr(parts_ext: &axum::http::Extensions) -> String {
    peer_addr(parts_ext).map(|a| a.ip().to_string()).unwrap_or_else(|| "local".into())
}

/// The service's routes, with `extra` routes under `/api/v1` (the members routes; see [`crate::router`]).
pub(crate) fn router_with(state: AppState, extra: Router<AppState>) -> Router {
    let json_limit = state.0.config.json_limit;
    let blob_limit = state.0.config.blob_limit;
    let api = Router::new()
        .route("/sign-in", post(sign_in))
        .route("/sign-out", post(sign_out))
        .route("/session", get(session))
        .route("/changes", post(push).get(pull))
        .route("/changes/wait", get(wait_for_changes))
        .merge(extra)
        .layer(DefaultBodyLimit::max(json_limit))
        .route("/blobs/{hash}", put(put_blob).get(get_blob).layer(DefaultBodyLimit::max(blob_limit)));
    Router::new()
        .nest("/api/v1", api)
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .fallback(|| async { ApiError::NotFound("no such route; this server speaks /api/v1".into()) })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(middleware::from_fn_with_state(state.clone(), count_requests))
        .layer(middleware::from_fn(crate::drain::finish_unread_bodies))
        .with_state(state)
}

async fn count_requests(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let response = next.run(request).await;
    let m = &state.0.metrics;
    let class = response.status().as_u16() / 100;
    Metrics::add(
        match class {
            2 | 3 => &m.requests_2xx,
            4 => &m.requests_4xx,
            _ => &m.requests_5xx,
        },
        1,
    );
    Metrics::add(&m.request_micros_total, started.elapsed().as_micros() as u64);
    response
}

async fn health(State(state): State<AppState>) -> Response {
    let backend = state.0.storage.backend();
    match blocking(&state, |s| s.health()).await {
        Ok(()) => Json(serde_json::json!({"status": "ok", "backend": backend})).into_response(),
        Err(_) => {
            (StatusCode::SERVICE_UNAVAILABLE, Json(serde_json::json!({"status": "unavailable", "backend": backend})))
                .into_response()
        }
    }
}

/// `/metrics`: for a peer on this computer, or with `Authorization: Bearer <metrics token>`.
async fn metrics(State(state): State<AppState>, request: Request) -> Response {
    let loopback = peer_addr(request.extensions()).is_some_and(|a| a.ip().is_loopback());
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let token_ok = match (&state.0.config.metrics_token, presented) {
        (Some(expected), Some(given)) => same_secret(expected, given),
        _ => false,
    };
    if !loopback && !token_ok {
        Metrics::add(&state.0.metrics.unauthenticated, 1);
        return error_response(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthenticated,
            "the metrics need the metrics token (Authorization: Bearer …) or a request from this computer".into(),
        );
    }
    let mut body = state.0.metrics.render();
    body.push_str(&format!(
        "# TYPE pactwise_sync_waits_open gauge\npactwise_sync_waits_open {}\n",
        state.0.notifier.open_waits()
    ));
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}

/// Compares two secrets by their digests, so the time taken does not tell how much of a guess was right.
fn same_secret(expected: &str, given: &str) -> bool {
    use sha2::{Digest, Sha256};
    let (a, b) = (Sha256::digest(expected.as_bytes()), Sha256::digest(given.as_bytes()));
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(crate) const MAX_FIELD: usize = 320;

async fn sign_in(State(state): State<AppState>, request: Request) -> Result<Json<SignInResponse>, ApiError> {
    let addr = client_addr(request.extensions());
    if let Err(retry_after_s) = state.0.sign_in_limiter.check(&addr) {
        Metrics::add(&state.0.metrics.rate_limited, 1);
        return Err(ApiError::RateLimited { retry_after_s });
    }
    let Json(body): Json<SignInRequest> =
        <Json<SignInRequest> as axum::extract::FromRequest<AppState>>::from_request(request, &state)
            .await
            .map_err(json_rejection)?;
    for (name, value) in [("org", &body.org), ("email", &body.email), ("device_name", &body.device_name)] {
        if value.trim().is_empty() || value.len() > MAX_FIELD {
            return Err(ApiError::InvalidInput(format!("{name} must be 1 to {MAX_FIELD} characters")));
        }
    }
    if body.password.len() > 1024 {
        return Err(ApiError::InvalidInput("the password is too long".into()));
    }
    let (org, email) = (body.org.trim().to_string(), body.email.trim().to_lowercase());
    let login = blocking(&state, move |s| s.find_login(&org, &email)).await?;
    let password = body.password.clone();
    let stored = login.as_ref().map(|l| l.password_hash.clone());
    let ok = tokio::task::spawn_blocking(move || match stored {
        Some(hash) => auth::verify_password(&password, &hash),
        None => {
            // Same work for an unknown email, so timing does not tell which emails exist.
            let _ = auth::verify_password(&password, auth::decoy_hash());
            false
        }
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?;
    let Some(login) = login.filter(|_| ok) else {
        Metrics::add(&state.0.metrics.sign_ins_failed, 1);
        return Err(ApiError::SignInRefused);
    };
    let (token, hash) = auth::new_token();
    let now = state.0.clock.now();
    let expires_at = now + state.0.config.token_ttl;
    let device_name = body.device_name.trim().to_string();
    let l2 = login.clone();
    let device_id = blocking(&state, move |s| s.create_device(&l2, &device_name, &hash, now, expires_at)).await?;
    Metrics::add(&state.0.metrics.sign_ins, 1);
    let Login { org, user, role, .. } = login;
    Ok(Json(SignInResponse { token, device_id, user_id: user, org_id: org, role, expires_at }))
}

async fn sign_out(State(state): State<AppState>, actor: Actor) -> Result<StatusCode, ApiError> {
    let now = state.0.clock.now();
    blocking(&state, move |s| s.revoke_device(actor.org, actor.device, now)).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn session(actor: Actor) -> Json<SessionInfo> {
    Json(SessionInfo {
        org_id: actor.org,
        org_name: actor.org_name,
        user_id: actor.user,
        role: actor.role,
        device_id: actor.device,
    })
}

async fn push(
    State(state): State<AppState>,
    actor: Actor,
    body: Result<Json<PushRequest>, JsonRejection>,
) -> Result<Json<PushResponse>, ApiError> {
    let Json(request) = body.map_err(json_rejection)?;
    if actor.role == Role::Viewer {
        return Err(ApiError::Forbidden("viewers cannot change the organization's data".into()));
    }
    if request.changes.is_empty() || request.changes.len() > MAX_PUSH_CHANGES {
        return Err(ApiError::InvalidInput(format!("a push carries 1 to {MAX_PUSH_CHANGES} changes")));
    }
    for (i, change) in request.changes.iter().enumerate() {
        change.check().map_err(|m| ApiError::InvalidInput(format!("changes[{i}]: {m}")))?;
    }
    let now = state.0.clock.now();
    let org = actor.org;
    let response = {
        let span = tracing::info_span!("push", org = %actor.org, changes = request.changes.len());
        let _guard = span.enter();
        blocking(&state, move |s| s.push(&actor, &request, now)).await?
    };
    // Committed: wake this organization's waits for changes (whichever backend stored it).
    if let Some(head) = response.results.iter().filter(|r| r.refused.is_none()).map(|r| r.seq).max() {
        state.0.notifier.advanced(org, head);
    }
    let m = &state.0.metrics;
    Metrics::add(&m.pushes, 1);
    if response.replayed {
        Metrics::add(&m.pushes_replayed, 1);
    } else {
        Metrics::add(&m.changes_stored, response.results.len() as u64);
    }
    Ok(Json(response))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PullQuery {
    since: u64,
    limit: Option<u32>,
}

async fn pull(
    State(state): State<AppState>,
    actor: Actor,
    query: Result<Query<PullQuery>, QueryRejection>,
) -> Result<Json<PullResponse>, ApiError> {
    let Query(query) = query.map_err(|_| {
        ApiError::InvalidInput("the query must be ?since=N (a non-negative integer) and optionally &limit=M".into())
    })?;
    let limit = query.limit.unwrap_or(500);
    if limit == 0 || limit > MAX_PULL_LIMIT {
        return Err(ApiError::InvalidInput(format!("limit must be 1 to {MAX_PULL_LIMIT}")));
    }
    if query.since > i64::MAX as u64 {
        return Err(ApiError::InvalidInput("since is out of range".into()));
    }
    let org = actor.org;
    let page = blocking(&state, move |s| s.pull(org, query.since, limit)).await?;
    Metrics::add(&state.0.metrics.pulls, 1);
    Metrics::add(&state.0.metrics.changes_served, page.changes.len() as u64);
    Ok(Json(page))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitQuery {
    since: u64,
    wait_s: Option<u64>,
}

/// The push channel: answers `changed: true` as soon as the caller's organization's log holds a change past
/// `since`, or `changed: false` when the wait (the client's `wait_s`, at most `max_wait`) is over or the service
/// shuts down. The organization is the token's; the wait registers before it reads the log, so a change stored in
/// between wakes it either way.
async fn wait_for_changes(
    State(state): State<AppState>,
    actor: Actor,
    query: Result<Query<WaitQuery>, QueryRejection>,
) -> Result<Json<WaitResponse>, ApiError> {
    let Query(query) = query.map_err(|_| {
        ApiError::InvalidInput(
            "the query must be ?since=N (a non-negative integer) and optionally &wait_s=S (seconds)".into(),
        )
    })?;
    if query.since > i64::MAX as u64 {
        return Err(ApiError::InvalidInput("since is out of range".into()));
    }
    let max_wait = state.0.config.max_wait;
    let wait = query.wait_s.map_or(max_wait, |s| Duration::from_secs(s).min(max_wait));
    let span = tracing::info_span!("wait_for_changes", org = %actor.org, since = query.since);
    let inner = &state.0;
    let waited = async {
        let mut ticket = inner.notifier.register(actor.org, actor.device).map_err(|refused| {
            Metrics::add(&inner.metrics.waits_refused, 1);
            ApiError::TooManyWaits(refused.to_string())
        })?;
        Metrics::add(&inner.metrics.waits, 1);
        let (org, since) = (actor.org, query.since);
        let stored = blocking(&state, move |s| s.pull(org, since, 1)).await?;
        let changed = !stored.changes.is_empty()
            || tokio::select! {
                changed = ticket.changed_past(since) => changed,
                _ = inner.wait_timer.pause(wait) => false,
            };
        Ok::<bool, ApiError>(changed)
    };
    let changed = tracing::Instrument::instrument(waited, span).await?;
    if changed {
        Metrics::add(&state.0.metrics.waits_changed, 1);
    }
    Ok(Json(WaitResponse { changed }))
}

fn blob_name(hash: &str) -> Result<(), ApiError> {
    if is_blob_name(hash) {
        Ok(())
    } else {
        Err(ApiError::InvalidInput("a blob is named by the lowercase hex SHA-256 of its bytes".into()))
    }
}

/// The blob name from the path; a path that does not decode (bad percent-encoding, not UTF-8) is bad input too.
fn blob_path(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    let Path(hash) =
        path.map_err(|_| ApiError::InvalidInput("a blob is named by the lowercase hex SHA-256 of its bytes".into()))?;
    blob_name(&hash)?;
    Ok(hash)
}

async fn put_blob(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, ApiError> {
    let hash = blob_path(path)?;
    let bytes = body.map_err(|r| {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge("the file is larger than this server accepts".into())
        } else {
            ApiError::InvalidInput("the upload broke off; send it again".into())
        }
    })?;
    if actor.role == Role::Viewer {
        return Err(ApiError::Forbidden("viewers cannot upload files".into()));
    }
    if bytes.is_empty() {
        return Err(ApiError::InvalidInput("an empty file is not stored".into()));
    }
    if sha256_hex(&bytes) != hash {
        return Err(ApiError::InvalidInput("the bytes do not hash to the blob's name; nothing was stored".into()));
    }
    let now = state.0.clock.now();
    let len = bytes.len() as u64;
    let created = blocking(&state, move |s| s.put_blob(actor.org, &hash, &bytes, now)).await?;
    Metrics::add(&state.0.metrics.blob_bytes_in, len);
    Ok(if created { StatusCode::CREATED } else { StatusCode::OK })
}

/// `bytes=N-` or `bytes=N-M` → (start, end inclusive) within `size`.
fn parse_range(value: &str, size: u64) -> Result<(u64, u64), ApiError> {
    let bad = || ApiError::RangeNotSatisfiable { size };
    let spec = value.strip_prefix("bytes=").ok_or_else(bad)?;
    let (start, end) = spec.split_once('-').ok_or_else(bad)?;
    let start: u64 = start.trim().parse().map_err(|_| bad())?;
    let end: u64 =
        if end.trim().is_empty() { size.saturating_sub(1) } else { end.trim().parse().map_err(|_| bad())? };
    if start >= size || end < start {
        return Err(bad());
    }
    Ok((start, end.min(size - 1)))
}

async fn get_blob(
    State(state): State<AppState>,
    actor: Actor,
    method: Method,
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let hash = blob_path(path)?;
    let org = actor.org;
    let h = hash.clone();
    // Another organization's blob answers exactly like a missing one.
    let size = blocking(&state, move |s| s.blob_size(org, &h))
        .await?
        .ok_or_else(|| ApiError::NotFound("no such file".into()))?;
    let range = headers.get(header::RANGE).and_then(|v| v.to_str().ok());
    let (status, start, end) = match range {
        Some(r) => {
            let (s, e) = parse_range(r, size)?;
            (StatusCode::PARTIAL_CONTENT, s, e)
        }
        None => (StatusCode::OK, 0, size.saturating_sub(1)),
    };
    let len = if size == 0 { 0 } else { end - start + 1 };
    let mut response_headers = HeaderMap::new();
    response_headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    response_headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    if let Ok(v) = HeaderValue::from_str(&format!("\"{hash}\"")) {
        response_headers.insert(header::ETAG, v);
    }
    if status == StatusCode::PARTIAL_CONTENT
        && let Ok(v) = HeaderValue::from_str(&format!("bytes {start}-{end}/{size}"))
    {
        response_headers.insert(header::CONTENT_RANGE, v);
    }
    if method == Method::HEAD {
        if let Ok(v) = HeaderValue::from_str(&len.to_string()) {
            response_headers.insert(header::CONTENT_LENGTH, v);
        }
        return Ok((status, response_headers).into_response());
    }
    let bytes = blocking(&state, move |s| s.read_blob(org, &hash, start, len))
        .await?
        .ok_or_else(|| ApiError::NotFound("no such file".into()))?;
    Metrics::add(&state.0.metrics.blob_bytes_out, bytes.len() as u64);
    Ok((status, response_headers, bytes).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_a_json_error_never_cuts_inside_a_character() {
        let text = "ü".repeat(400);
        let clipped = clip(&text, 300);
        assert_eq!(clipped.chars().count(), 301);
        assert!(clipped.ends_with('…'));
        assert_eq!(clip("kurz", 300), "kurz");
    }

    #[test]
    fn a_secret_matches_only_itself() {
        assert!(same_secret("m3trics", "m3trics"));
        assert!(!same_secret("m3trics", "m3tric"));
        assert!(!same_secret("m3trics", ""));
    }

    #[test]
    fn ranges_resume_from_an_offset_and_refuse_what_lies_outside() {
        assert_eq!(parse_range("bytes=10-", 100).unwrap(), (10, 99));
        assert_eq!(parse_range("bytes=0-9", 100).unwrap(), (0, 9));
        assert_eq!(parse_range("bytes=90-200", 100).unwrap(), (90, 99));
        assert!(matches!(parse_range("bytes=100-", 100), Err(ApiError::RangeNotSatisfiable { size: 100 })));
        assert!(parse_range("bytes=a-", 100).is_err());
        assert!(parse_range("items=1-", 100).is_err());
    }
}
