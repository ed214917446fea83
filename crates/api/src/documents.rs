//! Importing, listing, deleting and restoring the organization's documents.

use crate::intake::{DEFAULT_MAX_IMPORT_BYTES, check_file, too_large};
use crate::review::StoreLog;
use crate::{Api, ApiError};
use pactwise_domain::{Document, DocumentId, ErrorCode, ImportOutcome};
use pactwise_pipeline::{Stage, StageLog, StageRecord};
use pactwise_store::{NewDocument, OrgScope, PutError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The setting key for the organization's import limit, in bytes.
pub const MAX_IMPORT_BYTES_SETTING: &str = "import.max_bytes";

#[derive(Clone, Default, Serialize, Deserialize, specta::Type)]
pub struct ImportOptions {
    /// Overrides the organization's import limit (bytes) for this import.
    pub max_bytes: Option<u64>,
    /// The password of protected PDFs in this import (`pactwise import --password`). Used to read the pages only:
    /// never serialized, logged or stored.
    #[serde(skip)]
    pub password: Option<String>,
}

impl std::fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("max_bytes", &self.max_bytes)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, specta::Type)]
pub struct DocumentQuery {
    /// List the trash (soft-deleted documents) instead of the live documents.
    pub deleted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ImportedDocument {
    /// The path as given.
    pub file: String,
    pub document: Document,
    pub outcome: ImportOutcome,
    /// Pages extracted and stored with the document (None when extraction failed).
    pub page_count: Option<u32>,
    /// Why the pages could not be extracted; the document is kept and can be extracted again.
    pub extraction_error: Option<ApiError>,
    /// Where the review gate sent the document (`person` or `auto`), once the pipeline ran.
    pub route: Option<String>,
    /// The gate's reason when it routed the document to a person.
    pub route_reason: Option<String>,
    /// Why the pipeline could not run; the document is kept and its pipeline resumes on the next run.
    pub review_error: Option<ApiError>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ImportFailure {
    pub file: String,
    pub error: ApiError,
}

/// Each file is imported on its own: a bad file is reported and does not stop the others.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, specta::Type)]
pub struct ImportReport {
    pub imported: Vec<ImportedDocument>,
    pub failed: Vec<ImportFailure>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ImportStage {
    Checking,
    Copying,
    /// Reading pages (text layer or OCR): `page` of `pages`.
    Extracting,
    /// Classifying, pre-filling the checklist and routing (the document pipeline).
    Reviewing,
    Done,
    Failed,
}

/// Progress of an import: file `index` (1-based) of `total`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ImportProgress {
    pub index: u32,
    pub total: u32,
    pub file: String,
    pub stage: ImportStage,
    /// While extracting: pages done and the page count (0 otherwise).
    pub page: u32,
    pub pages: u32,
}

impl Api {
    /// Imports files into the session's organization. Bytes are stored content-addressed; the same bytes twice give
    /// one document. Each file is checked before anything is written. A new document is recorded together with its
    /// pages in one transaction, so it becomes visible only with them; a file whose pages cannot be read is kept
    /// with the reason (reported here, and the review routes it to a person). Imports that a stopped process left
    /// unfinished are resumed first ([`Api::resume_imports`]).
    pub async fn import_documents(
        &self,
        scope: &OrgScope,
        paths: Vec<PathBuf>,
        options: ImportOptions,
        progress: &(dyn Fn(ImportProgress) + Send + Sync),
    ) -> Result<ImportReport, ApiError> {
        self.resume_imports(scope).await?;
        let max_bytes = match options.max_bytes {
            Some(limit) => limit,
            None => {
                let s = scope.clone();
                self.db
                    .call(move |store| store.settings().get::<u64>(&s, MAX_IMPORT_BYTES_SETTING))
                    .await?
                    .unwrap_or(DEFAULT_MAX_IMPORT_BYTES)
            }
        };
        let password = options.password.as_deref();
        let total = paths.len() as u32;
        let mut report = ImportReport::default();
        for (i, path) in paths.into_iter().enumerate() {
            let file = path.display().to_string();
            let tell_pages = |stage, page, pages| {
                progress(ImportProgress { index: i as u32 + 1, total, file: file.clone(), stage, page, pages })
            };
            let tell = |stage| tell_pages(stage, 0, 0);
            tell(ImportStage::Checking);
            match self.import_one(scope, &path, max_bytes, password, &tell_pages).await {
                Ok((document, outcome, pages)) => {
                    tracing::info!(file = %file, document = %document.id, ?outcome, "imported");
                    let (page_count, extraction_error, fresh) = match pages {
                        Ok((n, fresh)) => (Some(n), None, fresh),
                        Err(e) => {
                            tracing::warn!(file = %file, code = %e.code, "extraction failed; the document is kept");
                            (None, Some(e), false)
                        }
                    };
                    let (route, route_reason, review_error) = self.finish_import(scope, &document, fresh, &tell).await;
                    tell(ImportStage::Done);
                    report.imported.push(ImportedDocument {
                        file,
                        document,
                        outcome,
                        page_count,
                        extraction_error,
                        route,
                        route_reason,
                        review_error,
                    });
                }
                Err(error) => {
                    tracing::warn!(file = %file, code = %error.code, "import refused");
                    tell(ImportStage::Failed);
                    report.failed.push(ImportFailure { file, error });
                }
            }
        }
        Ok(report)
    }

    /// After a document's pages: its search passages, then its review (again from the start when its pages were
    /// read just now, so a review made without them — `ocr_failed` — does not stand). Returns the gate's route
    /// and reason, or why the review could not run.
    async fn finish_import(
        &self,
        scope: &OrgScope,
        document: &Document,
        fresh_pages: bool,
        tell: &(dyn Fn(ImportStage) + Send + Sync),
    ) -> (Option<String>, Option<String>, Option<ApiError>) {
        if let Err(e) = self.ensure_passages(scope, document.id).await {
            tracing::warn!(document = %document.id, code = %e.code, "the document could not be indexed for search");
        }
        tell(ImportStage::Reviewing);
        let rerun = fresh_pages.then_some(crate::Stage::Classify);
        match self.run_pipeline(scope, document.id, crate::ReviewMode::Auto, rerun).await {
            Ok(review) => {
                let gate = review.gate.as_ref();
                (gate.map(|g| g.route.clone()), gate.and_then(|g| g.reason.clone()), None)
            }
            Err(e) => {
                tracing::warn!(document = %document.id, code = %e.code, "the pipeline could not run; the document is kept");
                (None, None, Some(e))
            }
        }
    }

    /// Finishes the imports a stopped process left behind: live documents of the session's organization whose
    /// review never started get their pages (when missing) and their review now. Called before every import and
    /// by the desktop app at start. Returns the documents it finished.
    pub async fn resume_imports(&self, scope: &OrgScope) -> Result<Vec<DocumentId>, ApiError> {
        if !scope.role().can_edit_documents() {
            return Ok(Vec::new());
        }
        let s = scope.clone();
        let waiting = self.db.call(move |store| store.documents().awaiting_pipeline(&s)).await?;
        let mut resumed = Vec::new();
        for document in waiting {
            tracing::info!(document = %document.id, "resuming an import that did not finish");
            let fresh = match self.ensure_pages_with(scope, &document, None, &|_, _, _| {}).await {
                Ok((_, fresh)) => fresh,
                Err(e) => {
                    tracing::warn!(document = %document.id, code = %e.code, "its pages still cannot be read; kept");
                    false
                }
            };
            let (_, _, error) = self.finish_import(scope, &document, fresh, &|_| {}).await;
            if error.is_none() {
                resumed.push(document.id);
            }
        }
        Ok(resumed)
    }

    /// Stores the file's bytes and records the document: one already here (or in the trash) as it is, with its
    /// pages extracted if it has none; a new one only together with its pages. Returns the document, how it was
    /// recorded, and its page count with whether the pages were read just now (or why they cannot be read).
    #[allow(clippy::type_complexity)]
    async fn import_one(
        &self,
        scope: &OrgScope,
        path: &Path,
        max_bytes: u64,
        password: Option<&str>,
        tell: &(dyn Fn(ImportStage, u32, u32) + Send + Sync),
    ) -> Result<(Document, ImportOutcome, Result<(u32, bool), ApiError>), ApiError> {
        let (_, media_type) = check_file(path, max_bytes)?;
        if !scope.role().can_edit_documents() {
            // Before any extraction: the store would refuse the record anyway.
            return Err(pactwise_store::StoreError::Forbidden { role: scope.role() }.into());
        }
        tell(ImportStage::Copying, 0, 0);
        let blobs = self.blobs.clone();
        let source = path.to_path_buf();
        let stored = tokio::task::spawn_blocking(move || {
            let mut file = std::fs::File::open(&source).map_err(|e| {
                ApiError::new(ErrorCode::FileUnreadable, format!("{} cannot be opened ({e})", source.display()))
            })?;
            blobs.put_reader(&mut file, max_bytes).map_err(|e| match e {
                PutError::TooLarge { limit } => too_large(&source, limit + 1, limit),
                PutError::Io(e) => ApiError::from(e),
            })
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the import was interrupted ({e})")))??;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "document".into());
        let new = NewDocument { name, media_type, size: stored.size, content_hash: stored.hash };
        let (s, hash) = (scope.clone(), new.content_hash.clone());
        let known = self.db.call(move |store| store.documents().find_by_hash(&s, &hash)).await?;
        if known.is_none() {
            // The file this import has just stored: read it directly (the organization's ownership of it is
            // recorded with the document below).
            let blobs = self.blobs.clone();
            let hash = new.content_hash.clone();
            let bytes = tokio::task::spawn_blocking(move || blobs.read(&hash))
                .await
                .map_err(|e| ApiError::new(ErrorCode::Internal, format!("reading was interrupted ({e})")))?
                .map_err(ApiError::from)?;
            // The document is written with its pages, so the extract stage is recorded once it exists.
            let started = Instant::now();
            let extracted = self.extract_pages(bytes, media_type, password, tell).await;
            let latency = started.elapsed().as_millis() as u64;
            match extracted {
                Ok(pages) => {
                    let count = pages.pages.len() as u32;
                    let record = pactwise_pipeline::extract_record(1, &pages.pages, None, latency);
                    let s = scope.clone();
                    let (document, outcome) =
                        self.db.call(move |store| store.documents().record_with_pages(&s, &new, &pages)).await?;
                    StoreLog::new(self, scope, document.id).save(record).await?;
                    return Ok((document, outcome, Ok((count, true))));
                }
                Err(e) => {
                    // Kept with the reason: recorded without pages; the review routes it to a person.
                    let s = scope.clone();
                    let (document, outcome) = self.db.call(move |store| store.documents().record(&s, &new)).await?;
                    let record = pactwise_pipeline::extract_record(1, &[], Some(&e.message), latency);
                    StoreLog::new(self, scope, document.id).save(record).await?;
                    return Ok((document, outcome, Err(e)));
                }
            }
        }
        let s = scope.clone();
        let (document, outcome) = self.db.call(move |store| store.documents().record(&s, &new)).await?;
        let pages = self.ensure_pages_with(scope, &document, password, tell).await;
        Ok((document, outcome, pages))
    }

    /// Reads a file's pages (text layer, OCR) on a blocking thread, telling progress as page i of n.
    async fn extract_pages(
        &self,
        bytes: Vec<u8>,
        media_type: pactwise_domain::MediaType,
        password: Option<&str>,
        tell: &(dyn Fn(ImportStage, u32, u32) + Send + Sync),
    ) -> Result<pactwise_domain::page::ExtractedDocument, ApiError> {
        let (sender, mut updates) = tokio::sync::mpsc::unbounded_channel::<pactwise_domain::page::Progress>();
        let extractor = self.extractor.clone();
        let password = password.map(str::to_owned);
        let mut job = tokio::task::spawn_blocking(move || {
            let send = move |p: pactwise_domain::page::Progress| {
                let _ = sender.send(p);
            };
            let options = pactwise_extract::ExtractOptions {
                progress: &send,
                password: password.as_deref(),
                ..Default::default()
            };
            extractor
                .extract_bytes(&bytes, Some(media_type), &options)
                .map_err(|e| ApiError::new(e.code(), e.to_string()))
        });
        tell(ImportStage::Extracting, 0, 0);
        let extracted = loop {
            tokio::select! {
                Some(p) = updates.recv() => tell(ImportStage::Extracting, p.done, p.total),
                joined = &mut job => break joined,
            }
        };
        extracted.map_err(|e| ApiError::new(ErrorCode::Internal, format!("extraction was interrupted ({e})")))?
    }

    /// Extracts the document's pages and stores them with it, unless they are stored already (a document is
    /// extracted once). Returns the page count.
    pub(crate) async fn ensure_pages(
        &self,
        scope: &OrgScope,
        document: &Document,
        tell: &(dyn Fn(ImportStage, u32, u32) + Send + Sync),
    ) -> Result<u32, ApiError> {
        Ok(self.ensure_pages_with(scope, document, None, tell).await?.0)
    }

    /// [`Api::ensure_pages`] with a PDF password; also says whether the pages were read just now.
    async fn ensure_pages_with(
        &self,
        scope: &OrgScope,
        document: &Document,
        password: Option<&str>,
        tell: &(dyn Fn(ImportStage, u32, u32) + Send + Sync),
    ) -> Result<(u32, bool), ApiError> {
        let s = scope.clone();
        let id = document.id;
        if let Some(n) = self.db.call(move |store| store.pages().page_count(&s, id)).await? {
            return Ok((n, false));
        }
        // The extract stage, recorded through the document's stage log like every other stage: running, then the
        // pages read or why none could be.
        let mut log = StoreLog::new(self, scope, id);
        let attempt = pactwise_pipeline::next_attempt(&log.load().await?, Stage::Extract);
        log.save(StageRecord::running(Stage::Extract, attempt)).await?;
        let started = Instant::now();
        let extracted = match self.read_org_blob(scope, &document.content_hash).await {
            Ok(bytes) => self.extract_pages(bytes, document.media_type, password, tell).await,
            Err(e) => Err(e),
        };
        let latency = started.elapsed().as_millis() as u64;
        let extracted = match extracted {
            Ok(extracted) => extracted,
            Err(e) => {
                log.save(pactwise_pipeline::extract_record(attempt, &[], Some(&e.message), latency)).await?;
                return Err(e);
            }
        };
        let pages = extracted.pages.len() as u32;
        let s = scope.clone();
        let extracted = Arc::new(extracted);
        let saved = extracted.clone();
        self.db.call(move |store| store.pages().save(&s, id, &saved)).await?;
        log.save(pactwise_pipeline::extract_record(attempt, &extracted.pages, None, latency)).await?;
        // The structure is read once from the pages and kept beside them.
        self.structure_of(scope, id, Some(&extracted.pages)).await?;
        Ok((pages, true))
    }

    /// The stored pages of a live document of the session's organization (None: not extracted).
    pub async fn document_pages(
        &self,
        scope: &OrgScope,
        id: DocumentId,
    ) -> Result<Option<pactwise_domain::page::ExtractedDocument>, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.pages().load(&s, id)).await?)
    }

    pub async fn list_documents(&self, scope: &OrgScope, query: DocumentQuery) -> Result<Vec<Document>, ApiError> {
        let s = scope.clone();
        Ok(self
            .db
            .call(
                move |store| {
                    if query.deleted { store.documents().list_deleted(&s) } else { store.documents().list(&s) }
                },
            )
            .await?)
    }

    pub async fn get_document(&self, scope: &OrgScope, id: DocumentId) -> Result<Document, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.documents().get(&s, id)).await?)
    }

    /// Moves a document to the trash; it can be restored.
    pub async fn delete_document(&self, scope: &OrgScope, id: DocumentId) -> Result<Document, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.documents().soft_delete(&s, id)).await?)
    }

    pub async fn restore_document(&self, scope: &OrgScope, id: DocumentId) -> Result<Document, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.documents().restore(&s, id)).await?)
    }

    /// The stored bytes of a live document of the session's organization.
    pub async fn document_bytes(&self, scope: &OrgScope, id: DocumentId) -> Result<Vec<u8>, ApiError> {
        let doc = self.get_document(scope, id).await?;
        self.read_org_blob(scope, &doc.content_hash).await
    }
}

/// Parses a document id typed by a person, with a clear error.
pub fn parse_document_id(text: &str) -> Result<DocumentId, ApiError> {
    text.parse().map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("{text:?} is not a document id; list ids with `pactwise documents` (they look like 0193…-…)"),
        )
    })
}
