-- A counter per organization that moves with every passage written or removed. Retrieval holds an in-memory word
-- index of an organization's passages and reads it again when the counter moved. Passage ids alone cannot tell: a
-- document's passages replaced by as many new ones may get the same ids (the next id is the largest plus one).
-- Passages already stored start the counter at 1. (Since this version no search reads the full-text index's
-- `org_token` and `doc_token` columns: the word index is read per organization and filters by document itself.)
CREATE TABLE passage_versions (
    org_id  TEXT PRIMARY KEY,
    version INTEGER NOT NULL
) STRICT;

INSERT INTO passage_versions (org_id, version) SELECT DISTINCT org_id, 1 FROM passages;

CREATE TRIGGER passage_versions_insert AFTER INSERT ON passages BEGIN
    INSERT INTO passage_versions (org_id, version) VALUES (new.org_id, 1)
        ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;

CREATE TRIGGER passage_versions_delete AFTER DELETE ON passages BEGIN
    INSERT INTO passage_versions (org_id, version) VALUES (old.org_id, 1)
        ON CONFLICT (org_id) DO UPDATE SET version = version + 1;
END;
