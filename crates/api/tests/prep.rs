//! Prep Studio through the api, as the CLI and the desktop view use it: draft against the fake model (a golden
//! run whose draft breaks two validators), fix both errors by hand, validate, approve what was seen, publish
//! through the store's gate, export DOCX, OCDS and PDF (the PDF read back through pdfium).

use pactwise_api::{
    Api, ApiOptions, ArtifactKind, Content, Existing, FindingStatus, Intake, PrepExportFormat, RunStatus,
};
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
    // The milestone dates are computed from the intake before anything is drafted.
    let preview: Vec<String> = view.milestone_preview.iter().map(|m| format!("{} {}", m.title, m.date)).collect();
    assert_eq!(preview.len(), 6);
    assert_eq!(preview[0], "Publication 2027-04-05");
    let steps = std::sync::Mutex::new(Vec::new());
    let view = api
        .prep_draft(&scope, &id, None, false, &|p| steps.lock().unwrap().push((p.step, p.done, p.remaining)))
        .await
        .unwrap();
    assert_eq!(view.package.run.status, RunStatus::Done);
    let steps = steps.into_inner().unwrap();
    assert_eq!(steps.len() as u32, view.package.run.model_calls, "one progress report per model call");
    assert_eq!(steps[0], (pactwise_api::RunStep::Draft(ArtifactKind::Scope), 0, 6));
    // The drafted milestones carry exactly the dates the preview showed.
    let drafted: Vec<String> =
        view.package.artifacts.milestones.content.as_ref().unwrap().items.iter().map(|m| m.date.to_string()).collect();
    assert_eq!(drafted, view.milestone_preview.iter().map(|m| m.date.to_string()).collect::<Vec<_>>());
    assert_eq!(view.package.run.critic_cycles, 3);
    // The buyer dismisses a finding left to them, with a reason; it is kept, with the reason, in the package.
    let open = view
        .package
        .findings
        .iter()
        .position(|f| matches!(f.status, FindingStatus::Unresolved | FindingStatus::AwaitingBuyer))
        .expect("a finding left to the buyer");
    let err = api.prep_dismiss_finding(&scope, &id, open as u32, " ".into()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    let err = api.prep_dismiss_finding(&scope, &id, 99, "n/a".into()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    api.prep_dismiss_finding(&scope, &id, open as u32, "Covered by our framework agreement.".into()).await.unwrap();
    let view = api.prep_show(&scope, &id).await.unwrap();
    assert_eq!(view.package.findings[open].status, FindingStatus::Dismissed);
    assert_eq!(view.package.findings[open].dismissal.as_deref(), Some("Covered by our framework agreement."));
    let rules: Vec<&str> = view.precheck.iter().map(|v| v.rule.as_str()).collect();
    assert!(rules.contains(&"weights_not_hundred") && rules.contains(&"pricing_line_not_priceable"), "{rules:?}");
    // Publishing now is refused by the store's gate, with the same rules.
    let refused = api.prep_publish(&scope, &id).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::PublishBlocked);
    assert!(
        api.prep_export(&scope, &id, PrepExportFormat::Docx, &dir.path().join("early.docx"), Existing::Refuse)
            .await
            .is_err()
    );

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

    let docx = api
        .prep_export(&scope, &id, PrepExportFormat::Docx, &dir.path().join("rfp.docx"), Existing::Refuse)
        .await
        .unwrap();
    assert!(docx.bytes > 1000);
    let ocds = dir.path().join("rfp.json");
    api.prep_export(&scope, &id, PrepExportFormat::Ocds, &ocds, Existing::Refuse).await.unwrap();
    let release: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ocds).unwrap()).unwrap();
    assert_eq!(release["tag"][0], "tender");
    assert_eq!(release["tender"]["items"].as_array().unwrap().len(), 2);
    // The file the app writes validates against the OCDS 1.1 release schema (`../shared/data`, or
    // `PACTWISE_SHARED_DATA`; under CI its absence fails the test, elsewhere the check is skipped, saying so).
    if let Some(path) = pactwise_testkit::shared_data("ocds/schema/release-schema.json") {
        let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&release).map(|e| format!("{}: {e}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    assert_eq!(api.prep_list(&scope).await.unwrap().len(), 1);

    if !pactwise_testkit::library(
        "libpdfium (the RFP as PDF)",
        &pactwise_extract::ExtractConfig::from_env().pdfium_path,
    ) {
        return;
    }
    let pdf = dir.path().join("rfp.pdf");
    let written = api.prep_export(&scope, &id, PrepExportFormat::Pdf, &pdf, Existing::Refuse).await.unwrap();
    assert_eq!(written.bytes, std::fs::metadata(&pdf).unwrap().len());
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"));
    let report = pactwise_api::extract_file(&pdf, Default::default(), |_| {}).await.unwrap();
    let text: String = report.pages.iter().map(|p| p.text.replace("\r\n", "\n")).collect::<Vec<_>>().join("\n");
    for expected in [
        "Request for proposals: IT service desk for",
        "Riverside School District",
        "Instructions to bidders",
        "How proposals are evaluated",
        "Criteria and weights",
        "R-02",
        "50.00 %",
        "On-site visit",
        "Form B",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from the PDF text:\n{text}");
    }
    // Nothing is left beside the export (it is written whole, then renamed).
    assert!(!dir.path().join("rfp.partial").exists());
}
