//! The HTTP side of the client: one `reqwest` client, an endpoint and a device token. Maps every answer to a
//! [`SyncError`]; the token is never logged or put in an error.

use crate::error::SyncError;
use crate::token::DeviceToken;
use crate::wire::{
    API_PREFIX, ErrorBody, PullResponse, PushRequest, PushResponse, SessionInfo, SignInRequest, SignInResponse,
};
use reqwest::{Response, StatusCode, header};
use std::time::Duration;

#[derive(Clone)]
pub struct HttpApi {
    http: reqwest::Client,
    base: String,
    token: Option<DeviceToken>,
}

impl std::fmt::Debug for HttpApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpApi")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl HttpApi {
    /// `endpoint` is the service's root, e.g. `http://127.0.0.1:8787`.
    pub fn new(endpoint: &str, token: Option<DeviceToken>) -> Result<Self, SyncError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| SyncError::Unreachable(e.to_string()))?;
        Ok(Self { http, base: endpoint.trim_end_matches('/').to_string(), token })
    }

    pub fn endpoint(&self) -> &str {
        &self.base
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{}{}", self.base, API_PREFIX, path)
    }

    pub(crate) fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token.expose()),
            None => request,
        }
    }

    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sign in with a password; the answer carries the new device token (keep it in a [`crate::TokenStore`]).
    pub async fn sign_in(&self, request: &SignInRequest) -> Result<SignInResponse, SyncError> {
        let response = self.http.post(self.url("/sign-in")).json(request).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }

    pub async fn sign_out(&self) -> Result<(), SyncError> {
        let response = self.authorized(self.http.post(self.url("/sign-out"))).send().await.map_err(unreachable)?;
        check(response).await.map(|_| ())
    }

    pub async fn session(&self) -> Result<SessionInfo, SyncError> {
        let response = self.authorized(self.http.get(self.url("/session"))).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }

    pub async fn push(&self, request: &PushRequest) -> Result<PushResponse, SyncError> {
        let response =
            self.authorized(self.http.post(self.url("/changes"))).json(request).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }

    pub async fn pull(&self, since: u64, limit: u32) -> Result<PullResponse, SyncError> {
        let response = self
            .authorized(self.http.get(format!("{}?since={since}&limit={limit}", self.url("/changes"))))
            .send()
            .await
            .map_err(unreachable)?;
        json_or_error(response).await
    }
}

pub(crate) fn unreachable(error: reqwest::Error) -> SyncError {
    // reqwest errors carry the URL; keep only the kind.
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection refused or lost"
    } else if error.is_body() || error.is_decode() {
        "the connection broke during the answer"
    } else {
        "request failed"
    };
    SyncError::Unreachable(kind.to_string())
}

pub(crate) async fn check(response: Response) -> Result<Response, SyncError> {
    let status = response.status();
    if status.is_success() || status == StatusCode::PARTIAL_CONTENT {
        return Ok(response);
    }
    let retry_after_s =
        response.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok());
    let body: Option<ErrorBody> = response.json().await.ok();
    Err(match status {
        StatusCode::UNAUTHORIZED => SyncError::Unauthenticated,
        StatusCode::TOO_MANY_REQUESTS => SyncError::RateLimited { retry_after_s },
        s if s.is_client_error() => {
            let detail = body.map(|b| b.error);
            SyncError::Rejected {
                code: detail.as_ref().map(|d| d.code.clone()).unwrap_or_else(|| "invalid_input".into()),
                message: detail.map(|d| d.message).unwrap_or_else(|| format!("HTTP {}", s.as_u16())),
            }
        }
        s => SyncError::Server { status: s.as_u16() },
    })
}

async fn json_or_error<T: serde::de::DeserializeOwned>(response: Response) -> Result<T, SyncError> {
    let response = check(response).await?;
    let bytes = response.bytes().await.map_err(unreachable)?;
    serde_json::from_slice(&bytes).map_err(|e| SyncError::Protocol(e.to_string()))
}
