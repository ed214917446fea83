//! The vendor page of PactWise Source (`/source/…`): one small static page, its script and its style, embedded at
//! build time and served with a strict Content Security Policy (this origin only, no inline script or style, no
//! frames, no third-party requests). The page talks to `/api/v1/source/vendor/…` ([`crate::source`]).

use axum::Router;
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("../vendor-page/index.html");
const SCRIPT: &str = include_str!("../vendor-page/app.js");
const STYLE: &str = include_str!("../vendor-page/app.css");

/// The policy every page response carries.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

pub fn routes() -> Router {
    Router::new()
        .route("/source", get(index))
        .route("/source/", get(index))
        .route("/source/invitation", get(index))
        .route("/source/app.js", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/source/app.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(HeaderName::from_static("cross-origin-opener-policy"), HeaderValue::from_static("same-origin"));
    response
}
