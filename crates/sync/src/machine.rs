//! The client's push/pull protocol as a pure state machine: `step(state, event) -> (state, commands)`. No I/O, no
//! clock, no randomness from outside: times arrive in events, jitter comes from a seeded generator kept in the
//! state. The driver ([`crate::SyncClient`]) performs the commands and feeds back events.
//!
//! One round: read the outbox → push a batch (idempotency key derived from the batch's change ids, so a retried
//! batch carries the same key) → mark it pushed → … until the outbox is empty → pull pages from the cursor and
//! apply each → idle. Any failure moves to `Backoff` with an exponentially growing, jittered delay; when it elapses
//! the round starts again from the outbox. Nothing waits for a new local write.

use crate::wire::{Change, PullResponse, PushRequest, PushResponse, PushResult};
use pactwise_domain::ErrorCode;
use sha2::{Digest, Sha256};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineConfig {
    pub push_batch: usize,
    pub pull_limit: u32,
    pub base_backoff_ms: u64,
    pub max_backoff_ms: u64,
}

impl Default for MachineConfig {
    fn default() -> Self {
        Self { push_batch: 500, pull_limit: 500, base_backoff_ms: 1_000, max_backoff_ms: 5 * 60 * 1_000 }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    Idle,
    ReadingOutbox,
    Pushing { key: Uuid, ids: Vec<Uuid> },
    Pulling { since: u64 },
    Applying { next_cursor: u64, has_more: bool },
    Backoff { retry_at_ms: u64 },
}

/// A failure as the machine sees it: its code and message for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: ErrorCode,
    pub message: String,
    /// The server's `Retry-After`, when it gave one: the wait is at least this long.
    pub retry_after_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub phase: Phase,
    /// Failures since the last successful round (drives the backoff).
    pub failures: u32,
    pub last_success_ms: Option<u64>,
    pub last_error: Option<(Failure, u64)>,
    rng: u64,
}

impl State {
    pub fn new(seed: u64) -> Self {
        Self { phase: Phase::Idle, failures: 0, last_success_ms: None, last_error: None, rng: seed }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Start a round: the periodic timer, a local write, the retry button. Ignored while a round runs.
    Start {
        now_ms: u64,
    },
    /// The outbox's oldest changes and the replica's cursor.
    OutboxRead {
        changes: Vec<Change>,
        cursor: u64,
    },
    Pushed {
        response: PushResponse,
        now_ms: u64,
    },
    /// The pushed batch is marked in the replica.
    Marked,
    Pulled {
        page: PullResponse,
    },
    /// The page is applied and the cursor moved.
    Applied {
        now_ms: u64,
    },
    Failed {
        failure: Failure,
        now_ms: u64,
    },
    /// The backoff wait is over (or was cut short by the retry button).
    BackoffElapsed,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    ReadOutbox {
        limit: usize,
    },
    Push(PushRequest),
    MarkPushed(Vec<PushResult>),
    Pull {
        since: u64,
        limit: u32,
    },
    Apply(PullResponse),
    /// Wait until this time, then send `BackoffElapsed`.
    WaitUntil {
        at_ms: u64,
    },
    /// The round ended well; the driver reports success.
    RoundDone,
}

/// The idempotency key of a batch: a digest of its change ids, so re-reading the same outbox batch after any
/// failure yields the same key.
pub fn batch_key(ids: &[Uuid]) -> Uuid {
    let mut hash = Sha256::new();
    for id in ids {
        hash.update(id.as_bytes());
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// The wait before retry number `failures` (1-based): exponential from `base`, capped at `max`, with the upper half
/// jittered so many clients do not retry in step. Never shorter than the server's `Retry-After`.
pub fn backoff_ms(config: &MachineConfig, failures: u32, unit: f64, retry_after_ms: Option<u64>) -> u64 {
    let exp = config.base_backoff_ms.saturating_mul(1u64 << failures.saturating_sub(1).min(30));
    let capped = exp.min(config.max_backoff_ms);
    let half = capped / 2;
    let jittered = half + ((capped - half) as f64 * unit.clamp(0.0, 1.0)) as u64;
    jittered.max(retry_after_ms.unwrap_or(0))
}

fn next_unit(rng: &mut u64) -> f64 {
    // splitmix64
    *rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *rng;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

pub fn step(mut state: State, event: Event, config: &MachineConfig) -> (State, Vec<Command>) {
    let phase = std::mem::replace(&mut state.phase, Phase::Idle);
    match (phase, event) {
        (_, Event::Failed { failure, now_ms }) => {
            state.failures = state.failures.saturating_add(1);
            let unit = next_unit(&mut state.rng);
            let wait = backoff_ms(config, state.failures, unit, failure.retry_after_ms);
            let at_ms = now_ms.saturating_add(wait);
            state.last_error = Some((failure, now_ms));
            state.phase = Phase::Backoff { retry_at_ms: at_ms };
            (state, vec![Command::WaitUntil { at_ms }])
        }
        (Phase::Idle, Event::Start { .. }) | (Phase::Backoff { .. }, Event::BackoffElapsed) => {
            state.phase = Phase::ReadingOutbox;
            (state, vec![Command::ReadOutbox { limit: config.push_batch }])
        }
        (Phase::ReadingOutbox, Event::OutboxRead { changes, cursor }) => {
            if changes.is_empty() {
                state.phase = Phase::Pulling { since: cursor };
                (state, vec![Command::Pull { since: cursor, limit: config.pull_limit }])
            } else {
                let ids: Vec<Uuid> = changes.iter().map(|c| c.id).collect();
                let key = batch_key(&ids);
                state.phase = Phase::Pushing { key, ids };
                (state, vec![Command::Push(PushRequest { idempotency_key: key, changes })])
            }
        }
        (Phase::Pushing { key, ids }, Event::Pushed { response, now_ms }) => {
            let answered: Vec<Uuid> = response.results.iter().map(|r| r.change_id).collect();
            if answered != ids {
                state.phase = Phase::Pushing { key, ids };
                let failure = Failure {
                    code: ErrorCode::SyncUnavailable,
                    message: "the sync service answered a push with results for other changes".to_string(),
                    retry_after_ms: None,
                };
                return step(state, Event::Failed { failure, now_ms }, config);
            }
            state.phase = Phase::ReadingOutbox;
            (state, vec![Command::MarkPushed(response.results)])
        }
        (Phase::ReadingOutbox, Event::Marked) => {
            state.phase = Phase::ReadingOutbox;
            (state, vec![Command::ReadOutbox { limit: config.push_batch }])
        }
        (Phase::Pulling { .. }, Event::Pulled { page }) => {
            state.phase = Phase::Applying { next_cursor: page.next_cursor, has_more: page.has_more };
            (state, vec![Command::Apply(page)])
        }
        (Phase::Applying { next_cursor, has_more }, Event::Applied { now_ms }) => {
            if has_more {
                state.phase = Phase::Pulling { since: next_cursor };
                (state, vec![Command::Pull { since: next_cursor, limit: config.pull_limit }])
            } else {
                state.phase = Phase::Idle;
                state.failures = 0;
                state.last_success_ms = Some(now_ms);
                state.last_error = None;
                (state, vec![Command::RoundDone])
            }
        }
        (phase, event) => {
            // Anything else (a Start during a round, a stale event) changes nothing.
            let _ = event;
            state.phase = phase;
            (state, vec![])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlc::Hlc;
    use crate::model::SyncedModel;
    use crate::wire::ChangeBody;
    use serde_json::json;

    fn change(n: u8) -> Change {
        Change {
            id: Uuid::from_bytes([n; 16]),
            model: SyncedModel::Contract,
            record_id: format!("c{n}"),
            hlc: Hlc { wall_ms: n.into(), counter: 0, node: Uuid::nil() },
            body: ChangeBody::Fields { fields: [("title".to_string(), json!("x"))].into() },
        }
    }

    fn failure() -> Failure {
        Failure { code: ErrorCode::SyncUnavailable, message: "down".into(), retry_after_ms: None }
    }

    fn cfg() -> MachineConfig {
        MachineConfig { push_batch: 2, pull_limit: 10, base_backoff_ms: 1_000, max_backoff_ms: 60_000 }
    }

    fn page(next: u64, more: bool) -> PullResponse {
        PullResponse { changes: vec![], next_cursor: next, has_more: more }
    }

    #[test]
    fn a_round_pushes_every_batch_then_pulls_every_page_then_is_idle() {
        let c = cfg();
        let s = State::new(1);
        let (s, cmds) = step(s, Event::Start { now_ms: 0 }, &c);
        assert_eq!(cmds, vec![Command::ReadOutbox { limit: 2 }]);
        let (s, cmds) = step(s, Event::OutboxRead { changes: vec![change(1), change(2)], cursor: 7 }, &c);
        let Command::Push(req) = &cmds[0] else { panic!("{cmds:?}") };
        assert_eq!(req.changes.len(), 2);
        let results: Vec<PushResult> =
            req.changes.iter().enumerate().map(|(i, c)| PushResult::stored(c.id, 8 + i as u64)).collect();
        let response = PushResponse { results: results.clone(), replayed: false };
        let (s, cmds) = step(s, Event::Pushed { response, now_ms: 1 }, &c);
        assert_eq!(cmds, vec![Command::MarkPushed(results)]);
        let (s, cmds) = step(s, Event::Marked, &c);
        assert_eq!(cmds, vec![Command::ReadOutbox { limit: 2 }]);
        let (s, cmds) = step(s, Event::OutboxRead { changes: vec![], cursor: 7 }, &c);
        assert_eq!(cmds, vec![Command::Pull { since: 7, limit: 10 }]);
        let (s, cmds) = step(s, Event::Pulled { page: page(9, true) }, &c);
        assert_eq!(cmds, vec![Command::Apply(page(9, true))]);
        let (s, cmds) = step(s, Event::Applied { now_ms: 2 }, &c);
        assert_eq!(cmds, vec![Command::Pull { since: 9, limit: 10 }]);
        let (s, _) = step(s, Event::Pulled { page: page(12, false) }, &c);
        let (s, cmds) = step(s, Event::Applied { now_ms: 3 }, &c);
        assert_eq!(cmds, vec![Command::RoundDone]);
        assert_eq!(s.phase, Phase::Idle);
        assert_eq!(s.last_success_ms, Some(3));
    }

    #[test]
    fn a_failure_backs_off_exponentially_and_the_retry_sends_the_same_idempotency_key() {
        let c = cfg();
        let s = State::new(42);
        let (s, _) = step(s, Event::Start { now_ms: 0 }, &c);
        let (s, cmds) = step(s, Event::OutboxRead { changes: vec![change(1)], cursor: 0 }, &c);
        let Command::Push(first) = cmds[0].clone() else { panic!() };
        let mut s = s;
        let mut waits = Vec::new();
        let mut now = 0;
        for _ in 0..8 {
            let (next, cmds) = step(s, Event::Failed { failure: failure(), now_ms: now }, &c);
            let Command::WaitUntil { at_ms } = cmds[0] else { panic!("{cmds:?}") };
            waits.push(at_ms - now);
            now = at_ms;
            let (next, cmds) = step(next, Event::BackoffElapsed, &c);
            assert_eq!(cmds, vec![Command::ReadOutbox { limit: 2 }]);
            let (next, cmds) = step(next, Event::OutboxRead { changes: vec![change(1)], cursor: 0 }, &c);
            assert_eq!(cmds, vec![Command::Push(first.clone())], "a retried batch keeps its key");
            s = next;
        }
        // 1st wait in [500, 1000], 2nd in [1000, 2000], …, capped at 60 s.
        for (i, w) in waits.iter().enumerate() {
            let full = (1_000u64 << i).min(60_000);
            assert!(*w >= full / 2 && *w <= full, "wait {i} = {w}, full {full}");
        }
        assert!(waits[7] >= 30_000);
        assert_eq!(s.failures, 8);
    }

    #[test]
    fn a_server_retry_after_is_never_cut_short() {
        let w = backoff_ms(&cfg(), 1, 0.0, Some(30_000));
        assert_eq!(w, 30_000);
    }

    #[test]
    fn a_start_during_a_round_changes_nothing_and_success_clears_the_error() {
        let c = cfg();
        let (s, _) = step(State::new(1), Event::Start { now_ms: 0 }, &c);
        let (s, cmds) = step(s.clone(), Event::Start { now_ms: 1 }, &c);
        assert!(cmds.is_empty());
        assert_eq!(s.phase, Phase::ReadingOutbox);
        let (s, _) = step(s, Event::Failed { failure: failure(), now_ms: 5 }, &c);
        assert!(s.last_error.is_some());
        // The retry button during backoff starts over at once.
        let (s, cmds) = step(s, Event::BackoffElapsed, &c);
        assert_eq!(cmds, vec![Command::ReadOutbox { limit: 2 }]);
        let (s, _) = step(s, Event::OutboxRead { changes: vec![], cursor: 0 }, &c);
        let (s, _) = step(s, Event::Pulled { page: page(0, false) }, &c);
        let (s, cmds) = step(s, Event::Applied { now_ms: 9 }, &c);
        assert_eq!(cmds, vec![Command::RoundDone]);
        assert_eq!((s.failures, s.last_error.clone()), (0, None));
    }

    #[test]
    fn a_push_answer_for_other_changes_is_a_failure_not_an_acknowledgement() {
        let c = cfg();
        let (s, _) = step(State::new(1), Event::Start { now_ms: 0 }, &c);
        let (s, _) = step(s, Event::OutboxRead { changes: vec![change(1)], cursor: 0 }, &c);
        let response =
            PushResponse { results: vec![PushResult::stored(Uuid::from_bytes([9; 16]), 1)], replayed: false };
        let (s, cmds) = step(s, Event::Pushed { response, now_ms: 10 }, &c);
        assert!(matches!(cmds[0], Command::WaitUntil { .. }));
        assert!(matches!(s.phase, Phase::Backoff { .. }));
    }
}
