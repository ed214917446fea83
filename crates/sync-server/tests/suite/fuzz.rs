//! A seeded fuzz run of the service's request parsing against the real router on loopback: a few thousand
//! requests whose methods, paths, queries, headers and bodies are mutated (multibyte characters, control bytes,
//! truncations, byte flips, deep nesting, huge numbers, bad ranges and tokens). Every request must be answered —
//! a 2xx or a 4xx with a JSON error (or an empty 2xx/206/HEAD answer) — never a 5xx, a dropped connection or a
//! panic. The seed is fixed, so a failure is reproduced by running the test again.

use crate::common::*;
use crate::security::raw_exchange;
use pactwise_domain::Role;
use pactwise_sync::wire::sha256_hex;
use pactwise_sync_server::ServerConfig;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use uuid::Uuid;

const ODD: &[&str] = &[
    "é",
    "€",
    "😀",
    "ü",
    "\u{0}",
    "\u{7f}",
    "\u{202e}",
    "%",
    "%2F",
    "%ZZ",
    "%00",
    "..",
    "//",
    "\\",
    "?",
    "#",
    "&",
    "=",
    ";",
    "'",
    "\"",
    " ",
    "\t",
    "{",
    "}",
    "[",
    "]",
    "\u{feff}",
    "ſ",
    "İ",
    "🏳️‍🌈",
];

fn pick<'a>(rng: &mut StdRng, items: &'a [&'a str]) -> &'a str {
    items[rng.random_range(0..items.len())]
}

/// Inserts odd characters, deletes or repeats pieces of a text (always valid UTF-8).
fn mutate_text(rng: &mut StdRng, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..rng.random_range(1..6) {
        let at = rng.random_range(0..=chars.len());
        match rng.random_range(0..4) {
            0 => {
                let odd: Vec<char> = pick(rng, ODD).chars().collect();
                chars.splice(at..at, odd);
            }
            1 if !chars.is_empty() => {
                let end = (at + rng.random_range(1..20)).min(chars.len());
                chars.drain(at.min(end)..end);
            }
            2 => {
                let repeat: Vec<char> = pick(rng, ODD).chars().cycle().take(rng.random_range(1..400)).collect();
                chars.splice(at..at, repeat);
            }
            _ => {}
        }
    }
    chars.into_iter().collect()
}

/// Flips, cuts or splices raw bytes (the result may not be UTF-8).
fn mutate_bytes(rng: &mut StdRng, bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..rng.random_range(1..5) {
        if out.is_empty() {
            out.push(rng.random());
            continue;
        }
        let at = rng.random_range(0..out.len());
        match rng.random_range(0..5) {
            0 => out[at] ^= 1 << rng.random_range(0..8),
            1 => out.truncate(at),
            2 => {
                let odd = pick(rng, ODD).as_bytes().to_vec();
                out.splice(at..at, odd);
            }
            3 => out.insert(at, rng.random_range(0x80..=0xff)),
            _ => {
                let depth = rng.random_range(100..5_000);
                let nest = "[".repeat(depth).into_bytes();
                out.splice(at..at, nest);
            }
        }
    }
    out
}

fn body(rng: &mut StdRng) -> Vec<u8> {
    let change = json!({
        "id": Uuid::now_v7(), "model": "contract", "record_id": "k-1",
        "hlc": {"wall_ms": 1, "counter": 0, "node": Uuid::nil()},
        "body": {"kind": "fields", "fields": {"title": "x"}}
    });
    let samples = [
        json!({"idempotency_key": Uuid::now_v7(), "changes": [change]}),
        json!({"org": "alpha", "email": "user0@alpha.example", "password": "pw", "device_name": "laptop"}),
        json!({"idempotency_key": Uuid::now_v7(), "changes": [{"id": Uuid::now_v7(), "model": "setting",
            "record_id": "review.thresholds", "hlc": {"wall_ms": 2, "counter": 0, "node": Uuid::nil()},
            "body": {"kind": "fields", "fields": {"value": {"ocr_min_confidence": 1e308}}}}]}),
        json!({"idempotency_key": Uuid::now_v7(), "changes": [{"id": Uuid::now_v7(), "model": "approval_decision",
            "record_id": "s", "hlc": {"wall_ms": 3, "counter": 0, "node": Uuid::nil()},
            "body": {"kind": "approval_request", "decision": "approve", "note": "ok", "eligible_roles": ["owner"]}}]}),
    ];
    let sample = serde_json::to_string(&samples[rng.random_range(0..samples.len())]).unwrap();
    match rng.random_range(0..4) {
        0 => sample.into_bytes(),
        1 => mutate_text(rng, &sample).into_bytes(),
        2 => mutate_bytes(rng, sample.as_bytes()),
        _ => (0..rng.random_range(0..300)).map(|_| rng.random()).collect(),
    }
}

fn path(rng: &mut StdRng, blob: &str) -> String {
    let base = [
        "/api/v1/sign-in".to_string(),
        "/api/v1/sign-out".to_string(),
        "/api/v1/session".to_string(),
        "/api/v1/changes".to_string(),
        format!("/api/v1/changes?since={}&limit={}", rng.random_range(0..5), rng.random_range(0..2_000)),
        format!("/api/v1/blobs/{blob}"),
        format!("/api/v1/blobs/{}", sha256_hex(b"missing")),
        "/health".to_string(),
        "/metrics".to_string(),
        "/".to_string(),
    ];
    let chosen = base[rng.random_range(0..base.len())].clone();
    if rng.random_bool(0.5) {
        return chosen;
    }
    // Keep it a request-target hyper will read (no spaces or controls); percent-encode the rest.
    mutate_text(rng, &chosen)
        .chars()
        .map(|c| if c.is_ascii_graphic() { c.to_string() } else { format!("%{:02X}", (c as u32) & 0xff) })
        .collect()
}

fn request(rng: &mut StdRng, token: &str, blob: &str) -> Vec<u8> {
    let method = pick(rng, &["GET", "POST", "PUT", "HEAD", "DELETE", "PATCH", "OPTIONS", "GET", "POST", "BREW"]);
    let mut head = format!("{method} {} HTTP/1.1\r\nhost: localhost\r\n", path(rng, blob));
    let auth = match rng.random_range(0..5) {
        0 => None,
        1 | 2 => Some(format!("Bearer {token}")),
        3 => Some(format!("Bearer {}", mutate_text(rng, token))),
        _ => Some(mutate_text(rng, "Bearer x")),
    };
    let content_type = match rng.random_range(0..4) {
        0 => None,
        1 | 2 => Some("application/json".to_string()),
        _ => Some(mutate_text(rng, "application/json")),
    };
    let range = rng.random_bool(0.2).then(|| mutate_text(rng, "bytes=3-"));
    for (name, value) in [("authorization", auth), ("content-type", content_type), ("range", range)] {
        // A header value may hold any byte but CR, LF and NUL.
        if let Some(v) = value.map(|v| v.replace(['\r', '\n', '\0'], "")) {
            head.push_str(&format!("{name}: {v}\r\n"));
        }
    }
    if rng.random_bool(0.2) {
        let name: String = (0..rng.random_range(1..30)).map(|_| rng.random_range(b'a'..=b'z') as char).collect();
        head.push_str(&format!("x-{name}: {}\r\n", mutate_text(rng, "value").replace(['\r', '\n', '\0'], "")));
    }
    let body = if matches!(method, "GET" | "HEAD") && rng.random_bool(0.8) { Vec::new() } else { body(rng) };
    head.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", body.len()));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&body);
    bytes
}

async fn mutated_requests_are_all_answered_and_never_drop_the_connection(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Owner]);
    // Generous per device; sign-in keeps its real limit, so most sign-ins are answered 429 quickly.
    let config = ServerConfig { rate: generous().rate, json_limit: 256 * 1024, ..ServerConfig::default() };
    let server = TestServer::start(fresh.storage.clone(), clock, config).await;
    let blob = b"a stored file".to_vec();
    let http = pactwise_sync::HttpApi::new(&server.endpoint, Some(pactwise_sync::DeviceToken::new(&a.tokens[0])));
    let blob_name = http.unwrap().upload_blob(blob).await.unwrap();
    let runs = if backend == Backend::Sqlite { 3_000 } else { 1_000 };
    let mut rng = StdRng::seed_from_u64(0x5eed_f022);
    let mut statuses = std::collections::BTreeMap::<u16, u32>::new();
    for i in 0..runs {
        let bytes = request(&mut rng, &a.tokens[0], &blob_name);
        let answer = raw_exchange(server.addr, &bytes).await;
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
        assert!(!answer.is_empty(), "request {i} got no answer (dropped connection): {shown:?}");
        let status: u16 = answer
            .strip_prefix("HTTP/1.1 ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("request {i}: not an HTTP answer: {answer:.200}"));
        assert!((200..300).contains(&status) || (400..500).contains(&status), "request {i} got {status}: {shown:?}");
        let head_end = answer.find("\r\n\r\n").unwrap_or(answer.len());
        let head = answer[..head_end].to_ascii_lowercase();
        if status >= 400 && !bytes.starts_with(b"HEAD ") {
            assert!(
                head.contains("content-type: application/json"),
                "request {i}: {status} without JSON: {answer:.300}"
            );
            let body = answer.get(head_end + 4..).unwrap_or_default();
            let parsed: serde_json::Value = serde_json::from_str(body)
                .unwrap_or_else(|_| panic!("request {i}: {status} body is not JSON: {body:?}"));
            assert!(parsed["error"]["code"].is_string(), "request {i}: {parsed}");
        }
        *statuses.entry(status).or_default() += 1;
    }
    // The run reached past the parsers: some requests succeeded, many were refused in different ways.
    assert!(statuses.keys().any(|s| *s < 300), "{statuses:?}");
    assert!(statuses.keys().filter(|s| **s >= 400).count() >= 5, "{statuses:?}");
    // And the service still works.
    assert_eq!(reqwest::get(server.url("/health")).await.unwrap().status(), 200);
}

crate::both_backends!(mutated_requests_are_all_answered_and_never_drop_the_connection);
