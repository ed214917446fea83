-- Workflow runs across an organization's desktops. A run executes on the desktop that started it (its home) and
-- is published from there; other desktops keep a read-only copy of it and of its approval steps. When the
-- organization syncs, a decision is a request to the sync service until the service stamps it.

-- Runs of another desktop, as published (`pactwise_sync::SharedRun`, checked when received).
CREATE TABLE shared_runs (
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    run_id       TEXT NOT NULL,
    record_json  TEXT NOT NULL,
    status       TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    PRIMARY KEY (org_id, run_id)
);

-- Approval steps of another desktop's runs, as published (`pactwise_sync::SharedApproval`), and their decision once
-- the sync service stamped one.
CREATE TABLE shared_approvals (
    org_id           TEXT NOT NULL REFERENCES organizations (id),
    step_id          TEXT NOT NULL,
    run_id           TEXT NOT NULL,
    -- Who published the step first (the run's starter), as the sync service stamped the change's author.
    requester        TEXT NOT NULL,
    record_json      TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('open', 'decided', 'closed')),
    decision         TEXT CHECK (decision IN ('approve', 'reject')),
    decided_by       TEXT,
    decided_by_name  TEXT,
    decided_at       TEXT,
    reason           TEXT,
    choice           TEXT,
    updated_at       TEXT NOT NULL,
    PRIMARY KEY (org_id, step_id)
);

-- This desktop's decisions sent to the sync service: waiting until stamped or refused (with the reason).
CREATE TABLE approval_requests (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id),
    step_id     TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users (id),
    decision    TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
    reason      TEXT NOT NULL CHECK (length(reason) > 0),
    choice      TEXT,
    status      TEXT NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'stamped', 'refused')),
    refusal     TEXT,
    created_at  TEXT NOT NULL,
    settled_at  TEXT
);
CREATE INDEX approval_requests_step ON approval_requests (org_id, step_id);

-- What this desktop last published of each of its runs and approval steps (a version per record), so a change is
-- published once.
CREATE TABLE sync_published (
    org_id     TEXT NOT NULL REFERENCES organizations (id),
    model      TEXT NOT NULL,
    record_id  TEXT NOT NULL,
    version    TEXT NOT NULL,
    PRIMARY KEY (org_id, model, record_id)
);
