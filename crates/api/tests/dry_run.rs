//! A dry run of an imported document (`Api::dry_run`): the whole stage machine over its stored pages with no model
//! request, keeping nothing; and the extract stage recorded at import like every other stage.

use pactwise_api::{Api, ApiOptions, DocumentQuery, ImportOptions, ImportProgress, ReviewMode};
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeRule, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, ModelConfig, RetryPolicy};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const KEY: &str = "sk-ant-test-key-for-the-dry-run-tests";
const PDF: &[u8] = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

fn quiet(_: ImportProgress) {}

fn msa() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/master-services-agreement-northwind-fabrikam.txt")
}

/// An api whose model is ready and answers (a type, empty sections), so the import's real run asks it and it stays
/// ready; the requests can be counted.
async fn api_with_model() -> (tempfile::TempDir, Api, FakeModelServer) {
    let rules = vec![
        FakeRule::new(
            "Which type is the document above?",
            FakeReply::forced_tool(json!({"type_id": "msa", "confidence": 0.95, "reason": "the title says so"})),
        ),
        FakeRule::new("Checklist section:", FakeReply::forced_tool(json!({"items": []}))),
    ];
    let server =
        FakeModelServer::start(FakeScript { api_key: Some(KEY.into()), rules, ..FakeScript::default() }).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut model = ModelConfig::default().with_endpoint(server.endpoint());
    model.retry = RetryPolicy { max_attempts: 1, ..RetryPolicy::default() };
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())),
        model,
        ..ApiOptions::default()
    };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    (tmp, api, server)
}

#[tokio::test]
async fn a_dry_run_of_an_imported_document_asks_the_model_nothing_keeps_nothing_and_says_what_a_real_run_would_do() {
    let (_tmp, api, server) = api_with_model().await;
    let scope = api.local_session().await.unwrap();
    let report = api.import_documents(&scope, vec![msa()], ImportOptions::default(), &quiet).await.unwrap();
    let id = report.imported[0].document.id;
    let asked_at_import = server.message_requests().len();
    assert!(asked_at_import > 0, "the import's real run tried the model");
    let before = api.document_review(&scope, id).await.unwrap();
    let queue_before = api.review_queue(&scope).await.unwrap();

    let dry = api.dry_run(&scope, id).await.unwrap();
    assert_eq!(server.message_requests().len(), asked_at_import, "a dry run makes no model request");
    assert_eq!(dry.mode, "dry_run");
    assert_eq!(dry.document, Some(id));
    let stages: Vec<&str> = dry.stages.iter().map(|s| s.stage.as_str()).collect();
    assert_eq!(stages, ["extract", "classify", "checklist", "gate", "finalize"], "the whole machine ran");
    assert!(dry.stages.iter().all(|s| s.model.is_none() && s.input_tokens == 0), "{:?}", dry.stages);
    let planned = dry.planned_model_calls.expect("a dry run says how many calls a real run makes");
    assert!(planned >= 2, "one to classify and one per checklist section and window: {planned}");
    let gate = dry.gate.as_ref().expect("the route a real run would take");
    assert_eq!(gate.route, "person");
    assert_eq!(gate.reason.as_deref(), Some("critical_low_confidence"), "the stand-in type is the model's to settle");
    assert!(dry.vendor_match.as_deref().is_some_and(|m| m != "linked" && m != "created"), "{:?}", dry.vendor_match);

    // Nothing was kept: the recorded review, the queue and the documents are as they were.
    let after = api.document_review(&scope, id).await.unwrap();
    assert_eq!(after.stages, before.stages);
    assert_eq!(after.gate, before.gate);
    assert_eq!(api.review_queue(&scope).await.unwrap(), queue_before);
    assert_eq!(api.list_documents(&scope, DocumentQuery::default()).await.unwrap().len(), 1);
}

#[tokio::test]
async fn without_a_model_a_dry_run_is_the_offline_run_and_would_make_no_call() {
    let tmp = tempfile::tempdir().unwrap();
    let api = Api::open(tmp.path().join("data")).unwrap();
    let scope = api.local_session().await.unwrap();
    let report = api.import_documents(&scope, vec![msa()], ImportOptions::default(), &quiet).await.unwrap();
    let dry = api.dry_run(&scope, report.imported[0].document.id).await.unwrap();
    assert_eq!(dry.mode, "dry_run");
    assert_eq!(dry.planned_model_calls, Some(0));
    assert_eq!(dry.gate.unwrap().reason.as_deref(), Some("classification_unresolved"));
    // Another organization's document answers like a missing one.
    let (demo, _) = api.seed_demo().await.unwrap();
    let theirs = api.list_documents(&demo, DocumentQuery::default()).await.unwrap()[0].id;
    assert_eq!(api.dry_run(&scope, theirs).await.unwrap_err().code, pactwise_domain::ErrorCode::NotFound);
}

#[tokio::test]
async fn the_extract_stage_is_recorded_at_import_with_the_pages_read_or_why_none_could_be() {
    let tmp = tempfile::tempdir().unwrap();
    let api = Api::open(tmp.path().join("data")).unwrap();
    let scope = api.local_session().await.unwrap();
    let report = api.import_documents(&scope, vec![msa()], ImportOptions::default(), &quiet).await.unwrap();
    let review = api.document_review(&scope, report.imported[0].document.id).await.unwrap();
    let extract = &review.stages[0];
    assert_eq!((extract.stage.as_str(), extract.status.as_str(), extract.attempt), ("extract", "done", 1));
    assert_eq!(extract.outcome.as_deref(), Some("text"));

    let damaged = tmp.path().join("damaged.pdf");
    std::fs::write(&damaged, PDF).unwrap();
    let report = api.import_documents(&scope, vec![damaged], ImportOptions::default(), &quiet).await.unwrap();
    let imported = &report.imported[0];
    let error = imported.extraction_error.clone().expect("the pages cannot be read");
    let review = api.document_review(&scope, imported.document.id).await.unwrap();
    let extract = &review.stages[0];
    assert_eq!((extract.stage.as_str(), extract.status.as_str()), ("extract", "degraded"));
    assert_eq!(extract.outcome.as_deref(), Some("unreadable"));
    assert!(extract.reason.as_deref().unwrap().contains(&error.message), "{extract:?} / {error:?}");
    assert_eq!(review.gate.unwrap().reason.as_deref(), Some("ocr_failed"));
    // The dry run shows the same reason for it, from the recorded stage.
    let dry = api.dry_run(&scope, imported.document.id).await.unwrap();
    assert_eq!(dry.stages[0].reason, extract.reason);
    assert_eq!(dry.gate.unwrap().reason.as_deref(), Some("ocr_failed"));
    let _ = ReviewMode::DryRun;
}
