//! The retrieval benchmark over a CUAD folder (`contracts/*.txt`, `labels.jsonl`, `category_descriptions.csv`).
//!
//! Definitions (issue 21): the queries are the 41 category descriptions; the passages are the product's own passages
//! of each contract (`chunk::chunk_text`); a passage is relevant to (contract, category) when it overlaps a labelled
//! span of that category. (1) Within one contract, over the (contract, category) pairs that have a span: recall@3 =
//! relevant passages among the first three / min(3, relevant passages), and MRR = 1 / rank of the first relevant
//! passage in the first ten (0 when none). (2) Across the portfolio, per category: nDCG@10 of contracts (contracts in
//! the order their first passage appears in the hits; a contract is relevant when it has a span of the category;
//! binary gains). Every search runs through [`Retriever::search`] on a real store, exactly as the product runs it.
//!
//! The store lives in a folder that is kept between runs: its stored vectors are the embedding cache (a rerun embeds
//! nothing). The first run's embedding time is the cold figure.

use crate::{Mode, Retriever, chunk};
use pactwise_domain::{DocumentId, MediaType, Role};
use pactwise_store::{NewDocument, NewPassage, OrgScope, Store, StoreError};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{path} could not be read: {detail}")]
    Unreadable { path: PathBuf, detail: String },
    #[error("{path} line {line} is not a label record: {detail}")]
    BadLabels { path: PathBuf, line: usize, detail: String },
    #[error("{path} has no category descriptions")]
    NoCategories { path: PathBuf },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Retrieval(#[from] crate::RetrievalError),
}

#[derive(Debug, serde::Deserialize)]
struct Span {
    start: usize,
    end: usize,
}

#[derive(Debug, serde::Deserialize)]
struct LabelRecord {
    contract: String,
    clauses: BTreeMap<String, Vec<Span>>,
}

/// One mode's figures on a set of contracts.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ModeFigures {
    pub mode: Mode,
    /// (contract, category) pairs with a span.
    pub pairs: usize,
    pub recall_at_3: f64,
    pub mrr: f64,
    /// Categories with at least one relevant contract.
    pub categories: usize,
    pub ndcg_at_10: f64,
    /// Portfolio searches (every contract), milliseconds, the query's embedding included.
    pub latency_p50_ms: f64,
    pub latency_p95_ms: f64,
}

/// Figures for all contracts and for each half (even and odd positions in `labels.jsonl`, as `eval cuad --half`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RetrievalReport {
    pub contracts: usize,
    pub passages: usize,
    pub model_id: Option<String>,
    pub model_note: Option<String>,
    /// Passages embedded in this run and the seconds it took (0 when every vector came from the store).
    pub embedded_now: usize,
    pub embed_seconds: f64,
    pub passages_per_second: Option<f64>,
    /// Reading every stored vector of the 356 contracts into the in-memory index.
    pub index_build_ms: f64,
    pub index_bytes: usize,
    pub stored_vector_bytes: usize,
    /// Reading the word index (every passage's words from the full-text index) and its size in memory.
    pub word_index_build_ms: f64,
    pub word_index_bytes: usize,
    pub all: Vec<ModeFigures>,
    pub even: Vec<ModeFigures>,
    pub odd: Vec<ModeFigures>,
}

fn read(path: &Path) -> Result<String, EvalError> {
    std::fs::read_to_string(path).map_err(|e| EvalError::Unreadable { path: path.to_owned(), detail: e.to_string() })
}

fn read_labels(dir: &Path) -> Result<Vec<LabelRecord>, EvalError> {
    let path = dir.join("labels.jsonl");
    let text = read(&path)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| EvalError::BadLabels {
                path: path.clone(),
                line: i + 1,
                detail: e.to_string(),
            })
        })
        .collect()
}

/// One CSV record's fields (quotes and doubled quotes understood).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().expect("one field").push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

/// (category, description) pairs of `category_descriptions.csv` ("Category: X", "Description: Y" columns).
fn read_categories(dir: &Path) -> Result<Vec<(String, String)>, EvalError> {
    let path = dir.join("category_descriptions.csv");
    let text = read(&path)?;
    let strip = |field: &str, prefix: &str| field.trim().trim_start_matches(prefix).trim().to_owned();
    let categories: Vec<(String, String)> = text
        .trim_start_matches('\u{feff}')
        .lines()
        .skip(1)
        .map(csv_fields)
        .filter(|f| f.len() >= 2 && f[0].trim().starts_with("Category:"))
        .map(|f| (strip(&f[0], "Category:"), strip(&f[1], "Description:")))
        .filter(|(c, d)| !c.is_empty() && !d.is_empty())
        .collect();
    if categories.is_empty() {
        return Err(EvalError::NoCategories { path });
    }
    Ok(categories)
}

/// The benchmark's organization in the store folder (created on the first run, found again after).
fn scope(store: &Store) -> Result<OrgScope, StoreError> {
    let platform = store.platform();
    let org = match platform.find_organization("Retrieval benchmark")? {
        Some(org) => org,
        None => platform.create_organization("Retrieval benchmark")?,
    };
    let user = match platform.local_user()? {
        Some(user) => user,
        None => {
            let user = platform.create_user("Benchmark", None)?;
            platform.set_local_user(user)?;
            user
        }
    };
    platform.set_membership(org, user, Role::Owner)?;
    let session = platform.start_session(user, org)?;
    store.sessions().open(session)
}

struct Contract {
    document: DocumentId,
    /// Category → relevant passage ids.
    relevant: HashMap<String, HashSet<i64>>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn mean(values: &[f64]) -> f64 {
    if values.is_empty() { 0.0 } else { values.iter().sum::<f64>() / values.len() as f64 }
}

/// Runs the benchmark on the CUAD folder `dir` with the store in `store_dir` (kept: the vectors are the cache).
/// `progress` hears (step, done, total).
pub fn run(
    dir: &Path,
    store_dir: &Path,
    retriever: &Retriever,
    limit: Option<usize>,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<RetrievalReport, EvalError> {
    let labels = read_labels(dir)?;
    let categories = read_categories(dir)?;
    let take = limit.unwrap_or(labels.len()).min(labels.len());
    std::fs::create_dir_all(store_dir)
        .map_err(|e| EvalError::Unreadable { path: store_dir.to_owned(), detail: e.to_string() })?;
    let store =
        Store::open(&store_dir.join("retrieval-eval.sqlite3"), std::sync::Arc::new(pactwise_domain::SystemClock))?;
    let scope = scope(&store)?;

    // 1. The product's passages of every contract.
    let mut contracts: Vec<Contract> = Vec::new();
    let mut passage_count = 0;
    for (i, record) in labels[..take].iter().enumerate() {
        progress("passages", i, take);
        let text = read(&dir.join("contracts").join(format!("{}.txt", record.contract)))?;
        let new = NewDocument {
            name: record.contract.clone(),
            media_type: MediaType::Txt,
            size: text.len() as u64,
            content_hash: hex::encode(Sha256::digest(text.as_bytes())),
        };
        let (document, _) = store.documents().record(&scope, &new)?;
        let passages = store.passages();
        if !passages.is_indexed(&scope, document.id)? {
            let cut: Vec<NewPassage> = chunk::chunk_text(&text)
                .into_iter()
                .map(|(start, end, text)| NewPassage { page: 1, start, end, text })
                .collect();
            passages.replace(&scope, document.id, &cut)?;
        }
        let stored = passages.of_document(&scope, document.id)?;
        passage_count += stored.len();
        let mut relevant: HashMap<String, HashSet<i64>> = HashMap::new();
        for (category, spans) in &record.clauses {
            let ids: HashSet<i64> = stored
                .iter()
                .filter(|p| spans.iter().any(|s| (p.start as usize) < s.end && s.start < p.end as usize))
                .map(|p| p.id)
                .collect();
            if !ids.is_empty() {
                relevant.insert(category.clone(), ids);
            }
        }
        contracts.push(Contract { document: document.id, relevant });
    }

    // 2. Vectors for every passage (only the missing ones: the store is the cache).
    let (model_id, model_note) = match retriever.embedder() {
        Ok(e) => (Some(e.model_id().to_owned()), None),
        Err(reason) => (None, Some(reason)),
    };
    let started = Instant::now();
    let mut embedded_now = 0;
    if model_id.is_some() {
        let before = model_id.as_deref().map(|m| store.passages().vector_progress(&scope, m)).transpose()?;
        let missing = before.map(|p| (p.total - p.done) as usize).unwrap_or(0);
        while let Some(p) = retriever.embed_some(&store, &scope, 64)? {
            embedded_now = missing.saturating_sub((p.total - p.done) as usize);
            progress("vectors", embedded_now, missing);
        }
    }
    let embed_seconds = started.elapsed().as_secs_f64();
    let passages_per_second = (embedded_now > 0).then(|| embedded_now as f64 / embed_seconds);

    // 3. The index, built from the store as the product builds it.
    let (index_build_ms, index_bytes, stored_vector_bytes) = match &model_id {
        Some(m) => {
            let started = Instant::now();
            let index = retriever.org_index(&store, &scope, m)?;
            (
                started.elapsed().as_secs_f64() * 1000.0,
                index.size_bytes(),
                index.len() * pactwise_embed::Quantized::BYTES,
            )
        }
        None => (0.0, 0, 0),
    };
    let started = Instant::now();
    let word_index_bytes = retriever.word_index(&store, &scope)?.size();
    let word_index_build_ms = started.elapsed().as_secs_f64() * 1000.0;

    // 4. The searches.
    let modes: Vec<Mode> = if model_id.is_some() { Mode::ALL.to_vec() } else { vec![Mode::Bm25] };
    let mut within: HashMap<(Mode, usize), Vec<(f64, f64)>> = HashMap::new();
    let mut portfolio: HashMap<(Mode, usize), Vec<(f64, f64)>> = HashMap::new();
    for (mi, mode) in modes.iter().enumerate() {
        for (ci, contract) in contracts.iter().enumerate() {
            progress(
                &format!("within one contract ({})", mode.name()),
                mi * contracts.len() + ci,
                modes.len() * contracts.len(),
            );
            for (category, description) in &categories {
                let Some(relevant) = contract.relevant.get(category) else { continue };
                let found = retriever.search(&store, &scope, description, Some(contract.document), *mode, 10)?;
                let ids: Vec<i64> = found.hits.iter().map(|h| h.id).collect();
                let in_top3 = ids.iter().take(3).filter(|id| relevant.contains(id)).count();
                let recall = in_top3 as f64 / relevant.len().min(3) as f64;
                let rr = ids.iter().position(|id| relevant.contains(id)).map(|r| 1.0 / (r as f64 + 1.0)).unwrap_or(0.0);
                within.entry((*mode, ci % 2)).or_default().push((recall, rr));
            }
        }
        for (qi, (category, description)) in categories.iter().enumerate() {
            progress(
                &format!("portfolio ({})", mode.name()),
                mi * categories.len() + qi,
                modes.len() * categories.len(),
            );
            // A search the product has not run before: its query is embedded inside the time (the searches within
            // each contract above asked the same descriptions, so their vectors are known).
            retriever.forget_query_vectors();
            let started = Instant::now();
            let found = retriever.search(&store, &scope, description, None, *mode, crate::CANDIDATES)?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let position: HashMap<DocumentId, usize> =
                contracts.iter().enumerate().map(|(i, c)| (c.document, i)).collect();
            let mut ranked: Vec<usize> = Vec::new();
            for hit in &found.hits {
                if let Some(i) = position.get(&hit.document)
                    && !ranked.contains(i)
                {
                    ranked.push(*i);
                }
            }
            for half in 0..2 {
                let in_half: Vec<usize> = ranked.iter().copied().filter(|i| i % 2 == half).take(10).collect();
                let relevant_total = contracts
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| i % 2 == half && c.relevant.contains_key(category))
                    .count();
                if relevant_total == 0 {
                    continue;
                }
                let dcg: f64 = in_half
                    .iter()
                    .enumerate()
                    .filter(|(_, i)| contracts[**i].relevant.contains_key(category))
                    .map(|(r, _)| 1.0 / (r as f64 + 2.0).log2())
                    .sum();
                let ideal: f64 = (0..relevant_total.min(10)).map(|r| 1.0 / (r as f64 + 2.0).log2()).sum();
                portfolio.entry((*mode, half)).or_default().push((dcg / ideal, ms));
            }
        }
    }
    let figures = |halves: &[usize]| -> Vec<ModeFigures> {
        modes
            .iter()
            .map(|mode| {
                let w: Vec<(f64, f64)> =
                    halves.iter().flat_map(|h| within.get(&(*mode, *h)).cloned().unwrap_or_default()).collect();
                let p: Vec<(f64, f64)> =
                    halves.iter().flat_map(|h| portfolio.get(&(*mode, *h)).cloned().unwrap_or_default()).collect();
                let mut latencies: Vec<f64> = p.iter().map(|x| x.1).collect();
                latencies.sort_by(f64::total_cmp);
                ModeFigures {
                    mode: *mode,
                    pairs: w.len(),
                    recall_at_3: mean(&w.iter().map(|x| x.0).collect::<Vec<_>>()),
                    mrr: mean(&w.iter().map(|x| x.1).collect::<Vec<_>>()),
                    categories: p.len(),
                    ndcg_at_10: mean(&p.iter().map(|x| x.0).collect::<Vec<_>>()),
                    latency_p50_ms: percentile(&latencies, 0.50),
                    latency_p95_ms: percentile(&latencies, 0.95),
                }
            })
            .collect()
    };
    Ok(RetrievalReport {
        contracts: contracts.len(),
        passages: passage_count,
        model_id,
        model_note,
        embedded_now,
        embed_seconds,
        passages_per_second,
        index_build_ms,
        index_bytes,
        stored_vector_bytes,
        word_index_build_ms,
        word_index_bytes,
        all: figures(&[0, 1]),
        even: figures(&[0]),
        odd: figures(&[1]),
    })
}

/// The report as a table in words.
pub fn table(report: &RetrievalReport) -> String {
    let mut out = format!(
        "{} contracts, {} passages; model {}\n",
        report.contracts,
        report.passages,
        report.model_id.as_deref().unwrap_or("none (words only)")
    );
    if let Some(note) = &report.model_note {
        out.push_str(&format!("meaning-based search unavailable: {note}\n"));
    }
    match report.passages_per_second {
        Some(rate) => out.push_str(&format!(
            "embedded {} passages in {:.1} s ({rate:.1} passages/s)\n",
            report.embedded_now, report.embed_seconds
        )),
        None => out.push_str("every vector came from the store (no embedding this run)\n"),
    }
    out.push_str(&format!(
        "index: built in {:.0} ms, {:.1} MB in memory ({:.1} MB stored)\n",
        report.index_build_ms,
        report.index_bytes as f64 / 1e6,
        report.stored_vector_bytes as f64 / 1e6
    ));
    out.push_str(&format!(
        "word index: read in {:.0} ms, {:.1} MB in memory\n",
        report.word_index_build_ms,
        report.word_index_bytes as f64 / 1e6
    ));
    for (name, rows) in [("all", &report.all), ("even", &report.even), ("odd", &report.odd)] {
        out.push_str(&format!("\n{name:<5} mode    pairs  recall@3  MRR    | categories  nDCG@10 | p50 ms  p95 ms\n"));
        for f in rows {
            out.push_str(&format!(
                "      {:<7} {:>5}  {:>8.3}  {:.3}  | {:>10}  {:>7.3} | {:>6.1}  {:>6.1}\n",
                f.mode.name(),
                f.pairs,
                f.recall_at_3,
                f.mrr,
                f.categories,
                f.ndcg_at_10,
                f.latency_p50_ms,
                f.latency_p95_ms
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_keep_quoted_commas_and_doubled_quotes() {
        assert_eq!(csv_fields(r#"a,"b, c","d ""e""""#), vec!["a", "b, c", r#"d "e""#]);
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 2.0);
        assert_eq!(percentile(&v, 0.95), 4.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
