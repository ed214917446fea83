//! The in-memory word index of an organization's passages: BM25 over the words the full-text index holds for them
//! (FTS5's own tokens, read once from the store), ranked in memory. FTS5 computes the score of every passage that
//! holds any of a query's words in SQL, one row at a time (20 to 40 ms across 27,870 passages for a long question);
//! here the same sum is a pass over the words' posting lists (a fraction of a millisecond).
//!
//! The score is BM25 as FTS5 defines it (k1 = 1.2, b = 0.75, a word's weight ln((N - n + 0.5) / (n + 0.5)), at least
//! 1e-6), with N, n and the average length taken over the organization's own passages: another organization's
//! contracts on the same desktop never weigh a word.

use pactwise_domain::DocumentId;
use pactwise_store::PassageWords;
use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// One organization's passages by word.
#[derive(Debug)]
pub struct WordIndex {
    /// The organization's passage counter the index was read at.
    pub(crate) version: i64,
    /// Passage ids, by position.
    ids: Vec<i64>,
    /// Each passage's document, by its number in `documents`.
    document_of: Vec<u32>,
    /// The documents' numbers (0, 1, … in the order of their first passage).
    documents: HashMap<DocumentId, u32>,
    /// Words in each passage.
    lengths: Vec<u32>,
    average_length: f64,
    /// A word's postings: a range of `postings` and `frequencies`.
    words: HashMap<Box<str>, (u32, u32)>,
    /// Passage positions, ascending within each word.
    postings: Vec<u32>,
    /// How often the word occurs in the passage.
    frequencies: Vec<u16>,
}

/// Builds an index from the store's rows (see [`pactwise_store::Passages::passage_words`]).
pub(crate) struct WordIndexBuilder {
    words: HashMap<Box<str>, (u32, u32)>,
    current: String,
    start: u32,
    postings: Vec<u32>,
    frequencies: Vec<u16>,
    lengths: Vec<u32>,
}

impl WordIndexBuilder {
    pub(crate) fn new() -> WordIndexBuilder {
        WordIndexBuilder {
            words: HashMap::new(),
            current: String::new(),
            start: 0,
            postings: Vec::new(),
            frequencies: Vec::new(),
            lengths: Vec::new(),
        }
    }

    /// One occurrence of `word` in the passage at `position`: word by word, and within a word by position.
    pub(crate) fn add(&mut self, word: &str, position: u32) {
        if word != self.current {
            self.close_word();
            self.current.clear();
            self.current.push_str(word);
        }
        let at = position as usize;
        if self.lengths.len() <= at {
            self.lengths.resize(at + 1, 0);
        }
        self.lengths[at] += 1;
        let open = self.postings.len() as u32 > self.start;
        if open && self.postings.last() == Some(&position) {
            if let Some(f) = self.frequencies.last_mut() {
                *f = f.saturating_add(1);
            }
        } else {
            self.postings.push(position);
            self.frequencies.push(1);
        }
    }

    fn close_word(&mut self) {
        let end = self.postings.len() as u32;
        if end > self.start && !self.current.is_empty() {
            // A word seen again after others (not in the store's order) keeps its first postings only.
            self.words.entry(self.current.as_str().into()).or_insert((self.start, end));
        }
        self.start = end;
    }

    pub(crate) fn finish(mut self, read: PassageWords) -> WordIndex {
        self.close_word();
        let count = read.passages.len();
        self.lengths.resize(count, 0);
        let mut documents: HashMap<DocumentId, u32> = HashMap::new();
        let mut ids = Vec::with_capacity(count);
        let mut document_of = Vec::with_capacity(count);
        for (id, document) in read.passages {
            let next = documents.len() as u32;
            let number = *documents.entry(document).or_insert(next);
            ids.push(id);
            document_of.push(number);
        }
        let total: u64 = self.lengths.iter().map(|l| u64::from(*l)).sum();
        let average_length = if count == 0 { 1.0 } else { (total as f64 / count as f64).max(1.0) };
        self.postings.shrink_to_fit();
        self.frequencies.shrink_to_fit();
        WordIndex {
            version: read.version,
            ids,
            document_of,
            documents,
            lengths: self.lengths,
            average_length,
            words: self.words,
            postings: self.postings,
            frequencies: self.frequencies,
        }
    }
}

impl WordIndex {
    /// Passages in the index.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes held (about).
    pub fn size(&self) -> usize {
        self.ids.len() * (8 + 4 + 4)
            + self.postings.len() * (4 + 2)
            + self.words.keys().map(|w| w.len() + 24).sum::<usize>()
            + self.documents.len() * 24
    }

    /// Passage ids for `words` (the index's words of a query, each once), best first, at most `limit`: passages
    /// holding every word first (with two words or more), then passages holding any; each group by BM25, equal
    /// scores by id. Only passages of `document` when given, never of `deleted` documents.
    pub fn rank(
        &self,
        words: &[String],
        document: Option<DocumentId>,
        deleted: &[DocumentId],
        limit: usize,
    ) -> Vec<i64> {
        if words.is_empty() || limit == 0 || self.is_empty() {
            return Vec::new();
        }
        let number = |d: &DocumentId| self.documents.get(d).copied();
        let only = match document {
            Some(d) => match number(&d) {
                Some(n) => Some(n),
                None => return Vec::new(),
            },
            None => None,
        };
        let mut left_out = vec![false; self.documents.len()];
        for n in deleted.iter().filter_map(number) {
            left_out[n as usize] = true;
        }
        let count = self.ids.len() as f64;
        let mut scores = vec![0.0f64; self.ids.len()];
        let mut matched = vec![0u8; self.ids.len()];
        let mut touched: Vec<u32> = Vec::new();
        for word in words {
            let Some(&(start, end)) = self.words.get(word.as_str()) else { continue };
            let (start, end) = (start as usize, end as usize);
            let holding = (end - start) as f64;
            let weight = ((count - holding + 0.5) / (holding + 0.5)).ln();
            let weight = if weight <= 0.0 { 1e-6 } else { weight };
            for (&position, &frequency) in self.postings[start..end].iter().zip(&self.frequencies[start..end]) {
                let at = position as usize;
                if only.is_some_and(|n| self.document_of[at] != n) || left_out[self.document_of[at] as usize] {
                    continue;
                }
                let tf = f64::from(frequency);
                let norm = K1 * (1.0 - B + B * f64::from(self.lengths[at]) / self.average_length);
                scores[at] += weight * (tf * (K1 + 1.0)) / (tf + norm);
                if matched[at] == 0 {
                    touched.push(position);
                }
                matched[at] = matched[at].saturating_add(1);
            }
        }
        let every = words.len().min(u8::MAX as usize) as u8;
        let (mut all, mut any): (Vec<u32>, Vec<u32>) =
            touched.into_iter().partition(|p| every >= 2 && matched[*p as usize] >= every);
        let mut ranked = self.best(&mut all, &scores, limit);
        if ranked.len() < limit {
            let rest = limit - ranked.len();
            ranked.extend(self.best(&mut any, &scores, rest));
        }
        ranked
    }

    /// The best `limit` of `positions` by score, then id.
    fn best(&self, positions: &mut [u32], scores: &[f64], limit: usize) -> Vec<i64> {
        let order = |a: &u32, b: &u32| {
            scores[*b as usize].total_cmp(&scores[*a as usize]).then(self.ids[*a as usize].cmp(&self.ids[*b as usize]))
        };
        if positions.len() > limit {
            positions.select_nth_unstable_by(limit, order);
        }
        let kept = limit.min(positions.len());
        let best = &mut positions[..kept];
        best.sort_unstable_by(order);
        best.iter().map(|p| self.ids[*p as usize]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(passages: &[(i64, DocumentId, &str)]) -> WordIndex {
        // The store's order: word by word, then by position.
        let mut occurrences: Vec<(String, u32)> = Vec::new();
        for (position, (_, _, text)) in passages.iter().enumerate() {
            for word in text.split_whitespace() {
                occurrences.push((word.to_owned(), position as u32));
            }
        }
        occurrences.sort();
        let mut builder = WordIndexBuilder::new();
        for (word, position) in &occurrences {
            builder.add(word, *position);
        }
        builder.finish(PassageWords { version: 3, passages: passages.iter().map(|(id, d, _)| (*id, *d)).collect() })
    }

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn passages_with_every_word_come_first_then_the_rarer_word_and_the_shorter_passage_win() {
        let (a, b) = (DocumentId::new(), DocumentId::new());
        let index = index(&[
            (10, a, "fee fee fee invoic"),
            (11, a, "escrow agent"),
            (12, a, "fee due"),
            (13, b, "fee due within thirti dai of the invoic date and other word word word"),
            (14, b, "escrow fee"),
            (15, b, "nothing here"),
            (16, b, "fee"),
        ]);
        assert_eq!(index.len(), 7);
        assert_eq!(index.version, 3);
        // Both words: 14 alone; then escrow alone (rarer than fee), then fee alone: more often, then shorter first.
        assert_eq!(index.rank(&words("escrow fee"), None, &[], 10), [14, 11, 10, 16, 12, 13]);
        assert_eq!(index.rank(&words("fee invoic"), None, &[], 3), [10, 13, 16], "every word first, then by score");
        assert_eq!(index.rank(&words("fee"), None, &[], 10)[0], 10, "more occurrences rank higher");
        assert_eq!(index.rank(&words("escrow"), Some(b), &[], 10), [14], "inside one document");
        assert_eq!(index.rank(&words("escrow fee"), None, &[b], 10), [11, 10, 12], "a deleted document is left out");
        assert!(index.rank(&words("absent"), None, &[], 10).is_empty());
        assert!(index.rank(&words("fee"), Some(DocumentId::new()), &[], 10).is_empty(), "another document");
        assert!(index.rank(&[], None, &[], 10).is_empty());
    }

    #[test]
    fn equal_scores_come_in_the_order_of_their_ids_and_the_cut_keeps_the_lowest() {
        let d = DocumentId::new();
        let passages: Vec<(i64, DocumentId, &str)> = (0..40).map(|i| (100 + i, d, "audit right")).collect();
        let index = index(&passages);
        let ranked = index.rank(&words("audit"), None, &[], 5);
        assert_eq!(ranked, [100, 101, 102, 103, 104]);
    }
}
