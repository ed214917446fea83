//! The contract review report (WF-CR-1) end to end on a file database, against the loopback fake Messages API:
//! invented clauses never reach the report, bad items are dropped at the edges and logged, the call budget and the
//! time limit end the run incomplete with the parts named, a crash resumes without repeating finished windows, and
//! a person signs the report off.

use chrono::{Duration, TimeZone, Utc};
use pactwise_domain::{
    ApprovalStatus, ContractReport, Decision, DocumentId, ExtractedDocument, FixedClock, MediaType, OrgId, Page,
    ReportCompleteness, ReportEdge, ReportPart, Role, RunId, RunStatus, UnprocessedReason,
};
use pactwise_engine::{AskFailure, Engine, GatewayModel, ModelPort, ModelSpec, Registry, RunState, ToolAsk};
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeRule, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, InMemoryUsage, ModelClient, ModelConfig};
use pactwise_store::{NewDocument, OrgScope, RunRecord, Store};
use pactwise_workflows::report::{GRAPH, Limits, ReportInput};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

const KEY: &str = "sk-ant-test-report-workflow-0001";
const INVENTED: &str = "Either Party may terminate this Agreement at any time without notice and without liability.";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/report").join(name)
}

/// The fixture contract's six pages (form feeds separate them).
fn pages() -> Vec<String> {
    std::fs::read_to_string(fixture("nda-six-pages.txt")).unwrap().split('\u{c}').map(|p| p.to_string()).collect()
}

/// The scripted replies shared with the CLI and end-to-end tests.
fn script() -> FakeScript {
    let mut script: FakeScript = serde_json::from_str(&std::fs::read_to_string(fixture("fake-model.json")).unwrap())
        .expect("the fixture is a fake-model script");
    script.api_key = Some(KEY.into());
    script
}

struct World {
    _rt: tokio::runtime::Runtime,
    server: FakeModelServer,
    gateway: GatewayModel,
    clock: Arc<FixedClock>,
    _dir: tempfile::TempDir,
    path: PathBuf,
    registry: Registry,
    org: OrgId,
    document: DocumentId,
}

impl World {
    fn new(script: FakeScript) -> World {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let server = rt.block_on(FakeModelServer::start(script)).unwrap();
        let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
        let usage = Arc::new(InMemoryUsage::new());
        let client = {
            let _guard = rt.enter();
            ModelClient::new(
                ModelConfig::default().with_endpoint(server.endpoint()),
                Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())),
                usage.clone(),
                usage,
                clock.clone(),
            )
            .unwrap()
        };
        let gateway = GatewayModel::new(Arc::new(client), rt.handle().clone());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pactwise.sqlite3");
        let store = Store::open(&path, clock.clone()).unwrap();
        let org = store.platform().create_organization("Northwind").unwrap();
        let scope = member(&store, org, "Rita Reviewer", Role::Reviewer);
        let document = add_contract(&store, &scope, &pages());
        World {
            _rt: rt,
            server,
            gateway,
            clock,
            _dir: dir,
            path,
            registry: pactwise_workflows::registry().unwrap(),
            org,
            document,
        }
    }

    fn store(&self) -> Store {
        Store::open(&self.path, self.clock.clone()).unwrap()
    }

    fn scope(&self, store: &Store, name: &str, role: Role) -> OrgScope {
        member(store, self.org, name, role)
    }

    fn input(&self, limits: Limits) -> Value {
        ReportInput { document: self.document, contract_type: "nda".into(), limits }.to_value()
    }

    /// Starts a report run and drives it until it waits or ends, with `model` as the engine's model.
    fn run(&self, limits: Limits, model: Option<&dyn ModelPort>) -> (Store, RunRecord) {
        let store = self.store();
        let scope = self.scope(&store, "Starter", Role::Reviewer);
        let (store, credential) = store.into_platform_worker("test-worker").into_parts();
        let record = {
            let engine = Engine::new(&store, &self.registry, &credential).with_model(model);
            let id = engine.start(&scope, GRAPH, self.input(limits)).unwrap();
            engine.drive(id).unwrap()
        };
        (store, record)
    }

    /// Request bodies of the report's model calls (the tool each forces), in order.
    fn report_requests(&self) -> Vec<Value> {
        self.server
            .message_requests()
            .into_iter()
            .map(|r| r.body)
            .filter(|b| matches!(tool_of(b).as_str(), "record_clauses" | "record_clause_type"))
            .collect()
    }

    fn requests_containing(&self, needle: &str) -> usize {
        self.report_requests().iter().filter(|b| b["messages"].to_string().contains(needle)).count()
    }
}

fn tool_of(body: &Value) -> String {
    body["tool_choice"]["name"].as_str().unwrap_or_default().to_string()
}

fn member(store: &Store, org: OrgId, name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let user = p.create_user(name, None).unwrap();
    p.set_membership(org, user, role).unwrap();
    store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
}

fn add_contract(store: &Store, scope: &OrgScope, pages: &[String]) -> DocumentId {
    let hash = format!("{:064x}", pages.iter().map(|p| p.len()).sum::<usize>());
    let new =
        NewDocument { name: "nda.txt".into(), media_type: MediaType::Txt, size: 2_000, content_hash: hash.clone() };
    let (document, _) = store.documents().record(scope, &new).unwrap();
    let extracted = ExtractedDocument {
        media_type: MediaType::Txt,
        content_hash: hash,
        pages: pages.iter().enumerate().map(|(i, t)| Page::plain(i as u32 + 1, t.clone())).collect(),
        synthetic: true,
        headers: Vec::new(),
        footers: Vec::new(),
    };
    store.pages().save(scope, document.id, &extracted).unwrap();
    document.id
}

fn channel(record: &RunRecord, name: &str) -> Value {
    serde_json::from_str::<RunState>(&record.state).unwrap().channels.get(name).cloned().unwrap_or(Value::Null)
}

fn report_of(record: &RunRecord) -> ContractReport {
    serde_json::from_value(channel(record, "report")).expect("the run has a report")
}

fn limits(max_calls: u32, minutes: u64) -> Limits {
    Limits { max_calls, time_limit_ms: minutes * 60 * 1000 }
}

/// Captures what the workflow logs on this thread while `f` runs (the engine runs handlers on the calling
/// thread). One global subscriber writes into a per-thread buffer, so tests running in parallel do not mix.
fn logged<R>(f: impl FnOnce() -> R) -> (R, String) {
    thread_local! {
        static CAPTURED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    struct ThisThread;
    impl std::io::Write for ThisThread {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            CAPTURED.with(|c| c.borrow_mut().extend_from_slice(bytes));
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        tracing_subscriber::fmt()
            .with_writer(|| ThisThread)
            .with_ansi(false)
            .with_env_filter("pactwise_workflows=warn")
            .init();
    });
    CAPTURED.with(|c| c.borrow_mut().clear());
    let result = f();
    let text = CAPTURED.with(|c| String::from_utf8_lossy(&c.borrow()).into_owned());
    (result, text)
}

#[test]
fn an_invented_clause_never_reaches_the_report_and_is_listed_as_rejected() {
    let world = World::new(script());
    let pages = pages();
    assert!(!pages.iter().any(|p| p.contains(INVENTED)), "the scripted clause is not in the contract");
    let (store, record) = world.run(Limits::default(), Some(&world.gateway));
    assert_eq!(record.status, RunStatus::Waiting, "{:?}", record.reason);
    let report = report_of(&record);
    assert_eq!(report.completeness, ReportCompleteness::Complete);
    assert_eq!(channel(&record, "outcome")["status"], "complete_awaiting_sign_off");

    // Every clause shown is on the page it cites, word for word up to whitespace and typography.
    let shown = report.shown_clauses();
    assert!(shown.len() >= 10, "{shown:?}");
    for c in &shown {
        assert!(pages[c.page as usize - 1].contains(&c.text), "{c:?}");
    }
    assert!(!shown.iter().any(|c| c.text.contains("terminate this Agreement at any time")));
    let rejected: Vec<(&str, &str, u32)> =
        report.rejected.iter().map(|r| (r.clause_id.as_str(), r.reason.as_str(), r.page)).collect();
    assert_eq!(rejected, [("W1-c3", "quote_not_found", 1)]);
    assert_eq!(report.rejected[0].text, INVENTED);
    assert_eq!(report.rejected[0].claimed_types, ["nda.term.confidentiality_duration"]);
    let duration = report.clause_types.iter().find(|t| t.item_id == "nda.term.confidentiality_duration").unwrap();
    assert_eq!(duration.clauses.iter().map(|c| c.clause_id.as_str()).collect::<Vec<_>>(), ["W4-c1"]);

    // A clause filed under two types is under each, marked with the other.
    let definition = report.clause_types.iter().find(|t| t.item_id == "nda.scope.definition").unwrap();
    assert_eq!(definition.clauses[0].also_under, ["nda.scope.marking"]);

    // What the person signing off sees is this report, invented clause only among the rejected.
    let approvals = store.approvals().for_run(&world.scope(&store, "Viewer", Role::Viewer), record.id).unwrap();
    assert_eq!(approvals.len(), 1);
    let seen: ContractReport = serde_json::from_value(approvals[0].state_seen["report"].clone()).unwrap();
    assert_eq!(seen, report);

    // One call per window and one per clause type of the playbook (24 NDA items), prompts fenced as untrusted.
    let requests = world.report_requests();
    assert_eq!(requests.len(), 6 + 24);
    assert_eq!(report.bounds.calls_used, 30);
    let first = &requests[0];
    assert!(first["messages"].to_string().contains("trust=\\\"untrusted\\\""), "{first}");
    assert!(first["system"].to_string().contains("word for word"), "the graph's prompt is the instruction");
}

#[test]
fn an_out_of_window_page_and_a_malformed_item_are_dropped_and_logged() {
    let world = World::new(script());
    let ((_, record), log) = logged(|| world.run(Limits::default(), Some(&world.gateway)));
    let report = report_of(&record);
    let extract_drops: Vec<(Option<u32>, &str)> = report
        .dropped
        .iter()
        .filter(|d| d.edge == ReportEdge::Extract)
        .map(|d| (d.window, d.reason.as_str()))
        .collect();
    assert_eq!(extract_drops, [(Some(2), "page 9 is outside the window (page 2)"), (Some(2), "text is missing")]);
    assert!(report.dropped[0].received.contains("indemnify"), "{:?}", report.dropped[0]);
    assert!(!report.shown_clauses().iter().any(|c| c.text.contains("indemnify")));
    assert!(!report.rejected.iter().any(|r| r.clause_id.starts_with("W2-c3") || r.clause_id == "W2-c4"));
    assert_eq!(log.matches("extracted item dropped at the edge").count(), 2, "{log}");
    assert!(log.contains("page 9 is outside the window"), "{log}");
}

#[test]
fn an_unknown_clause_id_is_rejected_at_the_edge() {
    let world = World::new(script());
    let ((_, record), log) = logged(|| world.run(Limits::default(), Some(&world.gateway)));
    let report = report_of(&record);
    let unknown: Vec<_> = report.dropped.iter().filter(|d| d.edge == ReportEdge::Classify).collect();
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].item_id.as_deref(), Some("nda.general.governing_law"));
    assert_eq!(unknown[0].received, "\"W7-c1\"");
    assert!(unknown[0].reason.starts_with("unknown clause id"));
    let law = report.clause_types.iter().find(|t| t.item_id == "nda.general.governing_law").unwrap();
    assert_eq!(law.clauses.iter().map(|c| c.clause_id.as_str()).collect::<Vec<_>>(), ["W6-c2"]);
    assert!(log.contains("clause id rejected at the edge"), "{log}");
}

#[test]
fn the_call_budget_ends_the_run_incomplete_with_the_parts_named() {
    // Window 3 fails once (and is retried), so ten calls cover the six windows and three clause types.
    let mut script = script();
    script
        .rules
        .insert(0, FakeRule { times: Some(1), ..FakeRule::new("This is window 3 of 6:", FakeReply::error(500)) });
    let world = World::new(script);
    let (_, record) = world.run(limits(10, 5), Some(&world.gateway));
    assert_eq!(record.status, RunStatus::Waiting, "an incomplete report still waits for sign-off");
    let report = report_of(&record);
    assert_eq!(report.completeness, ReportCompleteness::Incomplete);
    assert_eq!(channel(&record, "outcome")["status"], "incomplete_awaiting_sign_off");
    assert_eq!(world.report_requests().len(), 10);
    assert_eq!(report.bounds.calls_used, 10);
    assert!(report.windows.iter().all(|w| w.processed));
    let unprocessed: Vec<(&ReportPart, &str, UnprocessedReason)> =
        report.unprocessed.iter().map(|u| (&u.part, u.id.as_str(), u.reason)).collect();
    assert_eq!(unprocessed.len(), 24 - 3, "{unprocessed:?}");
    assert!(unprocessed.iter().all(|(p, _, r)| **p == ReportPart::ClauseType && *r == UnprocessedReason::CallBudget));
    assert_eq!(unprocessed[0].1, "nda.scope.definition", "the fourth clause type is the first not processed");
    assert!(report.clause_types[..3].iter().all(|t| t.processed));
}

/// The model as seen through a clock: every call takes `per_call` of the injected clock's time.
struct Slow<'a> {
    inner: &'a dyn ModelPort,
    clock: Arc<FixedClock>,
    per_call: Duration,
}

impl ModelPort for Slow<'_> {
    fn draft(&self, org: OrgId, spec: &ModelSpec, data: &Value) -> Result<String, String> {
        self.inner.draft(org, spec, data)
    }

    fn ask_tool(&self, org: OrgId, spec: &ModelSpec, ask: &ToolAsk) -> Result<Value, AskFailure> {
        let reply = self.inner.ask_tool(org, spec, ask);
        self.clock.advance(self.per_call);
        reply
    }
}

#[test]
fn the_time_limit_ends_the_run_incomplete_with_the_parts_named() {
    let world = World::new(script());
    let slow = Slow { inner: &world.gateway, clock: world.clock.clone(), per_call: Duration::seconds(70) };
    let (_, record) = world.run(limits(60, 5), Some(&slow));
    let report = report_of(&record);
    assert_eq!(report.completeness, ReportCompleteness::Incomplete);
    // 0 s, 70 s, 140 s, 210 s, 280 s: five calls start within five minutes; the sixth would start at 350 s.
    assert_eq!(world.report_requests().len(), 5);
    assert_eq!(report.bounds.time_used_ms, 350_000);
    let windows: Vec<(&str, UnprocessedReason)> =
        report.unprocessed.iter().filter(|u| u.part == ReportPart::Window).map(|u| (u.id.as_str(), u.reason)).collect();
    assert_eq!(windows, [("6", UnprocessedReason::TimeLimit)]);
    assert_eq!(report.unprocessed.iter().find(|u| u.id == "6").unwrap().label, "page 6");
    let types = report.unprocessed.iter().filter(|u| u.part == ReportPart::ClauseType).count();
    assert_eq!(types, 24, "no clause type was asked about");
    assert!(report.unprocessed.iter().all(|u| u.reason == UnprocessedReason::TimeLimit));
    // What was extracted in time is still verified and reported, unassigned to any type.
    assert!(!report.unassigned.is_empty());
    assert!(report.rejected.iter().any(|r| r.text == INVENTED));
}

/// Forwards calls until the `crash_at`-th, which reaches the server and then takes the process down.
struct CrashAt<'a> {
    inner: &'a dyn ModelPort,
    calls: AtomicU32,
    crash_at: u32,
}

impl ModelPort for CrashAt<'_> {
    fn draft(&self, org: OrgId, spec: &ModelSpec, data: &Value) -> Result<String, String> {
        self.inner.draft(org, spec, data)
    }

    fn ask_tool(&self, org: OrgId, spec: &ModelSpec, ask: &ToolAsk) -> Result<Value, AskFailure> {
        let reply = self.inner.ask_tool(org, spec, ask);
        if self.calls.fetch_add(1, Ordering::SeqCst) + 1 == self.crash_at {
            panic!("simulated crash before the step's commit");
        }
        reply
    }
}

#[test]
fn a_crash_after_some_windows_resumes_without_repeating_their_calls() {
    let world = World::new(script());
    // The process dies during window 4's step, after its request went out and before its commit.
    let run: RunId = {
        let store = world.store();
        let scope = world.scope(&store, "Starter", Role::Reviewer);
        let (store, credential) = store.into_platform_worker("worker-before-the-crash").into_parts();
        let crashing = CrashAt { inner: &world.gateway, calls: AtomicU32::new(0), crash_at: 4 };
        let engine = Engine::new(&store, &world.registry, &credential).with_model(Some(&crashing));
        let id = engine.start(&scope, GRAPH, world.input(Limits::default())).unwrap();
        let crashed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.drive(id)));
        assert!(crashed.is_err());
        id
    };
    let before: Vec<u32> =
        (1..=6).map(|w| world.requests_containing(&format!("This is window {w} of 6:")) as u32).collect();
    assert_eq!(before, [1, 1, 1, 1, 0, 0]);
    {
        let store = world.store();
        let (store, inspector) = store.into_platform_worker("inspector").into_parts();
        let checkpointed = store.runs().load(&inspector, run).unwrap();
        let windows = channel(&checkpointed, "windows");
        assert_eq!(windows.as_object().unwrap().keys().collect::<Vec<_>>(), ["1", "2", "3"]);
    }

    // A new process: once the dead worker's lease has run out, another worker claims the run and finishes it.
    world.clock.advance(Duration::minutes(2));
    let store = world.store();
    let (store, credential) = store.into_platform_worker("worker-after-the-crash").into_parts();
    let engine = Engine::new(&store, &world.registry, &credential).with_model(Some(&world.gateway));
    let records = engine.work(10).unwrap();
    let record = records.iter().find(|r| r.id == run).expect("the run was resumed");
    assert_eq!(record.status, RunStatus::Waiting);
    let after: Vec<u32> =
        (1..=6).map(|w| world.requests_containing(&format!("This is window {w} of 6:")) as u32).collect();
    assert_eq!(after, [1, 1, 1, 2, 1, 1], "finished windows are not asked again; the one in flight is");
    assert_eq!(world.requests_containing("Clause type "), 24);
    let report = report_of(record);
    assert_eq!(report.completeness, ReportCompleteness::Complete);
    // The call lost with the crash was not checkpointed, so the budget counts 30 of the 31 requests made.
    assert_eq!(report.bounds.calls_used, 30);
}

#[test]
fn calls_never_exceed_the_budget() {
    // Every third request fails, so retries eat into the budget at different points.
    let mut script = script();
    script
        .rules
        .insert(0, FakeRule { times: Some(3), ..FakeRule::new("This is window 2 of 6:", FakeReply::error(503)) });
    script.rules.insert(
        0,
        FakeRule { times: Some(1), ..FakeRule::new("Clause type nda.scope.definition (", FakeReply::error(500)) },
    );
    let world = World::new(script);
    let mut seen = 0;
    for budget in [1, 2, 3, 5, 7, 8, 9, 12, 31, 40] {
        let (_, record) = world.run(limits(budget, 5), Some(&world.gateway));
        let made = world.report_requests().len() - seen;
        seen += made;
        let report = report_of(&record);
        assert!(made as u32 <= budget, "budget {budget}: {made} requests");
        assert_eq!(report.bounds.calls_used as usize, made, "budget {budget}");
        assert_eq!(report.bounds.call_limit, budget);
        if report.completeness == ReportCompleteness::Incomplete {
            assert!(!report.unprocessed.is_empty());
        }
    }
}

#[test]
fn a_window_that_fails_twice_is_unprocessed_and_the_rest_goes_on() {
    let mut script = script();
    script.rules.insert(0, FakeRule::new("This is window 5 of 6:", FakeReply::error(500)));
    let world = World::new(script);
    let (_, record) = world.run(Limits::default(), Some(&world.gateway));
    let report = report_of(&record);
    assert_eq!(report.completeness, ReportCompleteness::Incomplete);
    assert_eq!(world.requests_containing("This is window 5 of 6:"), 2, "one retry, no more");
    let parts: Vec<(ReportPart, &str, UnprocessedReason)> =
        report.unprocessed.iter().map(|u| (u.part, u.id.as_str(), u.reason)).collect();
    assert_eq!(parts, [(ReportPart::Window, "5", UnprocessedReason::ModelFailed)]);
    assert!(report.unprocessed[0].detail.as_deref().unwrap().contains("500"), "{:?}", report.unprocessed[0]);
    assert!(report.clause_types.iter().all(|t| t.processed));
}

#[test]
fn without_a_model_the_run_fails_with_a_clear_reason() {
    let world = World::new(script());
    let (_, record) = world.run(Limits::default(), None);
    assert_eq!(record.status, RunStatus::Failed);
    assert!(record.reason.as_deref().unwrap().contains("needs the model"), "{:?}", record.reason);
    assert!(world.report_requests().is_empty());
}

#[test]
fn a_reviewer_signs_the_report_off_and_who_and_when_are_recorded() {
    let world = World::new(script());
    let (store, record) = world.run(Limits::default(), Some(&world.gateway));
    let (store, credential) = store.into_platform_worker("test-worker").into_parts();
    let engine = Engine::new(&store, &world.registry, &credential).with_model(Some(&world.gateway));
    let reviewer = world.scope(&store, "Lena Lawyer", Role::Reviewer);
    let approval = store.approvals().for_run(&reviewer, record.id).unwrap().remove(0);
    assert_eq!(approval.node, "sign_off");

    // A buyer may not sign a contract review report off.
    let buyer = world.scope(&store, "Bob Buyer", Role::Buyer);
    assert!(engine.decide(&buyer, approval.id, Decision::Approve, "looks fine", None).is_err());

    world.clock.advance(Duration::minutes(30));
    let (decided, run) =
        engine.decide(&reviewer, approval.id, Decision::Approve, "Checked against the contract", None).unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert_eq!(decided.decided_by, Some(reviewer.user()));
    assert_eq!(run.status, RunStatus::Succeeded);
    let outcome = channel(&run, "outcome");
    assert_eq!(outcome["status"], "signed_off");
    assert_eq!(outcome["by"], "Lena Lawyer");
    assert_eq!(outcome["completeness"], "complete");
    let now = pactwise_domain::Clock::now(world.clock.as_ref());
    assert_eq!(outcome["at"], json!(now));
}

#[test]
fn a_bound_reached_before_any_clause_was_extracted_leaves_every_clause_type_unprocessed_with_that_reason() {
    let mut script = script();
    script.rules.insert(0, FakeRule::new("This is window 1 of 6:", FakeReply::error(500)));
    let world = World::new(script);
    let (_, record) = world.run(limits(2, 5), Some(&world.gateway));
    let report = report_of(&record);
    assert_eq!(world.report_requests().len(), 2, "the window's call and its one retry");
    let reasons: Vec<(ReportPart, UnprocessedReason)> = report.unprocessed.iter().map(|u| (u.part, u.reason)).collect();
    assert_eq!(reasons[0], (ReportPart::Window, UnprocessedReason::ModelFailed));
    assert!(reasons[1..6].iter().all(|r| *r == (ReportPart::Window, UnprocessedReason::CallBudget)));
    assert_eq!(reasons[6..].len(), 24);
    assert!(reasons[6..].iter().all(|r| *r == (ReportPart::ClauseType, UnprocessedReason::CallBudget)));
    assert!(report.shown_clauses().is_empty() && report.rejected.is_empty());
}
