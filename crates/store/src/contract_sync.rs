//! Contracts across an organization's desktops (synced model `contract`, record id = the document's id).
//!
//! What a person decides about a contract syncs; what a desktop can compute does not. A finalize queues the
//! contract's fields as the review left them — the stamp (who, when), the type, the counterparty, each extracted
//! field and the checklist outcome — each a last-writer-wins field by HLC (`pactwise_rules::lww` through
//! `take_field`), so two finalizes made before the desktops synced converge on the later stamp per field, and each is
//! kept as an event in the audit log of every desktop. A reopen clears the stamp the same way. The expiration date,
//! the notice deadline and the governing law are derived on each desktop from the synced fields with part A's rule
//! (`contracts::derive_in`); the risk from the synced outcome (`ContractOutcome::risk`).
//!
//! The merged values live in `sync_contract_fields` (migration 0018) and are laid over the contract's row by
//! [`project_in`]; a finalize that arrives before its document's file waits there and is laid over when the document
//! is received. A field joins the sync by being added to [`CONTRACT_FIELDS`] with its check.

use crate::audit::append_audit_as;
use crate::sync_log::{ChangePayload, SyncApply, emit_in, org_syncs};
use crate::time::to_sql;
use crate::{ContractOutcome, OrgScope, Store, StoreError};
use chrono::DateTime;
use pactwise_domain::{DocumentId, Extracted, UserId};
use pactwise_rules::lww::Hlc;
use pactwise_rules::vendor_link::{self, LinkKind};
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The synced model's wire name (`pactwise_sync::SyncedModel::Contract`).
pub const CONTRACT_MODEL: &str = "contract";

/// The prefix of an extracted field's synced name (`field.expiration_date`).
const FIELD_PREFIX: &str = "field.";

/// The extracted fields of `pactwise_domain::Extractions` that are lists; every other one is one value or null.
const LIST_FIELDS: &[&str] = &["parties", "key_terms"];

type Check = fn(&Value) -> Result<(), String>;

/// Every synced field of a contract, with the check a remote value must pass before anything is written. Each is
/// independent: a new one joins by being added here (and laid over the row in [`project_in`]).
pub const CONTRACT_FIELDS: &[(&str, Check)] = &[
    ("type_id", check_type_id),
    ("counterparty", check_counterparty),
    ("outcome", check_outcome),
    ("field.parties", check_extracted_list),
    ("field.agreement_date", check_extracted),
    ("field.effective_date", check_extracted),
    ("field.expiration_date", check_extracted),
    ("field.renewal", check_extracted),
    ("field.renewal_notice", check_extracted),
    ("field.governing_law", check_extracted),
    ("field.value", check_extracted),
    ("field.pricing", check_extracted),
    ("field.scope", check_extracted),
    ("field.key_terms", check_extracted_list),
    // The vendor link: not last-writer-wins alone but `pactwise_rules::vendor_link::wins` (a person's link is never
    // replaced by an automatic one), taken with [`SyncApply::take_vendor_link`].
    ("vendor", check_vendor_link),
    // Last, so a desktop that sees the stamp has seen the fields it stamps.
    ("finalized", check_stamp),
];

/// A local change is packed into changes of at most this many bytes of fields (the wire allows 64 KiB a change).
const CHANGE_BUDGET: usize = 48 * 1024;

fn check_type_id(v: &Value) -> Result<(), String> {
    match v.as_str() {
        Some(t) if (1..=100).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') => Ok(()),
        _ => Err("a contract type is 1 to 100 lowercase letters or underscores".into()),
    }
}

fn check_counterparty(v: &Value) -> Result<(), String> {
    match v {
        Value::Null => Ok(()),
        Value::String(s) if !s.trim().is_empty() && s.len() <= 1_000 && !s.chars().any(char::is_control) => Ok(()),
        _ => Err("a counterparty is null or 1 to 1,000 bytes of text".into()),
    }
}

fn check_outcome(v: &Value) -> Result<(), String> {
    let count = |k: &str| v.get(k).and_then(Value::as_u64).filter(|n| *n <= 10_000);
    match (v.as_object().map(Map::len), count("red_flags"), count("critical_gaps")) {
        (Some(2), Some(_), Some(_)) => Ok(()),
        _ => Err("an outcome carries exactly red_flags and critical_gaps, as counts".into()),
    }
}

fn check_extracted(v: &Value) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    serde_json::from_value::<Extracted>(v.clone()).map(|_| ()).map_err(|e| format!("not an extracted value: {e}"))
}

fn check_extracted_list(v: &Value) -> Result<(), String> {
    serde_json::from_value::<Vec<Extracted>>(v.clone())
        .map(|_| ())
        .map_err(|e| format!("not a list of extracted values: {e}"))
}

fn check_vendor_link(v: &Value) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    let id = v.get("id").and_then(Value::as_str).and_then(|t| uuid::Uuid::parse_str(t).ok());
    let kind = v.get("link").and_then(Value::as_str).and_then(LinkKind::parse);
    match (id, kind, v.as_object().map(Map::len)) {
        (Some(_), Some(_), Some(2)) => Ok(()),
        _ => Err("a vendor link carries the vendor's id and who set it (auto or person)".into()),
    }
}

/// Who set a synced vendor link (an absent link is the pipeline's finding).
fn link_kind(v: &Value) -> LinkKind {
    v.get("link").and_then(Value::as_str).and_then(LinkKind::parse).unwrap_or(LinkKind::Auto)
}

fn check_stamp(v: &Value) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    let by = v.get("by").and_then(Value::as_str).and_then(|u| u.parse::<UserId>().ok());
    let at = v.get("at").and_then(Value::as_str).and_then(|t| DateTime::parse_from_rfc3339(t).ok());
    let name_ok = match v.get("by_name") {
        None | Some(Value::Null) => true,
        Some(Value::String(n)) => n.len() <= 200 && !n.chars().any(char::is_control),
        Some(_) => false,
    };
    let known = v.as_object().is_some_and(|o| o.keys().all(|k| matches!(k.as_str(), "by" | "by_name" | "at")));
    if by.is_some() && at.is_some() && name_ok && known {
        Ok(())
    } else {
        Err("a finalize stamp carries who (a user id), when (RFC 3339) and at most a display name".into())
    }
}

/// Are these well-formed values for a synced contract's fields? An unknown field is refused too.
pub fn check_contract_fields(fields: &BTreeMap<String, Value>) -> Result<(), StoreError> {
    if fields.is_empty() {
        return Err(StoreError::Invalid("a contract change sets no field".into()));
    }
    for (name, value) in fields {
        let Some((_, check)) = CONTRACT_FIELDS.iter().find(|(n, _)| n == name) else {
            return Err(StoreError::Invalid(format!("a contract has no synced field {name:?}")));
        };
        check(value).map_err(|why| StoreError::Invalid(format!("the contract's {name} was refused: {why}")))?;
    }
    Ok(())
}

/// Queues the finalized contract's fields for the organization's other desktops (inside the finalize transaction,
/// after the row is written), if the organization syncs.
pub(crate) fn finalized_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    id: DocumentId,
) -> Result<(), StoreError> {
    if !org_syncs(tx, &scope.org().to_string())? {
        return Ok(());
    }
    let (type_id, counterparty, json, by, at, red_flags, critical_gaps): (
        String,
        Option<String>,
        String,
        Option<String>,
        Option<String>,
        u32,
        u32,
    ) = tx.query_row(
        "SELECT type_id, counterparty, extractions_json, finalized_by, finalized_at, red_flags, critical_gaps
         FROM contracts WHERE document_id = ?1 AND org_id = ?2",
        params![id.to_string(), scope.org().to_string()],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
    )?;
    let extractions: Map<String, Value> = serde_json::from_str(&json).unwrap_or_default();
    let by_name: Option<String> = match &by {
        Some(user) => tx.query_row("SELECT display_name FROM users WHERE id = ?1", [user], |r| r.get(0)).optional()?,
        None => None,
    };
    let mut fields = BTreeMap::new();
    for (name, _) in CONTRACT_FIELDS {
        let value = match *name {
            "type_id" => json!(type_id),
            "counterparty" => json!(counterparty),
            "outcome" => json!({"red_flags": red_flags, "critical_gaps": critical_gaps}),
            "finalized" => match (&by, &at) {
                (Some(by), Some(at)) => json!({"by": by, "by_name": by_name, "at": at}),
                _ => Value::Null,
            },
            // The link goes out when it changes ([`linked_in`]).
            "vendor" => continue,
            field => {
                let key = &field[FIELD_PREFIX.len()..];
                let empty = if LIST_FIELDS.contains(&key) { json!([]) } else { Value::Null };
                extractions.get(key).cloned().unwrap_or(empty)
            }
        };
        fields.insert((*name).to_string(), value);
    }
    queue_in(store, tx, scope, id, fields)
}

/// Queues a reopen (the stamp cleared) for the organization's other desktops, if the organization syncs.
pub(crate) fn reopened_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    id: DocumentId,
) -> Result<(), StoreError> {
    if !org_syncs(tx, &scope.org().to_string())? {
        return Ok(());
    }
    queue_in(store, tx, scope, id, BTreeMap::from([("finalized".to_string(), Value::Null)]))
}

/// Queues a contract's vendor link (a person's, or the pipeline's when it changed) for the organization's other
/// desktops, if the organization syncs. `None`: no vendor.
pub(crate) fn linked_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    id: DocumentId,
    link: Option<(&str, LinkKind)>,
) -> Result<(), StoreError> {
    if !org_syncs(tx, &scope.org().to_string())? {
        return Ok(());
    }
    let value = link.map_or(Value::Null, |(vendor, kind)| json!({"id": vendor, "link": kind.as_str()}));
    queue_in(store, tx, scope, id, BTreeMap::from([("vendor".to_string(), value)]))
}

/// Records the local values as the merged state and queues them, packed into as few changes as fit (in the order
/// of [`CONTRACT_FIELDS`], so the stamp goes last). A single field too large to sync stays local and is logged.
fn queue_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    id: DocumentId,
    fields: BTreeMap<String, Value>,
) -> Result<(), StoreError> {
    let org = scope.org().to_string();
    let doc = id.to_string();
    let mut chunks: Vec<BTreeMap<String, Value>> = vec![BTreeMap::new()];
    let mut size = 0;
    for (name, _) in CONTRACT_FIELDS {
        let Some(value) = fields.get(*name) else { continue };
        let bytes = name.len() + value.to_string().len() + 8;
        if bytes > CHANGE_BUDGET {
            tracing::warn!(document = %doc, field = name, bytes, "a contract field too large to sync stays local");
            continue;
        }
        if size + bytes > CHANGE_BUDGET {
            chunks.push(BTreeMap::new());
            size = 0;
        }
        size += bytes;
        chunks.last_mut().expect("one chunk at least").insert((*name).to_string(), value.clone());
        record_in(tx, &org, &doc, name, value)?;
    }
    for chunk in chunks.into_iter().filter(|c| !c.is_empty()) {
        emit_in(store, tx, scope, CONTRACT_MODEL, &doc, |_| Ok(ChangePayload::Fields(chunk)))?;
    }
    Ok(())
}

fn record_in(tx: &Transaction<'_>, org: &str, doc: &str, field: &str, value: &Value) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO sync_contract_fields (org_id, document_id, field, value_json) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (org_id, document_id, field) DO UPDATE SET value_json = excluded.value_json",
    )?
    .execute(params![org, doc, field, value.to_string()])?;
    Ok(())
}

/// Lays the merged synced values over the contract's row, if its document is here (the organization's): a row is
/// written when there is none yet and the type is known; the derived columns are derived again. Nothing happens
/// while the document is not here or no field was synced.
pub(crate) fn project_in(tx: &Transaction<'_>, org: &str, id: DocumentId, now: &str) -> Result<(), StoreError> {
    let doc = id.to_string();
    let owner: Option<String> =
        tx.query_row("SELECT org_id FROM documents WHERE id = ?1", [&doc], |r| r.get(0)).optional()?;
    if owner.as_deref() != Some(org) {
        return Ok(());
    }
    let synced: BTreeMap<String, Value> = tx
        .prepare_cached("SELECT field, value_json FROM sync_contract_fields WHERE org_id = ?1 AND document_id = ?2")?
        .query_map(params![org, doc], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .filter_map(|row| row.ok().and_then(|(k, v)| serde_json::from_str(&v).ok().map(|v| (k, v))))
        .collect();
    if synced.is_empty() {
        return Ok(());
    }
    let row: Option<(String, Option<String>, String)> = tx
        .query_row(
            "SELECT type_id, counterparty, extractions_json FROM contracts WHERE document_id = ?1 AND org_id = ?2",
            params![doc, org],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let type_id = match (synced.get("type_id").and_then(Value::as_str), &row) {
        (Some(t), _) => t.to_string(),
        (None, Some((t, ..))) => t.clone(),
        (None, None) => return Ok(()),
    };
    let counterparty = match (synced.get("counterparty"), &row) {
        (Some(c), _) => c.as_str().map(str::to_string),
        (None, Some((_, c, _))) => c.clone(),
        (None, None) => None,
    };
    let mut extractions: Map<String, Value> =
        row.as_ref().and_then(|(_, _, json)| serde_json::from_str(json).ok()).unwrap_or_default();
    for (name, value) in &synced {
        if let Some(key) = name.strip_prefix(FIELD_PREFIX) {
            extractions.insert(key.to_string(), value.clone());
        }
    }
    for key in LIST_FIELDS {
        extractions.entry(key.to_string()).or_insert_with(|| json!([]));
    }
    let extractions = Value::Object(extractions).to_string();
    if row.is_none() {
        tx.execute(
            "INSERT INTO contracts (document_id, org_id, type_id, counterparty, extractions_json, vendor_match,
                 updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 'none', ?6)",
            params![doc, org, type_id, counterparty, extractions, now],
        )?;
    } else {
        tx.execute(
            "UPDATE contracts SET type_id = ?3, counterparty = ?4, extractions_json = ?5, updated_at = ?6
             WHERE document_id = ?1 AND org_id = ?2",
            params![doc, org, type_id, counterparty, extractions, now],
        )?;
    }
    if let Some(outcome) = synced.get("outcome") {
        let count = |k: &str| outcome.get(k).and_then(Value::as_u64).unwrap_or(0) as u32;
        let outcome = ContractOutcome { red_flags: count("red_flags"), critical_gaps: count("critical_gaps") };
        tx.execute(
            "UPDATE contracts SET risk = ?3, red_flags = ?4, critical_gaps = ?5 WHERE document_id = ?1 AND org_id = ?2",
            params![doc, org, outcome.risk(), outcome.red_flags, outcome.critical_gaps],
        )?;
    }
    if let Some(stamp) = synced.get("finalized") {
        let by = stamp.get("by").and_then(Value::as_str);
        let at = stamp.get("at").and_then(Value::as_str).and_then(|t| DateTime::parse_from_rfc3339(t).ok());
        tx.execute(
            "UPDATE contracts SET finalized_by = ?3, finalized_at = ?4 WHERE document_id = ?1 AND org_id = ?2",
            params![doc, org, by, at.map(|t| to_sql(t.with_timezone(&chrono::Utc)))],
        )?;
    }
    if let Some(link) = synced.get("vendor") {
        project_link_in(tx, org, &doc, link)?;
    }
    crate::contracts::derive_in(tx, &doc, &extractions)?;
    Ok(())
}

/// Lays a synced vendor link over the contract: a vendor of the organization that is here (a vendor not here yet
/// leaves the link as it is, logged); no vendor clears a link.
fn project_link_in(tx: &Transaction<'_>, org: &str, doc: &str, link: &Value) -> Result<(), StoreError> {
    let Some(vendor) = link.get("id").and_then(Value::as_str) else {
        tx.execute(
            "UPDATE contracts SET vendor_id = NULL, vendor_link = NULL,
                 vendor_match = CASE WHEN vendor_match = 'linked' THEN 'none' ELSE vendor_match END
             WHERE document_id = ?1 AND org_id = ?2",
            params![doc, org],
        )?;
        return Ok(());
    };
    // A vendor merged away (here or on another desktop) is linked as the vendor it was merged into.
    let Some(vendor) = crate::vendors::live_successor_in(tx, org, vendor)? else {
        tracing::warn!(document = doc, vendor, "a synced vendor link names a vendor that is not here; kept as it was");
        return Ok(());
    };
    tx.execute(
        "UPDATE contracts SET vendor_id = ?3, vendor_link = ?4, vendor_match = 'linked'
         WHERE document_id = ?1 AND org_id = ?2",
        params![doc, org, vendor, link_kind(link).as_str()],
    )?;
    Ok(())
}

impl SyncApply<'_> {
    /// The vendor link's merge (`pactwise_rules::vendor_link::wins`): does a remote link stamped `hlc` (sortable
    /// text) replace the contract's current one? Records its stamp when it does. The current link is the merged
    /// synced one, or the local row's (made before the organization synced, so stamped before any synced one).
    pub fn take_vendor_link(&self, id: DocumentId, link: &Value, hlc: &str) -> Result<bool, StoreError> {
        let incoming =
            Hlc::from_sortable(hlc).ok_or_else(|| StoreError::Invalid(format!("{hlc:?} is not a sync timestamp")))?;
        let doc = id.to_string();
        let merged: Option<String> = self
            .tx
            .query_row(
                "SELECT value_json FROM sync_contract_fields WHERE org_id = ?1 AND document_id = ?2 AND field = 'vendor'",
                params![self.org, doc],
                |r| r.get(0),
            )
            .optional()?;
        let local: Option<Option<String>> = self
            .tx
            .query_row(
                "SELECT vendor_link FROM contracts WHERE document_id = ?1 AND org_id = ?2",
                params![doc, self.org],
                |r| r.get(0),
            )
            .optional()?;
        let current_kind = match (merged, local) {
            (Some(json), _) => Some(link_kind(&serde_json::from_str(&json).unwrap_or(Value::Null))),
            (None, Some(kind)) => Some(kind.as_deref().and_then(LinkKind::parse).unwrap_or(LinkKind::Auto)),
            (None, None) => None,
        };
        let stamp = crate::sync_log::field_clock(self.tx, &self.org, CONTRACT_MODEL, &doc, "vendor")?;
        let before_sync = Hlc { wall_ms: 0, counter: 0, node: uuid::Uuid::nil() };
        let current = current_kind.map(|kind| (kind, stamp.unwrap_or(before_sync)));
        if !vendor_link::wins((link_kind(link), &incoming), current.as_ref().map(|(k, h)| (*k, h))) {
            return Ok(false);
        }
        crate::sync_log::set_field_clock(self.tx, &self.org, CONTRACT_MODEL, &doc, "vendor", &incoming)?;
        Ok(true)
    }

    /// A contract change from another desktop, stamped `hlc`: `fields` is everything it carried (checked with
    /// [`check_contract_fields`]; the stamp's author is the one the sync service stamped), `taken` the fields that
    /// won last-writer-wins here. A finalize or reopen is kept as an event in the audit log whether or not it won
    /// (two finalizes made before the desktops synced both show); the winning values are laid over the row.
    pub fn contract(
        &self,
        id: DocumentId,
        author: UserId,
        hlc: &str,
        fields: &BTreeMap<String, Value>,
        taken: &BTreeMap<String, Value>,
    ) -> Result<(), StoreError> {
        check_contract_fields(fields)?;
        let doc = id.to_string();
        let owner: Option<String> =
            self.tx.query_row("SELECT org_id FROM documents WHERE id = ?1", [&doc], |r| r.get(0)).optional()?;
        if owner.as_deref().is_some_and(|o| o != self.org) {
            return Err(StoreError::Invalid(
                "a contract names another organization's document here; the change is skipped".into(),
            ));
        }
        // This desktop's own change coming back (stamped by this install's HLC node) is not a new event: its audit
        // entry was written when it was made.
        let node: Option<String> = self
            .tx
            .query_row("SELECT node_id FROM sync_state WHERE org_id = ?1", [&self.org], |r| r.get(0))
            .optional()?;
        let own = Hlc::from_sortable(hlc).is_some_and(|h| node.as_deref() == Some(h.node.to_string().as_str()));
        if let Some(stamp) = fields.get("finalized").filter(|_| !own) {
            let (action, details) = if stamp.is_null() {
                ("review.reopen", json!({"via": "sync", "kept": taken.contains_key("finalized")}))
            } else {
                let at = stamp.get("at").cloned().unwrap_or(Value::Null);
                ("review.finalize", json!({"via": "sync", "finalized_at": at, "kept": taken.contains_key("finalized")}))
            };
            append_audit_as(
                self.tx,
                &self.org,
                Some(&author.to_string()),
                &self.now,
                action,
                "document",
                Some(&doc),
                &details,
            )?;
        }
        for (name, value) in taken {
            record_in(self.tx, &self.org, &doc, name, value)?;
        }
        if !taken.is_empty() {
            project_in(self.tx, &self.org, id, &self.now)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(name: &str, value: Value) -> BTreeMap<String, Value> {
        BTreeMap::from([(name.to_string(), value)])
    }

    #[test]
    fn each_field_is_checked_and_an_unknown_one_is_refused() {
        let stamp = json!({"by": UserId::new().to_string(), "by_name": "Ann", "at": "2026-03-01T10:00:00Z"});
        assert!(check_contract_fields(&one("finalized", stamp)).is_ok());
        assert!(check_contract_fields(&one("finalized", Value::Null)).is_ok());
        assert!(
            check_contract_fields(&one("finalized", json!({"by": "nobody", "at": "2026-03-01T10:00:00Z"}))).is_err()
        );
        assert!(
            check_contract_fields(&one("finalized", json!({"by": UserId::new().to_string(), "at": "yesterday"})))
                .is_err()
        );
        assert!(check_contract_fields(&one("type_id", json!("license"))).is_ok());
        assert!(check_contract_fields(&one("type_id", json!("DROP TABLE"))).is_err());
        assert!(check_contract_fields(&one("counterparty", json!("Tailspin\u{0}"))).is_err());
        assert!(check_contract_fields(&one("outcome", json!({"red_flags": 1, "critical_gaps": 0}))).is_ok());
        assert!(check_contract_fields(&one("outcome", json!({"red_flags": -1, "critical_gaps": 0}))).is_err());
        let date = json!({"value": "not a date", "quote": null, "confidence": 0.4});
        assert!(check_contract_fields(&one("field.expiration_date", date)).is_ok(), "text is kept, derived as no date");
        assert!(check_contract_fields(&one("field.expiration_date", json!(20270101))).is_err());
        assert!(check_contract_fields(&one("field.parties", Value::Null)).is_err());
        assert!(check_contract_fields(&one("finalized_by", json!("x"))).is_err());
        assert!(check_contract_fields(&one("expires_on", json!("2027-01-01"))).is_err(), "derived, never synced");
        assert!(check_contract_fields(&BTreeMap::new()).is_err());
    }
}
