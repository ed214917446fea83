//! What the desktop keeps for sync, per organization: the outbox of local changes the sync service has not
//! acknowledged, the sync state (this install's HLC node id and last clock reading, the pull cursor), the HLC that
//! last set each synced field, and the remote changes already applied. The store does not interpret changes: they
//! are JSON owned by `pactwise-sync` (a `Change`), and HLCs are compared in their sortable text form.
//!
//! The rules the sync client relies on: an outbox entry is written in the same transaction as the local change
//! ([`emit_in`] is the hook other store modules call inside theirs; it asks the installed [`ChangeEncoder`] for the
//! entry, and does nothing for an organization that is not signed in to sync); a pulled page is applied and the
//! cursor moved in one transaction ([`SyncLog::apply_page`]); the cursor never moves backwards.
//!
//! What syncs from here: documents (last-writer-wins fields; soft delete and restore too), review corrections
//! (append-only events with their audit entry's facts) and the settings in [`SYNCED_SETTINGS`]. Remote changes are
//! applied through [`SyncApply`] without queueing anything back. A remote document waits in
//! `sync_wanted_documents` until its file is here ([`SyncLog::receive_document`]); remote corrections of a document
//! that is not here yet wait in `sync_deferred_corrections` and are applied when it arrives.

use crate::time::{from_sql, to_sql};
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_rules::lww::{self, Hlc};
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::Value;
use std::collections::BTreeMap;

/// The settings that sync between an organization's desktops (last writer wins per key; their values checked by
/// `pactwise_rules::settings`). Others stay local.
pub use pactwise_rules::settings::SYNCED_SETTINGS;

/// The organization's sync account (server URL, organization slug, email, device id; JSON owned by `api`). A
/// setting like any other, but never synced and never a secret: the device token lives in the OS keychain.
pub const SYNC_ACCOUNT_SETTING: &str = "sync.account";

/// What a store module hands over for one local change of a synced record.
#[derive(Debug, Clone, PartialEq)]
pub enum ChangePayload {
    /// Last-writer-wins fields: name to JSON value (`null` clears).
    Fields(BTreeMap<String, Value>),
    /// An append-only event.
    Event(Value),
    /// A decision on an approval step, a request until the sync service stamps it.
    ApprovalRequest(ApprovalRequestPayload),
}

/// What a decision request carries (the wire's `ApprovalRequest` body).
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequestPayload {
    pub approve: bool,
    pub note: String,
    pub eligible_roles: Vec<pactwise_domain::Role>,
    pub choice: Option<String>,
    pub decider_name: Option<String>,
}

/// One local change, with what the encoder needs to stamp it.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalChange<'a> {
    /// The synced model's stable wire name (`document`, `review_correction`, `setting`).
    pub model: &'a str,
    pub record_id: &'a str,
    pub payload: &'a ChangePayload,
    /// This install's HLC node id for the organization, and the clock's last reading (wall ms, counter).
    pub node_id: &'a str,
    pub clock: (u64, u32),
    pub now_ms: u64,
}

/// An encoded change: the outbox entry, its HLC in sortable text form (the clock of each field it sets) and the
/// clock reading after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedChange {
    pub entry: NewOutboxEntry,
    pub hlc: String,
    pub clock: (u64, u32),
}

/// Turns a local change into the sync wire format. The store does not know that format (it does not import
/// `pactwise-sync`); `api` implements this and installs it with [`Store::set_change_encoder`]. `encode` runs inside
/// the change's transaction, which may still roll back.
pub trait ChangeEncoder: Send + Sync {
    fn encode(&self, change: &LocalChange<'_>) -> Result<EncodedChange, String>;
}

/// Queue a change of a synced record inside the transaction that makes it, if the organization is signed in to
/// sync (it has a sync state) and an encoder is installed; otherwise nothing. `payload` is built only when needed.
pub(crate) fn emit_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    model: &str,
    record_id: &str,
    payload: impl FnOnce(&Transaction<'_>) -> Result<ChangePayload, StoreError>,
) -> Result<(), StoreError> {
    emit_returning_id_in(store, tx, scope, model, record_id, payload).map(|_| ())
}

/// [`emit_in`], returning the queued change's id (None when the organization does not sync).
pub(crate) fn emit_returning_id_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    model: &str,
    record_id: &str,
    payload: impl FnOnce(&Transaction<'_>) -> Result<ChangePayload, StoreError>,
) -> Result<Option<String>, StoreError> {
    emit_for_org_in(store, tx, &scope.org().to_string(), model, record_id, || payload(tx))
}

/// [`emit_returning_id_in`] for a change no session makes: a workflow step the platform worker drives for the run's
/// organization (`org`, from the run, never from input). The service stamps the pushing device's user as author.
pub(crate) fn emit_for_org_in(
    store: &Store,
    tx: &rusqlite::Connection,
    org: &str,
    model: &str,
    record_id: &str,
    payload: impl FnOnce() -> Result<ChangePayload, StoreError>,
) -> Result<Option<String>, StoreError> {
    let Some(encoder) = store.change_encoder() else {
        return Ok(None);
    };
    let state: Option<(String, i64, i64)> = tx
        .prepare_cached("SELECT node_id, hlc_wall_ms, hlc_counter FROM sync_state WHERE org_id = ?1")?
        .query_row([org], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((node_id, wall, counter)) = state else {
        return Ok(None);
    };
    let payload = payload()?;
    let now = store.clock().now();
    let change = LocalChange {
        model,
        record_id,
        payload: &payload,
        node_id: &node_id,
        clock: (wall as u64, counter as u32),
        now_ms: u64::try_from(now.timestamp_millis()).unwrap_or(0),
    };
    let encoded = encoder
        .encode(&change)
        .map_err(|message| StoreError::Invalid(format!("this change cannot be synced: {message}")))?;
    let fields: Vec<(&str, &str)> = match &payload {
        ChangePayload::Fields(fields) => fields.keys().map(|k| (k.as_str(), encoded.hlc.as_str())).collect(),
        ChangePayload::Event(_) | ChangePayload::ApprovalRequest(_) => Vec::new(),
    };
    let now = to_sql(now);
    SyncLog::queue_for_org_in(tx, org, &encoded.entry, &fields, &now)?;
    save_clock(tx, org, encoded.clock, &now)?;
    Ok(Some(encoded.entry.change_id))
}

/// Does the organization sync (it has a sync state: signed in now, or before and its changes wait for the next
/// sign-in)? Then its approval decisions are requests to the sync service.
pub(crate) fn org_syncs(tx: &rusqlite::Connection, org: &str) -> Result<bool, StoreError> {
    Ok(tx.prepare_cached("SELECT 1 FROM sync_state WHERE org_id = ?1")?.exists([org])?)
}

pub struct SyncLog<'s> {
    pub(crate) store: &'s Store,
}

/// A change to queue: its id, model and record as plain text, and the whole change as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOutboxEntry {
    pub change_id: String,
    pub model: String,
    pub record_id: String,
    pub change_json: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    pub change_id: String,
    pub change_json: String,
}

/// A local change the sync service refused to store, with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedChange {
    pub change_id: String,
    pub model: String,
    pub record_id: String,
    pub code: String,
    pub message: String,
    pub refused_at: DateTime<Utc>,
}

/// A change the service refused to store, as its answer said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRefusal {
    pub change_id: String,
    pub code: String,
    pub message: String,
}

/// An organization's sync state on this install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncState {
    pub node_id: String,
    pub hlc_wall_ms: u64,
    pub hlc_counter: u32,
    pub cursor: u64,
    /// When a sync round last finished (pushed everything, pulled everything, fetched the files it could).
    pub last_success_at: Option<DateTime<Utc>>,
}

/// The operations a page's application may do inside its transaction (scoped to the caller's organization).
pub struct SyncApply<'t> {
    pub(crate) tx: &'t Transaction<'t>,
    pub(crate) org: String,
    pub(crate) now: String,
}

impl SyncApply<'_> {
    /// Last-writer-wins check for one field: records `hlc` and returns true if it is newer than the HLC that last
    /// set the field (or none did); returns false and changes nothing otherwise.
    pub fn take_field(&self, model: &str, record_id: &str, field: &str, hlc: &str) -> Result<bool, StoreError> {
        take_field(self.tx, &self.org, model, record_id, field, hlc)
    }

    /// Remember that a remote change was applied; false if it had been already (apply it once only).
    pub fn mark_applied(&self, change_id: &str, seq: u64) -> Result<bool, StoreError> {
        let n = self.tx.execute(
            "INSERT INTO sync_applied (org_id, change_id, seq) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
            params![self.org, change_id, seq as i64],
        )?;
        Ok(n == 1)
    }
}

/// The stamp of the change that last set a synced field here (None: never set).
pub(crate) fn field_clock(
    tx: &Transaction<'_>,
    org: &str,
    model: &str,
    record_id: &str,
    field: &str,
) -> Result<Option<Hlc>, StoreError> {
    let text: Option<String> = tx
        .prepare_cached(
            "SELECT hlc FROM sync_field_clocks WHERE org_id = ?1 AND model = ?2 AND record_id = ?3 AND field = ?4",
        )?
        .query_row(params![org, model, record_id, field], |r| r.get(0))
        .optional()?;
    text.map(|t| {
        Hlc::from_sortable(&t)
            .ok_or_else(|| StoreError::Corrupt(format!("a stored sync timestamp is unreadable: {t:?}")))
    })
    .transpose()
}

/// Records the stamp that set a field, for a field whose merge is not plain last-writer-wins (the caller decided
/// with its own rule, e.g. `pactwise_rules::vendor_link::wins`).
pub(crate) fn set_field_clock(
    tx: &Transaction<'_>,
    org: &str,
    model: &str,
    record_id: &str,
    field: &str,
    hlc: &Hlc,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO sync_field_clocks (org_id, model, record_id, field, hlc) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (org_id, model, record_id, field) DO UPDATE SET hlc = excluded.hlc",
    )?
    .execute(params![org, model, record_id, field, hlc.to_sortable()])?;
    Ok(())
}

/// The store's last-writer-wins upsert of one field's clock: `pactwise_rules::lww::wins` decides, the same rule the
/// sync client's replicas merge with.
fn take_field(
    tx: &rusqlite::Connection,
    org: &str,
    model: &str,
    record_id: &str,
    field: &str,
    hlc: &str,
) -> Result<bool, StoreError> {
    let incoming =
        Hlc::from_sortable(hlc).ok_or_else(|| StoreError::Invalid(format!("{hlc:?} is not a sync timestamp")))?;
    let current: Option<String> = tx
        .prepare_cached(
            "SELECT hlc FROM sync_field_clocks WHERE org_id = ?1 AND model = ?2 AND record_id = ?3 AND field = ?4",
        )?
        .query_row(params![org, model, record_id, field], |r| r.get(0))
        .optional()?;
    let current = match current {
        Some(text) => Some(
            Hlc::from_sortable(&text)
                .ok_or_else(|| StoreError::Corrupt(format!("a stored sync timestamp is unreadable: {text:?}")))?,
        ),
        None => None,
    };
    if !lww::wins(&incoming, current.as_ref()) {
        return Ok(false);
    }
    tx.prepare_cached(
        "INSERT INTO sync_field_clocks (org_id, model, record_id, field, hlc) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (org_id, model, record_id, field) DO UPDATE SET hlc = excluded.hlc",
    )?
    .execute(params![org, model, record_id, field, incoming.to_sortable()])?;
    Ok(true)
}

impl<'s> SyncLog<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Self { store }
    }

    /// The hook for store modules: queue a change inside the transaction that makes it, and record the HLC of
    /// each field it sets (`fields`: field names with the change's HLC in sortable form).
    pub(crate) fn queue_in(
        tx: &Transaction<'_>,
        scope: &OrgScope,
        entry: &NewOutboxEntry,
        fields: &[(&str, &str)],
        now: &str,
    ) -> Result<(), StoreError> {
        Self::queue_for_org_in(tx, &scope.org().to_string(), entry, fields, now)
    }

    fn queue_for_org_in(
        tx: &rusqlite::Connection,
        org: &str,
        entry: &NewOutboxEntry,
        fields: &[(&str, &str)],
        now: &str,
    ) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO sync_outbox (org_id, change_id, model, record_id, change_json, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![org, entry.change_id, entry.model, entry.record_id, entry.change_json, now],
        )?;
        for (field, hlc) in fields {
            take_field(tx, org, &entry.model, &entry.record_id, field, hlc)?;
        }
        Ok(())
    }

    /// Queue a change on its own (for changes whose record lives outside the store's modules), with the HLC state
    /// that stamped it, in one transaction.
    pub fn queue(
        &self,
        scope: &OrgScope,
        entry: &NewOutboxEntry,
        fields: &[(&str, &str)],
        clock: (u64, u32),
    ) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        let now = to_sql(self.store.clock().now());
        Self::queue_in(&tx, scope, entry, fields, &now)?;
        save_clock(&tx, &scope.org().to_string(), clock, &now)?;
        tx.commit()?;
        Ok(())
    }

    /// The oldest `limit` unacknowledged changes of the organization, oldest first.
    pub fn outbox(&self, scope: &OrgScope, limit: usize) -> Result<Vec<OutboxEntry>, StoreError> {
        let mut stmt = self
            .store
            .conn()
            .prepare_cached("SELECT change_id, change_json FROM sync_outbox WHERE org_id = ?1 ORDER BY id LIMIT ?2")?;
        let rows = stmt.query_map(params![scope.org().to_string(), limit as i64], |r| {
            Ok(OutboxEntry { change_id: r.get(0)?, change_json: r.get(1)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn pending(&self, scope: &OrgScope) -> Result<u64, StoreError> {
        let n: i64 = self.store.conn().query_row(
            "SELECT COUNT(*) FROM sync_outbox WHERE org_id = ?1",
            [scope.org().to_string()],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// The service stored these changes: remove them from the outbox (one transaction).
    pub fn acknowledge(&self, scope: &OrgScope, change_ids: &[String]) -> Result<(), StoreError> {
        self.settle(scope, change_ids, &[])
    }

    /// The service answered a push: the changes it stored leave the outbox; the ones it refused leave it too and
    /// are kept whole with the service's reason (`sync_refused_changes`, shown in the sync status). One
    /// transaction.
    pub fn settle(&self, scope: &OrgScope, stored: &[String], refused: &[ServiceRefusal]) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        let org = scope.org().to_string();
        let now = to_sql(self.store.clock().now());
        {
            let mut keep = tx.prepare_cached(
                "INSERT OR REPLACE INTO sync_refused_changes
                     (org_id, change_id, model, record_id, change_json, code, message, refused_at)
                 SELECT org_id, change_id, model, record_id, change_json, ?3, ?4, ?5 FROM sync_outbox
                 WHERE org_id = ?1 AND change_id = ?2",
            )?;
            for r in refused {
                keep.execute(params![org, r.change_id, r.code, r.message, now])?;
            }
            let mut stmt = tx.prepare_cached("DELETE FROM sync_outbox WHERE org_id = ?1 AND change_id = ?2")?;
            for id in stored.iter().chain(refused.iter().map(|r| &r.change_id)) {
                stmt.execute(params![org, id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The organization's local changes the service refused, newest first (at most `limit`), and how many there
    /// are in all.
    pub fn refused(&self, scope: &OrgScope, limit: usize) -> Result<(Vec<RefusedChange>, u64), StoreError> {
        let org = scope.org().to_string();
        let conn = self.store.conn();
        let total: i64 =
            conn.query_row("SELECT COUNT(*) FROM sync_refused_changes WHERE org_id = ?1", [&org], |r| r.get(0))?;
        let mut stmt = conn.prepare_cached(
            "SELECT change_id, model, record_id, code, message, refused_at FROM sync_refused_changes
             WHERE org_id = ?1 ORDER BY refused_at DESC, change_id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![org, limit as i64], |r| {
            Ok(RefusedChange {
                change_id: r.get(0)?,
                model: r.get(1)?,
                record_id: r.get(2)?,
                code: r.get(3)?,
                message: r.get(4)?,
                refused_at: from_sql(&r.get::<_, String>(5)?)?,
            })
        })?;
        Ok((rows.collect::<Result<_, _>>()?, total as u64))
    }

    /// Does the scope's organization sync (signed in now, or before)? Then its packages' edit leases are the
    /// sync service's.
    pub fn org_syncs(&self, scope: &OrgScope) -> Result<bool, StoreError> {
        org_syncs(self.store.conn(), &scope.org().to_string())
    }

    /// The organization's sync state; the first call creates it with `new_node_id` (this install's HLC node).
    pub fn state(&self, scope: &OrgScope, new_node_id: impl FnOnce() -> String) -> Result<SyncState, StoreError> {
        let org = scope.org().to_string();
        let read = |conn: &rusqlite::Connection| {
            conn.query_row(
                "SELECT node_id, hlc_wall_ms, hlc_counter, cursor, last_success_at FROM sync_state WHERE org_id = ?1",
                [&org],
                |r| {
                    Ok(SyncState {
                        node_id: r.get(0)?,
                        hlc_wall_ms: r.get::<_, i64>(1)? as u64,
                        hlc_counter: r.get::<_, i64>(2)? as u32,
                        cursor: r.get::<_, i64>(3)? as u64,
                        last_success_at: r.get::<_, Option<String>>(4)?.as_deref().map(from_sql).transpose()?,
                    })
                },
            )
            .optional()
        };
        if let Some(state) = read(self.store.conn())? {
            return Ok(state);
        }
        self.store.conn().execute(
            "INSERT INTO sync_state (org_id, node_id, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
            params![org, new_node_id(), to_sql(self.store.clock().now())],
        )?;
        read(self.store.conn())?.ok_or(StoreError::NotFound)
    }

    /// Apply a pulled page: `apply` runs inside one transaction with the cursor update; if it fails, nothing of
    /// the page is kept. The cursor only moves forward; the HLC reading after the page is saved with it.
    pub fn apply_page(
        &self,
        scope: &OrgScope,
        next_cursor: u64,
        clock: (u64, u32),
        apply: impl FnOnce(&SyncApply<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        let org = scope.org().to_string();
        let now = to_sql(self.store.clock().now());
        apply(&SyncApply { tx: &tx, org: org.clone(), now: now.clone() })?;
        let n = tx.execute(
            "UPDATE sync_state SET cursor = MAX(cursor, ?2), updated_at = ?3 WHERE org_id = ?1",
            params![org, next_cursor as i64, now],
        )?;
        if n == 0 {
            return Err(StoreError::NotFound);
        }
        save_clock(&tx, &scope.org().to_string(), clock, &now)?;
        tx.commit()?;
        Ok(())
    }
}

pub(crate) fn save_clock(
    tx: &rusqlite::Connection,
    org: &str,
    (wall, counter): (u64, u32),
    now: &str,
) -> Result<(), StoreError> {
    // Never backwards: a restart must not issue an earlier timestamp.
    tx.execute(
        "UPDATE sync_state SET hlc_wall_ms = ?2, hlc_counter = ?3, updated_at = ?4
         WHERE org_id = ?1 AND (hlc_wall_ms < ?2 OR (hlc_wall_ms = ?2 AND hlc_counter < ?3))",
        params![org, wall as i64, i64::from(counter), now],
    )?;
    Ok(())
}
