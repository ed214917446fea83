//! What each stage does, given the outputs of the stages before it. No persistence here: the driver records
//! statuses and outputs. Every stage degrades rather than fails when it can: a model that is unavailable or answers
//! badly gives way to the rules, and the reason is recorded.

use crate::gate::{self, Evidence, Thresholds};
use crate::machine::{Stage, StageStatus};
use crate::model_path::{self, CallFigures, ModelClassification, SectionOutcome};
use crate::offline;
use crate::verify::verify_findings;
use pactwise_checklists::Catalog;
use pactwise_domain::{
    Classification, ContractType, Extracted, Extractions, GateDecision, ItemFinding, ItemStatus, Method, Page, Quote,
    RejectedExtraction, RiskLevel,
};
use pactwise_model::{CallContext, ModelClient};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How the pipeline may reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Use the model when it is available; rules otherwise.
    Model,
    /// Rules only (no network or no key, or asked for).
    Offline,
    /// The whole state machine with no model calls; says what would happen.
    DryRun,
}

/// A party's extraction must be at least this confident for finalize to create a vendor without a person.
pub const VENDOR_AUTO_CREATE_CONFIDENCE: f32 = 0.9;

/// Everything the stages need besides the document.
pub struct Runner {
    pub catalog: Arc<Catalog>,
    pub model: Option<Arc<ModelClient>>,
    pub ctx: CallContext,
    pub mode: Mode,
    pub thresholds: Thresholds,
    /// The organization's own names and aliases: never the counterparty.
    pub own_names: Vec<String>,
    pub concurrency: usize,
}

/// A person's confirmation or correction of one item, as the pipeline applies it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ItemCorrection {
    pub item_id: String,
    pub status: ItemStatus,
    pub quote: Option<Quote>,
    pub note: Option<String>,
}

/// Counts over a checklist, for the queue and the gate's detail.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ChecklistSummary {
    pub items: u32,
    pub present: u32,
    pub partial: u32,
    pub absent: u32,
    pub not_evaluated: u32,
    pub red_flags: u32,
    pub critical: u32,
    /// Critical items answered below the critical threshold or not evaluated.
    pub critical_unsure: u32,
    pub min_confidence: f32,
}

/// The checklist stage's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChecklistOutput {
    pub type_id: String,
    pub findings: Vec<ItemFinding>,
    pub rejected: Vec<RejectedExtraction>,
    pub extractions: Extractions,
    pub sections: Vec<SectionOutcome>,
    pub summary: ChecklistSummary,
}

/// The finalize stage's plan for the contract record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractPlan {
    pub type_id: String,
    pub counterparty: Option<Extracted>,
    pub extractions: Extractions,
    /// Create a vendor for the counterparty if none matches (only at high confidence).
    pub create_vendor: bool,
}

/// What finalize did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalizeOutput {
    pub counterparty: Option<String>,
    /// `linked`, `created`, `needs_review`, `none` (or `would_*` in a run that keeps nothing).
    pub vendor_match: String,
    pub vendor: Option<String>,
}

/// A stage's result before the driver records it.
pub struct StageResult {
    pub status: StageStatus,
    pub model: Option<String>,
    pub figures: CallFigures,
    pub outcome: String,
    pub reason: Option<String>,
    pub output: serde_json::Value,
}

impl StageResult {
    fn failed(reason: impl Into<String>) -> StageResult {
        StageResult {
            status: StageStatus::Failed,
            model: None,
            figures: CallFigures::default(),
            outcome: "failed".into(),
            reason: Some(reason.into()),
            output: serde_json::Value::Null,
        }
    }
}

fn to_json<T: Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

impl Runner {
    fn model(&self) -> Option<&Arc<ModelClient>> {
        match self.mode {
            Mode::Model => self.model.as_ref(),
            Mode::Offline | Mode::DryRun => None,
        }
    }

    pub async fn classify(&self, index: &offline::ContractIndex) -> StageResult {
        let keyword = |why: String| {
            let mut c = offline::classify(&self.catalog, index);
            c.reason = format!("{why}; {}", c.reason);
            c
        };
        let Some(model) = self.model() else {
            let why = match self.mode {
                Mode::DryRun => "dry run: no model calls",
                _ => "offline: the keyword classifier ran",
            };
            let c = keyword(why.into());
            return StageResult {
                status: StageStatus::Done,
                model: None,
                figures: CallFigures::default(),
                outcome: "keyword".into(),
                reason: Some(why.into()),
                output: to_json(&c),
            };
        };
        let ctx = CallContext { purpose: "classify".into(), ..self.ctx.clone() };
        let span = tracing::info_span!("stage", stage = "classify");
        let _enter = span.enter();
        match model_path::classify(model, &ctx, &self.catalog, index.pages()).await {
            ModelClassification::Valid(c, figures) => {
                tracing::info!(type_id = %c.type_id, confidence = c.confidence, calls = figures.calls, "classified");
                StageResult {
                    status: StageStatus::Done,
                    model: Some(pactwise_model::MODEL_ID.into()),
                    figures,
                    outcome: "model".into(),
                    reason: None,
                    output: to_json(&c),
                }
            }
            ModelClassification::Invalid { reason, figures } => {
                tracing::warn!(%reason, "model classification rejected; keyword classifier instead");
                let c = keyword(reason.clone());
                StageResult {
                    status: StageStatus::Degraded,
                    model: Some(pactwise_model::MODEL_ID.into()),
                    figures,
                    outcome: "keyword_fallback".into(),
                    reason: Some(reason),
                    output: to_json(&c),
                }
            }
            ModelClassification::Failed { error, figures } => {
                let reason = format!("model unavailable for classification: {} ({error})", error.code().as_str());
                tracing::warn!(%reason, "keyword classifier instead");
                let c = keyword(reason.clone());
                StageResult {
                    status: StageStatus::Degraded,
                    model: Some(pactwise_model::MODEL_ID.into()),
                    figures,
                    outcome: "keyword_fallback".into(),
                    reason: Some(reason),
                    output: to_json(&c),
                }
            }
        }
    }

    pub async fn checklist(&self, index: &offline::ContractIndex, classification: &Classification) -> StageResult {
        let Some(contract_type) = self.catalog.contract_type(&classification.type_id) else {
            return StageResult::failed(format!("type {:?} is not in the catalog", classification.type_id));
        };
        let pages = index.pages();
        if pages.iter().all(|p| p.text.trim().is_empty()) {
            // No text: nothing can be said about any item, so nothing is claimed.
            let findings: Vec<ItemFinding> = contract_type
                .items
                .iter()
                .map(|i| ItemFinding {
                    item_id: i.id.clone(),
                    value: None,
                    status: ItemStatus::NotEvaluated,
                    confidence: 0.0,
                    quote: None,
                    method: Method::Rules,
                    reason: Some("no_text: the document has no readable text".into()),
                    red_flags: Vec::new(),
                })
                .collect();
            let summary = summarize(contract_type, &findings, &self.thresholds);
            let output = ChecklistOutput {
                type_id: contract_type.id.clone(),
                findings,
                rejected: Vec::new(),
                extractions: Extractions::default(),
                sections: Vec::new(),
                summary,
            };
            return StageResult {
                status: StageStatus::Degraded,
                model: None,
                figures: CallFigures::default(),
                outcome: "no_text".into(),
                reason: Some("the document has no readable text; every item is left for a person".into()),
                output: to_json(&output),
            };
        }
        let mut status = StageStatus::Done;
        let mut reason = None;
        let mut outcome = "rules".to_owned();
        let mut figures = CallFigures::default();
        let mut sections = Vec::new();
        let mut model_id = None;
        let mut findings = match self.model() {
            Some(model) => {
                let ctx = CallContext { purpose: "checklist_section".into(), ..self.ctx.clone() };
                let result = model_path::checklist(model.clone(), &ctx, contract_type, pages, self.concurrency).await;
                figures = result.figures;
                model_id = Some(pactwise_model::MODEL_ID.to_owned());
                let failed: Vec<&SectionOutcome> = result.sections.iter().filter(|s| !s.ok).collect();
                if !failed.is_empty() && failed.len() == result.sections.len() {
                    // Nothing came back: the rules answer every item instead.
                    status = StageStatus::Degraded;
                    outcome = "rules_fallback".into();
                    reason = Some(format!(
                        "every checklist section failed ({}); the rule-based evaluator answered instead",
                        failed[0].reason.as_deref().unwrap_or("unknown")
                    ));
                    sections = result.sections;
                    offline::evaluate(&self.catalog, contract_type, index)
                } else {
                    outcome = "model".into();
                    if !failed.is_empty() {
                        status = StageStatus::Degraded;
                        reason = Some(format!(
                            "{} of {} section calls failed; their items are not evaluated",
                            failed.len(),
                            result.sections.len()
                        ));
                    }
                    sections = result.sections;
                    result.findings
                }
            }
            None => offline::evaluate(&self.catalog, contract_type, index),
        };
        let rejected = verify_findings(pages, &mut findings);
        crate::values::attach(&self.catalog, &mut findings);
        let extractions = verified_extractions(pages, offline::extract_fields(index));
        let summary = summarize(contract_type, &findings, &self.thresholds);
        let output =
            ChecklistOutput { type_id: contract_type.id.clone(), findings, rejected, extractions, sections, summary };
        StageResult { status, model: model_id, figures, outcome, reason, output: to_json(&output) }
    }

    pub fn gate(
        &self,
        pages: &[Page],
        ocr_failed: bool,
        classification: &Classification,
        checklist: &ChecklistOutput,
        corrections: &[ItemCorrection],
    ) -> StageResult {
        let Some(contract_type) = self.catalog.contract_type(&checklist.type_id) else {
            return StageResult::failed(format!("type {:?} is not in the catalog", checklist.type_id));
        };
        let findings = apply_corrections(&checklist.findings, corrections);
        let evidence = Evidence { pages, ocr_failed, classification, contract_type, findings: &findings };
        let decision: GateDecision = gate::decide(&evidence, &self.thresholds);
        let mut output = to_json(&decision);
        output["summary"] = to_json(&summarize(contract_type, &findings, &self.thresholds));
        StageResult {
            status: StageStatus::Done,
            model: None,
            figures: CallFigures::default(),
            outcome: decision.reason.map_or("auto", |r| r.as_str()).to_owned(),
            reason: Some(decision.detail.clone()),
            output,
        }
    }

    /// The contract record to write: extractions, the counterparty (the parties minus the organization's own names)
    /// and whether a vendor may be created without a person.
    pub fn finalize_plan(&self, checklist: &ChecklistOutput) -> ContractPlan {
        let counterparty = counterparty(&checklist.extractions.parties, &self.own_names);
        let create_vendor = counterparty.as_ref().is_some_and(|c| c.confidence >= VENDOR_AUTO_CREATE_CONFIDENCE);
        ContractPlan {
            type_id: checklist.type_id.clone(),
            counterparty,
            extractions: checklist.extractions.clone(),
            create_vendor,
        }
    }
}

/// Extractions keep their quote only if it is on its page; an unverified quote is dropped (the value stays, marked
/// by its low confidence, for a person to confirm).
fn verified_extractions(pages: &[Page], mut e: Extractions) -> Extractions {
    let check = |x: &mut Extracted| {
        if let Some(q) = x.quote.take() {
            x.quote = crate::verify::verify_quote(pages, &q);
            if x.quote.is_none() {
                x.confidence = x.confidence.min(0.2);
            }
        }
    };
    e.parties.iter_mut().for_each(check);
    e.key_terms.iter_mut().for_each(check);
    for x in [
        &mut e.agreement_date,
        &mut e.effective_date,
        &mut e.expiration_date,
        &mut e.renewal,
        &mut e.renewal_notice,
        &mut e.governing_law,
        &mut e.value,
        &mut e.pricing,
        &mut e.scope,
    ]
    .into_iter()
    .flatten()
    {
        check(x);
    }
    e
}

fn name_key(name: &str) -> String {
    const SUFFIXES: [&str; 12] =
        ["inc", "incorporated", "llc", "ltd", "limited", "corp", "corporation", "co", "plc", "gmbh", "lp", "company"];
    let lowered = name.to_lowercase();
    let words: Vec<&str> = lowered
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .filter(|w| !SUFFIXES.contains(w) && *w != "the")
        .collect();
    words.join(" ")
}

/// The first party that is not one of the organization's own names or aliases.
pub fn counterparty(parties: &[Extracted], own_names: &[String]) -> Option<Extracted> {
    let own: Vec<String> = own_names.iter().map(|n| name_key(n)).filter(|k| !k.is_empty()).collect();
    parties
        .iter()
        .find(|p| {
            let key = name_key(&p.value);
            !key.is_empty() && !own.iter().any(|o| *o == key || key.starts_with(&format!("{o} ")))
        })
        .cloned()
}

/// The findings with people's corrections applied: the latest correction per item wins over any pipeline output.
pub fn apply_corrections(findings: &[ItemFinding], corrections: &[ItemCorrection]) -> Vec<ItemFinding> {
    let mut out = findings.to_vec();
    for c in corrections {
        if let Some(f) = out.iter_mut().find(|f| f.item_id == c.item_id) {
            f.status = c.status;
            f.confidence = 1.0;
            f.quote = c.quote.clone();
            f.method = Method::Person;
            f.reason = c.note.clone();
            f.red_flags = Vec::new();
        }
    }
    out
}

pub fn summarize(contract_type: &ContractType, findings: &[ItemFinding], t: &Thresholds) -> ChecklistSummary {
    let critical = |id: &str| contract_type.items.iter().any(|i| i.id == id && i.risk == RiskLevel::Critical);
    let mut s = ChecklistSummary { items: findings.len() as u32, min_confidence: 1.0, ..Default::default() };
    for f in findings {
        match f.status {
            ItemStatus::Present => s.present += 1,
            ItemStatus::Partial => s.partial += 1,
            ItemStatus::Absent => s.absent += 1,
            ItemStatus::NotEvaluated => s.not_evaluated += 1,
        }
        s.red_flags += u32::from(!f.red_flags.is_empty());
        if critical(&f.item_id) {
            s.critical += 1;
            if f.status == ItemStatus::NotEvaluated || f.confidence < t.critical_min_confidence {
                s.critical_unsure += 1;
            }
        }
        if f.status != ItemStatus::NotEvaluated {
            s.min_confidence = s.min_confidence.min(f.confidence);
        }
    }
    s
}

/// How many model calls a model-mode run would make on these pages (the dry run says so).
pub fn planned_model_calls(contract_type: &ContractType, pages: &[Page]) -> u32 {
    let sections =
        contract_type.sections.iter().filter(|s| contract_type.items.iter().any(|i| i.section == s.id)).count();
    1 + (sections * model_path::windows(pages).len()) as u32
}

/// Parses a stage's stored output.
pub fn parse_output<T: for<'de> Deserialize<'de>>(
    stage: Stage,
    output: Option<&serde_json::Value>,
) -> Result<T, String> {
    let value = output.ok_or_else(|| format!("the {} stage has no stored output", stage.as_str()))?;
    serde_json::from_value(value.clone())
        .map_err(|e| format!("the {} stage's stored output is unreadable: {e}", stage.as_str()))
}
