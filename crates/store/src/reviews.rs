//! The document pipeline's records: each stage's status and output per document, human corrections (append-only;
//! the latest per item wins), the contract record with its extractions, and vendors. Stage outputs are JSON owned
//! by `pactwise-pipeline`; the store keeps them, scoped to the organization, and never interprets them beyond the
//! gate's route for the review queue. Every function takes the caller's scope and checks that the document is the
//! organization's and not deleted.

use crate::audit::append_audit;
use crate::sync_log::{ChangePayload, emit_in};
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::{DocumentId, UserId};
use pactwise_rules::vendor_link::{LinkKind, automatic_may_replace};
use rusqlite::{OptionalExtension, params};
use serde_json::Value;

pub struct Reviews<'s> {
    store: &'s Store,
}

/// One stage's record.
#[derive(Debug, Clone, PartialEq)]
pub struct StageRow {
    pub stage: String,
    pub status: String,
    pub attempt: u32,
    pub model: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub latency_ms: u64,
    pub outcome: Option<String>,
    pub reason: Option<String>,
    pub output: Option<Value>,
    pub updated_at: DateTime<Utc>,
}

/// A person's confirmation or correction of one item.
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    pub id: String,
    pub item_id: String,
    pub kind: String,
    pub status: String,
    pub quote: Option<(String, u32)>,
    pub note: Option<String>,
    pub user: UserId,
    pub at: DateTime<Utc>,
}

/// What a person sends to confirm or correct an item; who and when come from the scope and the clock.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCorrection {
    pub item_id: String,
    pub kind: String,
    pub status: String,
    pub quote: Option<(String, u32)>,
    pub note: Option<String>,
    /// The warnings about the quote the person read and kept it despite (recorded in the audit entry).
    pub acknowledged: Vec<String>,
}

/// A document routed to a person, with the outputs the queue shows.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    pub document: DocumentId,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub gate: Value,
    pub classify: Option<Value>,
    pub checklist_summary: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Vendor {
    pub id: String,
    pub name: String,
}

/// The contract record as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractRow {
    pub document: DocumentId,
    pub type_id: String,
    pub counterparty: Option<String>,
    pub extractions: Value,
    pub vendor: Option<Vendor>,
    pub vendor_link: Option<String>,
    pub vendor_match: String,
    pub finalized_by: Option<UserId>,
    pub finalized_at: Option<DateTime<Utc>>,
}

/// What finalize asks for the vendor link; a link a person set is never replaced.
#[derive(Debug, Clone, PartialEq)]
pub enum VendorDecision {
    /// Link to the vendor with this normalised name if it exists; create it when `create` (high confidence).
    Match { name: String, normalized: String, create: bool },
    /// No counterparty to match.
    None,
}

/// A vendor name's normalised form: `rules::vendors::normalized_name` (the one home of the rule).
pub fn normalized_vendor_name(name: &str) -> String {
    pactwise_rules::vendors::normalized_name(name)
}

impl<'s> Reviews<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Reviews { store }
    }

    fn check_document(&self, scope: &OrgScope, id: DocumentId) -> Result<(), StoreError> {
        self.store
            .conn()
            .query_row(
                "SELECT 1 FROM documents WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
                params![id.to_string(), scope.org().to_string()],
                |_| Ok(()),
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// The stage records of a document, in no particular order.
    pub fn stages(&self, scope: &OrgScope, id: DocumentId) -> Result<Vec<StageRow>, StoreError> {
        self.check_document(scope, id)?;
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT stage, status, attempt, model, input_tokens, output_tokens, cache_read_tokens, latency_ms, outcome,
                    reason, output_json, updated_at
             FROM pipeline_stages WHERE document_id = ?1 AND org_id = ?2",
        )?;
        let rows = stmt.query_map(params![id.to_string(), scope.org().to_string()], |r| {
            let output: Option<String> = r.get(10)?;
            Ok(StageRow {
                stage: r.get(0)?,
                status: r.get(1)?,
                attempt: r.get(2)?,
                model: r.get(3)?,
                input_tokens: r.get::<_, i64>(4)? as u64,
                output_tokens: r.get::<_, i64>(5)? as u64,
                cache_read_tokens: r.get::<_, i64>(6)? as u64,
                latency_ms: r.get::<_, i64>(7)? as u64,
                outcome: r.get(8)?,
                reason: r.get(9)?,
                output: output.and_then(|s| serde_json::from_str(&s).ok()),
                updated_at: from_sql(&r.get::<_, String>(11)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Writes (inserts or replaces) one stage's record.
    pub fn save_stage(&self, scope: &OrgScope, id: DocumentId, row: &StageRow) -> Result<(), StoreError> {
        scope.require_document_editor()?;
        self.check_document(scope, id)?;
        self.store.conn().execute(
            "INSERT INTO pipeline_stages (org_id, document_id, stage, status, attempt, model, input_tokens,
                 output_tokens, cache_read_tokens, latency_ms, outcome, reason, output_json, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (document_id, stage) DO UPDATE SET status = excluded.status, attempt = excluded.attempt,
                 model = excluded.model, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
                 cache_read_tokens = excluded.cache_read_tokens, latency_ms = excluded.latency_ms,
                 outcome = excluded.outcome, reason = excluded.reason, output_json = excluded.output_json,
                 updated_at = excluded.updated_at",
            params![
                scope.org().to_string(),
                id.to_string(),
                row.stage,
                row.status,
                row.attempt,
                row.model,
                row.input_tokens as i64,
                row.output_tokens as i64,
                row.cache_read_tokens as i64,
                row.latency_ms as i64,
                row.outcome,
                row.reason,
                row.output.as_ref().map(Value::to_string),
                to_sql(self.store.clock().now()),
            ],
        )?;
        Ok(())
    }

    /// Forgets the records of the named stages (a re-run that was asked for), in one transaction.
    pub fn clear_stages(&self, scope: &OrgScope, id: DocumentId, stages: &[&str]) -> Result<(), StoreError> {
        scope.require_document_editor()?;
        self.check_document(scope, id)?;
        let tx = self.store.conn().unchecked_transaction()?;
        for stage in stages {
            tx.execute(
                "DELETE FROM pipeline_stages WHERE document_id = ?1 AND org_id = ?2 AND stage = ?3",
                params![id.to_string(), scope.org().to_string(), stage],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records a person's confirmation or correction, with its audit entry, in one transaction. The person is the
    /// session's user.
    pub fn add_correction(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        correction: &NewCorrection,
    ) -> Result<Correction, StoreError> {
        scope.require_document_editor()?;
        self.check_document(scope, id)?;
        let tx = self.store.conn().unchecked_transaction()?;
        let added = add_correction_in(self.store, &tx, scope, id, correction, &serde_json::Value::Null)?;
        tx.commit()?;
        Ok(added)
    }

    /// Every correction of a document, oldest first (so the last one per item is the one in force).
    pub fn corrections(&self, scope: &OrgScope, id: DocumentId) -> Result<Vec<Correction>, StoreError> {
        self.check_document(scope, id)?;
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT id, item_id, kind, status, quote_text, quote_page, note, user_id, created_at
             FROM review_corrections WHERE document_id = ?1 AND org_id = ?2 ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![id.to_string(), scope.org().to_string()], |r| {
            let quote_text: Option<String> = r.get(4)?;
            let quote_page: Option<u32> = r.get(5)?;
            let user: String = r.get(7)?;
            Ok(Correction {
                id: r.get(0)?,
                item_id: r.get(1)?,
                kind: r.get(2)?,
                status: r.get(3)?,
                quote: quote_text.zip(quote_page),
                note: r.get(6)?,
                user: user.parse().map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(7, rusqlite::types::Type::Text, Box::new(e))
                })?,
                at: from_sql(&r.get::<_, String>(8)?)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Documents the gate routed to a person whose contract is not finalized, newest first.
    pub fn queue(&self, scope: &OrgScope) -> Result<Vec<QueueRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT d.id, d.name, d.created_at, g.output_json,
                    (SELECT output_json FROM pipeline_stages c WHERE c.document_id = d.id AND c.stage = 'classify'),
                    (SELECT json_extract(output_json, '$.summary') FROM pipeline_stages k
                       WHERE k.document_id = d.id AND k.stage = 'checklist')
             FROM documents d
             JOIN pipeline_stages g ON g.document_id = d.id AND g.stage = 'gate' AND g.status IN ('done', 'degraded')
             LEFT JOIN contracts k ON k.document_id = d.id
             WHERE d.org_id = ?1 AND g.org_id = ?1 AND d.deleted_at IS NULL
               AND json_extract(g.output_json, '$.route') = 'person' AND k.finalized_at IS NULL
             ORDER BY d.created_at DESC, d.id",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            let id: String = r.get(0)?;
            let parse = |s: Option<String>| s.and_then(|s| serde_json::from_str::<Value>(&s).ok());
            Ok(QueueRow {
                document: id.parse().map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
                })?,
                name: r.get(1)?,
                created_at: from_sql(&r.get::<_, String>(2)?)?,
                gate: parse(r.get(3)?).unwrap_or(Value::Null),
                classify: parse(r.get(4)?),
                checklist_summary: parse(r.get(5)?),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Writes the contract record. The vendor link: a link a person set is kept as it is; otherwise the counterparty
    /// is matched to an existing vendor by normalised name, or a vendor is created when the decision allows it, or
    /// the match is left for review. One transaction, with an audit entry when a vendor is created.
    pub fn save_contract(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        type_id: &str,
        counterparty: Option<&str>,
        extractions: &Value,
        vendor: &VendorDecision,
    ) -> Result<ContractRow, StoreError> {
        scope.require_document_editor()?;
        self.check_document(scope, id)?;
        let at = to_sql(self.store.clock().now());
        let org = scope.org().to_string();
        let tx = self.store.conn().unchecked_transaction()?;
        let existing: Option<(Option<String>, Option<String>)> = tx
            .query_row(
                "SELECT vendor_id, vendor_link FROM contracts WHERE document_id = ?1 AND org_id = ?2",
                params![id.to_string(), org],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        // One rule for a local run and a synced link: a person's link is never replaced by an automatic one.
        let current_kind = existing.as_ref().and_then(|(_, l)| l.as_deref().and_then(LinkKind::parse));
        let (vendor_id, link, matched): (Option<String>, Option<&str>, &str) = if !automatic_may_replace(current_kind) {
            (existing.as_ref().and_then(|(v, _)| v.clone()), Some("person"), "linked")
        } else {
            match vendor {
                VendorDecision::None => (None, None, "none"),
                VendorDecision::Match { name, normalized, create } => {
                    // A name or alias of exactly one live vendor links; two or more are duplicates for a person.
                    let found = crate::vendors::matching_in(&tx, &org, normalized)?;
                    match (found.as_slice(), create) {
                        ([v], _) => (Some(v.clone()), Some("auto"), "linked"),
                        ([_, _, ..], _) => (None, None, "needs_review"),
                        // The same id on every desktop for the same counterparty, so two desktops that finalize
                        // before they sync create one vendor. A record under that id that was renamed or merged
                        // since is linked as it is now (a merged one leads to the vendor it was merged into).
                        ([], true) => match crate::vendors::live_successor_in(
                            &tx,
                            &org,
                            &crate::vendor_sync::vendor_id_for(&org, normalized),
                        )? {
                            Some(v) => (Some(v), Some("auto"), "linked"),
                            None => {
                                let v = crate::vendor_sync::vendor_id_for(&org, normalized);
                                tx.execute(
                                    "INSERT INTO vendors (id, org_id, name, normalized_name, created_by, created_at)
                                 VALUES (?1, ?2, ?3, ?4, 'pipeline', ?5)
                                 ON CONFLICT (id) DO UPDATE SET name = excluded.name, deleted_at = NULL",
                                    params![v, org, name, normalized, at],
                                )?;
                                crate::vendors::derive_keys_in(&tx, &v)?;
                                crate::vendor_sync::vendor_changed_in(
                                    self.store,
                                    &tx,
                                    &org,
                                    &v,
                                    crate::vendor_sync::ALL_FIELDS,
                                )?;
                                append_audit(
                                    &tx,
                                    scope,
                                    &at,
                                    "vendor.create",
                                    "vendor",
                                    Some(&v),
                                    &serde_json::json!({"name": name, "from_document": id.to_string()}),
                                )?;
                                (Some(v), Some("auto"), "created")
                            }
                        },
                        ([], false) => (None, None, "needs_review"),
                    }
                }
            }
        };
        tx.execute(
            "INSERT INTO contracts (document_id, org_id, type_id, counterparty, extractions_json, vendor_id, vendor_link,
                 vendor_match, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (document_id) DO UPDATE SET
                 type_id = CASE WHEN finalized_at IS NULL THEN excluded.type_id ELSE type_id END,
                 counterparty = CASE WHEN finalized_at IS NULL THEN excluded.counterparty ELSE counterparty END,
                 extractions_json = CASE WHEN finalized_at IS NULL THEN excluded.extractions_json
                                         ELSE extractions_json END,
                 vendor_id = excluded.vendor_id, vendor_link = excluded.vendor_link,
                 vendor_match = excluded.vendor_match, updated_at = excluded.updated_at",
            params![id.to_string(), org, type_id, counterparty, extractions.to_string(), vendor_id, link, matched, at],
        )?;
        let before = existing.as_ref().map(|(v, l)| (v.as_deref(), l.as_deref()));
        if before.unwrap_or((None, None)) != (vendor_id.as_deref(), link) {
            let synced = vendor_id.as_deref().zip(link.and_then(LinkKind::parse));
            crate::contract_sync::linked_in(self.store, &tx, scope, id, synced)?;
        }
        // A finalized contract keeps the fields a person finalized (here or on another desktop): a later pipeline
        // run (a document received by sync is read after its finalize arrived) never replaces them.
        let kept: String = tx.query_row(
            "SELECT extractions_json FROM contracts WHERE document_id = ?1 AND org_id = ?2",
            params![id.to_string(), org],
            |r| r.get(0),
        )?;
        crate::contracts::derive_in(&tx, &id.to_string(), &kept)?;
        tx.commit()?;
        self.contract(scope, id)?.ok_or(StoreError::NotFound)
    }

    /// A person links the contract to a vendor of the organization; later pipeline runs keep this link.
    pub fn link_vendor(&self, scope: &OrgScope, id: DocumentId, vendor_id: &str) -> Result<(), StoreError> {
        scope.require_document_editor()?;
        self.check_document(scope, id)?;
        let at = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        link_vendor_in(self.store, &tx, scope, &at, id, vendor_id)?;
        tx.commit()?;
        Ok(())
    }

    /// Creates a vendor by hand (a person's action).
    pub fn create_vendor(&self, scope: &OrgScope, name: &str) -> Result<Vendor, StoreError> {
        scope.require_document_editor()?;
        let at = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        let vendor = create_vendor_in(self.store, &tx, scope, &at, name)?;
        tx.commit()?;
        Ok(vendor)
    }

    /// The organization's vendors, by name.
    pub fn vendors(&self, scope: &OrgScope) -> Result<Vec<Vendor>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT id, name FROM vendors WHERE org_id = ?1 AND deleted_at IS NULL AND status <> 'merged'
             ORDER BY normalized_name",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| Ok(Vendor { id: r.get(0)?, name: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The contract record of a document, if finalize has written one.
    pub fn contract(&self, scope: &OrgScope, id: DocumentId) -> Result<Option<ContractRow>, StoreError> {
        self.check_document(scope, id)?;
        self.store
            .conn()
            .query_row(
                "SELECT c.type_id, c.counterparty, c.extractions_json, c.vendor_id, v.name, c.vendor_link,
                        c.vendor_match, c.finalized_by, c.finalized_at
                 FROM contracts c LEFT JOIN vendors v ON v.id = c.vendor_id AND v.org_id = c.org_id
                 WHERE c.document_id = ?1 AND c.org_id = ?2",
                params![id.to_string(), scope.org().to_string()],
                |r| {
                    let vendor_id: Option<String> = r.get(3)?;
                    let vendor_name: Option<String> = r.get(4)?;
                    let finalized_by: Option<String> = r.get(7)?;
                    Ok(ContractRow {
                        document: id,
                        type_id: r.get(0)?,
                        counterparty: r.get(1)?,
                        extractions: serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or(Value::Null),
                        vendor: vendor_id.zip(vendor_name).map(|(id, name)| Vendor { id, name }),
                        vendor_link: r.get(5)?,
                        vendor_match: r.get(6)?,
                        finalized_by: finalized_by.and_then(|u| u.parse().ok()),
                        finalized_at: from_sql_opt(r.get(8)?)?,
                    })
                },
            )
            .optional()
            .map_err(StoreError::from)
    }

    /// A person finalizes the review, in one transaction: the vendor they chose (kept, an existing one, or a new one
    /// by name), the contract's fields and counterparty as the review left them, and the stamp (the session's user,
    /// the store's clock), with audit entries. A finalized review is not finalized again.
    pub fn finalize(&self, scope: &OrgScope, id: DocumentId, f: &Finalization<'_>) -> Result<(), StoreError> {
        scope.require_document_editor()?;
        self.check_document(scope, id)?;
        let at = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        let stamped: Option<Option<String>> = tx
            .query_row(
                "SELECT finalized_at FROM contracts WHERE document_id = ?1 AND org_id = ?2",
                params![id.to_string(), scope.org().to_string()],
                |r| r.get(0),
            )
            .optional()?;
        match stamped {
            None => return Err(StoreError::NotFound),
            Some(Some(_)) => {
                return Err(StoreError::Conflict(
                    "this review is already finalized; reopen it first to change it".into(),
                ));
            }
            Some(None) => {}
        }
        match f.vendor {
            FinalVendor::Keep => {}
            FinalVendor::Existing(vendor) => link_vendor_in(self.store, &tx, scope, &at, id, vendor)?,
            FinalVendor::New(name) => {
                let vendor = create_vendor_in(self.store, &tx, scope, &at, name)?;
                link_vendor_in(self.store, &tx, scope, &at, id, &vendor.id)?;
            }
        }
        tx.execute(
            "UPDATE contracts SET counterparty = ?1, extractions_json = ?2, finalized_by = ?3, finalized_at = ?4,
                 updated_at = ?4 WHERE document_id = ?5 AND org_id = ?6",
            params![
                f.counterparty,
                f.extractions.to_string(),
                scope.user().to_string(),
                at,
                id.to_string(),
                scope.org().to_string()
            ],
        )?;
        crate::contracts::derive_in(&tx, &id.to_string(), &f.extractions.to_string())?;
        crate::contracts::stamp_outcome_in(&tx, scope, id, f.outcome)?;
        append_audit(&tx, scope, &at, "review.finalize", "document", Some(&id.to_string()), &Value::Null)?;
        crate::contract_sync::finalized_in(self.store, &tx, scope, id)?;
        tx.commit()?;
        Ok(())
    }

    /// A person reopens a finalized review so its items can be changed again; the reason is kept in the audit log
    /// with who and when.
    pub fn reopen(&self, scope: &OrgScope, id: DocumentId, reason: &str) -> Result<(), StoreError> {
        scope.require_document_editor()?;
        self.check_document(scope, id)?;
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(StoreError::Invalid("say why the review is reopened".into()));
        }
        let at = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        let changed = tx.execute(
            "UPDATE contracts SET finalized_by = NULL, finalized_at = NULL, updated_at = ?1
             WHERE document_id = ?2 AND org_id = ?3 AND finalized_at IS NOT NULL",
            params![at, id.to_string(), scope.org().to_string()],
        )?;
        if changed == 0 {
            return Err(StoreError::Conflict("this review is not finalized, so there is nothing to reopen".into()));
        }
        crate::contracts::reminder_in(&tx, &id.to_string())?;
        append_audit(
            &tx,
            scope,
            &at,
            "review.reopen",
            "document",
            Some(&id.to_string()),
            &serde_json::json!({ "reason": reason }),
        )?;
        crate::contract_sync::reopened_in(self.store, &tx, scope, id)?;
        tx.commit()?;
        Ok(())
    }
}

/// The vendor a person chose at finalize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalVendor<'a> {
    /// Keep the contract's link as it is (none, or the pipeline's).
    Keep,
    /// A vendor of the organization, by id.
    Existing(&'a str),
    /// A new vendor, by name.
    New(&'a str),
}

/// What a person's finalize writes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finalization<'a> {
    pub vendor: FinalVendor<'a>,
    pub counterparty: Option<&'a str>,
    /// The contract's fields as the review left them (`pactwise_domain::Extractions` as JSON).
    pub extractions: &'a Value,
    /// The checklist's outcome with people's corrections applied (the contract's risk in the Contracts area).
    pub outcome: crate::ContractOutcome,
}

/// Creates a vendor by a person's hand (refused when a live vendor has the name or alias: choose it). Its id is the
/// organization's for its normalised name (`vendor_sync::new_vendor_id_in`), so the same vendor made on two desktops
/// is one; a deleted one comes back.
fn create_vendor_in(
    store: &crate::Store,
    tx: &rusqlite::Transaction<'_>,
    scope: &OrgScope,
    at: &str,
    name: &str,
) -> Result<Vendor, StoreError> {
    let normalized = normalized_vendor_name(name);
    let org = scope.org().to_string();
    if !crate::vendors::matching_in(tx, &org, &normalized)?.is_empty() {
        return Err(StoreError::Conflict(format!("the organization already has a vendor called {name:?}; choose it")));
    }
    let id = crate::vendor_sync::new_vendor_id_in(tx, &org, &normalized)?;
    tx.execute(
        "INSERT INTO vendors (id, org_id, name, normalized_name, created_by, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, deleted_at = NULL WHERE deleted_at IS NOT NULL",
        params![id, org, name, normalized, scope.user().to_string(), at],
    )?;
    crate::vendors::derive_keys_in(tx, &id)?;
    append_audit(tx, scope, at, "vendor.create", "vendor", Some(&id), &serde_json::json!({"name": name}))?;
    crate::vendor_sync::vendor_changed_in(store, tx, &org, &id, crate::vendor_sync::ALL_FIELDS)?;
    Ok(Vendor { id, name: name.to_owned() })
}

fn link_vendor_in(
    store: &crate::Store,
    tx: &rusqlite::Transaction<'_>,
    scope: &OrgScope,
    at: &str,
    id: DocumentId,
    vendor_id: &str,
) -> Result<(), StoreError> {
    let exists: Option<i64> = tx
        .query_row(
            "SELECT 1 FROM vendors WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL AND status <> 'merged'",
            params![vendor_id, scope.org().to_string()],
            |r| r.get(0),
        )
        .optional()?;
    if exists.is_none() {
        return Err(StoreError::NotFound);
    }
    let changed = tx.execute(
        "UPDATE contracts SET vendor_id = ?1, vendor_link = 'person', vendor_match = 'linked', updated_at = ?2
         WHERE document_id = ?3 AND org_id = ?4",
        params![vendor_id, at, id.to_string(), scope.org().to_string()],
    )?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    append_audit(
        tx,
        scope,
        at,
        "contract.link_vendor",
        "document",
        Some(&id.to_string()),
        &serde_json::json!({"vendor": vendor_id}),
    )?;
    crate::contract_sync::linked_in(store, tx, scope, id, Some((vendor_id, LinkKind::Person)))?;
    Ok(())
}

/// Records a person's confirmation or correction with its audit entry (and its sync change) inside the caller's
/// transaction; `extra_audit` (when not null) is kept in the audit entry as `brought_over` (a correction brought
/// over from another organization of this install). The caller checked the role and the document.
pub(crate) fn add_correction_in(
    store: &crate::Store,
    tx: &rusqlite::Transaction<'_>,
    scope: &OrgScope,
    id: DocumentId,
    correction: &NewCorrection,
    extra_audit: &Value,
) -> Result<Correction, StoreError> {
    let now = store.clock().now();
    let at = to_sql(now);
    let row_id = uuid::Uuid::now_v7().to_string();
    let finalized: Option<Option<String>> = tx
        .query_row(
            "SELECT finalized_at FROM contracts WHERE document_id = ?1 AND org_id = ?2",
            params![id.to_string(), scope.org().to_string()],
            |r| r.get(0),
        )
        .optional()?;
    if matches!(finalized, Some(Some(_))) {
        return Err(StoreError::Conflict("this review is finalized; reopen it to change an item".into()));
    }
    tx.execute(
        "INSERT INTO review_corrections (id, org_id, document_id, item_id, kind, status, quote_text, quote_page,
             note, user_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            row_id,
            scope.org().to_string(),
            id.to_string(),
            correction.item_id,
            correction.kind,
            correction.status,
            correction.quote.as_ref().map(|q| q.0.clone()),
            correction.quote.as_ref().map(|q| q.1),
            correction.note,
            scope.user().to_string(),
            at,
        ],
    )?;
    let action = format!("review.{}", correction.kind);
    let mut details = serde_json::json!({"item": correction.item_id, "status": correction.status,
        "quote_page": correction.quote.as_ref().map(|q| q.1), "note": correction.note});
    if !correction.acknowledged.is_empty() {
        details["kept_despite"] = serde_json::json!(correction.acknowledged);
    }
    if !extra_audit.is_null() {
        details["brought_over"] = extra_audit.clone();
    }
    append_audit(tx, scope, &at, &action, "document", Some(&id.to_string()), &details)?;
    // An append-only event (`pactwise_sync::SyncedModel::ReviewCorrection`) with its audit entry's facts.
    emit_in(store, tx, scope, "review_correction", &row_id, |tx| {
        let user_name: Option<String> = tx
            .query_row("SELECT display_name FROM users WHERE id = ?1", [scope.user().to_string()], |r| r.get(0))
            .optional()?;
        Ok(ChangePayload::Event(serde_json::json!({
            "document_id": id.to_string(),
            "item_id": correction.item_id,
            "kind": correction.kind,
            "status": correction.status,
            "quote_text": correction.quote.as_ref().map(|q| q.0.clone()),
            "quote_page": correction.quote.as_ref().map(|q| q.1),
            "note": correction.note,
            "user_name": user_name,
            "created_at": at,
            "audit": {"action": action, "details": details},
        })))
    })?;
    Ok(Correction {
        id: row_id,
        item_id: correction.item_id.clone(),
        kind: correction.kind.clone(),
        status: correction.status.clone(),
        quote: correction.quote.clone(),
        note: correction.note.clone(),
        user: scope.user(),
        at: now,
    })
}
