-- Extracted pages, stored with the document so a document is extracted once. Character boxes are a compact blob
-- (pactwise_domain::page::CharBox::encode_all). Rows belong to a document, so the tenant comes through documents.

CREATE TABLE document_extractions (
    document_id  TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    media_type   TEXT NOT NULL,
    page_count   INTEGER NOT NULL CHECK (page_count >= 1),
    synthetic    INTEGER NOT NULL CHECK (synthetic IN (0, 1)),
    headers_json TEXT NOT NULL DEFAULT '[]',
    footers_json TEXT NOT NULL DEFAULT '[]',
    extracted_at TEXT NOT NULL
) STRICT;

CREATE TABLE document_pages (
    document_id     TEXT NOT NULL REFERENCES document_extractions(document_id) ON DELETE CASCADE,
    number          INTEGER NOT NULL CHECK (number >= 1),
    text            TEXT NOT NULL,
    source          TEXT NOT NULL CHECK (source IN ('text', 'ocr')),
    confidence      REAL,
    confidence_kind TEXT NOT NULL CHECK (confidence_kind IN ('measured', 'estimated', 'none')),
    synthetic       INTEGER NOT NULL CHECK (synthetic IN (0, 1)),
    width           REAL NOT NULL,
    height          REAL NOT NULL,
    rotation        INTEGER NOT NULL CHECK (rotation IN (0, 90, 180, 270)),
    char_boxes      BLOB NOT NULL,
    PRIMARY KEY (document_id, number),
    CHECK ((confidence_kind = 'none') = (confidence IS NULL))
) STRICT;
