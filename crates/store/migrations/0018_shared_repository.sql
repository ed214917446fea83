-- The repository across an organization's desktops. Contracts: the merged value of each synced field of a contract (the finalize
-- stamp, the type, the counterparty, each extracted field as reviewed, the checklist outcome), last writer wins per
-- field by HLC (the field's clock is in `sync_field_clocks`). Kept apart from `contracts` because a remote finalize
-- may arrive before its document's file: the row waits here and is laid over the contract when the document is
-- here (`store::contract_sync::project_in`). Derived columns (expiration, notice deadline, governing law) are never
-- synced: each desktop derives them from these fields.

CREATE TABLE sync_contract_fields (
    org_id      TEXT NOT NULL REFERENCES organizations(id),
    document_id TEXT NOT NULL,
    field       TEXT NOT NULL,
    value_json  TEXT NOT NULL,
    PRIMARY KEY (org_id, document_id, field)
) STRICT;

-- Contract review reports another desktop assembled (`pactwise_sync::SyncedModel::ReviewReport`, checked when
-- received): append-only, one per report run, kept once. The run itself and its sign-off step are the shared run and
-- approval of 0015; the sign-off is the sync service's stamp there.
CREATE TABLE shared_reports (
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    run_id       TEXT NOT NULL,
    document_id  TEXT NOT NULL,
    report_json  TEXT NOT NULL,
    -- Who published it (the run's home desktop's user), as the sync service stamped the change's author.
    published_by TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    PRIMARY KEY (org_id, run_id)
) STRICT;
CREATE INDEX shared_reports_document ON shared_reports (org_id, document_id);
CREATE TRIGGER shared_reports_no_update BEFORE UPDATE ON shared_reports
BEGIN SELECT RAISE(ABORT, 'shared reports are append-only'); END;
