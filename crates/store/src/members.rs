//! The members of an organization as this desktop knows them: the `users` and `memberships` rows of people who
//! belong to a synced organization (same ids as on the sync service). The sync service tells every desktop when
//! an owner or admin adds a member, changes a role or removes one; the apply path records it here, so an approval
//! decided on another desktop can show and record its approver (the store's trigger
//! `engine_approvals_decider_is_eligible` wants the decider to be a member here).
//!
//! One function records a known member in a caller's transaction, [`record_member_in`]; a removed member loses the
//! membership ([`remove_member_in`]) and keeps the user row, so their past work keeps their name.

use crate::time::to_sql;
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, Role, UserId};
use rusqlite::{Connection, params};

/// The longest display name kept.
pub const MAX_DISPLAY_NAME: usize = 200;

/// A member of an organization, as this desktop knows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownMember {
    pub user: UserId,
    pub display_name: String,
    pub email: Option<String>,
    pub role: Role,
}

fn clean_name(display_name: &str) -> Result<String, StoreError> {
    let name = display_name.trim();
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(StoreError::Invalid("a member's name must be text, not empty".into()));
    }
    Ok(name.chars().take(MAX_DISPLAY_NAME).collect())
}

/// Records that `member.user` is a member of `org` with `member.role`, named `member.display_name` (and
/// `member.email` when known), in the caller's transaction (`tx`: a `rusqlite::Transaction` derefs to it); `now`
/// stamps rows it creates. The user row is created or gets this name and email (an unknown email keeps the one
/// recorded); the membership is created or gets this role. The organization must exist here. Idempotent:
/// recording the same member again changes nothing. A blank name is refused (`StoreError::Invalid`).
///
/// Callers: the sync apply path (a `member` change from the service), sign-in (the organization's member list),
/// and any path that learns of an approver from the service.
pub fn record_member_in(
    tx: &Connection,
    org: OrgId,
    member: &KnownMember,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    record_member_at(tx, &org.to_string(), member, &to_sql(now))
}

pub(crate) fn record_member_at(tx: &Connection, org: &str, member: &KnownMember, now: &str) -> Result<(), StoreError> {
    let name = clean_name(&member.display_name)?;
    let email = member.email.as_deref().map(str::trim).filter(|e| !e.is_empty());
    let (user, role) = (member.user, member.role);
    tx.prepare_cached(
        "INSERT INTO users (id, display_name, email, created_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name,
             email = COALESCE(excluded.email, users.email)",
    )?
    .execute(params![user.to_string(), name, email, now])?;
    tx.prepare_cached(
        "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
    )?
    .execute(params![org, user.to_string(), role.as_str(), now])?;
    Ok(())
}

/// Records that `user` no longer belongs to `org`, in the caller's transaction: the membership and the member's
/// local sessions in that organization go (no session of theirs opens there any more); the user row stays, so
/// their past documents, corrections and decisions keep their name. Nothing happens when they were no member.
pub fn remove_member_in(tx: &Connection, org: OrgId, user: UserId) -> Result<(), StoreError> {
    remove_member_at(tx, &org.to_string(), user)
}

pub(crate) fn remove_member_at(tx: &Connection, org: &str, user: UserId) -> Result<(), StoreError> {
    let user = user.to_string();
    tx.prepare_cached("DELETE FROM sessions WHERE org_id = ?1 AND user_id = ?2")?.execute(params![org, user])?;
    tx.prepare_cached("DELETE FROM memberships WHERE org_id = ?1 AND user_id = ?2")?.execute(params![org, user])?;
    Ok(())
}

/// The members of the scope's organization known here.
pub struct Members<'s> {
    store: &'s Store,
}

impl<'s> Members<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Members { store }
    }

    /// Every member of the scope's organization, by name.
    pub fn list(&self, scope: &OrgScope) -> Result<Vec<KnownMember>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT u.id, u.display_name, u.email, m.role FROM memberships m JOIN users u ON u.id = m.user_id
             WHERE m.org_id = ?1 AND u.deleted_at IS NULL ORDER BY u.display_name COLLATE NOCASE, u.id",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?, r.get::<_, String>(3)?))
        })?;
        rows.map(|row| {
            let (user, display_name, email, role) = row?;
            Ok(KnownMember {
                user: user.parse().map_err(|_| StoreError::Corrupt(format!("bad user id {user:?}")))?,
                display_name,
                email,
                role: role.parse().map_err(StoreError::Corrupt)?,
            })
        })
        .collect()
    }

    /// Records members of the scope's organization as the sync service listed them, in one transaction (see
    /// [`record_member_in`]).
    pub fn record(&self, scope: &OrgScope, members: &[KnownMember]) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        let now = self.store.clock().now();
        for m in members {
            record_member_in(&tx, scope.org(), m, now)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records that a member of the scope's organization was removed (see [`remove_member_in`]).
    pub fn remove(&self, scope: &OrgScope, user: UserId) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        remove_member_in(&tx, scope.org(), user)?;
        tx.commit()?;
        Ok(())
    }
}
