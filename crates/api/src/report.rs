//! The contract review report (workflow WF-CR-1) as user actions: run it on a document (or resume the document's
//! unfinished run), show a report and a document's reports, sign a report off, export a signed report as DOCX or
//! PDF. A run is driven on a blocking thread with a database connection of its own, so the store thread stays free
//! for the rest of the app while the model works; its organization and the person who signs off come from the
//! session only.

use crate::memo::{Line, Memo, MemoFormat};
use crate::workspace::{ExportedReview, TextSpan, cited_pages, quote_span};
use crate::{Api, ApiError};
use chrono::{DateTime, Utc};
use pactwise_domain::{
    ApprovalId, ApprovalStatus, ContractReport, Decision, DocumentId, ErrorCode, ReportCompleteness, ReportPart, RunId,
    RunStatus,
};
use pactwise_engine::{Engine, GatewayModel, ModelPort, RunState};
use pactwise_store::{OrgScope, RunRecord, SharedReportRow, SharedStepState, Store};
use pactwise_workflows::report::{GRAPH, Limits, ReportInput, SIGN_OFF_NODE};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// Settings keys of the organization's report bounds (model calls, and seconds of model-driven work).
pub const REPORT_MAX_CALLS_KEY: &str = "report.max_calls";
pub const REPORT_TIME_LIMIT_KEY: &str = "report.time_limit_secs";

/// The worker name report runs are driven under: stable across restarts, so a resumed run is taken at once.
const REPORT_WORKER: &str = "desk-report";

/// Where a report stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ReportStatus {
    /// Extracting, classifying or verifying (or interrupted; running the report again resumes it).
    Running,
    /// Assembled (complete or incomplete); waiting for a person to sign it off.
    AwaitingSignOff,
    SignedOff,
    /// The person declined to sign it off.
    SignOffRefused,
    /// The run could not produce a report; `reason` says why.
    Failed,
    Cancelled,
}

/// A person's sign-off decision, stamped by the store from their session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ReportSignOff {
    pub decision: Decision,
    pub by: String,
    pub at: DateTime<Utc>,
    pub reason: String,
}

/// How far a running report is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ReportProgress {
    pub windows_done: u32,
    pub windows: u32,
    pub clause_types_done: u32,
    pub clause_types: u32,
    pub calls_used: u32,
}

/// A report run as the UI and the CLI show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ReportView {
    pub run: RunId,
    pub document: DocumentId,
    pub document_name: String,
    pub status: ReportStatus,
    /// Why the run failed (or was cancelled).
    pub reason: Option<String>,
    /// The assembled report (only clauses found on their cited page), once there is one.
    pub report: Option<ContractReport>,
    /// Where each clause of the report stands on its page (character offsets into the page's text), found by the
    /// backend; a clause whose page no longer holds it has none.
    pub clause_spans: Vec<ClauseSpan>,
    pub progress: Option<ReportProgress>,
    /// The pending sign-off step, while there is one.
    pub approval: Option<ApprovalId>,
    pub sign_off: Option<ReportSignOff>,
    pub started_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A clause's place on its page, for the contract pane's highlight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ClauseSpan {
    pub clause_id: String,
    pub page: u32,
    pub span: TextSpan,
}

/// Where each clause the report shows (filed or unassigned) stands on its page.
fn clause_spans(store: &Store, scope: &OrgScope, report: &ContractReport) -> Result<Vec<ClauseSpan>, ApiError> {
    let clauses = report.shown_clauses();
    let pages = cited_pages(store, scope, report.document, clauses.iter().map(|c| c.page))?;
    Ok(clauses
        .into_iter()
        .filter_map(|c| {
            let span = quote_span(&pages, c.page, &c.text)?;
            Some(ClauseSpan { clause_id: c.clause_id.clone(), page: c.page, span })
        })
        .collect())
}

/// Bounds for one run; unset values come from the organization's settings, then the defaults (60 calls, 300 s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ReportOptions {
    pub max_calls: Option<u32>,
    pub time_limit_secs: Option<u32>,
}

fn channels(record: &RunRecord) -> std::collections::BTreeMap<String, Value> {
    serde_json::from_str::<RunState>(&record.state).map(|s| s.channels).unwrap_or_default()
}

fn document_of(record: &RunRecord) -> Option<DocumentId> {
    serde_json::from_str::<Value>(&record.input).ok()?.get("document")?.as_str()?.parse().ok()
}

fn view(record: &RunRecord, document_name: String, approvals: &[pactwise_store::ApprovalRecord]) -> ReportView {
    let channels = channels(record);
    let report: Option<ContractReport> =
        channels.get("report").filter(|v| !v.is_null()).and_then(|v| serde_json::from_value(v.clone()).ok());
    let sign_off_step = approvals.iter().rev().find(|a| a.node == SIGN_OFF_NODE);
    let sign_off = sign_off_step.filter(|a| a.status != ApprovalStatus::Pending).and_then(|a| {
        let decision = match a.status {
            ApprovalStatus::Approved => Decision::Approve,
            ApprovalStatus::Rejected => Decision::Reject,
            _ => return None,
        };
        Some(ReportSignOff {
            decision,
            by: a.decided_by_name.clone().unwrap_or_default(),
            at: a.decided_at?,
            reason: a.reason.clone().unwrap_or_default(),
        })
    });
    let status = match record.status {
        RunStatus::Failed => ReportStatus::Failed,
        RunStatus::Cancelled => ReportStatus::Cancelled,
        _ => match &sign_off {
            Some(s) if s.decision == Decision::Approve => ReportStatus::SignedOff,
            Some(_) => ReportStatus::SignOffRefused,
            None if report.is_some() && record.status == RunStatus::Waiting => ReportStatus::AwaitingSignOff,
            None => ReportStatus::Running,
        },
    };
    let progress = channels.get("plan").filter(|p| !p.is_null()).map(|plan| {
        let count = |name: &str| channels.get(name).and_then(Value::as_object).map_or(0, |m| m.len() as u32);
        let len = |field: &str| plan[field].as_array().map_or(0, |a| a.len() as u32);
        ReportProgress {
            windows_done: count("windows"),
            windows: len("windows"),
            clause_types_done: count("types"),
            clause_types: len("playbook") + len("over_bound"),
            calls_used: channels.get("spent").and_then(|s| s["calls"].as_u64()).unwrap_or(0) as u32,
        }
    });
    ReportView {
        run: record.id,
        document: document_of(record).unwrap_or_else(|| report.as_ref().map_or_else(DocumentId::new, |r| r.document)),
        document_name,
        status,
        reason: record.reason.clone(),
        report,
        clause_spans: Vec::new(),
        progress,
        approval: sign_off_step.filter(|a| a.status == ApprovalStatus::Pending).map(|a| a.id),
        sign_off,
        started_at: record.created_at,
        updated_at: record.updated_at,
    }
}

/// A report another desktop's run assembled, as this desktop shows it: the run's status from its published copy, the
/// sign-off from its step (the service's stamp: who and when), and only the clauses found on their cited page here
/// (the report came from another device: a clause this desktop cannot find is listed as rejected, never shown).
fn shared_view(store: &Store, scope: &OrgScope, row: &SharedReportRow, document_name: String) -> Option<ReportView> {
    let run: RunId = row.run.parse().ok()?;
    let mut report: ContractReport = serde_json::from_value(row.report.clone()).ok()?;
    let shared = store.shared_runs();
    let record = shared.run(scope, &row.run).ok().map(|r| r.record);
    let steps = shared.approvals(scope, Some(&row.run)).unwrap_or_default();
    let step = steps.iter().rev().find(|a| a.record.get("node").and_then(Value::as_str) == Some(SIGN_OFF_NODE));
    let sign_off = step.and_then(|a| {
        Some(ReportSignOff {
            decision: a.decision?,
            by: a.decided_by_name.clone().unwrap_or_default(),
            at: a.decided_at?,
            reason: a.reason.clone().unwrap_or_default(),
        })
    });
    let run_status = record.as_ref().and_then(|r| r.get("status")).and_then(|s| serde_json::from_value(s.clone()).ok());
    let status = match (run_status, &sign_off) {
        (Some(RunStatus::Failed), _) => ReportStatus::Failed,
        (Some(RunStatus::Cancelled), _) => ReportStatus::Cancelled,
        (_, Some(s)) if s.decision == Decision::Approve => ReportStatus::SignedOff,
        (_, Some(_)) => ReportStatus::SignOffRefused,
        (_, None) => ReportStatus::AwaitingSignOff,
    };
    let time = |k: &str| record.as_ref().and_then(|r| r.get(k)).and_then(|t| serde_json::from_value(t.clone()).ok());
    let spans = clause_spans(store, scope, &report).ok()?;
    let found: std::collections::BTreeSet<&str> = spans.iter().map(|c| c.clause_id.as_str()).collect();
    let mut rejected = Vec::new();
    let mut keep = |clauses: &mut Vec<pactwise_domain::ReportClause>, claimed: Option<&str>| {
        clauses.retain(|c| {
            let here = found.contains(c.clause_id.as_str());
            if !here {
                rejected.push(pactwise_domain::ReportRejection {
                    clause_id: c.clause_id.clone(),
                    text: c.text.clone(),
                    page: c.page,
                    window: c.window,
                    reason: "quote_not_found".into(),
                    claimed_types: claimed.map(|t| vec![t.to_string()]).unwrap_or_default(),
                });
            }
            here
        });
    };
    for t in &mut report.clause_types {
        let item = t.item_id.clone();
        keep(&mut t.clauses, Some(&item));
    }
    keep(&mut report.unassigned, None);
    report.rejected.extend(rejected);
    Some(ReportView {
        run,
        document: report.document,
        document_name,
        status,
        reason: record.as_ref().and_then(|r| r.get("reason")).and_then(Value::as_str).map(str::to_string),
        report: Some(report),
        clause_spans: spans,
        progress: None,
        approval: step.filter(|a| a.state == SharedStepState::Open).and_then(|a| a.step.parse().ok()),
        sign_off,
        started_at: time("created_at").unwrap_or(row.received_at),
        updated_at: time("updated_at").unwrap_or(row.received_at),
    })
}

fn not_a_report() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such report in your organization; see the document's reports")
}

impl Api {
    fn report_views(store: &Store, scope: &OrgScope, records: &[RunRecord]) -> Result<Vec<ReportView>, ApiError> {
        let mut views = Vec::with_capacity(records.len());
        for record in records {
            let name = match document_of(record).map(|d| store.documents().get(scope, d)) {
                Some(Ok(d)) => d.name,
                _ => String::new(),
            };
            let approvals = store.approvals().for_run(scope, record.id)?;
            let mut shown = view(record, name, &approvals);
            if let Some(report) = &shown.report {
                shown.clause_spans = clause_spans(store, scope, report)?;
            }
            views.push(shown);
        }
        Ok(views)
    }

    /// A report run of the session's organization.
    pub async fn report(&self, scope: &OrgScope, run: RunId) -> Result<ReportView, ApiError> {
        let scope = scope.clone();
        self.db
            .call(move |store| {
                let record = match store.runs().get(&scope, run) {
                    Ok(record) => record,
                    // Another desktop's report run, as published here.
                    Err(pactwise_store::StoreError::NotFound) => {
                        let Ok(row) = store.shared_runs().report(&scope, &run.to_string()) else {
                            return Ok(Err(not_a_report()));
                        };
                        let name = match row.document.parse().map(|d| store.documents().get(&scope, d)) {
                            Ok(Ok(d)) => d.name,
                            _ => String::new(),
                        };
                        return Ok(shared_view(store, &scope, &row, name).ok_or_else(not_a_report));
                    }
                    Err(e) => return Err(e),
                };
                if record.graph_name != GRAPH {
                    return Ok(Err(not_a_report()));
                }
                Ok(Self::report_views(store, &scope, &[record]).map(|mut v| v.remove(0)))
            })
            .await?
    }

    /// The document's report runs, newest first.
    pub async fn document_reports(&self, scope: &OrgScope, document: DocumentId) -> Result<Vec<ReportView>, ApiError> {
        self.get_document(scope, document).await?;
        let scope = scope.clone();
        self.db
            .call(move |store| {
                let records: Vec<RunRecord> = store
                    .runs()
                    .list(&scope, 500)?
                    .into_iter()
                    .filter(|r| r.graph_name == GRAPH && document_of(r) == Some(document))
                    .collect();
                let mut views = match Self::report_views(store, &scope, &records) {
                    Ok(views) => views,
                    Err(e) => return Ok(Err(e)),
                };
                // Reports other desktops' runs assembled for it (their runs are not here).
                let name = store.documents().get(&scope, document).map(|d| d.name).unwrap_or_default();
                for row in store.shared_runs().reports(&scope, &document.to_string())? {
                    views.extend(shared_view(store, &scope, &row, name.clone()));
                }
                views.sort_by_key(|v| std::cmp::Reverse(v.started_at));
                Ok(Ok(views))
            })
            .await?
    }

    /// Runs the contract review report on an imported document of the session's organization, or resumes the
    /// document's unfinished report run, and drives it until it waits for sign-off or ends. The playbook is the
    /// checklist of the document's contract type (its pipeline classifies it first if it has not yet).
    pub async fn start_report(
        &self,
        scope: &OrgScope,
        document: DocumentId,
        options: ReportOptions,
    ) -> Result<ReportView, ApiError> {
        let doc = self.get_document(scope, document).await?;
        self.ensure_pages(scope, &doc, &|_, _, _| {}).await?;
        let _guard = InFlight::take(&self.reports_in_flight, document).ok_or_else(|| {
            ApiError::new(ErrorCode::InvalidInput, "a report is already running for this document; wait for it")
        })?;
        let unfinished = self
            .document_reports(scope, document)
            .await?
            .into_iter()
            .find(|r| r.status == ReportStatus::Running)
            .map(|r| r.run);
        let input = match unfinished {
            Some(_) => None,
            None => {
                let mut contract_type = self.document_review(scope, document).await?.contract_type.map(|t| t.id);
                if contract_type.is_none() {
                    contract_type = self
                        .run_pipeline(scope, document, crate::ReviewMode::Auto, None)
                        .await?
                        .contract_type
                        .map(|t| t.id);
                }
                let contract_type = contract_type.ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::ReviewIncomplete,
                        "the document's contract type is not known yet, so there is no playbook; open its review first",
                    )
                })?;
                let limits = self.report_limits(scope, options).await?;
                Some(ReportInput { document, contract_type, limits }.to_value())
            }
        };
        let model = (self.model_availability().await == crate::ModelAvailability::Ready)
            .then(|| GatewayModel::new(self.model.clone(), tokio::runtime::Handle::current()));
        let (path, clock, session) = (self.data_dir.database(), self.clock.clone(), scope.session());
        let run = tokio::task::spawn_blocking(move || -> Result<RunId, ApiError> {
            // This connection is the report's own worker: the platform path, by name.
            let (store, credential) =
                Store::open(&path, clock).map_err(ApiError::from)?.into_platform_worker(REPORT_WORKER).into_parts();
            let scope = store.sessions().open(session)?;
            let registry = crate::runs::registry()?;
            let engine = Engine::new(&store, registry, &credential)
                .with_model(model.as_ref().map(|m| m as &dyn ModelPort))
                .with_lease(chrono::Duration::minutes(15));
            let id = match (unfinished, input) {
                (Some(id), _) => id,
                (None, Some(input)) => engine.start(&scope, GRAPH, input)?,
                (None, None) => return Err(ApiError::new(ErrorCode::Internal, "nothing to run")),
            };
            let _span = tracing::info_span!("report_run", run = %id).entered();
            engine.drive(id)?;
            Ok(id)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the report run was interrupted ({e})")))??;
        self.report(scope, run).await
    }

    async fn report_limits(&self, scope: &OrgScope, options: ReportOptions) -> Result<Limits, ApiError> {
        let s = scope.clone();
        let (calls, secs) = self
            .db
            .call(move |store| {
                Ok((
                    store.settings().get::<u32>(&s, REPORT_MAX_CALLS_KEY)?,
                    store.settings().get::<u32>(&s, REPORT_TIME_LIMIT_KEY)?,
                ))
            })
            .await?;
        let defaults = Limits::default();
        let max_calls = options.max_calls.or(calls).unwrap_or(defaults.max_calls);
        let secs = options.time_limit_secs.or(secs).map(u64::from).unwrap_or(defaults.time_limit_ms / 1000);
        if !(1..=1000).contains(&max_calls) {
            return Err(ApiError::new(ErrorCode::InvalidInput, "the call budget must be 1 to 1000 model calls"));
        }
        if !(1..=3600).contains(&secs) {
            return Err(ApiError::new(ErrorCode::InvalidInput, "the time limit must be 1 to 3600 seconds"));
        }
        Ok(Limits { max_calls, time_limit_ms: secs * 1000 })
    }

    /// Signs a report off (or declines to) as the session's user, with a reason. The store checks that the user
    /// may (owner, admin or reviewer of the organization) and stamps who and when.
    pub async fn sign_off_report(
        &self,
        scope: &OrgScope,
        run: RunId,
        decision: Decision,
        reason: String,
    ) -> Result<ReportView, ApiError> {
        let current = self.report(scope, run).await?;
        let approval = current.approval.ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidInput,
                match current.status {
                    ReportStatus::Running => "the report is not assembled yet; run it to the end first",
                    _ => "this report is not waiting for a sign-off",
                },
            )
        })?;
        self.decide_approval(scope, approval, decision, reason, None).await?;
        self.report(scope, run).await
    }

    /// Writes a signed-off report as DOCX or PDF to `path` (an existing file only when `existing` says to replace
    /// it).
    pub async fn export_report(
        &self,
        scope: &OrgScope,
        run: RunId,
        format: MemoFormat,
        path: PathBuf,
        existing: crate::Existing,
    ) -> Result<ExportedReview, ApiError> {
        crate::export_file::check_target(&path, existing)?;
        let view = self.report(scope, run).await?;
        let (Some(report), Some(sign_off), ReportStatus::SignedOff) = (&view.report, &view.sign_off, view.status)
        else {
            return Err(ApiError::new(ErrorCode::ReviewIncomplete, "sign the report off before exporting it"));
        };
        let organization = self.session_info(scope).await?.org_name;
        let memo = report_memo(&view.document_name, &organization, report, sign_off);
        let bytes = tokio::task::spawn_blocking(move || match format {
            MemoFormat::Docx => memo.docx(),
            MemoFormat::Pdf => memo.pdf(),
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the export was interrupted ({e})")))??;
        crate::export_file::write_export(&path, &bytes, existing)?;
        Ok(ExportedReview { path: path.display().to_string(), bytes: bytes.len() as u64, format })
    }
}

/// The signed report for people outside the app: clauses by type with their verified text and page, then what
/// was rejected, dropped and not processed.
pub(crate) fn report_memo(
    document: &str,
    organization: &str,
    report: &ContractReport,
    sign_off: &ReportSignOff,
) -> Memo {
    let mut lines = vec![Line::Title(format!("Contract review report: {document}"))];
    lines.push(Line::Text(format!("Contract type: {}", report.contract_type_name)));
    lines.push(Line::Text(format!("Organization: {organization}")));
    lines.push(Line::Text(match report.completeness {
        ReportCompleteness::Complete => "Complete: every window of pages and every clause type was processed.".into(),
        ReportCompleteness::Incomplete => {
            format!("Incomplete: {} part(s) were not processed (listed at the end).", report.unprocessed.len())
        }
    }));
    lines.push(Line::Text(format!(
        "Signed off by {} on {}: {}",
        sign_off.by,
        sign_off.at.format("%Y-%m-%d %H:%M UTC"),
        sign_off.reason
    )));
    lines.push(Line::Text(format!(
        "Model calls: {} of {}; time: {} s of {} s. Every clause below was found on the page it cites.",
        report.bounds.calls_used,
        report.bounds.call_limit,
        report.bounds.time_used_ms / 1000,
        report.bounds.time_limit_ms / 1000
    )));
    lines.push(Line::Heading("Clauses by type".into()));
    for t in report.clause_types.iter().filter(|t| t.processed) {
        if t.clauses.is_empty() {
            lines.push(Line::Text(format!("{} [{}]: no clause found", t.question, t.item_id)));
            continue;
        }
        lines.push(Line::Text(format!("{} [{}] ({} risk)", t.question, t.item_id, t.risk.as_str())));
        for c in &t.clauses {
            lines.push(Line::Quote(format!("“{}” (page {})", c.text, c.page)));
            if !c.also_under.is_empty() {
                lines.push(Line::Text(format!("Also filed under: {}", c.also_under.join(", "))));
            }
        }
    }
    if !report.unassigned.is_empty() {
        lines.push(Line::Heading("Other verified clauses (no clause type)".into()));
        for c in &report.unassigned {
            lines.push(Line::Quote(format!("“{}” (page {})", c.text, c.page)));
        }
    }
    if !report.rejected.is_empty() {
        lines.push(Line::Heading("Rejected extractions (not found on the cited page)".into()));
        for r in &report.rejected {
            lines.push(Line::Text(format!("{} cited page {} ({}): {}", r.clause_id, r.page, r.reason, r.text)));
        }
    }
    if !report.dropped.is_empty() {
        lines.push(Line::Heading("Dropped at an edge".into()));
        for d in &report.dropped {
            let from = match (&d.window, &d.item_id) {
                (Some(w), _) => format!("window {w}"),
                (None, Some(item)) => item.clone(),
                (None, None) => String::new(),
            };
            lines.push(Line::Text(format!("{from}: {} — received {}", d.reason, d.received)));
        }
    }
    if !report.unprocessed.is_empty() {
        lines.push(Line::Heading("Not processed".into()));
        for u in &report.unprocessed {
            let what = match u.part {
                ReportPart::Window => format!("Window {} ({})", u.id, u.label),
                ReportPart::ClauseType => format!("Clause type {}", u.id),
            };
            let detail = u.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default();
            lines.push(Line::Text(format!("{what}: {}{detail}", u.reason.describe())));
        }
    }
    Memo { lines }
}

/// Marks a document's report as being driven by this process until dropped.
struct InFlight {
    set: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<DocumentId>>>,
    document: DocumentId,
}

impl InFlight {
    fn take(
        set: &std::sync::Arc<std::sync::Mutex<std::collections::HashSet<DocumentId>>>,
        document: DocumentId,
    ) -> Option<InFlight> {
        let inserted = set.lock().unwrap_or_else(|e| e.into_inner()).insert(document);
        inserted.then(|| InFlight { set: set.clone(), document })
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.set.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.document);
    }
}
