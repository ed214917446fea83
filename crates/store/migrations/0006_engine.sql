-- The durable workflow engine: runs (with a snapshot of their graph), checkpoints after every super-step, an
-- idempotent event log, approvals with their notifications, and the per-organization task queue.
-- Nothing depends on this file's number. Times are RFC 3339 UTC text.

CREATE TABLE engine_runs (
    id               TEXT PRIMARY KEY,
    org_id           TEXT    NOT NULL REFERENCES organizations (id),
    graph_name       TEXT    NOT NULL,
    graph_version    INTEGER NOT NULL,
    -- The graph definition as it was when the run started: changing a graph never changes a run in flight.
    graph_snapshot   TEXT    NOT NULL,
    input            TEXT    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('running', 'waiting', 'compensating', 'succeeded',
                                                       'failed', 'cancelled')),
    superstep        INTEGER NOT NULL CHECK (superstep >= 0),
    -- Bumped by every commit; a commit names the revision it read, so a stale or repeated commit changes nothing.
    revision         INTEGER NOT NULL CHECK (revision >= 0),
    -- The engine's run state (channels, active nodes, staged writes, waits) as of the last checkpoint.
    state            TEXT    NOT NULL,
    reason           TEXT,
    parent_run_id    TEXT    REFERENCES engine_runs (id),
    parent_node      TEXT,
    started_by       TEXT    REFERENCES users (id),
    lease_owner      TEXT,
    lease_expires_at TEXT,
    -- When a waiting or retrying run should next be looked at (timers, retry backoff).
    wake_at          TEXT,
    deadline_at      TEXT,
    failures         INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    finished_at      TEXT,
    deleted_at       TEXT
);
CREATE INDEX engine_runs_by_org ON engine_runs (org_id, deleted_at, created_at);
CREATE INDEX engine_runs_by_status ON engine_runs (status, lease_expires_at);
CREATE INDEX engine_runs_by_parent ON engine_runs (parent_run_id);

-- One row per commit of a run (every super-step, every recorded failure or decision). (run_id, revision) is the key,
-- so writing the same checkpoint twice is a no-op.
CREATE TABLE engine_checkpoints (
    run_id     TEXT    NOT NULL REFERENCES engine_runs (id),
    revision   INTEGER NOT NULL,
    superstep  INTEGER NOT NULL,
    status     TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    at         TEXT    NOT NULL,
    PRIMARY KEY (run_id, revision)
) WITHOUT ROWID;

-- The run's event log. `key` is deterministic (super-step, node, kind), so an event is recorded at most once.
CREATE TABLE engine_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     TEXT    NOT NULL REFERENCES engine_runs (id),
    key        TEXT    NOT NULL,
    superstep  INTEGER NOT NULL,
    node       TEXT,
    kind       TEXT    NOT NULL,
    details    TEXT    NOT NULL DEFAULT '{}',
    at         TEXT    NOT NULL,
    UNIQUE (run_id, key)
);

CREATE TABLE engine_approvals (
    id              TEXT PRIMARY KEY,
    org_id          TEXT    NOT NULL REFERENCES organizations (id),
    run_id          TEXT    NOT NULL REFERENCES engine_runs (id),
    node            TEXT    NOT NULL,
    superstep       INTEGER NOT NULL,
    title           TEXT    NOT NULL,
    -- Comma-separated roles that may decide, e.g. 'owner,admin,approver'.
    eligible_roles  TEXT    NOT NULL CHECK (length(eligible_roles) > 0),
    four_eyes       INTEGER NOT NULL DEFAULT 0 CHECK (four_eyes IN (0, 1)),
    -- The evidence as it was when the step paused: what the approver sees and what the decision is bound to.
    state_seen      TEXT    NOT NULL,
    choices         TEXT    NOT NULL DEFAULT '[]',
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
    due_at          TEXT,
    escalate_at     TEXT,
    escalated_at    TEXT,
    decided_by      TEXT    REFERENCES users (id),
    decided_at      TEXT,
    reason          TEXT,
    choice          TEXT,
    created_at      TEXT    NOT NULL,
    UNIQUE (run_id, node, superstep),
    CHECK (status NOT IN ('approved', 'rejected') OR (decided_by IS NOT NULL AND decided_at IS NOT NULL
                                                       AND reason IS NOT NULL AND length(trim(reason)) > 0))
);
CREATE INDEX engine_approvals_by_org ON engine_approvals (org_id, status, created_at);

-- The database itself refuses a decision stamped with anyone but an eligible member of the approval's organization,
-- whatever code path writes it, and a decision is never changed once made.
CREATE TRIGGER engine_approvals_decider_is_eligible BEFORE UPDATE OF status ON engine_approvals
WHEN NEW.status IN ('approved', 'rejected')
BEGIN
    SELECT RAISE(ABORT, 'approval decided by someone who is not an eligible approver of its organization')
    WHERE NOT EXISTS (
        SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL
        WHERE m.org_id = NEW.org_id AND m.user_id = NEW.decided_by
          AND instr(',' || NEW.eligible_roles || ',', ',' || m.role || ',') > 0
    );
    SELECT RAISE(ABORT, 'approval was already resolved') WHERE OLD.status <> 'pending';
END;

CREATE TABLE engine_notifications (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    approval_id  TEXT NOT NULL REFERENCES engine_approvals (id),
    kind         TEXT NOT NULL CHECK (kind IN ('new_approval', 'urgent_escalation')),
    urgent       INTEGER NOT NULL CHECK (urgent IN (0, 1)),
    message      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    UNIQUE (approval_id, kind)
);

CREATE TABLE engine_tasks (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT    NOT NULL UNIQUE,
    org_id           TEXT    NOT NULL REFERENCES organizations (id),
    -- Deterministic for handoffs from a run (run, super-step, node, index), so a handoff is dispatched once.
    idempotency_key  TEXT    NOT NULL,
    agent_type       TEXT    NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 0,
    payload          TEXT    NOT NULL DEFAULT '{}',
    status           TEXT    NOT NULL CHECK (status IN ('pending', 'processing', 'done', 'failed', 'cancelled')),
    run_id           TEXT    REFERENCES engine_runs (id),
    node             TEXT,
    scheduled_at     TEXT,
    claimed_by       TEXT,
    claimed_at       TEXT,
    lease_expires_at TEXT,
    finished_at      TEXT,
    error            TEXT,
    created_at       TEXT    NOT NULL,
    deleted_at       TEXT,
    UNIQUE (org_id, idempotency_key)
);
CREATE INDEX engine_tasks_claimable ON engine_tasks (status, priority DESC, created_at, seq);
CREATE INDEX engine_tasks_by_run ON engine_tasks (run_id);
CREATE INDEX engine_tasks_failures ON engine_tasks (agent_type, status, finished_at);
