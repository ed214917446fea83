-- A document's structure (running lines, table of contents, sections, definitions; pactwise-structure), read once
-- from its stored pages and kept beside them. Derived data: it belongs to the extraction and goes with it, and a
-- structure of another version is read again from the pages.

CREATE TABLE document_structures (
    document_id    TEXT PRIMARY KEY REFERENCES document_extractions(document_id) ON DELETE CASCADE,
    version        INTEGER NOT NULL CHECK (version >= 1),
    structure_json TEXT NOT NULL,
    built_at       TEXT NOT NULL
) STRICT;
