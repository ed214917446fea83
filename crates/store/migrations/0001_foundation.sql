-- Foundation: organizations, users, memberships, local sessions, documents, the append-only audit log, settings.
-- Ids are UUID text; times are RFC 3339 UTC text.

CREATE TABLE organizations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL CHECK (length(name) > 0),
    created_at  TEXT NOT NULL,
    deleted_at  TEXT
);

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    display_name  TEXT NOT NULL CHECK (length(display_name) > 0),
    email         TEXT,
    created_at    TEXT NOT NULL,
    deleted_at    TEXT
);

CREATE TABLE memberships (
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    user_id     TEXT NOT NULL REFERENCES users (id),
    role        TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'reviewer', 'buyer', 'approver', 'viewer')),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_at  TEXT,
    FOREIGN KEY (org_id, user_id) REFERENCES memberships (org_id, user_id)
);

-- Which session this installation is signed in with (key 'current_session').
CREATE TABLE local_state (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

CREATE TABLE documents (
    id            TEXT PRIMARY KEY,
    org_id        TEXT NOT NULL REFERENCES organizations (id),
    content_hash  TEXT NOT NULL CHECK (length(content_hash) = 64),
    name          TEXT NOT NULL CHECK (length(name) > 0),
    media_type    TEXT NOT NULL CHECK (media_type IN ('pdf', 'docx', 'txt', 'png', 'jpeg', 'tiff')),
    size          INTEGER NOT NULL CHECK (size > 0),
    created_by    TEXT NOT NULL REFERENCES users (id),
    created_at    TEXT NOT NULL,
    deleted_at    TEXT,
    deleted_by    TEXT REFERENCES users (id),
    UNIQUE (org_id, content_hash)
);
CREATE INDEX documents_by_org ON documents (org_id, deleted_at, created_at);

CREATE TABLE audit_log (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    actor_id     TEXT REFERENCES users (id),
    at           TEXT NOT NULL,
    action       TEXT NOT NULL,
    entity_kind  TEXT NOT NULL,
    entity_id    TEXT,
    details      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_by_org ON audit_log (org_id, seq);
CREATE TRIGGER audit_log_is_append_only_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_is_append_only_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- Per-organization settings (retunable without a rebuild). Values are JSON.
CREATE TABLE settings (
    org_id  TEXT NOT NULL REFERENCES organizations (id),
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (org_id, key)
);
