//! Prep Studio as user actions: one function per action, used by the CLI (`pactwise prep ...`) and the desktop
//! view (`src-tauri`'s `prep_*` commands). Every action takes the session's scope; edits need the caller's edit lease; publishing goes only
//! through the store's gate (`Prep::publish`) under the caller's own session.
//!
//! For the desktop view: `prep_show` returns everything the Prep Studio screen shows (the six artifacts with their
//! states, validator errors, content hashes and prompt stamps; critic findings; warnings; the run with its budget
//! meter; the lock holder; the publish pre-check; the milestone dates the calendar computes from the intake). Editing and validation work offline; `prep_draft` needs the model.

use crate::{Api, ApiError};
use pactwise_domain::ErrorCode;
use pactwise_model::CallContext;
use pactwise_prep::export::ExportError;
use pactwise_prep::{
    ArtifactKind, Content, DismissError, DraftProgress, Drafter, Intake, MilestoneKind, Package, RunBudget, StepError,
};
use pactwise_store::OrgScope;
use pactwise_store::prep::{GateViolation, LockInfo, PackageRow};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How long an edit lease lasts; every action that edits renews it.
pub const PREP_LEASE_MINUTES: i64 = 30;

fn lease() -> chrono::Duration {
    chrono::Duration::minutes(PREP_LEASE_MINUTES)
}

/// One rule the publish pre-check (or the store's gate) found broken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PublishViolation {
    pub rule: String,
    pub artifact: String,
    pub subject: Option<String>,
    pub message: String,
}

impl From<&GateViolation> for PublishViolation {
    fn from(v: &GateViolation) -> Self {
        PublishViolation {
            rule: v.rule.as_str().to_string(),
            artifact: v.artifact.clone(),
            subject: v.subject.clone(),
            message: v.message.clone(),
        }
    }
}

/// Who holds the edit lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PrepLock {
    pub holder_name: String,
    pub held_by_me: bool,
    pub expires_at: chrono::DateTime<chrono::Utc>,
    pub expired: bool,
}

fn lock_view(scope: &OrgScope, lock: LockInfo) -> PrepLock {
    PrepLock {
        held_by_me: lock.holder == scope.user(),
        holder_name: lock.holder_name,
        expires_at: lock.expires_at,
        expired: lock.expired,
    }
}

/// A milestone date computed in code from the intake's timeline (business-day calendar, the intake's holidays).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct MilestoneDate {
    pub kind: MilestoneKind,
    /// The milestone's name in words ("Deadline for questions").
    pub title: String,
    pub date: chrono::NaiveDate,
}

/// A package as Prep Studio shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PrepView {
    pub id: String,
    pub version: u32,
    /// `draft` or `published`.
    pub status: String,
    pub package: Package,
    pub lock: Option<PrepLock>,
    /// What the store's gate would refuse now (empty: ready to publish).
    pub precheck: Vec<PublishViolation>,
    /// The six milestone dates the calendar gives for the current intake (empty without an intake). The milestones
    /// artifact must carry exactly these dates.
    pub milestone_preview: Vec<MilestoneDate>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// A package in a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PrepSummary {
    pub id: String,
    pub title: String,
    pub status: String,
    pub states: Vec<(ArtifactKind, String)>,
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PrepExportFormat {
    Docx,
    Pdf,
    /// An OCDS 1.1 release (JSON).
    Ocds,
}

/// A written export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PrepExport {
    pub path: String,
    pub bytes: u64,
    pub format: PrepExportFormat,
}

impl From<StepError> for ApiError {
    fn from(e: StepError) -> ApiError {
        let code = match e {
            StepError::ApprovalOutdated { .. } => ErrorCode::ApprovalOutdated,
            StepError::NotAllowed { .. } => ErrorCode::InvalidInput,
        };
        ApiError::new(code, e.to_string())
    }
}

impl From<DismissError> for ApiError {
    fn from(e: DismissError) -> ApiError {
        let code = match e {
            DismissError::NoSuchFinding(_) => ErrorCode::NotFound,
            DismissError::Closed | DismissError::NoReason => ErrorCode::InvalidInput,
        };
        ApiError::new(code, e.to_string())
    }
}

impl From<ExportError> for ApiError {
    fn from(e: ExportError) -> ApiError {
        let code = match e {
            ExportError::NotApproved(_) => ErrorCode::PublishBlocked,
            ExportError::Docx(_) => ErrorCode::Internal,
        };
        ApiError::new(code, e.to_string())
    }
}

fn parse_package(row: &PackageRow) -> Result<Package, ApiError> {
    serde_json::from_value(row.package.clone()).map_err(|e| {
        tracing::error!(error = %e, package = row.id, "a stored package could not be read");
        ApiError::new(ErrorCode::Internal, "the stored package could not be read; details are in the log")
    })
}

fn view(scope: &OrgScope, row: PackageRow, lock: Option<LockInfo>) -> Result<PrepView, ApiError> {
    let package = parse_package(&row)?;
    let precheck = pactwise_prep::precheck(&package.artifacts).iter().map(PublishViolation::from).collect();
    let milestone_preview = package
        .artifacts
        .intake
        .content
        .as_ref()
        .map(pactwise_prep::milestone_dates)
        .unwrap_or_default()
        .into_iter()
        .map(|(kind, date)| MilestoneDate { kind, title: kind.title().to_string(), date })
        .collect();
    Ok(PrepView {
        id: row.id,
        version: row.version,
        status: row.status,
        package,
        lock: lock.map(|l| lock_view(scope, l)),
        precheck,
        milestone_preview,
        updated_at: row.updated_at,
    })
}

/// Parses an artifact name (`intake`, `scope`, `requirements`, `criteria`, `pricing`, `milestones`).
pub fn parse_artifact(text: &str) -> Result<ArtifactKind, ApiError> {
    ArtifactKind::parse(text).ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("unknown artifact {text:?}; use intake, scope, requirements, criteria, pricing or milestones"),
        )
    })
}

impl Api {
    async fn prep_view(&self, scope: &OrgScope, id: &str) -> Result<PrepView, ApiError> {
        let (s, id) = (scope.clone(), id.to_string());
        let (row, lock) =
            self.db.call(move |store| Ok((store.prep().get(&s, &id)?, store.prep().lock(&s, &id)?))).await?;
        view(scope, row, lock)
    }

    /// Loads the package under the caller's (renewed) lease, changes it with `change`, and saves it.
    async fn prep_change(
        &self,
        scope: &OrgScope,
        id: &str,
        change: impl FnOnce(&mut Package) -> Result<(), ApiError> + Send + 'static,
    ) -> Result<PrepView, ApiError> {
        let (s, id_owned) = (scope.clone(), id.to_string());
        let result = self
            .db
            .call(move |store| {
                let row = store.prep().get(&s, &id_owned)?;
                store.prep().acquire_lock(&s, &id_owned, lease())?;
                let mut package = match parse_package(&row) {
                    Ok(p) => p,
                    Err(e) => return Ok(Err(e)),
                };
                if let Err(e) = change(&mut package) {
                    return Ok(Err(e));
                }
                store.prep().save(&s, &id_owned, row.version, &package.to_json())?;
                Ok(Ok(()))
            })
            .await?;
        result?;
        self.prep_view(scope, id).await
    }

    /// Starts a package from the buyer's intake; the buyer holds its edit lease.
    pub async fn prep_new(&self, scope: &OrgScope, intake: Intake) -> Result<PrepView, ApiError> {
        if intake.title.trim().is_empty() {
            return Err(ApiError::new(ErrorCode::InvalidInput, "the intake needs a title"));
        }
        let package = Package::new(intake);
        let s = scope.clone();
        let id = self
            .db
            .call(move |store| store.prep().create(&s, &package.title.clone(), &package.to_json(), lease()))
            .await?;
        self.prep_view(scope, &id).await
    }

    pub async fn prep_list(&self, scope: &OrgScope) -> Result<Vec<PrepSummary>, ApiError> {
        let s = scope.clone();
        let rows = self.db.call(move |store| store.prep().list(&s)).await?;
        rows.iter()
            .map(|row| {
                let package = parse_package(row)?;
                Ok(PrepSummary {
                    id: row.id.clone(),
                    title: row.title.clone(),
                    status: row.status.clone(),
                    states: ArtifactKind::ALL.iter().map(|k| (*k, package.state(*k).name().to_string())).collect(),
                    updated_at: row.updated_at,
                })
            })
            .collect()
    }

    pub async fn prep_show(&self, scope: &OrgScope, id: &str) -> Result<PrepView, ApiError> {
        self.prep_view(scope, id).await
    }

    /// Takes (or renews) the edit lease; refused while another person's lease is live.
    pub async fn prep_lock(&self, scope: &OrgScope, id: &str) -> Result<PrepLock, ApiError> {
        let (s, id) = (scope.clone(), id.to_string());
        let lock = self.db.call(move |store| store.prep().acquire_lock(&s, &id, lease())).await?;
        Ok(lock_view(scope, lock))
    }

    pub async fn prep_release(&self, scope: &OrgScope, id: &str) -> Result<(), ApiError> {
        let (s, id) = (scope.clone(), id.to_string());
        Ok(self.db.call(move |store| store.prep().release_lock(&s, &id)).await?)
    }

    /// A person's edit of one artifact: downstream artifacts become stale and lose their approval.
    pub async fn prep_edit(&self, scope: &OrgScope, id: &str, content: Content) -> Result<PrepView, ApiError> {
        self.prep_change(scope, id, move |p| {
            let kind = content.kind();
            p.set_content(kind, content, None)?;
            Ok(())
        })
        .await
    }

    /// Runs every validator again (after upstream edits, stale artifacts become valid or invalid).
    pub async fn prep_validate(&self, scope: &OrgScope, id: &str) -> Result<PrepView, ApiError> {
        self.prep_change(scope, id, |p| Ok(p.revalidate()?)).await
    }

    /// Approves one artifact as the buyer saw it: `seen_hash` must be its current content hash.
    pub async fn prep_approve(
        &self,
        scope: &OrgScope,
        id: &str,
        kind: ArtifactKind,
        seen_hash: String,
    ) -> Result<PrepView, ApiError> {
        self.prep_change(scope, id, move |p| Ok(p.approve(kind, &seen_hash)?)).await
    }

    /// Dismisses a critic finding that waits for the buyer (`index` in the package's list), with the reason it does
    /// not apply.
    pub async fn prep_dismiss_finding(
        &self,
        scope: &OrgScope,
        id: &str,
        index: u32,
        reason: String,
    ) -> Result<PrepView, ApiError> {
        self.prep_change(scope, id, move |p| Ok(p.dismiss_finding(index as usize, &reason)?)).await
    }

    /// Drafts the package through the model (a new run), or continues a paused or failed one (`resume`).
    /// `progress` is called before each step (a draft or a critic cycle) starts.
    pub async fn prep_draft(
        &self,
        scope: &OrgScope,
        id: &str,
        budget: Option<RunBudget>,
        resume: bool,
        progress: &(dyn Fn(DraftProgress) + Send + Sync),
    ) -> Result<PrepView, ApiError> {
        let (s, id_owned) = (scope.clone(), id.to_string());
        let catalog = crate::review::catalog().map_err(|e| e.message);
        let (row, grounding) = self
            .db
            .call(move |store| {
                let row = store.prep().get(&s, &id_owned)?;
                store.prep().acquire_lock(&s, &id_owned, lease())?;
                let intake: Option<Intake> =
                    serde_json::from_value(row.package["artifacts"]["intake"]["content"].clone()).ok();
                let grounding = intake
                    .map(|i| pactwise_prep::grounding::gather(store, catalog.as_deref().map_err(Clone::clone), &i))
                    .unwrap_or_default();
                Ok((row, grounding))
            })
            .await?;
        let mut package = parse_package(&row)?;
        if resume {
            if !pactwise_prep::resume(&mut package, budget) {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    "there is no paused or failed drafting run to resume; start one with `prep draft`",
                ));
            }
        } else {
            let budget = budget.unwrap_or(package.run.budget);
            pactwise_prep::plan(&mut package, budget);
        }
        let drafter = Drafter {
            model: &self.model,
            ctx: CallContext::new(scope.org(), Some(scope.user()), "prep_draft"),
            clock: self.clock.as_ref(),
            grounding: &grounding,
        };
        let traces = drafter.run_with_progress(&mut package, progress).await;
        let (s, id_owned) = (scope.clone(), id.to_string());
        self.db
            .call(move |store| {
                store.prep().record_traces(&s, &id_owned, &traces)?;
                store.prep().save(&s, &id_owned, row.version, &package.to_json())
            })
            .await?;
        self.prep_view(scope, id).await
    }

    /// Publishes through the store's gate, under the caller's own session.
    pub async fn prep_publish(&self, scope: &OrgScope, id: &str) -> Result<PrepView, ApiError> {
        let (s, id_owned) = (scope.clone(), id.to_string());
        self.db.call(move |store| store.prep().publish(&s, &id_owned)).await?;
        self.prep_view(scope, id).await
    }

    /// Writes the approved package to `out` as DOCX, PDF or an OCDS 1.1 release (an existing file only when
    /// `existing` says to replace it).
    pub async fn prep_export(
        &self,
        scope: &OrgScope,
        id: &str,
        format: PrepExportFormat,
        out: &Path,
        existing: crate::Existing,
    ) -> Result<PrepExport, ApiError> {
        crate::export_file::check_target(out, existing)?;
        let view = self.prep_view(scope, id).await?;
        let bytes = match format {
            PrepExportFormat::Docx => pactwise_prep::export::docx(&view.package)?,
            PrepExportFormat::Ocds => {
                let release =
                    pactwise_prep::export::ocds_release(&view.package, &view.id, view.version, self.clock.now())?;
                serde_json::to_vec_pretty(&release).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
            }
            PrepExportFormat::Pdf => {
                use pactwise_docx::Block;
                use pactwise_prep::export::Line;
                let lines = pactwise_prep::export::document_lines(&view.package)?;
                let blocks: Vec<Block<'_>> = lines
                    .iter()
                    .map(|l| match l {
                        Line::Title(t) => Block::Title(t),
                        Line::Heading(t) => Block::Heading(t),
                        Line::Text(t) => Block::Text(t),
                        Line::Bullet(t) => Block::Bullet(t),
                    })
                    .collect();
                pactwise_docx::pdf::write(&blocks).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
            }
        };
        crate::export_file::write_export(out, &bytes, existing)?;
        Ok(PrepExport { path: out.display().to_string(), bytes: bytes.len() as u64, format })
    }
}
