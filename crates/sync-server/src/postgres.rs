//! The PostgreSQL backend, for when one machine is outgrown. Same tables and rules as SQLite; a small pool of
//! blocking connections; a push locks its organization's row (`FOR UPDATE`), so sequences are gap-free and
//! concurrent pushes of one organization serialize while other organizations proceed.

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
use postgres::{Client, NoTls};
use std::sync::{Condvar, Mutex};
use uuid::Uuid;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS organizations (
    id TEXT PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    last_seq BIGINT NOT NULL DEFAULT 0,
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
    seq BIGINT NOT NULL,
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
    seq BIGINT NOT NULL,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (org_id, step_id)
);
CREATE TABLE IF NOT EXISTS approval_steps (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    step_id TEXT NOT NULL,
    eligible_roles TEXT NOT NULL,
    PRIMARY KEY (org_id, step_id)
);
CREATE TABLE IF NOT EXISTS approval_openings (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    step_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    requester TEXT NOT NULL,
    four_eyes BOOLEAN NOT NULL,
    closed BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (org_id, step_id)
);
CREATE INDEX IF NOT EXISTS approval_openings_run ON approval_openings (org_id, run_id);
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
    size BIGINT NOT NULL,
    data BYTEA NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, hash)
);
ALTER TABLE users ADD COLUMN IF NOT EXISTS display_name TEXT;
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

const MEMBER_COLUMNS: &str = "u.id, u.email, COALESCE(u.display_name, u.email), u.role, u.disabled_at IS NOT NULL";

fn stored_member(r: &postgres::Row) -> Result<StoredMember, StorageError> {
    Ok(StoredMember {
        member: Member {
            user_id: UserId::from_uuid(parse_uuid(r.get(0))?),
            email: r.get(1),
            display_name: r.get(2),
            role: parse_role(r.get(3))?,
        },
        removed: r.get(4),
    })
}

/// A batch of new changes as columns, for one `INSERT … SELECT FROM UNNEST(…)`.
#[derive(Default)]
struct BatchColumns(Vec<i64>, Vec<String>, Vec<String>, Vec<String>, Vec<String>, Vec<Option<String>>);

pub struct PgStorage {
    url: String,
    idle: Mutex<Vec<Client>>,
    available: Condvar,
    open: Mutex<usize>,
    max: usize,
}

/// A connection borrowed from the pool; returned on drop (unless it broke).
struct Conn<'a> {
    pool: &'a PgStorage,
    client: Option<Client>,
}

impl std::ops::Deref for Conn<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client.as_ref().expect("present until drop")
    }
}

impl std::ops::DerefMut for Conn<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client.as_mut().expect("present until drop")
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            if client.is_closed() {
                *self.pool.open.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            } else {
                self.pool.idle.lock().unwrap_or_else(|e| e.into_inner()).push(client);
            }
            self.pool.available.notify_one();
        }
    }
}

impl Drop for PgStorage {
    fn drop(&mut self) {
        // A blocking client closes its connection with its own small runtime, which may not start on a thread that
        // drives async tasks; close them on a plain thread.
        let clients = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|e| e.into_inner()));
        let _ = std::thread::spawn(move || drop(clients)).join();
    }
}

impl PgStorage {
    /// Connect (`postgres://user@host:port/db`), create the tables if missing, keep at most `max` connections.
    pub fn connect(url: &str, max: usize) -> Result<Self, StorageError> {
        let mut first = Client::connect(url, NoTls)?;
        first.batch_execute(SCHEMA)?;
        first.batch_execute(crate::source_pg::SCHEMA)?;
        Ok(Self {
            url: url.to_string(),
            idle: Mutex::new(vec![first]),
            available: Condvar::new(),
            open: Mutex::new(1),
            max: max.max(1),
        })
    }

    fn conn(&self) -> Result<Conn<'_>, StorageError> {
        loop {
            if let Some(client) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop() {
                return Ok(Conn { pool: self, client: Some(client) });
            }
            {
                let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
                if *open < self.max {
                    *open += 1;
                    drop(open);
                    return match Client::connect(&self.url, NoTls) {
                        Ok(client) => Ok(Conn { pool: self, client: Some(client) }),
                        Err(e) => {
                            *self.open.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
                            Err(e.into())
                        }
                    };
                }
            }
            let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            let _unused = self
                .available
                .wait_timeout(idle, std::time::Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl SyncStorage for PgStorage {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn health(&self) -> Result<(), StorageError> {
        self.conn()?.simple_query("SELECT 1")?;
        Ok(())
    }

    fn create_org(&self, slug: &str, name: &str, now: DateTime<Utc>) -> Result<OrgId, StorageError> {
        let id = OrgId::new();
        self.conn()?
            .execute(
                "INSERT INTO organizations (id, slug, name, created_at) VALUES ($1, $2, $3, $4)",
                &[&id.to_string(), &slug, &name, &ts(now)],
            )
            .map_err(|e| match StorageError::from(e) {
                StorageError::Conflict(_) => StorageError::Conflict(format!("organization {slug:?}")),
                other => other,
            })?;
        Ok(id)
    }

    fn org_by_slug(&self, slug: &str) -> Result<Option<OrgId>, StorageError> {
        let row = self.conn()?.query_opt("SELECT id FROM organizations WHERE slug = $1", &[&slug])?;
        row.map(|r| parse_uuid(r.get::<_, &str>(0)).map(OrgId::from_uuid)).transpose()
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
        self.conn()?
            .execute(
                "INSERT INTO users (id, org_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
                &[&id.to_string(), &org.to_string(), &email, &password_hash, &role.as_str(), &ts(now)],
            )
            .map_err(|e| match StorageError::from(e) {
                StorageError::Conflict(_) => StorageError::Conflict(format!("user {email:?}")),
                other => other,
            })?;
        Ok(id)
    }

    fn find_login(&self, org_slug: &str, email: &str) -> Result<Option<Login>, StorageError> {
        let row = self.conn()?.query_opt(
            "SELECT o.id, u.id, u.role, u.password_hash FROM users u JOIN organizations o ON o.id = u.org_id
             WHERE o.slug = $1 AND u.email = $2 AND u.disabled_at IS NULL",
            &[&org_slug, &email],
        )?;
        row.map(|r| {
            Ok(Login {
                org: OrgId::from_uuid(parse_uuid(r.get(0))?),
                user: UserId::from_uuid(parse_uuid(r.get(1))?),
                role: parse_role(r.get(2))?,
                password_hash: r.get(3),
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
        self.conn()?.execute(
            "INSERT INTO devices (id, org_id, user_id, name, token_hash, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &id.to_string(),
                &login.org.to_string(),
                &login.user.to_string(),
                &name,
                &token_hash,
                &ts(now),
                &ts(expires_at),
            ],
        )?;
        Ok(id)
    }

    fn find_device(&self, token_hash: &str) -> Result<Option<DeviceRecord>, StorageError> {
        let row = self.conn()?.query_opt(
            "SELECT d.id, o.id, o.name, u.id, u.role, d.expires_at, d.revoked_at
             FROM devices d JOIN users u ON u.id = d.user_id JOIN organizations o ON o.id = d.org_id
             WHERE d.token_hash = $1 AND u.org_id = d.org_id AND u.disabled_at IS NULL",
            &[&token_hash],
        )?;
        row.map(|r| {
            Ok(DeviceRecord {
                actor: Actor {
                    device: parse_uuid(r.get(0))?,
                    org: OrgId::from_uuid(parse_uuid(r.get(1))?),
                    org_name: r.get(2),
                    user: UserId::from_uuid(parse_uuid(r.get(3))?),
                    role: parse_role(r.get(4))?,
                },
                expires_at: parse_ts(r.get(5))?,
                revoked: r.get::<_, Option<String>>(6).is_some(),
            })
        })
        .transpose()
    }

    fn revoke_device(&self, org: OrgId, device: Uuid, now: DateTime<Utc>) -> Result<(), StorageError> {
        self.conn()?.execute(
            "UPDATE devices SET revoked_at = $3 WHERE org_id = $1 AND id = $2 AND revoked_at IS NULL",
            &[&org.to_string(), &device.to_string(), &ts(now)],
        )?;
        Ok(())
    }

    fn push(&self, actor: &Actor, request: &PushRequest, now: DateTime<Utc>) -> Result<PushResponse, StorageError> {
        let mut conn = self.conn()?;
        let mut tx = conn.transaction()?;
        let org = actor.org.to_string();
        let key = request.idempotency_key.to_string();
        // Lock the organization first: pushes of one organization serialize here, so the receipt check below and
        // the sequence are race-free.
        let last: i64 = tx.query_one("SELECT last_seq FROM organizations WHERE id = $1 FOR UPDATE", &[&org])?.get(0);
        if let Some(row) = tx.query_opt(
            "SELECT response_json FROM push_receipts WHERE org_id = $1 AND idempotency_key = $2",
            &[&org, &key],
        )? {
            let mut response: PushResponse = db_json(row.get(0))?;
            response.replayed = true;
            return Ok(response);
        }
        let mut seq = last as u64;
        let ids: Vec<String> = request.changes.iter().map(|c| c.id.to_string()).collect();
        let mut existing = std::collections::HashMap::new();
        for row in
            tx.query("SELECT change_id, seq FROM changes WHERE org_id = $1 AND change_id = ANY($2)", &[&org, &ids])?
        {
            existing.insert(row.get::<_, String>(0), row.get::<_, i64>(1) as u64);
        }
        let received = ts(now);
        let author = actor.user.to_string();
        let device = actor.device.to_string();
        let mut results = Vec::with_capacity(request.changes.len());
        let mut rows = BatchColumns::default();
        for (change, id) in request.changes.iter().zip(&ids) {
            if let Some(seq) = existing.get(id) {
                results.push(PushResult::stored(change.id, *seq));
                continue;
            }
            let refused = match refuse_change(actor, change) {
                Some(refused) => Some(refused),
                None => steps::publish(actor, change, now, &mut PgSteps { tx: &mut tx, org: &org })?,
            };
            if let Some(refused) = refused {
                results.push(PushResult { change_id: change.id, seq: 0, refused: Some(refused) });
                continue;
            }
            seq += 1;
            existing.insert(id.clone(), seq);
            let outcome = steps::decide(actor, change, seq, now, &mut PgSteps { tx: &mut tx, org: &org })?
                .map(|o| to_json(&o))
                .transpose()?;
            rows.0.push(seq as i64);
            rows.1.push(id.clone());
            rows.2.push(change.model.as_str().to_string());
            rows.3.push(change.record_id.clone());
            rows.4.push(to_json(change)?);
            rows.5.push(outcome);
            results.push(PushResult::stored(change.id, seq));
        }
        if !rows.0.is_empty() {
            // One statement for the whole batch.
            tx.execute(
                "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at, outcome_json)
                 SELECT $1, s, c, m, r, j, $7, $8, $9, o
                 FROM UNNEST($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $10::text[]) AS t(s, c, m, r, j, o)",
                &[&org, &rows.0, &rows.1, &rows.2, &rows.3, &rows.4, &author, &device, &received, &rows.5],
            )?;
        }
        tx.execute("UPDATE organizations SET last_seq = $2 WHERE id = $1", &[&org, &(seq as i64)])?;
        let response = PushResponse { results, replayed: false };
        tx.execute(
            "INSERT INTO push_receipts (org_id, idempotency_key, response_json, created_at) VALUES ($1, $2, $3, $4)",
            &[&org, &key, &to_json(&response)?, &received],
        )?;
        tx.commit()?;
        Ok(response)
    }

    fn escalate_due(&self, now: DateTime<Utc>) -> Result<Vec<(OrgId, u64)>, StorageError> {
        let mut conn = self.conn()?;
        let mut tx = conn.transaction()?;
        let at = ts(now);
        // Open (not closed), undecided, not escalated yet, and due; locked so two sweeps never both write one.
        let due: Vec<(String, String, String)> = tx
            .query(
                "SELECT e.org_id, e.step_id, o.run_id FROM approval_escalations e
                 JOIN approval_openings o ON o.org_id = e.org_id AND o.step_id = e.step_id
                 WHERE e.escalated_at IS NULL AND e.escalate_at <= $1 AND NOT o.closed
                   AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.org_id = e.org_id AND a.step_id = e.step_id)
                 ORDER BY e.org_id, e.escalate_at
                 FOR UPDATE OF e SKIP LOCKED",
                &[&at],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect();
        let mut last: Vec<(OrgId, u64)> = Vec::new();
        let nil = Uuid::nil().to_string();
        for (org, step, run) in due {
            // The organization's row orders this change with its pushes (as a push does).
            let seq = tx
                .query_one("SELECT last_seq FROM organizations WHERE id = $1 FOR UPDATE", &[&org])?
                .get::<_, i64>(0) as u64
                + 1;
            let change = steps::escalation_change(&step, &run, now, seq)?;
            tx.execute(
                "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)",
                &[&org, &(seq as i64), &change.id.to_string(), &change.model.as_str(), &step, &to_json(&change)?, &nil, &at],
            )?;
            tx.execute("UPDATE organizations SET last_seq = $2 WHERE id = $1", &[&org, &(seq as i64)])?;
            tx.execute(
                "UPDATE approval_escalations SET escalated_at = $3 WHERE org_id = $1 AND step_id = $2",
                &[&org, &step, &at],
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

    fn pull(&self, org: OrgId, since: u64, limit: u32) -> Result<PullResponse, StorageError> {
        let rows = self.conn()?.query(
            "SELECT seq, change_json, author, device_id, received_at, outcome_json FROM changes
             WHERE org_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            &[&org.to_string(), &(since as i64), &(i64::from(limit) + 1)],
        )?;
        let mut changes = Vec::with_capacity(rows.len());
        for r in rows {
            changes.push(ServerChange {
                seq: r.get::<_, i64>(0) as u64,
                change: db_json::<Change>(r.get(1))?,
                author: UserId::from_uuid(parse_uuid(r.get(2))?),
                device_id: parse_uuid(r.get(3))?,
                received_at: parse_ts(r.get(4))?,
                outcome: r.get::<_, Option<&str>>(5).map(db_json).transpose()?,
            });
        }
        Ok(crate::storage::page(changes, since, limit))
    }

    fn put_blob(&self, org: OrgId, hash: &str, bytes: &[u8], now: DateTime<Utc>) -> Result<bool, StorageError> {
        let n = self.conn()?.execute(
            "INSERT INTO blobs (org_id, hash, size, data, created_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (org_id, hash) DO NOTHING",
            &[&org.to_string(), &hash, &(bytes.len() as i64), &bytes, &ts(now)],
        )?;
        Ok(n == 1)
    }

    fn blob_size(&self, org: OrgId, hash: &str) -> Result<Option<u64>, StorageError> {
        let row = self
            .conn()?
            .query_opt("SELECT size FROM blobs WHERE org_id = $1 AND hash = $2", &[&org.to_string(), &hash])?;
        Ok(row.map(|r| r.get::<_, i64>(0) as u64))
    }

    fn read_blob(&self, org: OrgId, hash: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StorageError> {
        let row = self.conn()?.query_opt(
            "SELECT substring(data FROM $3::int FOR $4::int) FROM blobs WHERE org_id = $1 AND hash = $2",
            &[&org.to_string(), &hash, &((offset + 1) as i32), &(len.min(i32::MAX as u64) as i32)],
        )?;
        Ok(row.map(|r| r.get::<_, Vec<u8>>(0)))
    }

    fn counts(&self) -> Result<Counts, StorageError> {
        let mut conn = self.conn()?;
        let mut count = |table: &str| -> Result<u64, StorageError> {
            Ok(conn.query_one(&format!("SELECT COUNT(*) FROM {table}"), &[])?.get::<_, i64>(0) as u64)
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
        let rows = self.conn()?.query(
            &format!(
                "SELECT {MEMBER_COLUMNS} FROM users u WHERE u.org_id = $1 AND u.disabled_at IS NULL
                 ORDER BY COALESCE(u.display_name, u.email), u.email"
            ),
            &[&org.to_string()],
        )?;
        rows.iter().map(|r| stored_member(r).map(|m| m.member)).collect()
    }

    fn open_codes(&self, org: OrgId, now: DateTime<Utc>) -> Result<Vec<OpenCode>, StorageError> {
        let rows = self.conn()?.query(
            "SELECT u.id, u.email, c.expires_at FROM member_codes c JOIN users u ON u.id = c.user_id
             WHERE c.org_id = $1 AND u.org_id = c.org_id AND c.used_at IS NULL AND c.expires_at > $2
               AND u.disabled_at IS NULL ORDER BY u.email",
            &[&org.to_string(), &ts(now)],
        )?;
        rows.iter()
            .map(|r| {
                Ok(OpenCode {
                    user_id: UserId::from_uuid(parse_uuid(r.get(0))?),
                    email: r.get(1),
                    expires_at: parse_ts(r.get(2))?,
                })
            })
            .collect()
    }

    fn change_members(&self, actor: &Actor, op: &MemberOp, now: DateTime<Utc>) -> Result<MemberChanged, StorageError> {
        let mut conn = self.conn()?;
        let mut tx = conn.transaction()?;
        let org = actor.org.to_string();
        let at = ts(now);
        // Lock the organization: members changes and pushes of one organization serialize here.
        let last: i64 = tx.query_one("SELECT last_seq FROM organizations WHERE id = $1 FOR UPDATE", &[&org])?.get(0);
        let (by, value) = match op {
            MemberOp::Add { email, .. } => ("email", email.clone()),
            MemberOp::ChangeRole { user, .. } | MemberOp::Remove { user } | MemberOp::NewCode { user, .. } => {
                ("id", user.to_string())
            }
        };
        let target = tx
            .query_opt(
                &format!("SELECT {MEMBER_COLUMNS} FROM users u WHERE u.org_id = $1 AND u.{by} = $2"),
                &[&org, &value],
            )?
            .as_ref()
            .map(stored_member)
            .transpose()?;
        let owners: i64 = tx
            .query_one(
                "SELECT COUNT(*) FROM users WHERE org_id = $1 AND role = 'owner' AND disabled_at IS NULL",
                &[&org],
            )?
            .get(0);
        check_member_op(actor, op, target.as_ref(), owners as u64)?;
        let found = || target.clone().map(|t| t.member).ok_or_else(|| StorageError::NotFound("the member".into()));
        let save_code = "INSERT INTO member_codes (org_id, user_id, code_hash, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (org_id, user_id) DO UPDATE SET code_hash = excluded.code_hash,
                 created_at = excluded.created_at, expires_at = excluded.expires_at, used_at = NULL";
        let (member, removed) = match op {
            MemberOp::Add { email, display_name, role, code_hash, code_expires_at } => {
                let user = match &target {
                    Some(t) => {
                        tx.execute(
                            "UPDATE users SET display_name = $3, role = $4, password_hash = '', disabled_at = NULL
                             WHERE org_id = $1 AND id = $2",
                            &[&org, &t.member.user_id.to_string(), display_name, &role.as_str()],
                        )?;
                        t.member.user_id
                    }
                    None => {
                        let id = UserId::new();
                        tx.execute(
                            "INSERT INTO users (id, org_id, email, password_hash, role, created_at, display_name)
                             VALUES ($1, $2, $3, '', $4, $5, $6)",
                            &[&id.to_string(), &org, email, &role.as_str(), &at, display_name],
                        )?;
                        id
                    }
                };
                tx.execute(save_code, &[&org, &user.to_string(), code_hash, &at, &ts(*code_expires_at)])?;
                let member =
                    Member { user_id: user, email: email.clone(), display_name: display_name.clone(), role: *role };
                (member, false)
            }
            MemberOp::ChangeRole { user, role } => {
                tx.execute(
                    "UPDATE users SET role = $3 WHERE org_id = $1 AND id = $2",
                    &[&org, &user.to_string(), &role.as_str()],
                )?;
                let mut member = found()?;
                member.role = *role;
                (member, false)
            }
            MemberOp::Remove { user } => {
                let user = user.to_string();
                tx.execute("UPDATE users SET disabled_at = $3 WHERE org_id = $1 AND id = $2", &[&org, &user, &at])?;
                tx.execute(
                    "UPDATE devices SET revoked_at = $3 WHERE org_id = $1 AND user_id = $2 AND revoked_at IS NULL",
                    &[&org, &user, &at],
                )?;
                tx.execute("DELETE FROM member_codes WHERE org_id = $1 AND user_id = $2", &[&org, &user])?;
                (found()?, true)
            }
            MemberOp::NewCode { user, code_hash, code_expires_at } => {
                tx.execute(save_code, &[&org, &user.to_string(), code_hash, &at, &ts(*code_expires_at)])?;
                let member = found()?;
                tx.commit()?;
                return Ok(MemberChanged { member, seq: None });
            }
        };
        let seq = last as u64 + 1;
        let change = member_change(&member, removed, now, seq);
        tx.execute(
            "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &org,
                &(seq as i64),
                &change.id.to_string(),
                &change.model.as_str(),
                &change.record_id,
                &to_json(&change)?,
                &actor.user.to_string(),
                &actor.device.to_string(),
                &at,
            ],
        )?;
        tx.execute("UPDATE organizations SET last_seq = $2 WHERE id = $1", &[&org, &(seq as i64)])?;
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
        let mut conn = self.conn()?;
        let mut tx = conn.transaction()?;
        let row = tx.query_opt(
            "SELECT o.id, u.id, u.role FROM member_codes c JOIN users u ON u.id = c.user_id
             JOIN organizations o ON o.id = c.org_id
             WHERE o.slug = $1 AND u.email = $2 AND c.code_hash = $3 AND u.org_id = c.org_id
               AND u.disabled_at IS NULL AND c.used_at IS NULL AND c.expires_at > $4
             FOR UPDATE OF c",
            &[&org_slug, &email, &code_hash, &ts(now)],
        )?;
        let Some(row) = row else { return Ok(None) };
        let (org, user, role): (String, String, String) = (row.get(0), row.get(1), row.get(2));
        tx.execute(
            "UPDATE member_codes SET used_at = $3 WHERE org_id = $1 AND user_id = $2",
            &[&org, &user, &ts(now)],
        )?;
        tx.execute("UPDATE users SET password_hash = $2 WHERE id = $1", &[&user, &password_hash])?;
        tx.commit()?;
        Ok(Some(Login {
            org: OrgId::from_uuid(parse_uuid(&org)?),
            user: UserId::from_uuid(parse_uuid(&user)?),
            role: parse_role(&role)?,
            password_hash: password_hash.to_string(),
        }))
    }

    fn lease(&self, org: OrgId, package: Uuid) -> Result<Option<StoredLease>, StorageError> {
        let mut conn = self.conn()?;
        let mut tx = conn.transaction()?;
        let lease = read_lease(&mut tx, &org.to_string(), &package.to_string())?;
        tx.commit()?;
        Ok(lease)
    }

    fn take_lease(
        &self,
        actor: &Actor,
        package: Uuid,
        take_over: bool,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<LeaseTake, StorageError> {
        let mut conn = self.conn()?;
        let mut tx = conn.transaction()?;
        let (org, pkg) = (actor.org.to_string(), package.to_string());
        // Lock the organization: its leases, pushes and members changes serialize here.
        tx.query_one("SELECT last_seq FROM organizations WHERE id = $1 FOR UPDATE", &[&org])?;
        let current = read_lease(&mut tx, &org, &pkg)?;
        let name: String = tx
            .query_one(
                "SELECT COALESCE(display_name, email) FROM users WHERE id = $1 AND org_id = $2",
                &[&actor.user.to_string(), &org],
            )?
            .get(0);
        let plan = match leases::plan_take(current.as_ref(), actor.user, &name, take_over, now, ttl) {
            Ok(plan) => plan,
            Err(refused) => return Ok(refused),
        };
        tx.execute(
            "INSERT INTO prep_leases (org_id, package_id, holder, acquired_at, expires_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (org_id, package_id) DO UPDATE SET holder = excluded.holder,
                 acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
            &[&org, &pkg, &actor.user.to_string(), &ts(plan.lease.acquired_at), &ts(plan.lease.expires_at)],
        )?;
        let seq = match &plan.event {
            Some(event) => Some(log_lease_event(&mut tx, actor, package, event, now)?),
            None => None,
        };
        tx.commit()?;
        Ok(LeaseTake::Granted { grant: plan.grant, lease: plan.lease, seq })
    }

    fn release_lease(&self, actor: &Actor, package: Uuid, now: DateTime<Utc>) -> Result<Option<u64>, StorageError> {
        let mut conn = self.conn()?;
        let mut tx = conn.transaction()?;
        let (org, pkg) = (actor.org.to_string(), package.to_string());
        tx.query_one("SELECT last_seq FROM organizations WHERE id = $1 FOR UPDATE", &[&org])?;
        let Some(lease) = read_lease(&mut tx, &org, &pkg)?.filter(|l| l.holder == actor.user) else { return Ok(None) };
        tx.execute("DELETE FROM prep_leases WHERE org_id = $1 AND package_id = $2", &[&org, &pkg])?;
        let seq = log_lease_event(&mut tx, actor, package, &leases::release_event(&lease), now)?;
        tx.commit()?;
        Ok(Some(seq))
    }

    fn lease_audit(&self, org: OrgId, package: Uuid) -> Result<Vec<LeaseAudit>, StorageError> {
        let mut conn = self.conn()?;
        let rows = conn.query(
            "SELECT at, action, actor, previous_holder, previous_expires_at FROM lease_audit
             WHERE org_id = $1 AND package_id = $2 ORDER BY at, ctid",
            &[&org.to_string(), &package.to_string()],
        )?;
        rows.iter()
            .map(|r| {
                let previous: Option<String> = r.get(3);
                let previous_expires: Option<String> = r.get(4);
                Ok(LeaseAudit {
                    at: parse_ts(r.get(0))?,
                    action: r.get(1),
                    actor: UserId::from_uuid(parse_uuid(r.get(2))?),
                    previous_holder: previous.as_deref().map(parse_uuid).transpose()?.map(UserId::from_uuid),
                    previous_expires_at: previous_expires.as_deref().map(parse_ts).transpose()?,
                })
            })
            .collect()
    }

    fn source_commit(&self, change: &crate::source_rows::SourceCommit) -> Result<(), StorageError> {
        crate::source_pg::commit(&mut *self.conn()?, change)
    }

    fn source_tender(&self, tender: Uuid) -> Result<Option<crate::source_rows::TenderRow>, StorageError> {
        crate::source_pg::read_tender(&mut *self.conn()?, tender)
    }

    fn source_audit(&self, tender: Uuid) -> Result<Vec<pactwise_source::audit::AuditEntry>, StorageError> {
        crate::source_pg::audit(&mut *self.conn()?, tender)
    }

    fn source_envelopes(&self, tender: Uuid, kind: &str) -> Result<Vec<crate::source_rows::EnvelopeRow>, StorageError> {
        crate::source_pg::envelopes(&mut *self.conn()?, tender, kind)
    }

    fn source_invitation(&self, token_hash: &str) -> Result<Option<crate::source_rows::Invitation>, StorageError> {
        crate::source_pg::invitation(&mut *self.conn()?, token_hash)
    }

    fn source_vendor_by_email(&self, email: &str) -> Result<Option<crate::source_rows::VendorAccount>, StorageError> {
        crate::source_pg::vendor_by_email(&mut *self.conn()?, email)
    }

    fn source_create_session(
        &self,
        token_hash: &str,
        account: Uuid,
        expires: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        crate::source_pg::create_session(&mut *self.conn()?, token_hash, account, expires)
    }

    fn source_session(&self, token_hash: &str) -> Result<Option<(Uuid, DateTime<Utc>)>, StorageError> {
        crate::source_pg::session(&mut *self.conn()?, token_hash)
    }

    fn source_participations(&self, account: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
        crate::source_pg::participations(&mut *self.conn()?, account)
    }

    fn source_participants(&self, tender: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
        crate::source_pg::participants(&mut *self.conn()?, tender)
    }

    fn source_questions(&self, tender: Uuid) -> Result<Vec<crate::source_rows::Question>, StorageError> {
        crate::source_pg::questions(&mut *self.conn()?, tender)
    }

    fn source_scores(&self, tender: Uuid) -> Result<Vec<crate::source_rows::StoredScore>, StorageError> {
        crate::source_pg::scores(&mut *self.conn()?, tender)
    }

    fn source_tender_release(&self, tender: Uuid) -> Result<Option<String>, StorageError> {
        crate::source_pg::tender_release(&mut *self.conn()?, tender)
    }

    fn source_tenders_of(&self, org: pactwise_domain::OrgId) -> Result<Vec<Uuid>, StorageError> {
        crate::source_pg::tenders_of(&mut *self.conn()?, org)
    }

    fn source_upload_create(
        &self,
        upload: &crate::source_rows::UploadRow,
        max_open: usize,
        now: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        crate::source_pg::upload_create(&mut *self.conn()?, upload, max_open, now)
    }

    fn source_upload(&self, id: Uuid) -> Result<Option<crate::source_rows::UploadRow>, StorageError> {
        crate::source_pg::upload(&mut *self.conn()?, id)
    }

    fn source_upload_append(
        &self,
        id: Uuid,
        first_byte: u64,
        length: u64,
        sealed: &[u8],
        expires_at: DateTime<Utc>,
    ) -> Result<bool, StorageError> {
        crate::source_pg::upload_append(&mut *self.conn()?, id, first_byte, length, sealed, expires_at)
    }

    fn source_upload_chunks(&self, id: Uuid) -> Result<Vec<(u64, Vec<u8>)>, StorageError> {
        crate::source_pg::upload_chunks(&mut *self.conn()?, id)
    }

    fn source_upload_finish(&self, id: Uuid, summary: &str) -> Result<(), StorageError> {
        crate::source_pg::upload_finish(&mut *self.conn()?, id, summary)
    }

    fn source_upload_delete(&self, id: Uuid) -> Result<(), StorageError> {
        crate::source_pg::upload_delete(&mut *self.conn()?, id)
    }
}

fn read_lease(
    tx: &mut postgres::Transaction<'_>,
    org: &str,
    package: &str,
) -> Result<Option<StoredLease>, StorageError> {
    let row = tx.query_opt(
        "SELECT l.holder, COALESCE(u.display_name, u.email), l.acquired_at, l.expires_at FROM prep_leases l
         JOIN users u ON u.id = l.holder WHERE l.org_id = $1 AND l.package_id = $2",
        &[&org, &package],
    )?;
    row.map(|r| leases::parse_lease(r.get(0), r.get(1), r.get(2), r.get(3))).transpose()
}

/// The audit row and the organization's log entry of a lease event, inside the caller's transaction (which holds
/// the organization's row lock).
fn log_lease_event(
    tx: &mut postgres::Transaction<'_>,
    actor: &Actor,
    package: Uuid,
    event: &LeaseEvent,
    now: DateTime<Utc>,
) -> Result<u64, StorageError> {
    let (org, pkg, at) = (actor.org.to_string(), package.to_string(), ts(now));
    tx.execute(
        "INSERT INTO lease_audit (org_id, package_id, at, action, actor, previous_holder, previous_expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &org,
            &pkg,
            &at,
            &leases::audit_action(event.event),
            &actor.user.to_string(),
            &event.previous_holder.map(|u| u.to_string()),
            &event.previous_expires_at.map(ts),
        ],
    )?;
    let last: i64 = tx.query_one("SELECT last_seq FROM organizations WHERE id = $1", &[&org])?.get(0);
    let seq = last as u64 + 1;
    let change = leases::lease_change(package, event, now, seq);
    tx.execute(
        "INSERT INTO changes (org_id, seq, change_id, model, record_id, change_json, author, device_id, received_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &org,
            &(seq as i64),
            &change.id.to_string(),
            &change.model.as_str(),
            &pkg,
            &to_json(&change)?,
            &actor.user.to_string(),
            &actor.device.to_string(),
            &at,
        ],
    )?;
    tx.execute("UPDATE organizations SET last_seq = $2 WHERE id = $1", &[&org, &(seq as i64)])?;
    Ok(seq)
}

/// The step tables inside a push's transaction.
struct PgSteps<'a, 't> {
    tx: &'a mut postgres::Transaction<'t>,
    org: &'a str,
}

impl StepTables for PgSteps<'_, '_> {
    fn opening(&mut self, step: &str) -> Result<Option<Opening>, StorageError> {
        let row = self.tx.query_opt(
            "SELECT run_id, requester, four_eyes, closed FROM approval_openings WHERE org_id = $1 AND step_id = $2",
            &[&self.org, &step],
        )?;
        row.map(|r| {
            Ok(Opening {
                run_id: r.get(0),
                requester: UserId::from_uuid(parse_uuid(r.get(1))?),
                four_eyes: r.get(2),
                closed: r.get(3),
            })
        })
        .transpose()
    }

    fn open(&mut self, step: &str, o: &Opening) -> Result<(), StorageError> {
        self.tx.execute(
            "INSERT INTO approval_openings (org_id, step_id, run_id, requester, four_eyes, closed)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[&self.org, &step, &o.run_id, &o.requester.to_string(), &o.four_eyes, &o.closed],
        )?;
        Ok(())
    }

    fn schedule_escalation(&mut self, step: &str, at: DateTime<Utc>) -> Result<(), StorageError> {
        self.tx.execute(
            "INSERT INTO approval_escalations (org_id, step_id, escalate_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            &[&self.org, &step, &ts(at)],
        )?;
        Ok(())
    }

    fn close(&mut self, step: &str) -> Result<(), StorageError> {
        self.tx.execute(
            "UPDATE approval_openings SET closed = TRUE WHERE org_id = $1 AND step_id = $2",
            &[&self.org, &step],
        )?;
        Ok(())
    }

    fn pinned_roles(&mut self, step: &str) -> Result<Option<Vec<Role>>, StorageError> {
        let row = self.tx.query_opt(
            "SELECT eligible_roles FROM approval_steps WHERE org_id = $1 AND step_id = $2",
            &[&self.org, &step],
        )?;
        row.map(|r| parse_roles(r.get(0))).transpose()
    }

    fn pin_roles(&mut self, step: &str, roles: &[Role]) -> Result<(), StorageError> {
        self.tx.execute(
            "INSERT INTO approval_steps (org_id, step_id, eligible_roles) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            &[&self.org, &step, &roles_text(roles)],
        )?;
        Ok(())
    }

    fn decided(&mut self, step: &str) -> Result<bool, StorageError> {
        Ok(self
            .tx
            .query_opt("SELECT 1 FROM approvals WHERE org_id = $1 AND step_id = $2", &[&self.org, &step])?
            .is_some())
    }

    fn decided_another_step(&mut self, run: &str, step: &str, approver: UserId) -> Result<bool, StorageError> {
        Ok(self
            .tx
            .query_opt(
                "SELECT 1 FROM approvals a JOIN approval_openings o ON o.org_id = a.org_id AND o.step_id = a.step_id
                 WHERE a.org_id = $1 AND o.run_id = $2 AND a.step_id <> $3 AND a.approver = $4 LIMIT 1",
                &[&self.org, &run, &step, &approver.to_string()],
            )?
            .is_some())
    }

    fn stamp(
        &mut self,
        step: &str,
        decision: &str,
        approver: UserId,
        seq: u64,
        at: DateTime<Utc>,
    ) -> Result<(), StorageError> {
        self.tx.execute(
            "INSERT INTO approvals (org_id, step_id, decision, approver, seq, decided_at) VALUES ($1, $2, $3, $4, $5, $6)",
            &[&self.org, &step, &decision, &approver.to_string(), &(seq as i64), &ts(at)],
        )?;
        Ok(())
    }
}
