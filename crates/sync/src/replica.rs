//! What the sync client needs from the desktop's store. The store implements this over SQLite; [`crate::MemoryReplica`]
//! implements it in memory for tests.
//!
//! The contract:
//! - Every local change to a synced model is written **with its outbox entry in the same transaction** (a
//!   [`Change`] with a fresh id and an HLC from the replica's [`crate::HlcClock`], persisted in that transaction too).
//!   A crash leaves both or neither.
//! - `outbox` returns the oldest unpushed changes in write order; the same call after a crash returns the same
//!   batch, so the client's idempotency key (derived from the ids) is the same and the server answers the retry
//!   with the first result.
//! - `mark_pushed` removes exactly the acknowledged changes.
//! - `apply_remote` applies a pulled page **and** moves the cursor in one transaction, following each model's
//!   conflict rule ([`crate::SyncedModel::rule`]): fields last-writer-wins by HLC, events kept once by id, approval
//!   outcomes folded into the step. Applying a page twice changes nothing.

use crate::error::ReplicaError;
use crate::wire::{Change, PullResponse, PushResult};

pub trait LocalReplica: Send + Sync {
    /// The oldest `limit` changes not yet acknowledged by the server, oldest first.
    fn outbox(&self, limit: usize) -> Result<Vec<Change>, ReplicaError>;
    /// How many changes wait to be pushed (for the sync status).
    fn pending_count(&self) -> Result<u64, ReplicaError>;
    /// The server stored these changes: remove them from the outbox.
    fn mark_pushed(&self, results: &[PushResult]) -> Result<(), ReplicaError>;
    /// The highest server sequence applied locally (0 before the first pull).
    fn cursor(&self) -> Result<u64, ReplicaError>;
    /// Apply a page of remote changes and set the cursor to `page.next_cursor`, in one transaction.
    fn apply_remote(&self, page: &PullResponse, now_ms: u64) -> Result<(), ReplicaError>;
}
