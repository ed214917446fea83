//! A model client wired to a fresh fake server, an in-memory ledger and budget store, a fixed clock and a sleeper
//! that records waits instead of sleeping.

#![allow(dead_code)]

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, OrgId, UserId};
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeScript};
use pactwise_model::{
    ApiKey, CallContext, InMemoryApiKeySource, InMemoryUsage, LedgerPolicy, ModelClient, ModelConfig, RecordingSleeper,
    SeededJitter,
};
use std::sync::Arc;
use std::time::Duration;

pub const KEY: &str = "sk-ant-test-SECRET-never-logged-4242";

pub struct Harness {
    pub server: FakeModelServer,
    pub client: ModelClient,
    pub usage: Arc<InMemoryUsage>,
    pub keys: Arc<InMemoryApiKeySource>,
    pub clock: Arc<FixedClock>,
    pub sleeper: Arc<RecordingSleeper>,
    pub ctx: CallContext,
}

pub async fn harness(replies: Vec<FakeReply>) -> Harness {
    harness_with(replies, |config| config).await
}

pub async fn harness_with(replies: Vec<FakeReply>, configure: impl FnOnce(ModelConfig) -> ModelConfig) -> Harness {
    let server = FakeModelServer::start(FakeScript { api_key: Some(KEY.to_string()), ..FakeScript::new(replies) })
        .await
        .expect("the fake server starts");
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    let sleeper = Arc::new(RecordingSleeper::advancing(clock.clone()));
    let usage = Arc::new(InMemoryUsage::new());
    let keys = Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap()));
    let mut config = ModelConfig::default().with_endpoint(server.endpoint());
    config.ledger = LedgerPolicy { flush_at_count: 1000, flush_every: Duration::from_secs(3600) };
    let config = configure(config);
    let client = ModelClient::new(config, keys.clone(), usage.clone(), usage.clone(), clock.clone())
        .expect("the client builds")
        .with_sleeper(sleeper.clone())
        .with_jitter(Arc::new(SeededJitter::new(42)));
    let ctx = CallContext::new(OrgId::new(), Some(UserId::new()), "test_purpose");
    Harness { server, client, usage, keys, clock, sleeper, ctx }
}
