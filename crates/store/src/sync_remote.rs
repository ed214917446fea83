//! The desktop side of sync that needs the store's own tables: binding an organization of the sync service to
//! this install (sign-in), applying remote changes of synced records without queueing them back ([`SyncApply`]),
//! documents that wait for their file (`sync_wanted_documents`) and corrections that wait for their document
//! (`sync_deferred_corrections`). Values arrive already decoded by `api` (the store does not read the wire format);
//! they are checked here before anything is written, so a malformed remote change is refused on its own
//! ([`StoreError::Invalid`]) without failing the page it came in.

use crate::audit::append_audit_as;
use crate::sync_log::{SYNC_ACCOUNT_SETTING, SYNCED_SETTINGS, SyncApply, SyncLog};
use crate::time::{from_sql, to_sql};
use crate::{OrgScope, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::{Document, DocumentId, MediaType, OrgId, Role, SessionId, UserId};
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The `local_state` key of the session this install syncs with (its organization is the signed-in one).
const SYNC_SESSION: &str = "sync_session";

/// The fields a synced document carries.
pub const DOCUMENT_FIELDS: &[&str] =
    &["name", "content_hash", "media_type", "size", "created_at", "created_by", "created_by_name", "deleted_at"];

/// What sign-in binds locally: the sync service's organization and user (same ids as on the server), the role the
/// service gave, this install's HLC node for the organization and the account to remember (not secret).
#[derive(Debug, Clone, PartialEq)]
pub struct SyncBinding {
    pub org: OrgId,
    pub org_name: String,
    pub user: UserId,
    pub user_name: String,
    pub email: String,
    pub role: Role,
    pub node_id: String,
    pub account: Value,
}

/// A correction made on another device, as the sync service delivered it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteCorrection {
    pub id: String,
    pub document: DocumentId,
    pub item_id: String,
    pub kind: String,
    pub status: String,
    pub quote: Option<(String, u32)>,
    pub note: Option<String>,
    /// The author the sync service stamped (never taken from the change's body).
    pub user: UserId,
    pub created_at: DateTime<Utc>,
    pub audit_action: String,
    pub audit_details: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorrectionApplied {
    Applied,
    /// Kept already (the same correction id).
    AlreadyHere,
    /// Its document is not here yet: it waits and is applied when the document arrives.
    Deferred,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentApplied {
    /// The document is here and its fields were updated; `wants_import` when it came back from the trash without
    /// extracted pages (it is queued for the local import steps).
    Updated { wants_import: bool },
    /// Not here yet: its fields wait with its wanted entry until the file is fetched.
    Wanted,
}

/// A document that waits for its file or for the local import steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WantedDocument {
    pub id: DocumentId,
    pub content_hash: Option<String>,
    /// The file's size as the document's change announced it (a download stops past it).
    pub size: Option<u64>,
    pub attempts: u32,
    pub last_error: Option<String>,
}

/// How the file of a received document came to be in the blob store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceivedFile {
    /// The organization's own sync service served it in this round (hash-verified): it becomes the organization's.
    FetchedFromService,
    /// Not fetched now: the organization must hold it already (an ownership record). A file on disk that only
    /// another organization holds is never reused.
    AlreadyHeld,
}

/// What receiving a wanted document did.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// The document row was written (and its waiting corrections applied).
    Inserted(Document),
    /// The document was here already (a restore that waits for its pages, or a retry after a crash).
    AlreadyHere(Document),
    /// It cannot be kept here; the reason is recorded on the wanted entry.
    Refused(String),
}

fn invalid(what: impl Into<String>) -> StoreError {
    StoreError::Invalid(what.into())
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn check_time(field: &str, value: &Value) -> Result<(), StoreError> {
    match value {
        Value::String(t) if DateTime::parse_from_rfc3339(t).is_ok() => Ok(()),
        _ => Err(invalid(format!("document field {field} must be an RFC 3339 time"))),
    }
}

/// Are these well-formed values for a synced document's fields? Unknown fields are refused too.
pub fn check_document_fields(fields: &BTreeMap<String, Value>) -> Result<(), StoreError> {
    for (name, value) in fields {
        match name.as_str() {
            "name" => match value.as_str() {
                Some(n) if !n.trim().is_empty() && n.len() <= 1_000 => {}
                _ => return Err(invalid("a document's name must be 1 to 1,000 bytes of text")),
            },
            "content_hash" => {
                if !value.as_str().is_some_and(is_sha256_hex) {
                    return Err(invalid("a document's content_hash must be a lowercase SHA-256"));
                }
            }
            "media_type" => {
                if value.as_str().and_then(|m| m.parse::<MediaType>().ok()).is_none() {
                    return Err(invalid("unknown media type"));
                }
            }
            "size" => {
                if !value.as_u64().is_some_and(|n| n > 0 && n <= i64::MAX as u64) {
                    return Err(invalid("a document's size must be a positive integer"));
                }
            }
            "created_at" => check_time(name, value)?,
            "deleted_at" if !value.is_null() => check_time(name, value)?,
            "deleted_at" => {}
            "created_by" => {
                if value.as_str().and_then(|u| u.parse::<UserId>().ok()).is_none() {
                    return Err(invalid("created_by must be a user id"));
                }
            }
            "created_by_name" => {
                if !(value.is_null() || value.as_str().is_some_and(|n| n.len() <= 200)) {
                    return Err(invalid("created_by_name must be text"));
                }
            }
            other => return Err(invalid(format!("unknown document field {other:?}"))),
        }
    }
    Ok(())
}

fn check_correction(c: &RemoteCorrection) -> Result<(), StoreError> {
    if !matches!(c.kind.as_str(), "confirm" | "correct") {
        return Err(invalid(format!("unknown correction kind {:?}", c.kind)));
    }
    if !matches!(c.status.as_str(), "present" | "partial" | "absent" | "not_evaluated") {
        return Err(invalid(format!("unknown item status {:?}", c.status)));
    }
    if c.id.is_empty() || c.id.len() > 100 || c.item_id.is_empty() || c.item_id.len() > 200 {
        return Err(invalid("a correction needs an id and an item id"));
    }
    if !c.audit_action.starts_with("review.") {
        return Err(invalid("a correction's audit action must be a review action"));
    }
    Ok(())
}

/// A user row for someone known only through sync (their id is the sync service's user id).
pub(crate) fn ensure_user(
    tx: &Transaction<'_>,
    user: UserId,
    name_hint: Option<&str>,
    now: &str,
) -> Result<(), StoreError> {
    let id = user.to_string();
    let name = name_hint
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| n.chars().take(200).collect::<String>())
        .unwrap_or_else(|| format!("Member {}", id.chars().take(8).collect::<String>()));
    // A placeholder name ("Member 01a2…", from a change that carried none) gives way to the first real one.
    tx.prepare_cached(
        "INSERT INTO users (id, display_name, email, created_at) VALUES (?1, ?2, NULL, ?3)
         ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name
         WHERE users.display_name = 'Member ' || substr(users.id, 1, 8) AND ?4",
    )?
    .execute(params![id, name, now, name_hint.is_some_and(|n| !n.trim().is_empty())])?;
    Ok(())
}

fn document_org(tx: &Transaction<'_>, id: DocumentId) -> Result<Option<(String, Option<String>)>, StoreError> {
    Ok(tx
        .prepare_cached("SELECT org_id, deleted_at FROM documents WHERE id = ?1")?
        .query_row([id.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

fn has_pages(tx: &Transaction<'_>, id: DocumentId) -> Result<bool, StoreError> {
    Ok(tx
        .prepare_cached("SELECT 1 FROM document_extractions WHERE document_id = ?1")?
        .query_row([id.to_string()], |_| Ok(()))
        .optional()?
        .is_some())
}

fn insert_correction(tx: &Transaction<'_>, org: &str, c: &RemoteCorrection, now: &str) -> Result<bool, StoreError> {
    let at = to_sql(c.created_at);
    let n = tx.execute(
        "INSERT INTO review_corrections (id, org_id, document_id, item_id, kind, status, quote_text, quote_page,
             note, user_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (id) DO NOTHING",
        params![
            c.id,
            org,
            c.document.to_string(),
            c.item_id,
            c.kind,
            c.status,
            c.quote.as_ref().map(|q| q.0.clone()),
            c.quote.as_ref().map(|q| q.1),
            c.note,
            c.user.to_string(),
            at,
        ],
    )?;
    if n == 1 {
        let mut details = c.audit_details.clone();
        if let Value::Object(map) = &mut details {
            map.insert("synced_at".into(), Value::String(now.to_string()));
        }
        append_audit_as(
            tx,
            org,
            Some(&c.user.to_string()),
            &at,
            &c.audit_action,
            "document",
            Some(&c.document.to_string()),
            &details,
        )?;
    }
    Ok(n == 1)
}

/// Applies the corrections that waited for this document, oldest first, and forgets them.
fn apply_deferred(tx: &Transaction<'_>, org: &str, document: DocumentId, now: &str) -> Result<u32, StoreError> {
    let waiting: Vec<RemoteCorrection> = {
        let mut stmt = tx.prepare_cached(
            "SELECT id, item_id, kind, status, quote_text, quote_page, note, user_id, created_at, audit_action,
                    audit_details
             FROM sync_deferred_corrections WHERE org_id = ?1 AND document_id = ?2 ORDER BY created_at, id",
        )?;
        let rows = stmt.query_map(params![org, document.to_string()], |r| {
            let quote_text: Option<String> = r.get(4)?;
            let quote_page: Option<u32> = r.get(5)?;
            let user: String = r.get(7)?;
            let details: String = r.get(10)?;
            Ok(RemoteCorrection {
                id: r.get(0)?,
                document,
                item_id: r.get(1)?,
                kind: r.get(2)?,
                status: r.get(3)?,
                quote: quote_text.zip(quote_page),
                note: r.get(6)?,
                user: user.parse().map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(7, rusqlite::types::Type::Text, Box::new(e))
                })?,
                created_at: from_sql(&r.get::<_, String>(8)?)?,
                audit_action: r.get(9)?,
                audit_details: serde_json::from_str(&details).unwrap_or(Value::Null),
            })
        })?;
        rows.collect::<Result<_, _>>()?
    };
    let mut applied = 0;
    for c in &waiting {
        if insert_correction(tx, org, c, now)? {
            applied += 1;
        }
    }
    tx.execute(
        "DELETE FROM sync_deferred_corrections WHERE org_id = ?1 AND document_id = ?2",
        params![org, document.to_string()],
    )?;
    Ok(applied)
}

impl SyncApply<'_> {
    /// A member of the organization as the sync service told it: recorded ([`crate::members::record_member_in`]),
    /// or, when `removed`, no longer a member ([`crate::members::remove_member_in`]; the user row stays).
    pub fn member(&self, member: &crate::members::KnownMember, removed: bool) -> Result<(), StoreError> {
        if removed {
            // The name and email still update, so history shows the member as last known.
            crate::members::record_member_at(self.tx, &self.org, member, &self.now)?;
            crate::members::remove_member_at(self.tx, &self.org, member.user)
        } else {
            crate::members::record_member_at(self.tx, &self.org, member, &self.now)
        }
    }

    /// A user row for a member known here only through sync; the name is a hint used only when the row is new.
    pub fn ensure_user(&self, user: UserId, name_hint: Option<&str>) -> Result<(), StoreError> {
        ensure_user(self.tx, user, name_hint, &self.now)
    }

    /// Applies the fields of a remote document change that won last-writer-wins (the caller checked them with
    /// [`check_document_fields`] and took each with `take_field`). On a document that is here only the name and
    /// the trash state change (its file and origin never do); a document that is not here waits for its file with
    /// the fields merged so far. `author` is the change's author as the sync service stamped it.
    pub fn document_fields(
        &self,
        id: DocumentId,
        author: UserId,
        taken: &BTreeMap<String, Value>,
    ) -> Result<DocumentApplied, StoreError> {
        check_document_fields(taken)?;
        let doc = id.to_string();
        match document_org(self.tx, id)? {
            Some((org, _)) if org != self.org => {
                Err(invalid("a document with this id belongs to another organization here; the change is skipped"))
            }
            Some((_, was_deleted)) => {
                if let Some(name) = taken.get("name").and_then(Value::as_str) {
                    self.tx.execute(
                        "UPDATE documents SET name = ?3 WHERE id = ?1 AND org_id = ?2",
                        params![doc, self.org, name.trim()],
                    )?;
                }
                let mut wants_import = false;
                if let Some(deleted_at) = taken.get("deleted_at") {
                    let deleted_at = deleted_at.as_str();
                    let by = deleted_at.map(|_| author.to_string());
                    self.tx.execute(
                        "UPDATE documents SET deleted_at = ?3, deleted_by = ?4 WHERE id = ?1 AND org_id = ?2",
                        params![doc, self.org, deleted_at, by],
                    )?;
                    if deleted_at.is_some() != was_deleted.is_some() {
                        let action = if deleted_at.is_some() { "document.deleted" } else { "document.restored" };
                        append_audit_as(
                            self.tx,
                            &self.org,
                            Some(&author.to_string()),
                            &self.now,
                            action,
                            "document",
                            Some(&doc),
                            &json!({"via": "sync"}),
                        )?;
                    }
                    if deleted_at.is_none() && !has_pages(self.tx, id)? {
                        self.want(id, None, &BTreeMap::new())?;
                        wants_import = true;
                    }
                }
                Ok(DocumentApplied::Updated { wants_import })
            }
            None => {
                self.want(id, taken.get("content_hash").and_then(Value::as_str), taken)?;
                Ok(DocumentApplied::Wanted)
            }
        }
    }

    /// Adds (or merges fields into) a document's wanted entry.
    fn want(&self, id: DocumentId, hash: Option<&str>, fields: &BTreeMap<String, Value>) -> Result<(), StoreError> {
        let doc = id.to_string();
        let existing: Option<String> = self
            .tx
            .query_row(
                "SELECT fields_json FROM sync_wanted_documents WHERE org_id = ?1 AND document_id = ?2",
                params![self.org, doc],
                |r| r.get(0),
            )
            .optional()?;
        let mut merged: Map<String, Value> =
            existing.and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
        for (k, v) in fields {
            merged.insert(k.clone(), v.clone());
        }
        self.tx.execute(
            "INSERT INTO sync_wanted_documents (org_id, document_id, content_hash, fields_json, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (org_id, document_id) DO UPDATE SET
                 content_hash = COALESCE(excluded.content_hash, content_hash), fields_json = excluded.fields_json,
                 updated_at = excluded.updated_at",
            params![self.org, doc, hash, Value::Object(merged).to_string(), self.now],
        )?;
        Ok(())
    }

    /// Keeps a remote correction (append-only, once by id) with its audit entry, or lets it wait for its document.
    pub fn correction(&self, c: &RemoteCorrection) -> Result<CorrectionApplied, StoreError> {
        check_correction(c)?;
        match document_org(self.tx, c.document)? {
            Some((org, _)) if org != self.org => {
                Err(invalid("a correction names another organization's document here; it is skipped"))
            }
            Some(_) => Ok(if insert_correction(self.tx, &self.org, c, &self.now)? {
                CorrectionApplied::Applied
            } else {
                CorrectionApplied::AlreadyHere
            }),
            None => {
                self.tx.execute(
                    "INSERT INTO sync_deferred_corrections (id, org_id, document_id, item_id, kind, status,
                         quote_text, quote_page, note, user_id, created_at, audit_action, audit_details)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT (id) DO NOTHING",
                    params![
                        c.id,
                        self.org,
                        c.document.to_string(),
                        c.item_id,
                        c.kind,
                        c.status,
                        c.quote.as_ref().map(|q| q.0.clone()),
                        c.quote.as_ref().map(|q| q.1),
                        c.note,
                        c.user.to_string(),
                        to_sql(c.created_at),
                        c.audit_action,
                        c.audit_details.to_string(),
                    ],
                )?;
                Ok(CorrectionApplied::Deferred)
            }
        }
    }

    /// A remote value of a synced setting, stamped `hlc` (sortable text): checked with the same function as a
    /// local change (`pactwise_rules::settings::check_synced_setting`) before anything is written, then applied if
    /// it wins last-writer-wins. A value that fails the check is refused ([`StoreError::Invalid`]): the old value
    /// and its clock stay, so a valid change from another member still applies. Returns whether it was applied.
    pub fn setting(&self, key: &str, hlc: &str, value: &Value) -> Result<bool, StoreError> {
        if !SYNCED_SETTINGS.contains(&key) {
            return Err(invalid(format!("the setting {key:?} does not sync")));
        }
        pactwise_rules::settings::check_synced_setting(key, value)
            .map_err(|why| invalid(format!("the synced value of {key} was refused: {why}")))?;
        if !self.take_field("setting", key, "value", hlc)? {
            return Ok(false);
        }
        self.tx.execute(
            "INSERT INTO settings (org_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (org_id, key) DO UPDATE SET value = excluded.value",
            params![self.org, key, value.to_string()],
        )?;
        Ok(true)
    }
}

fn document_from_fields(id: DocumentId, fields: &Map<String, Value>) -> Result<Document, String> {
    let text = |name: &str| fields.get(name).and_then(Value::as_str).ok_or_else(|| format!("its {name} is missing"));
    let time = |name: &str| {
        text(name).and_then(|t| {
            DateTime::parse_from_rfc3339(t).map(|t| t.with_timezone(&Utc)).map_err(|_| format!("bad {name}"))
        })
    };
    Ok(Document {
        id,
        name: text("name")?.trim().to_string(),
        media_type: text("media_type")?.parse().map_err(|_| "unknown media type".to_string())?,
        size: fields.get("size").and_then(Value::as_u64).ok_or("its size is missing")?,
        content_hash: text("content_hash")?.to_string(),
        created_by: text("created_by")?.parse().map_err(|_| "bad created_by".to_string())?,
        created_at: time("created_at")?,
        deleted_at: match fields.get("deleted_at") {
            None | Some(Value::Null) => None,
            Some(_) => Some(time("deleted_at")?),
        },
    })
}

impl SyncLog<'_> {
    /// Binds an organization of the sync service to this install, in one transaction: the organization and the
    /// user with the service's ids (created, or updated by name and email), the membership with the service's role,
    /// a new session, the organization's sync state (HLC node) if it has none, the account setting, and the sync
    /// session marker. Returns the session; make it current with `Sessions::make_current`.
    pub fn bind(&self, b: &SyncBinding) -> Result<SessionId, StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        let now = to_sql(self.store.clock().now());
        let (org, user) = (b.org.to_string(), b.user.to_string());
        tx.execute(
            "INSERT INTO organizations (id, name, created_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, deleted_at = NULL",
            params![org, b.org_name.trim(), now],
        )?;
        tx.execute(
            "INSERT INTO users (id, display_name, email, created_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name, email = excluded.email,
                 deleted_at = NULL",
            params![user, b.user_name.trim(), b.email, now],
        )?;
        tx.execute(
            "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role",
            params![org, user, b.role.as_str(), now],
        )?;
        let session = SessionId::from_uuid(uuid::Uuid::new_v4());
        tx.execute(
            "INSERT INTO sessions (id, org_id, user_id, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![session.to_string(), org, user, now],
        )?;
        tx.execute(
            "INSERT INTO sync_state (org_id, node_id, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
            params![org, b.node_id, now],
        )?;
        tx.execute(
            "INSERT INTO settings (org_id, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT (org_id, key) DO UPDATE SET value = excluded.value",
            params![org, SYNC_ACCOUNT_SETTING, b.account.to_string()],
        )?;
        tx.execute(
            "INSERT INTO local_state (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![SYNC_SESSION, session.to_string()],
        )?;
        tx.commit()?;
        Ok(session)
    }

    /// The session this install syncs with, if it is signed in to sync.
    pub fn bound_session(&self) -> Result<Option<SessionId>, StoreError> {
        let value: Option<String> = self
            .store
            .conn()
            .query_row("SELECT value FROM local_state WHERE key = ?1", [SYNC_SESSION], |r| r.get(0))
            .optional()?;
        value.map(|v| v.parse().map_err(|_| StoreError::Corrupt(format!("bad session id {v:?}")))).transpose()
    }

    /// Sign-out: this install no longer syncs. The organization, its data and its sync state stay (changes made
    /// meanwhile are queued and go out after the next sign-in).
    pub fn unbind(&self) -> Result<(), StoreError> {
        self.store.conn().execute("DELETE FROM local_state WHERE key = ?1", [SYNC_SESSION])?;
        Ok(())
    }

    /// A round finished: remember when.
    pub fn round_done(&self, scope: &OrgScope) -> Result<(), StoreError> {
        self.store.conn().execute(
            "UPDATE sync_state SET last_success_at = ?2 WHERE org_id = ?1",
            params![scope.org().to_string(), to_sql(self.store.clock().now())],
        )?;
        Ok(())
    }

    /// Documents that wait for their file or their local import, oldest first.
    pub fn wanted(&self, scope: &OrgScope) -> Result<Vec<WantedDocument>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT document_id, content_hash, attempts, last_error, fields_json FROM sync_wanted_documents
             WHERE org_id = ?1 ORDER BY updated_at, document_id",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            let id: String = r.get(0)?;
            Ok((id, r.get(1)?, r.get::<_, i64>(2)?, r.get(3)?, r.get::<_, String>(4)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, content_hash, attempts, last_error, fields) = row?;
            let size = serde_json::from_str::<Value>(&fields).ok().and_then(|f| f.get("size").and_then(Value::as_u64));
            out.push(WantedDocument {
                id: id.parse().map_err(|_| StoreError::Corrupt(format!("bad document id {id:?}")))?,
                content_hash,
                size,
                attempts: attempts as u32,
                last_error,
            });
        }
        Ok(out)
    }

    /// A fetch or import of a wanted document failed; it is tried again after the next round.
    pub fn want_failed(&self, scope: &OrgScope, id: DocumentId, error: &str) -> Result<(), StoreError> {
        self.store.conn().execute(
            "UPDATE sync_wanted_documents SET attempts = attempts + 1, last_error = ?3, updated_at = ?4
             WHERE org_id = ?1 AND document_id = ?2",
            params![scope.org().to_string(), id.to_string(), error, to_sql(self.store.clock().now())],
        )?;
        Ok(())
    }

    /// The document's local import steps are done (or not needed): it no longer waits.
    pub fn forget_wanted(&self, scope: &OrgScope, id: DocumentId) -> Result<(), StoreError> {
        self.store.conn().execute(
            "DELETE FROM sync_wanted_documents WHERE org_id = ?1 AND document_id = ?2",
            params![scope.org().to_string(), id.to_string()],
        )?;
        Ok(())
    }

    /// The file of a wanted document is here (in the blob store): write the document row under the id it has on
    /// every device, with an audit entry by its creator, and apply the corrections that waited for it; one
    /// transaction. The wanted entry stays until [`SyncLog::forget_wanted`] (after the local import steps), so an
    /// interrupted import is resumed. Nothing is queued for sync.
    ///
    /// The file must be the organization's: `file` says whether its own service just served it (it then becomes
    /// the organization's, in this transaction) or whether the organization already held it; a file that only
    /// another organization of this install holds is never taken.
    pub fn receive_document(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        file: ReceivedFile,
    ) -> Result<Received, StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        let now = to_sql(self.store.clock().now());
        let org = scope.org().to_string();
        let fields: Option<String> = tx
            .query_row(
                "SELECT fields_json FROM sync_wanted_documents WHERE org_id = ?1 AND document_id = ?2",
                params![org, id.to_string()],
                |r| r.get(0),
            )
            .optional()?;
        let Some(fields) = fields else { return Err(StoreError::NotFound) };
        let refuse = |tx: Transaction<'_>, reason: String| -> Result<Received, StoreError> {
            tx.execute(
                "UPDATE sync_wanted_documents SET attempts = attempts + 1, last_error = ?3, updated_at = ?4
                 WHERE org_id = ?1 AND document_id = ?2",
                params![org, id.to_string(), reason, now],
            )?;
            tx.commit()?;
            Ok(Received::Refused(reason))
        };
        match document_org(&tx, id)? {
            Some((owner, _)) if owner != org => {
                return refuse(tx, "a document with this id belongs to another organization here".into());
            }
            Some(_) => {
                apply_deferred(&tx, &org, id, &now)?;
                let doc = crate::documents::read_in(&tx, scope, id)?;
                tx.commit()?;
                return Ok(Received::AlreadyHere(doc));
            }
            None => {}
        }
        let fields: Map<String, Value> = serde_json::from_str(&fields).unwrap_or_default();
        let doc = match document_from_fields(id, &fields) {
            Ok(doc) => doc,
            Err(reason) => return refuse(tx, format!("the document cannot be kept yet: {reason}")),
        };
        let same_file: Option<String> = tx
            .query_row(
                "SELECT id FROM documents WHERE org_id = ?1 AND content_hash = ?2",
                params![org, doc.content_hash],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(other) = same_file {
            return refuse(
                tx,
                format!("the same file is already here as document {other} (imported on this device before sync)"),
            );
        }
        match file {
            ReceivedFile::FetchedFromService => crate::blob_owners::record_in(&tx, &org, &doc.content_hash, &now)?,
            ReceivedFile::AlreadyHeld => {
                if !crate::blob_owners::holds_in(&tx, &org, &doc.content_hash)? {
                    return refuse(tx, "its file has not been fetched from the sync service yet".into());
                }
            }
        }
        let creator_name = fields.get("created_by_name").and_then(Value::as_str);
        ensure_user(&tx, doc.created_by, creator_name, &now)?;
        tx.execute(
            "INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at,
                 deleted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                id.to_string(),
                org,
                doc.content_hash,
                doc.name,
                doc.media_type.as_str(),
                i64::try_from(doc.size).map_err(|_| StoreError::Corrupt("size overflows".into()))?,
                doc.created_by.to_string(),
                to_sql(doc.created_at),
                doc.deleted_at.map(to_sql),
            ],
        )?;
        append_audit_as(
            &tx,
            &org,
            Some(&doc.created_by.to_string()),
            &now,
            "document.received",
            "document",
            Some(&id.to_string()),
            &json!({"name": doc.name, "content_hash": doc.content_hash, "size": doc.size, "via": "sync"}),
        )?;
        apply_deferred(&tx, &org, id, &now)?;
        crate::contract_sync::project_in(&tx, &org, id, &now)?;
        let doc = crate::documents::read_in(&tx, scope, id)?;
        tx.commit()?;
        Ok(Received::Inserted(doc))
    }

    /// How many remote corrections wait for their document.
    pub fn deferred_count(&self, scope: &OrgScope) -> Result<u64, StoreError> {
        let n: i64 = self.store.conn().query_row(
            "SELECT COUNT(*) FROM sync_deferred_corrections WHERE org_id = ?1",
            [scope.org().to_string()],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }
}
