//! Which sentences of a cited passage support the answer: chosen by code, never by the model. A citation still comes
//! only from retrieval that ran (`tools::Retrieval::cite`); this narrows what the citation highlights from the whole
//! ~500-character passage to the one or two sentences that carry the claim, while the full passage stays available.
//!
//! Each sentence of the passage is scored against the claim (the answer's sentences that carry the citation's marker,
//! markers removed) and the question: with the local embedding model, `0.6·cos(sentence, claim) + 0.4·cos(sentence,
//! question)`; without it, the share of the claim's and question's content words (lower-cased, a final "s" dropped)
//! the sentence contains. The best sentence is kept, and a second one only when it scores within
//! [`SECOND_SENTENCE_MARGIN`] of the best. When nothing matches at all, the whole passage is the support.

use pactwise_embed::{Embedder, dot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A character range of a page's text, `[start, end)`, as the UI's text layer counts (Unicode scalars).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct TextRange {
    pub start: u32,
    pub end: u32,
}

/// A second sentence is highlighted only when it scores this close to the best one.
pub const SECOND_SENTENCE_MARGIN: f32 = 0.05;
/// With embeddings, a sentence below this similarity is never support on its own merit.
const EMBEDDING_FLOOR: f32 = 0.2;

/// The sentences of `text` as character ranges relative to its start, trimmed. A sentence ends at `.`, `;`, `?` or
/// `!` followed by white space (not after a single letter or a number, as in "(a)." or "10.5"), or at a blank line.
pub fn sentences(text: &str) -> Vec<TextRange> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0usize;
    let push = |from: usize, to: usize, out: &mut Vec<TextRange>| {
        let mut s = from;
        let mut e = to;
        while s < e && chars[s].is_whitespace() {
            s += 1;
        }
        while e > s && chars[e - 1].is_whitespace() {
            e -= 1;
        }
        if chars[s..e].iter().any(|c| c.is_alphanumeric()) {
            out.push(TextRange { start: s as u32, end: e as u32 });
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next_is_space = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        let ends = match c {
            '.' => next_is_space && !after_short_token(&chars[start..i]),
            ';' | '?' | '!' => next_is_space,
            '\n' => chars.get(i + 1) == Some(&'\n'),
            _ => false,
        };
        if ends {
            push(start, i + 1, &mut out);
            start = i + 1;
        }
        i += 1;
    }
    if start < chars.len() {
        push(start, chars.len(), &mut out);
    }
    out
}

/// Whether the word before a full stop is a single letter, a number or a short abbreviation ("No", "Sec", "Inc").
fn after_short_token(before: &[char]) -> bool {
    let word: String = before
        .iter()
        .rev()
        .take_while(|c| !c.is_whitespace() && **c != '(')
        .collect::<String>()
        .chars()
        .rev()
        .collect();
    let word = word.trim_end_matches(')');
    word.chars().count() <= 1
        || word.chars().all(|c| c.is_ascii_digit() || c == '.')
        || matches!(
            word.to_ascii_lowercase().as_str(),
            "no" | "sec" | "inc" | "co" | "ltd" | "corp" | "art" | "e.g" | "i.e"
        )
}

/// The claim a citation supports: the answer's sentences that mention `[marker]`, markers removed.
pub fn claim_for(answer: &str, marker: &str) -> String {
    let tag = format!("[{marker}]");
    let mut claims = Vec::new();
    for range in sentences(answer) {
        let sentence: String =
            answer.chars().skip(range.start as usize).take((range.end - range.start) as usize).collect();
        if sentence.contains(&tag) {
            claims.push(strip_markers(&sentence));
        }
    }
    if claims.is_empty() { strip_markers(answer) } else { claims.join(" ") }
}

fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for c in text.chars() {
        match c {
            '[' => skipping = true,
            ']' if skipping => skipping = false,
            _ if !skipping => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "that", "this", "with", "are", "was", "any", "all", "not", "shall", "may", "will", "such",
    "its", "has", "have", "from", "our", "their", "they", "which", "who", "what", "when", "does", "can", "under",
    "into", "other", "each", "upon", "than", "there", "these", "those", "also", "been", "being", "would", "could",
    "should",
];

fn content_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(|w| w.to_lowercase())
        .filter(|w| w.chars().count() > 2 && !STOP_WORDS.contains(&w.as_str()))
        .map(|w| if w.len() > 3 && w.ends_with('s') { w[..w.len() - 1].to_string() } else { w })
        .collect()
}

/// The supporting sentences of a passage as page ranges (`passage_start` is the passage's first character on its
/// page), in page order. With `embedder` (the local model) sentences are compared by meaning; without it, or when it
/// fails, by shared words.
pub fn supporting_sentences(
    passage: &str,
    passage_start: u32,
    claim: &str,
    question: &str,
    embedder: Option<&Embedder>,
) -> Vec<TextRange> {
    let ranges = sentences(passage);
    let whole = || vec![TextRange { start: passage_start, end: passage_start + passage.chars().count() as u32 }];
    if ranges.len() <= 1 {
        return whole();
    }
    let texts: Vec<String> = ranges
        .iter()
        .map(|r| passage.chars().skip(r.start as usize).take((r.end - r.start) as usize).collect())
        .collect();
    let scores = embedder
        .and_then(|e| embedding_scores(e, &texts, claim, question))
        .or_else(|| Some(word_scores(&texts, claim, question)))
        .unwrap_or_default();
    let Some((best, best_score)) =
        scores.iter().copied().enumerate().max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
    else {
        return whole();
    };
    if best_score <= 0.0 {
        return whole();
    }
    let mut chosen = vec![best];
    if let Some((second, _)) = scores
        .iter()
        .copied()
        .enumerate()
        .filter(|(i, s)| *i != best && *s > 0.0 && *s >= best_score - SECOND_SENTENCE_MARGIN)
        .max_by(|a, b| a.1.total_cmp(&b.1))
    {
        chosen.push(second);
    }
    chosen.sort_unstable();
    chosen
        .iter()
        .map(|&i| TextRange { start: passage_start + ranges[i].start, end: passage_start + ranges[i].end })
        .collect()
}

fn embedding_scores(embedder: &Embedder, sentences: &[String], claim: &str, question: &str) -> Option<Vec<f32>> {
    let mut texts: Vec<&str> = sentences.iter().map(String::as_str).collect();
    texts.push(claim);
    texts.push(question);
    let vectors = match embedder.embed(&texts) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "supporting sentences fall back to shared words");
            return None;
        }
    };
    let (claim_v, question_v) = (&vectors[sentences.len()], &vectors[sentences.len() + 1]);
    Some(
        vectors[..sentences.len()]
            .iter()
            .map(|v| {
                let s = 0.6 * dot(v, claim_v) + 0.4 * dot(v, question_v);
                if s < EMBEDDING_FLOOR { 0.0 } else { s }
            })
            .collect(),
    )
}

fn word_scores(sentences: &[String], claim: &str, question: &str) -> Vec<f32> {
    let wanted: BTreeSet<String> = content_words(claim).union(&content_words(question)).cloned().collect();
    if wanted.is_empty() {
        return vec![0.0; sentences.len()];
    }
    sentences
        .iter()
        .map(|s| {
            let words = content_words(s);
            let shared = words.intersection(&wanted).count() as f32;
            // Shared words, a little in favour of the shorter sentence with the same words.
            if shared == 0.0 { 0.0 } else { shared / wanted.len() as f32 + shared / (10.0 * words.len().max(1) as f32) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSAGE: &str = "10.4 Insurance. The Distributor shall maintain product liability insurance of at least \
        $5,000,000 per occurrence. 10.5 Limitation of Liability. In no event shall either party be liable for \
        indirect or consequential damages; and each party's total liability shall not exceed the fees paid in the \
        twelve months before the claim. 10.6 Notices. Notices shall be in writing.";

    fn text_of(passage: &str, r: TextRange, base: u32) -> String {
        passage.chars().skip((r.start - base) as usize).take((r.end - r.start) as usize).collect()
    }

    #[test]
    fn sentences_end_at_stops_but_not_after_clause_numbers_or_letters() {
        let s = sentences("Section 10.5 applies. See (a). Then No. 4 of Exhibit A; the end");
        let texts: Vec<String> = s
            .iter()
            .map(|r| text_of("Section 10.5 applies. See (a). Then No. 4 of Exhibit A; the end", *r, 0))
            .collect();
        assert_eq!(texts, vec!["Section 10.5 applies.", "See (a). Then No. 4 of Exhibit A;", "the end"]);
    }

    #[test]
    fn the_claim_is_the_answer_sentences_that_carry_the_marker() {
        let answer = "The cap is twelve months of fees [C1]. Insurance is required [C2]. Both are standard [C1][C2].";
        assert_eq!(claim_for(answer, "C2"), "Insurance is required . Both are standard .");
        assert_eq!(claim_for("No markers at all.", "C1"), "No markers at all.");
    }

    #[test]
    fn without_the_model_the_sentence_sharing_the_claims_words_is_the_support() {
        let base = 1200;
        let support = supporting_sentences(
            PASSAGE,
            base,
            "Each party's total liability is capped at the fees paid in the twelve months before the claim.",
            "Is our liability capped?",
            None,
        );
        assert_eq!(support.len(), 1, "{support:?}");
        let text = text_of(PASSAGE, support[0], base);
        // The semicolon ends the exclusion of indirect damages; the cap is the clause after it.
        assert!(text.starts_with("and each party's total liability") && text.ends_with("before the claim."), "{text}");
    }

    #[test]
    fn a_passage_sharing_nothing_with_the_claim_is_supported_as_a_whole() {
        let support = supporting_sentences(PASSAGE, 7, "Zebra crossings.", "Zebras?", None);
        assert_eq!(support, vec![TextRange { start: 7, end: 7 + PASSAGE.chars().count() as u32 }]);
    }
}
