//! The keyword classifier. A contract names its type in its title, so the title decides when one is found: the
//! catalog's title patterns are matched in the head of the document, and the first title phrase wins, the longest
//! match where two end together ("Manufacturing and Supply Agreement" is a manufacturing agreement, "Software
//! License and Maintenance Agreement" a maintenance agreement). Patterns matched later in the head, the type's
//! distinctive terms over the whole text, and its negative cues break ties and decide when there is no title.

use super::{ContractIndex, RULES_CONFIDENCE_CAP};
use pactwise_checklists::Catalog;
use pactwise_domain::{Classification, Method};

/// Weight of the type whose title pattern comes first in the head.
const TITLE_WEIGHT: f32 = 12.0;
/// Weight of any other title pattern match in the head (e.g. "Amendment No. 3 to the Supply Agreement").
const HEAD_WEIGHT: f32 = 3.0;

/// Chooses the type of the contract from the catalog's signals; confidence never exceeds the rules cap.
pub fn classify(catalog: &Catalog, index: &ContractIndex) -> Classification {
    let _span = tracing::debug_span!("offline.classify").entered();
    let head = index.head();
    // (score, type position, what scored) per type.
    let mut scores: Vec<(f32, usize, String)> = Vec::with_capacity(catalog.types().len());
    // (type position, start, end) of title pattern matches in the head.
    let mut title_hits: Vec<(usize, usize, usize)> = Vec::new();
    for (t, contract_type) in catalog.types().iter().enumerate() {
        let Some(signals) = catalog.type_signals(&contract_type.id) else {
            scores.push((f32::MIN, t, String::new()));
            continue;
        };
        let mut score = 0.0;
        let mut head_matches = 0usize;
        for pattern in &signals.title_patterns {
            for m in pattern.find_iter(head) {
                title_hits.push((t, m.start(), m.end()));
                head_matches += 1;
            }
        }
        if head_matches > 0 {
            score += HEAD_WEIGHT;
        }
        let mut distinctive = 0usize;
        for term in &signals.distinctive_terms {
            if index.pages().iter().any(|p| term.is_match(&p.text)) {
                distinctive += 1;
            }
        }
        let total_terms = signals.distinctive_terms.len().max(1);
        score += 4.0 * distinctive as f32 / total_terms as f32;
        let negatives =
            signals.negative_cues.iter().filter(|r| index.pages().iter().any(|p| r.is_match(&p.text))).count();
        score -= 0.5 * negatives as f32;
        scores.push((
            score,
            t,
            format!("title {head_matches}, terms {distinctive}/{total_terms}, negative {negatives}"),
        ));
    }
    // The title: the first phrase a title pattern matches; of those ending together, the longest.
    // The title: the first phrase a title pattern matches; of those ending together, the longest.
    if let Some(&(t, _, _)) = title_hits.iter().min_by_key(|&&(_, start, end)| (end, std::cmp::Reverse(end - start))) {
        scores[t].0 += TITLE_WEIGHT;
        scores[t].2.push_str(", title phrase");
    }
    scores.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let (best, t, why) = scores[0].clone();
    let runner_up = scores.get(1).map_or(0.0, |s| s.0);
    let margin = (best - runner_up).max(0.0);
    let contract_type = &catalog.types()[t];
    Classification {
        type_id: contract_type.id.clone(),
        confidence: (0.1 + margin / 40.0).clamp(0.05, RULES_CONFIDENCE_CAP),
        method: Method::Rules,
        reason: format!("keyword classifier: {} scored {best:.1} ({why}); next {runner_up:.1}", contract_type.name),
    }
}
