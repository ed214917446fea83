//! The contract review report (WF-CR-1): extract → classify → verify → assemble → a person signs off. Only extract
//! and classify ask the model; verify and assemble are code, so a clause reaches the report only if its text is
//! found on the page it cites.
//!
//! - **extract** (one super-step per window, at most [`MAX_WINDOWS`]): one forced tool call per window of pages;
//!   every item is checked at the edge (`clause_id` well formed and unique in the window, `text` not empty, `page`
//!   inside the window) and a bad item is dropped and logged, never repaired.
//! - **classify** (one super-step per clause type, at most [`MAX_CLAUSE_TYPES`]): the playbook is the contract type's
//!   checklist items; one call per type names the clause ids filed under it; an id extraction did not produce is
//!   rejected at the edge. A clause filed under several types stays under each and is marked (`also_under`).
//! - **verify**: each clause's text is located on its cited page with the pipeline's normalisation; not found →
//!   listed as rejected, never shown as a clause.
//! - **assemble**: the report (`pactwise_domain::ContractReport`), complete or incomplete.
//!
//! Bounds are enforced here, not by prompts: a call budget and a time limit per contract ([`Limits`]). Before every
//! model call the budget and the time spent are checked; reaching either marks the window or type in hand and every
//! one still pending as unprocessed with that reason, and the run goes on to verify and assemble an incomplete
//! report. A failed call (an error or a reply that is not the tool's shape) is retried once while budget remains; a
//! second failure marks that window or type unprocessed. Each window and type is its own super-step, so its result is
//! checkpointed when it completes and a resumed run skips it.

use chrono::{DateTime, Utc};
use pactwise_checklists::Catalog;
use pactwise_domain::{
    ContractReport, DocumentId, EdgeDrop, ReportBounds, ReportClause, ReportClauseType, ReportCompleteness, ReportEdge,
    ReportPart, ReportRejection, ReportWindow, RiskLevel, UnprocessedPart, UnprocessedReason,
};
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry, ToolAsk};
use pactwise_model::PromptDocument;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// The graph's name.
pub const GRAPH: &str = "contract_review_report";
/// Windows of pages per contract, at most.
pub const MAX_WINDOWS: u32 = 8;
/// Clause types asked about per contract, at most.
pub const MAX_CLAUSE_TYPES: usize = 40;
/// The approval node a person signs the report off at.
pub const SIGN_OFF_NODE: &str = "sign_off";

/// The bounds of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Model calls (HTTP requests), retries included.
    pub max_calls: u32,
    /// Time spent in the model-driven steps, in milliseconds.
    pub time_limit_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_calls: 60, time_limit_ms: 5 * 60 * 1000 }
    }
}

impl Limits {
    fn check(&self) -> Result<(), String> {
        if !(1..=1000).contains(&self.max_calls) {
            return Err(format!("max_calls must be 1 to 1000, got {}", self.max_calls));
        }
        if !(1_000..=3_600_000).contains(&self.time_limit_ms) {
            return Err(format!("the time limit must be 1 second to 1 hour, got {} ms", self.time_limit_ms));
        }
        Ok(())
    }
}

/// A run's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportInput {
    pub document: DocumentId,
    /// The contract type whose checklist is the playbook.
    pub contract_type: String,
    #[serde(default)]
    pub limits: Limits,
}

impl ReportInput {
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Window {
    index: u32,
    first_page: u32,
    last_page: u32,
}

impl Window {
    fn label(&self) -> String {
        if self.first_page == self.last_page {
            format!("page {}", self.first_page)
        } else {
            format!("pages {}–{}", self.first_page, self.last_page)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct PlaybookType {
    item_id: String,
    section: String,
    question: String,
    risk: RiskLevel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Plan {
    document: DocumentId,
    contract_type: String,
    contract_type_name: String,
    page_count: u32,
    windows: Vec<Window>,
    playbook: Vec<PlaybookType>,
    /// Clause types beyond [`MAX_CLAUSE_TYPES`]: never asked about.
    over_bound: Vec<PlaybookType>,
    limits: Limits,
}

/// What the run has used of its bounds (checkpointed with every window and type).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Spent {
    calls: u32,
    time_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Clause {
    id: String,
    text: String,
    page: u32,
    window: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct UnitResult<T> {
    processed: bool,
    #[serde(default)]
    reason: Option<UnprocessedReason>,
    #[serde(default)]
    detail: Option<String>,
    value: T,
    #[serde(default)]
    dropped: Vec<EdgeDrop>,
    calls: u32,
}

impl<T: Default> UnitResult<T> {
    fn unprocessed(reason: UnprocessedReason, detail: Option<String>, calls: u32) -> Self {
        UnitResult { processed: false, reason: Some(reason), detail, value: T::default(), dropped: Vec::new(), calls }
    }
}

type WindowResult = UnitResult<Vec<Clause>>;
type TypeResult = UnitResult<Vec<String>>;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Verified {
    /// Clauses found on their page, with the page's own text.
    found: Vec<Clause>,
    rejected: Vec<(Clause, String)>,
}

/// The forced tool of the extract step; its schema is what the model is offered. The reply is read item by item
/// (see [`clauses_at_the_edge`]), not parsed whole: one bad item must not cost the others.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct RecordClauses {
    /// Every clause on the pages of the window, in page order.
    clauses: Vec<ExtractedClause>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct ExtractedClause {
    /// Short and unique in this window: letters, digits, '-', '_' or '.' (e.g. "c1").
    clause_id: String,
    /// The clause's words exactly as printed on the page.
    text: String,
    /// The page the text is on.
    page: u32,
}

/// The forced tool of the classify step.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct RecordClauseType {
    /// The ids of the listed clauses that are about this clause type; empty when none is.
    clause_ids: Vec<String>,
}

fn catalog() -> Result<&'static Catalog, NodeFailure> {
    static CATALOG: OnceLock<Result<Catalog, String>> = OnceLock::new();
    CATALOG
        .get_or_init(|| Catalog::load().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| NodeFailure::Fatal(format!("the checklist library did not load: {e}")))
}

fn read<T: DeserializeOwned>(ctx: &NodeContext<'_>, channel: &str) -> Result<T, NodeFailure> {
    serde_json::from_value(ctx.channel(channel).clone())
        .map_err(|e| NodeFailure::Fatal(format!("the run's {channel:?} is not in the expected shape: {e}")))
}

fn read_map<T: DeserializeOwned>(ctx: &NodeContext<'_>, channel: &str) -> Result<BTreeMap<String, T>, NodeFailure> {
    match ctx.channel(channel) {
        Value::Null => Ok(BTreeMap::new()),
        _ => read(ctx, channel),
    }
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, NodeFailure> {
    serde_json::to_value(value).map_err(|e| NodeFailure::Fatal(format!("a step result could not be encoded: {e}")))
}

/// Splits `page_count` pages into at most [`MAX_WINDOWS`] windows of consecutive pages, as even as possible.
fn windows_for(page_count: u32) -> Vec<Window> {
    let count = page_count.min(MAX_WINDOWS);
    let (base, extra) = (page_count / count.max(1), page_count % count.max(1));
    let mut first = 1;
    (0..count)
        .map(|i| {
            let size = base + u32::from(i < extra);
            let window = Window { index: i + 1, first_page: first, last_page: first + size - 1 };
            first += size;
            window
        })
        .collect()
}

/// Whether another call may be made: the budget and the time (spent so far plus this unit's) are checked.
fn bound_reached(spent: Spent, limits: Limits, unit_ms: u64) -> Option<UnprocessedReason> {
    if spent.calls >= limits.max_calls {
        Some(UnprocessedReason::CallBudget)
    } else if spent.time_ms.saturating_add(unit_ms) >= limits.time_limit_ms {
        Some(UnprocessedReason::TimeLimit)
    } else {
        None
    }
}

fn millis_since(start: DateTime<Utc>, now: DateTime<Utc>) -> u64 {
    u64::try_from((now - start).num_milliseconds()).unwrap_or(0)
}

fn shorten(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 300 { text } else { format!("{}…", text.chars().take(299).collect::<String>()) }
}

fn valid_clause_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The extract edge: the reply must hold a list of clauses (else the call failed); each item is kept only if it is
/// well formed and on a page of the window. Kept clauses get the run-wide id `W<window>-<clause_id>`.
fn clauses_at_the_edge(window: &Window, reply: &Value) -> Result<(Vec<Clause>, Vec<EdgeDrop>), String> {
    let items = reply
        .get("clauses")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the reply has no list of clauses: {}", shorten(reply)))?;
    let mut kept: Vec<Clause> = Vec::new();
    let mut dropped = Vec::new();
    for item in items {
        let verdict = (|| {
            let object = item.as_object().ok_or("the item is not an object")?;
            let id = object.get("clause_id").and_then(Value::as_str).map(str::trim).ok_or("clause_id is missing")?;
            if !valid_clause_id(id) {
                return Err("clause_id must be 1 to 64 letters, digits, '-', '_' or '.'".to_string());
            }
            let text = object.get("text").and_then(Value::as_str).ok_or("text is missing")?;
            if text.trim().is_empty() {
                return Err("text is empty".to_string());
            }
            let page = object.get("page").and_then(Value::as_u64).ok_or("page is missing or not a page number")?;
            if page < u64::from(window.first_page) || page > u64::from(window.last_page) {
                return Err(format!("page {page} is outside the window ({})", window.label()));
            }
            let id = format!("W{}-{id}", window.index);
            if kept.iter().any(|c| c.id == id) {
                return Err("clause_id is used twice in the window".to_string());
            }
            Ok(Clause { id, text: text.trim().to_string(), page: page as u32, window: window.index })
        })();
        match verdict {
            Ok(clause) => kept.push(clause),
            Err(reason) => {
                tracing::warn!(window = window.index, %reason, "extracted item dropped at the edge");
                dropped.push(EdgeDrop {
                    edge: ReportEdge::Extract,
                    window: Some(window.index),
                    item_id: None,
                    reason,
                    received: shorten(item),
                });
            }
        }
    }
    Ok((kept, dropped))
}

/// The classify edge: the reply must hold a list of clause ids (else the call failed); an id extraction did not
/// produce is rejected.
fn ids_at_the_edge(
    item_id: &str,
    known: &BTreeSet<&str>,
    reply: &Value,
) -> Result<(Vec<String>, Vec<EdgeDrop>), String> {
    let ids = reply
        .get("clause_ids")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the reply has no list of clause ids: {}", shorten(reply)))?;
    let mut kept: Vec<String> = Vec::new();
    let mut dropped = Vec::new();
    for id in ids {
        match id.as_str().map(str::trim) {
            Some(id) if known.contains(id) => {
                if !kept.iter().any(|k| k == id) {
                    kept.push(id.to_string());
                }
            }
            other => {
                let reason = match other {
                    Some(_) => "unknown clause id: extraction produced no such clause".to_string(),
                    None => "not a clause id".to_string(),
                };
                tracing::warn!(item = item_id, %reason, received = %id, "clause id rejected at the edge");
                dropped.push(EdgeDrop {
                    edge: ReportEdge::Classify,
                    window: None,
                    item_id: Some(item_id.to_string()),
                    reason,
                    received: shorten(id),
                });
            }
        }
    }
    Ok((kept, dropped))
}

/// How a unit of model work ended.
enum Called<T> {
    Done(T, u32),
    Unprocessed(UnprocessedReason, Option<String>, u32),
}

/// One call and, if it fails, one retry, each only while the bounds allow; `edge` turns the reply into a value or
/// says why the reply is unusable (which counts as a failed call).
fn call_with_retry<T>(
    ctx: &NodeContext<'_>,
    spent: &mut Spent,
    limits: Limits,
    unit_start: DateTime<Utc>,
    ask: &ToolAsk,
    edge: impl Fn(&Value) -> Result<T, String>,
) -> Called<T> {
    let mut calls = 0;
    let mut last_error: Option<String> = None;
    for attempt in 1..=2u32 {
        let unit_ms = millis_since(unit_start, ctx.clock.now());
        if let Some(reason) = bound_reached(*spent, limits, unit_ms) {
            return Called::Unprocessed(reason, last_error, calls);
        }
        let remaining = limits.time_limit_ms.saturating_sub(spent.time_ms + unit_ms);
        let ask = ToolAsk { timeout: Some(std::time::Duration::from_millis(remaining)), ..ask.clone() };
        spent.calls += 1;
        calls += 1;
        let result = ctx.ask_tool(&ask).map_err(|e| e.to_string()).and_then(|reply| edge(&reply));
        match result {
            Ok(value) => return Called::Done(value, calls),
            Err(error) => {
                tracing::warn!(node = ctx.node, attempt, %error, "model call failed");
                last_error = Some(error);
            }
        }
    }
    Called::Unprocessed(UnprocessedReason::ModelFailed, last_error, calls)
}

/// The page-text tool, with one retry.
fn page_texts(
    ctx: &NodeContext<'_>,
    document: DocumentId,
    first: u32,
    last: u32,
) -> Result<pactwise_store::PageTexts, String> {
    let mut error = String::new();
    for _ in 0..2 {
        match ctx.page_texts(document, first, last) {
            Ok(Some(texts)) => return Ok(texts),
            Ok(None) => return Err("the document's pages have not been extracted".into()),
            Err(e) => {
                tracing::warn!(node = ctx.node, error = %e, "reading pages failed");
                error = e;
            }
        }
    }
    Err(error)
}

fn plan(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let input: ReportInput = serde_json::from_value(ctx.input().clone())
        .map_err(|e| NodeFailure::Fatal(format!("the report's input is not valid: {e}")))?;
    input.limits.check().map_err(NodeFailure::Fatal)?;
    if ctx.model.is_none() {
        return Err(NodeFailure::Fatal(
            "the contract review report needs the model and none is available (no API key, or offline); set an \
             API key in Settings and run the report again"
                .into(),
        ));
    }
    let catalog = catalog()?;
    let contract_type = catalog.contract_type(&input.contract_type).ok_or_else(|| {
        NodeFailure::Fatal(format!("{:?} is not a contract type of the checklist library", input.contract_type))
    })?;
    let page_count = page_texts(ctx, input.document, 1, 0)
        .map_err(|e| NodeFailure::Fatal(format!("the document cannot be read: {e}")))?
        .page_count;
    if page_count == 0 {
        return Err(NodeFailure::Fatal("the document has no pages to review".into()));
    }
    let section_name = |id: &str| {
        contract_type.sections.iter().find(|s| s.id == id).map_or_else(|| id.to_string(), |s| s.name.clone())
    };
    let mut playbook: Vec<PlaybookType> = contract_type
        .items
        .iter()
        .map(|i| PlaybookType {
            item_id: i.id.clone(),
            section: section_name(&i.section),
            question: i.question.clone(),
            risk: i.risk,
        })
        .collect();
    let over_bound = playbook.split_off(playbook.len().min(MAX_CLAUSE_TYPES));
    let plan = Plan {
        document: input.document,
        contract_type: contract_type.id.clone(),
        contract_type_name: contract_type.name.clone(),
        page_count,
        windows: windows_for(page_count),
        playbook,
        over_bound,
        limits: input.limits,
    };
    tracing::info!(windows = plan.windows.len(), clause_types = plan.playbook.len(), "report planned");
    Ok(NodeOutput::default().write("plan", to_value(&plan)?).write("spent", to_value(&Spent::default())?))
}

fn extract_ask(plan: &Plan, window: &Window, pages: &[(u32, String)]) -> Result<ToolAsk, NodeFailure> {
    let text: String = pages.iter().map(|(n, t)| format!("[Page {n}]\n{t}\n\n")).collect();
    Ok(ToolAsk {
        documents: vec![PromptDocument::new(format!("Contract, {}", window.label()), text)],
        question: format!(
            "This is window {} of {}: {} of a {}-page contract. Record every clause on these pages with \
             record_clauses. For each clause give a clause_id unique in this window (letters, digits, '-', '_' or \
             '.'), its text copied word for word from one page (the whole clause if it is short, otherwise its \
             operative sentence; never a summary or a paraphrase), and the number of the page that text is on, from \
             {} to {}.",
            window.index,
            plan.windows.len(),
            window.label(),
            plan.page_count,
            window.first_page,
            window.last_page
        ),
        tool_name: "record_clauses".into(),
        tool_description: "Record the clauses found on the pages of this window.".into(),
        schema: pactwise_model::schema::object_schema::<RecordClauses>()
            .map_err(|e| NodeFailure::Fatal(e.to_string()))?,
        max_tokens: Some(16_000),
        timeout: None,
    })
}

fn extract(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let plan: Plan = read(ctx, "plan")?;
    let done: BTreeMap<String, WindowResult> = read_map(ctx, "windows")?;
    let mut spent: Spent = read(ctx, "spent")?;
    let pending: Vec<&Window> = plan.windows.iter().filter(|w| !done.contains_key(&w.index.to_string())).collect();
    let Some(window) = pending.first().copied() else {
        return Ok(NodeOutput::default().route("done"));
    };
    let start = ctx.clock.now();
    let mut results: BTreeMap<String, WindowResult> = BTreeMap::new();
    let stop = match bound_reached(spent, plan.limits, 0) {
        Some(reason) => Some((reason, None, 0)),
        None => match page_texts(ctx, plan.document, window.first_page, window.last_page) {
            Err(error) => {
                results.insert(
                    window.index.to_string(),
                    WindowResult::unprocessed(UnprocessedReason::ToolFailed, Some(error), 0),
                );
                None
            }
            Ok(texts) => {
                let ask = extract_ask(&plan, window, &texts.pages)?;
                match call_with_retry(ctx, &mut spent, plan.limits, start, &ask, |r| clauses_at_the_edge(window, r)) {
                    Called::Done((clauses, dropped), calls) => {
                        tracing::info!(
                            window = window.index,
                            clauses = clauses.len(),
                            dropped = dropped.len(),
                            "window extracted"
                        );
                        results.insert(
                            window.index.to_string(),
                            UnitResult { processed: true, reason: None, detail: None, value: clauses, dropped, calls },
                        );
                        None
                    }
                    Called::Unprocessed(UnprocessedReason::ModelFailed, detail, calls) => {
                        results.insert(
                            window.index.to_string(),
                            WindowResult::unprocessed(UnprocessedReason::ModelFailed, detail, calls),
                        );
                        None
                    }
                    Called::Unprocessed(reason, detail, calls) => Some((reason, detail, calls)),
                }
            }
        },
    };
    if let Some((reason, detail, calls)) = stop {
        // A bound is reached: no window still pending can be processed.
        tracing::warn!(reason = reason.as_str(), windows = pending.len(), "report bound reached while extracting");
        for (i, w) in pending.iter().enumerate() {
            let (detail, calls) = if i == 0 { (detail.clone(), calls) } else { (None, 0) };
            results.insert(w.index.to_string(), WindowResult::unprocessed(reason, detail, calls));
        }
    }
    spent.time_ms += millis_since(start, ctx.clock.now());
    let more = pending.len() > results.len();
    Ok(NodeOutput::default().write("windows", to_value(&results)?).write("spent", to_value(&spent)?).route(if more {
        "more"
    } else {
        "done"
    }))
}

fn extracted_clauses(windows: &BTreeMap<String, WindowResult>) -> Vec<&Clause> {
    let mut clauses: Vec<&Clause> = windows.values().filter(|w| w.processed).flat_map(|w| w.value.iter()).collect();
    clauses.sort_by_key(|c| (c.window, c.page));
    clauses
}

fn classify_ask(playbook_type: &PlaybookType, clauses: &[&Clause]) -> Result<ToolAsk, NodeFailure> {
    let listing: String = clauses.iter().map(|c| format!("[{}] (page {}) {}\n", c.id, c.page, c.text)).collect();
    Ok(ToolAsk {
        documents: vec![PromptDocument::new("Clauses extracted from the contract", listing)],
        question: format!(
            "Clause type {} (section: {}): {}\nWith record_clause_type, list the ids of the clauses above that are \
             about this clause type (an empty list if none is). Use only ids from the list.",
            playbook_type.item_id, playbook_type.section, playbook_type.question
        ),
        tool_name: "record_clause_type".into(),
        tool_description: "Record which extracted clauses are about this clause type.".into(),
        schema: pactwise_model::schema::object_schema::<RecordClauseType>()
            .map_err(|e| NodeFailure::Fatal(e.to_string()))?,
        max_tokens: Some(2_000),
        timeout: None,
    })
}

fn classify(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let plan: Plan = read(ctx, "plan")?;
    let windows: BTreeMap<String, WindowResult> = read_map(ctx, "windows")?;
    let done: BTreeMap<String, TypeResult> = read_map(ctx, "types")?;
    let mut spent: Spent = read(ctx, "spent")?;
    let mut results: BTreeMap<String, TypeResult> = BTreeMap::new();
    for t in plan.over_bound.iter().filter(|t| !done.contains_key(&t.item_id)) {
        results.insert(t.item_id.clone(), TypeResult::unprocessed(UnprocessedReason::PlaybookBound, None, 0));
    }
    let pending: Vec<&PlaybookType> = plan.playbook.iter().filter(|t| !done.contains_key(&t.item_id)).collect();
    let clauses = extracted_clauses(&windows);
    let Some(current) = pending.first().copied() else {
        return Ok(NodeOutput::default().write("types", to_value(&results)?).route("done"));
    };
    let bound = bound_reached(spent, plan.limits, 0);
    if bound.is_none() && clauses.is_empty() {
        // Nothing was extracted: there is nothing to file, and no call is made.
        for t in &pending {
            results.insert(
                t.item_id.clone(),
                UnitResult {
                    processed: true,
                    reason: None,
                    detail: None,
                    value: Vec::new(),
                    dropped: Vec::new(),
                    calls: 0,
                },
            );
        }
        return Ok(NodeOutput::default().write("types", to_value(&results)?).route("done"));
    }
    let start = ctx.clock.now();
    let known: BTreeSet<&str> = clauses.iter().map(|c| c.id.as_str()).collect();
    let stop = match bound {
        Some(reason) => Some((reason, None, 0)),
        None => {
            let ask = classify_ask(current, &clauses)?;
            match call_with_retry(ctx, &mut spent, plan.limits, start, &ask, |r| {
                ids_at_the_edge(&current.item_id, &known, r)
            }) {
                Called::Done((ids, dropped), calls) => {
                    results.insert(
                        current.item_id.clone(),
                        UnitResult { processed: true, reason: None, detail: None, value: ids, dropped, calls },
                    );
                    None
                }
                Called::Unprocessed(UnprocessedReason::ModelFailed, detail, calls) => {
                    results.insert(
                        current.item_id.clone(),
                        TypeResult::unprocessed(UnprocessedReason::ModelFailed, detail, calls),
                    );
                    None
                }
                Called::Unprocessed(reason, detail, calls) => Some((reason, detail, calls)),
            }
        }
    };
    if let Some((reason, detail, calls)) = stop {
        tracing::warn!(reason = reason.as_str(), types = pending.len(), "report bound reached while classifying");
        for (i, t) in pending.iter().enumerate() {
            let (detail, calls) = if i == 0 { (detail.clone(), calls) } else { (None, 0) };
            results.insert(t.item_id.clone(), TypeResult::unprocessed(reason, detail, calls));
        }
    }
    spent.time_ms += millis_since(start, ctx.clock.now());
    let more = pending.iter().any(|t| !results.contains_key(&t.item_id));
    Ok(NodeOutput::default().write("types", to_value(&results)?).write("spent", to_value(&spent)?).route(if more {
        "more"
    } else {
        "done"
    }))
}

/// Checks every extracted clause against the text of the page it cites.
fn verify_clauses(pages: &BTreeMap<u32, String>, clauses: &[&Clause]) -> Verified {
    let mut verified = Verified::default();
    for clause in clauses {
        match pages.get(&clause.page) {
            None => verified.rejected.push(((*clause).clone(), "page_not_found".into())),
            Some(page) => match pactwise_pipeline::verify::locate(page, &clause.text) {
                Some(range) => verified.found.push(Clause { text: page[range].to_string(), ..(*clause).clone() }),
                None => {
                    tracing::warn!(clause = %clause.id, page = clause.page, "extracted text not found on its page; rejected");
                    verified.rejected.push(((*clause).clone(), pactwise_pipeline::verify::QUOTE_NOT_FOUND.to_string()));
                }
            },
        }
    }
    verified
}

fn verify(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let plan: Plan = read(ctx, "plan")?;
    let windows: BTreeMap<String, WindowResult> = read_map(ctx, "windows")?;
    let clauses = extracted_clauses(&windows);
    let texts = page_texts(ctx, plan.document, 1, plan.page_count)
        .map_err(|e| NodeFailure::Fatal(format!("the pages could not be read to verify the clauses: {e}")))?;
    let pages: BTreeMap<u32, String> = texts.pages.into_iter().collect();
    let verified = verify_clauses(&pages, &clauses);
    tracing::info!(found = verified.found.len(), rejected = verified.rejected.len(), "clauses verified");
    Ok(NodeOutput::default().write("verified", to_value(&verified)?))
}

fn assemble_report(
    plan: &Plan,
    windows: &BTreeMap<String, WindowResult>,
    types: &BTreeMap<String, TypeResult>,
    verified: &Verified,
    spent: Spent,
) -> ContractReport {
    let filed_under = |clause_id: &str| -> Vec<String> {
        plan.playbook
            .iter()
            .filter(|t| types.get(&t.item_id).is_some_and(|r| r.processed && r.value.iter().any(|id| id == clause_id)))
            .map(|t| t.item_id.clone())
            .collect()
    };
    let shown = |c: &Clause, under: &str| ReportClause {
        clause_id: c.id.clone(),
        text: c.text.clone(),
        page: c.page,
        window: c.window,
        also_under: filed_under(&c.id).into_iter().filter(|t| t != under).collect(),
    };
    let mut unprocessed = Vec::new();
    let mut windows_out = Vec::new();
    let mut dropped = Vec::new();
    for w in &plan.windows {
        let result = windows.get(&w.index.to_string());
        let processed = result.is_some_and(|r| r.processed);
        windows_out.push(ReportWindow {
            index: w.index,
            first_page: w.first_page,
            last_page: w.last_page,
            processed,
            clauses: result.map_or(0, |r| r.value.len() as u32),
        });
        if let Some(r) = result {
            dropped.extend(r.dropped.iter().cloned());
        }
        if !processed {
            unprocessed.push(UnprocessedPart {
                part: ReportPart::Window,
                id: w.index.to_string(),
                label: w.label(),
                reason: result.and_then(|r| r.reason).unwrap_or(UnprocessedReason::TimeLimit),
                detail: result.and_then(|r| r.detail.clone()),
            });
        }
    }
    let mut clause_types = Vec::new();
    for t in plan.playbook.iter().chain(plan.over_bound.iter()) {
        let result = types.get(&t.item_id);
        let processed = result.is_some_and(|r| r.processed);
        if let Some(r) = result {
            dropped.extend(r.dropped.iter().cloned());
        }
        if !processed {
            unprocessed.push(UnprocessedPart {
                part: ReportPart::ClauseType,
                id: t.item_id.clone(),
                label: t.question.clone(),
                reason: result.and_then(|r| r.reason).unwrap_or(UnprocessedReason::TimeLimit),
                detail: result.and_then(|r| r.detail.clone()),
            });
        }
        let clauses = match result {
            Some(r) if r.processed => {
                verified.found.iter().filter(|c| r.value.contains(&c.id)).map(|c| shown(c, &t.item_id)).collect()
            }
            _ => Vec::new(),
        };
        clause_types.push(ReportClauseType {
            item_id: t.item_id.clone(),
            section: t.section.clone(),
            question: t.question.clone(),
            risk: t.risk,
            processed,
            clauses,
        });
    }
    let unassigned = verified.found.iter().filter(|c| filed_under(&c.id).is_empty()).map(|c| shown(c, "")).collect();
    let rejected = verified
        .rejected
        .iter()
        .map(|(c, reason)| ReportRejection {
            clause_id: c.id.clone(),
            text: c.text.clone(),
            page: c.page,
            window: c.window,
            reason: reason.clone(),
            claimed_types: filed_under(&c.id),
        })
        .collect();
    ContractReport {
        document: plan.document,
        contract_type: plan.contract_type.clone(),
        contract_type_name: plan.contract_type_name.clone(),
        page_count: plan.page_count,
        completeness: if unprocessed.is_empty() {
            ReportCompleteness::Complete
        } else {
            ReportCompleteness::Incomplete
        },
        clause_types,
        unassigned,
        rejected,
        dropped,
        unprocessed,
        windows: windows_out,
        bounds: ReportBounds {
            calls_used: spent.calls,
            call_limit: plan.limits.max_calls,
            time_used_ms: spent.time_ms,
            time_limit_ms: plan.limits.time_limit_ms,
        },
    }
}

fn assemble(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let plan: Plan = read(ctx, "plan")?;
    let windows: BTreeMap<String, WindowResult> = read_map(ctx, "windows")?;
    let types: BTreeMap<String, TypeResult> = read_map(ctx, "types")?;
    let verified: Verified = read(ctx, "verified")?;
    let spent: Spent = read(ctx, "spent")?;
    let report = assemble_report(&plan, &windows, &types, &verified, spent);
    let status = match report.completeness {
        ReportCompleteness::Complete => "complete_awaiting_sign_off",
        ReportCompleteness::Incomplete => "incomplete_awaiting_sign_off",
    };
    tracing::info!(
        status,
        clauses = report.shown_clauses().len(),
        rejected = report.rejected.len(),
        "report assembled"
    );
    Ok(NodeOutput::default().write("report", to_value(&report)?).write(
        "outcome",
        json!({ "status": status, "unprocessed": report.unprocessed.len(), "rejected": report.rejected.len() }),
    ))
}

fn close(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let decision = ctx.channel("sign_off");
    let status = if decision["decision"] == json!("approve") { "signed_off" } else { "sign_off_refused" };
    Ok(NodeOutput::default().write(
        "outcome",
        json!({ "status": status, "by": decision["decided_by_name"], "at": decision["decided_at"],
                "reason": decision["reason"], "completeness": ctx.channel("report")["completeness"] }),
    ))
}

pub fn register(r: &mut Registry) {
    r.handler("report.plan", plan);
    r.handler("report.extract", extract);
    r.handler("report.classify", classify);
    r.handler("report.verify", verify);
    r.handler("report.assemble", assemble);
    r.handler("report.close", close);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(index: u32, first: u32, last: u32) -> Window {
        Window { index, first_page: first, last_page: last }
    }

    #[test]
    fn pages_split_into_at_most_eight_even_windows() {
        let spans = |n| windows_for(n).iter().map(|w| (w.first_page, w.last_page)).collect::<Vec<_>>();
        assert_eq!(spans(1), [(1, 1)]);
        assert_eq!(spans(3), [(1, 1), (2, 2), (3, 3)]);
        assert_eq!(spans(8).len(), 8);
        assert_eq!(spans(20), [(1, 3), (4, 6), (7, 9), (10, 12), (13, 14), (15, 16), (17, 18), (19, 20)]);
        let big = windows_for(1001);
        assert_eq!((big.len(), big[0].first_page, big[7].last_page), (8, 1, 1001));
        assert!(windows_for(0).is_empty());
    }

    #[test]
    fn the_extract_edge_keeps_good_items_and_drops_each_bad_one_with_its_reason() {
        let w = window(2, 4, 6);
        let reply = json!({"clauses": [
            {"clause_id": "c1", "text": "Payment is due in 30 days.", "page": 4},
            {"clause_id": "c2", "text": "Outside.", "page": 9},
            {"clause_id": "c3", "text": "   ", "page": 5},
            {"clause_id": "c4", "page": 5},
            {"clause_id": "bad id!", "text": "x", "page": 5},
            {"clause_id": "c1", "text": "Twice.", "page": 6},
            "not an object",
            {"clause_id": "c5", "text": "Either party may terminate.", "page": "6"},
            {"clause_id": "c6", "text": "Either party may terminate.", "page": 6}
        ]});
        let (kept, dropped) = clauses_at_the_edge(&w, &reply).unwrap();
        assert_eq!(kept.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["W2-c1", "W2-c6"]);
        let reasons: Vec<&str> = dropped.iter().map(|d| d.reason.as_str()).collect();
        assert_eq!(reasons.len(), 7, "{reasons:?}");
        assert!(reasons[0].contains("outside the window"), "{reasons:?}");
        assert_eq!(reasons[1], "text is empty");
        assert_eq!(reasons[2], "text is missing");
        assert!(reasons[3].starts_with("clause_id must be"));
        assert!(reasons[4].contains("twice"));
        assert_eq!(reasons[5], "the item is not an object");
        assert!(reasons[6].contains("page"));
        assert!(dropped.iter().all(|d| d.edge == ReportEdge::Extract && d.window == Some(2)));
        assert!(clauses_at_the_edge(&w, &json!({"items": []})).is_err(), "a reply without the list is a failed call");
    }

    #[test]
    fn the_classify_edge_rejects_ids_extraction_did_not_produce() {
        let known: BTreeSet<&str> = ["W1-c1", "W1-c2"].into_iter().collect();
        let reply = json!({"clause_ids": ["W1-c2", "W9-c9", "W1-c2", 7]});
        let (kept, dropped) = ids_at_the_edge("nda.term.duration", &known, &reply).unwrap();
        assert_eq!(kept, ["W1-c2"]);
        assert_eq!(dropped.len(), 2);
        assert!(dropped[0].reason.starts_with("unknown clause id"));
        assert_eq!(dropped[0].received, "\"W9-c9\"");
        assert_eq!(dropped[0].item_id.as_deref(), Some("nda.term.duration"));
        assert!(ids_at_the_edge("x", &known, &json!({})).is_err());
    }

    #[test]
    fn bounds_are_checked_in_order_calls_then_time() {
        let limits = Limits { max_calls: 2, time_limit_ms: 1_000 };
        assert_eq!(bound_reached(Spent { calls: 1, time_ms: 0 }, limits, 999), None);
        assert_eq!(bound_reached(Spent { calls: 2, time_ms: 0 }, limits, 0), Some(UnprocessedReason::CallBudget));
        assert_eq!(bound_reached(Spent { calls: 0, time_ms: 600 }, limits, 400), Some(UnprocessedReason::TimeLimit));
    }

    fn clause(id: &str, text: &str, page: u32) -> Clause {
        Clause { id: id.into(), text: text.into(), page, window: 1 }
    }

    #[test]
    fn only_text_found_on_its_page_is_verified_and_it_is_the_pages_own_text() {
        let pages: BTreeMap<u32, String> =
            [(1, "The Supplier shall   indemnify the Customer.".to_string()), (2, "Other text.".to_string())].into();
        let a = clause("W1-a", "The Supplier shall indemnify the Customer.", 1);
        let b = clause("W1-b", "The Supplier shall indemnify the Customer.", 2);
        let c = clause("W1-c", "Liability is unlimited.", 1);
        let d = clause("W1-d", "Other text.", 7);
        let verified = verify_clauses(&pages, &[&a, &b, &c, &d]);
        assert_eq!(verified.found.len(), 1);
        assert_eq!(verified.found[0].text, "The Supplier shall   indemnify the Customer.");
        let rejected: Vec<(&str, &str)> = verified.rejected.iter().map(|(c, r)| (c.id.as_str(), r.as_str())).collect();
        assert_eq!(rejected, [("W1-b", "quote_not_found"), ("W1-c", "quote_not_found"), ("W1-d", "page_not_found")]);
    }

    #[test]
    fn a_clause_under_several_types_is_kept_under_each_and_marked_and_unprocessed_parts_are_named() {
        let t = |id: &str| PlaybookType {
            item_id: id.into(),
            section: "Term".into(),
            question: format!("{id}?"),
            risk: RiskLevel::High,
        };
        let plan = Plan {
            document: DocumentId::new(),
            contract_type: "nda".into(),
            contract_type_name: "NDA".into(),
            page_count: 2,
            windows: vec![window(1, 1, 1), window(2, 2, 2)],
            playbook: vec![t("a"), t("b"), t("c")],
            over_bound: vec![],
            limits: Limits::default(),
        };
        let shared = clause("W1-x", "Shared.", 1);
        let lone = clause("W1-y", "Alone.", 1);
        let windows: BTreeMap<String, WindowResult> = [
            (
                "1".to_string(),
                UnitResult {
                    processed: true,
                    reason: None,
                    detail: None,
                    value: vec![shared.clone(), lone.clone()],
                    dropped: vec![],
                    calls: 1,
                },
            ),
            ("2".to_string(), WindowResult::unprocessed(UnprocessedReason::CallBudget, None, 0)),
        ]
        .into();
        let types: BTreeMap<String, TypeResult> = [
            (
                "a".to_string(),
                UnitResult {
                    processed: true,
                    reason: None,
                    detail: None,
                    value: vec!["W1-x".into()],
                    dropped: vec![],
                    calls: 1,
                },
            ),
            (
                "b".to_string(),
                UnitResult {
                    processed: true,
                    reason: None,
                    detail: None,
                    value: vec!["W1-x".into()],
                    dropped: vec![],
                    calls: 1,
                },
            ),
            ("c".to_string(), TypeResult::unprocessed(UnprocessedReason::ModelFailed, Some("boom".into()), 2)),
        ]
        .into();
        let verified = Verified { found: vec![shared, lone], rejected: vec![] };
        let report = assemble_report(&plan, &windows, &types, &verified, Spent { calls: 5, time_ms: 10 });
        assert_eq!(report.completeness, ReportCompleteness::Incomplete);
        assert_eq!(report.clause_types[0].clauses[0].also_under, ["b"]);
        assert_eq!(report.clause_types[1].clauses[0].also_under, ["a"]);
        assert!(report.clause_types[2].clauses.is_empty() && !report.clause_types[2].processed);
        assert_eq!(report.unassigned.iter().map(|c| c.clause_id.as_str()).collect::<Vec<_>>(), ["W1-y"]);
        let named: Vec<(ReportPart, &str, UnprocessedReason)> =
            report.unprocessed.iter().map(|u| (u.part, u.id.as_str(), u.reason)).collect();
        assert_eq!(
            named,
            [
                (ReportPart::Window, "2", UnprocessedReason::CallBudget),
                (ReportPart::ClauseType, "c", UnprocessedReason::ModelFailed)
            ]
        );
        assert_eq!(report.shown_clauses().len(), 2);
        assert_eq!(report.bounds.calls_used, 5);
    }
}
