//! Near-duplicate questions: two items of one type that ask the same thing in slightly different words. Questions
//! are reduced to a set of normalised content words (lower case, function words dropped, a plural `s` trimmed) and
//! compared by Jaccard similarity of those sets.

use pactwise_domain::ContractType;
use serde::Serialize;
use std::collections::BTreeSet;

/// Words that carry no meaning of their own in a checklist question.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "was", "be", "been", "being", "do",
    "does", "did", "any", "by", "with", "that", "this", "these", "those", "it", "its", "as", "at", "from", "into",
    "their", "there", "each", "such", "which", "who", "whom", "what", "whether", "if", "than", "then", "so", "has",
    "have", "having", "not", "no", "all", "other", "under", "within", "per", "s",
];

/// The normalised content words of a question.
pub fn question_tokens(question: &str) -> BTreeSet<String> {
    question
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|word| !word.is_empty() && !FUNCTION_WORDS.contains(&word.as_str()))
        .map(|word| match word.strip_suffix('s') {
            Some(stem) if word.len() > 3 && !word.ends_with("ss") => stem.to_owned(),
            _ => word,
        })
        .collect()
}

/// Jaccard similarity of the two questions' content words: 1.0 for the same words, 0.0 for none in common.
pub fn question_similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (question_tokens(a), question_tokens(b));
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

/// The two items of one type whose questions are most alike.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionPair {
    pub first: String,
    pub second: String,
    pub similarity: f64,
}

/// The most similar pair of questions within a type; `None` for a type with fewer than two items.
pub fn closest_question_pair(contract_type: &ContractType) -> Option<QuestionPair> {
    let tokens: Vec<BTreeSet<String>> = contract_type.items.iter().map(|i| question_tokens(&i.question)).collect();
    let mut best: Option<QuestionPair> = None;
    for (i, a) in tokens.iter().enumerate() {
        for (j, b) in tokens.iter().enumerate().skip(i + 1) {
            let union = a.union(b).count();
            let similarity = if union == 0 { 1.0 } else { a.intersection(b).count() as f64 / union as f64 };
            if best.as_ref().is_none_or(|pair| similarity > pair.similarity) {
                best = Some(QuestionPair {
                    first: contract_type.items[i].id.clone(),
                    second: contract_type.items[j].id.clone(),
                    similarity,
                });
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewording_with_function_words_and_plurals_scores_as_the_same_question() {
        let a = "Is the liability cap stated as a fixed amount?";
        let b = "Are liability caps stated as fixed amounts?";
        assert_eq!(question_similarity(a, b), 1.0);
    }

    #[test]
    fn questions_about_different_clauses_score_low() {
        let a = "Does the agreement cap each party's aggregate liability at the fees paid in the prior 12 months?";
        let b = "May either party terminate for convenience on 30 days' written notice?";
        assert!(question_similarity(a, b) < 0.2, "{}", question_similarity(a, b));
    }
}
