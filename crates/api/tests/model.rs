//! The model gateway wired to the store: requests made through the app's one client are priced into the store's
//! usage ledger, and a budget set in the store stops the next request before it is sent.

use pactwise_api::{Api, ApiOptions, ModelAvailability};
use pactwise_domain::ErrorCode;
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeScript};
use pactwise_model::wire::{Message, MessagesRequest};
use pactwise_model::{ApiKey, ApiKeySource, CallContext, InMemoryApiKeySource, ModelConfig, ModelError};
use std::sync::Arc;

const KEY: &str = "sk-ant-test-key-for-the-api-tests";

async fn api_with_fake(replies: Vec<FakeReply>) -> (tempfile::TempDir, Api, FakeModelServer) {
    let server = FakeModelServer::start(FakeScript { api_key: Some(KEY.to_string()), ..FakeScript::new(replies) })
        .await
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())),
        model: ModelConfig::default().with_endpoint(server.endpoint()),
        ..ApiOptions::default()
    };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    (tmp, api, server)
}

fn hello() -> MessagesRequest {
    MessagesRequest::new(64, vec![Message::user_text("hello")])
}

fn ledger_rows(api: &Api) -> Vec<(String, String, i64)> {
    let db = rusqlite::Connection::open(api.data_dir().database()).unwrap();
    let mut stmt = db.prepare("SELECT org_id, purpose, cost_micros FROM usage_ledger ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

#[tokio::test]
async fn a_model_call_is_priced_into_the_stores_ledger_for_the_sessions_organization() {
    let (_tmp, api, server) = api_with_fake(vec![FakeReply::text("hi there")]).await;
    let scope = api.local_session().await.unwrap();
    let ctx = CallContext::new(scope.org(), Some(scope.user()), "api_test");
    api.model().send(&ctx, hello()).await.unwrap();
    assert_eq!(server.requests().len(), 1);
    api.flush();
    let rows = ledger_rows(&api);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, scope.org().to_string());
    assert_eq!(rows[0].1, "api_test");
    // The fake reports 100 input and 20 output tokens: 100 × $0.10/M + 20 × $0.50/M = 20 micro-dollars.
    assert_eq!(rows[0].2, 20);
}

#[tokio::test]
async fn a_budget_set_through_the_api_refuses_the_next_call_without_sending_it() {
    let (_tmp, api, server) = api_with_fake(vec![FakeReply::text("one"), FakeReply::text("two")]).await;
    let scope = api.local_session().await.unwrap();
    let ctx = CallContext::new(scope.org(), Some(scope.user()), "api_test");
    api.set_model_budget(&scope, "organization", "monthly", 0).await.unwrap();
    let err = api.model().send(&ctx, hello()).await.unwrap_err();
    assert!(matches!(err, ModelError::BudgetExhausted { .. }), "{err:?}");
    assert_eq!(err.code(), ErrorCode::BudgetExhausted);
    assert!(server.requests().is_empty(), "no request reached the model");
    let budgets = api.model_budgets(&scope).await.unwrap();
    assert_eq!((budgets[0].subject.as_str(), budgets[0].period.as_str()), ("organization", "monthly"));
    // Raising it in the store lets the next call through, no restart.
    api.set_model_budget(&scope, "organization", "monthly", 1_000_000).await.unwrap();
    api.model().send(&ctx, hello()).await.unwrap();
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn bad_budget_input_is_refused_with_a_reason() {
    let (_tmp, api, _server) = api_with_fake(vec![]).await;
    let scope = api.local_session().await.unwrap();
    for (subject, period, limit) in
        [("everyone", "monthly", 5), ("organization", "weekly", 5), ("organization", "daily", -1)]
    {
        let err = api.set_model_budget(&scope, subject, period, limit).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{subject} {period} {limit}");
    }
}

#[tokio::test]
async fn setting_and_clearing_the_key_changes_availability_and_never_returns_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = Arc::new(InMemoryApiKeySource::empty());
    let options = ApiOptions { keys: keys.clone(), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    let scope = api.local_session().await.unwrap();
    assert_eq!(api.model_availability().await, ModelAvailability::NoApiKey);
    assert_eq!(api.set_api_key(&scope, KEY.to_string()).await.unwrap(), ModelAvailability::Ready);
    assert_eq!(api.set_api_key(&scope, "   ".to_string()).await.unwrap_err().code, ErrorCode::InvalidInput);
    assert_eq!(api.clear_api_key(&scope).await.unwrap(), ModelAvailability::NoApiKey);
    let db = std::fs::read(api.data_dir().database()).unwrap();
    assert!(!db.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the key never reaches the database");
}

/// A session of another member of the local organization, with `role` (written through a second connection).
fn member_with_role(api: &Api, owner: &pactwise_api::OrgScope, role: pactwise_domain::Role) -> pactwise_api::OrgScope {
    let store =
        pactwise_store::Store::open(&api.data_dir().database(), Arc::new(pactwise_domain::SystemClock)).unwrap();
    let platform = store.platform();
    let user = platform.create_user(&format!("A {role}"), None).unwrap();
    platform.set_membership(owner.org(), user, role).unwrap();
    let session = platform.start_session(user, owner.org()).unwrap();
    store.sessions().open(session).unwrap()
}

#[tokio::test]
async fn only_an_owner_or_an_admin_may_set_or_clear_the_installations_api_key() {
    use pactwise_domain::Role;
    let tmp = tempfile::tempdir().unwrap();
    let keys = Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap()));
    let options = ApiOptions { keys: keys.clone(), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    let owner = api.local_session().await.unwrap();
    let other = "sk-ant-someone-elses-key-0000000000000";
    for role in [Role::Reviewer, Role::Buyer, Role::Approver, Role::Viewer] {
        let scope = member_with_role(&api, &owner, role);
        let refused = api.set_api_key(&scope, other.to_string()).await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::Forbidden, "{role}: {refused:?}");
        assert!(refused.message.contains("owner or an admin"), "{role}: {}", refused.message);
        assert_eq!(api.clear_api_key(&scope).await.unwrap_err().code, ErrorCode::Forbidden, "{role}");
        assert!(keys.get().unwrap() == Some(ApiKey::parse(KEY).unwrap()), "{role} changed the key");
    }
    let admin = member_with_role(&api, &owner, Role::Admin);
    assert_eq!(api.set_api_key(&admin, other.to_string()).await.unwrap(), ModelAvailability::Ready);
    assert!(keys.get().unwrap() == Some(ApiKey::parse(other).unwrap()), "the admin set the key");
    assert_eq!(api.clear_api_key(&owner).await.unwrap(), ModelAvailability::NoApiKey);
}

#[tokio::test]
async fn a_model_endpoint_that_is_not_https_or_loopback_is_refused_and_another_is_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let refused = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())),
        model: ModelConfig::default().with_endpoint("http://203.0.113.7:8080"),
        ..ApiOptions::default()
    };
    let error =
        Api::open_with(tmp.path().join("a"), refused).err().expect("a plain-http endpoint elsewhere is refused");
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(error.message.contains("PACTWISE_MODEL_ENDPOINT") && error.message.contains("https://"), "{error:?}");

    let (_tmp, api, server) = api_with_fake(vec![]).await;
    let status = api.model_status().await;
    assert_eq!(status.availability, ModelAvailability::Ready);
    assert_eq!(status.endpoint.as_deref(), Some(server.endpoint().trim_end_matches('/')), "the status line says where");
    let default =
        Api::open_with(tmp.path().join("b"), ApiOptions { model: ModelConfig::default(), ..ApiOptions::default() })
            .unwrap();
    assert_eq!(default.model_status().await.endpoint, None, "the default endpoint is not flagged");
}
