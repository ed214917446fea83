-- What the desktop keeps for sync (crate pactwise-sync): the outbox of local changes not yet acknowledged by the
-- sync service, each organization's sync state (this install's HLC node id and clock, the pull cursor), the HLC
-- that last set each synced field (for last-writer-wins merges), and the remote changes already applied.

CREATE TABLE sync_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    change_id TEXT NOT NULL UNIQUE,
    model TEXT NOT NULL,
    record_id TEXT NOT NULL,
    change_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX sync_outbox_by_org ON sync_outbox (org_id, id);

CREATE TABLE sync_state (
    org_id TEXT PRIMARY KEY REFERENCES organizations(id),
    node_id TEXT NOT NULL,
    hlc_wall_ms INTEGER NOT NULL DEFAULT 0,
    hlc_counter INTEGER NOT NULL DEFAULT 0,
    cursor INTEGER NOT NULL DEFAULT 0 CHECK (cursor >= 0),
    updated_at TEXT NOT NULL
);

CREATE TABLE sync_field_clocks (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    model TEXT NOT NULL,
    record_id TEXT NOT NULL,
    field TEXT NOT NULL,
    -- pactwise_sync::Hlc::to_sortable: compares as text in timestamp order
    hlc TEXT NOT NULL,
    PRIMARY KEY (org_id, model, record_id, field)
);

CREATE TABLE sync_applied (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    change_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (org_id, change_id)
);
