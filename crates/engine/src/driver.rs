//! The thin driver: loads runs, resolves what paused nodes wait for (decisions, timers, child runs), calls the
//! handlers of runnable nodes, feeds the results to the pure [`machine::step`], and writes each super-step — state,
//! event log, approvals, handoffs, child runs, audit — in one transaction. Many runs' super-steps share one commit
//! ([`Engine::advance`] on a batch): a super-step counts as done only once its commit returned, so grouping never
//! weakens durability.

use crate::EngineError;
use crate::graph::{GraphDef, NodeKind};
use crate::machine::{self, Command, Event, NodeFailure, NodeOutput, Phase, RunState, Wait};
use crate::model::ModelPort;
use crate::registry::{NodeContext, Registry};
use chrono::{DateTime, Duration, Utc};
use pactwise_domain::{ApprovalId, ApprovalStatus, Decision, OrgId, RunId, RunStatus};
use pactwise_store::{
    Applied, ApprovalRecord, CancelReport, DecisionInput, NewApproval, NewChildRun, NewEvent, NewHandoff, NewRun,
    OrgScope, PlatformCredential, RunRecord, RunWrite, StepCommit, Store, SweepPolicy, SweepReport,
};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The engine over one store, acting as one platform worker.
pub struct Engine<'a> {
    store: &'a Store,
    registry: &'a Registry,
    credential: &'a PlatformCredential,
    model: Option<&'a dyn ModelPort>,
    lease: Duration,
    commits: std::cell::Cell<u64>,
    /// Parsed graph snapshots, by their row: a run's snapshot is read and parsed once, not at every super-step.
    graphs: std::cell::RefCell<HashMap<i64, Arc<GraphDef>>>,
    snapshot_texts: std::cell::RefCell<HashMap<String, (u32, String)>>,
}

/// What one call to [`Engine::advance`] did to one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Advanced {
    pub run: RunId,
    /// A super-step (or a failure, a compensation, a resolved wait) was committed.
    pub committed: bool,
    pub status: RunStatus,
    /// Child runs started by this super-step.
    pub children: Vec<RunId>,
    pub parent: Option<RunId>,
}

fn status_of(phase: Phase) -> RunStatus {
    match phase {
        Phase::Running => RunStatus::Running,
        Phase::Waiting => RunStatus::Waiting,
        Phase::Compensating => RunStatus::Compensating,
        Phase::Succeeded => RunStatus::Succeeded,
        Phase::Failed => RunStatus::Failed,
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> EngineError {
    EngineError::Corrupt(format!("{what}: {e}"))
}

/// The output an approval node produces from its decision.
fn decision_output(graph: &GraphDef, approval: &ApprovalRecord) -> NodeOutput {
    let channel = match graph.node(&approval.node).map(|n| &n.kind) {
        Some(NodeKind::Approval(spec)) => spec.output.clone(),
        _ => String::new(),
    };
    let approved = approval.status == ApprovalStatus::Approved;
    let record = json!({
        "decision": if approved { Decision::Approve } else { Decision::Reject },
        "reason": approval.reason,
        "choice": approval.choice,
        "decided_by": approval.decided_by,
        "decided_by_name": approval.decided_by_name,
        "decided_at": approval.decided_at,
    });
    let out = NodeOutput::default().route(if approved { "approved" } else { "rejected" });
    if channel.is_empty() { out } else { out.write(&channel, record) }
}

impl<'a> Engine<'a> {
    pub fn new(store: &'a Store, registry: &'a Registry, credential: &'a PlatformCredential) -> Self {
        Engine {
            store,
            registry,
            credential,
            model: None,
            lease: Duration::seconds(60),
            commits: 0.into(),
            graphs: Default::default(),
            snapshot_texts: Default::default(),
        }
    }

    /// Lets agent nodes with a model part ask the model (otherwise they use their rule-based fallback).
    pub fn with_model(mut self, model: Option<&'a dyn ModelPort>) -> Self {
        self.model = model;
        self
    }

    /// How long a claimed run stays this worker's without a commit.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Transactions this engine has committed (for benchmarks: each is one sync with `synchronous = FULL`).
    pub fn commits(&self) -> u64 {
        self.commits.get()
    }

    fn now(&self) -> DateTime<Utc> {
        self.store.clock().now()
    }

    /// A graph's snapshot text for new runs (serialized once per graph and version).
    fn snapshot_text(&self, graph: &GraphDef) -> Result<String, EngineError> {
        let mut texts = self.snapshot_texts.borrow_mut();
        if let Some((version, text)) = texts.get(&graph.name)
            && *version == graph.version
        {
            return Ok(text.clone());
        }
        let text = serde_json::to_string(graph).map_err(|e| corrupt("graph", e))?;
        texts.insert(graph.name.clone(), (graph.version, text.clone()));
        Ok(text)
    }

    /// The graph a run started with (read and parsed from its snapshot once per engine).
    fn snapshot(&self, run: &RunRecord) -> Result<Arc<GraphDef>, EngineError> {
        let id = run.graph_snapshot_id;
        if let Some(found) = self.graphs.borrow().get(&id) {
            return Ok(found.clone());
        }
        let text = self.store.runs().graph_snapshot(self.credential, id)?;
        let graph: Arc<GraphDef> = Arc::new(serde_json::from_str(&text).map_err(|e| corrupt("graph snapshot", e))?);
        self.graphs.borrow_mut().insert(id, graph.clone());
        Ok(graph)
    }

    /// Starts a run of `graph` in the session's organization and commits it with its first super-step.
    pub fn start(&self, scope: &OrgScope, graph: &str, input: Value) -> Result<RunId, EngineError> {
        Ok(self.start_many(&[(scope, graph, input)])?[0])
    }

    /// Starts several runs; their first super-steps share one commit.
    pub fn start_many(&self, starts: &[(&OrgScope, &str, Value)]) -> Result<Vec<RunId>, EngineError> {
        let starts: Vec<(Starter<'_>, &str, &Value)> =
            starts.iter().map(|(scope, name, input)| (Starter::Session(scope), *name, input)).collect();
        self.start_all(&starts)
    }

    /// Starts a run for an organization as the platform (nobody started it: a renewal reminder fell due). The
    /// organization is that of the record the platform read.
    pub fn start_for_platform(
        &self,
        org: pactwise_domain::OrgId,
        graph: &str,
        input: Value,
    ) -> Result<RunId, EngineError> {
        Ok(self.start_all(&[(Starter::Platform(org, None), graph, &input)])?[0])
    }

    /// [`Engine::start_for_platform`] once per piece of work: the run takes the id `id` (derived from the work, a
    /// follow-up task's id). When a run with that id exists already — the work was done by a worker that died before
    /// it could say so — that run is returned and nothing starts; `false` says so.
    pub fn start_for_platform_once(
        &self,
        org: pactwise_domain::OrgId,
        graph: &str,
        input: Value,
        id: RunId,
    ) -> Result<(RunId, bool), EngineError> {
        match self.store.runs().load(self.credential, id) {
            Ok(existing) if existing.org == org => return Ok((id, false)),
            Ok(_) => return Err(EngineError::InvalidInput("that run belongs to another organization".into())),
            Err(pactwise_store::StoreError::NotFound) => {}
            Err(e) => return Err(e.into()),
        }
        Ok((self.start_all(&[(Starter::Platform(org, Some(id)), graph, &input)])?[0], true))
    }

    /// Starts a run of a graph made for it (the manager's compiled plan) in the session's organization. The graph is
    /// checked as a registered one would be — its shape, and handlers this registry knows — and the run keeps it
    /// as its snapshot, so nothing else needs to know it.
    pub fn start_graph(&self, scope: &OrgScope, graph: &GraphDef, input: Value) -> Result<RunId, EngineError> {
        self.registry.check(graph)?;
        let snapshot = serde_json::to_string(graph).map_err(|e| corrupt("graph", e))?;
        Ok(self.start_defs(&[(Starter::Session(scope), graph, &input, snapshot)])?[0])
    }

    fn start_all(&self, starts: &[(Starter<'_>, &str, &Value)]) -> Result<Vec<RunId>, EngineError> {
        let mut defs = Vec::with_capacity(starts.len());
        for (starter, name, input) in starts {
            let graph = self.registry.graph(name)?;
            let snapshot = self.snapshot_text(graph)?;
            defs.push((*starter, graph, *input, snapshot));
        }
        self.start_defs(&defs)
    }

    fn start_defs(&self, starts: &[(Starter<'_>, &GraphDef, &Value, String)]) -> Result<Vec<RunId>, EngineError> {
        let now = self.now();
        let mut writes = Vec::with_capacity(starts.len());
        let mut ids = Vec::with_capacity(starts.len());
        for (starter, graph, input, snapshot) in starts {
            let graph: &GraphDef = graph;
            let snapshot = snapshot.clone();
            if !input.is_object() {
                return Err(EngineError::InvalidInput(format!("got {}", kind_of(input))));
            }
            let (mut run, org) = match starter {
                Starter::Session(scope) => {
                    (NewRun::in_scope(scope, &graph.name, graph.version, snapshot, input.to_string()), scope.org())
                }
                Starter::Platform(org, id) => {
                    let run = NewRun::for_platform(
                        self.credential,
                        *org,
                        &graph.name,
                        graph.version,
                        snapshot,
                        input.to_string(),
                    );
                    (if let Some(id) = id { run.with_id(*id) } else { run }, *org)
                }
            };
            run.deadline_at = graph.deadline_secs.map(|s| now + Duration::seconds(s));
            let (state, commands) = machine::start(graph, (*input).clone(), now);
            let id = run.id();
            let step = self
                .pass(graph, id, org, 0, state, commands, now, &[], &[])?
                .ok_or_else(|| EngineError::Corrupt("a new run produced no first step".into()))?;
            ids.push(id);
            writes.push(RunWrite::Start { run, step: step.0 });
        }
        let _span = tracing::info_span!("commit", runs = writes.len()).entered();
        self.store.runs().commit(self.credential, &writes, self.lease)?;
        self.commits.set(self.commits.get() + 1);
        Ok(ids)
    }

    /// Advances each run by at most one super-step and commits all of them in ONE transaction (group commit).
    pub fn advance(&self, runs: &[RunId]) -> Result<Vec<Advanced>, EngineError> {
        let now = self.now();
        let mut writes = Vec::new();
        let mut indices = Vec::new();
        let mut report = Vec::with_capacity(runs.len());
        for &id in runs {
            let record = self.store.runs().load(self.credential, id)?;
            let mut entry = Advanced {
                run: id,
                committed: false,
                status: record.status,
                children: Vec::new(),
                parent: record.parent,
            };
            if !record.status.is_terminal() {
                let graph = self.snapshot(&record)?;
                let state: RunState = serde_json::from_str(&record.state).map_err(|e| corrupt("run state", e))?;
                let approvals = if state.waits.values().any(|w| matches!(w, Wait::Approval)) {
                    self.store.approvals().for_run_as_worker(self.credential, id)?
                } else {
                    Vec::new()
                };
                let children = if state.waits.values().any(|w| matches!(w, Wait::Child)) {
                    self.store.runs().children(self.credential, id)?
                } else {
                    Vec::new()
                };
                if let Some((step, kids)) =
                    self.pass(&graph, id, record.org, record.revision, state, Vec::new(), now, &approvals, &children)?
                {
                    entry.status = step.status;
                    entry.children = kids;
                    indices.push(report.len());
                    writes.push(RunWrite::Step(step));
                }
            }
            report.push(entry);
        }
        if writes.is_empty() {
            return Ok(report);
        }
        let applied = {
            let _span = tracing::info_span!("commit", runs = writes.len()).entered();
            self.store.runs().commit(self.credential, &writes, self.lease)?
        };
        self.commits.set(self.commits.get() + 1);
        for (index, outcome) in indices.into_iter().zip(applied) {
            match outcome {
                Applied::Yes { .. } => report[index].committed = true,
                Applied::Stale => {
                    report[index].children.clear();
                    report[index].status = self.store.runs().load(self.credential, report[index].run)?.status;
                }
            }
        }
        Ok(report)
    }

    /// Advances runs (and the child runs they start) until none of them can move without outside input.
    /// Runs move together, one super-step per round, each round one commit. Returns the runs' final records.
    pub fn drive_many(&self, runs: &[RunId]) -> Result<Vec<RunRecord>, EngineError> {
        let mut all: Vec<RunId> = runs.to_vec();
        // Child runs still going (started by an earlier commit) move along with their parents: one query per
        // generation of runs, not one per run.
        let mut generation: Vec<RunId> = all.clone();
        while !generation.is_empty() {
            let mut next = Vec::new();
            for child in self.store.runs().live_children_of(self.credential, &generation)? {
                if !all.contains(&child) {
                    all.push(child);
                    next.push(child);
                }
            }
            generation = next;
        }
        let mut live: Vec<RunId> = all.clone();
        while !live.is_empty() {
            let report = self.advance(&live)?;
            let mut next = BTreeSet::new();
            for a in report.iter().filter(|a| a.committed) {
                // A run that now waits moves only when its decision, timer or child comes in (a decision and a
                // child's end wake it; `work` picks up due timers).
                if matches!(a.status, RunStatus::Running | RunStatus::Compensating) {
                    next.insert(a.run);
                } else if let Some(parent) = a.parent {
                    // A child that ended woke its parent.
                    next.insert(parent);
                }
                for c in &a.children {
                    if !all.contains(c) {
                        all.push(*c);
                    }
                    next.insert(*c);
                }
            }
            live = next.into_iter().collect();
        }
        all.iter().map(|id| self.store.runs().load(self.credential, *id).map_err(EngineError::from)).collect()
    }

    /// Drives one run (and its children) until it waits or ends.
    pub fn drive(&self, run: RunId) -> Result<RunRecord, EngineError> {
        Ok(self.drive_many(&[run])?.remove(0))
    }

    /// One worker round: claims runs that have work and no live lease, and drives them.
    pub fn work(&self, limit: usize) -> Result<Vec<RunRecord>, EngineError> {
        let claimed = self.store.runs().claim(self.credential, self.lease, limit)?;
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<RunId> = claimed.iter().map(|r| r.id).collect();
        self.drive_many(&ids)
    }

    /// Records a person's decision on an approval (authorization and identity are the store's) and, in the same
    /// transaction, the run's next checkpoints (see `resolve_decision`). Then drives the run on until it waits or
    /// ends.
    pub fn decide(
        &self,
        scope: &OrgScope,
        approval: ApprovalId,
        decision: Decision,
        reason: &str,
        choice: Option<&str>,
    ) -> Result<(ApprovalRecord, RunRecord), EngineError> {
        let decided = self.record_decision(scope, approval, decision, reason, choice)?;
        let run = self.drive(decided.run)?;
        Ok((decided, run))
    }

    /// [`Engine::decide`] without driving the run on afterwards: one commit, the decision with the checkpoints it
    /// leads to.
    pub fn record_decision(
        &self,
        scope: &OrgScope,
        approval: ApprovalId,
        decision: Decision,
        reason: &str,
        choice: Option<&str>,
    ) -> Result<ApprovalRecord, EngineError> {
        let now = self.now();
        let _span = tracing::info_span!("decision", approval = %approval).entered();
        let (decided, _applied) =
            self.store.approvals().decide(scope, approval, decision, reason, choice, |a, run| {
                self.resolve_decision(a, run, now).unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "decision recorded; the run resumes on its next pass");
                    Vec::new()
                })
            })?;
        self.commits.set(self.commits.get() + 1);
        Ok(decided)
    }

    /// Several decisions of one person in one transaction, each with its run's next checkpoint; then drives the
    /// runs on together (group commit).
    pub fn decide_many(
        &self,
        scope: &OrgScope,
        decisions: &[DecisionInput<'_>],
    ) -> Result<(Vec<ApprovalRecord>, Vec<RunRecord>), EngineError> {
        let now = self.now();
        // The status each decision's last checkpoint leaves its run in.
        let mut last_status: HashMap<ApprovalId, Option<RunStatus>> = HashMap::new();
        let decided = self.store.approvals().decide_many(scope, decisions, |a, run| {
            let steps = self.resolve_decision(a, run, now).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "decision recorded; the run resumes on its next pass");
                Vec::new()
            });
            last_status.insert(a.id, steps.last().map(|s| s.status));
            steps
        })?;
        self.commits.set(self.commits.get() + 1);
        // A run that every checkpoint of its decision applied to and that ended there has nothing left to drive:
        // it is only read back. The others are driven on together.
        let mut runs: Vec<RunId> = Vec::with_capacity(decided.len());
        let mut ended: BTreeSet<RunId> = BTreeSet::new();
        for (a, applied) in &decided {
            let all_applied = !applied.is_empty() && applied.iter().all(|o| matches!(o, Applied::Yes { .. }));
            if all_applied && last_status.get(&a.id).copied().flatten().is_some_and(|s| s.is_terminal()) {
                ended.insert(a.run);
            }
            if !runs.contains(&a.run) {
                runs.push(a.run);
            }
        }
        let moving: Vec<RunId> = runs.iter().copied().filter(|r| !ended.contains(r)).collect();
        let mut driven: HashMap<RunId, RunRecord> = HashMap::new();
        // Child runs driven along with their parents come after the decided runs, in `drive_many`'s order.
        let mut children = Vec::new();
        if !moving.is_empty() {
            for record in self.drive_many(&moving)? {
                if runs.contains(&record.id) {
                    driven.insert(record.id, record);
                } else {
                    children.push(record);
                }
            }
        }
        let mut records = Vec::with_capacity(runs.len() + children.len());
        for id in &runs {
            match driven.remove(id) {
                Some(record) => records.push(record),
                None => records.push(self.store.runs().load(self.credential, *id)?),
            }
        }
        records.extend(children);
        let approvals: Vec<ApprovalRecord> = decided.into_iter().map(|(a, _)| a).collect();
        Ok((approvals, records))
    }

    /// The checkpoints a decision leads to, written in the decision's own transaction: the approval's super-step
    /// (the decision merged, the next nodes activated), then — when the next super-step's nodes are rule-based — that
    /// super-step too, run here, inside the transaction. Each is its own checkpoint, so the run's history has one
    /// per super-step; together they cost one commit. Nothing is run before the decision is recorded, so a refused
    /// decision runs no step, and a crash before the commit loses the decision with the step (the approver is told
    /// it failed and decides again): no committed step runs twice.
    fn resolve_decision(
        &self,
        approval: &ApprovalRecord,
        run: &RunRecord,
        now: DateTime<Utc>,
    ) -> Result<Vec<StepCommit>, EngineError> {
        if run.status.is_terminal() {
            return Ok(Vec::new());
        }
        let graph = self.snapshot(run)?;
        let state: RunState = serde_json::from_str(&run.state).map_err(|e| corrupt("run state", e))?;
        if state.superstep != approval.superstep || !matches!(state.waits.get(&approval.node), Some(Wait::Approval)) {
            return Ok(Vec::new());
        }
        let event = Event::WaitResolved { node: approval.node.clone(), output: decision_output(&graph, approval) };
        let (state, commands) = machine::step(&graph, state, event, now).map_err(|e| corrupt("step", e))?;
        let (commit, _) = self.build_commit(&graph, run.id, run.org, run.revision, &state, commands, now)?;
        let mut commits = vec![commit];
        if self.runs_within_a_commit(&graph, &state, now)
            && let Some((next, _)) =
                self.pass(&graph, run.id, run.org, run.revision + 1, state, Vec::new(), now, &[], &[])?
        {
            commits.push(next);
        }
        Ok(commits)
    }

    /// Whether the current super-step may run while a transaction holds the write lock: it has nodes to run and
    /// none of them can wait on the model (a model call takes seconds; rules take microseconds). Without a model
    /// configured, agent nodes with a model part use their rule-based fallback, so they qualify too.
    fn runs_within_a_commit(&self, graph: &GraphDef, state: &RunState, now: DateTime<Utc>) -> bool {
        let runnable = state.runnable(graph, now);
        !runnable.is_empty()
            && runnable.iter().all(|node| match graph.node(node).map(|d| &d.kind) {
                Some(NodeKind::Agent { model: Some(_), .. }) => self.model.is_none(),
                Some(NodeKind::Agent { model: None, .. } | NodeKind::Condition { .. }) => true,
                _ => false,
            })
    }

    /// Cancels a run of the session's organization with its child runs, tasks and approvals.
    pub fn cancel(&self, scope: &OrgScope, run: RunId, reason: &str) -> Result<CancelReport, EngineError> {
        Ok(self.store.runs().cancel(scope, run, reason)?)
    }

    /// The watchdog's sweep. A run it stops (deadline passed, too many failed attempts) has its completed
    /// compensable steps undone in reverse order, like a run whose step failed: the sweep's transaction moves it to
    /// compensating (or straight to failed when nothing needs undoing), then this worker drives the compensation.
    pub fn sweep(&self, policy: SweepPolicy) -> Result<SweepReport, EngineError> {
        let now = self.now();
        let report = {
            let _span = tracing::info_span!("sweep").entered();
            self.store.runs().sweep(self.credential, policy, &mut |run, reason| {
                self.stop_commit(run, reason, now).unwrap_or_else(|e| {
                    tracing::warn!(run = %run.id, error = %e, "stopped without compensation: its state did not load");
                    None
                })
            })?
        };
        self.commits.set(self.commits.get() + 1);
        let stopped: Vec<RunId> =
            report.deadlines_enforced.iter().chain(&report.stopped_for_failures).copied().collect();
        if !stopped.is_empty() {
            self.drive_many(&stopped)?;
        }
        Ok(report)
    }

    /// The checkpoint of a run the watchdog stops: the machine's `Stopped` event on its last state.
    fn stop_commit(
        &self,
        run: &RunRecord,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<StepCommit>, EngineError> {
        let graph = self.snapshot(run)?;
        let state: RunState = serde_json::from_str(&run.state).map_err(|e| corrupt("run state", e))?;
        if state.is_finished() {
            return Ok(None);
        }
        let (state, commands) = machine::step(&graph, state, Event::Stopped { reason: reason.to_string() }, now)
            .map_err(|e| corrupt("step", e))?;
        let (commit, _) = self.build_commit(&graph, run.id, run.org, run.revision, &state, commands, now)?;
        Ok(Some(commit))
    }

    /// One pass over a run: resolve waits, or run one compensation, or run the runnable nodes of the current
    /// super-step; returns the commit (and the child runs it starts), or `None` if nothing could move.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &self,
        graph: &GraphDef,
        run: RunId,
        org: OrgId,
        revision: u64,
        mut state: RunState,
        mut commands: Vec<Command>,
        now: DateTime<Utc>,
        approvals: &[ApprovalRecord],
        children: &[RunRecord],
    ) -> Result<Option<(StepCommit, Vec<RunId>)>, EngineError> {
        let _span = tracing::info_span!("superstep", run = %run, superstep = state.superstep).entered();
        let started_at = state.superstep;
        let step = |state: RunState, event: Event, commands: &mut Vec<Command>| -> Result<RunState, EngineError> {
            let (state, more) = machine::step(graph, state, event, now).map_err(|e| corrupt("step", e))?;
            commands.extend(more);
            Ok(state)
        };
        let mut moved = !commands.is_empty();
        // 1. Paused nodes whose decision, timer or child is in.
        for (node, wait) in state.waits.clone() {
            let output = match wait {
                Wait::Approval => approvals
                    .iter()
                    .find(|a| {
                        a.node == node
                            && a.superstep == state.superstep
                            && matches!(a.status, ApprovalStatus::Approved | ApprovalStatus::Rejected)
                    })
                    .map(|a| decision_output(graph, a)),
                Wait::Timer { at } => (at <= now).then(NodeOutput::default),
                Wait::Child => children
                    .iter()
                    .find(|c| c.parent_node.as_deref() == Some(node.as_str()) && c.status.is_terminal())
                    .map(|c| {
                        let channels =
                            serde_json::from_str::<RunState>(&c.state).map(|s| s.channels).unwrap_or_default();
                        let out = match graph.node(&node).map(|n| &n.kind) {
                            Some(NodeKind::Subgraph { output, .. }) => output.clone(),
                            _ => String::new(),
                        };
                        let result = json!({ "status": c.status, "reason": c.reason, "channels": channels });
                        NodeOutput::default().write(&out, result).route(c.status.as_str())
                    }),
            };
            if let Some(output) = output
                && state.superstep == started_at
                && !state.is_finished()
            {
                state = step(state, Event::WaitResolved { node, output }, &mut commands)?;
                moved = true;
            }
        }
        // 2. Compensation, one step per commit.
        if state.phase == Phase::Compensating
            && !moved
            && let Some(node) = state.compensation.first().cloned()
        {
            {
                let handler_name = graph.node(&node).and_then(|d| d.compensate.clone()).unwrap_or_default();
                if let Some(handler) = self.registry.get_handler(&handler_name) {
                    let ctx = self.context(run, org, &node, 1, &state, now, None);
                    if let Err(e) = handler.run(&ctx) {
                        commands.push(Command::Log {
                            key: format!("compensation_failed/{node}"),
                            superstep: state.superstep,
                            node: Some(node.clone()),
                            kind: "compensation_failed".into(),
                            details: json!({ "error": e.message() }),
                        });
                    }
                }
                state = step(state, Event::Compensated { node }, &mut commands)?;
                moved = true;
            }
        }
        // 3. The runnable nodes of this super-step (not of the next one: one super-step per commit).
        if state.superstep == started_at && state.phase == Phase::Running {
            for node in state.runnable(graph, now) {
                if state.superstep != started_at || state.phase != Phase::Running {
                    break;
                }
                let def = graph.node(&node).ok_or_else(|| corrupt("node", &node))?;
                let (handler_name, model_spec) = match &def.kind {
                    NodeKind::Agent { handler, model } => (handler, model.as_ref()),
                    NodeKind::Condition { handler } => (handler, None),
                    _ => continue,
                };
                let attempt = state.attempts.get(&node).copied().unwrap_or(0) + 1;
                let result = {
                    let _node_span = tracing::info_span!("node", node = %node, attempt).entered();
                    let ctx = self.context(run, org, &node, attempt, &state, now, model_spec);
                    match self.registry.get_handler(handler_name) {
                        Some(h) => h.run(&ctx),
                        None => Err(NodeFailure::Fatal(format!("handler {handler_name:?} is not available"))),
                    }
                };
                let event = match result {
                    Ok(output) => Event::NodeSucceeded { node, output },
                    Err(failure) => Event::NodeFailed { node, failure, now },
                };
                state = step(state, event, &mut commands)?;
                moved = true;
            }
        }
        if !moved {
            return Ok(None);
        }
        self.build_commit(graph, run, org, revision, &state, commands, now).map(Some)
    }

    #[allow(clippy::too_many_arguments)]
    fn context<'c>(
        &'c self,
        run: RunId,
        org: OrgId,
        node: &'c str,
        attempt: u32,
        state: &'c RunState,
        now: DateTime<Utc>,
        model_spec: Option<&'c crate::graph::ModelSpec>,
    ) -> NodeContext<'c> {
        NodeContext {
            run,
            org,
            node,
            attempt,
            channels: &state.channels,
            now,
            model_spec,
            model: self.model,
            clock: self.store.clock(),
            documents: Some(self),
            records: Some(self),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn build_commit(
        &self,
        graph: &GraphDef,
        run: RunId,
        _org: OrgId,
        revision: u64,
        state: &RunState,
        commands: Vec<Command>,
        now: DateTime<Utc>,
    ) -> Result<(StepCommit, Vec<RunId>), EngineError> {
        let state_json = serde_json::to_string(state).map_err(|e| corrupt("run state", e))?;
        let mut commit = StepCommit::new(run, revision, state.superstep, status_of(state.phase), state_json);
        commit.reason = state.reason.clone();
        commit.wake_at = state.wake_at();
        let mut kids = Vec::new();
        for command in commands {
            match command {
                Command::Log { key, superstep, node, kind, details } => {
                    if kind == "failed_attempt" {
                        commit.failed_attempt = true;
                    }
                    commit.events.push(NewEvent { key, superstep, node, kind, details });
                }
                Command::OpenApproval { node, spec, state_seen, choices } => commit.approvals.push(NewApproval {
                    node,
                    title: spec.title.clone(),
                    eligible_roles: spec.eligible_roles.clone(),
                    four_eyes: spec.four_eyes,
                    state_seen,
                    choices,
                    due_at: spec.due_secs.map(|s| now + Duration::seconds(s)),
                    escalate_at: spec.escalate_after_secs.map(|s| now + Duration::seconds(s)),
                }),
                Command::StartChild { node, graph: child_name, input } => {
                    let child = self.registry.graph(&child_name)?;
                    let (child_state, child_commands) = machine::start(child, input.clone(), now);
                    let id = RunId::new();
                    // The child's start is logged when it first commits; opening waits of its entry happen then too.
                    drop(child_commands);
                    commit.children.push(NewChildRun {
                        id,
                        parent_node: node,
                        graph_name: child.name.clone(),
                        graph_version: child.version,
                        graph_snapshot: serde_json::to_string(child).map_err(|e| corrupt("graph", e))?,
                        input: input.to_string(),
                        state: serde_json::to_string(&child_state).map_err(|e| corrupt("run state", e))?,
                        status: status_of(child_state.phase),
                        superstep: child_state.superstep,
                    });
                    kids.push(id);
                }
                Command::Handoff { node, superstep, index, handoff } => commit.handoffs.push(NewHandoff {
                    idempotency_key: handoff.key.unwrap_or_else(|| format!("{run}/s{superstep}/{node}/{index}")),
                    node,
                    agent_type: handoff.agent_type,
                    priority: handoff.priority,
                    payload: handoff.payload,
                    scheduled_at: handoff.scheduled_at,
                }),
                Command::RetryScheduled { .. } | Command::Compensate { .. } => {}
                Command::Finish { succeeded, reason } => {
                    if !succeeded {
                        commit.cancel_children = true;
                    }
                    commit.audit.push((
                        "run_finished".into(),
                        json!({
                            "graph": graph.name,
                            "status": if succeeded { "succeeded" } else { "failed" },
                            "reason": reason,
                            "outcome": state.channels.get("outcome"),
                        }),
                    ));
                }
            }
        }
        Ok((commit, kids))
    }
}

/// Page text for steps, read as this worker for the run's organization.
impl crate::registry::DocumentText for Engine<'_> {
    fn page_texts(
        &self,
        org: OrgId,
        document: pactwise_domain::DocumentId,
        first: u32,
        last: u32,
    ) -> Result<Option<pactwise_store::PageTexts>, String> {
        self.store.pages().texts_for_worker(self.credential, org, document, first, last).map_err(|e| e.to_string())
    }
}

/// Who starts a run: a person's session, or the platform for an organization.
#[derive(Clone, Copy)]
enum Starter<'a> {
    Session(&'a OrgScope),
    /// The platform; the run's id chosen by the caller when given (a start made once per piece of work).
    Platform(pactwise_domain::OrgId, Option<RunId>),
}

/// Record changes of steps, as this worker for the run's organization.
impl crate::registry::Records for Engine<'_> {
    fn vendor_onboarding_decided(
        &self,
        org: OrgId,
        run: RunId,
        vendor: pactwise_store::OnboardedVendor<'_>,
        approved: bool,
    ) -> Result<Option<pactwise_store::VendorRecord>, String> {
        self.store.vendors().onboarding_decided_for_worker(self.credential, org, vendor, run, approved).map_err(|e| {
            match e {
                pactwise_store::StoreError::NotFound => {
                    "the vendor is no longer among the organization's records (deleted); nothing was changed"
                        .to_string()
                }
                e => e.to_string(),
            }
        })
    }

    fn invoice_matched(
        &self,
        org: OrgId,
        run: RunId,
        invoice: pactwise_domain::DocumentId,
        contract: Option<pactwise_domain::DocumentId>,
        vendor: Option<&str>,
    ) -> Result<(), String> {
        self.store.vendors().invoice_matched_for_worker(self.credential, org, run, invoice, contract, vendor).map_err(|e| match e {
            pactwise_store::StoreError::NotFound => {
                "the invoice, its contract or its vendor is no longer among the organization's records; nothing was recorded"
                    .to_string()
            }
            e => e.to_string(),
        })
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
