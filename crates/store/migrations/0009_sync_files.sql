-- What the desktop keeps while remote changes wait for something local (crate pactwise-sync, applied by `api`):
-- documents announced by another device whose file has not been fetched and imported here yet (their merged
-- fields wait in `fields_json` until the file is here), and remote corrections of a document that is not here yet.
-- Also when the organization last finished a sync round.

CREATE TABLE sync_wanted_documents (
    org_id       TEXT NOT NULL REFERENCES organizations(id),
    document_id  TEXT NOT NULL,
    content_hash TEXT,
    -- the document's last-writer-wins fields as merged so far (name, content_hash, media_type, size, created_at,
    -- created_by, deleted_at); a row whose document already exists here only waits for the local import steps
    fields_json  TEXT NOT NULL DEFAULT '{}',
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (org_id, document_id)
);

CREATE TABLE sync_deferred_corrections (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL REFERENCES organizations(id),
    document_id   TEXT NOT NULL,
    item_id       TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('confirm', 'correct')),
    status        TEXT NOT NULL CHECK (status IN ('present', 'partial', 'absent', 'not_evaluated')),
    quote_text    TEXT,
    quote_page    INTEGER,
    note          TEXT,
    user_id       TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    audit_action  TEXT NOT NULL,
    audit_details TEXT NOT NULL DEFAULT '{}',
    CHECK ((quote_text IS NULL) = (quote_page IS NULL))
);
CREATE INDEX sync_deferred_corrections_by_document ON sync_deferred_corrections (org_id, document_id);

ALTER TABLE sync_state ADD COLUMN last_success_at TEXT;
