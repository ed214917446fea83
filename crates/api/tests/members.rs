//! Members across desktops, through a real sync service on loopback: an owner adds a member in Settings → Members
//! (the one-time code is in the answer), the member signs in on their own desktop with the code (setting their
//! password) and is known by name there and on the owner's desktop; role changes and removals reach every desktop
//! in the next pull (a removed member keeps their name in the history, loses the membership, and their own desktop
//! stops syncing); a reviewer cannot manage members; a used code does not work twice.

use pactwise_api::{AddMemberInput, Api, ApiOptions, CodeSignInInput, MemorySyncTokens, SignInInput};
use pactwise_domain::{Clock, ErrorCode, Role, SystemClock};
use pactwise_model::InMemoryApiKeySource;
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use std::path::Path;
use std::sync::Arc;

const PASSWORD: &str = "a-long-password-for-sync";

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
        admin::create_user(storage.as_ref(), "alpha", "ann@alpha.example", PASSWORD, Role::Owner, now).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let state = AppState::new(storage, Arc::new(SystemClock), ServerConfig::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(pactwise_sync_server::serve(listener, state, async move {
            let _ = stopped.await;
        }));
        Service { endpoint, _dir: dir, stop: Some(stop) }
    }

    fn code(&self, email: &str, code: &str, password: &str) -> CodeSignInInput {
        CodeSignInInput {
            server: self.endpoint.clone(),
            org: "alpha".into(),
            email: email.into(),
            code: code.into(),
            password: password.into(),
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn desktop(dir: &Path, name: &str) -> Api {
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        ..ApiOptions::default()
    };
    Api::open_with(dir.join(name), options).unwrap()
}

/// The members this desktop knows from its own store (what the log brought), without asking the service.
async fn known(api: &Api, scope: &pactwise_api::OrgScope) -> Vec<(String, Role)> {
    api.known_members(scope).await.unwrap().into_iter().map(|m| (m.display_name, m.role)).collect()
}

fn names(view: &pactwise_api::MembersView) -> Vec<(String, Role)> {
    view.members.iter().map(|m| (m.display_name.clone(), m.role)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_added_on_one_desktop_signs_in_with_the_code_and_every_desktop_knows_them_by_name() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (desktop(tmp.path(), "a"), desktop(tmp.path(), "b"), desktop(tmp.path(), "c"));

    // Before signing in to sync, members cannot be managed (and the list is this desktop's own).
    let local = a.local_session().await.unwrap();
    let before = a.members(&local).await.unwrap();
    assert!(!before.synced && !before.can_manage);
    let refused = a
        .add_member(&local, AddMemberInput { email: "x@y.z".into(), display_name: "X".into(), role: Role::Viewer })
        .await
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert!(refused.message.contains("sign in to sync"), "{}", refused.message);

    let ann = a
        .sync_sign_in(SignInInput {
            server: service.endpoint.clone(),
            org: "alpha".into(),
            email: "ann@alpha.example".into(),
            password: PASSWORD.into(),
        })
        .await
        .unwrap();
    let view = a.members(&ann).await.unwrap();
    assert!(view.synced && view.can_manage && view.can_manage_owners && view.offline_reason.is_none());
    assert_eq!(view.members.len(), 1);
    assert!(view.members[0].is_you);

    // Ann adds Bea; the code to hand over is in the answer, once.
    let added = a
        .add_member(
            &ann,
            AddMemberInput {
                email: "Bea@Alpha.example".into(),
                display_name: "Bea Ortiz".into(),
                role: Role::Approver,
            },
        )
        .await
        .unwrap();
    assert_eq!(added.member.email.as_deref(), Some("bea@alpha.example"));
    assert_eq!(added.code.len(), 19);
    let view = a.members(&ann).await.unwrap();
    let bea_row = view.members.iter().find(|m| m.user_id == added.member.user_id).unwrap();
    assert!(bea_row.code_open_until.is_some(), "the owner sees that Bea's code is open");

    // Bea signs in on her desktop with the code, choosing her password; her name is hers, not her email.
    let short = b.sync_sign_in_with_code(service.code("bea@alpha.example", &added.code, "short")).await.unwrap_err();
    assert_eq!(short.code, ErrorCode::InvalidInput);
    let bea =
        b.sync_sign_in_with_code(service.code("bea@alpha.example", &added.code, "bea-chose-this-1")).await.unwrap();
    assert_eq!(bea.user(), added.member.user_id);
    assert_eq!(bea.role(), Role::Approver);
    assert_eq!(b.session_info(&bea).await.unwrap().user_name, "Bea Ortiz");
    let on_b = b.members(&bea).await.unwrap();
    assert!(!on_b.can_manage, "an approver manages no members");
    assert_eq!(on_b.members.len(), 2);
    // The code works once: a third desktop cannot use it again.
    let again = c.sync_sign_in_with_code(service.code("bea@alpha.example", &added.code, "someone-else-1")).await;
    assert_eq!(again.unwrap_err().code, ErrorCode::Unauthenticated);

    // Bea may not manage members, on her desktop or (if it asked anyway) on the service.
    let not_hers = b
        .add_member(
            &bea,
            AddMemberInput { email: "z@alpha.example".into(), display_name: "Z".into(), role: Role::Viewer },
        )
        .await
        .unwrap_err();
    assert_eq!(not_hers.code, ErrorCode::Forbidden);

    // Ann adds Cy and makes Bea a reviewer; Bea's desktop learns both in its next pull (names and roles, not
    // placeholders), without listing the members itself.
    let cy = a
        .add_member(
            &ann,
            AddMemberInput { email: "cy@alpha.example".into(), display_name: "Cy Park".into(), role: Role::Viewer },
        )
        .await
        .unwrap();
    a.change_member_role(&ann, added.member.user_id, Role::Reviewer).await.unwrap();
    b.sync_now().await.unwrap();
    let bea = b.local_session().await.unwrap();
    assert_eq!(bea.role(), Role::Reviewer, "Bea's own role changed on her desktop");
    let known_on_b = known(&b, &bea).await;
    assert!(known_on_b.contains(&("Cy Park".to_string(), Role::Viewer)), "{known_on_b:?}");
    assert!(known_on_b.contains(&("Bea Ortiz".to_string(), Role::Reviewer)), "{known_on_b:?}");

    // Ann removes Cy: Bea's desktop drops the membership but keeps the name for history.
    a.remove_member(&ann, cy.member.user_id).await.unwrap();
    assert!(names(&a.members(&ann).await.unwrap()).iter().all(|(n, _)| n != "Cy Park"));
    b.sync_now().await.unwrap();
    let known_on_b = known(&b, &bea).await;
    assert!(known_on_b.iter().all(|(n, _)| n != "Cy Park"), "{known_on_b:?}");

    // The last owner cannot remove herself (the service says why), and removing Bea stops her desktop's sync.
    let last = a.remove_member(&ann, ann.user()).await.unwrap_err();
    assert_eq!(last.code, ErrorCode::Forbidden);
    assert!(last.message.contains("last owner"), "{}", last.message);
    a.remove_member(&ann, added.member.user_id).await.unwrap();
    let stopped = b.sync_now().await.unwrap_err();
    assert_eq!(stopped.code, ErrorCode::Unauthenticated);
}

fn fixture() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/mutual-nda-northwind-contoso.txt")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_organizations_documents_are_brought_into_the_synced_one_and_nothing_is_lost() {
    use pactwise_api::{CorrectionInput, DocumentQuery, ImportOptions};
    use pactwise_domain::ItemStatus;
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (desktop(tmp.path(), "a"), desktop(tmp.path(), "b"));

    // Before sync: a document with a correction in the local organization.
    let local = a.local_session().await.unwrap();
    let imported = a.import_documents(&local, vec![fixture()], ImportOptions::default(), &|_| {}).await.unwrap();
    let old = imported.imported[0].document.id;
    let review = a.document_review(&local, old).await.unwrap();
    let item = review.items.iter().find(|i| i.status != ItemStatus::Absent).unwrap().id.clone();
    let correction = CorrectionInput {
        item_id: item.clone(),
        confirm: false,
        status: Some(ItemStatus::Absent),
        quote: None,
        note: Some("Checked before sync".into()),
        acknowledge_warnings: false,
    };
    a.correct_item(&local, old, correction).await.unwrap();

    let ann = a
        .sync_sign_in(SignInInput {
            server: service.endpoint.clone(),
            org: "alpha".into(),
            email: "ann@alpha.example".into(),
            password: PASSWORD.into(),
        })
        .await
        .unwrap();
    assert!(a.list_documents(&ann, DocumentQuery::default()).await.unwrap().is_empty(), "kept apart until asked");

    // Bring them over: a new record of the synced organization, with its correction, queued for sync.
    let report = a.bring_over_documents(&ann, local.org()).await.unwrap();
    assert_eq!((report.brought, report.already_there, report.corrections), (1, 0, 1));
    assert!(report.failed.is_empty());
    let docs = a.list_documents(&ann, DocumentQuery::default()).await.unwrap();
    assert_eq!(docs.len(), 1);
    let new = docs[0].id;
    assert_ne!(new, old, "a new record of the synced organization");
    let brought = a.document_review(&ann, new).await.unwrap();
    let corrected = brought.items.iter().find(|i| i.id == item).unwrap();
    assert_eq!((corrected.status, corrected.note.as_deref()), (ItemStatus::Absent, Some("Checked before sync")));
    // Bringing again copies nothing twice.
    let again = a.bring_over_documents(&ann, local.org()).await.unwrap();
    assert_eq!((again.brought, again.already_there), (0, 1));
    let sent = a.sync_now().await.unwrap();
    assert_eq!((sent.pushed, sent.files_uploaded), (2, 1), "the document and its correction, with the file");

    // Another desktop of the organization receives both.
    let bea = a
        .add_member(
            &ann,
            AddMemberInput { email: "bea@alpha.example".into(), display_name: "Bea".into(), role: Role::Reviewer },
        )
        .await
        .unwrap();
    let sb = b.sync_sign_in_with_code(service.code("bea@alpha.example", &bea.code, "bea-password-12")).await.unwrap();
    b.sync_now().await.unwrap();
    let on_b = b.document_review(&sb, new).await.unwrap();
    assert_eq!(on_b.items.iter().find(|i| i.id == item).unwrap().status, ItemStatus::Absent);

    // Nothing was lost: switch back, the local document and its correction are there as before; each
    // organization's document answers like a missing one in the other.
    let home = a.switch_organization(&ann, local.org()).await.unwrap();
    let local_docs = a.list_documents(&home, DocumentQuery::default()).await.unwrap();
    assert_eq!(local_docs.iter().map(|d| d.id).collect::<Vec<_>>(), [old]);
    let kept = a.document_review(&home, old).await.unwrap();
    assert_eq!(kept.items.iter().find(|i| i.id == item).unwrap().note.as_deref(), Some("Checked before sync"));
    assert_eq!(a.document_review(&home, new).await.unwrap_err().code, ErrorCode::NotFound);
    let synced = a.switch_organization(&home, ann.org()).await.unwrap();
    assert_eq!(a.document_review(&synced, old).await.unwrap_err().code, ErrorCode::NotFound);
    // An organization this person does not work in cannot be a source.
    let stranger = a.bring_over_documents(&synced, pactwise_domain::OrgId::new()).await.unwrap_err();
    assert_eq!(stranger.code, ErrorCode::NotFound);
}
