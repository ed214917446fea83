//! The dry run: the whole stage machine with no model calls, on every route. A model is configured and ready (a
//! loopback fake server that counts requests), so each route is taken with a model a real run would use, and the
//! server must see no request at all. The rules stand in for the model's answers; the gate leaves the stand-in
//! type to the model (`Mode::DryRun`). Without a model a real run is an offline one, and so is its dry run: there
//! the keyword type is unresolved, as it would be for real.

use pactwise_checklists::Catalog;
use pactwise_domain::{Confidence, GateReason, ItemStatus, OrgId, Page, PageSource, RiskLevel, Route, SystemClock};
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeRule, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, InMemoryUsage, ModelClient, ModelConfig, ModelStatus};
use pactwise_pipeline::driver::MemoryLog;
use pactwise_pipeline::stages::ItemCorrection;
use pactwise_pipeline::{Mode, PipelineReport, Runner, Stage, StageStatus, Thresholds, run};
use std::sync::Arc;

const KEY: &str = "sk-ant-test-key-for-the-dry-run-tests";

const CONTRACT: &str = "MASTER SERVICES AGREEMENT\n\nThis Master Services Agreement is made on January 15, 2026 between \
Northwind Traders, Inc. (\"Customer\") and Fabrikam Consulting Group, Inc. (\"Supplier\").\n\n1. SERVICES. Supplier \
shall perform the services described in each statement of work.\n\n2. FEES. Customer shall pay each undisputed \
invoice within thirty (30) days of receipt.\n\n3. TERM. This Agreement continues for two years and renews \
automatically for successive one-year terms unless either party gives ninety (90) days' notice.\n\n4. LIABILITY. In \
no event shall either party's aggregate liability exceed the fees paid in the twelve months before the claim.\n\n5. \
GOVERNING LAW. This Agreement is governed by the laws of the State of New York.";

struct Setup {
    server: FakeModelServer,
    model: Arc<ModelClient>,
    catalog: Arc<Catalog>,
}

/// A model that is ready and would answer anything: a dry run must still not ask it.
async fn setup() -> Setup {
    let rules = vec![FakeRule::new("", FakeReply::text("this reply must never be asked for"))];
    let server =
        FakeModelServer::start(FakeScript { api_key: Some(KEY.into()), rules, ..FakeScript::default() }).await.unwrap();
    let usage = Arc::new(InMemoryUsage::new());
    let model = ModelClient::new(
        ModelConfig::default().with_endpoint(server.endpoint()),
        Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())),
        usage.clone(),
        usage,
        Arc::new(SystemClock),
    )
    .unwrap();
    let model = Arc::new(model);
    assert_eq!(model.status().await, ModelStatus::Ready, "a real run would use the model");
    Setup { server, model, catalog: Arc::new(Catalog::load().unwrap()) }
}

fn runner(s: &Setup, mode: Mode) -> Runner {
    Runner {
        catalog: s.catalog.clone(),
        model: Some(s.model.clone()),
        ctx: pactwise_model::CallContext::new(OrgId::new(), None, "test"),
        mode,
        thresholds: Thresholds::default(),
        own_names: vec!["Northwind Traders, Inc.".into()],
        concurrency: 2,
        embedder: None,
    }
}

fn ocr_page(number: u32, text: &str, confidence: Confidence) -> Page {
    let mut page = Page::plain(number, text);
    page.source = PageSource::Ocr;
    page.confidence = confidence;
    page
}

/// Runs the whole machine keeping nothing, and checks it ran every stage and asked the model nothing.
async fn dry_run(s: &Setup, mode: Mode, pages: &[Page], failure: Option<&str>, log: MemoryLog) -> PipelineReport {
    let mut log = log;
    let report = run(&runner(s, mode), &mut log, pages, failure, None).await.unwrap();
    let ran: Vec<Stage> = report.stages.iter().map(|r| r.stage).collect();
    assert_eq!(ran, Stage::ALL, "the whole machine ran");
    assert!(report.stages.iter().all(|r| r.status.is_finished() && r.model.is_none()), "{:?}", report.stages);
    assert!(report.stages.iter().all(|r| r.tokens.input == 0 && r.tokens.output == 0));
    assert_eq!(report.halted_at, None);
    assert_eq!(s.server.requests().len(), 0, "a dry run makes no model request");
    report
}

fn route(report: &PipelineReport) -> (Route, Option<GateReason>) {
    let gate = report.gate.as_ref().unwrap();
    (gate.route, gate.reason)
}

/// A person's confirmation of every critical item the rules answered (and of those they left open).
fn critical_confirmed(s: &Setup, report: &PipelineReport) -> Vec<ItemCorrection> {
    let type_id = &report.classification.as_ref().unwrap().type_id;
    let t = s.catalog.contract_type(type_id).unwrap();
    report
        .findings
        .iter()
        .filter(|f| t.items.iter().any(|i| i.id == f.item_id && i.risk == RiskLevel::Critical))
        .map(|f| ItemCorrection {
            item_id: f.item_id.clone(),
            status: if f.status == ItemStatus::NotEvaluated { ItemStatus::Absent } else { f.status },
            quote: f.quote.clone(),
            note: None,
        })
        .collect()
}

fn contract() -> Vec<Page> {
    vec![Page::plain(1, CONTRACT)]
}

#[tokio::test]
async fn a_dry_run_takes_every_route_of_the_gate_without_a_single_model_request() {
    let s = setup().await;
    // The rules answer the critical items with low confidence: a person is needed for them.
    let plain = dry_run(&s, Mode::DryRun, &contract(), None, MemoryLog::default()).await;
    assert_eq!(route(&plain), (Route::Person, Some(GateReason::CriticalLowConfidence)));
    assert_eq!(plain.classification.as_ref().unwrap().type_id, "msa");

    // Auto: a person has confirmed the critical items; the stand-in type is left to the model.
    let confirmed = || MemoryLog { corrections: critical_confirmed(&s, &plain), ..MemoryLog::default() };
    let auto = dry_run(&s, Mode::DryRun, &contract(), None, confirmed()).await;
    assert_eq!(route(&auto), (Route::Auto, None));

    // Each reason that comes from the pages, with everything else as in the auto case.
    let unreadable = dry_run(&s, Mode::DryRun, &[], Some("the PDF is password-protected"), confirmed()).await;
    assert_eq!(route(&unreadable), (Route::Person, Some(GateReason::OcrFailed)));
    assert_eq!(unreadable.stages[0].outcome.as_deref(), Some("unreadable"));

    let low = [ocr_page(1, CONTRACT, Confidence::Measured(0.40))];
    assert_eq!(route(&dry_run(&s, Mode::DryRun, &low, None, confirmed()).await).1, Some(GateReason::OcrConfidenceLow));

    let estimated = [ocr_page(1, CONTRACT, Confidence::Estimated(0.99))];
    let report = dry_run(&s, Mode::DryRun, &estimated, None, confirmed()).await;
    assert_eq!(route(&report).1, Some(GateReason::OcrConfidenceEstimated));

    // No text at all (a text layer that is empty): nothing can be answered.
    let blank = [Page::plain(1, "   ")];
    let report = dry_run(&s, Mode::DryRun, &blank, None, MemoryLog::default()).await;
    assert_eq!(route(&report), (Route::Person, Some(GateReason::TooManyNotEvaluated)));

    // Without a model a real run is the offline one and so is its dry run: the keyword type is not certain.
    let offline = dry_run(&s, Mode::Offline, &contract(), None, confirmed()).await;
    assert_eq!(route(&offline), (Route::Person, Some(GateReason::ClassificationUnresolved)));
    assert_eq!(s.server.requests().len(), 0);
}

/// Red flags come only from the model (the rules never raise one), so a dry run shows that route when a model run
/// recorded its checklist and stopped before the gate: the machine resumes with the gate and finalize, asking the
/// model nothing.
#[tokio::test]
async fn a_dry_run_over_a_recorded_model_checklist_routes_its_red_flag_without_asking_the_model() {
    let s = setup().await;
    let mut log = MemoryLog::default();
    let _ = run(&runner(&s, Mode::DryRun), &mut log, &contract(), None, None).await.unwrap();
    log.records.retain(|r| r.stage <= Stage::Checklist);
    let checklist = log.records.iter_mut().find(|r| r.stage == Stage::Checklist).unwrap();
    checklist.model = Some(pactwise_model::MODEL_ID.into());
    let flagged = &mut checklist.output.as_mut().unwrap()["findings"][0];
    flagged["red_flags"] = serde_json::json!(["Provider may suspend services for any late payment without notice"]);
    let report = run(&runner(&s, Mode::DryRun), &mut log, &contract(), None, None).await.unwrap();
    assert_eq!(route(&report), (Route::Person, Some(GateReason::RedFlag)));
    assert!(report.stages.iter().all(|r| r.status == StageStatus::Done || r.status == StageStatus::Degraded));
    assert_eq!(s.server.requests().len(), 0, "a dry run makes no model request");
}
