//! Approvals decided offline are requests: the server checks eligibility and stamps exactly one decision per step
//! with the approver's identity from the token; every other request for the step is refused, and every desktop ends
//! up showing the same decision.

use crate::common::*;
use crate::convergence::device;
use pactwise_domain::{Clock, FixedClock, Role};
use pactwise_sync::approval::RequestState;
use pactwise_sync::wire::{ApprovalDecision, RefusalReason};
use pactwise_sync::{ApprovalView, DeviceToken, HttpApi};
use std::sync::Arc;

async fn two_conflicting_offline_approvals_end_with_exactly_one_decision_stamped_by_the_server(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Approver, Role::Approver, Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let (r1, c1) = device(&server, &a.tokens[0], Arc::new(FixedClock::new(start_time())));
    let (r2, c2) = device(&server, &a.tokens[1], Arc::new(FixedClock::new(start_time())));
    let (r3, c3) = device(&server, &a.tokens[2], Arc::new(FixedClock::new(start_time())));
    let me1 = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap().session().await.unwrap();
    let me2 = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[1]))).unwrap().session().await.unwrap();

    // On a plane: approver 1 approves, approver 2 rejects the same step; a reviewer tries to approve another.
    let req1 = r1.request_approval("step-7", ApprovalDecision::Approve);
    r2.request_approval("step-7", ApprovalDecision::Reject);
    r3.request_approval("step-8", ApprovalDecision::Approve);
    assert_eq!(r1.approval("step-7"), Some(ApprovalView::Pending { decision: ApprovalDecision::Approve }));

    // Both land at once.
    let (x, y) = tokio::join!(c1.sync_now(Some(1)), c2.sync_now(Some(1)));
    x.unwrap();
    y.unwrap();
    c3.sync_now(Some(1)).await.unwrap();
    c1.sync_now(Some(1)).await.unwrap();
    c2.sync_now(Some(1)).await.unwrap();

    let c = counts(fresh.storage.as_ref());
    assert_eq!(c.approvals, 1, "exactly one decision for step-7, none for step-8");
    let decided = r1.approval("step-7").unwrap();
    assert_eq!(r2.approval("step-7").unwrap(), decided);
    assert_eq!(r3.approval("step-7").unwrap(), decided);
    let ApprovalView::Decided { decision, approver } = decided else { panic!("{decided:?}") };
    // The stamp is the server's: the approver is whoever's request won, as known from their token.
    let (winner, loser) = if approver == me1.user_id { (&r1, &r2) } else { (&r2, &r1) };
    assert!(approver == me1.user_id || approver == me2.user_id);
    assert_eq!(decision, if approver == me1.user_id { ApprovalDecision::Approve } else { ApprovalDecision::Reject });
    let winner_req = winner.approval_step("step-7").unwrap();
    assert!(winner_req.requests.values().all(|s| *s == RequestState::Stamped));
    let loser_req = loser.approval_step("step-7").unwrap();
    assert!(
        loser_req.requests.values().all(|s| *s == RequestState::Refused { reason: RefusalReason::AlreadyDecided }),
        "{loser_req:?}"
    );
    let _ = req1;

    // The reviewer may not approve: refused, and the desktop shows the refusal.
    assert_eq!(r3.approval("step-8"), Some(ApprovalView::Refused { reason: RefusalReason::NotEligible }));
    assert_eq!(r1.approval("step-8"), None, "a refused request decides nothing");
}

async fn an_approval_pushed_again_after_a_crash_keeps_its_first_outcome(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Approver, Role::Approver]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let api1 = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let api2 = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[1]))).unwrap();
    let (r1, _) = device(&server, &a.tokens[0], Arc::new(FixedClock::new(clock.now())));
    let (r2, _) = device(&server, &a.tokens[1], Arc::new(FixedClock::new(clock.now())));
    let first = r1.request_approval("s", ApprovalDecision::Approve);
    let second = r2.request_approval("s", ApprovalDecision::Reject);
    let push1 =
        pactwise_sync::wire::PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes: vec![first.clone()] };
    api1.push(&push1).await.unwrap();
    api2.push(&pactwise_sync::wire::PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes: vec![second] })
        .await
        .unwrap();
    // The same change again under a new key (a client that lost its receipt): same place, no new decision.
    let again = api1
        .push(&pactwise_sync::wire::PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes: vec![first] })
        .await
        .unwrap();
    assert_eq!(again.results[0].seq, 1);
    let page = api1.pull(0, 100).await.unwrap();
    assert_eq!(page.changes.len(), 2);
    assert!(matches!(page.changes[0].outcome, Some(pactwise_sync::ApprovalOutcome::Stamped { .. })));
    assert!(matches!(
        page.changes[1].outcome,
        Some(pactwise_sync::ApprovalOutcome::Refused { reason: RefusalReason::AlreadyDecided })
    ));
    assert_eq!(counts(fresh.storage.as_ref()).approvals, 1);
}

crate::both_backends!(
    two_conflicting_offline_approvals_end_with_exactly_one_decision_stamped_by_the_server,
    an_approval_pushed_again_after_a_crash_keeps_its_first_outcome,
);
