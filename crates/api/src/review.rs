//! The document pipeline as the people using it see it: reviewing a file without keeping it, running (or resuming)
//! the pipeline of an imported document, the review queue, corrections, the gate's thresholds and the
//! organization's own names. The store-backed [`StoreLog`] keeps each stage's record, so a killed process resumes
//! from the last finished stage.

use crate::workspace::{TextSpan, quote_span};
use crate::{Api, ApiError};
use pactwise_checklists::{Catalog, SharedCatalog};
use pactwise_domain::{
    Classification, Clock, DocumentId, ErrorCode, Extractions, GateDecision, ItemFinding, ItemStatus, Page, Quote,
    RejectedExtraction, Value,
};
use pactwise_model::{CallContext, ModelStatus};
use pactwise_pipeline::evidence::QuoteWarning;
use pactwise_pipeline::{
    ChecklistSummary, ContractPlan, FinalizeOutput, ItemCorrection, Mode, PipelineReport, Runner, Stage, StageLog,
    StageRecord, StageStatus, THRESHOLDS_KEY, Thresholds,
};
use pactwise_store::{Db, NewCorrection, OrgScope, StageRow, VendorDecision};
use pactwise_structure::{DocumentStructure, STRUCTURE_VERSION};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The settings key of the organization's own names and aliases (never taken as the counterparty).
pub const OWN_NAMES_KEY: &str = "organization.aliases";

/// The embedded checklist library, loaded once per process.
static CATALOG: OnceLock<Result<SharedCatalog, String>> = OnceLock::new();

/// How long the checklist library's compiled patterns stay in memory unused before an idle desktop drops them: a
/// review compiles about 240 MB of them (the clause signals of every CUAD category and the contract type's items);
/// compiling them again takes about a second of the next review.
pub const COMPILED_PATTERNS_IDLE: std::time::Duration = std::time::Duration::from_secs(120);

/// The embedded checklist library (loaded on first use, then shared).
pub fn catalog() -> Result<Arc<Catalog>, ApiError> {
    CATALOG
        .get_or_init(|| Catalog::load().map(SharedCatalog::new).map_err(|e| e.to_string()))
        .as_ref()
        .map(SharedCatalog::get)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the checklist library is broken: {e}")))
}

/// Drops the library's compiled patterns when no review has used it for `idle` before `now`
/// ([`SharedCatalog::release_compiled_if_idle`]). Returns whether they were dropped.
pub fn release_compiled_catalog_if_idle(now: std::time::Instant, idle: std::time::Duration) -> bool {
    CATALOG
        .get()
        .and_then(|loaded| loaded.as_ref().ok())
        .is_some_and(|shared| shared.release_compiled_if_idle(now, idle))
}

/// Scores the offline review on a labelled CUAD folder (`contracts/*.txt` and `labels.jsonl`; the first `limit`
/// contracts when given). Reads the folder and keeps nothing.
pub fn eval_cuad(dir: &std::path::Path, limit: Option<usize>) -> Result<pactwise_pipeline::eval::CuadReport, ApiError> {
    let catalog = catalog()?;
    pactwise_pipeline::eval::cuad(&catalog, dir, limit).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("{e}; give a CUAD folder with contracts/*.txt and labels.jsonl (e.g. ../shared/data/cuad)"),
        )
    })
}

/// How `review` reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ReviewMode {
    /// The model when it is available, rules otherwise.
    Auto,
    Offline,
    DryRun,
}

/// The type as shown: id, name, confidence and how it was chosen.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ReviewType {
    pub id: String,
    pub name: String,
    pub confidence: f32,
    /// `model` or `keyword`.
    pub method: String,
    pub reason: String,
}

/// One item as shown (the CLI contract's shape): `quote` is always a verified quote or null.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ReviewItem {
    pub id: String,
    pub section: String,
    pub question: String,
    pub risk: String,
    pub status: ItemStatus,
    pub confidence: f32,
    pub quote: Option<String>,
    pub page: Option<u32>,
    /// Where the quote stands on its page (character offsets into the page's text), found by the backend; null
    /// without a quote, or when the page no longer holds it.
    pub quote_span: Option<TextSpan>,
    pub verified: bool,
    /// The value the item's quote states, in people's words ("1 September 2045", "90 days"), and normalised.
    pub value: Option<String>,
    pub normalized: Option<Value>,
    /// What may be wrong with the quote as this item's evidence (the table of contents, a definition, a section
    /// about something else), each with its reason; Confirm asks the person to weigh them.
    pub warnings: Vec<QuoteWarning>,
    /// `model`, `rules` or `person`.
    pub method: String,
    pub reason: Option<String>,
    pub red_flags: Vec<String>,
    /// The latest person's note, who confirmed or corrected the item and when (RFC 3339).
    pub note: Option<String>,
    pub confirmed_by: Option<String>,
    pub confirmed_at: Option<String>,
}

/// A stage's record as shown.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ReviewStage {
    pub stage: String,
    pub status: String,
    pub attempt: u32,
    pub model: Option<String>,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub cache_read_tokens: u32,
    pub latency_ms: u64,
    pub outcome: Option<String>,
    pub reason: Option<String>,
}

/// The gate's decision as the CLI contract has it: `route` and `reason` (null when auto), with a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ReviewGate {
    pub route: String,
    pub reason: Option<String>,
    pub detail: String,
}

/// A document's review: what `pactwise review --json` prints and what the review view shows.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct DocumentReview {
    pub file: Option<String>,
    pub document: Option<DocumentId>,
    #[serde(rename = "type")]
    pub contract_type: Option<ReviewType>,
    pub items: Vec<ReviewItem>,
    pub rejected: Vec<RejectedExtraction>,
    pub gate: Option<ReviewGate>,
    pub extractions: Extractions,
    pub counterparty: Option<String>,
    pub vendor_match: Option<String>,
    pub summary: Option<ChecklistSummary>,
    pub stages: Vec<ReviewStage>,
    /// `model`, `offline` or `dry_run`.
    pub mode: String,
    /// In a dry run: the model calls a model run would make (0 when no model is available).
    pub planned_model_calls: Option<u32>,
    /// The stage the pipeline stopped at, if one failed.
    pub halted_at: Option<String>,
    /// The vendor linked to the contract and whether a person set the link.
    pub vendor: Option<String>,
    pub vendor_link: Option<String>,
    pub finalized_by: Option<String>,
    pub finalized_at: Option<String>,
}

/// A document in the review queue.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct QueueEntry {
    pub document: DocumentId,
    pub name: String,
    pub imported_at: String,
    pub reason: Option<String>,
    pub detail: String,
    pub type_id: Option<String>,
    pub type_name: Option<String>,
    pub type_confidence: Option<f32>,
    pub red_flags: u32,
    pub critical_unsure: u32,
    pub not_evaluated: u32,
    pub min_confidence: Option<f32>,
}

/// A person's confirmation or correction of one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CorrectionInput {
    pub item_id: String,
    /// Confirm the pre-filled answer as it is (`status` and `quote` are then taken from it).
    pub confirm: bool,
    pub status: Option<ItemStatus>,
    /// Text selected in the contract; verified on its page before it is saved.
    pub quote: Option<Quote>,
    pub note: Option<String>,
    /// The person has read the warnings about the quote and keeps it (recorded with the correction).
    #[serde(default)]
    pub acknowledge_warnings: bool,
}

/// Stage records kept in the store, scoped to the session's organization.
pub struct StoreLog {
    db: Db,
    scope: OrgScope,
    document: DocumentId,
    clock: Arc<dyn Clock>,
}

impl StageLog for StoreLog {
    type Error = ApiError;

    async fn load(&mut self) -> Result<Vec<StageRecord>, ApiError> {
        let (s, id) = (self.scope.clone(), self.document);
        let rows = self.db.call(move |store| store.reviews().stages(&s, id)).await?;
        Ok(rows.into_iter().filter_map(record_from_row).collect())
    }

    async fn save(&mut self, record: StageRecord) -> Result<(), ApiError> {
        let (s, id) = (self.scope.clone(), self.document);
        let row = StageRow {
            stage: record.stage.as_str().into(),
            status: record.status.as_str().into(),
            attempt: record.attempt,
            model: record.model,
            input_tokens: u64::from(record.tokens.input)
                + u64::from(record.tokens.cache_write_5m)
                + u64::from(record.tokens.cache_write_1h),
            output_tokens: record.tokens.output.into(),
            cache_read_tokens: record.tokens.cache_read.into(),
            latency_ms: record.latency_ms,
            outcome: record.outcome,
            reason: record.reason,
            output: record.output,
            updated_at: self.clock.now(),
        };
        Ok(self.db.call(move |store| store.reviews().save_stage(&s, id, &row)).await?)
    }

    async fn clear(&mut self, stages: Vec<Stage>) -> Result<(), ApiError> {
        let (s, id) = (self.scope.clone(), self.document);
        Ok(self
            .db
            .call(move |store| {
                let names: Vec<&str> = stages.iter().map(|s| s.as_str()).collect();
                store.reviews().clear_stages(&s, id, &names)
            })
            .await?)
    }

    async fn corrections(&mut self) -> Result<Vec<ItemCorrection>, ApiError> {
        let (s, id) = (self.scope.clone(), self.document);
        let rows = self.db.call(move |store| store.reviews().corrections(&s, id)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|c| {
                Some(ItemCorrection {
                    item_id: c.item_id,
                    status: ItemStatus::parse(&c.status)?,
                    quote: c.quote.map(|(text, page)| Quote { text, page }),
                    note: c.note,
                })
            })
            .collect())
    }

    async fn write_contract(&mut self, plan: ContractPlan) -> Result<FinalizeOutput, ApiError> {
        let (s, id) = (self.scope.clone(), self.document);
        let counterparty = plan.counterparty.as_ref().map(|c| c.value.clone());
        let decision = match &counterparty {
            Some(name) => VendorDecision::Match {
                name: name.clone(),
                normalized: pactwise_store::normalized_vendor_name(name),
                create: plan.create_vendor,
            },
            None => VendorDecision::None,
        };
        let extractions = serde_json::to_value(&plan.extractions).unwrap_or_default();
        let type_id = plan.type_id.clone();
        let cp = counterparty.clone();
        let row = self
            .db
            .call(move |store| store.reviews().save_contract(&s, id, &type_id, cp.as_deref(), &extractions, &decision))
            .await?;
        Ok(FinalizeOutput { counterparty, vendor_match: row.vendor_match, vendor: row.vendor.map(|v| v.name) })
    }
}

impl StoreLog {
    /// The stage log of one document of the session's organization.
    pub(crate) fn new(api: &Api, scope: &OrgScope, document: DocumentId) -> StoreLog {
        StoreLog { db: api.db.clone(), scope: scope.clone(), document, clock: api.clock.clone() }
    }
}

/// Runs the pipeline over a log that keeps nothing (`review FILE`, a dry run) and presents it; a dry run also says
/// how many model calls a real run would make.
async fn dry_or_not(
    runner: &Runner,
    mode: ReviewMode,
    mut log: pactwise_pipeline::MemoryLog,
    pages: &[Page],
    structure: DocumentStructure,
    file: Option<String>,
    document: Option<DocumentId>,
) -> DocumentReview {
    let report =
        match pactwise_pipeline::run_with_structure(runner, &mut log, pages, structure.clone(), None, None).await {
            Ok(report) => report,
            Err(e) => match e.into_inner() {},
        };
    // `Mode::DryRun` only when a model is ready: otherwise a real run is offline and makes no call.
    let planned = (runner.mode == Mode::DryRun).then(|| {
        report
            .classification
            .as_ref()
            .and_then(|c| runner.catalog.contract_type(&c.type_id))
            .map_or(0, |t| pactwise_pipeline::stages::planned_model_calls(t, pages))
    });
    let mut review = present(runner, report, pages, Some(&structure), file, document);
    if mode == ReviewMode::DryRun {
        review.mode = "dry_run".into();
        review.planned_model_calls = Some(planned.unwrap_or(0));
    }
    review
}

fn record_from_row(row: StageRow) -> Option<StageRecord> {
    Some(StageRecord {
        stage: Stage::parse(&row.stage)?,
        status: StageStatus::parse(&row.status)?,
        attempt: row.attempt,
        model: row.model,
        tokens: pactwise_domain::usage::TokenUsage {
            input: row.input_tokens as u32,
            output: row.output_tokens as u32,
            cache_read: row.cache_read_tokens as u32,
            ..Default::default()
        },
        latency_ms: row.latency_ms,
        outcome: row.outcome,
        reason: row.reason,
        output: row.output,
    })
}

impl Api {
    async fn runner(&self, scope: &OrgScope, mode: ReviewMode) -> Result<Runner, ApiError> {
        let s = scope.clone();
        let (thresholds, mut own_names, org_name) = self
            .db
            .call(move |store| {
                let t = store.settings().get::<Thresholds>(&s, THRESHOLDS_KEY)?.unwrap_or_default();
                let names = store.settings().get::<Vec<String>>(&s, OWN_NAMES_KEY)?.unwrap_or_default();
                let org = store.platform().organization_name(s.org())?;
                Ok((t, names, org))
            })
            .await?;
        own_names.push(org_name);
        let mode = match mode {
            ReviewMode::Offline => Mode::Offline,
            // Without a model a real run is an offline one, and so is its dry run.
            ReviewMode::DryRun => match self.model.status().await {
                ModelStatus::Ready => Mode::DryRun,
                _ => Mode::Offline,
            },
            ReviewMode::Auto => match self.model.status().await {
                ModelStatus::Ready => Mode::Model,
                _ => Mode::Offline,
            },
        };
        Ok(Runner {
            catalog: catalog()?,
            model: Some(self.model.clone()),
            ctx: CallContext::new(scope.org(), Some(scope.user()), "pipeline"),
            mode,
            thresholds,
            own_names,
            concurrency: pactwise_model_concurrency(),
            // The learned pre-fill is off in the product: 2-fold cross-validated on the CUAD dev split it does not beat
            // the rules alone (bench/README.md, "Learned pre-fill") and it embeds every operative sentence of each
            // contract (about 10 s a contract here). `eval_cuad --learned` measures it; pass
            // `Some(self.retriever.lazy_embedder())` to turn it on once it helps.
            embedder: None,
        })
    }

    /// Runs the pipeline on a file without keeping anything (`pactwise review`).
    pub async fn review_file(
        &self,
        scope: &OrgScope,
        path: &Path,
        mode: ReviewMode,
    ) -> Result<DocumentReview, ApiError> {
        let (bytes, media_type) =
            crate::intake::check_file(path, crate::DEFAULT_MAX_IMPORT_BYTES * 10).and_then(|(_, media_type)| {
                std::fs::read(path).map(|b| (b, media_type)).map_err(|e| {
                    ApiError::new(ErrorCode::FileUnreadable, format!("{} cannot be read ({e})", path.display()))
                })
            })?;
        let extractor = self.extractor.clone();
        let started = std::time::Instant::now();
        let extracted = tokio::task::spawn_blocking(move || {
            extractor
                .extract_bytes(&bytes, Some(media_type), &pactwise_extract::ExtractOptions::default())
                .map_err(|e| ApiError::new(e.code(), e.to_string()))
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("extraction was interrupted ({e})")))??;
        let latency = started.elapsed().as_millis() as u64;
        let runner = self.runner(scope, mode).await?;
        let mut log = pactwise_pipeline::MemoryLog::default();
        log.records.push(pactwise_pipeline::extract_record(1, &extracted.pages, None, latency));
        let structure = DocumentStructure::build(&extracted.pages);
        let file = Some(path.display().to_string());
        Ok(dry_or_not(&runner, mode, log, &extracted.pages, structure, file, None).await)
    }

    /// What a real run of an imported document would do, keeping nothing: the whole stage machine over its stored
    /// pages with no model call (the rules stand in for the model's answers), the route the review gate would take
    /// and why, and how many model calls a real run would make (none without a model). People's corrections count,
    /// as in a real run.
    pub async fn dry_run(&self, scope: &OrgScope, id: DocumentId) -> Result<DocumentReview, ApiError> {
        let pages = self.stored_pages(scope, id).await?;
        let mut stored = StoreLog::new(self, scope, id);
        let mut log = pactwise_pipeline::MemoryLog {
            // How the pages were read is not done again: its record (and a failure's reason) stands.
            records: stored.load().await?.into_iter().filter(|r| r.stage == Stage::Extract).collect(),
            corrections: stored.corrections().await?,
            plan: None,
        };
        log.records.retain(|r| r.status.is_finished());
        let s = scope.clone();
        let kept = self.db.call(move |store| store.pages().structure(&s, id)).await?;
        let structure = match kept.filter(|(version, _)| *version == STRUCTURE_VERSION) {
            Some((_, json)) => serde_json::from_str(&json).ok(),
            None => None,
        };
        let structure = match structure {
            Some(structure) => structure,
            None => {
                let copy = pages.clone();
                tokio::task::spawn_blocking(move || DocumentStructure::build(&copy)).await.map_err(|e| {
                    ApiError::new(ErrorCode::Internal, format!("reading the document's structure stopped ({e})"))
                })?
            }
        };
        let runner = self.runner(scope, ReviewMode::DryRun).await?;
        Ok(dry_or_not(&runner, ReviewMode::DryRun, log, &pages, structure, None, Some(id)).await)
    }

    /// Runs or resumes the pipeline of an imported document; `rerun` asks for a stage and those after it again.
    pub async fn run_pipeline(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        mode: ReviewMode,
        rerun: Option<Stage>,
    ) -> Result<DocumentReview, ApiError> {
        let pages = self.stored_pages(scope, id).await?;
        let runner = self.runner(scope, mode).await?;
        let mut log = StoreLog::new(self, scope, id);
        let structure = self.structure_of(scope, id, Some(&pages)).await?;
        // How the pages were read is the extract stage's record, written where they were read (`ensure_pages`).
        let report = pactwise_pipeline::run_with_structure(&runner, &mut log, &pages, structure.clone(), None, rerun)
            .await
            .map_err(pactwise_pipeline::DriverError::into_inner)?;
        let mut review = present(&runner, report, &pages, Some(&structure), None, Some(id));
        self.add_people(scope, id, &mut review).await?;
        Ok(review)
    }

    /// A document's review as recorded (no stage runs).
    pub async fn document_review(&self, scope: &OrgScope, id: DocumentId) -> Result<DocumentReview, ApiError> {
        let runner = self.runner(scope, ReviewMode::Offline).await?;
        let mut log = StoreLog { db: self.db.clone(), scope: scope.clone(), document: id, clock: self.clock.clone() };
        let records = log.load().await?;
        let report = pactwise_pipeline::driver::report(&mut log, records, None)
            .await
            .map_err(pactwise_pipeline::DriverError::into_inner)?;
        let cited: Vec<u32> = report.findings.iter().filter_map(|f| f.quote.as_ref().map(|q| q.page)).collect();
        let s = scope.clone();
        let pages = self.db.call(move |store| crate::workspace::cited_pages(store, &s, id, cited)).await?;
        let structure = if pages.is_empty() { None } else { Some(self.structure_of(scope, id, None).await?) };
        let mut review = present(&runner, report, &pages, structure.as_ref(), None, Some(id));
        review.mode = "recorded".into();
        self.add_people(scope, id, &mut review).await?;
        Ok(review)
    }

    /// Who confirmed each item, the notes, the vendor link and the finalize stamp.
    async fn add_people(&self, scope: &OrgScope, id: DocumentId, review: &mut DocumentReview) -> Result<(), ApiError> {
        let s = scope.clone();
        let (corrections, contract) = self
            .db
            .call(move |store| {
                let reviews = store.reviews();
                let mut named = Vec::new();
                for c in reviews.corrections(&s, id)? {
                    let name = store.platform().user_name(c.user).unwrap_or_else(|_| c.user.to_string());
                    named.push((c, name));
                }
                let contract = reviews.contract(&s, id)?;
                let finalizer = contract
                    .as_ref()
                    .and_then(|c| c.finalized_by)
                    .map(|u| store.platform().user_name(u).unwrap_or_else(|_| u.to_string()));
                Ok((named, contract.map(|c| (c, finalizer))))
            })
            .await?;
        for item in &mut review.items {
            if let Some((c, name)) = corrections.iter().rev().find(|(c, _)| c.item_id == item.id) {
                item.note = c.note.clone();
                item.confirmed_by = Some(name.clone());
                item.confirmed_at = Some(c.at.to_rfc3339());
            }
        }
        if let Some((c, finalizer)) = contract {
            review.vendor = c.vendor.map(|v| v.name);
            review.vendor_link = c.vendor_link;
            review.finalized_by = finalizer;
            review.finalized_at = c.finalized_at.map(|t| t.to_rfc3339());
        }
        Ok(())
    }

    /// The document's structure as stored with its pages; read from the pages (`pages`, or the stored ones) and kept
    /// when it is missing or was read by older rules.
    pub(crate) async fn structure_of(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        pages: Option<&[Page]>,
    ) -> Result<DocumentStructure, ApiError> {
        let s = scope.clone();
        let stored = self.db.call(move |store| store.pages().structure(&s, id)).await?;
        if let Some((version, json)) = stored
            && version == STRUCTURE_VERSION
        {
            match serde_json::from_str(&json) {
                Ok(structure) => return Ok(structure),
                Err(e) => {
                    tracing::warn!(document = %id, error = %e, "a stored structure is unreadable; reading it again")
                }
            }
        }
        let pages = match pages {
            Some(pages) => pages.to_vec(),
            None => self.stored_pages(scope, id).await?,
        };
        let structure = tokio::task::spawn_blocking(move || DocumentStructure::build(&pages)).await.map_err(|e| {
            ApiError::new(ErrorCode::Internal, format!("reading the document's structure stopped ({e})"))
        })?;
        let json = serde_json::to_string(&structure)
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the structure could not be written ({e})")))?;
        let s = scope.clone();
        // Derived data: when it cannot be kept (no pages yet), the structure read now still serves this request.
        if let Err(e) = self.db.call(move |store| store.pages().save_structure(&s, id, STRUCTURE_VERSION, &json)).await
        {
            tracing::warn!(document = %id, error = %e, "the document's structure was not kept");
        }
        Ok(structure)
    }

    async fn stored_pages(&self, scope: &OrgScope, id: DocumentId) -> Result<Vec<Page>, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.pages().load(&s, id)).await?.map(|d| d.pages).unwrap_or_default())
    }

    /// Documents the gate routed to a person, not yet finalized, newest first.
    pub async fn review_queue(&self, scope: &OrgScope) -> Result<Vec<QueueEntry>, ApiError> {
        let s = scope.clone();
        let rows = self.db.call(move |store| store.reviews().queue(&s)).await?;
        let catalog = catalog()?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let gate: Option<GateDecision> = serde_json::from_value(row.gate.clone()).ok();
                let class: Option<Classification> = row.classify.and_then(|c| serde_json::from_value(c).ok());
                let summary: Option<ChecklistSummary> =
                    row.gate.get("summary").cloned().and_then(|v| serde_json::from_value(v).ok());
                QueueEntry {
                    document: row.document,
                    name: row.name,
                    imported_at: row.created_at.to_rfc3339(),
                    reason: gate.as_ref().and_then(|g| g.reason).map(|r| r.as_str().to_owned()),
                    detail: gate.map(|g| g.detail).unwrap_or_default(),
                    type_name: class.as_ref().and_then(|c| catalog.contract_type(&c.type_id)).map(|t| t.name.clone()),
                    type_id: class.as_ref().map(|c| c.type_id.clone()),
                    type_confidence: class.as_ref().map(|c| c.confidence),
                    red_flags: summary.as_ref().map_or(0, |s| s.red_flags),
                    critical_unsure: summary.as_ref().map_or(0, |s| s.critical_unsure),
                    not_evaluated: summary.as_ref().map_or(0, |s| s.not_evaluated),
                    min_confidence: summary.as_ref().map(|s| s.min_confidence),
                }
            })
            .collect())
    }

    /// Records a person's confirmation or correction; a quote must be found on its page first. Then the gate runs
    /// again over the corrected answers. Corrections win over any later re-run.
    pub async fn correct_item(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        input: CorrectionInput,
    ) -> Result<DocumentReview, ApiError> {
        let current = self.document_review(scope, id).await?;
        let Some(item) = current.items.iter().find(|i| i.id == input.item_id) else {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("{:?} is not an item of this document's checklist; pick an item from the list", input.item_id),
            ));
        };
        if current.finalized_at.is_some() {
            return Err(ApiError::new(ErrorCode::Conflict, "this review is finalized; reopen it to change an item"));
        }
        let (kind, status, quote) = if input.confirm {
            let quote = item.quote.clone().zip(item.page).map(|(text, page)| Quote { text, page });
            ("confirm", item.status, quote)
        } else {
            let Some(status) = input.status else {
                return Err(ApiError::new(ErrorCode::InvalidInput, "a correction needs a status; choose one"));
            };
            let quote = match input.quote {
                None => None,
                Some(q) => {
                    let pages = self.stored_pages(scope, id).await?;
                    Some(pactwise_pipeline::verify::verify_quote(&pages, &q).ok_or_else(|| {
                        ApiError::new(
                            ErrorCode::InvalidInput,
                            format!(
                                "the selected text was not found on page {}; select the supporting words on the page itself",
                                q.page
                            ),
                        )
                    })?)
                }
            };
            ("correct", status, quote)
        };
        let catalog = catalog()?;
        let warnings = match (&quote, catalog.item(&input.item_id)) {
            (Some(q), Some(item)) if matches!(status, ItemStatus::Present | ItemStatus::Partial) => {
                let pages = self.stored_pages(scope, id).await?;
                let structure = self.structure_of(scope, id, Some(&pages)).await?;
                pactwise_pipeline::evidence::quote_warnings(&catalog, &structure, &pages, item, q)
            }
            _ => Vec::new(),
        };
        if !warnings.is_empty() && !input.acknowledge_warnings {
            let reasons: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
            return Err(ApiError::new(
                ErrorCode::QuoteNeedsCheck,
                format!(
                    "Check the quote before keeping it: {}. Choose the clause's own words, or keep this quote anyway",
                    reasons.join("; ")
                ),
            ));
        }
        let correction = NewCorrection {
            item_id: input.item_id,
            kind: kind.into(),
            status: status.as_str().into(),
            quote: quote.map(|q| (q.text, q.page)),
            note: input.note.filter(|n| !n.trim().is_empty()),
            acknowledged: warnings.into_iter().map(|w| w.message).collect(),
        };
        let s = scope.clone();
        self.db.call(move |store| store.reviews().add_correction(&s, id, &correction).map(|_| ())).await?;
        if current.gate.is_some() {
            self.run_pipeline(scope, id, ReviewMode::Offline, Some(Stage::Gate)).await
        } else {
            self.document_review(scope, id).await
        }
    }

    /// The organization's gate thresholds.
    pub async fn thresholds(&self, scope: &OrgScope) -> Result<Thresholds, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.settings().get::<Thresholds>(&s, THRESHOLDS_KEY)).await?.unwrap_or_default())
    }

    /// Sets one threshold by name, within its bounds (`pactwise_rules::settings`); owners and admins only. A bad
    /// stored value (from an older version) reads as the defaults, so setting one threshold repairs it.
    pub async fn set_threshold(&self, scope: &OrgScope, name: &str, value: f32) -> Result<Thresholds, ApiError> {
        // The role table the sync service applies to the same change (`pactwise_rules::roles`).
        pactwise_rules::roles::check(scope.role(), pactwise_rules::roles::SharedChange::Setting(THRESHOLDS_KEY))
            .map_err(|refusal| ApiError::new(ErrorCode::Forbidden, refusal.message))?;
        let mut t = self.thresholds(scope).await?;
        t.set(name, value).map_err(|m| ApiError::new(ErrorCode::InvalidInput, m))?;
        let s = scope.clone();
        self.db.call(move |store| store.settings().set(&s, THRESHOLDS_KEY, &t)).await?;
        Ok(t)
    }
}

fn pactwise_model_concurrency() -> usize {
    pactwise_pipeline::model_path::DEFAULT_CONCURRENCY
}

/// The report in the shape people and scripts see.
fn present(
    runner: &Runner,
    mut report: PipelineReport,
    pages: &[Page],
    structure: Option<&DocumentStructure>,
    file: Option<String>,
    document: Option<DocumentId>,
) -> DocumentReview {
    let catalog = &runner.catalog;
    // Values of corrected items are read from the person's quote.
    pactwise_pipeline::values::attach(catalog, &mut report.findings);
    let extractions = report
        .checklist
        .as_ref()
        .map(|k| pactwise_pipeline::stages::contract_fields(catalog, &k.extractions, &report.findings))
        .unwrap_or_default();
    let counterparty = report
        .finalize
        .as_ref()
        .and(pactwise_pipeline::stages::counterparty(&extractions.parties, &runner.own_names))
        .map(|c| c.value);
    let contract_type = report.classification.as_ref().and_then(|c| catalog.contract_type(&c.type_id));
    let items = match contract_type {
        None => Vec::new(),
        Some(t) => t
            .items
            .iter()
            .map(|item| {
                let f: Option<&ItemFinding> = report.findings.iter().find(|f| f.item_id == item.id);
                ReviewItem {
                    id: item.id.clone(),
                    section: item.section.clone(),
                    question: item.question.clone(),
                    risk: item.risk.as_str().into(),
                    status: f.map_or(ItemStatus::NotEvaluated, |f| f.status),
                    confidence: f.map_or(0.0, |f| f.confidence),
                    quote: f.and_then(|f| f.quote.as_ref()).map(|q| q.text.clone()),
                    page: f.and_then(|f| f.quote.as_ref()).map(|q| q.page),
                    quote_span: f.and_then(|f| f.quote.as_ref()).and_then(|q| quote_span(pages, q.page, &q.text)),
                    verified: f.is_some_and(|f| f.quote.is_some()),
                    value: f.and_then(|f| f.value.as_ref()).map(Value::display),
                    normalized: f.and_then(|f| f.value.clone()),
                    warnings: match (f.and_then(|f| f.quote.as_ref()), structure) {
                        (Some(q), Some(structure)) => {
                            pactwise_pipeline::evidence::quote_warnings(catalog, structure, pages, item, q)
                        }
                        _ => Vec::new(),
                    },
                    method: f.map_or("none", |f| f.method.as_str()).into(),
                    reason: f.and_then(|f| f.reason.clone()).or_else(|| f.is_none().then(|| "not_run".to_owned())),
                    red_flags: f.map(|f| f.red_flags.clone()).unwrap_or_default(),
                    note: None,
                    confirmed_by: None,
                    confirmed_at: None,
                }
            })
            .collect(),
    };
    DocumentReview {
        file,
        document,
        contract_type: report.classification.as_ref().map(|c| ReviewType {
            id: c.type_id.clone(),
            name: contract_type.map(|t| t.name.clone()).unwrap_or_default(),
            confidence: c.confidence,
            method: match c.method {
                pactwise_domain::Method::Model => "model",
                _ => "keyword",
            }
            .into(),
            reason: c.reason.clone(),
        }),
        items,
        rejected: report.rejected.clone(),
        gate: report.gate.as_ref().map(|g| ReviewGate {
            route: match g.route {
                pactwise_domain::Route::Person => "person",
                pactwise_domain::Route::Auto => "auto",
            }
            .into(),
            reason: g.reason.map(|r| r.as_str().to_owned()),
            detail: g.detail.clone(),
        }),
        extractions,
        counterparty,
        vendor_match: report.finalize.as_ref().map(|f| f.vendor_match.clone()),
        summary: report.gate.as_ref().and(report.checklist.as_ref().map(|k| k.summary.clone())),
        stages: report
            .stages
            .iter()
            .map(|r| ReviewStage {
                stage: r.stage.as_str().into(),
                status: r.status.as_str().into(),
                attempt: r.attempt,
                model: r.model.clone(),
                input_tokens: r.tokens.input,
                output_tokens: r.tokens.output,
                cache_read_tokens: r.tokens.cache_read,
                latency_ms: r.latency_ms,
                outcome: r.outcome.clone(),
                reason: r.reason.clone(),
            })
            .collect(),
        mode: match runner.mode {
            Mode::Model => "model",
            Mode::Offline => "offline",
            Mode::DryRun => "dry_run",
        }
        .into(),
        planned_model_calls: None,
        halted_at: report.halted_at.map(|s| s.as_str().to_owned()),
        vendor: None,
        vendor_link: None,
        finalized_by: None,
        finalized_at: None,
    }
}
