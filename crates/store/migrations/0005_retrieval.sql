-- Retrieval for the Contract Assistant: the organization's contract pages cut into short passages, indexed with
-- FTS5 (BM25); the precedent corpus in tables of its own (never mixed with an organization's rows); and the
-- assistant's sessions, messages and citations. Offsets are character (Unicode scalar) offsets into a page's text.

CREATE TABLE passages (
    id          INTEGER PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations(id),
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    page        INTEGER NOT NULL CHECK (page >= 1),
    start_char  INTEGER NOT NULL,
    end_char    INTEGER NOT NULL,
    text        TEXT NOT NULL,
    -- The organization's and the document's ids as single index tokens (hex, no hyphens): the tenant filter is part
    -- of the full-text query itself, so a search never scores another organization's passages.
    org_token   TEXT NOT NULL,
    doc_token   TEXT NOT NULL,
    CHECK (end_char > start_char)
) STRICT;
CREATE INDEX passages_document ON passages (org_id, document_id);
CREATE VIRTUAL TABLE passages_fts USING fts5(text, org_token, doc_token, content = 'passages', content_rowid = 'id',
    tokenize = 'porter unicode61');
INSERT INTO passages_fts (passages_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0, 0.0)');
CREATE TRIGGER passages_fts_insert AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts (rowid, text, org_token, doc_token) VALUES (new.id, new.text, new.org_token, new.doc_token);
END;
CREATE TRIGGER passages_fts_delete AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts (passages_fts, rowid, text, org_token, doc_token)
        VALUES ('delete', old.id, old.text, old.org_token, old.doc_token);
END;

CREATE TABLE precedents (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    source      TEXT NOT NULL,
    license     TEXT NOT NULL,
    origin      TEXT NOT NULL CHECK (origin IN ('builtin', 'imported')),
    content_hash TEXT NOT NULL,
    imported_at TEXT NOT NULL
) STRICT;
CREATE TABLE precedent_passages (
    id           INTEGER PRIMARY KEY,
    precedent_id TEXT NOT NULL REFERENCES precedents(id) ON DELETE CASCADE,
    start_char   INTEGER NOT NULL,
    end_char     INTEGER NOT NULL,
    text         TEXT NOT NULL
) STRICT;
CREATE VIRTUAL TABLE precedent_passages_fts USING fts5(text, content = 'precedent_passages', content_rowid = 'id',
    tokenize = 'porter unicode61');
CREATE TRIGGER precedent_passages_fts_insert AFTER INSERT ON precedent_passages BEGIN
    INSERT INTO precedent_passages_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER precedent_passages_fts_delete AFTER DELETE ON precedent_passages BEGIN
    INSERT INTO precedent_passages_fts (precedent_passages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;

CREATE TABLE assistant_messages (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL,
    org_id        TEXT NOT NULL REFERENCES organizations(id),
    user_id       TEXT NOT NULL REFERENCES users(id),
    question      TEXT NOT NULL,
    answer        TEXT,
    outcome       TEXT NOT NULL,
    iterations    INTEGER NOT NULL DEFAULT 0,
    tool_calls_json TEXT NOT NULL DEFAULT '[]',
    created_at    TEXT NOT NULL
) STRICT;
CREATE INDEX assistant_messages_session ON assistant_messages (org_id, session_id, created_at);
CREATE TABLE assistant_citations (
    message_id   TEXT NOT NULL REFERENCES assistant_messages(id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('contract', 'precedent')),
    document_id  TEXT REFERENCES documents(id),
    precedent_id TEXT REFERENCES precedents(id),
    page         INTEGER,
    start_char   INTEGER NOT NULL,
    end_char     INTEGER NOT NULL,
    excerpt      TEXT NOT NULL,
    PRIMARY KEY (message_id, ordinal),
    CHECK ((kind = 'contract') = (document_id IS NOT NULL))
) STRICT;
