//! Per-organization settings stored as JSON values, changeable without a rebuild.

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
        let json = serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.store.conn().execute(
            "INSERT INTO settings (org_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (org_id, key) DO UPDATE SET value = excluded.value",
            params![scope.org().to_string(), key, json],
        )?;
        Ok(())
    }
}
