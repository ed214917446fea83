-- Prep Studio: RFP packages (six artifacts kept as one JSON document owned by `pactwise-prep`), the one-editor
-- lease lock, the drafting traces (every model call with the prompt module's hash), and published snapshots.
-- Precedents gain a provenance so that competitors' released bid text can be kept out of drafting retrieval.

CREATE TABLE prep_packages (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL REFERENCES organizations (id),
    title         TEXT NOT NULL CHECK (length(title) > 0),
    package_json  TEXT NOT NULL,
    version       INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
    status        TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published')),
    created_by    TEXT NOT NULL REFERENCES users (id),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    published_by  TEXT REFERENCES users (id),
    published_at  TEXT,
    published_json TEXT,
    deleted_at    TEXT,
    CHECK ((status = 'published') = (published_at IS NOT NULL))
) STRICT;
CREATE INDEX prep_packages_by_org ON prep_packages (org_id, deleted_at, updated_at);

-- One editor at a time: the holder's lease, taken over only after it expires.
CREATE TABLE prep_locks (
    package_id  TEXT PRIMARY KEY REFERENCES prep_packages (id) ON DELETE CASCADE,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    holder      TEXT NOT NULL REFERENCES users (id),
    acquired_at TEXT NOT NULL,
    expires_at  TEXT NOT NULL
) STRICT;

CREATE TABLE prep_traces (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL REFERENCES organizations (id),
    package_id    TEXT NOT NULL REFERENCES prep_packages (id) ON DELETE CASCADE,
    at            TEXT NOT NULL,
    artifact      TEXT NOT NULL,
    prompt_module TEXT NOT NULL,
    prompt_version INTEGER NOT NULL,
    prompt_hash   TEXT NOT NULL CHECK (length(prompt_hash) = 64),
    outcome       TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_micros   INTEGER NOT NULL DEFAULT 0,
    re_asks       INTEGER NOT NULL DEFAULT 0,
    detail        TEXT
) STRICT;
CREATE INDEX prep_traces_by_package ON prep_traces (org_id, package_id, at);

ALTER TABLE precedents ADD COLUMN provenance TEXT NOT NULL DEFAULT 'public'
    CHECK (provenance IN ('public', 'competitor_bid'));
