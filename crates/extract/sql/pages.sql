-- Proposed tables for extracted pages, for the store crate's migrations (the extract crate runs no SQL itself).
-- A document is extracted once: these rows are written in the transaction that records the extraction, and read
-- back instead of extracting again. Rows belong to the document, so the org scope comes through `documents`.

CREATE TABLE document_extractions (
    document_id  TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    media_type   TEXT NOT NULL,                            -- MediaType::as_str
    page_count   INTEGER NOT NULL CHECK (page_count >= 1),
    synthetic    INTEGER NOT NULL CHECK (synthetic IN (0, 1)),
    headers_json TEXT NOT NULL DEFAULT '[]',               -- ExtractedDocument::headers (DOCX), JSON array
    footers_json TEXT NOT NULL DEFAULT '[]',
    extracted_at TEXT NOT NULL                             -- from the Clock, RFC 3339
) STRICT;

CREATE TABLE document_pages (
    document_id     TEXT NOT NULL REFERENCES document_extractions(document_id) ON DELETE CASCADE,
    number          INTEGER NOT NULL CHECK (number >= 1),
    text            TEXT NOT NULL,                         -- '\n' line endings
    source          TEXT NOT NULL CHECK (source IN ('text', 'ocr')),
    confidence      REAL,                                  -- 0..1; NULL exactly when the kind is 'none'
    confidence_kind TEXT NOT NULL CHECK (confidence_kind IN ('measured', 'estimated', 'none')),
    synthetic       INTEGER NOT NULL CHECK (synthetic IN (0, 1)),
    width           REAL NOT NULL,                         -- points, as displayed (rotation applied)
    height          REAL NOT NULL,
    rotation        INTEGER NOT NULL CHECK (rotation IN (0, 90, 180, 270)),
    char_boxes      BLOB NOT NULL,                         -- CharBox::encode_all: 20 bytes a box (index u32, x y w h f32, LE)
    PRIMARY KEY (document_id, number),
    CHECK ((confidence_kind = 'none') = (confidence IS NULL))
) STRICT;
