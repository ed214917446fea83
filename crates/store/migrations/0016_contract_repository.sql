-- The contract repository: what the Contracts area filters on, as columns written with the contract's fields
-- (`store::contracts`, from `rules::contract_dates`), so a filter is SQL over an index and never a scan of JSON; the
-- checklist outcome stamped at finalize; full-text search over the contract's name, counterparty and extracted
-- values, kept by triggers whatever writes the row.

ALTER TABLE contracts ADD COLUMN expires_on TEXT;
ALTER TABLE contracts ADD COLUMN notice_by TEXT;
ALTER TABLE contracts ADD COLUMN governing_law TEXT;
-- 'high' (red flags remain), 'medium' (a critical item is absent or partial), 'low'; NULL until assessed (contracts
-- finalized before this migration are assessed the next time the area lists them).
ALTER TABLE contracts ADD COLUMN risk TEXT CHECK (risk IN ('high', 'medium', 'low'));
ALTER TABLE contracts ADD COLUMN red_flags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE contracts ADD COLUMN critical_gaps INTEGER NOT NULL DEFAULT 0;
-- The version of the rule that wrote the date columns; rows below the current one are derived again at open.
ALTER TABLE contracts ADD COLUMN derived_version INTEGER NOT NULL DEFAULT 0;

-- A contract row carries its fields as JSON (kilobytes each): a list that read the rows would read all of that. This
-- index holds every column the list shows and filters on (type, counterparty, law, risk, dates), so the list, its
-- count and the facets are answered from the index alone; the two date ranges have their own indexes.
CREATE INDEX contracts_final_list ON contracts (org_id, document_id, type_id, counterparty, governing_law, expires_on,
    notice_by, risk, red_flags, critical_gaps, vendor_id, finalized_at) WHERE finalized_at IS NOT NULL;
CREATE INDEX contracts_final_expires ON contracts (org_id, expires_on) WHERE finalized_at IS NOT NULL;
CREATE INDEX contracts_final_notice ON contracts (org_id, notice_by) WHERE finalized_at IS NOT NULL;

CREATE VIRTUAL TABLE contracts_fts USING fts5(
    document_id UNINDEXED,
    name,
    counterparty,
    terms,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- The words a contract is found by: every extracted value in people's words, and the type's id in words.
CREATE TRIGGER contracts_fts_insert AFTER INSERT ON contracts
BEGIN
    INSERT INTO contracts_fts (document_id, name, counterparty, terms)
    SELECT NEW.document_id, d.name, NEW.counterparty,
           replace(NEW.type_id, '_', ' ') || ' ' || coalesce((SELECT group_concat(j.value, ' ')
               FROM json_tree(NEW.extractions_json) j WHERE j.key = 'value' AND j.type = 'text'), '')
    FROM documents d WHERE d.id = NEW.document_id;
END;

CREATE TRIGGER contracts_fts_update AFTER UPDATE OF type_id, counterparty, extractions_json ON contracts
WHEN OLD.type_id IS NOT NEW.type_id OR OLD.counterparty IS NOT NEW.counterparty
  OR OLD.extractions_json IS NOT NEW.extractions_json
BEGIN
    DELETE FROM contracts_fts WHERE document_id = OLD.document_id;
    INSERT INTO contracts_fts (document_id, name, counterparty, terms)
    SELECT NEW.document_id, d.name, NEW.counterparty,
           replace(NEW.type_id, '_', ' ') || ' ' || coalesce((SELECT group_concat(j.value, ' ')
               FROM json_tree(NEW.extractions_json) j WHERE j.key = 'value' AND j.type = 'text'), '')
    FROM documents d WHERE d.id = NEW.document_id;
END;

CREATE TRIGGER contracts_fts_delete AFTER DELETE ON contracts
BEGIN
    DELETE FROM contracts_fts WHERE document_id = OLD.document_id;
END;

CREATE TRIGGER contracts_fts_rename AFTER UPDATE OF name ON documents WHEN OLD.name IS NOT NEW.name
BEGIN
    UPDATE contracts_fts SET name = NEW.name WHERE document_id = NEW.id;
END;

INSERT INTO contracts_fts (document_id, name, counterparty, terms)
SELECT c.document_id, d.name, c.counterparty,
       replace(c.type_id, '_', ' ') || ' ' || coalesce((SELECT group_concat(j.value, ' ')
           FROM json_tree(c.extractions_json) j WHERE j.key = 'value' AND j.type = 'text'), '')
FROM contracts c JOIN documents d ON d.id = c.document_id;
