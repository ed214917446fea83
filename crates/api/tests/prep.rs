//! Prep Studio through the api, as the CLI and the desktop view use it: draft against the fake model (a golden
//! run whose draft breaks two validators), fix both errors by hand, validate, approve what was seen, publish
//! through the store's gate, export DOCX and OCDS.

use pactwise_api::{Api, ApiOptions, ArtifactKind, Content, Intake, PrepExportFormat, RunStatus};
use pactwise_domain::ErrorCode;
use pactwise_model::fake::{FakeModelServer, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, ModelConfig};
use std::path::Path;
use std::sync::Arc;

const KEY: &str = "sk-ant-test-prep-api-00000000000000";

fn fixture(name: &str) -> (Intake, FakeScript) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../fixtures/prep/{name}.json"));
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (serde_json::from_value(value["intake"].clone()).unwrap(), serde_json::from_value(value["script"].clone()).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draft_fix_by_hand_approve_publish_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let (intake, script) = fixture("it-service-desk");
    let server = FakeModelServer::start(FakeScript { api_key: Some(KEY.into()), ..script }).await.unwrap();
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())),
        model: ModelConfig::default().with_endpoint(server.endpoint()),
        ..ApiOptions::default()
    };
    let api = Api::open_with(dir.path().join("data"), options).unwrap();
    let scope = api.local_session().await.unwrap();

    let view = api.prep_new(&scope, intake).await.unwrap();
    let id = view.id.clone();
    assert!(view.lock.as_ref().unwrap().held_by_me);
    let view = api.prep_draft(&scope, &id, None, false).await.unwrap();
    assert_eq!(view.package.run.status, RunStatus::Done);
    assert_eq!(view.package.run.critic_cycles, 3);
    let rules: Vec<&str> = view.precheck.iter().map(|v| v.rule.as_str()).collect();
    assert!(rules.contains(&"weights_not_hundred") && rules.contains(&"pricing_line_not_priceable"), "{rules:?}");
    // Publishing now is refused by the store's gate, with the same rules.
    let refused = api.prep_publish(&scope, &id).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::PublishBlocked);
    assert!(api.prep_export(&scope, &id, PrepExportFormat::Docx, &dir.path().join("early.docx")).await.is_err());

    // The buyer fixes the weights and the open pricing line by hand.
    let mut criteria = view.package.artifacts.criteria.content.clone().unwrap();
    criteria.criteria[1].weight_bp = 5000;
    api.prep_edit(&scope, &id, Content::Criteria(criteria)).await.unwrap();
    let mut pricing = view.package.artifacts.pricing.content.clone().unwrap();
    pricing.lines[1].description = "On-site visit".into();
    pricing.lines[1].quantity = Some(200);
    api.prep_edit(&scope, &id, Content::Pricing(pricing)).await.unwrap();
    let view = api.prep_validate(&scope, &id).await.unwrap();
    for kind in ArtifactKind::ALL {
        assert_eq!(view.package.state(kind).name(), "valid", "{kind:?}: {:?}", view.package.state(kind));
    }

    // Approval names the hash that was shown; an old hash is refused.
    let err = api.prep_approve(&scope, &id, ArtifactKind::Scope, "0".repeat(64)).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalOutdated);
    let mut view = view;
    for kind in ArtifactKind::ALL {
        let hash = view.package.artifacts.content_hash(kind).unwrap();
        view = api.prep_approve(&scope, &id, kind, hash).await.unwrap();
    }
    assert!(view.precheck.is_empty(), "{:?}", view.precheck);
    let view = api.prep_publish(&scope, &id).await.unwrap();
    assert_eq!(view.status, "published");

    let docx = api.prep_export(&scope, &id, PrepExportFormat::Docx, &dir.path().join("rfp.docx")).await.unwrap();
    assert!(docx.bytes > 1000);
    let ocds = dir.path().join("rfp.json");
    api.prep_export(&scope, &id, PrepExportFormat::Ocds, &ocds).await.unwrap();
    let release: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ocds).unwrap()).unwrap();
    assert_eq!(release["tag"][0], "tender");
    assert_eq!(release["tender"]["items"].as_array().unwrap().len(), 2);
    assert_eq!(api.prep_list(&scope).await.unwrap().len(), 1);
}
