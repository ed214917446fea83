//! Retries, the circuit breaker, budgets and the usage ledger, against the loopback fake server. No test sleeps:
//! waits go to a recording sleeper that moves a fixed clock.

mod support;

use chrono::Duration as ChronoDuration;
use pactwise_domain::UserId;
use pactwise_domain::usage::{Budget, BudgetPeriod, BudgetSubject, TokenUsage, UsageOutcome, UsageRecord};
use pactwise_model::breaker::BreakerPolicy;
use pactwise_model::fake::{FakeReply, FakeUsage};
use pactwise_model::wire::{Message, MessagesRequest};
use pactwise_model::{BreakerStatus, LedgerPolicy, ModelError, RetryPolicy, Unavailable, UsageLedger};
use std::time::Duration;
use support::{harness, harness_with};

fn hello() -> MessagesRequest {
    MessagesRequest::new(64, vec![Message::user_text("hello")])
}

fn outcomes(h: &support::Harness) -> Vec<UsageOutcome> {
    h.client.flush_ledger().unwrap();
    h.usage.records().iter().map(|r| r.outcome).collect()
}

#[tokio::test]
async fn retryable_failures_are_retried_with_full_jitter_backoff_within_the_caps() {
    let h = harness(vec![FakeReply::error(500), FakeReply::error(529), FakeReply::text("fine")]).await;
    let reply = h.client.send(&h.ctx, hello()).await.unwrap();
    assert_eq!(reply.response.text(), "fine");
    assert_eq!(h.server.message_requests().len(), 3);
    let waits = h.sleeper.waits();
    assert_eq!(waits.len(), 2);
    assert!(waits[0] <= Duration::from_millis(500), "first wait {:?} exceeds its cap", waits[0]);
    assert!(waits[1] <= Duration::from_secs(1), "second wait {:?} exceeds its cap", waits[1]);
    assert_ne!(waits[0], Duration::from_millis(500), "full jitter draws below the cap");
    assert_eq!(outcomes(&h), vec![UsageOutcome::ServerError, UsageOutcome::Overloaded, UsageOutcome::Ok]);
}

#[tokio::test]
async fn retry_after_is_honoured_exactly() {
    let h = harness(vec![FakeReply::error_with_retry_after(429, "7"), FakeReply::text("fine")]).await;
    h.client.send(&h.ctx, hello()).await.unwrap();
    assert_eq!(h.sleeper.waits(), vec![Duration::from_secs(7)]);
    assert_eq!(outcomes(&h), vec![UsageOutcome::RateLimited, UsageOutcome::Ok]);
}

#[tokio::test]
async fn a_retry_after_beyond_the_limit_fails_at_once_as_rate_limited() {
    let h = harness(vec![FakeReply::error_with_retry_after(429, "3600"), FakeReply::text("fine")]).await;
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::RateLimited { retry_after: Some(d) } if d == Duration::from_secs(3600)));
    assert_eq!(error.code().as_str(), "rate_limited");
    assert!(h.sleeper.waits().is_empty());
    assert_eq!(h.server.message_requests().len(), 1);
}

#[tokio::test]
async fn persistent_rate_limits_end_as_rate_limited_after_three_attempts() {
    let h = harness(vec![
        FakeReply::error_with_retry_after(429, "1"),
        FakeReply::error_with_retry_after(429, "1"),
        FakeReply::error_with_retry_after(429, "1"),
        FakeReply::text("never reached"),
    ])
    .await;
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::RateLimited { .. }), "{error:?}");
    assert_eq!(h.sleeper.waits(), vec![Duration::from_secs(1), Duration::from_secs(1)]);
    assert_eq!(h.server.message_requests().len(), 3);
    assert_eq!(h.server.remaining_replies(), 1);
}

#[tokio::test]
async fn server_errors_after_three_attempts_make_the_model_unavailable() {
    let h =
        harness(vec![FakeReply::error(500), FakeReply::error(503), FakeReply::error(500), FakeReply::text("x")]).await;
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::ModelUnavailable(Unavailable::ServerError { status: 500 })), "{error:?}");
    assert_eq!(h.server.message_requests().len(), 3, "no fourth attempt");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let h = harness(vec![FakeReply::error(400), FakeReply::text("x")]).await;
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::Rejected { status: 400, .. }), "{error:?}");
    assert_eq!(h.server.message_requests().len(), 1);
    assert!(h.sleeper.waits().is_empty());
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported_as_unavailable() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let h = harness_with(vec![], |config| config.with_endpoint(endpoint)).await;
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::ModelUnavailable(Unavailable::Network(_))), "{error:?}");
    assert_eq!(h.sleeper.waits().len(), 2);
    assert_eq!(outcomes(&h), vec![UsageOutcome::TransportError; 3]);
}

fn breaker_config(config: pactwise_model::ModelConfig) -> pactwise_model::ModelConfig {
    pactwise_model::ModelConfig {
        breaker: BreakerPolicy { failure_threshold: 3, cool_down: Duration::from_secs(30) },
        retry: RetryPolicy { max_attempts: 3, ..RetryPolicy::default() },
        ..config
    }
}

#[tokio::test]
async fn the_breaker_opens_after_repeated_failures_and_refuses_without_sending() {
    let h =
        harness_with(vec![FakeReply::error(500), FakeReply::error(500), FakeReply::error(500)], breaker_config).await;
    assert!(h.client.send(&h.ctx, hello()).await.is_err());
    assert!(matches!(h.client.breaker_status(), BreakerStatus::Open { .. }));

    h.server.push_replies([FakeReply::text("would succeed")]);
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::ModelUnavailable(Unavailable::BreakerOpen { .. })), "{error:?}");
    assert!(error.should_fall_back());
    assert_eq!(h.server.message_requests().len(), 3, "nothing was sent while open");
}

#[tokio::test]
async fn after_the_cool_down_one_probe_goes_through_and_its_success_closes_the_breaker() {
    let h =
        harness_with(vec![FakeReply::error(500), FakeReply::error(500), FakeReply::error(500)], breaker_config).await;
    assert!(h.client.send(&h.ctx, hello()).await.is_err());
    h.clock.advance(ChronoDuration::seconds(29));
    assert!(matches!(h.client.breaker_status(), BreakerStatus::Open { .. }));
    h.clock.advance(ChronoDuration::seconds(1));
    assert_eq!(h.client.breaker_status(), BreakerStatus::HalfOpen);

    h.server.push_replies([FakeReply::text("back")]);
    let reply = h.client.send(&h.ctx, hello()).await.unwrap();
    assert_eq!(reply.response.text(), "back");
    assert_eq!(h.client.breaker_status(), BreakerStatus::Closed);
}

#[tokio::test]
async fn a_failed_probe_reopens_the_breaker_without_further_attempts() {
    let h =
        harness_with(vec![FakeReply::error(500), FakeReply::error(500), FakeReply::error(500)], breaker_config).await;
    assert!(h.client.send(&h.ctx, hello()).await.is_err());
    h.clock.advance(ChronoDuration::seconds(30));
    h.server.push_replies([FakeReply::error(500), FakeReply::text("not reached")]);
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::ModelUnavailable(Unavailable::BreakerOpen { .. })), "{error:?}");
    assert_eq!(h.server.message_requests().len(), 4, "only the probe went out");
    assert!(matches!(h.client.breaker_status(), BreakerStatus::Open { .. }));
}

fn spent(h: &support::Harness, user: Option<UserId>, cost: i64) {
    h.usage
        .record_batch(&[UsageRecord {
            id: uuid::Uuid::now_v7(),
            org: h.ctx.org,
            user,
            purpose: "earlier".into(),
            model: "claude-haiku-5-5".into(),
            tokens: TokenUsage::default(),
            cost_micros: cost,
            latency_ms: 0,
            outcome: UsageOutcome::Ok,
            at: pactwise_domain::Clock::now(h.clock.as_ref()),
        }])
        .unwrap();
}

#[tokio::test]
async fn an_exhausted_budget_refuses_with_a_rate_limit_error_and_sends_nothing() {
    let h = harness(vec![FakeReply::text("x")]).await;
    h.usage.set_budget(Budget {
        org: h.ctx.org,
        subject: BudgetSubject::Organization,
        period: BudgetPeriod::Monthly,
        limit_micros: 1_000,
    });
    spent(&h, None, 1_000);
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::BudgetExhausted { limit_micros: 1_000, spent_micros: 1_000, .. }), "{error:?}");
    assert_eq!(error.code().as_str(), "budget_exhausted");
    assert!(error.is_rate_limit());
    assert!(h.server.requests().is_empty(), "no request reached the model");

    // Budgets are read on every call: raising it lets the next call through without a restart.
    h.usage.set_budget(Budget {
        org: h.ctx.org,
        subject: BudgetSubject::Organization,
        period: BudgetPeriod::Monthly,
        limit_micros: 5_000,
    });
    assert!(h.client.send(&h.ctx, hello()).await.is_ok());
}

#[tokio::test]
async fn spending_not_yet_flushed_counts_against_a_per_user_budget() {
    let usage = FakeUsage { input_tokens: 1_000, output_tokens: 200, ..FakeUsage::default() }; // 200 µ$
    let h = harness(vec![FakeReply::text("one").with_usage(usage), FakeReply::text("two")]).await;
    h.usage.set_budget(Budget {
        org: h.ctx.org,
        subject: BudgetSubject::EachUser,
        period: BudgetPeriod::Daily,
        limit_micros: 150,
    });
    h.client.send(&h.ctx, hello()).await.unwrap();
    assert_eq!(h.client.unflushed_ledger_records(), 1);
    let error = h.client.send(&h.ctx, hello()).await.unwrap_err();
    assert!(matches!(error, ModelError::BudgetExhausted { spent_micros: 200, .. }), "{error:?}");
    assert_eq!(h.server.message_requests().len(), 1);

    // Another user of the same organization is not held back by this user's budget.
    let other = pactwise_model::CallContext { user: Some(UserId::new()), ..h.ctx.clone() };
    assert!(h.client.send(&other, hello()).await.is_ok());
}

#[tokio::test]
async fn ledger_rows_carry_the_right_cost_after_a_batch_flush() {
    let cached = FakeUsage {
        input_tokens: 1_000,
        output_tokens: 2_000,
        cache_write_5m_tokens: 4_000,
        cache_write_1h_tokens: 0,
        cache_read_tokens: 10_000,
    };
    let long = FakeUsage { input_tokens: 200_000, output_tokens: 1_000, ..FakeUsage::default() };
    let h = harness_with(vec![FakeReply::text("a").with_usage(cached), FakeReply::text("b").with_usage(long)], |c| {
        pactwise_model::ModelConfig {
            ledger: LedgerPolicy { flush_at_count: 2, flush_every: Duration::from_secs(3600) },
            ..c
        }
    })
    .await;
    h.client.send(&h.ctx, hello()).await.unwrap();
    assert!(h.usage.records().is_empty(), "one record waits for its batch");
    h.client.send(&h.ctx, hello()).await.unwrap();
    assert_eq!(h.usage.batch_sizes(), vec![2]);

    let rows = h.usage.records();
    // 1 000 in × $0.10 + 2 000 out × $0.50 + 4 000 5m writes × $0.125 + 10 000 reads × $0.01 per MTok
    // = 100 + 1 000 + 500 + 100 µ$.
    assert_eq!(rows[0].cost_micros, 1_700);
    assert_eq!(
        rows[0].tokens,
        TokenUsage { input: 1_000, output: 2_000, cache_write_5m: 4_000, cache_write_1h: 0, cache_read: 10_000 }
    );
    // 200 000 prompt tokens is over 100k: $0.50 in and $2.50 out per MTok = 100 000 + 2 500 µ$.
    assert_eq!(rows[1].cost_micros, 102_500);
    for row in &rows {
        assert_eq!(row.org, h.ctx.org);
        assert_eq!(row.user, h.ctx.user);
        assert_eq!(row.purpose, "test_purpose");
        assert_eq!(row.model, "claude-haiku-5-5");
        assert_eq!(row.outcome, UsageOutcome::Ok);
    }
}

#[tokio::test]
async fn dropping_the_client_writes_the_waiting_ledger_rows() {
    let h = harness(vec![FakeReply::text("a"), FakeReply::text("b")]).await;
    h.client.send(&h.ctx, hello()).await.unwrap();
    h.client.send(&h.ctx, hello()).await.unwrap();
    assert!(h.usage.records().is_empty());
    let usage = h.usage.clone();
    drop(h);
    assert_eq!(usage.records().len(), 2);
}

#[tokio::test]
async fn the_background_flusher_writes_rows_once_they_are_due() {
    let h = harness(vec![FakeReply::text("a")]).await;
    h.client.send(&h.ctx, hello()).await.unwrap();
    assert!(h.usage.records().is_empty());
    h.clock.advance(ChronoDuration::hours(2)); // past the harness's one-hour flush interval
    let client = std::sync::Arc::new(h.client);
    let flusher = client.spawn_ledger_flusher(Duration::from_secs(60)); // its first tick is immediate
    let written = tokio::time::timeout(Duration::from_secs(10), async {
        while h.usage.records().is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    flusher.abort();
    assert!(written.is_ok(), "the flusher wrote the due row");
    assert_eq!(h.usage.records().len(), 1);
}
