//! A computer without trusted root certificates (a minimal Debian without ca-certificates): no HTTPS client can be
//! built, and the model client says so instead of failing the app's start. Its own test binary: it points the
//! certificate lookup at an empty folder for the whole process.
#![allow(unsafe_code)] // `std::env::set_var`, before anything else in this one-test binary reads the environment.

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, OrgId};
use pactwise_model::wire::{Message, MessagesRequest};
use pactwise_model::{
    ApiKey, CallContext, InMemoryApiKeySource, InMemoryUsage, ModelClient, ModelConfig, ModelError, ModelStatus,
    Unavailable,
};
use std::sync::Arc;

#[tokio::test]
async fn without_root_certificates_the_model_is_offline_with_the_reason_and_nothing_is_sent() {
    let empty = tempfile::tempdir().unwrap();
    // SAFETY: this test binary holds only this test, and nothing else runs yet that reads the environment.
    unsafe {
        std::env::set_var("SSL_CERT_FILE", empty.path().join("none.pem"));
        std::env::set_var("SSL_CERT_DIR", empty.path());
    }
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 12, 3, 9, 0, 0).unwrap()));
    let usage = Arc::new(InMemoryUsage::new());
    let keys = Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse("sk-ant-api03-test-key-0123456789").unwrap()));
    let client = ModelClient::new(ModelConfig::default(), keys, usage.clone(), usage.clone(), clock)
        .expect("the client is built without a secure connection and says so");
    assert_eq!(client.status().await, ModelStatus::NoSecureConnection);
    let request = MessagesRequest::new(64, vec![Message::user_text("hello")]);
    let error = client.send(&CallContext::new(OrgId::new(), None, "test"), request).await.unwrap_err();
    assert!(matches!(error, ModelError::ModelUnavailable(Unavailable::NoSecureConnection(_))), "{error:?}");
    assert!(error.to_string().contains("install the ca-certificates package"), "{error}");
    assert!(usage.records().is_empty(), "nothing was sent, so nothing was priced");
}
