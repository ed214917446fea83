//! Vendors across an organization's desktops (synced model `vendor`, record id = the vendor's id). Each field in
//! [`VENDOR_FIELDS`] stands on its own and is last-writer-wins by HLC — except `status`, whose merge is
//! `pactwise_rules::vendors::status_wins` (a merge is final: a merged status is never replaced by another). The
//! normalised name and match keys are derived on each desktop, never synced. A change carries only the fields the
//! person (or the step) changed, so two people changing different fields of one vendor both keep their change.
//!
//! A vendor created on two desktops before they synced is one vendor: a new vendor's id comes from the organization
//! and its normalised name ([`vendor_id_for`]) unless a record here already holds that id. A merge travels as the
//! merged record's status (`{"status": "merged", "merged_into": id}`); each desktop then moves its own contracts'
//! links to the vendor kept, and a synced link that names a merged vendor is laid over as the vendor it was merged
//! into, so every desktop ends with the same links whatever order changes arrive in.

use crate::audit::append_audit_as;
use crate::sync_log::{ChangePayload, SyncApply, emit_for_org_in, field_clock, org_syncs, set_field_clock};
use crate::{Store, StoreError};
use chrono::DateTime;
use pactwise_domain::{UserId, VendorStatus};
use pactwise_rules::lww::Hlc;
use pactwise_rules::vendors as rule;
use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The synced model's wire name (`pactwise_sync::SyncedModel::Vendor`).
pub const VENDOR_MODEL: &str = "vendor";

type Check = fn(&Value) -> Result<(), String>;

/// Every synced field of a vendor with the check a remote value must pass before anything is written. `status` is
/// `{"status": …, "merged_into": id or null}` (the two columns change together).
pub const VENDOR_FIELDS: &[(&str, Check)] = &[
    ("name", check_name),
    ("aliases", check_aliases),
    ("identifiers", check_identifiers),
    ("status", check_status),
    ("deleted_at", check_deleted_at),
];

/// Every field: what a new vendor queues.
pub(crate) const ALL_FIELDS: &[&str] = &["name", "aliases", "identifiers", "status", "deleted_at"];

fn plain_text(t: &str, max: usize) -> bool {
    !t.trim().is_empty() && t.chars().count() <= max && !t.chars().any(char::is_control)
}

fn check_name(v: &Value) -> Result<(), String> {
    match v.as_str() {
        Some(n) if plain_text(n, 200) => Ok(()),
        _ => Err("a vendor's name is 1 to 200 characters of text".into()),
    }
}

fn check_aliases(v: &Value) -> Result<(), String> {
    match v.as_array() {
        Some(a) if a.len() <= 50 && a.iter().all(|x| x.as_str().is_some_and(|t| plain_text(t, 200))) => Ok(()),
        _ => Err("a vendor's aliases are at most 50 names of 1 to 200 characters".into()),
    }
}

fn check_identifiers(v: &Value) -> Result<(), String> {
    let Some(list) = v.as_array().filter(|a| a.len() <= 50) else {
        return Err("a vendor's identifiers are a list of at most 50".into());
    };
    for item in list {
        let (Some(kind), Some(value)) =
            (item.get("kind").and_then(Value::as_str), item.get("value").and_then(Value::as_str))
        else {
            return Err("each identifier has a kind and a value".into());
        };
        if item.as_object().is_some_and(|o| o.len() != 2) || !plain_text(value, 100) {
            return Err("each identifier has only a kind and a value of text".into());
        }
        rule::check_identifier(kind, value)?;
    }
    Ok(())
}

/// A synced status: its status and the vendor it was merged into (only, and always, when merged).
fn parse_status(v: &Value) -> Result<(VendorStatus, Option<String>), String> {
    let status = v.get("status").and_then(Value::as_str).and_then(|s| s.parse::<VendorStatus>().ok());
    let into = v.get("merged_into");
    match (status, into) {
        (Some(VendorStatus::Merged), Some(Value::String(id))) if uuid::Uuid::parse_str(id).is_ok() => {
            Ok((VendorStatus::Merged, Some(id.clone())))
        }
        (Some(s), None | Some(Value::Null)) if s != VendorStatus::Merged => Ok((s, None)),
        _ => Err("a vendor's status is prospective, onboarding, active or blocked, or merged into a vendor".into()),
    }
}

fn check_status(v: &Value) -> Result<(), String> {
    if v.as_object().is_some_and(|o| o.keys().any(|k| k != "status" && k != "merged_into")) {
        return Err("a vendor's status carries only its status and the vendor it was merged into".into());
    }
    parse_status(v).map(|_| ())
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
        let Some((_, check)) = VENDOR_FIELDS.iter().find(|(n, _)| n == name) else {
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

/// The id a new vendor of `org` with this normalised name gets: [`vendor_id_for`], unless a record (renamed, merged
/// or deleted since) already holds that id here; then a fresh one (the two show as duplicates for a person to merge).
pub(crate) fn new_vendor_id_in(conn: &rusqlite::Connection, org: &str, normalized: &str) -> Result<String, StoreError> {
    let id = vendor_id_for(org, normalized);
    let held = conn.prepare_cached("SELECT 1 FROM vendors WHERE id = ?1")?.exists([&id])?;
    Ok(if held { uuid::Uuid::now_v7().to_string() } else { id })
}

/// The current values of a vendor's synced fields, as they travel.
fn current_fields(tx: &rusqlite::Connection, org: &str, vendor: &str) -> Result<BTreeMap<String, Value>, StoreError> {
    let row: (String, String, String, String, Option<String>, Option<String>) = tx
        .prepare_cached(
            "SELECT name, aliases_json, identifiers_json, status, merged_into, deleted_at
             FROM vendors WHERE id = ?1 AND org_id = ?2",
        )?
        .query_row(params![vendor, org], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?;
    let (name, aliases, identifiers, status, merged_into, deleted_at) = row;
    Ok(BTreeMap::from([
        ("name".to_string(), Value::String(name)),
        ("aliases".to_string(), serde_json::from_str(&aliases).unwrap_or_else(|_| json!([]))),
        ("identifiers".to_string(), serde_json::from_str(&identifiers).unwrap_or_else(|_| json!([]))),
        ("status".to_string(), json!({ "status": status, "merged_into": merged_into })),
        ("deleted_at".to_string(), deleted_at.map_or(Value::Null, Value::String)),
    ]))
}

/// Queues the named synced fields of a vendor, as they are now, for the organization's other desktops (inside the
/// transaction that changed them), if the organization syncs. `org` is the session's, or the run's for a step the
/// platform worker drives.
pub(crate) fn vendor_changed_in(
    store: &Store,
    tx: &rusqlite::Connection,
    org: &str,
    vendor: &str,
    which: &[&str],
) -> Result<(), StoreError> {
    if !org_syncs(tx, org)? {
        return Ok(());
    }
    let mut fields = current_fields(tx, org, vendor)?;
    fields.retain(|k, _| which.contains(&k.as_str()));
    emit_for_org_in(store, tx, org, VENDOR_MODEL, vendor, || Ok(ChangePayload::Fields(fields))).map(|_| ())
}

impl SyncApply<'_> {
    /// The vendor status's merge (`pactwise_rules::vendors::status_wins`): does a remote status stamped `hlc`
    /// replace the one here? A status set here before the organization synced counts as stamped before every sync.
    /// Records the winner's stamp.
    pub fn take_vendor_status(&self, id: &str, status: &Value, hlc: &str) -> Result<bool, StoreError> {
        let incoming =
            Hlc::from_sortable(hlc).ok_or_else(|| StoreError::Invalid(format!("{hlc:?} is not a sync timestamp")))?;
        let (status, _) = parse_status(status).map_err(StoreError::Invalid)?;
        let here: Option<String> = self
            .tx
            .query_row("SELECT status FROM vendors WHERE id = ?1 AND org_id = ?2", params![id, self.org], |r| r.get(0))
            .optional()?;
        let stamp = field_clock(self.tx, &self.org, VENDOR_MODEL, id, "status")?;
        let before_sync = Hlc { wall_ms: 0, counter: 0, node: uuid::Uuid::nil() };
        let current = here
            .map(|s| (s.parse::<VendorStatus>().unwrap_or(VendorStatus::Prospective), stamp.unwrap_or(before_sync)));
        if !rule::status_wins((status, &incoming), current.as_ref().map(|(s, h)| (*s, h))) {
            return Ok(false);
        }
        set_field_clock(self.tx, &self.org, VENDOR_MODEL, id, "status", &incoming)?;
        Ok(true)
    }

    /// A vendor change from another desktop: the fields that won here (`taken`, checked with
    /// [`check_vendor_fields`]) are written; a vendor not here yet is created (it needs its name). Two vendors with
    /// one normalised name are allowed: they show as duplicates for a person to merge. A merge moves this desktop's
    /// links to the vendor kept; one into a vendor that is not here is refused on its own.
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
                self.tx.execute(
                    "INSERT INTO vendors (id, org_id, name, normalized_name, created_by, created_at)
                     VALUES (?1, ?2, ?3, '', ?4, ?5)",
                    params![id, self.org, name.trim(), author.to_string(), self.now],
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
        let json_text = |v: &Value| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
        for (field, value) in taken {
            match field.as_str() {
                "name" => self.set_column(id, "name", value.as_str().unwrap_or_default().trim())?,
                "aliases" => self.set_column(id, "aliases_json", &json_text(value))?,
                "identifiers" => self.set_column(id, "identifiers_json", &json_text(value))?,
                "deleted_at" => {
                    self.tx.execute(
                        "UPDATE vendors SET deleted_at = ?3 WHERE id = ?1 AND org_id = ?2",
                        params![id, self.org, value.as_str()],
                    )?;
                }
                "status" => self.status(id, author, value)?,
                _ => {}
            }
        }
        if taken.contains_key("name") || taken.contains_key("aliases") {
            crate::vendors::derive_keys_in(self.tx, id)?;
        }
        Ok(())
    }

    fn set_column(&self, id: &str, column: &str, value: &str) -> Result<(), StoreError> {
        self.tx.execute(
            &format!("UPDATE vendors SET {column} = ?3, updated_at = ?4 WHERE id = ?1 AND org_id = ?2"),
            params![id, self.org, value, self.now],
        )?;
        Ok(())
    }

    fn status(&self, id: &str, author: UserId, value: &Value) -> Result<(), StoreError> {
        let (status, into) = parse_status(value).map_err(StoreError::Invalid)?;
        let Some(into) = into else {
            self.tx.execute(
                "UPDATE vendors SET status = ?3, updated_at = ?4 WHERE id = ?1 AND org_id = ?2 AND status <> 'merged'",
                params![id, self.org, status.as_str(), self.now],
            )?;
            return Ok(());
        };
        if into == id {
            return Err(StoreError::Invalid("a vendor cannot be merged into itself".into()));
        }
        let Some(kept) = crate::vendors::live_successor_in(self.tx, &self.org, &into)? else {
            return Err(StoreError::Invalid(
                "a vendor was merged into one that is not on this desktop; the merge is skipped".into(),
            ));
        };
        if kept == id {
            return Err(StoreError::Invalid("a merge that would make a vendor its own successor is skipped".into()));
        }
        self.tx.execute(
            "UPDATE vendors SET status = 'merged', merged_into = ?3, updated_at = ?4 WHERE id = ?1 AND org_id = ?2",
            params![id, self.org, kept, self.now],
        )?;
        self.tx.execute(
            "UPDATE vendors SET merged_into = ?3, updated_at = ?4 WHERE merged_into = ?1 AND org_id = ?2",
            params![id, self.org, kept, self.now],
        )?;
        let moved = self.tx.execute(
            "UPDATE contracts SET vendor_id = ?3, updated_at = ?4 WHERE vendor_id = ?1 AND org_id = ?2",
            params![id, self.org, kept, self.now],
        )?;
        append_audit_as(
            self.tx,
            &self.org,
            Some(&author.to_string()),
            &self.now,
            "vendor.merged_into",
            "vendor",
            Some(id),
            &json!({ "into": kept, "contracts_moved": moved, "via": "sync" }),
        )?;
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
        let ok = |k: &str, v: Value| check_vendor_fields(&one(k, v)).is_ok();
        assert!(ok("name", json!("Tailspin Software")));
        assert!(!ok("name", json!("  ")));
        assert!(!ok("name", json!("Tail\u{7}spin")));
        assert!(!ok("name", json!("x".repeat(201))));
        assert!(ok("aliases", json!(["Tailspin", "TS Software"])));
        assert!(!ok("aliases", json!("Tailspin")));
        assert!(!ok("aliases", json!([""])));
        assert!(!ok("aliases", json!(vec!["a"; 51])));
        assert!(ok("identifiers", json!([{"kind": "tax_id", "value": "DE 123 456 789"}])));
        assert!(!ok("identifiers", json!([{"kind": "tax_id"}])));
        assert!(!ok("identifiers", json!([{"kind": "tax_id", "value": "---"}])), "no letters or digits");
        assert!(!ok("identifiers", json!([{"kind": "tax_id", "value": "1", "org_id": "x"}])));
        assert!(ok("status", json!({"status": "active"})));
        assert!(ok("status", json!({"status": "blocked", "merged_into": null})));
        let into = uuid::Uuid::now_v7().to_string();
        assert!(ok("status", json!({"status": "merged", "merged_into": into})));
        assert!(!ok("status", json!({"status": "merged"})), "a merge names the vendor kept");
        assert!(!ok("status", json!({"status": "active", "merged_into": into})));
        assert!(!ok("status", json!({"status": "merged", "merged_into": "not an id"})));
        assert!(!ok("status", json!({"status": "trusted"})));
        assert!(!ok("status", json!({"status": "active", "org_id": "x"})));
        assert!(ok("deleted_at", Value::Null));
        assert!(!ok("deleted_at", json!("last week")));
        assert!(!ok("normalized_name", json!("x")), "derived, never synced");
        assert!(!ok("org_id", json!("x")));
        assert!(check_vendor_fields(&BTreeMap::new()).is_err());
        for field in ALL_FIELDS {
            assert!(VENDOR_FIELDS.iter().any(|(n, _)| n == field), "{field} has a check");
        }
    }
}
