//! The in-memory dense index: every stored vector of one organization (or of the precedent corpus) in one flat int8
//! matrix with a scale per row, so a query reads no vector from SQLite. Built from the store when what the store
//! holds changes (`VectorStamp`); a damaged row is left out and reported so it is computed again.

use pactwise_domain::DocumentId;
use pactwise_embed::Quantized;
use pactwise_store::{VectorProgress, VectorStamp};
use std::collections::HashMap;

/// One organization's (or the corpus's) vectors of one model.
#[derive(Debug, Default)]
pub struct DenseIndex {
    pub(crate) model_id: String,
    /// Numbers per vector: the model's (384 for the local model, 1,024 for Voyage's), read from the rows.
    dims: usize,
    pub(crate) stamp: VectorStamp,
    /// How many of the live passages had a vector when the index was read.
    pub(crate) coverage: Option<VectorProgress>,
    ids: Vec<i64>,
    documents: Vec<Option<DocumentId>>,
    scales: Vec<f32>,
    values: Vec<i8>,
    by_document: HashMap<DocumentId, Vec<u32>>,
}

impl DenseIndex {
    /// Builds the index from stored rows `(passage, document, bytes)` in passage order (as the store reads them);
    /// returns it with the ids of damaged rows. The vectors' length is the one most rows have; a row of another
    /// length is damaged (one model's vectors all have the same length).
    pub fn build(
        model_id: &str,
        stamp: VectorStamp,
        coverage: Option<VectorProgress>,
        rows: impl IntoIterator<Item = (i64, Option<DocumentId>, Vec<u8>)>,
    ) -> (DenseIndex, Vec<i64>) {
        let mut index = DenseIndex { model_id: model_id.to_owned(), stamp, coverage, ..DenseIndex::default() };
        let mut damaged = Vec::new();
        let rows: Vec<_> = rows.into_iter().collect();
        let mut lengths: HashMap<usize, usize> = HashMap::new();
        for (_, _, bytes) in &rows {
            *lengths.entry(bytes.len()).or_default() += 1;
        }
        index.dims = lengths.into_iter().max_by_key(|(len, n)| (*n, *len)).map_or(0, |(len, _)| len.saturating_sub(4));
        for (id, document, bytes) in rows {
            match Quantized::from_bytes_of(&bytes, index.dims) {
                Ok(q) => {
                    let row = index.ids.len() as u32;
                    index.ids.push(id);
                    index.documents.push(document);
                    index.scales.push(q.scale);
                    index.values.extend_from_slice(&q.values);
                    if let Some(d) = document {
                        index.by_document.entry(d).or_default().push(row);
                    }
                }
                Err(_) => damaged.push(id),
            }
        }
        (index, damaged)
    }

    /// The model whose vectors these are.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The document of an indexed passage.
    pub fn document_of(&self, passage: i64) -> Option<DocumentId> {
        let row = self.ids.binary_search(&passage).ok()?;
        self.documents[row]
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Memory held by the vectors and their ids, in bytes.
    pub fn size_bytes(&self) -> usize {
        self.values.len() + self.scales.len() * 4 + self.ids.len() * 8
    }

    fn score(&self, row: usize, query: &[f32]) -> f32 {
        dot(&self.values[row * self.dims..(row + 1) * self.dims], query) * self.scales[row]
    }

    /// The `k` passages most similar to `query` (a unit vector), best first, optionally within one document.
    pub fn top(&self, query: &[f32], document: Option<DocumentId>, k: usize) -> Vec<(i64, f32)> {
        if query.len() != self.dims || self.dims == 0 || k == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(f32, usize)> = match document {
            Some(d) => self
                .by_document
                .get(&d)
                .map(|rows| rows.iter().map(|r| (self.score(*r as usize, query), *r as usize)).collect())
                .unwrap_or_default(),
            None => (0..self.ids.len()).map(|r| (self.score(r, query), r)).collect(),
        };
        let order = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(self.ids[a.1].cmp(&self.ids[b.1]));
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, order);
            scored.truncate(k);
        }
        scored.sort_by(order);
        scored.into_iter().map(|(s, r)| (self.ids[r], s)).collect()
    }
}

/// Numbers summed side by side in [`dot`].
const LANES: usize = 16;

/// The dot product of a row of int8 values and a query, summed in [`LANES`] running sums that are added at the end:
/// one running sum must be added to in order, a number at a time, while separate sums let the compiler use vector
/// instructions (the scan of every passage is most of a dense search's time).
fn dot(values: &[i8], query: &[f32]) -> f32 {
    let mut sums = [0f32; LANES];
    let mut values = values.chunks_exact(LANES);
    let mut query = query.chunks_exact(LANES);
    for (v, q) in (&mut values).zip(&mut query) {
        for ((sum, v), q) in sums.iter_mut().zip(v).zip(q) {
            *sum += f32::from(*v) * q;
        }
    }
    let rest: f32 = values.remainder().iter().zip(query.remainder()).map(|(v, q)| f32::from(*v) * q).sum();
    sums.iter().sum::<f32>() + rest
}

#[cfg(test)]
mod tests {
    use super::*;
    use pactwise_embed::DIMENSIONS;

    fn unit(axis: usize) -> Vec<f32> {
        let mut v = vec![0.0; DIMENSIONS];
        v[axis] = 1.0;
        v
    }

    fn row(id: i64, doc: Option<DocumentId>, v: &[f32]) -> (i64, Option<DocumentId>, Vec<u8>) {
        (id, doc, Quantized::from_vector(v).to_bytes())
    }

    #[test]
    fn the_nearest_rows_come_first_and_a_document_filter_keeps_its_own() {
        let a = DocumentId::new();
        let b = DocumentId::new();
        let mut mixed = unit(0);
        mixed[1] = 1.0;
        let norm = 2f32.sqrt();
        mixed.iter_mut().for_each(|x| *x /= norm);
        let (index, damaged) = DenseIndex::build(
            "m",
            VectorStamp::default(),
            None,
            vec![
                row(1, Some(a), &unit(0)),
                row(2, Some(b), &mixed),
                row(3, Some(a), &unit(2)),
                (4, Some(b), vec![1, 2]),
            ],
        );
        assert_eq!(damaged, vec![4], "a damaged row is reported, not indexed");
        assert_eq!(index.len(), 3);
        let top = index.top(&unit(0), None, 2);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![1, 2]);
        assert!((top[0].1 - 1.0).abs() < 0.01 && (top[1].1 - 1.0 / norm).abs() < 0.01);
        let in_a = index.top(&unit(1), Some(a), 5);
        assert_eq!(in_a.iter().map(|t| t.0).collect::<Vec<_>>().len(), 2, "only document a's rows");
        assert!(in_a.iter().all(|(id, _)| *id == 1 || *id == 3));
        assert!(index.top(&[0.0; 3], None, 5).is_empty(), "a vector of the wrong size finds nothing");
        assert_eq!(index.size_bytes(), 3 * (DIMENSIONS + 4 + 8));
    }

    #[test]
    fn the_lane_sums_equal_the_plain_dot_product_at_any_length() {
        for len in [0, 1, 15, 16, 17, 384, 1024, 1030] {
            let values: Vec<i8> = (0..len).map(|i: i32| (i * 37 % 255 - 127) as i8).collect();
            let query: Vec<f32> = (0..len).map(|i| ((i * 11 % 29) as f32 - 14.0) / 29.0).collect();
            let plain: f64 = values.iter().zip(&query).map(|(v, q)| f64::from(*v) * f64::from(*q)).sum();
            let lanes = f64::from(dot(&values, &query));
            assert!((plain - lanes).abs() < 1e-3 * plain.abs().max(1.0), "length {len}: {plain} against {lanes}");
        }
    }

    #[test]
    fn another_models_longer_vectors_are_indexed_at_their_own_length() {
        let long = |axis: usize| {
            let mut v = vec![0.0; 1024];
            v[axis] = 1.0;
            v
        };
        let (index, damaged) = DenseIndex::build(
            "voyage",
            VectorStamp::default(),
            None,
            vec![(1, None, vec![0; 8]), row(2, None, &long(5)), row(3, None, &long(9))],
        );
        assert_eq!(damaged, vec![1], "the odd length out is the damaged row, even when it comes first");
        assert_eq!(index.top(&long(9), None, 1)[0].0, 3);
        assert!(index.top(&unit(9), None, 1).is_empty(), "a local-model query does not search Voyage vectors");
    }
}
