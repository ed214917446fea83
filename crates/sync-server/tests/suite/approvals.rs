//! Approvals decided offline are requests: the server checks eligibility and stamps exactly one decision per step
//! with the approver's identity from the token; every other request for the step is refused, and every desktop ends
//! up showing the same decision.

use crate::common::*;
use crate::convergence::device;
use pactwise_domain::{Clock, FixedClock, Role};
use pactwise_sync::approval::RequestState;
use pactwise_sync::wire::{ApprovalDecision, RefusalReason};
use pactwise_sync::{ApprovalView, DeviceToken, HttpApi, SharedApproval, SharedStepStatus, SyncedModel};
use std::sync::Arc;

/// The escalation delay the published steps of these tests carry.
const ESCALATE_AFTER_SECS: u64 = 3600;

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

fn published_step(run: uuid::Uuid, four_eyes: bool, status: SharedStepStatus) -> SharedApproval {
    SharedApproval {
        run_id: run,
        graph: "vendor_onboarding".into(),
        node: "approve_vendor".into(),
        title: "Approve the new vendor".into(),
        eligible_roles: vec![Role::Owner, Role::Admin, Role::Approver],
        four_eyes,
        choices: vec![],
        evidence: serde_json::json!({"vendor": "Initech"}),
        status,
        requested_by_name: None,
        due_at: None,
        escalated_at: None,
        created_at: start_time(),
        escalate_after_secs: Some(ESCALATE_AFTER_SECS),
    }
}

fn outcome_of(page: &pactwise_sync::PullResponse, change: uuid::Uuid) -> Option<pactwise_sync::ApprovalOutcome> {
    page.changes.iter().find(|c| c.change.id == change).and_then(|c| c.outcome)
}

/// A step published by its run's desktop pins who asked, its run, its roles and four-eyes: the requester may not
/// approve their own four-eyes step, nobody approves two steps of one run, another user may not republish or
/// close the step, a closed step takes no decision, and a request naming wider roles changes nothing.
async fn a_published_step_pins_its_requester_run_and_four_eyes_against_forged_requests(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let roles = [Role::Admin, Role::Admin, Role::Approver, Role::Reviewer];
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &roles);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let apis: Vec<HttpApi> =
        a.tokens.iter().map(|t| HttpApi::new(&server.endpoint, Some(DeviceToken::new(t))).unwrap()).collect();
    let replicas: Vec<_> =
        a.tokens.iter().map(|t| device(&server, t, Arc::new(FixedClock::new(clock.now()))).0).collect();
    let push = |i: usize, changes: Vec<pactwise_sync::Change>| {
        let api = &apis[i];
        async move {
            api.push(&pactwise_sync::wire::PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes })
                .await
                .unwrap()
        }
    };
    let run = uuid::Uuid::now_v7();
    // Admin 0 runs the workflow: it publishes two four-eyes steps of one run.
    let open = published_step(run, true, SharedStepStatus::Open).to_fields();
    let s1 = replicas[0].set_fields(SyncedModel::ApprovalStep, "step-1", open.clone());
    let s2 = replicas[0].set_fields(SyncedModel::ApprovalStep, "step-2", open.clone());
    let stored = push(0, vec![s1, s2]).await;
    assert!(stored.results.iter().all(|r| r.refused.is_none()), "{stored:?}");

    // Someone else may not republish (or close) a step they did not open.
    let forged = replicas[1].set_fields(
        SyncedModel::ApprovalStep,
        "step-1",
        published_step(run, false, SharedStepStatus::Closed).to_fields(),
    );
    let refused = push(1, vec![forged]).await;
    assert_eq!(refused.results[0].refused.as_ref().unwrap().code, "forbidden");
    // A malformed publication is refused with the reason and stored nowhere.
    let mut bad = open.clone();
    bad.insert("eligible_roles".into(), serde_json::json!(["viewer"]));
    let bad = replicas[0].set_fields(SyncedModel::ApprovalStep, "step-9", bad);
    assert_eq!(push(0, vec![bad]).await.results[0].refused.as_ref().unwrap().code, "invalid_input");

    // The requester asks to approve their own four-eyes step: refused. A reviewer names wider roles: refused.
    let own = replicas[0].request_approval_of("step-1", ApprovalDecision::Approve, &[Role::Admin]);
    let wide = replicas[3].request_approval_of("step-1", ApprovalDecision::Approve, &[Role::Reviewer]);
    push(0, vec![own.clone()]).await;
    push(3, vec![wide.clone()]).await;
    // Admin 1 decides step 1; then admin 1 may not decide step 2 of the same run; the approver may.
    let first = replicas[1].request_approval_of("step-1", ApprovalDecision::Approve, &[Role::Admin]);
    push(1, vec![first.clone()]).await;
    let twice = replicas[1].request_approval_of("step-2", ApprovalDecision::Approve, &[Role::Admin]);
    push(1, vec![twice.clone()]).await;
    let other = replicas[2].request_approval_of("step-2", ApprovalDecision::Approve, &[Role::Approver]);
    push(2, vec![other.clone()]).await;
    let page = apis[0].pull(0, 100).await.unwrap();
    let refused = |reason| Some(pactwise_sync::ApprovalOutcome::Refused { reason });
    assert_eq!(outcome_of(&page, own.id), refused(RefusalReason::FourEyes));
    assert_eq!(outcome_of(&page, wide.id), refused(RefusalReason::NotEligible));
    assert_eq!(outcome_of(&page, twice.id), refused(RefusalReason::FourEyes));
    let stamped = |c: &pactwise_sync::Change| match outcome_of(&page, c.id) {
        Some(pactwise_sync::ApprovalOutcome::Stamped { approver_role, .. }) => approver_role,
        other => panic!("{other:?}"),
    };
    assert_eq!(stamped(&first), Some(Role::Admin), "the stamp carries the approver's role");
    assert_eq!(stamped(&other), Some(Role::Approver));

    // The run's desktop closes a step (its run was cancelled): a request sent before the news is refused.
    let s3 = replicas[0].set_fields(SyncedModel::ApprovalStep, "step-3", open.clone());
    push(0, vec![s3]).await;
    let closed = replicas[0].set_fields(
        SyncedModel::ApprovalStep,
        "step-3",
        published_step(run, true, SharedStepStatus::Closed).to_fields(),
    );
    assert!(push(0, vec![closed]).await.results[0].refused.is_none());
    let late = replicas[2].request_approval_of("step-3", ApprovalDecision::Approve, &[Role::Approver]);
    push(2, vec![late.clone()]).await;
    let page = apis[2].pull(0, 100).await.unwrap();
    assert_eq!(outcome_of(&page, late.id), refused(RefusalReason::StepClosed));
    assert_eq!(counts(fresh.storage.as_ref()).approvals, 2, "step-1 and step-2, once each");
}

/// The service escalates an open, undecided step once, at its own clock's escalation time pinned from the first
/// publication — not a closed step, not a decided one, not one without a delay — and no desktop may write an
/// escalation itself.
async fn the_service_escalates_each_overdue_open_step_once_by_its_own_clock(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Admin, Role::Approver]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let apis: Vec<HttpApi> =
        a.tokens.iter().map(|t| HttpApi::new(&server.endpoint, Some(DeviceToken::new(t))).unwrap()).collect();
    let replicas: Vec<_> =
        a.tokens.iter().map(|t| device(&server, t, Arc::new(FixedClock::new(clock.now()))).0).collect();
    let push = |i: usize, changes: Vec<pactwise_sync::Change>| {
        let api = &apis[i];
        async move {
            api.push(&pactwise_sync::wire::PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes })
                .await
                .unwrap()
        }
    };
    let run = uuid::Uuid::now_v7();
    let open = published_step(run, false, SharedStepStatus::Open);
    let no_delay = SharedApproval { escalate_after_secs: None, ..open.clone() };
    let mut steps = Vec::new();
    for (id, step) in [("due-1", &open), ("due-2", &open), ("closed", &open), ("decided", &open), ("never", &no_delay)]
    {
        steps.push(replicas[0].set_fields(SyncedModel::ApprovalStep, id, step.to_fields()));
    }
    assert!(push(0, steps).await.results.iter().all(|r| r.refused.is_none()));
    let closed = published_step(run, false, SharedStepStatus::Closed).to_fields();
    push(0, vec![replicas[0].set_fields(SyncedModel::ApprovalStep, "closed", closed)]).await;
    let decision = replicas[1].request_approval_of("decided", ApprovalDecision::Approve, &[Role::Approver]);
    push(1, vec![decision]).await;

    let escalations = |page: &pactwise_sync::PullResponse| -> Vec<(String, serde_json::Value)> {
        page.changes
            .iter()
            .filter(|c| c.change.model == SyncedModel::ApprovalEscalation)
            .map(|c| match &c.change.body {
                pactwise_sync::ChangeBody::Event { event } => {
                    (c.change.record_id.clone(), event["escalated_at"].clone())
                }
                other => panic!("{other:?}"),
            })
            .collect()
    };
    // Not yet: one second before the pinned time.
    assert_eq!(pactwise_sync_server::steps::sweep(&server.state).await, 0);
    clock.advance(chrono::Duration::seconds(ESCALATE_AFTER_SECS as i64 - 1));
    assert_eq!(pactwise_sync_server::steps::sweep(&server.state).await, 0);
    assert!(escalations(&apis[1].pull(0, 100).await.unwrap()).is_empty());

    // Due: the two open, undecided steps, once each, at the service's time.
    clock.advance(chrono::Duration::seconds(1));
    assert_eq!(pactwise_sync_server::steps::sweep(&server.state).await, 1, "one organization woken");
    assert_eq!(pactwise_sync_server::steps::sweep(&server.state).await, 0, "escalated once");
    let page = apis[1].pull(0, 100).await.unwrap();
    let mut seen = escalations(&page);
    seen.sort_by(|x, y| x.0.cmp(&y.0));
    let at = serde_json::to_value(clock.now()).unwrap();
    assert_eq!(seen, vec![("due-1".to_string(), at.clone()), ("due-2".to_string(), at)]);
    let written = page.changes.iter().find(|c| c.change.model == SyncedModel::ApprovalEscalation).unwrap();
    assert!(written.author.as_uuid().is_nil(), "written by the service, not by a member");
    let event = match &written.change.body {
        pactwise_sync::ChangeBody::Event { event } => event,
        other => panic!("{other:?}"),
    };
    let read = pactwise_sync::shared::Escalation::from_event(event).unwrap();
    assert_eq!(read.run_id, run);

    // A desktop may not write an escalation (nor so decide anything).
    let forged = replicas[1].append_event(SyncedModel::ApprovalEscalation, "never", event.clone());
    let refused = push(1, vec![forged]).await;
    assert!(refused.results[0].refused.is_some(), "{refused:?}");
    clock.advance(chrono::Duration::days(400));
    assert_eq!(pactwise_sync_server::steps::sweep(&server.state).await, 0, "a step without a delay never escalates");
    assert_eq!(counts(fresh.storage.as_ref()).approvals, 1, "escalation decided nothing");
}

crate::both_backends!(
    the_service_escalates_each_overdue_open_step_once_by_its_own_clock,
    two_conflicting_offline_approvals_end_with_exactly_one_decision_stamped_by_the_server,
    an_approval_pushed_again_after_a_crash_keeps_its_first_outcome,
    a_published_step_pins_its_requester_run_and_four_eyes_against_forged_requests,
);
