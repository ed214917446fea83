-- Text extraction becomes a recorded stage of the pipeline ('extract', before 'classify'), with the same fields as
-- the others. SQLite cannot alter a CHECK, so the table is rebuilt with its rows and its index; nothing else refers
-- to it.

CREATE TABLE pipeline_stages_new (
    org_id        TEXT NOT NULL REFERENCES organizations(id),
    document_id   TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    stage         TEXT NOT NULL CHECK (stage IN ('extract', 'classify', 'checklist', 'gate', 'finalize')),
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

INSERT INTO pipeline_stages_new (org_id, document_id, stage, status, attempt, model, input_tokens, output_tokens,
    cache_read_tokens, latency_ms, outcome, reason, output_json, updated_at)
SELECT org_id, document_id, stage, status, attempt, model, input_tokens, output_tokens, cache_read_tokens, latency_ms,
    outcome, reason, output_json, updated_at
FROM pipeline_stages;

DROP TABLE pipeline_stages;
ALTER TABLE pipeline_stages_new RENAME TO pipeline_stages;
CREATE INDEX pipeline_stages_org ON pipeline_stages (org_id, stage, status);
