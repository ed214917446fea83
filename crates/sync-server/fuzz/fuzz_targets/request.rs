//! Any bytes as a request (method, path, headers, body) to the real router over SQLite: the service must answer
//! with a status below 500 and never panic.
#![no_main]

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use pactwise_domain::SystemClock;
use pactwise_sync_server::{AppState, ServerConfig, router, sqlite::SqliteStorage};
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;

struct Target {
    runtime: tokio::runtime::Runtime,
    app: axum::Router,
    _dir: tempfile::TempDir,
}

fn target() -> &'static Target {
    static TARGET: OnceLock<Target> = OnceLock::new();
    TARGET.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
        let state = AppState::new(storage, Arc::new(SystemClock), ServerConfig::default());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        Target { runtime, app: router(state), _dir: dir }
    })
}

fuzz_target!(|data: &[u8]| {
    let methods = ["GET", "POST", "PUT", "HEAD", "DELETE", "PATCH"];
    let Some((&first, rest)) = data.split_first() else { return };
    let mut parts = rest.splitn(4, |b| *b == 0xff);
    let path = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let name = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let value = parts.next().unwrap_or_default();
    let body = parts.next().unwrap_or_default().to_vec();
    let mut request = Request::builder().method(methods[first as usize % methods.len()]).uri(format!("/{path}"));
    if !name.is_empty() {
        request = request.header(name.as_ref(), value);
    }
    let Ok(request) = request.body(Body::from(body)) else { return };
    let t = target();
    let response = t.runtime.block_on(t.app.clone().oneshot(request)).unwrap();
    assert!(response.status().as_u16() < 500, "{}", response.status());
});
