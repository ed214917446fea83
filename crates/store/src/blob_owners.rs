//! Which organization holds which file. The content-addressed blob store is shared by every organization of the
//! install (a file is stored once), so a file on disk is reachable for an organization only through an ownership
//! record `(org, hash)`: written in the transaction that records the organization's document (a local import, or a
//! document received by sync after the organization's own service served its file) and checked before any read
//! or reuse. Another organization's file answers like a missing one.

use crate::{OrgScope, Store, StoreError};
use rusqlite::{OptionalExtension, Transaction, params};

pub struct BlobOwners<'s> {
    store: &'s Store,
}

impl<'s> BlobOwners<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        BlobOwners { store }
    }

    /// Does the caller's organization hold the file with this hash?
    pub fn holds(&self, scope: &OrgScope, hash: &str) -> Result<bool, StoreError> {
        holds_in(self.store.conn(), &scope.org().to_string(), hash)
    }
}

pub(crate) fn holds_in(conn: &rusqlite::Connection, org: &str, hash: &str) -> Result<bool, StoreError> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM blob_owners WHERE org_id = ?1 AND hash = ?2")?
        .query_row(params![org, hash], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Records that `org` holds the file (inside the transaction that records its document).
pub(crate) fn record_in(tx: &Transaction<'_>, org: &str, hash: &str, now: &str) -> Result<(), StoreError> {
    tx.prepare_cached("INSERT OR IGNORE INTO blob_owners (org_id, hash, created_at) VALUES (?1, ?2, ?3)")?
        .execute(params![org, hash, now])?;
    Ok(())
}
