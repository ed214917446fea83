//! Drafting through the gateway against the fake server: critic cycles with downstream re-runs, budget pause and
//! resume, refusal and truncation, prompt hashes on traces and artifacts, grounding warnings and the exclusion of
//! competitors' bid text, untrusted fences and the cached system prompt.

mod support;

use chrono::{DateTime, Utc};
use pactwise_domain::{Clock, ErrorCode, Role};
use pactwise_model::fake::{FakeReply, FakeRule, FakeScript};
use pactwise_prep::*;
use pactwise_store::{NewPassage, NewPrecedent, Store};
use std::sync::Mutex;
use support::golden::{load_all, replay};
use support::*;

fn fixture(name: &str) -> support::golden::Fixture {
    load_all().unwrap().into_iter().find(|f| f.name == name).expect("fixture exists")
}

fn traced(traces: &[pactwise_store::prep::PrepTrace]) -> Vec<&str> {
    traces.iter().map(|t| t.artifact.as_str()).collect()
}

async fn run_fixture(
    name: &str,
    budget: Option<RunBudget>,
    clock: &dyn Clock,
) -> (Package, Vec<pactwise_store::prep::PrepTrace>, Model) {
    let f = fixture(name);
    let m = model(f.script.clone(), support::clock()).await;
    let store = Store::open_in_memory(m.clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Ana", Role::Buyer);
    let grounding = Grounding::default();
    let mut p = Package::new(f.intake.clone());
    plan(&mut p, budget.unwrap_or(f.budget));
    let drafter = Drafter { model: &m.client, ctx: ctx(&buyer), clock, grounding: &grounding };
    let traces = drafter.run(&mut p).await;
    (p, traces, m)
}

#[tokio::test]
async fn a_blocker_re_runs_its_artifact_and_everything_downstream_then_the_critic_converges() {
    let clock = support::clock();
    let (p, traces, _m) = run_fixture("fleet-telematics", None, clock.as_ref()).await;
    assert_eq!(p.run.status, RunStatus::Done, "{:?}", p.run);
    assert_eq!(
        traced(&traces),
        [
            "scope",
            "requirements",
            "criteria",
            "pricing",
            "milestones",
            "critic",
            // The blocker targeted the requirements: they and everything downstream ran again, then the critic.
            "requirements",
            "criteria",
            "pricing",
            "milestones",
            "critic"
        ]
    );
    assert_eq!(p.run.critic_cycles, 2);
    assert_eq!(p.run.converged_at_cycle, Some(2));
    let statuses: Vec<(u32, Severity, FindingStatus)> =
        p.findings.iter().map(|f| (f.cycle, f.severity, f.status)).collect();
    assert_eq!(
        statuses,
        [
            (1, Severity::Blocker, FindingStatus::ReRun),
            (1, Severity::Minor, FindingStatus::AwaitingBuyer),
            (2, Severity::Minor, FindingStatus::AwaitingBuyer)
        ]
    );
    // The buyer dismisses a minor finding with a reason; nothing else changes. A finding already acted on, one
    // that does not exist, and a dismissal without a reason are refused.
    let mut dismissed = p.clone();
    assert_eq!(dismissed.dismiss_finding(0, "no"), Err(DismissError::Closed));
    assert_eq!(dismissed.dismiss_finding(1, "  "), Err(DismissError::NoReason));
    assert_eq!(dismissed.dismiss_finding(9, "no"), Err(DismissError::NoSuchFinding(9)));
    dismissed.dismiss_finding(1, "Our standard terms already cover this.").unwrap();
    assert_eq!(dismissed.findings[1].status, FindingStatus::Dismissed);
    assert_eq!(dismissed.findings[1].dismissal.as_deref(), Some("Our standard terms already cover this."));
    assert_eq!(dismissed.dismiss_finding(1, "again"), Err(DismissError::Closed));
    assert_eq!(dismissed.artifacts, p.artifacts);
    assert_eq!(dismissed.findings[2], p.findings[2]);
    // The re-drafted requirement no longer names a brand.
    let r01 = &p.artifacts.requirements.content.as_ref().unwrap().items[0];
    assert!(!r01.text.contains("VendorX"), "{r01:?}");
    for kind in &ArtifactKind::ALL[1..] {
        assert_eq!(p.state(*kind).name(), "valid", "{kind:?}: {:?}", p.state(*kind));
    }
}

#[tokio::test]
async fn progress_is_reported_before_every_step_including_the_steps_a_blocker_adds() {
    let f = fixture("fleet-telematics");
    let m = model(f.script.clone(), support::clock()).await;
    let store = Store::open_in_memory(m.clock.clone()).unwrap();
    let acme = org(&store, "Acme");
    let buyer = member(&store, acme, "Ana", Role::Buyer);
    let grounding = Grounding::default();
    let mut p = Package::new(f.intake.clone());
    plan(&mut p, f.budget);
    let seen = Mutex::new(Vec::new());
    let drafter = Drafter { model: &m.client, ctx: ctx(&buyer), clock: m.clock.as_ref(), grounding: &grounding };
    let traces = drafter.run_with_progress(&mut p, &|progress| seen.lock().unwrap().push(progress)).await;
    let seen = seen.into_inner().unwrap();
    assert_eq!(p.run.status, RunStatus::Done);
    // One report per step, in the order the steps ran, each before its step (so with the spending so far).
    assert_eq!(seen.len(), traces.len());
    let steps: Vec<RunStep> = seen.iter().map(|s| s.step).collect();
    assert_eq!(steps[0], RunStep::Draft(ArtifactKind::Scope));
    assert_eq!(steps[5], RunStep::Critique);
    assert_eq!(steps[6], RunStep::Draft(ArtifactKind::Requirements), "the blocker's re-run is reported too");
    assert_eq!(seen.iter().map(|s| s.done).collect::<Vec<_>>(), (0..seen.len() as u32).collect::<Vec<_>>());
    // Six steps planned first; the blocker in cycle 1 adds four drafts and a critique.
    assert_eq!(seen[0].remaining, 6);
    assert_eq!(seen[6].remaining, 5);
    assert_eq!((seen[0].tokens_used, seen[0].cost_micros), (0, 0));
    assert!(seen.windows(2).all(|w| w[0].tokens_used <= w[1].tokens_used));
    assert_eq!(seen[6].critic_cycles, 1);
    assert!(seen.last().unwrap().tokens_used < p.run.tokens_used, "the last step's spending comes after its report");
    assert_eq!(seen[0].budget, f.budget);
}

#[tokio::test]
async fn the_critic_stops_after_three_cycles_and_leaves_what_remains_to_the_buyer() {
    let clock = support::clock();
    let (p, traces, _m) = run_fixture("it-service-desk", None, clock.as_ref()).await;
    assert_eq!(p.run.status, RunStatus::Done);
    assert_eq!(p.run.critic_cycles, MAX_CRITIC_CYCLES);
    assert_eq!(p.run.converged_at_cycle, None);
    assert_eq!(traces.iter().filter(|t| t.artifact == "critic").count(), 3);
    // Pricing targeted: pricing and milestones re-run twice; scope..criteria drafted once.
    assert_eq!(traces.iter().filter(|t| t.artifact == "pricing").count(), 3);
    assert_eq!(traces.iter().filter(|t| t.artifact == "requirements").count(), 1);
    let last: Vec<FindingStatus> = p.findings.iter().filter(|f| f.cycle == 3).map(|f| f.status).collect();
    assert_eq!(last, [FindingStatus::Unresolved]);
    assert!(matches!(p.state(ArtifactKind::Criteria), ArtifactState::Invalid { .. }));
}

/// A clock that moves 40 seconds every time it is read.
struct TickingClock(Mutex<DateTime<Utc>>);
impl Clock for TickingClock {
    fn now(&self) -> DateTime<Utc> {
        let mut t = self.0.lock().unwrap();
        *t += chrono::Duration::seconds(40);
        *t
    }
}

#[tokio::test]
async fn budgets_pause_the_run_before_overspending_and_resume_finishes_the_same_draft() {
    let clock = support::clock();
    let (reference, ref_traces, _m) = run_fixture("fleet-telematics", None, clock.as_ref()).await;
    let total_cost = reference.run.cost_micros;
    let total_tokens = reference.run.tokens_used;

    for (budget, reason) in [
        (RunBudget { max_cost_micros: total_cost / 2, ..RunBudget::default() }, "cost budget"),
        (RunBudget { max_tokens: total_tokens / 3, ..RunBudget::default() }, "token budget"),
    ] {
        let f = fixture("fleet-telematics");
        let m = model(f.script.clone(), support::clock()).await;
        let store = Store::open_in_memory(m.clock.clone()).unwrap();
        let buyer = member(&store, org(&store, "Acme"), "Ana", Role::Buyer);
        let grounding = Grounding::default();
        let mut p = Package::new(f.intake.clone());
        plan(&mut p, budget);
        let drafter = Drafter { model: &m.client, ctx: ctx(&buyer), clock: clock.as_ref(), grounding: &grounding };
        let first = drafter.run(&mut p).await;
        assert_eq!(p.run.status, RunStatus::Paused);
        assert!(p.run.pause_reason.as_deref().unwrap().starts_with(reason), "{:?}", p.run.pause_reason);
        assert!(p.run.cost_micros <= budget.max_cost_micros && p.run.tokens_used <= budget.max_tokens, "{:?}", p.run);
        assert!(!first.is_empty() && first.len() < ref_traces.len());
        // Nothing runs while paused.
        assert!(drafter.run(&mut p).await.is_empty());
        // Resume with the default budget: the rest of the queue runs and the draft is the same.
        assert!(resume(&mut p, Some(RunBudget::default())));
        let rest = drafter.run(&mut p).await;
        assert_eq!(p.run.status, RunStatus::Done);
        assert_eq!(first.len() + rest.len(), ref_traces.len());
        assert_eq!(p.artifacts, reference.artifacts);
    }

    // The time budget is per run: 40 s per clock read, 200 s allowed.
    let ticking = TickingClock(Mutex::new(Utc::now()));
    let budget = RunBudget { max_seconds: 200, ..RunBudget::default() };
    let (mut p, first, m) = run_fixture("fleet-telematics", Some(budget), &ticking).await;
    assert_eq!(p.run.status, RunStatus::Paused);
    assert!(p.run.pause_reason.as_deref().unwrap().starts_with("time budget"), "{:?}", p.run.pause_reason);
    let mut runs = 1;
    let store = Store::open_in_memory(m.clock.clone()).unwrap();
    let buyer = member(&store, org(&store, "Acme"), "Ana", Role::Buyer);
    let grounding = Grounding::default();
    let drafter = Drafter { model: &m.client, ctx: ctx(&buyer), clock: &ticking, grounding: &grounding };
    let mut total = first.len();
    while p.run.status == RunStatus::Paused && runs < 20 {
        assert!(resume(&mut p, None));
        total += drafter.run(&mut p).await.len();
        runs += 1;
    }
    assert_eq!(p.run.status, RunStatus::Done);
    assert!(runs > 1);
    assert_eq!(total, ref_traces.len());
}

async fn single_step(reply: FakeReply) -> (Package, Package, Vec<pactwise_store::prep::PrepTrace>) {
    let script = FakeScript { rules: vec![FakeRule::new("TASK=draft_scope", reply)], ..FakeScript::default() };
    let m = model(script, support::clock()).await;
    let store = Store::open_in_memory(m.clock.clone()).unwrap();
    let buyer = member(&store, org(&store, "Acme"), "Ana", Role::Buyer);
    let before = approved_package();
    let mut p = before.clone();
    plan(&mut p, RunBudget::default());
    p.run.queue = vec![RunStep::Draft(ArtifactKind::Scope)];
    let grounding = Grounding::default();
    let drafter = Drafter { model: &m.client, ctx: ctx(&buyer), clock: m.clock.as_ref(), grounding: &grounding };
    let traces = drafter.run(&mut p).await;
    (before, p, traces)
}

#[tokio::test]
async fn a_refused_or_truncated_draft_leaves_the_artifact_as_it_was_with_the_error_shown() {
    for (reply, code) in [
        (FakeReply::refusal("I can't help with that."), ErrorCode::ModelRefused),
        (FakeReply::max_tokens("{\"summary\": \"Tele"), ErrorCode::ModelTruncated),
        (FakeReply::forced_tool(serde_json::json!({"summary": 5})), ErrorCode::ModelInvalidOutput),
    ] {
        let (before, after, traces) = single_step(reply).await;
        assert_eq!(after.artifacts.scope.content, before.artifacts.scope.content, "{code:?}");
        assert_eq!(after.state(ArtifactKind::Scope), before.state(ArtifactKind::Scope), "still approved: {code:?}");
        assert_eq!(after.artifacts.scope.content_hash, before.artifacts.scope.content_hash);
        // Nothing downstream went stale: nothing changed.
        for kind in ArtifactKind::ALL {
            assert!(after.state(kind).is_approved(), "{kind:?} after {code:?}");
        }
        assert_eq!(after.artifacts.scope.error.as_ref().unwrap().code, code);
        assert_eq!(after.run.status, RunStatus::Failed);
        assert_eq!(after.run.error.as_ref().unwrap().code, code);
        assert_eq!(after.run.queue, [RunStep::Draft(ArtifactKind::Scope)], "resumable");
        let last = traces.last().unwrap();
        assert_eq!(last.outcome, code.as_str());
        assert_eq!(last.prompt_hash, prompts::for_artifact(ArtifactKind::Scope).hash);
        assert_eq!(traces.len(), 1, "one gateway call (its corrective re-asks are inside it)");
    }
}

#[tokio::test]
async fn prompt_hashes_are_stamped_on_every_trace_and_artifact_and_kept_in_the_store() {
    let clock = support::clock();
    let (p, traces, m) = run_fixture("office-cleaning", None, clock.as_ref()).await;
    assert_eq!(p.run.status, RunStatus::Done);
    assert_eq!(traced(&traces), ["intake", "scope", "requirements", "criteria", "pricing", "milestones", "critic"]);
    for t in &traces {
        let module = prompts::modules().into_iter().find(|x| x.name == t.prompt_module).unwrap();
        assert_eq!((t.prompt_hash.as_str(), t.prompt_version), (module.hash.as_str(), module.version));
    }
    for kind in ArtifactKind::ALL {
        let stamp = p.artifacts.view(kind).prompt.expect("drafted by a module");
        assert_eq!(stamp.hash, prompts::for_artifact(kind).hash, "{kind:?}");
    }
    let store = Store::open_in_memory(m.clock.clone()).unwrap();
    let buyer = member(&store, org(&store, "Acme"), "Ana", Role::Buyer);
    let id = store.prep().create(&buyer, &p.title, &p.to_json(), chrono::Duration::minutes(5)).unwrap();
    store.prep().record_traces(&buyer, &id, &traces).unwrap();
    let stored = store.prep().traces(&buyer, &id).unwrap();
    assert_eq!(
        stored.iter().map(|t| &t.prompt_hash).collect::<Vec<_>>(),
        traces.iter().map(|t| &t.prompt_hash).collect::<Vec<_>>()
    );
    let reloaded: Package = serde_json::from_value(store.prep().get(&buyer, &id).unwrap().package).unwrap();
    assert_eq!(reloaded, p);

    // Every request: the system prompt is the module's text with a cache marker; buyer input is fenced.
    for request in m.server.message_requests() {
        let system = &request.body["system"][0];
        assert!(system["cache_control"].is_object());
        assert!(prompts::modules().iter().any(|x| x.text == system["text"].as_str().unwrap()));
        let first = request.body["messages"][0]["content"][0]["text"].as_str().unwrap();
        assert!(first.starts_with("<document title=\"") && first.contains("trust=\"untrusted\""), "{first}");
        // Thinking at the model's default (no `thinking` field), so the one tool is offered, not forced.
        assert!(request.body.get("thinking").is_none(), "{}", request.body["thinking"]);
        assert_eq!(request.body["tool_choice"], serde_json::json!({"type": "auto", "disable_parallel_tool_use": true}));
        assert_eq!(request.body["tools"].as_array().unwrap().len(), 1);
    }
    // Milestone dates come from code: the schema the model got has no date field.
    let milestone_request = m
        .server
        .message_requests()
        .into_iter()
        .find(|r| r.body["tools"][0]["name"] == "record_milestone_rationales")
        .unwrap();
    assert!(!milestone_request.body["tools"][0]["input_schema"].to_string().contains("\"date\""));
    let intake = p.artifacts.intake.content.clone().unwrap();
    let dates: Vec<_> = p.artifacts.milestones.content.unwrap().items.iter().map(|m| (m.kind, m.date)).collect();
    assert_eq!(dates, milestone_dates(&intake));
}

#[tokio::test]
async fn grounding_excludes_competitors_bid_text_and_shows_failed_retrieval_as_a_warning() {
    let clock = support::clock();
    let store = Store::open_in_memory(clock.clone()).unwrap();
    let passage = |text: &str| NewPassage { page: 1, start: 0, end: text.chars().count() as u32, text: text.into() };
    for (id, text) in [
        ("public.telematics", "Model clause: telematics devices report vehicle positions every thirty seconds."),
        ("rival.bid", "Our telematics bid: VendorX positions every five seconds at 12 EUR per vehicle."),
    ] {
        store
            .passages()
            .put_precedent(&NewPrecedent {
                id: id.into(),
                title: id.into(),
                source: "test".into(),
                license: "test".into(),
                origin: "imported".into(),
                content_hash: format!("{:064}", id.len()),
                passages: vec![passage(text)],
            })
            .unwrap();
    }
    store.prep().set_precedent_provenance("rival.bid", true).unwrap();
    let mut i = intake();
    i.checklist_type = Some("saas".into());
    let catalog = pactwise_checklists::Catalog::load().unwrap();
    let g = grounding::gather(&store, &pactwise_retrieval::Retriever::words_only(), Ok(&catalog), &i);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
    let precedents = g.precedents.as_ref().unwrap().text.clone();
    assert!(precedents.contains("thirty seconds"));
    assert!(!precedents.contains("VendorX"), "competitor text must never be retrieved");
    assert!(g.checklist.as_ref().unwrap().text.contains("saas"));

    // Unknown type and a library that failed to load: visible warnings, drafting goes on without them.
    i.checklist_type = Some("no_such_type".into());
    let g = grounding::gather(&store, &pactwise_retrieval::Retriever::words_only(), Ok(&catalog), &i);
    assert!(g.warnings[0].contains("no contract type \"no_such_type\""), "{:?}", g.warnings);
    i.checklist_type = Some("saas".into());
    let g = grounding::gather(&store, &pactwise_retrieval::Retriever::words_only(), Err("disk error".into()), &i);
    assert!(g.warnings[0].contains("could not be loaded (disk error)"), "{:?}", g.warnings);

    // The warnings reach the package the buyer sees.
    let f = fixture("office-cleaning");
    let result = replay(&f).await.unwrap();
    assert!(result.warnings.iter().any(|w| w.contains("cleaning_services")), "{:?}", result.warnings);
}

#[tokio::test]
async fn prep_studio_leaves_thinking_at_the_default_and_a_reply_without_its_tool_gets_a_corrective_re_ask() {
    let f = fixture("office-cleaning");
    let scope_reply = f.script.rules.iter().find(|r| r.when_contains == "TASK=draft_scope").unwrap().reply.clone();
    // The first answer talks instead of calling the tool (automatic tool choice allows it); the second calls it.
    let script = FakeScript {
        rules: vec![FakeRule {
            times: Some(1),
            ..FakeRule::new("TASK=draft_scope", FakeReply::text("The scope is ..."))
        }],
        replies: vec![scope_reply],
        ..FakeScript::default()
    };
    let m = model(script, support::clock()).await;
    let store = Store::open_in_memory(m.clock.clone()).unwrap();
    let buyer = member(&store, org(&store, "Acme"), "Ana", Role::Buyer);
    let mut p = approved_package();
    plan(&mut p, RunBudget::default());
    p.run.queue = vec![RunStep::Draft(ArtifactKind::Scope)];
    let grounding = Grounding::default();
    let drafter = Drafter { model: &m.client, ctx: ctx(&buyer), clock: m.clock.as_ref(), grounding: &grounding };
    let traces = drafter.run(&mut p).await;

    assert_eq!(traces.len(), 1);
    assert_eq!((traces[0].outcome.as_str(), traces[0].re_asks), ("ok", 1));
    assert!(p.artifacts.scope.content.as_ref().unwrap().summary.starts_with("Daily office cleaning"));
    let requests = m.server.message_requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.status, 200);
        assert!(request.body.get("thinking").is_none());
        assert_eq!(request.body["tool_choice"]["type"], "auto");
        assert_eq!(request.body["tools"].as_array().unwrap().len(), 1);
    }
    // The re-ask carries the first reply back, its thinking block first and unmodified, then asks for the tool.
    let messages = requests[1].body["messages"].as_array().unwrap();
    let reply = &messages[messages.len() - 2];
    assert_eq!(reply["role"], "assistant");
    assert_eq!(reply["content"][0]["type"], "thinking");
    assert!(reply["content"][0]["signature"].as_str().is_some_and(|s| !s.is_empty()));
    let ask = messages.last().unwrap()["content"][0]["text"].as_str().unwrap();
    assert!(ask.contains("did not call `record_scope`"), "{ask}");
}
