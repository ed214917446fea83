//! Prep Studio's store rules: the edit lease (holder, expiry, takeover), saves that need the lease and the version
//! read, tenant isolation of packages, and the publish gate's authority (role, organization, lease).

use chrono::{Duration, TimeZone, Utc};
use pactwise_domain::{FixedClock, OrgId, Role};
use pactwise_store::prep::PublishRule;
use pactwise_store::{OrgScope, Store, StoreError};
use serde_json::json;
use std::sync::Arc;

fn store() -> (Store, Arc<FixedClock>) {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    (Store::open_in_memory(clock.clone()).unwrap(), clock)
}

fn member_of(store: &Store, org: OrgId, name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let user = p.create_user(name, None).unwrap();
    p.set_membership(org, user, role).unwrap();
    store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
}

fn org(store: &Store, name: &str) -> OrgId {
    store.platform().create_organization(name).unwrap()
}

#[test]
fn the_lease_shows_its_holder_refuses_others_until_it_expires_and_can_then_be_taken_over() {
    let (store, clock) = store();
    let acme = org(&store, "Acme");
    let ana = member_of(&store, acme, "Ana", Role::Buyer);
    let bo = member_of(&store, acme, "Bo", Role::Buyer);
    let id = store.prep().create(&ana, "Fleet telematics", &json!({"artifacts": {}}), Duration::minutes(15)).unwrap();

    let lock = store.prep().lock(&bo, &id).unwrap().unwrap();
    assert_eq!(lock.holder_name, "Ana");
    assert!(!lock.expired);
    match store.prep().acquire_lock(&bo, &id, Duration::minutes(15), false) {
        Err(StoreError::Locked { holder, until }) => {
            assert_eq!(holder, "Ana");
            assert_eq!(until, clock.now_for_test() + Duration::minutes(15));
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    assert!(matches!(store.prep().save(&bo, &id, 1, &json!({"x": 1})), Err(StoreError::Locked { .. })));

    // Ana renews her own lease; Bo still waits.
    clock.advance(Duration::minutes(10));
    store.prep().acquire_lock(&ana, &id, Duration::minutes(15), false).unwrap();
    clock.advance(Duration::minutes(10));
    assert!(matches!(
        store.prep().acquire_lock(&bo, &id, Duration::minutes(15), false),
        Err(StoreError::Locked { .. })
    ));
    // Asking to take over a live lease changes nothing: it is never taken over before it expires.
    assert!(matches!(store.prep().acquire_lock(&bo, &id, Duration::minutes(15), true), Err(StoreError::Locked { .. })));

    // After expiry Bo must say he takes over; then Ana's save is refused and the takeover is audited.
    clock.advance(Duration::minutes(6));
    assert!(store.prep().lock(&bo, &id).unwrap().unwrap().expired);
    match store.prep().acquire_lock(&bo, &id, Duration::minutes(15), false) {
        Err(e @ StoreError::LeaseExpired { .. }) => assert!(e.to_string().contains("Ana's edit lease"), "{e}"),
        other => panic!("expected LeaseExpired, got {other:?}"),
    }
    assert!(!store.audit().list(&bo).unwrap().iter().any(|e| e.action == "prep.lock_taken_over"));
    let taken = store.prep().acquire_lock(&bo, &id, Duration::minutes(15), true).unwrap();
    assert_eq!(taken.holder_name, "Bo");
    assert!(matches!(store.prep().save(&ana, &id, 1, &json!({"x": 1})), Err(StoreError::Locked { .. })));
    assert_eq!(store.prep().save(&bo, &id, 1, &json!({"x": 1})).unwrap(), 2);
    assert!(store.audit().list(&bo).unwrap().iter().any(|e| e.action == "prep.lock_taken_over"));

    // A save naming an old version is a conflict.
    assert!(matches!(store.prep().save(&bo, &id, 1, &json!({"x": 2})), Err(StoreError::EditConflict { .. })));
}

trait NowForTest {
    fn now_for_test(&self) -> chrono::DateTime<Utc>;
}
impl NowForTest for FixedClock {
    fn now_for_test(&self) -> chrono::DateTime<Utc> {
        pactwise_domain::Clock::now(self)
    }
}

#[test]
fn another_organization_sees_no_package_and_viewers_cannot_prepare() {
    let (store, _) = store();
    let acme = org(&store, "Acme");
    let globex = org(&store, "Globex");
    let ana = member_of(&store, acme, "Ana", Role::Buyer);
    let eve = member_of(&store, globex, "Eve", Role::Owner);
    let viewer = member_of(&store, acme, "Vi", Role::Viewer);
    let id = store.prep().create(&ana, "Fleet", &json!({"artifacts": {}}), Duration::minutes(15)).unwrap();
    assert!(matches!(store.prep().get(&eve, &id), Err(StoreError::NotFound)));
    assert!(matches!(store.prep().acquire_lock(&eve, &id, Duration::minutes(5), false), Err(StoreError::NotFound)));
    assert!(matches!(store.prep().publish(&eve, &id), Err(StoreError::NotFound)));
    assert!(store.prep().list(&eve).unwrap().is_empty());
    assert!(matches!(
        store.prep().create(&viewer, "x", &json!({}), Duration::minutes(5)),
        Err(StoreError::Forbidden { .. })
    ));
    assert!(matches!(store.prep().publish(&viewer, &id), Err(StoreError::Forbidden { .. })));
    assert_eq!(store.prep().get(&viewer, &id).unwrap().title, "Fleet");
}

#[test]
fn an_empty_package_is_refused_by_the_gate_with_every_artifact_named() {
    let (store, _) = store();
    let acme = org(&store, "Acme");
    let ana = member_of(&store, acme, "Ana", Role::Buyer);
    let id = store.prep().create(&ana, "Fleet", &json!({"artifacts": {}}), Duration::minutes(15)).unwrap();
    match store.prep().publish(&ana, &id) {
        Err(StoreError::PublishRefused { violations }) => {
            let malformed: Vec<&str> =
                violations.iter().filter(|v| v.rule == PublishRule::Malformed).map(|v| v.artifact.as_str()).collect();
            assert_eq!(malformed.len(), 6, "{violations:?}");
            assert!(violations.iter().any(|v| v.rule == PublishRule::WeightsNotHundred));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(store.prep().get(&ana, &id).unwrap().status, "draft");
}

#[test]
fn a_stored_package_that_does_not_read_as_the_package_format_is_refused_as_malformed() {
    let (store, _) = store();
    let acme = org(&store, "Acme");
    let ana = member_of(&store, acme, "Ana", Role::Buyer);
    // A pricing line with a field the format does not have and without its open-amount flag: the gate does not
    // guess what such a line means.
    let line = json!({"code": "P-1", "description": "Visits", "unit": "visit", "quantity": 4, "basis": null,
                      "discount": "50 % if asked"});
    let package = json!({"artifacts": {"pricing": {"state": {"status": "valid"},
                                                   "content": {"currency": "EUR", "lines": [line]}}}});
    let id = store.prep().create(&ana, "Cleaning", &package, Duration::minutes(15)).unwrap();
    match store.prep().publish(&ana, &id) {
        Err(StoreError::PublishRefused { violations }) => {
            assert_eq!(violations.len(), 1, "{violations:?}");
            assert_eq!((violations[0].rule, violations[0].artifact.as_str()), (PublishRule::Malformed, "pricing"));
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    let no_artifacts = store.prep().create(&ana, "Empty", &json!({"title": "x"}), Duration::minutes(15)).unwrap();
    match store.prep().publish(&ana, &no_artifacts) {
        Err(StoreError::PublishRefused { violations }) => assert_eq!(violations[0].artifact, "package"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(store.prep().get(&ana, &id).unwrap().status, "draft");
    assert!(!store.audit().list(&ana).unwrap().iter().any(|e| e.action == "prep.publish"));
}
