//! The append-only audit log: who did what, when, to which entity. Triggers in the schema refuse updates and
//! deletes, so history cannot be rewritten through SQL either.

use crate::time::{from_sql, to_sql};
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

/// Which entries a person asked for: by person, by action, within `[from, to)`, and containing `text` (in the
/// person's name, the name of the thing acted on, the action or its details; case-insensitive for ASCII).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditFilter {
    pub actor: Option<UserId>,
    pub action: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub text: Option<String>,
}

/// An entry with what it takes to say it in words: the person's name and the name of the thing acted on (a
/// document's file name, a vendor's name, a package's title, a run's graph name, an approval step's title), as the
/// store has them now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditRow {
    pub seq: i64,
    pub at: DateTime<Utc>,
    pub actor: Option<UserId>,
    pub actor_name: Option<String>,
    pub action: String,
    pub entity_kind: String,
    pub entity_id: Option<String>,
    pub entity_name: Option<String>,
    pub details: serde_json::Value,
}

/// What the log's filters can take: its actions, and the people who acted with their names.
pub type AuditChoices = (Vec<String>, Vec<(UserId, String)>);

/// The most rows one query returns.
pub const AUDIT_PAGE_MAX: u32 = 5000;

const ENTITY_NAME: &str = "CASE a.entity_kind
    WHEN 'document' THEN (SELECT d.name FROM documents d WHERE d.id = a.entity_id AND d.org_id = a.org_id)
    WHEN 'vendor' THEN (SELECT v.name FROM vendors v WHERE v.id = a.entity_id AND v.org_id = a.org_id)
    WHEN 'prep_package' THEN (SELECT p.title FROM prep_packages p WHERE p.id = a.entity_id AND p.org_id = a.org_id)
    WHEN 'run' THEN (SELECT r.graph_name FROM engine_runs r WHERE r.id = a.entity_id AND r.org_id = a.org_id)
    WHEN 'approval' THEN (SELECT x.title FROM engine_approvals x WHERE x.id = a.entity_id AND x.org_id = a.org_id)
    END";

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

    /// One page of the organization's entries, newest first: those before `before` (a `seq` from the previous
    /// page's last row; keyset paging, so a page costs the same at row 10 and at row 50,000), filtered.
    pub fn page(
        &self,
        scope: &OrgScope,
        filter: &AuditFilter,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AuditRow>, StoreError> {
        let text = filter.text.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_lowercase);
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT seq, at, actor_id, actor_name, action, entity_kind, entity_id, entity_name, details FROM (
                 SELECT a.seq, a.at, a.actor_id, u.display_name AS actor_name, a.action, a.entity_kind, a.entity_id,
                        {ENTITY_NAME} AS entity_name, a.details
                 FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id
                 WHERE a.org_id = ?1 AND (?2 IS NULL OR a.seq < ?2) AND (?3 IS NULL OR a.actor_id = ?3)
                   AND (?4 IS NULL OR a.action = ?4) AND (?5 IS NULL OR a.at >= ?5) AND (?6 IS NULL OR a.at < ?6)
             )
             WHERE ?7 IS NULL OR instr(lower(IFNULL(actor_name, '') || ' ' || IFNULL(entity_name, '') || ' ' || action
                 || ' ' || details), ?7) > 0
             ORDER BY seq DESC LIMIT ?8"
        ))?;
        let rows = stmt.query_map(
            params![
                scope.org().to_string(),
                before,
                filter.actor.map(|u| u.to_string()),
                filter.action,
                filter.from.map(to_sql),
                filter.to.map(to_sql),
                text,
                limit.clamp(1, AUDIT_PAGE_MAX),
            ],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, Option<String>>(7)?,
                    r.get::<_, String>(8)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, at, actor, actor_name, action, entity_kind, entity_id, entity_name, details) = row?;
            out.push(AuditRow {
                seq,
                at: from_sql(&at)?,
                actor: actor.map(|a| a.parse()).transpose().map_err(|_| StoreError::Corrupt("bad actor id".into()))?,
                actor_name,
                action,
                entity_kind,
                entity_id,
                entity_name,
                details: serde_json::from_str(&details).unwrap_or(serde_json::Value::Null),
            });
        }
        Ok(out)
    }

    /// The actions the organization's log holds (for the filter), and the people who acted, with their names.
    pub fn choices(&self, scope: &OrgScope) -> Result<AuditChoices, StoreError> {
        let conn = self.store.conn();
        let org = scope.org().to_string();
        let actions = conn
            .prepare_cached("SELECT DISTINCT action FROM audit_log WHERE org_id = ?1 ORDER BY action")?
            .query_map([&org], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let people = conn
            .prepare_cached(
                "SELECT u.id, u.display_name FROM users u
                 WHERE u.id IN (SELECT DISTINCT actor_id FROM audit_log WHERE org_id = ?1 AND actor_id IS NOT NULL)
                 ORDER BY u.display_name",
            )?
            .query_map([&org], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        let people = people.into_iter().filter_map(|(id, name)| Some((id.parse().ok()?, name))).collect();
        Ok((actions, people))
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
