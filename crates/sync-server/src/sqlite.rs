//! The embedded SQLite backend: one file, no setup. WAL mode; one connection for writes (SQLite has one writer
//! anyway) and a few for reads, so pulls do not queue behind pushes.

use crate::steps::{self, Opening, StepTables};
use crate::storage::{
    self as leases, Actor, Counts, DeviceRecord, LeaseAudit, LeaseTake, Login, MemberChanged, MemberOp, StorageError,
    StoredLease, StoredMember, SyncStorage, check_member_op, db_json, member_change, parse_role, parse_roles, parse_ts,
    parse_uuid, refuse_change, roles_text, to_json, ts,
};
use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, Role, UserId};
use pactwise_sync::lease::LeaseEvent;
use pactwise_sync::members::{Member, OpenCode};
use pactwise_sync::wire::{Change, PullResponse, PushRequest, PushResponse, PushResult, ServerChange};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use uuid::Uuid;

pub(crate) const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS organizations (
    id TEXT PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    email TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    disabled_at TEXT,
    UNIQUE (org_id, email)
);
CREATE TABLE IF NOT EXISTS devices (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS changes (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    seq INTEGER NOT NULL,
    change_id TEXT NOT NULL,
    model TEXT NOT NULL,
    record_id TEXT NOT NULL,
    change_json TEXT NOT NULL,
    author TEXT NOT NULL,
    device_id TEXT NOT NULL,
    received_at TEXT NOT NULL,
    outcome_json TEXT,
    PRIMARY KEY (org_id, seq),
    UNIQUE (org_id, change_id)
);
CREATE TABLE IF NOT EXISTS push_receipts (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    idempotency_key TEXT NOT NULL,
    response_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, idempotency_key)
);
CREATE TABLE IF NOT EXISTS approvals (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    step_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    approver TEXT NOT NULL,
    seq INTEGER NOT NULL,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (org_id, step_id)
);
-- The eligible roles each approval step's first request named; later requests are decided over these.
CREATE TABLE IF NOT EXISTS approval_steps (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    step_id TEXT NOT NULL,
    eligible_roles TEXT NOT NULL,
    PRIMARY KEY (org_id, step_id)
);
-- Approval steps as their run's desktop first published them: the run, who requested it (the publishing token's
-- user) and four-eyes; closed when the run was cancelled or ended.
CREATE TABLE IF NOT EXISTS approval_openings (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    step_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    requester TEXT NOT NULL,
    four_eyes INTEGER NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, step_id)
);
CREATE INDEX IF NOT EXISTS approval_openings_run ON approval_openings (org_id, run_id);
-- When an approval step escalates if still undecided (pinned from its first publication, by the service's clock),
-- and when the service escalated it (once).
CREATE TABLE IF NOT EXISTS approval_escalations (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    step_id TEXT NOT NULL,
    escalate_at TEXT NOT NULL,
    escalated_at TEXT,
    PRIMARY KEY (org_id, step_id)
);
CREATE INDEX IF NOT EXISTS approval_escalations_due ON approval_escalations (escalate_at) WHERE escalated_at IS NULL;
CREATE TABLE IF NOT EXISTS blobs (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, hash)
);
-- One-time sign-in codes, stored only as their SHA-256; one per member, used once.
CREATE TABLE IF NOT EXISTS member_codes (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    code_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    PRIMARY KEY (org_id, user_id)
);
-- RFP packages' edit leases (one per package and organization) and their audit.
CREATE TABLE IF NOT EXISTS prep_leases (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    package_id TEXT NOT NULL,
    holder TEXT NOT NULL REFERENCES users(id),
    acquired_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (org_id, package_id)
);
CREATE TABLE IF NOT EXISTS lease_audit (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    package_id TEXT NOT NULL,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    previous_holder TEXT,
    previous_expires_at TEXT
);
CREATE INDEX IF NOT EXISTS lease_audit_package ON lease_audit (org_id, package_id, at);
"#;

/// Columns added after the first release (a database made before gets them at open).
fn upgrade(conn: &Connection) -> Result<(), StorageError> {
    let has_name: bool =
        conn.query_row("SELECT COUNT(*) > 0 FROM pragma_table_info('users') WHERE name = 'display_name'", [], |r| {
            r.get(0)
        })?;
    if !has_name {
        conn.execute_batch("ALTER TABLE users ADD COLUMN display_name TEXT")?;
    }
    Ok(())
}

const MEMBER_COLUMNS: &str = "u.id, u.email, COALESCE(u.display_name, u.email), u.role, u.disabled_at IS NOT NULL";

fn member_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, String, String, String, bool)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

fn stored_member(row: (String, String, String, String, bool)) -> Result<StoredMember, StorageError> {
    let (id, email, display_name, role, removed) = row;
    Ok(StoredMember {
        member: Member { user_id: UserId::from_uuid(parse_uuid(&id)?), email, display_name, role: parse_role(&role)? },
        removed,
    })
}

pub struct SqliteStorage {
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    next_reader: std::sync::atomic::AtomicUsize,
}

fn open_conn(path: &Path) -> Result<Connection, StorageError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(conn)
}

impl SqliteStorage {
    pub fn open(path: &Path) -> Result<Self, StorageError> {
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| StorageError::Database(e.to_string()))?;
        }
        let writer = open_conn(path)?;
        writer.execute_batch(SCHEMA)?;
        writer.execute_batch(crate::source_store::SCHEMA)?;
        upgrade(&writer)?;
        let readers = (0..4).map(|_| open_conn(path).map(Mutex::new)).collect::<Result<Vec<_>, _>>()?;
        Ok(Self { writer: Mutex::new(writer), readers, next_reader: Default::default() })
    }

    fn writer(&self) -> MutexGuard<'_, Connection> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reader(&self) -> MutexGuard<'_, Connection> {
        let start = self.next_reader.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for i in 0..self.readers.len() {
            if let Ok(guard) = self.readers[(start + i) % self.readers.len()].try_lock() {
                return guard;
            }
        }
        self.readers[start % self.readers.len()].lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SyncStorage for SqliteStorage {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn health(&self) -> Result<(), StorageError> {
        self.reader().query_row("SELECT 1", [], |_| Ok(()))?;
        Ok(())
    }

    fn create_org(&self, slug: &str, name: &str, now: DateTime<Utc>) -> Result<OrgId, StorageError> {
        let id = OrgId::new();
        self.writer()
            .execute(
                "INSERT INTO organizations (id, slug, name, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![id.to_string(), slug, name, ts(now)],
            )
            .map_err(|e| match StorageError::from(e) {
                StorageError::Conflict(_) => StorageError::Conflict(format!("organization {slug:?}")),
                other => other,
            })?;
        Ok(id)
    }

    fn org_by_slug(&self, slug: &str) -> Result<Option<OrgId>, StorageError> {
        let id: Option<String> =
            self.reader().query_row("SELECT id FROM organizations WHERE slug = ?1", [slug], |r| r.get(0)).optional()?;
        id.map(|s| parse_uuid(&s).map(OrgId::from_uuid)).transpose()
    }

    fn create_user(
        &self,
        org: OrgId,
        email: &str,
        password_hash: &str,
        role: Role,
        now: DateTime<Utc>,
    ) -> Result<UserId, StorageError> {
        let id = UserId::new();
        self.writer()
            .execute(
                "INSERT INTO users (id, org_id, email, password_hash, role, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id.to_string(), org.to_string(), email, password_hash, role.as_str(), ts(now)],
            )
            .map_err(|e| match StorageError::from(e) {
                StorageError::Conflict(_) => StorageError::Conflict(format!("user {email:?}")),
                other => other,
            })?;
        Ok(id)
    }

    fn find_login(&self, org_slug: &str, email: &str) -> Result<Option<Login>, StorageError> {
        let row: Option<(String, String, String, String)> = self
            .reader()
            .query_row(
                "SELECT o.id, u.id, u.role, u.password_hash FROM users u JOIN organizations o ON o.id = u.org_id
                 WHERE o.slug = ?1 AND u.email = ?2 AND u.disabled_at IS NULL",
                [org_slug, email],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        row.map(|(org, user, role, hash)| {
            Ok(Login {
                org: OrgId::from_uuid(parse_uuid(&org)?),
                user: UserId::from_uuid(parse_uuid(&user)?),
                role: parse_role(&role)?,
                password_hash: hash,
            })
        })
        .transpose()
    }

    fn create_device(
        &self,
        login: &Login,
        name: &str,
        token_hash: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<Uuid, StorageError> {
        let id = Uuid::now_v7();
        self.writer().execute(
            "INSERT INTO devices (id, org_id, user_id, name, token_hash, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                id.to_string(),
                login.org.to_string(),
                login.user.to_string(),
                name,
                token_hash,
                ts(now),
                ts(expires_at)
            ],
        )?;
        Ok(id)
    }

    fn find_device(&self, token_hash: &str) -> Result<Option<DeviceRecord>, StorageError> {
        type Row = (String, String, String, String, String, String, Option<String>);
        let row: Option<Row> = self
            .reader()
            .query_row(
                "SELECT d.id, o.id, o.name, u.id, u.role, d.expires_at, d.revoked_at
                 FROM devices d JOIN users u ON u.id = d.user_id JOIN organizations o ON o.id = d.org_id
                 WHERE d.token_hash = ?1 AND u.org_id = d.org_id AND u.disabled_at IS NULL",
                [token_hash],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
            )
            .optional()?;
        row.map(|(device, org, org_name, user, role, expires, revoked)| {
            Ok(DeviceRecord {
                actor: Actor {
                    org: OrgId::from_uuid(parse_uuid(&org)?),
                    org_name,
                    user: UserId::from_uuid(parse_uuid(&user)?),
                    role: parse_role(&role)?,
                    device: parse_uuid(&device)?,
                },
                expires_at: parse_ts(&expires)?,
                revoked: revoked.is_some(),
            })
        })
        .transpose()
    }

    fn revoke_device(&self, org: OrgId, device: Uuid, now: DateTime<Utc>) -> Result<(), StorageError> {
        self.writer().execute(
            "UPDATE devices SET revoked_at = ?3 WHERE org_id = ?1 AND id = ?2 AND revoked_at IS NULL",
            params![org.to_string(), device.to_string(), ts(now)],
        )?;
        Ok(())
    }

    fn push(&self, actor: &Actor, request: &PushRequest, now: DateTime<Utc>) -> Result<PushResponse, StorageError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let org = actor.org.to_string();
        let key = request.idempotency_key.to_string();
        let receipt: Option<String> = tx
            .query_row(
                "SELECT response_json FROM push_receipts WHERE org_id = ?1 AND idempotency_key = ?2",
                [&org, &key],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(json) = receipt {
            let mut response: PushResponse = db_json(&json)?;
            response.replayed = true;
            return Ok(response);
        }
        let mut seq: u64 =
            tx.query_row("SELECT last_seq FROM organizations WHERE id = ?1", [&org], |r| r.get::<_, i64>(0))? as u64;
        let mut results = Vec::with_capacity(request.changes.len());
        {
            let mut find = tx.prepare_cached("SELECT seq FROM changes WHERE org_id = ?1 AND change_id = ?2")?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at, outcome_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            let received = ts(now);
            let author = actor.user.to_string();
            let device = actor.device.to_string();
            for change in &request.changes {
                let id = change.id.to_string();
                if let Some(existing) = find.query_row(params![&org, &id], |r| r.get::<_, i64>(0)).optional()? {
                    results.push(PushResult::stored(change.id, existing as u64));
                    continue;
                }
                let refused = match refuse_change(actor, change) {
                    Some(refused) => Some(refused),
                    None => steps::publish(actor, change, now, &mut SqliteSteps { tx: &tx, org: &org })?,
                };
                if let Some(refused) = refused {
                    results.push(PushResult { change_id: change.id, seq: 0, refused: Some(refused) });
                    continue;
                }
                seq += 1;
                let outcome = steps::decide(actor, change, seq, now, &mut SqliteSteps { tx: &tx, org: &org })?
                    .map(|o| to_json(&o))
                    .transpose()?;
                insert.execute(params![
                    &org,
                    seq as i64,
                    &id,
                    change.model.as_str(),
                    &change.record_id,
                    to_json(change)?,
                    &author,
                    &device,
                    &received,
                    outcome
                ])?;
                results.push(PushResult::stored(change.id, seq));
            }
        }
        tx.execute("UPDATE organizations SET last_seq = ?2 WHERE id = ?1", params![&org, seq as i64])?;
        let response = PushResponse { results, replayed: false };
        tx.execute(
            "INSERT INTO push_receipts (org_id, idempotency_key, response_json, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![&org, &key, to_json(&response)?, ts(now)],
        )?;
        tx.commit()?;
        Ok(response)
    }

    fn pull(&self, org: OrgId, since: u64, limit: u32) -> Result<PullResponse, StorageError> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT seq, change_json, author, device_id, received_at, outcome_json FROM changes
             WHERE org_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![org.to_string(), since as i64, i64::from(limit) + 1], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })?;
        let mut changes = Vec::new();
        for row in rows {
            let (seq, change, author, device, received, outcome) = row?;
            changes.push(ServerChange {
                seq: seq as u64,
                change: db_json::<Change>(&change)?,
                author: UserId::from_uuid(parse_uuid(&author)?),
                device_id: parse_uuid(&device)?,
                received_at: parse_ts(&received)?,
                outcome: outcome.as_deref().map(db_json).transpose()?,
            });
        }
        Ok(crate::storage::page(changes, since, limit))
    }

    fn escalate_due(&self, now: DateTime<Utc>) -> Result<Vec<(OrgId, u64)>, StorageError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let at = ts(now);
        // Open (not closed), undecided, not escalated yet, and due.
        let due: Vec<(String, String, String)> = tx
            .prepare_cached(
                "SELECT e.org_id, e.step_id, o.run_id FROM approval_escalations e
                 JOIN approval_openings o ON o.org_id = e.org_id AND o.step_id = e.step_id
                 WHERE e.escalated_at IS NULL AND e.escalate_at <= ?1 AND o.closed = 0
                   AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.org_id = e.org_id AND a.step_id = e.step_id)
                 ORDER BY e.org_id, e.escalate_at",
            )?
            .query_map([&at], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut last: Vec<(OrgId, u64)> = Vec::new();
        let nil = Uuid::nil().to_string();
        for (org, step, run) in due {
            let seq = tx
                .query_row("SELECT last_seq FROM organizations WHERE id = ?1", [&org], |r| r.get::<_, i64>(0))?
                as u64
                + 1;
            let change = steps::escalation_change(&step, &run, now, seq)?;
            tx.execute(
                "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
                params![&org, seq as i64, change.id.to_string(), change.model.as_str(), &step, to_json(&change)?, &nil, &at],
            )?;
            tx.execute("UPDATE organizations SET last_seq = ?2 WHERE id = ?1", params![&org, seq as i64])?;
            tx.execute(
                "UPDATE approval_escalations SET escalated_at = ?3 WHERE org_id = ?1 AND step_id = ?2",
                params![&org, &step, &at],
            )?;
            let org = OrgId::from_uuid(parse_uuid(&org)?);
            match last.last_mut() {
                Some((o, s)) if *o == org => *s = seq,
                _ => last.push((org, seq)),
            }
        }
        tx.commit()?;
        Ok(last)
    }

    fn put_blob(&self, org: OrgId, hash: &str, bytes: &[u8], now: DateTime<Utc>) -> Result<bool, StorageError> {
        let n = self.writer().execute(
            "INSERT INTO blobs (org_id, hash, size, data, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (org_id, hash) DO NOTHING",
            params![org.to_string(), hash, bytes.len() as i64, bytes, ts(now)],
        )?;
        Ok(n == 1)
    }

    fn blob_size(&self, org: OrgId, hash: &str) -> Result<Option<u64>, StorageError> {
        let size: Option<i64> = self
            .reader()
            .query_row(
                "SELECT size FROM blobs WHERE org_id = ?1 AND hash = ?2",
                [org.to_string(), hash.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        Ok(size.map(|s| s as u64))
    }

    fn read_blob(&self, org: OrgId, hash: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StorageError> {
        // substr on a BLOB is 1-based and counts bytes.
        let bytes: Option<Vec<u8>> = self
            .reader()
            .query_row(
                "SELECT substr(data, ?3, ?4) FROM blobs WHERE org_id = ?1 AND hash = ?2",
                params![org.to_string(), hash, offset as i64 + 1, len as i64],
                |r| r.get(0),
            )
            .optional()?;
        Ok(bytes)
    }

    fn counts(&self) -> Result<Counts, StorageError> {
        let conn = self.reader();
        let count = |table: &str| -> Result<u64, StorageError> {
            Ok(conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get::<_, i64>(0))? as u64)
        };
        Ok(Counts {
            organizations: count("organizations")?,
            users: count("users")?,
            devices: count("devices")?,
            changes: count("changes")?,
            receipts: count("push_receipts")?,
            approvals: count("approvals")?,
            blobs: count("blobs")?,
        })
    }

    fn list_members(&self, org: OrgId) -> Result<Vec<Member>, StorageError> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {MEMBER_COLUMNS} FROM users u WHERE u.org_id = ?1 AND u.disabled_at IS NULL
             ORDER BY COALESCE(u.display_name, u.email), u.email"
        ))?;
        let rows = stmt.query_map([org.to_string()], member_row)?;
        rows.map(|r| stored_member(r?).map(|m| m.member)).collect()
    }

    fn open_codes(&self, org: OrgId, now: DateTime<Utc>) -> Result<Vec<OpenCode>, StorageError> {
        let conn = self.reader();
        let mut stmt = conn.prepare_cached(
            "SELECT u.id, u.email, c.expires_at FROM member_codes c JOIN users u ON u.id = c.user_id
             WHERE c.org_id = ?1 AND u.org_id = c.org_id AND c.used_at IS NULL AND c.expires_at > ?2
               AND u.disabled_at IS NULL ORDER BY u.email",
        )?;
        let rows = stmt.query_map(params![org.to_string(), ts(now)], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
        })?;
        rows.map(|r| {
            let (user, email, expires) = r?;
            Ok(OpenCode { user_id: UserId::from_uuid(parse_uuid(&user)?), email, expires_at: parse_ts(&expires)? })
        })
        .collect()
    }

    fn change_members(&self, actor: &Actor, op: &MemberOp, now: DateTime<Utc>) -> Result<MemberChanged, StorageError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let org = actor.org.to_string();
        let at = ts(now);
        let read = |by: &str, value: &str| -> Result<Option<StoredMember>, StorageError> {
            let row = tx
                .query_row(
                    &format!("SELECT {MEMBER_COLUMNS} FROM users u WHERE u.org_id = ?1 AND u.{by} = ?2"),
                    params![&org, value],
                    member_row,
                )
                .optional()?;
            row.map(stored_member).transpose()
        };
        let target = match op {
            MemberOp::Add { email, .. } => read("email", email)?,
            MemberOp::ChangeRole { user, .. } | MemberOp::Remove { user } | MemberOp::NewCode { user, .. } => {
                read("id", &user.to_string())?
            }
        };
        let owners: i64 = tx.query_row(
            "SELECT COUNT(*) FROM users WHERE org_id = ?1 AND role = 'owner' AND disabled_at IS NULL",
            [&org],
            |r| r.get(0),
        )?;
        check_member_op(actor, op, target.as_ref(), owners as u64)?;
        let save_code = |user: &UserId, hash: &str, expires: DateTime<Utc>| -> Result<(), StorageError> {
            tx.execute(
                "INSERT INTO member_codes (org_id, user_id, code_hash, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (org_id, user_id) DO UPDATE SET code_hash = excluded.code_hash,
                     created_at = excluded.created_at, expires_at = excluded.expires_at, used_at = NULL",
                params![&org, user.to_string(), hash, &at, ts(expires)],
            )?;
            Ok(())
        };
        let (member, removed) = match op {
            MemberOp::Add { email, display_name, role, code_hash, code_expires_at } => {
                let user = match &target {
                    // A removed member comes back under the same id (their history stays theirs).
                    Some(t) => {
                        tx.execute(
                            "UPDATE users SET display_name = ?3, role = ?4, password_hash = '', disabled_at = NULL
                             WHERE org_id = ?1 AND id = ?2",
                            params![&org, t.member.user_id.to_string(), display_name, role.as_str()],
                        )?;
                        t.member.user_id
                    }
                    None => {
                        let id = UserId::new();
                        tx.execute(
                            "INSERT INTO users (id, org_id, email, password_hash, role, created_at, display_name)
                             VALUES (?1, ?2, ?3, '', ?4, ?5, ?6)",
                            params![id.to_string(), &org, email, role.as_str(), &at, display_name],
                        )?;
                        id
                    }
                };
                save_code(&user, code_hash, *code_expires_at)?;
                let member =
                    Member { user_id: user, email: email.clone(), display_name: display_name.clone(), role: *role };
                (member, false)
            }
            MemberOp::ChangeRole { user, role } => {
                tx.execute(
                    "UPDATE users SET role = ?3 WHERE org_id = ?1 AND id = ?2",
                    params![&org, user.to_string(), role.as_str()],
                )?;
                let mut member = target.map(|t| t.member).ok_or_else(|| StorageError::NotFound("the member".into()))?;
                member.role = *role;
                (member, false)
            }
            MemberOp::Remove { user } => {
                tx.execute(
                    "UPDATE users SET disabled_at = ?3 WHERE org_id = ?1 AND id = ?2",
                    params![&org, user.to_string(), &at],
                )?;
                tx.execute(
                    "UPDATE devices SET revoked_at = ?3 WHERE org_id = ?1 AND user_id = ?2 AND revoked_at IS NULL",
                    params![&org, user.to_string(), &at],
                )?;
                tx.execute(
                    "DELETE FROM member_codes WHERE org_id = ?1 AND user_id = ?2",
                    params![&org, user.to_string()],
                )?;
                (target.map(|t| t.member).ok_or_else(|| StorageError::NotFound("the member".into()))?, true)
            }
            MemberOp::NewCode { user, code_hash, code_expires_at } => {
                save_code(user, code_hash, *code_expires_at)?;
                let member = target.map(|t| t.member).ok_or_else(|| StorageError::NotFound("the member".into()))?;
                tx.commit()?;
                return Ok(MemberChanged { member, seq: None });
            }
        };
        let seq = tx.query_row("SELECT last_seq FROM organizations WHERE id = ?1", [&org], |r| r.get::<_, i64>(0))?
            as u64
            + 1;
        let change = member_change(&member, removed, now, seq);
        tx.execute(
            "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                &org,
                seq as i64,
                change.id.to_string(),
                change.model.as_str(),
                &change.record_id,
                to_json(&change)?,
                actor.user.to_string(),
                actor.device.to_string(),
                &at
            ],
        )?;
        tx.execute("UPDATE organizations SET last_seq = ?2 WHERE id = ?1", params![&org, seq as i64])?;
        tx.commit()?;
        Ok(MemberChanged { member, seq: Some(seq) })
    }

    fn redeem_code(
        &self,
        org_slug: &str,
        email: &str,
        code_hash: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Login>, StorageError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let row: Option<(String, String, String)> = tx
            .query_row(
                "SELECT o.id, u.id, u.role FROM member_codes c JOIN users u ON u.id = c.user_id
                 JOIN organizations o ON o.id = c.org_id
                 WHERE o.slug = ?1 AND u.email = ?2 AND c.code_hash = ?3 AND u.org_id = c.org_id
                   AND u.disabled_at IS NULL AND c.used_at IS NULL AND c.expires_at > ?4",
                params![org_slug, email, code_hash, ts(now)],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((org, user, role)) = row else { return Ok(None) };
        tx.execute(
            "UPDATE member_codes SET used_at = ?3 WHERE org_id = ?1 AND user_id = ?2",
            params![&org, &user, ts(now)],
        )?;
        tx.execute("UPDATE users SET password_hash = ?2 WHERE id = ?1", params![&user, password_hash])?;
        tx.commit()?;
        Ok(Some(Login {
            org: OrgId::from_uuid(parse_uuid(&org)?),
            user: UserId::from_uuid(parse_uuid(&user)?),
            role: parse_role(&role)?,
            password_hash: password_hash.to_string(),
        }))
    }

    fn lease(&self, org: OrgId, package: Uuid) -> Result<Option<StoredLease>, StorageError> {
        let conn = self.reader();
        read_lease(&conn, &org.to_string(), &package.to_string())
    }

    fn take_lease(
        &self,
        actor: &Actor,
        package: Uuid,
        take_over: bool,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<LeaseTake, StorageError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (org, pkg) = (actor.org.to_string(), package.to_string());
        let current = read_lease(&tx, &org, &pkg)?;
        let name: String = tx.query_row(
            "SELECT COALESCE(display_name, email) FROM users WHERE id = ?1 AND org_id = ?2",
            params![actor.user.to_string(), &org],
            |r| r.get(0),
        )?;
        let plan = match leases::plan_take(current.as_ref(), actor.user, &name, take_over, now, ttl) {
            Ok(plan) => plan,
            Err(refused) => return Ok(refused),
        };
        tx.execute(
            "INSERT INTO prep_leases (org_id, package_id, holder, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (org_id, package_id) DO UPDATE SET holder = excluded.holder,
                 acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
            params![&org, &pkg, actor.user.to_string(), ts(plan.lease.acquired_at), ts(plan.lease.expires_at)],
        )?;
        let seq = match &plan.event {
            Some(event) => Some(log_lease_event(&tx, actor, package, event, now)?),
            None => None,
        };
        tx.commit()?;
        Ok(LeaseTake::Granted { grant: plan.grant, lease: plan.lease, seq })
    }

    fn release_lease(&self, actor: &Actor, package: Uuid, now: DateTime<Utc>) -> Result<Option<u64>, StorageError> {
        let mut conn = self.writer();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (org, pkg) = (actor.org.to_string(), package.to_string());
        let Some(lease) = read_lease(&tx, &org, &pkg)?.filter(|l| l.holder == actor.user) else { return Ok(None) };
        tx.execute("DELETE FROM prep_leases WHERE org_id = ?1 AND package_id = ?2", params![&org, &pkg])?;
        let seq = log_lease_event(&tx, actor, package, &leases::release_event(&lease), now)?;
        tx.commit()?;
        Ok(Some(seq))
    }

    fn lease_audit(&self, org: OrgId, package: Uuid) -> Result<Vec<LeaseAudit>, StorageError> {
        let conn = self.reader();
        let rows: Vec<AuditRow> = conn
            .prepare_cached(
                "SELECT at, action, actor, previous_holder, previous_expires_at FROM lease_audit
                 WHERE org_id = ?1 AND package_id = ?2 ORDER BY at, rowid",
            )?
            .query_map(params![org.to_string(), package.to_string()], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect::<Result<_, _>>()?;
        rows.into_iter()
            .map(|(at, action, actor, previous, previous_expires)| {
                Ok(LeaseAudit {
                    at: parse_ts(&at)?,
                    action,
                    actor: UserId::from_uuid(parse_uuid(&actor)?),
                    previous_holder: previous.as_deref().map(parse_uuid).transpose()?.map(UserId::from_uuid),
                    previous_expires_at: previous_expires.as_deref().map(parse_ts).transpose()?,
                })
            })
            .collect()
    }

    fn source_commit(&self, change: &crate::source_rows::SourceCommit) -> Result<(), StorageError> {
        crate::source_store::commit(&mut self.writer(), change)
    }

    fn source_tender(&self, tender: Uuid) -> Result<Option<crate::source_rows::TenderRow>, StorageError> {
        crate::source_store::read_tender(&self.reader(), tender)
    }

    fn source_audit(&self, tender: Uuid) -> Result<Vec<pactwise_source::audit::AuditEntry>, StorageError> {
        crate::source_store::audit(&self.reader(), tender)
    }

    fn source_envelopes(&self, tender: Uuid, kind: &str) -> Result<Vec<crate::source_rows::EnvelopeRow>, StorageError> {
        crate::source_store::envelopes(&self.reader(), tender, kind)
    }

    fn source_invitation(&self, token_hash: &str) -> Result<Option<crate::source_rows::Invitation>, StorageError> {
        crate::source_store::invitation(&self.reader(), token_hash)
    }

    fn source_vendor_by_email(&self, email: &str) -> Result<Option<crate::source_rows::VendorAccount>, StorageError> {
        crate::source_store::vendor_by_email(&self.reader(), email)
    }

    fn source_create_session(
        &self,
        token_hash: &str,
        account: Uuid,
        expires: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        crate::source_store::create_session(&self.writer(), token_hash, account, expires)
    }

    fn source_session(&self, token_hash: &str) -> Result<Option<(Uuid, DateTime<Utc>)>, StorageError> {
        crate::source_store::session(&self.reader(), token_hash)
    }

    fn source_participations(&self, account: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
        crate::source_store::participations(&self.reader(), account)
    }

    fn source_participants(&self, tender: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
        crate::source_store::participants(&self.reader(), tender)
    }

    fn source_questions(&self, tender: Uuid) -> Result<Vec<crate::source_rows::Question>, StorageError> {
        crate::source_store::questions(&self.reader(), tender)
    }

    fn source_scores(&self, tender: Uuid) -> Result<Vec<crate::source_rows::StoredScore>, StorageError> {
        crate::source_store::scores(&self.reader(), tender)
    }

    fn source_tender_release(&self, tender: Uuid) -> Result<Option<String>, StorageError> {
        crate::source_store::tender_release(&self.reader(), tender)
    }

    fn source_tenders_of(&self, org: pactwise_domain::OrgId) -> Result<Vec<Uuid>, StorageError> {
        crate::source_store::tenders_of(&self.reader(), org)
    }

    fn source_upload_create(
        &self,
        upload: &crate::source_rows::UploadRow,
        max_open: usize,
        now: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        crate::source_store::upload_create(&mut self.writer(), upload, max_open, now)
    }

    fn source_upload(&self, id: Uuid) -> Result<Option<crate::source_rows::UploadRow>, StorageError> {
        crate::source_store::upload(&self.reader(), id)
    }

    fn source_upload_append(
        &self,
        id: Uuid,
        first_byte: u64,
        length: u64,
        sealed: &[u8],
        expires_at: DateTime<Utc>,
    ) -> Result<bool, StorageError> {
        crate::source_store::upload_append(&mut self.writer(), id, first_byte, length, sealed, expires_at)
    }

    fn source_upload_chunks(&self, id: Uuid) -> Result<Vec<(u64, Vec<u8>)>, StorageError> {
        crate::source_store::upload_chunks(&self.reader(), id)
    }

    fn source_upload_finish(&self, id: Uuid, summary: &str) -> Result<(), StorageError> {
        crate::source_store::upload_finish(&mut self.writer(), id, summary)
    }

    fn source_upload_delete(&self, id: Uuid) -> Result<(), StorageError> {
        crate::source_store::upload_delete(&mut self.writer(), id)
    }
}

/// A `lease_audit` row as stored: at, action, actor, previous holder, when their lease expired.
type AuditRow = (String, String, String, Option<String>, Option<String>);

fn read_lease(conn: &Connection, org: &str, package: &str) -> Result<Option<StoredLease>, StorageError> {
    let row: Option<(String, String, String, String)> = conn
        .prepare_cached(
            "SELECT l.holder, COALESCE(u.display_name, u.email), l.acquired_at, l.expires_at FROM prep_leases l
             JOIN users u ON u.id = l.holder WHERE l.org_id = ?1 AND l.package_id = ?2",
        )?
        .query_row(params![org, package], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    row.map(|(holder, name, acquired, expires)| leases::parse_lease(&holder, name, &acquired, &expires)).transpose()
}

/// The audit row and the organization's log entry of a lease event, inside the caller's transaction.
fn log_lease_event(
    tx: &rusqlite::Transaction<'_>,
    actor: &Actor,
    package: Uuid,
    event: &LeaseEvent,
    now: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let (org, pkg, at) = (actor.org.to_string(), package.to_string(), ts(now));
    tx.execute(
        "INSERT INTO lease_audit (org_id, package_id, at, action, actor, previous_holder, previous_expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            &org,
            &pkg,
            &at,
            leases::audit_action(event.event),
            actor.user.to_string(),
            event.previous_holder.map(|u| u.to_string()),
            event.previous_expires_at.map(ts)
        ],
    )?;
    let seq =
        tx.query_row("SELECT last_seq FROM organizations WHERE id = ?1", [&org], |r| r.get::<_, i64>(0))? as u64 + 1;
    let change = leases::lease_change(package, event, now, seq);
    tx.execute(
        "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            &org,
            seq as i64,
            change.id.to_string(),
            change.model.as_str(),
            &pkg,
            to_json(&change)?,
            actor.user.to_string(),
            actor.device.to_string(),
            &at
        ],
    )?;
    tx.execute("UPDATE organizations SET last_seq = ?2 WHERE id = ?1", params![&org, seq as i64])?;
    Ok(seq)
}

/// The step tables inside a push's transaction.
struct SqliteSteps<'t> {
    tx: &'t rusqlite::Transaction<'t>,
    org: &'t str,
}

impl StepTables for SqliteSteps<'_> {
    fn opening(&mut self, step: &str) -> Result<Option<Opening>, StorageError> {
        let row: Option<(String, String, bool, bool)> = self
            .tx
            .prepare_cached(
                "SELECT run_id, requester, four_eyes, closed FROM approval_openings WHERE org_id = ?1 AND step_id = ?2",
            )?
            .query_row(params![self.org, step], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        row.map(|(run_id, requester, four_eyes, closed)| {
            Ok(Opening { run_id, requester: UserId::from_uuid(parse_uuid(&requester)?), four_eyes, closed })
        })
        .transpose()
    }

    fn open(&mut self, step: &str, o: &Opening) -> Result<(), StorageError> {
        self.tx
            .prepare_cached(
                "INSERT INTO approval_openings (org_id, step_id, run_id, requester, four_eyes, closed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
            )?
            .execute(params![self.org, step, o.run_id, o.requester.to_string(), o.four_eyes, o.closed])?;
        Ok(())
    }

    fn schedule_escalation(&mut self, step: &str, at: DateTime<Utc>) -> Result<(), StorageError> {
        self.tx
            .prepare_cached(
                "INSERT INTO approval_escalations (org_id, step_id, escalate_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING",
            )?
            .execute(params![self.org, step, ts(at)])?;
        Ok(())
    }

    fn close(&mut self, step: &str) -> Result<(), StorageError> {
        self.tx
            .prepare_cached("UPDATE approval_openings SET closed = 1 WHERE org_id = ?1 AND step_id = ?2")?
            .execute(params![self.org, step])?;
        Ok(())
    }

    fn pinned_roles(&mut self, step: &str) -> Result<Option<Vec<Role>>, StorageError> {
        let text: Option<String> = self
            .tx
            .prepare_cached("SELECT eligible_roles FROM approval_steps WHERE org_id = ?1 AND step_id = ?2")?
            .query_row(params![self.org, step], |r| r.get(0))
            .optional()?;
        text.as_deref().map(parse_roles).transpose()
    }

    fn pin_roles(&mut self, step: &str, roles: &[Role]) -> Result<(), StorageError> {
        self.tx
            .prepare_cached(
                "INSERT INTO approval_steps (org_id, step_id, eligible_roles) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
            )?
            .execute(params![self.org, step, roles_text(roles)])?;
        Ok(())
    }

    fn decided(&mut self, step: &str) -> Result<bool, StorageError> {
        Ok(self
            .tx
            .prepare_cached("SELECT 1 FROM approvals WHERE org_id = ?1 AND step_id = ?2")?
            .exists(params![self.org, step])?)
    }

    fn decided_another_step(&mut self, run: &str, step: &str, approver: UserId) -> Result<bool, StorageError> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT 1 FROM approvals a JOIN approval_openings o ON o.org_id = a.org_id AND o.step_id = a.step_id
                 WHERE a.org_id = ?1 AND o.run_id = ?2 AND a.step_id <> ?3 AND a.approver = ?4",
            )?
            .exists(params![self.org, run, step, approver.to_string()])?)
    }

    fn stamp(
        &mut self,
        step: &str,
        decision: &str,
        approver: UserId,
        seq: u64,
        at: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        self.tx
            .prepare_cached(
                "INSERT INTO approvals (org_id, step_id, decision, approver, seq, decided_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![self.org, step, decision, approver.to_string(), seq as i64, ts(at)])?;
        Ok(())
    }
}
