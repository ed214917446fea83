//! A seeded run of 1,000 malformed requests (bad JSON, wrong types, unknown fields and models, huge bodies, unknown
//! API versions, bad queries, bad blob names and hashes, wrong methods and content types): every one gets a 4xx
//! with a structured error, and nothing is stored.

use crate::common::*;
use pactwise_domain::Role;
use pactwise_sync::wire::{ErrorBody, sha256_hex};
use pactwise_sync_server::ServerConfig;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

const JSON_LIMIT: usize = 256 * 1024;

fn valid_change() -> Value {
    json!({
        "id": Uuid::now_v7(),
        "model": "contract",
        "record_id": "k-1",
        "hlc": {"wall_ms": 1, "counter": 0, "node": Uuid::nil()},
        "body": {"kind": "fields", "fields": {"title": "x"}}
    })
}

fn push_with(change: Value) -> Value {
    json!({"idempotency_key": Uuid::now_v7(), "changes": [change]})
}

/// One malformed request: method, path, content type, body.
fn malformed(rng: &mut StdRng) -> (Method, String, &'static str, Vec<u8>) {
    let json = "application/json";
    let j = |v: Value| serde_json::to_vec(&v).unwrap();
    match rng.random_range(0..16) {
        0 => {
            // Truncated or corrupted JSON.
            let mut body = j(push_with(valid_change()));
            let cut = rng.random_range(1..body.len() - 1);
            body.truncate(cut);
            (Method::POST, "/api/v1/changes".into(), json, body)
        }
        1 => {
            let mut body = vec![0u8; rng.random_range(1..200)];
            rng.fill(&mut body[..]);
            (Method::POST, "/api/v1/changes".into(), json, body)
        }
        2 => {
            let wrong = [
                json!({"idempotency_key": 5, "changes": []}),
                json!({"idempotency_key": Uuid::now_v7(), "changes": "all"}),
                json!({"idempotency_key": "not-a-uuid", "changes": [valid_change()]}),
                json!([1, 2, 3]),
                json!("push"),
                json!(null),
                json!({}),
            ];
            (Method::POST, "/api/v1/changes".into(), json, j(wrong[rng.random_range(0..wrong.len())].clone()))
        }
        3 => {
            // A change with one field of the wrong type or value.
            let mut c = valid_change();
            match rng.random_range(0..7) {
                0 => c["hlc"]["wall_ms"] = json!("soon"),
                1 => c["hlc"]["counter"] = json!(-1),
                2 => c["model"] = json!("payroll"),
                3 => c["body"]["kind"] = json!("merge"),
                4 => c["id"] = json!(42),
                5 => c["record_id"] = json!(["k"]),
                _ => c["body"] = json!({"kind": "event", "event": {"x": 1}}), // an event on a last-writer-wins model
            }
            (Method::POST, "/api/v1/changes".into(), json, j(push_with(c)))
        }
        4 => {
            // Unknown fields anywhere: nothing may smuggle in an organization.
            let mut push = push_with(valid_change());
            match rng.random_range(0..3) {
                0 => push["org_id"] = json!(Uuid::now_v7()),
                1 => push["changes"][0]["org"] = json!("beta"),
                _ => push["changes"][0]["hlc"]["tenant"] = json!(1),
            }
            (Method::POST, "/api/v1/changes".into(), json, j(push))
        }
        5 => {
            // Huge bodies: past the request limit, or one change past the per-change limit.
            if rng.random_bool(0.5) {
                let pad = "x".repeat(JSON_LIMIT + rng.random_range(1..JSON_LIMIT));
                let mut c = valid_change();
                c["body"]["fields"]["title"] = json!(pad);
                (Method::POST, "/api/v1/changes".into(), json, j(push_with(c)))
            } else {
                let mut c = valid_change();
                c["body"]["fields"]["title"] = json!("y".repeat(70 * 1024));
                (Method::POST, "/api/v1/changes".into(), json, j(push_with(c)))
            }
        }
        6 => {
            let paths = [
                "/api/v2/changes",
                "/api/v0/changes",
                "/api/changes",
                "/v1/changes",
                "/api/v1.1/changes",
                "/api/V1/changes",
            ];
            (Method::POST, paths[rng.random_range(0..paths.len())].into(), json, j(push_with(valid_change())))
        }
        7 => {
            let queries = [
                "",
                "?since=-1",
                "?since=abc",
                "?since=0&limit=0",
                "?since=0&limit=100000",
                "?since=0&org=beta",
                "?limit=5",
                "?since=99999999999999999999999",
            ];
            (Method::GET, format!("/api/v1/changes{}", queries[rng.random_range(0..queries.len())]), json, vec![])
        }
        8 => (Method::POST, "/api/v1/changes".into(), "text/plain", j(push_with(valid_change()))),
        9 => {
            let bodies = [
                json!({"org": "alpha", "email": "user0@alpha.example"}),
                json!({"org": 1, "email": "e", "password": "p", "device_name": "d"}),
                json!({"org": "", "email": "", "password": "", "device_name": ""}),
                json!({"org": "alpha", "email": "user0@alpha.example", "password": "a-long-password-1", "device_name": "d", "role": "owner"}),
                json!({"org": "alpha", "email": "x".repeat(5000), "password": "p", "device_name": "d"}),
            ];
            (Method::POST, "/api/v1/sign-in".into(), json, j(bodies[rng.random_range(0..bodies.len())].clone()))
        }
        10 => {
            let names = [
                "abc".to_string(),
                sha256_hex(b"x").to_uppercase(),
                "../../etc/passwd".into(),
                "0".repeat(63),
                "g".repeat(64),
            ];
            (
                Method::PUT,
                format!("/api/v1/blobs/{}", names[rng.random_range(0..names.len())]),
                "application/octet-stream",
                b"x".to_vec(),
            )
        }
        11 => {
            // Bytes that do not hash to the name, or no bytes at all.
            let body = if rng.random_bool(0.5) { b"other bytes".to_vec() } else { vec![] };
            (Method::PUT, format!("/api/v1/blobs/{}", sha256_hex(b"named bytes")), "application/octet-stream", body)
        }
        12 => {
            let methods = [Method::DELETE, Method::PATCH, Method::PUT];
            (
                methods[rng.random_range(0..methods.len())].clone(),
                "/api/v1/changes".into(),
                json,
                j(push_with(valid_change())),
            )
        }
        13 => {
            // An empty push, or one with more changes than allowed.
            let changes: Vec<Value> =
                if rng.random_bool(0.5) { vec![] } else { (0..1001).map(|_| valid_change()).collect() };
            (
                Method::POST,
                "/api/v1/changes".into(),
                json,
                j(json!({"idempotency_key": Uuid::now_v7(), "changes": changes})),
            )
        }
        14 => {
            let mut c = valid_change();
            match rng.random_range(0..3) {
                0 => c["record_id"] = json!(""),
                1 => c["record_id"] = json!("r".repeat(201)),
                _ => c["body"]["fields"] = json!({}),
            }
            (Method::POST, "/api/v1/changes".into(), json, j(push_with(c)))
        }
        _ => (Method::GET, format!("/api/v1/blobs/{}", sha256_hex(b"absent")), json, vec![]),
    }
}

async fn a_thousand_malformed_requests_all_get_4xx_and_store_nothing(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Owner]);
    let config = ServerConfig { json_limit: JSON_LIMIT, ..generous() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let before = counts(fresh.storage.as_ref());
    let http = reqwest::Client::new();
    let mut rng = StdRng::seed_from_u64(0x5eed_0012);
    let mut seen = std::collections::BTreeMap::new();
    for i in 0..1_000 {
        let (method, path, content_type, body) = malformed(&mut rng);
        let response = http
            .request(method.clone(), server.url(&path))
            .header("authorization", format!("Bearer {}", a.tokens[0]))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status();
        assert!(status.is_client_error(), "request {i}: {method} {path} got {status}");
        let text = response.text().await.unwrap();
        let error: ErrorBody =
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("request {i}: {method} {path}: {text}"));
        assert!(!error.error.code.is_empty() && !error.error.message.is_empty());
        for leak in ["SQL", "sqlite", "postgres", "panicked", "/src/", "constraint"] {
            assert!(!text.contains(leak), "request {i} leaks {leak:?}: {text}");
        }
        *seen.entry(status.as_u16()).or_insert(0) += 1;
    }
    assert_eq!(counts(fresh.storage.as_ref()), before, "nothing stored");
    // The run covers the kinds of refusal it claims to.
    for status in [400, 404, 405, 413, 415] {
        assert!(seen.contains_key(&status), "no {status} in {seen:?}");
    }
}

/// One raw HTTP/1.1 exchange on `stream`: write the parts in order, read one response (status, headers, body).
async fn exchange(stream: &mut tokio::net::TcpStream, parts: &[&[u8]]) -> (u16, String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for part in parts {
        stream.write_all(part).await.unwrap();
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the server closed the connection before answering: {:?}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
    };
    let headers = String::from_utf8(buf[..head_end].to_vec()).unwrap().to_ascii_lowercase();
    let status: u16 = headers[9..12].parse().unwrap();
    let length: usize =
        headers.lines().find_map(|l| l.strip_prefix("content-length:")).map(|v| v.trim().parse().unwrap()).unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "the server closed the connection in the middle of a response");
        buf.extend_from_slice(&chunk[..n]);
    }
    (status, headers, String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned())
}

/// A request refused before its body was read (wrong content type, a method the route does not take, a body over the
/// limit) still leaves the connection usable: the server reads and discards the rest of the body instead of closing
/// the connection under a client that was told it could keep it. (A keep-alive client that reused such a connection
/// used to fail now and then with "connection closed before message completed".) A body too large to discard is
/// answered with `connection: close`, so no client reuses that connection.
async fn a_refused_body_leaves_the_connection_usable(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Owner]);
    let config = ServerConfig { json_limit: JSON_LIMIT, ..generous() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let auth = format!("authorization: Bearer {}\r\n", a.tokens[0]);
    let health = "GET /health HTTP/1.1\r\nhost: t\r\n\r\n";

    // Only the first part of the body has arrived when the server refuses it; the rest follows the answer.
    let body = vec![b'x'; 100_000];
    let head = format!(
        "POST /api/v1/changes HTTP/1.1\r\nhost: t\r\n{auth}content-type: text/plain\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let (status, headers, text) = exchange(&mut stream, &[head.as_bytes(), &body[..1_000]]).await;
    assert_eq!(status, 415, "{text}");
    assert!(!headers.contains("connection: close"), "{headers}");
    let (status, _, text) = exchange(&mut stream, &[&body[1_000..], health.as_bytes()]).await;
    assert_eq!(status, 200, "the connection still serves requests after a refused body: {text}");

    // A method the route does not take, then a body over the limit, on the same connection.
    let head = format!("PATCH /api/v1/changes HTTP/1.1\r\nhost: t\r\n{auth}content-length: {}\r\n\r\n", body.len());
    let (status, _, text) = exchange(&mut stream, &[head.as_bytes(), &body[..10]]).await;
    assert_eq!(status, 405, "{text}");
    let big = vec![b' '; JSON_LIMIT + 10_000];
    let head = format!(
        "POST /api/v1/changes HTTP/1.1\r\nhost: t\r\n{auth}content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        big.len()
    );
    let (status, _, text) = exchange(&mut stream, &[&body[10..], head.as_bytes(), &big]).await;
    assert_eq!(status, 413, "{text}");
    let (status, _, _) = exchange(&mut stream, &[health.as_bytes()]).await;
    assert_eq!(status, 200);

    // A body larger than the server will discard (a client sending 1 GiB): answered once the limit is passed, and the
    // connection is closed, not reused.
    let head = format!(
        "POST /api/v1/changes HTTP/1.1\r\nhost: t\r\n{auth}content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        1usize << 30
    );
    let (status, headers, text) = exchange(&mut stream, &[head.as_bytes(), &big]).await;
    assert_eq!(status, 413, "{text}");
    assert!(headers.contains("connection: close"), "{headers}");
    serde_json::from_str::<ErrorBody>(&text).unwrap();
}

crate::both_backends!(
    a_thousand_malformed_requests_all_get_4xx_and_store_nothing,
    a_refused_body_leaves_the_connection_usable
);
