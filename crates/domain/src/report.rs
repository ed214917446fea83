//! The contract review report (workflow WF-CR-1, blueprint "contract review workflow"): the clauses of one contract
//! filed by the clause types of its playbook, each with text found on the page it cites; the extractions rejected
//! because their text is not on that page; items dropped at an edge (malformed, outside their window, unknown clause
//! ids); the parts not processed and why; and the bounds it ran under. Plain data, built by `pactwise-workflows` and
//! shown by the API and the UI.

use crate::checklist::RiskLevel;
use crate::ids::DocumentId;
use serde::{Deserialize, Serialize};

/// Whether every window and every clause type was processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ReportCompleteness {
    Complete,
    /// Some windows or clause types were not processed; `ContractReport::unprocessed` names them.
    Incomplete,
}

/// Why a part of the contract or of the playbook was not processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum UnprocessedReason {
    /// The run's model-call budget was used up.
    CallBudget,
    /// The run's time limit was reached.
    TimeLimit,
    /// The model call failed twice (the first attempt and its one retry).
    ModelFailed,
    /// Reading the window's pages failed twice.
    ToolFailed,
    /// The playbook has more clause types than a run may ask about.
    PlaybookBound,
}

impl UnprocessedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            UnprocessedReason::CallBudget => "call_budget",
            UnprocessedReason::TimeLimit => "time_limit",
            UnprocessedReason::ModelFailed => "model_failed",
            UnprocessedReason::ToolFailed => "tool_failed",
            UnprocessedReason::PlaybookBound => "playbook_bound",
        }
    }

    /// A sentence for people.
    pub fn describe(self) -> &'static str {
        match self {
            UnprocessedReason::CallBudget => "the model-call budget of the run was used up",
            UnprocessedReason::TimeLimit => "the run's time limit was reached",
            UnprocessedReason::ModelFailed => "the model call failed twice",
            UnprocessedReason::ToolFailed => "reading the pages failed twice",
            UnprocessedReason::PlaybookBound => "the playbook has more clause types than a run may ask about",
        }
    }
}

/// What was not processed: a window of pages or a clause type of the playbook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ReportPart {
    Window,
    ClauseType,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct UnprocessedPart {
    pub part: ReportPart,
    /// The window's number (1-based) or the clause type's checklist item id.
    pub id: String,
    /// "pages 4–6" or the clause type's question.
    pub label: String,
    pub reason: UnprocessedReason,
    /// The last error, when a call failed.
    pub detail: Option<String>,
}

/// A clause whose text was found on the page it cites. `text` is the page's own text of that span.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct ReportClause {
    pub clause_id: String,
    pub text: String,
    pub page: u32,
    pub window: u32,
    /// The other clause types this clause is also filed under (empty when it is under one type only).
    pub also_under: Vec<String>,
}

/// One clause type of the playbook (a checklist item of the contract's type) and the clauses filed under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct ReportClauseType {
    pub item_id: String,
    pub section: String,
    pub question: String,
    pub risk: RiskLevel,
    /// False when the type was not asked about (see `ContractReport::unprocessed`).
    pub processed: bool,
    pub clauses: Vec<ReportClause>,
}

/// An extraction whose text is not on the page it cites: never in the report's clauses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct ReportRejection {
    pub clause_id: String,
    /// The text as the model gave it (not found on the page).
    pub text: String,
    pub page: u32,
    pub window: u32,
    /// `quote_not_found` or `page_not_found`.
    pub reason: String,
    /// The clause types the model had filed it under.
    pub claimed_types: Vec<String>,
}

/// Where an item was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ReportEdge {
    /// Extraction → classification: a malformed clause or one outside its window.
    Extract,
    /// Classification → assembly: a clause id that extraction did not produce.
    Classify,
}

/// An item dropped at an edge, as received (shortened); never repaired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct EdgeDrop {
    pub edge: ReportEdge,
    /// The window (extraction) the item came from.
    pub window: Option<u32>,
    /// The clause type (classification) the item came from.
    pub item_id: Option<String>,
    pub reason: String,
    /// What was received, as JSON, at most 300 characters.
    pub received: String,
}

/// A window of pages and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct ReportWindow {
    pub index: u32,
    pub first_page: u32,
    pub last_page: u32,
    pub processed: bool,
    /// Clauses accepted at the edge (before verification).
    pub clauses: u32,
}

/// The bounds the run had and what it used of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct ReportBounds {
    pub calls_used: u32,
    pub call_limit: u32,
    /// Time spent in model-driven steps (a crash's downtime does not count).
    pub time_used_ms: u64,
    pub time_limit_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct ContractReport {
    pub document: DocumentId,
    pub contract_type: String,
    pub contract_type_name: String,
    pub page_count: u32,
    pub completeness: ReportCompleteness,
    /// In playbook order.
    pub clause_types: Vec<ReportClauseType>,
    /// Verified clauses no processed clause type claimed.
    pub unassigned: Vec<ReportClause>,
    pub rejected: Vec<ReportRejection>,
    pub dropped: Vec<EdgeDrop>,
    pub unprocessed: Vec<UnprocessedPart>,
    pub windows: Vec<ReportWindow>,
    pub bounds: ReportBounds,
}

impl ContractReport {
    /// Every clause shown in the report (filed or unassigned), once each.
    pub fn shown_clauses(&self) -> Vec<&ReportClause> {
        let mut seen = std::collections::BTreeSet::new();
        self.clause_types
            .iter()
            .flat_map(|t| t.clauses.iter())
            .chain(self.unassigned.iter())
            .filter(|c| seen.insert(c.clause_id.as_str()))
            .collect()
    }
}
