//! Stored sentence-embedding vectors of passages (issue 21 part R). The bytes are opaque here (the int8 form of
//! `pactwise_embed::Quantized`); the store keeps them per passage with the model id that computed them. A vector of
//! another model counts as missing. Organization passages and precedent passages are kept apart.

use crate::{OrgScope, Passages, StoreError};
use pactwise_domain::DocumentId;
use rusqlite::params;

/// A passage that has no vector for the current model yet.
#[derive(Debug, Clone, PartialEq)]
pub struct PassageToEmbed {
    pub id: i64,
    pub text: String,
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

    /// Drops the organization's vectors of these passages (a damaged row), so they are computed again.
    pub fn forget_vectors(&self, scope: &OrgScope, ids: &[i64]) -> Result<(), StoreError> {
        let tx = self.conn().unchecked_transaction()?;
        {
            let mut delete = tx.prepare_cached("DELETE FROM passage_vectors WHERE passage_id = ?1 AND org_id = ?2")?;
            for id in ids {
                delete.execute(params![id, scope.org().to_string()])?;
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

    /// Drops precedent vectors of these passages (a damaged row), so they are computed again.
    pub fn forget_precedent_vectors(&self, ids: &[i64]) -> Result<(), StoreError> {
        let tx = self.conn().unchecked_transaction()?;
        {
            let mut delete = tx.prepare_cached("DELETE FROM precedent_passage_vectors WHERE passage_id = ?1")?;
            for id in ids {
                delete.execute([id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
