//! `eval cuad`: scores the offline path on a labelled CUAD folder (`contracts/*.txt` and `labels.jsonl`), in process,
//! with the definitions of the pipeline issue (the same as the scorer script that runs `pactwise review --offline`):
//! type accuracy, presence per CUAD category with precision, recall and F1, presence macro-F1, quote precision,
//! invented quotes, governing-law accuracy and parties recall, plus the time taken (the speed benchmark); and the
//! values table: the extracted values against CUAD's normalised answers (see [`crate::cuad_answers`]).

use crate::cuad_answers;
use crate::offline::learned::Learned;
use crate::offline::{self, ContractIndex};
use pactwise_checklists::Catalog;
use pactwise_domain::{
    Classification, CuadCategory, Extractions, ItemFinding, ItemStatus, Page, RejectedExtraction, Value,
};
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Categories that name the document rather than a clause; left out of the macro-F1.
pub const META_CATEGORIES: [&str; 4] = ["Document Name", "Parties", "Agreement Date", "Effective Date"];

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("cannot read {path}: {detail}; give a CUAD folder holding labels.jsonl and contracts/*.txt")]
    Unreadable { path: PathBuf, detail: String },
    #[error("{path} line {line} is not a CUAD label record: {detail}")]
    BadLabels { path: PathBuf, line: usize, detail: String },
    #[error("{path} holds no label records")]
    NoLabels { path: PathBuf },
}

/// One labelled span of a CUAD category (character offsets into the contract text).
#[derive(Debug, Clone, Deserialize)]
pub struct LabelSpan {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// One line of `labels.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct LabelRecord {
    pub contract: String,
    #[serde(rename = "type")]
    pub contract_type: String,
    pub clauses: BTreeMap<String, Vec<LabelSpan>>,
    #[serde(default)]
    pub answers: BTreeMap<String, serde_json::Value>,
}

/// Precision, recall and F1 of one category's presence over the contracts.
#[derive(Debug, Clone, Serialize)]
pub struct CategoryScore {
    pub category: String,
    pub tp: usize,
    pub fp: usize,
    #[serde(rename = "fn")]
    pub false_negatives: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Counted in the macro-F1: not a meta category and at least one contract holds it.
    pub in_macro: bool,
}

/// One row of the values table: a field against CUAD's normalised answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ValueScore {
    /// The CUAD answer column.
    pub field: String,
    /// Contracts whose answer names a comparable value (a whole date, a period, a jurisdiction, a party name).
    pub labelled: usize,
    /// Of those, the contracts the review gives a value for.
    pub predicted: usize,
    /// Of those, the contracts whose value is the answer's (for parties: every labelled party found).
    pub correct: usize,
    /// `correct / labelled`; for parties the recall of names, `names_found / names_labelled`.
    pub accuracy: f64,
    /// Answers naming no comparable value ("[]/[]/2020"), left out.
    pub not_comparable: usize,
    /// Parties only: labelled party names, and those found (by name or defined name).
    pub names_labelled: usize,
    pub names_found: usize,
}

/// The fields of the values table, in the order printed.
pub const VALUE_FIELDS: [&str; 7] = [
    "Agreement Date",
    "Effective Date",
    "Expiration Date",
    "Renewal Term",
    "Notice Period To Terminate Renewal",
    "Governing Law",
    "Parties",
];

/// A contract whose type was not the labelled one.
#[derive(Debug, Clone, Serialize)]
pub struct Misclassified {
    pub contract: String,
    pub expected: String,
    pub predicted: String,
}

/// The figures of one run.
#[derive(Debug, Clone, Serialize)]
pub struct CuadReport {
    pub contracts: usize,
    pub errors: usize,
    pub type_accuracy: f64,
    pub presence_macro_f1: f64,
    pub categories: Vec<CategoryScore>,
    /// Of all verified quotes, the share that overlap a labelled span of their item's category (the scorer's ratio).
    pub quote_precision: f64,
    pub quotes: usize,
    pub quotes_on_labelled_span: usize,
    /// Quotes of items called present or partial that test a category (what a lawyer sees as evidence), and of those
    /// the share that overlap a labelled span of the item's category.
    pub evidence_quotes: usize,
    pub evidence_quotes_on_labelled_span: usize,
    pub evidence_quote_precision: f64,
    /// Of (contract, category) pairs with a labelled span, how many the review calls absent (every item of the
    /// category absent), and that share.
    pub labelled_pairs: usize,
    pub labelled_called_absent: usize,
    pub missed_present_rate: f64,
    /// Verified quotes not found in the document text. Must be 0.
    pub invented_quotes: usize,
    /// Quotes verification refused (each turned its item into not_evaluated).
    pub rejected_quotes: usize,
    pub governing_law_accuracy: f64,
    pub governing_law_correct: usize,
    pub governing_law_labelled: usize,
    pub parties_recall: f64,
    pub parties_found: usize,
    pub parties_labelled: usize,
    /// The values table, one row per [`VALUE_FIELDS`].
    pub values: Vec<ValueScore>,
    /// Items missing from a review, or a type with no items: must be 0.
    pub missing_items: usize,
    pub total_seconds: f64,
    pub median_ms_per_contract: f64,
    pub misclassified: Vec<Misclassified>,
    /// Contracts on which the learned classifier was asked for but could not run (the rules alone answered).
    pub learned_unused: usize,
}

/// What the offline review produced for one contract (what `pactwise review --offline` prints, in process).
pub struct OfflineReview {
    pub pages: Vec<Page>,
    pub classification: Classification,
    pub findings: Vec<ItemFinding>,
    pub rejected: Vec<RejectedExtraction>,
    pub extractions: Extractions,
    /// Why the learned classifier was asked for but did not run (the rules alone answered).
    pub learned_note: Option<String>,
}

/// Runs the offline review on pages by the rules alone: index, classify, evaluate, verify the quotes, extract the
/// fields.
pub fn review_pages(catalog: &Catalog, pages: Vec<Page>) -> OfflineReview {
    review_pages_with(catalog, pages, None)
}

/// Runs the offline review on pages, with the learned classifier when given (the rules alone when it cannot run,
/// saying why in [`OfflineReview::learned_note`]).
pub fn review_pages_with(catalog: &Catalog, pages: Vec<Page>, learned: Option<&Learned<'_>>) -> OfflineReview {
    let index = ContractIndex::build(&pages);
    let classification = offline::classify(catalog, &index);
    let (scores, learned_note) = match learned.map(|l| l.classifier.score_with(&index, l.vectors)) {
        None => (None, None),
        Some(Ok(scores)) => (Some(scores), None),
        Some(Err(e)) => (None, Some(e.to_string())),
    };
    let mut findings = match catalog.contract_type(&classification.type_id) {
        Some(t) => offline::evaluate_with(catalog, t, &index, scores.as_ref()),
        None => Vec::new(),
    };
    let rejected = crate::stages::check_findings(catalog, &pages, &index, &mut findings);
    let extractions = offline::extract_fields(&index);
    OfflineReview { pages, classification, findings, rejected, extractions, learned_note }
}

/// The CUAD categories a review calls present: those with an item called present or partial.
pub fn predicted_categories(catalog: &Catalog, findings: &[ItemFinding]) -> BTreeSet<String> {
    findings
        .iter()
        .filter(|f| matches!(f.status, ItemStatus::Present | ItemStatus::Partial))
        .filter_map(|f| catalog.item(&f.item_id).and_then(|i| i.cuad_category))
        .map(|c| c.as_str().to_owned())
        .collect()
}

/// Reads the label records of a CUAD folder.
pub fn read_labels(dir: &Path) -> Result<Vec<LabelRecord>, EvalError> {
    let path = dir.join("labels.jsonl");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| EvalError::Unreadable { path: path.clone(), detail: e.to_string() })?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let record = serde_json::from_str::<LabelRecord>(line).map_err(|e| EvalError::BadLabels {
            path: path.clone(),
            line: i + 1,
            detail: e.to_string(),
        })?;
        records.push(record);
    }
    if records.is_empty() {
        return Err(EvalError::NoLabels { path });
    }
    Ok(records)
}

/// Scores the offline path on the first `limit` contracts of a CUAD folder (all when `None`).
pub fn cuad(catalog: &Catalog, dir: &Path, limit: Option<usize>) -> Result<CuadReport, EvalError> {
    let records = read_labels(dir)?;
    let take = limit.unwrap_or(records.len()).min(records.len());
    Ok(score(catalog, dir, &records[..take], &mut |_, _| {}))
}

/// Scores the offline path with the learned classifier on the first `limit` contracts of a CUAD folder.
pub fn cuad_learned(
    catalog: &Catalog,
    dir: &Path,
    limit: Option<usize>,
    learned: &Learned<'_>,
) -> Result<CuadReport, EvalError> {
    let records = read_labels(dir)?;
    let take = limit.unwrap_or(records.len()).min(records.len());
    Ok(score_with(catalog, dir, &records[..take], Some(learned), &mut |_, _| {}))
}

/// What one contract's review predicted, for inspecting a run.
pub struct ContractOutcome<'a> {
    pub record: &'a LabelRecord,
    pub review: Option<&'a OfflineReview>,
    /// Categories predicted present.
    pub predicted: &'a BTreeSet<String>,
}

/// Scores `records` by the rules alone, calling `inspect` with each contract's outcome (for tools that print details).
pub fn score(
    catalog: &Catalog,
    dir: &Path,
    records: &[LabelRecord],
    inspect: &mut dyn FnMut(&ContractOutcome<'_>, &str),
) -> CuadReport {
    score_with(catalog, dir, records, None, inspect)
}

/// Scores `records`, with the learned classifier when given.
pub fn score_with(
    catalog: &Catalog,
    dir: &Path,
    records: &[LabelRecord],
    learned: Option<&Learned<'_>>,
    inspect: &mut dyn FnMut(&ContractOutcome<'_>, &str),
) -> CuadReport {
    let _span = tracing::info_span!("eval.cuad", contracts = records.len(), learned = learned.is_some()).entered();
    let item_categories: HashMap<&str, Option<CuadCategory>> =
        catalog.items().map(|i| (i.id.as_str(), i.cuad_category)).collect();
    let categories: Vec<String> = records.first().map(|r| r.clauses.keys().cloned().collect()).unwrap_or_default();
    let mut counts: BTreeMap<String, (usize, usize, usize)> =
        categories.iter().map(|c| (c.clone(), (0, 0, 0))).collect();
    let mut report = CuadReport {
        contracts: records.len(),
        errors: 0,
        type_accuracy: 0.0,
        presence_macro_f1: 0.0,
        categories: Vec::new(),
        quote_precision: 0.0,
        quotes: 0,
        quotes_on_labelled_span: 0,
        evidence_quotes: 0,
        evidence_quotes_on_labelled_span: 0,
        evidence_quote_precision: 0.0,
        labelled_pairs: 0,
        labelled_called_absent: 0,
        missed_present_rate: 0.0,
        invented_quotes: 0,
        rejected_quotes: 0,
        governing_law_accuracy: 0.0,
        governing_law_correct: 0,
        governing_law_labelled: 0,
        parties_recall: 0.0,
        parties_found: 0,
        parties_labelled: 0,
        values: VALUE_FIELDS
            .iter()
            .map(|f| ValueScore {
                field: (*f).to_owned(),
                labelled: 0,
                predicted: 0,
                correct: 0,
                accuracy: 0.0,
                not_comparable: 0,
                names_labelled: 0,
                names_found: 0,
            })
            .collect(),
        missing_items: 0,
        total_seconds: 0.0,
        median_ms_per_contract: 0.0,
        misclassified: Vec::new(),
        learned_unused: 0,
    };
    let mut type_ok = 0usize;
    let mut per_contract_ms = Vec::with_capacity(records.len());
    let started = Instant::now();
    let reviewed = review_all(catalog, dir, records, learned);
    for (record, outcome) in records.iter().zip(reviewed) {
        let Some((text, review, ms)) = outcome else {
            report.errors += 1;
            continue;
        };
        per_contract_ms.push(ms);
        report.learned_unused += usize::from(review.learned_note.is_some());

        let predicted_type = catalog.contract_type(&review.classification.type_id);
        if predicted_type.and_then(|t| t.cuad_type).is_some_and(|c| c.as_str() == record.contract_type) {
            type_ok += 1;
        } else {
            report.misclassified.push(Misclassified {
                contract: record.contract.clone(),
                expected: record.contract_type.clone(),
                predicted: review.classification.type_id.clone(),
            });
        }
        let item_count = predicted_type.map_or(0, |t| t.items.len());
        if item_count == 0 || review.findings.len() != item_count {
            report.missing_items += item_count.max(1).abs_diff(review.findings.len());
        }

        let predicted = predicted_categories(catalog, &review.findings);
        // Per category, the statuses its items were given.
        let mut statuses: HashMap<&str, HashSet<ItemStatus>> = HashMap::new();
        let normalized_text = scorer_norm(&text);
        let normalized_contract = crate::verify::Normalized::new(&text);
        for finding in &review.findings {
            let category = item_categories.get(finding.item_id.as_str()).copied().flatten();
            let positive = matches!(finding.status, ItemStatus::Present | ItemStatus::Partial);
            if let Some(c) = category {
                statuses.entry(c.as_str()).or_default().insert(finding.status);
            }
            let Some(quote) = &finding.quote else { continue };
            report.quotes += 1;
            if !normalized_text.contains(&scorer_norm(&quote.text)) {
                report.invented_quotes += 1;
            } else if positive && let Some(c) = category {
                report.evidence_quotes += 1;
                let spans = record.clauses.get(c.as_str()).map(Vec::as_slice).unwrap_or_default();
                if let Some((start, end)) = quote_chars(&text, &normalized_contract, &quote.text)
                    && spans.iter().any(|s| s.start < end && start < s.end)
                {
                    report.quotes_on_labelled_span += 1;
                    report.evidence_quotes_on_labelled_span += 1;
                }
            }
        }
        for (category, spans) in &record.clauses {
            if spans.is_empty() || META_CATEGORIES.contains(&category.as_str()) {
                continue;
            }
            let Some(given) = statuses.get(category.as_str()) else { continue };
            report.labelled_pairs += 1;
            if given.iter().all(|s| *s == ItemStatus::Absent) {
                report.labelled_called_absent += 1;
            }
        }
        report.rejected_quotes += review.rejected.len();
        for category in &categories {
            let truth = record.clauses.get(category).is_some_and(|s| !s.is_empty());
            let guess = predicted.contains(category);
            let entry = counts.get_mut(category).expect("every category counted");
            entry.0 += usize::from(truth && guess);
            entry.1 += usize::from(guess && !truth);
            entry.2 += usize::from(truth && !guess);
        }

        if let Some(law) = record.answers.get("Governing Law").and_then(|v| v.as_str()).filter(|s| !s.is_empty()) {
            report.governing_law_labelled += 1;
            // As the scorer: the normalised answer must appear in the extracted field's JSON (value and quote).
            let got = review.extractions.governing_law.as_ref().map(|g| serde_json::to_string(g).unwrap_or_default());
            if got.is_some_and(|g| scorer_norm(&g).contains(&scorer_norm(law))) {
                report.governing_law_correct += 1;
            }
        }
        let names: BTreeSet<String> = record
            .clauses
            .get("Parties")
            .map(|spans| spans.iter().map(|s| scorer_norm(&s.text)).filter(|t| is_party_name(t)).collect())
            .unwrap_or_default();
        let values: Vec<String> = review.extractions.parties.iter().map(|p| scorer_norm(&p.value)).collect();
        report.parties_labelled += names.len();
        report.parties_found += names.iter().filter(|n| values.iter().any(|v| v.contains(n.as_str()))).count();

        for row in &mut report.values {
            score_value(row, record, &review.extractions);
        }

        inspect(&ContractOutcome { record, review: Some(&review), predicted: &predicted }, &text);
    }
    for row in &mut report.values {
        row.accuracy = if row.field == "Parties" {
            ratio(row.names_found, row.names_labelled)
        } else {
            ratio(row.correct, row.labelled)
        };
    }
    report.total_seconds = started.elapsed().as_secs_f64();
    per_contract_ms.sort_by(f64::total_cmp);
    report.median_ms_per_contract = per_contract_ms.get(per_contract_ms.len() / 2).copied().unwrap_or(0.0);
    report.type_accuracy = ratio(type_ok, records.len());
    report.quote_precision = ratio(report.quotes_on_labelled_span, report.quotes);
    report.evidence_quote_precision = ratio(report.evidence_quotes_on_labelled_span, report.evidence_quotes);
    report.missed_present_rate = ratio(report.labelled_called_absent, report.labelled_pairs);
    report.governing_law_accuracy = ratio(report.governing_law_correct, report.governing_law_labelled);
    report.parties_recall = ratio(report.parties_found, report.parties_labelled);
    let mut macro_sum = 0.0;
    let mut macro_n = 0usize;
    for (category, (tp, fp, fals)) in counts {
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fals);
        let f1 = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
        let in_macro = !META_CATEGORIES.contains(&category.as_str()) && tp + fals > 0;
        if in_macro {
            macro_sum += f1;
            macro_n += 1;
        }
        report.categories.push(CategoryScore {
            category,
            tp,
            fp,
            false_negatives: fals,
            precision,
            recall,
            f1,
            in_macro,
        });
    }
    report.presence_macro_f1 = if macro_n > 0 { macro_sum / macro_n as f64 } else { 0.0 };
    report
}

/// Adds one contract to a row of the values table.
fn score_value(row: &mut ValueScore, record: &LabelRecord, extractions: &Extractions) {
    let Some(answer) = record.answers.get(&row.field).and_then(|v| v.as_str()).filter(|a| !a.trim().is_empty()) else {
        return;
    };
    let normalized = |x: &Option<pactwise_domain::Extracted>| x.as_ref().and_then(|e| e.normalized.clone());
    let (comparable, predicted, correct) = match row.field.as_str() {
        "Agreement Date" | "Effective Date" | "Expiration Date" => {
            let value = match row.field.as_str() {
                "Agreement Date" => normalized(&extractions.agreement_date),
                "Effective Date" => normalized(&extractions.effective_date),
                _ => normalized(&extractions.expiration_date),
            };
            let comparable = cuad_answers::date_comparable(answer, row.field == "Expiration Date");
            let correct = value.as_ref().is_some_and(|v| cuad_answers::date_matches(answer, v));
            (comparable, value.is_some(), correct)
        }
        "Renewal Term" | "Notice Period To Terminate Renewal" => {
            let value = if row.field == "Renewal Term" {
                normalized(&extractions.renewal)
            } else {
                normalized(&extractions.renewal_notice)
            };
            let correct = value.as_ref().is_some_and(|v| cuad_answers::period_matches(answer, v));
            (cuad_answers::period_comparable(answer), value.is_some(), correct)
        }
        "Governing Law" => {
            let name = match normalized(&extractions.governing_law) {
                Some(Value::Jurisdiction { name }) => Some(name),
                _ => None,
            };
            let comparable = answer.chars().any(char::is_alphabetic);
            let correct = name.as_deref().is_some_and(|n| cuad_answers::jurisdiction_matches(answer, n));
            (comparable, name.is_some(), correct)
        }
        _ => {
            let labelled = cuad_answers::parties(answer);
            let extracted: Vec<String> = extractions
                .parties
                .iter()
                .flat_map(|p| {
                    let mut names = vec![p.value.clone()];
                    if let Some(Value::Party { name, defined_as, .. }) = &p.normalized {
                        names.push(name.clone());
                        names.extend(defined_as.clone());
                    }
                    names
                })
                .collect();
            let found = labelled.iter().filter(|p| cuad_answers::party_found(p, &extracted)).count();
            row.names_labelled += labelled.len();
            row.names_found += found;
            (!labelled.is_empty(), !extracted.is_empty(), !labelled.is_empty() && found == labelled.len())
        }
    };
    if !comparable {
        row.not_comparable += 1;
        return;
    }
    row.labelled += 1;
    row.predicted += usize::from(predicted);
    row.correct += usize::from(correct);
}

/// The values table as text, one line per field (what `eval_cuad` and `pactwise eval cuad` print).
pub fn values_table(values: &[ValueScore]) -> Vec<String> {
    let mut lines = vec![format!(
        "  {:36} {:>9} {:>9} {:>7} {:>9}  {}",
        "value", "labelled", "predicted", "correct", "accuracy", "not comparable"
    )];
    for v in values {
        let (figure, note) = if v.field == "Parties" {
            (v.accuracy, format!("recall of names {}/{}; ", v.names_found, v.names_labelled))
        } else {
            (v.accuracy, String::new())
        };
        lines.push(format!(
            "  {:36} {:>9} {:>9} {:>7} {:>9.3}  {}{}",
            v.field, v.labelled, v.predicted, v.correct, figure, note, v.not_comparable
        ));
    }
    lines
}

/// One contract reviewed: its text as the scorer reads it, the offline review, and the milliseconds it took.
type Reviewed = (String, OfflineReview, f64);

/// Reviews every contract (text as the scorer reads it, the offline review, and its milliseconds), on as many
/// threads as the machine has cores (at most 8): contracts are independent, and the catalog is shared read-only.
fn review_all(
    catalog: &Catalog,
    dir: &Path,
    records: &[LabelRecord],
    learned: Option<&Learned<'_>>,
) -> Vec<Option<Reviewed>> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let mut results: Vec<(usize, Option<Reviewed>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let extractor = Extractor::new(ExtractConfig::default());
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(record) = records.get(i) else { break };
                        done.push((i, review_one(catalog, &extractor, dir, record, learned)));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn review_one(
    catalog: &Catalog,
    extractor: &Extractor,
    dir: &Path,
    record: &LabelRecord,
    learned: Option<&Learned<'_>>,
) -> Option<Reviewed> {
    let path = dir.join("contracts").join(format!("{}.txt", record.contract));
    // The scorer reads the text with universal newlines and replacement of invalid UTF-8.
    let bytes = std::fs::read(&path).ok()?;
    let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n").replace('\r', "\n");
    let started = Instant::now();
    match extractor.extract_file(&path, &ExtractOptions { ocr: false, ..ExtractOptions::default() }) {
        Ok(document) => {
            let review = review_pages_with(catalog, document.pages, learned);
            Some((text, review, started.elapsed().as_secs_f64() * 1000.0))
        }
        Err(error) => {
            tracing::warn!(contract = %record.contract, %error, "extraction failed");
            None
        }
    }
}

/// A labelled Parties span that is a name (not the sentence that defines "Party" and "Parties").
fn is_party_name(text: &str) -> bool {
    !text.is_empty() && text.len() <= 80 && !text.contains("party") && !text.contains("parties")
}

fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

/// Where a quote sits in the contract's `.txt`, as character offsets (the labels' unit): its exact text first, else the
/// same text after verification's normalisation (whitespace runs, typographic quotes and dashes, words hyphenated
/// across a line break), since the extractor may break a line where the `.txt` has a space. `normalized` is
/// `Normalized::new(text)`, made once per contract.
pub fn quote_chars(text: &str, normalized: &crate::verify::Normalized, quote: &str) -> Option<(usize, usize)> {
    let bytes = match text.find(quote) {
        Some(start) => start..start + quote.len(),
        None => {
            let needle = crate::verify::Normalized::new(quote);
            if needle.text.is_empty() {
                return None;
            }
            let found = normalized.text.find(&needle.text)?;
            normalized.original_range(found..found + needle.text.len(), text)
        }
    };
    let start = text[..bytes.start].chars().count();
    Some((start, start + text[bytes].chars().count()))
}

/// The scorer's normalisation: typographic double quotes and right single quote made plain, whitespace runs made one
/// space, trimmed, lowercased.
pub fn scorer_norm(text: &str) -> String {
    let replaced = text.replace(['\u{201C}', '\u{201D}'], "\"").replace('\u{2019}', "'");
    replaced.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quote_whose_line_breaks_differ_from_the_text_is_placed_on_its_span_in_characters() {
        let text =
            "Caf\u{e9} terms. This Agreement may not be assigned without the prior written consent of the other party.";
        let normalized = crate::verify::Normalized::new(text);
        let start = text.chars().position(|c| c == 'T').expect("a capital T");
        let exact = "This Agreement may not be assigned";
        assert_eq!(quote_chars(text, &normalized, exact), Some((start, start + exact.chars().count())));
        // The extractor broke the line where the text has a space: still the same span.
        let wrapped = "This Agreement may not be\nassigned without the prior written consent of the other party.";
        let end = text.chars().count();
        assert_eq!(quote_chars(text, &normalized, wrapped), Some((start, end)));
        assert_eq!(quote_chars(text, &normalized, "assigned with consent"), None);
    }
}
