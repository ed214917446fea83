//! Members across desktops: an owner or admin adds a member (who signs in once with a one-time code, choosing a
//! password), changes a role or removes a member; each change lands in the organization's log as a `member` change
//! every desktop pulls. The guards: the role table (an admin makes no owners, a viewer sees no codes), the last
//! owner stays, a code is single-use, expires, is stored hashed and never logged, a removed member's tokens stop
//! at their next request, and another organization's member id answers like a missing one.

use crate::common::*;
use pactwise_domain::{FixedClock, Role};
use pactwise_sync::members::{AddMemberRequest, CodeSignInRequest, MemberFields};
use pactwise_sync::wire::{ChangeBody, PushRequest, SignInRequest};
use pactwise_sync::{Change, DeviceToken, Hlc, HttpApi, SyncError, SyncedModel};
use pactwise_sync_server::AppState;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use uuid::Uuid;

fn api(server: &TestServer, token: &str) -> HttpApi {
    HttpApi::new(&server.endpoint, Some(DeviceToken::new(token))).unwrap()
}

fn add(email: &str, name: &str, role: Role) -> AddMemberRequest {
    AddMemberRequest { email: email.into(), display_name: name.into(), role }
}

fn redeem(slug: &str, email: &str, code: &str, password: &str) -> CodeSignInRequest {
    CodeSignInRequest {
        org: slug.into(),
        email: email.into(),
        code: code.into(),
        password: password.into(),
        device_name: "new laptop".into(),
    }
}

fn refused_with(e: SyncError, code: &str) -> String {
    match e {
        SyncError::Rejected { code: c, message } if c == code => message,
        other => panic!("expected {code}, got {other:?}"),
    }
}

/// Everything the service logs, from every thread (one global subscriber for this test process).
fn captured_logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Writer(sink.clone()))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        logs
    })
}

struct Writer(Arc<Mutex<Vec<u8>>>);

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn server(backend: Backend, roles: &[Role]) -> (Fresh, Arc<FixedClock>, Org, TestServer) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let org = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", roles);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    (fresh, clock, org, server)
}

async fn an_admin_adds_a_member_who_signs_in_once_with_the_code_and_every_desktop_pulls_the_member(backend: Backend) {
    let logs = captured_logs();
    let (_fresh, _clock, a, server) = server(backend, &[Role::Owner, Role::Admin]).await;
    let admin = api(&server, &a.tokens[1]);
    let head = admin.pull(0, 100).await.unwrap().next_cursor;
    let added = admin.add_member(&add(" Ana@Example.com ", "Ana Lima", Role::Approver)).await.unwrap();
    assert_eq!(added.member.email, "ana@example.com");
    assert_eq!(added.member.display_name, "Ana Lima");
    assert_eq!(added.member.role, Role::Approver);
    assert_eq!(added.code.len(), 19, "ABCD-EFGH-JKLM-NPQR");

    // Every member reads the list; the log carries the member's state for every desktop.
    let list = admin.members().await.unwrap().members;
    assert_eq!(list.len(), 3);
    assert!(list.contains(&added.member));
    let page = admin.pull(head, 100).await.unwrap();
    assert_eq!(page.changes.len(), 1);
    let logged = &page.changes[0];
    assert_eq!(logged.change.model, SyncedModel::Member);
    assert_eq!(logged.change.record_id, added.member.user_id.to_string());
    let ChangeBody::Fields { fields } = &logged.change.body else { panic!("member changes are fields") };
    assert_eq!(
        MemberFields::from_fields(fields),
        Some(MemberFields {
            email: "ana@example.com".into(),
            display_name: "Ana Lima".into(),
            role: Role::Approver,
            removed: false
        })
    );

    // The admin sees who has an open code (never the code); the member signs in with it once, choosing a password.
    let codes = admin.open_codes().await.unwrap().codes;
    assert_eq!(codes.len(), 1);
    assert_eq!(codes[0].user_id, added.member.user_id);
    let anonymous = HttpApi::new(&server.endpoint, None).unwrap();
    let short = anonymous.sign_in_with_code(&redeem("alpha", "ana@example.com", &added.code, "short")).await;
    assert!(refused_with(short.unwrap_err(), "invalid_input").contains("10 characters"));
    let typed = added.code.to_lowercase().replace('-', " ");
    let signed =
        anonymous.sign_in_with_code(&redeem("alpha", "ana@example.com", &typed, "ana-chose-this-one")).await.unwrap();
    assert_eq!(signed.user_id, added.member.user_id);
    assert_eq!(signed.role, Role::Approver);
    let ana = api(&server, &signed.token);
    assert_eq!(ana.session().await.unwrap().user_id, added.member.user_id);
    assert!(admin.open_codes().await.unwrap().codes.is_empty(), "a used code is not open any more");

    // Single use: the same code again is refused; the chosen password now signs in.
    let again =
        anonymous.sign_in_with_code(&redeem("alpha", "ana@example.com", &added.code, "another-password-2")).await;
    assert!(matches!(again, Err(SyncError::Unauthenticated)), "{again:?}");
    let by_password = anonymous
        .sign_in(&SignInRequest {
            org: "alpha".into(),
            email: "ana@example.com".into(),
            password: "ana-chose-this-one".into(),
            device_name: "desk".into(),
        })
        .await
        .unwrap();
    assert_eq!(by_password.user_id, added.member.user_id);

    // The code appears in no log line.
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).to_string();
    assert!(text.contains("member added"), "the capture works");
    assert!(!text.contains(&added.code) && !text.contains(&added.code.replace('-', "")));
}

/// Every stored sign-in code (the column the service keeps), read straight from the database.
fn stored_codes(backend: Backend, at: &str) -> Vec<String> {
    let sql = "SELECT code_hash FROM member_codes";
    blocking(|| match backend {
        Backend::Sqlite => {
            let conn = rusqlite::Connection::open(at).unwrap();
            let mut stmt = conn.prepare(sql).unwrap();
            stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
        }
        Backend::Postgres => {
            let mut client = ::postgres::Client::connect(at, ::postgres::NoTls).unwrap();
            client.query(sql, &[]).unwrap().iter().map(|r| r.get(0)).collect()
        }
    })
}

async fn a_code_expires_and_is_stored_only_as_a_hash(backend: Backend) {
    let (fresh, at) = fresh_at(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Owner]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let owner = api(&server, &a.tokens[0]);
    let added = owner.add_member(&add("bo@example.com", "Bo", Role::Reviewer)).await.unwrap();
    assert!(added.code_expires_at > start_time());
    // The service keeps a SHA-256 of the code, never the code; its open codes show only who and until when.
    let stored = stored_codes(backend, &at);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].len(), 64);
    assert!(!stored[0].to_uppercase().contains(&added.code.replace('-', "")));
    let listed = serde_json::to_string(&owner.open_codes().await.unwrap()).unwrap();
    assert!(!listed.contains(&added.code));

    clock.advance(chrono::Duration::days(7) + chrono::Duration::seconds(1));
    let anonymous = HttpApi::new(&server.endpoint, None).unwrap();
    let late = anonymous.sign_in_with_code(&redeem("alpha", "bo@example.com", &added.code, "bo-password-123")).await;
    assert!(matches!(late, Err(SyncError::Unauthenticated)), "{late:?}");
    // A new code works again, and the expired one stays refused.
    let renewed = owner.new_member_code(added.member.user_id).await.unwrap();
    let old = anonymous.sign_in_with_code(&redeem("alpha", "bo@example.com", &added.code, "bo-password-123")).await;
    assert!(old.is_err());
    anonymous.sign_in_with_code(&redeem("alpha", "bo@example.com", &renewed.code, "bo-password-123")).await.unwrap();
}

async fn the_last_owner_is_never_removed_or_demoted_and_an_admin_makes_no_owners(backend: Backend) {
    let (_fresh, _clock, a, server) = server(backend, &[Role::Owner, Role::Admin]).await;
    let (owner, admin) = (api(&server, &a.tokens[0]), api(&server, &a.tokens[1]));
    let me = owner.session().await.unwrap().user_id;
    let head = owner.pull(0, 100).await.unwrap().next_cursor;
    let demote = owner.change_member_role(me, Role::Admin).await.unwrap_err();
    assert!(refused_with(demote, "forbidden").contains("last owner"));
    let remove = owner.remove_member(me).await.unwrap_err();
    assert!(refused_with(remove, "forbidden").contains("last owner"));

    let make_owner = admin.add_member(&add("cy@example.com", "Cy", Role::Owner)).await.unwrap_err();
    assert!(refused_with(make_owner, "forbidden").contains("owner"));
    let admin_id = admin.session().await.unwrap().user_id;
    let promote_self = admin.change_member_role(admin_id, Role::Owner).await.unwrap_err();
    refused_with(promote_self, "forbidden");
    let touch_owner = admin.remove_member(me).await.unwrap_err();
    refused_with(touch_owner, "forbidden");
    assert_eq!(owner.pull(head, 100).await.unwrap().changes.len(), 0, "nothing refused reached the log");

    // With a second owner, the first may step down.
    owner.change_member_role(admin_id, Role::Owner).await.unwrap();
    let stepped_down = owner.change_member_role(me, Role::Admin).await.unwrap();
    assert_eq!(stepped_down.role, Role::Admin);
    assert_eq!(owner.pull(head, 100).await.unwrap().changes.len(), 2);
}

async fn a_viewer_sees_members_but_no_codes_and_changes_none(backend: Backend) {
    let (_fresh, _clock, a, server) = server(backend, &[Role::Owner, Role::Viewer, Role::Reviewer]).await;
    let (viewer, reviewer) = (api(&server, &a.tokens[1]), api(&server, &a.tokens[2]));
    assert_eq!(viewer.members().await.unwrap().members.len(), 3);
    let codes = viewer.open_codes().await.unwrap_err();
    assert!(refused_with(codes, "forbidden").contains("sign-in codes"));
    let added = viewer.add_member(&add("dee@example.com", "Dee", Role::Viewer)).await.unwrap_err();
    refused_with(added, "forbidden");
    let owner_id = api(&server, &a.tokens[0]).session().await.unwrap().user_id;
    refused_with(reviewer.change_member_role(owner_id, Role::Viewer).await.unwrap_err(), "forbidden");
    refused_with(reviewer.new_member_code(owner_id).await.unwrap_err(), "forbidden");
    // A pushed `member` change is refused for everyone: members change only through the members routes.
    let forged = Change {
        id: Uuid::now_v7(),
        model: SyncedModel::Member,
        record_id: owner_id.to_string(),
        hlc: Hlc { wall_ms: 1, counter: 0, node: Uuid::now_v7() },
        body: ChangeBody::Fields {
            fields: MemberFields {
                email: "x@alpha.example".into(),
                display_name: "X".into(),
                role: Role::Viewer,
                removed: true,
            }
            .to_fields(),
        },
    };
    let owner = api(&server, &a.tokens[0]);
    let pushed = owner.push(&PushRequest { idempotency_key: Uuid::now_v7(), changes: vec![forged] }).await.unwrap();
    assert!(pushed.results[0].refused.is_some());
    assert_eq!(owner.pull(0, 100).await.unwrap().changes.len(), 0);
}

async fn another_organizations_member_answers_like_a_missing_one(backend: Backend) {
    let (fresh, clock, a, server) = server(backend, &[Role::Owner]).await;
    let b = org(fresh.storage.as_ref(), clock.as_ref(), "beta", &[Role::Owner, Role::Reviewer]);
    let beta_reviewer = api(&server, &b.tokens[1]).session().await.unwrap().user_id;
    let alpha = api(&server, &a.tokens[0]);
    let foreign = alpha.change_member_role(beta_reviewer, Role::Viewer).await.unwrap_err();
    let missing = alpha.change_member_role(pactwise_domain::UserId::new(), Role::Viewer).await.unwrap_err();
    let (foreign, missing) = (refused_with(foreign, "not_found"), refused_with(missing, "not_found"));
    assert_eq!(foreign, missing);
    assert_eq!(
        refused_with(alpha.remove_member(beta_reviewer).await.unwrap_err(), "not_found"),
        refused_with(alpha.remove_member(pactwise_domain::UserId::new()).await.unwrap_err(), "not_found")
    );
    refused_with(alpha.new_member_code(beta_reviewer).await.unwrap_err(), "not_found");
    // Beta's reviewer is untouched and still signed in; alpha's list never shows beta's members.
    let beta = api(&server, &b.tokens[1]);
    assert_eq!(beta.session().await.unwrap().role, Role::Reviewer);
    assert!(alpha.members().await.unwrap().members.iter().all(|m| m.user_id != beta_reviewer));
}

async fn a_removed_members_tokens_stop_at_their_next_request_and_the_removal_reaches_every_desktop(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Owner]);
    let state = AppState::new(fresh.storage.clone(), clock.clone(), generous());
    let server = TestServer::start_state(state).await;
    let owner = api(&server, &a.tokens[0]);
    let added = owner.add_member(&add("eve@example.com", "Eve", Role::Buyer)).await.unwrap();
    let anonymous = HttpApi::new(&server.endpoint, None).unwrap();
    let eve = anonymous.sign_in_with_code(&redeem("alpha", "eve@example.com", &added.code, "eve-password-12")).await;
    let eve = api(&server, &eve.unwrap().token);
    let head = eve.pull(0, 100).await.unwrap().next_cursor;

    // A desktop waiting on the push channel learns of the removal at once.
    let waiting = {
        let owner = owner.clone();
        tokio::spawn(async move { owner.wait_for_changes(head, std::time::Duration::from_secs(20)).await })
    };
    owner.remove_member(added.member.user_id).await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    assert!(matches!(eve.session().await, Err(SyncError::Unauthenticated)));
    assert!(matches!(eve.pull(0, 10).await, Err(SyncError::Unauthenticated)));
    let page = owner.pull(head, 100).await.unwrap();
    let ChangeBody::Fields { fields } = &page.changes[0].change.body else { panic!() };
    assert!(MemberFields::from_fields(fields).unwrap().removed);
    assert!(owner.members().await.unwrap().members.iter().all(|m| m.user_id != added.member.user_id));
    // The password no longer signs in either; adding the email again brings the member back under the same id.
    let by_password = anonymous
        .sign_in(&SignInRequest {
            org: "alpha".into(),
            email: "eve@example.com".into(),
            password: "eve-password-12".into(),
            device_name: "desk".into(),
        })
        .await;
    assert!(matches!(by_password, Err(SyncError::Unauthenticated)));
    let back = owner.add_member(&add("eve@example.com", "Eve Again", Role::Viewer)).await.unwrap();
    assert_eq!(back.member.user_id, added.member.user_id);
    let twice = owner.add_member(&add("eve@example.com", "Eve", Role::Viewer)).await.unwrap_err();
    assert!(refused_with(twice, "invalid_input").contains("already"));
}

crate::both_backends!(
    an_admin_adds_a_member_who_signs_in_once_with_the_code_and_every_desktop_pulls_the_member,
    a_code_expires_and_is_stored_only_as_a_hash,
    the_last_owner_is_never_removed_or_demoted_and_an_admin_makes_no_owners,
    a_viewer_sees_members_but_no_codes_and_changes_none,
    another_organizations_member_answers_like_a_missing_one,
    a_removed_members_tokens_stop_at_their_next_request_and_the_removal_reaches_every_desktop,
);
