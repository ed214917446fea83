//! The API key never appears in logs, errors or debug output. This test is alone in its binary and installs a
//! global subscriber, so every event of every thread is captured (scoped subscribers miss events when other tests
//! run in parallel).

mod support;

use pactwise_model::fake::FakeReply;
use pactwise_model::wire::{Message, MessagesRequest};
use pactwise_model::{ApiKey, ApiKeySource, ModelError, Unavailable};
use std::sync::{Arc, Mutex};
use support::{KEY, harness};

/// A `Write` that appends to a shared buffer, for capturing log output.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_api_key_never_appears_in_logs_errors_or_debug_output() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber in this binary");

    let h = harness(vec![FakeReply::error(500), FakeReply::text("fine"), FakeReply::text("unused")]).await;
    let hello = || MessagesRequest::new(32, vec![Message::user_text("hello")]);
    let reply = h.client.send(&h.ctx, hello()).await.unwrap();
    // A key the fake does not accept: the rejection path logs too.
    let wrong = "sk-ant-test-WRONG-also-secret-7777";
    h.keys.set(&ApiKey::parse(wrong).unwrap()).unwrap();
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::ModelUnavailable(Unavailable::KeyRejected(_))), "{error:?}");
    h.client.flush_ledger().unwrap();

    let logs = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("model request finished"), "the capture works: {logs}");
    assert!(logs.contains("retrying"), "the retry was logged: {logs}");
    let mut seen = vec![
        logs,
        format!("{:?}", h.client),
        format!("{error} {error:?}"),
        format!("{reply:?}"),
        format!("{:?}", h.keys),
        format!("{:?}", h.usage.records()),
        serde_json::to_string(&h.server.requests()).unwrap(),
    ];
    seen.push(format!("{:?}", h.client.config()));
    for text in &seen {
        assert!(!text.contains(KEY), "the key leaked into: {text}");
        assert!(!text.contains(wrong), "the wrong key leaked into: {text}");
        assert!(!text.contains("SECRET"), "part of the key leaked into: {text}");
    }
}
