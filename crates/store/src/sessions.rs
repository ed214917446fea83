//! Local sessions: who is signed in on this installation, in which organization. Opening a session is the only way
//! to obtain an [`OrgScope`].

use crate::time::{from_sql_opt, to_sql};
use crate::{OrgScope, Store, StoreError};
use pactwise_domain::{OrgId, Role, SessionId, UserId};
use rusqlite::{OptionalExtension, params};

const CURRENT_SESSION: &str = "current_session";

pub struct Sessions<'s> {
    store: &'s Store,
}

impl<'s> Sessions<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Sessions { store }
    }

    /// Checks the session (exists, not revoked, not expired), its membership and its organization (not deleted),
    /// and returns the scope it grants. Any failure is `Unauthenticated`.
    pub fn open(&self, id: SessionId) -> Result<OrgScope, StoreError> {
        let now = self.store.clock().now();
        let row = self
            .store
            .conn()
            .query_row(
                "SELECT s.org_id, s.user_id, m.role, s.expires_at, s.revoked_at
                 FROM sessions s
                 JOIN memberships m ON m.org_id = s.org_id AND m.user_id = s.user_id
                 JOIN organizations o ON o.id = s.org_id AND o.deleted_at IS NULL
                 JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL
                 WHERE s.id = ?1",
                params![id.to_string()],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, Option<String>>(4)?,
                    ))
                },
            )
            .optional()?;
        let Some((org, user, role, expires_at, revoked_at)) = row else {
            return Err(StoreError::Unauthenticated);
        };
        if revoked_at.is_some() {
            return Err(StoreError::Unauthenticated);
        }
        if let Some(expires_at) = from_sql_opt(expires_at)?
            && expires_at <= now
        {
            return Err(StoreError::Unauthenticated);
        }
        let org: OrgId = org.parse().map_err(|_| StoreError::Corrupt(format!("bad org id {org:?}")))?;
        let user: UserId = user.parse().map_err(|_| StoreError::Corrupt(format!("bad user id {user:?}")))?;
        let role: Role = role.parse().map_err(StoreError::Corrupt)?;
        Ok(OrgScope::from_verified_session(org, user, role, id))
    }

    /// The session this installation is signed in with, if any.
    pub fn current(&self) -> Result<Option<SessionId>, StoreError> {
        let value: Option<String> = self
            .store
            .conn()
            .query_row("SELECT value FROM local_state WHERE key = ?1", [CURRENT_SESSION], |r| r.get(0))
            .optional()?;
        value.map(|v| v.parse().map_err(|_| StoreError::Corrupt(format!("bad session id {v:?}")))).transpose()
    }

    /// Makes `id` this installation's session (after checking that it opens).
    pub fn make_current(&self, id: SessionId) -> Result<OrgScope, StoreError> {
        let scope = self.open(id)?;
        self.store.conn().execute(
            "INSERT INTO local_state (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![CURRENT_SESSION, id.to_string()],
        )?;
        Ok(scope)
    }

    /// Ends a session; opening it afterwards fails.
    pub fn revoke(&self, id: SessionId) -> Result<(), StoreError> {
        let now = to_sql(self.store.clock().now());
        let changed = self.store.conn().execute(
            "UPDATE sessions SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            params![id.to_string(), now],
        )?;
        if changed == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }
}
