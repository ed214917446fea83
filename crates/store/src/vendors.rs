//! Vendor records (the Vendors area): name, aliases, identifiers and status, one row per vendor (migration 0017);
//! the contracts and documents linked to each; duplicate groups and the merge a person confirms (the merged-away
//! record is kept as merged, contracts' links follow it, one transaction, audited); status changes by a person and by
//! an onboarding run's decision. Every rule — the normalised name, duplicates, what a merge keeps, which status may
//! be set — is `pactwise_rules::vendors`; this module only reads and writes, scoped to the session's organization.

use crate::audit::{append_audit, append_platform_audit};
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, PlatformCredential, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::{DocumentId, OrgId, RunId, VendorStatus};
use pactwise_rules::vendors::{self as rule, DuplicateGroup, Identifier, VendorFacts};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

/// The version of the rule that wrote `normalized_name` and `match_keys`; older rows are derived again at open.
pub const KEYS_VERSION: i64 = 1;

pub struct Vendors<'s> {
    store: &'s Store,
}

/// A vendor as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct VendorRecord {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub identifiers: Vec<Identifier>,
    pub status: VendorStatus,
    /// The vendor this record was merged into (only when `status` is merged).
    pub merged_into: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: Option<DateTime<Utc>>,
}

/// A vendor in the list, with how many contracts (finalized) and documents (any linked review) it has.
#[derive(Debug, Clone, PartialEq)]
pub struct VendorListRow {
    pub record: VendorRecord,
    pub contracts: u32,
    pub documents: u32,
}

/// A document linked to a vendor.
#[derive(Debug, Clone, PartialEq)]
pub struct VendorDocument {
    pub document: DocumentId,
    pub name: String,
    pub type_id: String,
    /// Finalized: a contract of the repository; else a review in progress.
    pub finalized: bool,
    /// Who linked it: a person, or the pipeline's match.
    pub linked_by_person: bool,
    pub expires_on: Option<String>,
}

/// A new vendor, as a person enters it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewVendor {
    pub name: String,
    pub aliases: Vec<String>,
    /// (kind, value) as typed; checked by `rules::vendors::check_identifier`.
    pub identifiers: Vec<(String, String)>,
}

/// A person's change of a vendor's fields; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VendorEdit {
    pub name: Option<String>,
    pub aliases: Option<Vec<String>>,
    pub identifiers: Option<Vec<(String, String)>>,
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeOutcome {
    pub kept: VendorRecord,
    pub merged: VendorRecord,
    /// Contracts whose vendor link moved to the kept vendor.
    pub contracts_moved: u32,
}

const COLUMNS: &str = "id, name, aliases_json, identifiers_json, status, merged_into, created_at, updated_at";

fn read_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<VendorRecord> {
    let status: String = r.get(4)?;
    Ok(VendorRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        aliases: serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or_default(),
        identifiers: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or_default(),
        status: status.parse().unwrap_or(VendorStatus::Prospective),
        merged_into: r.get(5)?,
        created_at: from_sql(&r.get::<_, String>(6)?)?,
        updated_at: from_sql_opt(r.get(7)?)?,
    })
}

fn facts(v: &VendorRecord) -> VendorFacts {
    VendorFacts {
        id: v.id.clone(),
        name: v.name.clone(),
        aliases: v.aliases.clone(),
        identifiers: v.identifiers.clone(),
        status: v.status,
    }
}

fn get_in(conn: &Connection, org: &str, id: &str) -> Result<VendorRecord, StoreError> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM vendors WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL"))?
        .query_row(params![id, org], read_record)
        .optional()?
        .ok_or(StoreError::NotFound)
}

/// The match keys of a name and its aliases: '|'-framed normalised forms.
fn match_keys(name: &str, aliases: &[String]) -> String {
    let mut keys: Vec<String> = std::iter::once(name)
        .chain(aliases.iter().map(String::as_str))
        .map(rule::normalized_name)
        .filter(|k| !k.is_empty())
        .collect();
    keys.dedup();
    format!("|{}|", keys.join("|"))
}

/// Writes the row's normalised name and match keys from its name and aliases (inside the caller's transaction).
pub(crate) fn derive_keys_in(conn: &Connection, id: &str) -> Result<(), StoreError> {
    let (name, aliases): (String, String) =
        conn.query_row("SELECT name, aliases_json FROM vendors WHERE id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let aliases: Vec<String> = serde_json::from_str(&aliases).unwrap_or_default();
    conn.prepare_cached(
        "UPDATE vendors SET normalized_name = ?1, match_keys = ?2, normalized_version = ?3 WHERE id = ?4",
    )?
    .execute(params![rule::normalized_name(&name), match_keys(&name, &aliases), KEYS_VERSION, id])?;
    Ok(())
}

/// Derives the keys of rows written before this version of the rule (at open, after the migrations).
pub(crate) fn refresh_keys(conn: &mut Connection) -> Result<(), StoreError> {
    let stale: Vec<String> = conn
        .prepare("SELECT id FROM vendors WHERE normalized_version < ?1")?
        .query_map([KEYS_VERSION], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if stale.is_empty() {
        return Ok(());
    }
    let tx = conn.transaction()?;
    for id in &stale {
        derive_keys_in(&tx, id)?;
    }
    tx.commit()?;
    tracing::info!(vendors = stale.len(), "derived the match keys of vendors written by an older version");
    Ok(())
}

/// The live (not merged) vendors of `org` whose name or an alias normalises to `normalized`.
pub(crate) fn matching_in(conn: &Connection, org: &str, normalized: &str) -> Result<Vec<String>, StoreError> {
    if normalized.is_empty() {
        return Ok(Vec::new());
    }
    let rows = conn
        .prepare_cached(
            "SELECT id FROM vendors WHERE org_id = ?1 AND deleted_at IS NULL AND status <> 'merged'
               AND instr(match_keys, '|' || ?2 || '|') > 0 ORDER BY id",
        )?
        .query_map(params![org, normalized], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The live vendor a record of `org` stands for now: itself, or the vendor it was merged into (following a chain
/// of merges). `None` when there is no such record or it was deleted.
pub(crate) fn live_successor_in(conn: &Connection, org: &str, id: &str) -> Result<Option<String>, StoreError> {
    let mut id = id.to_owned();
    for _ in 0..16 {
        let row: Option<(String, Option<String>)> = conn
            .prepare_cached(
                "SELECT status, merged_into FROM vendors WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
            )?
            .query_row(params![id, org], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        match row {
            None => return Ok(None),
            Some((status, Some(next))) if status == "merged" => id = next,
            Some(_) => return Ok(Some(id)),
        }
    }
    Err(StoreError::Corrupt("vendor merge chain does not end".into()))
}

fn clean_name(name: &str) -> Result<String, StoreError> {
    let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.is_empty() || name.chars().count() > 200 {
        return Err(StoreError::Invalid("a vendor needs a name of at most 200 characters".into()));
    }
    Ok(name)
}

fn clean_aliases(name: &str, aliases: &[String]) -> Result<Vec<String>, StoreError> {
    let mut seen = std::collections::BTreeSet::from([rule::normalized_name(name)]);
    let mut out = Vec::new();
    for a in aliases {
        let a = a.split_whitespace().collect::<Vec<_>>().join(" ");
        if a.is_empty() {
            continue;
        }
        if a.chars().count() > 200 {
            return Err(StoreError::Invalid("an alias is at most 200 characters".into()));
        }
        if seen.insert(rule::normalized_name(&a)) {
            out.push(a);
        }
    }
    if out.len() > 50 {
        return Err(StoreError::Invalid("a vendor has at most 50 aliases".into()));
    }
    Ok(out)
}

fn clean_identifiers(ids: &[(String, String)]) -> Result<Vec<Identifier>, StoreError> {
    let mut out: Vec<Identifier> = Vec::new();
    for (kind, value) in ids {
        let id = rule::check_identifier(kind, value).map_err(StoreError::Invalid)?;
        if !out.iter().any(|o| {
            o.kind == id.kind && rule::normalized_identifier(&o.value) == rule::normalized_identifier(&id.value)
        }) {
            out.push(id);
        }
    }
    if out.len() > 20 {
        return Err(StoreError::Invalid("a vendor has at most 20 identifiers".into()));
    }
    Ok(out)
}

fn set_status_in(conn: &Connection, id: &str, status: VendorStatus, at: &str) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE vendors SET status = ?1, updated_at = ?2 WHERE id = ?3")?.execute(params![
        status.as_str(),
        at,
        id
    ])?;
    Ok(())
}

impl<'s> Vendors<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Vendors { store }
    }

    /// The organization's vendors by name, with their contract and document counts; merged records only when
    /// `include_merged`.
    pub fn list(&self, scope: &OrgScope, include_merged: bool) -> Result<Vec<VendorListRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT v.id, v.name, v.aliases_json, v.identifiers_json, v.status, v.merged_into, v.created_at,
                    v.updated_at,
                    (SELECT count(*) FROM contracts c JOIN documents d ON d.id = c.document_id AND d.deleted_at IS NULL
                      WHERE c.org_id = v.org_id AND c.vendor_id = v.id AND c.finalized_at IS NOT NULL),
                    (SELECT count(*) FROM contracts c JOIN documents d ON d.id = c.document_id AND d.deleted_at IS NULL
                      WHERE c.org_id = v.org_id AND c.vendor_id = v.id)
             FROM vendors v WHERE v.org_id = ?1 AND v.deleted_at IS NULL AND (?2 OR v.status <> 'merged')
             ORDER BY v.normalized_name, v.id",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), include_merged], |r| {
            Ok(VendorListRow { record: read_record(r)?, contracts: r.get(8)?, documents: r.get(9)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One vendor of the organization (another organization's id answers like a missing one).
    pub fn get(&self, scope: &OrgScope, id: &str) -> Result<VendorRecord, StoreError> {
        get_in(self.store.conn(), &scope.org().to_string(), id)
    }

    /// The documents linked to a vendor (finalized contracts first, then by name); deleted documents left out.
    pub fn documents(&self, scope: &OrgScope, id: &str) -> Result<Vec<VendorDocument>, StoreError> {
        self.get(scope, id)?;
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT c.document_id, d.name, c.type_id, c.finalized_at IS NOT NULL, c.vendor_link = 'person', c.expires_on
             FROM contracts c JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id AND d.deleted_at IS NULL
             WHERE c.org_id = ?1 AND c.vendor_id = ?2
             ORDER BY c.finalized_at IS NULL, d.name, c.document_id",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), id], |r| {
            let doc: String = r.get(0)?;
            Ok(VendorDocument {
                document: doc.parse().map_err(|_| {
                    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, "document id".into())
                })?,
                name: r.get(1)?,
                type_id: r.get(2)?,
                finalized: r.get(3)?,
                linked_by_person: r.get(4)?,
                expires_on: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A person adds a vendor (prospective). A name another vendor already has is allowed: it shows as a duplicate
    /// for a person to merge.
    pub fn create(&self, scope: &OrgScope, new: &NewVendor) -> Result<VendorRecord, StoreError> {
        scope.require_document_editor()?;
        let name = clean_name(&new.name)?;
        let aliases = clean_aliases(&name, &new.aliases)?;
        let identifiers = clean_identifiers(&new.identifiers)?;
        let at = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        let id = crate::vendor_sync::new_vendor_id_in(&tx, &scope.org().to_string(), &rule::normalized_name(&name))?;
        tx.execute(
            "INSERT INTO vendors (id, org_id, name, normalized_name, created_by, created_at, aliases_json,
                 identifiers_json, updated_at)
             VALUES (?1, ?2, ?3, '', ?4, ?5, ?6, ?7, ?5)",
            params![
                id,
                scope.org().to_string(),
                name,
                scope.user().to_string(),
                at,
                serde_json::to_string(&aliases).unwrap_or_else(|_| "[]".into()),
                serde_json::to_string(&identifiers).unwrap_or_else(|_| "[]".into()),
            ],
        )?;
        derive_keys_in(&tx, &id)?;
        append_audit(
            &tx,
            scope,
            &at,
            "vendor.create",
            "vendor",
            Some(&id),
            &json!({ "name": name, "aliases": aliases, "identifiers": identifiers }),
        )?;
        crate::vendor_sync::vendor_changed_in(
            self.store,
            &tx,
            &scope.org().to_string(),
            &id,
            crate::vendor_sync::ALL_FIELDS,
        )?;
        tx.commit()?;
        self.get(scope, &id)
    }

    /// A person changes a vendor's name, aliases or identifiers (a merged record is not edited).
    pub fn edit(&self, scope: &OrgScope, id: &str, edit: &VendorEdit) -> Result<VendorRecord, StoreError> {
        scope.require_document_editor()?;
        let org = scope.org().to_string();
        let tx = self.store.conn().unchecked_transaction()?;
        let before = get_in(&tx, &org, id)?;
        if before.status == VendorStatus::Merged {
            return Err(StoreError::Conflict(
                "this vendor was merged into another; change the vendor it was merged into".into(),
            ));
        }
        let name = match &edit.name {
            Some(n) => clean_name(n)?,
            None => before.name.clone(),
        };
        let aliases = clean_aliases(&name, edit.aliases.as_ref().unwrap_or(&before.aliases))?;
        let identifiers = match &edit.identifiers {
            Some(ids) => clean_identifiers(ids)?,
            None => before.identifiers.clone(),
        };
        let at = to_sql(self.store.clock().now());
        tx.execute(
            "UPDATE vendors SET name = ?1, aliases_json = ?2, identifiers_json = ?3, updated_at = ?4
             WHERE id = ?5 AND org_id = ?6",
            params![
                name,
                serde_json::to_string(&aliases).unwrap_or_else(|_| "[]".into()),
                serde_json::to_string(&identifiers).unwrap_or_else(|_| "[]".into()),
                at,
                id,
                org
            ],
        )?;
        derive_keys_in(&tx, id)?;
        append_audit(
            &tx,
            scope,
            &at,
            "vendor.edit",
            "vendor",
            Some(id),
            &json!({
                "before": { "name": before.name, "aliases": before.aliases, "identifiers": before.identifiers },
                "after": { "name": name, "aliases": aliases, "identifiers": identifiers },
            }),
        )?;
        crate::vendor_sync::vendor_changed_in(self.store, &tx, &org, id, &["name", "aliases", "identifiers"])?;
        tx.commit()?;
        self.get(scope, id)
    }

    /// A person sets a vendor's status (`rules::vendors::check_status_change`), with a reason kept in the audit log.
    pub fn set_status(
        &self,
        scope: &OrgScope,
        id: &str,
        status: VendorStatus,
        reason: &str,
    ) -> Result<VendorRecord, StoreError> {
        scope.require_document_editor()?;
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(StoreError::Invalid("say why the vendor's status changes".into()));
        }
        let tx = self.store.conn().unchecked_transaction()?;
        let before = get_in(&tx, &scope.org().to_string(), id)?;
        rule::check_status_change(before.status, status).map_err(StoreError::Conflict)?;
        let at = to_sql(self.store.clock().now());
        set_status_in(&tx, id, status, &at)?;
        append_audit(
            &tx,
            scope,
            &at,
            "vendor.status",
            "vendor",
            Some(id),
            &json!({ "from": before.status, "to": status, "reason": reason }),
        )?;
        crate::vendor_sync::vendor_changed_in(self.store, &tx, &scope.org().to_string(), id, &["status"])?;
        tx.commit()?;
        self.get(scope, id)
    }

    /// The groups of the organization's vendors that look like one (`rules::vendors::duplicate_groups`).
    pub fn duplicates(&self, scope: &OrgScope) -> Result<Vec<DuplicateGroup>, StoreError> {
        let all: Vec<VendorFacts> = self.list(scope, false)?.iter().map(|r| facts(&r.record)).collect();
        Ok(rule::duplicate_groups(&all))
    }

    /// A person confirms that `away` is the same vendor as `keep`: in one transaction `keep` takes the merged names,
    /// identifiers and status (`rules::vendors::merge`), every contract linked to `away` (and records merged into it
    /// earlier) now points at `keep`, and `away` is kept as merged into `keep`; audit entries on both. Both must be
    /// this organization's: another organization's id answers like a missing one.
    pub fn merge(&self, scope: &OrgScope, keep: &str, away: &str) -> Result<MergeOutcome, StoreError> {
        scope.require_document_editor()?;
        let org = scope.org().to_string();
        let tx = self.store.conn().unchecked_transaction()?;
        let k = get_in(&tx, &org, keep)?;
        let a = get_in(&tx, &org, away)?;
        let merged = rule::merge(&facts(&k), &facts(&a)).map_err(StoreError::Conflict)?;
        let at = to_sql(self.store.clock().now());
        tx.execute(
            "UPDATE vendors SET aliases_json = ?1, identifiers_json = ?2, status = ?3, updated_at = ?4
             WHERE id = ?5 AND org_id = ?6",
            params![
                serde_json::to_string(&merged.aliases).unwrap_or_else(|_| "[]".into()),
                serde_json::to_string(&merged.identifiers).unwrap_or_else(|_| "[]".into()),
                merged.status.as_str(),
                at,
                keep,
                org
            ],
        )?;
        derive_keys_in(&tx, keep)?;
        tx.execute(
            "UPDATE vendors SET status = 'merged', merged_into = ?1, updated_at = ?2 WHERE id = ?3 AND org_id = ?4",
            params![keep, at, away, org],
        )?;
        tx.execute(
            "UPDATE vendors SET merged_into = ?1, updated_at = ?2 WHERE merged_into = ?3 AND org_id = ?4",
            params![keep, at, away, org],
        )?;
        let moved = tx.execute(
            "UPDATE contracts SET vendor_id = ?1, updated_at = ?2 WHERE org_id = ?3 AND vendor_id = ?4",
            params![keep, at, org, away],
        )? as u32;
        append_audit(
            &tx,
            scope,
            &at,
            "vendor.merge",
            "vendor",
            Some(keep),
            &json!({ "merged": away, "merged_name": a.name, "contracts_moved": moved,
                     "status": { "before": k.status, "after": merged.status } }),
        )?;
        append_audit(
            &tx,
            scope,
            &at,
            "vendor.merged_into",
            "vendor",
            Some(away),
            &json!({ "into": keep, "into_name": k.name, "status_before": a.status }),
        )?;
        // Other desktops move their own links when the merged record's status arrives.
        crate::vendor_sync::vendor_changed_in(self.store, &tx, &org, keep, &["aliases", "identifiers", "status"])?;
        crate::vendor_sync::vendor_changed_in(self.store, &tx, &org, away, &["status"])?;
        tx.commit()?;
        Ok(MergeOutcome { kept: self.get(scope, keep)?, merged: self.get(scope, away)?, contracts_moved: moved })
    }

    /// An onboarding run starts for this vendor: its status becomes onboarding
    /// (`rules::vendors::check_start_onboarding`), audited as the person who started it.
    pub fn begin_onboarding(&self, scope: &OrgScope, id: &str) -> Result<VendorRecord, StoreError> {
        scope.require_document_editor()?;
        let tx = self.store.conn().unchecked_transaction()?;
        let v = get_in(&tx, &scope.org().to_string(), id)?;
        rule::check_start_onboarding(v.status).map_err(StoreError::Conflict)?;
        let at = to_sql(self.store.clock().now());
        set_status_in(&tx, id, VendorStatus::Onboarding, &at)?;
        append_audit(
            &tx,
            scope,
            &at,
            "vendor.status",
            "vendor",
            Some(id),
            &json!({ "from": v.status, "to": VendorStatus::Onboarding, "reason": "onboarding started" }),
        )?;
        crate::vendor_sync::vendor_changed_in(self.store, &tx, &scope.org().to_string(), id, &["status"])?;
        tx.commit()?;
        self.get(scope, id)
    }

    /// An onboarding run's decision moves the vendor (the run's step `register` or `declined`): active when
    /// approved, blocked when declined (`rules::vendors::status_after_onboarding`). A run started from a record
    /// moves that record, following a merge to the vendor it was merged into; a run started by name only registers
    /// a new record (active) when approved, and writes nothing when declined (`Ok(None)`). Idempotent per run:
    /// writing the outcome again for the same run changes nothing and audits nothing. The organization is the
    /// run's, given by the platform worker that drives it.
    pub fn onboarding_decided_for_worker(
        &self,
        _credential: &PlatformCredential,
        org: OrgId,
        vendor: OnboardedVendor<'_>,
        run: RunId,
        approved: bool,
    ) -> Result<Option<VendorRecord>, StoreError> {
        let org = org.to_string();
        // A savepoint, not a transaction: the step may run inside the commit of the decision that resumed it, and
        // then this write commits with it.
        let conn = self.store.conn();
        conn.execute_batch("SAVEPOINT vendor_onboarding")?;
        match self.onboarding_decided_in(conn, &org, vendor, run, approved) {
            Ok(id) => {
                conn.execute_batch("RELEASE vendor_onboarding")?;
                id.map(|id| get_in(conn, &org, &id)).transpose()
            }
            Err(e) => {
                conn.execute_batch("ROLLBACK TO vendor_onboarding; RELEASE vendor_onboarding")?;
                Err(e)
            }
        }
    }

    fn onboarding_decided_in(
        &self,
        tx: &Connection,
        org: &str,
        vendor: OnboardedVendor<'_>,
        run: RunId,
        approved: bool,
    ) -> Result<Option<String>, StoreError> {
        let action = "vendor.onboarding_decided";
        let done: Option<String> = tx
            .query_row(
                "SELECT entity_id FROM audit_log WHERE org_id = ?1 AND action = ?2
                   AND json_extract(details, '$.run') = ?3",
                params![org, action, run.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        if done.is_some() {
            return Ok(done);
        }
        let at = to_sql(self.store.clock().now());
        let to = rule::status_after_onboarding(approved);
        let (id, from) = match vendor {
            OnboardedVendor::Record(id) => {
                let live = live_successor_in(tx, org, id)?.ok_or(StoreError::NotFound)?;
                let v = get_in(tx, org, &live)?;
                set_status_in(tx, &v.id, to, &at)?;
                crate::vendor_sync::vendor_changed_in(self.store, tx, org, &v.id, &["status"])?;
                (v.id, Some(v.status))
            }
            OnboardedVendor::New { .. } if !approved => return Ok(None),
            OnboardedVendor::New { name, tax_id } => {
                let name = clean_name(name)?;
                let identifiers = match tax_id.map(str::trim).filter(|t| !t.is_empty()) {
                    Some(t) => clean_identifiers(&[("tax_id".to_string(), t.to_string())])?,
                    None => Vec::new(),
                };
                let id = crate::vendor_sync::new_vendor_id_in(tx, org, &rule::normalized_name(&name))?;
                tx.execute(
                    "INSERT INTO vendors (id, org_id, name, normalized_name, created_by, created_at, identifiers_json,
                         status, updated_at)
                     VALUES (?1, ?2, ?3, '', 'workflow', ?4, ?5, ?6, ?4)",
                    params![
                        id,
                        org,
                        name,
                        at,
                        serde_json::to_string(&identifiers).unwrap_or_else(|_| "[]".into()),
                        to.as_str()
                    ],
                )?;
                derive_keys_in(tx, &id)?;
                crate::vendor_sync::vendor_changed_in(self.store, tx, org, &id, crate::vendor_sync::ALL_FIELDS)?;
                (id, None)
            }
        };
        append_platform_audit(
            tx,
            org,
            &at,
            action,
            "vendor",
            &id,
            &json!({ "run": run.to_string(), "from": from, "to": to, "approved": approved }),
        )?;
        Ok(Some(id))
    }
}

impl Vendors<'_> {
    /// The organization's finalized, live contracts with their vendor (what an invoice is matched against).
    pub fn finalized_contracts(
        &self,
        scope: &OrgScope,
    ) -> Result<Vec<(DocumentId, String, Option<String>)>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT c.document_id, d.name, c.vendor_id FROM contracts c
             JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id AND d.deleted_at IS NULL
             WHERE c.org_id = ?1 AND c.finalized_at IS NOT NULL ORDER BY d.name, c.document_id",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            Ok((crate::sql::parse_text("document id", &r.get::<_, String>(0)?)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Invoices matched to the vendor (by invoice processing runs), newest first: (invoice, its name, contract).
    pub fn invoices(
        &self,
        scope: &OrgScope,
        id: &str,
    ) -> Result<Vec<(DocumentId, String, Option<DocumentId>)>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT l.invoice_id, d.name, l.contract_id FROM invoice_links l
             JOIN documents d ON d.id = l.invoice_id AND d.org_id = l.org_id AND d.deleted_at IS NULL
             WHERE l.org_id = ?1 AND l.vendor_id = ?2 ORDER BY l.created_at DESC",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), id], |r| {
            let contract: Option<String> = r.get(2)?;
            Ok((
                crate::sql::parse_text("document id", &r.get::<_, String>(0)?)?,
                r.get(1)?,
                contract.map(|c| crate::sql::parse_text("document id", &c)).transpose()?,
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// An invoice processing run records what its invoice matched (idempotent per invoice and run). The contract
    /// and vendor must be live records of the run's organization, else nothing is written (`NotFound`).
    pub fn invoice_matched_for_worker(
        &self,
        _credential: &PlatformCredential,
        org: OrgId,
        run: RunId,
        invoice: DocumentId,
        contract: Option<DocumentId>,
        vendor: Option<&str>,
    ) -> Result<(), StoreError> {
        let conn = self.store.conn();
        let org = org.to_string();
        let live_doc = |id: DocumentId| -> Result<(), StoreError> {
            conn.query_row(
                "SELECT 1 FROM documents WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
                params![id.to_string(), org],
                |_| Ok(()),
            )
            .optional()?
            .ok_or(StoreError::NotFound)
        };
        live_doc(invoice)?;
        if let Some(c) = contract {
            live_doc(c)?;
        }
        if let Some(v) = vendor {
            get_in(conn, &org, v)?;
        }
        conn.execute(
            "INSERT OR IGNORE INTO invoice_links (invoice_id, org_id, contract_id, vendor_id, run_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                invoice.to_string(),
                org,
                contract.map(|c| c.to_string()),
                vendor,
                run.to_string(),
                to_sql(self.store.clock().now())
            ],
        )?;
        Ok(())
    }
}

/// The vendor an onboarding run decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnboardedVendor<'a> {
    /// A record of the organization, by id (the run was started from it).
    Record(&'a str),
    /// Only a name (and maybe a tax id) was given: approved, it becomes a new active record.
    New { name: &'a str, tax_id: Option<&'a str> },
}
