//! Tenant isolation and authentication on every route: a token of organization A never pushes to, pulls from or
//! learns anything about organization B; missing, expired, forged and revoked tokens get 401 and change nothing.

use crate::common::*;
use pactwise_domain::Role;
use pactwise_sync::wire::{Change, ChangeBody, PushRequest, SignInRequest, sha256_hex};
use pactwise_sync::{DeviceToken, Hlc, HttpApi, SyncError, SyncedModel};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

fn change(record: &str, title: &str) -> Change {
    Change {
        id: Uuid::now_v7(),
        model: SyncedModel::Contract,
        record_id: record.to_string(),
        hlc: Hlc { wall_ms: 1, counter: 0, node: Uuid::now_v7() },
        body: ChangeBody::Fields { fields: [("title".to_string(), json!(title))].into() },
    }
}

fn api(server: &TestServer, token: &str) -> HttpApi {
    HttpApi::new(&server.endpoint, Some(DeviceToken::new(token))).unwrap()
}

/// Every authenticated route, with a well-formed request.
fn routes(blob: &str) -> Vec<(Method, String, Option<Value>)> {
    let push =
        serde_json::to_value(PushRequest { idempotency_key: Uuid::now_v7(), changes: vec![change("r", "t")] }).unwrap();
    vec![
        (Method::GET, "/api/v1/session".into(), None),
        (Method::POST, "/api/v1/changes".into(), Some(push)),
        (Method::GET, "/api/v1/changes?since=0".into(), None),
        (Method::PUT, format!("/api/v1/blobs/{}", sha256_hex(b"new file")), None),
        (Method::GET, format!("/api/v1/blobs/{blob}"), None),
        (Method::HEAD, format!("/api/v1/blobs/{blob}"), None),
        (Method::POST, "/api/v1/sign-out".into(), None),
    ]
}

async fn send(
    http: &reqwest::Client,
    server: &TestServer,
    (method, path, body): &(Method, String, Option<Value>),
    auth: Option<&str>,
) -> reqwest::Response {
    let mut req = http.request(method.clone(), server.url(path));
    if let Some(auth) = auth {
        req = req.header("authorization", auth);
    }
    if let Some(body) = body {
        req = req.json(body);
    } else if *method == Method::PUT {
        req = req.body(b"new file".to_vec());
    }
    req.send().await.unwrap()
}

async fn organization_a_never_reaches_organization_b(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let storage = fresh.storage.as_ref();
    let a = org(storage, clock.as_ref(), "alpha", &[Role::Owner]);
    let b = org(storage, clock.as_ref(), "beta", &[Role::Owner]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let (api_a, api_b) = (api(&server, &a.tokens[0]), api(&server, &b.tokens[0]));

    // A stores a change and a file.
    let key = Uuid::now_v7();
    let pushed =
        api_a.push(&PushRequest { idempotency_key: key, changes: vec![change("secret", "A's deal")] }).await.unwrap();
    assert_eq!(pushed.results[0].seq, 1);
    let blob = api_a.upload_blob(b"alpha's contract".to_vec()).await.unwrap();

    // session: each token speaks for its own organization.
    assert_eq!(api_a.session().await.unwrap().org_name, "alpha Ltd");
    assert_eq!(api_b.session().await.unwrap().org_name, "beta Ltd");

    // pull: B sees nothing of A, not even how many changes A has.
    let page = api_b.pull(0, 100).await.unwrap();
    assert!(page.changes.is_empty());
    assert_eq!((page.next_cursor, page.has_more), (0, false));

    // push: B's sequence is its own (starts at 1); A's key means nothing in B.
    let b_push =
        api_b.push(&PushRequest { idempotency_key: key, changes: vec![change("secret", "B's deal")] }).await.unwrap();
    assert!(!b_push.replayed, "an idempotency key is scoped to the organization");
    assert_eq!(b_push.results[0].seq, 1);
    let a_page = api_a.pull(0, 100).await.unwrap();
    assert_eq!(a_page.changes.len(), 1);
    assert_eq!(a_page.changes[0].change.body, change("secret", "A's deal").body);
    let b_page = api_b.pull(0, 100).await.unwrap();
    assert_eq!(b_page.changes.len(), 1);
    assert_eq!(b_page.changes[0].change.body, change("secret", "B's deal").body);

    // blobs: A's file answers B exactly like a file that does not exist.
    assert!(!api_b.has_blob(&blob).await.unwrap());
    let http = reqwest::Client::new();
    let bearer_b = format!("Bearer {}", b.tokens[0]);
    let theirs =
        http.get(server.url(&format!("/api/v1/blobs/{blob}"))).header("authorization", &bearer_b).send().await.unwrap();
    let missing = http
        .get(server.url(&format!("/api/v1/blobs/{}", sha256_hex(b"nothing"))))
        .header("authorization", &bearer_b)
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);
    assert_eq!(theirs.status(), missing.status());
    assert_eq!(theirs.text().await.unwrap(), missing.text().await.unwrap());
    let ranged = http
        .get(server.url(&format!("/api/v1/blobs/{blob}")))
        .header("authorization", &bearer_b)
        .header("range", "bytes=3-")
        .send()
        .await
        .unwrap();
    assert_eq!(ranged.status(), StatusCode::NOT_FOUND);

    // sign-in: A's user cannot sign in to B.
    let signed = HttpApi::new(&server.endpoint, None)
        .unwrap()
        .sign_in(&SignInRequest {
            org: "beta".into(),
            email: "user0@alpha.example".into(),
            password: "a-long-password-1".into(),
            device_name: "x".into(),
        })
        .await;
    assert_eq!(signed.unwrap_err(), SyncError::Unauthenticated);

    // sign-out: B revoking its device leaves A's token working.
    api_b.sign_out().await.unwrap();
    assert_eq!(api_b.session().await.unwrap_err(), SyncError::Unauthenticated);
    assert_eq!(api_a.session().await.unwrap().org_name, "alpha Ltd");
    let c = counts(storage);
    assert_eq!((c.changes, c.blobs), (2, 1));
}

async fn missing_forged_expired_and_revoked_tokens_get_401_on_every_route_and_change_nothing(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let storage = fresh.storage.as_ref();
    let a = org(storage, clock.as_ref(), "alpha", &[Role::Owner, Role::Owner]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let blob = api(&server, &a.tokens[0]).upload_blob(b"kept".to_vec()).await.unwrap();
    let before = counts(storage);
    let http = reqwest::Client::new();

    let mut flipped = a.tokens[0].clone().into_bytes();
    let last = flipped.len() - 1;
    flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
    let flipped = String::from_utf8(flipped).unwrap();
    let forged = format!("pws_{}", "ab".repeat(32));
    let bad_headers: Vec<Option<String>> = vec![
        None,
        Some(String::new()),
        Some("Bearer".into()),
        Some(format!("Bearer {forged}")),
        Some(format!("Bearer {flipped}")),
        Some(format!("Basic {}", a.tokens[0])),
        Some(format!("bearer {}", &a.tokens[0][4..])),
        Some(format!("Bearer {}x", a.tokens[0])),
    ];
    for route in routes(&blob) {
        for header in &bad_headers {
            let response = send(&http, &server, &route, header.as_deref()).await;
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{route:?} with {header:?}");
            if route.0 != Method::HEAD {
                let body: Value = response.json().await.unwrap();
                assert_eq!(body["error"]["code"], "unauthenticated");
            }
        }
    }
    assert_eq!(counts(storage), before);

    // Revoked: sign out the second device; its token is dead on every route.
    api(&server, &a.tokens[1]).sign_out().await.unwrap();
    let before = counts(storage);
    for route in routes(&blob) {
        let response = send(&http, &server, &route, Some(&format!("Bearer {}", a.tokens[1]))).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "revoked token on {route:?}");
    }
    assert_eq!(counts(storage), before);

    // Expired: 31 days later the 30-day token no longer works anywhere.
    assert_eq!(api(&server, &a.tokens[0]).session().await.unwrap().org_name, "alpha Ltd");
    clock.advance(chrono::Duration::days(31));
    for route in routes(&blob) {
        let response = send(&http, &server, &route, Some(&format!("Bearer {}", a.tokens[0]))).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "expired token on {route:?}");
    }
    assert_eq!(counts(storage), before);
}

async fn a_viewer_cannot_push_or_upload(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Viewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let viewer = api(&server, &a.tokens[0]);
    let err = viewer.push(&PushRequest { idempotency_key: Uuid::now_v7(), changes: vec![change("r", "t")] }).await;
    assert!(matches!(err, Err(SyncError::Rejected { ref code, .. }) if code == "forbidden"), "{err:?}");
    let err = viewer.upload_blob(b"x".to_vec()).await;
    assert!(matches!(err, Err(SyncError::Rejected { ref code, .. }) if code == "forbidden"), "{err:?}");
    assert!(viewer.pull(0, 10).await.unwrap().changes.is_empty());
    let c = counts(fresh.storage.as_ref());
    assert_eq!((c.changes, c.blobs), (0, 0));
}

crate::both_backends!(
    organization_a_never_reaches_organization_b,
    missing_forged_expired_and_revoked_tokens_get_401_on_every_route_and_change_nothing,
    a_viewer_cannot_push_or_upload,
);
