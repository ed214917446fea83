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

/// An id as one index token: its hex digits without hyphens.
fn token(id: &str) -> String {
    id.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

fn parse_id(text: String) -> rusqlite::Result<DocumentId> {
    text.parse().map_err(|e| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e)))
}

/// A full-text search across passages with a passage id between two bounds (BM25 rank, best first).
struct FullText {
    expression: String,
    org: String,
    document: Option<String>,
    limit: u32,
}

/// Passage ids (first to last) from which a search across every document is ranked in two halves at once.
const SPLIT_FROM: i64 = 4_000;

impl FullText {
    fn run(&self, conn: &rusqlite::Connection, first: i64, last: i64) -> Result<Vec<PassageHit>, StoreError> {
        // Deleted documents are filtered in the same query as the match, before the limit: the best `limit` live
        // passages, however many deleted ones match better. Ordered by the rank alone, FTS5 sorts before the joins
        // (an order with a second key joins every match first: 40% slower on 27,870 passages).
        let mut stmt = conn.prepare_cached(
            "SELECT p.id, p.document_id, d.name, p.page, p.start_char, p.end_char, p.text, passages_fts.rank
             FROM passages_fts
             JOIN passages p ON p.id = passages_fts.rowid
             JOIN documents d ON d.id = p.document_id AND d.org_id = p.org_id
             WHERE passages_fts MATCH ?1 AND p.org_id = ?2 AND d.deleted_at IS NULL
               AND (?3 IS NULL OR p.document_id = ?3) AND passages_fts.rowid BETWEEN ?5 AND ?6
             ORDER BY passages_fts.rank LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![self.expression, self.org, self.document, self.limit, first, last], |r| {
            Ok(PassageHit {
                id: r.get(0)?,
                document: parse_id(r.get(1)?)?,
                document_name: r.get(2)?,
                page: r.get(3)?,
                start: r.get(4)?,
                end: r.get(5)?,
                text: r.get(6)?,
                score: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
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

    /// Full-text search (an FTS5 MATCH expression over the text) in the organization's live documents, best first;
    /// optionally inside one document. The document filter, and the organization's when another organization has
    /// passages in this store, are part of the index query; the join checks the organization (always) and the
    /// document again and drops deleted documents.
    ///
    /// A search across every document ranks the passages in two halves of their ids at once, one on the store's
    /// second connection in a thread of its own, and keeps the best `limit` of both: BM25 scores a passage the same
    /// in either half (the terms' weights come from the whole index), so the hits are those of one search over all.
    pub fn search(
        &self,
        scope: &OrgScope,
        match_expression: &str,
        document: Option<DocumentId>,
        limit: u32,
    ) -> Result<Vec<PassageHit>, StoreError> {
        let conn = self.store.conn();
        let org = scope.org().to_string();
        // The index query names the organization unless every passage is the organization's (one organization on
        // this desktop): then the term matches every passage, narrows nothing and costs a fifth of the ranking.
        // The join checks the organization either way.
        let others: bool =
            conn.query_row("SELECT EXISTS (SELECT 1 FROM passages WHERE org_id < ?1 OR org_id > ?1)", [&org], |r| {
                r.get(0)
            })?;
        let mut scoped: Vec<String> = Vec::new();
        if others {
            scoped.push(format!("org_token : \"{}\"", token(&org)));
        }
        if let Some(d) = document {
            scoped.push(format!("doc_token : \"{}\"", token(&d.to_string())));
        }
        scoped.push(format!("text : ({match_expression})"));
        let query =
            FullText { expression: scoped.join(" AND "), org, document: document.map(|d| d.to_string()), limit };
        let (first, last): (Option<i64>, Option<i64>) =
            conn.query_row("SELECT min(id), max(id) FROM passages", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let (Some(first), Some(last)) = (first, last) else { return Ok(Vec::new()) };
        // Ranking first weighs every term over the whole index (3 ms for a long query over 27,870 passages), even
        // when no passage has them all; finding one match first is cheap.
        let any: bool = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM passages_fts WHERE passages_fts MATCH ?1)")?
            .query_row([&query.expression], |r| r.get(0))?;
        if !any {
            return Ok(Vec::new());
        }
        // One document's passages are few; a search inside an open transaction must see its own writes, which the
        // second connection cannot.
        let split = document.is_none() && last - first >= SPLIT_FROM && conn.is_autocommit();
        let Some(reader) = split.then(|| self.store.take_reader()).flatten() else {
            return query.run(conn, first, last);
        };
        let middle = first + (last - first) / 2;
        let (lower, upper) = std::thread::scope(|s| {
            let upper = s.spawn(|| {
                let hits = query.run(&reader, middle + 1, last);
                (hits, reader)
            });
            (query.run(conn, first, middle), upper.join())
        });
        let Ok((upper, reader)) = upper else {
            // The thread failed (its connection is gone with it): the search runs again on the main connection.
            return query.run(conn, first, last);
        };
        self.store.give_back_reader(reader);
        let mut hits = lower?;
        hits.extend(upper?);
        // Equal scores in the order of their ids (one search leaves their order to FTS5).
        hits.sort_by(|a, b| a.score.total_cmp(&b.score).then(a.id.cmp(&b.id)));
        hits.truncate(limit as usize);
        Ok(hits)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewDocument;
    use pactwise_domain::{MediaType, Role, SystemClock};
    use std::sync::Arc;

    fn member(store: &Store, name: &str) -> OrgScope {
        let p = store.platform();
        let org = p.create_organization(name).unwrap();
        let user = p.create_user(&format!("{name} user"), None).unwrap();
        p.set_membership(org, user, Role::Owner).unwrap();
        store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
    }

    /// A contract of `count` passages; many have the same words (equal scores), so the order of ties shows.
    fn document(store: &Store, scope: &OrgScope, n: usize, count: usize) -> DocumentId {
        let new = NewDocument {
            name: format!("contract {n}.pdf"),
            media_type: MediaType::Pdf,
            size: 10,
            content_hash: format!("{n:064x}"),
        };
        let (d, _) = store.documents().record(scope, &new).unwrap();
        let words = ["fees", "invoice", "terminate", "notice", "liability", "warranty", "supplier", "audit"];
        let passages: Vec<NewPassage> = (0..count)
            .map(|i| {
                let text = format!(
                    "The {} and the {} of clause {} as the {} says{}.",
                    words[i % 8],
                    words[(i / 8 + n) % 8],
                    i % 5,
                    words[(i * 3 + 1) % 8],
                    " more".repeat(i % 13)
                );
                NewPassage { page: 1, start: 0, end: text.chars().count() as u32, text }
            })
            .collect();
        store.passages().replace(scope, d.id, &passages).unwrap();
        d.id
    }

    #[test]
    fn a_search_ranked_in_two_halves_finds_what_one_search_over_all_finds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store.db"), Arc::new(SystemClock)).unwrap();
        let acme = member(&store, "Acme");
        let globex = member(&store, "Globex");
        // The two organizations' contracts alternate, so each half of the ids holds passages of both.
        let mut acme_documents = Vec::new();
        for n in 0..6 {
            acme_documents.push(document(&store, &acme, 2 * n, 500));
            document(&store, &globex, 2 * n + 1, 500);
        }
        store.documents().soft_delete(&acme, acme_documents[4]).unwrap();
        let passages = store.passages();
        let (first, last): (i64, i64) = store
            .conn()
            .query_row("SELECT min(id), max(id) FROM passages", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert!(last - first >= SPLIT_FROM, "the search is split");
        for (expression, limit) in [("\"fees\" OR \"audit\" OR \"clause\"", 50), ("\"warranty\" AND \"notice\"", 40)] {
            let split = passages.search(&acme, expression, None, limit).unwrap();
            assert!(store.reader.lock().unwrap().is_some(), "the second connection ranked half and was given back");
            let whole = FullText {
                expression: format!("org_token : \"{}\" AND text : ({expression})", token(&acme.org().to_string())),
                org: acme.org().to_string(),
                document: None,
                limit,
            }
            .run(store.conn(), first, last)
            .unwrap();
            assert_eq!(split.len(), limit as usize);
            // The same scores in the same order; equal scores may come in another order, and at the cut another
            // passage of the same score may be kept.
            let scores = |hits: &[PassageHit]| hits.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
            assert_eq!(scores(&split), scores(&whole), "{expression}");
            let cut = split.last().unwrap().score;
            let above = |hits: &[PassageHit]| {
                let mut ids: Vec<i64> = hits.iter().filter(|h| h.score < cut).map(|h| h.id).collect();
                ids.sort();
                ids
            };
            assert!(!above(&split).is_empty(), "{expression}: not all of one score");
            assert_eq!(above(&split), above(&whole), "{expression}: the same passages above the cut");
            assert!(split.windows(2).all(|w| w[0].score < w[1].score || w[0].id < w[1].id), "ties by id");
            assert!(split.iter().all(|h| acme_documents.contains(&h.document)), "only the organization's own");
            assert!(split.iter().all(|h| h.document != acme_documents[4]), "a deleted contract is not searched");
        }
        // Inside a transaction the second connection could not see the writes: the search stays on one connection.
        let tx = store.conn().unchecked_transaction().unwrap();
        tx.execute(
            "INSERT INTO passages (org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
             VALUES (?1, ?2, 1, 0, 20, 'an uncommitted escrow', ?3, ?4)",
            params![
                acme.org().to_string(),
                acme_documents[0].to_string(),
                token(&acme.org().to_string()),
                token(&acme_documents[0].to_string())
            ],
        )
        .unwrap();
        let found = passages.search(&acme, "\"escrow\"", None, 50).unwrap();
        assert_eq!(found.len(), 1, "its own uncommitted passage is found");
        tx.rollback().unwrap();
        store.release_memory().unwrap();
        assert!(store.reader.lock().unwrap().is_none(), "the memory release closes the second connection");
    }
}
