//! The plan's steps on the engine: the handlers `agents.<type>` a compiled plan names. Each reads the run's input
//! and the steps already done, skips itself when a step it depends on did not finish, runs the agent under the
//! organization's timeout (on its own thread: a step that hangs is reported and the run moves on), and writes its
//! output to the `steps` channel. A critical step's failure fails the run; any other's is written as failed, and
//! only its dependants skip. Follow-ups become handoffs to the task queue, keyed by what they are about, so the
//! same follow-up is never queued twice.

use crate::compile::{STEPS_CHANNEL, handler_name};
use crate::registry::AgentType;
use crate::steps::{RunInput, StepInput, StepOutput, StepStatus, run_step};
use crate::tasks::{ACTION, TaskPayload};
use chrono::{NaiveTime, TimeZone, Utc};
use pactwise_engine::{Handoff, NodeContext, NodeFailure, NodeOutput, Registry};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Runs one agent's step: the rule-based [`run_step`] in the app, something else in tests (a step that hangs).
pub type StepRunner = Arc<dyn Fn(AgentType, &StepInput<'_>) -> Result<StepOutput, String> + Send + Sync>;

/// The work did not finish in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedOut(pub Duration);

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.0.as_secs_f64();
        if secs >= 1.0 {
            write!(f, "it took longer than {} s and was stopped", self.0.as_secs())
        } else {
            write!(f, "it took longer than {} ms and was stopped", self.0.as_millis())
        }
    }
}

/// Runs `work` on its own thread and waits at most `limit`. Work that is still going then is left to end on its
/// own; its result is dropped, so a late answer changes nothing.
pub fn with_timeout<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TimedOut> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new().name("agent-work".into()).spawn(move || {
        let _ = tx.send(work());
    });
    if spawned.is_err() {
        return Err(TimedOut(Duration::ZERO));
    }
    rx.recv_timeout(limit).map_err(|_| TimedOut(limit))
}

/// Runs every job at once, each on its own thread, and waits at most `limit` for all of them together. Jobs still
/// going then are reported as timed out and left to end on their own (their results are dropped).
pub fn all_with_timeout<K, T: Send + 'static, F: FnOnce() -> T + Send + 'static>(
    limit: Duration,
    jobs: Vec<(K, F)>,
) -> Vec<(K, Result<T, TimedOut>)> {
    let deadline = std::time::Instant::now() + limit;
    let waiting: Vec<(K, Option<std::sync::mpsc::Receiver<T>>)> = jobs
        .into_iter()
        .map(|(key, job)| {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let spawned = std::thread::Builder::new().name("agent-task".into()).spawn(move || {
                let _ = tx.send(job());
            });
            (key, spawned.ok().map(|_| rx))
        })
        .collect();
    waiting
        .into_iter()
        .map(|(key, rx)| {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let result = rx.and_then(|rx| rx.recv_timeout(left).ok()).ok_or(TimedOut(limit));
            (key, result)
        })
        .collect()
}

/// Registers the ten agents' step handlers with the rule-based runner.
pub fn register(registry: &mut Registry) {
    register_with(registry, Arc::new(|agent, input: &StepInput<'_>| run_step(agent, input)));
}

/// Registers the step handlers with `runner` (tests give a runner that hangs or fails).
pub fn register_with(registry: &mut Registry, runner: StepRunner) {
    for agent in AgentType::ALL {
        if agent == AgentType::Manager {
            continue;
        }
        let runner = runner.clone();
        registry.handler(&handler_name(agent), move |ctx: &NodeContext<'_>| handle(agent, ctx, runner.clone()));
    }
}

fn earlier_of(ctx: &NodeContext<'_>) -> BTreeMap<AgentType, StepOutput> {
    let mut earlier = BTreeMap::new();
    if let Some(map) = ctx.channel(STEPS_CHANNEL).as_object() {
        for (id, v) in map {
            if let (Some(agent), Ok(out)) = (AgentType::from_id(id), serde_json::from_value::<StepOutput>(v.clone())) {
                earlier.insert(agent, out);
            }
        }
    }
    earlier
}

fn write(agent: AgentType, out: &StepOutput) -> NodeOutput {
    NodeOutput::default().write(STEPS_CHANNEL, serde_json::json!({ agent.id(): out }))
}

fn handle(agent: AgentType, ctx: &NodeContext<'_>, runner: StepRunner) -> Result<NodeOutput, NodeFailure> {
    let _span = tracing::info_span!("agents.node", agent = agent.id(), run = %ctx.run).entered();
    let input: RunInput = serde_json::from_value(ctx.input().clone())
        .map_err(|e| NodeFailure::Fatal(format!("the run's input is not a planned request ({e})")))?;
    let Some(step) = input.plan.steps.iter().find(|s| s.agent == agent).cloned() else {
        return Err(NodeFailure::Fatal(format!("{} is not a step of this plan", agent.name())));
    };
    let earlier = earlier_of(ctx);
    if let Some((dep, out)) =
        step.depends_on.iter().find_map(|d| earlier.get(d).filter(|o| o.status != StepStatus::Done).map(|o| (d, o)))
    {
        let why = format!("Skipped: {} did not finish ({}).", dep.name(), out.summary.trim_end_matches('.'));
        return Ok(write(agent, &StepOutput::not_run(agent, StepStatus::Skipped, why)));
    }
    let limit = Duration::from_secs(input.config.workers.timeout_secs.max(1) as u64);
    let critical = step.critical;
    let started = std::time::Instant::now();
    let result = {
        let (input, earlier) = (input.clone(), earlier.clone());
        with_timeout(limit, move || runner(agent, &StepInput { run: &input, earlier: &earlier }))
    };
    let result = match result {
        Ok(r) => r,
        Err(t) => Err(format!("{} did not answer: {t}", agent.name())),
    };
    let out = match result {
        Ok(out) => out,
        Err(why) if critical => {
            return Err(NodeFailure::Fatal(format!(
                "{} failed, and the plan cannot go on without it: {why}",
                agent.name()
            )));
        }
        Err(why) => StepOutput::not_run(agent, StepStatus::Failed, why),
    };
    let out = crate::draft::refine(ctx, &input, &earlier, out, limit.saturating_sub(started.elapsed()));
    let mut node = write(agent, &out);
    for f in &out.follow_ups {
        let key = if f.key.is_empty() { format!("notice/{}", ctx.run) } else { format!("follow-up/{}", f.key) };
        let payload = serde_json::to_value(TaskPayload::of(f, 1)).unwrap_or_default();
        debug_assert_eq!(payload["action"], ACTION);
        node = node.handoff(Handoff {
            agent_type: f.agent.id().into(),
            priority: if input.plan.urgency == crate::Urgency::High { 10 } else { 5 },
            payload,
            scheduled_at: f
                .not_before
                .filter(|d| *d > input.today)
                .map(|d| Utc.from_utc_datetime(&d.and_time(NaiveTime::MIN))),
            key: Some(key),
        });
    }
    Ok(node)
}
