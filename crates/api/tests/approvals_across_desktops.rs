//! Approvals across an organization's desktops, through a real sync service on loopback: a buyer's run waits on
//! the buyer's desktop; the approver's desktop shows the step; the decision is a request until the service stamps
//! it; the buyer's desktop resumes the run when the stamp arrives (it may be offline meanwhile); a third desktop
//! sees the finished run and who decided. Also: a rejection's reason on the buyer's timeline, two approvers at
//! once (one stamped, the other told), four-eyes across desktops, a cancelled run's step, another organization.

use pactwise_api::{Api, ApiOptions, ApprovalView, MemorySyncTokens, OrgScope, RequestState, RunFilter, SignInInput};
use pactwise_domain::{ApprovalStatus, Clock, Decision, ErrorCode, Role, RunStatus, SystemClock};
use pactwise_model::InMemoryApiKeySource;
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

const PASSWORD: &str = "a-long-password-for-sync";

struct Service {
    endpoint: String,
    _dir: tempfile::TempDir,
    storage: Arc<SqliteStorage>,
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    serving: Option<tokio::task::JoinHandle<()>>,
}

impl Service {
    /// Organization `alpha`: Bea (buyer), Abe (approver), Ann and Dave (admins), Vic (viewer); `charlie`: Carol.
    async fn start() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
        let now = SystemClock.now();
        admin::create_org(storage.as_ref(), "alpha", "Alpha LLP", now).unwrap();
        for (email, role) in [
            ("bea@alpha.example", Role::Buyer),
            ("abe@alpha.example", Role::Approver),
            ("ann@alpha.example", Role::Admin),
            ("dave@alpha.example", Role::Admin),
            ("vic@alpha.example", Role::Viewer),
        ] {
            admin::create_user(storage.as_ref(), "alpha", email, PASSWORD, role, now).unwrap();
        }
        admin::create_org(storage.as_ref(), "charlie", "Charlie GmbH", now).unwrap();
        admin::create_user(storage.as_ref(), "charlie", "carol@charlie.example", PASSWORD, Role::Owner, now).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut service =
            Service { endpoint: format!("http://{addr}"), _dir: dir, storage, addr, stop: None, serving: None };
        service.serve(listener);
        service
    }

    fn serve(&mut self, listener: tokio::net::TcpListener) {
        let state = AppState::new(self.storage.clone(), Arc::new(SystemClock), ServerConfig::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = tokio::spawn(async move {
            let _ = pactwise_sync_server::serve(listener, state, async move {
                let _ = stopped.await;
            })
            .await;
        });
        (self.stop, self.serving) = (Some(stop), Some(serving));
    }

    /// Stops serving (its database stays); requests then fail to connect.
    async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(serving) = self.serving.take() {
            serving.await.unwrap();
        }
    }

    /// Serves again on the same address and database.
    async fn restart(&mut self) {
        let listener = tokio::net::TcpListener::bind(self.addr).await.expect("the service's port is free again");
        self.serve(listener);
    }

    fn sign_in(&self, org: &str, email: &str) -> SignInInput {
        SignInInput { server: self.endpoint.clone(), org: org.into(), email: email.into(), password: PASSWORD.into() }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

struct Desktop {
    api: Api,
    scope: OrgScope,
}

async fn desktop(service: &Service, dir: &Path, org: &str, email: &str) -> Desktop {
    desktop_at(service, dir, org, email, Arc::new(SystemClock)).await
}

/// A desktop whose clock the test sets.
async fn desktop_at(service: &Service, dir: &Path, org: &str, email: &str, clock: Arc<dyn Clock>) -> Desktop {
    let options = ApiOptions {
        clock,
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        ..ApiOptions::default()
    };
    let api = Api::open_with(dir.join(email), options).unwrap();
    let scope = api.sync_sign_in(service.sign_in(org, email)).await.unwrap();
    Desktop { api, scope }
}

impl Desktop {
    async fn sync(&self) {
        self.api.sync_now().await.unwrap();
    }

    async fn inbox(&self) -> Vec<ApprovalView> {
        self.api.inbox(&self.scope).await.unwrap()
    }
}

fn procurement() -> Value {
    json!({"request": "REQ-7 standing desks", "budget": 10000, "capabilities": ["office_furniture", "delivery"]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_the_buyers_desktop_is_approved_on_the_approvers_and_resumes_at_home() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let buyer = desktop(&service, tmp.path(), "alpha", "bea@alpha.example").await;
    let approver = desktop(&service, tmp.path(), "alpha", "abe@alpha.example").await;
    let third = desktop(&service, tmp.path(), "alpha", "dave@alpha.example").await;
    let other_org = desktop(&service, tmp.path(), "charlie", "carol@charlie.example").await;

    let run = buyer.api.start_run(&buyer.scope, "procurement".into(), procurement()).await.unwrap();
    assert_eq!(run.status, RunStatus::Waiting);
    buyer.sync().await;

    // The approver's desktop shows the step, read from the buyer's publication, with who asked; its windows are told.
    let mut approver_told = approver.api.watch_shared_runs();
    approver_told.borrow_and_update();
    approver.sync().await;
    assert!(approver_told.has_changed().unwrap(), "a step from another desktop tells the windows");
    let inbox = approver.inbox().await;
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    let step = &inbox[0];
    assert!(step.from_another_desktop);
    assert_eq!((step.run, step.status), (run.id, ApprovalStatus::Pending));
    assert_eq!(step.requested_by_name.as_deref(), Some("bea@alpha.example"));
    assert_eq!(step.choices, ["Globex"]);
    assert_eq!(step.state_seen["shortlist"][0]["price"], "9500.00", "the evidence as it was when the step paused");
    let runs = approver.api.list_runs(&approver.scope).await.unwrap();
    assert!(runs.iter().any(|r| r.id == run.id && r.from_another_desktop && r.status == RunStatus::Waiting));
    // The Runs area and the reading an approver sees, in words, for a run that lives on another desktop.
    let listed = approver.api.run_summaries(&approver.scope, RunFilter::default()).await.unwrap();
    assert!(listed.iter().any(|r| r.id == run.id && r.on_another_desktop), "{listed:?}");
    let reading = approver.api.approval_reading(&approver.scope, step.id).await.unwrap();
    assert_eq!(reading.workflow, "Procurement");
    assert!(reading.approval.from_another_desktop);
    assert_eq!(reading.approval.requested_by_name.as_deref(), Some("bea@alpha.example"));

    // Another organization never sees it, and its windows are not told of it.
    let mut other_told = other_org.api.watch_shared_runs();
    other_told.borrow_and_update();
    other_org.sync().await;
    assert!(!other_told.has_changed().unwrap(), "nothing changed for another organization");
    assert!(other_org.inbox().await.is_empty());
    assert!(other_org.api.list_runs(&other_org.scope).await.unwrap().is_empty());

    // A reason is required; the decision is a request, shown as waiting to sync and never as decided.
    let err = approver.api.decide_approval(&approver.scope, step.id, Decision::Approve, " ".into(), None).await;
    assert_eq!(err.unwrap_err().code, ErrorCode::InvalidInput);
    let sent = approver
        .api
        .decide_approval(&approver.scope, step.id, Decision::Approve, "cheapest capable vendor".into(), None)
        .await
        .unwrap();
    assert!(sent.waiting_to_sync);
    assert_eq!(sent.approval.status, ApprovalStatus::Pending);
    assert_eq!(sent.approval.my_request.as_ref().unwrap().status, RequestState::WaitingToSync);
    let reading = approver.api.approval_reading(&approver.scope, step.id).await.unwrap();
    assert_eq!(reading.approval.my_request.unwrap().status, RequestState::WaitingToSync, "the reading shows it too");
    let again =
        approver.api.decide_approval(&approver.scope, step.id, Decision::Reject, "changed my mind".into(), None);
    assert_eq!(again.await.unwrap_err().code, ErrorCode::Conflict, "one request at a time per person and step");
    assert_eq!(approver.inbox().await[0].my_request.as_ref().unwrap().status, RequestState::WaitingToSync);

    // The buyer's desktop is offline while the service stamps the decision.
    approver.sync().await;
    let shown = approver.api.show_run(&approver.scope, run.id).await.unwrap();
    let decided = &shown.approvals[0];
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert_eq!(decided.my_request.as_ref().unwrap().status, RequestState::Stamped);
    assert!(approver.inbox().await.is_empty(), "a decided step leaves the inbox");
    assert_eq!(buyer.api.show_run(&buyer.scope, run.id).await.unwrap().run.status, RunStatus::Waiting);

    // Back online: the stamp arrives, the run resumes and finishes at home, with the approver's name and reason.
    let mut buyer_told = buyer.api.watch_shared_runs();
    buyer_told.borrow_and_update();
    buyer.sync().await;
    assert!(buyer_told.has_changed().unwrap(), "the resumed run tells the buyer's windows");
    let home = buyer.api.show_run(&buyer.scope, run.id).await.unwrap();
    assert_eq!(home.run.status, RunStatus::Succeeded, "{:?}", home.run);
    let a = &home.approvals[0];
    assert_eq!(a.status, ApprovalStatus::Approved);
    assert_eq!(a.decided_by_name.as_deref(), Some("abe@alpha.example"));
    assert_eq!(a.reason.as_deref(), Some("cheapest capable vendor"));
    assert_eq!(a.choice.as_deref(), Some("Globex"));

    // A third desktop sees the finished run, its timeline and who decided.
    buyer.sync().await;
    third.sync().await;
    let seen = third.api.show_run(&third.scope, run.id).await.unwrap();
    assert!(seen.run.from_another_desktop);
    assert_eq!(seen.run.status, RunStatus::Succeeded);
    assert!(!seen.events.is_empty(), "the published timeline");
    assert_eq!(seen.approvals[0].decided_by_name.as_deref(), Some("abe@alpha.example"));
    assert_eq!(seen.approvals[0].reason.as_deref(), Some("cheapest capable vendor"));
    assert_eq!(seen.run.started_by_name.as_deref(), Some("bea@alpha.example"));
    let story = third.api.run_story(&third.scope, run.id).await.unwrap();
    assert!(story.summary.on_another_desktop);
    let decision = &story.decisions[0].text;
    assert!(decision.contains("abe@alpha.example"), "who decided, in words: {decision}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_made_while_the_service_is_down_waits_loses_nothing_and_is_stamped_once_when_it_is_back() {
    let mut service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let buyer = desktop(&service, tmp.path(), "alpha", "bea@alpha.example").await;
    let approver = desktop(&service, tmp.path(), "alpha", "abe@alpha.example").await;
    let run = buyer.api.start_run(&buyer.scope, "procurement".into(), procurement()).await.unwrap();
    buyer.sync().await;
    approver.sync().await;
    let step = approver.inbox().await[0].id;

    // The service goes down between the decision and its stamp.
    service.stop().await;
    approver.api.decide_approval(&approver.scope, step, Decision::Approve, "within budget".into(), None).await.unwrap();
    let failed = approver.api.sync_now().await;
    assert!(failed.is_err(), "a round without the service fails and says so");
    let waiting = approver.inbox().await;
    assert_eq!(waiting.len(), 1, "the step is still pending, never shown as decided");
    assert_eq!(waiting[0].my_request.as_ref().unwrap().status, RequestState::WaitingToSync, "the request is kept");

    // Back: the kept request is stamped once; rounds after it apply nothing twice.
    service.restart().await;
    approver.sync().await;
    approver.sync().await;
    buyer.sync().await;
    buyer.sync().await;
    let home = buyer.api.show_run(&buyer.scope, run.id).await.unwrap();
    assert_eq!(home.run.status, RunStatus::Succeeded, "{:?}", home.run);
    assert_eq!(home.approvals.len(), 1);
    assert_eq!(home.approvals[0].decided_by_name.as_deref(), Some("abe@alpha.example"));
    let decided = home.events.iter().filter(|e| e.node.as_deref() == Some("choose_vendor")).count();
    let seen = approver.api.show_run(&approver.scope, run.id).await.unwrap();
    assert_eq!(seen.approvals[0].my_request.as_ref().unwrap().status, RequestState::Stamped);
    buyer.sync().await;
    let again = buyer.api.show_run(&buyer.scope, run.id).await.unwrap();
    assert_eq!(
        again.events.iter().filter(|e| e.node.as_deref() == Some("choose_vendor")).count(),
        decided,
        "a later round resumes nothing again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overdue_step_is_escalated_once_by_the_service_and_reaches_every_desktop_even_with_its_home_offline() {
    use pactwise_sync_server::SyncStorage;
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let home_clock = Arc::new(pactwise_domain::FixedClock::new(SystemClock.now()));
    // The run's home is an admin's desktop, so its own inbox shows the step too.
    let home = desktop_at(&service, tmp.path(), "alpha", "dave@alpha.example", home_clock.clone()).await;
    let approver = desktop(&service, tmp.path(), "alpha", "abe@alpha.example").await;
    let admin = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let run = home.api.start_run(&home.scope, "procurement".into(), procurement()).await.unwrap();
    home.sync().await;
    approver.sync().await;
    assert!(!approver.inbox().await[0].escalated);

    // Two days on (procurement escalates after 48 hours) the home desktop is offline; the service escalates.
    let later = SystemClock.now() + chrono::Duration::hours(49);
    let storage = service.storage.clone();
    let woke = tokio::task::spawn_blocking(move || storage.escalate_due(later)).await.unwrap().unwrap();
    assert_eq!(woke.len(), 1, "one organization's desktops are woken");
    let storage = service.storage.clone();
    let again = tokio::task::spawn_blocking(move || storage.escalate_due(later)).await.unwrap().unwrap();
    assert!(again.is_empty(), "escalated once");

    // Every eligible desktop shows it as urgent; nothing is decided.
    for desk in [&approver, &admin] {
        desk.sync().await;
        let inbox = desk.inbox().await;
        assert_eq!(inbox.len(), 1);
        assert!(inbox[0].escalated);
        assert_eq!(inbox[0].status, ApprovalStatus::Pending, "escalation never decides");
        assert!(inbox[0].urgent_notice.as_deref().unwrap().contains("waited past its escalation time"));
    }

    // Two days on at home too: the home's own watchdog does not escalate a syncing organization's step (the
    // service does); back online, it applies the service's escalation, once.
    home_clock.advance(chrono::Duration::hours(49));
    let round = home.api.work_round().await.unwrap();
    assert_eq!(round.escalated_approvals, 0, "the service escalates a syncing organization's steps, not the home");
    assert!(!home.api.show_run(&home.scope, run.id).await.unwrap().approvals[0].escalated);
    let before = home.api.inbox(&home.scope).await.unwrap();
    let step = before.iter().find(|a| a.run == run.id).expect("the admin at home sees the step");
    assert!(!step.escalated && step.urgent_notice.is_none(), "not escalated at home before the service's word");
    home.sync().await;
    let shown = home.api.show_run(&home.scope, run.id).await.unwrap();
    assert!(shown.approvals[0].escalated);
    let after = home.api.inbox(&home.scope).await.unwrap();
    let step = after.iter().find(|a| a.run == run.id).expect("the step is still waiting at home");
    assert!(step.escalated);
    assert!(step.urgent_notice.as_deref().unwrap().contains("waited past its escalation time"), "{step:?}");
    assert_eq!(shown.run.status, RunStatus::Waiting, "still waiting for a person");
    home.sync().await;
    approver.sync().await;
    assert!(approver.inbox().await[0].escalated, "the home's next publication keeps the escalation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_from_another_desktop_ends_the_run_with_its_reason_and_a_race_stamps_one_decision() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let buyer = desktop(&service, tmp.path(), "alpha", "bea@alpha.example").await;
    let approver = desktop(&service, tmp.path(), "alpha", "abe@alpha.example").await;
    let admin = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let viewer = desktop(&service, tmp.path(), "alpha", "vic@alpha.example").await;

    let run = buyer.api.start_run(&buyer.scope, "procurement".into(), procurement()).await.unwrap();
    buyer.sync().await;
    for d in [&approver, &admin, &viewer] {
        d.sync().await;
    }
    assert!(viewer.inbox().await.is_empty(), "a viewer's inbox holds nothing to decide");
    let step = approver.inbox().await[0].id;
    let refused = viewer.api.decide_approval(&viewer.scope, step, Decision::Approve, "me too".into(), None).await;
    assert_eq!(refused.unwrap_err().code, ErrorCode::Forbidden);

    // Two eligible people decide the same step on two desktops before either syncs.
    approver
        .api
        .decide_approval(&approver.scope, step, Decision::Reject, "over the quarter's budget".into(), None)
        .await
        .unwrap();
    admin.api.decide_approval(&admin.scope, step, Decision::Approve, "fine by me".into(), None).await.unwrap();
    approver.sync().await;
    admin.sync().await;
    approver.sync().await;
    let mine = |v: &pactwise_api::RunDetail| v.approvals[0].my_request.clone().unwrap();
    let on_approver = approver.api.show_run(&approver.scope, run.id).await.unwrap();
    let on_admin = admin.api.show_run(&admin.scope, run.id).await.unwrap();
    assert_eq!(on_approver.approvals[0].status, ApprovalStatus::Rejected, "the first request the service got");
    assert_eq!(on_admin.approvals[0].status, ApprovalStatus::Rejected, "every desktop shows the same decision");
    assert_eq!(mine(&on_approver).status, RequestState::Stamped);
    let lost = mine(&on_admin);
    assert_eq!(lost.status, RequestState::Refused);
    assert!(lost.refusal.unwrap().contains("someone else decided"), "the other is told");
    assert_eq!(on_admin.approvals[0].decided_by_name.as_deref(), Some("abe@alpha.example"), "told who decided");

    // The rejection's reason is on the buyer's timeline once the stamp arrives; nothing was applied twice.
    buyer.sync().await;
    let home = buyer.api.show_run(&buyer.scope, run.id).await.unwrap();
    assert_eq!(home.approvals.len(), 1);
    assert_eq!(home.approvals[0].status, ApprovalStatus::Rejected);
    assert_eq!(home.approvals[0].reason.as_deref(), Some("over the quarter's budget"));
    assert!(home.run.status.is_terminal(), "{:?}", home.run);
    buyer.sync().await;
    assert_eq!(buyer.api.show_run(&buyer.scope, run.id).await.unwrap().approvals, home.approvals);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_eyes_needs_two_different_people_on_two_desktops_and_a_cancelled_runs_step_takes_no_decision() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let buyer = desktop(&service, tmp.path(), "alpha", "bea@alpha.example").await;
    let ann = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let dave = desktop(&service, tmp.path(), "alpha", "dave@alpha.example").await;

    let docs = ["w9", "insurance_certificate", "security_questionnaire"];
    let input = json!({"vendor": {"name": "Initech", "tax_id": "99-1", "documents": docs, "sanctions_hit": true}});
    let run = buyer.api.start_run(&buyer.scope, "vendor_onboarding".into(), input).await.unwrap();
    buyer.sync().await;
    ann.sync().await;
    let compliance = ann.inbox().await;
    assert_eq!(compliance.len(), 1);
    assert!(compliance[0].four_eyes);
    ann.api
        .decide_approval(&ann.scope, compliance[0].id, Decision::Approve, "false positive".into(), None)
        .await
        .unwrap();
    ann.sync().await;
    buyer.sync().await;
    buyer.sync().await;

    // The next step: Ann decided the first one, so four-eyes refuses her, on her desktop at once.
    ann.sync().await;
    dave.sync().await;
    let second = ann.inbox().await;
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(second[0].id, compliance[0].id);
    let refused = ann.api.decide_approval(&ann.scope, second[0].id, Decision::Approve, "again".into(), None).await;
    assert_eq!(refused.unwrap_err().code, ErrorCode::Forbidden);
    dave.api
        .decide_approval(&dave.scope, second[0].id, Decision::Approve, "documents complete".into(), None)
        .await
        .unwrap();
    dave.sync().await;
    buyer.sync().await;
    let home = buyer.api.show_run(&buyer.scope, run.id).await.unwrap();
    assert_eq!(home.run.status, RunStatus::Succeeded, "{:?}", home.run);
    let deciders: Vec<_> = home.approvals.iter().map(|a| a.decided_by_name.clone().unwrap()).collect();
    assert_eq!(deciders, ["ann@alpha.example", "dave@alpha.example"]);

    // A run cancelled at home: its step closes everywhere and a decision sent before the news arrived is refused.
    let run = buyer.api.start_run(&buyer.scope, "procurement".into(), procurement()).await.unwrap();
    buyer.sync().await;
    dave.sync().await;
    let step = dave.inbox().await.iter().find(|a| a.run == run.id).unwrap().id;
    buyer.api.cancel_run(&buyer.scope, run.id, "the request was withdrawn".into()).await.unwrap();
    buyer.sync().await;
    dave.api.decide_approval(&dave.scope, step, Decision::Approve, "ok".into(), None).await.unwrap();
    dave.sync().await;
    let seen = dave.api.show_run(&dave.scope, run.id).await.unwrap();
    let request = seen.approvals[0].my_request.clone().unwrap();
    assert_eq!(request.status, RequestState::Refused);
    assert!(request.refusal.unwrap().contains("cancelled"));
    assert_eq!(seen.approvals[0].status, ApprovalStatus::Cancelled);
    assert!(dave.inbox().await.iter().all(|a| a.run != run.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cancelled_from_another_desktop_is_cancelled_at_home_with_its_steps_and_the_reason() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let buyer = desktop(&service, tmp.path(), "alpha", "bea@alpha.example").await;
    let admin = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let viewer = desktop(&service, tmp.path(), "alpha", "vic@alpha.example").await;
    let run = buyer.api.start_run(&buyer.scope, "procurement".into(), procurement()).await.unwrap();
    buyer.sync().await;
    admin.sync().await;
    viewer.sync().await;

    let refused = viewer.api.cancel_run(&viewer.scope, run.id, "not mine".into()).await;
    assert_eq!(refused.unwrap_err().code, ErrorCode::Forbidden, "a viewer cancels nothing");
    let no_reason = admin.api.cancel_run(&admin.scope, run.id, "  ".into()).await;
    assert_eq!(no_reason.unwrap_err().code, ErrorCode::InvalidInput);
    let sent = admin.api.cancel_run(&admin.scope, run.id, "the budget was frozen".into()).await.unwrap();
    assert!(sent.sent_to_its_desktop);
    assert_eq!(sent.run.status, RunStatus::Waiting, "nothing is cancelled before the run's desktop does it");

    admin.sync().await;
    buyer.sync().await;
    let home = buyer.api.show_run(&buyer.scope, run.id).await.unwrap();
    assert_eq!(home.run.status, RunStatus::Cancelled);
    assert_eq!(home.run.reason.as_deref(), Some("the budget was frozen"));
    assert_eq!(home.approvals[0].status, ApprovalStatus::Cancelled, "the cascade of a local cancel");

    // The cancelled run and its closed step reach the other desktops; a second request changes nothing.
    buyer.sync().await;
    admin.sync().await;
    let seen = admin.api.show_run(&admin.scope, run.id).await.unwrap();
    assert_eq!(seen.run.status, RunStatus::Cancelled);
    assert!(seen.events.iter().any(|e| e.kind == "cancelled"), "{:?}", seen.events);
    let again = admin.api.cancel_run(&admin.scope, run.id, "again".into()).await;
    assert_eq!(again.unwrap_err().code, ErrorCode::Conflict);
    assert!(admin.inbox().await.is_empty());
}

/// What another device (a modified client, a bug) pushes about runs is untrusted: a malformed run record, a step
/// that names no run here, a cancel for a run nobody has and a decision on a step nobody opened are each skipped or
/// settled on their own, and the page they came in still applies everything else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_run_records_from_another_device_are_skipped_and_block_nothing() {
    use pactwise_sync::wire::{ApprovalDecision, ChangeBody, PushRequest, SignInRequest};
    use pactwise_sync::{Change, DeviceToken, Hlc, HttpApi, SyncedModel};
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let buyer = desktop(&service, tmp.path(), "alpha", "bea@alpha.example").await;
    let approver = desktop(&service, tmp.path(), "alpha", "abe@alpha.example").await;

    let sign_in = SignInRequest {
        org: "alpha".into(),
        email: "ann@alpha.example".into(),
        password: PASSWORD.into(),
        device_name: "a modified client".into(),
    };
    let token = HttpApi::new(&service.endpoint, None).unwrap().sign_in(&sign_in).await.unwrap().token;
    let raw = HttpApi::new(&service.endpoint, Some(DeviceToken::new(token))).unwrap();
    let node = uuid::Uuid::now_v7();
    let change = |n: u32, model: SyncedModel, record: &str, body: ChangeBody| Change {
        id: uuid::Uuid::now_v7(),
        model,
        record_id: record.into(),
        hlc: Hlc { wall_ms: SystemClock.now().timestamp_millis() as u64, counter: n, node },
        body,
    };
    let fields = |v: Value| ChangeBody::Fields { fields: v.as_object().unwrap().clone().into_iter().collect() };
    let bad_run = uuid::Uuid::now_v7().to_string();
    let changes = vec![
        change(1, SyncedModel::Run, &bad_run, fields(json!({"graph": "procurement", "status": "exploded"}))),
        change(2, SyncedModel::Run, "not-a-run-id", fields(json!({"title": "\u{0007}"}))),
        change(
            3,
            SyncedModel::RunCancel,
            &uuid::Uuid::now_v7().to_string(),
            ChangeBody::Event { event: json!({"reason": "x".repeat(10_000)}) },
        ),
        change(
            4,
            SyncedModel::ApprovalDecision,
            &uuid::Uuid::now_v7().to_string(),
            ChangeBody::ApprovalRequest {
                decision: ApprovalDecision::Approve,
                note: Some("forged".into()),
                eligible_roles: vec![Role::Admin],
                choice: None,
                decider_name: Some("\u{202e}Somebody else".into()),
            },
        ),
    ];
    let pushed = raw.push(&PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes }).await.unwrap();
    assert!(pushed.results.iter().all(|r| r.refused.is_none()), "the service stores them: {pushed:?}");

    // A real run published after them, in the same pull.
    let run = buyer.api.start_run(&buyer.scope, "procurement".into(), procurement()).await.unwrap();
    buyer.sync().await;
    approver.sync().await;
    let runs = approver.api.list_runs(&approver.scope).await.unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), [run.id], "only the real run: {runs:?}");
    assert_eq!(approver.inbox().await.len(), 1, "the real step arrived behind the malformed changes");
    let story = approver.api.run_story(&approver.scope, run.id).await.unwrap();
    assert_eq!(story.summary.status, RunStatus::Waiting);
    // The buyer's desktop pulled them too: its run is untouched and it keeps syncing.
    buyer.sync().await;
    assert_eq!(buyer.api.show_run(&buyer.scope, run.id).await.unwrap().run.status, RunStatus::Waiting);
    assert!(buyer.api.sync_status().await.unwrap().last_error.is_none());
}
