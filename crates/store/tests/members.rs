//! The members an organization's desktops know: one function records a known member in a transaction
//! (`members::record_member_in`, here through `Store::members`), idempotently, with the name, email and role the
//! service gave; a removed member loses the membership and their sessions there but keeps their user row (their name in the history); each
//! organization sees only its own members.

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, Role, UserId};
use pactwise_store::members::KnownMember;
use pactwise_store::{OrgScope, Store, StoreError};
use std::sync::Arc;

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    Store::open_in_memory(clock).unwrap()
}

fn owner(store: &Store, org_name: &str) -> OrgScope {
    let p = store.platform();
    let org = p.create_organization(org_name).unwrap();
    let user = p.create_user(&format!("{org_name} owner"), None).unwrap();
    p.set_membership(org, user, Role::Owner).unwrap();
    let session = p.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn member(name: &str, role: Role) -> KnownMember {
    KnownMember { user: UserId::new(), display_name: name.into(), email: Some(format!("{name}@x.example")), role }
}

#[test]
fn a_known_member_is_recorded_once_with_the_latest_name_and_role_and_only_in_its_organization() {
    let store = store();
    let (a, b) = (owner(&store, "Alpha"), owner(&store, "Beta"));
    let mut ana = member("ana", Role::Approver);
    for _ in 0..2 {
        store.members().record(&a, std::slice::from_ref(&ana)).unwrap();
    }
    ana.display_name = "Ana Lima".into();
    ana.role = Role::Reviewer;
    ana.email = None;
    store.members().record(&a, std::slice::from_ref(&ana)).unwrap();
    let listed = store.members().list(&a).unwrap();
    assert_eq!(listed.len(), 2, "the owner and Ana, once");
    let found = listed.iter().find(|m| m.user == ana.user).unwrap();
    assert_eq!((found.display_name.as_str(), found.role), ("Ana Lima", Role::Reviewer));
    assert_eq!(found.email.as_deref(), Some("ana@x.example"), "an unknown email keeps the one recorded");
    assert!(store.members().list(&b).unwrap().iter().all(|m| m.user != ana.user), "Beta never sees Alpha's members");

    let blank = KnownMember { display_name: "  ".into(), ..member("x", Role::Viewer) };
    assert!(matches!(store.members().record(&a, &[blank]), Err(StoreError::Invalid(_))));
}

#[test]
fn a_removed_member_keeps_their_name_but_no_membership_and_no_session_there() {
    let store = store();
    let a = owner(&store, "Alpha");
    let bo = member("bo", Role::Buyer);
    store.members().record(&a, std::slice::from_ref(&bo)).unwrap();
    let session = store.platform().start_session(bo.user, a.org()).unwrap();
    assert!(store.sessions().open(session).is_ok());

    store.members().remove(&a, bo.user).unwrap();
    assert!(store.members().list(&a).unwrap().iter().all(|m| m.user != bo.user));
    assert!(matches!(store.sessions().open(session), Err(StoreError::Unauthenticated)));
    assert_eq!(store.platform().user_name(bo.user).unwrap(), "bo", "the name stays for history");
    // Removing again, or someone who never was a member, changes nothing.
    store.members().remove(&a, bo.user).unwrap();
    store.members().remove(&a, UserId::new()).unwrap();
    assert_eq!(store.members().list(&a).unwrap().len(), 1);
}
