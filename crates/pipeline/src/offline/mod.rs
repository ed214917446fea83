//! The offline path: what a lawyer sees with no network or no API key. A keyword classifier over the catalog's type
//! signals and a rule-based evaluator driven by the items' signals. The contract is indexed once
//! ([`ContractIndex`]) and every item of its type is answered from that index. Rule findings carry a confidence
//! capped at [`RULES_CONFIDENCE_CAP`], so they are pre-fills a person confirms, never answers the gate trusts.

use pactwise_checklists::Catalog;
use pactwise_domain::{Classification, ContractType, Extractions, ItemFinding, ItemStatus, Method, Page, Quote};

/// No rule-based answer claims more confidence than this.
pub const RULES_CONFIDENCE_CAP: f32 = 0.5;

/// The contract's text, indexed once for all items.
pub struct ContractIndex {
    pages: Vec<Page>,
}

impl ContractIndex {
    pub fn build(pages: &[Page]) -> ContractIndex {
        ContractIndex { pages: pages.to_vec() }
    }

    pub fn pages(&self) -> &[Page] {
        &self.pages
    }
}

/// The keyword classifier: title patterns near the top weigh most, then distinctive terms, minus negative cues.
pub fn classify(catalog: &Catalog, index: &ContractIndex) -> Classification {
    let head: String = index.pages.iter().flat_map(|p| p.text.chars()).take(2_000).collect();
    let body: String = index.pages.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n");
    let mut best: Option<(f32, &ContractType)> = None;
    for t in catalog.types() {
        let Some(signals) = catalog.type_signals(&t.id) else { continue };
        let mut score = 0.0;
        score += 5.0 * signals.title_patterns.iter().filter(|r| r.is_match(&head)).count() as f32;
        score += signals.distinctive_terms.iter().filter(|r| r.is_match(&body)).count() as f32;
        score -= signals.negative_cues.iter().filter(|r| r.is_match(&body)).count() as f32;
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, t));
        }
    }
    let (score, t) = best.expect("the catalog has types");
    Classification {
        type_id: t.id.clone(),
        confidence: (score / 20.0).clamp(0.05, RULES_CONFIDENCE_CAP),
        method: Method::Rules,
        reason: format!("keyword classifier: score {score:.1}"),
    }
}

/// Answers every item of `contract_type` from the index, in catalog order.
pub fn evaluate(catalog: &Catalog, contract_type: &ContractType, index: &ContractIndex) -> Vec<ItemFinding> {
    contract_type
        .items
        .iter()
        .map(|item| {
            let signals = catalog.item_signals(&item.id);
            let hit = signals.and_then(|s| {
                index.pages.iter().find_map(|page| {
                    s.present.iter().find_map(|r| r.find(&page.text).map(|m| (page, m.start()..m.end())))
                })
            });
            match hit {
                Some((page, range)) => ItemFinding {
                    item_id: item.id.clone(),
                    status: ItemStatus::Present,
                    confidence: 0.4,
                    quote: Some(Quote { text: page.text[range].to_owned(), page: page.number }),
                    method: Method::Rules,
                    reason: Some("a present signal matched".into()),
                    red_flags: Vec::new(),
                },
                None => ItemFinding {
                    item_id: item.id.clone(),
                    status: ItemStatus::Absent,
                    confidence: 0.2,
                    quote: None,
                    method: Method::Rules,
                    reason: Some("no signal matched".into()),
                    red_flags: Vec::new(),
                },
            }
        })
        .collect()
}

/// The contract record's fields found by rules (parties, dates, governing law, value).
pub fn extract_fields(_index: &ContractIndex) -> Extractions {
    Extractions::default()
}
