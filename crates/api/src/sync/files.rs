//! Files around a round: a document's file is uploaded before the change that names it is pushed, and fetched
//! after each round (resumable, hash-verified, capped at the size its change announced) into the shared blob store,
//! then imported locally under the same document id. A fetch for an organization is satisfied only by a file that
//! organization holds already (its ownership record) or that its own service served now.

use super::replica::{StoreReplica, storage};
use crate::{Api, ReviewMode, Stage};
use pactwise_store::{OrgScope, Received, ReceivedFile, StoreError};
use pactwise_sync::wire::ChangeBody;
use pactwise_sync::{Change, HookFuture, HttpApi, RoundHooks, SyncError, SyncedModel};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Moves documents' files around each round and imports received documents.
pub(crate) struct FileHooks {
    api: Api,
    scope: OrgScope,
    replica: Arc<StoreReplica>,
    pub(crate) uploaded: AtomicU64,
    pub(crate) fetched: AtomicU64,
    pub(crate) imported: AtomicU64,
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
    pub(crate) fn new(api: Api, scope: OrgScope, replica: Arc<StoreReplica>) -> Self {
        FileHooks {
            api,
            scope,
            replica,
            uploaded: AtomicU64::new(0),
            fetched: AtomicU64::new(0),
            imported: AtomicU64::new(0),
        }
    }

    /// Does this organization hold the file, and is it on disk? Only then may it be used without a download.
    async fn holds(&self, hash: &str) -> Result<bool, SyncError> {
        let (s, h) = (self.scope.clone(), hash.to_string());
        let owned = self.api.db.call(move |store| store.blob_owners().holds(&s, &h)).await.map_err(replica_error)?;
        Ok(owned && self.api.blobs.contains(hash))
    }

    async fn upload(&self, http: &HttpApi, changes: &[Change]) -> Result<(), SyncError> {
        for change in changes {
            let (SyncedModel::Document, ChangeBody::Fields { fields }) = (change.model, &change.body) else {
                continue;
            };
            let Some(hash) = fields.get("content_hash").and_then(Value::as_str) else { continue };
            if !self.holds(hash).await? {
                tracing::warn!(document = %change.record_id, "the document's file is not this organization's here; it is not uploaded");
                continue;
            }
            if http.has_blob(hash).await? {
                continue;
            }
            let bytes = match self.api.read_org_blob(&self.scope, hash).await {
                Ok(bytes) => bytes,
                Err(e) => return Err(SyncError::Io(e.message)),
            };
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

    /// Fetches the files of documents that arrived without theirs and reads each one; returns how many were read.
    async fn fetch(&self, http: &HttpApi) -> Result<usize, SyncError> {
        let mut read = 0;
        let s = self.scope.clone();
        let wanted = self.api.db.call(move |store| store.sync_log().wanted(&s)).await.map_err(replica_error)?;
        for w in wanted {
            // A file on disk is reused only if this organization holds it; one that another organization of this
            // install holds is fetched from this organization's service like any other (it must serve it).
            let mut file = ReceivedFile::AlreadyHeld;
            if let Some(hash) = &w.content_hash
                && !self.holds(hash).await?
            {
                let dest = self.api.blobs.path_of(hash);
                if let Some(parent) = dest.parent() {
                    tokio::fs::create_dir_all(parent).await.map_err(|e| SyncError::Io(e.kind().to_string()))?;
                }
                let span = tracing::info_span!("sync_fetch_file", document = %w.id);
                match tracing::Instrument::instrument(http.download_blob(hash, &dest, w.size), span).await {
                    Ok(_) => {
                        file = ReceivedFile::FetchedFromService;
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
                .call(move |store| store.sync_log().receive_document(&s, id, file))
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
                read += 1;
            }
            let s = self.scope.clone();
            self.api.db.call(move |store| store.sync_log().forget_wanted(&s, id)).await.map_err(replica_error)?;
        }
        Ok(read)
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
            // Runs a stamped decision resumed go on first: a decision must not wait behind file downloads.
            let resumed = self.replica.take_resumed();
            if !resumed.is_empty()
                && let Err(e) = self.api.resume_runs(resumed.into_iter().collect()).await
            {
                tracing::warn!(code = %e.code, "runs decided on another desktop could not resume yet: {}", e.message);
            }
            // Told after the resumed runs moved on, so a window that looks sees them where they are now.
            if self.replica.take_runs_moved() {
                self.api.shared_runs_moved();
            }
            let fetched = self.fetch(api).await?;
            self.regate().await?;
            // Contracts laid over documents that just arrived count too.
            if self.replica.take_records_moved() || fetched > 0 {
                self.api.shared_records_moved();
            }
            let s = self.scope.clone();
            self.api.db.call(move |store| store.sync_log().round_done(&s)).await.map_err(replica_error)
        })
    }
}
