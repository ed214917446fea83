//! Transport and authority: TLS served by the service itself (a self-signed certificate the client trusts
//! explicitly; a client that does not trust it is refused), the role table on pushed changes (a reviewer's change
//! to the review thresholds is refused for everyone, with a reason), a synced setting's value checked like on the
//! desktop, approvals decided over the step's eligible roles, sign-in and metrics answers, and parse errors that
//! answer JSON like every other error.

use crate::common::*;
use crate::convergence::device;
use pactwise_domain::{FixedClock, Role};
use pactwise_sync::wire::{ApprovalDecision, PushRequest, RefusalReason, SignInRequest};
use pactwise_sync::{ApprovalView, Change, ChangeBody, DeviceToken, Hlc, HttpApi, SyncError, SyncedModel, TlsTrust};
use pactwise_sync_server::AppState;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use uuid::Uuid;

/// A self-signed certificate for `localhost` and 127.0.0.1, as PEM (certificate, key).
pub fn self_signed() -> (String, String) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    (certified.cert.pem(), certified.signing_key.serialize_pem())
}

/// A TLS server on loopback, its https endpoint and the PEM of its certificate.
async fn tls_server(backend: Backend) -> (Fresh, Org, String, String, tokio::sync::oneshot::Sender<()>) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let (cert, key) = self_signed();
    let dir = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let tls = pactwise_sync_server::load_tls(&cert_file, &key_file).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("https://localhost:{}", listener.local_addr().unwrap().port());
    let state = AppState::new(fresh.storage.clone(), clock, generous());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(pactwise_sync_server::serve_tls(listener, state, tls, async move {
        let _ = stopped.await;
    }));
    (fresh, a, endpoint, cert, stop)
}

fn contract_change(title: &str) -> Change {
    Change {
        id: Uuid::now_v7(),
        model: SyncedModel::Contract,
        record_id: "k-1".into(),
        hlc: Hlc { wall_ms: 1, counter: 0, node: Uuid::now_v7() },
        body: ChangeBody::Fields { fields: [("title".to_string(), json!(title))].into() },
    }
}

fn setting_change(key: &str, value: Value) -> Change {
    Change {
        id: Uuid::now_v7(),
        model: SyncedModel::Setting,
        record_id: key.into(),
        hlc: Hlc { wall_ms: 10, counter: 0, node: Uuid::now_v7() },
        body: ChangeBody::Fields { fields: [("value".to_string(), value)].into() },
    }
}

fn push(changes: Vec<Change>) -> PushRequest {
    PushRequest { idempotency_key: Uuid::now_v7(), changes }
}

async fn the_service_serves_tls_to_a_client_that_trusts_its_certificate_and_to_no_other(backend: Backend) {
    let (_fresh, a, endpoint, cert, _stop) = tls_server(backend).await;
    let trust = TlsTrust::default().with_pem(cert.into_bytes());
    let api = HttpApi::with_trust(&endpoint, Some(DeviceToken::new(&a.tokens[0])), &trust).unwrap();
    let me = api.session().await.unwrap();
    assert_eq!(me.org_name, "alpha Ltd");
    let pushed = api.push(&push(vec![contract_change("over TLS")])).await.unwrap();
    assert_eq!(pushed.results[0].seq, 1);
    assert_eq!(api.pull(0, 10).await.unwrap().changes.len(), 1);

    // Verification is on: a client that does not trust the certificate gets nothing.
    let untrusting = HttpApi::new(&endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let err = untrusting.session().await.unwrap_err();
    assert!(matches!(err, SyncError::Tls(_)), "{err:?}");
    assert!(err.to_string().contains("certificate is not trusted"), "{err}");
    // And nothing reaches a plain http:// address of another computer.
    let err = HttpApi::new("http://sync.example.com", None).unwrap_err();
    assert!(err.to_string().contains("use https://"), "{err}");
}

async fn a_reviewers_change_to_the_review_thresholds_is_refused_for_everyone_with_a_reason(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Admin, Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let admin = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let reviewer = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[1]))).unwrap();

    let thresholds = setting_change("review.thresholds", json!({"critical_min_confidence": 0.95}));
    let answer =
        reviewer.push(&push(vec![thresholds.clone(), contract_change("a reviewer may edit this")])).await.unwrap();
    let refused = answer.results[0].refused.as_ref().expect("the thresholds change is refused");
    assert_eq!(refused.code, "forbidden");
    assert_eq!(
        refused.message,
        "your role (reviewer) cannot change the review thresholds; ask an owner or admin of the organization"
    );
    assert_eq!(answer.results[0].seq, 0, "not stored");
    assert!(answer.results[1].refused.is_none() && answer.results[1].seq == 1, "the rest of the batch is stored");
    let page = admin.pull(0, 10).await.unwrap();
    assert_eq!(page.changes.len(), 1, "nobody receives the refused change");
    assert_eq!(page.changes[0].change.model, SyncedModel::Contract);

    // The same change from an admin is stored; a malformed value is refused even from an admin.
    let ok = push(vec![setting_change("review.thresholds", json!({"critical_min_confidence": 0.95}))]);
    assert!(admin.push(&ok).await.unwrap().results[0].refused.is_none());
    for bad in [json!(1), json!({"max_not_evaluated_share": 1.0})] {
        let answer = admin.push(&push(vec![setting_change("review.thresholds", bad.clone())])).await.unwrap();
        let refused = answer.results[0].refused.as_ref().unwrap_or_else(|| panic!("{bad} was stored"));
        assert_eq!(refused.code, "invalid_input");
    }
    let answer =
        admin.push(&push(vec![setting_change("organization.aliases", json!({"not": "a list"}))])).await.unwrap();
    assert!(answer.results[0].refused.as_ref().unwrap().message.contains("list of names"));
    assert_eq!(counts(fresh.storage.as_ref()).changes, 2);
}

async fn approvals_are_decided_over_the_steps_eligible_roles_so_a_reviewer_may_sign_off_a_report(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer, Role::Approver]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let (reviewer, c1) = device(&server, &a.tokens[0], Arc::new(FixedClock::new(start_time())));
    let (approver, c2) = device(&server, &a.tokens[1], Arc::new(FixedClock::new(start_time())));
    // A report's sign-off (owner, admin, reviewer) and a purchase approval (owner, admin, approver).
    let sign_off = [Role::Owner, Role::Admin, Role::Reviewer];
    reviewer.request_approval_of("report-sign-off", ApprovalDecision::Approve, &sign_off);
    reviewer.request_approval_of("purchase", ApprovalDecision::Approve, &[Role::Owner, Role::Admin, Role::Approver]);
    c1.sync_now(Some(1)).await.unwrap();
    // The reviewer tries again on the purchase, naming roles that would let them: the step keeps its first roles.
    reviewer.request_approval_of("purchase", ApprovalDecision::Approve, &[Role::Reviewer]);
    // The approver may not sign off the report, but may decide the purchase.
    approver.request_approval_of("report-sign-off", ApprovalDecision::Reject, &sign_off);
    approver.request_approval_of("purchase", ApprovalDecision::Approve, &[Role::Owner, Role::Admin, Role::Approver]);
    c1.sync_now(Some(1)).await.unwrap();
    c2.sync_now(Some(1)).await.unwrap();
    c1.sync_now(Some(1)).await.unwrap();

    let me = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap().session().await.unwrap();
    let them = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[1]))).unwrap().session().await.unwrap();
    let signed = reviewer.approval("report-sign-off").unwrap();
    assert_eq!(signed, ApprovalView::Decided { decision: ApprovalDecision::Approve, approver: me.user_id });
    assert_eq!(approver.approval("report-sign-off").unwrap(), signed);
    let purchase = approver.approval("purchase").unwrap();
    assert_eq!(purchase, ApprovalView::Decided { decision: ApprovalDecision::Approve, approver: them.user_id });
    let steps = reviewer.approval_step("purchase").unwrap();
    assert!(
        steps
            .requests
            .values()
            .all(|s| *s == pactwise_sync::RequestState::Refused { reason: RefusalReason::NotEligible }),
        "{steps:?}"
    );
    assert_eq!(counts(fresh.storage.as_ref()).approvals, 2);
}

async fn a_wrong_password_is_answered_with_the_email_or_password_being_wrong(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    for (email, password) in [("user0@alpha.example", "wrong password"), ("nobody@alpha.example", "a-long-password-1")]
    {
        let response = reqwest::Client::new()
            .post(server.url("/api/v1/sign-in"))
            .json(&SignInRequest {
                org: "alpha".into(),
                email: email.into(),
                password: password.into(),
                device_name: "laptop".into(),
            })
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401);
        let body: Value = response.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("email or password is wrong"), "{message}");
        assert!(!message.contains("device token"), "{message}");
    }
}

async fn metrics_need_the_metrics_token_or_a_peer_on_this_computer(backend: Backend) {
    use tower::ServiceExt;
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let config =
        pactwise_sync_server::ServerConfig { metrics_token: Some("a-metrics-token-for-tests".into()), ..generous() };
    // From this computer (a real server on loopback): open.
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config.clone()).await;
    let local = reqwest::get(server.url("/metrics")).await.unwrap();
    assert_eq!(local.status(), 200);
    // From another computer: only with the token.
    let app = pactwise_sync_server::router(AppState::new(fresh.storage.clone(), clock, config))
        .layer(axum::extract::connect_info::MockConnectInfo(std::net::SocketAddr::from(([203, 0, 113, 9], 40_000))));
    let ask = |token: Option<&str>| {
        let mut request = axum::http::Request::get("/metrics");
        if let Some(t) = token {
            request = request.header("authorization", format!("Bearer {t}"));
        }
        app.clone().oneshot(request.body(axum::body::Body::empty()).unwrap())
    };
    let refused = ask(None).await.unwrap();
    assert_eq!(refused.status(), 401);
    let body = axum::body::to_bytes(refused.into_body(), 10_000).await.unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("metrics token"), "{body}");
    assert_eq!(ask(Some("a wrong token")).await.unwrap().status(), 401);
    let allowed = ask(Some("a-metrics-token-for-tests")).await.unwrap();
    assert_eq!(allowed.status(), 200);
    let text = axum::body::to_bytes(allowed.into_body(), 100_000).await.unwrap();
    assert!(String::from_utf8_lossy(&text).contains("pactwise_sync_requests_total"));
}

/// Sends raw bytes on a new connection and reads the whole answer (the server closes after a parse error).
pub async fn raw_exchange(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    // The server may answer and close before the whole request is written; that is fine.
    let _ = stream.write_all(request).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(20), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

async fn headers_too_large_and_urls_too_long_are_answered_with_a_json_error(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let server = TestServer::start(fresh.storage.clone(), clock, generous()).await;
    let huge_header = format!("GET /health HTTP/1.1\r\nhost: x\r\nx-big: {}\r\n\r\n", "a".repeat(600_000));
    let many_headers = format!(
        "GET /health HTTP/1.1\r\nhost: x\r\n{}\r\n",
        (0..200).map(|i| format!("x-h{i}: v\r\n")).collect::<String>()
    );
    let long_url = format!("GET /api/v1/{} HTTP/1.1\r\nhost: x\r\n\r\n", "a".repeat(70_000));
    let not_http = "GET / NOT-HTTP\r\n\r\n".to_string();
    for (request, status, code) in [
        (huge_header, "431", "resource_limit"),
        (many_headers, "431", "resource_limit"),
        (long_url, "414", "resource_limit"),
        (not_http, "400", "invalid_input"),
    ] {
        let answer = raw_exchange(server.addr, request.as_bytes()).await;
        assert!(answer.starts_with(&format!("HTTP/1.1 {status} ")), "{status}: {answer:.200}");
        assert!(answer.to_ascii_lowercase().contains("content-type: application/json"), "{answer:.300}");
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        let body: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body:?}"));
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
    }
    // The server still answers.
    assert_eq!(reqwest::get(server.url("/health")).await.unwrap().status(), 200);
}

async fn a_json_error_with_multibyte_characters_is_answered_not_dropped(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let server = TestServer::start(fresh.storage.clone(), clock, generous()).await;
    let client = reqwest::Client::new();
    // serde's message quotes the unknown field; shifting it byte by byte puts a character across byte 300.
    for shift in 0..4 {
        let field = format!("{}{}", "a".repeat(shift), "é€😀".repeat(120));
        let body = format!("{{\"{field}\": 1}}");
        let response = client
            .post(server.url("/api/v1/sign-in"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("shift {shift}: the connection dropped: {e}"));
        assert_eq!(response.status(), 400, "shift {shift}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_input");
    }
}

crate::both_backends!(
    the_service_serves_tls_to_a_client_that_trusts_its_certificate_and_to_no_other,
    a_reviewers_change_to_the_review_thresholds_is_refused_for_everyone_with_a_reason,
    approvals_are_decided_over_the_steps_eligible_roles_so_a_reviewer_may_sign_off_a_report,
    a_wrong_password_is_answered_with_the_email_or_password_being_wrong,
    metrics_need_the_metrics_token_or_a_peer_on_this_computer,
    headers_too_large_and_urls_too_long_are_answered_with_a_json_error,
    a_json_error_with_multibyte_characters_is_answered_not_dropped,
);
