//! A fake Voyage embeddings API on loopback, for tests and end-to-end runs. It checks requests the way the real API
//! does for `voyage-law-2` (a bearer key, the model, `input_type`, at most 128 texts, no empty text) and answers
//! with deterministic vectors: each word of a text (lower-cased, letters and digits) adds ±1 to one of the 1,024
//! dimensions chosen by its hash, so texts that share words point the same way — enough for ranking tests, and the
//! same text always gets the same vector. Scripted failures (`fail_next`) come first; every request is logged
//! without the key.
//!
//! Routes: `POST /v1/embeddings`.

use crate::voyage::{MAX_TEXTS_PER_REQUEST, VOYAGE_DIMENSIONS, VOYAGE_MODEL};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// An answer the fake gives instead of vectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VoyageFailure {
    /// This HTTP status with the API's `{"detail": …}` body; `retry_after` in seconds.
    Status { status: u16, retry_after: Option<u32> },
    /// HTTP 200 with one vector too few.
    MissingVector,
}

/// One request as received (never the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEmbedding {
    pub texts: usize,
    pub input_type: String,
    pub status: u16,
}

struct FakeState {
    key: String,
    failures: Mutex<VecDeque<VoyageFailure>>,
    log: Mutex<Vec<LoggedEmbedding>>,
}

pub struct FakeVoyageServer {
    addr: SocketAddr,
    state: Arc<FakeState>,
    shutdown: Option<oneshot::Sender<()>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FakeVoyageServer {
    /// Starts on a free loopback port, accepting only `key`.
    pub async fn start(key: &str) -> std::io::Result<Self> {
        let state = Arc::new(FakeState {
            key: key.to_string(),
            failures: Mutex::new(VecDeque::new()),
            log: Mutex::new(Vec::new()),
        });
        let app = Router::new().route("/v1/embeddings", post(embeddings)).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                stopped.await.ok();
            });
            if let Err(error) = serve.await {
                tracing::error!(%error, "fake Voyage server stopped");
            }
        });
        Ok(Self { addr, state, shutdown: Some(shutdown) })
    }

    /// The base URL (`VoyageConfig::endpoint`, `PACTWISE_VOYAGE_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The next requests get these answers, in order, before vectors again.
    pub fn fail_next(&self, failures: impl IntoIterator<Item = VoyageFailure>) {
        lock(&self.state.failures).extend(failures);
    }

    pub fn requests(&self) -> Vec<LoggedEmbedding> {
        lock(&self.state.log).clone()
    }
}

impl Drop for FakeVoyageServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            shutdown.send(()).ok();
        }
    }
}

/// The fake's vector of `text` (unit length): what [`FakeVoyageServer`] answers for it.
pub fn fake_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; VOYAGE_DIMENSIONS];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        // FNV-1a: stable across runs and platforms.
        let hash = word
            .to_lowercase()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        let dim = (hash % VOYAGE_DIMENSIONS as u64) as usize;
        v[dim] += if (hash >> 32) & 1 == 0 { 1.0 } else { -1.0 };
    }
    if v.iter().all(|x| *x == 0.0) {
        v[0] = 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn detail(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "detail": message }))).into_response()
}

async fn embeddings(State(state): State<Arc<FakeState>>, headers: HeaderMap, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let texts: Vec<&str> =
        request["input"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let input_type = request["input_type"].as_str().unwrap_or_default().to_string();
    let response = answer(&state, &headers, &request, &texts, &input_type);
    lock(&state.log).push(LoggedEmbedding { texts: texts.len(), input_type, status: response.status().as_u16() });
    response
}

fn answer(state: &FakeState, headers: &HeaderMap, request: &Value, texts: &[&str], input_type: &str) -> Response {
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    if bearer != Some(state.key.as_str()) {
        return detail(StatusCode::UNAUTHORIZED, "Provided API key is invalid.");
    }
    if request["model"].as_str() != Some(VOYAGE_MODEL) {
        return detail(StatusCode::BAD_REQUEST, "unknown model");
    }
    if !matches!(input_type, "query" | "document") {
        return detail(StatusCode::BAD_REQUEST, "input_type must be query or document");
    }
    if texts.is_empty() || texts.len() > MAX_TEXTS_PER_REQUEST || texts.iter().any(|t| t.trim().is_empty()) {
        return detail(StatusCode::BAD_REQUEST, "input must be 1 to 128 non-empty texts");
    }
    let mut count = texts.len();
    if let Some(failure) = lock(&state.failures).pop_front() {
        match failure {
            VoyageFailure::Status { status, retry_after } => {
                let mut response = detail(
                    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    "scripted failure",
                );
                if let Some(seconds) = retry_after
                    && let Ok(value) = seconds.to_string().parse()
                {
                    response.headers_mut().insert("retry-after", value);
                }
                return response;
            }
            VoyageFailure::MissingVector => count -= 1,
        }
    }
    let data: Vec<Value> = texts
        .iter()
        .take(count)
        .enumerate()
        .map(|(index, text)| json!({ "object": "embedding", "index": index, "embedding": fake_vector(text) }))
        .collect();
    let tokens: usize = texts.iter().map(|t| t.split_whitespace().count() + 1).sum();
    axum::Json(json!({ "object": "list", "data": data, "model": VOYAGE_MODEL, "usage": { "total_tokens": tokens } }))
        .into_response()
}
