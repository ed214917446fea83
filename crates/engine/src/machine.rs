//! The run state machine, pure: `step(graph, state, event) -> (state, commands)`. No I/O, no clock, no randomness;
//! the driver performs the commands (inside the super-step's commit) and feeds back events. Resuming after a crash
//! is loading the last checkpointed state and calling the same function.
//!
//! Super-steps (Pregel): the nodes of `active` run on the same state; their outputs are staged and merged into the
//! channels, by each channel's reducer and in node order, when every active node is done; then the edges (with the
//! routes the nodes named) give the next active set. Pausing nodes (approval, wait, subgraph) are opened at the
//! boundary that activates them, so they are part of that super-step's commit.

use crate::graph::{ApprovalSpec, END, GraphDef, INPUT_CHANNEL, NodeKind, Reducer, RetryPolicy};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Running,
    Waiting,
    Compensating,
    Succeeded,
    Failed,
}

/// What a pausing node waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "for", rename_all = "snake_case")]
pub enum Wait {
    Approval,
    Timer { at: DateTime<Utc> },
    Child,
}

/// Work handed to the task queue by an agent node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    pub agent_type: String,
    #[serde(default)]
    pub priority: i64,
    #[serde(default)]
    pub payload: Value,
    /// Not to be claimed before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_at: Option<DateTime<Utc>>,
    /// What makes this work the same as other work of the organization (a follow-up about one contract's one
    /// deadline): it is queued once per key, whichever run hands it off. Without a key, once per run, super-step,
    /// node and position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// What a node produced.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeOutput {
    /// (channel, value) writes, merged at the end of the super-step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<(String, Value)>,
    /// The route label for conditional edges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handoffs: Vec<Handoff>,
}

impl NodeOutput {
    pub fn write(mut self, channel: &str, value: Value) -> Self {
        self.writes.push((channel.to_string(), value));
        self
    }

    pub fn route(mut self, label: &str) -> Self {
        self.route = Some(label.to_string());
        self
    }

    pub fn handoff(mut self, handoff: Handoff) -> Self {
        self.handoffs.push(handoff);
        self
    }
}

/// Why a node failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeFailure {
    /// Worth trying again (a timeout, an unavailable service): the node's retry policy applies.
    Retryable(String),
    /// Trying again would fail the same way.
    Fatal(String),
}

impl NodeFailure {
    pub fn message(&self) -> &str {
        match self {
            NodeFailure::Retryable(m) | NodeFailure::Fatal(m) => m,
        }
    }
}

/// A run's whole state; this is what a checkpoint holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub phase: Phase,
    pub superstep: u32,
    pub channels: BTreeMap<String, Value>,
    /// The nodes of the current super-step.
    pub active: Vec<String>,
    /// Outputs of active nodes that are done, not yet merged.
    #[serde(default)]
    pub staged: BTreeMap<String, NodeOutput>,
    #[serde(default)]
    pub waits: BTreeMap<String, Wait>,
    /// Failed attempts of active nodes in this super-step.
    #[serde(default)]
    pub attempts: BTreeMap<String, u32>,
    #[serde(default)]
    pub retry_at: Option<DateTime<Utc>>,
    /// Nodes completed so far, in order (for compensation).
    #[serde(default)]
    pub completed: Vec<String>,
    /// Compensations still to run, next first.
    #[serde(default)]
    pub compensation: Vec<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

impl RunState {
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Succeeded | Phase::Failed)
    }

    /// Active nodes that have to run now (not done, not paused, backoff elapsed).
    pub fn runnable(&self, graph: &GraphDef, now: DateTime<Utc>) -> Vec<String> {
        if self.phase != Phase::Running || self.retry_at.is_some_and(|t| t > now) {
            return Vec::new();
        }
        self.active
            .iter()
            .filter(|n| !self.staged.contains_key(*n) && !self.waits.contains_key(*n))
            .filter(|n| {
                graph.node(n).is_some_and(|d| matches!(d.kind, NodeKind::Agent { .. } | NodeKind::Condition { .. }))
            })
            .cloned()
            .collect()
    }

    /// When the driver should look at the run again without being told (a retry or a timer).
    pub fn wake_at(&self) -> Option<DateTime<Utc>> {
        let timers = self.waits.values().filter_map(|w| match w {
            Wait::Timer { at } => Some(*at),
            _ => None,
        });
        timers.chain(self.retry_at).min()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    NodeSucceeded {
        node: String,
        output: NodeOutput,
    },
    NodeFailed {
        node: String,
        failure: NodeFailure,
        now: DateTime<Utc>,
    },
    /// A paused node's approval was decided, its timer fired or its child run ended.
    WaitResolved {
        node: String,
        output: NodeOutput,
    },
    Compensated {
        node: String,
    },
    /// The watchdog stopped the run (its deadline passed, or it kept failing): completed steps are compensated in
    /// reverse order, as when a step fails, and the run ends failed with `reason`.
    Stopped {
        reason: String,
    },
}

/// Effects the driver writes in the super-step's commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    OpenApproval {
        node: String,
        spec: ApprovalSpec,
        state_seen: Value,
        choices: Vec<String>,
    },
    StartChild {
        node: String,
        graph: String,
        input: Value,
    },
    Handoff {
        node: String,
        superstep: u32,
        index: usize,
        handoff: Handoff,
    },
    /// A line in the run's event log.
    Log {
        key: String,
        superstep: u32,
        node: Option<String>,
        kind: String,
        details: Value,
    },
    /// A failed attempt was recorded; the node runs again at `at`.
    RetryScheduled {
        node: String,
        at: DateTime<Utc>,
    },
    /// Run the compensation handler of `node` next.
    Compensate {
        node: String,
        handler: String,
    },
    Finish {
        succeeded: bool,
        reason: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    #[error("node {0:?} is not in the graph")]
    UnknownNode(String),
    #[error("node {0:?} is not active in this super-step")]
    NotActive(String),
    #[error("the run has already finished")]
    Finished,
}

fn log(state: &RunState, node: Option<&str>, kind: &str, details: Value) -> Command {
    let key = match node {
        Some(n) => format!("s{}/{n}/{kind}", state.superstep),
        None => format!("s{}/{kind}", state.superstep),
    };
    Command::Log { key, superstep: state.superstep, node: node.map(str::to_string), kind: kind.to_string(), details }
}

/// The state a run starts in: the input in its channel, declared channels empty, the entry nodes active in
/// super-step 1 (pausing ones opened).
pub fn start(graph: &GraphDef, input: Value, now: DateTime<Utc>) -> (RunState, Vec<Command>) {
    let mut channels = BTreeMap::new();
    for (name, reducer) in &graph.channels {
        let empty = match reducer {
            Reducer::LastValue => Value::Null,
            Reducer::Merge => Value::Object(Map::new()),
            Reducer::Append => Value::Array(Vec::new()),
        };
        channels.insert(name.clone(), empty);
    }
    channels.insert(INPUT_CHANNEL.to_string(), input);
    let mut state = RunState {
        phase: Phase::Running,
        superstep: 1,
        channels,
        active: Vec::new(),
        staged: BTreeMap::new(),
        waits: BTreeMap::new(),
        attempts: BTreeMap::new(),
        retry_at: None,
        completed: Vec::new(),
        compensation: Vec::new(),
        reason: None,
    };
    let mut commands = vec![log(&state, None, "started", Value::Null)];
    activate(graph, &mut state, graph.entry.clone(), now, &mut commands);
    (state, commands)
}

/// Applies one write to the channels with the channel's reducer. Writing an undeclared channel is an error.
pub fn apply_write(
    graph: &GraphDef,
    channels: &mut BTreeMap<String, Value>,
    channel: &str,
    value: Value,
) -> Result<(), String> {
    let reducer = graph.reducer(channel).ok_or_else(|| format!("wrote to undeclared channel {channel:?}"))?;
    let slot = channels.entry(channel.to_string()).or_insert(Value::Null);
    match reducer {
        Reducer::LastValue => *slot = value,
        Reducer::Merge => match (slot.as_object_mut(), value) {
            (Some(existing), Value::Object(new)) => existing.extend(new),
            (_, Value::Object(new)) => *slot = Value::Object(new),
            (_, other) => return Err(format!("channel {channel:?} merges objects, got {other}")),
        },
        Reducer::Append => {
            if !slot.is_array() {
                *slot = Value::Array(Vec::new());
            }
            if let Some(list) = slot.as_array_mut() {
                match value {
                    Value::Array(items) => list.extend(items),
                    one => list.push(one),
                }
            }
        }
    }
    Ok(())
}

fn choices_of(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string).or_else(|| v["name"].as_str().map(str::to_string)))
                .collect()
        })
        .unwrap_or_default()
}

/// Makes `nodes` the active set of the current super-step and opens the pausing ones.
fn activate(graph: &GraphDef, state: &mut RunState, nodes: Vec<String>, now: DateTime<Utc>, out: &mut Vec<Command>) {
    state.active = nodes;
    state.staged.clear();
    state.waits.clear();
    state.attempts.clear();
    state.retry_at = None;
    let mut compensate_reason = None;
    for id in state.active.clone() {
        let Some(def) = graph.node(&id) else { continue };
        match &def.kind {
            NodeKind::Approval(spec) => {
                let state_seen: Map<String, Value> = spec
                    .evidence
                    .iter()
                    .map(|c| (c.clone(), state.channels.get(c).cloned().unwrap_or(Value::Null)))
                    .collect();
                let choices = choices_of(spec.choices_from.as_ref().and_then(|c| state.channels.get(c)));
                state.waits.insert(id.clone(), Wait::Approval);
                out.push(log(state, Some(&id), "approval_opened", serde_json::json!({ "choices": choices })));
                out.push(Command::OpenApproval {
                    node: id.clone(),
                    spec: spec.clone(),
                    state_seen: Value::Object(state_seen),
                    choices,
                });
            }
            NodeKind::Wait { seconds } => {
                let at = now + chrono::Duration::seconds(*seconds);
                state.waits.insert(id.clone(), Wait::Timer { at });
                out.push(log(state, Some(&id), "timer_started", serde_json::json!({ "at": at })));
            }
            NodeKind::Subgraph { graph: child, input, .. } => {
                let child_input: Map<String, Value> =
                    input.iter().map(|c| (c.clone(), state.channels.get(c).cloned().unwrap_or(Value::Null))).collect();
                state.waits.insert(id.clone(), Wait::Child);
                out.push(log(state, Some(&id), "child_started", serde_json::json!({ "graph": child })));
                out.push(Command::StartChild {
                    node: id.clone(),
                    graph: child.clone(),
                    input: Value::Object(child_input),
                });
            }
            NodeKind::Compensate { reason } => compensate_reason = Some(reason.clone()),
            NodeKind::Agent { .. } | NodeKind::Condition { .. } => {}
        }
    }
    if let Some(reason) = compensate_reason {
        begin_compensation(graph, state, reason, out);
    } else if !state.active.is_empty() && state.waits.len() == state.active.len() {
        state.phase = Phase::Waiting;
    } else {
        state.phase = Phase::Running;
    }
}

fn begin_compensation(graph: &GraphDef, state: &mut RunState, reason: String, out: &mut Vec<Command>) {
    // Completed steps, plus those of this super-step that already succeeded, undone newest first.
    let mut done: Vec<String> = state.completed.clone();
    done.extend(state.active.iter().filter(|n| state.staged.contains_key(*n)).cloned());
    state.compensation =
        done.into_iter().rev().filter(|n| graph.node(n).is_some_and(|d| d.compensate.is_some())).collect();
    state.reason = Some(reason.clone());
    state.waits.clear();
    state.retry_at = None;
    out.push(log(
        state,
        None,
        "compensation_started",
        serde_json::json!({ "reason": reason, "steps": state.compensation }),
    ));
    next_compensation(graph, state, out);
}

fn next_compensation(graph: &GraphDef, state: &mut RunState, out: &mut Vec<Command>) {
    match state.compensation.first() {
        Some(node) => {
            state.phase = Phase::Compensating;
            let handler = graph.node(node).and_then(|d| d.compensate.clone()).unwrap_or_default();
            out.push(Command::Compensate { node: node.clone(), handler });
        }
        None => {
            state.phase = Phase::Failed;
            state.active.clear();
            state.staged.clear();
            out.push(log(state, None, "failed", serde_json::json!({ "reason": state.reason })));
            out.push(Command::Finish { succeeded: false, reason: state.reason.clone() });
        }
    }
}

/// Ends the super-step if every active node is done: merges the staged writes and activates the next nodes.
fn maybe_end_superstep(graph: &GraphDef, state: &mut RunState, now: DateTime<Utc>, out: &mut Vec<Command>) {
    if state.phase != Phase::Running && state.phase != Phase::Waiting {
        return;
    }
    if !state.waits.is_empty() || state.active.iter().any(|n| !state.staged.contains_key(n)) {
        state.phase = if state.runnable_ignoring_backoff(graph).is_empty() && !state.waits.is_empty() {
            Phase::Waiting
        } else {
            Phase::Running
        };
        return;
    }
    let mut next: Vec<String> = Vec::new();
    for node in state.active.clone() {
        let output = state.staged.get(&node).cloned().unwrap_or_default();
        for (channel, value) in output.writes {
            if let Err(e) = apply_write(graph, &mut state.channels, &channel, value) {
                // A node wrote what the graph does not declare: the run cannot go on honestly.
                state.staged.remove(&node);
                begin_compensation(graph, state, format!("node {node:?} {e}"), out);
                return;
            }
        }
        for e in graph.edges.iter().filter(|e| e.from == node) {
            let taken = match &e.when {
                None => true,
                Some(label) => output.route.as_deref() == Some(label.as_str()),
            };
            if taken && e.to != END && !next.contains(&e.to) {
                next.push(e.to.clone());
            }
        }
        state.completed.push(node);
    }
    if next.is_empty() {
        state.phase = Phase::Succeeded;
        state.active.clear();
        state.staged.clear();
        out.push(log(state, None, "succeeded", Value::Null));
        out.push(Command::Finish { succeeded: true, reason: state.reason.clone() });
        return;
    }
    state.superstep += 1;
    activate(graph, state, next, now, out);
}

impl RunState {
    fn runnable_ignoring_backoff(&self, graph: &GraphDef) -> Vec<&String> {
        self.active
            .iter()
            .filter(|n| !self.staged.contains_key(*n) && !self.waits.contains_key(*n))
            .filter(|n| {
                graph.node(n).is_some_and(|d| matches!(d.kind, NodeKind::Agent { .. } | NodeKind::Condition { .. }))
            })
            .collect()
    }
}

/// The transition function. `now` is only used to place timers and retries (it comes from the driver's clock).
pub fn step(
    graph: &GraphDef,
    mut state: RunState,
    event: Event,
    now: DateTime<Utc>,
) -> Result<(RunState, Vec<Command>), StepError> {
    if state.is_finished() {
        return Err(StepError::Finished);
    }
    let mut out = Vec::new();
    match event {
        Event::NodeSucceeded { node, output } | Event::WaitResolved { node, output } => {
            graph.node(&node).ok_or_else(|| StepError::UnknownNode(node.clone()))?;
            if !state.active.contains(&node) || state.staged.contains_key(&node) || state.phase == Phase::Compensating {
                return Err(StepError::NotActive(node));
            }
            state.waits.remove(&node);
            out.push(log(
                &state,
                Some(&node),
                "succeeded",
                serde_json::json!({ "route": output.route, "attempt": state.attempts.get(&node).copied().unwrap_or(0) + 1 }),
            ));
            for (index, handoff) in output.handoffs.iter().enumerate() {
                out.push(Command::Handoff {
                    node: node.clone(),
                    superstep: state.superstep,
                    index,
                    handoff: handoff.clone(),
                });
            }
            state.staged.insert(node, output);
            maybe_end_superstep(graph, &mut state, now, &mut out);
        }
        Event::NodeFailed { node, failure, now: failed_at } => {
            let def = graph.node(&node).ok_or_else(|| StepError::UnknownNode(node.clone()))?;
            if !state.active.contains(&node) || state.staged.contains_key(&node) {
                return Err(StepError::NotActive(node));
            }
            let attempts = state.attempts.entry(node.clone()).or_insert(0);
            *attempts += 1;
            let failed = *attempts;
            let policy = def.retry.unwrap_or(RetryPolicy::NONE);
            out.push(Command::Log {
                key: format!("s{}/{node}/failed/{failed}", state.superstep),
                superstep: state.superstep,
                node: Some(node.clone()),
                kind: "failed_attempt".into(),
                details: serde_json::json!({ "attempt": failed, "error": failure.message() }),
            });
            match failure {
                NodeFailure::Retryable(_) if failed < policy.max_attempts => {
                    let at = failed_at + policy.backoff(failed);
                    state.retry_at = Some(state.retry_at.map_or(at, |t| t.max(at)));
                    out.push(Command::RetryScheduled { node, at });
                }
                failure => {
                    let reason = format!("step {node:?} failed after {failed} attempt(s): {}", failure.message());
                    begin_compensation(graph, &mut state, reason, &mut out);
                }
            }
        }
        Event::Compensated { node } => {
            if state.phase != Phase::Compensating || state.compensation.first() != Some(&node) {
                return Err(StepError::NotActive(node));
            }
            state.compensation.remove(0);
            out.push(Command::Log {
                key: format!("compensated/{node}"),
                superstep: state.superstep,
                node: Some(node.clone()),
                kind: "compensated".into(),
                details: Value::Null,
            });
            next_compensation(graph, &mut state, &mut out);
        }
        Event::Stopped { reason } => {
            // Already undoing its steps (a step failed first): that compensation goes on, with its own reason.
            if state.phase != Phase::Compensating {
                begin_compensation(graph, &mut state, reason, &mut out);
            }
        }
    }
    Ok((state, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn graph() -> GraphDef {
        serde_json::from_value(serde_json::json!({
            "name": "g", "version": 1, "entry": ["a"], "channels": {"log": "append", "ok": "last_value"},
            "nodes": [
                {"id": "a", "kind": "agent", "handler": "h", "retry": {"max_attempts": 2, "backoff_ms": 500}, "compensate": "undo"},
                {"id": "gate", "kind": "approval", "title": "Gate", "output": "ok", "evidence": ["log"]},
                {"id": "b", "kind": "agent", "handler": "h"}
            ],
            "edges": [{"from": "a", "to": "gate"}, {"from": "gate", "to": "b", "when": "approved"}]
        }))
        .unwrap()
    }

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
    }

    fn kinds(commands: &[Command]) -> Vec<String> {
        commands
            .iter()
            .map(|c| match c {
                Command::Log { kind, .. } => format!("log:{kind}"),
                Command::OpenApproval { node, .. } => format!("open:{node}"),
                Command::StartChild { node, .. } => format!("child:{node}"),
                Command::Handoff { node, .. } => format!("handoff:{node}"),
                Command::RetryScheduled { node, .. } => format!("retry:{node}"),
                Command::Compensate { node, .. } => format!("compensate:{node}"),
                Command::Finish { succeeded, .. } => format!("finish:{succeeded}"),
            })
            .collect()
    }

    #[test]
    fn transitions_follow_the_table() {
        let g = graph();
        let (s, c) = start(&g, serde_json::json!({}), t0());
        assert_eq!((s.superstep, s.phase, s.runnable(&g, t0())), (1, Phase::Running, vec!["a".to_string()]));
        assert_eq!(kinds(&c), ["log:started"]);

        // A retryable failure schedules a retry after the backoff; nothing runs before it.
        let failed =
            Event::NodeFailed { node: "a".into(), failure: NodeFailure::Retryable("timeout".into()), now: t0() };
        let (s, c) = step(&g, s, failed, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:failed_attempt", "retry:a"]);
        assert_eq!(s.retry_at, Some(t0() + chrono::Duration::milliseconds(500)));
        assert!(s.runnable(&g, t0()).is_empty());
        assert_eq!(s.runnable(&g, t0() + chrono::Duration::milliseconds(500)), ["a"]);

        // Success ends the super-step, merges the write and opens the approval with the evidence it saw.
        let ok = Event::NodeSucceeded {
            node: "a".into(),
            output: NodeOutput::default().write("log", serde_json::json!("a")),
        };
        let (s, c) = step(&g, s, ok, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:succeeded", "log:approval_opened", "open:gate"]);
        assert_eq!((s.superstep, s.phase), (2, Phase::Waiting));
        match &c[2] {
            Command::OpenApproval { state_seen, .. } => assert_eq!(state_seen, &serde_json::json!({"log": ["a"]})),
            other => panic!("{other:?}"),
        }

        // A decision resolves the wait; the approved branch runs; its end finishes the run.
        let decided = Event::WaitResolved { node: "gate".into(), output: NodeOutput::default().route("approved") };
        let (s, c) = step(&g, s, decided, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:succeeded"]);
        assert_eq!((s.superstep, s.phase, s.runnable(&g, t0())), (3, Phase::Running, vec!["b".to_string()]));
        let (s, c) =
            step(&g, s, Event::NodeSucceeded { node: "b".into(), output: NodeOutput::default() }, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:succeeded", "log:succeeded", "finish:true"]);
        assert_eq!(s.phase, Phase::Succeeded);
        assert_eq!(s.completed, ["a", "gate", "b"]);
        // A finished run takes no more events.
        assert_eq!(step(&g, s, Event::Compensated { node: "a".into() }, t0()).unwrap_err(), StepError::Finished);
    }

    #[test]
    fn a_fatal_failure_compensates_completed_steps_then_fails() {
        let g = graph();
        let (s, _) = start(&g, serde_json::json!({}), t0());
        let (s, _) =
            step(&g, s, Event::NodeSucceeded { node: "a".into(), output: NodeOutput::default() }, t0()).unwrap();
        let rejected = Event::WaitResolved { node: "gate".into(), output: NodeOutput::default().route("approved") };
        let (s, _) = step(&g, s, rejected, t0()).unwrap();
        let boom = Event::NodeFailed { node: "b".into(), failure: NodeFailure::Fatal("broken".into()), now: t0() };
        let (s, c) = step(&g, s, boom, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:failed_attempt", "log:compensation_started", "compensate:a"]);
        assert_eq!(s.phase, Phase::Compensating);
        let (s, c) = step(&g, s, Event::Compensated { node: "a".into() }, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:compensated", "log:failed", "finish:false"]);
        assert_eq!(s.phase, Phase::Failed);
        assert!(s.reason.unwrap().contains("broken"));
    }

    #[test]
    fn a_stopped_run_compensates_what_completed_and_a_run_with_nothing_to_undo_fails_at_once() {
        let g = graph();
        // Stopped while waiting for the approval: `a` completed and has a compensation.
        let (s, _) = start(&g, serde_json::json!({}), t0());
        let (s, _) =
            step(&g, s, Event::NodeSucceeded { node: "a".into(), output: NodeOutput::default() }, t0()).unwrap();
        assert_eq!(s.phase, Phase::Waiting);
        let (s, c) = step(&g, s, Event::Stopped { reason: "the run passed its deadline".into() }, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:compensation_started", "compensate:a"]);
        assert_eq!((s.phase, s.reason.as_deref()), (Phase::Compensating, Some("the run passed its deadline")));
        assert!(s.waits.is_empty(), "the approval no longer holds the run");
        // Stopping it again changes nothing: the compensation goes on.
        let (again, c) = step(&g, s.clone(), Event::Stopped { reason: "again".into() }, t0()).unwrap();
        assert_eq!((again, c), (s.clone(), Vec::new()));
        let (s, c) = step(&g, s, Event::Compensated { node: "a".into() }, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:compensated", "log:failed", "finish:false"]);
        assert_eq!(s.phase, Phase::Failed);

        // Stopped before anything completed: failed in the same step.
        let (s, _) = start(&g, serde_json::json!({}), t0());
        let (s, c) = step(&g, s, Event::Stopped { reason: "stopped after 20 failed attempts".into() }, t0()).unwrap();
        assert_eq!(kinds(&c), ["log:compensation_started", "log:failed", "finish:false"]);
        assert_eq!(s.phase, Phase::Failed);
    }

    #[test]
    fn events_for_nodes_that_are_not_active_are_refused() {
        let g = graph();
        let (s, _) = start(&g, serde_json::json!({}), t0());
        let wrong = Event::NodeSucceeded { node: "b".into(), output: NodeOutput::default() };
        assert_eq!(step(&g, s.clone(), wrong, t0()).unwrap_err(), StepError::NotActive("b".into()));
        let unknown = Event::NodeSucceeded { node: "zz".into(), output: NodeOutput::default() };
        assert_eq!(step(&g, s, unknown, t0()).unwrap_err(), StepError::UnknownNode("zz".into()));
    }

    #[test]
    fn reducers_combine_writes() {
        let g = graph();
        let mut channels = BTreeMap::new();
        apply_write(&g, &mut channels, "log", serde_json::json!("x")).unwrap();
        apply_write(&g, &mut channels, "log", serde_json::json!(["y", "z"])).unwrap();
        assert_eq!(channels["log"], serde_json::json!(["x", "y", "z"]));
        assert!(apply_write(&g, &mut channels, "nope", serde_json::json!(1)).unwrap_err().contains("undeclared"));
    }
}
