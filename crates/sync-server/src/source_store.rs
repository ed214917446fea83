//! What PactWise Source keeps, as rows, and its SQLite tables. A tender is one row whose state (the machine of
//! `pactwise_source::tender`) is a JSON document updated under a version check; everything else is appended: the
//! audit trail (hash-chained), the sealed envelopes (ciphertext only), invitations, vendor accounts and sessions.
//! Every change to a tender and its appended rows is one transaction ([`SourceCommit`]).
//!
//! The PostgreSQL backend has the same tables and commit (`crate::source_pg`).

use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, UserId};
use pactwise_source::audit::AuditEntry;
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::source_rows::{
    EnvelopeRow, Invitation, Question, SourceCommit, StoredScore, TenderRow, UploadRow, VendorAccount,
};
use crate::storage::{StorageError, db_json, parse_ts, parse_uuid, to_json, ts};

pub(crate) const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS source_tenders (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    title TEXT NOT NULL,
    requested_by TEXT NOT NULL REFERENCES users(id),
    approved_by TEXT REFERENCES users(id),
    published_hash TEXT NOT NULL,
    artifacts_json TEXT NOT NULL,
    opening_key TEXT NOT NULL,
    deadline_key TEXT NOT NULL,
    deadline_key_wrapped BLOB NOT NULL,
    machine_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_audit (
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    seq INTEGER NOT NULL,
    entry_json TEXT NOT NULL,
    PRIMARY KEY (tender_id, seq)
);
CREATE TABLE IF NOT EXISTS source_vendor_accounts (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_vendor_sessions (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES source_vendor_accounts(id),
    expires_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_invitations (
    token_hash TEXT PRIMARY KEY,
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    vendor_name TEXT NOT NULL,
    email TEXT NOT NULL,
    created_at TEXT NOT NULL,
    used_at TEXT,
    account_id TEXT REFERENCES source_vendor_accounts(id)
);
CREATE TABLE IF NOT EXISTS source_participants (
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    account_id TEXT NOT NULL REFERENCES source_vendor_accounts(id),
    vendor_name TEXT NOT NULL,
    PRIMARY KEY (tender_id, account_id)
);
CREATE TABLE IF NOT EXISTS source_questions (
    id TEXT PRIMARY KEY,
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    account_id TEXT NOT NULL REFERENCES source_vendor_accounts(id),
    question TEXT NOT NULL,
    asked_at TEXT NOT NULL,
    answer TEXT,
    answered_at TEXT
);
CREATE TABLE IF NOT EXISTS source_scores (
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    account_id TEXT NOT NULL REFERENCES source_vendor_accounts(id),
    criterion_id TEXT NOT NULL,
    evaluator TEXT NOT NULL REFERENCES users(id),
    points INTEGER NOT NULL,
    reason TEXT NOT NULL,
    scored_at TEXT NOT NULL,
    PRIMARY KEY (tender_id, account_id, criterion_id, evaluator)
);
CREATE TABLE IF NOT EXISTS source_releases (
    tender_id TEXT PRIMARY KEY REFERENCES source_tenders(id),
    release_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_envelopes (
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    account_id TEXT NOT NULL REFERENCES source_vendor_accounts(id),
    submission INTEGER NOT NULL,
    kind TEXT NOT NULL,
    part TEXT NOT NULL,
    summary TEXT NOT NULL,
    sealed BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tender_id, account_id, submission, kind, part)
);
CREATE TABLE IF NOT EXISTS source_uploads (
    id TEXT PRIMARY KEY,
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    account_id TEXT NOT NULL REFERENCES source_vendor_accounts(id),
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    received INTEGER NOT NULL,
    finished_summary TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS source_uploads_by_account ON source_uploads (account_id);
CREATE TABLE IF NOT EXISTS source_upload_chunks (
    upload_id TEXT NOT NULL REFERENCES source_uploads(id) ON DELETE CASCADE,
    first_byte INTEGER NOT NULL,
    length INTEGER NOT NULL,
    sealed BLOB NOT NULL,
    PRIMARY KEY (upload_id, first_byte)
);
"#;

fn tender_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<[Option<String>; 12]> {
    let mut out: [Option<String>; 12] = Default::default();
    for (index, slot) in out.iter_mut().enumerate() {
        *slot = row.get(index)?;
    }
    Ok(out)
}

const TENDER_COLUMNS: &str = "id, org_id, version, status, title, requested_by, approved_by, published_hash, \
                              artifacts_json, opening_key, deadline_key, machine_json, deadline_key_wrapped, created_at";

pub(crate) fn read_tender(conn: &Connection, tender: Uuid) -> Result<Option<TenderRow>, StorageError> {
    let found = conn
        .query_row(
            "SELECT id, org_id, CAST(version AS TEXT), status, title, requested_by, approved_by, published_hash, \
             artifacts_json, opening_key, deadline_key, machine_json, deadline_key_wrapped, created_at \
             FROM source_tenders WHERE id = ?1",
            params![tender.to_string()],
            |row| Ok((tender_from_row(row)?, row.get::<_, Vec<u8>>(12)?, row.get::<_, String>(13)?)),
        )
        .optional()?;
    let Some((text, wrapped, created_at)) = found else { return Ok(None) };
    let field = |index: usize| text[index].clone().unwrap_or_default();
    Ok(Some(TenderRow {
        id: parse_uuid(&field(0))?,
        org: OrgId::from_uuid(parse_uuid(&field(1))?),
        version: field(2).parse().map_err(|_| StorageError::Database("a tender's version is not a number".into()))?,
        status: field(3),
        title: field(4),
        requested_by: UserId::from_uuid(parse_uuid(&field(5))?),
        approved_by: text[6].as_deref().map(parse_uuid).transpose()?.map(UserId::from_uuid),
        published_hash: field(7),
        artifacts_json: field(8),
        opening_key: field(9),
        deadline_key: field(10),
        machine_json: field(11),
        deadline_key_wrapped: wrapped,
        created_at: parse_ts(&created_at)?,
    }))
}

pub(crate) fn commit(conn: &mut Connection, change: &SourceCommit) -> Result<(), StorageError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    if let Some(row) = &change.tender {
        match change.expected_version {
            None => {
                tx.execute(
                    &format!(
                        "INSERT INTO source_tenders ({TENDER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, \
                         ?11, ?12, ?13, ?14)"
                    ),
                    params![
                        row.id.to_string(),
                        row.org.to_string(),
                        row.version as i64,
                        row.status,
                        row.title,
                        row.requested_by.to_string(),
                        row.approved_by.map(|u| u.to_string()),
                        row.published_hash,
                        row.artifacts_json,
                        row.opening_key,
                        row.deadline_key,
                        row.machine_json,
                        row.deadline_key_wrapped,
                        ts(row.created_at),
                    ],
                )?;
            }
            Some(expected) => {
                let changed = tx.execute(
                    "UPDATE source_tenders SET version = ?1, status = ?2, approved_by = ?3, deadline_key = ?4, \
                     deadline_key_wrapped = ?5, machine_json = ?6 WHERE id = ?7 AND org_id = ?8 AND version = ?9",
                    params![
                        row.version as i64,
                        row.status,
                        row.approved_by.map(|u| u.to_string()),
                        row.deadline_key,
                        row.deadline_key_wrapped,
                        row.machine_json,
                        row.id.to_string(),
                        row.org.to_string(),
                        expected as i64,
                    ],
                )?;
                if changed != 1 {
                    return Err(StorageError::Conflict("a newer change to this tender".into()));
                }
            }
        }
    }
    if let Some(account) = &change.new_account {
        tx.execute(
            "INSERT INTO source_vendor_accounts (id, email, password_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![account.id.to_string(), account.email, account.password_hash, ts(Utc::now())],
        )?;
    }
    if let Some(invitation) = &change.invitation {
        tx.execute(
            "INSERT INTO source_invitations (token_hash, tender_id, vendor_name, email, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                invitation.token_hash,
                invitation.tender.to_string(),
                invitation.vendor_name,
                invitation.email,
                ts(Utc::now())
            ],
        )?;
    }
    if let Some((token_hash, account, vendor_name)) = &change.accepted {
        let used = tx.execute(
            "UPDATE source_invitations SET used_at = ?1, account_id = ?2 WHERE token_hash = ?3 AND used_at IS NULL",
            params![ts(Utc::now()), account.to_string(), token_hash],
        )?;
        if used != 1 {
            return Err(StorageError::Conflict("an accepted invitation".into()));
        }
        let tender: String =
            tx.query_row("SELECT tender_id FROM source_invitations WHERE token_hash = ?1", params![token_hash], |r| {
                r.get(0)
            })?;
        tx.execute(
            "INSERT INTO source_participants (tender_id, account_id, vendor_name) VALUES (?1, ?2, ?3)",
            params![tender, account.to_string(), vendor_name],
        )?;
    }
    if let Some(question) = &change.question {
        tx.execute(
            "INSERT INTO source_questions (id, tender_id, account_id, question, asked_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                question.id.to_string(),
                question.tender.to_string(),
                question.account.to_string(),
                question.question,
                ts(question.asked_at)
            ],
        )?;
    }
    if let Some((id, answer, at)) = &change.answer {
        let changed = tx.execute(
            "UPDATE source_questions SET answer = ?1, answered_at = ?2 WHERE id = ?3 AND answer IS NULL",
            params![answer, ts(*at), id.to_string()],
        )?;
        if changed != 1 {
            return Err(StorageError::Conflict("an answer to this question".into()));
        }
    }
    if let Some(score) = &change.score {
        tx.execute(
            "INSERT INTO source_scores (tender_id, account_id, criterion_id, evaluator, points, reason, scored_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (tender_id, account_id, criterion_id, evaluator) \
             DO UPDATE SET points = excluded.points, reason = excluded.reason, scored_at = excluded.scored_at",
            params![
                score.tender.to_string(),
                score.account.to_string(),
                score.criterion_id,
                score.evaluator.to_string(),
                score.points,
                score.reason,
                ts(score.scored_at)
            ],
        )?;
    }
    if let (Some(release), Some(tender)) = (&change.tender_release, &change.tender) {
        tx.execute(
            "INSERT INTO source_releases (tender_id, release_json) VALUES (?1, ?2)",
            params![tender.id.to_string(), release],
        )?;
    }
    for entry in &change.audit {
        let tender = change
            .tender
            .as_ref()
            .map(|t| t.id)
            .ok_or_else(|| StorageError::Database("audit without tender".into()))?;
        tx.execute(
            "INSERT INTO source_audit (tender_id, seq, entry_json) VALUES (?1, ?2, ?3)",
            params![tender.to_string(), entry.seq as i64, to_json(entry)?],
        )?;
    }
    for envelope in &change.envelopes {
        tx.execute(
            "INSERT INTO source_envelopes (tender_id, account_id, submission, kind, part, summary, sealed, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                envelope.tender.to_string(),
                envelope.account.to_string(),
                envelope.submission,
                envelope.kind,
                envelope.part,
                envelope.summary,
                envelope.sealed,
                ts(envelope.created_at),
            ],
        )?;
    }
    for upload in &change.sealed_uploads {
        tx.execute("DELETE FROM source_upload_chunks WHERE upload_id = ?1", params![upload.to_string()])?;
        tx.execute("DELETE FROM source_uploads WHERE id = ?1", params![upload.to_string()])?;
    }
    tx.commit()?;
    Ok(())
}

pub(crate) fn audit(conn: &Connection, tender: Uuid) -> Result<Vec<AuditEntry>, StorageError> {
    let rows: Vec<String> = conn
        .prepare_cached("SELECT entry_json FROM source_audit WHERE tender_id = ?1 ORDER BY seq")?
        .query_map(params![tender.to_string()], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    rows.iter().map(|row| db_json(row)).collect()
}

pub(crate) fn envelopes(conn: &Connection, tender: Uuid, kind: &str) -> Result<Vec<EnvelopeRow>, StorageError> {
    type Raw = (String, i64, String, String, Vec<u8>, String);
    let rows: Vec<Raw> = conn
        .prepare_cached(
            "SELECT account_id, submission, part, summary, sealed, created_at FROM source_envelopes \
             WHERE tender_id = ?1 AND kind = ?2 ORDER BY account_id, submission, part",
        )?
        .query_map(params![tender.to_string(), kind], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(account, submission, part, summary, sealed, created_at)| {
            Ok(EnvelopeRow {
                tender,
                account: parse_uuid(&account)?,
                submission: u32::try_from(submission).unwrap_or(0),
                kind: kind.to_owned(),
                part,
                summary,
                sealed,
                created_at: parse_ts(&created_at)?,
            })
        })
        .collect()
}

pub(crate) fn invitation(conn: &Connection, token_hash: &str) -> Result<Option<Invitation>, StorageError> {
    let found: Option<(String, String, String, Option<String>)> = conn
        .query_row(
            "SELECT tender_id, vendor_name, email, used_at FROM source_invitations WHERE token_hash = ?1",
            params![token_hash],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    found
        .map(|(tender, vendor_name, email, used)| {
            Ok(Invitation {
                token_hash: token_hash.to_owned(),
                tender: parse_uuid(&tender)?,
                vendor_name,
                email,
                used: used.is_some(),
            })
        })
        .transpose()
}

pub(crate) fn vendor_by_email(conn: &Connection, email: &str) -> Result<Option<VendorAccount>, StorageError> {
    let found: Option<(String, String, String)> = conn
        .query_row(
            "SELECT id, email, password_hash FROM source_vendor_accounts WHERE email = ?1",
            params![email],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    found.map(|(id, email, password_hash)| Ok(VendorAccount { id: parse_uuid(&id)?, email, password_hash })).transpose()
}

pub(crate) fn create_session(
    conn: &Connection,
    token_hash: &str,
    account: Uuid,
    expires: DateTime<Utc>,
) -> Result<(), StorageError> {
    conn.execute(
        "INSERT INTO source_vendor_sessions (token_hash, account_id, expires_at) VALUES (?1, ?2, ?3)",
        params![token_hash, account.to_string(), ts(expires)],
    )?;
    Ok(())
}

pub(crate) fn session(conn: &Connection, token_hash: &str) -> Result<Option<(Uuid, DateTime<Utc>)>, StorageError> {
    let found: Option<(String, String)> = conn
        .query_row(
            "SELECT account_id, expires_at FROM source_vendor_sessions WHERE token_hash = ?1",
            params![token_hash],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    found.map(|(account, expires)| Ok((parse_uuid(&account)?, parse_ts(&expires)?))).transpose()
}

/// The tenders a vendor account joined, with the name it joined under.
pub(crate) fn participations(conn: &Connection, account: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
    let rows: Vec<(String, String)> = conn
        .prepare_cached(
            "SELECT tender_id, vendor_name FROM source_participants WHERE account_id = ?1 ORDER BY tender_id",
        )?
        .query_map(params![account.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    rows.into_iter().map(|(tender, name)| Ok((parse_uuid(&tender)?, name))).collect()
}

/// The vendors that joined a tender: account and name.
pub(crate) fn participants(conn: &Connection, tender: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
    let rows: Vec<(String, String)> = conn
        .prepare_cached(
            "SELECT account_id, vendor_name FROM source_participants WHERE tender_id = ?1 ORDER BY vendor_name",
        )?
        .query_map(params![tender.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    rows.into_iter().map(|(account, name)| Ok((parse_uuid(&account)?, name))).collect()
}

pub(crate) fn questions(conn: &Connection, tender: Uuid) -> Result<Vec<Question>, StorageError> {
    type Raw = (String, String, String, String, Option<String>, Option<String>);
    let rows: Vec<Raw> = conn
        .prepare_cached(
            "SELECT id, account_id, question, asked_at, answer, answered_at FROM source_questions \
             WHERE tender_id = ?1 ORDER BY asked_at, id",
        )?
        .query_map(params![tender.to_string()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(id, account, question, asked_at, answer, answered_at)| {
            Ok(Question {
                id: parse_uuid(&id)?,
                tender,
                account: parse_uuid(&account)?,
                question,
                asked_at: parse_ts(&asked_at)?,
                answer,
                answered_at: answered_at.as_deref().map(parse_ts).transpose()?,
            })
        })
        .collect()
}

pub(crate) fn scores(conn: &Connection, tender: Uuid) -> Result<Vec<StoredScore>, StorageError> {
    type Raw = (String, String, String, i64, String, String);
    let rows: Vec<Raw> = conn
        .prepare_cached(
            "SELECT account_id, criterion_id, evaluator, points, reason, scored_at FROM source_scores \
             WHERE tender_id = ?1 ORDER BY account_id, criterion_id, evaluator",
        )?
        .query_map(params![tender.to_string()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?
        .collect::<Result<_, _>>()?;
    rows.into_iter()
        .map(|(account, criterion_id, evaluator, points, reason, scored_at)| {
            Ok(StoredScore {
                tender,
                account: parse_uuid(&account)?,
                criterion_id,
                evaluator: UserId::from_uuid(parse_uuid(&evaluator)?),
                points: u32::try_from(points).unwrap_or(0),
                reason,
                scored_at: parse_ts(&scored_at)?,
            })
        })
        .collect()
}

pub(crate) fn tender_release(conn: &Connection, tender: Uuid) -> Result<Option<String>, StorageError> {
    Ok(conn
        .query_row("SELECT release_json FROM source_releases WHERE tender_id = ?1", params![tender.to_string()], |r| {
            r.get(0)
        })
        .optional()?)
}

pub(crate) fn tenders_of(conn: &Connection, org: OrgId) -> Result<Vec<Uuid>, StorageError> {
    let mut statement = conn.prepare("SELECT id FROM source_tenders WHERE org_id = ?1 ORDER BY created_at DESC, id")?;
    let ids =
        statement.query_map(params![org.to_string()], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    ids.iter().map(|id| parse_uuid(id)).collect()
}

const UPLOAD_COLUMNS: &str =
    "id, tender_id, account_id, name, size, sha256, received, finished_summary, created_at, expires_at";

type RawUpload = (String, String, String, String, i64, String, i64, Option<String>, String, String);

pub(crate) fn upload_from_raw(raw: RawUpload) -> Result<UploadRow, StorageError> {
    let (id, tender, account, name, size, sha256, received, finished, created_at, expires_at) = raw;
    Ok(UploadRow {
        id: parse_uuid(&id)?,
        tender: parse_uuid(&tender)?,
        account: parse_uuid(&account)?,
        name,
        size: u64::try_from(size).unwrap_or(0),
        sha256,
        received: u64::try_from(received).unwrap_or(0),
        finished,
        created_at: parse_ts(&created_at)?,
        expires_at: parse_ts(&expires_at)?,
    })
}

pub(crate) fn upload_create(
    conn: &mut Connection,
    upload: &UploadRow,
    max_open: usize,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute(
        "DELETE FROM source_upload_chunks WHERE upload_id IN (SELECT id FROM source_uploads WHERE expires_at <= ?1)",
        params![ts(now)],
    )?;
    tx.execute("DELETE FROM source_uploads WHERE expires_at <= ?1", params![ts(now)])?;
    let open: i64 = tx.query_row(
        "SELECT COUNT(*) FROM source_uploads WHERE account_id = ?1",
        params![upload.account.to_string()],
        |r| r.get(0),
    )?;
    if usize::try_from(open).unwrap_or(usize::MAX) >= max_open {
        return Err(StorageError::Forbidden(crate::source_uploads::too_many_open(max_open)));
    }
    tx.execute(
        &format!("INSERT INTO source_uploads ({UPLOAD_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        params![
            upload.id.to_string(),
            upload.tender.to_string(),
            upload.account.to_string(),
            upload.name,
            upload.size as i64,
            upload.sha256,
            upload.received as i64,
            upload.finished,
            ts(upload.created_at),
            ts(upload.expires_at),
        ],
    )?;
    tx.commit()?;
    Ok(())
}

pub(crate) fn upload(conn: &Connection, id: Uuid) -> Result<Option<UploadRow>, StorageError> {
    conn.query_row(
        &format!("SELECT {UPLOAD_COLUMNS} FROM source_uploads WHERE id = ?1"),
        params![id.to_string()],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
            ))
        },
    )
    .optional()?
    .map(upload_from_raw)
    .transpose()
}

pub(crate) fn upload_append(
    conn: &mut Connection,
    id: Uuid,
    first_byte: u64,
    length: u64,
    sealed: &[u8],
    expires_at: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let moved = tx.execute(
        "UPDATE source_uploads SET received = received + ?1, expires_at = ?2 \
         WHERE id = ?3 AND received = ?4 AND finished_summary IS NULL AND received + ?1 <= size",
        params![length as i64, ts(expires_at), id.to_string(), first_byte as i64],
    )?;
    if moved != 1 {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO source_upload_chunks (upload_id, first_byte, length, sealed) VALUES (?1, ?2, ?3, ?4)",
        params![id.to_string(), first_byte as i64, length as i64, sealed],
    )?;
    tx.commit()?;
    Ok(true)
}

pub(crate) fn upload_chunks(conn: &Connection, id: Uuid) -> Result<Vec<(u64, Vec<u8>)>, StorageError> {
    let rows: Vec<(i64, Vec<u8>)> = conn
        .prepare_cached("SELECT first_byte, sealed FROM source_upload_chunks WHERE upload_id = ?1 ORDER BY first_byte")?
        .query_map(params![id.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows.into_iter().map(|(first, sealed)| (u64::try_from(first).unwrap_or(0), sealed)).collect())
}

pub(crate) fn upload_finish(conn: &mut Connection, id: Uuid, summary: &str) -> Result<(), StorageError> {
    let changed = conn.execute(
        "UPDATE source_uploads SET finished_summary = ?1 WHERE id = ?2 AND received = size",
        params![summary, id.to_string()],
    )?;
    if changed != 1 {
        return Err(StorageError::NotFound("a complete upload".into()));
    }
    Ok(())
}

pub(crate) fn upload_delete(conn: &mut Connection, id: Uuid) -> Result<(), StorageError> {
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM source_upload_chunks WHERE upload_id = ?1", params![id.to_string()])?;
    tx.execute("DELETE FROM source_uploads WHERE id = ?1", params![id.to_string()])?;
    tx.commit()?;
    Ok(())
}
