//! The model gateway as the app uses it: one `ModelClient` per process, its usage ledger and budgets kept in the
//! store (through a second SQLite connection, since the client's ledger and budget hooks are synchronous), and the
//! API key in the OS keychain. Setting, clearing and checking the key never returns the key itself.

use crate::{Api, ApiError};
use chrono::{DateTime, Utc};
use pactwise_domain::usage::{Budget, BudgetPeriod, BudgetSubject, UsageRecord};
use pactwise_domain::{ErrorCode, OrgId, Role, UserId};
use pactwise_model::{
    ApiKey, BudgetSource, BudgetSourceError, KeyStoreError, LedgerError, ModelClient, ModelStatus, UsageLedger,
};
use pactwise_store::{OrgScope, Store, UsageJournal};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The store seen by the model client: ledger rows in (each journaled on disk first, `store::UsageJournal`),
/// budgets and spending out.
pub(crate) struct StoreUsage {
    store: Mutex<Store>,
    journal: Option<UsageJournal>,
}

impl StoreUsage {
    /// Writes what stopped processes left in their journals, then opens this process's own (without one, each
    /// record's batch is written at once, so nothing waits in memory; the reason is logged).
    pub(crate) fn new(store: Store, journal_dir: &Path) -> StoreUsage {
        match UsageJournal::recover(journal_dir, &store) {
            Ok(0) => {}
            Ok(n) => tracing::info!(records = n, "usage records of a stopped process written to the ledger"),
            Err(error) => tracing::error!(%error, "the usage journals of stopped processes could not be written"),
        }
        let journal = UsageJournal::open(journal_dir)
            .inspect_err(|error| tracing::error!(%error, "no usage journal; model usage is written call by call"))
            .ok();
        StoreUsage { store: Mutex::new(store), journal }
    }

    fn with<R>(&self, f: impl FnOnce(&Store) -> R) -> R {
        let guard = self.store.lock().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }
}

impl UsageLedger for StoreUsage {
    fn record_batch(&self, records: &[UsageRecord]) -> Result<(), LedgerError> {
        self.with(|s| s.usage().record_batch(records)).map_err(|e| LedgerError(e.to_string()))
    }

    fn journal(&self, record: &UsageRecord) -> Result<(), LedgerError> {
        match &self.journal {
            Some(journal) => journal.append(record).map_err(|e| LedgerError(e.to_string())),
            None => Err(LedgerError("no usage journal".into())),
        }
    }

    fn journal_written(&self) -> Result<(), LedgerError> {
        self.journal.as_ref().map_or(Ok(()), |j| j.clear().map_err(|e| LedgerError(e.to_string())))
    }
}

impl BudgetSource for StoreUsage {
    fn budgets(&self, org: OrgId) -> Result<Vec<Budget>, BudgetSourceError> {
        self.with(|s| s.usage().budgets(org)).map_err(|e| BudgetSourceError(e.to_string()))
    }

    fn spent_micros(&self, org: OrgId, user: Option<UserId>, since: DateTime<Utc>) -> Result<i64, BudgetSourceError> {
        self.with(|s| s.usage().spent_micros(org, user, since)).map_err(|e| BudgetSourceError(e.to_string()))
    }
}

/// Whether model calls can be made now, for the status line and Settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ModelAvailability {
    /// A key is set and the model answered recently (or has not been asked yet).
    Ready,
    /// No API key: everything works offline, model-drafted steps are skipped or done by rules.
    NoApiKey,
    /// The OS keychain cannot be reached, so the key cannot be read.
    KeychainUnavailable,
    /// Recent calls failed; model calls pause for a short cool-down and rules are used meanwhile.
    Paused,
    /// This computer has no trusted root certificates, so no secure connection can be made (install
    /// ca-certificates); everything works offline.
    NoSecureConnection,
}

impl From<ModelStatus> for ModelAvailability {
    fn from(s: ModelStatus) -> Self {
        match s {
            ModelStatus::Ready => ModelAvailability::Ready,
            ModelStatus::NoApiKey => ModelAvailability::NoApiKey,
            ModelStatus::KeychainUnavailable => ModelAvailability::KeychainUnavailable,
            ModelStatus::BreakerOpen { .. } => ModelAvailability::Paused,
            ModelStatus::NoSecureConnection => ModelAvailability::NoSecureConnection,
        }
    }
}

/// The model's availability with where requests go, for the status line and Settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ModelStatusView {
    pub availability: ModelAvailability,
    /// Where model requests go (scheme, host and port) when `PACTWISE_MODEL_ENDPOINT` points away from the default
    /// API; `None` for the default.
    pub endpoint: Option<String>,
}

/// Only owners and admins set or clear the installation's API key: it pays for every organization's calls here.
pub(crate) fn require_key_manager(scope: &OrgScope) -> Result<(), ApiError> {
    if matches!(scope.role(), Role::Owner | Role::Admin) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::Forbidden,
        format!(
            "only an owner or an admin can set or remove the API key (you are {}); ask one of them to do it",
            scope.role()
        ),
    ))
}

/// A budget as Settings shows and edits it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ModelBudget {
    /// `organization`, `each_user` or a user id.
    pub subject: String,
    /// `daily` or `monthly` (UTC calendar).
    pub period: String,
    /// The limit in micro-dollars (1 USD = 1,000,000).
    pub limit_micros: f64,
}

pub(crate) fn key_error(e: KeyStoreError) -> ApiError {
    match e {
        KeyStoreError::Unavailable(_) => ApiError::new(
            ErrorCode::ModelUnavailable,
            "the OS keychain cannot be reached, so the API key cannot be stored; unlock your keyring (Secret Service) \
             and try again",
        ),
        other => ApiError::new(ErrorCode::Internal, format!("the keychain refused the change: {other}")),
    }
}

impl Api {
    /// The process's one model client (all model calls go through it).
    pub fn model(&self) -> &Arc<ModelClient> {
        &self.model
    }

    pub async fn model_availability(&self) -> ModelAvailability {
        self.model.status().await.into()
    }

    /// The availability and, when it is not the default, where requests go.
    pub async fn model_status(&self) -> ModelStatusView {
        ModelStatusView {
            availability: self.model_availability().await,
            endpoint: self.model.non_default_endpoint().map(str::to_owned),
        }
    }

    /// Stores the API key in the OS keychain (never in the database, files or logs). Owners and admins only.
    pub async fn set_api_key(&self, scope: &OrgScope, key: String) -> Result<ModelAvailability, ApiError> {
        require_key_manager(scope)?;
        let key = ApiKey::parse(&key).map_err(|e| ApiError::new(ErrorCode::InvalidInput, e.to_string()))?;
        let keys = self.keys.clone();
        tokio::task::spawn_blocking(move || keys.set(&key))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the keychain call was interrupted ({e})")))?
            .map_err(key_error)?;
        tracing::info!("API key stored in the keychain");
        Ok(self.model_availability().await)
    }

    /// Removes the API key from the keychain; the app goes on offline. Owners and admins only.
    pub async fn clear_api_key(&self, scope: &OrgScope) -> Result<ModelAvailability, ApiError> {
        require_key_manager(scope)?;
        let keys = self.keys.clone();
        tokio::task::spawn_blocking(move || keys.clear())
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the keychain call was interrupted ({e})")))?
            .map_err(key_error)?;
        tracing::info!("API key removed from the keychain");
        Ok(self.model_availability().await)
    }

    /// Sets the organization's model budget (owners and admins): `subject` is `organization`, `each_user` or a
    /// user id; `period` is `daily` or `monthly`.
    pub async fn set_model_budget(
        &self,
        scope: &OrgScope,
        subject: &str,
        period: &str,
        limit_micros: i64,
    ) -> Result<(), ApiError> {
        let subject = match subject {
            "organization" => BudgetSubject::Organization,
            "each_user" => BudgetSubject::EachUser,
            other => BudgetSubject::User(other.parse().map_err(|_| {
                ApiError::new(
                    ErrorCode::InvalidInput,
                    format!("{other:?} is not a budget subject; use organization, each_user or a user id"),
                )
            })?),
        };
        let period: BudgetPeriod = period.parse().map_err(|_| {
            ApiError::new(ErrorCode::InvalidInput, format!("{period:?} is not a budget period; use daily or monthly"))
        })?;
        if limit_micros < 0 {
            return Err(ApiError::new(ErrorCode::InvalidInput, "a budget cannot be negative"));
        }
        let s = scope.clone();
        Ok(self.db.call(move |store| store.usage().set_budget(&s, subject, period, limit_micros)).await?)
    }

    pub async fn model_budgets(&self, scope: &OrgScope) -> Result<Vec<ModelBudget>, ApiError> {
        let s = scope.clone();
        let budgets = self.db.call(move |store| store.usage().list_budgets(&s)).await?;
        Ok(budgets
            .into_iter()
            .map(|b| ModelBudget {
                subject: match b.subject {
                    BudgetSubject::User(u) => u.to_string(),
                    other => other.kind().to_string(),
                },
                period: b.period.as_str().to_string(),
                limit_micros: b.limit_micros as f64,
            })
            .collect())
    }
}
