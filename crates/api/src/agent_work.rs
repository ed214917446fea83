//! Requests to the agents as user actions: the plan in words before anything runs (with what the agents remember
//! that bears on it), running it — the plan compiled into a graph on the engine, started in the session's
//! organization by a member who holds the manager role, its facts read in that scope only — and each step's output
//! after; the follow-up tasks' worker (bounded concurrency, a per-task timeout; the desktop's work loop and
//! `pactwise runs work` call it); the notices the agents leave; the agents' memory of the session's person.

use crate::runs::with_engine;
use crate::{Api, ApiError};
use chrono::{DateTime, Utc};
use pactwise_agents::facts::{ContractFacts, Facts, ItemFacts, VendorFacts};
use pactwise_agents::memory::{self, Candidate};
use pactwise_agents::steps::{capitalise, day_words};
use pactwise_agents::tasks::{ACTION, TaskPayload, run_task};
use pactwise_agents::{
    AgentType, Outcome, PLAN_GRAPH, Plan, RunInput, STEPS_CHANNEL, StepOutput, StepStatus, compile, money_words,
};
use pactwise_domain::{DocumentId, ErrorCode, ItemStatus, PageSource, RunId, RunStatus};
use pactwise_engine::RunState;
use pactwise_store::{MemoryTier, NewMemory, NewNotice, NewTask, OrgScope, TaskDone, TaskRecord};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The setting (per organization, not synced) listing the members who hold the manager role besides owners and
/// admins.
pub const MANAGERS_KEY: &str = "agents.managers";
/// Memories recalled for one request at most.
pub const RECALL: usize = 5;
/// How long a claimed task is leased to its worker: past it, the watchdog gives it to another.
const TASK_LEASE_SECS: i64 = 300;

/// A step of the plan, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PlanStepView {
    /// The agent's name ("Legal").
    pub agent: String,
    pub why: String,
    /// The agents whose output it reads, by name.
    pub after: Vec<String>,
    /// Its failure stops the run (else only the steps after it that read it are skipped).
    pub stops_the_run: bool,
    /// 1 for the steps that run first; steps with the same number run side by side.
    pub round: u32,
}

/// The manager's plan for a request, in words, before it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PlanView {
    pub request: String,
    /// The kind of work ("a renewal").
    pub kind: String,
    /// There is a plan to run.
    pub ready: bool,
    /// Why there is none, and what to write instead.
    pub message: Option<String>,
    pub urgent: bool,
    /// What the request names, one line each ("Contract MSA-2025-031", "Amount EUR 50,000.00").
    pub names: Vec<String>,
    pub steps: Vec<PlanStepView>,
    pub notes: Vec<String>,
    /// What the agents remember that bears on the request (reference only; it does not change the plan).
    pub remembered: Vec<String>,
    /// The session may run it (holds the manager role).
    pub may_run: bool,
    pub cannot_run_because: Option<String>,
}

/// One agent's step of a run, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentStepView {
    pub agent: String,
    /// "Done", "Failed", "Skipped" or "Waiting".
    pub state: String,
    pub summary: String,
    pub findings: Vec<String>,
    /// Who wrote the summary, when the model was asked: "Summary drafted by the model from the findings, checked by
    /// the rules." or why the model's draft was set aside. `None` when only the rules ran.
    pub drafted: Option<String>,
}

/// A follow-up an agent queued, in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FollowUpView {
    pub agent: String,
    pub why: String,
    /// "Queued", "Due on 1 March 2027", "Done: …", "Failed: …".
    pub state: String,
}

/// A notice the agents left.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct NoticeView {
    pub id: String,
    pub title: String,
    pub message: String,
    /// Also announced with a desktop notification.
    pub urgent: bool,
    pub created_at: DateTime<Utc>,
    pub seen: bool,
    pub run: Option<RunId>,
}

/// A request the agents ran (or are running).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentRequestView {
    pub run: RunId,
    pub request: String,
    pub kind: String,
    /// In words: "Done", "Running", "Stopped: …".
    pub state: String,
    pub finished: bool,
    pub started_at: DateTime<Utc>,
    pub plan: PlanView,
    pub steps: Vec<AgentStepView>,
    pub follow_ups: Vec<FollowUpView>,
    pub notices: Vec<NoticeView>,
}

/// A request in the list of recent ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentRequestRow {
    pub run: RunId,
    pub request: String,
    pub kind: String,
    pub state: String,
    pub started_at: DateTime<Utc>,
}

/// A memory, as the Memory view shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct MemoryView {
    pub id: String,
    pub text: String,
    pub why: String,
    /// "For today" (short-term) or "Kept" (long-term).
    pub kind: String,
    /// When a short-term memory is forgotten.
    pub until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// One of the agents' thresholds, as Settings → Agents shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentSettingView {
    /// `agent.field`: what the change names.
    pub setting: String,
    /// The agent it belongs to, in words ("Secretary"; "Workers" for the workers').
    pub section: String,
    /// What it does and its bounds.
    pub description: String,
    pub value: String,
    /// `number`, `flag` or `text`.
    pub kind: String,
}

/// The agents' thresholds of the organization and whether the session may change them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentSettingsView {
    pub settings: Vec<AgentSettingView>,
    pub may_change: bool,
}

/// What one round of the follow-up worker did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskRound {
    pub done: usize,
    pub failed: usize,
    pub timed_out: usize,
    /// Notices left (the desktop announces the urgent ones).
    pub notices: usize,
}

/// How the follow-up worker works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerOptions {
    /// Tasks run at once.
    pub concurrency: usize,
    /// How long one task may take.
    pub timeout: Duration,
    /// Batches in one round at most (the store serves other requests between them).
    pub batches: usize,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        let d = pactwise_agents::config::WorkersConfig::default();
        WorkerOptions {
            concurrency: d.concurrency as usize,
            timeout: Duration::from_secs(d.timeout_secs as u64),
            batches: 16,
        }
    }
}

fn state_word(s: StepStatus) -> &'static str {
    match s {
        StepStatus::Done => "Done",
        StepStatus::Failed => "Failed",
        StepStatus::Skipped => "Skipped",
    }
}

/// The plan in words.
pub fn plan_view(request: &str, plan: &Plan, remembered: Vec<String>, may_run: Result<(), String>) -> PlanView {
    let levels = pactwise_agents::compile::levels(plan);
    let mut names = Vec::new();
    for c in &plan.entities.contracts {
        names.push(match &c.contract {
            Some(_) => format!("Contract {}", c.reference),
            None => format!("Contract {} (not found in this organization)", c.reference),
        });
    }
    for v in &plan.entities.vendors {
        names.push(match &v.vendor {
            Some(_) => format!("Vendor {}", v.name),
            None => format!("Vendor {} (new to the organization)", v.name),
        });
    }
    for m in &plan.entities.amounts {
        names.push(format!("Amount {}", money_words(m)));
    }
    for d in &plan.entities.dates {
        names.push(format!("Date {} (\u{201c}{}\u{201d})", day_words(d.date), d.text));
    }
    let (ready, message) = match &plan.outcome {
        Outcome::Planned => (true, None),
        Outcome::NothingToDo { why } | Outcome::Refused { why } => (false, Some(why.clone())),
    };
    PlanView {
        request: request.to_string(),
        kind: capitalise(plan.request_type.words()),
        ready,
        message,
        urgent: plan.urgency == pactwise_agents::Urgency::High,
        names,
        steps: plan
            .steps
            .iter()
            .map(|s| PlanStepView {
                agent: s.agent.name().into(),
                why: s.why.clone(),
                after: s.depends_on.iter().map(|d| d.name().to_string()).collect(),
                stops_the_run: s.critical,
                round: levels.get(&s.agent).map_or(1, |l| *l as u32 + 1),
            })
            .collect(),
        notes: plan.notes.clone(),
        remembered,
        may_run: may_run.is_ok() && ready,
        cannot_run_because: may_run.err(),
    }
}

fn item_status(s: ItemStatus) -> &'static str {
    match s {
        ItemStatus::Present => "present",
        ItemStatus::Partial => "partial",
        ItemStatus::Absent => "absent",
        ItemStatus::NotEvaluated => "not evaluated",
    }
}

fn steps_of(record: &pactwise_store::RunRecord) -> Vec<StepOutput> {
    let Ok(state) = serde_json::from_str::<RunState>(&record.state) else { return Vec::new() };
    let mut out: Vec<StepOutput> = state
        .channels
        .get(STEPS_CHANNEL)
        .and_then(|v| v.as_object())
        .map(|m| m.values().filter_map(|v| serde_json::from_value(v.clone()).ok()).collect())
        .unwrap_or_default();
    out.sort_by_key(|s| s.agent);
    out
}

fn run_state(record: &pactwise_store::RunRecord) -> (String, bool) {
    match record.status {
        RunStatus::Succeeded => ("Done".into(), true),
        RunStatus::Failed => (format!("Stopped: {}", record.reason.clone().unwrap_or_default()), true),
        RunStatus::Cancelled => ("Cancelled".into(), true),
        _ => ("Running".into(), false),
    }
}

fn follow_up_view(t: &TaskRecord, today: chrono::NaiveDate) -> Option<FollowUpView> {
    let payload: TaskPayload = serde_json::from_value(t.payload.clone()).ok()?;
    let agent = AgentType::from_id(&t.agent_type).map_or(t.agent_type.clone(), |a| a.name().to_string());
    let state = match t.status {
        pactwise_domain::TaskStatus::Done => format!("Done: {}", t.result.clone().unwrap_or_default()),
        pactwise_domain::TaskStatus::Failed => format!("Failed: {}", t.error.clone().unwrap_or_default()),
        pactwise_domain::TaskStatus::Cancelled => "Cancelled".into(),
        _ => match t.scheduled_at.map(|d| d.date_naive()).filter(|d| *d > today) {
            Some(d) => format!("Due on {}", day_words(d)),
            None => "Queued".into(),
        },
    };
    Some(FollowUpView { agent, why: payload.why, state })
}

fn notice_view(n: pactwise_store::AgentNotice) -> NoticeView {
    NoticeView {
        id: n.id,
        title: n.title,
        message: n.message,
        urgent: n.urgent,
        created_at: n.created_at,
        seen: n.seen,
        run: n.run,
    }
}

/// How a step's summary was written, in words.
fn drafted_words(d: &pactwise_agents::Drafted) -> String {
    match d {
        pactwise_agents::Drafted::ByModel => {
            "Summary drafted by the model from the agents' findings and checked against them.".into()
        }
        pactwise_agents::Drafted::SetAside { why } => {
            format!("The model's summary was set aside ({why}); this one is the rules'.")
        }
    }
}

/// The memories a run leaves for the person who ran it: the request itself for a day, and what it named that is
/// worth keeping (amounts and dates with what they are for).
fn memories_of(input: &RunInput, run: RunId, today: chrono::NaiveDate) -> Vec<NewMemory> {
    let plan = &input.plan;
    let subject = plan
        .entities
        .contracts
        .iter()
        .find(|c| c.contract.is_some())
        .map(|c| c.reference.clone())
        .or_else(|| plan.entities.vendors.first().map(|v| v.name.clone()));
    let about = subject.as_deref().map(|s| format!(" for {s}")).unwrap_or_default();
    let kind = plan.request_type.words().trim_start_matches("a ").trim_start_matches("an ").to_string();
    let why = format!("From your request of {}", day_words(today));
    let mut out = vec![NewMemory {
        tier: MemoryTier::Short,
        text: format!("You asked: \u{201c}{}\u{201d}", input.request.trim()),
        why: why.clone(),
        importance: 0.3,
        run: Some(run.to_string()),
    }];
    for m in &plan.entities.amounts {
        out.push(NewMemory {
            tier: MemoryTier::Long,
            text: format!("{}{about}: {}", capitalise(&kind), money_words(m)),
            why: why.clone(),
            importance: 0.7,
            run: Some(run.to_string()),
        });
    }
    for d in &plan.entities.dates {
        out.push(NewMemory {
            tier: MemoryTier::Long,
            text: format!("{}{about}: by {}", capitalise(&kind), day_words(d.date)),
            why: why.clone(),
            importance: 0.6,
            run: Some(run.to_string()),
        });
    }
    out
}

impl Api {
    /// Whether the session holds the manager role: owners and admins do; other members when granted.
    async fn may_orchestrate(&self, scope: &OrgScope) -> Result<Result<(), String>, ApiError> {
        let s = scope.clone();
        let granted: Vec<String> =
            self.db.call(move |store| store.settings().get::<Vec<String>>(&s, MANAGERS_KEY)).await?.unwrap_or_default();
        Ok(pactwise_rules::roles::may_orchestrate(scope.role(), granted.contains(&scope.user().to_string()))
            .map_err(|r| r.message))
    }

    /// Grants or takes back the manager role of a member (owners and admins only).
    pub async fn set_manager(
        &self,
        scope: &OrgScope,
        user: pactwise_domain::UserId,
        manager: bool,
    ) -> Result<Vec<String>, ApiError> {
        pactwise_rules::roles::check(scope.role(), pactwise_rules::roles::SharedChange::Setting(MANAGERS_KEY))
            .map_err(|refusal| ApiError::new(ErrorCode::Forbidden, refusal.message))?;
        let s = scope.clone();
        self.db
            .call(move |store| {
                let members = store.members().list(&s)?;
                if !members.iter().any(|m| m.user == user) {
                    return Err(pactwise_store::StoreError::NotFound);
                }
                let mut granted: Vec<String> = store.settings().get(&s, MANAGERS_KEY)?.unwrap_or_default();
                granted.retain(|u| *u != user.to_string());
                if manager {
                    granted.push(user.to_string());
                }
                store.settings().set(&s, MANAGERS_KEY, &granted)?;
                Ok(members
                    .into_iter()
                    .filter(|m| granted.contains(&m.user.to_string()))
                    .map(|m| m.display_name)
                    .collect())
            })
            .await
            .map_err(ApiError::from)
    }

    /// The organization's agent thresholds in words, for Settings → Agents.
    pub async fn agent_settings(&self, scope: &OrgScope) -> Result<AgentSettingsView, ApiError> {
        let config = self.agents_config(scope).await?;
        let settings = config
            .settings()
            .into_iter()
            .map(|line| {
                let section = line.setting.split('.').next().unwrap_or_default().to_string();
                let section =
                    AgentType::from_id(&section).map_or_else(|| capitalise(&section), |a| a.name().to_string());
                let (value, kind) = match &line.value {
                    serde_json::Value::Bool(b) => (b.to_string(), "flag"),
                    serde_json::Value::Number(n) => (n.to_string(), "number"),
                    serde_json::Value::String(t) => (t.clone(), "text"),
                    other => (other.to_string(), "text"),
                };
                AgentSettingView {
                    setting: line.setting,
                    section,
                    description: line.description,
                    value,
                    kind: kind.into(),
                }
            })
            .collect();
        let may_change = pactwise_rules::roles::check(
            scope.role(),
            pactwise_rules::roles::SharedChange::Setting(crate::AGENTS_CONFIG_KEY),
        )
        .is_ok();
        Ok(AgentSettingsView { settings, may_change })
    }

    /// Changes one threshold with the one check (owners and admins); refused with every problem in words.
    pub async fn set_agent_setting(
        &self,
        scope: &OrgScope,
        setting: String,
        value: String,
    ) -> Result<AgentSettingsView, ApiError> {
        self.set_agents_config(scope, setting.trim(), value.trim()).await?;
        self.agent_settings(scope).await
    }

    /// The members granted the manager role (besides owners and admins), by name.
    pub async fn managers(&self, scope: &OrgScope) -> Result<Vec<String>, ApiError> {
        let s = scope.clone();
        self.db
            .call(move |store| {
                let granted: Vec<String> = store.settings().get(&s, MANAGERS_KEY)?.unwrap_or_default();
                let members = store.members().list(&s)?;
                Ok(members
                    .into_iter()
                    .filter(|m| granted.contains(&m.user.to_string()))
                    .map(|m| m.display_name)
                    .collect())
            })
            .await
            .map_err(ApiError::from)
    }

    /// Memories of the session's person that bear on `text`, best first (see `pactwise_agents::memory`). Relevance
    /// is by the local embedding model when it is loaded (a search loaded it), else by BM25: recall never loads it.
    async fn recall(&self, scope: &OrgScope, text: &str) -> Result<Vec<String>, ApiError> {
        let s = scope.clone();
        let kept = self.db.call(move |store| store.memories().list(&s)).await?;
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let lazy = self.retriever.lazy_embedder();
        let similarity = if lazy.is_loaded() {
            let texts: Vec<String> =
                std::iter::once(text.to_string()).chain(kept.iter().map(|m| m.text.clone())).collect();
            tokio::task::spawn_blocking(move || {
                let embedder = lazy.get().ok()?;
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let vectors = embedder.embed(&refs).ok()?;
                let (query, rest) = vectors.split_first()?;
                // Unit-length vectors: the dot product is the cosine.
                Some(rest.iter().map(|v| v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>()).collect::<Vec<f32>>())
            })
            .await
            .ok()
            .flatten()
        } else {
            None
        };
        let candidates: Vec<Candidate<'_>> = kept
            .iter()
            .enumerate()
            .map(|(i, m)| Candidate {
                text: &m.text,
                importance: m.importance,
                created_at: m.created_at,
                similarity: similarity.as_ref().and_then(|s| s.get(i).copied()),
            })
            .collect();
        let ranked = memory::rank(text, &candidates, self.clock.now(), RECALL);
        Ok(ranked.into_iter().map(|r| kept[r.index].text.clone()).collect())
    }

    /// The plan for a request in words, with what the agents remember about it and whether the session may run it.
    pub async fn plan_request_view(&self, scope: &OrgScope, request: String) -> Result<PlanView, ApiError> {
        let plan = self.plan_request(scope, request.clone()).await?;
        let remembered =
            if plan.outcome == Outcome::Planned { self.recall(scope, &request).await? } else { Vec::new() };
        let may = self.may_orchestrate(scope).await?;
        Ok(plan_view(&request, &plan, remembered, may))
    }

    /// What the plan's agents know of the organization's records, read in the session's scope.
    async fn agent_facts(&self, scope: &OrgScope, plan: &Plan) -> Result<Facts, ApiError> {
        let catalog = crate::review::catalog()?;
        let mut facts = Facts::default();
        for mention in &plan.entities.contracts {
            let Some(known) = &mention.contract else { continue };
            let Ok(id) = known.id.parse::<DocumentId>() else { continue };
            let review = self.document_review(scope, id).await?;
            let s = scope.clone();
            let (row, extracted, reminder) = self
                .db
                .call(move |store| {
                    Ok::<_, pactwise_store::StoreError>((
                        store.contracts().row(&s, id)?,
                        store.pages().load(&s, id)?,
                        store.contracts().reminder(&s, id)?,
                    ))
                })
                .await?;
            let pages = extracted.as_ref().map_or(0, |d| d.pages.len() as u32);
            let scanned =
                extracted.as_ref().map_or(0, |d| d.pages.iter().filter(|p| p.source == PageSource::Ocr).count() as u32);
            let empty =
                extracted.as_ref().map_or(0, |d| d.pages.iter().filter(|p| p.text.trim().is_empty()).count() as u32);
            let items = review
                .items
                .iter()
                .filter(|i| {
                    !i.red_flags.is_empty()
                        || (i.risk == "critical" && matches!(i.status, ItemStatus::Absent | ItemStatus::Partial))
                })
                .map(|i| ItemFacts {
                    question: i.question.clone(),
                    risk: i.risk.clone(),
                    status: item_status(i.status).into(),
                    red_flags: i.red_flags.clone(),
                    regulatory: catalog
                        .item(&i.id)
                        .map(|c| c.regulatory.iter().map(|r| r.citation.clone()).collect())
                        .unwrap_or_default(),
                    page: i.page,
                })
                .collect();
            let x = &review.extractions;
            facts.contracts.push(ContractFacts {
                reference: mention.reference.clone(),
                document: known.id.clone(),
                name: review.file.clone().unwrap_or_else(|| mention.reference.clone()),
                counterparty: review.counterparty.clone(),
                vendor: known.vendor.clone(),
                pages,
                scanned_pages: scanned,
                empty_pages: empty,
                finalized: review.finalized_at.is_some(),
                items_evaluated: review.items.iter().filter(|i| i.status != ItemStatus::NotEvaluated).count() as u32,
                items,
                expires_on: row.as_ref().and_then(|r| r.expires_on),
                notice_by: row.as_ref().and_then(|r| r.notice_by),
                renewal_started: reminder.is_some_and(|r| r.started),
                value_text: x.value.as_ref().map(|v| v.value.clone()),
                payment_terms: x.pricing.as_ref().map(|v| v.value.clone()),
            });
        }
        let wanted: Vec<String> = plan.entities.vendors.iter().filter_map(|v| v.vendor.clone()).collect();
        if !wanted.is_empty() {
            let s = scope.clone();
            let rows = self.db.call(move |store| store.vendors().list(&s, false)).await?;
            for r in rows.into_iter().filter(|r| wanted.contains(&r.record.id)) {
                facts.vendors.push(VendorFacts {
                    id: r.record.id,
                    name: r.record.name,
                    status: r.record.status.as_str().to_string(),
                    since: r.record.created_at,
                    contracts: r.contracts,
                });
            }
        }
        Ok(facts)
    }

    /// Plans and runs a request: refused unless the session holds the manager role and the request has a plan.
    /// The plan is compiled into a graph, started in the session's organization and driven until it ends; its
    /// follow-ups that are due run at once (the notice among them). The request and what it named are remembered
    /// for the person.
    #[tracing::instrument(name = "agents.run_request", skip_all)]
    pub async fn run_request(&self, scope: &OrgScope, request: String) -> Result<AgentRequestView, ApiError> {
        if let Err(why) = self.may_orchestrate(scope).await? {
            return Err(ApiError::new(ErrorCode::Forbidden, why));
        }
        let plan = self.plan_request(scope, request.clone()).await?;
        if plan.outcome != Outcome::Planned {
            let why = match &plan.outcome {
                Outcome::NothingToDo { why } | Outcome::Refused { why } => why.clone(),
                Outcome::Planned => String::new(),
            };
            return Err(ApiError::new(ErrorCode::InvalidInput, why));
        }
        let Some(graph) = compile(&plan) else {
            return Err(ApiError::new(ErrorCode::InvalidInput, "The plan has no steps to run."));
        };
        let config = self.agents_config(scope).await?;
        let facts = self.agent_facts(scope, &plan).await?;
        let today = self.clock.now().date_naive();
        // Recalled for the steps that ask the model, held in this process only: a person's memories never go into
        // the run, which is the organization's record.
        let remembered = self.recall(scope, &request).await?;
        let input = RunInput { request: request.clone(), plan, facts, config, today };
        let value = serde_json::to_value(&input)
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the run's input could not be written: {e}")))?;
        let s = scope.clone();
        let run = with_engine(self, move |_, engine| {
            let id = engine.start_graph(&s, &graph, value)?;
            let _held = pactwise_agents::draft::hold_memories(id, remembered);
            engine.drive(id)?;
            Ok(id)
        })
        .await?;
        let s = scope.clone();
        let memories = memories_of(&input, run, today);
        self.db.call(move |store| store.memories().remember(&s, &memories)).await?;
        self.work_agent_tasks(WorkerOptions::default()).await?;
        self.agent_request(scope, run).await
    }

    /// A request the agents ran, with each step's output, its follow-ups and its notices.
    pub async fn agent_request(&self, scope: &OrgScope, run: RunId) -> Result<AgentRequestView, ApiError> {
        let s = scope.clone();
        let (record, tasks, notices) = self
            .db
            .call(move |store| {
                let record = store.runs().get(&s, run)?;
                let tasks = store.tasks().for_run(&s, run)?;
                let notices = store.tasks().notices(&s, 200)?;
                Ok::<_, pactwise_store::StoreError>((record, tasks, notices))
            })
            .await?;
        if record.graph_name != PLAN_GRAPH {
            return Err(ApiError::new(ErrorCode::NotFound, "That run is not a request to the agents."));
        }
        let input: RunInput = serde_json::from_str(&record.input)
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the request's run could not be read: {e}")))?;
        let outputs = steps_of(&record);
        let steps = input
            .plan
            .steps
            .iter()
            .map(|p| match outputs.iter().find(|o| o.agent == p.agent) {
                Some(o) => AgentStepView {
                    agent: p.agent.name().into(),
                    state: state_word(o.status).into(),
                    summary: o.summary.clone(),
                    findings: o.findings.clone(),
                    drafted: o.drafted.as_ref().map(drafted_words),
                },
                None => AgentStepView {
                    agent: p.agent.name().into(),
                    state: if record.status == RunStatus::Failed { "Not run" } else { "Waiting" }.into(),
                    summary: String::new(),
                    findings: Vec::new(),
                    drafted: None,
                },
            })
            .collect();
        let today = self.clock.now().date_naive();
        let (state, finished) = run_state(&record);
        let may = self.may_orchestrate(scope).await?;
        Ok(AgentRequestView {
            run,
            request: input.request.clone(),
            kind: capitalise(input.plan.request_type.words()),
            state,
            finished,
            started_at: record.created_at,
            plan: plan_view(&input.request, &input.plan, Vec::new(), may),
            steps,
            follow_ups: tasks.iter().filter_map(|t| follow_up_view(t, today)).collect(),
            notices: notices.into_iter().filter(|n| n.run == Some(run)).map(notice_view).collect(),
        })
    }

    /// The organization's recent requests to the agents, newest first.
    pub async fn agent_requests(&self, scope: &OrgScope) -> Result<Vec<AgentRequestRow>, ApiError> {
        let s = scope.clone();
        let runs = self.db.call(move |store| store.runs().list(&s, 500)).await?;
        Ok(runs
            .into_iter()
            .filter(|r| r.graph_name == PLAN_GRAPH)
            .filter_map(|r| {
                let input: RunInput = serde_json::from_str(&r.input).ok()?;
                let (state, _) = run_state(&r);
                Some(AgentRequestRow {
                    run: r.id,
                    request: input.request,
                    kind: capitalise(input.plan.request_type.words()),
                    state,
                    started_at: r.created_at,
                })
            })
            .take(50)
            .collect())
    }

    /// One round of the agents' follow-up worker (the platform's work, any organization of this data directory):
    /// claims due follow-ups `concurrency` at a time, runs each on its own thread, waits at most `timeout` for a
    /// batch, and finishes each task with its outcome — notices and further follow-ups in the same transaction.
    /// A task past its timeout fails with the reason and is not run again; a task whose worker died is given back
    /// by the watchdog when its lease runs out, and its effects are keyed, so nothing happens twice.
    #[tracing::instrument(name = "agents.worker", skip_all, fields(concurrency = options.concurrency))]
    pub async fn work_agent_tasks(&self, options: WorkerOptions) -> Result<TaskRound, ApiError> {
        let mut round = TaskRound::default();
        let concurrency = options.concurrency.clamp(1, 64);
        for _ in 0..options.batches.max(1) {
            let cred = self.platform.clone();
            let claimed = self
                .db
                .call(move |store| {
                    store.tasks().claim_action(&cred, ACTION, concurrency, chrono::Duration::seconds(TASK_LEASE_SECS))
                })
                .await?;
            if claimed.is_empty() {
                break;
            }
            let timeout = options.timeout;
            let jobs: Vec<(pactwise_domain::TaskId, serde_json::Value)> =
                claimed.iter().map(|t| (t.id, t.payload.clone())).collect();
            let results = tokio::task::spawn_blocking(move || {
                pactwise_agents::run::all_with_timeout(
                    timeout,
                    jobs.into_iter().map(|(id, p)| (id, move || run_task(&p))).collect(),
                )
            })
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the follow-up worker stopped: {e}")))?;
            // Workflows the tasks start: checked against the graph's form, started for the task's organization.
            let mut results = results;
            for (id, result) in results.iter_mut() {
                if let Ok(Ok(out)) = result
                    && let Some(start) = out.start.take()
                {
                    let org = claimed.iter().find(|t| t.id == *id).map(|t| t.org);
                    out.result = match org {
                        Some(org) => self.start_workflow_for_task(org, *id, start).await,
                        None => "Not started: the task's organization is unknown.".into(),
                    };
                }
            }
            let cred = self.platform.clone();
            let outcome = self
                .db
                .call(move |store| {
                    let mut r = TaskRound::default();
                    for (id, result) in results {
                        match result {
                            Ok(Ok(out)) => {
                                let done = TaskDone {
                                    result: out.result,
                                    notices: out
                                        .notices
                                        .iter()
                                        .map(|n| NewNotice {
                                            key: format!("task/{id}"),
                                            title: n.title.clone(),
                                            message: n.message.clone(),
                                            urgent: n.urgent,
                                        })
                                        .collect(),
                                    follow_ups: out
                                        .follow_ups
                                        .iter()
                                        .map(|(f, depth)| NewTask {
                                            idempotency_key: format!("follow-up/{}", f.key),
                                            agent_type: f.agent.id().into(),
                                            priority: 5,
                                            payload: serde_json::to_value(TaskPayload::of(f, *depth))
                                                .unwrap_or_default(),
                                            scheduled_at: None,
                                        })
                                        .collect(),
                                };
                                r.notices += done.notices.len();
                                match store.tasks().complete_with(&cred, id, &done) {
                                    Ok(_) => r.done += 1,
                                    Err(pactwise_store::StoreError::Conflict(_)) => {}
                                    Err(e) => return Err(e),
                                }
                            }
                            Ok(Err(why)) => {
                                r.failed += 1;
                                let _ = store.tasks().fail(&cred, id, &why);
                            }
                            Err(t) => {
                                r.timed_out += 1;
                                let _ = store.tasks().fail(&cred, id, &format!("The follow-up did not finish: {t}."));
                            }
                        }
                    }
                    Ok(r)
                })
                .await?;
            round.done += outcome.done;
            round.failed += outcome.failed;
            round.timed_out += outcome.timed_out;
            round.notices += outcome.notices;
            if claimed.len() < concurrency {
                break;
            }
        }
        Ok(round)
    }

    /// Starts a built-in workflow a follow-up asked for, as the platform for the task's organization (the
    /// organization the request's run belongs to). Its input is checked against the graph's form first; the result
    /// says in words what happened. The run's id is the task's, so a task rerun after its worker died (the run had
    /// started, the task was not yet marked done) finds its run instead of starting a second one.
    async fn start_workflow_for_task(
        &self,
        org: pactwise_domain::OrgId,
        task: pactwise_domain::TaskId,
        start: pactwise_agents::tasks::WorkflowStart,
    ) -> String {
        let def = match self.workflows.graph(&start.graph) {
            Ok(def) => def,
            Err(_) => return format!("Not started: \u{201c}{}\u{201d} is not a built-in workflow.", start.title),
        };
        if let Err(problem) = pactwise_workflows::check_input(def, &start.input) {
            return format!("Not started: {problem}");
        }
        let (graph, input, title) = (start.graph.clone(), start.input.clone(), start.title.clone());
        let id = RunId::from_uuid(task.as_uuid());
        let credential = self.platform.clone();
        let started = with_engine(self, move |store, engine| {
            if crate::work_loop::already_started(store, &credential, &graph, &input)? {
                return Ok(None);
            }
            let (run, new) = engine.start_for_platform_once(org, &graph, input.clone(), id)?;
            if new {
                crate::work_loop::record_start(store, &credential, &graph, &input, run)?;
            }
            Ok(Some((engine.drive(run)?, new)))
        })
        .await;
        self.wake_work();
        match started {
            Ok(None) => format!("Not started: \u{201c}{title}\u{201d} is already under way for it."),
            Ok(Some((_, false))) => format!("\u{201c}{title}\u{201d} had already been started for this request."),
            Ok(Some((record, true))) if record.status == RunStatus::Waiting => {
                format!("Started \u{201c}{title}\u{201d}; it waits for a decision in the inbox.")
            }
            Ok(Some((record, true))) if record.status == RunStatus::Failed => {
                format!("Started \u{201c}{title}\u{201d}; it stopped: {}", record.reason.unwrap_or_default())
            }
            Ok(_) => format!("Started \u{201c}{title}\u{201d}."),
            Err(e) => format!("Not started: {}", e.message),
        }
    }

    /// The notices the agents left for the session's organization, newest first.
    pub async fn agent_notices(&self, scope: &OrgScope) -> Result<Vec<NoticeView>, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.tasks().notices(&s, 100)).await?.into_iter().map(notice_view).collect())
    }

    /// Marks the organization's notices as seen.
    pub async fn agent_notices_seen(&self, scope: &OrgScope) -> Result<(), ApiError> {
        let s = scope.clone();
        self.db.call(move |store| store.tasks().notices_seen(&s)).await?;
        Ok(())
    }

    /// What the agents remember of the session's person, newest first.
    pub async fn memories(&self, scope: &OrgScope) -> Result<Vec<MemoryView>, ApiError> {
        let s = scope.clone();
        let kept = self.db.call(move |store| store.memories().list(&s)).await?;
        Ok(kept
            .into_iter()
            .map(|m| MemoryView {
                id: m.id,
                text: m.text,
                why: m.why,
                kind: if m.tier == MemoryTier::Short { "For today" } else { "Kept" }.into(),
                until: m.expires_at,
                created_at: m.created_at,
            })
            .collect())
    }

    /// Asks the agents to keep something in mind for the session's person (long-term).
    pub async fn remember(&self, scope: &OrgScope, text: String) -> Result<Vec<MemoryView>, ApiError> {
        let text = text.trim().to_string();
        if text.is_empty() {
            return Err(ApiError::new(ErrorCode::InvalidInput, "Write what the agents should remember."));
        }
        if text.chars().count() > pactwise_store::MEMORY_MAX_TEXT {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!(
                    "A memory is at most {} characters; keep one fact per memory.",
                    pactwise_store::MEMORY_MAX_TEXT
                ),
            ));
        }
        let s = scope.clone();
        let why = format!("You asked the agents to remember it on {}", day_words(self.clock.now().date_naive()));
        let m = NewMemory { tier: MemoryTier::Long, text, why, importance: 0.8, run: None };
        self.db.call(move |store| store.memories().remember(&s, &[m])).await?;
        self.memories(scope).await
    }

    /// Deletes one of the session's person's memories.
    pub async fn forget_memory(&self, scope: &OrgScope, id: String) -> Result<Vec<MemoryView>, ApiError> {
        let s = scope.clone();
        self.db.call(move |store| store.memories().forget(&s, &id)).await?;
        self.memories(scope).await
    }
}
