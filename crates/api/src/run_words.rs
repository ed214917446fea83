//! Workflow runs in people's words, shaped here so the UI only renders: the forms that start each graph (from the
//! graph's declared input, with the organization's vendor records and documents filled in), run summaries with
//! filters, a run's story (what it is doing now, a timeline, who decided what — never super-steps, checkpoints,
//! node ids or JSON), and what an approver reads ([`crate::evidence`]).

use crate::evidence::{ApprovalEvidence, shape_evidence};
use crate::runs::{ApprovalView, approval_view};
use crate::shared_runs::{remote_approval_record, remote_approval_view, remote_events, remote_run_record};
use crate::{Api, ApiError};
use chrono::{DateTime, Duration, Utc};
use pactwise_domain::{ApprovalId, ApprovalStatus, ErrorCode, Role, RunId, RunStatus, UserId};
use pactwise_engine::machine::Wait;
use pactwise_engine::{FieldKind, GraphDef, InputField, NodeKind, Registry, RunState};
use pactwise_store::{ApprovalRecord, Member, OrgScope, RunRecord, Store};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// How a form field is filled in (see `pactwise_engine::FieldKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FormFieldKind {
    Text,
    LongText,
    Money,
    WholeNumber,
    Date,
    Flag,
    Choice,
    Tags,
    Document,
    Vendor,
    Table,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FormOption {
    pub value: String,
    pub label: String,
}

/// One field of a run's form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FormField {
    /// Where the value goes in the input (dots for nested objects; a column's key inside its row).
    pub key: String,
    pub label: String,
    pub kind: FormFieldKind,
    pub required: bool,
    pub help: String,
    /// Choices (`choice`, `tags` limited to them, and the organization's documents for `document`).
    pub options: Vec<FormOption>,
    pub columns: Vec<FormField>,
    pub min: Option<i32>,
    pub max: Option<i32>,
    /// What the field starts with (a table's rows from the organization's records), if anything.
    pub initial: Option<Value>,
}

/// The form that starts a graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RunForm {
    pub graph: String,
    pub title: String,
    pub description: String,
    pub fields: Vec<FormField>,
    /// Set when the graph is started elsewhere in the app: where.
    pub started_elsewhere: Option<String>,
}

/// Which runs to list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RunFilter {
    pub status: Option<RunStatus>,
    pub graph: Option<String>,
    pub started_by: Option<UserId>,
    /// Started at or after.
    pub since: Option<DateTime<Utc>>,
    /// Started before.
    pub until: Option<DateTime<Utc>>,
}

/// A run as a line of the Runs area.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RunSummary {
    pub id: RunId,
    pub graph: String,
    /// The graph's name in words ("Procurement").
    pub title: String,
    pub status: RunStatus,
    /// The status in words ("waiting for a decision").
    pub status_text: String,
    /// What it is doing now, in words (none once it ended).
    pub current: Option<String>,
    pub started_by: Option<UserId>,
    pub started_by_name: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// How it ended, in words.
    pub outcome: Option<String>,
    /// The run executes on another desktop of the organization; this is its published copy.
    pub on_another_desktop: bool,
}

/// Whether a line is good news, a warning or a failure (shown with words and colour, never colour alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Tone {
    Info,
    Good,
    Warn,
    Bad,
}

/// A line of a run's timeline: when, and what happened in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct StoryLine {
    pub at: DateTime<Utc>,
    pub text: String,
    pub tone: Tone,
}

/// What a run is doing now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct NowLine {
    /// "Waiting for a decision by Ana Ruiz or Bo Li: Choose the vendor for this purchase".
    pub text: String,
    /// Since when (the UI says "since 10:42" in the reader's time).
    pub since: DateTime<Utc>,
    /// Until when, if it is a timer, a retry or a due date.
    pub until: Option<DateTime<Utc>>,
    /// The approval it waits for, if any (the inbox opens it).
    pub approval: Option<ApprovalId>,
}

/// Who decided what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct DecisionLine {
    pub step: String,
    /// "Approved by Ana Ruiz (chose Globex)", "Waiting for a decision by …", "Cancelled".
    pub text: String,
    pub reason: Option<String>,
    pub at: Option<DateTime<Utc>>,
    pub tone: Tone,
}

/// A run told in people's words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RunStory {
    pub summary: RunSummary,
    pub now: Option<NowLine>,
    pub timeline: Vec<StoryLine>,
    pub decisions: Vec<DecisionLine>,
    /// The run can still be cancelled (it has not ended).
    pub may_cancel: bool,
    /// A drafted document the run produced (the purchase agreement), as text.
    pub document_text: Option<String>,
}

/// What an approver reads before deciding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ApprovalReading {
    pub approval: ApprovalView,
    /// The workflow in words ("Procurement").
    pub workflow: String,
    /// The step in words.
    pub step: String,
    /// "a decision by Ana Ruiz or Bo Li (any owner, admin or approver may decide)".
    pub waiting_for: String,
    /// Since when it waits.
    pub since: DateTime<Utc>,
    /// The eligible members' names.
    pub deciders: Vec<String>,
    pub evidence: ApprovalEvidence,
}

/// "choose_vendor" → "Choose vendor": the fallback name of anything without words of its own.
pub(crate) fn humanize(key: &str) -> String {
    let words = key.replace(['_', '-', '.'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub(crate) fn graph_title(graph: &GraphDef) -> String {
    graph.title.clone().unwrap_or_else(|| humanize(&graph.name))
}

/// A graph's title from its name, for places that hold only the name (the audit log).
pub(crate) fn graph_title_by_name(name: &str) -> String {
    crate::runs::registry().map_or_else(|_| humanize(name), |r| title_of(r, name))
}

fn title_of(registry: &Registry, name: &str) -> String {
    if name == pactwise_agents::PLAN_GRAPH {
        return "Request to the agents".into();
    }
    registry.graph(name).map(graph_title).unwrap_or_else(|_| humanize(name))
}

fn step_label(graph: Option<&GraphDef>, node: &str) -> String {
    let def = graph.and_then(|g| g.node(node));
    match def {
        Some(d) => d.label.clone().unwrap_or_else(|| match &d.kind {
            NodeKind::Approval(spec) => spec.title.clone(),
            _ => humanize(node),
        }),
        // A compiled plan's graph is not registered: its nodes are agents, named by the registry of agent types.
        None => pactwise_agents::AgentType::from_id(node).map_or_else(|| humanize(node), |a| a.name().to_string()),
    }
}

/// "in 2 min", "in 3 h", "in 2 days"; "now" when past.
pub(crate) fn in_words(span: Duration) -> String {
    let minutes = (span.num_seconds() + 59) / 60;
    if span <= Duration::zero() {
        "now".into()
    } else if minutes < 60 {
        format!("in {minutes} min")
    } else if minutes < 48 * 60 {
        format!("in {} h", (minutes + 30) / 60)
    } else {
        format!("in {} days", (minutes + 12 * 60) / (24 * 60))
    }
}

/// "5 min", "2 h", "3 days".
fn span_words(span: Duration) -> String {
    in_words(span).trim_start_matches("in ").to_string()
}

fn or_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn roles_words(roles: &[Role]) -> String {
    let names: Vec<String> = roles.iter().map(|r| r.as_str().to_string()).collect();
    or_list(&names)
}

/// Who may decide, in words, from the organization's members.
fn deciders(members: &[Member], roles: &[Role]) -> (Vec<String>, String) {
    let names: Vec<String> = members.iter().filter(|m| roles.contains(&m.role)).map(|m| m.name.clone()).collect();
    let text = if names.is_empty() {
        format!("a decision by an {} (nobody in the organization has that role yet)", roles_words(roles))
    } else {
        format!("a decision by {} (any {} may decide)", or_list(&names), roles_words(roles))
    };
    (names, text)
}

fn status_text(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Waiting => "waiting",
        RunStatus::Compensating => "undoing completed steps",
        RunStatus::Succeeded => "finished",
        RunStatus::Failed => "failed",
        RunStatus::Cancelled => "cancelled",
    }
}

/// A value as words: text as it is, lists joined, objects as "key: value" pairs; never JSON.
pub(crate) fn value_words(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::Bool(b) => (if *b { "yes" } else { "no" }).into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(value_words).collect::<Vec<_>>().join(", "),
        Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{}: {}", humanize(k).to_lowercase(), value_words(v)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// How a run ended, from its `outcome` channel.
fn outcome_words(channels: &Value) -> Option<String> {
    let outcome = channels.get("outcome")?.as_object()?;
    let status = outcome.get("status").and_then(Value::as_str).map(humanize);
    let reason = outcome.get("reason").and_then(Value::as_str);
    let rest: Vec<String> = outcome
        .iter()
        .filter(|(k, v)| !matches!(k.as_str(), "status" | "reason") && !v.is_null())
        .map(|(k, v)| format!("{} {}", humanize(k).to_lowercase(), value_words(v)))
        .collect();
    let mut text = status.unwrap_or_else(|| "Ended".into());
    if let Some(r) = reason {
        // "Rejected: rejected by the approver: …" says it twice: a reason that starts with the status stands alone.
        text = if r.to_lowercase().starts_with(&text.to_lowercase()) {
            let mut chars = r.chars();
            chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
        } else {
            format!("{text}: {r}")
        };
    }
    if !rest.is_empty() {
        text = format!("{text} ({})", rest.join(", "));
    }
    Some(text)
}

struct Context<'a> {
    registry: &'a Registry,
    members: &'a [Member],
    now: DateTime<Utc>,
}

impl Context<'_> {
    fn name_of(&self, user: Option<UserId>) -> Option<String> {
        user.and_then(|u| self.members.iter().find(|m| m.user == u).map(|m| m.name.clone()))
    }

    fn summary(&self, run: &RunRecord, approvals: &[ApprovalRecord]) -> RunSummary {
        let state: Option<RunState> = serde_json::from_str(&run.state).ok();
        let now = self.now_line(run, state.as_ref(), approvals);
        let channels = state.as_ref().map(|s| serde_json::to_value(&s.channels).unwrap_or(Value::Null));
        RunSummary {
            id: run.id,
            graph: run.graph_name.clone(),
            title: title_of(self.registry, &run.graph_name),
            status: run.status,
            status_text: status_text(run.status).into(),
            current: now.map(|n| n.text),
            started_by: run.started_by,
            started_by_name: self.name_of(run.started_by),
            created_at: run.created_at,
            updated_at: run.updated_at,
            finished_at: run.finished_at,
            outcome: if run.status.is_terminal() {
                channels.as_ref().and_then(outcome_words).or_else(|| run.reason.clone())
            } else {
                None
            },
            on_another_desktop: false,
        }
    }

    fn now_line(&self, run: &RunRecord, state: Option<&RunState>, approvals: &[ApprovalRecord]) -> Option<NowLine> {
        if run.status.is_terminal() {
            return None;
        }
        let graph = self.registry.graph(&run.graph_name).ok();
        let state = state?;
        if run.status == RunStatus::Compensating {
            return Some(NowLine {
                text: format!("Undoing completed steps: {}", run.reason.clone().unwrap_or_default()),
                since: run.updated_at,
                until: None,
                approval: None,
            });
        }
        if let Some((node, wait)) = state.waits.iter().next() {
            let label = step_label(graph, node);
            return Some(match wait {
                Wait::Approval => {
                    let pending = approvals
                        .iter()
                        .filter(|a| a.node == *node && a.status == ApprovalStatus::Pending)
                        .max_by_key(|a| a.created_at);
                    match pending {
                        Some(a) => {
                            let (_, who) = deciders(self.members, &a.eligible_roles);
                            NowLine {
                                text: format!("Waiting for {who}: {}", a.title),
                                since: a.created_at,
                                until: a.due_at,
                                approval: Some(a.id),
                            }
                        }
                        None => NowLine {
                            text: format!("Waiting for a decision: {label}"),
                            since: run.updated_at,
                            until: None,
                            approval: None,
                        },
                    }
                }
                Wait::Timer { at } => NowLine {
                    text: format!("Waiting at “{label}”, going on {}", in_words(*at - self.now)),
                    since: run.updated_at,
                    until: Some(*at),
                    approval: None,
                },
                Wait::Child => NowLine {
                    text: format!("Waiting for “{label}” to finish"),
                    since: run.updated_at,
                    until: None,
                    approval: None,
                },
            });
        }
        if let Some(at) = run.wake_at.filter(|at| *at > self.now) {
            let node = state.active.iter().find(|n| state.attempts.contains_key(*n));
            let label = node.map(|n| step_label(graph, n)).unwrap_or_else(|| "the step".into());
            return Some(NowLine {
                text: format!("Retrying “{label}” {} after a failed attempt", in_words(at - self.now)),
                since: run.updated_at,
                until: Some(at),
                approval: None,
            });
        }
        let labels: Vec<String> = state.active.iter().map(|n| format!("“{}”", step_label(graph, n))).collect();
        Some(NowLine {
            text: if labels.is_empty() { "Working".into() } else { format!("Working on {}", labels.join(" and ")) },
            since: run.updated_at,
            until: None,
            approval: None,
        })
    }
}

fn matches(filter: &RunFilter, run: &RunRecord) -> bool {
    filter.status.is_none_or(|s| s == run.status)
        && filter.graph.as_deref().is_none_or(|g| g == run.graph_name)
        && filter.started_by.is_none_or(|u| Some(u) == run.started_by)
        && filter.since.is_none_or(|t| run.created_at >= t)
        && filter.until.is_none_or(|t| run.created_at < t)
}

/// The form of one graph, with the organization's records filled in.
/// The organization's vendor records as run forms offer them.
pub(crate) struct FormVendors {
    /// Vendors procurement may shortlist (not blocked, not merged), by name.
    pub procurement: Vec<String>,
    /// Vendors an onboarding run may start for (`rules::vendors::check_start_onboarding`).
    pub onboarding: Vec<FormOption>,
    /// Every live vendor (not merged).
    pub all: Vec<FormOption>,
}

impl FormVendors {
    pub(crate) fn load(store: &Store, scope: &OrgScope) -> Result<FormVendors, pactwise_store::StoreError> {
        let rows = store.vendors().list(scope, false)?;
        let option =
            |r: &pactwise_store::VendorListRow| FormOption { value: r.record.id.clone(), label: r.record.name.clone() };
        Ok(FormVendors {
            procurement: rows
                .iter()
                .filter(|r| r.record.status != pactwise_domain::VendorStatus::Blocked)
                .map(|r| r.record.name.clone())
                .collect(),
            onboarding: rows
                .iter()
                .filter(|r| pactwise_rules::vendors::check_start_onboarding(r.record.status).is_ok())
                .map(option)
                .collect(),
            all: rows.iter().map(option).collect(),
        })
    }
}

fn form_of(graph: &GraphDef, vendors: &FormVendors, documents: &[FormOption]) -> RunForm {
    fn field(f: &InputField, graph: &str, vendors: &FormVendors, documents: &[FormOption]) -> FormField {
        let kind = match f.kind {
            FieldKind::Text => FormFieldKind::Text,
            FieldKind::LongText => FormFieldKind::LongText,
            FieldKind::Money => FormFieldKind::Money,
            FieldKind::WholeNumber => FormFieldKind::WholeNumber,
            FieldKind::Date => FormFieldKind::Date,
            FieldKind::Flag => FormFieldKind::Flag,
            FieldKind::Choice => FormFieldKind::Choice,
            FieldKind::Tags => FormFieldKind::Tags,
            FieldKind::Document => FormFieldKind::Document,
            FieldKind::Vendor => FormFieldKind::Vendor,
            FieldKind::Table => FormFieldKind::Table,
        };
        let options = if f.kind == FieldKind::Document {
            documents.to_vec()
        } else if f.kind == FieldKind::Vendor {
            if graph == "vendor_onboarding" { vendors.onboarding.clone() } else { vendors.all.clone() }
        } else {
            f.options.iter().map(|o| FormOption { value: o.clone(), label: humanize(o) }).collect()
        };
        // The procurement form's vendors come from the organization's vendor records, where there are some.
        let initial = (graph == "procurement" && f.key == "vendors" && !vendors.procurement.is_empty())
            .then(|| Value::Array(vendors.procurement.iter().map(|v| json!({ "name": v })).collect()));
        FormField {
            key: f.key.clone(),
            label: f.label.clone(),
            kind,
            required: f.required,
            help: f.help.clone(),
            options,
            columns: f.columns.iter().map(|c| field(c, graph, vendors, documents)).collect(),
            min: f.min.map(|m| m.clamp(i32::MIN as i64, i32::MAX as i64) as i32),
            max: f.max.map(|m| m.clamp(i32::MIN as i64, i32::MAX as i64) as i32),
            initial,
        }
    }
    RunForm {
        graph: graph.name.clone(),
        title: graph_title(graph),
        description: graph.description.clone(),
        fields: graph.input.iter().map(|f| field(f, &graph.name, vendors, documents)).collect(),
        started_elsewhere: graph
            .input
            .is_empty()
            .then(|| "Start it from a document: open the document and choose Report.".to_string()),
    }
}

fn timeline(
    ctx: &Context<'_>,
    run: &RunRecord,
    events: &[pactwise_store::RunEvent],
    approvals: &[ApprovalRecord],
) -> Vec<StoryLine> {
    let graph = ctx.registry.graph(&run.graph_name).ok();
    let line = |at, text: String, tone| StoryLine { at, text, tone };
    let mut lines = Vec::new();
    for e in events {
        let label = e.node.as_deref().map(|n| step_label(graph, n)).unwrap_or_default();
        let is_approval =
            e.node.as_deref().and_then(|n| graph?.node(n)).is_some_and(|d| matches!(d.kind, NodeKind::Approval(_)));
        let text = |key: &str| e.details.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        let l = match e.kind.as_str() {
            "started" => line(
                e.at,
                match ctx.name_of(run.started_by) {
                    Some(name) => format!("Started by {name}"),
                    None => "Started".into(),
                },
                Tone::Info,
            ),
            "succeeded" if e.node.is_none() => line(e.at, "Finished".into(), Tone::Good),
            // A decision resolves its step: say who decided, what and why.
            "succeeded" if is_approval => {
                let decided = approvals
                    .iter()
                    .find(|a| Some(&a.node) == e.node.as_ref() && a.superstep == e.superstep && a.decided_at.is_some());
                match decided.and_then(|a| Some((a, decided_words(a)?))) {
                    Some((a, words)) => line(e.at, format!("{}: {words}", a.title), tone_of(a.status)),
                    None => line(e.at, format!("{label}: decided"), Tone::Info),
                }
            }
            "succeeded" => line(e.at, format!("{label}: done"), Tone::Info),
            "approval_opened" => {
                let a = approvals.iter().find(|a| Some(&a.node) == e.node.as_ref() && a.superstep == e.superstep);
                let who = a.map(|a| deciders(ctx.members, &a.eligible_roles).1).unwrap_or_else(|| "a decision".into());
                line(e.at, format!("{label}: waiting for {who}"), Tone::Info)
            }
            "timer_started" => {
                let at = e.details.get("at").and_then(|v| serde_json::from_value::<DateTime<Utc>>(v.clone()).ok());
                match at {
                    Some(at) => line(e.at, format!("{label}: paused for {}", span_words(at - e.at)), Tone::Info),
                    None => line(e.at, format!("{label}: paused"), Tone::Info),
                }
            }
            "child_started" => {
                let child = title_of(ctx.registry, &text("graph"));
                line(e.at, format!("{label}: started “{child}”"), Tone::Info)
            }
            "failed_attempt" => {
                let attempt = e.details.get("attempt").and_then(Value::as_u64).unwrap_or(1) as u32;
                let policy = e.node.as_deref().and_then(|n| graph?.node(n)).and_then(|d| d.retry);
                let error = text("error");
                let next = match policy {
                    Some(p) if attempt < p.max_attempts => {
                        let at = e.at + p.backoff(attempt);
                        if at > ctx.now {
                            format!("; retrying {} after: {error}", in_words(at - ctx.now))
                        } else {
                            format!("; tried again {} later after: {error}", span_words(at - e.at))
                        }
                    }
                    _ => format!(": {error}"),
                };
                line(e.at, format!("{label}: attempt {attempt} failed{next}"), Tone::Warn)
            }
            "compensation_started" => line(e.at, format!("Undoing completed steps: {}", text("reason")), Tone::Warn),
            "compensated" => line(e.at, format!("{label}: undone"), Tone::Warn),
            "compensation_failed" => line(e.at, format!("{label}: could not be undone: {}", text("error")), Tone::Bad),
            "failed" => line(e.at, format!("Failed: {}", text("reason")), Tone::Bad),
            "cancelled" => line(e.at, format!("Cancelled: {}", text("reason")), Tone::Bad),
            "stopped" => line(e.at, format!("Stopped: {}", text("reason")), Tone::Bad),
            "lease_recovered" => {
                line(e.at, "Picked up again after the app that was running it stopped".into(), Tone::Info)
            }
            other => line(e.at, humanize(other), Tone::Info),
        };
        lines.push(l);
    }
    lines
}

fn tone_of(status: ApprovalStatus) -> Tone {
    match status {
        ApprovalStatus::Approved => Tone::Good,
        ApprovalStatus::Rejected | ApprovalStatus::Cancelled => Tone::Bad,
        ApprovalStatus::Pending => Tone::Info,
    }
}

/// "approved by Ana Ruiz (chose Globex): “fits the budget”".
fn decided_words(a: &ApprovalRecord) -> Option<String> {
    let verb = match a.status {
        ApprovalStatus::Approved => "approved",
        ApprovalStatus::Rejected => "rejected",
        _ => return None,
    };
    let by = a.decided_by_name.clone().unwrap_or_else(|| "a member".into());
    let choice = a.choice.as_ref().map(|c| format!(" (chose {c})")).unwrap_or_default();
    let reason = a.reason.as_ref().map(|r| format!(": “{r}”")).unwrap_or_default();
    Some(format!("{verb} by {by}{choice}{reason}"))
}

fn decision_line(ctx: &Context<'_>, a: &ApprovalRecord) -> DecisionLine {
    let text = match a.status {
        ApprovalStatus::Pending => format!("Waiting for {}", deciders(ctx.members, &a.eligible_roles).1),
        ApprovalStatus::Cancelled => "Cancelled with the run".into(),
        _ => {
            let mut t = decided_words(a).unwrap_or_default();
            if let Some(i) = t.find(": “") {
                t.truncate(i);
            }
            let mut chars = t.chars();
            chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
        }
    };
    DecisionLine {
        step: a.title.clone(),
        text,
        reason: a.reason.clone(),
        at: a.decided_at.or(Some(a.created_at)),
        tone: tone_of(a.status),
    }
}

/// Another desktop's run's steps as approval records.
fn remote_approvals(
    store: &Store,
    scope: &OrgScope,
    run: &str,
) -> Result<Vec<ApprovalRecord>, pactwise_store::StoreError> {
    Ok(store
        .shared_runs()
        .approvals(scope, Some(run))?
        .iter()
        .filter_map(|a| remote_approval_record(scope.org(), a))
        .collect())
}

/// A step whose run's copy has not arrived yet: the run as far as the step tells it.
fn placeholder_run(org: pactwise_domain::OrgId, approval: &ApprovalRecord, record: &Value) -> RunRecord {
    RunRecord {
        id: approval.run,
        org,
        graph_name: record.get("graph").and_then(Value::as_str).unwrap_or("workflow").to_string(),
        graph_version: 0,
        graph_snapshot_id: 0,
        input: "{}".into(),
        status: RunStatus::Waiting,
        superstep: 0,
        revision: 0,
        state: "{}".into(),
        reason: None,
        parent: None,
        parent_node: None,
        started_by: None,
        lease_owner: None,
        lease_expires_at: None,
        wake_at: None,
        deadline_at: None,
        failures: 0,
        created_at: approval.created_at,
        updated_at: approval.created_at,
        finished_at: None,
    }
}

fn load_context(store: &Store, scope: &OrgScope) -> Result<Vec<Member>, pactwise_store::StoreError> {
    store.approvals().members(scope)
}

impl Api {
    /// The forms that start each built-in graph, for the session's organization (the procurement form's vendors
    /// from its vendor records, document fields offering its documents).
    pub async fn run_forms(&self, scope: &OrgScope) -> Result<Vec<RunForm>, ApiError> {
        let scope = scope.clone();
        let registry = self.workflows.clone();
        Ok(self
            .db
            .call(move |store| {
                let vendors = FormVendors::load(store, &scope)?;
                let documents: Vec<FormOption> = store
                    .documents()
                    .list(&scope)?
                    .into_iter()
                    .map(|d| FormOption { value: d.id.to_string(), label: d.name })
                    .collect();
                let mut forms: Vec<RunForm> = registry.graphs().map(|g| form_of(g, &vendors, &documents)).collect();
                // The built-in order (procurement first), then any other graph by name.
                let order =
                    |name: &str| pactwise_workflows::GRAPHS.iter().position(|(n, _)| *n == name).unwrap_or(usize::MAX);
                forms.sort_by(|a, b| order(&a.graph).cmp(&order(&b.graph)).then_with(|| a.graph.cmp(&b.graph)));
                Ok(forms)
            })
            .await?)
    }

    /// The organization's runs that match `filter`, newest first, in words.
    pub async fn run_summaries(&self, scope: &OrgScope, filter: RunFilter) -> Result<Vec<RunSummary>, ApiError> {
        check_filter(&self.workflows, &filter)?;
        let scope = scope.clone();
        let registry = self.workflows.clone();
        let now = self.clock.now();
        Ok(self
            .db
            .call(move |store| {
                let members = load_context(store, &scope)?;
                let ctx = Context { registry: &registry, members: &members, now };
                let mut out = Vec::new();
                for run in store.runs().list(&scope, 1000)?.iter().filter(|r| r.parent.is_none() && matches(&filter, r))
                {
                    let approvals = if run.status == RunStatus::Waiting {
                        store.approvals().for_run(&scope, run.id)?
                    } else {
                        Vec::new()
                    };
                    out.push((run.created_at, ctx.summary(run, &approvals)));
                }
                // Runs that live on other desktops of the organization, from their published copies.
                for row in store.shared_runs().runs(&scope, 1000)? {
                    let Some(run) = remote_run_record(scope.org(), &row) else { continue };
                    if !matches(&filter, &run) {
                        continue;
                    }
                    let approvals = remote_approvals(store, &scope, &row.run)?;
                    let mut summary = ctx.summary(&run, &approvals);
                    summary.on_another_desktop = true;
                    out.push((run.created_at, summary));
                }
                out.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
                Ok(out.into_iter().map(|(_, s)| s).collect())
            })
            .await?)
    }

    /// A run told in words: what it is doing now, its timeline, who decided what.
    pub async fn run_story(&self, scope: &OrgScope, id: RunId) -> Result<RunStory, ApiError> {
        let scope = scope.clone();
        let registry = self.workflows.clone();
        let now = self.clock.now();
        Ok(self
            .db
            .call(move |store| {
                let (run, events, approvals, remote) = match store.runs().get(&scope, id) {
                    Ok(run) => {
                        let events = store.runs().events(&scope, id)?;
                        let approvals = store.approvals().for_run(&scope, id)?;
                        (run, events, approvals, false)
                    }
                    Err(pactwise_store::StoreError::NotFound) => {
                        let row = store.shared_runs().run(&scope, &id.to_string())?;
                        let run = remote_run_record(scope.org(), &row).ok_or(pactwise_store::StoreError::NotFound)?;
                        let approvals = remote_approvals(store, &scope, &row.run)?;
                        (run, remote_events(&row), approvals, true)
                    }
                    Err(e) => return Err(e),
                };
                let members = load_context(store, &scope)?;
                let ctx = Context { registry: &registry, members: &members, now };
                let state: Option<RunState> = serde_json::from_str(&run.state).ok();
                let document_text = state
                    .as_ref()
                    .and_then(|s| s.channels.get("agreement"))
                    .and_then(|a| a.get("text"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let mut summary = ctx.summary(&run, &approvals);
                summary.on_another_desktop = remote;
                Ok(RunStory {
                    summary,
                    now: ctx.now_line(&run, state.as_ref(), &approvals),
                    timeline: timeline(&ctx, &run, &events, &approvals),
                    decisions: approvals.iter().map(|a| decision_line(&ctx, a)).collect(),
                    may_cancel: !run.status.is_terminal(),
                    document_text,
                })
            })
            .await?)
    }

    /// What an approver reads: the step and the workflow in words, who may decide, and the evidence as it was when
    /// the step paused, shaped per graph and step (`evidence.rs`).
    pub async fn approval_reading(&self, scope: &OrgScope, id: ApprovalId) -> Result<ApprovalReading, ApiError> {
        let scope = scope.clone();
        let registry: Arc<Registry> = self.workflows.clone();
        Ok(self
            .db
            .call(move |store| {
                let (approval, run, view) = match store.approvals().get(&scope, id) {
                    Ok(approval) => {
                        let run = store.runs().get(&scope, approval.run)?;
                        let view = approval_view(&approval);
                        (approval, run, view)
                    }
                    // A step of another desktop's run: its published copy.
                    Err(pactwise_store::StoreError::NotFound) => {
                        let row = store.shared_runs().approval(&scope, &id.to_string())?;
                        let approval =
                            remote_approval_record(scope.org(), &row).ok_or(pactwise_store::StoreError::NotFound)?;
                        let run = match store.shared_runs().run(&scope, &row.run) {
                            Ok(r) => remote_run_record(scope.org(), &r),
                            Err(pactwise_store::StoreError::NotFound) => None,
                            Err(e) => return Err(e),
                        };
                        let run = match run {
                            Some(run) => run,
                            None => placeholder_run(scope.org(), &approval, &row.record),
                        };
                        // As the inbox shows it: from another desktop, with this desktop's request on it.
                        let view =
                            remote_approval_view(store, &scope, &row)?.unwrap_or_else(|| approval_view(&approval));
                        (approval, run, view)
                    }
                    Err(e) => return Err(e),
                };
                let members = load_context(store, &scope)?;
                let graph = registry.graph(&run.graph_name).ok();
                let (names, waiting_for) = deciders(&members, &approval.eligible_roles);
                Ok(ApprovalReading {
                    workflow: title_of(&registry, &run.graph_name),
                    step: step_label(graph, &approval.node),
                    waiting_for,
                    since: approval.created_at,
                    deciders: names,
                    evidence: shape_evidence(&run.graph_name, &approval.node, &approval.state_seen),
                    approval: view,
                })
            })
            .await?)
    }
}

/// Refuses a filter naming a graph that does not exist (a typo would otherwise list nothing, silently).
pub fn check_filter(registry: &Registry, filter: &RunFilter) -> Result<(), ApiError> {
    if let Some(g) = &filter.graph
        && registry.graph(g).is_err()
    {
        return Err(ApiError::new(ErrorCode::InvalidInput, format!("there is no workflow named {g:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_words() {
        assert_eq!(in_words(Duration::seconds(90)), "in 2 min");
        assert_eq!(in_words(Duration::minutes(120)), "in 2 h");
        assert_eq!(in_words(Duration::days(3)), "in 3 days");
        assert_eq!(in_words(Duration::seconds(-5)), "now");
        assert_eq!(humanize("choose_vendor"), "Choose vendor");
        assert_eq!(value_words(&json!({"a_b": [1, "x"], "c": null})), "a b: 1, x");
    }

    #[test]
    fn an_outcome_says_its_status_once() {
        let rejected = json!({"outcome": {"status": "rejected", "reason": "rejected by the approver: over budget"}});
        assert_eq!(outcome_words(&rejected).unwrap(), "Rejected by the approver: over budget");
        let other =
            json!({"outcome": {"status": "declined", "reason": "sanctions match confirmed", "vendor": "Initech"}});
        assert_eq!(outcome_words(&other).unwrap(), "Declined: sanctions match confirmed (vendor Initech)");
    }
}
