//! PactWise Source's rows on PostgreSQL: the same tables as `crate::source_store` (SQLite), with PostgreSQL's types
//! and placeholders, and the same one-transaction commit under the tender's version check.

use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, UserId};
use pactwise_source::audit::AuditEntry;
use postgres::GenericClient;
use uuid::Uuid;

use crate::source_rows::{
    EnvelopeRow, Invitation, Question, SourceCommit, StoredScore, TenderRow, UploadRow, VendorAccount,
};
use crate::storage::{StorageError, db_json, parse_ts, parse_uuid, to_json, ts};

pub(crate) const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS source_tenders (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    version BIGINT NOT NULL,
    status TEXT NOT NULL,
    title TEXT NOT NULL,
    requested_by TEXT NOT NULL REFERENCES users(id),
    approved_by TEXT REFERENCES users(id),
    published_hash TEXT NOT NULL,
    artifacts_json TEXT NOT NULL,
    opening_key TEXT NOT NULL,
    deadline_key TEXT NOT NULL,
    deadline_key_wrapped BYTEA NOT NULL,
    machine_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS source_audit (
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    seq BIGINT NOT NULL,
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
    points BIGINT NOT NULL,
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
    submission BIGINT NOT NULL,
    kind TEXT NOT NULL,
    part TEXT NOT NULL,
    summary TEXT NOT NULL,
    sealed BYTEA NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tender_id, account_id, submission, kind, part)
);
CREATE TABLE IF NOT EXISTS source_uploads (
    id TEXT PRIMARY KEY,
    tender_id TEXT NOT NULL REFERENCES source_tenders(id),
    account_id TEXT NOT NULL REFERENCES source_vendor_accounts(id),
    name TEXT NOT NULL,
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    received BIGINT NOT NULL,
    finished_summary TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS source_uploads_by_account ON source_uploads (account_id);
CREATE TABLE IF NOT EXISTS source_upload_chunks (
    upload_id TEXT NOT NULL REFERENCES source_uploads(id) ON DELETE CASCADE,
    first_byte BIGINT NOT NULL,
    length BIGINT NOT NULL,
    sealed BYTEA NOT NULL,
    PRIMARY KEY (upload_id, first_byte)
);
"#;

pub(crate) fn read_tender(client: &mut impl GenericClient, tender: Uuid) -> Result<Option<TenderRow>, StorageError> {
    let Some(row) = client.query_opt(
        "SELECT id, org_id, version, status, title, requested_by, approved_by, published_hash, artifacts_json, \
         opening_key, deadline_key, deadline_key_wrapped, machine_json, created_at FROM source_tenders WHERE id = $1",
        &[&tender.to_string()],
    )?
    else {
        return Ok(None);
    };
    let approved: Option<String> = row.get(6);
    Ok(Some(TenderRow {
        id: parse_uuid(&row.get::<_, String>(0))?,
        org: OrgId::from_uuid(parse_uuid(&row.get::<_, String>(1))?),
        version: u64::try_from(row.get::<_, i64>(2)).unwrap_or(0),
        status: row.get(3),
        title: row.get(4),
        requested_by: UserId::from_uuid(parse_uuid(&row.get::<_, String>(5))?),
        approved_by: approved.as_deref().map(parse_uuid).transpose()?.map(UserId::from_uuid),
        published_hash: row.get(7),
        artifacts_json: row.get(8),
        opening_key: row.get(9),
        deadline_key: row.get(10),
        deadline_key_wrapped: row.get(11),
        machine_json: row.get(12),
        created_at: parse_ts(&row.get::<_, String>(13))?,
    }))
}

pub(crate) fn commit(client: &mut postgres::Client, change: &SourceCommit) -> Result<(), StorageError> {
    let mut tx = client.transaction()?;
    if let Some(row) = &change.tender {
        match change.expected_version {
            None => {
                tx.execute(
                    "INSERT INTO source_tenders (id, org_id, version, status, title, requested_by, approved_by, \
                     published_hash, artifacts_json, opening_key, deadline_key, deadline_key_wrapped, machine_json, \
                     created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                    &[
                        &row.id.to_string(),
                        &row.org.to_string(),
                        &(row.version as i64),
                        &row.status,
                        &row.title,
                        &row.requested_by.to_string(),
                        &row.approved_by.map(|u| u.to_string()),
                        &row.published_hash,
                        &row.artifacts_json,
                        &row.opening_key,
                        &row.deadline_key,
                        &row.deadline_key_wrapped,
                        &row.machine_json,
                        &ts(row.created_at),
                    ],
                )?;
            }
            Some(expected) => {
                let changed = tx.execute(
                    "UPDATE source_tenders SET version = $1, status = $2, approved_by = $3, deadline_key = $4, \
                     deadline_key_wrapped = $5, machine_json = $6 WHERE id = $7 AND org_id = $8 AND version = $9",
                    &[
                        &(row.version as i64),
                        &row.status,
                        &row.approved_by.map(|u| u.to_string()),
                        &row.deadline_key,
                        &row.deadline_key_wrapped,
                        &row.machine_json,
                        &row.id.to_string(),
                        &row.org.to_string(),
                        &(expected as i64),
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
            "INSERT INTO source_vendor_accounts (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)",
            &[&account.id.to_string(), &account.email, &account.password_hash, &ts(Utc::now())],
        )?;
    }
    if let Some(invitation) = &change.invitation {
        tx.execute(
            "INSERT INTO source_invitations (token_hash, tender_id, vendor_name, email, created_at) \
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &invitation.token_hash,
                &invitation.tender.to_string(),
                &invitation.vendor_name,
                &invitation.email,
                &ts(Utc::now()),
            ],
        )?;
    }
    if let Some((token_hash, account, vendor_name)) = &change.accepted {
        let used = tx.execute(
            "UPDATE source_invitations SET used_at = $1, account_id = $2 WHERE token_hash = $3 AND used_at IS NULL",
            &[&ts(Utc::now()), &account.to_string(), token_hash],
        )?;
        if used != 1 {
            return Err(StorageError::Conflict("an accepted invitation".into()));
        }
        let tender: String =
            tx.query_one("SELECT tender_id FROM source_invitations WHERE token_hash = $1", &[token_hash])?.get(0);
        tx.execute(
            "INSERT INTO source_participants (tender_id, account_id, vendor_name) VALUES ($1, $2, $3)",
            &[&tender, &account.to_string(), vendor_name],
        )?;
    }
    if let Some(question) = &change.question {
        tx.execute(
            "INSERT INTO source_questions (id, tender_id, account_id, question, asked_at) VALUES ($1, $2, $3, $4, $5)",
            &[
                &question.id.to_string(),
                &question.tender.to_string(),
                &question.account.to_string(),
                &question.question,
                &ts(question.asked_at),
            ],
        )?;
    }
    if let Some((id, answer, at)) = &change.answer {
        let changed = tx.execute(
            "UPDATE source_questions SET answer = $1, answered_at = $2 WHERE id = $3 AND answer IS NULL",
            &[answer, &ts(*at), &id.to_string()],
        )?;
        if changed != 1 {
            return Err(StorageError::Conflict("an answer to this question".into()));
        }
    }
    if let Some(score) = &change.score {
        tx.execute(
            "INSERT INTO source_scores (tender_id, account_id, criterion_id, evaluator, points, reason, scored_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tender_id, account_id, criterion_id, evaluator) \
             DO UPDATE SET points = excluded.points, reason = excluded.reason, scored_at = excluded.scored_at",
            &[
                &score.tender.to_string(),
                &score.account.to_string(),
                &score.criterion_id,
                &score.evaluator.to_string(),
                &i64::from(score.points),
                &score.reason,
                &ts(score.scored_at),
            ],
        )?;
    }
    if let (Some(release), Some(tender)) = (&change.tender_release, &change.tender) {
        tx.execute(
            "INSERT INTO source_releases (tender_id, release_json) VALUES ($1, $2)",
            &[&tender.id.to_string(), release],
        )?;
    }
    for entry in &change.audit {
        let tender = change
            .tender
            .as_ref()
            .map(|t| t.id)
            .ok_or_else(|| StorageError::Database("audit without tender".into()))?;
        tx.execute(
            "INSERT INTO source_audit (tender_id, seq, entry_json) VALUES ($1, $2, $3)",
            &[&tender.to_string(), &(entry.seq as i64), &to_json(entry)?],
        )?;
    }
    for envelope in &change.envelopes {
        tx.execute(
            "INSERT INTO source_envelopes (tender_id, account_id, submission, kind, part, summary, sealed, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &envelope.tender.to_string(),
                &envelope.account.to_string(),
                &i64::from(envelope.submission),
                &envelope.kind,
                &envelope.part,
                &envelope.summary,
                &envelope.sealed,
                &ts(envelope.created_at),
            ],
        )?;
    }
    for upload in &change.sealed_uploads {
        tx.execute("DELETE FROM source_upload_chunks WHERE upload_id = $1", &[&upload.to_string()])?;
        tx.execute("DELETE FROM source_uploads WHERE id = $1", &[&upload.to_string()])?;
    }
    tx.commit()?;
    Ok(())
}

pub(crate) fn audit(client: &mut impl GenericClient, tender: Uuid) -> Result<Vec<AuditEntry>, StorageError> {
    client
        .query("SELECT entry_json FROM source_audit WHERE tender_id = $1 ORDER BY seq", &[&tender.to_string()])?
        .iter()
        .map(|row| db_json(&row.get::<_, String>(0)))
        .collect()
}

pub(crate) fn envelopes(
    client: &mut impl GenericClient,
    tender: Uuid,
    kind: &str,
) -> Result<Vec<EnvelopeRow>, StorageError> {
    client
        .query(
            "SELECT account_id, submission, part, summary, sealed, created_at FROM source_envelopes \
             WHERE tender_id = $1 AND kind = $2 ORDER BY account_id, submission, part",
            &[&tender.to_string(), &kind],
        )?
        .iter()
        .map(|row| {
            Ok(EnvelopeRow {
                tender,
                account: parse_uuid(&row.get::<_, String>(0))?,
                submission: u32::try_from(row.get::<_, i64>(1)).unwrap_or(0),
                kind: kind.to_owned(),
                part: row.get(2),
                summary: row.get(3),
                sealed: row.get(4),
                created_at: parse_ts(&row.get::<_, String>(5))?,
            })
        })
        .collect()
}

pub(crate) fn invitation(
    client: &mut impl GenericClient,
    token_hash: &str,
) -> Result<Option<Invitation>, StorageError> {
    client
        .query_opt(
            "SELECT tender_id, vendor_name, email, used_at FROM source_invitations WHERE token_hash = $1",
            &[&token_hash],
        )?
        .map(|row| {
            Ok(Invitation {
                token_hash: token_hash.to_owned(),
                tender: parse_uuid(&row.get::<_, String>(0))?,
                vendor_name: row.get(1),
                email: row.get(2),
                used: row.get::<_, Option<String>>(3).is_some(),
            })
        })
        .transpose()
}

pub(crate) fn vendor_by_email(
    client: &mut impl GenericClient,
    email: &str,
) -> Result<Option<VendorAccount>, StorageError> {
    client
        .query_opt("SELECT id, email, password_hash FROM source_vendor_accounts WHERE email = $1", &[&email])?
        .map(|row| {
            Ok(VendorAccount {
                id: parse_uuid(&row.get::<_, String>(0))?,
                email: row.get(1),
                password_hash: row.get(2),
            })
        })
        .transpose()
}

pub(crate) fn create_session(
    client: &mut impl GenericClient,
    token_hash: &str,
    account: Uuid,
    expires: DateTime<Utc>,
) -> Result<(), StorageError> {
    client.execute(
        "INSERT INTO source_vendor_sessions (token_hash, account_id, expires_at) VALUES ($1, $2, $3)",
        &[&token_hash, &account.to_string(), &ts(expires)],
    )?;
    Ok(())
}

pub(crate) fn session(
    client: &mut impl GenericClient,
    token_hash: &str,
) -> Result<Option<(Uuid, DateTime<Utc>)>, StorageError> {
    client
        .query_opt("SELECT account_id, expires_at FROM source_vendor_sessions WHERE token_hash = $1", &[&token_hash])?
        .map(|row| Ok((parse_uuid(&row.get::<_, String>(0))?, parse_ts(&row.get::<_, String>(1))?)))
        .transpose()
}

pub(crate) fn participations(
    client: &mut impl GenericClient,
    account: Uuid,
) -> Result<Vec<(Uuid, String)>, StorageError> {
    client
        .query(
            "SELECT tender_id, vendor_name FROM source_participants WHERE account_id = $1 ORDER BY tender_id",
            &[&account.to_string()],
        )?
        .iter()
        .map(|row| Ok((parse_uuid(&row.get::<_, String>(0))?, row.get(1))))
        .collect()
}

pub(crate) fn participants(client: &mut impl GenericClient, tender: Uuid) -> Result<Vec<(Uuid, String)>, StorageError> {
    client
        .query(
            "SELECT account_id, vendor_name FROM source_participants WHERE tender_id = $1 ORDER BY vendor_name",
            &[&tender.to_string()],
        )?
        .iter()
        .map(|row| Ok((parse_uuid(&row.get::<_, String>(0))?, row.get(1))))
        .collect()
}

pub(crate) fn questions(client: &mut impl GenericClient, tender: Uuid) -> Result<Vec<Question>, StorageError> {
    client
        .query(
            "SELECT id, account_id, question, asked_at, answer, answered_at FROM source_questions \
             WHERE tender_id = $1 ORDER BY asked_at, id",
            &[&tender.to_string()],
        )?
        .iter()
        .map(|row| {
            let answered: Option<String> = row.get(5);
            Ok(Question {
                id: parse_uuid(&row.get::<_, String>(0))?,
                tender,
                account: parse_uuid(&row.get::<_, String>(1))?,
                question: row.get(2),
                asked_at: parse_ts(&row.get::<_, String>(3))?,
                answer: row.get(4),
                answered_at: answered.as_deref().map(parse_ts).transpose()?,
            })
        })
        .collect()
}

pub(crate) fn scores(client: &mut impl GenericClient, tender: Uuid) -> Result<Vec<StoredScore>, StorageError> {
    client
        .query(
            "SELECT account_id, criterion_id, evaluator, points, reason, scored_at FROM source_scores \
             WHERE tender_id = $1 ORDER BY account_id, criterion_id, evaluator",
            &[&tender.to_string()],
        )?
        .iter()
        .map(|row| {
            Ok(StoredScore {
                tender,
                account: parse_uuid(&row.get::<_, String>(0))?,
                criterion_id: row.get(1),
                evaluator: UserId::from_uuid(parse_uuid(&row.get::<_, String>(2))?),
                points: u32::try_from(row.get::<_, i64>(3)).unwrap_or(0),
                reason: row.get(4),
                scored_at: parse_ts(&row.get::<_, String>(5))?,
            })
        })
        .collect()
}

pub(crate) fn tender_release(client: &mut impl GenericClient, tender: Uuid) -> Result<Option<String>, StorageError> {
    Ok(client
        .query_opt("SELECT release_json FROM source_releases WHERE tender_id = $1", &[&tender.to_string()])?
        .map(|row| row.get(0)))
}

pub(crate) fn tenders_of(client: &mut impl GenericClient, org: OrgId) -> Result<Vec<Uuid>, StorageError> {
    let rows = client
        .query("SELECT id FROM source_tenders WHERE org_id = $1 ORDER BY created_at DESC, id", &[&org.to_string()])?;
    rows.iter().map(|row| parse_uuid(&row.get::<_, String>(0))).collect()
}

const UPLOAD_COLUMNS: &str =
    "id, tender_id, account_id, name, size, sha256, received, finished_summary, created_at, expires_at";

pub(crate) fn upload_create(
    client: &mut postgres::Client,
    upload: &UploadRow,
    max_open: usize,
    now: DateTime<Utc>,
) -> Result<(), StorageError> {
    let mut tx = client.transaction()?;
    // One vendor's uploads are counted and added one at a time.
    tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&upload.account.to_string()])?;
    tx.execute(
        "DELETE FROM source_upload_chunks WHERE upload_id IN (SELECT id FROM source_uploads WHERE expires_at <= $1)",
        &[&ts(now)],
    )?;
    tx.execute("DELETE FROM source_uploads WHERE expires_at <= $1", &[&ts(now)])?;
    let open: i64 = tx
        .query_one("SELECT COUNT(*) FROM source_uploads WHERE account_id = $1", &[&upload.account.to_string()])?
        .get(0);
    if usize::try_from(open).unwrap_or(usize::MAX) >= max_open {
        return Err(StorageError::Forbidden(crate::source_uploads::too_many_open(max_open)));
    }
    tx.execute(
        &format!("INSERT INTO source_uploads ({UPLOAD_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"),
        &[
            &upload.id.to_string(),
            &upload.tender.to_string(),
            &upload.account.to_string(),
            &upload.name,
            &(upload.size as i64),
            &upload.sha256,
            &(upload.received as i64),
            &upload.finished,
            &ts(upload.created_at),
            &ts(upload.expires_at),
        ],
    )?;
    tx.commit()?;
    Ok(())
}

pub(crate) fn upload(client: &mut impl GenericClient, id: Uuid) -> Result<Option<UploadRow>, StorageError> {
    client
        .query_opt(&format!("SELECT {UPLOAD_COLUMNS} FROM source_uploads WHERE id = $1"), &[&id.to_string()])?
        .map(|r| {
            crate::source_store::upload_from_raw((
                r.get(0),
                r.get(1),
                r.get(2),
                r.get(3),
                r.get(4),
                r.get(5),
                r.get(6),
                r.get(7),
                r.get(8),
                r.get(9),
            ))
        })
        .transpose()
}

pub(crate) fn upload_append(
    client: &mut postgres::Client,
    id: Uuid,
    first_byte: u64,
    length: u64,
    sealed: &[u8],
    expires_at: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let mut tx = client.transaction()?;
    let moved = tx.execute(
        "UPDATE source_uploads SET received = received + $1, expires_at = $2 \
         WHERE id = $3 AND received = $4 AND finished_summary IS NULL AND received + $1 <= size",
        &[&(length as i64), &ts(expires_at), &id.to_string(), &(first_byte as i64)],
    )?;
    if moved != 1 {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO source_upload_chunks (upload_id, first_byte, length, sealed) VALUES ($1, $2, $3, $4)",
        &[&id.to_string(), &(first_byte as i64), &(length as i64), &sealed],
    )?;
    tx.commit()?;
    Ok(true)
}

pub(crate) fn upload_chunks(client: &mut impl GenericClient, id: Uuid) -> Result<Vec<(u64, Vec<u8>)>, StorageError> {
    Ok(client
        .query(
            "SELECT first_byte, sealed FROM source_upload_chunks WHERE upload_id = $1 ORDER BY first_byte",
            &[&id.to_string()],
        )?
        .iter()
        .map(|r| (u64::try_from(r.get::<_, i64>(0)).unwrap_or(0), r.get(1)))
        .collect())
}

pub(crate) fn upload_finish(client: &mut postgres::Client, id: Uuid, summary: &str) -> Result<(), StorageError> {
    let changed = client.execute(
        "UPDATE source_uploads SET finished_summary = $1 WHERE id = $2 AND received = size",
        &[&summary, &id.to_string()],
    )?;
    if changed != 1 {
        return Err(StorageError::NotFound("a complete upload".into()));
    }
    Ok(())
}

pub(crate) fn upload_delete(client: &mut postgres::Client, id: Uuid) -> Result<(), StorageError> {
    let mut tx = client.transaction()?;
    tx.execute("DELETE FROM source_upload_chunks WHERE upload_id = $1", &[&id.to_string()])?;
    tx.execute("DELETE FROM source_uploads WHERE id = $1", &[&id.to_string()])?;
    tx.commit()?;
    Ok(())
}
