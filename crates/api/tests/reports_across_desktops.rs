//! Contract review reports across an organization's desktops, through a real sync service on loopback: a report
//! assembled on Ann's desktop (against the fake model) reaches Bob's; Bob signs it off there; the sync service stamps
//! the sign-off (who: Bob's token's user, when: its clock), Ann's run resumes and both desktops show the same
//! sign-off. A report is append-only (a second one for the same run changes nothing); a forged clause that is not on
//! its page is listed as rejected, never shown; another organization sees none of it.

use pactwise_api::{
    Api, ApiOptions, ImportOptions, MemorySyncTokens, OrgScope, ReportOptions, ReportStatus, SignInInput,
};
use pactwise_domain::{Clock, Decision, DocumentId, Role, SystemClock};
use pactwise_model::fake::{FakeModelServer, FakeScript};
use pactwise_model::{ApiKey, InMemoryApiKeySource, ModelConfig, RetryPolicy};
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PASSWORD: &str = "a-long-password-for-sync";
const KEY: &str = "sk-ant-test-key-for-the-report-tests";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/report").join(name)
}

struct Service {
    endpoint: String,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Service {
    /// `alpha`: Ann (admin), Bob (reviewer), Dave (admin); `charlie`: Carol.
    async fn start() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
        let now = SystemClock.now();
        admin::create_org(storage.as_ref(), "alpha", "Alpha LLP", now).unwrap();
        for (email, role) in [
            ("ann@alpha.example", Role::Admin),
            ("bob@alpha.example", Role::Reviewer),
            ("dave@alpha.example", Role::Admin),
        ] {
            admin::create_user(storage.as_ref(), "alpha", email, PASSWORD, role, now).unwrap();
        }
        admin::create_org(storage.as_ref(), "charlie", "Charlie GmbH", now).unwrap();
        admin::create_user(storage.as_ref(), "charlie", "carol@charlie.example", PASSWORD, Role::Owner, now).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let state = AppState::new(storage, Arc::new(SystemClock), ServerConfig::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(pactwise_sync_server::serve(listener, state, async move {
            let _ = stopped.await;
        }));
        Service { endpoint, _dir: dir, stop: Some(stop) }
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

/// A desktop; with `model`, its model calls go to the fake server.
async fn desktop(service: &Service, dir: &Path, org: &str, email: &str, model: Option<&FakeModelServer>) -> Desktop {
    let mut options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        ..ApiOptions::default()
    };
    if let Some(server) = model {
        let mut config = ModelConfig::default().with_endpoint(server.endpoint());
        config.retry = RetryPolicy { max_attempts: 1, ..RetryPolicy::default() };
        options.model = config;
        options.keys = Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap()));
    }
    let api = Api::open_with(dir.join(email), options).unwrap();
    let scope = api.sync_sign_in(service.sign_in(org, email)).await.unwrap();
    Desktop { api, scope }
}

impl Desktop {
    async fn sync(&self) {
        self.api.sync_now().await.unwrap();
    }
}

/// Ann's and Bob's desktops of one organization; Ann's has run the report on the six-page NDA against the fake
/// model, and it waits for its sign-off; nothing has synced yet.
struct Scene {
    _server: FakeModelServer,
    service: Service,
    tmp: tempfile::TempDir,
    ann: Desktop,
    bob: Desktop,
    document: DocumentId,
    view: pactwise_api::ReportView,
}

impl Scene {
    async fn report_awaiting_sign_off() -> Scene {
        let mut script: FakeScript =
            serde_json::from_str(&std::fs::read_to_string(fixture("fake-model.json")).unwrap()).unwrap();
        script.api_key = Some(KEY.into());
        let server = FakeModelServer::start(script).await.unwrap();
        let service = Service::start().await;
        let tmp = tempfile::tempdir().unwrap();
        let ann = desktop(&service, tmp.path(), "alpha", "ann@alpha.example", Some(&server)).await;
        let bob = desktop(&service, tmp.path(), "alpha", "bob@alpha.example", None).await;
        let imported = ann
            .api
            .import_documents(&ann.scope, vec![fixture("nda-six-pages.txt")], ImportOptions::default(), &|_| {})
            .await
            .unwrap();
        let document: DocumentId = imported.imported[0].document.id;
        let view = ann.api.start_report(&ann.scope, document, ReportOptions::default()).await.unwrap();
        assert_eq!(view.status, ReportStatus::AwaitingSignOff, "{view:?}");
        Scene { _server: server, service, tmp, ann, bob, document, view }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_assembled_on_one_desktop_is_signed_off_on_another_and_the_service_stamps_it() {
    let Scene { _server, service, tmp, ann, bob, document, view } = Scene::report_awaiting_sign_off().await;
    let on_ann = view.report.clone().unwrap();
    ann.sync().await;
    bob.sync().await;

    // Bob's desktop shows the report, every clause placed on its page there, waiting for a sign-off.
    let reports = bob.api.document_reports(&bob.scope, document).await.unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let shared = &reports[0];
    assert_eq!((shared.run, shared.status), (view.run, ReportStatus::AwaitingSignOff));
    assert_eq!(shared.report.as_ref().unwrap().shown_clauses().len(), on_ann.shown_clauses().len());
    assert_eq!(shared.clause_spans.len(), view.clause_spans.len());
    assert!(shared.approval.is_some(), "Bob may sign it off from his desktop");
    assert_eq!(bob.api.report(&bob.scope, view.run).await.unwrap().run, view.run);

    // Bob signs it off: a request until the service stamps it.
    let waiting = bob
        .api
        .sign_off_report(&bob.scope, view.run, Decision::Approve, "Checked on Bob's desktop".into())
        .await
        .unwrap();
    assert_eq!(waiting.status, ReportStatus::AwaitingSignOff, "not signed before the service stamps it");
    bob.sync().await;
    ann.sync().await; // the stamp arrives; Ann's run resumes and closes
    ann.sync().await; // the closed run and its decided step are published
    bob.sync().await;

    let home = ann.api.report(&ann.scope, view.run).await.unwrap();
    let there = bob.api.report(&bob.scope, view.run).await.unwrap();
    assert_eq!(home.status, ReportStatus::SignedOff, "{home:?}");
    assert_eq!(there.status, ReportStatus::SignedOff, "{there:?}");
    let (a, b) = (home.sign_off.unwrap(), there.sign_off.unwrap());
    assert_eq!(
        (a.decision, a.by.as_str(), a.reason.as_str()),
        (Decision::Approve, "bob@alpha.example", "Checked on Bob's desktop")
    );
    assert_eq!((&b.by, b.at, &b.reason), (&a.by, a.at, &a.reason), "one stamp, the service's, on both desktops");
    assert!(there.approval.is_none());
    let again = bob.api.sign_off_report(&bob.scope, view.run, Decision::Reject, "changed my mind".into()).await;
    assert!(again.is_err(), "signed once");

    // Another organization never sees it.
    let carol = desktop(&service, tmp.path(), "charlie", "carol@charlie.example", None).await;
    carol.sync().await;
    assert!(carol.api.document_reports(&carol.scope, document).await.is_err());
    assert!(carol.api.report(&carol.scope, view.run).await.is_err());
}

/// A report from another device is untrusted: a second report for the same run changes nothing (append-only); a
/// report whose clause is not on its page lists it as rejected; a malformed one is skipped alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_from_another_device_are_kept_once_and_their_clauses_checked_on_the_page() {
    use pactwise_sync::wire::{ChangeBody, PushRequest, SignInRequest};
    use pactwise_sync::{Change, DeviceToken, Hlc, HttpApi, SyncedModel};
    use serde_json::json;
    let Scene { _server, service, tmp: _tmp, ann, bob, document, view } = Scene::report_awaiting_sign_off().await;
    let real = serde_json::to_value(view.report.clone().unwrap()).unwrap();
    ann.sync().await;
    bob.sync().await;

    let sign_in = SignInRequest {
        org: "alpha".into(),
        email: "dave@alpha.example".into(),
        password: PASSWORD.into(),
        device_name: "a modified client".into(),
    };
    let token = HttpApi::new(&service.endpoint, None).unwrap().sign_in(&sign_in).await.unwrap().token;
    let raw = HttpApi::new(&service.endpoint, Some(DeviceToken::new(token))).unwrap();
    let node = uuid::Uuid::now_v7();
    let event = |n: u32, run: &str, event: serde_json::Value| Change {
        id: uuid::Uuid::now_v7(),
        model: SyncedModel::ReviewReport,
        record_id: run.into(),
        hlc: Hlc { wall_ms: SystemClock.now().timestamp_millis() as u64, counter: n, node },
        body: ChangeBody::Event { event },
    };
    let invented = "Either Party may terminate this Agreement at any time without notice";
    let mut forged = real.clone();
    forged["clause_types"][0]["clauses"][0]["text"] = json!(invented);
    let forged_run = uuid::Uuid::now_v7().to_string();
    let mut rewritten = real.clone();
    rewritten["contract_type_name"] = json!("Rewritten");
    let changes = vec![
        event(1, &view.run.to_string(), json!({"document_id": document.to_string(), "report": rewritten})),
        event(2, &forged_run, json!({"document_id": document.to_string(), "report": forged})),
        event(3, &uuid::Uuid::now_v7().to_string(), json!({"document_id": document.to_string(), "report": {"x": 1}})),
        event(4, "not-a-run", json!({"document_id": document.to_string(), "report": real})),
        event(
            5,
            &uuid::Uuid::now_v7().to_string(),
            json!({"document_id": DocumentId::new().to_string(), "report": real}),
        ),
    ];
    let pushed = raw.push(&PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes }).await.unwrap();
    assert!(pushed.results.iter().all(|r| r.refused.is_none()), "{pushed:?}");
    bob.sync().await;

    let reports = bob.api.document_reports(&bob.scope, document).await.unwrap();
    assert_eq!(reports.len(), 2, "the real one and the forged one; the malformed ones are skipped: {reports:?}");
    let kept = reports.iter().find(|r| r.run == view.run).unwrap();
    assert_ne!(kept.report.as_ref().unwrap().contract_type_name, "Rewritten", "kept once, never replaced");
    let suspicious = reports.iter().find(|r| r.run.to_string() == forged_run).unwrap().report.as_ref().unwrap();
    assert!(suspicious.shown_clauses().iter().all(|c| c.text != invented), "never shown");
    assert!(suspicious.rejected.iter().any(|r| r.text == invented && r.reason == "quote_not_found"));
    assert!(bob.api.sync_status().await.unwrap().last_error.is_none());
}

/// The desktop a report lives on signs it off before it ever synced: its step goes out ahead of the decision, so the
/// service stamps a step it knows and the other desktop shows who signed off (the request used to go out first; the
/// other desktop skipped the stamp of an unknown step and then saw the step closed with nobody named).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_signed_off_on_its_own_desktop_before_any_sync_shows_its_signer_on_the_other() {
    let Scene { _server, service: _service, tmp: _tmp, ann, bob, view, .. } = Scene::report_awaiting_sign_off().await;
    ann.api.sign_off_report(&ann.scope, view.run, Decision::Approve, "Signed at once".into()).await.unwrap();
    for _ in 0..3 {
        ann.sync().await;
        bob.sync().await;
    }
    let home = ann.api.report(&ann.scope, view.run).await.unwrap();
    let there = bob.api.report(&bob.scope, view.run).await.unwrap();
    assert_eq!(
        (home.status, there.status),
        (ReportStatus::SignedOff, ReportStatus::SignedOff),
        "Bob's desktop: its sign-off {:?}",
        there.sign_off
    );
    let (a, b) = (home.sign_off.unwrap(), there.sign_off.expect("Bob's desktop knows who signed off"));
    assert_eq!((a.by.as_str(), a.reason.as_str()), ("ann@alpha.example", "Signed at once"));
    assert_eq!((&b.by, b.at, &b.reason), (&a.by, a.at, &a.reason), "the service's one stamp on both desktops");
}
