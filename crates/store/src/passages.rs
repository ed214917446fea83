//! Retrieval tables: an organization's contract passages and their FTS5 index (every query filters by the scope's
//! organization and hides deleted documents), the precedent corpus (kept in tables of its own, never joined with an
//! organization's rows), and the Contract Assistant's stored questions, answers and citations.

use crate::time::to_sql;
use crate::{OrgScope, Store, StoreError};
use pactwise_domain::DocumentId;
use rusqlite::{OptionalExtension, params};

pub struct Passages<'s> {
    store: &'s Store,
}

/// A passage to index: a character range of one page.
#[derive(Debug, Clone, PartialEq)]
pub struct NewPassage {
    pub page: u32,
    pub start: u32,
    pub end: u32,
    pub text: String,
}

/// A search result in the organization's contracts.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageHit {
    pub id: i64,
    pub document: DocumentId,
    pub document_name: String,
    pub page: u32,
    pub start: u32,
    pub end: u32,
    pub text: String,
    /// BM25 (lower is better, as SQLite reports it).
    pub score: f64,
}

/// A search result in the precedent corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct PrecedentHit {
    pub id: i64,
    pub precedent: String,
    pub title: String,
    pub source: String,
    pub license: String,
    pub start: u32,
    pub end: u32,
    pub text: String,
    pub score: f64,
}

/// A precedent text to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewPrecedent {
    pub id: String,
    pub title: String,
    pub source: String,
    pub license: String,
    /// `builtin` or `imported`.
    pub origin: String,
    pub content_hash: String,
    pub passages: Vec<NewPassage>,
}

/// One contract record with its extractions, for structured search.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractOverview {
    pub document: DocumentId,
    pub name: String,
    pub type_id: String,
    pub counterparty: Option<String>,
    pub extractions: serde_json::Value,
}

/// A citation as stored with an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCitation {
    pub kind: String,
    pub document: Option<DocumentId>,
    pub precedent: Option<String>,
    pub page: Option<u32>,
    pub start: u32,
    pub end: u32,
    pub excerpt: String,
    /// The sentences that support the answer, as `(start, end)` character ranges of the page; empty: the passage.
    pub supporting: Vec<(u32, u32)>,
}

/// A question and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAnswer {
    pub session: String,
    pub question: String,
    pub answer: Option<String>,
    pub outcome: String,
    pub iterations: u32,
    pub tool_calls: serde_json::Value,
    pub citations: Vec<StoredCitation>,
}

/// An id as one index token: its hex digits without hyphens (the index's `org_token` and `doc_token` columns, which
/// no search reads since the organization's passages are ranked in memory; see migration 0026).
fn token(id: &str) -> String {
    id.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

pub(crate) fn parse_id(text: String) -> rusqlite::Result<DocumentId> {
    text.parse().map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
}

impl<'s> Passages<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Passages { store }
    }

    pub(crate) fn conn(&self) -> &'s rusqlite::Connection {
        self.store.conn()
    }

    /// Replaces a document's passages (one transaction). The document must be the organization's and live.
    pub fn replace(&self, scope: &OrgScope, id: DocumentId, passages: &[NewPassage]) -> Result<(), StoreError> {
        scope.require_document_editor()?;
        self.title(scope, id)?.ok_or(StoreError::NotFound)?;
        let tx = self.store.conn().unchecked_transaction()?;
        tx.execute(
            "DELETE FROM passages WHERE org_id = ?1 AND document_id = ?2",
            params![scope.org().to_string(), id.to_string()],
        )?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO passages (org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            let (org_token, doc_token) = (token(&scope.org().to_string()), token(&id.to_string()));
            for p in passages {
                insert.execute(params![
                    scope.org().to_string(),
                    id.to_string(),
                    p.page,
                    p.start,
                    p.end,
                    p.text,
                    org_token,
                    doc_token
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Whether a document has indexed passages.
    pub fn is_indexed(&self, scope: &OrgScope, id: DocumentId) -> Result<bool, StoreError> {
        Ok(self
            .store
            .conn()
            .query_row(
                "SELECT 1 FROM passages WHERE org_id = ?1 AND document_id = ?2 LIMIT 1",
                params![scope.org().to_string(), id.to_string()],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// The name of a live document of the organization (None for another organization's or a deleted one).
    pub fn title(&self, scope: &OrgScope, id: DocumentId) -> Result<Option<String>, StoreError> {
        Ok(self
            .store
            .conn()
            .query_row(
                "SELECT name FROM documents WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
                params![id.to_string(), scope.org().to_string()],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The organization's contract records with their extractions (live documents only).
    pub fn contracts(&self, scope: &OrgScope) -> Result<Vec<ContractOverview>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT c.document_id, d.name, c.type_id, c.counterparty, c.extractions_json
             FROM contracts c JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id
             WHERE c.org_id = ?1 AND d.deleted_at IS NULL ORDER BY d.name",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            Ok(ContractOverview {
                document: parse_id(r.get(0)?)?,
                name: r.get(1)?,
                type_id: r.get(2)?,
                counterparty: r.get(3)?,
                extractions: serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or(serde_json::Value::Null),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Stores a precedent text unless one with the same id and content is there already. Returns whether it was
    /// written. Precedents belong to no organization; only the platform (built-in corpus, `corpus import`) writes.
    pub fn put_precedent(&self, precedent: &NewPrecedent) -> Result<bool, StoreError> {
        let conn = self.store.conn();
        let existing: Option<String> = conn
            .query_row("SELECT content_hash FROM precedents WHERE id = ?1", [&precedent.id], |r| r.get(0))
            .optional()?;
        if existing.as_deref() == Some(precedent.content_hash.as_str()) {
            return Ok(false);
        }
        let tx = conn.unchecked_transaction()?;
        tx.execute("DELETE FROM precedents WHERE id = ?1", [&precedent.id])?;
        tx.execute(
            "INSERT INTO precedents (id, title, source, license, origin, content_hash, imported_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                precedent.id,
                precedent.title,
                precedent.source,
                precedent.license,
                precedent.origin,
                precedent.content_hash,
                to_sql(self.store.clock().now())
            ],
        )?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO precedent_passages (precedent_id, start_char, end_char, text) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for p in &precedent.passages {
                insert.execute(params![precedent.id, p.start, p.end, p.text])?;
            }
        }
        tx.commit()?;
        Ok(true)
    }

    /// Full-text search of the precedent corpus.
    pub fn search_precedents(&self, match_expression: &str, limit: u32) -> Result<Vec<PrecedentHit>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT p.id, p.precedent_id, c.title, c.source, c.license, p.start_char, p.end_char, p.text,
                    bm25(precedent_passages_fts)
             FROM precedent_passages_fts JOIN precedent_passages p ON p.id = precedent_passages_fts.rowid
             JOIN precedents c ON c.id = p.precedent_id
             WHERE precedent_passages_fts MATCH ?1 ORDER BY bm25(precedent_passages_fts) LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![match_expression, limit], |r| {
            Ok(PrecedentHit {
                id: r.get(0)?,
                precedent: r.get(1)?,
                title: r.get(2)?,
                source: r.get(3)?,
                license: r.get(4)?,
                start: r.get(5)?,
                end: r.get(6)?,
                text: r.get(7)?,
                score: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Precedent texts stored.
    pub fn precedent_count(&self) -> Result<u32, StoreError> {
        Ok(self.store.conn().query_row("SELECT count(*) FROM precedents", [], |r| r.get(0))?)
    }

    /// Stores a question, its answer (or why there is none) and its citations, for the session's user.
    pub fn record_answer(&self, scope: &OrgScope, answer: &NewAnswer) -> Result<String, StoreError> {
        let id = uuid::Uuid::now_v7().to_string();
        let tx = self.store.conn().unchecked_transaction()?;
        tx.execute(
            "INSERT INTO assistant_messages (id, session_id, org_id, user_id, question, answer, outcome, iterations,
                 tool_calls_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                id,
                answer.session,
                scope.org().to_string(),
                scope.user().to_string(),
                answer.question,
                answer.answer,
                answer.outcome,
                answer.iterations,
                answer.tool_calls.to_string(),
                to_sql(self.store.clock().now())
            ],
        )?;
        for (ordinal, c) in answer.citations.iter().enumerate() {
            tx.execute(
                "INSERT INTO assistant_citations (message_id, ordinal, kind, document_id, precedent_id, page,
                     start_char, end_char, excerpt, supporting) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    id,
                    ordinal as i64,
                    c.kind,
                    c.document.map(|d| d.to_string()),
                    c.precedent,
                    c.page,
                    c.start,
                    c.end,
                    c.excerpt,
                    (!c.supporting.is_empty())
                        .then(|| serde_json::to_string(&c.supporting).unwrap_or_else(|_| "[]".into()))
                ],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Questions asked in the organization (count), for tests and the status line.
    pub fn answer_count(&self, scope: &OrgScope) -> Result<u32, StoreError> {
        Ok(self.store.conn().query_row(
            "SELECT count(*) FROM assistant_messages WHERE org_id = ?1",
            [scope.org().to_string()],
            |r| r.get(0),
        )?)
    }
}
