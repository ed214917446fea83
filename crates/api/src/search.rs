//! Search over the organization's contracts as a user action (`pactwise search`), and the background work that
//! prepares meaning-based search: sentence-embedding vectors for every passage still lacking one, computed in
//! batches on a blocking thread (the store is only touched to read the batch and to save it), with progress.

use crate::{Api, ApiError};
use pactwise_domain::{DocumentId, ErrorCode};
use pactwise_retrieval::Mode;
use pactwise_store::OrgScope;
use serde::{Deserialize, Serialize};

/// Passages embedded per batch (about a second of work on two cores).
const BATCH: u32 = 32;

/// One passage found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SearchHit {
    pub document_id: String,
    pub document: String,
    pub page: u32,
    pub start: u32,
    pub end: u32,
    pub excerpt: String,
}

/// What a search found, which retrieval ran and what a person should know about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SearchResults {
    /// "bm25", "dense" or "hybrid": the retrieval that ran.
    pub mode: String,
    pub hits: Vec<SearchHit>,
    /// In people's words (meaning-based search unavailable and why, how far it is prepared, a cut query).
    pub notes: Vec<String>,
}

/// How far meaning-based search is prepared for the organization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SemanticStatus {
    /// Every live passage has a vector of the installed model.
    pub ready: bool,
    /// The model could not be loaded (the message says why and what to do).
    pub unavailable: bool,
    pub done: u32,
    pub total: u32,
    /// In people's words, e.g. "Preparing meaning-based search: 120 of 400 passages".
    pub message: String,
}

impl SemanticStatus {
    fn from_progress(done: u32, total: u32) -> Self {
        let ready = done >= total;
        let message = if ready {
            "Meaning-based search is ready.".to_owned()
        } else {
            format!("Preparing meaning-based search: {done} of {total} passages")
        };
        SemanticStatus { ready, unavailable: false, done, total, message }
    }

    fn unavailable(reason: String) -> Self {
        SemanticStatus {
            ready: false,
            unavailable: true,
            done: 0,
            total: 0,
            message: format!("Meaning-based search is unavailable ({reason}); search matches words only."),
        }
    }
}

/// How long the local model stays in memory unused before an idle desktop releases it (about 100 MB). Loading it
/// again takes about half a second, once.
pub const MODEL_IDLE: std::time::Duration = std::time::Duration::from_secs(120);
/// How often a waiting desktop looks whether the model sits unused.
const MODEL_IDLE_CHECK: std::time::Duration = std::time::Duration::from_secs(30);

impl Api {
    /// Searches the organization's live contracts (or one of them) with the chosen retrieval.
    pub async fn search_passages(
        &self,
        scope: &OrgScope,
        query: &str,
        document: Option<&str>,
        mode: Mode,
        limit: usize,
    ) -> Result<SearchResults, ApiError> {
        let document: Option<DocumentId> = match document {
            Some(d) => Some(d.trim().parse().map_err(|_| {
                ApiError::new(
                    ErrorCode::InvalidInput,
                    format!("{d:?} is not a document id; copy it from `pactwise list`"),
                )
            })?),
            None => None,
        };
        if query.trim().is_empty() {
            return Err(ApiError::new(ErrorCode::InvalidInput, "the search is empty: give words to look for"));
        }
        let (s, q, retriever) = (scope.clone(), query.to_owned(), self.retriever.clone());
        self.use_voyage_if_configured().await;
        retriever.prepare_query(scope.org(), &q).await;
        let searched =
            self.db.call(move |store| retriever.search(store, &s, &q, document, mode, limit.clamp(1, 50))).await?;
        Ok(SearchResults {
            mode: searched.mode.name().to_owned(),
            hits: searched
                .hits
                .into_iter()
                .map(|h| SearchHit {
                    document_id: h.document.to_string(),
                    document: h.document_name,
                    page: h.page,
                    start: h.start,
                    end: h.end,
                    excerpt: h.text,
                })
                .collect(),
            notes: searched.notes,
        })
    }

    /// How far meaning-based search is prepared for the organization (loads the model only if it never loaded in
    /// this process: a released model stays released).
    pub async fn semantic_status(&self, scope: &OrgScope) -> Result<SemanticStatus, ApiError> {
        let lazy = self.retriever.lazy_embedder();
        let model = match tokio::task::spawn_blocking(move || lazy.model_id()).await {
            Ok(Ok(id)) => id,
            Ok(Err(reason)) => return Ok(SemanticStatus::unavailable(reason)),
            Err(e) => return Ok(SemanticStatus::unavailable(e.to_string())),
        };
        let s = scope.clone();
        let p = self.db.call(move |store| store.passages().vector_progress(&s, &model)).await?;
        Ok(SemanticStatus::from_progress(p.done, p.total))
    }

    /// Computes vectors for every passage of the organization (and of the precedent corpus) still lacking one, in
    /// batches, telling `on_progress` after each. One preparation runs at a time per process; a second call waits and
    /// then finds what the first left. Without the model, returns the status that says why (nothing fails).
    #[tracing::instrument(name = "prepare_semantic_search", skip_all)]
    pub async fn prepare_semantic_search(
        &self,
        scope: &OrgScope,
        on_progress: impl Fn(&SemanticStatus) + Send,
    ) -> Result<SemanticStatus, ApiError> {
        let _one_at_a_time = self.semantic_lock.lock().await;
        let lazy = self.retriever.lazy_embedder();
        let model = match tokio::task::spawn_blocking(move || lazy.model_id()).await {
            Ok(Ok(id)) => id,
            Ok(Err(reason)) => {
                let status = SemanticStatus::unavailable(reason);
                on_progress(&status);
                return Ok(status);
            }
            Err(e) => return Err(ApiError::new(ErrorCode::Internal, format!("the embedding model did not load: {e}"))),
        };
        // Loaded only when some passage lacks its vector: a start with nothing to do leaves the model on disk.
        let mut embedder: Option<std::sync::Arc<pactwise_embed::Embedder>> = None;
        // The organization's passages, then the precedent corpus's.
        for precedents in [false, true] {
            loop {
                let todo = self.lacking_vectors(scope, &model, precedents, BATCH).await?;
                if todo.is_empty() {
                    break;
                }
                let e = match &embedder {
                    Some(e) => e.clone(),
                    None => {
                        let retriever = self.retriever.clone();
                        match tokio::task::spawn_blocking(move || retriever.embedder()).await {
                            Ok(Ok(e)) => embedder.insert(e).clone(),
                            Ok(Err(reason)) => {
                                let status = SemanticStatus::unavailable(reason);
                                on_progress(&status);
                                return Ok(status);
                            }
                            Err(e) => {
                                return Err(ApiError::new(
                                    ErrorCode::Internal,
                                    format!("the embedding model did not load: {e}"),
                                ));
                            }
                        }
                    }
                };
                let count = todo.len();
                let vectors = tokio::task::spawn_blocking(move || pactwise_retrieval::vectors_for(&e, &todo))
                    .await
                    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("embedding stopped: {e}")))?
                    .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
                tracing::debug!(passages = count, precedents, "embedded a batch");
                let (s, m) = (scope.clone(), model.clone());
                let progress = self
                    .db
                    .call(move |store| {
                        let passages = store.passages();
                        if precedents {
                            passages.save_precedent_vectors(&m, &vectors)?;
                        } else {
                            passages.save_vectors(&s, &m, &vectors)?;
                        }
                        passages.vector_progress(&s, &m)
                    })
                    .await?;
                on_progress(&SemanticStatus::from_progress(progress.done, progress.total));
            }
        }
        // Voyage's vectors too, when it is configured (a failure leaves search on the local model, said at search time).
        if let Some(reason) = self.prepare_remote_vectors(scope).await? {
            tracing::warn!(%reason, "Voyage's vectors are not complete");
        }
        let status = self.semantic_status(scope).await?;
        on_progress(&status);
        Ok(status)
    }

    /// Wakes the background preparation (after an import, or when the session's organization changed): see
    /// [`Api::semantic_wake`].
    pub fn wake_semantic_search(&self) {
        self.semantic_wake.notify_one();
    }

    /// The next `batch` passages with no vector of `model`: the organization's (`precedents` false) or the
    /// precedent corpus's. One home for the local model's preparation and Voyage's.
    pub(crate) async fn lacking_vectors(
        &self,
        scope: &OrgScope,
        model: &str,
        precedents: bool,
        batch: u32,
    ) -> Result<Vec<pactwise_store::PassageToEmbed>, ApiError> {
        let (s, m) = (scope.clone(), model.to_owned());
        Ok(self
            .db
            .call(move |store| {
                let passages = store.passages();
                if precedents {
                    passages.precedents_lacking_vectors(&m, 0, batch)
                } else {
                    passages.lacking_vectors(&s, &m, 0, batch)
                }
            })
            .await?)
    }

    /// Resolves when passages may lack vectors (an import added some); the desktop then calls
    /// [`Api::prepare_semantic_search`]. While it waits, the local model is released once nothing has used it for
    /// [`MODEL_IDLE`], and the checklist library's compiled patterns once no review has for
    /// [`crate::review::COMPILED_PATTERNS_IDLE`] (looked at every [`MODEL_IDLE_CHECK`]), and with either the word
    /// indexes and the store's page cache; the next use loads them again.
    pub async fn semantic_wake(&self) {
        let mut checks = tokio::time::interval(MODEL_IDLE_CHECK);
        checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = self.semantic_wake.notified() => return,
                _ = checks.tick() => {
                    let now = std::time::Instant::now();
                    let model = self.retriever.lazy_embedder().release_if_idle(now, MODEL_IDLE);
                    let patterns = crate::review::release_compiled_catalog_if_idle(now, crate::review::COMPILED_PATTERNS_IDLE);
                    if model || patterns {
                        // The burst of work is over: the word indexes and the store's page cache go too.
                        self.retriever.release_word_indexes();
                        if let Err(e) = self.db.call(|store| store.release_memory()).await {
                            tracing::warn!(error = %e, "the store kept its page cache");
                        }
                    }
                }
            }
        }
    }
}

/// The retrieval benchmark on a CUAD folder (`pactwise eval retrieval`): its store (and so its vectors, the
/// embedding cache) lives in `store_dir`, kept between runs.
pub fn eval_retrieval(
    dir: &std::path::Path,
    store_dir: &std::path::Path,
    limit: Option<usize>,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<pactwise_retrieval::eval::RetrievalReport, ApiError> {
    let retriever = pactwise_retrieval::Retriever::new(std::sync::Arc::new(pactwise_embed::LazyEmbedder::new(
        pactwise_embed::default_model_dir(),
    )));
    pactwise_retrieval::eval::run(dir, store_dir, &retriever, limit, progress).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!(
                "{e}; give a CUAD folder with contracts/*.txt, labels.jsonl and category_descriptions.csv \
                 (e.g. ../shared/data/cuad)"
            ),
        )
    })
}
