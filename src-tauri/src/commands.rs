//! Tauri commands: each is a few lines that call `pactwise-api` with the window's session.

use crate::AppState;
use pactwise_api::{
    AddMemberInput, AddedMemberView, BringOverReport, CodeSignInInput, MemberView, MembersView, Membership,
    parse_member_id,
};
use pactwise_api::{AgentRequestRow, AgentRequestView, AgentSettingsView, MemoryView, NoticeView, PlanView};
use pactwise_api::{
    ApiError, ApprovalReading, ApprovalView, ArtifactKind, CancelOutcome, Content, CorrectionInput, DecisionOutcome,
    DocumentQuery, DocumentReview, DraftProgress, Existing, ExportedReview, FinalizeInput, GraphSummary, ImportOptions,
    ImportProgress, ImportReport, Intake, MemoFormat, ModelAvailability, ModelStatusView, PageLayout, PrepExport,
    PrepExportFormat, PrepLock, PrepSummary, PrepView, QueueEntry, ReportOptions, ReportView, ReviewMode, RunBudget,
    RunDetail, RunFilter, RunForm, RunStory, RunSummary, RunView, SessionInfo, SignInInput, Stage, SyncStatusView,
    Thresholds,
};
use pactwise_api::{AuditChoices, AuditPage, AuditQuery, ExportedAudit, HistoryPage, StageLogEntry, UsageReport};
use pactwise_api::{
    AwardInput, AwardView, EvaluationView, InvitationView, InviteInput, OpenedTechnical, QuestionView, ScoreInput,
    SourceExport, TenderView,
};
use pactwise_api::{ContractDetail, ContractFacets, ContractQuery, ContractRow, ExportedCalendar, Page, UpcomingDates};
use pactwise_api::{DuplicateGroupView, MergeResult, OnboardingInput, VendorDetail, VendorInput, VendorSummary};
use pactwise_api::{FirstRunInput, FirstRunView};
use pactwise_domain::ContractType;
use pactwise_domain::VendorStatus;
use pactwise_domain::{ApprovalId, Decision, Document, DocumentId, RunId};
use pactwise_domain::{ErrorCode, OrgId, Role};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use tauri::{AppHandle, State};
use tauri_specta::Event;

/// Export paths reach the shell from the native save dialog (`ui/src/lib/dialogs.ts`), which asks the person before
/// they pick a file that is already there: the person chose to replace it, so the export may.
const FROM_SAVE_DIALOG: Existing = Existing::Replace;

/// Progress of an import, sent while `import_documents` runs.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct ImportProgressEvent(pub ImportProgress);

/// Progress of a Prep Studio drafting run, sent before each step while `prep_draft` runs.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct PrepProgressEvent {
    /// The package being drafted.
    pub package: String,
    pub progress: DraftProgress,
}

/// An internal error stopped an operation and left a report (redacted: no document text, no secrets): the window
/// says so and where the report is.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct CrashReportedEvent {
    pub report: pactwise_api::diagnostics::CrashReport,
}

/// Contracts, vendors, reviews or review reports changed on this desktop because of a sync round (another desktop
/// corrected, reopened, finalized, linked, merged or signed off, or a document arrived and was reviewed here): the
/// Contracts and Vendors areas and an open review reload.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct RecordsChangedEvent {
    /// How many sync rounds changed the repository since the app started.
    pub rounds: u64,
}

/// How far meaning-based search is prepared (vectors computed in the background after an import): the Contracts and
/// Assistant areas show it in words.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct SemanticProgressEvent {
    pub status: pactwise_api::SemanticStatus,
}

/// How far the download of an update is (`update_install`): Settings shows it.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct UpdateProgressEvent {
    pub progress: pactwise_api::update::UpdateProgress,
}

/// Runs or approvals changed without the window asking (the engine's work loop moved runs or escalated an
/// approval, or a sync round brought runs, steps or decisions from other desktops — then both counts are 0): the
/// Runs area and the inbox reload.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct RunsChangedEvent {
    pub runs_moved: u32,
    pub approvals_escalated: u32,
}

#[tauri::command]
#[specta::specta]
async fn session_info(state: State<'_, AppState>) -> Result<SessionInfo, ApiError> {
    let (api, scope) = state.session().await?;
    api.session_info(&scope).await
}

/// Whether the welcome screen is shown (a new installation), and the organization's name so far.
#[tauri::command]
#[specta::specta]
async fn first_run(state: State<'_, AppState>) -> Result<FirstRunView, ApiError> {
    let (api, scope) = state.session().await?;
    api.first_run(&scope).await
}

/// The welcome screen's "Create the organization": its name and its own names.
#[tauri::command]
#[specta::specta]
async fn complete_first_run(state: State<'_, AppState>, input: FirstRunInput) -> Result<SessionInfo, ApiError> {
    let (api, scope) = state.session().await?;
    api.complete_first_run(&scope, input).await
}

/// The welcome screen's "Explore the demo": the demo organization seeded and made current.
#[tauri::command]
#[specta::specta]
async fn explore_demo(state: State<'_, AppState>) -> Result<SessionInfo, ApiError> {
    let (api, _) = state.session().await?;
    let (scope, _) = api.seed_demo().await?;
    state.set_scope(scope.clone()).await;
    api.wake_semantic_search();
    api.session_info(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn list_documents(state: State<'_, AppState>, query: DocumentQuery) -> Result<Vec<Document>, ApiError> {
    let (api, scope) = state.session().await?;
    api.list_documents(&scope, query).await
}

#[tauri::command]
#[specta::specta]
async fn import_documents(
    app: AppHandle,
    state: State<'_, AppState>,
    paths: Vec<String>,
) -> Result<ImportReport, ApiError> {
    let (api, scope) = state.session().await?;
    let progress = |p: ImportProgress| {
        if let Err(e) = ImportProgressEvent(p).emit(&app) {
            tracing::warn!(error = %e, "could not send import progress");
        }
    };
    api.import_documents(&scope, paths.into_iter().map(PathBuf::from).collect(), ImportOptions::default(), &progress)
        .await
}

#[tauri::command]
#[specta::specta]
async fn delete_document(state: State<'_, AppState>, id: DocumentId) -> Result<Document, ApiError> {
    let (api, scope) = state.session().await?;
    api.delete_document(&scope, id).await
}

#[tauri::command]
#[specta::specta]
async fn restore_document(state: State<'_, AppState>, id: DocumentId) -> Result<Document, ApiError> {
    let (api, scope) = state.session().await?;
    api.restore_document(&scope, id).await
}

#[tauri::command]
#[specta::specta]
async fn model_availability(state: State<'_, AppState>) -> Result<ModelStatusView, ApiError> {
    let (api, _) = state.session().await?;
    Ok(api.model_status().await)
}

/// Stores the API key in the OS keychain; the key is never sent back to the UI.
#[tauri::command]
#[specta::specta]
async fn set_api_key(state: State<'_, AppState>, key: String) -> Result<ModelAvailability, ApiError> {
    let (api, scope) = state.session().await?;
    api.set_api_key(&scope, key).await
}

#[tauri::command]
#[specta::specta]
async fn clear_api_key(state: State<'_, AppState>) -> Result<ModelAvailability, ApiError> {
    let (api, scope) = state.session().await?;
    api.clear_api_key(&scope).await
}

/// What meaning-based search uses: Voyage (its key in the keychain) or the local model, and why.
#[tauri::command]
#[specta::specta]
async fn voyage_status(state: State<'_, AppState>) -> Result<pactwise_api::VoyageStatus, ApiError> {
    let (api, _) = state.session().await?;
    Ok(api.voyage_status().await)
}

/// Stores the Voyage key in the OS keychain (owners and admins).
#[tauri::command]
#[specta::specta]
async fn set_voyage_key(state: State<'_, AppState>, key: String) -> Result<pactwise_api::VoyageStatus, ApiError> {
    let (api, scope) = state.session().await?;
    api.set_voyage_key(&scope, key).await
}

/// Removes the Voyage key: search uses the local model (owners and admins).
#[tauri::command]
#[specta::specta]
async fn clear_voyage_key(state: State<'_, AppState>) -> Result<pactwise_api::VoyageStatus, ApiError> {
    let (api, scope) = state.session().await?;
    api.clear_voyage_key(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn review_queue(state: State<'_, AppState>) -> Result<Vec<QueueEntry>, ApiError> {
    let (api, scope) = state.session().await?;
    api.review_queue(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn document_review(state: State<'_, AppState>, id: DocumentId) -> Result<DocumentReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.document_review(&scope, id).await
}

/// Runs the pipeline again from `stage` (all of it when none), with the model when it is available.
#[tauri::command]
#[specta::specta]
async fn rerun_pipeline(
    state: State<'_, AppState>,
    id: DocumentId,
    stage: Option<Stage>,
) -> Result<DocumentReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.run_pipeline(&scope, id, ReviewMode::Auto, Some(stage.unwrap_or(Stage::Classify))).await
}

/// What a real run of the document would do, keeping nothing and asking the model nothing.
#[tauri::command]
#[specta::specta]
async fn dry_run_pipeline(state: State<'_, AppState>, id: DocumentId) -> Result<DocumentReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.dry_run(&scope, id).await
}

#[tauri::command]
#[specta::specta]
async fn page_layout(state: State<'_, AppState>, id: DocumentId, page: u32) -> Result<PageLayout, ApiError> {
    let (api, scope) = state.session().await?;
    api.page_layout(&scope, id, page).await
}

#[tauri::command]
#[specta::specta]
async fn checklist_type(state: State<'_, AppState>, type_id: String) -> Result<ContractType, ApiError> {
    let (api, _) = state.session().await?;
    api.checklist_type(&type_id)
}

#[tauri::command]
#[specta::specta]
async fn correct_item(
    state: State<'_, AppState>,
    id: DocumentId,
    input: CorrectionInput,
) -> Result<DocumentReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.correct_item(&scope, id, input).await
}

#[tauri::command]
#[specta::specta]
async fn finalize_review(
    state: State<'_, AppState>,
    id: DocumentId,
    input: FinalizeInput,
) -> Result<DocumentReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.finalize_review(&scope, id, input).await
}

#[tauri::command]
#[specta::specta]
async fn reopen_review(state: State<'_, AppState>, id: DocumentId, reason: String) -> Result<DocumentReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.reopen_review(&scope, id, reason).await
}

#[tauri::command]
#[specta::specta]
async fn export_review(
    state: State<'_, AppState>,
    id: DocumentId,
    format: MemoFormat,
    path: String,
) -> Result<ExportedReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.export_review(&scope, id, format, PathBuf::from(path), FROM_SAVE_DIALOG).await
}

#[tauri::command]
#[specta::specta]
async fn vendors(state: State<'_, AppState>) -> Result<Vec<VendorEntry>, ApiError> {
    let (api, scope) = state.session().await?;
    Ok(api.vendors(&scope).await?.into_iter().map(|v| VendorEntry { id: v.id, name: v.name }).collect())
}

/// A vendor of the organization.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type)]
pub struct VendorEntry {
    pub id: String,
    pub name: String,
}

#[tauri::command]
#[specta::specta]
async fn review_thresholds(state: State<'_, AppState>) -> Result<Thresholds, ApiError> {
    let (api, scope) = state.session().await?;
    api.thresholds(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn set_review_threshold(state: State<'_, AppState>, name: String, value: f32) -> Result<Thresholds, ApiError> {
    let (api, scope) = state.session().await?;
    api.set_threshold(&scope, &name, value).await
}

#[tauri::command]
#[specta::specta]
async fn own_names(state: State<'_, AppState>) -> Result<Vec<String>, ApiError> {
    let (api, scope) = state.session().await?;
    api.own_names(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn set_own_names(state: State<'_, AppState>, names: Vec<String>) -> Result<Vec<String>, ApiError> {
    let (api, scope) = state.session().await?;
    api.set_own_names(&scope, names).await
}

/// Asks the Contract Assistant; the answer's citations point at passages retrieved for this question.
#[tauri::command]
#[specta::specta]
async fn ask_assistant(
    state: State<'_, AppState>,
    question: String,
    session: Option<String>,
) -> Result<pactwise_api::Answer, ApiError> {
    let (api, scope) = state.session().await?;
    api.ask(&scope, &question, session).await
}

/// The manager's plan for a request in words, before anything runs (and whether the session may run it).
#[tauri::command]
#[specta::specta]
async fn plan_request(state: State<'_, AppState>, request: String) -> Result<PlanView, ApiError> {
    let (api, scope) = state.session().await?;
    api.plan_request_view(&scope, request).await
}

/// Plans and runs a request (the manager role): each agent's output, the follow-ups and the notice.
#[tauri::command]
#[specta::specta]
async fn run_request(state: State<'_, AppState>, request: String) -> Result<AgentRequestView, ApiError> {
    let (api, scope) = state.session().await?;
    api.run_request(&scope, request).await
}

/// The organization's recent requests to the agents.
#[tauri::command]
#[specta::specta]
async fn agent_requests(state: State<'_, AppState>) -> Result<Vec<AgentRequestRow>, ApiError> {
    let (api, scope) = state.session().await?;
    api.agent_requests(&scope).await
}

/// One request the agents ran.
#[tauri::command]
#[specta::specta]
async fn agent_request(state: State<'_, AppState>, run: RunId) -> Result<AgentRequestView, ApiError> {
    let (api, scope) = state.session().await?;
    api.agent_request(&scope, run).await
}

/// The notices the agents left for the organization, newest first.
#[tauri::command]
#[specta::specta]
async fn agent_notices(state: State<'_, AppState>) -> Result<Vec<NoticeView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.agent_notices(&scope).await
}

/// Marks the agents' notices as seen.
#[tauri::command]
#[specta::specta]
async fn agent_notices_seen(state: State<'_, AppState>) -> Result<(), ApiError> {
    let (api, scope) = state.session().await?;
    api.agent_notices_seen(&scope).await
}

/// The organization's agent thresholds, for Settings → Agents.
#[tauri::command]
#[specta::specta]
async fn agent_settings(state: State<'_, AppState>) -> Result<AgentSettingsView, ApiError> {
    let (api, scope) = state.session().await?;
    api.agent_settings(&scope).await
}

/// Changes one agent threshold (owners and admins), refused with every problem in words.
#[tauri::command]
#[specta::specta]
async fn set_agent_setting(
    state: State<'_, AppState>,
    setting: String,
    value: String,
) -> Result<AgentSettingsView, ApiError> {
    let (api, scope) = state.session().await?;
    api.set_agent_setting(&scope, setting, value).await
}

/// What the agents remember of the session's person.
#[tauri::command]
#[specta::specta]
async fn memories(state: State<'_, AppState>) -> Result<Vec<MemoryView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.memories(&scope).await
}

/// Asks the agents to remember a fact for the session's person.
#[tauri::command]
#[specta::specta]
async fn remember(state: State<'_, AppState>, text: String) -> Result<Vec<MemoryView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.remember(&scope, text).await
}

/// Deletes one of the session's person's memories.
#[tauri::command]
#[specta::specta]
async fn forget_memory(state: State<'_, AppState>, id: String) -> Result<Vec<MemoryView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.forget_memory(&scope, id).await
}

/// Pending approvals the session may resolve, oldest first (escalations that are due are made first).
#[tauri::command]
#[specta::specta]
async fn approvals_inbox(state: State<'_, AppState>) -> Result<Vec<ApprovalView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.inbox(&scope).await
}

/// Approves or rejects an approval step with a reason; the store stamps who and when from the session.
#[tauri::command]
#[specta::specta]
async fn decide_approval(
    state: State<'_, AppState>,
    id: ApprovalId,
    decision: Decision,
    reason: String,
    choice: Option<String>,
) -> Result<DecisionOutcome, ApiError> {
    let (api, scope) = state.session().await?;
    api.decide_approval(&scope, id, decision, reason, choice).await
}

/// A run with its timeline (events), approvals, tasks and checkpoint count.
#[tauri::command]
#[specta::specta]
async fn run_detail(state: State<'_, AppState>, id: RunId) -> Result<RunDetail, ApiError> {
    let (api, scope) = state.session().await?;
    api.show_run(&scope, id).await
}

/// The organization's runs, newest first.
#[tauri::command]
#[specta::specta]
async fn list_runs(state: State<'_, AppState>) -> Result<Vec<RunView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.list_runs(&scope).await
}

/// The built-in workflow graphs.
#[tauri::command]
#[specta::specta]
async fn workflow_graphs(state: State<'_, AppState>) -> Result<Vec<GraphSummary>, ApiError> {
    state.session().await?;
    pactwise_api::workflow_graphs()
}

/// Starts a run of a built-in graph and drives it until it waits or ends.
#[tauri::command]
#[specta::specta]
async fn start_run(state: State<'_, AppState>, graph: String, input: serde_json::Value) -> Result<RunView, ApiError> {
    let (api, scope) = state.session().await?;
    api.start_run(&scope, graph, input).await
}

/// The forms that start each workflow, with the organization's records filled in.
#[tauri::command]
#[specta::specta]
async fn run_forms(state: State<'_, AppState>) -> Result<Vec<RunForm>, ApiError> {
    let (api, scope) = state.session().await?;
    api.run_forms(&scope).await
}

/// The organization's runs that match the filter, newest first, in words.
#[tauri::command]
#[specta::specta]
async fn run_summaries(state: State<'_, AppState>, filter: RunFilter) -> Result<Vec<RunSummary>, ApiError> {
    let (api, scope) = state.session().await?;
    api.run_summaries(&scope, filter).await
}

/// A run in words: what it does now, its timeline, who decided what.
#[tauri::command]
#[specta::specta]
async fn run_story(state: State<'_, AppState>, id: RunId) -> Result<RunStory, ApiError> {
    let (api, scope) = state.session().await?;
    api.run_story(&scope, id).await
}

/// Cancels a run with its child runs, queued tasks and pending approvals (a reason is required).
#[tauri::command]
#[specta::specta]
async fn cancel_run(state: State<'_, AppState>, id: RunId, reason: String) -> Result<CancelOutcome, ApiError> {
    let (api, scope) = state.session().await?;
    api.cancel_run(&scope, id, reason).await
}

/// What an approver reads: the step in words, who may decide, the evidence shaped for reading.
#[tauri::command]
#[specta::specta]
async fn approval_reading(state: State<'_, AppState>, id: ApprovalId) -> Result<ApprovalReading, ApiError> {
    let (api, scope) = state.session().await?;
    api.approval_reading(&scope, id).await
}

/// Runs the contract review report on a document (or resumes its unfinished run) until it waits for sign-off or
/// ends.
#[tauri::command]
#[specta::specta]
async fn start_report(
    state: State<'_, AppState>,
    document: DocumentId,
    options: ReportOptions,
) -> Result<ReportView, ApiError> {
    let (api, scope) = state.session().await?;
    api.start_report(&scope, document, options).await
}

/// A report run of the organization.
#[tauri::command]
#[specta::specta]
async fn report(state: State<'_, AppState>, run: RunId) -> Result<ReportView, ApiError> {
    let (api, scope) = state.session().await?;
    api.report(&scope, run).await
}

/// A document's report runs, newest first.
#[tauri::command]
#[specta::specta]
async fn document_reports(state: State<'_, AppState>, document: DocumentId) -> Result<Vec<ReportView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.document_reports(&scope, document).await
}

/// Signs a report off (or declines to) with a reason; the store stamps who and when from the session.
#[tauri::command]
#[specta::specta]
async fn sign_off_report(
    state: State<'_, AppState>,
    run: RunId,
    decision: Decision,
    reason: String,
) -> Result<ReportView, ApiError> {
    let (api, scope) = state.session().await?;
    api.sign_off_report(&scope, run, decision, reason).await
}

/// Writes a signed-off report as DOCX or PDF.
#[tauri::command]
#[specta::specta]
async fn export_report(
    state: State<'_, AppState>,
    run: RunId,
    format: MemoFormat,
    path: String,
) -> Result<ExportedReview, ApiError> {
    let (api, scope) = state.session().await?;
    api.export_report(&scope, run, format, PathBuf::from(path), FROM_SAVE_DIALOG).await
}

/// Starts an RFP package from the buyer's intake; the buyer holds its edit lease.
#[tauri::command]
#[specta::specta]
async fn prep_new(state: State<'_, AppState>, intake: Intake) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_new(&scope, intake).await
}

/// The organization's RFP packages, most recently changed first.
#[tauri::command]
#[specta::specta]
async fn prep_list(state: State<'_, AppState>) -> Result<Vec<PrepSummary>, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_list(&scope).await
}

/// A package with its six artifacts, findings, run and budget, lock holder, pre-check and milestone dates.
#[tauri::command]
#[specta::specta]
async fn prep_show(state: State<'_, AppState>, id: String) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_show(&scope, &id).await
}

/// Takes or renews the package's edit lease; `take_over` takes over another person's expired one.
#[tauri::command]
#[specta::specta]
async fn prep_lock(state: State<'_, AppState>, id: String, take_over: bool) -> Result<PrepLock, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_lock(&scope, &id, take_over).await
}

/// Gives the edit lease back.
#[tauri::command]
#[specta::specta]
async fn prep_release(state: State<'_, AppState>, id: String) -> Result<(), ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_release(&scope, &id).await
}

/// A person's edit of one artifact (validated at once; downstream artifacts become stale).
#[tauri::command]
#[specta::specta]
async fn prep_edit(state: State<'_, AppState>, id: String, content: Content) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_edit(&scope, &id, content).await
}

/// Runs every validator again.
#[tauri::command]
#[specta::specta]
async fn prep_validate(state: State<'_, AppState>, id: String) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_validate(&scope, &id).await
}

/// Dismisses a critic finding that waits for the buyer, with the reason it does not apply.
#[tauri::command]
#[specta::specta]
async fn prep_dismiss_finding(
    state: State<'_, AppState>,
    id: String,
    index: u32,
    reason: String,
) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_dismiss_finding(&scope, &id, index, reason).await
}

/// Approves one artifact bound to the content hash the buyer saw.
#[tauri::command]
#[specta::specta]
async fn prep_approve(
    state: State<'_, AppState>,
    id: String,
    kind: ArtifactKind,
    seen_hash: String,
) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_approve(&scope, &id, kind, seen_hash).await
}

/// Drafts the package through the model (or resumes a paused or failed run), sending `PrepProgressEvent`s.
#[tauri::command]
#[specta::specta]
async fn prep_draft(
    app: AppHandle,
    state: State<'_, AppState>,
    id: String,
    budget: Option<RunBudget>,
    resume: bool,
) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    let package = id.clone();
    let progress = move |progress: DraftProgress| {
        if let Err(e) = (PrepProgressEvent { package: package.clone(), progress }).emit(&app) {
            tracing::warn!(error = %e, "could not send drafting progress");
        }
    };
    api.prep_draft(&scope, &id, budget, resume, &progress).await
}

/// Publishes through the store's gate, under this session.
#[tauri::command]
#[specta::specta]
async fn prep_publish(state: State<'_, AppState>, id: String) -> Result<PrepView, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_publish(&scope, &id).await
}

/// Writes the approved package to `path` as DOCX, PDF or an OCDS 1.1 release.
#[tauri::command]
#[specta::specta]
async fn prep_export(
    state: State<'_, AppState>,
    id: String,
    format: PrepExportFormat,
    path: String,
) -> Result<PrepExport, ApiError> {
    let (api, scope) = state.session().await?;
    api.prep_export(&scope, &id, format, &PathBuf::from(path), FROM_SAVE_DIALOG).await
}

/// Publishes a published Prep Studio package as a tender (a second member approves it); the opening key stays in this
/// computer's keychain.
#[tauri::command]
#[specta::specta]
async fn source_publish(state: State<'_, AppState>, id: String) -> Result<TenderView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_publish(&scope, &id).await
}

/// The organization's tenders, with status in words and counts.
#[tauri::command]
#[specta::specta]
async fn source_list(state: State<'_, AppState>) -> Result<Vec<TenderView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_list(&scope).await
}

/// One tender's status.
#[tauri::command]
#[specta::specta]
async fn source_show(state: State<'_, AppState>, id: String) -> Result<TenderView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_show(&scope, &id).await
}

/// A second member approves a tender's publication.
#[tauri::command]
#[specta::specta]
async fn source_approve(state: State<'_, AppState>, id: String) -> Result<TenderView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_approve(&scope, &id).await
}

/// Invites a vendor: the single-use link to show and copy.
#[tauri::command]
#[specta::specta]
async fn source_invite(state: State<'_, AppState>, id: String, input: InviteInput) -> Result<InvitationView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_invite(&scope, &id, input).await
}

/// The vendors' questions and their answers.
#[tauri::command]
#[specta::specta]
async fn source_questions(state: State<'_, AppState>, id: String) -> Result<Vec<QuestionView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_questions(&scope, &id).await
}

/// Answers a question for every invited vendor (without the asker's name).
#[tauri::command]
#[specta::specta]
async fn source_answer(
    state: State<'_, AppState>,
    id: String,
    question: String,
    answer: String,
) -> Result<QuestionView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_answer(&scope, &id, &question, answer).await
}

/// Opens the technical envelopes with this desktop's opening key.
#[tauri::command]
#[specta::specta]
async fn source_open_technical(state: State<'_, AppState>, id: String) -> Result<OpenedTechnical, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_open_technical(&scope, &id).await
}

/// Records a person's score (0–10) with a reason.
#[tauri::command]
#[specta::specta]
async fn source_score(state: State<'_, AppState>, id: String, input: ScoreInput) -> Result<(), ApiError> {
    let (api, scope) = state.session().await?;
    api.source_score(&scope, &id, input).await
}

/// Locks the technical evaluation.
#[tauri::command]
#[specta::specta]
async fn source_lock(state: State<'_, AppState>, id: String) -> Result<TenderView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_lock(&scope, &id).await
}

/// Opens the price envelopes; the totals from code.
#[tauri::command]
#[specta::specta]
async fn source_open_price(state: State<'_, AppState>, id: String) -> Result<EvaluationView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_open_price(&scope, &id).await
}

/// The totals from code (vendors in name order).
#[tauri::command]
#[specta::specta]
async fn source_evaluation(state: State<'_, AppState>, id: String) -> Result<EvaluationView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_evaluation(&scope, &id).await
}

/// Awards the tender with a reason (and may start the contract workflow).
#[tauri::command]
#[specta::specta]
async fn source_award(state: State<'_, AppState>, id: String, input: AwardInput) -> Result<AwardView, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_award(&scope, &id, input).await
}

/// Saves the tender's OCDS record where the save dialog said.
#[tauri::command]
#[specta::specta]
async fn source_export_ocds(state: State<'_, AppState>, id: String, path: String) -> Result<SourceExport, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_export_ocds(&scope, &id, &PathBuf::from(path), FROM_SAVE_DIALOG).await
}

/// Saves the audit trail as CSV after checking its chain.
#[tauri::command]
#[specta::specta]
async fn source_export_audit(state: State<'_, AppState>, id: String, path: String) -> Result<SourceExport, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_export_audit(&scope, &id, &PathBuf::from(path), FROM_SAVE_DIALOG).await
}

/// The crash reports not yet seen (from this run or an earlier one that stopped).
#[tauri::command]
#[specta::specta]
async fn crash_reports(state: State<'_, AppState>) -> Result<Vec<pactwise_api::diagnostics::CrashReport>, ApiError> {
    Ok(pactwise_api::diagnostics::pending_reports(state.data_dir()?))
}

/// The person has seen the crash reports: they move to `crash-reports/seen/`.
#[tauri::command]
#[specta::specta]
async fn dismiss_crash_reports(state: State<'_, AppState>) -> Result<(), ApiError> {
    pactwise_api::diagnostics::mark_reports_seen(state.data_dir()?).map_err(|e| {
        ApiError::new(ErrorCode::Storage, format!("the crash reports could not be put aside ({e}); they stay listed"))
    })
}

/// The updater's setup for this run, decided once at start (`lib.rs`, `pactwise_api::update::update_setup`).
pub struct Updates {
    pub setup: pactwise_api::update::UpdateSetup,
}

/// How an updater failure reads: verification failures are refusals, and an I/O failure after the download is an
/// install that failed (during a check it is an unreachable feed). The words are `pactwise_api::update`'s.
fn update_error(e: &tauri_plugin_updater::Error, installing: bool, current: &str) -> ApiError {
    use pactwise_api::update::UpdateFailure;
    use tauri_plugin_updater::Error as E;
    let failure = match e {
        E::Minisign(_) | E::Base64(_) | E::SignatureUtf8(_) | E::SignedVersionMismatch { .. } => {
            UpdateFailure::Unsigned
        }
        E::MissingSignedVersion => UpdateFailure::Unsigned,
        E::Serialization(e) => UpdateFailure::of_unreadable_feed(&e.to_string()),
        E::Semver(_) | E::UrlParse(_) => UpdateFailure::NotAFeed,
        E::TargetNotFound(_) | E::TargetsNotFound(_) | E::UnsupportedArch | E::UnsupportedOs => {
            UpdateFailure::NoBuildHere
        }
        E::InvalidUpdaterFormat | E::BinaryNotFoundInArchive => UpdateFailure::WrongPackage,
        E::AuthenticationFailed => UpdateFailure::NotAuthorized,
        E::Reqwest(_) | E::Network(_) | E::ReleaseNotFound | E::InsecureTransportProtocol => UpdateFailure::Unreachable,
        E::Io(_) if !installing => UpdateFailure::Unreachable,
        _ => UpdateFailure::InstallFailed,
    };
    tracing::warn!(error = %e, ?failure, installing, "update not done");
    failure.error(current)
}

/// Asks the update feed for a newer version (never an older or equal one): the offer with its notes and date, "up
/// to date", or why updates are not set up here.
#[tauri::command]
#[specta::specta]
async fn update_check(
    app: AppHandle,
    updates: State<'_, Updates>,
) -> Result<pactwise_api::update::UpdateStatus, ApiError> {
    use pactwise_api::update::UpdateStatus;
    use tauri_plugin_updater::UpdaterExt;
    let current = app.package_info().version.to_string();
    if let Some(why) = &updates.setup.not_set_up {
        return Ok(UpdateStatus::not_set_up(&current, why));
    }
    let offer = async { app.updater()?.check().await }.await.map_err(|e| update_error(&e, false, &current))?;
    Ok(match offer {
        Some(update) => {
            let published = update.date.map(|d| d.date().to_string());
            UpdateStatus::available(&current, &update.version, update.body.clone(), published.as_deref())
        }
        None => UpdateStatus::up_to_date(&current),
    })
}

/// Downloads `version` (the one the check offered), verifies its signature with the app's update key, installs it
/// and says to restart. Progress goes to the window as `UpdateProgressEvent`.
#[tauri::command]
#[specta::specta]
async fn update_install(
    app: AppHandle,
    updates: State<'_, Updates>,
    version: String,
) -> Result<pactwise_api::update::UpdateInstalled, ApiError> {
    use pactwise_api::update::{DownloadCounter, UpdateInstalled, UpdateStatus};
    use tauri_plugin_updater::UpdaterExt;
    let current = app.package_info().version.to_string();
    if let Some(why) = &updates.setup.not_set_up {
        return Err(ApiError::new(ErrorCode::UpdateUnavailable, UpdateStatus::not_set_up(&current, why).message));
    }
    let offer = async { app.updater()?.check().await }.await.map_err(|e| update_error(&e, false, &current))?;
    let update = match offer {
        Some(update) if update.version == version => update,
        other => return Err(pactwise_api::update::offer_changed(&version, other.as_ref().map(|u| u.version.as_str()))),
    };
    let mut counter = DownloadCounter::default();
    let progress = |chunk: usize, total: Option<u64>| {
        if let Some(progress) = counter.advance(chunk as u64, total)
            && let Err(e) = (UpdateProgressEvent { progress }).emit(&app)
        {
            tracing::warn!(error = %e, "could not send the update's download progress");
        }
    };
    // The download is verified (signature, key, signed version) before it is returned; nothing is written before.
    let bytes = update.download(progress, || {}).await.map_err(|e| update_error(&e, false, &current))?;
    // Installing runs the package manager (pkexec, else sudo), which may wait for a password: off the async workers.
    let installed = tauri::async_runtime::spawn_blocking(move || update.install(bytes).map(|()| update.version))
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the installation stopped unexpectedly ({e})")))?
        .map_err(|e| update_error(&e, true, &current))?;
    tracing::info!(from = %current, to = %installed, "update installed");
    Ok(UpdateInstalled::new(&installed))
}

/// Restarts the app (after an update was installed, to run the new version).
#[tauri::command]
#[specta::specta]
async fn update_restart(app: AppHandle) -> Result<(), ApiError> {
    tracing::info!("restarting to run the installed update");
    app.restart()
}

/// Saves a file of an opened technical envelope.
#[tauri::command]
#[specta::specta]
async fn source_save_file(
    state: State<'_, AppState>,
    id: String,
    vendor_account: String,
    file: String,
    path: String,
) -> Result<SourceExport, ApiError> {
    let (api, scope) = state.session().await?;
    api.source_save_file(&scope, &id, &vendor_account, &file, &PathBuf::from(path), FROM_SAVE_DIALOG).await
}

/// Where sync stands (the status line polls it).
#[tauri::command]
#[specta::specta]
async fn sync_status(state: State<'_, AppState>) -> Result<SyncStatusView, ApiError> {
    let (api, _) = state.session().await?;
    api.sync_status().await
}

/// Signs in to the organization's sync service; its organization becomes the window's session and the background
/// loop starts.
#[tauri::command]
#[specta::specta]
async fn sync_sign_in(state: State<'_, AppState>, input: SignInInput) -> Result<SyncStatusView, ApiError> {
    let (api, _) = state.session().await?;
    let scope = api.sync_sign_in(input).await?;
    state.set_scope(scope).await;
    crate::start_sync(api).await;
    api.sync_status().await
}

/// A new member's first sign-in to sync, with the one-time code their administrator gave them and the password
/// they choose; then as `sync_sign_in`.
#[tauri::command]
#[specta::specta]
async fn sync_sign_in_with_code(
    state: State<'_, AppState>,
    input: CodeSignInInput,
) -> Result<SyncStatusView, ApiError> {
    let (api, _) = state.session().await?;
    let scope = api.sync_sign_in_with_code(input).await?;
    state.set_scope(scope).await;
    crate::start_sync(api).await;
    api.sync_status().await
}

/// Settings → Members: the organization's members and what this person may do with them.
#[tauri::command]
#[specta::specta]
async fn list_members(state: State<'_, AppState>) -> Result<MembersView, ApiError> {
    let (api, scope) = state.session().await?;
    api.members(&scope).await
}

/// Adds a member through the sync service; the answer carries the one-time code (shown once).
#[tauri::command]
#[specta::specta]
async fn add_member(state: State<'_, AppState>, input: AddMemberInput) -> Result<AddedMemberView, ApiError> {
    let (api, scope) = state.session().await?;
    api.add_member(&scope, input).await
}

#[tauri::command]
#[specta::specta]
async fn change_member_role(state: State<'_, AppState>, member: String, role: Role) -> Result<MemberView, ApiError> {
    let (api, scope) = state.session().await?;
    api.change_member_role(&scope, parse_member_id(&member)?, role).await
}

#[tauri::command]
#[specta::specta]
async fn remove_member(state: State<'_, AppState>, member: String) -> Result<(), ApiError> {
    let (api, scope) = state.session().await?;
    api.remove_member(&scope, parse_member_id(&member)?).await
}

/// A new one-time sign-in code for a member (the earlier one stops working).
#[tauri::command]
#[specta::specta]
async fn new_member_code(state: State<'_, AppState>, member: String) -> Result<AddedMemberView, ApiError> {
    let (api, scope) = state.session().await?;
    api.new_member_code(&scope, parse_member_id(&member)?).await
}

/// The organizations this install works in (the switcher).
#[tauri::command]
#[specta::specta]
async fn list_organizations(state: State<'_, AppState>) -> Result<Vec<Membership>, ApiError> {
    let (api, scope) = state.session().await?;
    api.organizations(&scope).await
}

/// Makes another organization of this install current; the window's session follows.
#[tauri::command]
#[specta::specta]
async fn switch_organization(state: State<'_, AppState>, org: String) -> Result<SessionInfo, ApiError> {
    let (api, scope) = state.session().await?;
    let org = org
        .trim()
        .parse::<OrgId>()
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, format!("{org:?} is not an organization id")))?;
    let scope = api.switch_organization(&scope, org).await?;
    state.set_scope(scope.clone()).await;
    api.wake_semantic_search();
    api.session_info(&scope).await
}

/// Brings another organization's documents (with their corrections) into the current one, as its new records;
/// the other organization keeps its own.
#[tauri::command]
#[specta::specta]
async fn bring_over_documents(state: State<'_, AppState>, from: String) -> Result<BringOverReport, ApiError> {
    let (api, scope) = state.session().await?;
    let from = from
        .trim()
        .parse::<OrgId>()
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, format!("{from:?} is not an organization id")))?;
    api.bring_over_documents(&scope, from).await
}

/// Signs out of sync (the loop stops, the token leaves the keychain); the data stays.
#[tauri::command]
#[specta::specta]
async fn sync_sign_out(state: State<'_, AppState>) -> Result<SyncStatusView, ApiError> {
    let (api, _) = state.session().await?;
    api.sync_sign_out().await
}

/// The retry button: sync now instead of waiting out the backoff.
#[tauri::command]
#[specta::specta]
async fn sync_retry(state: State<'_, AppState>) -> Result<SyncStatusView, ApiError> {
    let (api, _) = state.session().await?;
    api.sync_retry().await
}

#[tauri::command]
#[specta::specta]
async fn vendor_list(state: State<'_, AppState>, include_merged: bool) -> Result<Vec<VendorSummary>, ApiError> {
    let (api, scope) = state.session().await?;
    api.vendor_list(&scope, include_merged).await
}

#[tauri::command]
#[specta::specta]
async fn vendor_detail(state: State<'_, AppState>, id: String) -> Result<VendorDetail, ApiError> {
    let (api, scope) = state.session().await?;
    api.vendor_detail(&scope, id).await
}

#[tauri::command]
#[specta::specta]
async fn vendor_create(state: State<'_, AppState>, input: VendorInput) -> Result<VendorSummary, ApiError> {
    let (api, scope) = state.session().await?;
    api.vendor_create(&scope, input).await
}

#[tauri::command]
#[specta::specta]
async fn vendor_edit(state: State<'_, AppState>, id: String, input: VendorInput) -> Result<VendorSummary, ApiError> {
    let (api, scope) = state.session().await?;
    api.vendor_edit(&scope, id, input).await
}

#[tauri::command]
#[specta::specta]
async fn vendor_set_status(
    state: State<'_, AppState>,
    id: String,
    status: VendorStatus,
    reason: String,
) -> Result<VendorSummary, ApiError> {
    let (api, scope) = state.session().await?;
    api.vendor_set_status(&scope, id, status, reason).await
}

#[tauri::command]
#[specta::specta]
async fn vendor_duplicates(state: State<'_, AppState>) -> Result<Vec<DuplicateGroupView>, ApiError> {
    let (api, scope) = state.session().await?;
    api.vendor_duplicates(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn vendor_merge(state: State<'_, AppState>, kept: String, merged: String) -> Result<MergeResult, ApiError> {
    let (api, scope) = state.session().await?;
    api.vendor_merge(&scope, kept, merged).await
}

#[tauri::command]
#[specta::specta]
async fn start_vendor_onboarding(
    state: State<'_, AppState>,
    vendor: String,
    input: OnboardingInput,
) -> Result<RunView, ApiError> {
    let (api, scope) = state.session().await?;
    api.start_vendor_onboarding(&scope, vendor, input).await
}

#[tauri::command]
#[specta::specta]
async fn start_contract_lifecycle(state: State<'_, AppState>, id: DocumentId) -> Result<RunView, ApiError> {
    let (api, scope) = state.session().await?;
    api.start_contract_lifecycle(&scope, id).await
}

#[tauri::command]
#[specta::specta]
async fn contract_list(state: State<'_, AppState>, query: ContractQuery) -> Result<Page<ContractRow>, ApiError> {
    let (api, scope) = state.session().await?;
    api.contract_list(&scope, query).await
}

#[tauri::command]
#[specta::specta]
async fn contract_facets(state: State<'_, AppState>) -> Result<ContractFacets, ApiError> {
    let (api, scope) = state.session().await?;
    api.contract_facets(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn contract_detail(state: State<'_, AppState>, id: DocumentId) -> Result<ContractDetail, ApiError> {
    let (api, scope) = state.session().await?;
    api.contract_detail(&scope, id).await
}

#[tauri::command]
#[specta::specta]
async fn upcoming_dates(
    state: State<'_, AppState>,
    from: pactwise_api::NaiveDate,
    months: u32,
) -> Result<UpcomingDates, ApiError> {
    let (api, scope) = state.session().await?;
    api.upcoming_dates(&scope, from, months).await
}

#[tauri::command]
#[specta::specta]
async fn export_contract_calendar(
    state: State<'_, AppState>,
    from: pactwise_api::NaiveDate,
    months: u32,
    path: String,
) -> Result<ExportedCalendar, ApiError> {
    let (api, scope) = state.session().await?;
    api.export_contract_calendar(&scope, from, months, PathBuf::from(path), FROM_SAVE_DIALOG).await
}

#[tauri::command]
#[specta::specta]
async fn usage_report(state: State<'_, AppState>, month: Option<String>) -> Result<UsageReport, ApiError> {
    let (api, scope) = state.session().await?;
    api.usage_report(&scope, month).await
}

#[tauri::command]
#[specta::specta]
async fn audit_choices(state: State<'_, AppState>) -> Result<AuditChoices, ApiError> {
    let (api, scope) = state.session().await?;
    api.audit_choices(&scope).await
}

#[tauri::command]
#[specta::specta]
async fn audit_page(
    state: State<'_, AppState>,
    query: AuditQuery,
    cursor: Option<String>,
    limit: Option<u32>,
) -> Result<AuditPage, ApiError> {
    let (api, scope) = state.session().await?;
    api.audit_page(&scope, query, cursor, limit).await
}

#[tauri::command]
#[specta::specta]
async fn export_audit_csv(
    state: State<'_, AppState>,
    query: AuditQuery,
    path: String,
) -> Result<ExportedAudit, ApiError> {
    let (api, scope) = state.session().await?;
    api.export_audit_csv(&scope, query, PathBuf::from(path), FROM_SAVE_DIALOG).await
}

#[tauri::command]
#[specta::specta]
async fn stage_log(state: State<'_, AppState>, id: DocumentId) -> Result<Vec<StageLogEntry>, ApiError> {
    let (api, scope) = state.session().await?;
    api.stage_log(&scope, id).await
}

#[tauri::command]
#[specta::specta]
async fn assistant_history(
    state: State<'_, AppState>,
    search: Option<String>,
    cursor: Option<String>,
) -> Result<HistoryPage, ApiError> {
    let (api, scope) = state.session().await?;
    api.assistant_history(&scope, search, cursor, None).await
}

/// How far meaning-based search is prepared for the organization.
#[tauri::command]
#[specta::specta]
async fn semantic_status(state: State<'_, AppState>) -> Result<pactwise_api::SemanticStatus, ApiError> {
    let (api, scope) = state.session().await?;
    api.semantic_status(&scope).await
}

/// The commands and events the UI may use; also what the TypeScript bindings are generated from.
pub fn specta_builder() -> tauri_specta::Builder<tauri::Wry> {
    tauri_specta::Builder::<tauri::Wry>::new()
        .commands(tauri_specta::collect_commands![
            session_info,
            list_documents,
            import_documents,
            delete_document,
            restore_document,
            model_availability,
            first_run,
            complete_first_run,
            plan_request,
            run_request,
            agent_requests,
            agent_request,
            agent_notices,
            agent_notices_seen,
            agent_settings,
            set_agent_setting,
            memories,
            remember,
            forget_memory,
            explore_demo,
            set_api_key,
            clear_api_key,
            voyage_status,
            set_voyage_key,
            clear_voyage_key,
            review_queue,
            document_review,
            rerun_pipeline,
            dry_run_pipeline,
            page_layout,
            checklist_type,
            correct_item,
            finalize_review,
            reopen_review,
            export_review,
            vendors,
            review_thresholds,
            set_review_threshold,
            own_names,
            set_own_names,
            ask_assistant,
            approvals_inbox,
            decide_approval,
            run_detail,
            list_runs,
            workflow_graphs,
            start_run,
            run_forms,
            run_summaries,
            run_story,
            cancel_run,
            approval_reading,
            start_report,
            report,
            document_reports,
            sign_off_report,
            export_report,
            prep_new,
            prep_list,
            prep_show,
            prep_lock,
            prep_release,
            prep_edit,
            prep_validate,
            prep_approve,
            prep_dismiss_finding,
            prep_draft,
            prep_publish,
            prep_export,
            source_publish,
            source_list,
            source_show,
            source_approve,
            source_invite,
            source_questions,
            source_answer,
            source_open_technical,
            source_score,
            source_lock,
            source_open_price,
            source_evaluation,
            source_award,
            source_export_ocds,
            source_export_audit,
            source_save_file,
            crash_reports,
            dismiss_crash_reports,
            sync_status,
            sync_sign_in,
            sync_sign_in_with_code,
            list_members,
            add_member,
            change_member_role,
            remove_member,
            new_member_code,
            list_organizations,
            switch_organization,
            bring_over_documents,
            sync_sign_out,
            sync_retry,
            contract_list,
            contract_facets,
            contract_detail,
            upcoming_dates,
            export_contract_calendar,
            vendor_list,
            vendor_detail,
            vendor_create,
            vendor_edit,
            vendor_set_status,
            vendor_duplicates,
            vendor_merge,
            start_vendor_onboarding,
            start_contract_lifecycle,
            usage_report,
            audit_choices,
            audit_page,
            export_audit_csv,
            stage_log,
            assistant_history,
            semantic_status,
            update_check,
            update_install,
            update_restart,
        ])
        .events(tauri_specta::collect_events![
            ImportProgressEvent,
            PrepProgressEvent,
            RunsChangedEvent,
            RecordsChangedEvent,
            SemanticProgressEvent,
            CrashReportedEvent,
            UpdateProgressEvent
        ])
        // Sizes are u64 in Rust; no file Pactwise accepts comes near 2^53 bytes.
        .dangerously_cast_bigints_to_number()
}

/// Writes the TypeScript bindings for the UI (`ui/src/lib/bindings.ts`) to `path`.
pub fn export_bindings(path: &std::path::Path) -> Result<(), String> {
    let language = specta_typescript::Typescript::default()
        .header("// Generated from the Tauri commands by `make bindings`; do not edit by hand.");
    specta_builder().export(language, path).map_err(|e| e.to_string())
}
