//! The embedded SQLite store. Owns the database file and the data directory's layout: connection pragmas (WAL,
//! foreign keys, busy timeout), embedded migrations, sessions and the tenant scope (`OrgScope`, which only a valid
//! session can produce), one repository module per table group, the append-only audit log, the
//! content-addressed blob store, and what sync keeps on the desktop (outbox, cursor and clocks; local writes of
//! synced records queue their change in the same transaction through an installed [`ChangeEncoder`]; remote
//! changes apply through [`SyncApply`]). The API is synchronous; async callers go through [`Db`], a dedicated
//! thread.

mod approvals;
mod assistant_history;
mod audit;
mod blob_owners;
mod blobs;
mod contract_sync;
mod contracts;
mod data_dir;
mod db;
mod documents;
mod error;
pub mod members;
mod memories;
mod migrations;
mod pages;
mod passage_vectors;
mod passage_words;
mod passages;
mod platform;
mod platform_credential;
pub mod prep;
mod prep_sync;
mod reviews;
mod runs;
mod scope;
mod sessions;
mod settings;
mod shared_runs;
mod sql;
mod sync_log;
mod sync_remote;
mod tasks;
mod time;
mod usage;
mod usage_journal;
mod vendor_sync;
mod vendors;
mod watchdog;

pub use approvals::{ApprovalRecord, Approvals, DecisionInput, Member, Notification, escalation_notice};
pub use assistant_history::{AssistantHistory, HISTORY_PAGE_MAX, HistoryCitation, HistoryEntry};
pub use audit::{AUDIT_PAGE_MAX, Audit, AuditEntry, AuditFilter, AuditRow};
pub use blob_owners::BlobOwners;
pub use blobs::{BlobStore, PutError, StoredBlob};
pub use contract_sync::{CONTRACT_FIELDS, CONTRACT_MODEL, check_contract_fields};
pub use contracts::{
    ContractDateRow, ContractFacets, ContractFilter, ContractListPage, ContractListRow, ContractOutcome, ContractSort,
    Contracts, FacetCount, MAX_PAGE as CONTRACTS_MAX_PAGE, Reminder,
};
pub use data_dir::DataDir;
pub use db::Db;
pub use documents::{BroughtOver, Documents, NewDocument};
pub use error::StoreError;
pub use memories::{
    MAX_PER_TIER, MAX_TEXT as MEMORY_MAX_TEXT, Memories, MemoryRecord, MemoryTier, NewMemory, SHORT_TERM,
};
pub use migrations::SCHEMA_VERSION;
pub use pactwise_domain::ImportOutcome;
pub use pages::{PageTexts, Pages};
pub use passage_vectors::{
    PassageRange, PassageToEmbed, StoredPrecedentVector, StoredVector, VectorProgress, VectorStamp,
};
pub use passage_words::{PassageTokenizer, PassageWords};
pub use passages::{
    ContractOverview, NewAnswer, NewPassage, NewPrecedent, PassageHit, Passages, PrecedentHit, StoredCitation,
};
pub use platform::{Platform, SessionOrg};
pub use platform_credential::{PlatformCredential, PlatformWorker};
pub use prep::Prep;
pub use prep_sync::{
    MAX_PACKAGE_BYTES, PREP_PACKAGE_FIELDS, PREP_PACKAGE_MODEL, RemoteLease, check_prep_package_fields,
};
pub use reviews::{
    ContractRow, Correction, FinalVendor, Finalization, NewCorrection, QueueRow, Reviews, StageRow, Vendor,
    VendorDecision, normalized_vendor_name,
};
pub use runs::{
    Applied, CancelReport, Checkpoint, NewApproval, NewChildRun, NewEvent, NewHandoff, NewRun, RunEvent, RunRecord,
    RunWrite, Runs, StepCommit,
};
pub use scope::OrgScope;
pub use sessions::Sessions;
pub use settings::Settings;
pub use shared_runs::{
    ApprovalRequestRow, RequestOutcome, RequestStatus, SharedApprovalRow, SharedReportRow, SharedRunRow, SharedRuns,
    SharedStepState, published_roles,
};
pub use sync_log::{
    ApprovalRequestPayload, ChangeEncoder, ChangePayload, EncodedChange, LocalChange, NewOutboxEntry, OutboxEntry,
    RefusedChange, SYNC_ACCOUNT_SETTING, SYNCED_SETTINGS, ServiceRefusal, SyncApply, SyncLog, SyncState,
};
pub use sync_remote::{
    CorrectionApplied, DOCUMENT_FIELDS, DocumentApplied, Received, ReceivedFile, RemoteCorrection, SyncBinding,
    WantedDocument, check_document_fields,
};
pub use tasks::{
    AgentNotice, Backlog, FailingAgent, HealthThresholds, NewNotice, NewTask, QUEUE_HEALTH_SETTING, QueueHealth,
    TaskDone, TaskRecord, Tasks,
};
pub use usage::{SpendRow, Usage, spend_visible_to};
pub use usage_journal::UsageJournal;
pub use vendor_sync::{VENDOR_FIELDS, VENDOR_MODEL, check_vendor_fields, vendor_id_for};
pub use vendors::{
    MergeOutcome, NewVendor, OnboardedVendor, VendorDocument, VendorEdit, VendorListRow, VendorRecord, Vendors,
};
pub use watchdog::{SweepPolicy, SweepReport};

use pactwise_domain::Clock;
use rusqlite::Connection;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// See [`Store::write_mark`]: other connections' commits (SQLite's data version) and the rows this store's
/// connection changed (a rolled-back change counts too, so a mark may change with nothing new to read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteMark {
    others: i64,
    own: u64,
}

/// An open database with migrations applied.
pub struct Store {
    conn: Connection,
    clock: Arc<dyn Clock>,
    /// Turns local changes of synced records into outbox entries (installed by `api`, which knows the wire format).
    encoder: Option<Arc<dyn ChangeEncoder>>,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, sets the pragmas and applies pending migrations.
    /// Refuses a database written by a newer version of Pactwise.
    pub fn open(path: &Path, clock: Arc<dyn Clock>) -> Result<Store, StoreError> {
        let conn = Connection::open(path)?;
        Self::prepare(conn, clock, true)
    }

    /// An in-memory database (tests and dry runs).
    pub fn open_in_memory(clock: Arc<dyn Clock>) -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        Self::prepare(conn, clock, false)
    }

    fn prepare(mut conn: Connection, clock: Arc<dyn Clock>, wal: bool) -> Result<Store, StoreError> {
        conn.busy_timeout(Duration::from_secs(5))?;
        // The engine runs a few dozen distinct statements per super-step; keep them all prepared.
        conn.set_prepared_statement_cache_capacity(128);
        if wal {
            let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(mode, "database did not switch to WAL");
            }
        }
        // A page cache of up to 32 MiB (SQLite's default is 2 MiB): the engine's group commits touch the same run,
        // checkpoint and event pages again and again; with the small default they were evicted, freed and read back
        // between commits.
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -32768;")?;
        migrations::migrate(&mut conn)?;
        contracts::refresh_derived(&mut conn)?;
        vendors::refresh_keys(&mut conn)?;
        Ok(Store { conn, clock, encoder: None })
    }

    /// Installs the encoder of synced changes: from now on, writes to synced records of organizations that are
    /// signed in to sync queue their change in the same transaction.
    pub fn set_change_encoder(&mut self, encoder: Arc<dyn ChangeEncoder>) {
        self.encoder = Some(encoder);
    }

    pub(crate) fn change_encoder(&self) -> Option<&Arc<dyn ChangeEncoder>> {
        self.encoder.as_ref()
    }

    /// Gives back the memory the connection holds for speed (its page cache, up to 32 MiB, and its prepared
    /// statements) once a burst of work is over; both fill again on use.
    pub fn release_memory(&self) -> Result<(), StoreError> {
        self.conn.execute_batch("PRAGMA shrink_memory;")?;
        self.conn.flush_prepared_statement_cache();
        Ok(())
    }

    /// A mark that changes whenever something is written to the database, by this store or by another process:
    /// equal marks mean nothing was written in between (a cache of what the database holds is still true).
    pub fn write_mark(&self) -> Result<WriteMark, StoreError> {
        let others: i64 = self.conn.query_row("PRAGMA data_version", [], |r| r.get(0))?;
        Ok(WriteMark { others, own: self.conn.total_changes() })
    }

    /// Whether a transaction is open on the store's connection (what it reads may still be rolled back).
    pub fn in_transaction(&self) -> bool {
        !self.conn.is_autocommit()
    }

    pub fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    /// Organizations, users, memberships and sign-in: the level above tenants.
    pub fn platform(&self) -> Platform<'_> {
        Platform::new(self)
    }

    pub fn sessions(&self) -> Sessions<'_> {
        Sessions::new(self)
    }

    pub fn documents(&self) -> Documents<'_> {
        Documents::new(self)
    }

    /// Which organization holds which file of the shared blob store.
    pub fn blob_owners(&self) -> BlobOwners<'_> {
        BlobOwners::new(self)
    }

    pub fn audit(&self) -> Audit<'_> {
        Audit::new(self)
    }

    pub fn settings(&self) -> Settings<'_> {
        Settings::new(self)
    }

    /// Extracted pages of documents.
    pub fn pages(&self) -> Pages<'_> {
        Pages::new(self)
    }

    /// Retrieval's tables: the organization's passages and their indexes, the precedent corpus, the assistant's answers.
    pub fn passages(&self) -> Passages<'_> {
        Passages::new(self)
    }

    /// The assistant's earlier answers, per user.
    pub fn assistant_history(&self) -> AssistantHistory<'_> {
        AssistantHistory::new(self)
    }

    pub fn reviews(&self) -> Reviews<'_> {
        Reviews::new(self)
    }
    /// The finalized contracts as the Contracts area lists, filters and searches them.
    /// Vendor records: list, detail, duplicates, merge, status.
    pub fn vendors(&self) -> Vendors<'_> {
        Vendors::new(self)
    }

    pub fn contracts(&self) -> Contracts<'_> {
        Contracts::new(self)
    }

    /// Prep Studio's packages, edit leases, drafting traces and the publish gate.
    pub fn prep(&self) -> Prep<'_> {
        Prep::new(self)
    }

    pub fn usage(&self) -> Usage<'_> {
        Usage::new(self)
    }

    /// Workflow runs, checkpoints, event logs, leases and the watchdog.
    pub fn runs(&self) -> Runs<'_> {
        Runs::new(self)
    }

    /// The members of an organization known here (kept in step with the sync service).
    pub fn members(&self) -> members::Members<'_> {
        members::Members::new(self)
    }

    /// Approval steps of runs and their notifications.
    pub fn approvals(&self) -> Approvals<'_> {
        Approvals::new(self)
    }

    /// The per-organization task queue.
    pub fn tasks(&self) -> Tasks<'_> {
        Tasks::new(self)
    }

    /// The agents' memory of the session's person.
    pub fn memories(&self) -> Memories<'_> {
        Memories::new(self)
    }

    /// Makes every commit wait until it is on disk (`synchronous = FULL`): a committed checkpoint survives power
    /// loss, not only a crash of the process. The engine's benchmark runs this way.
    pub fn set_full_sync(&self) -> Result<(), StoreError> {
        self.conn.execute_batch("PRAGMA synchronous = FULL;")?;
        Ok(())
    }

    /// The value of a connection setting, as text: `journal_mode` or `synchronous` (benchmarks report them).
    pub fn pragma_text(&self, name: &str) -> Result<String, StoreError> {
        if !matches!(name, "journal_mode" | "synchronous") {
            return Err(StoreError::Invalid(format!("unknown setting {name:?}")));
        }
        let value: rusqlite::types::Value = self.conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?;
        Ok(match value {
            rusqlite::types::Value::Integer(i) => i.to_string(),
            rusqlite::types::Value::Text(t) => t,
            other => format!("{other:?}"),
        })
    }

    /// The sync outbox, cursor, HLC state and field clocks (crate `pactwise-sync` drives them).
    /// Runs and approval steps across the organization's desktops, and this desktop's decision requests.
    pub fn shared_runs(&self) -> SharedRuns<'_> {
        SharedRuns { store: self }
    }

    pub fn sync_log(&self) -> SyncLog<'_> {
        SyncLog::new(self)
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        migrations::current_version(&self.conn)
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_write_mark_changes_with_a_write_of_this_store_or_of_another_process_and_not_with_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let store = Store::open(&path, Arc::new(pactwise_domain::SystemClock)).unwrap();
        store.conn().execute_batch("CREATE TABLE t (n INTEGER PRIMARY KEY)").unwrap();
        let before = store.write_mark().unwrap();
        store.conn().query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!(store.write_mark().unwrap(), before, "a read changes nothing");
        store.conn().execute("INSERT INTO t (n) VALUES (1)", []).unwrap();
        let own = store.write_mark().unwrap();
        assert_ne!(own, before, "this store's write");
        let other = Connection::open(&path).unwrap();
        other.execute("DELETE FROM t", []).unwrap();
        assert_ne!(store.write_mark().unwrap(), own, "another connection's commit");
    }

    #[test]
    fn a_store_that_gave_its_memory_back_reads_and_writes_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store.db"), Arc::new(pactwise_domain::SystemClock)).unwrap();
        let conn = store.conn();
        conn.execute_batch("CREATE TABLE t (n INTEGER PRIMARY KEY, text TEXT NOT NULL)").unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        for n in 0..5_000 {
            tx.prepare_cached("INSERT INTO t (n, text) VALUES (?1, ?2)")
                .unwrap()
                .execute((n, "x".repeat(200)))
                .unwrap();
        }
        tx.commit().unwrap();
        let sum = |c: &Connection| {
            c.query_row("SELECT sum(length(text)) + sum(n) FROM t", [], |r| r.get::<_, i64>(0)).unwrap()
        };
        let before = sum(conn);

        store.release_memory().unwrap();
        assert_eq!(sum(conn), before, "the pages are read again");
        conn.prepare_cached("INSERT INTO t (n, text) VALUES (?1, ?2)").unwrap().execute((5_000, "y")).unwrap();
        assert_eq!(sum(conn), before + 5_001);
    }
}
