//! The server killed in the middle of a push: the client retries with the same idempotency key; no change is lost
//! and none is stored twice — whether the server died before or after committing the batch.

use crate::common::*;
use chrono::{DateTime, Utc};
use pactwise_domain::{Clock, OrgId, Role, UserId};
use pactwise_sync::client::{Pause, SyncConfig};
use pactwise_sync::machine::MachineConfig;
use pactwise_sync::members::{Member, OpenCode};
use pactwise_sync::wire::{PullResponse, PushRequest, PushResponse};
use pactwise_sync::{DeviceToken, HttpApi, LocalReplica, MemoryReplica, SyncClient, SyncedModel};
use pactwise_sync_server::source_rows;
use pactwise_sync_server::storage::{
    Actor, Counts, DeviceRecord, LeaseAudit, LeaseTake, Login, MemberChanged, MemberOp, StorageError, StoredLease,
};
use pactwise_sync_server::{AppState, SyncStorage};
use serde_json::json;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kill {
    BeforeCommit,
    AfterCommit,
}

/// Storage whose first push stops at the chosen point and waits there until the test lets it go, so the test can
/// kill the server while the push is in flight.
struct Stalling {
    inner: Arc<dyn SyncStorage>,
    kill: Mutex<Option<Kill>>,
    reached: Mutex<mpsc::Sender<()>>,
    release: Mutex<mpsc::Receiver<()>>,
}

impl SyncStorage for Stalling {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }
    fn health(&self) -> Result<(), StorageError> {
        self.inner.health()
    }
    fn create_org(&self, slug: &str, name: &str, now: DateTime<Utc>) -> Result<OrgId, StorageError> {
        self.inner.create_org(slug, name, now)
    }
    fn org_by_slug(&self, slug: &str) -> Result<Option<OrgId>, StorageError> {
        self.inner.org_by_slug(slug)
    }
    fn create_user(
        &self,
        org: OrgId,
        email: &str,
        hash: &str,
        role: Role,
        now: DateTime<Utc>,
    ) -> Result<UserId, StorageError> {
        self.inner.create_user(org, email, hash, role, now)
    }
    fn find_login(&self, org: &str, email: &str) -> Result<Option<Login>, StorageError> {
        self.inner.find_login(org, email)
    }
    fn create_device(
        &self,
        login: &Login,
        name: &str,
        hash: &str,
        now: DateTime<Utc>,
        exp: DateTime<Utc>,
    ) -> Result<Uuid, StorageError> {
        self.inner.create_device(login, name, hash, now, exp)
    }
    fn find_device(&self, hash: &str) -> Result<Option<DeviceRecord>, StorageError> {
        self.inner.find_device(hash)
    }
    fn revoke_device(&self, org: OrgId, device: Uuid, now: DateTime<Utc>) -> Result<(), StorageError> {
        self.inner.revoke_device(org, device, now)
    }
    fn push(&self, actor: &Actor, request: &PushRequest, now: DateTime<Utc>) -> Result<PushResponse, StorageError> {
        let kill = self.kill.lock().unwrap().take();
        match kill {
            None => self.inner.push(actor, request, now),
            Some(Kill::BeforeCommit) => {
                self.reached.lock().unwrap().send(()).unwrap();
                let _ = self.release.lock().unwrap().recv();
                Err(StorageError::Database("the process died before committing".into()))
            }
            Some(Kill::AfterCommit) => {
                let result = self.inner.push(actor, request, now);
                self.reached.lock().unwrap().send(()).unwrap();
                let _ = self.release.lock().unwrap().recv();
                result
            }
        }
    }
    fn pull(&self, org: OrgId, since: u64, limit: u32) -> Result<PullResponse, StorageError> {
        self.inner.pull(org, since, limit)
    }
    fn escalate_due(&self, now: DateTime<Utc>) -> Result<Vec<(OrgId, u64)>, StorageError> {
        self.inner.escalate_due(now)
    }
    fn put_blob(&self, org: OrgId, hash: &str, bytes: &[u8], now: DateTime<Utc>) -> Result<bool, StorageError> {
        self.inner.put_blob(org, hash, bytes, now)
    }
    fn blob_size(&self, org: OrgId, hash: &str) -> Result<Option<u64>, StorageError> {
        self.inner.blob_size(org, hash)
    }
    fn read_blob(&self, org: OrgId, hash: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StorageError> {
        self.inner.read_blob(org, hash, offset, len)
    }
    fn counts(&self) -> Result<Counts, StorageError> {
        self.inner.counts()
    }
    fn list_members(&self, org: OrgId) -> Result<Vec<Member>, StorageError> {
        self.inner.list_members(org)
    }
    fn open_codes(&self, org: OrgId, now: DateTime<Utc>) -> Result<Vec<OpenCode>, StorageError> {
        self.inner.open_codes(org, now)
    }
    fn change_members(&self, actor: &Actor, op: &MemberOp, now: DateTime<Utc>) -> Result<MemberChanged, StorageError> {
        self.inner.change_members(actor, op, now)
    }
    fn redeem_code(
        &self,
        org: &str,
        email: &str,
        code: &str,
        password: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Login>, StorageError> {
        self.inner.redeem_code(org, email, code, password, now)
    }

    fn lease(&self, org: OrgId, package: Uuid) -> Result<Option<StoredLease>, StorageError> {
        self.inner.lease(org, package)
    }

    fn take_lease(
        &self,
        actor: &Actor,
        package: Uuid,
        take_over: bool,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<LeaseTake, StorageError> {
        self.inner.take_lease(actor, package, take_over, now, ttl)
    }

    fn release_lease(&self, actor: &Actor, package: Uuid, now: DateTime<Utc>) -> Result<Option<u64>, StorageError> {
        self.inner.release_lease(actor, package, now)
    }

    fn lease_audit(&self, org: OrgId, package: Uuid) -> Result<Vec<LeaseAudit>, StorageError> {
        self.inner.lease_audit(org, package)
    }
    fn source_commit(&self, change: &source_rows::SourceCommit) -> Result<(), StorageError> {
        self.inner.source_commit(change)
    }
    fn source_tender(&self, tender: Uuid) -> Result<Option<source_rows::TenderRow>, StorageError> {
        self.inner.source_tender(tender)
    }
    fn source_audit(&self, tender: Uuid) -> Result<Vec<pactwise_source::audit::AuditEntry>, StorageError> {
        self.inner.source_audit(tender)
    }
    fn source_envelopes(&self, tender: Uuid, kind: &str) -> Result<Vec<source_rows::EnvelopeRow>, StorageError> {
        self.inner.source_envelopes(tender, kind)
    }
    fn source_invitation(&self, token_hash: &str) -> Result<Option<source_rows::Invitation>, StorageError> {
        self.inner.source_invitation(token_hash)
    }
    fn source_vendor_by_email(&self, email: &str) -> Result<Option<source_rows::VendorAccount>, StorageError> {
        self.inner.source_vendor_by_email(email)
    }
    fn source_create_session(
        &self,
        token_hash: &str,
        account: Uuid,
        expires: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        self.inner.source_create_session(token_hash, account, expires)
    }
    fn source_session(&self, token_hash: &str) -> Result<Option<(Uuid, DateTime<Utc>)>, StorageError> {
        self.inner.source_session(token_hash)
    }
    fn source_participations(&self, account: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
        self.inner.source_participations(account)
    }
    fn source_participants(&self, tender: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
        self.inner.source_participants(tender)
    }
    fn source_questions(&self, tender: Uuid) -> Result<Vec<source_rows::Question>, StorageError> {
        self.inner.source_questions(tender)
    }
    fn source_scores(&self, tender: Uuid) -> Result<Vec<source_rows::StoredScore>, StorageError> {
        self.inner.source_scores(tender)
    }
    fn source_tender_release(&self, tender: Uuid) -> Result<Option<String>, StorageError> {
        self.inner.source_tender_release(tender)
    }

    fn source_tenders_of(&self, org: pactwise_domain::OrgId) -> Result<Vec<Uuid>, StorageError> {
        self.inner.source_tenders_of(org)
    }
    fn source_upload_create(
        &self,
        upload: &source_rows::UploadRow,
        max_open: usize,
        now: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        self.inner.source_upload_create(upload, max_open, now)
    }
    fn source_upload(&self, id: Uuid) -> Result<Option<source_rows::UploadRow>, StorageError> {
        self.inner.source_upload(id)
    }
    fn source_upload_append(
        &self,
        id: Uuid,
        first_byte: u64,
        length: u64,
        sealed: &[u8],
        expires_at: DateTime<Utc>,
    ) -> Result<bool, StorageError> {
        self.inner.source_upload_append(id, first_byte, length, sealed, expires_at)
    }
    fn source_upload_chunks(&self, id: Uuid) -> Result<Vec<(u64, Vec<u8>)>, StorageError> {
        self.inner.source_upload_chunks(id)
    }
    fn source_upload_finish(&self, id: Uuid, summary: &str) -> Result<(), StorageError> {
        self.inner.source_upload_finish(id, summary)
    }
    fn source_upload_delete(&self, id: Uuid) -> Result<(), StorageError> {
        self.inner.source_upload_delete(id)
    }
}

/// A server in a runtime of its own, so the test can kill it outright: dropping the runtime ends every task and
/// closes every connection at once, like a crashed process.
struct Process {
    runtime: Option<tokio::runtime::Runtime>,
}

impl Process {
    fn start(addr: SocketAddr, storage: Arc<dyn SyncStorage>, clock: Arc<dyn Clock>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        // A killed server's listening socket closes when its runtime has finished dropping its tasks, which
        // `shutdown_background` does not wait for: wait (bounded) for the port to come free.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let listener = loop {
            match runtime.block_on(tokio::net::TcpListener::bind(addr)) {
                Ok(listener) => break listener,
                Err(e) => {
                    assert!(std::time::Instant::now() < deadline, "port {addr} stayed taken: {e}");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        };
        let state = AppState::new(storage, clock, generous());
        runtime.spawn(pactwise_sync_server::serve(listener, state, std::future::pending()));
        Self { runtime: Some(runtime) }
    }

    fn kill(mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// The client's backoff wait: instead of sleeping, restart the server (once) and record the wait asked for.
struct Restart {
    addr: SocketAddr,
    storage: Arc<dyn SyncStorage>,
    clock: Arc<dyn Clock>,
    restarted: Mutex<Option<Process>>,
    waits: Mutex<Vec<Duration>>,
}

impl Pause for Restart {
    fn pause(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        self.waits.lock().unwrap().push(duration);
        let mut restarted = self.restarted.lock().unwrap();
        if restarted.is_none() {
            let (addr, storage, clock) = (self.addr, self.storage.clone(), self.clock.clone());
            // Building a runtime inside a runtime is not allowed on this thread; do it on a plain one.
            let process = std::thread::spawn(move || Process::start(addr, storage, clock)).join().unwrap();
            *restarted = Some(process);
        }
        Box::pin(async {})
    }
}

async fn killed_mid_push(backend: Backend, kill: Kill) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer, Role::Reviewer]);
    let (reached_tx, reached_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel();
    let stalling = Arc::new(Stalling {
        inner: fresh.storage.clone(),
        kill: Mutex::new(Some(kill)),
        reached: Mutex::new(reached_tx),
        release: Mutex::new(release_rx),
    });
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (s2, c2) = (stalling.clone() as Arc<dyn SyncStorage>, clock.clone() as Arc<dyn Clock>);
    let first = std::thread::spawn(move || Process::start(addr, s2, c2)).join().unwrap();

    // 120 local changes, pushed in batches of 50: the first batch is the one in flight when the server dies.
    let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
    for i in 0..120 {
        replica.set_fields(SyncedModel::Contract, &format!("c{i}"), [("n".to_string(), json!(i))].into());
    }
    let restart = Arc::new(Restart {
        addr,
        storage: fresh.storage.clone(),
        clock: clock.clone(),
        restarted: Mutex::new(None),
        waits: Mutex::new(Vec::new()),
    });
    let config = SyncConfig {
        machine: MachineConfig { push_batch: 50, pull_limit: 100, base_backoff_ms: 1_000, max_backoff_ms: 60_000 },
        ..SyncConfig::default()
    };
    let endpoint = format!("http://{addr}");
    let client = Arc::new(SyncClient::with_api(
        replica.clone(),
        HttpApi::new(&endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap(),
        clock.clone(),
        restart.clone(),
        config,
    ));
    let round = tokio::spawn({
        let client = client.clone();
        async move { client.sync_now(Some(5)).await }
    });

    // The push is inside the server now; kill the server, then let the stalled thread go.
    tokio::task::spawn_blocking(move || reached_rx.recv_timeout(Duration::from_secs(60)).unwrap()).await.unwrap();
    first.kill();
    release_tx.send(()).unwrap();

    let report = round.await.unwrap().expect("the client retried and finished the round");
    assert_eq!(report.pushed, 120);
    assert!(!restart.waits.lock().unwrap().is_empty(), "the client backed off after the failure");
    assert_eq!(replica.pending_count().unwrap(), 0, "nothing left in the outbox");
    let c = counts(fresh.storage.as_ref());
    assert_eq!(c.changes, 120, "every change stored exactly once ({kill:?})");

    // A second device sees each change once, with gap-free sequence numbers.
    let other = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
    let reader = SyncClient::with_api(
        other.clone(),
        HttpApi::new(&endpoint, Some(DeviceToken::new(&a.tokens[1]))).unwrap(),
        clock.clone(),
        restart.clone(),
        SyncConfig::default(),
    );
    assert_eq!(reader.sync_now(Some(1)).await.unwrap().pulled, 120);
    assert_eq!(other.snapshot(), replica.snapshot());
    let page = HttpApi::new(&endpoint, Some(DeviceToken::new(&a.tokens[1]))).unwrap().pull(0, 1_000).await.unwrap();
    let seqs: Vec<u64> = page.changes.iter().map(|c| c.seq).collect();
    assert_eq!(seqs, (1..=120).collect::<Vec<_>>());
    let status = client.status();
    assert_eq!((status.activity, status.pending_uploads, status.last_error.is_none()), ("idle", 0, true));
}

async fn killed_before_commit_loses_nothing(backend: Backend) {
    killed_mid_push(backend, Kill::BeforeCommit).await
}

async fn killed_after_commit_applies_nothing_twice(backend: Backend) {
    killed_mid_push(backend, Kill::AfterCommit).await
}

async fn an_unreachable_server_is_retried_with_growing_waits_and_reported(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    // Nothing listens here.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    struct Record(Mutex<Vec<Duration>>);
    impl Pause for Record {
        fn pause(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
            self.0.lock().unwrap().push(d);
            Box::pin(async {})
        }
    }
    let record = Arc::new(Record(Mutex::new(Vec::new())));
    let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
    replica.set_fields(SyncedModel::Vendor, "v1", [("name".to_string(), json!("Acme"))].into());
    let client = SyncClient::with_api(
        replica.clone(),
        HttpApi::new(&format!("http://{addr}"), Some(DeviceToken::new(&a.tokens[0]))).unwrap(),
        clock.clone(),
        record.clone(),
        SyncConfig::default(),
    );
    let err = client.sync_now(Some(4)).await.unwrap_err();
    assert_eq!(err.code(), pactwise_domain::ErrorCode::SyncUnavailable);
    let waits = record.0.lock().unwrap().clone();
    assert_eq!(waits.len(), 3, "three waits between four attempts");
    assert!(waits.windows(2).all(|w| w[1] >= w[0]) && waits[2] >= Duration::from_secs(2), "waits grow: {waits:?}");
    let status = client.status();
    assert_eq!(status.activity, "waiting_to_retry");
    assert_eq!(status.pending_uploads, 1);
    assert_eq!(status.last_error.unwrap().code, pactwise_domain::ErrorCode::SyncUnavailable);
}

crate::both_backends!(
    killed_before_commit_loses_nothing,
    killed_after_commit_applies_nothing_twice,
    an_unreachable_server_is_retried_with_growing_waits_and_reported,
);
