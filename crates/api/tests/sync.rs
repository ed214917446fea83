//! Two desktops (two data directories) syncing through a real sync service on loopback (`pactwise-sync-server`
//! with SQLite): documents with their files, corrections, settings, soft delete; another organization's device
//! never receives any of it; sign-out; the background loop and its push channel (a correction reaches the other
//! desktop's running loop without its poll); the device token never lands in the data directory.

use pactwise_api::{
    Api, ApiOptions, CorrectionInput, DocumentQuery, ImportOptions, ImportProgress, MemorySyncTokens, OrgScope,
    SignInInput, SyncPhase, SyncTokens,
};
use pactwise_domain::{Clock, ErrorCode, ItemStatus, Role, SystemClock};
use pactwise_model::InMemoryApiKeySource;
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn quiet(_: ImportProgress) {}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/mutual-nda-northwind-contoso.txt")
}

const PASSWORD: &str = "a-long-password-for-sync";

/// A sync service on loopback with organization `alpha` (Ann and Dave, admins; Bob, reviewer) and `charlie`
/// (Carol).
struct Service {
    endpoint: String,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Service {
    async fn start() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
        let now = SystemClock.now();
        admin::create_org(storage.as_ref(), "alpha", "Alpha LLP", now).unwrap();
        admin::create_user(storage.as_ref(), "alpha", "ann@alpha.example", PASSWORD, Role::Admin, now).unwrap();
        admin::create_user(storage.as_ref(), "alpha", "bob@alpha.example", PASSWORD, Role::Reviewer, now).unwrap();
        admin::create_user(storage.as_ref(), "alpha", "dave@alpha.example", PASSWORD, Role::Admin, now).unwrap();
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

    /// The service's database (for a test that changes a member's role on the service).
    fn database(&self) -> PathBuf {
        self._dir.path().join("sync.sqlite3")
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

/// One desktop: a data directory, the app over it (offline model), its keychain stand-in.
struct Desktop {
    api: Api,
    tokens: Arc<MemorySyncTokens>,
    root: PathBuf,
}

fn desktop(dir: &Path, name: &str) -> Desktop {
    desktop_polling_every(dir, name, ApiOptions::default().sync_interval)
}

/// A desktop whose background loop polls every `interval` when nothing else wakes it.
fn desktop_polling_every(dir: &Path, name: &str, interval: Duration) -> Desktop {
    let tokens = Arc::new(MemorySyncTokens::default());
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: tokens.clone(),
        sync_interval: interval,
        ..ApiOptions::default()
    };
    let root = dir.join(name);
    Desktop { api: Api::open_with(root.clone(), options).unwrap(), tokens, root }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() { out.extend(files_under(&p)) } else { out.push(p) }
    }
    out
}

/// The device token of a signed-in desktop, from its keychain stand-in.
async fn token_of(d: &Desktop) -> String {
    let status = d.api.sync_status().await.unwrap();
    let device = status.account.unwrap().device_id.parse().unwrap();
    d.tokens.store_for(device).get().unwrap().unwrap().expose().to_string()
}

fn no_file_contains(root: &Path, secret: &str) {
    for file in files_under(root) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the device token was found in {}",
            file.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_its_correction_and_a_setting_reach_the_other_desktop_and_a_delete_comes_back() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let local = a.api.local_session().await.unwrap();
    let named = pactwise_api::FirstRunInput { organization_name: "Ann's practice".into(), own_names: vec![] };
    a.api.complete_first_run(&local, named).await.unwrap();

    // A signs in: the service's organization becomes current; the local one stays reachable.
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    assert_ne!(sa.org(), local.org());
    assert_eq!(a.api.local_session().await.unwrap().org(), sa.org(), "the new session is current");
    let orgs = a.api.organizations(&sa).await.unwrap();
    assert!(orgs.iter().any(|m| m.org_id == local.org() && !m.current), "{orgs:?}");
    assert!(orgs.iter().any(|m| m.org_id == sa.org() && m.current && m.role == Role::Admin && m.name == "Alpha LLP"));

    // A imports a contract, corrects an item and changes a setting; then syncs.
    let report = a.api.import_documents(&sa, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    let imported = &report.imported[0];
    let id = imported.document.id;
    let pages = imported.page_count.unwrap();
    let review = a.api.document_review(&sa, id).await.unwrap();
    let item = review.items.iter().find(|i| i.status != ItemStatus::Absent).unwrap().id.clone();
    let input = CorrectionInput {
        item_id: item.clone(),
        confirm: false,
        status: Some(ItemStatus::Absent),
        quote: None,
        note: Some("Checked by Ann: not in this NDA".into()),
        acknowledge_warnings: false,
    };
    a.api.correct_item(&sa, id, input).await.unwrap();
    a.api.set_threshold(&sa, "critical_min_confidence", 0.85).await.unwrap();
    let before = a.api.sync_status().await.unwrap();
    assert_eq!(before.phase, SyncPhase::Pending);
    assert_eq!(before.pending_uploads, 3, "the document, the correction and the setting");
    let sent = a.api.sync_now().await.unwrap();
    assert_eq!((sent.pushed, sent.files_uploaded), (3, 1));
    assert_eq!(sent.status.phase, SyncPhase::Synced);
    assert_eq!(sent.status.pending_uploads, 0);

    // B signs in to the same organization as Bob and syncs: the same document (id, pages), the correction in
    // force and the setting.
    let b = desktop(tmp.path(), "b");
    let sb = b.api.sync_sign_in(service.sign_in("alpha", "bob@alpha.example")).await.unwrap();
    assert_eq!((sb.org(), sb.role()), (sa.org(), Role::Reviewer));
    let got = b.api.sync_now().await.unwrap();
    assert_eq!((got.pulled, got.files_fetched, got.documents_imported), (3, 1, 1));
    assert_eq!(got.pushed, 0, "nothing received is queued back");
    let docs = b.api.list_documents(&sb, DocumentQuery::default()).await.unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!((docs[0].id, docs[0].name.as_str()), (id, "mutual-nda-northwind-contoso.txt"));
    assert_eq!(docs[0].created_by, sa.user(), "created by Ann, as the service stamped it");
    let b_pages = b.api.document_pages(&sb, id).await.unwrap().expect("pages extracted on B");
    assert_eq!(b_pages.pages.len() as u32, pages);
    let on_b = b.api.document_review(&sb, id).await.unwrap();
    assert!(on_b.gate.is_some(), "the offline pipeline ran on B");
    let corrected = on_b.items.iter().find(|i| i.id == item).unwrap();
    assert_eq!(corrected.status, ItemStatus::Absent);
    assert_eq!(corrected.note.as_deref(), Some("Checked by Ann: not in this NDA"));
    assert_eq!(corrected.confirmed_by.as_deref(), Some("ann@alpha.example"));
    assert_eq!(b.api.thresholds(&sb).await.unwrap().critical_min_confidence, 0.85);
    let b_status = b.api.sync_status().await.unwrap();
    assert_eq!((b_status.phase, b_status.files_waiting), (SyncPhase::Synced, 0));

    // B moves it to the trash; after both sync, A sees it deleted.
    b.api.delete_document(&sb, id).await.unwrap();
    assert_eq!(b.api.sync_now().await.unwrap().pushed, 1);
    let back = a.api.sync_now().await.unwrap();
    assert_eq!(back.pulled, 1);
    assert!(a.api.list_documents(&sa, DocumentQuery::default()).await.unwrap().is_empty());
    let trash = a.api.list_documents(&sa, DocumentQuery { deleted: true }).await.unwrap();
    assert_eq!(trash.iter().map(|d| d.id).collect::<Vec<_>>(), [id]);

    // The organization A used before signing in can be switched back to, and the synced one again.
    let back_home = a.api.switch_organization(&sa, local.org()).await.unwrap();
    assert_eq!(back_home.org(), local.org());
    assert!(a.api.list_documents(&back_home, DocumentQuery { deleted: true }).await.unwrap().is_empty());
    assert_eq!(a.api.switch_organization(&back_home, sa.org()).await.unwrap().org(), sa.org());

    // The device tokens are in the keychain only: not in the database, its WAL, the blobs or the logs.
    for d in [&a, &b] {
        let token = token_of(d).await;
        assert!(token.len() > 20);
        no_file_contains(&d.root, &token);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_from_the_welcome_screen_sets_the_installation_up_without_an_empty_placeholder() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let local = a.api.local_session().await.unwrap();
    assert!(a.api.first_run(&local).await.unwrap().needed, "a new installation shows the welcome screen");
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    assert!(!a.api.first_run(&sa).await.unwrap().needed, "signed in to its organization: set up");
    let orgs = a.api.organizations(&sa).await.unwrap();
    assert_eq!(orgs.len(), 1, "the empty placeholder is not offered beside the synced organization: {orgs:?}");
    assert_eq!(orgs[0].org_id, sa.org());

    // On an installation that was set up, signing in keeps the local organization (the test above).
    let b = desktop(tmp.path(), "b");
    let local_b = b.api.local_session().await.unwrap();
    let report = b.api.import_documents(&local_b, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    assert_eq!(report.imported.len(), 1);
    let sb = b.api.sync_sign_in(service.sign_in("alpha", "bob@alpha.example")).await.unwrap();
    let orgs = b.api.organizations(&sb).await.unwrap();
    assert!(orgs.iter().any(|m| m.org_id == local_b.org()), "an organization with documents stays: {orgs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_organizations_device_never_receives_anything() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    a.api.import_documents(&sa, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    a.api.set_threshold(&sa, "ocr_min_confidence", 0.95).await.unwrap();
    a.api.sync_now().await.unwrap();

    let c = desktop(tmp.path(), "c");
    let sc = c.api.sync_sign_in(service.sign_in("charlie", "carol@charlie.example")).await.unwrap();
    assert_ne!(sc.org(), sa.org());
    let got = c.api.sync_now().await.unwrap();
    assert_eq!((got.pulled, got.files_fetched), (0, 0));
    assert!(c.api.list_documents(&sc, DocumentQuery::default()).await.unwrap().is_empty());
    assert!(c.api.list_documents(&sc, DocumentQuery { deleted: true }).await.unwrap().is_empty());
    assert_ne!(c.api.thresholds(&sc).await.unwrap().ocr_min_confidence, 0.95);

    // C's own document never reaches A either.
    let other = tmp.path().join("other.txt");
    std::fs::write(&other, "SERVICES AGREEMENT between Charlie GmbH and Delta Inc.\n").unwrap();
    c.api.import_documents(&sc, vec![other], ImportOptions::default(), &quiet).await.unwrap();
    assert_eq!(c.api.sync_now().await.unwrap().pushed, 1);
    let back = a.api.sync_now().await.unwrap();
    assert_eq!(back.pulled, 0);
    assert_eq!(a.api.list_documents(&sa, DocumentQuery::default()).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_out_forgets_the_token_and_keeps_the_data() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    let device = a.api.sync_status().await.unwrap().account.unwrap().device_id.parse().unwrap();
    a.api.import_documents(&sa, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    a.api.sync_now().await.unwrap();

    let status = a.api.sync_sign_out().await.unwrap();
    assert_eq!(status.phase, SyncPhase::NotSignedIn);
    assert!(a.tokens.store_for(device).get().unwrap().is_none(), "the token left the keychain");
    let err = a.api.sync_now().await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Unauthenticated);
    assert_eq!(a.api.list_documents(&sa, DocumentQuery::default()).await.unwrap().len(), 1, "the data stays");

    // A wrong password is refused with a message that says what to check, and nothing is bound.
    let mut wrong = service.sign_in("alpha", "ann@alpha.example");
    wrong.password = "not-the-password".into();
    let err = a.api.sync_sign_in(wrong).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Unauthenticated);
    assert!(err.message.contains("password"), "{}", err.message);
    assert_eq!(a.api.sync_status().await.unwrap().phase, SyncPhase::NotSignedIn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_service_loses_nothing_and_says_so() {
    let mut service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    drop(service.stop.take());
    // The stopped server stops accepting; wait (bounded) until a connection is refused.
    let addr = service.endpoint.trim_start_matches("http://").to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(&addr).is_ok() {
        assert!(Instant::now() < deadline, "the test server did not stop");
        tokio::task::yield_now().await;
    }
    a.api.import_documents(&sa, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    let err = a.api.sync_now().await.unwrap_err();
    assert_eq!(err.code, ErrorCode::SyncUnavailable);
    assert!(err.message.contains("retries by itself"), "{}", err.message);
    assert_eq!(a.api.sync_status().await.unwrap().pending_uploads, 1, "the change waits in the outbox");

    // Signing in does not retry by itself: an unreachable service says what to do instead.
    let b = desktop(tmp.path(), "b");
    let err = b.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::SyncUnavailable);
    assert!(err.message.contains("cannot be reached"), "{}", err.message);
    assert!(err.message.contains("check the address"), "{}", err.message);
    assert!(!err.message.contains("retries by itself"), "{}", err.message);
    assert_eq!(b.api.sync_status().await.unwrap().phase, SyncPhase::NotSignedIn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_refuses_plain_http_to_another_computer_and_says_to_use_https() {
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    for server in ["http://sync.example.com", "http://192.0.2.7:8787", "http://localhost.example.com"] {
        let input = SignInInput {
            server: server.into(),
            org: "alpha".into(),
            email: "ann@alpha.example".into(),
            password: PASSWORD.into(),
        };
        let err = a.api.sync_sign_in(input).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidInput, "{server}");
        assert!(err.message.contains("use https://"), "{server}: {}", err.message);
        assert!(!err.message.contains(PASSWORD));
    }
    assert_eq!(a.api.sync_status().await.unwrap().phase, SyncPhase::NotSignedIn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synced_document_never_takes_a_file_that_only_another_organization_here_holds() {
    // Regression: the blob store is shared by every organization on a desktop. The local organization holds a
    // confidential file; a member of the synced organization pushes a document naming its hash and uploads
    // nothing. The synced organization must not get the file, its text, or anything quoting it.
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let local = a.api.local_session().await.unwrap();
    let secret = tmp.path().join("secret-settlement.txt");
    std::fs::write(&secret, "CONFIDENTIAL SETTLEMENT between Acme and Zenith: Acme pays 9,400,000 EUR.\n").unwrap();
    let held = a.api.import_documents(&local, vec![secret.clone()], ImportOptions::default(), &quiet).await.unwrap();
    let hash = held.imported[0].document.content_hash.clone();
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();

    // Bob (another member of alpha) names that hash in a document change; no file is uploaded.
    let bob = pactwise_sync::HttpApi::new(&service.endpoint, None)
        .unwrap()
        .sign_in(&pactwise_sync::SignInRequest {
            org: "alpha".into(),
            email: "bob@alpha.example".into(),
            password: PASSWORD.into(),
            device_name: "attacker".into(),
        })
        .await
        .unwrap();
    let bob_api =
        pactwise_sync::HttpApi::new(&service.endpoint, Some(pactwise_sync::DeviceToken::new(bob.token))).unwrap();
    let fields: std::collections::BTreeMap<String, serde_json::Value> = [
        ("name", serde_json::json!("harmless.txt")),
        ("content_hash", serde_json::json!(hash)),
        ("media_type", serde_json::json!("txt")),
        ("size", serde_json::json!(70)),
        ("created_at", serde_json::json!("2026-11-29T08:00:00Z")),
        ("created_by", serde_json::json!(bob.user_id.to_string())),
        ("created_by_name", serde_json::json!("bob")),
        ("deleted_at", serde_json::Value::Null),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let change = pactwise_sync::Change {
        id: uuid::Uuid::now_v7(),
        model: pactwise_sync::SyncedModel::Document,
        record_id: pactwise_domain::DocumentId::new().to_string(),
        hlc: pactwise_sync::Hlc { wall_ms: 1, counter: 0, node: uuid::Uuid::now_v7() },
        body: pactwise_sync::ChangeBody::Fields { fields },
    };
    bob_api
        .push(&pactwise_sync::PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes: vec![change] })
        .await
        .unwrap();

    let got = a.api.sync_now().await.unwrap();
    assert_eq!((got.pulled, got.files_fetched, got.documents_imported), (1, 0, 0), "{got:?}");
    assert!(a.api.list_documents(&sa, DocumentQuery::default()).await.unwrap().is_empty(), "alpha got no document");
    assert_eq!(got.status.files_waiting, 1, "it waits for alpha's service to serve the file, which it cannot");
    assert!(a.api.list_documents(&sa, DocumentQuery { deleted: true }).await.unwrap().is_empty());
    // Another round tries to fetch it again from alpha's service (which does not have it): still nothing.
    let again = a.api.sync_now().await.unwrap();
    assert_eq!((again.files_fetched, again.documents_imported), (0, 0));
    assert!(a.api.list_documents(&sa, DocumentQuery::default()).await.unwrap().is_empty());
    // The local organization still has its file.
    assert_eq!(a.api.list_documents(&local, DocumentQuery::default()).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_the_service_refuses_is_listed_with_its_reason_and_reaches_nobody() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let d = desktop(tmp.path(), "d");
    let sd = d.api.sync_sign_in(service.sign_in("alpha", "dave@alpha.example")).await.unwrap();
    // Dave, an admin when he signed in, changes a threshold while offline...
    d.api.set_threshold(&sd, "critical_min_confidence", 0.95).await.unwrap();
    // ...and is made a reviewer on the service before his desktop syncs.
    let db = rusqlite::Connection::open(service.database()).unwrap();
    db.execute("UPDATE users SET role = 'reviewer' WHERE email = 'dave@alpha.example'", []).unwrap();
    let round = d.api.sync_now().await.unwrap();
    assert_eq!(round.status.pending_uploads, 0, "a refused change does not block the outbox");
    assert_eq!(round.status.refused_total, 1);
    let refused = &round.status.refused_changes[0];
    assert_eq!(refused.what, "the review thresholds");
    assert!(refused.reason.contains("your role (reviewer) cannot change the review thresholds"), "{refused:?}");
    // Nobody else receives it.
    let a = desktop(tmp.path(), "a");
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    a.api.sync_now().await.unwrap();
    assert_ne!(a.api.thresholds(&sa).await.unwrap().critical_min_confidence, 0.95);
    // On the desktop itself a reviewer may not make the change at all.
    let b = desktop(tmp.path(), "b");
    let sb = b.api.sync_sign_in(service.sign_in("alpha", "bob@alpha.example")).await.unwrap();
    let err = b.api.set_threshold(&sb, "critical_min_confidence", 0.9).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert!(err.message.contains("ask an owner or admin"), "{}", err.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_setting_stored_before_the_checks_breaks_neither_imports_nor_its_repair() {
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let scope = a.api.local_session().await.unwrap();
    // What an older version kept from another member: thresholds `1`, aliases that are not a list.
    let db = rusqlite::Connection::open(a.root.join("pactwise.sqlite3")).unwrap();
    for (key, bad) in [("review.thresholds", "1"), ("organization.aliases", r#"{"not": "a list"}"#)] {
        db.execute(
            "INSERT INTO settings (org_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (org_id, key) DO UPDATE SET value = excluded.value",
            rusqlite::params![scope.org().to_string(), key, bad],
        )
        .unwrap();
    }
    let report = a.api.import_documents(&scope, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    assert!(report.failed.is_empty(), "imports still work: {:?}", report.failed);
    assert!(a.api.document_review(&scope, report.imported[0].document.id).await.unwrap().gate.is_some());
    let repaired = a.api.set_threshold(&scope, "critical_min_confidence", 0.8).await.unwrap();
    assert_eq!(repaired.critical_min_confidence, 0.8);
    assert_eq!(a.api.thresholds(&scope).await.unwrap().critical_min_confidence, 0.8, "the repair is kept");
    assert_eq!(a.api.set_own_names(&scope, vec!["Acme Corp".into()]).await.unwrap(), ["Acme Corp"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_background_loop_pushes_a_local_write_without_being_asked() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    let sa: OrgScope = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    let sync_loop = a.api.sync_loop().await.unwrap().expect("signed in: a loop");
    let running = tokio::spawn(sync_loop.run());
    let settled = |want: SyncPhase| {
        let api = a.api.clone();
        async move {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let status = api.sync_status().await.unwrap();
                if status.phase == want && status.pending_uploads == 0 && status.running {
                    return status;
                }
                assert!(Instant::now() < deadline, "sync did not reach {want:?}: {status:?}");
                tokio::task::yield_now().await;
            }
        }
    };
    settled(SyncPhase::Synced).await;
    // A local write wakes the loop (the interval is 30 s; this settles long before).
    a.api.set_threshold(&sa, "critical_min_confidence", 0.9).await.unwrap();
    settled(SyncPhase::Synced).await;
    let b = desktop(tmp.path(), "b");
    let sb = b.api.sync_sign_in(service.sign_in("alpha", "bob@alpha.example")).await.unwrap();
    b.api.sync_now().await.unwrap();
    assert_eq!(b.api.thresholds(&sb).await.unwrap().critical_min_confidence, 0.9);
    // Signing out stops the loop.
    a.api.sync_sign_out().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), running).await.expect("the loop stopped").unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correction_on_one_desktop_reaches_the_other_desktops_running_loop_through_the_push_channel() {
    // Both loops poll once a day: anything B applies during this test came by the push channel.
    let day = Duration::from_secs(24 * 3600);
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop_polling_every(tmp.path(), "a", day);
    let sa = a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    let report = a.api.import_documents(&sa, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    let id = report.imported[0].document.id;
    a.api.sync_now().await.unwrap();
    let b = desktop_polling_every(tmp.path(), "b", day);
    let sb = b.api.sync_sign_in(service.sign_in("alpha", "bob@alpha.example")).await.unwrap();
    assert_eq!(b.api.sync_now().await.unwrap().documents_imported, 1, "B has the document before the loops start");
    let item = b
        .api
        .document_review(&sb, id)
        .await
        .unwrap()
        .items
        .iter()
        .find(|i| i.status != ItemStatus::Absent)
        .unwrap()
        .id
        .clone();

    let (loop_a, loop_b) = (a.api.sync_loop().await.unwrap().unwrap(), b.api.sync_loop().await.unwrap().unwrap());
    let mut progress_b = loop_b.progress();
    let (running_a, running_b) = (tokio::spawn(loop_a.run()), tokio::spawn(loop_b.run()));
    // A bound against a hang, far below the poll interval; nothing here measures time.
    let bound = Duration::from_secs(60);
    tokio::time::timeout(bound, progress_b.wait_for(|p| p.rounds == 1)).await.expect("B's first round").unwrap();

    // Ann corrects the item on A; A's loop pushes it (woken by the write), the service wakes B's wait, B pulls.
    let input = CorrectionInput {
        item_id: item.clone(),
        confirm: false,
        status: Some(ItemStatus::Absent),
        quote: None,
        note: Some("Pushed from A".into()),
        acknowledge_warnings: false,
    };
    a.api.correct_item(&sa, id, input).await.unwrap();
    let seen = tokio::time::timeout(bound, progress_b.wait_for(|p| p.pulled_by_push >= 1))
        .await
        .expect("B pulled the correction through the push channel")
        .unwrap()
        .clone();
    assert_eq!((seen.poll_wakes, seen.fallbacks, seen.push_unavailable.as_deref()), (0, 0, None), "{seen:?}");
    assert!(seen.push_wakes >= 1 && seen.rounds >= 2, "{seen:?}");
    let on_b = b.api.document_review(&sb, id).await.unwrap();
    let corrected = on_b.items.iter().find(|i| i.id == item).unwrap();
    assert_eq!((corrected.status, corrected.note.as_deref()), (ItemStatus::Absent, Some("Pushed from A")));
    assert_eq!(corrected.confirmed_by.as_deref(), Some("ann@alpha.example"));

    // Signing out stops both loops, though each may be waiting on the push channel.
    a.api.sync_sign_out().await.unwrap();
    b.api.sync_sign_out().await.unwrap();
    for running in [running_a, running_b] {
        tokio::time::timeout(bound, running).await.expect("the loop stopped").unwrap();
    }
}

/// Touches the real OS keychain; runs only under `tests/with-keyring.sh` (PACTWISE_KEYRING_TESTS=1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_lives_in_the_os_keychain_and_leaves_it_at_sign_out() {
    if !pactwise_testkit::keychain() {
        return;
    }
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("k"), options).unwrap();
    let scope = api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    let device = api.sync_status().await.unwrap().account.unwrap().device_id.parse().unwrap();
    let keychain = pactwise_api::KeyringSyncTokens.store_for(device);
    let token = keychain.get().unwrap().expect("the token is in the keychain");
    api.import_documents(&scope, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    api.sync_now().await.unwrap();
    no_file_contains(&tmp.path().join("k"), token.expose());
    api.sync_sign_out().await.unwrap();
    assert!(keychain.get().unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_that_cannot_start_says_why_in_the_status() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let a = desktop(tmp.path(), "a");
    a.api.sync_sign_in(service.sign_in("alpha", "ann@alpha.example")).await.unwrap();
    let device = a.api.sync_status().await.unwrap().account.unwrap().device_id.parse().unwrap();
    // The keychain lost the token (another tool cleared it): the loop cannot start, and the status line says so.
    a.tokens.store_for(device).clear().unwrap();
    let err = a.api.sync_loop().await.err().expect("no loop without a token");
    assert_eq!(err.code, ErrorCode::Unauthenticated);
    let status = a.api.sync_status().await.unwrap();
    assert!(!status.running);
    let shown = status.last_error.expect("the reason is shown");
    assert_eq!(shown.code, ErrorCode::Unauthenticated);
    assert!(shown.message.contains("sign in to sync again"), "{}", shown.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desktop_syncs_over_tls_with_the_organizations_own_root_certificate_and_refuses_without_it() {
    // The service serves TLS itself with a certificate of a private CA (here self-signed); the desktop trusts it
    // only through `ApiOptions::sync_trust` (what PACTWISE_SYNC_CA_FILE sets), never by turning verification off.
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
    let now = SystemClock.now();
    admin::create_org(storage.as_ref(), "alpha", "Alpha LLP", now).unwrap();
    admin::create_user(storage.as_ref(), "alpha", "ann@alpha.example", PASSWORD, Role::Admin, now).unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let tls = pactwise_sync_server::load_tls(&cert, &key).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = format!("https://localhost:{}", listener.local_addr().unwrap().port());
    let state = AppState::new(storage, Arc::new(SystemClock), ServerConfig::default());
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(pactwise_sync_server::serve_tls(listener, state, tls, async move {
        let _ = stopped.await;
    }));
    let input = || SignInInput {
        server: server.clone(),
        org: "alpha".into(),
        email: "ann@alpha.example".into(),
        password: PASSWORD.into(),
    };

    let untrusting = desktop(dir.path(), "u");
    let err = untrusting.api.sync_sign_in(input()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::SyncUnavailable);
    assert!(err.message.contains("certificate is not trusted"), "{}", err.message);

    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        sync_trust: pactwise_sync::TlsTrust::default().with_pem(certified.cert.pem().into_bytes()),
        ..ApiOptions::default()
    };
    let api = Api::open_with(dir.path().join("t"), options).unwrap();
    let scope = api.sync_sign_in(input()).await.unwrap();
    api.import_documents(&scope, vec![fixture()], ImportOptions::default(), &quiet).await.unwrap();
    let round = api.sync_now().await.unwrap();
    assert_eq!((round.pushed, round.files_uploaded), (1, 1));
    assert_eq!(round.status.phase, SyncPhase::Synced);
}
