//! Workflow runs and the approvals inbox as user actions: start, show, list and cancel runs; the inbox of approvals
//! the session may resolve; approve or reject with a reason. Each is a few lines over `pactwise-engine` and the
//! store; the organization and the approver's identity come from the session only. The engine works here as this
//! process's platform worker, driving a run until it waits or ends.

use crate::{Api, ApiError};
use chrono::{DateTime, Utc};
use pactwise_domain::{ApprovalId, ApprovalStatus, Decision, ErrorCode, Role, RunId, RunStatus, UserId};
use pactwise_engine::{Engine, EngineError, GatewayModel, ModelPort, Registry, RunState};
use pactwise_store::{ApprovalRecord, OrgScope, RunRecord, Store, SweepPolicy};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

pub use pactwise_workflows::bench::BenchReport;

pub(crate) fn registry() -> Result<&'static Registry, ApiError> {
    static REGISTRY: OnceLock<Result<Registry, String>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| {
            let mut r = pactwise_workflows::registry().map_err(|e| e.to_string())?;
            pactwise_agents::run::register(&mut r);
            Ok(r)
        })
        .as_ref()
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the built-in workflows did not load: {e}")))
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        match e {
            EngineError::Store(s) => s.into(),
            other => ApiError::new(other.code(), other.to_string()),
        }
    }
}

/// A run as the UI and the CLI show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RunView {
    pub id: RunId,
    pub graph: String,
    pub graph_version: u32,
    pub status: RunStatus,
    pub superstep: u32,
    pub reason: Option<String>,
    /// Paused nodes and what they wait for.
    pub waiting_on: Vec<String>,
    /// The shared state (channels) as of the last checkpoint.
    pub channels: Value,
    pub parent: Option<RunId>,
    pub started_by: Option<UserId>,
    /// The starter's name, when known.
    pub started_by_name: Option<String>,
    /// The run executes on another desktop of the organization; this is its published copy (read-only here).
    pub from_another_desktop: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// One line of a run's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RunEventView {
    pub superstep: u32,
    pub node: Option<String>,
    pub kind: String,
    pub details: Value,
    pub at: DateTime<Utc>,
}

/// An approval step: what the approver saw and, once decided, who decided, when and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ApprovalView {
    pub id: ApprovalId,
    pub run: RunId,
    pub node: String,
    pub title: String,
    pub status: ApprovalStatus,
    pub eligible_roles: Vec<Role>,
    pub four_eyes: bool,
    /// The evidence as it was when the step paused.
    pub state_seen: Value,
    pub choices: Vec<String>,
    pub due_at: Option<DateTime<Utc>>,
    pub escalated: bool,
    /// The urgent notification its escalation wrote, if any (filled by the inbox).
    pub urgent_notice: Option<String>,
    pub decided_by: Option<UserId>,
    /// The decider's name, when known.
    pub decided_by_name: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    pub reason: Option<String>,
    pub choice: Option<String>,
    pub created_at: DateTime<Utc>,
    /// The step's run executes on another desktop of the organization.
    pub from_another_desktop: bool,
    /// Who started the run, by name, when known.
    pub requested_by_name: Option<String>,
    /// This desktop's decision on the step sent to the sync service: waiting to sync until the service stamps it,
    /// or refused with the reason. Never shown as decided before the stamp.
    pub my_request: Option<RequestView>,
}

/// A decision this desktop sent to the sync service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RequestView {
    pub decision: Decision,
    pub reason: String,
    pub choice: Option<String>,
    pub status: RequestState,
    /// The service's reason, in people's words, when refused.
    pub refusal: Option<String>,
    pub sent_at: DateTime<Utc>,
}

/// Where a decision request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RequestState {
    /// Not answered by the sync service yet (offline, or not pushed): not a decision yet.
    WaitingToSync,
    Stamped,
    Refused,
}

/// A run with its timeline, approvals, handed-off tasks and checkpoint count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RunDetail {
    pub run: RunView,
    pub events: Vec<RunEventView>,
    pub approvals: Vec<ApprovalView>,
    pub tasks: Vec<TaskView>,
    pub checkpoints: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TaskView {
    pub agent_type: String,
    pub status: pactwise_domain::TaskStatus,
    pub priority: i32,
    pub payload: Value,
    pub scheduled_at: Option<DateTime<Utc>>,
}

/// What cancelling touched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CancelOutcome {
    pub run: RunView,
    /// The run lives on another desktop: the cancellation was sent to it and happens there when it arrives.
    pub sent_to_its_desktop: bool,
    pub runs_cancelled: u32,
    pub tasks_cancelled: u32,
    pub approvals_cancelled: u32,
}

/// A decision and where the run stands after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct DecisionOutcome {
    pub approval: ApprovalView,
    pub run: RunView,
    /// The organization syncs: the decision was sent to the sync service as a request and decides nothing until
    /// the service stamps it (the approval's `my_request` says where it stands).
    pub waiting_to_sync: bool,
}

/// A built-in graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct GraphSummary {
    pub name: String,
    pub version: u32,
    pub description: String,
    pub nodes: u32,
}

pub(crate) fn run_view(r: &RunRecord) -> RunView {
    let state: Option<RunState> = serde_json::from_str(&r.state).ok();
    let waiting_on = state
        .as_ref()
        .map(|s| {
            s.waits
                .iter()
                .map(|(node, w)| {
                    format!(
                        "{node}: {}",
                        serde_json::to_value(w)
                            .map(|v| v["for"].as_str().unwrap_or("").to_string())
                            .unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    RunView {
        id: r.id,
        graph: r.graph_name.clone(),
        graph_version: r.graph_version,
        status: r.status,
        superstep: r.superstep,
        reason: r.reason.clone(),
        waiting_on,
        channels: state.map(|s| serde_json::to_value(s.channels).unwrap_or(Value::Null)).unwrap_or(Value::Null),
        parent: r.parent,
        started_by: r.started_by,
        started_by_name: None,
        from_another_desktop: false,
        created_at: r.created_at,
        updated_at: r.updated_at,
        finished_at: r.finished_at,
    }
}

pub(crate) fn approval_view(a: &ApprovalRecord) -> ApprovalView {
    ApprovalView {
        id: a.id,
        run: a.run,
        node: a.node.clone(),
        title: a.title.clone(),
        status: a.status,
        eligible_roles: a.eligible_roles.clone(),
        four_eyes: a.four_eyes,
        state_seen: a.state_seen.clone(),
        choices: a.choices.clone(),
        due_at: a.due_at,
        escalated: a.escalated_at.is_some(),
        urgent_notice: None,
        decided_by: a.decided_by,
        decided_by_name: a.decided_by_name.clone(),
        decided_at: a.decided_at,
        reason: a.reason.clone(),
        choice: a.choice.clone(),
        created_at: a.created_at,
        from_another_desktop: false,
        requested_by_name: None,
        my_request: None,
    }
}

pub fn parse_run_id(text: &str) -> Result<RunId, ApiError> {
    text.parse().map_err(|_| {
        ApiError::new(ErrorCode::InvalidInput, format!("{text:?} is not a run id; see `pactwise runs list`"))
    })
}

pub fn parse_approval_id(text: &str) -> Result<ApprovalId, ApiError> {
    text.parse().map_err(|_| {
        ApiError::new(ErrorCode::InvalidInput, format!("{text:?} is not an approval id; see `pactwise inbox`"))
    })
}

/// The built-in graphs.
pub fn workflow_graphs() -> Result<Vec<GraphSummary>, ApiError> {
    Ok(registry()?
        .graphs()
        .map(|g| GraphSummary {
            name: g.name.clone(),
            version: g.version,
            description: g.description.clone(),
            nodes: g.nodes.len() as u32,
        })
        .collect())
}

/// Runs the engine benchmark on a file database in `dir` (a fresh temporary directory when `None`).
pub async fn bench_engine(dir: Option<PathBuf>, runs: usize, concurrency: usize) -> Result<BenchReport, ApiError> {
    if runs == 0 || concurrency == 0 {
        return Err(ApiError::new(ErrorCode::InvalidInput, "--runs and --concurrency must be at least 1"));
    }
    tokio::task::spawn_blocking(move || {
        let (dir, temporary) = match dir {
            Some(d) => (d, false),
            None => (std::env::temp_dir().join(format!("pactwise-engine-bench-{}", std::process::id())), true),
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| ApiError::new(ErrorCode::Storage, format!("cannot create {}: {e}", dir.display())))?;
        let report = pactwise_workflows::bench::run(&dir, runs, concurrency).map_err(ApiError::from);
        if temporary {
            let _ = std::fs::remove_dir_all(&dir);
        }
        report
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the benchmark was interrupted ({e})")))?
}

/// Runs `f` with an engine on the store thread, as this process's worker (with the model when it is ready).
pub(crate) async fn with_engine<R: Send + 'static>(
    api: &Api,
    f: impl FnOnce(&Store, &Engine<'_>) -> Result<R, ApiError> + Send + 'static,
) -> Result<R, ApiError> {
    let registry = api.workflows.clone();
    let model = (api.model_availability().await == crate::ModelAvailability::Ready)
        .then(|| GatewayModel::new(api.model().clone(), tokio::runtime::Handle::current()));
    let credential = api.platform.clone();
    api.db
        .call(move |store| {
            let engine =
                Engine::new(store, &registry, &credential).with_model(model.as_ref().map(|m| m as &dyn ModelPort));
            Ok(f(store, &engine))
        })
        .await?
}

impl Api {
    /// Starts a run of a built-in graph in the session's organization and drives it until it waits or ends. The
    /// input is checked against the graph's form first (`pactwise_workflows::check_input`): a field that does not
    /// fit is named in the error and nothing starts.
    pub async fn start_run(&self, scope: &OrgScope, graph: String, input: Value) -> Result<RunView, ApiError> {
        let def = self.workflows.graph(&graph)?;
        pactwise_workflows::check_input(def, &input)
            .map_err(|p| ApiError::new(ErrorCode::InvalidInput, p.to_string()))?;
        let scope = scope.clone();
        let started = with_engine(self, move |store, engine| {
            let scope = store.sessions().open(scope.session())?;
            // Runs started from a record read it here (and move it) on the store's thread.
            if graph == "vendor_onboarding" {
                return crate::vendors::start_onboarding_run(store, engine, &scope, input);
            }
            let input = crate::record_runs::input_from_records(store, &scope, &graph, input)?;
            let id = engine.start(&scope, &graph, input)?;
            Ok(run_view(&engine.drive(id)?))
        })
        .await;
        self.wake_work();
        self.sync_slot.wake();
        started
    }

    /// The session organization's runs, newest first.
    pub async fn list_runs(&self, scope: &OrgScope) -> Result<Vec<RunView>, ApiError> {
        let scope = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let mut runs: Vec<RunView> = store.runs().list(&scope, 200)?.iter().map(run_view).collect();
                runs.extend(crate::shared_runs::shared_run_views(store, &scope, 200)?);
                runs.sort_by_key(|r| std::cmp::Reverse(r.created_at));
                Ok(runs)
            })
            .await?)
    }

    /// A run with its timeline, approvals and tasks.
    pub async fn show_run(&self, scope: &OrgScope, id: RunId) -> Result<RunDetail, ApiError> {
        let scope = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let run = match store.runs().get(&scope, id) {
                    Err(pactwise_store::StoreError::NotFound) => {
                        return crate::shared_runs::shared_run_detail(store, &scope, id);
                    }
                    other => other?,
                };
                let events = store
                    .runs()
                    .events(&scope, id)?
                    .into_iter()
                    .map(|e| RunEventView {
                        superstep: e.superstep,
                        node: e.node,
                        kind: e.kind,
                        details: e.details,
                        at: e.at,
                    })
                    .collect();
                let approvals = store.approvals().for_run(&scope, id)?.iter().map(approval_view).collect();
                let tasks = store
                    .tasks()
                    .for_run(&scope, id)?
                    .into_iter()
                    .map(|t| TaskView {
                        agent_type: t.agent_type,
                        status: t.status,
                        priority: t.priority.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
                        payload: t.payload,
                        scheduled_at: t.scheduled_at,
                    })
                    .collect();
                let checkpoints = store.runs().checkpoints(&scope, id)?.len() as u32;
                Ok(RunDetail { run: run_view(&run), events, approvals, tasks, checkpoints })
            })
            .await?)
    }

    /// Cancels a run with its child runs, queued tasks and pending approvals.
    pub async fn cancel_run(&self, scope: &OrgScope, id: RunId, reason: String) -> Result<CancelOutcome, ApiError> {
        let scope = scope.clone();
        let outcome = self
            .db
            .call(move |store| {
                let report = match store.runs().cancel(&scope, id, &reason) {
                    Err(pactwise_store::StoreError::NotFound) => {
                        return crate::shared_runs::request_cancel(store, &scope, id, &reason);
                    }
                    other => other?,
                };
                Ok(CancelOutcome {
                    sent_to_its_desktop: false,
                    run: run_view(&store.runs().get(&scope, id)?),
                    runs_cancelled: report.runs as u32,
                    tasks_cancelled: report.tasks as u32,
                    approvals_cancelled: report.approvals as u32,
                })
            })
            .await?;
        self.sync_slot.wake();
        Ok(outcome)
    }

    /// Pending approvals the session may resolve, oldest first. Escalations that are due are made first.
    pub async fn inbox(&self, scope: &OrgScope) -> Result<Vec<ApprovalView>, ApiError> {
        let scope = scope.clone();
        with_engine(self, move |store, engine| {
            engine.sweep(SweepPolicy::default())?;
            let urgent: Vec<_> = store.approvals().notifications(&scope)?.into_iter().filter(|n| n.urgent).collect();
            let local: Vec<ApprovalView> = store
                .approvals()
                .inbox(&scope)?
                .iter()
                .map(|a| ApprovalView {
                    urgent_notice: urgent.iter().rev().find(|n| n.approval == a.id).map(|n| n.message.clone()),
                    ..approval_view(a)
                })
                .collect();
            crate::shared_runs::with_other_desktops(store, &scope, local)
        })
        .await
    }

    /// Approves or rejects as the session's user (the store checks organization, role and four-eyes, and stamps
    /// who and when), then drives the run on until it waits or ends.
    pub async fn decide_approval(
        &self,
        scope: &OrgScope,
        id: ApprovalId,
        decision: Decision,
        reason: String,
        choice: Option<String>,
    ) -> Result<DecisionOutcome, ApiError> {
        if self.org_syncs(scope).await? {
            return self.request_decision(scope, id, decision, reason, choice).await;
        }
        let scope = scope.clone();
        with_engine(self, move |store, engine| {
            let scope = store.sessions().open(scope.session())?;
            let (approval, run) = engine.decide(&scope, id, decision, &reason, choice.as_deref())?;
            // The decided step may belong to a child run: show the top-level run it serves.
            let mut top = run;
            while let Some(parent) = top.parent {
                top = store.runs().get(&scope, parent)?;
            }
            Ok(DecisionOutcome { approval: approval_view(&approval), run: run_view(&top), waiting_to_sync: false })
        })
        .await
        .inspect(|_| self.wake_work())
    }

    /// The task queue's health for the session's organization, with its own thresholds (setting `queue.health`):
    /// its agent types with many failures in the last hour and its queues with a large backlog (other organizations
    /// never count). Owners and admins only.
    pub async fn queue_health(&self, scope: &OrgScope) -> Result<Value, ApiError> {
        let scope = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let thresholds = store.tasks().health_thresholds(&scope)?;
                let health = store.tasks().health_of(&scope)?;
                Ok(serde_json::json!({ "healthy": health.is_healthy(), "thresholds": thresholds, "failing_agents": health.failing_agents, "backlogs": health.backlogs }))
            })
            .await?)
    }

    /// Changes the organization's health-check thresholds (owners and admins; checked by `rules::settings`).
    pub async fn set_queue_health_thresholds(
        &self,
        scope: &OrgScope,
        thresholds: pactwise_store::HealthThresholds,
    ) -> Result<(), ApiError> {
        let scope = scope.clone();
        Ok(self
            .db
            .call(move |store| store.settings().set(&scope, pactwise_store::QUEUE_HEALTH_SETTING, &thresholds))
            .await?)
    }

    /// One round of background work: the watchdog's sweep, then runs that have work (retries, timers, woken
    /// parents) are driven on. Returns the runs that moved.
    pub async fn work_runs(&self, scope: &OrgScope) -> Result<Vec<RunView>, ApiError> {
        let org = scope.org();
        let moved = with_engine(self, move |_, engine| {
            engine.sweep(SweepPolicy::default())?;
            Ok(engine.work(100)?.iter().filter(|r| r.org == org).map(run_view).collect())
        })
        .await;
        self.sync_slot.wake();
        moved
    }
}
