//! RFP packages across an organization's desktops (synced model `prep_package`, record id = the package's id), and
//! the edit lease the sync service keeps for them (model `prep_lease`, events only the service writes).
//!
//! Only the holder of a package's lease on the service saves it, so its fields travel as last-writer-wins by HLC:
//! `title`, `package` (the whole package JSON, artifacts with their states and hash-bound approvals), `created`
//! (when; the creator is the change's author as the service stamped it) and `published` (null, or when and the
//! hash of what was published; the publisher is the author). A remote package is checked at the edge
//! ([`check_prep_package_fields`]: sizes capped, the package read into the typed artifacts of
//! `pactwise_rules::prep`, nothing it does not hold whole), and on arrival every approval whose hash is not its
//! artifact's content's any more shows as stale (`pactwise_rules::prep::stale_approvals`, the gate's own test). A
//! publication from another desktop is kept only if the one publish gate passes on the package here.

use crate::audit::append_audit_as;
use crate::prep::ServiceLease;
use crate::sync_log::{ChangePayload, SyncApply, emit_in};
use crate::time::to_sql;
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::UserId;
use pactwise_rules::prep::{ArtifactKind, content_hash, publish_gate, stale_approvals, stored_artifacts};
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The synced model's wire name (`pactwise_sync::SyncedModel::PrepPackage`).
pub const PREP_PACKAGE_MODEL: &str = "prep_package";

/// The largest package JSON accepted from another desktop.
pub const MAX_PACKAGE_BYTES: usize = 2 * 1024 * 1024;
/// The longest package title accepted from another desktop.
pub const MAX_TITLE_CHARS: usize = 300;

type Check = fn(&Value) -> Result<(), String>;

/// Every synced field of a package with the check a remote value must pass before anything is written.
pub const PREP_PACKAGE_FIELDS: &[(&str, Check)] =
    &[("title", check_title), ("package", check_package), ("created", check_created), ("published", check_published)];

/// Every field: what a new package queues.
pub(crate) const ALL_FIELDS: &[&str] = &["title", "package", "created", "published"];

fn check_title(v: &Value) -> Result<(), String> {
    match v.as_str() {
        Some(t) if !t.trim().is_empty() && t.chars().count() <= MAX_TITLE_CHARS && !t.chars().any(char::is_control) => {
            Ok(())
        }
        _ => Err(format!("a package's title is 1 to {MAX_TITLE_CHARS} characters of text")),
    }
}

fn check_package(v: &Value) -> Result<(), String> {
    if !v.is_object() {
        return Err("a package is a JSON object".into());
    }
    let size = serde_json::to_vec(v).map(|b| b.len()).unwrap_or(usize::MAX);
    if size > MAX_PACKAGE_BYTES {
        return Err(format!("a package of {size} bytes is over the {MAX_PACKAGE_BYTES} bytes accepted"));
    }
    stored_artifacts(v)
        .map(|_| ())
        .map_err(|problems| problems.iter().map(|p| p.message.as_str()).collect::<Vec<_>>().join("; "))
}

fn time_of(v: &Value, key: &str) -> Option<DateTime<Utc>> {
    v.get(key).and_then(Value::as_str).and_then(|t| DateTime::parse_from_rfc3339(t).ok()).map(|t| t.with_timezone(&Utc))
}

fn check_created(v: &Value) -> Result<(), String> {
    match v.as_object() {
        Some(o) if o.len() == 1 && time_of(v, "at").is_some() => Ok(()),
        _ => Err("a package's creation carries only its time".into()),
    }
}

fn check_published(v: &Value) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    let hash_ok = v
        .get("hash")
        .and_then(Value::as_str)
        .is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()));
    match v.as_object() {
        Some(o) if o.len() == 2 && hash_ok && time_of(v, "at").is_some() => Ok(()),
        _ => Err("a package's publication is null, or its time and the hash of what was published".into()),
    }
}

/// Are these well-formed values for a synced package's fields? An unknown field is refused too.
pub fn check_prep_package_fields(fields: &BTreeMap<String, Value>) -> Result<(), StoreError> {
    if fields.is_empty() {
        return Err(StoreError::Invalid("a package change sets no field".into()));
    }
    for (name, value) in fields {
        let Some((_, check)) = PREP_PACKAGE_FIELDS.iter().find(|(n, _)| n == name) else {
            return Err(StoreError::Invalid(format!("a package has no synced field {name:?}")));
        };
        check(value).map_err(|why| StoreError::Invalid(format!("the package's {name} was refused: {why}")))?;
    }
    Ok(())
}

/// The current values of a package's synced fields, as they travel.
fn current_fields(tx: &Transaction<'_>, org: &str, id: &str) -> Result<BTreeMap<String, Value>, StoreError> {
    let (title, package, created_at, published_at): (String, String, String, Option<String>) = tx.query_row(
        "SELECT title, package_json, created_at, published_at FROM prep_packages WHERE id = ?1 AND org_id = ?2",
        params![id, org],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let package: Value =
        serde_json::from_str(&package).map_err(|e| StoreError::Corrupt(format!("package JSON: {e}")))?;
    let published = match published_at {
        Some(at) => json!({ "at": at, "hash": content_hash(&package) }),
        None => Value::Null,
    };
    Ok(BTreeMap::from([
        ("title".to_string(), Value::String(title)),
        ("created".to_string(), json!({ "at": created_at })),
        ("published".to_string(), published),
        ("package".to_string(), package),
    ]))
}

/// Queues the named synced fields of a package, as they are now, inside the transaction that changed them (if the
/// organization syncs).
pub(crate) fn package_changed_in(
    store: &Store,
    tx: &Transaction<'_>,
    scope: &OrgScope,
    id: &str,
    which: &[&str],
) -> Result<(), StoreError> {
    emit_in(store, tx, scope, PREP_PACKAGE_MODEL, id, |tx| {
        let mut fields = current_fields(tx, &scope.org().to_string(), id)?;
        fields.retain(|k, _| which.contains(&k.as_str()));
        Ok(ChangePayload::Fields(fields))
    })
}

/// Writes (or clears) the lease kept for a package; the holder becomes a known user if they were not.
pub(crate) fn write_lock_in(
    tx: &Transaction<'_>,
    org: &str,
    id: &str,
    lease: Option<&ServiceLease>,
    now: &str,
) -> Result<(), StoreError> {
    match lease {
        None => {
            tx.execute("DELETE FROM prep_locks WHERE package_id = ?1 AND org_id = ?2", params![id, org])?;
        }
        Some(l) => {
            crate::sync_remote::ensure_user(tx, l.holder, Some(&l.holder_name), now)?;
            tx.execute(
                "INSERT INTO prep_locks (package_id, org_id, holder, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (package_id) DO UPDATE SET holder = excluded.holder, acquired_at = excluded.acquired_at,
                     expires_at = excluded.expires_at",
                params![id, org, l.holder.to_string(), to_sql(l.acquired_at), to_sql(l.expires_at)],
            )?;
        }
    }
    Ok(())
}

/// What happened to a package's lease on the service, as its log says (decoded and checked by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLease {
    /// `taken`, `taken_over` or `released`.
    pub event: String,
    pub lease: ServiceLease,
    /// Whose expired lease was taken over, and when it expired.
    pub previous: Option<(UserId, Option<String>, DateTime<Utc>)>,
}

/// Marks every approval whose hash no longer binds its artifact's content as stale (needs approving again).
/// Returns the artifacts marked.
fn mark_stale_approvals(package: &mut Value) -> Result<Vec<ArtifactKind>, StoreError> {
    let artifacts = stored_artifacts(package).map_err(|problems| {
        StoreError::Invalid(problems.iter().map(|p| p.message.as_str()).collect::<Vec<_>>().join("; "))
    })?;
    let stale = stale_approvals(&artifacts);
    for kind in &stale {
        package["artifacts"][kind.as_str()]["state"] = json!({ "status": "stale" });
    }
    Ok(stale)
}

/// Another desktop's publication is kept only if it names this package's content and the one publish gate passes
/// on it here.
fn check_publication(package: &Value, published: &Value) -> Result<(), StoreError> {
    if published.get("hash").and_then(Value::as_str) != Some(content_hash(package).as_str()) {
        return Err(StoreError::Invalid(
            "a publication names another version of the package than this desktop holds; it is skipped".into(),
        ));
    }
    let violations = match stored_artifacts(package) {
        Ok(artifacts) => publish_gate(&artifacts),
        Err(malformed) => malformed,
    };
    if !violations.is_empty() {
        return Err(StoreError::Invalid(format!(
            "a package published on another desktop does not pass the publish gate here ({}); it stays a draft",
            violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("; ")
        )));
    }
    Ok(())
}

impl SyncApply<'_> {
    /// A package change from another desktop: the fields that won here (`taken`, checked with
    /// [`check_prep_package_fields`]) are written; a package not here yet is created (it needs its title, content
    /// and creation time). A received package's approvals are kept only where their hash still binds the content;
    /// a publication only if the publish gate passes here on the package it names. The local version moves on, so
    /// an edit started from the older version is refused as a conflict.
    pub fn prep_package(&self, id: &str, author: UserId, taken: &BTreeMap<String, Value>) -> Result<(), StoreError> {
        check_prep_package_fields(taken)?;
        if uuid::Uuid::parse_str(id).is_err() {
            return Err(StoreError::Invalid("a package's id is not an id".into()));
        }
        let owner: Option<(String, String)> = self
            .tx
            .query_row("SELECT org_id, status FROM prep_packages WHERE id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let mut package = taken.get("package").cloned();
        let stale = match package.as_mut() {
            Some(p) => mark_stale_approvals(p)?,
            None => Vec::new(),
        };
        // A publication is checked before anything is written: the change is kept whole or skipped whole.
        let publication = taken.get("published").filter(|p| !p.is_null());
        if let Some(published) = publication {
            let here = match &package {
                Some(p) => Some(p.clone()),
                None => self.stored_package(id)?,
            };
            let Some(here) = here else {
                return Err(StoreError::Invalid("a publication of a package that is not here is skipped".into()));
            };
            check_publication(&here, published)?;
        }
        match &owner {
            Some((org, _)) if *org != self.org => {
                return Err(StoreError::Invalid("a package with this id belongs to another organization here".into()));
            }
            Some((_, status)) if status == "published" => {
                return Err(StoreError::Invalid("a published package is not changed; the change is skipped".into()));
            }
            Some(_) => {
                if let Some(p) = &package {
                    self.tx.execute(
                        "UPDATE prep_packages SET package_json = ?3, version = version + 1, updated_at = ?4
                         WHERE id = ?1 AND org_id = ?2",
                        params![id, self.org, p.to_string(), self.now],
                    )?;
                }
                if let Some(title) = taken.get("title").and_then(Value::as_str) {
                    self.tx.execute(
                        "UPDATE prep_packages SET title = ?3, updated_at = ?4 WHERE id = ?1 AND org_id = ?2",
                        params![id, self.org, title.trim(), self.now],
                    )?;
                }
            }
            None => {
                let (Some(title), Some(p), Some(created)) =
                    (taken.get("title").and_then(Value::as_str), &package, taken.get("created"))
                else {
                    return Err(StoreError::Invalid(
                        "a package that is not here arrived without its title, content or creation".into(),
                    ));
                };
                let created_at = time_of(created, "at").map(to_sql).unwrap_or_else(|| self.now.clone());
                self.tx.execute(
                    "INSERT INTO prep_packages (id, org_id, title, package_json, created_by, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![id, self.org, title.trim(), p.to_string(), author.to_string(), created_at, self.now],
                )?;
                append_audit_as(
                    self.tx,
                    &self.org,
                    Some(&author.to_string()),
                    &self.now,
                    "prep.create",
                    "prep_package",
                    Some(id),
                    &json!({ "title": title, "via": "sync" }),
                )?;
            }
        }
        if !stale.is_empty() {
            append_audit_as(
                self.tx,
                &self.org,
                Some(&author.to_string()),
                &self.now,
                "prep.approval_stale",
                "prep_package",
                Some(id),
                &json!({ "artifacts": stale.iter().map(|k| k.as_str()).collect::<Vec<_>>(), "via": "sync" }),
            )?;
        }
        if let Some(published) = publication {
            self.published(id, author, published)?;
        }
        Ok(())
    }

    fn stored_package(&self, id: &str) -> Result<Option<Value>, StoreError> {
        let json: Option<String> = self
            .tx
            .query_row(
                "SELECT package_json FROM prep_packages WHERE id = ?1 AND org_id = ?2",
                params![id, self.org],
                |r| r.get(0),
            )
            .optional()?;
        json.map(|j| serde_json::from_str(&j).map_err(|e| StoreError::Corrupt(format!("package JSON: {e}"))))
            .transpose()
    }

    /// Marks the package published (checked with [`check_publication`] first).
    fn published(&self, id: &str, author: UserId, published: &Value) -> Result<(), StoreError> {
        let package = self.stored_package(id)?.ok_or(StoreError::NotFound)?;
        let at = time_of(published, "at").map(to_sql).unwrap_or_else(|| self.now.clone());
        self.tx.execute(
            "UPDATE prep_packages SET status = 'published', published_by = ?3, published_at = ?4,
                 published_json = package_json, updated_at = ?5
             WHERE id = ?1 AND org_id = ?2 AND status = 'draft'",
            params![id, self.org, author.to_string(), at, self.now],
        )?;
        append_audit_as(
            self.tx,
            &self.org,
            Some(&author.to_string()),
            &self.now,
            "prep.publish",
            "prep_package",
            Some(id),
            &json!({ "hash": content_hash(&package), "via": "sync" }),
        )?;
        Ok(())
    }

    /// The service's word on a package's lease: kept for display and offline saves (when the package is here), and
    /// a take-over audited as its taker, naming whose lease expired when.
    pub fn prep_lease(&self, id: &str, remote: &RemoteLease) -> Result<(), StoreError> {
        let here: Option<String> =
            self.tx.query_row("SELECT org_id FROM prep_packages WHERE id = ?1", [id], |r| r.get(0)).optional()?;
        if here.as_deref().is_some_and(|org| org != self.org) {
            return Err(StoreError::Invalid("a package with this id belongs to another organization here".into()));
        }
        let lease = &remote.lease;
        crate::sync_remote::ensure_user(self.tx, lease.holder, Some(&lease.holder_name), &self.now)?;
        if here.is_some() {
            match remote.event.as_str() {
                "released" => {
                    self.tx.execute(
                        "DELETE FROM prep_locks WHERE package_id = ?1 AND org_id = ?2 AND holder = ?3",
                        params![id, self.org, lease.holder.to_string()],
                    )?;
                }
                _ => write_lock_in(self.tx, &self.org, id, Some(lease), &self.now)?,
            }
        }
        if remote.event == "taken_over" {
            let Some((previous, name, expired_at)) = &remote.previous else {
                return Err(StoreError::Invalid("a take-over that names no previous holder".into()));
            };
            crate::sync_remote::ensure_user(self.tx, *previous, name.as_deref(), &self.now)?;
            append_audit_as(
                self.tx,
                &self.org,
                Some(&lease.holder.to_string()),
                &to_sql(lease.acquired_at),
                "prep.lock_taken_over",
                "prep_package",
                Some(id),
                &json!({
                    "previous_holder": previous.to_string(),
                    "expired_at": to_sql(*expired_at),
                    "via": "sync",
                }),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_package_field_is_checked_and_an_unknown_one_is_refused() {
        let one = |k: &str, v: Value| BTreeMap::from([(k.to_string(), v)]);
        let ok = |k: &str, v: Value| check_prep_package_fields(&one(k, v)).is_ok();
        assert!(ok("title", json!("Fleet telematics")));
        assert!(!ok("title", json!(" ")));
        assert!(!ok("title", json!("x".repeat(301))));
        assert!(ok("package", json!({"title": "T", "artifacts": {}})));
        assert!(!ok("package", json!("a package")));
        assert!(!ok("package", json!({"title": "T"})), "no artifacts");
        assert!(
            !ok("package", json!({"artifacts": {"scope": {"state": "approved"}}})),
            "an artifact that does not read"
        );
        assert!(!ok("package", json!({"artifacts": {}, "pad": "x".repeat(MAX_PACKAGE_BYTES)})), "too large");
        assert!(ok("created", json!({"at": "2026-03-01T09:00:00Z"})));
        assert!(!ok("created", json!({"at": "yesterday"})));
        assert!(!ok("created", json!({"at": "2026-03-01T09:00:00Z", "by": "x"})));
        assert!(ok("published", Value::Null));
        assert!(ok("published", json!({"at": "2026-03-01T09:00:00Z", "hash": "a".repeat(64)})));
        assert!(!ok("published", json!({"at": "2026-03-01T09:00:00Z"})));
        assert!(!ok("published", json!({"at": "2026-03-01T09:00:00Z", "hash": "zz"})));
        assert!(!ok("org_id", json!("x")));
        assert!(!ok("version", json!(3)));
        assert!(check_prep_package_fields(&BTreeMap::new()).is_err());
        for field in ALL_FIELDS {
            assert!(PREP_PACKAGE_FIELDS.iter().any(|(n, _)| n == field), "{field} has a check");
        }
    }
}
