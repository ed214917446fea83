//! The driver around [`crate::machine`]: performs its commands against the replica and the service, feeds back
//! events, waits out backoffs (through [`Pause`], so tests never sleep), and exposes a status for the app's sync
//! line (pending uploads, last success, the error while stuck) and a retry button (`wake`). [`RoundHooks`] let the
//! desktop move documents' files around a round (upload before the changes that name them are pushed, fetch after
//! the pull); their failures back off and retry like any other step.
//!
//! Between rounds the background loop ([`SyncClient::run`]) listens on the service's push channel (a long poll,
//! `GET /api/v1/changes/wait`) and starts a round as soon as the organization's log moves past this replica's
//! cursor; the poll interval races it and still starts a round when nothing else does. Any failure of the push
//! channel is said in the log and leaves the poll to carry on until the next round: it never fails the sync.
//! Progress (rounds, what woke each, fallbacks) is published through [`SyncClient::progress`].

use crate::error::SyncError;
use crate::http::HttpApi;
use crate::machine::{self, Command, Event, Failure, MachineConfig, Phase, State};
use crate::replica::LocalReplica;
use crate::token::DeviceToken;
use crate::wire::Change;
use chrono::{DateTime, TimeZone, Utc};
use pactwise_domain::{Clock, ErrorCode};
use serde::Serialize;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// How the driver waits. Production uses [`TokioPause`]; tests pass one that returns at once (and may do
/// something in between, like restarting a server).
pub trait Pause: Send + Sync {
    fn pause(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

#[derive(Debug, Default, Clone, Copy)]
pub struct TokioPause;

impl Pause for TokioPause {
    fn pause(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// What a hook returns.
pub type HookFuture<'a> = Pin<Box<dyn Future<Output = Result<(), SyncError>> + Send + 'a>>;

/// Work around a round that needs the service but is not part of the change protocol: documents' files.
pub trait RoundHooks: Send + Sync {
    /// Before a batch is pushed: upload the files its changes refer to, so no device learns of a document whose
    /// file the service does not have. An error fails the push step (back off, retry the same batch).
    fn before_push<'a>(&'a self, api: &'a HttpApi, changes: &'a [Change]) -> HookFuture<'a>;
    /// After every page was pulled and applied: fetch the files the applied changes refer to. An error fails the
    /// round (back off; the next round resumes the fetch).
    fn after_round<'a>(&'a self, api: &'a HttpApi) -> HookFuture<'a>;
}

/// No files to move (tests, benchmarks, replicas without documents).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl RoundHooks for NoHooks {
    fn before_push<'a>(&'a self, _: &'a HttpApi, _: &'a [Change]) -> HookFuture<'a> {
        Box::pin(async { Ok(()) })
    }

    fn after_round<'a>(&'a self, _: &'a HttpApi) -> HookFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct SyncConfig {
    pub machine: MachineConfig,
    /// How often the background loop syncs when nothing wakes it (the fallback when the push channel is down).
    pub interval: Duration,
    /// How long one wait on the service's push channel may last (the service shortens it to
    /// [`crate::wire::MAX_WAIT_S`]); None: no push channel, the loop only polls.
    pub push_wait: Option<Duration>,
    /// Seed of the backoff jitter.
    pub seed: u64,
}

impl Default for SyncConfig {
    fn default() -> Self {
        Self {
            machine: MachineConfig::default(),
            interval: Duration::from_secs(30),
            push_wait: Some(Duration::from_secs(crate::wire::MAX_WAIT_S)),
            seed: 0x5eed,
        }
    }
}

/// What started a round of the background loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WokenBy {
    /// The loop's first round.
    Start,
    /// A local write or the retry button ([`SyncClient::wake`]).
    Local,
    /// The service's push channel said there are new changes.
    Push,
    /// The poll interval ran out.
    Poll,
}

impl WokenBy {
    pub fn as_str(self) -> &'static str {
        match self {
            WokenBy::Start => "start",
            WokenBy::Local => "local",
            WokenBy::Push => "push",
            WokenBy::Poll => "poll",
        }
    }
}

/// What the background loop has done so far: counts of rounds, of what started them, and of changes pulled.
/// Watch it with [`SyncClient::progress`] (tests and benchmarks wait on it instead of sleeping).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopProgress {
    /// Rounds the loop finished (a round that failed and gave up counts too).
    pub rounds: u64,
    /// Changes pulled and applied by the loop's rounds.
    pub pulled: u64,
    /// Of those, pulled by rounds the push channel started.
    pub pulled_by_push: u64,
    pub push_wakes: u64,
    pub poll_wakes: u64,
    pub local_wakes: u64,
    /// How often the push channel failed and the loop fell back to the poll.
    pub fallbacks: u64,
    /// Why the push channel is not listened to until the next round, while it is not.
    pub push_unavailable: Option<String>,
}

/// The app's sync line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncStatus {
    /// `idle`, `syncing` (also while what the round brought is put in place: files fetched, their pipelines run)
    /// or `waiting_to_retry`.
    pub activity: &'static str,
    pub pending_uploads: u64,
    pub last_success: Option<DateTime<Utc>>,
    pub last_error: Option<StatusError>,
    pub next_retry_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusError {
    pub code: ErrorCode,
    pub message: String,
    pub at: DateTime<Utc>,
}

/// What one successful round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoundReport {
    pub pushed: u64,
    pub pulled: u64,
    pub failures: u32,
}

pub struct SyncClient<R: LocalReplica> {
    replica: Arc<R>,
    api: HttpApi,
    clock: Arc<dyn Clock>,
    pause: Arc<dyn Pause>,
    config: SyncConfig,
    hooks: Arc<dyn RoundHooks>,
    state: Mutex<State>,
    /// The round's after-round work (files fetched, their pipelines run) is going on: the line still says syncing,
    /// so nobody reads "synced" before what the round brought is in place.
    finishing: std::sync::atomic::AtomicBool,
    wake: Notify,
    progress: watch::Sender<LoopProgress>,
}

/// Clears the client's `finishing` flag when the after-round work ends, however it ends.
struct Finishing<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for Finishing<'_> {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

impl<R: LocalReplica> SyncClient<R> {
    pub fn new(replica: Arc<R>, endpoint: &str, token: DeviceToken, clock: Arc<dyn Clock>) -> Result<Self, SyncError> {
        Ok(Self::with_api(
            replica,
            HttpApi::new(endpoint, Some(token))?,
            clock,
            Arc::new(TokioPause),
            SyncConfig::default(),
        ))
    }

    pub fn with_api(
        replica: Arc<R>,
        api: HttpApi,
        clock: Arc<dyn Clock>,
        pause: Arc<dyn Pause>,
        config: SyncConfig,
    ) -> Self {
        let state = Mutex::new(State::new(config.seed));
        let progress = watch::Sender::new(LoopProgress::default());
        Self {
            replica,
            api,
            clock,
            pause,
            config,
            hooks: Arc::new(NoHooks),
            state,
            finishing: std::sync::atomic::AtomicBool::new(false),
            wake: Notify::new(),
            progress,
        }
    }

    /// The same client, moving files around each round with `hooks`.
    pub fn with_hooks(mut self, hooks: Arc<dyn RoundHooks>) -> Self {
        self.hooks = hooks;
        self
    }

    pub fn api(&self) -> &HttpApi {
        &self.api
    }

    pub fn replica(&self) -> &Arc<R> {
        &self.replica
    }

    /// Sync soon: a local write happened, or the person pressed retry. Cuts a backoff wait short.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// The background loop's progress, updated after every round and every fallback of the push channel.
    pub fn progress(&self) -> watch::Receiver<LoopProgress> {
        self.progress.subscribe()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.clock.now().timestamp_millis()).unwrap_or(0)
    }

    fn snapshot(&self) -> State {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn save(&self, state: &State) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = state.clone();
    }

    pub fn status(&self) -> SyncStatus {
        let state = self.snapshot();
        let ms = |ms: u64| Utc.timestamp_millis_opt(ms as i64).single();
        let finishing = self.finishing.load(std::sync::atomic::Ordering::SeqCst);
        let (activity, next_retry_at) = match state.phase {
            Phase::Idle if finishing => ("syncing", None),
            Phase::Idle => ("idle", None),
            Phase::Backoff { retry_at_ms } => ("waiting_to_retry", ms(retry_at_ms)),
            _ => ("syncing", None),
        };
        SyncStatus {
            activity,
            pending_uploads: self.replica.pending_count().unwrap_or(0),
            last_success: state.last_success_ms.and_then(ms),
            last_error: state
                .last_error
                .as_ref()
                .and_then(|(f, at)| Some(StatusError { code: f.code, message: f.message.clone(), at: ms(*at)? })),
            next_retry_at,
        }
    }

    /// Run one round to success: push the whole outbox, pull every page. Failures back off and retry; after
    /// `give_up_after` consecutive failures (None: never) the last error is returned and the state stays in backoff.
    #[tracing::instrument(skip_all, name = "sync_round")]
    pub async fn sync_now(&self, give_up_after: Option<u32>) -> Result<RoundReport, SyncError> {
        let mut report = RoundReport::default();
        let mut state = self.snapshot();
        let first = match state.phase {
            Phase::Backoff { .. } => Event::BackoffElapsed,
            _ => {
                state.phase = Phase::Idle;
                Event::Start { now_ms: self.now_ms() }
            }
        };
        let (next, commands) = machine::step(state, first, &self.config.machine);
        state = next;
        let mut queue: VecDeque<Command> = commands.into();
        let mut last_error: Option<SyncError> = None;
        while let Some(command) = queue.pop_front() {
            self.save(&state);
            let event = match command {
                Command::RoundDone => {
                    let span = tracing::info_span!("sync_after_round");
                    self.finishing.store(true, std::sync::atomic::Ordering::SeqCst);
                    let _finishing = Finishing(&self.finishing);
                    match tracing::Instrument::instrument(self.hooks.after_round(&self.api), span).await {
                        Ok(()) => {
                            report.failures = 0;
                            return Ok(report);
                        }
                        Err(error) => self.failed(error, &mut last_error),
                    }
                }
                Command::WaitUntil { at_ms } => {
                    report.failures += 1;
                    if let (Some(limit), Some(error)) = (give_up_after, last_error.take())
                        && state.failures >= limit
                    {
                        return Err(error);
                    }
                    let wait = Duration::from_millis(at_ms.saturating_sub(self.now_ms()));
                    tracing::info!(wait_ms = wait.as_millis() as u64, failures = state.failures, "sync backing off");
                    tokio::select! {
                        _ = self.pause.pause(wait) => {}
                        _ = self.wake.notified() => {}
                    }
                    Event::BackoffElapsed
                }
                other => match self.perform(other, &mut report).await {
                    Ok(event) => event,
                    Err(error) => self.failed(error, &mut last_error),
                },
            };
            let (next, commands) = machine::step(state, event, &self.config.machine);
            state = next;
            queue.extend(commands);
        }
        self.save(&state);
        Err(SyncError::Protocol("the sync round stopped without finishing".into()))
    }

    /// A failed step as the machine's event; the error is kept to return if the caller gives up.
    fn failed(&self, error: SyncError, last_error: &mut Option<SyncError>) -> Event {
        tracing::warn!(code = %error.code(), "sync step failed: {error}");
        let failure = Failure {
            code: error.code(),
            message: error.to_string(),
            retry_after_ms: match &error {
                SyncError::RateLimited { retry_after_s } => retry_after_s.map(|s| s * 1_000),
                _ => None,
            },
        };
        *last_error = Some(error);
        Event::Failed { failure, now_ms: self.now_ms() }
    }

    async fn perform(&self, command: Command, report: &mut RoundReport) -> Result<Event, SyncError> {
        Ok(match command {
            Command::ReadOutbox { limit } => {
                let changes = self.replica.outbox(limit)?;
                let cursor = self.replica.cursor()?;
                Event::OutboxRead { changes, cursor }
            }
            Command::Push(request) => {
                let span = tracing::info_span!("sync_push", changes = request.changes.len());
                let push = async {
                    self.hooks.before_push(&self.api, &request.changes).await?;
                    self.api.push(&request).await
                };
                let response = tracing::Instrument::instrument(push, span).await?;
                Event::Pushed { response, now_ms: self.now_ms() }
            }
            Command::MarkPushed(results) => {
                self.replica.mark_pushed(&results)?;
                report.pushed += results.len() as u64;
                Event::Marked
            }
            Command::Pull { since, limit } => Event::Pulled { page: self.api.pull(since, limit).await? },
            Command::Apply(page) => {
                let now_ms = self.now_ms();
                self.replica.apply_remote(&page, now_ms)?;
                report.pulled += page.changes.len() as u64;
                Event::Applied { now_ms }
            }
            // The driver handles these two itself before calling `perform`.
            Command::WaitUntil { .. } | Command::RoundDone => Event::BackoffElapsed,
        })
    }

    /// The background loop: a round now, then another when the push channel says the service has new changes, when
    /// woken (a local write, the retry button) or every `interval`, until `shutdown` resolves. Failures inside a
    /// round retry with backoff; a failing push channel leaves the poll to start the next round.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut woken_by = WokenBy::Start;
        loop {
            let span = tracing::info_span!("sync_loop_round", woken_by = woken_by.as_str());
            let pulled = tokio::select! {
                _ = &mut shutdown => return,
                result = tracing::Instrument::instrument(self.sync_now(None), span) => match result {
                    Ok(report) => Some(report.pulled),
                    Err(error) => {
                        tracing::warn!("sync round ended: {error}");
                        None
                    }
                }
            };
            self.progress.send_modify(|p| {
                p.rounds += 1;
                p.pulled += pulled.unwrap_or(0);
                if woken_by == WokenBy::Push {
                    p.pulled_by_push += pulled.unwrap_or(0);
                }
            });
            // The service said there was news and a full pull found none: listen again only after the next poll,
            // so a confused service cannot make this loop spin.
            let confused = woken_by == WokenBy::Push && pulled == Some(0);
            if confused {
                self.fall_back("the service announced changes that a pull did not find".to_string());
            }
            let listen = self.config.push_wait.filter(|_| !confused);
            let listening = async {
                match listen {
                    Some(wait) => self.listen(wait).await,
                    None => std::future::pending().await,
                }
            };
            woken_by = tokio::select! {
                _ = &mut shutdown => return,
                _ = self.pause.pause(self.config.interval) => WokenBy::Poll,
                _ = self.wake.notified() => WokenBy::Local,
                _ = listening => WokenBy::Push,
            };
            self.progress.send_modify(|p| match woken_by {
                WokenBy::Push => p.push_wakes += 1,
                WokenBy::Poll => p.poll_wakes += 1,
                WokenBy::Local => p.local_wakes += 1,
                WokenBy::Start => {}
            });
        }
    }

    /// The push channel between rounds: resolves when the service says the organization's log moved past this
    /// replica's cursor. A wait that ends with nothing new is asked again, a few times per poll interval at most;
    /// any failure is said in the log and the future never resolves, so the poll interval racing it starts the
    /// next round.
    #[tracing::instrument(skip_all, name = "sync_listen")]
    async fn listen(&self, wait: Duration) {
        // An honest service answers "nothing new" only after `wait`; more answers than fit in an interval mean
        // it ends waits early, and asking again would spin.
        let most_empty = self.config.interval.as_secs() / wait.as_secs().max(1) + 2;
        let mut empty = 0u64;
        loop {
            let since = match self.replica.cursor() {
                Ok(since) => since,
                Err(error) => {
                    self.fall_back(format!("the local cursor could not be read: {error}"));
                    return std::future::pending().await;
                }
            };
            match self.api.wait_for_changes(since, wait).await {
                Ok(true) => {
                    self.progress.send_if_modified(|p| p.push_unavailable.take().is_some());
                    return;
                }
                Ok(false) => {
                    self.progress.send_if_modified(|p| p.push_unavailable.take().is_some());
                    empty += 1;
                    if empty > most_empty {
                        self.fall_back("the service keeps ending waits early".to_string());
                        return std::future::pending().await;
                    }
                }
                Err(error) => {
                    self.fall_back(format!("{error} [{}]", error.code()));
                    return std::future::pending().await;
                }
            }
        }
    }

    /// The push channel is not used until the next round: say why (no token, no internals) and count it. The same
    /// reason again (a service without the channel, say) is logged once at warning level, then quietly.
    fn fall_back(&self, why: String) {
        let again = self.progress.borrow().push_unavailable.as_deref() == Some(why.as_str());
        let poll_s = self.config.interval.as_secs();
        if again {
            tracing::debug!(poll_s, "the push channel is still unavailable ({why})");
        } else {
            tracing::warn!(
                poll_s,
                "the push channel is unavailable ({why}); new changes arrive with the poll until it answers again"
            );
        }
        self.progress.send_modify(|p| {
            p.fallbacks += 1;
            p.push_unavailable = Some(why);
        });
    }
}
