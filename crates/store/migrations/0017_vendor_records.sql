-- Vendor records (the Vendors area): aliases, identifiers, a status (prospective / onboarding / active / blocked, or
-- merged into another record by a merge a person confirmed; a merged record is kept, never deleted), and the keys
-- duplicates and the finalize match are found by. One row per vendor; each field stands on its own.
--
-- Names are normalised by `rules::vendors::normalized_name` (legal suffixes and punctuation folded), so "Acme, Inc."
-- and "ACME Incorporated" share a key: they are duplicates for a person to merge, not a write to refuse, and the
-- unique index on the old, whitespace-only key goes. `normalized_version` below the store's rule version makes the
-- store derive the keys again at open (rows written before this migration start at 0).

DROP INDEX vendors_org_name;

ALTER TABLE vendors ADD COLUMN status TEXT NOT NULL DEFAULT 'prospective'
    CHECK (status IN ('prospective', 'onboarding', 'active', 'blocked', 'merged'));
ALTER TABLE vendors ADD COLUMN merged_into TEXT REFERENCES vendors (id);
-- People's other names for the vendor, as a JSON array of strings.
ALTER TABLE vendors ADD COLUMN aliases_json TEXT NOT NULL DEFAULT '[]';
-- Identifiers as a JSON array of {kind, value} (kind normalised, e.g. tax_id).
ALTER TABLE vendors ADD COLUMN identifiers_json TEXT NOT NULL DEFAULT '[]';
-- '|'-framed normalised name and aliases ('|acme|acme widgets|'): what the finalize match and duplicate detection read.
ALTER TABLE vendors ADD COLUMN match_keys TEXT NOT NULL DEFAULT '';
ALTER TABLE vendors ADD COLUMN normalized_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vendors ADD COLUMN updated_at TEXT;

CREATE INDEX vendors_org_name ON vendors (org_id, normalized_name) WHERE deleted_at IS NULL;
CREATE INDEX vendors_org_status ON vendors (org_id, status) WHERE deleted_at IS NULL;
CREATE INDEX contracts_vendor ON contracts (org_id, vendor_id) WHERE vendor_id IS NOT NULL;

-- A merged record names the record it was merged into; no other record does.
CREATE TRIGGER vendors_merged_into_check BEFORE UPDATE OF status, merged_into ON vendors
WHEN (NEW.status = 'merged') <> (NEW.merged_into IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'a merged vendor names the vendor it was merged into, and only a merged one does'); END;
-- A merged record stays merged.
CREATE TRIGGER vendors_merged_stays BEFORE UPDATE OF status ON vendors
WHEN OLD.status = 'merged' AND NEW.status <> 'merged'
BEGIN SELECT RAISE(ABORT, 'a merged vendor stays merged'); END;

-- Renewal reminders, one per finalized contract with a notice deadline, written with the contract's derived dates
-- (`store::contracts::derive_in`, `rules::contract_dates::reminder_date`): a correction that moves the deadline
-- moves the reminder (and schedules it again if it had gone out for the old date); reopening the review removes
-- it. The work loop starts a renewal notice run for each reminder that falls due (its approval is the inbox item and
-- the notification) and records the run here.
CREATE TABLE renewal_reminders (
    document_id  TEXT PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    notice_by    TEXT NOT NULL,
    remind_on    TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('scheduled', 'started')),
    run_id       TEXT,
    updated_at   TEXT NOT NULL,
    CHECK ((status = 'started') = (run_id IS NOT NULL))
) STRICT;
CREATE INDEX renewal_reminders_due ON renewal_reminders (remind_on) WHERE status = 'scheduled';
-- Contracts finalized before this migration are scheduled at the next open: the derived version went up, so
-- `store::contracts::refresh_derived` writes each one's reminder by the rule.

-- Invoices matched to a contract and vendor by an invoice processing run (`rules::invoices::match_invoice`, at the
-- run's start; written by the run's match step, once per invoice document and run).
CREATE TABLE invoice_links (
    invoice_id   TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    org_id       TEXT NOT NULL REFERENCES organizations (id),
    contract_id  TEXT REFERENCES documents (id) ON DELETE SET NULL,
    vendor_id    TEXT REFERENCES vendors (id),
    run_id       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (invoice_id, run_id)
) STRICT;
CREATE INDEX invoice_links_vendor ON invoice_links (org_id, vendor_id);
