//! Extracted pages, stored with their document so a document is extracted once. Every function takes the caller's
//! scope and checks that the document is the organization's and not deleted.

use crate::time::to_sql;
use crate::{OrgScope, PlatformCredential, Store, StoreError};
use pactwise_domain::page::{CharBox, Confidence, ExtractedDocument, Page, PageSource};
use pactwise_domain::{DocumentId, OrgId};
use rusqlite::{OptionalExtension, params};

pub struct Pages<'s> {
    store: &'s Store,
}

/// Some pages' text and the document's page count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageTexts {
    pub page_count: u32,
    /// (page number, text), in page order.
    pub pages: Vec<(u32, String)>,
}

impl<'s> Pages<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Pages { store }
    }

    fn content_hash(&self, scope: &OrgScope, id: DocumentId) -> Result<String, StoreError> {
        self.store
            .conn()
            .query_row(
                "SELECT content_hash FROM documents WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
                params![id.to_string(), scope.org().to_string()],
                |r| r.get(0),
            )
            .optional()?
            .ok_or(StoreError::NotFound)
    }

    /// Stores a document's pages (replacing any earlier extraction) in one transaction.
    pub fn save(&self, scope: &OrgScope, id: DocumentId, doc: &ExtractedDocument) -> Result<(), StoreError> {
        scope.require_document_editor()?;
        self.content_hash(scope, id)?;
        let tx = self.store.conn().unchecked_transaction()?;
        save_in(&tx, id, doc, &to_sql(self.store.clock().now()))?;
        tx.commit()?;
        Ok(())
    }

    /// The stored extraction of a live document of the organization, if it was extracted.
    pub fn load(&self, scope: &OrgScope, id: DocumentId) -> Result<Option<ExtractedDocument>, StoreError> {
        self.load_pages(scope, id, None)
    }

    /// Like [`Pages::load`], with only page `number` in `pages` (empty if the document has no such page): what a
    /// viewer showing one page reads, without decoding every page of a long contract.
    pub fn load_page(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        number: u32,
    ) -> Result<Option<ExtractedDocument>, StoreError> {
        self.load_pages(scope, id, Some(number))
    }

    fn load_pages(
        &self,
        scope: &OrgScope,
        id: DocumentId,
        only: Option<u32>,
    ) -> Result<Option<ExtractedDocument>, StoreError> {
        let content_hash = self.content_hash(scope, id)?;
        let head = self
            .store
            .conn()
            .query_row(
                "SELECT media_type, synthetic, headers_json, footers_json FROM document_extractions WHERE document_id = ?1",
                [id.to_string()],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?)),
            )
            .optional()?;
        let Some((media_type, synthetic, headers, footers)) = head else {
            return Ok(None);
        };
        let corrupt = |what: &str| StoreError::Corrupt(format!("document_pages of {id}: {what}"));
        let mut stmt = self.store.conn().prepare(
            "SELECT number, text, source, confidence, confidence_kind, synthetic, width, height, rotation, char_boxes
             FROM document_pages WHERE document_id = ?1 AND (?2 IS NULL OR number = ?2) ORDER BY number",
        )?;
        let rows = stmt.query_map(params![id.to_string(), only], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<f64>>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, f64>(6)?,
                r.get::<_, f64>(7)?,
                r.get::<_, u16>(8)?,
                r.get::<_, Vec<u8>>(9)?,
            ))
        })?;
        let mut pages = Vec::new();
        for row in rows {
            let (number, text, source, value, kind, page_synthetic, width, height, rotation, boxes) = row?;
            let source = match source.as_str() {
                "text" => PageSource::Text,
                "ocr" => PageSource::Ocr,
                other => return Err(corrupt(&format!("source {other:?}"))),
            };
            let confidence = match (kind.as_str(), value) {
                ("measured", Some(v)) => Confidence::Measured(v as f32),
                ("estimated", Some(v)) => Confidence::Estimated(v as f32),
                ("none", None) => Confidence::None,
                _ => return Err(corrupt("confidence")),
            };
            pages.push(Page {
                number,
                text,
                source,
                confidence,
                synthetic: page_synthetic != 0,
                width: width as f32,
                height: height as f32,
                rotation,
                char_boxes: CharBox::decode_all(&boxes).ok_or_else(|| corrupt("char boxes"))?,
            });
        }
        Ok(Some(ExtractedDocument {
            media_type: media_type.parse().map_err(|_| corrupt("media type"))?,
            content_hash,
            pages,
            synthetic: synthetic != 0,
            headers: serde_json::from_str(&headers).map_err(|_| corrupt("headers"))?,
            footers: serde_json::from_str(&footers).map_err(|_| corrupt("footers"))?,
        }))
    }

    /// For a platform worker running a step of a run of organization `org` (the run's own organization, never
    /// one from run input): the text of pages `first..=last` of a live document of that organization, with the
    /// document's page count. `NotFound` for another organization's or a deleted document; `None` when it has not
    /// been extracted. Text only: no character boxes are decoded.
    pub fn texts_for_worker(
        &self,
        _credential: &PlatformCredential,
        org: OrgId,
        id: DocumentId,
        first: u32,
        last: u32,
    ) -> Result<Option<PageTexts>, StoreError> {
        let conn = self.store.conn();
        conn.query_row(
            "SELECT 1 FROM documents WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
            params![id.to_string(), org.to_string()],
            |_| Ok(()),
        )
        .optional()?
        .ok_or(StoreError::NotFound)?;
        let Some(page_count) = conn
            .query_row("SELECT page_count FROM document_extractions WHERE document_id = ?1", [id.to_string()], |r| {
                r.get::<_, u32>(0)
            })
            .optional()?
        else {
            return Ok(None);
        };
        let mut stmt = conn.prepare_cached(
            "SELECT number, text FROM document_pages WHERE document_id = ?1 AND number BETWEEN ?2 AND ?3 ORDER BY number",
        )?;
        let pages = stmt
            .query_map(params![id.to_string(), first, last], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(PageTexts { page_count, pages }))
    }

    /// Keeps the structure read from the document's stored pages (JSON of `pactwise_structure::DocumentStructure`,
    /// with its rules' version), replacing an earlier one. `NotFound` when the document has no stored pages.
    pub fn save_structure(&self, scope: &OrgScope, id: DocumentId, version: u32, json: &str) -> Result<(), StoreError> {
        self.content_hash(scope, id)?;
        let changed = self.store.conn().execute(
            "INSERT INTO document_structures (document_id, version, structure_json, built_at)
             SELECT document_id, ?2, ?3, ?4 FROM document_extractions WHERE document_id = ?1
             ON CONFLICT (document_id) DO UPDATE SET version = excluded.version,
                 structure_json = excluded.structure_json, built_at = excluded.built_at",
            params![id.to_string(), version, json, to_sql(self.store.clock().now())],
        )?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// The stored structure of a live document of the organization and its version (None: not read yet).
    pub fn structure(&self, scope: &OrgScope, id: DocumentId) -> Result<Option<(u32, String)>, StoreError> {
        self.content_hash(scope, id)?;
        Ok(self
            .store
            .conn()
            .query_row(
                "SELECT version, structure_json FROM document_structures WHERE document_id = ?1",
                [id.to_string()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
    }

    /// How many pages the document's stored extraction has (None: not extracted yet).
    pub fn page_count(&self, scope: &OrgScope, id: DocumentId) -> Result<Option<u32>, StoreError> {
        self.content_hash(scope, id)?;
        Ok(self
            .store
            .conn()
            .query_row("SELECT page_count FROM document_extractions WHERE document_id = ?1", [id.to_string()], |r| {
                r.get(0)
            })
            .optional()?)
    }
}

/// Writes a document's pages inside `tx` (replacing any earlier extraction); the caller checked the document.
pub(crate) fn save_in(
    tx: &rusqlite::Transaction<'_>,
    id: DocumentId,
    doc: &ExtractedDocument,
    at: &str,
) -> Result<(), StoreError> {
    let json = |v: &Vec<String>| serde_json::to_string(v).unwrap_or_else(|_| "[]".into());
    tx.execute("DELETE FROM document_extractions WHERE document_id = ?1", [id.to_string()])?;
    tx.execute(
        "INSERT INTO document_extractions (document_id, media_type, page_count, synthetic, headers_json, footers_json,
             extracted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id.to_string(),
            doc.media_type.as_str(),
            doc.pages.len() as i64,
            doc.synthetic as i64,
            json(&doc.headers),
            json(&doc.footers),
            at
        ],
    )?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO document_pages (document_id, number, text, source, confidence, confidence_kind, synthetic,
                 width, height, rotation, char_boxes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        for p in &doc.pages {
            let kind = match p.confidence {
                Confidence::Measured(_) => "measured",
                Confidence::Estimated(_) => "estimated",
                Confidence::None => "none",
            };
            insert.execute(params![
                id.to_string(),
                p.number,
                p.text,
                p.source.as_str(),
                p.confidence.value().map(f64::from),
                kind,
                p.synthetic as i64,
                f64::from(p.width),
                f64::from(p.height),
                p.rotation,
                CharBox::encode_all(&p.char_boxes),
            ])?;
        }
    }
    Ok(())
}
