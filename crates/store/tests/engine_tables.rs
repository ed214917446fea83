//! The engine's tables through the store's public API: approvals' authorization, escalation, the task queue's
//! claim, idempotent commits and tenant isolation.

use chrono::{Duration, TimeZone, Utc};
use pactwise_domain::{ApprovalStatus, Clock, Decision, FixedClock, Role, RunId, RunStatus, TaskStatus};
use pactwise_store::{
    Applied, HealthThresholds, NewApproval, NewHandoff, NewRun, NewTask, OrgScope, PlatformCredential,
    QUEUE_HEALTH_SETTING, RunWrite, StepCommit, Store, StoreError, SweepPolicy,
};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn clock() -> Arc<FixedClock> {
    Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()))
}

fn org(store: &Store, name: &str) -> pactwise_domain::OrgId {
    store.platform().create_organization(name).unwrap()
}

fn member(store: &Store, org: pactwise_domain::OrgId, name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let user = p.create_user(name, None).unwrap();
    p.set_membership(org, user, role).unwrap();
    store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
}

/// Starts a run whose first commit opens one approval per (node, roles, four_eyes).
fn run_with_approvals(
    store: &Store,
    cred: &PlatformCredential,
    scope: &OrgScope,
    approvals: &[(&str, Vec<Role>, bool)],
) -> RunId {
    let run = NewRun::in_scope(scope, "test", 1, "{}".into(), "{}".into());
    let id = run.id();
    let mut step = StepCommit::new(id, 0, 1, RunStatus::Waiting, "{\"s\":1}".into());
    for (node, roles, four_eyes) in approvals {
        step.approvals.push(NewApproval {
            node: node.to_string(),
            title: format!("Approve {node}"),
            eligible_roles: roles.clone(),
            four_eyes: *four_eyes,
            state_seen: json!({ "amount": 9500 }),
            choices: vec!["Globex".into(), "Acme".into()],
            due_at: None,
            escalate_at: Some(store.clock().now() + Duration::hours(24)),
        });
    }
    store.runs().commit(cred, &[RunWrite::Start { run, step }], Duration::seconds(30)).unwrap();
    id
}

fn approvers() -> Vec<Role> {
    vec![Role::Owner, Role::Admin, Role::Approver]
}

#[test]
fn only_an_eligible_approver_of_the_same_organization_can_decide() {
    let store = Store::open_in_memory(clock()).unwrap();
    let (store, cred) = store.into_platform_worker("test-worker").into_parts();
    let (acme, globex) = (org(&store, "Acme"), org(&store, "Globex"));
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let viewer = member(&store, acme, "Viewer", Role::Viewer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    let outsider = member(&store, globex, "Outsider", Role::Owner);
    let run = run_with_approvals(&store, &cred, &buyer, &[("gate", approvers(), false)]);
    let approval = store.approvals().inbox(&approver).unwrap()[0].id;

    // Another organization's user: the approval does not exist for them.
    let err = store.approvals().decide(&outsider, approval, Decision::Approve, "ok", Some("Globex"), |_, _| Vec::new());
    assert!(matches!(err, Err(StoreError::NotFound)), "{err:?}");
    assert!(store.approvals().inbox(&outsider).unwrap().is_empty());
    // Users without an eligible role.
    for scope in [&buyer, &viewer] {
        let err = store.approvals().decide(scope, approval, Decision::Approve, "ok", Some("Globex"), |_, _| Vec::new());
        assert!(matches!(err, Err(StoreError::Forbidden { .. })), "{err:?}");
        assert!(store.approvals().inbox(scope).unwrap().is_empty());
    }
    // A missing reason and a choice that is not offered.
    let err = store.approvals().decide(&approver, approval, Decision::Approve, "  ", Some("Globex"), |_, _| Vec::new());
    assert!(matches!(err, Err(StoreError::Invalid(_))));
    let err =
        store.approvals().decide(&approver, approval, Decision::Approve, "ok", Some("Initech"), |_, _| Vec::new());
    assert!(matches!(err, Err(StoreError::Invalid(_))));
    assert_eq!(store.approvals().get(&approver, approval).unwrap().status, ApprovalStatus::Pending);

    // The eligible approver decides; identity, time, reason and the state seen are recorded.
    let (decided, _) = store
        .approvals()
        .decide(&approver, approval, Decision::Approve, "cheapest within budget", Some("globex"), |_, _| Vec::new())
        .unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert_eq!(decided.decided_by, Some(approver.user()));
    assert_eq!(decided.decided_at, Some(store.clock().now()));
    assert_eq!(decided.reason.as_deref(), Some("cheapest within budget"));
    assert_eq!(decided.choice.as_deref(), Some("Globex"));
    assert_eq!(decided.state_seen, json!({ "amount": 9500 }));
    // What `decide` returns (built from the decision, not read back) is exactly what was stored.
    assert!(decided.decided_by_name.is_some());
    assert_eq!(decided, store.approvals().get(&approver, approval).unwrap());
    // A decision is made once.
    let again =
        store.approvals().decide(&approver, approval, Decision::Reject, "changed my mind", None, |_, _| Vec::new());
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    // Its code tells "already decided" apart from bad input.
    assert_eq!(again.unwrap_err().code(), pactwise_domain::ErrorCode::Conflict);
    // The run was woken.
    assert_eq!(store.runs().get(&buyer, run).unwrap().status, RunStatus::Running);
    let audit = store.audit().list(&approver).unwrap();
    let entry = audit.iter().find(|e| e.action == "approval_decided").unwrap();
    assert_eq!(entry.actor, Some(approver.user()));
}

#[test]
fn the_store_decides_who_may_approve_with_the_same_rule_as_the_sync_service() {
    // `pactwise_rules::approval::may_decide` is the one rule; the service stamps offline requests with it. Every
    // role against a report sign-off (open to reviewers) and a purchase approval (not): the store agrees.
    use pactwise_rules::approval::{Decider, Step, may_decide};
    let sign_off = vec![Role::Owner, Role::Admin, Role::Reviewer];
    for role in Role::ALL {
        let (store, cred) = Store::open_in_memory(clock()).unwrap().into_platform_worker("test-worker").into_parts();
        let acme = org(&store, "Acme");
        let starter = member(&store, acme, "Starter", Role::Buyer);
        let decider = member(&store, acme, "Decider", role);
        run_with_approvals(
            &store,
            &cred,
            &starter,
            &[("sign_off", sign_off.clone(), false), ("purchase", approvers(), false)],
        );
        let owner = member(&store, acme, "Owner", Role::Owner);
        for approval in store.approvals().inbox(&owner).unwrap() {
            let rule = may_decide(
                &Step { eligible_roles: &approval.eligible_roles, four_eyes: false, decided: false },
                &Decider { role, decided_another_step_of_the_run: false, started_the_run: false },
            );
            let decided =
                store
                    .approvals()
                    .decide(&decider, approval.id, Decision::Approve, "ok", Some("Globex"), |_, _| Vec::new());
            assert_eq!(decided.is_ok(), rule.is_ok(), "{role} on {}: {decided:?}", approval.node);
            if rule.is_err() {
                assert!(matches!(decided, Err(StoreError::Forbidden { .. })), "{decided:?}");
            }
        }
    }
}

#[test]
fn the_database_refuses_a_forged_approver_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite3");
    let store = Store::open(&path, clock()).unwrap();
    let (store, cred) = store.into_platform_worker("test-worker").into_parts();
    let (acme, globex) = (org(&store, "Acme"), org(&store, "Globex"));
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let other_org_approver = member(&store, globex, "Elsewhere", Role::Approver);
    run_with_approvals(&store, &cred, &buyer, &[("gate", approvers(), false)]);
    let approval = store.approvals().inbox(&member(&store, acme, "A", Role::Approver)).unwrap()[0].id;

    // Even raw SQL cannot stamp a decision with a made-up user, another organization's approver, or a buyer.
    let raw = rusqlite::Connection::open(&path).unwrap();
    for forged in [pactwise_domain::UserId::new(), other_org_approver.user(), buyer.user()] {
        let err = raw
            .execute(
                "UPDATE engine_approvals SET status = 'approved', decided_by = ?1, decided_at = 'now', reason = 'x'
                 WHERE id = ?2",
                rusqlite::params![forged.to_string(), approval.to_string()],
            )
            .unwrap_err();
        assert!(err.to_string().contains("not an eligible approver"), "{err}");
    }
    let status: String = raw
        .query_row("SELECT status FROM engine_approvals WHERE id = ?1", [approval.to_string()], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "pending");
}

#[test]
fn four_eyes_stops_one_person_deciding_two_steps_of_a_run() {
    let store = Store::open_in_memory(clock()).unwrap();
    let (store, cred) = store.into_platform_worker("test-worker").into_parts();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let first = member(&store, acme, "First", Role::Approver);
    let second = member(&store, acme, "Second", Role::Admin);
    run_with_approvals(&store, &cred, &buyer, &[("legal", approvers(), true), ("finance", approvers(), true)]);
    let inbox = store.approvals().inbox(&first).unwrap();
    assert_eq!(inbox.len(), 2);
    store.approvals().decide(&first, inbox[0].id, Decision::Approve, "fine", Some("Acme"), |_, _| Vec::new()).unwrap();
    let err =
        store.approvals().decide(&first, inbox[1].id, Decision::Approve, "fine too", Some("Acme"), |_, _| Vec::new());
    assert!(matches!(err, Err(StoreError::FourEyes)), "{err:?}");
    store
        .approvals()
        .decide(&second, inbox[1].id, Decision::Approve, "agreed", Some("Acme"), |_, _| Vec::new())
        .unwrap();
}

#[test]
fn an_approval_escalates_exactly_once_and_escalation_never_decides() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let (store, cred) = store.into_platform_worker("test-worker").into_parts();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let approver = member(&store, acme, "Approver", Role::Approver);
    run_with_approvals(&store, &cred, &buyer, &[("gate", approvers(), false)]);

    assert_eq!(store.runs().sweep(&cred, SweepPolicy::default(), &mut |_, _| None).unwrap().escalated_approvals, 0);
    clock.advance(Duration::hours(25));
    assert_eq!(store.runs().sweep(&cred, SweepPolicy::default(), &mut |_, _| None).unwrap().escalated_approvals, 1);
    clock.advance(Duration::hours(25));
    assert_eq!(store.runs().sweep(&cred, SweepPolicy::default(), &mut |_, _| None).unwrap().escalated_approvals, 0);
    assert_eq!(store.approvals().escalate_due(&cred).unwrap(), 0);

    let urgent: Vec<_> = store.approvals().notifications(&approver).unwrap().into_iter().filter(|n| n.urgent).collect();
    assert_eq!(urgent.len(), 1);
    assert_eq!(urgent[0].kind, "urgent_escalation");
    let approval = &store.approvals().inbox(&approver).unwrap()[0];
    assert_eq!(approval.status, ApprovalStatus::Pending);
    assert!(approval.escalated_at.is_some() && approval.decided_by.is_none());
}

#[test]
fn a_repeated_or_stale_commit_changes_nothing() {
    let store = Store::open_in_memory(clock()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let (store, cred) = store.into_platform_worker("w1").into_parts();
    let run = NewRun::in_scope(&buyer, "test", 1, "{}".into(), "{}".into());
    let id = run.id();
    let first = StepCommit::new(id, 0, 1, RunStatus::Running, "{}".into());
    store.runs().commit(&cred, &[RunWrite::Start { run, step: first }], Duration::seconds(30)).unwrap();
    let mut step = StepCommit::new(id, 1, 2, RunStatus::Running, "{\"n\":2}".into());
    step.handoffs.push(NewHandoff {
        idempotency_key: format!("{id}/s1/a/0"),
        node: "a".into(),
        agent_type: "notifications".into(),
        priority: 1,
        payload: json!({}),
        scheduled_at: None,
    });
    let batch = [RunWrite::Step(step.clone()), RunWrite::Step(step)];
    let applied = store.runs().commit(&cred, &batch, Duration::seconds(30)).unwrap();
    assert_eq!(applied, vec![Applied::Yes { revision: 2 }, Applied::Stale]);
    assert_eq!(store.runs().checkpoints(&buyer, id).unwrap().len(), 2);
    assert_eq!(store.tasks().for_run(&buyer, id).unwrap().len(), 1);

    // Another worker cannot commit while the lease is live.
    let other = cred.for_worker("w2");
    let step = StepCommit::new(id, 2, 3, RunStatus::Running, "{}".into());
    assert_eq!(
        store.runs().commit(&other, &[RunWrite::Step(step)], Duration::seconds(30)).unwrap(),
        vec![Applied::Stale]
    );
}

#[test]
fn organizations_see_only_their_own_runs_approvals_and_tasks() {
    let store = Store::open_in_memory(clock()).unwrap();
    let (store, cred) = store.into_platform_worker("test-worker").into_parts();
    let (acme, globex) = (org(&store, "Acme"), org(&store, "Globex"));
    let a = member(&store, acme, "A", Role::Owner);
    let b = member(&store, globex, "B", Role::Owner);
    let run = run_with_approvals(&store, &cred, &a, &[("gate", approvers(), false)]);
    store
        .tasks()
        .enqueue(
            &a,
            &NewTask {
                idempotency_key: "k".into(),
                agent_type: "legal".into(),
                priority: 0,
                payload: json!({}),
                scheduled_at: None,
            },
        )
        .unwrap();
    assert!(matches!(store.runs().get(&b, run), Err(StoreError::NotFound)));
    assert!(matches!(store.runs().events(&b, run), Err(StoreError::NotFound)));
    assert!(matches!(store.runs().checkpoints(&b, run), Err(StoreError::NotFound)));
    assert!(matches!(store.runs().cancel(&b, run, "no"), Err(StoreError::NotFound)));
    assert!(store.runs().list(&b, 100).unwrap().is_empty());
    assert!(store.approvals().inbox(&b).unwrap().is_empty());
    assert!(store.approvals().for_run(&b, run).unwrap().is_empty());
    assert!(store.approvals().notifications(&b).unwrap().is_empty());
    assert!(store.tasks().list(&b).unwrap().is_empty());
    assert_eq!(store.runs().list(&a, 100).unwrap().len(), 1);
    assert_eq!(store.tasks().list(&a).unwrap().len(), 1);
}

#[test]
fn claims_take_the_highest_priority_then_the_oldest_and_respect_scheduled_starts() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let a = member(&store, acme, "A", Role::Owner);
    let (store, cred) = store.into_platform_worker("w").into_parts();
    let task = |key: &str, priority: i64, later: Option<i64>| NewTask {
        idempotency_key: key.into(),
        agent_type: "legal".into(),
        priority,
        payload: json!({ "key": key }),
        scheduled_at: later.map(|h| clock.now() + Duration::hours(h)),
    };
    store.tasks().enqueue(&a, &task("low-old", 1, None)).unwrap();
    clock.advance(Duration::seconds(1));
    store.tasks().enqueue(&a, &task("high", 5, None)).unwrap();
    clock.advance(Duration::seconds(1));
    store.tasks().enqueue(&a, &task("low-new", 1, None)).unwrap();
    store.tasks().enqueue(&a, &task("future", 9, Some(2))).unwrap();
    // The same key again is the same task.
    assert_eq!(store.tasks().enqueue(&a, &task("high", 5, None)).unwrap().priority, 5);
    assert_eq!(store.tasks().list(&a).unwrap().len(), 4);

    let order: Vec<String> = (0..3)
        .map(|_| store.tasks().claim(&cred, None, 1, Duration::minutes(5)).unwrap()[0].idempotency_key.clone())
        .collect();
    assert_eq!(order, ["high", "low-old", "low-new"]);
    assert!(store.tasks().claim(&cred, None, 10, Duration::minutes(5)).unwrap().is_empty());
    clock.advance(Duration::hours(3));
    let due = store.tasks().claim(&cred, None, 10, Duration::minutes(5)).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].status, TaskStatus::Processing);
}

#[test]
fn the_health_check_flags_failing_agent_types_and_large_backlogs() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let a = member(&store, acme, "A", Role::Owner);
    let (store, cred) = store.into_platform_worker("w").into_parts();
    for i in 0..5 {
        let t = NewTask {
            idempotency_key: format!("ocr-{i}"),
            agent_type: "ocr".into(),
            priority: 0,
            payload: json!({}),
            scheduled_at: None,
        };
        store.tasks().enqueue(&a, &t).unwrap();
    }
    for i in 0..4 {
        let t = NewTask {
            idempotency_key: format!("legal-{i}"),
            agent_type: "legal".into(),
            priority: 0,
            payload: json!({}),
            scheduled_at: None,
        };
        store.tasks().enqueue(&a, &t).unwrap();
    }
    for t in store.tasks().claim(&cred, Some("ocr"), 3, Duration::minutes(5)).unwrap() {
        store.tasks().fail(&cred, t.id, "engine crashed").unwrap();
    }
    let thresholds = HealthThresholds { failures_per_hour: 3, backlog: 4 };
    let health = store.tasks().health(&cred, thresholds).unwrap();
    assert_eq!(health.failing_agents.len(), 1);
    assert_eq!((health.failing_agents[0].agent_type.as_str(), health.failing_agents[0].failures_last_hour), ("ocr", 3));
    assert_eq!(health.backlogs.len(), 1);
    assert_eq!((health.backlogs[0].agent_type.as_str(), health.backlogs[0].pending), ("legal", 4));
    // An hour later the failures no longer count.
    clock.advance(Duration::minutes(61));
    assert!(store.tasks().health(&cred, thresholds).unwrap().failing_agents.is_empty());
}

const CLAIM_CHILD: &str = "PACTWISE_CLAIM_CHILD_DB";
const TASKS: usize = 1500;

/// Claims tasks one small batch at a time until none is left, telling `each` every id as it is claimed; returns
/// the ids claimed.
fn claim_all(store: Store, worker: &str, mut each: impl FnMut(&str)) -> Vec<String> {
    let (store, cred) = store.into_platform_worker(worker).into_parts();
    let mut mine = Vec::new();
    loop {
        let batch = store.tasks().claim(&cred, None, 3, Duration::minutes(5)).unwrap();
        if batch.is_empty() {
            return mine;
        }
        for t in batch {
            each(&t.id.to_string());
            mine.push(t.id.to_string());
        }
    }
}

/// Run as a child process by the test below: opens the store, says READY, waits for the go (a line on stdin),
/// claims and prints each id as soon as it has it.
#[test]
fn claim_child_process() {
    use std::io::Write;
    let Ok(path) = std::env::var(CLAIM_CHILD) else { return };
    let worker = std::env::var("PACTWISE_CLAIM_WORKER").unwrap();
    let store = Store::open(Path::new(&path), Arc::new(pactwise_domain::SystemClock)).unwrap();
    println!("\nREADY");
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let mut out = std::io::stdout();
    claim_all(store, &worker, |id| {
        writeln!(out, "CLAIMED {id}").unwrap();
        out.flush().unwrap();
    });
}

#[test]
fn every_task_is_claimed_exactly_once_by_concurrent_threads_and_processes() {
    use std::io::{BufRead, BufReader, Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.sqlite3");
    let store = Store::open(&path, Arc::new(pactwise_domain::SystemClock)).unwrap();
    let acme = org(&store, "Acme");
    let a = member(&store, acme, "A", Role::Owner);
    for i in 0..TASKS {
        let t = NewTask {
            idempotency_key: format!("t{i}"),
            agent_type: "vendor".into(),
            priority: (i % 7) as i64,
            payload: json!({}),
            scheduled_at: None,
        };
        store.tasks().enqueue(&a, &t).unwrap();
    }
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = (0..3)
        .map(|i| {
            std::process::Command::new(&exe)
                .args(["--exact", "claim_child_process", "--nocapture", "--test-threads", "1"])
                .env(CLAIM_CHILD, &path)
                .env("PACTWISE_CLAIM_WORKER", format!("process-{i}"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Every process has opened the store before anyone claims.
    let mut readers: Vec<_> = children.iter_mut().map(|c| BufReader::new(c.stdout.take().unwrap())).collect();
    for reader in &mut readers {
        let mut line = String::new();
        while !line.contains("READY") {
            line.clear();
            assert!(reader.read_line(&mut line).unwrap() > 0, "a child process ended before it was ready");
        }
    }
    for child in &mut children {
        writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
    }
    // The threads start once every process has claimed its first task (or ended with none), so the processes
    // take part even when this machine is slow to schedule them; they all keep claiming alongside the threads.
    let mut claimed: Vec<String> = Vec::new();
    let mut by_processes = 0;
    for reader in &mut readers {
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap() > 0 {
            if let Some((_, id)) = line.split_once("CLAIMED ") {
                claimed.push(id.trim().to_string());
                by_processes += 1;
                break;
            }
            line.clear();
        }
    }
    let threads: Vec<_> = (0..3)
        .map(|i| {
            let path = path.clone();
            std::thread::spawn(move || {
                let store = Store::open(&path, Arc::new(pactwise_domain::SystemClock)).unwrap();
                claim_all(store, &format!("thread-{i}"), |_| {})
            })
        })
        .collect();
    claimed.extend(threads.into_iter().flat_map(|t| t.join().unwrap()));
    for (mut child, mut reader) in children.into_iter().zip(readers) {
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert!(child.wait().unwrap().success());
        let ids: Vec<String> =
            text.lines().filter_map(|l| l.split_once("CLAIMED ")).map(|(_, id)| id.trim().to_string()).collect();
        by_processes += ids.len();
        claimed.extend(ids);
    }
    let total = claimed.len();
    claimed.sort();
    claimed.dedup();
    assert_eq!(total, TASKS, "every task claimed once, none twice");
    assert_eq!(claimed.len(), TASKS);
    assert!(by_processes > 0, "the child processes claimed nothing; the test did not exercise them");
    let tasks = store.tasks().list(&a).unwrap();
    assert!(tasks.iter().all(|t| t.status == TaskStatus::Processing && t.claimed_by.is_some()));
}

#[test]
fn an_organizations_health_check_counts_only_its_own_tasks() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let globex = org(&store, "Globex");
    let a = member(&store, acme, "A", Role::Owner);
    let g = member(&store, globex, "G", Role::Admin);
    let g_reviewer = member(&store, globex, "R", Role::Reviewer);
    let (store, cred) = store.into_platform_worker("w").into_parts();
    // Claimed first (by priority): five of Globex's OCR tasks, then Acme's one; all six fail. Globex's last four
    // stay pending.
    for (scope, prefix, n, priority) in [(&g, "g-failing", 5, 10), (&a, "a", 1, 5), (&g, "g-waiting", 4, 0)] {
        for i in 0..n {
            let t = NewTask {
                idempotency_key: format!("{prefix}-{i}"),
                agent_type: "ocr".into(),
                priority,
                payload: json!({}),
                scheduled_at: None,
            };
            store.tasks().enqueue(scope, &t).unwrap();
        }
    }
    let claimed = store.tasks().claim(&cred, Some("ocr"), 6, Duration::minutes(5)).unwrap();
    assert_eq!(claimed.iter().filter(|t| t.org == acme).count(), 1);
    for t in claimed {
        store.tasks().fail(&cred, t.id, "engine crashed").unwrap();
    }
    let thresholds = HealthThresholds { failures_per_hour: 2, backlog: 3 };
    for scope in [&a, &g] {
        store.settings().set(scope, QUEUE_HEALTH_SETTING, &thresholds).unwrap();
    }
    let acme_health = store.tasks().health_of(&a).unwrap();
    assert!(acme_health.failing_agents.is_empty(), "Globex's failures never count for Acme: {acme_health:?}");
    assert!(acme_health.backlogs.is_empty(), "Globex's backlog is not Acme's: {acme_health:?}");
    assert!(acme_health.is_healthy());
    let globex_health = store.tasks().health_of(&g).unwrap();
    assert_eq!(globex_health.failing_agents.len(), 1);
    assert_eq!(globex_health.failing_agents[0].failures_last_hour, 5, "only Globex's own failures");
    assert!(globex_health.backlogs.iter().all(|b| b.org == globex));
    // The platform still sees every organization; a reviewer sees nothing.
    assert_eq!(store.tasks().health(&cred, thresholds).unwrap().failing_agents[0].failures_last_hour, 6);
    assert!(matches!(store.tasks().health_of(&g_reviewer), Err(StoreError::Forbidden { .. })));
}

#[test]
fn health_thresholds_are_each_organizations_own_validated_setting() {
    let clock = clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let globex = org(&store, "Globex");
    let a = member(&store, acme, "A", Role::Owner);
    let g = member(&store, globex, "G", Role::Owner);
    let a_reviewer = member(&store, acme, "R", Role::Reviewer);
    let (store, cred) = store.into_platform_worker("w").into_parts();
    // Each organization: three pending legal tasks and two failed OCR tasks in the last hour.
    for (scope, prefix) in [(&a, "a"), (&g, "g")] {
        for (kind, n) in [("ocr", 2), ("legal", 3)] {
            for i in 0..n {
                let t = NewTask {
                    idempotency_key: format!("{prefix}-{kind}-{i}"),
                    agent_type: kind.into(),
                    priority: if kind == "ocr" { 10 } else { 0 },
                    payload: json!({}),
                    scheduled_at: None,
                };
                store.tasks().enqueue(scope, &t).unwrap();
            }
        }
    }
    for t in store.tasks().claim(&cred, Some("ocr"), 4, Duration::minutes(5)).unwrap() {
        store.tasks().fail(&cred, t.id, "engine crashed").unwrap();
    }
    // Unset: the defaults (10 failures, 100 pending) flag nothing.
    assert_eq!(store.tasks().health_thresholds(&a).unwrap(), HealthThresholds::default());
    assert!(store.tasks().health_of(&a).unwrap().is_healthy());

    // Acme lowers its thresholds; Globex keeps the defaults.
    store.settings().set(&a, QUEUE_HEALTH_SETTING, &json!({"failures_per_hour": 2, "backlog": 3})).unwrap();
    let acme = store.tasks().health_of(&a).unwrap();
    assert_eq!(
        acme.failing_agents.iter().map(|f| (f.agent_type.as_str(), f.failures_last_hour)).collect::<Vec<_>>(),
        [("ocr", 2)]
    );
    assert_eq!(acme.backlogs.iter().map(|b| (b.agent_type.as_str(), b.pending)).collect::<Vec<_>>(), [("legal", 3)]);
    assert!(store.tasks().health_of(&g).unwrap().is_healthy(), "Acme's setting is not Globex's");

    // A value that would flag every queue, or is not a whole number, is refused with the reason and changes nothing.
    for bad in [json!({"backlog": 0}), json!({"failures_per_hour": 1.5}), json!({"pending": 5}), json!("low")] {
        let e = store.settings().set(&a, QUEUE_HEALTH_SETTING, &bad).unwrap_err();
        assert!(matches!(e, StoreError::Invalid(_)), "{bad}: {e:?}");
    }
    assert_eq!(store.tasks().health_thresholds(&a).unwrap(), HealthThresholds { failures_per_hour: 2, backlog: 3 });
    // Only owners and admins change it.
    let e = store.settings().set(&a_reviewer, QUEUE_HEALTH_SETTING, &json!({"backlog": 50})).unwrap_err();
    assert!(matches!(e, StoreError::Forbidden { .. }), "{e:?}");
}
