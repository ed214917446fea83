//! Crash safety: a child process runs a graph one super-step at a time on a file database; the test kills it with
//! SIGKILL right after each super-step boundary in turn (after commit k), starts a fresh process that resumes the
//! run from its last checkpoint, and checks that the final state equals an uninterrupted run's and that a
//! side-effect counter outside the database saw every step exactly once. A second graph pauses for an approval: the
//! decision's commit also carries the step it resumes, and killing around it loses no decision and repeats no step.

mod common;

use chrono::{DateTime, Duration, Utc};
use common::*;
use pactwise_domain::{Decision, FixedClock, Role, RunId, RunStatus};
use pactwise_engine::{Engine, NodeContext, NodeFailure, NodeOutput, Registry, RunState};
use pactwise_store::Store;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

const CHILD: &str = "PACTWISE_CRASH_CHILD";

/// A handler with a side effect outside the database: it appends its node's name to the counter file.
fn counted(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let path = std::env::var("PACTWISE_CRASH_COUNTER").map_err(|_| NodeFailure::Fatal("no counter".into()))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| NodeFailure::Fatal(e.to_string()))?;
    writeln!(file, "{}", ctx.node).map_err(|e| NodeFailure::Fatal(e.to_string()))?;
    file.sync_all().map_err(|e| NodeFailure::Fatal(e.to_string()))?;
    let seen = ctx.channel("log").as_array().map_or(0, Vec::len);
    Ok(NodeOutput::default().write("log", json!(ctx.node)).write("totals", json!({ ctx.node: seen })))
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.handler("counted", counted);
    r.handler("route", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default().route(if ctx.input()["big"] == json!(true) { "big" } else { "small" }))
    });
    r.add_graph_json(
        &json!({
            "name": "five_steps", "version": 1, "entry": ["intake"],
            "channels": {"log": "append", "totals": "merge"},
            "nodes": [
                {"id": "intake", "kind": "agent", "handler": "counted"},
                {"id": "left", "kind": "agent", "handler": "counted"},
                {"id": "right", "kind": "agent", "handler": "counted"},
                {"id": "check", "kind": "condition", "handler": "route"},
                {"id": "big", "kind": "agent", "handler": "counted"},
                {"id": "small", "kind": "agent", "handler": "counted"},
                {"id": "close", "kind": "agent", "handler": "counted"}
            ],
            "edges": [
                {"from": "intake", "to": "left"}, {"from": "intake", "to": "right"},
                {"from": "left", "to": "check"}, {"from": "right", "to": "check"},
                {"from": "check", "to": "big", "when": "big"}, {"from": "check", "to": "small", "when": "small"},
                {"from": "big", "to": "close"}, {"from": "small", "to": "close"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    r.add_graph_json(
        &json!({
            "name": "approved_steps", "version": 1, "entry": ["intake"],
            "channels": {"log": "append", "totals": "merge", "decision": "last_value"},
            "nodes": [
                {"id": "intake", "kind": "agent", "handler": "counted"},
                {"id": "sign_off", "kind": "approval", "title": "Sign off", "output": "decision", "evidence": ["log"]},
                {"id": "after", "kind": "agent", "handler": "counted"},
                {"id": "close", "kind": "agent", "handler": "counted"}
            ],
            "edges": [
                {"from": "intake", "to": "sign_off"}, {"from": "sign_off", "to": "after", "when": "approved"},
                {"from": "after", "to": "close"}
            ]
        })
        .to_string(),
    )
    .unwrap();
    r
}

/// Super-steps of the graph: {intake}, {left, right}, {check}, {big}, {close}.
const SUPERSTEPS: usize = 5;

fn open(path: &Path, now: DateTime<Utc>) -> Store {
    Store::open(path, Arc::new(FixedClock::new(now))).unwrap()
}

/// The child process. `start`: sign in, start the run, then one super-step per line read on stdin, printing
/// `COMMITTED k` after commit k. `resume`: a new worker claims whatever has work and drives it to the end.
#[test]
fn crash_child() {
    let Ok(mode) = std::env::var(CHILD) else { return };
    let path = std::env::var("PACTWISE_CRASH_DB").unwrap();
    let now: DateTime<Utc> = std::env::var("PACTWISE_CRASH_NOW").unwrap().parse().unwrap();
    let store = open(Path::new(&path), now);
    let registry = registry();
    let mut out = std::io::stdout().lock();
    if mode == "start-approval" {
        // Commit 1: the run and {intake}; commit 2: the decision with {sign_off} and {after}; commit 3: {close}.
        let (store, cred) = store.into_platform_worker("first-worker").into_parts();
        let engine = Engine::new(&store, &registry, &cred).with_lease(Duration::seconds(30));
        let acme = org(&store, "Acme");
        let scope = member(&store, acme, "Buyer", Role::Buyer);
        let approver = member(&store, acme, "Approver", Role::Approver);
        let run = engine.start(&scope, "approved_steps", json!({})).unwrap();
        writeln!(out, "\nRUN {run}\nCOMMITTED 1").unwrap();
        out.flush().unwrap();
        let mut line = String::new();
        for k in 2.. {
            line.clear();
            if std::io::stdin().read_line(&mut line).unwrap() == 0 {
                return;
            }
            let moved = if k == 2 {
                let approval = store.approvals().inbox(&approver).unwrap()[0].id;
                engine.record_decision(&approver, approval, Decision::Approve, "signed", None).unwrap();
                true
            } else {
                engine.advance(&[run]).unwrap()[0].committed
            };
            if !moved {
                writeln!(out, "\nDONE").unwrap();
                out.flush().unwrap();
                return;
            }
            writeln!(out, "\nCOMMITTED {k}").unwrap();
            out.flush().unwrap();
        }
    } else if mode == "start" {
        let (store, cred) = store.into_platform_worker("first-worker").into_parts();
        let engine = Engine::new(&store, &registry, &cred).with_lease(Duration::seconds(30));
        let scope = member(&store, org(&store, "Acme"), "Buyer", Role::Buyer);
        let run = engine.start(&scope, "five_steps", json!({"big": true})).unwrap();
        writeln!(out, "\nRUN {run}\nCOMMITTED 1").unwrap();
        out.flush().unwrap();
        let mut line = String::new();
        for k in 2.. {
            line.clear();
            if std::io::stdin().read_line(&mut line).unwrap() == 0 {
                return;
            }
            let advanced = engine.advance(&[run]).unwrap();
            if !advanced[0].committed {
                writeln!(out, "\nDONE").unwrap();
                out.flush().unwrap();
                return;
            }
            writeln!(out, "\nCOMMITTED {k}").unwrap();
            out.flush().unwrap();
        }
    } else {
        let (store, cred) = store.into_platform_worker("second-worker").into_parts();
        let engine = Engine::new(&store, &registry, &cred);
        // A decision still missing is given now, by another approver of the organization.
        if let Some(acme) = store.platform().find_organization("Acme").unwrap() {
            let approver = member(&store, acme, "Second approver", Role::Approver);
            for pending in store.approvals().inbox(&approver).unwrap() {
                engine.decide(&approver, pending.id, Decision::Approve, "signed after the restart", None).unwrap();
            }
        }
        let done = engine.work(10).unwrap();
        for r in done {
            writeln!(
                out,
                "\nFINAL {} {}",
                r.status,
                serde_json::to_string(&serde_json::from_str::<RunState>(&r.state).unwrap().channels).unwrap()
            )
            .unwrap();
        }
    }
}

struct Outcome {
    status: RunStatus,
    channels: serde_json::Value,
    counter: Vec<String>,
    succeeded_events: Vec<String>,
}

fn child(mode: &str, db: &Path, counter: &Path, now: DateTime<Utc>) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads", "1"])
        .env(CHILD, mode)
        .env("PACTWISE_CRASH_DB", db)
        .env("PACTWISE_CRASH_COUNTER", counter)
        .env("PACTWISE_CRASH_NOW", now.to_rfc3339())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs the graph in a child process, killing it with SIGKILL after commit `kill_after` (never, if `None`), and
/// resumes it in a second process.
fn run_with_crash(dir: &Path, kill_after: Option<usize>) -> Outcome {
    run_graph_with_crash("start", &[1, 3, 3, 4, 5], dir, kill_after)
}

/// `mode` picks the graph the first process runs; `side_effects_by_commit[k - 1]` is how many steps have run when
/// commit k returned.
fn run_graph_with_crash(
    mode: &str,
    side_effects_by_commit: &[usize],
    dir: &Path,
    kill_after: Option<usize>,
) -> Outcome {
    let db = dir.join("engine.sqlite3");
    let counter = dir.join("side-effects.txt");
    let t0: DateTime<Utc> = "2026-11-30T09:00:00Z".parse().unwrap();
    let mut first = child(mode, &db, &counter, t0);
    let mut stdin = first.stdin.take().unwrap();
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    let mut run: Option<RunId> = None;
    loop {
        let line = lines.next().expect("the child ended early").unwrap();
        if let Some(id) = line.strip_prefix("RUN ") {
            run = Some(id.trim().parse().unwrap());
        }
        if let Some(k) = line.strip_prefix("COMMITTED ") {
            let k: usize = k.trim().parse().unwrap();
            if Some(k) == kill_after {
                first.kill().unwrap(); // SIGKILL on Unix: no destructor, no clean close of the database
                break;
            }
            writeln!(stdin, "next").unwrap();
        }
        if line.trim() == "DONE" {
            drop(stdin);
            break;
        }
    }
    let status = first.wait().unwrap();
    if let Some(k) = kill_after {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "the first process was killed by SIGKILL");
        // Steps run before the kill: those of super-steps 1..=k ({intake}, {left, right}, {check}, {big}, {close}).
        let before = std::fs::read_to_string(&counter).unwrap_or_default().lines().count();
        assert_eq!(before, side_effects_by_commit[k - 1], "killed right after commit {k}");
    }
    // A new process, an hour later (the dead worker's lease has expired), resumes from the last checkpoint.
    let second = child("resume", &db, &counter, t0 + Duration::hours(1)).wait_with_output().unwrap();
    assert!(second.status.success());
    let store = open(&db, t0 + Duration::hours(2));
    let (store, cred) = store.into_platform_worker("inspector").into_parts();
    let record = store.runs().load(&cred, run.unwrap()).unwrap();
    let events = store.runs().events_for_worker(&cred, record.id).unwrap();
    Outcome {
        status: record.status,
        channels: serde_json::to_value(serde_json::from_str::<RunState>(&record.state).unwrap().channels).unwrap(),
        counter: std::fs::read_to_string(&counter).unwrap().lines().map(str::to_string).collect(),
        succeeded_events: events
            .into_iter()
            .filter(|e| e.kind == "succeeded" && e.node.is_some())
            .filter_map(|e| e.node)
            .collect(),
    }
}

#[test]
fn a_run_killed_at_any_super_step_boundary_resumes_to_the_same_end_without_repeating_a_step() {
    let reference = run_with_crash(tempfile::tempdir().unwrap().path(), None);
    assert_eq!(reference.status, RunStatus::Succeeded);
    let mut expected_steps = vec!["close", "intake", "big", "left", "right"];
    expected_steps.sort();
    let mut counted = reference.counter.clone();
    counted.sort();
    assert_eq!(counted, expected_steps, "the reference run executed each step once");

    for k in 1..=SUPERSTEPS {
        let dir = tempfile::tempdir().unwrap();
        let outcome = run_with_crash(dir.path(), Some(k));
        assert_eq!(outcome.status, RunStatus::Succeeded, "killed after commit {k}");
        assert_eq!(outcome.channels, reference.channels, "killed after commit {k}: same final state");
        let mut counted = outcome.counter.clone();
        counted.sort();
        assert_eq!(counted, expected_steps, "killed after commit {k}: every side effect exactly once");
        let mut events = outcome.succeeded_events.clone();
        events.sort();
        events.dedup();
        assert_eq!(events.len(), outcome.succeeded_events.len(), "each step logged once");
    }
}

#[test]
fn a_run_killed_around_its_decisions_commit_resumes_without_repeating_a_step_or_losing_the_decision() {
    // Commit 2 carries the decision, the approval's super-step and the rule-based step after it.
    let by_commit = [1, 2, 3];
    let reference = run_graph_with_crash("start-approval", &by_commit, tempfile::tempdir().unwrap().path(), None);
    assert_eq!(reference.status, RunStatus::Succeeded);
    let expected_steps = ["after", "close", "intake"];
    let mut counted = reference.counter.clone();
    counted.sort();
    assert_eq!(counted, expected_steps);
    assert_eq!(reference.channels["decision"]["reason"], "signed");

    for k in 1..=by_commit.len() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = run_graph_with_crash("start-approval", &by_commit, dir.path(), Some(k));
        assert_eq!(outcome.status, RunStatus::Succeeded, "killed after commit {k}");
        assert_eq!(outcome.channels["log"], reference.channels["log"], "killed after commit {k}: same steps in order");
        assert_eq!(outcome.channels["totals"], reference.channels["totals"], "killed after commit {k}");
        // Killed before the decision's commit, the decision is given after the restart; after it, it was kept.
        let reason = if k == 1 { "signed after the restart" } else { "signed" };
        assert_eq!(outcome.channels["decision"]["reason"], reason, "killed after commit {k}");
        let mut counted = outcome.counter.clone();
        counted.sort();
        assert_eq!(counted, expected_steps, "killed after commit {k}: every side effect exactly once");
        let mut events = outcome.succeeded_events.clone();
        events.sort();
        events.dedup();
        assert_eq!(events.len(), outcome.succeeded_events.len(), "each step logged once");
    }
}
