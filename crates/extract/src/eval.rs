//! Measures of extraction quality used by the evaluation commands and tests: word recall against a reference text
//! and OCR word accuracy (one minus the word error rate).

/// Lower-cased runs of letters and digits: the words compared. Ligatures are split, apostrophes dropped.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if matches!(c, '\'' | '\u{2019}') {
            continue;
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Word recall as counts: how many reference words (as a multiset) were found in the extracted text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recall {
    pub found: u64,
    pub reference: u64,
}

impl Recall {
    pub fn add(&mut self, other: Recall) {
        self.found += other.found;
        self.reference += other.reference;
    }

    pub fn ratio(&self) -> f64 {
        if self.reference == 0 { 1.0 } else { self.found as f64 / self.reference as f64 }
    }
}

pub fn word_recall(extracted: &str, reference: &str) -> Recall {
    let mut counts = std::collections::HashMap::<String, i64>::new();
    for w in words(extracted) {
        *counts.entry(w).or_default() += 1;
    }
    let mut recall = Recall::default();
    for w in words(reference) {
        recall.reference += 1;
        if let Some(n) = counts.get_mut(&w)
            && *n > 0
        {
            *n -= 1;
            recall.found += 1;
        }
    }
    recall
}

/// Word-level edit distance (substitutions, insertions, deletions) of `hypothesis` against `reference`, and the
/// reference length; accuracy is `1 - edits / reference`.
pub fn word_edits(hypothesis: &str, reference: &str) -> (usize, usize) {
    let h = words(hypothesis);
    let r = words(reference);
    let mut previous: Vec<usize> = (0..=h.len()).collect();
    let mut current = vec![0; h.len() + 1];
    for (i, rw) in r.iter().enumerate() {
        current[0] = i + 1;
        for (j, hw) in h.iter().enumerate() {
            let substitution = previous[j] + usize::from(rw != hw);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    (previous[h.len()], r.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_ignore_case_and_punctuation() {
        assert_eq!(words("The Seller's \"Fees\" — 3.5%"), vec!["the", "sellers", "fees", "3", "5"]);
    }

    #[test]
    fn recall_counts_repeated_words_only_as_often_as_found() {
        let r = word_recall("the fee the", "the the the fee");
        assert_eq!(r, Recall { found: 3, reference: 4 });
    }

    #[test]
    fn word_edits_count_substitutions_insertions_and_deletions() {
        assert_eq!(word_edits("a b c", "a b c"), (0, 3));
        assert_eq!(word_edits("a x c", "a b c"), (1, 3));
        assert_eq!(word_edits("a c", "a b c"), (1, 3));
        assert_eq!(word_edits("a b b c", "a b c"), (1, 3));
    }
}
