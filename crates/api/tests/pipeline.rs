//! The document pipeline against the fake model server: keyword fallback when the model is down or invents a type,
//! quotes that are not on their page never reach the output, a failing section degrades only its items, the
//! import keeps the results and the queue shows why, corrections survive a re-run, thresholds live in the store.

use pactwise_api::{Api, ApiOptions, CorrectionInput, Existing, ImportOptions, ReviewMode, Stage, catalog};
use pactwise_domain::{ContractType, ItemStatus, Quote};
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeRule, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, ModelConfig, RetryPolicy};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

const KEY: &str = "sk-ant-test-key-for-the-pipeline-tests";
const CLASSIFY: &str = "Which type is the document above?";

fn msa() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/demo/master-services-agreement-northwind-fabrikam.txt")
}

fn msa_text() -> String {
    std::fs::read_to_string(msa()).unwrap()
}

async fn api_with(rules: Vec<FakeRule>) -> (tempfile::TempDir, Api, FakeModelServer) {
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

fn service() -> ContractType {
    catalog().unwrap().contract_type("service").unwrap().clone()
}

fn classify_as(type_id: &str, confidence: f32) -> FakeRule {
    FakeRule::new(
        CLASSIFY,
        FakeReply::forced_tool(json!({"type_id": type_id, "confidence": confidence, "reason": "the title says so"})),
    )
}

/// The section's prompt names the section like this (see model_path::section_prompt).
fn section_needle(t: &ContractType, section: &str) -> String {
    let name = &t.sections.iter().find(|s| s.id == section).unwrap().name;
    format!("Checklist section: {name}.")
}

/// A rule answering every item of a section with `status`, the given quote on page 1.
fn answer_section(t: &ContractType, section: &str, quote: &str) -> FakeRule {
    let items: Vec<_> = t
        .items
        .iter()
        .filter(|i| i.section == section)
        .map(|i| json!({"item_id": i.id, "status": "present", "confidence": 0.9, "quote": quote, "page": 1}))
        .collect();
    FakeRule::new(section_needle(t, section), FakeReply::forced_tool(json!({ "items": items })))
}

#[tokio::test]
async fn an_invented_type_is_rejected_and_the_keyword_classifier_decides() {
    let t = service();
    let mut rules = vec![classify_as("spaceship_lease", 0.99)];
    rules.push(FakeRule::new("Checklist section:", FakeReply::forced_tool(json!({"items": []}))));
    let (_tmp, api, _server) = api_with(rules).await;
    let scope = api.local_session().await.unwrap();
    let review = api.review_file(&scope, &msa(), ReviewMode::Auto).await.unwrap();
    let ty = review.contract_type.unwrap();
    assert_eq!(ty.method, "keyword");
    assert!(ty.confidence <= 0.5, "keyword confidence is capped low: {}", ty.confidence);
    let classify = review.stages.iter().find(|s| s.stage == "classify").unwrap();
    assert_eq!(classify.status, "degraded");
    assert!(classify.reason.as_deref().unwrap().contains("not in the catalog"), "{classify:?}");
    assert_eq!(review.gate.unwrap().reason.as_deref(), Some("classification_unresolved"));
    let _ = t;
}

#[tokio::test]
async fn a_model_that_is_down_gives_way_to_the_rules_for_classification_and_checklist() {
    let rules = vec![FakeRule::new("", FakeReply::error(500))];
    let (_tmp, api, server) = api_with(rules).await;
    let scope = api.local_session().await.unwrap();
    let review = api.review_file(&scope, &msa(), ReviewMode::Auto).await.unwrap();
    assert!(!server.message_requests().is_empty(), "the model was tried");
    assert_eq!(review.contract_type.as_ref().unwrap().method, "keyword");
    let checklist = review.stages.iter().find(|s| s.stage == "checklist").unwrap();
    assert_eq!((checklist.status.as_str(), checklist.outcome.as_deref()), ("degraded", Some("rules_fallback")));
    assert!(review.items.iter().all(|i| i.method == "rules"));
    assert!(review.items.iter().any(|i| i.status == ItemStatus::Present && i.verified));
    assert_eq!(review.gate.unwrap().route, "person");
}

#[tokio::test]
async fn an_unverified_quote_never_reaches_the_output_and_a_failing_section_degrades_only_its_items() {
    let t = service();
    let text = msa_text();
    let real = "Customer shall pay the fees set out in each Statement of Work";
    assert!(text.contains(real));
    let invented = "Supplier's liability under this Agreement is unlimited in every respect";
    assert!(!text.contains(invented));
    let sections: Vec<String> = t.sections.iter().map(|s| s.id.clone()).collect();
    let (failing, invented_section) = (&sections[0], &sections[1]);
    let mut rules = vec![classify_as("service", 0.95)];
    rules.push(FakeRule::new(section_needle(&t, failing), FakeReply::error(400)));
    rules.push(answer_section(&t, invented_section, invented));
    for s in &sections[2..] {
        rules.push(answer_section(&t, s, real));
    }
    let (_tmp, api, server) = api_with(rules).await;
    let scope = api.local_session().await.unwrap();
    let review = api.review_file(&scope, &msa(), ReviewMode::Auto).await.unwrap();
    assert_eq!(review.contract_type.as_ref().unwrap().method, "model");
    let section_of = |id: &str| t.items.iter().find(|i| i.id == id).unwrap().section.clone();
    for item in &review.items {
        let section = section_of(&item.id);
        if &section == failing {
            assert_eq!(item.status, ItemStatus::NotEvaluated, "{item:?}");
            assert!(item.reason.as_deref().unwrap().starts_with("section_failed"), "{item:?}");
        } else if &section == invented_section {
            assert_eq!(item.status, ItemStatus::NotEvaluated);
            assert_eq!(item.reason.as_deref(), Some("quote_not_found"));
            assert_eq!(item.quote, None);
            assert!(review.rejected.iter().any(|r| r.item_id == item.id && r.quote == invented));
        } else {
            assert_eq!(item.status, ItemStatus::Present, "{item:?}");
            assert_eq!((item.quote.as_deref(), item.page, item.verified), (Some(real), Some(1), true));
        }
    }
    // The invented words appear nowhere a person would read them as a quote.
    assert!(review.items.iter().all(|i| i.quote.as_deref() != Some(invented)));
    let checklist = review.stages.iter().find(|s| s.stage == "checklist").unwrap();
    assert_eq!(checklist.status, "degraded");
    // One classification call and one call per section, the contract text sent as a cached prefix each time.
    let requests = server.message_requests();
    assert_eq!(requests.len(), 1 + sections.len());
    let with_contract = requests
        .iter()
        .filter(|r| r.body.to_string().contains("cache_control") && r.body.to_string().contains("Fabrikam"))
        .count();
    assert_eq!(with_contract, requests.len());
}

#[tokio::test]
async fn import_keeps_the_results_the_queue_says_why_and_corrections_survive_a_rerun() {
    // No model rules: the offline mode is asked for explicitly below, so nothing is called.
    let (_tmp, api, server) = api_with(vec![]).await;
    let scope = api.local_session().await.unwrap();
    let none = |_| {};
    // Import runs the pipeline; with the fake answering nothing usable, classification falls back to keywords.
    let report = api.import_documents(&scope, vec![msa()], ImportOptions::default(), &none).await.unwrap();
    let imported = &report.imported[0];
    assert_eq!(imported.route.as_deref(), Some("person"), "{imported:?}");
    let id = imported.document.id;
    let queue = api.review_queue(&scope).await.unwrap();
    assert_eq!(queue.len(), 1);
    assert_eq!(queue[0].document, id);
    assert_eq!(queue[0].reason.as_deref(), Some("classification_unresolved"));
    assert!(queue[0].type_id.is_some());

    let review = api.document_review(&scope, id).await.unwrap();
    let item = review.items.iter().find(|i| i.status != ItemStatus::Absent).unwrap().id.clone();
    let quote = Quote { text: "Customer shall pay the fees".into(), page: 1 };
    let bad = api
        .correct_item(
            &scope,
            id,
            CorrectionInput {
                item_id: item.clone(),
                confirm: false,
                status: Some(ItemStatus::Partial),
                quote: Some(Quote { text: "words that are not in the contract".into(), page: 1 }),
                note: None,
                acknowledge_warnings: false,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(bad.code, pactwise_domain::ErrorCode::InvalidInput);
    assert!(bad.message.contains("not found on page 1"), "{}", bad.message);
    let corrected = api
        .correct_item(
            &scope,
            id,
            CorrectionInput {
                item_id: item.clone(),
                confirm: false,
                status: Some(ItemStatus::Partial),
                quote: Some(quote.clone()),
                note: Some("only for undisputed invoices".into()),
                acknowledge_warnings: false,
            },
        )
        .await
        .unwrap();
    let shown = corrected.items.iter().find(|i| i.id == item).unwrap();
    assert_eq!((shown.status, shown.method.as_str()), (ItemStatus::Partial, "person"));

    let calls_before = server.message_requests().len();
    let rerun = api.run_pipeline(&scope, id, ReviewMode::Offline, Some(Stage::Classify)).await.unwrap();
    assert_eq!(server.message_requests().len(), calls_before, "offline re-run makes no model call");
    let after = rerun.items.iter().find(|i| i.id == item).unwrap();
    assert_eq!(after.status, ItemStatus::Partial, "the correction wins over the re-run");
    assert_eq!(after.quote.as_deref(), Some(quote.text.as_str()));
    assert_eq!(after.method, "person");
}

#[tokio::test]
async fn thresholds_live_in_the_store_and_are_validated() {
    let (_tmp, api, _server) = api_with(vec![]).await;
    let scope = api.local_session().await.unwrap();
    let t = api.set_threshold(&scope, "critical_min_confidence", 0.8).await.unwrap();
    assert_eq!(t.critical_min_confidence, 0.8);
    assert_eq!(api.thresholds(&scope).await.unwrap().critical_min_confidence, 0.8);
    let err = api.set_threshold(&scope, "critical_min_confidence", 2.0).await.unwrap_err();
    assert_eq!(err.code, pactwise_domain::ErrorCode::InvalidInput);
    assert_eq!(api.thresholds(&scope).await.unwrap().critical_min_confidence, 0.8, "a refused value changes nothing");
}

#[tokio::test]
async fn finalize_needs_every_critical_item_confirmed_and_the_memo_exports_as_docx_and_pdf() {
    let (tmp, api, _server) = api_with(vec![]).await;
    let scope = api.local_session().await.unwrap();
    let none = |_| {};
    let report = api.import_documents(&scope, vec![msa()], ImportOptions::default(), &none).await.unwrap();
    let id = report.imported[0].document.id;
    let review = api.document_review(&scope, id).await.unwrap();
    let t = catalog().unwrap().contract_type(&review.contract_type.as_ref().unwrap().id).unwrap().clone();
    let critical: Vec<String> =
        t.items.iter().filter(|i| i.risk == pactwise_domain::RiskLevel::Critical).map(|i| i.id.clone()).collect();
    assert!(critical.len() >= 2);
    let err = api.finalize_review(&scope, id, Default::default()).await.unwrap_err();
    assert_eq!(err.code, pactwise_domain::ErrorCode::ReviewIncomplete);
    assert!(err.message.contains(&critical[0]), "{}", err.message);
    let export_early = api
        .export_review(&scope, id, pactwise_api::MemoFormat::Docx, tmp.path().join("early.docx"), Existing::Refuse)
        .await
        .unwrap_err();
    assert_eq!(export_early.code, pactwise_domain::ErrorCode::ReviewIncomplete);

    for item in &critical {
        let input = CorrectionInput {
            item_id: item.clone(),
            confirm: true,
            status: None,
            quote: None,
            note: None,
            acknowledge_warnings: false,
        };
        api.correct_item(&scope, id, input).await.unwrap();
    }
    let finalized = api
        .finalize_review(
            &scope,
            id,
            pactwise_api::FinalizeInput { vendor_id: None, new_vendor_name: Some("Fabrikam Consulting Group".into()) },
        )
        .await
        .unwrap();
    assert!(finalized.finalized_at.is_some());
    assert_eq!(finalized.vendor.as_deref(), Some("Fabrikam Consulting Group"));
    assert_eq!(finalized.vendor_link.as_deref(), Some("person"));
    assert!(finalized.items.iter().filter(|i| critical.contains(&i.id)).all(|i| i.confirmed_by.is_some()));
    // A re-run keeps the person's vendor link.
    let rerun = api.run_pipeline(&scope, id, ReviewMode::Offline, Some(Stage::Finalize)).await.unwrap();
    assert_eq!(
        (rerun.vendor.as_deref(), rerun.vendor_link.as_deref()),
        (Some("Fabrikam Consulting Group"), Some("person"))
    );

    let docx = tmp.path().join("memo.docx");
    api.export_review(&scope, id, pactwise_api::MemoFormat::Docx, docx.clone(), Existing::Refuse).await.unwrap();
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&docx).unwrap()).unwrap();
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut archive.by_name("word/document.xml").unwrap(), &mut xml).unwrap();
    assert!(xml.contains("Contract review memo"));
    assert!(xml.contains("Confirmed by"));
    // Exporting again to the same file never replaces it silently, and leaves nothing beside it.
    let written = std::fs::read(&docx).unwrap();
    let again = api.export_review(&scope, id, pactwise_api::MemoFormat::Docx, docx.clone(), Existing::Refuse).await;
    assert_eq!(again.unwrap_err().code, pactwise_domain::ErrorCode::FileExists);
    assert_eq!(std::fs::read(&docx).unwrap(), written, "the existing memo is left as it was");
    api.export_review(&scope, id, pactwise_api::MemoFormat::Docx, docx.clone(), Existing::Replace).await.unwrap();
    let beside: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("partial") || n.starts_with(".pactwise-export"))
        .collect();
    assert!(beside.is_empty(), "nothing partial is left beside the export: {beside:?}");
    let pdf = tmp.path().join("memo.pdf");
    api.export_review(&scope, id, pactwise_api::MemoFormat::Pdf, pdf.clone(), Existing::Refuse).await.unwrap();
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"), "the PDF is written without libpdfium");
    let pdfium = pactwise_extract::ExtractConfig::from_env().pdfium_path;
    if pactwise_testkit::library("libpdfium (reading the PDF memo back)", &pdfium) {
        let report = pactwise_api::extract_file(&pdf, Default::default(), |_| {}).await.unwrap();
        let text: String = report.pages.iter().map(|p| p.text.clone()).collect::<Vec<_>>().join("\n");
        assert!(text.contains("Contract review memo"), "{text}");
        assert!(text.contains("Critical items"));
        assert!(!text.contains('ÿ'), "every glyph is printed as written");
    }
}
