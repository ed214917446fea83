//! Prep Studio as user actions: one function per action, used by the CLI (`pactwise prep ...`) and the desktop
//! view (`src-tauri`'s `prep_*` commands). Every action takes the session's scope; edits need the caller's edit lease; publishing goes only
//! through the store's gate (`Prep::publish`) under the caller's own session.
//!
//! The edit lease: for an organization that syncs it is held on the sync service (`prep_take_lease` asks it before
//! every edit and keeps its answer in the store); offline a package is edited only under a lease this desktop
//! already holds that has not expired. For one that does not sync the store decides. Both run the one rule,
//! `pactwise_rules::prep::lease::decide`.
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
use pactwise_store::prep::{GateViolation, LockInfo, PackageRow, ServiceLease};
use pactwise_sync::lease::LeaseOutcome;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How long an edit lease lasts; every action that edits renews it (the sync service's default too).
pub const PREP_LEASE_MINUTES: i64 = pactwise_sync::lease::LEASE_MINUTES;

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
    /// The lease is held on the organization's sync service (one editor across all its desktops).
    pub on_service: bool,
}

fn lock_view(scope: &OrgScope, lock: LockInfo, on_service: bool) -> PrepLock {
    PrepLock {
        held_by_me: lock.holder == scope.user(),
        holder_name: lock.holder_name,
        expires_at: lock.expires_at,
        expired: lock.expired,
        on_service,
    }
}

fn service_lease(lease: &pactwise_sync::lease::LeaseView) -> ServiceLease {
    ServiceLease {
        holder: lease.holder,
        holder_name: lease.holder_name.clone(),
        acquired_at: lease.acquired_at,
        expires_at: lease.expires_at,
    }
}

fn offline_lease_error(e: &str) -> ApiError {
    ApiError::new(
        ErrorCode::SyncUnavailable,
        format!(
            "the sync service cannot be reached ({e}), and this desktop holds no live edit lease for this package, so              another person may be editing it; edit it again when the service can be reached"
        ),
    )
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

fn view(scope: &OrgScope, row: PackageRow, lock: Option<LockInfo>, on_service: bool) -> Result<PrepView, ApiError> {
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
        lock: lock.map(|l| lock_view(scope, l, on_service)),
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
    pub(crate) async fn prep_view(&self, scope: &OrgScope, id: &str) -> Result<PrepView, ApiError> {
        let (s, id) = (scope.clone(), id.to_string());
        let (row, lock, syncs) = self
            .db
            .call(move |store| {
                Ok((store.prep().get(&s, &id)?, store.prep().lock(&s, &id)?, store.sync_log().org_syncs(&s)?))
            })
            .await?;
        view(scope, row, lock, syncs)
    }

    /// Takes or renews the caller's edit lease (`take_over`: another person's expired one). For an organization
    /// that syncs, the sync service decides and its answer is kept here (a refusal names the holder and the
    /// expiry); when it cannot be reached, a lease this desktop holds that has not expired still lets the caller
    /// edit, and anything else is refused with what to do. For one that does not sync, the store decides.
    pub(crate) async fn prep_take_lease(
        &self,
        scope: &OrgScope,
        id: &str,
        take_over: bool,
    ) -> Result<LockInfo, ApiError> {
        let (s, id_owned) = (scope.clone(), id.to_string());
        self.db.call(move |store| store.prep().get(&s, &id_owned)).await?;
        let http = match self.members_service(scope).await {
            Ok(Some(http)) => http,
            Ok(None) => {
                let (s, id) = (scope.clone(), id.to_string());
                return Ok(self.db.call(move |store| store.prep().acquire_lock(&s, &id, lease(), take_over)).await?);
            }
            // Signed in, but this device's token cannot be read: as offline, the lease held here decides.
            Err(e) => return self.offline_lease(scope, id, take_over, &e.message).await,
        };
        if !pactwise_store::prep::can_prepare_packages(scope.role()) {
            return Err(pactwise_store::StoreError::Forbidden { role: scope.role() }.into());
        }
        let package = uuid::Uuid::parse_str(id)
            .map_err(|_| ApiError::new(ErrorCode::NotFound, "no such package in your organization"))?;
        let answer = http.take_lease(package, take_over).await;
        let (s, id_owned) = (scope.clone(), id.to_string());
        let keep = |lease: Option<ServiceLease>| async move {
            self.db.call(move |store| store.prep().adopt_lease(&s, &id_owned, lease.as_ref())).await
        };
        match answer {
            Ok(LeaseOutcome::Granted(granted)) => {
                keep(Some(service_lease(&granted.lease))).await?;
                if granted.grant != pactwise_sync::lease::LeaseGrantKind::Renewed {
                    // The service logged the new holder: the next round brings it (and a take-over's audit) here.
                    self.sync_slot.wake();
                }
            }
            Ok(LeaseOutcome::Refused { message, lease }) => {
                keep(Some(service_lease(&lease))).await?;
                return Err(ApiError::new(ErrorCode::PackageLocked, message));
            }
            Err(e) if e.code() == ErrorCode::SyncUnavailable => {
                return self.offline_lease(scope, id, take_over, &e.to_string()).await;
            }
            Err(e) => return Err(ApiError::new(e.code(), e.to_string())),
        }
        let (s, id) = (scope.clone(), id.to_string());
        self.db
            .call(move |store| store.prep().lock(&s, &id)?.ok_or(pactwise_store::StoreError::NotFound))
            .await
            .map_err(Into::into)
    }

    /// The service cannot be asked: only a lease this desktop holds that has not expired lets the caller edit
    /// (`pactwise_rules::prep::lease::may_edit`); a take-over waits for the service.
    async fn offline_lease(
        &self,
        scope: &OrgScope,
        id: &str,
        take_over: bool,
        why: &str,
    ) -> Result<LockInfo, ApiError> {
        let (s, id) = (scope.clone(), id.to_string());
        let now = self.clock.now();
        let lock = self.db.call(move |store| store.prep().lock(&s, &id)).await?;
        let held = lock.as_ref().map(|l| pactwise_rules::prep::lease::Lease {
            holder: l.holder,
            acquired_at: l.acquired_at,
            expires_at: l.expires_at,
        });
        match lock {
            Some(l) if !take_over && pactwise_rules::prep::lease::may_edit(held.as_ref(), scope.user(), now) => Ok(l),
            _ => Err(offline_lease_error(why)),
        }
    }

    /// Loads the package under the caller's (renewed) lease, changes it with `change`, and saves it.
    async fn prep_change(
        &self,
        scope: &OrgScope,
        id: &str,
        change: impl FnOnce(&mut Package) -> Result<(), ApiError> + Send + 'static,
    ) -> Result<PrepView, ApiError> {
        self.prep_take_lease(scope, id, false).await?;
        let (s, id_owned) = (scope.clone(), id.to_string());
        let result = self
            .db
            .call(move |store| {
                let row = store.prep().get(&s, &id_owned)?;
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
        // For an organization that syncs the lease is the service's; offline, the creator's lease here stands.
        if let Err(e) = self.prep_take_lease(scope, &id, false).await {
            tracing::info!(package = %id, "the new package's lease stays this desktop's for now: {}", e.message);
        }
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

    /// Takes (or renews) the edit lease; refused while another person's lease is live, and for another person's
    /// expired lease unless `take_over` (then taken over and audited).
    pub async fn prep_lock(&self, scope: &OrgScope, id: &str, take_over: bool) -> Result<PrepLock, ApiError> {
        let lock = self.prep_take_lease(scope, id, take_over).await?;
        let s = scope.clone();
        let syncs = self.db.call(move |store| store.sync_log().org_syncs(&s)).await?;
        Ok(lock_view(scope, lock, syncs))
    }

    /// Gives the caller's lease back (on the sync service too when the organization syncs and it can be reached).
    pub async fn prep_release(&self, scope: &OrgScope, id: &str) -> Result<(), ApiError> {
        if let Some(http) = self.members_service(scope).await.ok().flatten()
            && let Ok(package) = uuid::Uuid::parse_str(id)
        {
            match http.release_lease(package).await {
                Ok(()) => self.sync_slot.wake(),
                Err(e) => tracing::info!(package = %id, "the lease stays on the service until it expires: {e}"),
            }
        }
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
        self.prep_take_lease(scope, id, false).await?;
        let (s, id_owned) = (scope.clone(), id.to_string());
        let catalog = crate::review::catalog().map_err(|e| e.message);
        let retriever = self.retriever.clone();
        let (row, grounding) = self
            .db
            .call(move |store| {
                let row = store.prep().get(&s, &id_owned)?;
                let intake: Option<Intake> =
                    serde_json::from_value(row.package["artifacts"]["intake"]["content"].clone()).ok();
                let grounding = intake
                    .map(|i| {
                        pactwise_prep::grounding::gather(
                            store,
                            &retriever,
                            catalog.as_deref().map_err(Clone::clone),
                            &i,
                        )
                    })
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
            PrepExportFormat::Pdf => pactwise_prep::export::pdf(&view.package)?,
        };
        crate::export_file::write_export(out, &bytes, existing)?;
        Ok(PrepExport { path: out.display().to_string(), bytes: bytes.len() as u64, format })
    }
}
