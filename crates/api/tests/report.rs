//! The contract review report through the api, against the fake model server: run on an imported contract, shown
//! with only clauses found on their page, signed off by the session's user, exported as DOCX and PDF; another
//! organization cannot see or sign it; without a model the run fails with the reason; per-run bounds apply.

use pactwise_api::{Api, ApiOptions, Existing, ImportOptions, MemoFormat, OrgScope, ReportOptions, ReportStatus};
use pactwise_domain::{Decision, DocumentId, ErrorCode, ReportCompleteness, UnprocessedReason};
use pactwise_model::fake::{FakeModelServer, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, ModelConfig, RetryPolicy};
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

const KEY: &str = "sk-ant-test-key-for-the-report-tests";
const INVENTED: &str = "Either Party may terminate this Agreement at any time without notice";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/report").join(name)
}

async fn api(with_key: bool) -> (tempfile::TempDir, Api, FakeModelServer) {
    let mut script: FakeScript =
        serde_json::from_str(&std::fs::read_to_string(fixture("fake-model.json")).unwrap()).unwrap();
    script.api_key = Some(KEY.into());
    let server = FakeModelServer::start(script).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut model = ModelConfig::default().with_endpoint(server.endpoint());
    model.retry = RetryPolicy { max_attempts: 1, ..RetryPolicy::default() };
    let keys = if with_key {
        InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())
    } else {
        InMemoryApiKeySource::default()
    };
    let options = ApiOptions { keys: Arc::new(keys), model, ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    (tmp, api, server)
}

async fn import(api: &Api, scope: &OrgScope) -> DocumentId {
    let report = api
        .import_documents(scope, vec![fixture("nda-six-pages.txt")], ImportOptions::default(), &|_| {})
        .await
        .unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    report.imported[0].document.id
}

fn report_calls(server: &FakeModelServer) -> usize {
    server
        .message_requests()
        .iter()
        .filter(|r| matches!(r.body["tool_choice"]["name"].as_str(), Some("record_clauses" | "record_clause_type")))
        .count()
}

fn docx_text(bytes: &[u8]) -> String {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    xml
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_runs_on_an_imported_contract_is_signed_off_and_exported() {
    let (tmp, api, server) = api(true).await;
    let scope = api.local_session().await.unwrap();
    let document = import(&api, &scope).await;
    let view = api.start_report(&scope, document, ReportOptions::default()).await.unwrap();
    assert_eq!(view.status, ReportStatus::AwaitingSignOff, "{view:?}");
    assert_eq!(view.document_name, "nda-six-pages.txt");
    let report = view.report.clone().unwrap();
    assert_eq!((report.contract_type.as_str(), report.completeness), ("nda", ReportCompleteness::Complete));
    assert!(report.shown_clauses().iter().all(|c| !c.text.contains(INVENTED)));
    assert!(report.rejected.iter().any(|r| r.text.starts_with(INVENTED)));
    // Each clause shown comes with where it stands on its page: exactly the clause's text there.
    let shown = report.shown_clauses();
    assert_eq!(view.clause_spans.len(), shown.len());
    for placed in &view.clause_spans {
        let clause = shown.iter().find(|c| c.clause_id == placed.clause_id).unwrap();
        let page = api.page_layout(&scope, document, placed.page).await.unwrap();
        let (start, end) = (placed.span.start as usize, placed.span.end as usize);
        assert_eq!(page.text.chars().skip(start).take(end - start).collect::<String>(), clause.text);
    }
    assert_eq!(report_calls(&server), 30);
    let progress = view.progress.unwrap();
    assert_eq!((progress.windows_done, progress.windows, progress.clause_types_done), (6, 6, 24));
    assert_eq!(api.document_reports(&scope, document).await.unwrap().len(), 1);

    // Not exportable before it is signed off.
    let early =
        api.export_report(&scope, view.run, MemoFormat::Docx, tmp.path().join("early.docx"), Existing::Refuse).await;
    assert_eq!(early.unwrap_err().code, ErrorCode::ReviewIncomplete);
    // A sign-off needs a reason (the store refuses an empty one).
    assert!(api.sign_off_report(&scope, view.run, Decision::Approve, " ".into()).await.is_err());

    let signed = api
        .sign_off_report(&scope, view.run, Decision::Approve, "Checked against the signed copy".into())
        .await
        .unwrap();
    assert_eq!(signed.status, ReportStatus::SignedOff);
    let sign_off = signed.sign_off.clone().unwrap();
    assert_eq!(sign_off.decision, Decision::Approve);
    assert_eq!(sign_off.by, api.session_info(&scope).await.unwrap().user_name);
    assert_eq!(sign_off.reason, "Checked against the signed copy");
    assert!(signed.approval.is_none());
    // Signing twice is refused: the step is decided once.
    let again = api.sign_off_report(&scope, view.run, Decision::Reject, "changed my mind".into()).await;
    assert_eq!(again.unwrap_err().code, ErrorCode::InvalidInput);

    let docx = api
        .export_report(&scope, view.run, MemoFormat::Docx, tmp.path().join("report.docx"), Existing::Refuse)
        .await
        .unwrap();
    let xml = docx_text(&std::fs::read(&docx.path).unwrap());
    assert!(xml.contains("Contract review report: nda-six-pages.txt"));
    assert!(xml.contains("This Agreement is governed by the laws of England and Wales"));
    assert!(xml.contains("Rejected extractions"));
    assert!(xml.contains("Signed off by"));
    // The PDF is written by the crate's own writer (no libpdfium needed).
    let pdf = api
        .export_report(&scope, view.run, MemoFormat::Pdf, tmp.path().join("report.pdf"), Existing::Refuse)
        .await
        .unwrap();
    assert!(std::fs::read(&pdf.path).unwrap().starts_with(b"%PDF"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_organization_cannot_see_sign_or_export_a_report() {
    let (tmp, api, _server) = api(true).await;
    let a = api.local_session().await.unwrap();
    let document = import(&api, &a).await;
    let run = api.start_report(&a, document, ReportOptions::default()).await.unwrap().run;
    let (b, _) = api.seed_demo().await.unwrap();
    assert_eq!(api.report(&b, run).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.document_reports(&b, document).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.start_report(&b, document, ReportOptions::default()).await.unwrap_err().code, ErrorCode::NotFound);
    let sign = api.sign_off_report(&b, run, Decision::Approve, "not mine".into()).await;
    assert_eq!(sign.unwrap_err().code, ErrorCode::NotFound);
    let export = api.export_report(&b, run, MemoFormat::Docx, tmp.path().join("x.docx"), Existing::Refuse).await;
    assert_eq!(export.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.report(&a, run).await.unwrap().status, ReportStatus::AwaitingSignOff);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_the_report_run_fails_with_the_reason() {
    let (_tmp, api, server) = api(false).await;
    let scope = api.local_session().await.unwrap();
    let document = import(&api, &scope).await;
    let view = api.start_report(&scope, document, ReportOptions::default()).await.unwrap();
    assert_eq!(view.status, ReportStatus::Failed);
    assert!(view.reason.unwrap().contains("needs the model"));
    assert!(view.report.is_none());
    assert_eq!(report_calls(&server), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_takes_its_bounds_from_the_options_and_refuses_bad_ones() {
    let (_tmp, api, server) = api(true).await;
    let scope = api.local_session().await.unwrap();
    let document = import(&api, &scope).await;
    let bad = api.start_report(&scope, document, ReportOptions { max_calls: Some(0), time_limit_secs: None }).await;
    assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidInput);
    let view =
        api.start_report(&scope, document, ReportOptions { max_calls: Some(4), time_limit_secs: None }).await.unwrap();
    let report = view.report.unwrap();
    assert_eq!(report.completeness, ReportCompleteness::Incomplete);
    assert_eq!((report.bounds.calls_used, report.bounds.call_limit), (4, 4));
    assert_eq!(report_calls(&server), 4);
    let windows: Vec<&str> = report.unprocessed.iter().filter(|u| u.id.len() == 1).map(|u| u.id.as_str()).collect();
    assert_eq!(windows, ["5", "6"]);
    assert!(report.unprocessed.iter().all(|u| u.reason == UnprocessedReason::CallBudget));
}
