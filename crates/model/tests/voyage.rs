//! The Voyage embeddings client against the loopback fake: vectors in order, every request priced in the shared
//! ledger and under the shared budgets, retries, the breaker's errors, a bad reply refused whole, the key never
//! sent elsewhere.

mod support;

use pactwise_domain::usage::{Budget, BudgetPeriod, BudgetSubject, UsageOutcome};
use pactwise_model::fake_voyage::{FakeVoyageServer, VoyageFailure, fake_vector};
use pactwise_model::voyage::{VOYAGE_DIMENSIONS, VOYAGE_MODEL, cost_micros};
use pactwise_model::{ApiKey, InMemoryApiKeySource, InputType, VoyageClient, VoyageConfig, VoyageError};
use std::sync::Arc;
use support::harness;

const VOYAGE_KEY: &str = "pa-voyage-test-SECRET-9191";

async fn voyage(h: &support::Harness, key: Option<&str>) -> (FakeVoyageServer, VoyageClient) {
    let server = FakeVoyageServer::start(VOYAGE_KEY).await.expect("the fake starts");
    let keys = Arc::new(match key {
        Some(key) => InMemoryApiKeySource::with_key(ApiKey::parse(key).unwrap()),
        None => InMemoryApiKeySource::empty(),
    });
    let client = VoyageClient::new(VoyageConfig::default().with_endpoint(server.endpoint()), keys, &h.client)
        .expect("the client builds")
        .with_sleeper(h.sleeper.clone());
    (server, client)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test]
async fn vectors_come_back_in_order_and_every_request_is_priced_in_the_shared_ledger() {
    let h = harness(vec![]).await;
    let (server, client) = voyage(&h, Some(VOYAGE_KEY)).await;
    let texts: Vec<String> =
        (0..200).map(|i| format!("clause {i}: either party may terminate for convenience")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = client.embed(&h.ctx, &refs, InputType::Document).await.unwrap();
    assert_eq!(vectors.len(), 200);
    assert!(vectors.iter().all(|v| v.len() == VOYAGE_DIMENSIONS));
    assert!((dot(&vectors[7], &fake_vector(&texts[7])) - 1.0).abs() < 1e-5, "text 7's own vector, in its place");
    let requests = server.requests();
    assert_eq!(requests.iter().map(|r| r.texts).collect::<Vec<_>>(), [128, 72], "within the API's 128-text limit");
    assert!(requests.iter().all(|r| r.input_type == "document"));

    let query = client.embed(&h.ctx, &["can they walk away early?"], InputType::Query).await.unwrap();
    assert_eq!(query.len(), 1);
    assert_eq!(server.requests().last().unwrap().input_type, "query");

    h.client.flush_ledger().unwrap();
    let records = h.usage.records();
    assert_eq!(records.len(), 3, "one record a request");
    assert!(records.iter().all(|r| r.model == VOYAGE_MODEL && r.outcome == UsageOutcome::Ok && r.org == h.ctx.org));
    let tokens: u32 = texts[..128].iter().map(|t| t.split_whitespace().count() as u32 + 1).sum();
    assert_eq!(records[0].tokens.input, tokens);
    assert_eq!(records[0].cost_micros, cost_micros(u64::from(tokens)));
    assert!(records[0].cost_micros > 0);
}

#[tokio::test]
async fn a_spent_budget_sends_nothing() {
    let h = harness(vec![]).await;
    let (server, client) = voyage(&h, Some(VOYAGE_KEY)).await;
    h.usage.set_budget(Budget {
        org: h.ctx.org,
        subject: BudgetSubject::Organization,
        period: BudgetPeriod::Monthly,
        limit_micros: 0,
    });
    let error = client.embed(&h.ctx, &["text"], InputType::Document).await.unwrap_err();
    assert!(matches!(error, VoyageError::BudgetExhausted { .. }), "{error}");
    assert_eq!(error.code().as_str(), "budget_exhausted");
    assert!(server.requests().is_empty(), "no request sent");
}

#[tokio::test]
async fn server_errors_are_retried_and_each_failed_attempt_is_in_the_ledger() {
    let h = harness(vec![]).await;
    let (server, client) = voyage(&h, Some(VOYAGE_KEY)).await;
    server.fail_next([
        VoyageFailure::Status { status: 500, retry_after: None },
        VoyageFailure::Status { status: 429, retry_after: Some(2) },
    ]);
    let vectors = client.embed(&h.ctx, &["indemnification"], InputType::Document).await.unwrap();
    assert_eq!(vectors.len(), 1);
    assert_eq!(server.requests().iter().map(|r| r.status).collect::<Vec<_>>(), [500, 429, 200]);
    assert_eq!(h.sleeper.waits().last().copied(), Some(std::time::Duration::from_secs(2)), "retry-after honoured");
    h.client.flush_ledger().unwrap();
    let outcomes: Vec<_> = h.usage.records().iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [UsageOutcome::ServerError, UsageOutcome::RateLimited, UsageOutcome::Ok]);
}

#[tokio::test]
async fn a_rejected_key_a_missing_key_and_a_short_reply_fail_clearly_and_keep_nothing() {
    let h = harness(vec![]).await;
    let (server, client) = voyage(&h, Some("pa-some-other-key")).await;
    let error = client.embed(&h.ctx, &["text"], InputType::Document).await.unwrap_err();
    assert!(matches!(error, VoyageError::KeyRejected), "{error}");
    assert!(error.to_string().contains("Settings"), "says what to do: {error}");
    assert_eq!(server.requests().len(), 1, "a rejected key is not retried");

    let (server, client) = voyage(&h, None).await;
    let error = client.embed(&h.ctx, &["text"], InputType::Document).await.unwrap_err();
    assert!(matches!(error, VoyageError::NoApiKey), "{error}");
    assert_eq!(error.code().as_str(), "model_unavailable");
    assert!(!client.has_key().await.unwrap());
    assert!(server.requests().is_empty());

    let (server, client) = voyage(&h, Some(VOYAGE_KEY)).await;
    server.fail_next([VoyageFailure::MissingVector]);
    let error = client.embed(&h.ctx, &["one", "two"], InputType::Document).await.unwrap_err();
    assert!(matches!(error, VoyageError::Malformed(_)), "{error}");
    assert!(error.to_string().contains("1 vectors for 2 texts"), "{error}");
}

#[tokio::test]
async fn the_key_is_never_sent_over_plain_http_to_another_computer() {
    let h = harness(vec![]).await;
    let keys = Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(VOYAGE_KEY).unwrap()));
    let error =
        VoyageClient::new(VoyageConfig::default().with_endpoint("http://10.0.0.7:8080"), keys, &h.client).unwrap_err();
    assert!(matches!(error, VoyageError::EndpointRefused { .. }), "{error}");
    assert!(error.to_string().contains("PACTWISE_VOYAGE_ENDPOINT"), "{error}");
}
