//! The store's SQL helpers shared by its modules: reading typed text columns, write transactions that take the
//! lock at once, and cached statements inside a transaction. No module's tables live here.

use crate::{Store, StoreError};
use rusqlite::{Row, Transaction, TransactionBehavior};

/// Parses a text column into a typed value (ids, statuses), as a conversion failure when it does not parse.
pub(crate) fn parse_text<T: std::str::FromStr>(what: &str, v: &str) -> rusqlite::Result<T> {
    v.parse().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("bad {what} {v:?} in the database").into(),
        )
    })
}

/// Begins a write transaction that takes the write lock at once (no deadlock when two processes upgrade).
pub(crate) fn write_tx(store: &Store) -> Result<Transaction<'_>, StoreError> {
    Ok(Transaction::new_unchecked(store.conn(), TransactionBehavior::Immediate)?)
}

/// Cached statements inside a transaction: the engine runs the same few statements for every super-step.
pub(crate) trait CachedStatements {
    fn prepare_cached_execute<P: rusqlite::Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize>;
    fn prepare_cached_query_row<T, P, F>(&self, sql: &str, params: P, f: F) -> rusqlite::Result<T>
    where
        P: rusqlite::Params,
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>;
}

impl CachedStatements for Transaction<'_> {
    fn prepare_cached_execute<P: rusqlite::Params>(&self, sql: &str, params: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(params)
    }

    fn prepare_cached_query_row<T, P, F>(&self, sql: &str, params: P, f: F) -> rusqlite::Result<T>
    where
        P: rusqlite::Params,
        F: FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    {
        self.prepare_cached(sql)?.query_row(params, f)
    }
}
