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
//!   keychain ([`SyncTokens`]). The background loop is the `SyncClient`'s own; local writes and the retry button
//!   wake it through [`LoopSlot`].

use crate::{Api, ApiError, ImportStage, ReviewMode, Stage};
use chrono::{DateTime, Utc};
use pactwise_domain::{DocumentId, ErrorCode, UserId};
use pactwise_store::{
    ChangeEncoder, ChangePayload, CorrectionApplied, Db, EncodedChange, LocalChange, NewOutboxEntry, OrgScope,
    Received, RemoteCorrection, SYNC_ACCOUNT_SETTING, StoreError, SyncBinding, check_document_fields,
};
use pactwise_sync::wire::{ChangeBody, PullResponse, PushResult, ServerChange, SignInRequest};
use pactwise_sync::{
    Change, DeviceToken, HlcClock, HookFuture, HttpApi, KeyringTokenStore, LocalReplica, MemoryTokenStore,
    ReplicaError, RoundHooks, SyncClient, SyncError, SyncedModel, TokenStore, TokenStoreError,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use uuid::Uuid;

// ---------------------------------------------------------------------------------------------------------------
// The device token's home

/// Where the device token of a sync sign-in is kept: one entry per device id, so two data directories on one
/// machine (two devices to the service) never overwrite each other's token.
pub trait SyncTokens: Send + Sync {
    fn store_for(&self, device: Uuid) -> Arc<dyn TokenStore>;
}

/// The OS keychain (service `pactwise-desk`, entry `sync-device-token/<device id>`).
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyringSyncTokens;

impl SyncTokens for KeyringSyncTokens {
    fn store_for(&self, device: Uuid) -> Arc<dyn TokenStore> {
        Arc::new(KeyringTokenStore::new(
            pactwise_sync::token::KEYRING_SERVICE,
            format!("{}/{device}", pactwise_sync::token::KEYRING_USER),
        ))
    }
}

/// Tokens in memory (tests).
#[derive(Debug, Default)]
pub struct MemorySyncTokens {
    stores: Mutex<HashMap<Uuid, Arc<MemoryTokenStore>>>,
}

impl SyncTokens for MemorySyncTokens {
    fn store_for(&self, device: Uuid) -> Arc<dyn TokenStore> {
        self.stores.lock().unwrap_or_else(|e| e.into_inner()).entry(device).or_default().clone()
    }
}

fn token_error(e: TokenStoreError) -> ApiError {
    match e {
        TokenStoreError::Unavailable(_) => ApiError::new(
            ErrorCode::Storage,
            "the OS keychain cannot be reached, so the sync sign-in cannot be kept; unlock your keyring (Secret \
             Service) and sign in again",
        ),
        TokenStoreError::Failed(m) => ApiError::new(ErrorCode::Storage, format!("the OS keychain refused: {m}")),
    }
}

fn sync_error(e: SyncError) -> ApiError {
    ApiError::new(e.code(), e.to_string())
}

// ---------------------------------------------------------------------------------------------------------------
// Encoding local changes

/// The running loop, as far as the rest of the process needs it: to wake it and to read its status; or why it
/// could not start (a token missing from the keychain, say), for the status line.
#[derive(Clone, Default)]
pub(crate) struct LoopSlot(Arc<Mutex<SlotState>>);

#[derive(Default)]
struct SlotState {
    running: Option<Running>,
    start_error: Option<ApiError>,
}

struct Running {
    client: Weak<SyncClient<StoreReplica>>,
    /// Dropping it stops the loop.
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl LoopSlot {
    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn client(&self) -> Option<Arc<SyncClient<StoreReplica>>> {
        self.lock().running.as_ref().and_then(|r| r.client.upgrade())
    }

    fn start_error(&self) -> Option<ApiError> {
        self.lock().start_error.clone()
    }

    fn wake(&self) {
        if let Some(client) = self.client() {
            client.wake();
        }
    }

    fn stop(&self) {
        *self.lock() = SlotState::default();
    }
}

/// The store's [`ChangeEncoder`]: stamps a local change with the organization's HLC and serializes it as the wire's
/// `Change`. Each encoded change also wakes the running sync loop (the store thread commits before the loop can read
/// the outbox, since every read goes through the same thread).
pub(crate) struct WireEncoder {
    slot: LoopSlot,
}

impl WireEncoder {
    pub(crate) fn new(slot: LoopSlot) -> Self {
        WireEncoder { slot }
    }
}

impl ChangeEncoder for WireEncoder {
    fn encode(&self, local: &LocalChange<'_>) -> Result<EncodedChange, String> {
        let model: SyncedModel = local.model.parse()?;
        let node = Uuid::parse_str(local.node_id).map_err(|_| format!("bad HLC node id {:?}", local.node_id))?;
        let mut clock = HlcClock::from_parts(node, local.clock.0, local.clock.1);
        let hlc = clock.tick(local.now_ms);
        let body = match local.payload {
            ChangePayload::Fields(fields) => ChangeBody::Fields { fields: fields.clone() },
            ChangePayload::Event(event) => ChangeBody::Event { event: event.clone() },
        };
        let change = Change { id: Uuid::now_v7(), model, record_id: local.record_id.to_string(), hlc, body };
        change.check()?;
        let change_json = serde_json::to_string(&change).map_err(|e| e.to_string())?;
        self.slot.wake();
        Ok(EncodedChange {
            entry: NewOutboxEntry {
                change_id: change.id.to_string(),
                model: local.model.to_string(),
                record_id: change.record_id,
                change_json,
            },
            hlc: hlc.to_sortable(),
            clock: (hlc.wall_ms, hlc.counter),
        })
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The store as the sync client's replica

/// The store as `sync::LocalReplica` for one signed-in organization. Its methods are synchronous (the client's
/// contract); they run on the store's thread and wait for it ([`Db::call_blocking`]), so every read and write of
/// sync state is ordered with the app's own writes.
pub(crate) struct StoreReplica {
    db: Db,
    scope: OrgScope,
    /// Documents that received corrections from other devices this round: their gate runs again.
    touched: Mutex<BTreeSet<DocumentId>>,
}

fn storage(e: StoreError) -> ReplicaError {
    ReplicaError::Storage(e.to_string())
}

/// A remote change decoded into what the store applies.
enum Op {
    Document {
        id: DocumentId,
        hlc: String,
        author: UserId,
        author_name: Option<String>,
        fields: BTreeMap<String, Value>,
    },
    Correction {
        correction: RemoteCorrection,
        user_name: Option<String>,
    },
    Setting {
        key: String,
        hlc: String,
        value: Value,
    },
    /// Not applied on the desktop (a model it does not keep yet, or a malformed change); marked applied.
    Skip,
}

fn decode(remote: &ServerChange) -> Op {
    let change = &remote.change;
    let skip = |why: &str| {
        tracing::warn!(change = %change.id, model = %change.model, seq = remote.seq, "remote change skipped: {why}");
        Op::Skip
    };
    match (change.model, &change.body) {
        (SyncedModel::Document, ChangeBody::Fields { fields }) => {
            let Ok(id) = change.record_id.parse::<DocumentId>() else { return skip("bad document id") };
            let mut fields = fields.clone();
            // Who created a document is who pushed its creation, as the service stamped it.
            if fields.contains_key("created_by") {
                fields.insert("created_by".into(), Value::String(remote.author.to_string()));
            }
            if let Err(e) = check_document_fields(&fields) {
                return skip(&e.to_string());
            }
            let author_name = fields.get("created_by_name").and_then(Value::as_str).map(str::to_string);
            Op::Document { id, hlc: change.hlc.to_sortable(), author: remote.author, author_name, fields }
        }
        (SyncedModel::ReviewCorrection, ChangeBody::Event { event }) => {
            let text = |k: &str| event.get(k).and_then(Value::as_str).map(str::to_string);
            let (Some(document), Some(item_id), Some(kind), Some(status), Some(created_at)) =
                (text("document_id"), text("item_id"), text("kind"), text("status"), text("created_at"))
            else {
                return skip("a correction without its document, item, kind, status or time");
            };
            let Ok(document) = document.parse::<DocumentId>() else { return skip("bad document id") };
            let Ok(created_at) = DateTime::parse_from_rfc3339(&created_at) else { return skip("bad time") };
            let quote = match (text("quote_text"), event.get("quote_page").and_then(Value::as_u64)) {
                (Some(t), Some(p)) if p >= 1 && p <= u64::from(u32::MAX) => Some((t, p as u32)),
                (None, None) => None,
                _ => return skip("a quote without its page"),
            };
            let audit = event.get("audit");
            let correction = RemoteCorrection {
                id: change.record_id.clone(),
                document,
                item_id,
                kind: kind.clone(),
                status,
                quote,
                note: text("note"),
                user: remote.author,
                created_at: created_at.with_timezone(&Utc),
                audit_action: audit
                    .and_then(|a| a.get("action"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("review.{kind}")),
                audit_details: audit.and_then(|a| a.get("details")).cloned().unwrap_or(Value::Null),
            };
            Op::Correction { correction, user_name: text("user_name") }
        }
        (SyncedModel::Setting, ChangeBody::Fields { fields }) => match fields.get("value") {
            Some(value) if pactwise_store::SYNCED_SETTINGS.contains(&change.record_id.as_str()) => {
                Op::Setting { key: change.record_id.clone(), hlc: change.hlc.to_sortable(), value: value.clone() }
            }
            _ => skip("a setting that does not sync"),
        },
        _ => Op::Skip,
    }
}

impl StoreReplica {
    fn new(db: Db, scope: OrgScope) -> Self {
        StoreReplica { db, scope, touched: Mutex::new(BTreeSet::new()) }
    }

    fn take_touched(&self) -> BTreeSet<DocumentId> {
        std::mem::take(&mut *self.touched.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl LocalReplica for StoreReplica {
    fn outbox(&self, limit: usize) -> Result<Vec<Change>, ReplicaError> {
        let s = self.scope.clone();
        let entries = self.db.call_blocking(move |store| store.sync_log().outbox(&s, limit)).map_err(storage)?;
        entries
            .iter()
            .map(|e| {
                serde_json::from_str(&e.change_json)
                    .map_err(|err| ReplicaError::Invalid(format!("outbox entry {}: {err}", e.change_id)))
            })
            .collect()
    }

    fn pending_count(&self) -> Result<u64, ReplicaError> {
        let s = self.scope.clone();
        self.db.call_blocking(move |store| store.sync_log().pending(&s)).map_err(storage)
    }

    fn mark_pushed(&self, results: &[PushResult]) -> Result<(), ReplicaError> {
        let s = self.scope.clone();
        let ids: Vec<String> = results.iter().map(|r| r.change_id.to_string()).collect();
        self.db.call_blocking(move |store| store.sync_log().acknowledge(&s, &ids)).map_err(storage)
    }

    fn cursor(&self) -> Result<u64, ReplicaError> {
        let s = self.scope.clone();
        self.db
            .call_blocking(move |store| store.sync_log().state(&s, || Uuid::now_v7().to_string()).map(|st| st.cursor))
            .map_err(storage)
    }

    #[tracing::instrument(skip_all, name = "sync_apply", fields(changes = page.changes.len()))]
    fn apply_remote(&self, page: &PullResponse, now_ms: u64) -> Result<(), ReplicaError> {
        let s = self.scope.clone();
        let changes: Vec<(u64, String, pactwise_sync::Hlc, Op)> = page
            .changes
            .iter()
            .map(|remote| (remote.seq, remote.change.id.to_string(), remote.change.hlc, decode(remote)))
            .collect();
        let next_cursor = page.next_cursor;
        let touched = self
            .db
            .call_blocking(move |store| {
                let log = store.sync_log();
                let state = log.state(&s, || Uuid::now_v7().to_string())?;
                let node = Uuid::parse_str(&state.node_id)
                    .map_err(|_| StoreError::Corrupt(format!("bad HLC node id {:?}", state.node_id)))?;
                let mut clock = HlcClock::from_parts(node, state.hlc_wall_ms, state.hlc_counter);
                let mut touched = BTreeSet::new();
                let fresh: Vec<_> = changes.into_iter().filter(|(seq, ..)| *seq > state.cursor).collect();
                for (_, _, hlc, _) in &fresh {
                    clock.observe(hlc, now_ms);
                }
                let last = clock.last();
                log.apply_page(&s, next_cursor, (last.wall_ms, last.counter), |a| {
                    for (seq, change_id, _, op) in fresh {
                        if !a.mark_applied(&change_id, seq)? {
                            continue;
                        }
                        let outcome = match op {
                            Op::Document { id, hlc, author, author_name, fields } => {
                                let mut taken = BTreeMap::new();
                                for (field, value) in fields {
                                    if a.take_field("document", &id.to_string(), &field, &hlc)? {
                                        taken.insert(field, value);
                                    }
                                }
                                if taken.is_empty() {
                                    continue;
                                }
                                a.ensure_user(author, author_name.as_deref())?;
                                a.document_fields(id, author, &taken).map(|_| ())
                            }
                            Op::Correction { correction, user_name } => {
                                a.ensure_user(correction.user, user_name.as_deref())?;
                                a.correction(&correction).map(|applied| {
                                    if applied == CorrectionApplied::Applied {
                                        touched.insert(correction.document);
                                    }
                                })
                            }
                            Op::Setting { key, hlc, value } => {
                                if a.take_field("setting", &key, "value", &hlc)? {
                                    a.setting(&key, &value)
                                } else {
                                    Ok(())
                                }
                            }
                            Op::Skip => Ok(()),
                        };
                        match outcome {
                            Ok(()) => {}
                            // One malformed change is skipped on its own; it never blocks the organization's sync.
                            Err(StoreError::Invalid(why)) => {
                                tracing::warn!(change = %change_id, seq, "remote change skipped: {why}");
                            }
                            Err(other) => return Err(other),
                        }
                    }
                    Ok(())
                })?;
                Ok(touched)
            })
            .map_err(storage)?;
        self.touched.lock().unwrap_or_else(|e| e.into_inner()).extend(touched);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Files around a round

/// Moves documents' files around each round and imports received documents.
pub(crate) struct FileHooks {
    api: Api,
    scope: OrgScope,
    replica: Arc<StoreReplica>,
    uploaded: AtomicU64,
    fetched: AtomicU64,
    imported: AtomicU64,
}

/// Failures that say the service or this machine is not working now: the round backs off and retries. Anything
/// else concerns one file and is recorded on its wanted entry.
fn is_transient(e: &SyncError) -> bool {
    matches!(
        e,
        SyncError::Unreachable(_)
            | SyncError::Server { .. }
            | SyncError::RateLimited { .. }
            | SyncError::Unauthenticated
            | SyncError::Io(_)
            | SyncError::Replica(_)
    )
}

fn replica_error(e: StoreError) -> SyncError {
    SyncError::Replica(storage(e))
}

impl FileHooks {
    async fn upload(&self, http: &HttpApi, changes: &[Change]) -> Result<(), SyncError> {
        for change in changes {
            let (SyncedModel::Document, ChangeBody::Fields { fields }) = (change.model, &change.body) else {
                continue;
            };
            let Some(hash) = fields.get("content_hash").and_then(Value::as_str) else { continue };
            if !self.api.blobs.contains(hash) {
                tracing::warn!(document = %change.record_id, "the document's file is missing here; it cannot be uploaded");
                continue;
            }
            if http.has_blob(hash).await? {
                continue;
            }
            let blobs = self.api.blobs.clone();
            let name = hash.to_string();
            let bytes = tokio::task::spawn_blocking(move || blobs.read(&name))
                .await
                .map_err(|e| SyncError::Io(e.to_string()))?
                .map_err(replica_error)?;
            match http.upload_blob(bytes).await {
                Ok(_) => {
                    self.uploaded.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if is_transient(&e) => return Err(e),
                // Refused for good (too large for the service, say): the change still goes out, so nothing else
                // waits behind it; other devices list the document as a file they cannot fetch, with the reason.
                Err(e) => {
                    tracing::warn!(document = %change.record_id, code = %e.code(), "the service refused the file: {e}")
                }
            }
        }
        Ok(())
    }

    async fn fetch(&self, http: &HttpApi) -> Result<(), SyncError> {
        let s = self.scope.clone();
        let wanted = self.api.db.call(move |store| store.sync_log().wanted(&s)).await.map_err(replica_error)?;
        for w in wanted {
            if let Some(hash) = &w.content_hash
                && !self.api.blobs.contains(hash)
            {
                let dest = self.api.blobs.path_of(hash);
                if let Some(parent) = dest.parent() {
                    tokio::fs::create_dir_all(parent).await.map_err(|e| SyncError::Io(e.kind().to_string()))?;
                }
                let span = tracing::info_span!("sync_fetch_file", document = %w.id);
                match tracing::Instrument::instrument(http.download_blob(hash, &dest), span).await {
                    Ok(_) => {
                        self.fetched.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) if is_transient(&e) => return Err(e),
                    Err(e) => {
                        tracing::warn!(document = %w.id, code = %e.code(), "a document's file could not be fetched: {e}");
                        let (s, id, message) = (self.scope.clone(), w.id, e.to_string());
                        self.api
                            .db
                            .call(move |store| store.sync_log().want_failed(&s, id, &message))
                            .await
                            .map_err(replica_error)?;
                        continue;
                    }
                }
            }
            let (s, id) = (self.scope.clone(), w.id);
            let received = self
                .api
                .db
                .call(move |store| store.sync_log().receive_document(&s, id))
                .await
                .map_err(replica_error)?;
            let doc = match received {
                Received::Inserted(doc) | Received::AlreadyHere(doc) => doc,
                Received::Refused(reason) => {
                    tracing::warn!(document = %w.id, "a synced document is not kept here: {reason}");
                    continue;
                }
            };
            if doc.deleted_at.is_none() {
                self.api.import_received(&self.scope, &doc).await;
                self.imported.fetch_add(1, Ordering::Relaxed);
            }
            let s = self.scope.clone();
            self.api.db.call(move |store| store.sync_log().forget_wanted(&s, id)).await.map_err(replica_error)?;
        }
        Ok(())
    }

    /// Corrections from other devices change what the gate sees: run it again where it ran before.
    async fn regate(&self) -> Result<(), SyncError> {
        for id in self.replica.take_touched() {
            let s = self.scope.clone();
            let gated = self
                .api
                .db
                .call(move |store| Ok(store.reviews().stages(&s, id)?.iter().any(|r| r.stage == "gate")))
                .await;
            if let Ok(true) = gated
                && let Err(e) = self.api.run_pipeline(&self.scope, id, ReviewMode::Offline, Some(Stage::Gate)).await
            {
                tracing::warn!(document = %id, code = %e.code, "the gate could not run again after synced corrections");
            }
        }
        Ok(())
    }
}

impl RoundHooks for FileHooks {
    fn before_push<'a>(&'a self, api: &'a HttpApi, changes: &'a [Change]) -> HookFuture<'a> {
        Box::pin(self.upload(api, changes))
    }

    fn after_round<'a>(&'a self, api: &'a HttpApi) -> HookFuture<'a> {
        Box::pin(async move {
            self.fetch(api).await?;
            self.regate().await?;
            let s = self.scope.clone();
            self.api.db.call(move |store| store.sync_log().round_done(&s)).await.map_err(replica_error)
        })
    }
}

// ---------------------------------------------------------------------------------------------------------------
// What the shells see

/// What a person types to sign in to sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SignInInput {
    /// The sync service's address, e.g. `https://sync.example.com` or `http://127.0.0.1:8787`.
    pub server: String,
    /// The organization's short name (slug), as its administrator gave it.
    pub org: String,
    pub email: String,
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
fn device_name() -> String {
    let name = std::fs::read_to_string("/etc/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "Pactwise desktop".to_string());
    name.chars().take(100).collect()
}

fn check_server(server: &str) -> Result<String, ApiError> {
    let server = server.trim().trim_end_matches('/');
    let ok = (server.starts_with("https://") || server.starts_with("http://"))
        && server.len() > "http://".len()
        && !server.contains(char::is_whitespace);
    if ok {
        Ok(server.to_string())
    } else {
        Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("{server:?} is not a sync service address; write it like https://sync.example.com"),
        ))
    }
}

fn rfc3339(t: Option<DateTime<Utc>>) -> Option<String> {
    t.map(|t| t.to_rfc3339())
}

/// The signed-in organization: its session's scope and its account.
type Bound = (OrgScope, SyncAccount, String);

impl Api {
    async fn bound_sync(&self) -> Result<Option<Bound>, ApiError> {
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
    /// the organization this install used before stays and can be switched back to. Returns the new session's scope.
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
        let signed = HttpApi::new(&server, None).map_err(sync_error)?.sign_in(&request).await.map_err(|e| match e {
            SyncError::Unauthenticated => ApiError::new(
                ErrorCode::Unauthenticated,
                "the sync service did not accept this sign-in; check the organization, the email and the password",
            ),
            other => sync_error(other),
        })?;
        let token = DeviceToken::new(signed.token);
        let info =
            HttpApi::new(&server, Some(token.clone())).map_err(sync_error)?.session().await.map_err(sync_error)?;
        if info.org_id != signed.org_id || info.user_id != signed.user_id {
            return Err(ApiError::new(ErrorCode::SyncUnavailable, "the sync service answered for another account"));
        }
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
            user_name: email.clone(),
            email,
            role: signed.role,
            node_id: Uuid::now_v7().to_string(),
            account: serde_json::to_value(&account).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?,
        };
        let bound = self
            .db
            .call(move |store| {
                let session = store.sync_log().bind(&binding)?;
                store.sessions().make_current(session)
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
                    && let Ok(http) = HttpApi::new(&account.server, Some(token))
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
            });
        };
        let s = scope.clone();
        let (pending, waiting, stored_success) = self
            .db
            .call(move |store| {
                let log = store.sync_log();
                let state = log.state(&s, || Uuid::now_v7().to_string())?;
                Ok((log.pending(&s)?, log.wanted(&s)?.len() as u64, state.last_success_at))
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
        let hooks = Arc::new(FileHooks {
            api: self.clone(),
            scope,
            replica: replica.clone(),
            uploaded: AtomicU64::new(0),
            fetched: AtomicU64::new(0),
            imported: AtomicU64::new(0),
        });
        let client = SyncClient::new(replica, &account.server, token, self.clock.clone())
            .map_err(sync_error)?
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
