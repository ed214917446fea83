//! What the document pipeline produces for one contract: its classification, one finding per checklist item, the
//! extractions rejected by verification, the review gate's route, and the extracted fields (parties, dates, law,
//! value). Plain data, shared by the pipeline, the store, the API and the UI.

use serde::{Deserialize, Serialize};

/// An item's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    Present,
    Partial,
    Absent,
    /// No answer: the model skipped it, its section failed, or its quote could not be verified (see the reason).
    NotEvaluated,
}

impl ItemStatus {
    pub const ALL: [ItemStatus; 4] =
        [ItemStatus::Present, ItemStatus::Partial, ItemStatus::Absent, ItemStatus::NotEvaluated];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Present => "present",
            ItemStatus::Partial => "partial",
            ItemStatus::Absent => "absent",
            ItemStatus::NotEvaluated => "not_evaluated",
        }
    }

    pub fn parse(text: &str) -> Option<ItemStatus> {
        ItemStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Who produced a finding or a classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The model, through the gateway.
    Model,
    /// The offline, rule-based path (keyword classifier, signal-driven evaluator).
    Rules,
    /// A person confirmed or corrected it.
    Person,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Model => "model",
            Method::Rules => "rules",
            Method::Person => "person",
        }
    }
}

/// A supporting quote and the page (1-based) it claims to be on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct Quote {
    pub text: String,
    pub page: u32,
}

/// One checklist item's pre-filled answer. `quote` is set only after verification found it on its page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ItemFinding {
    pub item_id: String,
    pub status: ItemStatus,
    /// 0..=1. Rule-based findings are capped low so a person always looks.
    pub confidence: f32,
    pub quote: Option<Quote>,
    pub method: Method,
    /// Why the item has no answer, or what the rule matched; for the citation pane.
    pub reason: Option<String>,
    /// The item's red flags (from the catalog's list) that the evidence triggers.
    #[serde(default)]
    pub red_flags: Vec<String>,
}

/// A quote that failed verification: never shown as a quote, listed for the reviewer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RejectedExtraction {
    pub item_id: String,
    pub quote: String,
    pub page: u32,
    pub reason: String,
    pub method: Method,
}

/// The contract's type as decided by the classify stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Classification {
    pub type_id: String,
    pub confidence: f32,
    pub method: Method,
    /// Why this type (the model's reason or the rules that scored), and why a fallback ran if one did.
    pub reason: String,
}

/// A value extracted from the contract, with where it came from when known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct Extracted {
    pub value: String,
    pub quote: Option<Quote>,
    pub confidence: f32,
}

/// The contract record's fields, as extracted (before a person confirms them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct Extractions {
    pub parties: Vec<Extracted>,
    pub agreement_date: Option<Extracted>,
    pub effective_date: Option<Extracted>,
    pub expiration_date: Option<Extracted>,
    pub renewal: Option<Extracted>,
    /// The jurisdiction's name, e.g. "New York" or "England and Wales".
    pub governing_law: Option<Extracted>,
    pub value: Option<Extracted>,
    pub pricing: Option<Extracted>,
    pub scope: Option<Extracted>,
    pub key_terms: Vec<Extracted>,
}

/// Where the review gate sends a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Person,
    Auto,
}

/// Why the gate routed a document to a person, in the order the gate checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum GateReason {
    OcrFailed,
    OcrConfidenceLow,
    OcrConfidenceEstimated,
    ClassificationUnresolved,
    RedFlag,
    CriticalLowConfidence,
    TooManyNotEvaluated,
}

impl GateReason {
    /// The gate's order: the first that applies is recorded.
    pub const ORDER: [GateReason; 7] = [
        GateReason::OcrFailed,
        GateReason::OcrConfidenceLow,
        GateReason::OcrConfidenceEstimated,
        GateReason::ClassificationUnresolved,
        GateReason::RedFlag,
        GateReason::CriticalLowConfidence,
        GateReason::TooManyNotEvaluated,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GateReason::OcrFailed => "ocr_failed",
            GateReason::OcrConfidenceLow => "ocr_confidence_low",
            GateReason::OcrConfidenceEstimated => "ocr_confidence_estimated",
            GateReason::ClassificationUnresolved => "classification_unresolved",
            GateReason::RedFlag => "red_flag",
            GateReason::CriticalLowConfidence => "critical_low_confidence",
            GateReason::TooManyNotEvaluated => "too_many_not_evaluated",
        }
    }
}

/// The gate's decision, with a sentence for the person explaining it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct GateDecision {
    pub route: Route,
    pub reason: Option<GateReason>,
    pub detail: String,
}
