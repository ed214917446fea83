//! Retrieval, one home for every search the product runs over text: the passages a document is cut into
//! (`chunk`), a query's words (`query`), the in-memory word index of an organization's passages (`words`: BM25 over
//! the full-text index's own words), the in-memory dense index of stored sentence-embedding vectors (`dense`), and
//! [`Retriever`], which runs BM25 and dense search and fuses them by reciprocal rank fusion (k = 60). The precedent
//! corpus is ranked by words in SQL (FTS5), kept apart from every organization's.
//! Organization, document and deletion scoping are re-checked in SQL on the final hits, whatever index produced
//! them. When no vector can be used (model not installed, vectors still being computed) search is BM25 alone and the
//! outcome says why. The benchmark over a CUAD folder is `eval`.
//!
//! A remote model ([`RemoteVectors`]: Voyage's legal-domain model, when an organization configured it) may stand
//! beside the local one. Its vectors are stored beside the local model's (one per passage and model); a query is
//! embedded by it only in [`Retriever::prepare_query`], which async callers run before the search, so no network
//! call ever happens inside a search (which runs on the store's thread). When the remote model has no vector for the
//! query (unreachable, no key, budget spent) or none for the passages yet, the search uses the local model's
//! vectors and says so.

pub mod chunk;
mod dense;
pub mod eval;
pub mod query;
mod words;

pub use dense::DenseIndex;
pub use words::WordIndex;

use pactwise_domain::{DocumentId, OrgId};
use pactwise_embed::{Embedder, LazyEmbedder, Quantized};
use pactwise_store::{
    OrgScope, PassageHit, PassageToEmbed, PassageTokenizer, PrecedentHit, Store, StoreError, VectorProgress,
    VectorStamp, WriteMark,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The `k` of reciprocal rank fusion: a hit's fused score is the sum over lists of 1 / (k + rank).
pub const RRF_K: f64 = 60.0;
/// The dense list's weight in the fusion, BM25's being 1. Chosen by two-fold cross-validation on the retrieval
/// benchmark (bench/README.md): among 0.25, 0.5, 0.75 and 1, 0.25 had the best recall@3 on the even half and on the
/// odd half, and beat BM25 alone on the other half both ways (equal weights did worse than BM25).
pub const DENSE_WEIGHT: f64 = 0.25;
/// Hits taken from each list before fusing.
pub const CANDIDATES: usize = 50;
/// A query is cut to this many characters.
pub const MAX_QUERY_CHARS: usize = 2_000;
/// The similarity (cosine, 0 to 1 for related text) a passage needs for its contract to count as matching a search
/// by meaning in a filtered list (the Contracts area), where a ranking alone would list every contract.
pub const MEANING_MATCH: f32 = 0.5;
/// Query vectors kept (the same question asked again is not embedded again).
const QUERY_CACHE: usize = 512;

/// Which retrieval runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Words only (FTS5 BM25).
    Bm25,
    /// Meaning only (sentence-embedding vectors).
    Dense,
    /// Both, fused.
    #[default]
    Hybrid,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Bm25, Mode::Dense, Mode::Hybrid];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Bm25 => "bm25",
            Mode::Dense => "dense",
            Mode::Hybrid => "hybrid",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bm25" | "words" => Ok(Mode::Bm25),
            "dense" | "meaning" => Ok(Mode::Dense),
            "hybrid" => Ok(Mode::Hybrid),
            other => Err(format!("{other:?} is not a search mode: use bm25, dense or hybrid")),
        }
    }
}

/// What a search found, the retrieval that actually ran, and what a person should know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Searched<H> {
    pub hits: Vec<H>,
    /// The retrieval that ran (BM25 when meaning-based search could not).
    pub mode: Mode,
    /// In people's words: why meaning-based search did not run, how far it covers, a cut query.
    pub notes: Vec<String>,
    /// False when the query had nothing to search for (only common words or punctuation).
    pub searchable: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("meaning-based search is unavailable: {0}")]
    Unavailable(String),
    #[error("the passages could not be embedded: {0}")]
    Embed(#[from] pactwise_embed::EmbedError),
}

/// Which vectors an index holds: a corpus's, of one model.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Corpus {
    Organization(String, String),
    Precedents(String),
}

/// What a text is embedded as (a remote model embeds a query and a document differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Query,
    Document,
}

/// A dense index and a query vector of the same model.
type IndexAndQuery = (Arc<DenseIndex>, Arc<Vec<f32>>);

/// The dense side of one search once the store has been read: the index, and the query's vector or the model that
/// embeds it.
struct DenseQuery {
    index: Arc<DenseIndex>,
    vector: QueryVector,
}

enum QueryVector {
    /// Known already (the remote model embedded the query before the search).
    Ready(Arc<Vec<f32>>),
    /// To be embedded by the local model (or found among recent queries).
    Embed(Arc<Embedder>),
}

pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// A model run elsewhere (Voyage), reached asynchronously. Implemented by the api over `pactwise_model`'s client,
/// which prices every request in the organization's ledger under its budgets.
pub trait RemoteVectors: Send + Sync {
    /// Stored beside each vector; a different id means different vectors.
    fn model_id(&self) -> &str;
    /// The model's name as people read it.
    fn name(&self) -> &str;
    /// Unit-length vectors of `texts`, in order, for `org` (whose budget pays); the error in people's words.
    fn embed<'a>(
        &'a self,
        org: OrgId,
        texts: Vec<String>,
        kind: TextKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, String>>;
}

/// Hybrid retrieval for the process: one per `Api`, shared by the assistant, Prep Studio, the Contracts area and the
/// CLI. Holds the lazily loaded embedding model, one word index and one dense index per organization (and a dense
/// one for the precedent corpus), each read again from the store when what it holds changes, and recent query
/// vectors.
pub struct Retriever {
    embedder: Arc<LazyEmbedder>,
    /// The remote model, when one is configured.
    remote: std::sync::RwLock<Option<Arc<dyn RemoteVectors>>>,
    /// Why the remote model gave no vector for the last query it was asked about (for the search's note).
    remote_trouble: Mutex<Option<String>>,
    /// The dense list's weight in the fusion (BM25's is 1).
    dense_weight: f64,
    /// Each with the store's write mark when its stamp was last found current: while nothing is written, a search
    /// uses the index without reading the stamp again.
    indexes: Mutex<HashMap<Corpus, (Arc<DenseIndex>, WriteMark)>>,
    /// Each organization's word index, with the write mark as for `indexes`.
    words: Mutex<HashMap<String, (Arc<WordIndex>, WriteMark)>>,
    /// The passages' tokenizer for a query's words (opened on first use).
    tokenizer: Mutex<Option<PassageTokenizer>>,
    queries: Mutex<HashMap<String, Arc<Vec<f32>>>>,
}

/// The query a search runs: trimmed, cut to [`MAX_QUERY_CHARS`], with a note when it was cut.
fn prepare_query(query: &str, notes: &mut Vec<String>) -> String {
    let trimmed = query.trim();
    if trimmed.chars().count() > MAX_QUERY_CHARS {
        notes.push(format!("The search was cut to its first {MAX_QUERY_CHARS} characters."));
        trimmed.chars().take(MAX_QUERY_CHARS).collect()
    } else {
        trimmed.to_owned()
    }
}

/// Reciprocal rank fusion of ranked id lists: best first; ties go to the better best rank, then the lower id.
pub fn fuse(lists: &[&[i64]]) -> Vec<i64> {
    let weighted: Vec<(&[i64], f64)> = lists.iter().map(|l| (*l, 1.0)).collect();
    fuse_weighted(&weighted)
}

/// Reciprocal rank fusion with a weight per list: a hit's score is the sum of weight / (k + rank).
pub fn fuse_weighted(lists: &[(&[i64], f64)]) -> Vec<i64> {
    let mut scores: HashMap<i64, (f64, usize)> = HashMap::new();
    for (list, weight) in lists {
        for (rank, id) in list.iter().enumerate() {
            let entry = scores.entry(*id).or_insert((0.0, usize::MAX));
            entry.0 += weight / (RRF_K + rank as f64 + 1.0);
            entry.1 = entry.1.min(rank);
        }
    }
    let mut fused: Vec<(i64, f64, usize)> = scores.into_iter().map(|(id, (s, r))| (id, s, r)).collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
    fused.into_iter().map(|(id, _, _)| id).collect()
}

/// Vectors (stored form) for passages, by the given model.
pub fn vectors_for(embedder: &Embedder, passages: &[PassageToEmbed]) -> Result<Vec<(i64, Vec<u8>)>, RetrievalError> {
    let texts: Vec<&str> = passages.iter().map(|p| p.text.as_str()).collect();
    let vectors = embedder.embed_in_background(&texts)?;
    Ok(passages.iter().zip(vectors).map(|(p, v)| (p.id, Quantized::from_vector(&v).to_bytes())).collect())
}

impl Retriever {
    pub fn new(embedder: Arc<LazyEmbedder>) -> Self {
        Retriever {
            embedder,
            remote: std::sync::RwLock::new(None),
            remote_trouble: Mutex::new(None),
            dense_weight: DENSE_WEIGHT,
            indexes: Mutex::new(HashMap::new()),
            words: Mutex::new(HashMap::new()),
            tokenizer: Mutex::new(None),
            queries: Mutex::new(HashMap::new()),
        }
    }

    /// The same retriever with another weight for the dense list in the fusion (the benchmark compares weights).
    pub fn with_dense_weight(mut self, weight: f64) -> Self {
        self.dense_weight = weight;
        self
    }

    /// A retriever without an embedding model: words only (BM25), each search noting why. For tests of other parts
    /// and for tools that must not load the model.
    pub fn words_only() -> Self {
        Retriever::new(Arc::new(LazyEmbedder::new(std::path::PathBuf::from("/nonexistent/no-embedding-model"))))
    }

    /// The embedding model, loaded on first use (the reason in people's words when it cannot be).
    pub fn embedder(&self) -> Result<Arc<Embedder>, String> {
        self.embedder.get()
    }

    /// The shared lazy model, for callers that embed other text (the assistant's supporting sentences).
    pub fn lazy_embedder(&self) -> Arc<LazyEmbedder> {
        self.embedder.clone()
    }

    /// Sets (or, with `None`, removes) the remote model; searches use it from the next prepared query on.
    pub fn set_remote(&self, remote: Option<Arc<dyn RemoteVectors>>) {
        *self.remote.write().unwrap_or_else(|e| e.into_inner()) = remote;
    }

    /// The remote model, when one is configured.
    pub fn remote(&self) -> Option<Arc<dyn RemoteVectors>> {
        self.remote.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn cached_query(&self, model_id: &str, query: &str) -> Option<Arc<Vec<f32>>> {
        self.queries.lock().unwrap_or_else(|e| e.into_inner()).get(&format!("{model_id}\u{0}{query}")).cloned()
    }

    fn cache_query(&self, model_id: &str, query: &str, vector: Arc<Vec<f32>>) {
        let mut cache = self.queries.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= QUERY_CACHE {
            cache.clear();
        }
        cache.insert(format!("{model_id}\u{0}{query}"), vector);
    }

    /// Forgets the recent queries' vectors (the benchmark times a search whose query is new).
    pub(crate) fn forget_query_vectors(&self) {
        self.queries.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn query_vector(&self, embedder: &Embedder, query: &str) -> Result<Arc<Vec<f32>>, RetrievalError> {
        if let Some(v) = self.cached_query(embedder.model_id(), query) {
            return Ok(v);
        }
        let vector = Arc::new(embedder.embed_one(query)?);
        self.cache_query(embedder.model_id(), query, vector.clone());
        Ok(vector)
    }

    /// Embeds `query` by the remote model, if one is configured and has not embedded it yet, so the search that
    /// follows can use the remote model's vectors. Async callers run it before the search; a failure is kept for
    /// the search's note (the search then uses the local model). Nothing to do without a remote model.
    pub async fn prepare_query(&self, org: OrgId, query: &str) {
        let Some(remote) = self.remote() else { return };
        let query = prepare_query(query, &mut Vec::new());
        if query::match_expression(&query).is_none() || self.cached_query(remote.model_id(), &query).is_some() {
            return;
        }
        let trouble = match remote.embed(org, vec![query.clone()], TextKind::Query).await {
            Ok(mut vectors) if vectors.len() == 1 => {
                self.cache_query(remote.model_id(), &query, Arc::new(vectors.remove(0)));
                None
            }
            Ok(_) => Some("its reply had no vector for the search".to_owned()),
            Err(reason) => Some(reason),
        };
        if let Some(reason) = &trouble {
            tracing::warn!(model = remote.model_id(), "the remote model did not embed the query");
            tracing::debug!(%reason);
        }
        *self.remote_trouble.lock().unwrap_or_else(|e| e.into_inner()) = trouble;
    }

    /// The remote model's index and query vector for `query`, when both exist; otherwise `None` with a note on why
    /// the local model is used instead (none when no remote model is configured).
    fn remote_query(
        &self,
        query: &str,
        index: &dyn Fn(&str) -> Result<Arc<DenseIndex>, StoreError>,
        notes: &mut Vec<String>,
    ) -> Result<Option<IndexAndQuery>, StoreError> {
        let Some(remote) = self.remote() else { return Ok(None) };
        let Some(vector) = self.cached_query(remote.model_id(), query) else {
            let why = self
                .remote_trouble
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_else(|| "it was not asked".to_owned());
            notes.push(format!("{} did not read this search ({why}); the local model was used.", remote.name()));
            return Ok(None);
        };
        let index = index(remote.model_id())?;
        if index.is_empty() {
            notes.push(format!(
                "{}'s vectors are still being prepared; the local model was used for this search.",
                remote.name()
            ));
            return Ok(None);
        }
        if let Some(c) = index.coverage
            && c.done < c.total
        {
            notes.push(format!("{} covers {} of {} passages so far.", remote.name(), c.done, c.total));
        }
        Ok(Some((index, vector)))
    }

    /// The organization's dense index for `model_id`, read again from the store when its vectors changed. Damaged
    /// rows are forgotten so the background work computes them again.
    pub fn org_index(&self, store: &Store, scope: &OrgScope, model_id: &str) -> Result<Arc<DenseIndex>, StoreError> {
        let key = Corpus::Organization(scope.org().to_string(), model_id.to_owned());
        let passages = store.passages();
        self.index(
            store,
            key,
            || passages.vector_stamp(scope, model_id),
            |stamp| {
                let span = tracing::info_span!("dense_index_build", rows = stamp.rows);
                let _enter = span.enter();
                let coverage = passages.vector_progress(scope, model_id)?;
                let rows =
                    passages.load_vectors(scope, model_id)?.into_iter().map(|v| (v.passage, Some(v.document), v.bytes));
                let (mut index, damaged) = DenseIndex::build(model_id, stamp, Some(coverage), rows);
                if !damaged.is_empty() {
                    tracing::warn!(
                        count = damaged.len(),
                        "damaged stored vectors left out; they will be computed again"
                    );
                    passages.forget_vectors(scope, model_id, &damaged)?;
                    index.stamp = passages.vector_stamp(scope, model_id)?;
                    index.coverage = Some(passages.vector_progress(scope, model_id)?);
                }
                Ok(index)
            },
        )
    }

    /// The organization's word index: the one held when nothing was written since it was last found current, or
    /// when the organization's passages did not change; otherwise read again. One read inside an open transaction
    /// (which may be rolled back) is used once and not kept.
    pub fn word_index(&self, store: &Store, scope: &OrgScope) -> Result<Arc<WordIndex>, StoreError> {
        let org = scope.org().to_string();
        let mark = store.write_mark()?;
        let held = self.words.lock().unwrap_or_else(|e| e.into_inner()).get(&org).cloned();
        if let Some((index, seen)) = &held
            && *seen == mark
        {
            return Ok(index.clone());
        }
        let passages = store.passages();
        let version = passages.word_version(scope)?;
        let index = match held {
            Some((index, _)) if index.version == version => index,
            _ => {
                let span = tracing::info_span!("word_index_build");
                let _enter = span.enter();
                let mut builder = words::WordIndexBuilder::new();
                let read = passages.passage_words(scope, &mut |word, at| builder.add(word, at))?;
                let index = Arc::new(builder.finish(read));
                tracing::info!(passages = index.len(), bytes = index.size(), "word index read");
                index
            }
        };
        if store.in_transaction() {
            return Ok(index);
        }
        self.words.lock().unwrap_or_else(|e| e.into_inner()).insert(org, (index.clone(), mark));
        Ok(index)
    }

    /// Gives back the word indexes' memory (the next search reads its organization's again).
    pub fn release_word_indexes(&self) {
        self.words.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The word index's words of a query's `terms` (stemmed as the passages' index stems them, each once).
    fn index_words(&self, terms: &[String]) -> Result<Vec<String>, StoreError> {
        let mut tokenizer = self.tokenizer.lock().unwrap_or_else(|e| e.into_inner());
        if tokenizer.is_none() {
            *tokenizer = Some(PassageTokenizer::new()?);
        }
        let Some(tokenizer) = tokenizer.as_ref() else { return Ok(Vec::new()) };
        tokenizer.tokens(&terms.join(" "))
    }

    fn precedent_index(&self, store: &Store, model_id: &str) -> Result<Arc<DenseIndex>, StoreError> {
        let passages = store.passages();
        self.index(
            store,
            Corpus::Precedents(model_id.to_owned()),
            || passages.precedent_vector_stamp(model_id),
            |stamp| {
                let rows = passages.load_precedent_vectors(model_id)?.into_iter().map(|v| (v.passage, None, v.bytes));
                let (mut index, damaged) = DenseIndex::build(model_id, stamp, None, rows);
                if !damaged.is_empty() {
                    tracing::warn!(
                        count = damaged.len(),
                        "damaged precedent vectors left out; they will be computed again"
                    );
                    passages.forget_precedent_vectors(model_id, &damaged)?;
                    index.stamp = passages.precedent_vector_stamp(model_id)?;
                }
                Ok(index)
            },
        )
    }

    /// The index of `key`: the one held when nothing was written since its stamp was last checked, or when the
    /// stamp is unchanged; otherwise built again.
    fn index(
        &self,
        store: &Store,
        key: Corpus,
        stamp: impl FnOnce() -> Result<VectorStamp, StoreError>,
        build: impl FnOnce(VectorStamp) -> Result<DenseIndex, StoreError>,
    ) -> Result<Arc<DenseIndex>, StoreError> {
        let mark = store.write_mark()?;
        let held = self.indexes.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
        if let Some((index, seen)) = &held
            && *seen == mark
        {
            return Ok(index.clone());
        }
        let stamp = stamp()?;
        let index = match held {
            Some((index, _)) if index.stamp == stamp => index,
            _ => Arc::new(build(stamp)?),
        };
        // The mark from before the stamp was read: a write since (forgetting damaged rows, another process's
        // commit) has the next search read the stamp again.
        self.indexes.lock().unwrap_or_else(|e| e.into_inner()).insert(key, (index.clone(), mark));
        Ok(index)
    }

    /// Everything the dense side of a search reads from the store (the index, and the remote model's query vector
    /// when it has one), or `None` with a note saying why there is no dense list.
    fn dense_query(
        &self,
        query: &str,
        index: impl Fn(&str) -> Result<Arc<DenseIndex>, StoreError>,
        notes: &mut Vec<String>,
    ) -> Result<Option<DenseQuery>, StoreError> {
        if let Some((index, vector)) = self.remote_query(query, &index, notes)? {
            return Ok(Some(DenseQuery { index, vector: QueryVector::Ready(vector) }));
        }
        let embedder = match self.embedder.get() {
            Ok(e) => e,
            Err(reason) => {
                notes.push(format!("Meaning-based search is unavailable ({reason}); these results match words only."));
                return Ok(None);
            }
        };
        let index = index(embedder.model_id())?;
        if index.is_empty() {
            let how_far =
                index.coverage.map(|c| format!(" ({} of {} passages prepared)", c.done, c.total)).unwrap_or_default();
            notes.push(format!(
                "Meaning-based search is still being prepared{how_far}; these results match words only."
            ));
            return Ok(None);
        }
        if let Some(c) = index.coverage
            && c.done < c.total
        {
            notes.push(format!("Meaning-based search covers {} of {} passages so far.", c.done, c.total));
        }
        Ok(Some(DenseQuery { index, vector: QueryVector::Embed(embedder) }))
    }

    /// The dense ranking of `dense`: embeds the query when its vector is not known yet, then scans the index. Reads
    /// nothing from the store, so it can run beside the BM25 query. The error is the note for the person.
    fn dense_ranking(&self, dense: &DenseQuery, query: &str, document: Option<DocumentId>) -> Result<Vec<i64>, String> {
        let span = tracing::info_span!("dense_ranking", rows = dense.index.len());
        let _enter = span.enter();
        let vector = match &dense.vector {
            QueryVector::Ready(v) => v.clone(),
            QueryVector::Embed(embedder) => self.query_vector(embedder, query).map_err(|e| {
                format!("The search could not be read for meaning ({e}); these results match words only.")
            })?,
        };
        Ok(dense.index.top(&vector, document, CANDIDATES).into_iter().map(|(id, _)| id).collect())
    }

    /// The ranking `mode` asks for and the retrieval that ran: BM25 (`words`), the dense list, or both fused. In
    /// hybrid, the query is embedded and the vectors scanned on a second thread while SQLite ranks by words on this
    /// one, so the search takes about as long as the slower of the two rather than both. Without a dense list
    /// (`dense` is `None`, or embedding the query failed: a note says why) the ranking is BM25's.
    fn ranking(
        &self,
        mode: Mode,
        query: &str,
        document: Option<DocumentId>,
        dense: Option<DenseQuery>,
        words: impl FnOnce() -> Result<Vec<i64>, StoreError>,
        notes: &mut Vec<String>,
    ) -> Result<(Vec<i64>, Mode), StoreError> {
        let dense = match (mode, dense) {
            (Mode::Bm25, _) | (_, None) => return Ok((words()?, Mode::Bm25)),
            (_, Some(dense)) => dense,
        };
        if mode == Mode::Dense {
            return match self.dense_ranking(&dense, query, document) {
                Ok(meaning) => Ok((meaning, Mode::Dense)),
                Err(note) => {
                    notes.push(note);
                    Ok((words()?, Mode::Bm25))
                }
            };
        }
        let (words, meaning) = std::thread::scope(|s| {
            let meaning = s.spawn(|| self.dense_ranking(&dense, query, document));
            let words = words();
            let meaning = meaning
                .join()
                .unwrap_or_else(|_| Err("Meaning-based search failed; these results match words only.".to_owned()));
            (words, meaning)
        });
        let words = words?;
        match meaning {
            Ok(meaning) => Ok((fuse_weighted(&[(&words, 1.0), (&meaning, self.dense_weight)]), Mode::Hybrid)),
            Err(note) => {
                notes.push(note);
                Ok((words, Mode::Bm25))
            }
        }
    }

    /// Searches the organization's live contracts (optionally one document): BM25, dense or both fused. The final
    /// hits are read back through the store with the caller's scope, so nothing of another organization or of a
    /// deleted document is returned, whatever an index held.
    pub fn search(
        &self,
        store: &Store,
        scope: &OrgScope,
        query: &str,
        document: Option<DocumentId>,
        mode: Mode,
        limit: usize,
    ) -> Result<Searched<PassageHit>, StoreError> {
        let span = tracing::info_span!("retrieval_search", mode = mode.name(), document = document.is_some());
        let _enter = span.enter();
        let mut notes = Vec::new();
        let query = prepare_query(query, &mut notes);
        let Some(terms) = query::terms(&query) else {
            notes.push(
                "The search has no words to look for (only common words or punctuation): use words that appear in \
                 contracts."
                    .into(),
            );
            return Ok(Searched { hits: Vec::new(), mode, notes, searchable: false });
        };
        let passages = store.passages();
        let words = self.index_words(&terms)?;
        let bm25 = || -> Result<Vec<i64>, StoreError> {
            // Passages with every word first, then passages with any word.
            let index = self.word_index(store, scope)?;
            let deleted = passages.deleted_documents(scope)?;
            Ok(index.rank(&words, document, &deleted, CANDIDATES))
        };
        let dense = match mode {
            Mode::Bm25 => None,
            Mode::Dense | Mode::Hybrid => {
                self.dense_query(&query, |model| self.org_index(store, scope, model), &mut notes)?
            }
        };
        let (ranked, ran) = self.ranking(mode, &query, document, dense, bm25, &mut notes)?;
        let ids: Vec<i64> = ranked.into_iter().take(limit).collect();
        let hits = passages.passages_by_id(scope, &ids, document)?;
        Ok(Searched { hits, mode: ran, notes, searchable: true })
    }

    /// The organization's live contracts with a passage at least [`MEANING_MATCH`] similar to `query`, best first,
    /// at most `limit`; empty when meaning-based search cannot run (the list then matches words only).
    pub fn documents_by_meaning(
        &self,
        store: &Store,
        scope: &OrgScope,
        query: &str,
        limit: usize,
    ) -> Result<Vec<DocumentId>, StoreError> {
        let mut notes = Vec::new();
        let query = prepare_query(query, &mut notes);
        if query::match_expression(&query).is_none() {
            return Ok(Vec::new());
        }
        let (index, vector) =
            match self.remote_query(&query, &|model| self.org_index(store, scope, model), &mut notes)? {
                Some(found) => found,
                None => {
                    let Ok(embedder) = self.embedder.get() else { return Ok(Vec::new()) };
                    let index = self.org_index(store, scope, embedder.model_id())?;
                    let Ok(vector) = self.query_vector(&embedder, &query) else { return Ok(Vec::new()) };
                    (index, vector)
                }
            };
        let mut documents: Vec<DocumentId> = Vec::new();
        for (id, similarity) in index.top(&vector, None, CANDIDATES * 4) {
            if similarity < MEANING_MATCH {
                break;
            }
            if let Some(d) = index.document_of(id)
                && !documents.contains(&d)
            {
                documents.push(d);
                if documents.len() == limit {
                    break;
                }
            }
        }
        Ok(documents)
    }

    /// Searches the precedent corpus (never an organization's contracts), BM25, dense or both fused; with
    /// `public_only`, only public texts (drafting's grounding).
    pub fn search_precedents(
        &self,
        store: &Store,
        query: &str,
        mode: Mode,
        limit: usize,
        public_only: bool,
    ) -> Result<Searched<PrecedentHit>, StoreError> {
        let span = tracing::info_span!("retrieval_precedents", mode = mode.name());
        let _enter = span.enter();
        let mut notes = Vec::new();
        let query = prepare_query(query, &mut notes);
        let Some(any_terms) = query::match_expression(&query) else {
            notes.push("The search has no words to look for (only common words or punctuation).".into());
            return Ok(Searched { hits: Vec::new(), mode, notes, searchable: false });
        };
        let passages = store.passages();
        let bm25 = || -> Result<Vec<i64>, StoreError> {
            Ok(passages.search_precedents(&any_terms, CANDIDATES as u32)?.iter().map(|h| h.id).collect())
        };
        let dense = match mode {
            Mode::Bm25 => None,
            Mode::Dense | Mode::Hybrid => {
                self.dense_query(&query, |model| self.precedent_index(store, model), &mut notes)?
            }
        };
        let (ranked, ran) = self.ranking(mode, &query, None, dense, bm25, &mut notes)?;
        // Over-fetch so that hits dropped by the final check (a competitor's bid) do not shorten the list.
        let ids: Vec<i64> = ranked.into_iter().take(limit * 3).collect();
        let mut hits = passages.precedents_by_id(&ids, public_only)?;
        hits.truncate(limit);
        Ok(Searched { hits, mode: ran, notes, searchable: true })
    }

    /// Computes and stores vectors for up to `batch` of the organization's passages still lacking one; returns how
    /// far the organization is afterwards. `Ok(None)` when nothing was left to do.
    pub fn embed_some(
        &self,
        store: &Store,
        scope: &OrgScope,
        batch: u32,
    ) -> Result<Option<VectorProgress>, RetrievalError> {
        let embedder = self.embedder.get().map_err(RetrievalError::Unavailable)?;
        let passages = store.passages();
        let todo = passages.lacking_vectors(scope, embedder.model_id(), 0, batch)?;
        if todo.is_empty() {
            return Ok(None);
        }
        let span = tracing::info_span!("embed_batch", passages = todo.len());
        let _enter = span.enter();
        let vectors = vectors_for(&embedder, &todo)?;
        passages.save_vectors(scope, embedder.model_id(), &vectors)?;
        Ok(Some(passages.vector_progress(scope, embedder.model_id())?))
    }

    /// Like [`Retriever::embed_some`], for the precedent corpus.
    pub fn embed_some_precedents(&self, store: &Store, batch: u32) -> Result<bool, RetrievalError> {
        let embedder = self.embedder.get().map_err(RetrievalError::Unavailable)?;
        let passages = store.passages();
        let todo = passages.precedents_lacking_vectors(embedder.model_id(), 0, batch)?;
        if todo.is_empty() {
            return Ok(false);
        }
        let vectors = vectors_for(&embedder, &todo)?;
        passages.save_precedent_vectors(embedder.model_id(), &vectors)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_rewards_agreement_and_keeps_what_one_list_alone_found() {
        let bm25 = [1, 2, 3];
        let dense = [3, 4, 1];
        let fused = fuse(&[&bm25, &dense]);
        assert_eq!(fused[0], 1, "first and third beats any single list's first");
        assert_eq!(fused[1], 3);
        assert_eq!(fused.len(), 4);
        assert!(fused.contains(&2) && fused.contains(&4));
        assert_eq!(fuse(&[&[7, 8]]), vec![7, 8], "one list keeps its order");
    }

    #[test]
    fn modes_parse_from_words_and_refuse_others_clearly() {
        assert_eq!("Hybrid".parse::<Mode>(), Ok(Mode::Hybrid));
        assert_eq!("bm25".parse::<Mode>(), Ok(Mode::Bm25));
        assert!("fuzzy".parse::<Mode>().unwrap_err().contains("bm25, dense or hybrid"));
    }

    #[test]
    fn a_long_query_is_cut_with_a_note() {
        let mut notes = Vec::new();
        let q = prepare_query(&"termination ".repeat(400), &mut notes);
        assert_eq!(q.chars().count(), MAX_QUERY_CHARS);
        assert_eq!(notes.len(), 1);
        let mut none = Vec::new();
        assert_eq!(prepare_query("  cap  ", &mut none), "cap");
        assert!(none.is_empty());
    }
}
