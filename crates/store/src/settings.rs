//! Per-organization settings stored as JSON values, changeable without a rebuild. The keys in
//! [`crate::SYNCED_SETTINGS`] sync between the organization's desktops (last writer wins per key).

use crate::sync_log::{ChangePayload, SYNCED_SETTINGS, emit_in};
use crate::{OrgScope, Store, StoreError};
use rusqlite::{OptionalExtension, params};
use serde::{Serialize, de::DeserializeOwned};

pub struct Settings<'s> {
    store: &'s Store,
}

impl<'s> Settings<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Settings { store }
    }

    pub fn get<T: DeserializeOwned>(&self, scope: &OrgScope, key: &str) -> Result<Option<T>, StoreError> {
        let raw: Option<String> = self
            .store
            .conn()
            .query_row(
                "SELECT value FROM settings WHERE org_id = ?1 AND key = ?2",
                params![scope.org().to_string(), key],
                |r| r.get(0),
            )
            .optional()?;
        raw.map(|v| serde_json::from_str(&v).map_err(|e| StoreError::Corrupt(format!("setting {key}: {e}"))))
            .transpose()
    }

    pub fn set<T: Serialize>(&self, scope: &OrgScope, key: &str, value: &T) -> Result<(), StoreError> {
        let value = serde_json::to_value(value).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let tx = self.store.conn().unchecked_transaction()?;
        tx.execute(
            "INSERT INTO settings (org_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (org_id, key) DO UPDATE SET value = excluded.value",
            params![scope.org().to_string(), key, value.to_string()],
        )?;
        if SYNCED_SETTINGS.contains(&key) {
            // `pactwise_sync::SyncedModel::Setting`: one field, the whole value, last writer wins.
            emit_in(self.store, &tx, scope, "setting", key, |_| {
                Ok(ChangePayload::Fields([("value".to_string(), value.clone())].into()))
            })?;
        }
        tx.commit()?;
        Ok(())
    }
}
