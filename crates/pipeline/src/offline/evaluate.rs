//! The rule-based checklist evaluator. An item that tests a CUAD category is answered from its category's shared
//! clause signals (`checklists/categories.toml`): present when a sentence of the contract supports the category,
//! quoting that sentence (the one the item's own patterns also match, if any), otherwise absent. An item with no
//! category is answered from its own signals: present or partial patterns, quoting the sentence they matched. Quotes
//! are whole sentences cut from the page's own text, so they are on their page verbatim.

use super::{ContractIndex, RULES_CONFIDENCE_CAP};
use pactwise_checklists::{Catalog, CompiledCategorySignals};
use pactwise_domain::{ChecklistItem, ContractType, CuadCategory, ItemFinding, ItemStatus, Method, Quote};
use regex::Regex;
use std::collections::{BTreeSet, HashMap};

/// Confidence of a rule finding backed by one sentence; each further supporting sentence adds a little.
const BASE_CONFIDENCE: f32 = 0.3;
/// A supporting sentence has at least this many words: a heading ("Change of Control.") names a topic, it does not
/// make a clause.
const MIN_CLAUSE_WORDS: usize = 6;
/// Confidence of an "absent" answer from rules: silence is weak evidence.
const ABSENT_CONFIDENCE: f32 = 0.25;

/// Answers every item of `contract_type` from the index, in catalog order: exactly one finding per item.
pub fn evaluate(catalog: &Catalog, contract_type: &ContractType, index: &ContractIndex) -> Vec<ItemFinding> {
    let _span = tracing::debug_span!("offline.evaluate", contract_type = %contract_type.id).entered();
    let mut evidence: HashMap<CuadCategory, Vec<usize>> = HashMap::new();
    contract_type
        .items
        .iter()
        .map(|item| {
            let category = item.cuad_category.and_then(|c| catalog.category_signals(c).map(|s| (c, s)));
            match category {
                Some((c, signals)) => {
                    let found = evidence.entry(c).or_insert_with(|| category_evidence(signals, index));
                    category_finding(catalog, item, c, found, index)
                }
                None => own_signals_finding(catalog, item, index),
            }
        })
        .collect()
}

/// The sentences (indices into the index) that support a category, in document order.
pub fn category_evidence(signals: &CompiledCategorySignals, index: &ContractIndex) -> Vec<usize> {
    if !signals.requires.is_empty()
        && !signals.requires.iter().any(|r| index.pages().iter().any(|p| r.is_match(&p.text)))
    {
        return Vec::new();
    }
    let candidates = matching_sentences(&signals.clause, index);
    let mut found: BTreeSet<usize> = candidates
        .into_iter()
        .filter(|&s| {
            let text = index.sentence_text(&index.sentences()[s]);
            text.split_whitespace().count() >= MIN_CLAUSE_WORDS && signals.supports(text)
        })
        .collect();
    // A clause cut by a page break: recognised on the joined text, quoted by its longer part (which is on one page).
    for (before, after, joined) in index.joined_sentences() {
        if found.contains(before) || found.contains(after) || !signals.supports(joined) {
            continue;
        }
        let len = |i: usize| index.sentences()[i].range.len();
        found.insert(if len(*before) >= len(*after) { *before } else { *after });
    }
    found.into_iter().collect()
}

/// Sentences in which one of `patterns` matches (searched page by page, then confirmed within the sentence).
fn matching_sentences(patterns: &[Regex], index: &ContractIndex) -> BTreeSet<usize> {
    let mut found = BTreeSet::new();
    for pattern in patterns {
        for (p, page) in index.pages().iter().enumerate() {
            for m in pattern.find_iter(&page.text) {
                if let Some(s) = index.sentence_at(p, m.start()) {
                    found.insert(s);
                }
            }
        }
    }
    found
}

fn category_finding(
    catalog: &Catalog,
    item: &ChecklistItem,
    category: CuadCategory,
    found: &[usize],
    index: &ContractIndex,
) -> ItemFinding {
    if found.is_empty() {
        return ItemFinding {
            item_id: item.id.clone(),
            status: ItemStatus::Absent,
            confidence: ABSENT_CONFIDENCE,
            quote: None,
            method: Method::Rules,
            red_flags: Vec::new(),
            reason: Some(format!("no sentence matched the {category} clause signals")),
        };
    }
    // Prefer a supporting sentence the item's own patterns also match: it is the clause the question asks about.
    let own = catalog.item_signals(&item.id);
    let best = own
        .and_then(|s| {
            found.iter().copied().find(|&i| {
                let text = index.sentence_text(&index.sentences()[i]);
                s.present.iter().any(|r| r.is_match(text))
            })
        })
        .unwrap_or(found[0]);
    let sentence = &index.sentences()[best];
    ItemFinding {
        item_id: item.id.clone(),
        status: ItemStatus::Present,
        confidence: (BASE_CONFIDENCE + 0.05 * (found.len().min(4) - 1) as f32).min(RULES_CONFIDENCE_CAP),
        quote: Some(Quote { text: index.sentence_text(sentence).to_owned(), page: index.page_number(sentence) }),
        method: Method::Rules,
        red_flags: Vec::new(),
        reason: Some(format!("{} sentence(s) matched the {category} clause signals", found.len())),
    }
}

fn own_signals_finding(catalog: &Catalog, item: &ChecklistItem, index: &ContractIndex) -> ItemFinding {
    let absent = |reason: &str| ItemFinding {
        item_id: item.id.clone(),
        status: ItemStatus::Absent,
        confidence: ABSENT_CONFIDENCE,
        quote: None,
        method: Method::Rules,
        red_flags: Vec::new(),
        reason: Some(reason.to_owned()),
    };
    let Some(signals) = catalog.item_signals(&item.id) else { return absent("the item has no signals") };
    for (status, patterns) in [(ItemStatus::Present, &signals.present), (ItemStatus::Partial, &signals.partial)] {
        if let Some(&s) = matching_sentences(patterns, index).iter().next() {
            let sentence = &index.sentences()[s];
            return ItemFinding {
                item_id: item.id.clone(),
                status,
                confidence: BASE_CONFIDENCE,
                quote: Some(Quote {
                    text: index.sentence_text(sentence).to_owned(),
                    page: index.page_number(sentence),
                }),
                method: Method::Rules,
                red_flags: Vec::new(),
                reason: Some(format!("the item's {} signals matched", status.as_str())),
            };
        }
    }
    absent("no signal of the item matched")
}
