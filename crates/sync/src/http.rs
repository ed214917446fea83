//! The HTTP side of the client: one `reqwest` client, an endpoint and a device token. Maps every answer to a
//! [`SyncError`]; the token is never logged or put in an error.
//!
//! Transport: every request goes over `https://`, verified against the platform's root certificates plus any
//! extra roots the organization trusts ([`TlsTrust`], for a private CA); plain `http://` is accepted only for
//! this computer (`localhost`, 127.0.0.0/8, `::1`), where a local service or a TLS proxy in front of it listens.
//! A redirect is followed only to an address that passes the same check.

use crate::error::SyncError;
use crate::token::DeviceToken;
use crate::wire::{
    API_PREFIX, ErrorBody, MAX_WAIT_S, PullResponse, PushRequest, PushResponse, SessionInfo, SignInRequest,
    SignInResponse, WaitResponse,
};
use reqwest::{Response, StatusCode, Url, header};
use std::time::Duration;

/// Root certificates to trust besides the platform's: PEM text (one or more certificates). For a sync service
/// whose certificate comes from the organization's own CA, and for tests with a self-signed certificate.
/// Verification is never turned off.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TlsTrust {
    extra_roots_pem: Vec<Vec<u8>>,
}

impl std::fmt::Debug for TlsTrust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTrust").field("extra_roots", &self.extra_roots_pem.len()).finish()
    }
}

impl TlsTrust {
    /// Trust these PEM certificates too (each a root or a CA of the service's certificate chain).
    pub fn with_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.extra_roots_pem.push(pem.into());
        self
    }

    pub fn is_empty(&self) -> bool {
        self.extra_roots_pem.is_empty()
    }

    fn certificates(&self) -> Result<Vec<reqwest::Certificate>, SyncError> {
        let mut out = Vec::new();
        for pem in &self.extra_roots_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem).map_err(|_| {
                SyncError::Tls("the extra root certificate file is not a PEM certificate; check the file".into())
            })?;
            if certs.is_empty() {
                return Err(SyncError::Tls("the extra root certificate file holds no certificate".into()));
            }
            out.extend(certs);
        }
        Ok(out)
    }
}

/// Is plain `http://` allowed to this host? Only for this computer.
fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Checks a sync service address and returns it without a trailing slash: `https://…`, or `http://…` to this
/// computer only. The error says what to write instead.
pub fn check_endpoint(endpoint: &str) -> Result<String, SyncError> {
    let trimmed = endpoint.trim().trim_end_matches('/');
    let bad = |why: &str| {
        SyncError::InsecureTransport(format!(
            "{trimmed:?} {why}; write the sync service's address like https://sync.example.com"
        ))
    };
    let url = Url::parse(trimmed).map_err(|_| bad("is not a web address"))?;
    if url.host().is_none() {
        return Err(bad("names no server"));
    }
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
        return Err(bad("must be only the server's address (no name, password, query or #part)"));
    }
    match url.scheme() {
        "https" => Ok(trimmed.to_string()),
        "http" if is_loopback_host(&url) => Ok(trimmed.to_string()),
        "http" => Err(SyncError::InsecureTransport(format!(
            "{trimmed:?} uses plain http://, which would send the password and the organization's data unencrypted; \
             use https:// (plain http:// is allowed only for this computer: localhost, 127.0.0.1, ::1)"
        ))),
        _ => Err(bad("is not an http(s) address")),
    }
}

/// How long an idle pooled connection is kept: under the service's 30 s limit for a connection that sends nothing.
const POOL_IDLE: Duration = Duration::from_secs(20);

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
    /// `endpoint` is the service's root, e.g. `https://sync.example.com` (or `http://127.0.0.1:8787` on this
    /// computer); anything else is refused ([`check_endpoint`]). Trusts the platform's root certificates.
    pub fn new(endpoint: &str, token: Option<DeviceToken>) -> Result<Self, SyncError> {
        Self::with_trust(endpoint, token, &TlsTrust::default())
    }

    /// The same, trusting `trust`'s extra root certificates too.
    pub fn with_trust(endpoint: &str, token: Option<DeviceToken>, trust: &TlsTrust) -> Result<Self, SyncError> {
        let base = check_endpoint(endpoint)?;
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= 5 {
                attempt.error("too many redirects")
            } else if check_endpoint(attempt.url().as_str()).is_ok() {
                attempt.follow()
            } else {
                attempt.error("a redirect to plain http:// was refused")
            }
        });
        let mut builder = reqwest::Client::builder()
            // The service closes a keep-alive connection that sends nothing for 30 s (hyper's header-read limit);
            // reusing one at that moment fails the request. A 30 s poll hits exactly that, so idle connections are
            // dropped here first.
            .pool_idle_timeout(POOL_IDLE)
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .redirect(redirects);
        if !trust.is_empty() {
            builder = builder.tls_certs_merge(trust.certificates()?);
        }
        let http = builder.build().map_err(|e| {
            SyncError::Tls(format!(
                "no secure connection can be set up on this computer ({e}); install the ca-certificates package, or \
                 check the organization's root certificate"
            ))
        })?;
        Ok(Self { http, base, token })
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

impl HttpApi {
    /// `GET` of another route under `/api/v1` (PactWise Source's buyer routes, whose wire types live in their own
    /// crate) with this device's token, the same TLS rule and the same error mapping.
    pub async fn get_json<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, SyncError> {
        let response = self.authorized(self.http.get(self.url(path))).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }

    /// `POST` of a JSON body to another route under `/api/v1`; the answer as JSON.
    pub async fn post_json<B: serde::Serialize + ?Sized, T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, SyncError> {
        let response = self.authorized(self.http.post(self.url(path))).json(body).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }

    /// `POST` of a JSON body to a route that answers with no content.
    pub async fn post_no_content<B: serde::Serialize + ?Sized>(&self, path: &str, body: &B) -> Result<(), SyncError> {
        let response = self.authorized(self.http.post(self.url(path))).json(body).send().await.map_err(unreachable)?;
        check(response).await.map(|_| ())
    }
}

impl HttpApi {
    /// The push channel: waits until the organization's log holds a change past `since` (true) or `wait` is over
    /// with nothing new (false). `wait` is whole seconds, at most [`MAX_WAIT_S`] (the service shortens a longer
    /// one too); the request's own timeout leaves the service time to answer.
    pub async fn wait_for_changes(&self, since: u64, wait: Duration) -> Result<bool, SyncError> {
        let wait_s = wait.as_secs().clamp(1, MAX_WAIT_S);
        let response = self
            .authorized(self.http.get(format!("{}?since={since}&wait_s={wait_s}", self.url("/changes/wait"))))
            .timeout(Duration::from_secs(wait_s + 15))
            .send()
            .await
            .map_err(unreachable)?;
        json_or_error::<WaitResponse>(response).await.map(|w| w.changed)
    }
}

pub(crate) fn unreachable(error: reqwest::Error) -> SyncError {
    // reqwest errors carry the URL; keep only the kind.
    if error.is_redirect() {
        return SyncError::InsecureTransport(
            "the sync service redirected to an address that is not https://; nothing was sent there".into(),
        );
    }
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(&error);
    while let Some(e) = source {
        let text = e.to_string();
        if text.contains("certificate") || text.contains("UnknownIssuer") {
            return SyncError::Tls(
                "the sync service's TLS certificate is not trusted by this computer (unknown issuer, expired, or \
                 for another name); check the address, or ask your administrator for the organization's root \
                 certificate"
                    .into(),
            );
        }
        source = e.source();
    }
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
                message: detail.map(|d| clip(&d.message, 500)).unwrap_or_else(|| format!("HTTP {}", s.as_u16())),
            }
        }
        s => SyncError::Server { status: s.as_u16() },
    })
}

/// At most `max` characters of `text` (never cut inside a character).
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

pub(crate) async fn json_or_error<T: serde::de::DeserializeOwned>(response: Response) -> Result<T, SyncError> {
    let response = check(response).await?;
    let bytes = response.bytes().await.map_err(unreachable)?;
    serde_json::from_slice(&bytes).map_err(|e| SyncError::Protocol(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_refused_for_any_host_but_this_computer() {
        for ok in [
            "https://sync.example.com",
            "https://sync.example.com:8443/",
            "http://127.0.0.1:8787",
            "http://127.9.9.9",
            "http://localhost:8787/",
            "http://LOCALHOST",
            "http://[::1]:8787",
        ] {
            assert!(check_endpoint(ok).is_ok(), "{ok}");
        }
        for bad in
            ["http://sync.example.com", "http://10.0.0.5:8787", "http://[2001:db8::1]", "http://localhost.evil.com"]
        {
            let e = check_endpoint(bad).unwrap_err();
            assert!(matches!(e, SyncError::InsecureTransport(_)), "{bad}");
            assert!(e.to_string().contains("use https://"), "{e}");
            assert!(HttpApi::new(bad, None).is_err(), "no request can be made to {bad}");
        }
        for nonsense in ["sync.example.com", "ftp://sync.example.com", "https://user:pw@sync.example.com", ""] {
            assert!(check_endpoint(nonsense).is_err(), "{nonsense}");
        }
    }

    #[test]
    fn clipping_never_cuts_inside_a_character() {
        let text = "é".repeat(10);
        assert_eq!(clip(&text, 3), "ééé…");
        assert_eq!(clip("short", 10), "short");
    }

    #[test]
    fn an_extra_root_that_is_not_pem_is_a_clear_error() {
        let trust = TlsTrust::default().with_pem(b"not a certificate".to_vec());
        let e = HttpApi::with_trust("https://sync.example.com", None, &trust).unwrap_err();
        assert!(matches!(e, SyncError::Tls(_)), "{e:?}");
    }
}
