//! The append-only audit log: who did what, when, to which entity. Triggers in the schema refuse updates and
//! deletes, so history cannot be rewritten through SQL either.

use crate::time::from_sql;
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::UserId;
use rusqlite::{Transaction, params};
use serde::Serialize;

pub struct Audit<'s> {
    store: &'s Store,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditEntry {
    pub seq: i64,
    pub at: DateTime<Utc>,
    pub actor: Option<UserId>,
    pub action: String,
    pub entity_kind: String,
    pub entity_id: Option<String>,
    pub details: serde_json::Value,
}

pub(crate) fn append_audit(
    tx: &Transaction<'_>,
    scope: &OrgScope,
    at: &str,
    action: &str,
    entity_kind: &str,
    entity_id: Option<&str>,
    details: &serde_json::Value,
) -> Result<(), StoreError> {
    let (org, actor) = (scope.org().to_string(), scope.user().to_string());
    append_audit_as(tx, &org, Some(&actor), at, action, entity_kind, entity_id, details)
}

/// An entry whose actor is not the session's user: what another member did on another device, received by sync
/// (the actor is the author the sync service stamped).
#[allow(clippy::too_many_arguments)]
pub(crate) fn append_audit_as(
    tx: &rusqlite::Connection,
    org: &str,
    actor: Option<&str>,
    at: &str,
    action: &str,
    entity_kind: &str,
    entity_id: Option<&str>,
    details: &serde_json::Value,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO audit_log (id, org_id, actor_id, at, action, entity_kind, entity_id, details)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        uuid::Uuid::now_v7().to_string(),
        org,
        actor,
        at,
        action,
        entity_kind,
        entity_id,
        details.to_string(),
    ])?;
    Ok(())
}

/// An audit entry written by the platform (no acting user): the watchdog, escalations.
pub(crate) fn append_platform_audit(
    tx: &rusqlite::Connection,
    org: &str,
    at: &str,
    action: &str,
    entity_kind: &str,
    entity_id: &str,
    details: &serde_json::Value,
) -> Result<(), StoreError> {
    append_audit_as(tx, org, None, at, action, entity_kind, Some(entity_id), details)
}

impl<'s> Audit<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Audit { store }
    }

    /// The organization's audit entries, oldest first.
    pub fn list(&self, scope: &OrgScope) -> Result<Vec<AuditEntry>, StoreError> {
        let mut stmt = self.store.conn().prepare(
            "SELECT seq, at, actor_id, action, entity_kind, entity_id, details FROM audit_log
             WHERE org_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, String>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, at, actor, action, entity_kind, entity_id, details) = row?;
            out.push(AuditEntry {
                seq,
                at: from_sql(&at)?,
                actor: actor.map(|a| a.parse()).transpose().map_err(|_| StoreError::Corrupt("bad actor id".into()))?,
                action,
                entity_kind,
                entity_id,
                details: serde_json::from_str(&details).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            });
        }
        Ok(out)
    }
}
