//! The organization's documents. Every function takes the caller's [`OrgScope`]; another organization's document
//! answers exactly like one that does not exist. Soft-deleted documents are invisible except to `list_deleted` and
//! `restore`.

use crate::audit::append_audit;
use crate::pages::save_in;
use crate::sync_log::{ChangePayload, emit_in};
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, Store, StoreError};
use pactwise_domain::{Document, DocumentId, ExtractedDocument, ImportOutcome, MediaType};
use rusqlite::{OptionalExtension, Row, params};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The synced model name of documents (`pactwise_sync::SyncedModel::Document`).
const SYNCED_MODEL: &str = "document";

/// All synced fields of a new document (see `sync_remote::DOCUMENT_FIELDS`).
fn synced_fields(tx: &rusqlite::Transaction<'_>, doc: &Document) -> Result<ChangePayload, StoreError> {
    let creator: Option<String> = tx
        .query_row("SELECT display_name FROM users WHERE id = ?1", [doc.created_by.to_string()], |r| r.get(0))
        .optional()?;
    let fields: BTreeMap<String, Value> = [
        ("name", json!(doc.name)),
        ("content_hash", json!(doc.content_hash)),
        ("media_type", json!(doc.media_type.as_str())),
        ("size", json!(doc.size)),
        ("created_at", json!(to_sql(doc.created_at))),
        ("created_by", json!(doc.created_by.to_string())),
        ("created_by_name", json!(creator)),
        ("deleted_at", json!(doc.deleted_at.map(to_sql))),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Ok(ChangePayload::Fields(fields))
}

fn trash_field(doc: &Document) -> ChangePayload {
    ChangePayload::Fields([("deleted_at".to_string(), json!(doc.deleted_at.map(to_sql)))].into())
}

pub struct Documents<'s> {
    store: &'s Store,
}

/// A document about to be recorded; its bytes are already in the blob store under `content_hash`.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub name: String,
    pub media_type: MediaType,
    pub size: u64,
    pub content_hash: String,
}

/// What bringing a document over from another organization did ([`Documents::bring_over`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BroughtOver {
    /// The document as a record of the organization it was brought into.
    pub document: Document,
    /// `Created` (or `Restored` from that organization's trash), or `Existing` when it held the same file already.
    pub outcome: ImportOutcome,
    /// How many corrections came with it.
    pub corrections: u32,
}

const COLUMNS: &str = "id, name, media_type, size, content_hash, created_by, created_at, deleted_at";

fn document_from_row(row: &Row<'_>) -> rusqlite::Result<Document> {
    let id: String = row.get(0)?;
    let media_type: String = row.get(2)?;
    let created_by: String = row.get(5)?;
    let bad = |what: &str, v: &str| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("bad {what} {v:?} in documents").into(),
        )
    };
    Ok(Document {
        id: id.parse().map_err(|_| bad("id", &id))?,
        name: row.get(1)?,
        media_type: media_type.parse().map_err(|_| bad("media type", &media_type))?,
        size: row.get::<_, i64>(3)?.try_into().map_err(|_| bad("size", "negative"))?,
        content_hash: row.get(4)?,
        created_by: created_by.parse().map_err(|_| bad("user id", &created_by))?,
        created_at: from_sql(&row.get::<_, String>(6)?)?,
        deleted_at: from_sql_opt(row.get(7)?)?,
    })
}

/// The document as it stands inside a transaction, deleted or not (after a change, to return it).
pub(crate) fn read_in(
    tx: &rusqlite::Transaction<'_>,
    scope: &OrgScope,
    id: DocumentId,
) -> Result<Document, StoreError> {
    Ok(tx.query_row(
        &format!("SELECT {COLUMNS} FROM documents WHERE id = ?1 AND org_id = ?2"),
        params![id.to_string(), scope.org().to_string()],
        document_from_row,
    )?)
}

impl<'s> Documents<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Documents { store }
    }

    /// Records a document, or finds the one with the same bytes in this organization (restoring it from the trash
    /// if it was deleted). One transaction, with its audit entry.
    pub fn record(&self, scope: &OrgScope, new: &NewDocument) -> Result<(Document, ImportOutcome), StoreError> {
        scope.require_document_editor()?;
        let tx = self.store.conn().unchecked_transaction()?;
        let recorded = self.record_in(&tx, scope, new)?;
        tx.commit()?;
        Ok(recorded)
    }

    /// Like [`Documents::record`], with the document's extracted pages in the same transaction: a new document
    /// becomes visible only together with its pages (an import killed while extracting leaves no row). A document
    /// that was here already keeps the pages it has; it gets these only if it had none.
    pub fn record_with_pages(
        &self,
        scope: &OrgScope,
        new: &NewDocument,
        pages: &ExtractedDocument,
    ) -> Result<(Document, ImportOutcome), StoreError> {
        scope.require_document_editor()?;
        let tx = self.store.conn().unchecked_transaction()?;
        let (doc, outcome) = self.record_in(&tx, scope, new)?;
        let extracted: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM document_extractions WHERE document_id = ?1)",
            [doc.id.to_string()],
            |r| r.get(0),
        )?;
        if !extracted {
            save_in(&tx, doc.id, pages, &to_sql(self.store.clock().now()))?;
        }
        tx.commit()?;
        Ok((doc, outcome))
    }

    /// Brings a live document of another organization of this install (`from`: a session there of the same
    /// person) into `to` as a new record of `to`, in one transaction: the document (with its file now also `to`'s,
    /// through `blob_owners`), every correction of it in its order (each with its audit entry, marked as brought
    /// over), an audit entry in both organizations, and the sync changes of `to` when it syncs. The source stays as
    /// it was. A document whose bytes `to` holds already is not copied again (`ImportOutcome::Existing`, no
    /// corrections copied). Another organization's id, or a deleted document, answers `NotFound`.
    pub fn bring_over(&self, from: &OrgScope, to: &OrgScope, id: DocumentId) -> Result<BroughtOver, StoreError> {
        to.require_document_editor()?;
        let tx = self.store.conn().unchecked_transaction()?;
        let source: Option<Document> = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM documents WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL"),
                params![id.to_string(), from.org().to_string()],
                document_from_row,
            )
            .optional()?;
        let Some(source) = source else { return Err(StoreError::NotFound) };
        if !crate::blob_owners::holds_in(&tx, &from.org().to_string(), &source.content_hash)? {
            return Err(StoreError::NotFound);
        }
        let new = NewDocument {
            name: source.name.clone(),
            media_type: source.media_type,
            size: source.size,
            content_hash: source.content_hash.clone(),
        };
        let (document, outcome) = self.record_in(&tx, to, &new)?;
        let mut corrections = 0;
        if outcome != ImportOutcome::Existing {
            let brought: Vec<(crate::reviews::NewCorrection, String, String)> = {
                let mut stmt = tx.prepare_cached(
                    "SELECT item_id, kind, status, quote_text, quote_page, note, created_at, id FROM review_corrections
                     WHERE document_id = ?1 AND org_id = ?2 ORDER BY created_at, id",
                )?;
                let rows = stmt.query_map(params![id.to_string(), from.org().to_string()], |r| {
                    let quote_text: Option<String> = r.get(3)?;
                    let quote_page: Option<u32> = r.get(4)?;
                    Ok((
                        crate::reviews::NewCorrection {
                            item_id: r.get(0)?,
                            kind: r.get(1)?,
                            status: r.get(2)?,
                            quote: quote_text.zip(quote_page),
                            note: r.get(5)?,
                            acknowledged: Vec::new(),
                        },
                        r.get(6)?,
                        r.get(7)?,
                    ))
                })?;
                rows.collect::<Result<_, _>>()?
            };
            for (correction, at, original) in &brought {
                let facts = json!({"from_organization": from.org().to_string(), "from_document": id.to_string(),
                    "correction": original, "made_at": at});
                crate::reviews::add_correction_in(self.store, &tx, to, document.id, correction, &facts)?;
                corrections += 1;
            }
        }
        let now = to_sql(self.store.clock().now());
        let facts = json!({"from_organization": from.org().to_string(), "from_document": id.to_string(),
            "to_organization": to.org().to_string(), "to_document": document.id.to_string(),
            "corrections": corrections});
        append_audit(&tx, to, &now, "document.brought_over", "document", Some(&document.id.to_string()), &facts)?;
        append_audit(&tx, from, &now, "document.brought_over", "document", Some(&id.to_string()), &facts)?;
        tx.commit()?;
        Ok(BroughtOver { document, outcome, corrections })
    }

    /// The organization's document with these bytes, live or in the trash (None: not here).
    pub fn find_by_hash(&self, scope: &OrgScope, content_hash: &str) -> Result<Option<Document>, StoreError> {
        Ok(self
            .store
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM documents WHERE org_id = ?1 AND content_hash = ?2"),
                params![scope.org().to_string(), content_hash],
                document_from_row,
            )
            .optional()?)
    }

    /// Live documents whose import did not finish: no pipeline stage after extraction was ever recorded for them
    /// (the process stopped after the document was written, or its pages read, and before its review started).
    /// Oldest first; the api resumes them.
    pub fn awaiting_pipeline(&self, scope: &OrgScope) -> Result<Vec<Document>, StoreError> {
        self.query(
            scope,
            "deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM pipeline_stages s WHERE s.document_id = documents.id \
             AND s.stage <> 'extract')",
            "created_at, id",
        )
    }

    fn record_in(
        &self,
        tx: &rusqlite::Transaction<'_>,
        scope: &OrgScope,
        new: &NewDocument,
    ) -> Result<(Document, ImportOutcome), StoreError> {
        let now = to_sql(self.store.clock().now());
        let existing = tx
            .query_row(
                &format!("SELECT {COLUMNS} FROM documents WHERE org_id = ?1 AND content_hash = ?2"),
                params![scope.org().to_string(), new.content_hash],
                document_from_row,
            )
            .optional()?;
        let (id, outcome) = match existing {
            Some(doc) if doc.deleted_at.is_none() => (doc.id, ImportOutcome::Existing),
            Some(doc) => {
                tx.execute(
                    "UPDATE documents SET deleted_at = NULL, deleted_by = NULL WHERE id = ?1 AND org_id = ?2",
                    params![doc.id.to_string(), scope.org().to_string()],
                )?;
                (doc.id, ImportOutcome::Restored)
            }
            None => {
                let id = DocumentId::new();
                tx.execute(
                    "INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        id.to_string(),
                        scope.org().to_string(),
                        new.content_hash,
                        new.name,
                        new.media_type.as_str(),
                        i64::try_from(new.size).map_err(|_| StoreError::Corrupt("size overflows".into()))?,
                        scope.user().to_string(),
                        now,
                    ],
                )?;
                (id, ImportOutcome::Created)
            }
        };
        // The file imported is this organization's from now on (the blob store is shared by every organization).
        crate::blob_owners::record_in(tx, &scope.org().to_string(), &new.content_hash, &now)?;
        if outcome != ImportOutcome::Existing {
            let action = if outcome == ImportOutcome::Created { "document.imported" } else { "document.restored" };
            append_audit(
                tx,
                scope,
                &now,
                action,
                "document",
                Some(&id.to_string()),
                &json!({"name": new.name, "content_hash": new.content_hash, "size": new.size}),
            )?;
        }
        let doc = read_in(tx, scope, id)?;
        match outcome {
            ImportOutcome::Created => {
                emit_in(self.store, tx, scope, SYNCED_MODEL, &id.to_string(), |tx| synced_fields(tx, &doc))?
            }
            ImportOutcome::Restored => {
                emit_in(self.store, tx, scope, SYNCED_MODEL, &id.to_string(), |_| Ok(trash_field(&doc)))?
            }
            ImportOutcome::Existing => {}
        }
        Ok((doc, outcome))
    }

    /// The organization's live documents, newest first.
    pub fn list(&self, scope: &OrgScope) -> Result<Vec<Document>, StoreError> {
        self.query(scope, "deleted_at IS NULL", "created_at DESC, id DESC")
    }

    /// The organization's trash: soft-deleted documents, most recently deleted first.
    pub fn list_deleted(&self, scope: &OrgScope) -> Result<Vec<Document>, StoreError> {
        self.query(scope, "deleted_at IS NOT NULL", "deleted_at DESC, id DESC")
    }

    fn query(&self, scope: &OrgScope, condition: &str, order: &str) -> Result<Vec<Document>, StoreError> {
        let mut stmt = self
            .store
            .conn()
            .prepare(&format!("SELECT {COLUMNS} FROM documents WHERE org_id = ?1 AND {condition} ORDER BY {order}"))?;
        let rows = stmt.query_map([scope.org().to_string()], document_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One live document. Another organization's id, an unknown id and a deleted document all give `NotFound`.
    pub fn get(&self, scope: &OrgScope, id: DocumentId) -> Result<Document, StoreError> {
        self.store
            .conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM documents WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL"),
                params![id.to_string(), scope.org().to_string()],
                document_from_row,
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// Moves a live document to the trash.
    pub fn soft_delete(&self, scope: &OrgScope, id: DocumentId) -> Result<Document, StoreError> {
        self.set_deleted(scope, id, true)
    }

    /// Brings a document back from the trash.
    pub fn restore(&self, scope: &OrgScope, id: DocumentId) -> Result<Document, StoreError> {
        self.set_deleted(scope, id, false)
    }

    /// Moves a document into (`delete`) or out of the trash, with its audit entry, in one transaction. A document
    /// that is not in the state to change from (or is another organization's) is `NotFound`.
    fn set_deleted(&self, scope: &OrgScope, id: DocumentId, delete: bool) -> Result<Document, StoreError> {
        scope.require_document_editor()?;
        let tx = self.store.conn().unchecked_transaction()?;
        let now = to_sql(self.store.clock().now());
        let (org, doc_id) = (scope.org().to_string(), id.to_string());
        let (changed, action) = if delete {
            let sql = "UPDATE documents SET deleted_at = ?3, deleted_by = ?4
                       WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL";
            (tx.execute(sql, params![doc_id, org, now, scope.user().to_string()])?, "document.deleted")
        } else {
            let sql = "UPDATE documents SET deleted_at = NULL, deleted_by = NULL
                       WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NOT NULL";
            (tx.execute(sql, params![doc_id, org])?, "document.restored")
        };
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        append_audit(&tx, scope, &now, action, "document", Some(&id.to_string()), &json!({}))?;
        let doc = read_in(&tx, scope, id)?;
        emit_in(self.store, &tx, scope, SYNCED_MODEL, &id.to_string(), |_| Ok(trash_field(&doc)))?;
        tx.commit()?;
        Ok(doc)
    }
}
