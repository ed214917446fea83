//! RFP packages' edit leases on the service, on both backends: one person of the organization holds a package's
//! lease at a time, by the service's clock; a live lease is refused to everyone else with the holder's name and
//! expiry (take-over asked or not); an expired one is taken over only when asked, audited on the service and logged
//! as a `prep_lease` event every desktop pulls; another organization sees nothing of it. Packages themselves are
//! pushed by preparers only; a desktop never pushes a lease event.

use crate::common::*;
use chrono::Duration;
use pactwise_domain::Role;
use pactwise_sync::lease::{LeaseEvent, LeaseEventKind, LeaseGrantKind, LeaseOutcome};
use pactwise_sync::wire::PushRequest;
use pactwise_sync::{Change, ChangeBody, DeviceToken, Hlc, HttpApi, SyncError, SyncedModel};
use serde_json::json;
use uuid::Uuid;

fn lease_events(page: &pactwise_sync::PullResponse, package: Uuid) -> Vec<LeaseEvent> {
    page.changes
        .iter()
        .filter(|c| c.change.model == SyncedModel::PrepLease && c.change.record_id == package.to_string())
        .map(|c| match &c.change.body {
            ChangeBody::Event { event } => LeaseEvent::from_event(event).unwrap(),
            other => panic!("a lease change is an event, got {other:?}"),
        })
        .collect()
}

async fn one_person_holds_a_package_lease_until_the_service_clock_expires_it_and_a_take_over_is_audited(
    backend: Backend,
) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer, Role::Admin, Role::Viewer]);
    let c = org(fresh.storage.as_ref(), clock.as_ref(), "charlie", &[Role::Owner]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let device = |token: &str| HttpApi::new(&server.endpoint, Some(DeviceToken::new(token))).unwrap();
    let (ann, bob, viewer, other) =
        (device(&a.tokens[0]), device(&a.tokens[1]), device(&a.tokens[2]), device(&c.tokens[0]));
    let package = Uuid::now_v7();
    let t0 = start_time();

    // Ann takes it; nobody held it.
    let LeaseOutcome::Granted(taken) = ann.take_lease(package, false).await.unwrap() else { panic!("refused") };
    assert_eq!(taken.grant, LeaseGrantKind::Taken);
    assert_eq!(taken.lease.holder_name, "user0@alpha.example");
    assert_eq!(taken.lease.expires_at, t0 + Duration::minutes(30));
    let ann_id = taken.lease.holder;

    // Bob is refused while it is live, whether he asks to take it over or not: her name and the expiry, in words.
    clock.advance(Duration::minutes(10));
    for take_over in [false, true] {
        match bob.take_lease(package, take_over).await.unwrap() {
            LeaseOutcome::Refused { message, lease } => {
                assert!(
                    message.contains("user0@alpha.example is editing this package until 2026-03-01 09:30 UTC"),
                    "{message}"
                );
                assert_eq!((lease.holder, lease.expired), (ann_id, false));
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    // Ann renews: the expiry moves on from the service's clock, the start stays, nothing is logged.
    let LeaseOutcome::Granted(renewed) = ann.take_lease(package, false).await.unwrap() else { panic!("refused") };
    assert_eq!(renewed.grant, LeaseGrantKind::Renewed);
    assert_eq!((renewed.lease.acquired_at, renewed.lease.expires_at), (t0, t0 + Duration::minutes(40)));

    // Past the expiry by the service's clock: a plain take is refused (it must be taken over), a take-over is granted.
    clock.advance(Duration::minutes(30));
    let status = bob.lease(package).await.unwrap().lease.unwrap();
    assert!(status.expired, "expired by the service's clock");
    match bob.take_lease(package, false).await.unwrap() {
        LeaseOutcome::Refused { message, .. } => {
            assert!(
                message.contains("edit lease on this package expired at 2026-03-01 09:40 UTC; take it over"),
                "{message}"
            )
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    let LeaseOutcome::Granted(over) = bob.take_lease(package, true).await.unwrap() else { panic!("refused") };
    assert_eq!(over.grant, LeaseGrantKind::TakenOver);
    let bob_id = over.lease.holder;
    assert_eq!(over.lease.expires_at, t0 + Duration::minutes(70));
    // Ann's lease is gone: she is refused now, and Bob's GET names him.
    assert!(matches!(ann.take_lease(package, false).await.unwrap(), LeaseOutcome::Refused { .. }));
    assert_eq!(ann.lease(package).await.unwrap().lease.unwrap().holder, bob_id);

    // A viewer may not take one; a bad id is bad input.
    let e = viewer.take_lease(package, false).await.unwrap_err();
    assert!(matches!(e, SyncError::Rejected { ref code, .. } if code == "forbidden"), "{e:?}");

    // Audited on the service: taken, then taken over naming Ann and when her lease expired.
    let audit = blocking(|| fresh.storage.lease_audit(ann_org(&fresh, "alpha"), package).unwrap());
    let actions: Vec<_> = audit.iter().map(|a| (a.action.as_str(), a.actor)).collect();
    assert_eq!(actions, vec![("taken", ann_id), ("taken_over", bob_id)]);
    assert_eq!(audit[1].previous_holder, Some(ann_id));
    assert_eq!(audit[1].previous_expires_at, Some(t0 + Duration::minutes(40)));

    // In the organization's log for every desktop: taken by Ann, taken over by Bob from Ann (renewals log nothing).
    let page = ann.pull(0, 100).await.unwrap();
    let events = lease_events(&page, package);
    assert_eq!(
        events.iter().map(|e| e.event).collect::<Vec<_>>(),
        vec![LeaseEventKind::Taken, LeaseEventKind::TakenOver]
    );
    assert_eq!(events[1].previous_holder, Some(ann_id));
    assert_eq!(events[1].previous_expires_at, Some(t0 + Duration::minutes(40)));
    let authors: Vec<_> =
        page.changes.iter().filter(|c| c.change.model == SyncedModel::PrepLease).map(|c| c.author).collect();
    assert_eq!(authors, vec![ann_id, bob_id]);

    // Another organization sees no lease on this package, and taking its id touches nothing of alpha's.
    assert!(other.lease(package).await.unwrap().lease.is_none());
    assert!(matches!(other.take_lease(package, false).await.unwrap(), LeaseOutcome::Granted(_)));
    assert_eq!(bob.lease(package).await.unwrap().lease.unwrap().holder, bob_id);
    assert!(other.pull(0, 100).await.unwrap().changes.iter().all(|c| c.author != ann_id && c.author != bob_id));

    // Release: only the holder's counts; it is logged and the lease is free.
    ann.release_lease(package).await.unwrap();
    assert_eq!(bob.lease(package).await.unwrap().lease.unwrap().holder, bob_id);
    bob.release_lease(package).await.unwrap();
    assert!(ann.lease(package).await.unwrap().lease.is_none());
    let events = lease_events(&ann.pull(0, 100).await.unwrap(), package);
    assert_eq!(events.last().unwrap().event, LeaseEventKind::Released);
    let LeaseOutcome::Granted(again) = ann.take_lease(package, false).await.unwrap() else { panic!("refused") };
    assert_eq!(again.grant, LeaseGrantKind::Taken);
    // Another organization's own lease stayed its own.
    assert!(other.lease(package).await.unwrap().lease.is_some());
}

fn ann_org(fresh: &Fresh, slug: &str) -> pactwise_domain::OrgId {
    fresh.storage.org_by_slug(slug).unwrap().unwrap()
}

async fn a_bad_package_id_is_bad_input_and_a_lease_route_needs_a_token(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let http = reqwest::Client::new();
    let bad = http
        .post(server.url("/api/v1/leases/not-a-uuid"))
        .bearer_auth(&a.tokens[0])
        .json(&json!({"take_over": false}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let anonymous = http.get(server.url(&format!("/api/v1/leases/{}", Uuid::now_v7()))).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let unknown_field = http
        .post(server.url(&format!("/api/v1/leases/{}", Uuid::now_v7())))
        .bearer_auth(&a.tokens[0])
        .json(&json!({"take_over": false, "holder": "someone else"}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown_field.status(), 400, "the holder comes from the token, never the body");
}

async fn packages_are_pushed_by_preparers_only_and_no_desktop_pushes_a_lease_event(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer, Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let device = |token: &str| HttpApi::new(&server.endpoint, Some(DeviceToken::new(token))).unwrap();
    let (buyer, reviewer) = (device(&a.tokens[0]), device(&a.tokens[1]));
    let package = Uuid::now_v7();
    let change = |model, body| Change {
        id: Uuid::now_v7(),
        model,
        record_id: package.to_string(),
        hlc: Hlc { wall_ms: 10, counter: 0, node: Uuid::now_v7() },
        body,
    };
    let fields = ChangeBody::Fields {
        fields: json!({"title": "Fleet telematics"}).as_object().unwrap().clone().into_iter().collect(),
    };
    let push = |c: Change| PushRequest { idempotency_key: Uuid::now_v7(), changes: vec![c] };
    let stored = buyer.push(&push(change(SyncedModel::PrepPackage, fields.clone()))).await.unwrap();
    assert!(stored.results[0].refused.is_none(), "{stored:?}");
    let refused = reviewer.push(&push(change(SyncedModel::PrepPackage, fields))).await.unwrap();
    let why = refused.results[0].refused.as_ref().expect("a reviewer prepares no packages");
    assert!(why.message.contains("cannot prepare RFP packages; ask an owner, admin or buyer"), "{}", why.message);
    let forged = LeaseEvent {
        event: LeaseEventKind::Taken,
        holder: pactwise_domain::UserId::new(),
        holder_name: "Mallory".into(),
        acquired_at: start_time(),
        expires_at: start_time() + Duration::days(365),
        previous_holder: None,
        previous_holder_name: None,
        previous_expires_at: None,
    };
    let refused = buyer
        .push(&push(change(SyncedModel::PrepLease, ChangeBody::Event { event: forged.to_event() })))
        .await
        .unwrap();
    assert!(refused.results[0].refused.is_some(), "only the service writes lease events");
    assert!(lease_events(&buyer.pull(0, 100).await.unwrap(), package).is_empty());
}

crate::both_backends!(
    one_person_holds_a_package_lease_until_the_service_clock_expires_it_and_a_take_over_is_audited,
    a_bad_package_id_is_bad_input_and_a_lease_route_needs_a_token,
    packages_are_pushed_by_preparers_only_and_no_desktop_pushes_a_lease_event,
);
