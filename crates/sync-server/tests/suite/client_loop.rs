//! The client's background loop: syncs at start, syncs again when woken by a local write (or the retry button),
//! and stops when told.

use crate::common::*;
use pactwise_domain::{FixedClock, Role};
use pactwise_sync::client::{Pause, SyncConfig};
use pactwise_sync::{
    Change, DeviceToken, HookFuture, HttpApi, MemoryReplica, RoundHooks, SyncClient, SyncError, SyncedModel,
};
use pactwise_sync_server::SyncStorage;
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Backoff waits return at once; the idle interval never ends by itself (only a wake or shutdown ends it).
struct IdleForever;
impl Pause for IdleForever {
    fn pause(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        if d >= Duration::from_secs(30) { Box::pin(std::future::pending()) } else { Box::pin(async {}) }
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::task::yield_now().await;
    }
}

async fn the_background_loop_syncs_on_start_and_on_wake_then_stops(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), Arc::new(FixedClock::new(start_time()))));
    replica.set_fields(SyncedModel::Document, "d1", [("title".to_string(), json!("NDA"))].into());
    let client = Arc::new(SyncClient::with_api(
        replica.clone(),
        HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap(),
        clock.clone(),
        Arc::new(IdleForever),
        SyncConfig::default(),
    ));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .run(async move {
                    let _ = stopped.await;
                })
                .await
        }
    });
    let settled = |client: &SyncClient<MemoryReplica>| {
        let status = client.status();
        status.pending_uploads == 0 && status.activity == "idle" && status.last_success.is_some()
    };
    until("the first round", || settled(&client)).await;
    assert_eq!(counts(fresh.storage.as_ref()).changes, 1);
    // A local write while idle: the wake starts a round without waiting for the interval.
    replica.set_fields(SyncedModel::Document, "d2", [("title".to_string(), json!("MSA"))].into());
    client.wake();
    until("the woken round", || settled(&client)).await;
    assert_eq!(counts(fresh.storage.as_ref()).changes, 2);
    stop.send(()).unwrap();
    running.await.unwrap();
    assert_eq!(client.status().activity, "idle");
}

/// Records what the hooks saw; the first fetch fails like a broken connection.
struct Hooks {
    storage: Arc<dyn SyncStorage>,
    /// For each push: how many changes it carried and how many the server held when the hook ran.
    pushes: Mutex<Vec<(usize, u64)>>,
    fetches: Mutex<u32>,
}

impl RoundHooks for Hooks {
    fn before_push<'a>(&'a self, _: &'a HttpApi, changes: &'a [Change]) -> HookFuture<'a> {
        let held = blocking(|| self.storage.counts().unwrap().changes);
        self.pushes.lock().unwrap().push((changes.len(), held));
        Box::pin(async { Ok(()) })
    }

    fn after_round<'a>(&'a self, _: &'a HttpApi) -> HookFuture<'a> {
        let mut fetches = self.fetches.lock().unwrap();
        *fetches += 1;
        let first = *fetches == 1;
        Box::pin(async move { if first { Err(SyncError::Unreachable("connection reset".into())) } else { Ok(()) } })
    }
}

async fn hooks_run_before_the_push_and_a_failed_fetch_backs_off_and_resumes(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), Arc::new(FixedClock::new(start_time()))));
    replica.set_fields(SyncedModel::Document, "d1", [("content_hash".to_string(), json!("ab"))].into());
    let hooks =
        Arc::new(Hooks { storage: fresh.storage.clone(), pushes: Mutex::new(Vec::new()), fetches: Mutex::new(0) });
    let client = SyncClient::with_api(
        replica.clone(),
        HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap(),
        clock.clone(),
        Arc::new(IdleForever),
        SyncConfig::default(),
    )
    .with_hooks(hooks.clone());
    let report = client.sync_now(None).await.unwrap();
    assert_eq!(*hooks.pushes.lock().unwrap(), [(1, 0)], "the hook ran before the change reached the server");
    assert_eq!(*hooks.fetches.lock().unwrap(), 2, "the failed fetch was retried after a backoff");
    assert_eq!(report.pushed, 1);
    let status = client.status();
    assert_eq!((status.activity, status.pending_uploads), ("idle", 0));
    assert!(status.last_error.is_none() && status.last_success.is_some());
}

/// Holds the after-round work until told to go on.
struct HeldAfterRound {
    entered: std::sync::atomic::AtomicBool,
    release: tokio::sync::Notify,
}

impl RoundHooks for HeldAfterRound {
    fn before_push<'a>(&'a self, _: &'a HttpApi, _: &'a [Change]) -> HookFuture<'a> {
        Box::pin(async { Ok(()) })
    }

    fn after_round<'a>(&'a self, _: &'a HttpApi) -> HookFuture<'a> {
        Box::pin(async move {
            self.entered.store(true, std::sync::atomic::Ordering::SeqCst);
            self.release.notified().await;
            Ok(())
        })
    }
}

/// The line says "syncing" until what the round brought is in place (files fetched, their pipelines run): a window
/// that reads "synced" finds the documents reviewed.
async fn the_line_says_syncing_until_the_after_round_work_is_done(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), Arc::new(FixedClock::new(start_time()))));
    replica.set_fields(SyncedModel::Document, "d1", [("title".to_string(), json!("NDA"))].into());
    let hooks = Arc::new(HeldAfterRound {
        entered: std::sync::atomic::AtomicBool::new(false),
        release: tokio::sync::Notify::new(),
    });
    let client = Arc::new(
        SyncClient::with_api(
            replica.clone(),
            HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap(),
            clock.clone(),
            Arc::new(IdleForever),
            SyncConfig::default(),
        )
        .with_hooks(hooks.clone()),
    );
    let round = tokio::spawn({
        let client = client.clone();
        async move { client.sync_now(None).await }
    });
    until("the after-round work", || hooks.entered.load(std::sync::atomic::Ordering::SeqCst)).await;
    let during = client.status();
    assert!(during.last_success.is_some(), "pushed and pulled already");
    assert_eq!(during.activity, "syncing", "not idle while the round's files are put in place");
    hooks.release.notify_one();
    round.await.unwrap().unwrap();
    assert_eq!(client.status().activity, "idle");
}

crate::both_backends!(
    the_background_loop_syncs_on_start_and_on_wake_then_stops,
    hooks_run_before_the_push_and_a_failed_fetch_backs_off_and_resumes,
    the_line_says_syncing_until_the_after_round_work_is_done
);
