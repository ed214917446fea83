//! Stored sentence-embedding vectors of passages (issue 21 part R). The bytes are opaque here (the int8 form of
//! `pactwise_embed::Quantized`); the store keeps them per passage with the model id that computed them. A vector of
//! another model counts as missing. Organization passages and precedent passages are kept apart.

use crate::{OrgScope, PassageHit, Passages, PrecedentHit, StoreError};
use pactwise_domain::DocumentId;
use rusqlite::{OptionalExtension, params};

/// A passage that has no vector for the current model yet.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageToEmbed {
    pub id: i64,
    pub text: String,
}

/// Where a stored passage is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageRange {
    pub id: i64,
    pub page: u32,
    pub start: u32,
    pub end: u32,
}

/// A stored vector of one of the organization's live documents.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    pub passage: i64,
    pub document: DocumentId,
    pub bytes: Vec<u8>,
}

/// A stored vector of a precedent passage.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPrecedentVector {
    pub passage: i64,
    pub bytes: Vec<u8>,
}

/// What an in-memory index of stored vectors was built from: when it changes, the index is read again. Cheap to read
/// (the organization's vector rows of the model, counted through their index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VectorStamp {
    pub rows: u32,
    pub last: i64,
    /// Documents of the organization deleted so far (an index holding a deleted document's vectors is read again).
    pub deleted: u32,
}

/// How far the organization's passages are embedded with a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorProgress {
    pub done: u32,
    pub total: u32,
}

fn parse_id(text: String) -> rusqlite::Result<DocumentId> {
    text.parse().map_err(|e| rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, Box::new(e)))
}

impl Passages<'_> {
    /// The organization's passages (of live documents) lacking a vector of `model_id`, in id order after `after`,
    /// at most `limit` (a page; pass the last id seen to get the next).
    pub fn lacking_vectors(
        &self,
        scope: &OrgScope,
        model_id: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<PassageToEmbed>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.id, p.text FROM passages p
             JOIN documents d ON d.id = p.document_id AND d.org_id = p.org_id AND d.deleted_at IS NULL
             LEFT JOIN passage_vectors v ON v.passage_id = p.id AND v.model_id = ?2
             WHERE p.org_id = ?1 AND p.id > ?3 AND v.passage_id IS NULL
             ORDER BY p.id LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), model_id, after, limit], |r| {
            Ok(PassageToEmbed { id: r.get(0)?, text: r.get(1)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Saves vectors of the organization's passages (one transaction), replacing any of another model. Ids that are
    /// not the organization's passages are ignored. Returns how many were written.
    pub fn save_vectors(
        &self,
        scope: &OrgScope,
        model_id: &str,
        vectors: &[(i64, Vec<u8>)],
    ) -> Result<u32, StoreError> {
        let tx = self.conn().unchecked_transaction()?;
        let mut written = 0;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO passage_vectors (passage_id, org_id, model_id, vector)
                 SELECT p.id, p.org_id, ?3, ?4 FROM passages p WHERE p.id = ?1 AND p.org_id = ?2",
            )?;
            for (id, bytes) in vectors {
                written += insert.execute(params![id, scope.org().to_string(), model_id, bytes])? as u32;
            }
        }
        tx.commit()?;
        Ok(written)
    }

    /// The organization's vectors of `model_id`, live documents only.
    pub fn load_vectors(&self, scope: &OrgScope, model_id: &str) -> Result<Vec<StoredVector>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT v.passage_id, p.document_id, v.vector FROM passage_vectors v
             JOIN passages p ON p.id = v.passage_id AND p.org_id = v.org_id
             JOIN documents d ON d.id = p.document_id AND d.org_id = p.org_id AND d.deleted_at IS NULL
             WHERE v.org_id = ?1 AND v.model_id = ?2 ORDER BY v.passage_id",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), model_id], |r| {
            Ok(StoredVector { passage: r.get(0)?, document: parse_id(r.get(1)?)?, bytes: r.get(2)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Drops the organization's vectors of `model_id` for these passages (a damaged row), so they are computed
    /// again; other models' vectors of the same passages stay.
    pub fn forget_vectors(&self, scope: &OrgScope, model_id: &str, ids: &[i64]) -> Result<(), StoreError> {
        let tx = self.conn().unchecked_transaction()?;
        {
            let mut delete = tx.prepare_cached(
                "DELETE FROM passage_vectors WHERE passage_id = ?1 AND org_id = ?2 AND model_id = ?3",
            )?;
            for id in ids {
                delete.execute(params![id, scope.org().to_string(), model_id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// How many of the organization's live passages have a vector of `model_id`, of how many.
    pub fn vector_progress(&self, scope: &OrgScope, model_id: &str) -> Result<VectorProgress, StoreError> {
        Ok(self.conn().query_row(
            "SELECT count(v.passage_id), count(*) FROM passages p
             JOIN documents d ON d.id = p.document_id AND d.org_id = p.org_id AND d.deleted_at IS NULL
             LEFT JOIN passage_vectors v ON v.passage_id = p.id AND v.model_id = ?2
             WHERE p.org_id = ?1",
            params![scope.org().to_string(), model_id],
            |r| Ok(VectorProgress { done: r.get(0)?, total: r.get(1)? }),
        )?)
    }

    /// Precedent passages lacking a vector of `model_id` (paged like `lacking_vectors`).
    pub fn precedents_lacking_vectors(
        &self,
        model_id: &str,
        after: i64,
        limit: u32,
    ) -> Result<Vec<PassageToEmbed>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.id, p.text FROM precedent_passages p
             LEFT JOIN precedent_passage_vectors v ON v.passage_id = p.id AND v.model_id = ?1
             WHERE p.id > ?2 AND v.passage_id IS NULL ORDER BY p.id LIMIT ?3",
        )?;
        let rows =
            stmt.query_map(params![model_id, after, limit], |r| Ok(PassageToEmbed { id: r.get(0)?, text: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Saves vectors of precedent passages (one transaction). Returns how many were written.
    pub fn save_precedent_vectors(&self, model_id: &str, vectors: &[(i64, Vec<u8>)]) -> Result<u32, StoreError> {
        let tx = self.conn().unchecked_transaction()?;
        let mut written = 0;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO precedent_passage_vectors (passage_id, model_id, vector)
                 SELECT p.id, ?2, ?3 FROM precedent_passages p WHERE p.id = ?1",
            )?;
            for (id, bytes) in vectors {
                written += insert.execute(params![id, model_id, bytes])? as u32;
            }
        }
        tx.commit()?;
        Ok(written)
    }

    /// The precedent corpus's vectors of `model_id`.
    pub fn load_precedent_vectors(&self, model_id: &str) -> Result<Vec<StoredPrecedentVector>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT passage_id, vector FROM precedent_passage_vectors WHERE model_id = ?1 ORDER BY passage_id",
        )?;
        let rows =
            stmt.query_map([model_id], |r| Ok(StoredPrecedentVector { passage: r.get(0)?, bytes: r.get(1)? }))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Drops precedent vectors of `model_id` for these passages (a damaged row), so they are computed again.
    pub fn forget_precedent_vectors(&self, model_id: &str, ids: &[i64]) -> Result<(), StoreError> {
        let tx = self.conn().unchecked_transaction()?;
        {
            let mut delete =
                tx.prepare_cached("DELETE FROM precedent_passage_vectors WHERE passage_id = ?1 AND model_id = ?2")?;
            for id in ids {
                delete.execute(params![id, model_id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// What the organization's stored vectors of `model_id` are now (see [`VectorStamp`]).
    pub fn vector_stamp(&self, scope: &OrgScope, model_id: &str) -> Result<VectorStamp, StoreError> {
        let org = scope.org().to_string();
        let (rows, last) = self.conn().query_row(
            "SELECT count(*), coalesce(max(passage_id), 0) FROM passage_vectors WHERE org_id = ?1 AND model_id = ?2",
            params![org, model_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let deleted = self.conn().query_row(
            "SELECT count(*) FROM documents WHERE org_id = ?1 AND deleted_at IS NOT NULL",
            [&org],
            |r| r.get(0),
        )?;
        Ok(VectorStamp { rows, last, deleted })
    }

    /// The precedent corpus's vectors of `model_id` now.
    pub fn precedent_vector_stamp(&self, model_id: &str) -> Result<VectorStamp, StoreError> {
        Ok(self.conn().query_row(
            "SELECT count(*), coalesce(max(passage_id), 0) FROM precedent_passage_vectors WHERE model_id = ?1",
            [model_id],
            |r| Ok(VectorStamp { rows: r.get(0)?, last: r.get(1)?, deleted: 0 }),
        )?)
    }

    /// The organization's passages with these ids, in the order given, keeping only passages of its live documents
    /// (and of `document` when given): the final check of every search's hits, whatever index produced the ids.
    pub fn passages_by_id(
        &self,
        scope: &OrgScope,
        ids: &[i64],
        document: Option<DocumentId>,
    ) -> Result<Vec<PassageHit>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.id, p.document_id, d.name, p.page, p.start_char, p.end_char, p.text
             FROM passages p JOIN documents d ON d.id = p.document_id AND d.org_id = p.org_id
             WHERE p.id = ?1 AND p.org_id = ?2 AND d.deleted_at IS NULL AND (?3 IS NULL OR p.document_id = ?3)",
        )?;
        let org = scope.org().to_string();
        let document = document.map(|d| d.to_string());
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let hit = stmt
                .query_row(params![id, org, document], |r| {
                    Ok(PassageHit {
                        id: r.get(0)?,
                        document: parse_id(r.get(1)?)?,
                        document_name: r.get(2)?,
                        page: r.get(3)?,
                        start: r.get(4)?,
                        end: r.get(5)?,
                        text: r.get(6)?,
                        score: 0.0,
                    })
                })
                .optional()?;
            out.extend(hit);
        }
        Ok(out)
    }

    /// Precedent passages with these ids, in the order given; with `public_only`, only those of public texts (what
    /// drafting may be grounded in: never a competitor's released bid).
    pub fn precedents_by_id(&self, ids: &[i64], public_only: bool) -> Result<Vec<PrecedentHit>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.id, p.precedent_id, c.title, c.source, c.license, p.start_char, p.end_char, p.text
             FROM precedent_passages p JOIN precedents c ON c.id = p.precedent_id
             WHERE p.id = ?1 AND (?2 = 0 OR c.provenance = 'public')",
        )?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let hit = stmt
                .query_row(params![id, public_only], |r| {
                    Ok(PrecedentHit {
                        id: r.get(0)?,
                        precedent: r.get(1)?,
                        title: r.get(2)?,
                        source: r.get(3)?,
                        license: r.get(4)?,
                        start: r.get(5)?,
                        end: r.get(6)?,
                        text: r.get(7)?,
                        score: 0.0,
                    })
                })
                .optional()?;
            out.extend(hit);
        }
        Ok(out)
    }

    /// The passages of one of the organization's live documents, in reading order (id, page, range; no text).
    pub fn of_document(&self, scope: &OrgScope, document: DocumentId) -> Result<Vec<PassageRange>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT p.id, p.page, p.start_char, p.end_char FROM passages p
             JOIN documents d ON d.id = p.document_id AND d.org_id = p.org_id AND d.deleted_at IS NULL
             WHERE p.org_id = ?1 AND p.document_id = ?2 ORDER BY p.id",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), document.to_string()], |r| {
            Ok(PassageRange { id: r.get(0)?, page: r.get(1)?, start: r.get(2)?, end: r.get(3)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
