//! The store's publish gate is the only way to a published package: it refuses what the pre-check refuses, a
//! package of another organization, a viewer, and a buyer while someone else holds the edit lease.

mod support;

use chrono::Duration;
use pactwise_domain::Role;
use pactwise_prep::*;
use pactwise_store::{Store, StoreError};
use support::*;

#[test]
fn the_gate_refuses_what_the_precheck_refuses_and_publishes_an_approved_package() {
    let clock = support::clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let ana = member(&store, acme, "Ana", Role::Buyer);

    // Weights fixed by hand to 9,000 after approval of everything else: the criteria are invalid, not approved.
    let mut p = approved_package();
    let mut c = criteria();
    c.criteria[1].weight_bp = 3000;
    p.set_content(ArtifactKind::Criteria, Content::Criteria(c), None).unwrap();
    let pre = precheck(&p.artifacts);
    let rules: Vec<PublishRule> = pre.iter().map(|v| v.rule).collect();
    assert!(rules.contains(&PublishRule::WeightsNotHundred) && rules.contains(&PublishRule::NotApproved), "{pre:?}");
    let id = store.prep().create(&ana, &p.title, &p.to_json(), Duration::minutes(30)).unwrap();
    match store.prep().publish(&ana, &id) {
        Err(StoreError::PublishRefused { violations }) => assert_eq!(violations, pre),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(store.prep().get(&ana, &id).unwrap().status, "draft");

    // The buyer fixes the weight by hand, re-validates downstream and approves: the gate publishes.
    let mut c = criteria();
    c.criteria[1].weight_bp = 4000;
    p.set_content(ArtifactKind::Criteria, Content::Criteria(c), None).unwrap();
    p.revalidate().unwrap();
    approve_all_valid(&mut p);
    assert!(precheck(&p.artifacts).is_empty());
    store.prep().save(&ana, &id, 1, &p.to_json()).unwrap();
    let published = store.prep().publish(&ana, &id).unwrap();
    assert_eq!(published.status, "published");
    assert_eq!(published.published_by, Some(ana.user()));
    assert!(matches!(store.prep().save(&ana, &id, 2, &p.to_json()), Err(StoreError::AlreadyPublished)));
    assert!(store.audit().list(&ana).unwrap().iter().any(|e| e.action == "prep.publish"));
}

#[test]
fn another_organization_a_viewer_or_a_second_editor_cannot_publish() {
    let clock = support::clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let ana = member(&store, acme, "Ana", Role::Buyer);
    let bo = member(&store, acme, "Bo", Role::Admin);
    let viewer = member(&store, acme, "Vi", Role::Viewer);
    let reviewer = member(&store, acme, "Rey", Role::Reviewer);
    let globex = org(&store, "Globex");
    let eve = member(&store, globex, "Eve", Role::Owner);
    let p = approved_package();
    let id = store.prep().create(&ana, &p.title, &p.to_json(), Duration::minutes(30)).unwrap();

    assert!(matches!(store.prep().publish(&eve, &id), Err(StoreError::NotFound)));
    assert!(matches!(store.prep().publish(&viewer, &id), Err(StoreError::Forbidden { role: Role::Viewer })));
    assert!(matches!(store.prep().publish(&reviewer, &id), Err(StoreError::Forbidden { role: Role::Reviewer })));
    assert!(matches!(store.prep().publish(&bo, &id), Err(StoreError::Locked { .. })), "Ana holds the lease");
    assert_eq!(store.prep().get(&ana, &id).unwrap().status, "draft");
    clock.advance(Duration::minutes(31));
    assert_eq!(store.prep().publish(&bo, &id).unwrap().status, "published");
}
