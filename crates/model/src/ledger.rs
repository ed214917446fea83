//! The usage ledger: every model request becomes a priced `UsageRecord`. Records are batched in memory and written
//! to the sink (the store's `usage_ledger` table) when enough have gathered, when enough time has passed, on
//! [`LedgerWriter::flush`] and when the writer is dropped, so a clean exit loses none. A failed write keeps the batch
//! for the next flush. So that a crash between a call and its batch's write loses none either, each record is first
//! kept by the sink's journal ([`UsageLedger::journal`]: the desktop appends it to a file of its own) and the journal
//! is forgotten only once the batch holding it is written; the next start writes what a dead process left there,
//! once per record id.

use chrono::{DateTime, Utc};
use pactwise_domain::usage::UsageRecord;
use pactwise_domain::{Clock, OrgId, UserId};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where ledger batches go. The store implements it with one transaction per batch.
pub trait UsageLedger: Send + Sync {
    /// Writes a batch (a record already written, same id, is kept once).
    fn record_batch(&self, records: &[UsageRecord]) -> Result<(), LedgerError>;

    /// Keeps one record durably before it waits for its batch. The default keeps nothing (tests, memory sinks).
    fn journal(&self, _record: &UsageRecord) -> Result<(), LedgerError> {
        Ok(())
    }

    /// Every journaled record is in the ledger now: the journal may forget them.
    fn journal_written(&self) -> Result<(), LedgerError> {
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the usage ledger could not be written: {0}")]
pub struct LedgerError(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerPolicy {
    /// Flush as soon as this many records are waiting.
    pub flush_at_count: usize,
    /// Flush when the oldest unflushed record is this old (checked on each record and by [`LedgerWriter::flush_if_due`]).
    pub flush_every: Duration,
}

impl Default for LedgerPolicy {
    fn default() -> Self {
        Self { flush_at_count: 32, flush_every: Duration::from_secs(5) }
    }
}

struct Pending {
    records: Vec<UsageRecord>,
    last_flush: DateTime<Utc>,
}

/// Batches records for a [`UsageLedger`].
pub struct LedgerWriter {
    sink: Arc<dyn UsageLedger>,
    policy: LedgerPolicy,
    clock: Arc<dyn Clock>,
    pending: Mutex<Pending>,
}

impl LedgerWriter {
    pub fn new(sink: Arc<dyn UsageLedger>, policy: LedgerPolicy, clock: Arc<dyn Clock>) -> Self {
        let last_flush = clock.now();
        Self { sink, policy, clock, pending: Mutex::new(Pending { records: Vec::new(), last_flush }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Add a record: journaled at once, then batched; flushes when the batch is full or due (or at once when the
    /// journal could not keep it).
    pub fn record(&self, record: UsageRecord) {
        let mut pending = self.lock();
        let journaled = match self.sink.journal(&record) {
            Ok(()) => true,
            Err(error) => {
                tracing::error!(%error, "usage record not journaled; writing its batch now");
                false
            }
        };
        pending.records.push(record);
        if !journaled || pending.records.len() >= self.policy.flush_at_count || self.due(&pending) {
            self.flush_locked(&mut pending).ok();
        }
    }

    fn due(&self, pending: &Pending) -> bool {
        let waited = (self.clock.now() - pending.last_flush).to_std().unwrap_or(Duration::ZERO);
        !pending.records.is_empty() && waited >= self.policy.flush_every
    }

    /// Flush if the time limit has passed; a background task calls this periodically.
    pub fn flush_if_due(&self) -> Result<(), LedgerError> {
        let mut pending = self.lock();
        if self.due(&pending) { self.flush_locked(&mut pending) } else { Ok(()) }
    }

    /// Write everything waiting now.
    pub fn flush(&self) -> Result<(), LedgerError> {
        let mut pending = self.lock();
        self.flush_locked(&mut pending)
    }

    fn flush_locked(&self, pending: &mut Pending) -> Result<(), LedgerError> {
        if pending.records.is_empty() {
            pending.last_flush = self.clock.now();
            return Ok(());
        }
        match self.sink.record_batch(&pending.records) {
            Ok(()) => {
                tracing::debug!(records = pending.records.len(), "usage ledger batch written");
                if let Err(error) = self.sink.journal_written() {
                    // Harmless: a replay of the journal keeps each record once.
                    tracing::warn!(%error, "the usage journal could not be cleared after its batch was written");
                }
                pending.records.clear();
                pending.last_flush = self.clock.now();
                Ok(())
            }
            Err(error) => {
                tracing::error!(records = pending.records.len(), %error, "usage ledger batch kept for the next flush");
                Err(error)
            }
        }
    }

    /// Records not yet written.
    pub fn pending_len(&self) -> usize {
        self.lock().records.len()
    }

    /// The cost of unwritten records of this organization (and user, if given) since `since`; budget checks add it
    /// to what the store knows so spending between flushes counts too.
    pub fn pending_cost_micros(&self, org: OrgId, user: Option<UserId>, since: DateTime<Utc>) -> i64 {
        self.lock()
            .records
            .iter()
            .filter(|r| r.org == org && r.at >= since && (user.is_none() || r.user == user))
            .map(|r| r.cost_micros)
            .sum()
    }
}

impl Drop for LedgerWriter {
    fn drop(&mut self) {
        let mut pending = self.lock();
        let waiting = pending.records.len();
        if waiting > 0 && self.flush_locked(&mut pending).is_err() {
            tracing::error!(records = waiting, "usage ledger records could not be written at shutdown");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::InMemoryUsage;
    use chrono::TimeZone;
    use pactwise_domain::FixedClock;
    use pactwise_domain::usage::{TokenUsage, UsageOutcome};

    fn record(org: OrgId, at: DateTime<Utc>, cost: i64) -> UsageRecord {
        UsageRecord {
            id: uuid::Uuid::now_v7(),
            org,
            user: None,
            purpose: "test".into(),
            model: "claude-haiku-5-5".into(),
            tokens: TokenUsage::default(),
            cost_micros: cost,
            latency_ms: 0,
            outcome: UsageOutcome::Ok,
            at,
        }
    }

    fn setup(count: usize, secs: u64) -> (Arc<InMemoryUsage>, Arc<FixedClock>, LedgerWriter) {
        let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()));
        let sink = Arc::new(InMemoryUsage::new());
        let writer = LedgerWriter::new(
            sink.clone(),
            LedgerPolicy { flush_at_count: count, flush_every: Duration::from_secs(secs) },
            clock.clone(),
        );
        (sink, clock, writer)
    }

    #[test]
    fn a_full_batch_is_written_in_one_call() {
        let (sink, clock, writer) = setup(3, 60);
        let org = OrgId::new();
        writer.record(record(org, clock.now(), 1));
        writer.record(record(org, clock.now(), 2));
        assert_eq!(sink.records().len(), 0);
        writer.record(record(org, clock.now(), 3));
        assert_eq!(sink.records().len(), 3);
        assert_eq!(sink.batch_sizes(), vec![3]);
        assert_eq!(writer.pending_len(), 0);
    }

    #[test]
    fn waiting_records_are_written_once_the_interval_has_passed() {
        let (sink, clock, writer) = setup(100, 5);
        let org = OrgId::new();
        writer.record(record(org, clock.now(), 1));
        writer.flush_if_due().unwrap();
        assert_eq!(sink.records().len(), 0);
        clock.advance(chrono::Duration::seconds(5));
        writer.flush_if_due().unwrap();
        assert_eq!(sink.records().len(), 1);
    }

    #[test]
    fn dropping_the_writer_writes_what_is_waiting() {
        let (sink, clock, writer) = setup(100, 60);
        let org = OrgId::new();
        writer.record(record(org, clock.now(), 5));
        writer.record(record(org, clock.now(), 6));
        drop(writer);
        assert_eq!(sink.records().iter().map(|r| r.cost_micros).sum::<i64>(), 11);
    }

    #[test]
    fn a_failed_write_keeps_the_batch_for_the_next_flush() {
        let (sink, clock, writer) = setup(100, 60);
        let org = OrgId::new();
        writer.record(record(org, clock.now(), 5));
        sink.fail_writes(true);
        assert!(writer.flush().is_err());
        assert_eq!(writer.pending_len(), 1);
        sink.fail_writes(false);
        writer.flush().unwrap();
        assert_eq!(sink.records().len(), 1);
        assert_eq!(writer.pending_len(), 0);
    }

    /// A sink that says, for every step, what it held: the journal and the written ledger.
    #[derive(Default)]
    struct JournalingSink {
        journal: Mutex<Vec<UsageRecord>>,
        written: Mutex<Vec<UsageRecord>>,
    }

    impl UsageLedger for JournalingSink {
        fn record_batch(&self, records: &[UsageRecord]) -> Result<(), LedgerError> {
            self.written.lock().unwrap().extend_from_slice(records);
            Ok(())
        }
        fn journal(&self, record: &UsageRecord) -> Result<(), LedgerError> {
            self.journal.lock().unwrap().push(record.clone());
            Ok(())
        }
        fn journal_written(&self) -> Result<(), LedgerError> {
            self.journal.lock().unwrap().clear();
            Ok(())
        }
    }

    #[test]
    fn every_priced_call_is_journaled_before_it_waits_and_forgotten_only_once_its_batch_is_written() {
        let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()));
        let sink = Arc::new(JournalingSink::default());
        let policy = LedgerPolicy { flush_at_count: 3, flush_every: Duration::from_secs(60) };
        let writer = LedgerWriter::new(sink.clone(), policy, clock.clone());
        let org = OrgId::new();
        // The batch boundary: two calls wait in memory, unwritten. Each is already in the journal, so a crash here
        // (the process gone, the batch never written) leaves both where the next start finds them.
        writer.record(record(org, clock.now(), 1));
        writer.record(record(org, clock.now(), 2));
        assert_eq!(sink.written.lock().unwrap().len(), 0);
        assert_eq!(sink.journal.lock().unwrap().iter().map(|r| r.cost_micros).collect::<Vec<_>>(), [1, 2]);
        // The third fills the batch: written, and only then forgotten by the journal.
        writer.record(record(org, clock.now(), 3));
        assert_eq!(sink.written.lock().unwrap().len(), 3);
        assert!(sink.journal.lock().unwrap().is_empty());
    }

    #[test]
    fn pending_cost_counts_only_the_organization_user_and_period_asked_for() {
        let (_sink, clock, writer) = setup(100, 60);
        let org = OrgId::new();
        let user = UserId::new();
        let start = clock.now();
        writer.record(UsageRecord { user: Some(user), ..record(org, start, 7) });
        writer.record(record(org, start, 3));
        writer.record(record(OrgId::new(), start, 100));
        writer.record(record(org, start - chrono::Duration::days(40), 1000));
        assert_eq!(writer.pending_cost_micros(org, None, start - chrono::Duration::days(1)), 10);
        assert_eq!(writer.pending_cost_micros(org, Some(user), start - chrono::Duration::days(1)), 7);
    }
}
