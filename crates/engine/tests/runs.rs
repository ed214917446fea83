//! The engine end to end on an in-memory store: super-steps and reducers, conditional edges, approvals, retries with
//! backoff by the injected clock, compensation in reverse order, subgraphs, cancel cascades, the watchdog, handoffs,
//! graph snapshots and tenant isolation.

mod common;

use chrono::Duration;
use common::*;
use pactwise_domain::{ApprovalStatus, Decision, Role, RunStatus, TaskStatus};
use pactwise_engine::{Engine, NodeContext, NodeFailure, NodeOutput, Registry, RunState};
use pactwise_store::{RunRecord, Store, StoreError, SweepPolicy};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn state(record: &RunRecord) -> RunState {
    serde_json::from_str(&record.state).unwrap()
}

fn channel(record: &RunRecord, name: &str) -> Value {
    state(record).channels.get(name).cloned().unwrap_or(Value::Null)
}

#[test]
fn parallel_branches_merge_by_their_reducers_and_dead_branches_are_skipped() {
    let store = Store::open_in_memory(clock()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let mut registry = registry_with_log();
    registry.handler("facts_a", |_: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write("facts", json!({"a": 1, "shared": "a"}))
            .write("log", json!("left"))
            .write("last", json!("a")))
    });
    registry.handler("facts_b", |_: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write("facts", json!({"b": 2, "shared": "b"}))
            .write("log", json!("right"))
            .write("last", json!("b")))
    });
    registry.handler("route", |ctx: &NodeContext<'_>| {
        let big = ctx.channel("facts")["a"].as_i64().unwrap_or(0) + ctx.channel("facts")["b"].as_i64().unwrap_or(0) > 2;
        Ok(NodeOutput::default().route(if big { "big" } else { "small" }))
    });
    registry
        .add_graph_json(
            &json!({
                "name": "branches", "version": 1, "entry": ["left", "right"],
                "channels": {"facts": "merge", "log": "append", "last": "last_value"},
                "nodes": [
                    {"id": "left", "kind": "agent", "handler": "facts_a"},
                    {"id": "right", "kind": "agent", "handler": "facts_b"},
                    {"id": "decide", "kind": "condition", "handler": "route"},
                    {"id": "big_path", "kind": "agent", "handler": "log"},
                    {"id": "small_path", "kind": "agent", "handler": "log"}
                ],
                "edges": [
                    {"from": "left", "to": "decide"}, {"from": "right", "to": "decide"},
                    {"from": "decide", "to": "big_path", "when": "big"},
                    {"from": "decide", "to": "small_path", "when": "small"},
                    {"from": "big_path", "to": "end"}, {"from": "small_path", "to": "end"}
                ]
            })
            .to_string(),
        )
        .unwrap();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&scope, "branches", json!({})).unwrap();
    let done = engine.drive(run).unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(channel(&done, "facts"), json!({"a": 1, "b": 2, "shared": "b"}));
    assert_eq!(strings(&channel(&done, "log")), ["left", "right", "big_path"]);
    assert_eq!(channel(&done, "last"), json!("b"));
    let events = store.runs().events(&scope, run).unwrap();
    assert!(!events.iter().any(|e| e.node.as_deref() == Some("small_path")), "the dead branch never ran");
    // One checkpoint per super-step: {left,right}, {decide}, {big_path}.
    assert_eq!(store.runs().checkpoints(&scope, run).unwrap().len(), 3);
    assert_eq!(engine.commits(), 3);
}

fn flaky_registry(failures: usize, calls: Arc<Mutex<usize>>) -> Registry {
    let mut registry = registry_with_log();
    registry.handler("flaky", move |_: &NodeContext<'_>| {
        let mut n = calls.lock().unwrap();
        *n += 1;
        if *n <= failures {
            Err(NodeFailure::Retryable(format!("timeout #{n}")))
        } else {
            Ok(NodeOutput::default().write("log", json!("flaky")))
        }
    });
    registry
        .add_graph_json(
            &json!({
                "name": "flaky", "version": 1, "entry": ["call"], "channels": {"log": "append"},
                "nodes": [{"id": "call", "kind": "agent", "handler": "flaky",
                           "retry": {"max_attempts": 4, "backoff_ms": 1000, "max_backoff_ms": 60000}}]
            })
            .to_string(),
        )
        .unwrap();
    registry
}

#[test]
fn a_failing_node_is_retried_with_exponential_backoff_by_the_clock() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let calls = Arc::new(Mutex::new(0));
    let registry = flaky_registry(2, calls.clone());
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&scope, "flaky", json!({})).unwrap();
    let first_try = store.runs().get(&scope, run).unwrap();
    assert_eq!((first_try.status, first_try.failures), (RunStatus::Running, 1));
    assert_eq!(first_try.wake_at, Some(clock_now(&store) + Duration::seconds(1)));
    // Not due yet: nothing happens.
    assert!(!engine.advance(&[run]).unwrap()[0].committed);
    assert_eq!(*calls.lock().unwrap(), 1);
    clock.advance(Duration::seconds(1));
    engine.advance(&[run]).unwrap();
    let second = store.runs().get(&scope, run).unwrap();
    assert_eq!(second.failures, 2);
    assert_eq!(second.wake_at, Some(clock_now(&store) + Duration::seconds(2)), "the wait doubles");
    clock.advance(Duration::milliseconds(1999));
    assert!(!engine.advance(&[run]).unwrap()[0].committed);
    clock.advance(Duration::milliseconds(1));
    let done = engine.drive(run).unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(*calls.lock().unwrap(), 3);
    let failed: Vec<_> =
        store.runs().events(&scope, run).unwrap().into_iter().filter(|e| e.kind == "failed_attempt").collect();
    assert_eq!(failed.len(), 2);
}

fn clock_now(store: &Store) -> chrono::DateTime<chrono::Utc> {
    store.clock().now()
}

#[test]
fn a_node_that_keeps_failing_ends_the_run_and_the_watchdog_stops_runs_that_keep_failing() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let registry = flaky_registry(100, Arc::new(Mutex::new(0)));
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&scope, "flaky", json!({})).unwrap();
    for _ in 0..3 {
        clock.advance(Duration::minutes(5));
        engine.drive(run).unwrap();
    }
    let done = store.runs().get(&scope, run).unwrap();
    assert_eq!(done.status, RunStatus::Failed);
    assert!(done.reason.as_deref().unwrap().contains("failed after 4 attempt(s)"), "{:?}", done.reason);

    // A second run: the watchdog stops it once its failures reach the limit.
    let run = engine.start(&scope, "flaky", json!({})).unwrap();
    clock.advance(Duration::minutes(5));
    engine.drive(run).unwrap();
    let report = engine.sweep(SweepPolicy { max_failures: 2 }).unwrap();
    assert_eq!(report.stopped_for_failures, vec![run]);
    let stopped = store.runs().get(&scope, run).unwrap();
    assert_eq!(stopped.status, RunStatus::Failed);
    assert!(stopped.reason.unwrap().contains("stopped after 2 failed attempts"));
}

#[test]
fn when_a_step_fails_completed_steps_are_compensated_in_reverse_order() {
    let store = Store::open_in_memory(clock()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let undone = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut registry = registry_with_log();
    let u = undone.clone();
    registry.handler("undo", move |ctx: &NodeContext<'_>| {
        u.lock().unwrap().push(ctx.node.to_string());
        Ok(NodeOutput::default())
    });
    registry.handler("boom", |_: &NodeContext<'_>| Err(NodeFailure::Fatal("the bank refused the transfer".into())));
    registry
        .add_graph_json(
            &json!({
                "name": "saga", "version": 1, "entry": ["reserve"], "channels": {"log": "append"},
                "nodes": [
                    {"id": "reserve", "kind": "agent", "handler": "log", "compensate": "undo"},
                    {"id": "notify", "kind": "agent", "handler": "log"},
                    {"id": "charge", "kind": "agent", "handler": "log", "compensate": "undo"},
                    {"id": "book", "kind": "agent", "handler": "log", "compensate": "undo"},
                    {"id": "pay", "kind": "agent", "handler": "boom"}
                ],
                "edges": [
                    {"from": "reserve", "to": "notify"}, {"from": "notify", "to": "charge"},
                    {"from": "charge", "to": "book"}, {"from": "book", "to": "pay"}
                ]
            })
            .to_string(),
        )
        .unwrap();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&scope, "saga", json!({})).unwrap();
    let done = engine.drive(run).unwrap();
    assert_eq!(done.status, RunStatus::Failed);
    assert_eq!(*undone.lock().unwrap(), ["book", "charge", "reserve"]);
    assert!(done.reason.unwrap().contains("the bank refused the transfer"));
    let kinds: Vec<String> = store.runs().events(&scope, run).unwrap().into_iter().map(|e| e.kind).collect();
    assert!(
        kinds.ends_with(&["compensated".into(), "compensated".into(), "compensated".into(), "failed".into()]),
        "{kinds:?}"
    );
    // The failure is in the audit log with its reason.
    let audit = store.audit().list(&scope).unwrap();
    let finished = audit.iter().find(|e| e.action == "run_finished").unwrap();
    assert_eq!(finished.details["status"], "failed");
}

fn approval_registry() -> Registry {
    let mut registry = registry_with_log();
    registry.handler("handoff", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default().write("log", json!(ctx.node)).handoff(pactwise_engine::Handoff {
            agent_type: "notifications".into(),
            priority: 3,
            payload: json!({"note": "vendor chosen"}),
            scheduled_at: None,
            key: None,
        }))
    });
    registry
        .add_graph_json(
            &json!({
                "name": "child", "version": 1, "entry": ["prepare"],
                "channels": {"log": "append", "decision": "last_value"},
                "nodes": [
                    {"id": "prepare", "kind": "agent", "handler": "handoff"},
                    {"id": "sign_off", "kind": "approval", "title": "Sign off", "output": "decision",
                     "evidence": ["log"], "escalate_after_secs": 3600},
                    {"id": "after", "kind": "agent", "handler": "log"}
                ],
                "edges": [{"from": "prepare", "to": "sign_off"}, {"from": "sign_off", "to": "after", "when": "approved"}]
            })
            .to_string(),
        )
        .unwrap();
    registry
        .add_graph_json(
            &json!({
                "name": "parent", "version": 1, "entry": ["begin"],
                "channels": {"log": "append", "child_result": "last_value"},
                "nodes": [
                    {"id": "begin", "kind": "agent", "handler": "log"},
                    {"id": "sub", "kind": "subgraph", "graph": "child", "input": ["log"], "output": "child_result"},
                    {"id": "finish", "kind": "agent", "handler": "log"}
                ],
                "edges": [{"from": "begin", "to": "sub"}, {"from": "sub", "to": "finish", "when": "succeeded"}]
            })
            .to_string(),
        )
        .unwrap();
    registry
}

#[test]
fn a_subgraph_runs_as_a_child_and_its_approval_resumes_both() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    let registry = approval_registry();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&buyer, "parent", json!({})).unwrap();
    let records = engine.drive_many(&[run]).unwrap();
    assert_eq!(records[0].status, RunStatus::Waiting);
    let child = &records[1];
    assert_eq!((child.parent, child.status), (Some(run), RunStatus::Waiting));
    let inbox = store.approvals().inbox(&approver).unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].state_seen, json!({"log": ["prepare"]}), "the evidence as it was when the step paused");
    // The handoff reached the queue once.
    assert_eq!(store.tasks().for_run(&buyer, child.id).unwrap().len(), 1);

    let (decided, child_after) = engine.decide(&approver, inbox[0].id, Decision::Approve, "looks right", None).unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert_eq!(child_after.status, RunStatus::Succeeded);
    let parent = engine.drive(run).unwrap();
    assert_eq!(parent.status, RunStatus::Succeeded);
    assert_eq!(strings(&channel(&parent, "log")), ["begin", "finish"]);
    assert_eq!(channel(&parent, "child_result")["status"], "succeeded");
    assert_eq!(channel(&parent, "child_result")["channels"]["decision"]["decided_by"], json!(approver.user()));
}

#[test]
fn cancelling_a_run_cancels_its_child_runs_tasks_and_approvals() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    let registry = approval_registry();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&buyer, "parent", json!({})).unwrap();
    let child = engine.drive_many(&[run]).unwrap()[1].id;
    let report = engine.cancel(&buyer, run, "the request was withdrawn").unwrap();
    assert_eq!((report.runs, report.tasks, report.approvals), (2, 1, 1));
    assert_eq!(store.runs().get(&buyer, run).unwrap().status, RunStatus::Cancelled);
    assert_eq!(store.runs().get(&buyer, child).unwrap().status, RunStatus::Cancelled);
    assert!(store.tasks().for_run(&buyer, child).unwrap().iter().all(|t| t.status == TaskStatus::Cancelled));
    assert!(store.approvals().inbox(&approver).unwrap().is_empty());
    // Nothing moves any more, and a cancelled run cannot be cancelled again.
    assert!(engine.advance(&[run, child]).unwrap().iter().all(|a| !a.committed));
    assert!(matches!(
        engine.cancel(&buyer, run, "again"),
        Err(pactwise_engine::EngineError::Store(StoreError::Conflict(_)))
    ));
}

#[test]
fn a_run_keeps_the_graph_it_started_with() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    let mut registry = approval_registry();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let run = Engine::new(&store, &registry, &cred).start(&buyer, "child", json!({})).unwrap();
    assert_eq!(store.runs().get(&buyer, run).unwrap().status, RunStatus::Waiting);
    // The graph is redeployed: the approval now leads nowhere and a new node exists.
    registry
        .add_graph_json(
            &json!({"name": "child", "version": 2, "entry": ["other"], "channels": {"log": "append"},
                    "nodes": [{"id": "other", "kind": "agent", "handler": "log"}]})
            .to_string(),
        )
        .unwrap();
    let engine = Engine::new(&store, &registry, &cred);
    let approval = store.approvals().inbox(&approver).unwrap()[0].id;
    let (_, done) = engine.decide(&approver, approval, Decision::Approve, "fine", None).unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(done.graph_version, 1);
    assert_eq!(strings(&channel(&done, "log")), ["prepare", "after"]);
}

#[test]
fn a_rejection_takes_the_rejected_branch_and_ends_with_the_reason_recorded() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    let registry = approval_registry();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&buyer, "child", json!({})).unwrap();
    let approval = store.approvals().inbox(&approver).unwrap()[0].id;
    let (_, done) = engine.decide(&approver, approval, Decision::Reject, "budget frozen", None).unwrap();
    assert_eq!(done.id, run);
    assert_eq!(done.status, RunStatus::Succeeded, "no edge for `rejected`: the run ends after the decision");
    assert_eq!(channel(&done, "decision")["reason"], "budget frozen");
    assert_eq!(strings(&channel(&done, "log")), ["prepare"]);
}

#[test]
fn the_watchdog_recovers_expired_leases_and_enforces_deadlines() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let mut registry = registry_with_log();
    registry
        .add_graph_json(
            &json!({"name": "slow", "version": 1, "entry": ["a"], "channels": {"log": "append"}, "deadline_secs": 600,
                    "nodes": [{"id": "a", "kind": "agent", "handler": "log"}, {"id": "pause", "kind": "wait", "seconds": 3600},
                              {"id": "b", "kind": "agent", "handler": "log"}],
                    "edges": [{"from": "a", "to": "pause"}, {"from": "pause", "to": "b"}]})
            .to_string(),
        )
        .unwrap();
    registry
        .add_graph_json(
            &json!({"name": "two", "version": 1, "entry": ["a"], "channels": {"log": "append"},
                    "nodes": [{"id": "a", "kind": "agent", "handler": "log"}, {"id": "b", "kind": "agent", "handler": "log"}],
                    "edges": [{"from": "a", "to": "b"}]})
            .to_string(),
        )
        .unwrap();
    let (store, w1) = store.into_platform_worker("w1").into_parts();
    let w2 = w1.for_worker("w2");
    let first = Engine::new(&store, &registry, &w1).with_lease(Duration::seconds(30));
    let second = Engine::new(&store, &registry, &w2).with_lease(Duration::seconds(30));

    // w1 starts a run and "dies" holding its lease: w2 cannot take it until the lease expires.
    let run = first.start(&scope, "two", json!({})).unwrap();
    assert!(second.work(10).unwrap().is_empty());
    clock.advance(Duration::seconds(31));
    let report = second.sweep(SweepPolicy::default()).unwrap();
    assert_eq!(report.leases_recovered, vec![run]);
    let resumed = second.work(10).unwrap();
    assert_eq!(resumed[0].status, RunStatus::Succeeded);

    // A run waiting on a one-hour timer passes its ten-minute deadline.
    let slow = first.start(&scope, "slow", json!({})).unwrap();
    assert_eq!(store.runs().get(&scope, slow).unwrap().status, RunStatus::Waiting);
    clock.advance(Duration::minutes(11));
    assert_eq!(first.sweep(SweepPolicy::default()).unwrap().deadlines_enforced, vec![slow]);
    let late = store.runs().get(&scope, slow).unwrap();
    assert_eq!((late.status, late.reason.as_deref()), (RunStatus::Failed, Some("the run passed its deadline")));
}

#[test]
fn a_timer_wakes_the_run_when_the_clock_reaches_it() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let mut registry = registry_with_log();
    registry
        .add_graph_json(
            &json!({"name": "timer", "version": 1, "entry": ["pause"], "channels": {"log": "append"},
                    "nodes": [{"id": "pause", "kind": "wait", "seconds": 60}, {"id": "b", "kind": "agent", "handler": "log"}],
                    "edges": [{"from": "pause", "to": "b"}]})
            .to_string(),
        )
        .unwrap();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&scope, "timer", json!({})).unwrap();
    assert!(engine.work(10).unwrap().is_empty(), "not due");
    clock.advance(Duration::seconds(60));
    let done = engine.work(10).unwrap();
    assert_eq!((done.len(), done[0].id, done[0].status), (1, run, RunStatus::Succeeded));
}

#[test]
fn runs_and_approvals_of_one_organization_are_invisible_to_another() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let globex = org(&store, "Globex");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let outsider = member(&store, globex, "Outsider", Role::Owner);
    let registry = approval_registry();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&buyer, "child", json!({})).unwrap();
    let approval = store.approvals().for_run(&buyer, run).unwrap()[0].id;
    assert!(store.approvals().inbox(&outsider).unwrap().is_empty());
    let err = engine.decide(&outsider, approval, Decision::Approve, "mine now", None).unwrap_err();
    assert!(matches!(err, pactwise_engine::EngineError::Store(StoreError::NotFound)), "{err:?}");
    assert!(matches!(
        engine.cancel(&outsider, run, "x"),
        Err(pactwise_engine::EngineError::Store(StoreError::NotFound))
    ));
    assert_eq!(store.runs().get(&buyer, run).unwrap().status, RunStatus::Waiting);
}

#[test]
fn group_commit_advances_many_runs_in_one_transaction() {
    let store = Store::open_in_memory(clock()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let mut registry = registry_with_log();
    registry
        .add_graph_json(
            &json!({"name": "three", "version": 1, "entry": ["a"], "channels": {"log": "append"},
                    "nodes": [{"id": "a", "kind": "agent", "handler": "log"}, {"id": "b", "kind": "agent", "handler": "log"},
                              {"id": "c", "kind": "agent", "handler": "log"}],
                    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}]})
            .to_string(),
        )
        .unwrap();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let starts: Vec<_> = (0..20).map(|i| (&scope, "three", json!({"i": i}))).collect();
    let runs = engine.start_many(&starts).unwrap();
    let done = engine.drive_many(&runs).unwrap();
    assert!(done.iter().all(|r| r.status == RunStatus::Succeeded));
    assert_eq!(engine.commits(), 3, "20 runs × 3 super-steps in 3 commits");
    for r in &done {
        assert_eq!(store.runs().checkpoints(&scope, r.id).unwrap().len(), 3);
    }
}

/// A graph whose approval leads to a step with a side-effect counter: prepare → sign_off (approval) → after, and
/// `draft` (a step with a model part) after a second approval.
fn decision_registry(after_runs: Arc<Mutex<Vec<String>>>) -> Registry {
    let mut registry = registry_with_log();
    registry.handler("counted", move |ctx: &NodeContext<'_>| {
        after_runs.lock().unwrap().push(ctx.node.to_string());
        Ok(NodeOutput::default().write("log", json!(ctx.node)))
    });
    registry
        .add_graph_json(
            &json!({
                "name": "decided", "version": 1, "entry": ["prepare"],
                "channels": {"log": "append", "decision": "last_value"},
                "nodes": [
                    {"id": "prepare", "kind": "agent", "handler": "log"},
                    {"id": "sign_off", "kind": "approval", "title": "Sign off", "output": "decision", "evidence": ["log"]},
                    {"id": "after", "kind": "agent", "handler": "counted"},
                    {"id": "draft", "kind": "agent", "handler": "counted",
                     "model": {"mode": "note", "prompt": "Write a one-line note."}}
                ],
                "edges": [
                    {"from": "prepare", "to": "sign_off"},
                    {"from": "sign_off", "to": "after", "when": "approved"},
                    {"from": "after", "to": "draft"}
                ]
            })
            .to_string(),
        )
        .unwrap();
    registry
}

#[test]
fn a_decision_and_the_rule_based_step_it_resumes_share_one_commit_with_a_checkpoint_each() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let registry = decision_registry(ran.clone());
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&buyer, "decided", json!({})).unwrap();
    assert_eq!(engine.commits(), 1, "the run's creation and its first super-step: one commit");
    let approval = store.approvals().for_run(&buyer, run).unwrap()[0].id;

    // A refused decision records nothing and runs no step.
    let outsider = member(&store, acme, "Reviewer", Role::Reviewer);
    assert!(engine.decide(&outsider, approval, Decision::Approve, "mine", None).is_err());
    assert!(ran.lock().unwrap().is_empty());

    let before = engine.commits();
    let (_, done) = engine.decide(&approver, approval, Decision::Approve, "fine", None).unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    // Without a model, `draft` runs its rules: the decision, `after` and `draft` each got their checkpoint; the
    // decision's commit carried the approval's super-step and `after`; `draft` had its own.
    assert_eq!(engine.commits() - before, 2);
    assert_eq!(*ran.lock().unwrap(), ["after", "draft"], "each step ran once");
    let checkpoints = store.runs().checkpoints(&buyer, run).unwrap();
    let supersteps: Vec<u32> = checkpoints.iter().map(|c| c.superstep).collect();
    assert_eq!(supersteps, [2, 3, 4, 4], "one checkpoint per super-step: prepare, sign_off, after, draft (finished)");
    let events = store.runs().events(&buyer, run).unwrap();
    let succeeded: Vec<&str> =
        events.iter().filter(|e| e.kind == "succeeded").filter_map(|e| e.node.as_deref()).collect();
    assert_eq!(succeeded, ["prepare", "sign_off", "after", "draft"]);
    assert_eq!(strings(&channel(&done, "log")), ["prepare", "after", "draft"]);
}

/// A model that answers at once (the commit structure is under test here, not the model API).
struct InstantModel;

impl pactwise_engine::ModelPort for InstantModel {
    fn draft(&self, _: pactwise_domain::OrgId, _: &pactwise_engine::ModelSpec, _: &Value) -> Result<String, String> {
        Ok("a note".into())
    }
}

#[test]
fn a_step_that_may_call_the_model_never_runs_inside_the_decisions_transaction() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut registry = decision_registry(ran.clone());
    // The same graph with the model step right after the approval.
    registry
        .add_graph_json(
            &json!({
                "name": "decided", "version": 2, "entry": ["prepare"],
                "channels": {"log": "append", "decision": "last_value"},
                "nodes": [
                    {"id": "prepare", "kind": "agent", "handler": "log"},
                    {"id": "sign_off", "kind": "approval", "title": "Sign off", "output": "decision", "evidence": ["log"]},
                    {"id": "draft", "kind": "agent", "handler": "counted",
                     "model": {"mode": "note", "prompt": "Write a one-line note."}}
                ],
                "edges": [{"from": "prepare", "to": "sign_off"}, {"from": "sign_off", "to": "draft", "when": "approved"}]
            })
            .to_string(),
        )
        .unwrap();
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let model = InstantModel;
    let engine = Engine::new(&store, &registry, &cred).with_model(Some(&model));
    let run = engine.start(&buyer, "decided", json!({})).unwrap();
    let approval = store.approvals().for_run(&buyer, run).unwrap()[0].id;
    let before = engine.commits();
    let (_, done) = engine.decide(&approver, approval, Decision::Approve, "fine", None).unwrap();
    assert_eq!(done.status, RunStatus::Succeeded);
    assert_eq!(engine.commits() - before, 2, "the decision's commit, then the model step's own");
    assert_eq!(*ran.lock().unwrap(), ["draft"]);
}

/// A saga whose later part is slow (a timer) or keeps failing, with compensable steps before it.
fn stoppable_registry(undone: Arc<Mutex<Vec<String>>>) -> Registry {
    let mut registry = registry_with_log();
    registry.handler("undo", move |ctx: &NodeContext<'_>| {
        undone.lock().unwrap().push(ctx.node.to_string());
        Ok(NodeOutput::default())
    });
    registry.handler("unreachable", |_: &NodeContext<'_>| {
        Err(NodeFailure::Retryable("the carrier does not answer".into()))
    });
    registry
        .add_graph_json(
            &json!({
                "name": "slow_saga", "version": 1, "entry": ["reserve"], "channels": {"log": "append"},
                "deadline_secs": 600,
                "nodes": [
                    {"id": "reserve", "kind": "agent", "handler": "log", "compensate": "undo"},
                    {"id": "notify", "kind": "agent", "handler": "log"},
                    {"id": "charge", "kind": "agent", "handler": "log", "compensate": "undo"},
                    {"id": "pause", "kind": "wait", "seconds": 3600},
                    {"id": "ship", "kind": "agent", "handler": "log", "compensate": "undo"}
                ],
                "edges": [
                    {"from": "reserve", "to": "notify"}, {"from": "notify", "to": "charge"},
                    {"from": "charge", "to": "pause"}, {"from": "pause", "to": "ship"}
                ]
            })
            .to_string(),
        )
        .unwrap();
    registry
        .add_graph_json(
            &json!({
                "name": "failing_saga", "version": 1, "entry": ["reserve"], "channels": {"log": "append"},
                "nodes": [
                    {"id": "reserve", "kind": "agent", "handler": "log", "compensate": "undo"},
                    {"id": "charge", "kind": "agent", "handler": "log", "compensate": "undo"},
                    {"id": "ship", "kind": "agent", "handler": "unreachable", "compensate": "undo",
                     "retry": {"max_attempts": 20, "backoff_ms": 1000, "max_backoff_ms": 1000}}
                ],
                "edges": [{"from": "reserve", "to": "charge"}, {"from": "charge", "to": "ship"}]
            })
            .to_string(),
        )
        .unwrap();
    registry
}

fn kinds(store: &Store, scope: &pactwise_store::OrgScope, run: pactwise_domain::RunId) -> Vec<String> {
    store.runs().events(scope, run).unwrap().into_iter().map(|e| e.kind).collect()
}

#[test]
fn a_run_stopped_at_its_deadline_compensates_its_completed_steps_in_reverse_order() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let undone = Arc::new(Mutex::new(Vec::new()));
    let registry = stoppable_registry(undone.clone());
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let engine = Engine::new(&store, &registry, &cred);
    let run = engine.start(&scope, "slow_saga", json!({})).unwrap();
    let waiting = engine.drive(run).unwrap();
    assert_eq!(waiting.status, RunStatus::Waiting, "on the one-hour timer");

    // Before the deadline nothing is stopped.
    clock.advance(Duration::minutes(9));
    assert!(engine.sweep(SweepPolicy::default()).unwrap().deadlines_enforced.is_empty());
    assert!(undone.lock().unwrap().is_empty());

    clock.advance(Duration::minutes(2));
    let report = engine.sweep(SweepPolicy::default()).unwrap();
    assert_eq!(report.deadlines_enforced, vec![run]);
    // `ship` never ran, `notify` has nothing to undo: charge, then reserve.
    assert_eq!(*undone.lock().unwrap(), ["charge", "reserve"]);
    let stopped = store.runs().get(&scope, run).unwrap();
    assert_eq!((stopped.status, stopped.reason.as_deref()), (RunStatus::Failed, Some("the run passed its deadline")));
    let kinds = kinds(&store, &scope, run);
    let tail = &kinds[kinds.iter().position(|k| k == "stopped").unwrap()..];
    assert_eq!(tail, ["stopped", "compensation_started", "compensated", "compensated", "failed"]);
    let audit = store.audit().list(&scope).unwrap();
    assert!(audit.iter().any(|e| e.action == "run_stopped"));
    let finished = audit.iter().find(|e| e.action == "run_finished").unwrap();
    assert_eq!(finished.details["status"], "failed");

    // Compensation happens once: later sweeps and workers leave the run alone.
    clock.advance(Duration::hours(2));
    assert_eq!(engine.sweep(SweepPolicy::default()).unwrap(), Default::default());
    assert!(engine.work(10).unwrap().is_empty());
    assert_eq!(undone.lock().unwrap().len(), 2);
}

#[test]
fn a_run_the_watchdog_stops_for_failing_compensates_like_a_failed_run() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
    let undone = Arc::new(Mutex::new(Vec::new()));
    let registry = stoppable_registry(undone.clone());
    let (store, w1) = store.into_platform_worker("w1").into_parts();
    let first = Engine::new(&store, &registry, &w1);
    let run = first.start(&scope, "failing_saga", json!({})).unwrap();
    for _ in 0..2 {
        first.drive(run).unwrap();
        clock.advance(Duration::seconds(1));
    }
    let failing = store.runs().get(&scope, run).unwrap();
    assert_eq!((failing.status, failing.failures), (RunStatus::Running, 2), "two failed attempts of `ship` so far");

    // The store hands the run to stop, with its state and the reason; without an engine it is only marked failed.
    let report = store
        .runs()
        .sweep(&w1, SweepPolicy { max_failures: 2 }, &mut |record, reason| {
            let state: RunState = serde_json::from_str(&record.state).unwrap();
            assert_eq!(state.completed, ["reserve", "charge"]);
            assert_eq!(reason, "stopped after 2 failed attempts");
            None
        })
        .unwrap();
    assert_eq!(report.stopped_for_failures, vec![run], "without the engine the run is only marked failed");
    assert!(undone.lock().unwrap().is_empty());

    // Through the engine: the same stop compensates.
    let run = first.start(&scope, "failing_saga", json!({})).unwrap();
    for _ in 0..2 {
        first.drive(run).unwrap();
        clock.advance(Duration::seconds(1));
    }
    let w2 = w1.for_worker("w2");
    let sweeper = Engine::new(&store, &registry, &w2);
    let report = sweeper.sweep(SweepPolicy { max_failures: 2 }).unwrap();
    assert_eq!(report.stopped_for_failures, vec![run]);
    assert_eq!(*undone.lock().unwrap(), ["charge", "reserve"], "`ship` never succeeded: nothing of it to undo");
    let stopped = store.runs().get(&scope, run).unwrap();
    assert_eq!(
        (stopped.status, stopped.reason.as_deref()),
        (RunStatus::Failed, Some("stopped after 2 failed attempts"))
    );
    // The first worker, which held the run, cannot commit over the stop.
    assert!(!first.advance(&[run]).unwrap()[0].committed);
}
