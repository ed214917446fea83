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
    /// The whole state machine with no model calls, saying what a model run would do: the rules stand in for the
    /// model's answers, and the gate does not hold the stand-in type against the document (a real run asks the
    /// model for it). Without a model a real run is an offline one, so a dry run then runs `Offline`.
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
    /// The local embedding model, for the offline pre-fill's learned classifier (`None`: the rules alone answer).
    pub embedder: Option<Arc<pactwise_embed::LazyEmbedder>>,
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

/// The extract stage's output: how the document's pages were read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractOutput {
    pub pages: u32,
    /// Pages read by OCR (no text layer).
    pub ocr_pages: u32,
    /// OCR pages on which no text was found.
    pub empty_ocr_pages: u32,
    /// Why the file's pages could not be read, when they could not.
    pub failure: Option<String>,
}

impl ExtractOutput {
    /// No page could be read, or text recognition failed: what the gate calls `ocr_failed`.
    pub fn failed(&self) -> bool {
        self.failure.is_some() || self.pages == 0
    }
}

/// The extract stage's result from the pages read (or why none could be): done when every page has text; degraded
/// when none could be read (the review goes on without text and the gate sends it to a person) or OCR found nothing
/// on some page.
pub fn extract_result(pages: &[Page], failure: Option<&str>) -> StageResult {
    use pactwise_domain::PageSource;
    let ocr = pages.iter().filter(|p| p.source == PageSource::Ocr);
    let output = ExtractOutput {
        pages: pages.len() as u32,
        ocr_pages: ocr.clone().count() as u32,
        empty_ocr_pages: ocr.filter(|p| p.text.trim().is_empty()).count() as u32,
        failure: failure.map(str::to_owned),
    };
    let (status, outcome, reason) = if let Some(why) = failure {
        (StageStatus::Degraded, "unreadable", Some(format!("the pages could not be read: {why}")))
    } else if output.pages == 0 {
        (StageStatus::Degraded, "unreadable", Some("no page was read from the file".to_owned()))
    } else if output.empty_ocr_pages > 0 {
        let n = output.empty_ocr_pages;
        (StageStatus::Degraded, "ocr", Some(format!("text recognition found no text on {n} page(s)")))
    } else if output.ocr_pages > 0 {
        (StageStatus::Done, "ocr", None)
    } else {
        (StageStatus::Done, "text", None)
    };
    StageResult {
        status,
        model: None,
        figures: CallFigures::default(),
        outcome: outcome.into(),
        reason,
        output: to_json(&output),
    }
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
        let outcome: String;
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
                    let (findings, note) = self.offline_findings(contract_type, index).await;
                    if let (Some(r), Some(note)) = (reason.as_mut(), note) {
                        r.push_str(&format!("; {note}"));
                    }
                    findings
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
            None => {
                let (findings, note) = self.offline_findings(contract_type, index).await;
                outcome = if note.is_none() { "rules_and_classifier".into() } else { "rules".into() };
                reason = note;
                findings
            }
        };
        let rejected = check_findings(&self.catalog, pages, index, &mut findings);
        let extractions = verified_extractions(pages, offline::extract_fields(index));
        let summary = summarize(contract_type, &findings, &self.thresholds);
        let output =
            ChecklistOutput { type_id: contract_type.id.clone(), findings, rejected, extractions, sections, summary };
        StageResult { status, model: model_id, figures, outcome, reason, output: to_json(&output) }
    }

    /// The offline pre-fill: the rules with the learned classifier over the sentences' embeddings, or the rules alone
    /// with the reason (no embedding model given or installed, weights for another model, embedding failed).
    /// Embedding runs on a blocking thread.
    async fn offline_findings(
        &self,
        contract_type: &ContractType,
        index: &offline::ContractIndex,
    ) -> (Vec<ItemFinding>, Option<String>) {
        use offline::learned::{LearnedError, PrefillClassifier};
        let rules_only = |why: String| {
            tracing::info!(reason = %why, "offline pre-fill by the rules alone");
            (offline::evaluate(&self.catalog, contract_type, index), Some(why))
        };
        let Some(lazy) = self.embedder.clone() else {
            return rules_only("no embedding model was given; the rules alone answered".into());
        };
        let classifier = match PrefillClassifier::shipped() {
            Ok(c) => c,
            Err(e) => return rules_only(e.to_string()),
        };
        let span = tracing::info_span!("stage", stage = "checklist.embed");
        let texts = offline::learned::sentence_texts(index);
        let trained_on = classifier.file().embedding_model_id.clone();
        let embedded = tokio::task::spawn_blocking(move || {
            let _enter = span.enter();
            let embedder = lazy.get().map_err(LearnedError::NoEmbedder)?;
            if embedder.model_id() != trained_on {
                return Err(LearnedError::ModelMismatch { trained: trained_on, installed: embedder.model_id().into() });
            }
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = embedder.embed(&refs).map_err(|e| LearnedError::Embedding(e.to_string()))?;
            Ok((embedder.model_id().to_owned(), vectors))
        })
        .await
        .unwrap_or_else(|e| Err(LearnedError::Embedding(e.to_string())));
        match embedded.and_then(|(model_id, vectors)| classifier.score(index, &model_id, &vectors)) {
            Ok(scores) => (offline::evaluate_with(&self.catalog, contract_type, index, Some(&scores)), None),
            Err(e) => rules_only(e.to_string()),
        }
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
        // A dry run stands in for the model's type with the keyword classifier's; a real run would ask the model.
        let classification_stand_in = self.mode == Mode::DryRun;
        let evidence =
            Evidence { pages, ocr_failed, classification, classification_stand_in, contract_type, findings: &findings };
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
    /// The fields are those a person confirmed or corrected where they did ([`contract_fields`]).
    pub fn finalize_plan(&self, checklist: &ChecklistOutput, corrections: &[ItemCorrection]) -> ContractPlan {
        let mut findings = apply_corrections(&checklist.findings, corrections);
        crate::values::attach(&self.catalog, &mut findings);
        let extractions = contract_fields(&self.catalog, &checklist.extractions, &findings);
        let counterparty = counterparty(&extractions.parties, &self.own_names);
        let create_vendor = counterparty.as_ref().is_some_and(|c| c.confidence >= VENDOR_AUTO_CREATE_CONFIDENCE);
        ContractPlan { type_id: checklist.type_id.clone(), counterparty, extractions, create_vendor }
    }
}

/// What every answer goes through before anyone sees it, whoever made it (the model, the rules, the evaluation): its
/// quote must be on its page (`verify`) and be the clause, not a running line, the table of contents, a heading or a
/// cross-reference (`evidence`); then its value is read from the quote. Returns the quotes refused, with why.
pub fn check_findings(
    catalog: &Catalog,
    pages: &[Page],
    index: &offline::ContractIndex,
    findings: &mut [ItemFinding],
) -> Vec<RejectedExtraction> {
    let mut rejected = verify_findings(pages, findings);
    rejected.extend(crate::evidence::refuse_non_clauses(catalog, index.structure(), pages, findings));
    crate::values::attach(catalog, findings);
    rejected
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

/// The contract's fields as the review left them: the extracted fields, where an item a person confirmed or
/// corrected carries a value its field takes that value with the person's quote, and where the extraction found
/// nothing an item's value fills the gap at the item's confidence. An expiration stated as a period from the
/// effective date becomes that date. One home for "what the contract says", used by finalize, the review view and
/// the memo.
pub fn contract_fields(catalog: &Catalog, extracted: &Extractions, findings: &[ItemFinding]) -> Extractions {
    use pactwise_domain::{CuadCategory, Value};
    let mut out = extracted.clone();
    // A person's answer is applied after the rules' and the model's, so it wins.
    let mut ordered: Vec<&ItemFinding> = findings.iter().collect();
    ordered.sort_by_key(|f| f.method == Method::Person);
    for f in ordered {
        let (Some(value), Some(category)) = (&f.value, catalog.item(&f.item_id).and_then(|i| i.cuad_category)) else {
            continue;
        };
        if !matches!(f.status, ItemStatus::Present | ItemStatus::Partial) {
            continue;
        }
        let by_person = f.method == Method::Person;
        let mut value = value.clone();
        let mut words = value.display();
        let effective = out.effective_date.as_ref().and_then(|e| e.normalized.clone());
        if category == CuadCategory::ExpirationDate
            && let Value::Duration { number, unit } = value
            && let Some(Value::Date { iso }) = effective
            && let Some(end) = chrono::NaiveDate::parse_from_str(&iso, "%Y-%m-%d")
                .ok()
                .and_then(|from| crate::values::add_period(from, number, unit))
        {
            let period = value.display();
            value = Value::Date { iso: end.format("%Y-%m-%d").to_string() };
            words = format!("{} ({period} from the effective date)", value.display());
        }
        let field = match category {
            CuadCategory::AgreementDate => &mut out.agreement_date,
            CuadCategory::EffectiveDate => &mut out.effective_date,
            CuadCategory::ExpirationDate => &mut out.expiration_date,
            CuadCategory::RenewalTerm => &mut out.renewal,
            CuadCategory::NoticePeriodToTerminateRenewal => &mut out.renewal_notice,
            CuadCategory::GoverningLaw => &mut out.governing_law,
            _ => continue,
        };
        if field.is_some() && !by_person {
            continue;
        }
        *field =
            Some(Extracted { value: words, normalized: Some(value), quote: f.quote.clone(), confidence: f.confidence });
    }
    out
}

/// The findings with people's corrections applied: the latest correction per item wins over any pipeline output.
/// A confirmation keeps the finding's value; a correction's value is read again from its quote
/// ([`crate::values::attach`]).
pub fn apply_corrections(findings: &[ItemFinding], corrections: &[ItemCorrection]) -> Vec<ItemFinding> {
    let mut out = findings.to_vec();
    for c in corrections {
        if let Some(f) = out.iter_mut().find(|f| f.item_id == c.item_id) {
            if f.quote != c.quote || !matches!(c.status, ItemStatus::Present | ItemStatus::Partial) {
                f.value = None;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use pactwise_domain::{DurationUnit, Value};

    fn finding(item: &str, quote: &str, method: Method, value: Option<Value>) -> ItemFinding {
        ItemFinding {
            item_id: item.into(),
            status: ItemStatus::Present,
            confidence: 0.4,
            quote: Some(Quote { text: quote.into(), page: 3 }),
            method,
            reason: None,
            red_flags: Vec::new(),
            value,
        }
    }

    fn date(iso: &str) -> Option<Extracted> {
        let value = Value::Date { iso: iso.into() };
        Some(Extracted { value: value.display(), normalized: Some(value), quote: None, confidence: 0.3 })
    }

    #[test]
    fn a_confirmed_item_value_becomes_the_contract_field_and_a_period_becomes_a_date() {
        let catalog = Catalog::load().unwrap();
        let extracted = Extractions { effective_date: date("2019-03-18"), ..Default::default() };
        let rules = finding(
            "distributor.term.expiration",
            "for an initial term of five (5) years",
            Method::Rules,
            Some(Value::Duration { number: 5, unit: DurationUnit::Year }),
        );
        // The rules' value fills the gap the extraction left.
        let fields = contract_fields(&catalog, &extracted, std::slice::from_ref(&rules));
        let expiry = fields.expiration_date.expect("the item's value fills the field");
        assert_eq!(expiry.normalized, Some(Value::Date { iso: "2024-03-18".into() }));
        assert_eq!(expiry.value, "18 March 2024 (5 years from the effective date)");
        assert_eq!(expiry.confidence, 0.4);

        // A person's confirmation wins over an extraction that found something else.
        let extracted = Extractions { expiration_date: date("2030-01-01"), ..extracted };
        let confirmed = apply_corrections(
            std::slice::from_ref(&rules),
            &[ItemCorrection {
                item_id: rules.item_id.clone(),
                status: ItemStatus::Present,
                quote: rules.quote.clone(),
                note: None,
            }],
        );
        assert_eq!(confirmed[0].value, rules.value, "a confirmation keeps the value");
        let fields = contract_fields(&catalog, &extracted, &confirmed);
        let expiry = fields.expiration_date.unwrap();
        assert_eq!(expiry.normalized, Some(Value::Date { iso: "2024-03-18".into() }));
        assert_eq!(expiry.confidence, 1.0);
        assert_eq!(expiry.quote, rules.quote);
    }

    #[test]
    fn a_correction_reads_its_value_again_from_the_new_quote() {
        let catalog = Catalog::load().unwrap();
        let rules = finding(
            "distributor.term.renewal_notice",
            "at least thirty (30) days before",
            Method::Rules,
            Some(Value::Duration { number: 30, unit: DurationUnit::Day }),
        );
        let mut corrected = apply_corrections(
            &[rules],
            &[ItemCorrection {
                item_id: "distributor.term.renewal_notice".into(),
                status: ItemStatus::Present,
                quote: Some(Quote {
                    text: "no later than ninety (90) days before the end of the term".into(),
                    page: 9,
                }),
                note: None,
            }],
        );
        assert_eq!(corrected[0].value, None, "the old quote's value is not the new quote's");
        crate::values::attach(&catalog, &mut corrected);
        assert_eq!(corrected[0].value, Some(Value::Duration { number: 90, unit: DurationUnit::Day }));
        let fields = contract_fields(&catalog, &Extractions::default(), &corrected);
        assert_eq!(fields.renewal_notice.unwrap().value, "90 days");
    }

    #[test]
    fn an_item_corrected_to_absent_gives_no_value() {
        let catalog = Catalog::load().unwrap();
        let rules = finding(
            "distributor.general.governing_law",
            "governed by the laws of the State of New York",
            Method::Rules,
            Some(Value::Jurisdiction { name: "New York".into() }),
        );
        let corrected = apply_corrections(
            &[rules],
            &[ItemCorrection {
                item_id: "distributor.general.governing_law".into(),
                status: ItemStatus::Absent,
                quote: None,
                note: Some("that is the arbitration seat".into()),
            }],
        );
        assert_eq!(corrected[0].value, None);
        assert_eq!(contract_fields(&catalog, &Extractions::default(), &corrected).governing_law, None);
    }
}
