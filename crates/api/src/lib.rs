//! The application's front door: one function per user action, called by both shells (the Tauri commands and the
//! `pactwise` CLI), returning typed results or an [`ApiError`] whose `code` the UI branches on. The session's
//! [`OrgScope`] is the only source of the organization; no function here takes an organization id for tenant data.

mod agent_work;
mod agents;
mod assistant;
mod blobs;
mod checklists;
mod contracts;
mod demo;
pub mod diagnostics;
mod documents;
mod error;
mod evidence;
mod export_file;
mod extract;
mod first_run;
mod intake;
mod members;
mod memo;
mod model;
mod prep;
mod record_runs;
mod records;
mod report;
mod review;
mod run_words;
mod runs;
mod search;
mod session;
mod shared_runs;
mod source;
mod sync;
pub mod update;
mod vendors;
mod voyage;
mod work_loop;
mod workspace;

pub use agent_work::{
    AgentRequestRow, AgentRequestView, AgentSettingView, AgentSettingsView, AgentStepView, FollowUpView, MANAGERS_KEY,
    MemoryView, NoticeView, PlanStepView, PlanView, TaskRound, WorkerOptions, plan_view,
};
pub use agents::{AGENTS_CONFIG_KEY, OrgSnapshot};
pub use assistant::CorpusImport;
pub use checklists::{checklist_export, checklist_stats};
/// Calendar dates as the contract functions take them (so the shells need no date crate of their own).
pub use chrono::NaiveDate;
pub use contracts::{
    ChecklistOutcome, ContractDate, ContractDetail, ContractFacets, ContractField, ContractOrder, ContractQuery,
    ContractReportLine, ContractRow, ContractRunLine, DateKind, ExportedCalendar, FacetOption, MonthDates, OutcomeItem,
    Page, RenewalReminder, UpcomingDates, icalendar,
};
pub use demo::DemoReport;
pub use documents::{
    DocumentQuery, ImportFailure, ImportOptions, ImportProgress, ImportReport, ImportStage, ImportedDocument,
    MAX_IMPORT_BYTES_SETTING, parse_document_id,
};
pub use error::ApiError;
pub use evidence::{
    AmountRow, ApprovalEvidence, BudgetEvidence, ClauseRow, ClauseTypeRow, ContractRiskEvidence, EvidenceLink,
    EvidenceRow, GenericEvidence, InvoiceEvidence, LinkTarget, ReportEvidence, ShortlistEvidence, ShortlistRow,
    VendorEvidence,
};
pub use export_file::Existing;
pub use extract::{ExtractRequest, extract_file};
pub use first_run::{FirstRunInput, FirstRunView};
pub use intake::DEFAULT_MAX_IMPORT_BYTES;
pub use members::{AddMemberInput, AddedMemberView, MemberView, MembersView, parse_member_id};
pub use memo::MemoFormat;
pub use model::{ModelAvailability, ModelBudget, ModelStatusView};
pub use pactwise_agents::{
    AgentSpec, AgentType, AgentsConfig, Outcome as AgentOutcome, Plan as AgentPlan, Urgency as AgentUrgency,
};
pub use pactwise_assistant::{Answer, Citation, CitationKind, NamedContract, ToolCallSummary};
pub use pactwise_extract::{DEFAULT_MAX_PAGES, max_pages_help, parse_max_pages};
pub use pactwise_pipeline::{Stage, Thresholds};
pub use pactwise_prep::{
    ArtifactKind, ArtifactState, Content, DraftProgress, FindingStatus, Intake, Package, RunBudget, RunStatus, RunStep,
};
pub use pactwise_retrieval::Mode as SearchMode;
pub use pactwise_retrieval::eval::{RetrievalReport, table as retrieval_table};
pub use pactwise_rules::vendors::Identifier as VendorIdentifier;
pub use pactwise_store::{HealthThresholds, OrgScope};
pub use prep::{
    MilestoneDate, PREP_LEASE_MINUTES, PrepExport, PrepExportFormat, PrepLock, PrepSummary, PrepView, PublishViolation,
    parse_artifact,
};
pub use records::{
    AUDIT_PAGE, AuditChoices, AuditLine, AuditPage, AuditQuery, Choice, DailySpend, EarlierAnswer, ExportedAudit,
    FeatureSpend, HISTORY_PAGE, HistoryPage, MonthSpend, PersonSpend, StageLogEntry, UsageReport, UsageScope,
    action_words, csv_cell,
};
pub use report::{
    ClauseSpan, REPORT_MAX_CALLS_KEY, REPORT_TIME_LIMIT_KEY, ReportOptions, ReportProgress, ReportSignOff,
    ReportStatus, ReportView,
};
pub use review::{
    CorrectionInput, DocumentReview, OWN_NAMES_KEY, QueueEntry, ReviewGate, ReviewItem, ReviewMode, ReviewStage,
    ReviewType, StoreLog, catalog, eval_cuad,
};
pub use run_words::{
    ApprovalReading, DecisionLine, FormField, FormFieldKind, FormOption, NowLine, RunFilter, RunForm, RunStory,
    RunSummary, StoryLine, Tone,
};
pub use runs::{
    ApprovalView, BenchReport, CancelOutcome, DecisionOutcome, GraphSummary, RequestState, RequestView, RunDetail,
    RunEventView, RunView, TaskView, bench_engine, parse_approval_id, parse_run_id, workflow_graphs,
};
pub use search::{SearchHit, SearchResults, SemanticStatus, eval_retrieval};
pub use session::{BringOverReport, Membership, SessionInfo};
pub use source::{
    AnswerLine, AwardInput, AwardView, CriterionLine, CriterionScore, EvaluationView, InvitationView, InviteInput,
    KeyringOpeningKeys, MemoryOpeningKeys, OpenedSubmission, OpenedTechnical, OpeningKeys, PriceLineView, QuestionView,
    ScoreInput, SourceExport, SubmittedFile, TenderView, VendorFigures,
};
pub use sync::{
    CodeSignInInput, KeyringSyncTokens, MemorySyncTokens, RefusedChangeView, SignInInput, SyncAccount, SyncLoop,
    SyncPhase, SyncRoundReport, SyncStatusView, SyncTokens, check_server,
};
pub use vendors::{
    DuplicateGroupView, MergeResult, OnboardingInput, VendorDetail, VendorDocumentLine, VendorInput, VendorSummary,
    status_label as vendor_status_label,
};
pub use voyage::VoyageStatus;
pub use work_loop::{MAX_IDLE, WORK_BATCH, WorkRound};
/// The offline review's scores on a labelled folder, as `eval_cuad` returns them, and the values table's lines.
pub mod eval {
    pub use pactwise_pipeline::eval::{CuadReport, ValueScore, values_table};
}
pub use workspace::{ExportedReview, FinalizeInput, PageLayout, TextRun, TextSpan, quote_span, text_runs};

use pactwise_domain::{Clock, SystemClock};
use pactwise_model::{ApiKeySource, KeyringApiKeySource, ModelClient, ModelConfig};
use pactwise_store::{BlobStore, DataDir, Db, PlatformCredential, Store};
use std::path::PathBuf;
use std::sync::Arc;

/// The environment variable that overrides the default data directory (the `--data-dir` flag wins over it).
pub const DATA_DIR_ENV: &str = "PACTWISE_DATA_DIR";

/// Where the data lives: the explicit path if given, else `$PACTWISE_DATA_DIR`, else the platform's app-data
/// directory (`~/.local/share/pactwise` on Linux).
pub fn resolve_data_dir(explicit: Option<PathBuf>) -> Result<PathBuf, ApiError> {
    if let Some(dir) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        return Ok(dir);
    }
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::data_dir().map(|d| d.join("pactwise")).ok_or_else(|| {
        ApiError::new(
            pactwise_domain::ErrorCode::Storage,
            "could not find the platform's app-data directory; pass --data-dir DIR or set PACTWISE_DATA_DIR",
        )
    })
}

/// What an `Api` is built with; tests swap the clock, the key stores and the model endpoint.
pub struct ApiOptions {
    pub clock: Arc<dyn Clock>,
    pub keys: Arc<dyn ApiKeySource>,
    pub model: ModelConfig,
    /// Where sync device tokens are kept (the OS keychain; tests keep them in memory).
    pub sync_tokens: Arc<dyn SyncTokens>,
    /// Where the secret halves of PactWise Source opening keys are kept (the OS keychain; tests keep them in
    /// memory). Never the store.
    pub opening_keys: Arc<dyn OpeningKeys>,
    /// Root certificates the sync client trusts besides the platform's (an organization's own CA; tests' self-signed
    /// certificates). By default the PEM file named by `PACTWISE_SYNC_CA_FILE`, if any.
    pub sync_trust: pactwise_sync::TlsTrust,
    /// How often the background sync loop syncs when nothing wakes it: the fallback when the service's push channel
    /// is down (30 s). Tests set it long so only the push channel can explain an arrival.
    pub sync_interval: std::time::Duration,
    /// The workflow graphs and handlers runs use: the built-in ones (`pactwise_workflows::registry`) unless a test
    /// brings its own.
    pub workflows: Option<pactwise_engine::Registry>,
    /// Where the optional Voyage key is kept (the OS keychain; tests keep it in memory) and where its API is.
    pub voyage_keys: Arc<dyn ApiKeySource>,
    pub voyage: pactwise_model::VoyageConfig,
}

/// The environment variable naming a PEM file of extra root certificates for the sync service's TLS.
pub const SYNC_CA_FILE_ENV: &str = "PACTWISE_SYNC_CA_FILE";

/// The extra sync roots from `PACTWISE_SYNC_CA_FILE` (none when it is not set; a file that cannot be read is
/// logged and skipped, and the sign-in then says the certificate is not trusted).
fn sync_trust_from_env() -> pactwise_sync::TlsTrust {
    let trust = pactwise_sync::TlsTrust::default();
    let Some(path) = std::env::var_os(SYNC_CA_FILE_ENV).filter(|v| !v.is_empty()) else { return trust };
    match std::fs::read(&path) {
        Ok(pem) => trust.with_pem(pem),
        Err(e) => {
            tracing::warn!(path = %PathBuf::from(&path).display(), "the sync CA file cannot be read ({e}); it is not used");
            trust
        }
    }
}

impl Default for ApiOptions {
    /// The real clock, the OS keychain and the model configuration from the environment.
    fn default() -> Self {
        ApiOptions {
            clock: Arc::new(SystemClock),
            keys: Arc::new(KeyringApiKeySource::default()),
            model: ModelConfig::from_env(),
            sync_tokens: Arc::new(KeyringSyncTokens),
            opening_keys: Arc::new(KeyringOpeningKeys),
            sync_trust: sync_trust_from_env(),
            sync_interval: pactwise_sync::SyncConfig::default().interval,
            workflows: None,
            voyage_keys: Arc::new(KeyringApiKeySource::new(
                pactwise_model::api_key::KEYRING_SERVICE,
                pactwise_model::voyage::VOYAGE_KEYRING_USER,
            )),
            voyage: pactwise_model::VoyageConfig::from_env(),
        }
    }
}

/// The application over one data directory. A cheap handle: clones share everything (the sync loop holds one).
#[derive(Clone)]
pub struct Api {
    parts: Arc<ApiParts>,
}

impl std::ops::Deref for Api {
    type Target = ApiParts;
    fn deref(&self) -> &ApiParts {
        &self.parts
    }
}

/// What an [`Api`] handle shares.
pub struct ApiParts {
    db: Db,
    blobs: BlobStore,
    data_dir: DataDir,
    model: Arc<ModelClient>,
    keys: Arc<dyn ApiKeySource>,
    /// One extractor per process: pdfium is bound once and OCR workers are reused across documents.
    extractor: Arc<pactwise_extract::Extractor>,
    assistant: pactwise_assistant::Assistant,
    /// Hybrid retrieval for every search (assistant, Prep Studio, Contracts, CLI), with the process's embedding model.
    retriever: Arc<pactwise_retrieval::Retriever>,
    /// One preparation of meaning-based search at a time, and its wake-up after an import (`search.rs`).
    semantic_lock: Arc<tokio::sync::Mutex<()>>,
    semantic_wake: Arc<tokio::sync::Notify>,
    /// The optional Voyage provider of meaning-based search (`voyage.rs`).
    voyage: voyage::VoyageSetup,
    /// Time for Prep Studio's drafting runs (their time budget) and sync.
    clock: Arc<dyn Clock>,
    /// Documents whose report this process is driving now.
    reports_in_flight: Arc<std::sync::Mutex<std::collections::HashSet<pactwise_domain::DocumentId>>>,
    sync_tokens: Arc<dyn SyncTokens>,
    opening_keys: Arc<dyn OpeningKeys>,
    sync_trust: pactwise_sync::TlsTrust,
    /// The sync loop's poll interval (the fallback of the push channel).
    sync_interval: std::time::Duration,
    /// This process's platform worker credential: the engine's claims and commits (see `runs::with_engine`).
    platform: PlatformCredential,
    /// The sync loop of the signed-in organization, if one runs in this process.
    sync_slot: sync::LoopSlot,
    /// The graphs and handlers of workflow runs.
    workflows: Arc<pactwise_engine::Registry>,
    /// Wakes the engine's work loop (`work_loop.rs`) when new work may change what is due next.
    work_wake: Arc<tokio::sync::Notify>,
    /// Counts the sync rounds that changed runs or approvals (another desktop's run, a stamped decision, a run this
    /// desktop resumed): the desktop watches it to refresh its windows ([`Api::watch_shared_runs`]).
    shared_runs_changed: tokio::sync::watch::Sender<u64>,
    /// Bumped after a sync round that changed contracts, vendors or review reports ([`Api::watch_shared_records`]).
    shared_records_changed: tokio::sync::watch::Sender<u64>,
}

impl Api {
    /// Opens (creating if needed) the data directory and its database.
    pub fn open(root: PathBuf) -> Result<Api, ApiError> {
        Self::open_with(root, ApiOptions::default())
    }

    pub fn open_with(root: PathBuf, options: ApiOptions) -> Result<Api, ApiError> {
        let ApiOptions {
            clock,
            keys,
            model,
            sync_tokens,
            opening_keys,
            sync_trust,
            sync_interval,
            workflows,
            voyage_keys,
            voyage,
        } = options;
        let workflows = Arc::new(match workflows {
            Some(registry) => registry,
            None => runs::registry()?.clone(),
        });
        // Every registry runs the agents' steps too (a request's compiled plan names them).
        let workflows = if workflows.get_handler("agents.legal").is_some() {
            workflows
        } else {
            let mut r = (*workflows).clone();
            pactwise_agents::run::register(&mut r);
            Arc::new(r)
        };
        let data_dir = DataDir::create(&root).map_err(|e| ApiError::from_store_at(e, &root))?;
        // This process is the platform's worker for its own runs: the store is opened on the platform path once, and
        // the credential stays here, beside the store's thread, for the engine (never for tenant code).
        let (mut store, platform) = Store::open(&data_dir.database(), clock.clone())
            .map_err(|e| ApiError::from_store_at(e, &root))?
            .into_platform_worker(&format!("desk-{}", std::process::id()))
            .into_parts();
        let sync_slot = sync::LoopSlot::default();
        store.set_change_encoder(Arc::new(sync::WireEncoder::new(sync_slot.clone())));
        let usage_store =
            Store::open(&data_dir.database(), clock.clone()).map_err(|e| ApiError::from_store_at(e, &root))?;
        let usage = Arc::new(model::StoreUsage::new(usage_store, &data_dir.usage_journal()));
        let client = Arc::new(
            ModelClient::new(model, keys.clone(), usage.clone(), usage, clock.clone())
                .map_err(|e| ApiError::new(e.code(), e.to_string()))?,
        );
        let voyage = voyage::VoyageSetup::new(voyage, voyage_keys, &client);
        let db = Db::spawn(store);
        let retriever = Arc::new(pactwise_retrieval::Retriever::new(Arc::new(pactwise_embed::LazyEmbedder::new(
            pactwise_embed::default_model_dir(),
        ))));
        let parts = ApiParts {
            assistant: pactwise_assistant::Assistant::new(db.clone(), client.clone(), clock.clone())
                .with_retriever(retriever.clone()),
            retriever,
            voyage,
            semantic_lock: Arc::default(),
            semantic_wake: Arc::default(),
            clock,
            reports_in_flight: Arc::default(),
            db,
            blobs: BlobStore::new(data_dir.blobs()),
            data_dir,
            model: client,
            keys,
            extractor: Arc::new(pactwise_extract::Extractor::new(pactwise_extract::ExtractConfig::from_env())),
            sync_tokens,
            opening_keys,
            sync_trust,
            sync_interval,
            platform,
            sync_slot,
            workflows,
            work_wake: Arc::default(),
            shared_runs_changed: tokio::sync::watch::Sender::new(0),
            shared_records_changed: tokio::sync::watch::Sender::new(0),
        };
        Ok(Api { parts: Arc::new(parts) })
    }

    /// Starts the background work of a long-running process (the desktop app): the usage ledger's timed flush.
    /// Call from inside the async runtime.
    pub fn spawn_background_tasks(&self) {
        self.model.spawn_ledger_flusher(std::time::Duration::from_secs(5));
    }

    /// Writes what is buffered (the usage ledger); call before the process exits.
    pub fn flush(&self) {
        if let Err(e) = self.model.flush_ledger() {
            tracing::error!(error = %e, "the usage ledger could not be flushed");
        }
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }
}
