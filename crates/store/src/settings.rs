//! Per-organization settings stored as JSON values, changeable without a rebuild. The keys in
//! [`crate::SYNCED_SETTINGS`] sync between the organization's desktops (last writer wins per key); their values are
//! checked by `pactwise_rules::settings::check_synced_setting` on every path: a local write (refused with the
//! reason), a value that arrives by sync (`SyncApply::setting`: refused, logged, the old value kept) and a read (a
//! bad stored value, written before the check existed, reads as unset and is logged, so the defaults apply and
//! writing a good value repairs it). Who may write a synced setting is the role table's
//! (`pactwise_rules::roles`).

use crate::sync_log::{ChangePayload, SYNCED_SETTINGS, emit_in};
use crate::{OrgScope, Store, StoreError};
use pactwise_rules::{roles, settings};
use rusqlite::{OptionalExtension, params};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

pub struct Settings<'s> {
    store: &'s Store,
}

impl<'s> Settings<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Settings { store }
    }

    /// The setting's value, or None when it is not set. A synced setting whose stored value fails its check (or
    /// does not fit `T`) reads as None, with a warning in the log, so a bad value never blocks its repair.
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
        let Some(raw) = raw else { return Ok(None) };
        if SYNCED_SETTINGS.contains(&key) {
            let checked = serde_json::from_str::<Value>(&raw)
                .map_err(|e| e.to_string())
                .and_then(|v| settings::check_synced_setting(key, &v).map(|()| v))
                .and_then(|v| serde_json::from_value::<T>(v).map_err(|e| e.to_string()));
            return match checked {
                Ok(value) => Ok(Some(value)),
                Err(why) => {
                    tracing::warn!(org = %scope.org(), key, "a stored setting is not valid and is ignored until it is set again: {why}");
                    Ok(None)
                }
            };
        }
        serde_json::from_str(&raw).map(Some).map_err(|e| StoreError::Corrupt(format!("setting {key}: {e}")))
    }

    /// Writes a setting. A synced setting needs a role the role table allows and a value that passes its check;
    /// it is queued for sync in the same transaction.
    pub fn set<T: Serialize>(&self, scope: &OrgScope, key: &str, value: &T) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        self.set_in(&tx, scope, key, value)?;
        tx.commit()?;
        Ok(())
    }

    /// [`Settings::set`] inside a caller's transaction, for a change that writes more than the setting.
    pub(crate) fn set_in<T: Serialize>(
        &self,
        tx: &rusqlite::Transaction<'_>,
        scope: &OrgScope,
        key: &str,
        value: &T,
    ) -> Result<(), StoreError> {
        let value = serde_json::to_value(value).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let synced = SYNCED_SETTINGS.contains(&key);
        if synced {
            roles::check(scope.role(), roles::SharedChange::Setting(key))
                .map_err(|_| StoreError::Forbidden { role: scope.role() })?;
            settings::check_synced_setting(key, &value).map_err(StoreError::Invalid)?;
        }
        tx.execute(
            "INSERT INTO settings (org_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (org_id, key) DO UPDATE SET value = excluded.value",
            params![scope.org().to_string(), key, value.to_string()],
        )?;
        if synced {
            // `pactwise_sync::SyncedModel::Setting`: one field, the whole value, last writer wins.
            emit_in(self.store, tx, scope, "setting", key, |_| {
                Ok(ChangePayload::Fields([("value".to_string(), value.clone())].into()))
            })?;
        }
        Ok(())
    }
}
