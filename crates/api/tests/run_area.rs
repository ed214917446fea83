//! The Runs area through the api: forms checked before a run starts, the work loop moving timers and retries by a
//! fixed clock, runs and approvals told in words, and the evidence an approver reads shaped per graph.

use chrono::{Duration, TimeZone, Utc};
use pactwise_api::{Api, OrgScope};
use pactwise_api::{ApiOptions, ApprovalEvidence, FormFieldKind, LinkTarget, RunFilter, Tone, WorkRound};
use pactwise_domain::{Clock, Decision, ErrorCode, FixedClock, Role, RunStatus};
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn t0() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 10, 42, 0).unwrap()
}

async fn open_with(dir: &std::path::Path, workflows: Option<Registry>) -> (Api, OrgScope, Arc<FixedClock>) {
    let clock = Arc::new(FixedClock::new(t0()));
    let options = ApiOptions {
        clock: clock.clone(),
        keys: Arc::new(pactwise_model::InMemoryApiKeySource::empty()),
        workflows,
        ..ApiOptions::default()
    };
    let api = Api::open_with(dir.join("data"), options).unwrap();
    let scope = api.local_session().await.unwrap();
    (api, scope, clock)
}

/// A second connection to the same database, for what the test sets up beside the api.
fn side_store(api: &Api) -> pactwise_store::Store {
    pactwise_store::Store::open(&api.data_dir().database(), Arc::new(pactwise_domain::SystemClock)).unwrap()
}

/// Another member of the organization, with a name and a role.
fn member(api: &Api, owner: &OrgScope, name: &str, role: Role) -> OrgScope {
    let store = side_store(api);
    let platform = store.platform();
    let user = platform.create_user(name, None).unwrap();
    platform.set_membership(owner.org(), user, role).unwrap();
    let session = platform.start_session(user, owner.org()).unwrap();
    store.sessions().open(session).unwrap()
}

/// A session in a second organization of the same installation.
fn other_organization(api: &Api) -> OrgScope {
    let store = side_store(api);
    let platform = store.platform();
    let org = platform.create_organization("Elsewhere Inc").unwrap();
    let user = platform.create_user("Eve Other", None).unwrap();
    platform.set_membership(org, user, Role::Owner).unwrap();
    let session = platform.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn procurement() -> Value {
    json!({"request": "REQ-7 standing desks", "budget": 10000, "capabilities": ["office_furniture", "delivery"]})
}

#[tokio::test]
async fn a_bad_form_is_refused_naming_the_field_and_nothing_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope, _) = open_with(tmp.path(), None).await;
    let cases = [
        (json!({"budget": 10000}), "Request"),
        (json!({"request": "desks", "budget": "ten thousand"}), "Budget"),
        (
            json!({"request": "desks", "budget": 100, "vendors": [{"name": "Acme", "price": 5}, {"price": 7}]}),
            "Vendors, row 2: Vendor",
        ),
        (json!({"request": "desks", "budget": 100, "capabilities": "delivery"}), "Required capabilities"),
    ];
    for (input, field) in cases {
        let e = api.start_run(&scope, "procurement".into(), input.clone()).await.expect_err(&input.to_string());
        assert_eq!(e.code, ErrorCode::InvalidInput, "{e:?}");
        assert!(e.message.starts_with(&format!("{field}:")), "{field} / {}", e.message);
    }
    let e = api
        .start_run(&scope, "renewal_notice".into(), json!({"contract": "MSA", "notice_by": "31/03/2027"}))
        .await
        .unwrap_err();
    assert!(e.message.starts_with("Notice deadline:") && e.message.contains("2027-03-31"), "{}", e.message);
    assert!(api.list_runs(&scope).await.unwrap().is_empty(), "nothing was started");
    assert!(api.inbox(&scope).await.unwrap().is_empty(), "no approval was opened");
    // The same form filled in correctly starts.
    api.start_run(&scope, "procurement".into(), procurement()).await.unwrap();
    assert_eq!(api.list_runs(&scope).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_procurement_form_offers_the_organizations_vendor_records() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope, _) = open_with(tmp.path(), None).await;
    let forms = api.run_forms(&scope).await.unwrap();
    assert_eq!(forms[0].graph, "procurement", "the built-in order");
    let procurement = forms.iter().find(|f| f.graph == "procurement").unwrap();
    assert_eq!(procurement.title, "Procurement");
    let vendors = procurement.fields.iter().find(|f| f.key == "vendors").unwrap();
    assert_eq!(vendors.kind, FormFieldKind::Table);
    assert_eq!(vendors.initial, None, "no vendor records yet: the built-in table is used");
    assert!(forms.iter().find(|f| f.graph == "contract_review_report").unwrap().started_elsewhere.is_some());

    let store = side_store(&api);
    let side = store.sessions().open(scope.session()).unwrap();
    store.reviews().create_vendor(&side, "Globex Office").unwrap();
    store.reviews().create_vendor(&side, "Acme Furniture").unwrap();
    // Another organization's vendors never show.
    let other = other_organization(&api);
    store.reviews().create_vendor(&other, "Hidden Vendor").unwrap();

    let forms = api.run_forms(&scope).await.unwrap();
    let vendors = forms.iter().find(|f| f.graph == "procurement").unwrap().fields.iter().find(|f| f.key == "vendors");
    assert_eq!(
        vendors.unwrap().initial,
        Some(json!([{"name": "Acme Furniture"}, {"name": "Globex Office"}])),
        "the organization's vendor records, by name"
    );
}

/// A graph that waits five minutes, and one whose step fails once and is retried after two minutes.
fn test_registry() -> Registry {
    let mut r = pactwise_workflows::registry().unwrap();
    r.handler("test.done", |_: &NodeContext<'_>| Ok(NodeOutput::default().write("outcome", json!({"status": "done"}))));
    r.handler("test.flaky", |ctx: &NodeContext<'_>| {
        if ctx.attempt == 1 {
            Err(NodeFailure::Retryable("the supplier's service did not answer".into()))
        } else {
            Ok(NodeOutput::default().write("outcome", json!({"status": "sent"})))
        }
    });
    r.add_graph_json(
        r#"{"name": "timer_test", "version": 1, "title": "Cooling-off", "entry": ["pause"],
            "channels": {"outcome": "last_value"},
            "nodes": [{"id": "pause", "label": "Cooling-off period", "kind": "wait", "seconds": 300},
                      {"id": "done", "label": "Close", "kind": "agent", "handler": "test.done"}],
            "edges": [{"from": "pause", "to": "done"}]}"#,
    )
    .unwrap();
    r.add_graph_json(
        r#"{"name": "short_timer_test", "version": 1, "entry": ["pause"], "channels": {"outcome": "last_value"},
            "nodes": [{"id": "pause", "kind": "wait", "seconds": 45}, {"id": "done", "kind": "agent", "handler": "test.done"}],
            "edges": [{"from": "pause", "to": "done"}]}"#,
    )
    .unwrap();
    r.add_graph_json(
        r#"{"name": "retry_test", "version": 1, "title": "Send the order", "entry": ["send"],
            "channels": {"outcome": "last_value"},
            "nodes": [{"id": "send", "label": "Send the order", "kind": "agent", "handler": "test.flaky",
                       "retry": {"max_attempts": 3, "backoff_ms": 120000}}]}"#,
    )
    .unwrap();
    r
}

#[tokio::test]
async fn the_work_loop_moves_a_timer_waiting_run_and_a_due_retry_by_the_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope, clock) = open_with(tmp.path(), Some(test_registry())).await;
    let timer = api.start_run(&scope, "timer_test".into(), json!({})).await.unwrap();
    let retry = api.start_run(&scope, "retry_test".into(), json!({})).await.unwrap();
    assert_eq!(timer.status, RunStatus::Waiting);
    assert_eq!(retry.status, RunStatus::Running, "waiting for its retry");

    // The retry reads in words, with when it is tried again.
    let story = api.run_story(&scope, retry.id).await.unwrap();
    let now = story.now.clone().unwrap();
    assert_eq!(now.text, "Retrying “Send the order” in 2 min after a failed attempt");
    assert_eq!(now.until, Some(t0() + Duration::minutes(2)));
    assert!(
        story.timeline.iter().any(|l| l.text
            == "Send the order: attempt 1 failed; retrying in 2 min after: the supplier's service did not answer"
            && l.tone == Tone::Warn),
        "{:?}",
        story.timeline
    );
    let waiting = api.run_story(&scope, timer.id).await.unwrap().now.unwrap();
    assert_eq!(waiting.text, "Waiting at “Cooling-off period”, going on in 5 min");

    // Nothing is due yet: the next due time is the lease the retrying run holds (60 s), not a busy poll.
    let round = api.work_round().await.unwrap();
    assert!(!round.changed(), "{round:?}");
    assert_eq!(round.next_due, Some(t0() + Duration::seconds(60)));
    assert_eq!(round.pause_after(clock.now()), std::time::Duration::from_secs(60));

    clock.advance(Duration::seconds(61));
    let round = api.work_round().await.unwrap();
    assert_eq!(round.leases_recovered, 1, "a waiting run holds no lease");
    assert!(round.moved.is_empty());
    assert_eq!(round.next_due, Some(t0() + Duration::minutes(2)), "the retry is next");

    clock.advance(Duration::seconds(60));
    let round = api.work_round().await.unwrap();
    assert_eq!(round.moved.iter().map(|r| (r.id, r.status)).collect::<Vec<_>>(), [(retry.id, RunStatus::Succeeded)]);
    assert_eq!(round.next_due, Some(t0() + Duration::minutes(5)), "then the timer");

    clock.advance(Duration::minutes(3));
    let round = api.work_round().await.unwrap();
    assert_eq!(round.moved.iter().map(|r| (r.id, r.status)).collect::<Vec<_>>(), [(timer.id, RunStatus::Succeeded)]);
    assert_eq!(round.next_due, None, "nothing left to do on its own");
    assert_eq!(round.pause_after(clock.now()), pactwise_api::MAX_IDLE);

    let story = api.run_story(&scope, retry.id).await.unwrap();
    assert!(story.now.is_none() && !story.may_cancel);
    assert!(
        story.timeline.iter().any(|l| l.text.contains("attempt 1 failed; tried again 2 min later")),
        "{:?}",
        story.timeline
    );
    assert_eq!(story.summary.outcome.as_deref(), Some("Sent"));
}

/// A pause that moves the fixed clock instead of sleeping, and remembers what it was asked for.
struct ClockPause {
    clock: Arc<FixedClock>,
    asked: Mutex<Vec<std::time::Duration>>,
}

impl pactwise_sync::Pause for ClockPause {
    fn pause(&self, d: std::time::Duration) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        // Only a pause that is awaited counts (the loop may build one and stop instead).
        Box::pin(async move {
            self.asked.lock().unwrap().push(d);
            self.clock.advance(Duration::from_std(d).unwrap());
        })
    }
}

#[tokio::test]
async fn the_loop_sleeps_until_the_next_due_time_and_tells_when_runs_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope, clock) = open_with(tmp.path(), Some(test_registry())).await;
    let timer = api.start_run(&scope, "short_timer_test".into(), json!({})).await.unwrap();
    let pause = Arc::new(ClockPause { clock: clock.clone(), asked: Mutex::new(Vec::new()) });
    let changes: Arc<Mutex<Vec<WorkRound>>> = Arc::default();
    let seen = changes.clone();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let done_tx = Mutex::new(Some(done_tx));
    api.run_work_loop(
        pause.clone(),
        move |round| {
            seen.lock().unwrap().push(round.clone());
            if round.moved.iter().any(|r| r.status == RunStatus::Succeeded) {
                let _ = done_tx.lock().unwrap().take().map(|tx| tx.send(()));
            }
        },
        async move {
            let _ = done_rx.await;
        },
    )
    .await;
    // It slept exactly until the timer was due (45 s): one pause, no polling.
    let asked = pause.asked.lock().unwrap().clone();
    assert_eq!(asked, [std::time::Duration::from_secs(45)]);
    let changes = changes.lock().unwrap().clone();
    assert_eq!(changes.len(), 1, "told once, when the run moved");
    assert_eq!(changes[0].moved[0].id, timer.id);
    assert_eq!(api.run_story(&scope, timer.id).await.unwrap().summary.status, RunStatus::Succeeded);
}

#[tokio::test]
async fn a_procurement_run_reads_in_words_with_its_shortlist_deciders_and_decision() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope, clock) = open_with(tmp.path(), None).await;
    let ana = member(&api, &scope, "Ana Ruiz", Role::Approver);
    member(&api, &scope, "Rita Reviewer", Role::Reviewer);
    let run = api.start_run(&scope, "procurement".into(), procurement()).await.unwrap();

    let inbox = api.inbox(&ana).await.unwrap();
    let reading = api.approval_reading(&ana, inbox[0].id).await.unwrap();
    assert_eq!(reading.workflow, "Procurement");
    assert_eq!(reading.step, "Choose the vendor");
    assert_eq!(reading.since, t0());
    assert!(reading.deciders.contains(&"Ana Ruiz".to_string()));
    assert!(!reading.deciders.contains(&"Rita Reviewer".to_string()), "a reviewer may not decide this step");
    assert!(reading.waiting_for.starts_with("a decision by ") && reading.waiting_for.contains("Ana Ruiz"));
    let ApprovalEvidence::Shortlist(shortlist) = &reading.evidence else { panic!("{:?}", reading.evidence) };
    assert_eq!(shortlist.request, "REQ-7 standing desks");
    assert_eq!(shortlist.budget, "10000.00");
    assert!(!shortlist.vendors.is_empty());
    let names: Vec<&str> = shortlist.vendors.iter().map(|v| v.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "alphabetical, never ranked");
    assert!(shortlist.vendors.iter().all(|v| v.delivery.ends_with("days") || v.delivery == "—"));
    assert!(!shortlist.left_out.is_empty(), "the vendors left out say why");
    let choice = shortlist.vendors[0].name.clone();

    let summaries = api.run_summaries(&scope, RunFilter::default()).await.unwrap();
    let current = summaries[0].current.clone().unwrap();
    assert!(current.starts_with("Waiting for a decision by ") && current.contains("Ana Ruiz"), "{current}");
    assert!(current.ends_with(": Choose the vendor for this purchase"), "{current}");

    clock.advance(Duration::minutes(5));
    api.decide_approval(&ana, inbox[0].id, Decision::Approve, "fits the budget".into(), Some(choice.clone()))
        .await
        .unwrap();
    let story = api.run_story(&scope, run.id).await.unwrap();
    assert_eq!(story.summary.status, RunStatus::Succeeded);
    assert!(story.document_text.as_deref().is_some_and(|t| t.contains(&choice)), "the drafted agreement");
    let lines: Vec<&str> = story.timeline.iter().map(|l| l.text.as_str()).collect();
    assert!(lines.iter().any(|l| l.starts_with("Started by ")), "{lines:?}");
    assert!(lines.contains(&"Research vendors: done"), "{lines:?}");
    assert!(
        lines.contains(
            &format!("Choose the vendor for this purchase: approved by Ana Ruiz (chose {choice}): “fits the budget”")
                .as_str()
        ),
        "{lines:?}"
    );
    assert_eq!(lines.last(), Some(&"Finished"));
    for line in &lines {
        for internal in ["choose_vendor", "super-step", "superstep", "checkpoint", "{", "node"] {
            assert!(!line.contains(internal), "{line:?} shows {internal:?}");
        }
    }
    assert_eq!(story.decisions[0].text, format!("Approved by Ana Ruiz (chose {choice})"));
    assert_eq!(story.decisions[0].reason.as_deref(), Some("fits the budget"));
    assert!(
        story.summary.outcome.as_deref().is_some_and(|o| o.starts_with("Agreement drafted")),
        "{:?}",
        story.summary.outcome
    );
}

#[tokio::test]
async fn runs_are_listed_by_status_graph_person_and_date_within_the_organization_only() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope, clock) = open_with(tmp.path(), None).await;
    let bo = member(&api, &scope, "Bo Buyer", Role::Buyer);
    let first = api.start_run(&scope, "procurement".into(), procurement()).await.unwrap();
    clock.advance(Duration::days(2));
    let second = api
        .start_run(&bo, "renewal_notice".into(), json!({"contract": "MSA", "notice_by": "2026-01-31"}))
        .await
        .unwrap();
    let other = other_organization(&api);
    api.start_run(&other, "procurement".into(), procurement()).await.unwrap();

    let ids = |list: Vec<pactwise_api::RunSummary>| list.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(api.run_summaries(&scope, RunFilter::default()).await.unwrap()), [second.id, first.id]);
    let by = |f: RunFilter| {
        let api = api.clone();
        let scope = scope.clone();
        async move { ids(api.run_summaries(&scope, f).await.unwrap()) }
    };
    assert_eq!(by(RunFilter { status: Some(RunStatus::Waiting), ..Default::default() }).await, [first.id]);
    assert_eq!(by(RunFilter { graph: Some("renewal_notice".into()), ..Default::default() }).await, [second.id]);
    assert_eq!(by(RunFilter { started_by: Some(bo.user()), ..Default::default() }).await, [second.id]);
    assert_eq!(by(RunFilter { since: Some(t0() + Duration::days(1)), ..Default::default() }).await, [second.id]);
    assert_eq!(by(RunFilter { until: Some(t0() + Duration::days(1)), ..Default::default() }).await, [first.id]);
    let summary = &api.run_summaries(&scope, RunFilter::default()).await.unwrap()[0];
    assert_eq!(summary.started_by_name.as_deref(), Some("Bo Buyer"));
    assert_eq!(summary.title, "Renewal notice");
    let e =
        api.run_summaries(&scope, RunFilter { graph: Some("nope".into()), ..Default::default() }).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);

    // Another organization's run and approval answer like missing ones.
    let theirs = api.run_summaries(&other, RunFilter::default()).await.unwrap();
    assert_eq!(theirs.len(), 1);
    assert_eq!(api.run_story(&scope, theirs[0].id).await.unwrap_err().code, ErrorCode::NotFound);
    let their_approval = api.inbox(&other).await.unwrap()[0].id;
    assert_eq!(api.approval_reading(&scope, their_approval).await.unwrap_err().code, ErrorCode::NotFound);
}

#[tokio::test]
async fn each_graphs_evidence_is_shaped_for_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope, _) = open_with(tmp.path(), None).await;
    // A document of the organization (a run naming a missing or deleted one is refused).
    let document = {
        let store = side_store(&api);
        let s = store.sessions().open(scope.session()).unwrap();
        let new = pactwise_store::NewDocument {
            name: "Cloud MSA.pdf".into(),
            media_type: pactwise_domain::MediaType::Pdf,
            size: 1,
            content_hash: "a".repeat(64),
        };
        store.documents().record(&s, &new).unwrap().0.id
    };
    let read = |graph: &'static str, input: Value| {
        let api = api.clone();
        let scope = scope.clone();
        async move {
            let run = api.start_run(&scope, graph.into(), input).await.unwrap();
            let approval = api.show_run(&scope, run.id).await.unwrap().approvals.pop().expect("an approval step");
            api.approval_reading(&scope, approval.id).await.unwrap().evidence
        }
    };

    let risk = read(
        "contract_lifecycle",
        json!({"contract": {"title": "Cloud MSA", "document": document.to_string(), "value": 300000,
                            "risk_flags": ["uncapped_liability"]}}),
    )
    .await;
    let ApprovalEvidence::ContractRisk(risk) = risk else { panic!("{risk:?}") };
    assert_eq!((risk.contract.as_str(), risk.level.as_str(), risk.high), ("Cloud MSA", "High risk", true));
    assert_eq!(risk.red_flags, ["Uncapped liability"]);
    assert!(risk.reasons.iter().any(|r| r.contains("uncapped_liability")));
    assert_eq!(risk.link.unwrap().target, LinkTarget::Contract { document, page: None });

    let vendor = read(
        "vendor_onboarding",
        json!({"vendor": {"name": "Acme", "documents": ["w9", "insurance_certificate", "security_questionnaire"],
                          "sanctions_hit": true, "tax_id": "12-3"}}),
    )
    .await;
    let ApprovalEvidence::VendorCheck(vendor) = vendor else { panic!("{vendor:?}") };
    assert_eq!((vendor.vendor.as_str(), vendor.screening.as_str(), vendor.flagged), ("Acme", "Flagged", true));
    assert!(vendor.reasons[0].contains("sanctions"));
    assert!(vendor.provided.contains(&"Insurance certificate".to_string()));

    let invoice = read(
        "invoice_processing",
        json!({"po": {"lines": [{"sku": "A", "qty": 2, "unit_price": 5}]}, "receipt": {"lines": [{"sku": "A", "qty": 1}]},
               "invoice": {"number": "INV-9", "lines": [{"sku": "A", "qty": 2, "unit_price": 5}]}}),
    )
    .await;
    let ApprovalEvidence::InvoiceMatch(invoice) = invoice else { panic!("{invoice:?}") };
    assert_eq!((invoice.invoice.as_str(), invoice.total.as_str(), invoice.matched), ("INV-9", "10.00", false));
    assert_eq!(invoice.exceptions, ["A: invoiced 2 but received 1"]);

    let budget = read(
        "budget_planning",
        json!({"year": 2027, "lines": [{"department": "IT", "amount": 600}, {"department": "Legal", "amount": 500}],
               "previous_total": 1000, "cap": 1050}),
    )
    .await;
    let ApprovalEvidence::BudgetPlan(budget) = budget else { panic!("{budget:?}") };
    assert_eq!(budget.total, "1100.00");
    assert_eq!(budget.change.as_deref(), Some("+10.00 %"));
    assert!(budget.over_cap);
    assert_eq!(budget.departments.iter().map(|d| d.label.as_str()).collect::<Vec<_>>(), ["IT", "Legal"]);
}
