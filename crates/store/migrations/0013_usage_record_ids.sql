-- Each priced model request carries its own id, so a usage record written twice (replayed from the desktop's usage
-- journal after a crash that came between a batch's commit and the journal being cleared) is kept once.
ALTER TABLE usage_ledger ADD COLUMN record_id TEXT;
CREATE UNIQUE INDEX usage_ledger_record_id ON usage_ledger (record_id) WHERE record_id IS NOT NULL;
