//! Prep Studio packages across an organization's desktops, through a real sync service on loopback whose clock the
//! test moves: a package reaches the other desktop; its edit lease is held on the service, so while Ann edits Bob is
//! refused with her name and the expiry; once her lease expires by the service's clock Bob must take it over, and
//! both audit logs show the take-over; an approval Ann gave is bound to the content she saw, so it is gone on both
//! desktops once Bob changes the artifact and the publish gate refuses everywhere; a forged approval is shown stale;
//! a malformed package change is skipped on its own; offline only a live lease held here lets a person edit; another
//! organization sees nothing.

use pactwise_api::{Api, ApiOptions, ArtifactKind, Content, Intake, MemorySyncTokens, OrgScope, SignInInput};
use pactwise_domain::{Clock, ErrorCode, FixedClock, Role, SystemClock};
use pactwise_model::InMemoryApiKeySource;
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PASSWORD: &str = "a-long-password-for-sync";

/// Organization `alpha`: Ann and Bob (buyers); `charlie`: Carol.
struct Service {
    endpoint: String,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Service {
    async fn start(clock: Arc<FixedClock>) -> Service {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
        let now = clock.now();
        admin::create_org(storage.as_ref(), "alpha", "Alpha LLP", now).unwrap();
        for email in ["ann@alpha.example", "bob@alpha.example"] {
            admin::create_user(storage.as_ref(), "alpha", email, PASSWORD, Role::Buyer, now).unwrap();
        }
        admin::create_org(storage.as_ref(), "charlie", "Charlie GmbH", now).unwrap();
        admin::create_user(storage.as_ref(), "charlie", "carol@charlie.example", PASSWORD, Role::Owner, now).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let state = AppState::new(storage, clock, ServerConfig::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = pactwise_sync_server::serve(listener, state, async move {
                let _ = stopped.await;
            })
            .await;
        });
        Service { endpoint, _dir: dir, stop: Some(stop), task: Some(task) }
    }

    fn sign_in(&self, org: &str, email: &str) -> SignInInput {
        SignInInput { server: self.endpoint.clone(), org: org.into(), email: email.into(), password: PASSWORD.into() }
    }

    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Stops the service and returns once it has: its listener is closed and every connection drained, so no
    /// kept-alive connection answers after this.
    async fn stopped(&mut self) {
        self.stop();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Desktop {
    api: Api,
    scope: OrgScope,
    root: PathBuf,
}

async fn desktop(service: &Service, clock: &Arc<FixedClock>, dir: &Path, org: &str, email: &str) -> Desktop {
    let options = ApiOptions {
        clock: clock.clone(),
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        ..ApiOptions::default()
    };
    let root = dir.join(email);
    let api = Api::open_with(root.clone(), options).unwrap();
    let scope = api.sync_sign_in(service.sign_in(org, email)).await.unwrap();
    Desktop { api, scope, root }
}

impl Desktop {
    async fn sync(&self) {
        self.api.sync_now().await.unwrap();
    }

    /// The audit log's entries of one action on a package: (actor, details).
    fn audit(&self, action: &str, package: &str) -> Vec<(String, serde_json::Value)> {
        let conn = rusqlite::Connection::open(self.root.join("pactwise.sqlite3")).unwrap();
        let mut stmt = conn
            .prepare("SELECT actor_id, details FROM audit_log WHERE action = ?1 AND entity_id = ?2 ORDER BY seq")
            .unwrap();
        stmt.query_map([action, package], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .unwrap()
            .map(|row| {
                let (actor, details) = row.unwrap();
                (actor, serde_json::from_str(&details).unwrap_or_default())
            })
            .collect()
    }
}

fn intake() -> Intake {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/prep/it-service-desk.json");
    let value: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    serde_json::from_value(value["intake"].clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_people_editing_one_package_on_two_desktops_take_turns_through_the_services_lease() {
    let clock = Arc::new(FixedClock::new(SystemClock.now()));
    let mut service = Service::start(clock.clone()).await;
    let tmp = tempfile::tempdir().unwrap();
    let ann = desktop(&service, &clock, tmp.path(), "alpha", "ann@alpha.example").await;
    let bob = desktop(&service, &clock, tmp.path(), "alpha", "bob@alpha.example").await;
    let carol = desktop(&service, &clock, tmp.path(), "charlie", "carol@charlie.example").await;

    // Ann starts a package: she holds its lease on the service, and it reaches Bob's desktop.
    let view = ann.api.prep_new(&ann.scope, intake()).await.unwrap();
    let id = view.id.clone();
    let lock = view.lock.as_ref().unwrap();
    assert!(lock.held_by_me && lock.on_service, "{lock:?}");
    ann.sync().await;
    bob.sync().await;
    let on_bob = bob.api.prep_show(&bob.scope, &id).await.unwrap();
    assert_eq!(on_bob.package.title, view.package.title);
    assert_eq!(ann.audit("prep.create", &id).len(), 1);
    assert_eq!(bob.audit("prep.create", &id).len(), 1, "the creation is audited where it arrives");

    // Bob is refused while Ann's lease is live, with her name and when it ends; his desktop shows who holds it.
    let mut edited = intake();
    edited.brief = format!("{} Bob's wording.", edited.brief);
    let e = bob.api.prep_edit(&bob.scope, &id, Content::Intake(edited.clone())).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PackageLocked);
    assert!(e.message.contains("ann@alpha.example is editing this package until"), "{}", e.message);
    let shown = bob.api.prep_show(&bob.scope, &id).await.unwrap().lock.unwrap();
    assert_eq!(shown.holder_name, "ann@alpha.example");
    assert!(!shown.held_by_me && !shown.expired);
    // Asking to take it over changes nothing while it is live.
    assert_eq!(bob.api.prep_lock(&bob.scope, &id, true).await.unwrap_err().code, ErrorCode::PackageLocked);

    // Ann approves the intake as she saw it; Bob's desktop shows it approved (the hash binds the content).
    let hash = view.package.artifacts.intake.content_hash.clone().unwrap();
    let approved = ann.api.prep_approve(&ann.scope, &id, ArtifactKind::Intake, hash).await.unwrap();
    assert!(approved.package.artifacts.intake.state.is_approved());
    ann.sync().await;
    bob.sync().await;
    assert!(bob.api.prep_show(&bob.scope, &id).await.unwrap().package.artifacts.intake.state.is_approved());

    // Ann's lease expires by the service's clock: Bob must take it over, and then edits.
    clock.advance(chrono::Duration::minutes(31));
    let e = bob.api.prep_edit(&bob.scope, &id, Content::Intake(edited.clone())).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PackageLocked);
    assert!(e.message.contains("ann@alpha.example's edit lease on this package expired"), "{}", e.message);
    let taken = bob.api.prep_lock(&bob.scope, &id, true).await.unwrap();
    assert!(taken.held_by_me && !taken.expired);
    let changed = bob.api.prep_edit(&bob.scope, &id, Content::Intake(edited.clone())).await.unwrap();
    assert!(!changed.package.artifacts.intake.state.is_approved(), "Ann's approval was of other content");
    let e = bob.api.prep_publish(&bob.scope, &id).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PublishBlocked);

    // Ann is now the one refused, with Bob's name.
    let e = ann.api.prep_edit(&ann.scope, &id, Content::Intake(intake())).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PackageLocked);
    assert!(e.message.contains("bob@alpha.example is editing"), "{}", e.message);

    // Both desktops: Bob's change arrived, Ann's approval is gone there too, the gate refuses there as here, and
    // both audit logs show the take-over by Bob of Ann's expired lease.
    bob.sync().await;
    ann.sync().await;
    bob.sync().await;
    let on_ann = ann.api.prep_show(&ann.scope, &id).await.unwrap();
    assert_eq!(on_ann.package.artifacts.intake.content.as_ref().unwrap().brief, edited.brief);
    assert!(!on_ann.package.artifacts.intake.state.is_approved());
    assert_eq!(on_ann.lock.as_ref().unwrap().holder_name, "bob@alpha.example");
    assert!(
        on_ann.precheck.iter().any(|v| v.artifact == "intake" && v.rule == "not_approved"),
        "the publish gate refuses the intake here too: {:?}",
        on_ann.precheck
    );
    // Publishing is Bob's now: Ann is refused while his lease is live.
    assert_eq!(ann.api.prep_publish(&ann.scope, &id).await.unwrap_err().code, ErrorCode::PackageLocked);
    let (ann_id, bob_id) = (ann.scope.user().to_string(), bob.scope.user().to_string());
    for desk in [&ann, &bob] {
        let over = desk.audit("prep.lock_taken_over", &id);
        assert_eq!(over.len(), 1, "once on each desktop: {over:?}");
        assert_eq!(over[0].0, bob_id);
        assert_eq!(over[0].1["previous_holder"], ann_id.as_str());
    }

    // Offline: Bob still holds a live lease here and may edit; Ann holds none and is told what to do.
    service.stopped().await;
    let mut offline = edited.clone();
    offline.brief = format!("{} Written offline.", edited.brief);
    bob.api.prep_edit(&bob.scope, &id, Content::Intake(offline)).await.unwrap();
    let e = ann.api.prep_edit(&ann.scope, &id, Content::Intake(intake())).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::SyncUnavailable);
    assert!(e.message.contains("holds no live edit lease for this package"), "{}", e.message);
    // Past its expiry, Bob's lease no longer lets him edit offline either.
    clock.advance(chrono::Duration::minutes(31));
    let e = bob.api.prep_edit(&bob.scope, &id, Content::Intake(intake())).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::SyncUnavailable);

    // Another organization sees nothing.
    carol.api.sync_now().await.ok();
    assert!(carol.api.prep_list(&carol.scope).await.unwrap().is_empty());
    assert_eq!(carol.api.prep_show(&carol.scope, &id).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(carol.api.prep_lock(&carol.scope, &id, true).await.unwrap_err().code, ErrorCode::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_approval_shows_stale_and_a_malformed_package_change_is_skipped_on_its_own() {
    use pactwise_sync::wire::PushRequest;
    use pactwise_sync::{Change, ChangeBody, DeviceToken, Hlc, HttpApi, SyncedModel};
    let clock = Arc::new(FixedClock::new(SystemClock.now()));
    let service = Service::start(clock.clone()).await;
    let tmp = tempfile::tempdir().unwrap();
    let ann = desktop(&service, &clock, tmp.path(), "alpha", "ann@alpha.example").await;
    let carol = desktop(&service, &clock, tmp.path(), "charlie", "carol@charlie.example").await;
    let view = ann.api.prep_new(&ann.scope, intake()).await.unwrap();
    let id = view.id.clone();
    ann.sync().await;

    // Bob's device, modified: it pushes a package whose intake claims an approval of content it does not hold,
    // and, before it, a package change that is not a package at all.
    let token = HttpApi::new(&service.endpoint, None)
        .unwrap()
        .sign_in(&pactwise_sync::SignInRequest {
            org: "alpha".into(),
            email: "bob@alpha.example".into(),
            password: PASSWORD.into(),
            device_name: "modified".into(),
        })
        .await
        .unwrap()
        .token;
    let raw = HttpApi::new(&service.endpoint, Some(DeviceToken::new(token))).unwrap();
    let mut forged = view.package.to_json();
    forged["artifacts"]["intake"]["state"] = serde_json::json!({"status": "approved", "hash": "0".repeat(64)});
    let wall = u64::try_from(clock.now().timestamp_millis()).unwrap() + 60_000;
    let change = |fields: serde_json::Value, ms: u64| Change {
        id: uuid::Uuid::now_v7(),
        model: SyncedModel::PrepPackage,
        record_id: id.clone(),
        hlc: Hlc { wall_ms: ms, counter: 0, node: uuid::Uuid::now_v7() },
        body: ChangeBody::Fields { fields: fields.as_object().unwrap().clone().into_iter().collect() },
    };
    let changes = vec![
        change(serde_json::json!({"package": {"artifacts": {"scope": "nonsense"}}}), wall),
        change(serde_json::json!({"package": forged}), wall + 1),
    ];
    let pushed = raw.push(&PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes }).await.unwrap();
    assert!(pushed.results.iter().all(|r| r.refused.is_none()), "the service merges nothing: {pushed:?}");

    ann.sync().await;
    let on_ann = ann.api.prep_show(&ann.scope, &id).await.unwrap();
    assert_eq!(on_ann.package.artifacts.intake.state.name(), "stale", "an approval of other content is stale");
    assert_eq!(ann.audit("prep.approval_stale", &id).len(), 1);
    assert!(on_ann.precheck.iter().any(|v| v.artifact == "intake"), "the gate refuses it");
    // A publication from that device of what Ann holds is not kept: the publish gate refuses it here.
    let here = pactwise_rules::prep::content_hash(&on_ann.package.to_json());
    let publication = serde_json::json!({"published": {"at": clock.now().to_rfc3339(), "hash": here}});
    let pushed = raw
        .push(&PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes: vec![change(publication, wall + 2)] })
        .await
        .unwrap();
    assert!(pushed.results.iter().all(|r| r.refused.is_none()), "{pushed:?}");
    ann.sync().await;
    assert_eq!(ann.api.prep_show(&ann.scope, &id).await.unwrap().status, "draft", "the gate holds everywhere");
    assert!(ann.audit("prep.publish", &id).is_empty());
    // The sync went on: nothing is stuck behind the malformed change.
    let status = ann.api.sync_status().await.unwrap();
    assert_eq!(status.pending_uploads, 0, "{status:?}");
    assert!(status.last_error.is_none(), "{status:?}");

    // Another organization's desktop received none of it.
    carol.sync().await;
    assert!(carol.api.prep_list(&carol.scope).await.unwrap().is_empty());
}
