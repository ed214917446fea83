-- Contracts across an organization's desktops: the merged value of each synced field of a contract (the finalize
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
