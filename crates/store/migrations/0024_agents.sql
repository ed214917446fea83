-- The agent platform at work: a task's outcome in words, the notices agents leave for the organization, and the
-- agents' memory per user.

-- What a finished task did, in words (shown beside the run's steps); NULL while not done.
ALTER TABLE engine_tasks ADD COLUMN result TEXT;

-- Notices the notifications agent leaves (the inbox's "From the agents" list and a native notification). Written
-- by the platform worker in the transaction that finishes the task; the key makes a notice appear once.
CREATE TABLE agent_notices (
    id              TEXT    PRIMARY KEY,
    org_id          TEXT    NOT NULL REFERENCES organizations (id),
    run_id          TEXT    REFERENCES engine_runs (id),
    idempotency_key TEXT    NOT NULL,
    title           TEXT    NOT NULL,
    message         TEXT    NOT NULL,
    urgent          INTEGER NOT NULL CHECK (urgent IN (0, 1)),
    created_at      TEXT    NOT NULL,
    seen_at         TEXT,
    UNIQUE (org_id, idempotency_key)
);
CREATE INDEX agent_notices_by_org ON agent_notices (org_id, created_at);

-- What the agents remember for one person of one organization. Short-term memories expire (expires_at); long-term
-- ones stay until the person deletes them. `why` says where the memory came from.
CREATE TABLE agent_memories (
    id          TEXT    PRIMARY KEY,
    org_id      TEXT    NOT NULL REFERENCES organizations (id),
    user_id     TEXT    NOT NULL REFERENCES users (id),
    tier        TEXT    NOT NULL CHECK (tier IN ('short', 'long')),
    text        TEXT    NOT NULL,
    why         TEXT    NOT NULL,
    importance  REAL    NOT NULL CHECK (importance >= 0 AND importance <= 1),
    run_id      TEXT,
    created_at  TEXT    NOT NULL,
    expires_at  TEXT,
    UNIQUE (org_id, user_id, tier, text)
);
CREATE INDEX agent_memories_by_user ON agent_memories (org_id, user_id, created_at);
