//! The service around the protocol: sign-in with a password, pushes that are idempotent, paged pulls, rate limits,
//! health and metrics, graceful shutdown.

use crate::common::*;
use pactwise_domain::Role;
use pactwise_sync::wire::{Change, ChangeBody, PushRequest, SignInRequest};
use pactwise_sync::{DeviceToken, Hlc, HttpApi, SyncError, SyncedModel};
use pactwise_sync_server::rate::RateConfig;
use pactwise_sync_server::{ServerConfig, admin};
use serde_json::json;
use uuid::Uuid;

fn change(i: usize) -> Change {
    Change {
        id: Uuid::now_v7(),
        model: SyncedModel::Document,
        record_id: format!("d{i}"),
        hlc: Hlc { wall_ms: i as u64 + 1, counter: 0, node: Uuid::nil() },
        body: ChangeBody::Fields { fields: [("title".to_string(), json!(i))].into() },
    }
}

async fn sign_in_with_a_password_issues_a_working_device_token_stored_only_as_a_hash(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let storage = fresh.storage.as_ref();
    let now = start_time();
    blocking(|| {
        admin::create_org(storage, "alpha", "Alpha LLP", now).unwrap();
        admin::create_user(storage, "alpha", "Ann@Alpha.example", "correct horse battery", Role::Approver, now)
            .unwrap();
        let again = admin::create_user(storage, "alpha", "ann@alpha.example", "another password", Role::Viewer, now);
        assert!(again.is_err(), "an email is unique in its organization");
        assert!(admin::create_org(storage, "alpha", "Again", now).is_err());
    });
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let anon = HttpApi::new(&server.endpoint, None).unwrap();
    let request = |password: &str| SignInRequest {
        org: "alpha".into(),
        email: "ann@alpha.example".into(),
        password: password.into(),
        device_name: "Ann's laptop".into(),
    };
    assert_eq!(anon.sign_in(&request("wrong password!")).await.unwrap_err(), SyncError::Unauthenticated);
    let mut unknown = request("correct horse battery");
    unknown.email = "bob@alpha.example".into();
    assert_eq!(anon.sign_in(&unknown).await.unwrap_err(), SyncError::Unauthenticated);
    let signed = anon.sign_in(&request("correct horse battery")).await.unwrap();
    assert_eq!(signed.role, Role::Approver);
    assert_eq!(signed.expires_at, start_time() + chrono::Duration::days(90));
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&signed.token))).unwrap();
    let me = api.session().await.unwrap();
    assert_eq!((me.org_name.as_str(), me.user_id, me.device_id), ("Alpha LLP", signed.user_id, signed.device_id));
    // The token is not in the database; only its hash is.
    let hash = pactwise_sync_server::auth::token_hash(&signed.token);
    blocking(|| {
        assert!(storage.find_device(&hash).unwrap().is_some());
        assert!(storage.find_device(&signed.token).unwrap().is_none());
    });
}

async fn pushes_are_idempotent_and_pulls_page_through_the_log(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let request = PushRequest { idempotency_key: Uuid::now_v7(), changes: (0..25).map(change).collect() };
    let first = api.push(&request).await.unwrap();
    assert!(!first.replayed);
    assert_eq!(first.results.iter().map(|r| r.seq).collect::<Vec<_>>(), (1..=25).collect::<Vec<_>>());
    let again = api.push(&request).await.unwrap();
    assert!(again.replayed);
    assert_eq!(again.results, first.results);
    // The same changes under another key keep their places.
    let other_key = PushRequest { idempotency_key: Uuid::now_v7(), changes: request.changes[..3].to_vec() };
    assert_eq!(api.push(&other_key).await.unwrap().results, first.results[..3].to_vec());
    assert_eq!(counts(fresh.storage.as_ref()).changes, 25);
    let (mut cursor, mut pages, mut seen) = (0, 0, Vec::new());
    loop {
        let page = api.pull(cursor, 10).await.unwrap();
        pages += 1;
        seen.extend(page.changes.iter().map(|c| c.change.id));
        cursor = page.next_cursor;
        if !page.has_more {
            break;
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, request.changes.iter().map(|c| c.id).collect::<Vec<_>>());
    assert!(api.pull(cursor, 10).await.unwrap().changes.is_empty());
}

async fn a_device_over_its_rate_gets_429_with_retry_after_and_the_client_waits_at_least_that(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer, Role::Reviewer]);
    let config = ServerConfig { rate: RateConfig { burst: 5.0, per_second: 0.5 }, ..generous() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    for _ in 0..5 {
        api.pull(0, 10).await.unwrap();
    }
    assert_eq!(api.pull(0, 10).await.unwrap_err(), SyncError::RateLimited { retry_after_s: Some(2) });
    // Another device of the same organization has its own bucket.
    let other = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[1]))).unwrap();
    other.pull(0, 10).await.unwrap();
    clock.advance(chrono::Duration::seconds(2));
    api.pull(0, 10).await.unwrap();
    let metrics = reqwest::get(server.url("/metrics")).await.unwrap().text().await.unwrap();
    assert!(metrics.contains("pactwise_sync_rate_limited_total 1"), "{metrics}");
}

async fn health_and_metrics_answer_and_shutdown_is_graceful(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let health: serde_json::Value = reqwest::get(server.url("/health")).await.unwrap().json().await.unwrap();
    let name = if backend == Backend::Sqlite { "sqlite" } else { "postgres" };
    assert_eq!(health, json!({"status": "ok", "backend": name}));
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    api.push(&PushRequest { idempotency_key: Uuid::now_v7(), changes: vec![change(1), change(2)] }).await.unwrap();
    api.pull(0, 10).await.unwrap();
    let metrics = reqwest::get(server.url("/metrics")).await.unwrap().text().await.unwrap();
    assert!(metrics.contains("pactwise_sync_changes_stored_total 2"), "{metrics}");
    assert!(metrics.contains("pactwise_sync_changes_served_total 2"), "{metrics}");
    assert!(metrics.contains("pactwise_sync_requests_total{class=\"2xx\"}"));
    // Stop: the listener closes; new connections are refused.
    let addr = server.addr;
    drop(server);
    let mut refused = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(refused, "the server stopped listening after shutdown");
}

crate::both_backends!(
    sign_in_with_a_password_issues_a_working_device_token_stored_only_as_a_hash,
    pushes_are_idempotent_and_pulls_page_through_the_log,
    a_device_over_its_rate_gets_429_with_retry_after_and_the_client_waits_at_least_that,
    health_and_metrics_answer_and_shutdown_is_graceful,
    sign_in_attempts_from_one_address_are_rate_limited,
);

async fn sign_in_attempts_from_one_address_are_rate_limited(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let config = ServerConfig { sign_in_rate: RateConfig { burst: 3.0, per_second: 0.1 }, ..generous() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let anon = HttpApi::new(&server.endpoint, None).unwrap();
    let guess = SignInRequest {
        org: "alpha".into(),
        email: "user0@alpha.example".into(),
        password: "guess-guess-guess".into(),
        device_name: "x".into(),
    };
    for _ in 0..3 {
        assert_eq!(anon.sign_in(&guess).await.unwrap_err(), SyncError::Unauthenticated);
    }
    // The fourth guess is refused before the password is even checked, the right password too.
    assert!(matches!(anon.sign_in(&guess).await.unwrap_err(), SyncError::RateLimited { retry_after_s: Some(_) }));
    let mut right = guess.clone();
    right.password = "a-long-password-1".into();
    assert!(matches!(anon.sign_in(&right).await.unwrap_err(), SyncError::RateLimited { .. }));
    clock.advance(chrono::Duration::seconds(10));
    anon.sign_in(&right).await.unwrap();
    assert_eq!(counts(fresh.storage.as_ref()).devices, 2, "the org's token and this sign-in's");
}
