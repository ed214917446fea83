//! The push channel (`GET /api/v1/changes/wait`): a waiting device is woken by its organization's next change and
//! never by another organization's; a wait with nothing new ends when its bound is over (a timer the test ends by
//! hand, so nothing sleeps); no token, no wait; a device holds at most two; shutting down ends waits; and the
//! client's loop starts a round from the push channel, or falls back to its poll when the channel refuses.

use crate::common::*;
use pactwise_domain::{FixedClock, Role};
use pactwise_sync::client::{LoopProgress, Pause, SyncConfig};
use pactwise_sync::wire::{MAX_WAIT_S, PushRequest};
use pactwise_sync::{Change, ChangeBody, DeviceToken, Hlc, HttpApi, MemoryReplica, SyncClient, SyncedModel};
use pactwise_sync_server::notify::WaitLimits;
use pactwise_sync_server::{AppState, ServerConfig};
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// A timer that ends only when the test rings it (every pause started before the ring ends), and remembers the
/// durations it was asked for.
struct HandTimer {
    rung: tokio::sync::watch::Sender<u64>,
    asked: Mutex<Vec<Duration>>,
}

impl HandTimer {
    fn new() -> Arc<Self> {
        Arc::new(Self { rung: tokio::sync::watch::Sender::new(0), asked: Mutex::new(Vec::new()) })
    }

    fn ring(&self) {
        self.rung.send_modify(|n| *n += 1);
    }

    fn asked(&self) -> Vec<Duration> {
        self.asked.lock().unwrap().clone()
    }
}

impl Pause for HandTimer {
    fn pause(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        self.asked.lock().unwrap().push(duration);
        let mut rung = self.rung.subscribe();
        let seen = *rung.borrow_and_update();
        Box::pin(async move {
            let _ = rung.wait_for(|n| *n > seen).await;
        })
    }
}

/// A server whose waits end only when `timer` is rung.
async fn server_with(
    backend: Backend,
    config: ServerConfig,
) -> (Fresh, Arc<FixedClock>, TestServer, Arc<HandTimer>, Org, Org) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let alpha = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer, Role::Reviewer]);
    let beta = org(fresh.storage.as_ref(), clock.as_ref(), "beta", &[Role::Reviewer]);
    let timer = HandTimer::new();
    let state = AppState::with_wait_timer(fresh.storage.clone(), clock.clone(), config, timer.clone());
    let server = TestServer::start_state(state).await;
    (fresh, clock, server, timer, alpha, beta)
}

fn api(server: &TestServer, token: &str) -> HttpApi {
    HttpApi::new(&server.endpoint, Some(DeviceToken::new(token))).unwrap()
}

fn change(record: &str) -> Change {
    Change {
        id: Uuid::now_v7(),
        model: SyncedModel::Contract,
        record_id: record.into(),
        hlc: Hlc { wall_ms: 1, counter: 0, node: Uuid::now_v7() },
        body: ChangeBody::Fields { fields: [("title".to_string(), json!(record))].into() },
    }
}

async fn push(api: &HttpApi, records: &[&str]) -> u64 {
    let changes = records.iter().map(|r| change(r)).collect();
    let response = api.push(&PushRequest { idempotency_key: Uuid::now_v7(), changes }).await.unwrap();
    response.results.iter().map(|r| r.seq).max().unwrap()
}

/// Yields until `done` holds (a bound against a hang, not a measured time).
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::task::yield_now().await;
    }
}

/// A wait in the background, returned once the server holds it open with its bound started (`open` waits in all).
async fn waiting(
    server: &TestServer,
    timer: &HandTimer,
    token: &str,
    since: u64,
    open: usize,
) -> tokio::task::JoinHandle<Result<bool, pactwise_sync::SyncError>> {
    let bounds = timer.asked().len();
    let wait = api(server, token);
    let handle = tokio::spawn(async move { wait.wait_for_changes(since, Duration::from_secs(MAX_WAIT_S)).await });
    until("the wait to be open", || server.state.notifier().open_waits() == open && timer.asked().len() == bounds + 1)
        .await;
    handle
}

async fn a_change_from_another_device_wakes_a_waiting_device_at_once(backend: Backend) {
    let (_fresh, _clock, server, timer, alpha, _beta) = server_with(backend, generous()).await;
    let other = api(&server, &alpha.tokens[1]);
    let first = push(&other, &["k-1"]).await;
    // A device that has not seen the log's newest change is answered at once.
    assert!(api(&server, &alpha.tokens[0]).wait_for_changes(0, Duration::from_secs(5)).await.unwrap());
    // Caught up, it waits; the other device's push wakes it (the timer is never rung).
    let wait = waiting(&server, &timer, &alpha.tokens[0], first, 1).await;
    assert!(!wait.is_finished());
    push(&other, &["k-2"]).await;
    assert!(wait.await.unwrap().unwrap(), "woken by the new change");
    until("the wait to be given back", || server.state.notifier().open_waits() == 0).await;
    assert!(timer.asked().iter().all(|d| *d == Duration::from_secs(MAX_WAIT_S)));
}

async fn a_wait_with_nothing_new_answers_when_its_bound_is_over(backend: Backend) {
    let (_fresh, _clock, server, timer, alpha, _beta) = server_with(backend, generous()).await;
    let token = alpha.tokens[0].clone();
    let http = reqwest::Client::new();
    let url = server.url("/api/v1/changes/wait?since=0&wait_s=3");
    let asked = tokio::spawn({
        let http = http.clone();
        let token = token.clone();
        async move { http.get(url).bearer_auth(token).send().await.unwrap() }
    });
    until("the wait's bound to start", || timer.asked().len() == 1).await;
    assert_eq!(timer.asked(), [Duration::from_secs(3)], "the client's own bound");
    assert_eq!(server.state.notifier().open_waits(), 1);
    timer.ring();
    let response = asked.await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap(), json!({"changed": false}));
    // A longer wait is shortened to the service's bound.
    let long = server.url("/api/v1/changes/wait?since=0&wait_s=86400");
    let asked = tokio::spawn(async move { http.get(long).bearer_auth(token).send().await.unwrap() });
    until("the long wait to be open", || timer.asked().len() == 2).await;
    assert_eq!(timer.asked()[1], Duration::from_secs(MAX_WAIT_S));
    timer.ring();
    assert_eq!(asked.await.unwrap().json::<Value>().await.unwrap(), json!({"changed": false}));
    until("every wait to be given back", || server.state.notifier().open_waits() == 0).await;
}

async fn waiting_needs_a_device_token_and_a_well_formed_query(backend: Backend) {
    let (_fresh, _clock, server, timer, alpha, _beta) = server_with(backend, generous()).await;
    let http = reqwest::Client::new();
    let url = server.url("/api/v1/changes/wait?since=0");
    for token in [None, Some("pws_not-a-token"), Some(&*format!("pws_{}", "0".repeat(64)))] {
        let mut request = http.get(&url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{token:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthenticated");
    }
    // The organization is the token's: a query cannot name one, and a bad cursor is bad input.
    let org_id = Uuid::now_v7();
    for query in [format!("since=0&org_id={org_id}"), "since=-1".into(), "since=abc".into(), String::new()] {
        let response =
            http.get(server.url(&format!("/api/v1/changes/wait?{query}"))).bearer_auth(&alpha.tokens[0]).send();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 400, "{query}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_input", "{query}");
    }
    assert!(timer.asked().is_empty(), "nothing refused ever waited");
    assert_eq!(server.state.notifier().open_waits(), 0);
}

async fn a_change_in_another_organization_never_wakes_a_waiting_device(backend: Backend) {
    let (_fresh, _clock, server, timer, alpha, beta) = server_with(backend, generous()).await;
    // Alpha's log is empty; beta's reaches seq 3, past alpha's cursor.
    let wait = waiting(&server, &timer, &alpha.tokens[0], 0, 1).await;
    let beta_head = push(&api(&server, &beta.tokens[0]), &["b-1", "b-2", "b-3"]).await;
    assert!(beta_head >= 3);
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(!wait.is_finished(), "beta's changes did not answer alpha's wait");
    assert_eq!(server.state.notifier().open_waits(), 1);
    timer.ring();
    assert!(!wait.await.unwrap().unwrap(), "nothing new for alpha when its bound is over");
    // A new wait of alpha's still sees nothing of beta's log; alpha's own change wakes it.
    let wait = waiting(&server, &timer, &alpha.tokens[0], 0, 1).await;
    push(&api(&server, &beta.tokens[0]), &["b-4"]).await;
    push(&api(&server, &alpha.tokens[1]), &["a-1"]).await;
    assert!(wait.await.unwrap().unwrap());
    let page = api(&server, &alpha.tokens[0]).pull(0, 100).await.unwrap();
    assert_eq!(page.changes.iter().map(|c| c.change.record_id.as_str()).collect::<Vec<_>>(), ["a-1"]);
}

async fn a_device_holds_at_most_two_waits_and_shutting_down_ends_them(backend: Backend) {
    let (_fresh, _clock, mut server, timer, alpha, _beta) = server_with(backend, generous()).await;
    let first = waiting(&server, &timer, &alpha.tokens[0], 0, 1).await;
    let second = waiting(&server, &timer, &alpha.tokens[0], 0, 2).await;
    let http = reqwest::Client::new();
    let refused =
        http.get(server.url("/api/v1/changes/wait?since=0")).bearer_auth(&alpha.tokens[0]).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], MAX_WAIT_S.to_string().as_str());
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    assert!(body["error"]["message"].as_str().unwrap().contains("already holds 2 waits"), "{body}");
    // Another device of the organization still may.
    let third = waiting(&server, &timer, &alpha.tokens[1], 0, 3).await;
    // A graceful shutdown answers every open wait with nothing new instead of waiting for their bounds.
    server.stop();
    for wait in [first, second, third] {
        assert!(!wait.await.unwrap().unwrap());
    }
}

/// The client's side: a device whose poll interval never ends by itself (the hand timer).
fn looping_client(
    server: &TestServer,
    token: &str,
    poll: Arc<HandTimer>,
) -> (Arc<MemoryReplica>, Arc<SyncClient<MemoryReplica>>) {
    let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), Arc::new(FixedClock::new(start_time()))));
    let client = SyncClient::with_api(replica.clone(), api(server, token), fixed_clock(), poll, SyncConfig::default());
    (replica, Arc::new(client))
}

async fn progress_until(client: &SyncClient<MemoryReplica>, what: &str, done: impl FnMut(&LoopProgress) -> bool) {
    let mut progress = client.progress();
    tokio::time::timeout(Duration::from_secs(30), progress.wait_for(done))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}: {:?}", *client.progress().borrow()))
        .unwrap();
}

async fn the_loop_pulls_another_devices_change_when_pushed_without_waiting_for_the_poll(backend: Backend) {
    let (_fresh, _clock, server, _timer, alpha, _beta) = server_with(backend, generous()).await;
    let poll = HandTimer::new();
    let (replica, client) = looping_client(&server, &alpha.tokens[0], poll.clone());
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
    progress_until(&client, "the first round", |p| p.rounds == 1).await;
    until("the loop to listen", || server.state.notifier().open_waits() == 1).await;
    push(&api(&server, &alpha.tokens[1]), &["k-7"]).await;
    progress_until(&client, "the pushed change", |p| p.pulled_by_push == 1).await;
    let progress = client.progress().borrow().clone();
    assert_eq!((progress.rounds, progress.push_wakes, progress.poll_wakes, progress.fallbacks), (2, 1, 0, 0));
    assert_eq!(replica.record(SyncedModel::Contract, "k-7").unwrap()["title"], "k-7");
    assert!(poll.asked().iter().all(|d| *d == Duration::from_secs(30)), "only the poll interval was started");
    stop.send(()).unwrap();
    running.await.unwrap();
}

async fn a_push_channel_that_refuses_falls_back_to_the_poll_and_loses_nothing(backend: Backend) {
    let config = ServerConfig { wait_limits: WaitLimits { per_device: 0, per_org: 10 }, ..generous() };
    let (_fresh, _clock, server, _timer, alpha, _beta) = server_with(backend, config).await;
    let poll = HandTimer::new();
    let (replica, client) = looping_client(&server, &alpha.tokens[0], poll.clone());
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
    progress_until(&client, "the fallback", |p| p.fallbacks == 1).await;
    let why = client.progress().borrow().push_unavailable.clone().unwrap();
    assert!(why.contains("slow down") && why.contains("rate_limited"), "{why}");
    assert_eq!(client.status().last_error, None, "the sync itself did not fail");
    push(&api(&server, &alpha.tokens[1]), &["k-8"]).await;
    // The poll interval (rung by hand) starts the round that brings it.
    poll.ring();
    progress_until(&client, "the polled change", |p| p.pulled == 1).await;
    let progress = client.progress().borrow().clone();
    assert_eq!((progress.poll_wakes, progress.push_wakes, progress.pulled_by_push), (1, 0, 0));
    assert!(replica.record(SyncedModel::Contract, "k-8").is_some());
    stop.send(()).unwrap();
    running.await.unwrap();
}

crate::both_backends!(
    a_change_from_another_device_wakes_a_waiting_device_at_once,
    a_wait_with_nothing_new_answers_when_its_bound_is_over,
    waiting_needs_a_device_token_and_a_well_formed_query,
    a_change_in_another_organization_never_wakes_a_waiting_device,
    a_device_holds_at_most_two_waits_and_shutting_down_ends_them,
    the_loop_pulls_another_devices_change_when_pushed_without_waiting_for_the_poll,
    a_push_channel_that_refuses_falls_back_to_the_poll_and_loses_nothing,
);
