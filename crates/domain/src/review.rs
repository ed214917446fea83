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
    /// The value the quote states, normalised (a date, a period, an amount, a jurisdiction), for items that have
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

/// A value read from a contract, normalised so it can be compared, computed with and shown in people's terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
// The container name is not in the JSON; it names the TypeScript type, where `Value` is serde_json's already.
#[serde(tag = "kind", rename_all = "snake_case", rename = "NormalizedValue")]
pub enum Value {
    /// A calendar date, ISO 8601 (`YYYY-MM-DD`).
    Date { iso: String },
    /// A period of time: "thirty (30) days" is 30 days.
    Duration { number: u32, unit: DurationUnit },
    /// No end: "perpetual", "in perpetuity", "indefinitely".
    Perpetual,
    /// An amount of money: the amount as a decimal string (never a float) and the ISO 4217 currency.
    Money { amount: String, currency: String },
    /// A percentage as a decimal string: "5.5" for 5.5 %.
    Percentage { value: String },
    /// A jurisdiction's name: "New York", "England and Wales".
    Jurisdiction { name: String },
    /// A party: its name, the name the contract calls it by, and its role where the contract says it.
    Party { name: String, defined_as: Option<String>, role: Option<String> },
}

/// The unit of a [`Value::Duration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DurationUnit {
    Day,
    BusinessDay,
    Week,
    Month,
    Year,
}

impl DurationUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            DurationUnit::Day => "day",
            DurationUnit::BusinessDay => "business day",
            DurationUnit::Week => "week",
            DurationUnit::Month => "month",
            DurationUnit::Year => "year",
        }
    }
}

impl Value {
    /// The value in people's words: "18 March 2019", "30 days", "USD 1,000,000.00", "5.5 %".
    pub fn display(&self) -> String {
        match self {
            Value::Date { iso } => {
                let parts: Vec<&str> = iso.split('-').collect();
                let month =
                    parts.get(1).and_then(|m| m.parse::<usize>().ok()).and_then(|m| MONTH_NAMES.get(m.wrapping_sub(1)));
                match (parts.first(), month, parts.get(2).and_then(|d| d.parse::<u32>().ok())) {
                    (Some(y), Some(m), Some(d)) => format!("{d} {m} {y}"),
                    _ => iso.clone(),
                }
            }
            Value::Duration { number, unit } => {
                let unit = unit.as_str();
                if *number == 1 { format!("1 {unit}") } else { format!("{number} {unit}s") }
            }
            Value::Perpetual => "no end date (perpetual)".to_owned(),
            Value::Money { amount, currency } => format!("{currency} {}", group_thousands(amount)),
            Value::Percentage { value } => format!("{value} %"),
            Value::Jurisdiction { name } => name.clone(),
            Value::Party { name, defined_as, role } => {
                let mut out = name.clone();
                if let Some(d) = defined_as.as_ref().filter(|d| !d.eq_ignore_ascii_case(name)) {
                    out.push_str(&format!(" (\"{d}\")"));
                }
                if let Some(r) = role {
                    out.push_str(&format!(", {r}"));
                }
                out
            }
        }
    }
}

const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// "1234567.50" → "1,234,567.50".
fn group_thousands(amount: &str) -> String {
    let (whole, fraction) = match amount.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (amount, None),
    };
    let digits: Vec<char> = whole.chars().collect();
    let mut out = String::new();
    for (i, c) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) && c.is_ascii_digit() {
            out.push(',');
        }
        out.push(*c);
    }
    if let Some(f) = fraction {
        out.push('.');
        out.push_str(f);
    }
    out
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
    /// The value in people's words.
    pub value: String,
    /// The value normalised, where it has a form (a date, a period, an amount, a jurisdiction, a party).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalized: Option<Value>,
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
    /// The notice a party must give before the term renews to stop it renewing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renewal_notice: Option<Extracted>,
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

#[cfg(test)]
mod value_tests {
    use super::*;

    #[test]
    fn values_read_in_peoples_words() {
        assert_eq!(Value::Date { iso: "2019-03-18".into() }.display(), "18 March 2019");
        assert_eq!(Value::Duration { number: 30, unit: DurationUnit::Day }.display(), "30 days");
        assert_eq!(Value::Duration { number: 1, unit: DurationUnit::Year }.display(), "1 year");
        assert_eq!(Value::Money { amount: "1000000.00".into(), currency: "USD".into() }.display(), "USD 1,000,000.00");
        assert_eq!(Value::Money { amount: "500".into(), currency: "EUR".into() }.display(), "EUR 500");
        assert_eq!(Value::Percentage { value: "5.5".into() }.display(), "5.5 %");
        let party = Value::Party { name: "Zogenix, Inc.".into(), defined_as: Some("Zogenix".into()), role: None };
        assert_eq!(party.display(), "Zogenix, Inc. (\"Zogenix\")");
    }

    #[test]
    fn a_value_serialises_with_its_kind() {
        let json = serde_json::to_string(&Value::Duration { number: 30, unit: DurationUnit::BusinessDay }).unwrap();
        assert_eq!(json, r#"{"kind":"duration","number":30,"unit":"business_day"}"#);
    }
}
