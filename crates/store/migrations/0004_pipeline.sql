-- The document pipeline: one row per (document, stage) with its status, model, tokens, latency, outcome, reason and
-- output; human corrections kept apart (append-only; the latest per item wins over any pipeline output); the
-- contract record with its extractions; vendors. Rows carry org_id so every query filters by the tenant directly.

CREATE TABLE pipeline_stages (
    org_id        TEXT NOT NULL REFERENCES organizations(id),
    document_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    stage         TEXT NOT NULL CHECK (stage IN ('classify', 'checklist', 'gate', 'finalize')),
    status        TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'degraded', 'failed')),
    attempt       INTEGER NOT NULL DEFAULT 0,
    model         TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms    INTEGER NOT NULL DEFAULT 0,
    outcome       TEXT,
    reason        TEXT,
    output_json   TEXT,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (document_id, stage)
) STRICT;
CREATE INDEX pipeline_stages_org ON pipeline_stages (org_id, stage, status);

CREATE TABLE review_corrections (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations(id),
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    item_id     TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('confirm', 'correct')),
    status      TEXT NOT NULL CHECK (status IN ('present', 'partial', 'absent', 'not_evaluated')),
    quote_text  TEXT,
    quote_page  INTEGER,
    note        TEXT,
    user_id     TEXT NOT NULL REFERENCES users(id),
    created_at  TEXT NOT NULL,
    CHECK ((quote_text IS NULL) = (quote_page IS NULL))
) STRICT;
CREATE INDEX review_corrections_doc ON review_corrections (org_id, document_id, item_id, created_at);
CREATE TRIGGER review_corrections_no_update BEFORE UPDATE ON review_corrections
BEGIN SELECT RAISE(ABORT, 'review corrections are append-only'); END;

CREATE TABLE vendors (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL REFERENCES organizations(id),
    name            TEXT NOT NULL,
    normalized_name TEXT NOT NULL,
    created_by      TEXT,
    created_at      TEXT NOT NULL,
    deleted_at      TEXT
) STRICT;
CREATE UNIQUE INDEX vendors_org_name ON vendors (org_id, normalized_name) WHERE deleted_at IS NULL;

CREATE TABLE contracts (
    document_id      TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    org_id           TEXT NOT NULL REFERENCES organizations(id),
    type_id          TEXT NOT NULL,
    counterparty     TEXT,
    extractions_json TEXT NOT NULL,
    vendor_id        TEXT REFERENCES vendors(id),
    vendor_link      TEXT CHECK (vendor_link IN ('auto', 'person')),
    vendor_match     TEXT NOT NULL CHECK (vendor_match IN ('linked', 'created', 'needs_review', 'none')),
    updated_at       TEXT NOT NULL,
    finalized_by     TEXT REFERENCES users(id),
    finalized_at     TEXT,
    CHECK ((vendor_id IS NULL) = (vendor_link IS NULL))
) STRICT;
CREATE INDEX contracts_org ON contracts (org_id, type_id);
