//! Vendors across an organization's desktops (synced model `vendor`, record id = the vendor's id): each field in
//! [`VENDOR_FIELDS`] is last-writer-wins by HLC; the normalised name is derived on each desktop, never synced. A
//! vendor's id comes from the organization and its normalised name ([`vendor_id_for`]), so two desktops that create
//! the same vendor (a person by hand, or the pipeline from a counterparty) before they synced create one vendor, and
//! a contract's link names the same vendor everywhere. Contract links travel with the contract (`contract_sync`).
//!
//! A new independent field (aliases, identifiers, status) joins by being added to [`VENDOR_FIELDS`] with its check
//! and the column it is written to.

use crate::audit::append_audit_as;
use crate::sync_log::{ChangePayload, SyncApply, emit_in, org_syncs};
use crate::{OrgScope, Store, StoreError};
use chrono::DateTime;
use pactwise_domain::UserId;
use rusqlite::types::Value as SqlValue;
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The synced model's wire name (`pactwise_sync::SyncedModel::Vendor`).
pub const VENDOR_MODEL: &str = "vendor";

type Check = fn(&Value) -> Result<(), String>;

/// Every synced field of a vendor: its wire name, the `vendors` column it is written to, and the check a remote value
/// must pass before anything is written. Columns hold text (a string, or null); a field whose column holds JSON text
/// needs its own conversion here.
pub const VENDOR_FIELDS: &[(&str, &str, Check)] =
    &[("name", "name", check_name), ("deleted_at", "deleted_at", check_deleted_at)];

fn check_name(v: &Value) -> Result<(), String> {
    match v.as_str() {
        Some(n) if !n.trim().is_empty() && n.len() <= 500 && !n.chars().any(char::is_control) => Ok(()),
        _ => Err("a vendor's name is 1 to 500 bytes of text".into()),
    }
}

fn check_deleted_at(v: &Value) -> Result<(), String> {
    match v {
        Value::Null => Ok(()),
        Value::String(t) if DateTime::parse_from_rfc3339(t).is_ok() => Ok(()),
        _ => Err("a vendor's deletion time is null or an RFC 3339 time".into()),
    }
}

/// Are these well-formed values for a synced vendor's fields? An unknown field is refused too.
pub fn check_vendor_fields(fields: &BTreeMap<String, Value>) -> Result<(), StoreError> {
    if fields.is_empty() {
        return Err(StoreError::Invalid("a vendor change sets no field".into()));
    }
    for (name, value) in fields {
        let Some((_, _, check)) = VENDOR_FIELDS.iter().find(|(n, ..)| n == name) else {
            return Err(StoreError::Invalid(format!("a vendor has no synced field {name:?}")));
        };
        check(value).map_err(|why| StoreError::Invalid(format!("the vendor's {name} was refused: {why}")))?;
    }
    Ok(())
}

/// The id of the organization's vendor with this normalised name: the same on every desktop.
pub fn vendor_id_for(org: &str, normalized_name: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"pactwise-vendor\0")
        .chain_update(org)
        .chain_update(b"\0")
        .chain_update(normalized_name);
    let bytes: [u8; 16] = digest.finalize()[..16].try_into().expect("16 bytes of a SHA-256");
    uuid::Builder::from_custom_bytes(bytes).into_uuid().to_string()
}

/// Queues a vendor's current synced fields for the organization's other desktops (inside the transaction that
/// created, renamed or deleted it), if the organization syncs.
pub(crate) fn vendor_changed_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    vendor: &str,
) -> Result<(), StoreError> {
    if !org_syncs(tx, &scope.org().to_string())? {
        return Ok(());
    }
    let columns: Vec<&str> = VENDOR_FIELDS.iter().map(|(_, column, _)| *column).collect();
    let sql = format!("SELECT {} FROM vendors WHERE id = ?1 AND org_id = ?2", columns.join(", "));
    let values: Vec<SqlValue> = tx.query_row(&sql, params![vendor, scope.org().to_string()], |r| {
        (0..columns.len()).map(|i| r.get::<_, SqlValue>(i)).collect()
    })?;
    let fields: BTreeMap<String, Value> = VENDOR_FIELDS
        .iter()
        .zip(values)
        .map(|((name, ..), value)| {
            let json = match value {
                SqlValue::Text(t) => Value::String(t),
                SqlValue::Integer(n) => json!(n),
                _ => Value::Null,
            };
            ((*name).to_string(), json)
        })
        .collect();
    emit_in(store, tx, scope, VENDOR_MODEL, vendor, |_| Ok(ChangePayload::Fields(fields)))
}

impl SyncApply<'_> {
    /// A vendor change from another desktop: the fields that won last-writer-wins here (`taken`, checked with
    /// [`check_vendor_fields`]) are written; a vendor not here yet is created (it needs its name). A vendor whose
    /// normalised name another vendor of the organization already has here is refused on its own.
    pub fn vendor(&self, id: &str, author: UserId, taken: &BTreeMap<String, Value>) -> Result<(), StoreError> {
        check_vendor_fields(taken)?;
        if uuid::Uuid::parse_str(id).is_err() {
            return Err(StoreError::Invalid("a vendor's id is not an id".into()));
        }
        let owner: Option<String> =
            self.tx.query_row("SELECT org_id FROM vendors WHERE id = ?1", [id], |r| r.get(0)).optional()?;
        match owner {
            Some(org) if org != self.org => {
                return Err(StoreError::Invalid("a vendor with this id belongs to another organization here".into()));
            }
            Some(_) => {}
            None => {
                let Some(name) = taken.get("name").and_then(Value::as_str) else {
                    return Err(StoreError::Invalid("a vendor that is not here arrived without its name".into()));
                };
                let normalized = crate::normalized_vendor_name(name);
                self.check_name_free(id, &normalized)?;
                self.tx.execute(
                    "INSERT INTO vendors (id, org_id, name, normalized_name, created_by, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![id, self.org, name.trim(), normalized, author.to_string(), self.now],
                )?;
                append_audit_as(
                    self.tx,
                    &self.org,
                    Some(&author.to_string()),
                    &self.now,
                    "vendor.create",
                    "vendor",
                    Some(id),
                    &json!({"name": name, "via": "sync"}),
                )?;
            }
        }
        for (name, column, _) in VENDOR_FIELDS {
            let Some(value) = taken.get(*name) else { continue };
            let sql_value = match value {
                Value::Null => SqlValue::Null,
                Value::String(t) => SqlValue::Text(t.trim().to_string()),
                other => SqlValue::Text(other.to_string()),
            };
            if *name == "name" {
                let normalized = crate::normalized_vendor_name(value.as_str().unwrap_or_default());
                self.check_name_free(id, &normalized)?;
                self.tx.execute(
                    "UPDATE vendors SET normalized_name = ?3 WHERE id = ?1 AND org_id = ?2",
                    params![id, self.org, normalized],
                )?;
            }
            self.tx.execute(
                &format!("UPDATE vendors SET {column} = ?3 WHERE id = ?1 AND org_id = ?2"),
                params![id, self.org, sql_value],
            )?;
        }
        Ok(())
    }

    fn check_name_free(&self, id: &str, normalized: &str) -> Result<(), StoreError> {
        let taken = self
            .tx
            .prepare_cached(
                "SELECT 1 FROM vendors WHERE org_id = ?1 AND normalized_name = ?2 AND id <> ?3 AND deleted_at IS NULL",
            )?
            .exists(params![self.org, normalized, id])?;
        if taken {
            return Err(StoreError::Invalid(format!(
                "another vendor of the organization is already called {normalized:?} here; the change is skipped"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vendors_id_is_the_same_for_the_same_organization_and_name_only() {
        let a = vendor_id_for("org-1", "tailspin software");
        assert_eq!(a, vendor_id_for("org-1", "tailspin software"));
        assert_ne!(a, vendor_id_for("org-2", "tailspin software"));
        assert_ne!(a, vendor_id_for("org-1", "tailspin"));
        assert!(uuid::Uuid::parse_str(&a).is_ok());
    }

    #[test]
    fn each_vendor_field_is_checked_and_an_unknown_one_is_refused() {
        let one = |k: &str, v: Value| BTreeMap::from([(k.to_string(), v)]);
        assert!(check_vendor_fields(&one("name", json!("Tailspin Software"))).is_ok());
        assert!(check_vendor_fields(&one("name", json!("  "))).is_err());
        assert!(check_vendor_fields(&one("name", json!("Tail\u{7}spin"))).is_err());
        assert!(check_vendor_fields(&one("deleted_at", Value::Null)).is_ok());
        assert!(check_vendor_fields(&one("deleted_at", json!("last week"))).is_err());
        assert!(check_vendor_fields(&one("normalized_name", json!("x"))).is_err(), "derived, never synced");
        assert!(check_vendor_fields(&one("org_id", json!("x"))).is_err());
        assert!(check_vendor_fields(&BTreeMap::new()).is_err());
    }
}
