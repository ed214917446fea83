//! The level above tenants: organizations, users, memberships and starting sessions. Nothing here reads or writes
//! an organization's data; it decides who may act in which organization.

use crate::time::to_sql;
use crate::{OrgScope, Store, StoreError};
use pactwise_domain::{OrgId, Role, SessionId, UserId};
use rusqlite::{OptionalExtension, params};

pub struct Platform<'s> {
    store: &'s Store,
}

/// An organization a user belongs to, with the role they hold there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOrg {
    pub org: OrgId,
    pub name: String,
    pub role: Role,
}

impl<'s> Platform<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Platform { store }
    }

    pub fn create_organization(&self, name: &str) -> Result<OrgId, StoreError> {
        let id = OrgId::new();
        self.store.conn().execute(
            "INSERT INTO organizations (id, name, created_at) VALUES (?1, ?2, ?3)",
            params![id.to_string(), name.trim(), to_sql(self.store.clock().now())],
        )?;
        Ok(id)
    }

    pub fn create_user(&self, display_name: &str, email: Option<&str>) -> Result<UserId, StoreError> {
        let id = UserId::new();
        self.store.conn().execute(
            "INSERT INTO users (id, display_name, email, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![id.to_string(), display_name.trim(), email, to_sql(self.store.clock().now())],
        )?;
        Ok(id)
    }

    /// Adds the user to the organization with `role`, or changes their role if already a member.
    pub fn set_membership(&self, org: OrgId, user: UserId, role: Role) -> Result<(), StoreError> {
        self.store.conn().execute(
            "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
            params![org.to_string(), user.to_string(), role.as_str(), to_sql(self.store.clock().now())],
        )?;
        Ok(())
    }

    /// Starts a session for a member of an organization. Fails with `Unauthenticated` if the user is not a member.
    pub fn start_session(&self, user: UserId, org: OrgId) -> Result<SessionId, StoreError> {
        let member: Option<String> = self
            .store
            .conn()
            .query_row(
                "SELECT role FROM memberships WHERE org_id = ?1 AND user_id = ?2",
                params![org.to_string(), user.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        if member.is_none() {
            return Err(StoreError::Unauthenticated);
        }
        let id = SessionId::from_uuid(uuid::Uuid::new_v4());
        self.store.conn().execute(
            "INSERT INTO sessions (id, org_id, user_id, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![id.to_string(), org.to_string(), user.to_string(), to_sql(self.store.clock().now())],
        )?;
        Ok(id)
    }

    /// The person who uses this installation, if set up.
    pub fn local_user(&self) -> Result<Option<UserId>, StoreError> {
        let value: Option<String> = self
            .store
            .conn()
            .query_row("SELECT value FROM local_state WHERE key = 'local_user'", [], |r| r.get(0))
            .optional()?;
        value.map(|v| v.parse().map_err(|_| StoreError::Corrupt(format!("bad user id {v:?}")))).transpose()
    }

    pub fn set_local_user(&self, user: UserId) -> Result<(), StoreError> {
        self.store.conn().execute(
            "INSERT INTO local_state (key, value) VALUES ('local_user', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [user.to_string()],
        )?;
        Ok(())
    }

    /// Whether this installation has been set up (the first-run screen done, the demo seeded, or a sign-in to a
    /// sync service). Installations in use before the first-run screen existed count as set up (migration 0023).
    pub fn first_run_done(&self) -> Result<bool, StoreError> {
        let done: Option<String> = self
            .store
            .conn()
            .query_row("SELECT value FROM local_state WHERE key = 'first_run'", [], |r| r.get(0))
            .optional()?;
        Ok(done.as_deref() == Some("done"))
    }

    /// Marks this installation as set up (the demo seeded, or signed in to its organization's sync service).
    pub fn mark_first_run_done(&self) -> Result<(), StoreError> {
        self.store.conn().execute(
            "INSERT INTO local_state (key, value) VALUES ('first_run', 'done')
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [],
        )?;
        Ok(())
    }

    /// Sets the installation up by a sign-in to the organization's sync service (which made that organization
    /// current): while the first run was pending, the placeholder organization it started with (`placeholder`) is
    /// retired when nothing was ever put in it, so the organization switcher does not offer an empty "My
    /// organization". Anything with documents stays.
    pub fn finish_first_run_elsewhere(&self, placeholder: OrgId) -> Result<(), StoreError> {
        if self.first_run_done()? {
            return Ok(());
        }
        let tx = self.store.conn().unchecked_transaction()?;
        let used: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM documents WHERE org_id = ?1)
                 OR (SELECT count(*) FROM memberships WHERE org_id = ?1) > 1",
            [placeholder.to_string()],
            |r| r.get(0),
        )?;
        if !used {
            tx.execute(
                "UPDATE organizations SET deleted_at = ?1 WHERE id = ?2 AND deleted_at IS NULL",
                params![to_sql(self.store.clock().now()), placeholder.to_string()],
            )?;
        }
        tx.execute(
            "INSERT INTO local_state (key, value) VALUES ('first_run', 'done')
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The first-run screen's outcome, in one transaction: the current organization gets the name the person
    /// gave, its own names and aliases are stored (the synced setting `organization.aliases`, so the review never
    /// takes them for the counterparty), and the installation counts as set up. Refused once it is set up (names
    /// change in Settings from then on) and for anyone but the organization's owner.
    pub fn complete_first_run(&self, scope: &OrgScope, name: &str, own_names: &[String]) -> Result<(), StoreError> {
        if self.first_run_done()? {
            return Err(StoreError::Conflict(
                "this installation is already set up; change the organization's names in Settings".into(),
            ));
        }
        if scope.role() != Role::Owner {
            return Err(StoreError::Forbidden { role: scope.role() });
        }
        let tx = self.store.conn().unchecked_transaction()?;
        let renamed = tx.execute(
            "UPDATE organizations SET name = ?1 WHERE id = ?2 AND deleted_at IS NULL",
            params![name.trim(), scope.org().to_string()],
        )?;
        if renamed != 1 {
            return Err(StoreError::NotFound);
        }
        self.store.settings().set_in(&tx, scope, pactwise_rules::settings::ALIASES, &own_names)?;
        tx.execute(
            "INSERT INTO local_state (key, value) VALUES ('first_run', 'done')
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The people who have signed in on this install: every user with a session here (the local user, and the sync
    /// service's user after a sign-in to sync), oldest first. Users known only through sync have none.
    pub fn session_users(&self) -> Result<Vec<UserId>, StoreError> {
        let mut stmt = self.store.conn().prepare(
            "SELECT s.user_id FROM sessions s JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL
             GROUP BY s.user_id ORDER BY MIN(s.created_at), s.user_id",
        )?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.map(|r| {
            let v = r?;
            v.parse().map_err(|_| StoreError::Corrupt(format!("bad user id {v:?}")))
        })
        .collect()
    }

    /// Finds a live organization by exact name (used to keep the demo seeding idempotent).
    pub fn find_organization(&self, name: &str) -> Result<Option<OrgId>, StoreError> {
        let id: Option<String> = self
            .store
            .conn()
            .query_row(
                "SELECT id FROM organizations WHERE name = ?1 AND deleted_at IS NULL ORDER BY created_at LIMIT 1",
                [name],
                |r| r.get(0),
            )
            .optional()?;
        id.map(|v| v.parse().map_err(|_| StoreError::Corrupt(format!("bad org id {v:?}")))).transpose()
    }

    pub fn organization_name(&self, org: OrgId) -> Result<String, StoreError> {
        self.store
            .conn()
            .query_row("SELECT name FROM organizations WHERE id = ?1 AND deleted_at IS NULL", [org.to_string()], |r| {
                r.get(0)
            })
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    pub fn user_name(&self, user: UserId) -> Result<String, StoreError> {
        self.store
            .conn()
            .query_row("SELECT display_name FROM users WHERE id = ?1", [user.to_string()], |r| r.get(0))
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// The organizations a user belongs to.
    pub fn organizations_of(&self, user: UserId) -> Result<Vec<SessionOrg>, StoreError> {
        let mut stmt = self.store.conn().prepare(
            "SELECT o.id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
             WHERE m.user_id = ?1 AND o.deleted_at IS NULL ORDER BY o.created_at",
        )?;
        let rows = stmt.query_map([user.to_string()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (org, name, role) = row?;
            out.push(SessionOrg {
                org: org.parse().map_err(|_| StoreError::Corrupt(format!("bad org id {org:?}")))?,
                name,
                role: role.parse().map_err(StoreError::Corrupt)?,
            });
        }
        Ok(out)
    }
}
