-- A run keeps the graph definition it started with, but no longer inside its own row: every commit rewrites the run's
-- row, and a ~2 KB snapshot copied into each of them made the row (and each super-step's write) twice as large.
-- Snapshots are kept once per distinct text; runs point at theirs.

CREATE TABLE engine_graph_snapshots (
    id            INTEGER PRIMARY KEY,
    graph_name    TEXT    NOT NULL,
    graph_version INTEGER NOT NULL,
    snapshot      TEXT    NOT NULL UNIQUE,
    created_at    TEXT    NOT NULL
);

INSERT INTO engine_graph_snapshots (graph_name, graph_version, snapshot, created_at)
SELECT graph_name, graph_version, graph_snapshot, min(created_at) FROM engine_runs GROUP BY graph_snapshot
ORDER BY min(created_at);

ALTER TABLE engine_runs ADD COLUMN graph_snapshot_id INTEGER REFERENCES engine_graph_snapshots (id);

UPDATE engine_runs
SET graph_snapshot_id = (SELECT s.id FROM engine_graph_snapshots s WHERE s.snapshot = engine_runs.graph_snapshot);

ALTER TABLE engine_runs DROP COLUMN graph_snapshot;
