//! The desktop side of sync: this module joins `pactwise-store` and `pactwise-sync` (which do not know each other).
//!
//! - [`WireEncoder`] turns the store's local changes of synced records into `sync::Change`s (HLC-stamped) inside
//!   the writing transaction; the store calls it only for an organization that is signed in to sync.
//! - [`StoreReplica`] is the store's `sync::LocalReplica`: outbox, cursor, and remote pages applied in one
//!   transaction (last-writer-wins fields, append-only corrections kept once, synced settings).
//! - [`FileHooks`] move documents' files: uploaded before the change that names them is pushed, fetched after each
//!   round (resumable, hash-verified) and imported locally under the same document id (extraction, search index,
//!   offline pipeline) without queueing anything back.
//! - Sign-in binds the service's organization and user to this install; the device token lives only in the OS
//!   keychain ([`SyncTokens`]). The background loop is the `SyncClient`'s own: it listens on the service's push
//!   channel between rounds and polls every `ApiOptions::sync_interval` as the fallback; local writes and the retry
//!   button wake it through [`LoopSlot`].
//! - Every request goes over `https://` (plain `http://` only to this computer), trusting the platform's roots and
//!   the organization's own CA when one is configured (`ApiOptions::sync_trust`, `PACTWISE_SYNC_CA_FILE`).

//!
//! The pieces: `tokens` (the keychain entry), `encoding` (local changes → wire changes, the loop's slot), `replica`
//! (the store as the client's replica), `files` (documents' files around a round); this file holds sign-in, status
//! and the loop. None of the pieces imports this file.

mod encoding;
mod files;
pub(crate) mod publish;
mod replica;
mod tokens;

pub(crate) use encoding::{LoopSlot, WireEncoder};
pub use tokens::{KeyringSyncTokens, MemorySyncTokens, SyncTokens};

use crate::{Api, ApiError, ImportStage, ReviewMode};
use chrono::{DateTime, Utc};
use encoding::Running;
use files::FileHooks;
use pactwise_domain::ErrorCode;
use pactwise_store::members::KnownMember;
use pactwise_store::{OrgScope, SYNC_ACCOUNT_SETTING, SyncBinding};
use pactwise_sync::members::CodeSignInRequest;
use pactwise_sync::wire::SignInRequest;
use pactwise_sync::{DeviceToken, HttpApi, SyncClient, SyncError};
use replica::StoreReplica;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::Ordering;
pub(crate) use tokens::token_error;
use uuid::Uuid;

/// What a person types to sign in to sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SignInInput {
    /// The sync service's address, e.g. `https://sync.example.com` (plain `http://` only to this computer, e.g.
    /// `http://127.0.0.1:8787`).
    pub server: String,
    /// The organization's short name (slug), as its administrator gave it.
    pub org: String,
    pub email: String,
    pub password: String,
}

/// What a new member types to sign in for the first time: the one-time code their administrator gave them, and
/// the password they choose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CodeSignInInput {
    pub server: String,
    /// The organization's short name (slug).
    pub org: String,
    pub email: String,
    /// The one-time code (`ABCD-EFGH-JKLM-NPQR`; case, spaces and dashes do not matter).
    pub code: String,
    /// The password to sign in with from now on (at least 10 characters).
    pub password: String,
}

/// The sync account of the signed-in organization (kept in its settings; not a secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SyncAccount {
    pub server: String,
    pub org_slug: String,
    pub email: String,
    pub device_id: String,
}

/// Where sync stands, for the status line and Settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SyncPhase {
    /// This install does not sync (local only).
    NotSignedIn,
    /// A round is running.
    Syncing,
    /// The last step failed; sync retries by itself at `next_retry_at` (or at once with the retry button).
    WaitingToRetry,
    /// Changes or files wait (the next round takes them).
    Pending,
    /// Everything here is on the service and everything there is here.
    Synced,
    /// Signed in, no round finished yet.
    NotSyncedYet,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SyncStatusView {
    pub phase: SyncPhase,
    pub account: Option<SyncAccount>,
    /// The signed-in organization's name.
    pub org_name: Option<String>,
    /// Local changes not yet on the service.
    pub pending_uploads: u32,
    /// Documents from other devices whose file is not here (or not imported) yet.
    pub files_waiting: u32,
    pub last_success: Option<String>,
    /// Why sync is stuck, while it is.
    pub last_error: Option<ApiError>,
    pub next_retry_at: Option<String>,
    /// Whether a background loop runs in this process (the app); the CLI syncs with `pactwise sync now`.
    pub running: bool,
    /// Local changes the service refused to store (newest first, at most 20), with its reason: they stay on this
    /// computer only.
    pub refused_changes: Vec<RefusedChangeView>,
    /// How many changes the service refused in all.
    pub refused_total: u32,
}

/// A local change the sync service refused, in people's words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RefusedChangeView {
    /// What the change was ("the review thresholds", "a document").
    pub what: String,
    /// The service's reason (what to do).
    pub reason: String,
    pub refused_at: String,
}

impl From<pactwise_store::RefusedChange> for RefusedChangeView {
    fn from(r: pactwise_store::RefusedChange) -> Self {
        let what = match (r.model.as_str(), r.record_id.as_str()) {
            ("setting", "review.thresholds") => "the review thresholds".to_string(),
            ("setting", "organization.aliases") => "the organization's names".to_string(),
            ("setting", _) => "a setting".to_string(),
            ("document", _) => "a document".to_string(),
            ("review_correction", _) => "a review correction".to_string(),
            ("approval_decision", _) => "an approval decision".to_string(),
            _ => "a change".to_string(),
        };
        RefusedChangeView { what, reason: r.message, refused_at: r.refused_at.to_rfc3339() }
    }
}

/// What `sync now` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SyncRoundReport {
    pub pushed: u32,
    pub pulled: u32,
    pub files_uploaded: u32,
    pub files_fetched: u32,
    pub documents_imported: u32,
    pub status: SyncStatusView,
}

/// The background loop of the signed-in organization: `run` until sign-out or another sign-in stops it.
pub struct SyncLoop {
    client: Arc<SyncClient<StoreReplica>>,
    stopped: tokio::sync::oneshot::Receiver<()>,
}

impl SyncLoop {
    /// What the loop has done (rounds, what woke each, push-channel fallbacks), updated as it goes.
    pub fn progress(&self) -> tokio::sync::watch::Receiver<pactwise_sync::LoopProgress> {
        self.client.progress()
    }

    pub async fn run(self) {
        let SyncLoop { client, stopped } = self;
        tracing::info!("sync loop started");
        client
            .run(async move {
                let _ = stopped.await;
            })
            .await;
        tracing::info!("sync loop stopped");
    }
}

/// This machine's name, as the device's name on the sync service.
pub(crate) fn device_name() -> String {
    let name = std::fs::read_to_string("/etc/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "Pactwise desktop".to_string());
    name.chars().take(100).collect()
}

/// A sync service address as the person typed it: `https://…`, or `http://` to this computer only (one rule, the
/// sync client's own `check_endpoint`). Shells call it before asking for the password, so a refused address costs
/// nobody a typed secret.
pub fn check_server(server: &str) -> Result<String, ApiError> {
    pactwise_sync::check_endpoint(server).map_err(|e| ApiError::new(ErrorCode::InvalidInput, e.to_string()))
}

fn rfc3339(t: Option<DateTime<Utc>>) -> Option<String> {
    t.map(|t| t.to_rfc3339())
}

/// The signed-in organization: its session's scope and its account.
type Bound = (OrgScope, SyncAccount, String);

impl Api {
    pub(crate) async fn bound_sync(&self) -> Result<Option<Bound>, ApiError> {
        Ok(self
            .db
            .call(|store| {
                let Some(session) = store.sync_log().bound_session()? else { return Ok(None) };
                let Ok(scope) = store.sessions().open(session) else { return Ok(None) };
                let Some(account) = store.settings().get::<SyncAccount>(&scope, SYNC_ACCOUNT_SETTING)? else {
                    return Ok(None);
                };
                let name = store.platform().organization_name(scope.org())?;
                Ok(Some((scope, account, name)))
            })
            .await?)
    }

    /// Signs this install in to an organization of the sync service: the service checks the password and issues a
    /// device token, which goes to the OS keychain (never to the database, files or logs). The organization and the
    /// user are bound locally with the service's ids and role, and a session in that organization becomes current;
    /// the organization this install used before stays and can be switched back to. The organization's members
    /// (names and roles) are recorded here too. Returns the new session's scope.
    #[tracing::instrument(skip_all, name = "sync_sign_in")]
    pub async fn sync_sign_in(&self, input: SignInInput) -> Result<OrgScope, ApiError> {
        let server = check_server(&input.server)?;
        let (org_slug, email) = (input.org.trim().to_string(), input.email.trim().to_lowercase());
        if org_slug.is_empty() || email.is_empty() || input.password.is_empty() {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                "fill in the organization, the email and the password to sign in to sync",
            ));
        }
        let request = SignInRequest {
            org: org_slug.clone(),
            email: email.clone(),
            password: input.password,
            device_name: device_name(),
        };
        let signed = self.sync_http(&server, None)?.sign_in(&request).await.map_err(|e| sign_in_error(&server, e))?;
        self.finish_sign_in(server, org_slug, email, signed).await
    }

    /// Signs a new member in with the one-time code their administrator handed over, setting their password (used
    /// from then on), then binds this install as [`Api::sync_sign_in`] does. The code works once.
    #[tracing::instrument(skip_all, name = "sync_sign_in_with_code")]
    pub async fn sync_sign_in_with_code(&self, input: CodeSignInInput) -> Result<OrgScope, ApiError> {
        let server = check_server(&input.server)?;
        let (org_slug, email) = (input.org.trim().to_string(), input.email.trim().to_lowercase());
        if org_slug.is_empty() || email.is_empty() || input.code.trim().is_empty() {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                "fill in the organization, your email and the sign-in code your administrator gave you",
            ));
        }
        if input.password.chars().count() < 10 {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                "choose a password of at least 10 characters; you sign in with it from now on",
            ));
        }
        let request = CodeSignInRequest {
            org: org_slug.clone(),
            email: email.clone(),
            code: input.code.trim().to_string(),
            password: input.password,
            device_name: device_name(),
        };
        let signed = self.sync_http(&server, None)?.sign_in_with_code(&request).await.map_err(|e| match e {
            SyncError::Unauthenticated => ApiError::new(
                ErrorCode::Unauthenticated,
                "the sync service did not accept this code: it is wrong, used already or expired (or the email or \
                 organization is wrong); check them, or ask your administrator for a new code",
            ),
            SyncError::Rejected { code, message } => {
                ApiError::new(SyncError::Rejected { code, message: String::new() }.code(), message)
            }
            other => sign_in_error(&server, other),
        })?;
        self.finish_sign_in(server, org_slug, email, signed).await
    }

    async fn finish_sign_in(
        &self,
        server: String,
        org_slug: String,
        email: String,
        signed: pactwise_sync::SignInResponse,
    ) -> Result<OrgScope, ApiError> {
        let token = DeviceToken::new(signed.token);
        let http = self.sync_http(&server, Some(token.clone()))?;
        let info = http.session().await.map_err(|e| sign_in_error(&server, e))?;
        if info.org_id != signed.org_id || info.user_id != signed.user_id {
            return Err(ApiError::new(ErrorCode::SyncUnavailable, "the sync service answered for another account"));
        }
        // The organization's members, with this member's own name; a service that cannot list them yet leaves the
        // list to the log (and the email stands in for the name).
        let members = match http.members().await {
            Ok(list) => list.members,
            Err(e) => {
                tracing::warn!(code = %e.code(), "the sync service did not list the members: {e}");
                Vec::new()
            }
        };
        let user_name = members
            .iter()
            .find(|m| m.user_id == signed.user_id)
            .map(|m| m.display_name.clone())
            .unwrap_or_else(|| email.clone());
        // One signed-in organization per install: a new sign-in replaces the earlier one.
        if self.bound_sync().await?.is_some() {
            self.sync_sign_out().await?;
        }
        let tokens = self.sync_tokens.store_for(signed.device_id);
        tokens.set(&token).map_err(token_error)?;
        let account = SyncAccount { server, org_slug, email: email.clone(), device_id: signed.device_id.to_string() };
        let binding = SyncBinding {
            org: signed.org_id,
            org_name: info.org_name,
            user: signed.user_id,
            user_name,
            email,
            role: signed.role,
            node_id: Uuid::now_v7().to_string(),
            account: serde_json::to_value(&account).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?,
        };
        let known: Vec<KnownMember> = members
            .into_iter()
            .filter(|m| m.user_id != signed.user_id)
            .map(|m| KnownMember { user: m.user_id, display_name: m.display_name, email: Some(m.email), role: m.role })
            .collect();
        let bound = self
            .db
            .call(move |store| {
                let before = crate::session::open_local(store)?.org();
                let session = store.sync_log().bind(&binding)?;
                let scope = store.sessions().make_current(session)?;
                store.members().record(&scope, &known)?;
                // Signed in to its organization: this installation is set up (no first-run screen, and no empty
                // placeholder organization left beside the synced one).
                if before != scope.org() {
                    store.platform().finish_first_run_elsewhere(before)?;
                }
                store.platform().mark_first_run_done()?;
                Ok(scope)
            })
            .await;
        match bound {
            Ok(scope) => {
                tracing::info!(org = %scope.org(), device = %signed.device_id, "signed in to sync");
                Ok(scope)
            }
            Err(e) => {
                let _ = tokens.clear();
                Err(e.into())
            }
        }
    }

    /// Signs this install out of sync: the loop stops, the service revokes the device token (when it can be
    /// reached) and the token leaves the keychain. The organization's data stays here.
    pub async fn sync_sign_out(&self) -> Result<SyncStatusView, ApiError> {
        self.sync_slot.stop();
        if let Some((_, account, _)) = self.bound_sync().await? {
            let tokens = Uuid::parse_str(&account.device_id).ok().map(|d| self.sync_tokens.store_for(d));
            if let Some(tokens) = tokens {
                if let Ok(Some(token)) = tokens.get()
                    && let Ok(http) = self.sync_http(&account.server, Some(token))
                    && let Err(e) = http.sign_out().await
                {
                    tracing::warn!(code = %e.code(), "the sync service could not revoke the device token: {e}");
                }
                tokens.clear().map_err(token_error)?;
            }
            self.db.call(|store| store.sync_log().unbind()).await?;
            tracing::info!("signed out of sync");
        }
        self.sync_status().await
    }

    /// Where sync stands for this install.
    pub async fn sync_status(&self) -> Result<SyncStatusView, ApiError> {
        let Some((scope, account, org_name)) = self.bound_sync().await? else {
            return Ok(SyncStatusView {
                phase: SyncPhase::NotSignedIn,
                account: None,
                org_name: None,
                pending_uploads: 0,
                files_waiting: 0,
                last_success: None,
                last_error: None,
                next_retry_at: None,
                running: false,
                refused_changes: Vec::new(),
                refused_total: 0,
            });
        };
        let s = scope.clone();
        let (pending, waiting, stored_success, (refused, refused_total)) = self
            .db
            .call(move |store| {
                let log = store.sync_log();
                let state = log.state(&s, || Uuid::now_v7().to_string())?;
                Ok((log.pending(&s)?, log.wanted(&s)?.len() as u64, state.last_success_at, log.refused(&s, 20)?))
            })
            .await?;
        let client = self.sync_slot.client().filter(|c| c.replica().scope.org() == scope.org());
        let live = client.as_ref().map(|c| c.status());
        let last_success = live.as_ref().and_then(|l| l.last_success).max(stored_success);
        let last_error = match &live {
            Some(l) => l.last_error.as_ref().map(|e| ApiError::new(e.code, e.message.clone())),
            // In the app a loop that could not start says why; the CLI never starts one.
            None => self.sync_slot.start_error(),
        };
        let phase = match live.as_ref().map(|l| l.activity) {
            Some("syncing") => SyncPhase::Syncing,
            Some("waiting_to_retry") => SyncPhase::WaitingToRetry,
            _ if pending > 0 || waiting > 0 => SyncPhase::Pending,
            _ if last_success.is_some() => SyncPhase::Synced,
            _ => SyncPhase::NotSyncedYet,
        };
        Ok(SyncStatusView {
            phase,
            account: Some(account),
            org_name: Some(org_name),
            pending_uploads: pending.min(u64::from(u32::MAX)) as u32,
            files_waiting: waiting.min(u64::from(u32::MAX)) as u32,
            last_success: rfc3339(last_success),
            last_error,
            next_retry_at: rfc3339(live.and_then(|l| l.next_retry_at)),
            running: client.is_some(),
            refused_changes: refused.into_iter().map(RefusedChangeView::from).collect(),
            refused_total: refused_total.min(u64::from(u32::MAX)) as u32,
        })
    }

    fn sync_client(
        &self,
        scope: OrgScope,
        account: &SyncAccount,
    ) -> Result<(Arc<SyncClient<StoreReplica>>, Arc<FileHooks>), ApiError> {
        let device = Uuid::parse_str(&account.device_id)
            .map_err(|_| ApiError::new(ErrorCode::Unauthenticated, "the sync sign-in is incomplete; sign in again"))?;
        let token = self.sync_tokens.store_for(device).get().map_err(token_error)?.ok_or_else(|| {
            ApiError::new(
                ErrorCode::Unauthenticated,
                "this device's sync token is not in the keychain; sign in to sync again",
            )
        })?;
        let replica = Arc::new(StoreReplica::new(self.db.clone(), scope.clone()));
        let hooks = Arc::new(FileHooks::new(self.clone(), scope, replica.clone()));
        let client = SyncClient::with_api(
            replica,
            self.sync_http(&account.server, Some(token))?,
            self.clock.clone(),
            Arc::new(pactwise_sync::TokioPause),
            pactwise_sync::SyncConfig { interval: self.sync_interval, ..pactwise_sync::SyncConfig::default() },
        )
        .with_hooks(hooks.clone());
        Ok((Arc::new(client), hooks))
    }

    /// The background loop for the signed-in organization (None when this install does not sync). Local writes of
    /// synced records and [`Api::sync_retry`] wake it; a new call, a sign-in or a sign-out stops the one before.
    pub async fn sync_loop(&self) -> Result<Option<SyncLoop>, ApiError> {
        self.sync_slot.stop();
        let Some((scope, account, _)) = self.bound_sync().await? else { return Ok(None) };
        let (client, _) = self.sync_client(scope, &account).inspect_err(|e| {
            self.sync_slot.lock().start_error = Some(e.clone());
        })?;
        let (stop, stopped) = tokio::sync::oneshot::channel();
        self.sync_slot.lock().running = Some(Running { client: Arc::downgrade(&client), _stop: stop });
        Ok(Some(SyncLoop { client, stopped }))
    }

    /// The retry button: the loop syncs now instead of waiting out its backoff.
    pub async fn sync_retry(&self) -> Result<SyncStatusView, ApiError> {
        self.sync_slot.wake();
        self.sync_status().await
    }

    /// One round now, in this process: push everything, pull everything, fetch and import the files. Fails at the
    /// first failure instead of backing off (the command line's `pactwise sync now`).
    #[tracing::instrument(skip_all, name = "sync_now")]
    pub async fn sync_now(&self) -> Result<SyncRoundReport, ApiError> {
        let Some((scope, account, _)) = self.bound_sync().await? else {
            return Err(ApiError::new(
                ErrorCode::Unauthenticated,
                "this install is not signed in to sync; sign in first (pactwise sync sign-in)",
            ));
        };
        let (client, hooks) = self.sync_client(scope, &account)?;
        let report = client.sync_now(Some(1)).await.map_err(sync_error)?;
        let count = |n: u64| n.min(u64::from(u32::MAX)) as u32;
        Ok(SyncRoundReport {
            pushed: count(report.pushed),
            pulled: count(report.pulled),
            files_uploaded: count(hooks.uploaded.load(Ordering::Relaxed)),
            files_fetched: count(hooks.fetched.load(Ordering::Relaxed)),
            documents_imported: count(hooks.imported.load(Ordering::Relaxed)),
            status: self.sync_status().await?,
        })
    }

    /// The local import steps for a document that arrived by sync (its file is here): pages, search passages and
    /// the offline pipeline, as for a local import. Nothing here writes a synced record, so nothing is queued back.
    /// Failures are logged and the document is kept, as after a local import.
    pub(crate) async fn import_received(&self, scope: &OrgScope, doc: &pactwise_domain::Document) {
        let quiet = |_: ImportStage, _: u32, _: u32| {};
        match self.ensure_pages(scope, doc, &quiet).await {
            Ok(_) => {
                if let Err(e) = self.ensure_passages(scope, doc.id).await {
                    tracing::warn!(document = %doc.id, code = %e.code, "a synced document could not be indexed");
                }
            }
            Err(e) => tracing::warn!(document = %doc.id, code = %e.code, "a synced document's pages could not be read"),
        }
        if let Err(e) = self.run_pipeline(scope, doc.id, ReviewMode::Offline, None).await {
            tracing::warn!(document = %doc.id, code = %e.code, "the pipeline could not run on a synced document");
        }
    }
}

fn sync_error(e: SyncError) -> ApiError {
    ApiError::new(e.code(), e.to_string())
}

/// A sign-in failure in words that fit a sign-in (the loop's "retries by itself" does not: sign-in never retries).
fn sign_in_error(server: &str, e: SyncError) -> ApiError {
    match e {
        SyncError::Unauthenticated => ApiError::new(
            ErrorCode::Unauthenticated,
            "the sync service did not accept this sign-in: the email or password is wrong (or the organization's \
             short name); check them and sign in again",
        ),
        SyncError::Unreachable(kind) => ApiError::new(
            ErrorCode::SyncUnavailable,
            format!(
                "the sync service at {server} cannot be reached ({kind}); check the address and this computer's \
                 network connection, then sign in again. Nothing was changed here"
            ),
        ),
        SyncError::Server { status } => ApiError::new(
            ErrorCode::SyncUnavailable,
            format!(
                "the sync service at {server} failed (HTTP {status}); try signing in again later, or ask its \
                 administrator"
            ),
        ),
        SyncError::RateLimited { retry_after_s } => ApiError::new(
            ErrorCode::RateLimited,
            format!(
                "the sync service refused more sign-in attempts for now; wait {} and sign in again",
                retry_after_s.map_or("a minute".to_string(), |s| format!("{s} s"))
            ),
        ),
        other => sync_error(other),
    }
}

impl Api {
    /// An HTTP client for the sync service at `server`, over https (or http to this computer), trusting the
    /// organization's own CA when one is configured.
    pub(crate) fn sync_http(&self, server: &str, token: Option<DeviceToken>) -> Result<HttpApi, ApiError> {
        HttpApi::with_trust(server, token, &self.sync_trust).map_err(sync_error)
    }
}
