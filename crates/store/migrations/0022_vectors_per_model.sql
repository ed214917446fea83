-- Vectors of several models side by side (issue 21: the optional Voyage provider beside the local model): a passage
-- keeps one vector per model, so search can fall back to the local model's vectors when Voyage cannot be reached,
-- and switching providers does not throw the other's vectors away. Rows move as they are.
CREATE TABLE passage_vectors_new (
    passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
    org_id     TEXT NOT NULL REFERENCES organizations(id),
    model_id   TEXT NOT NULL,
    vector     BLOB NOT NULL,
    PRIMARY KEY (passage_id, model_id)
) STRICT;
INSERT INTO passage_vectors_new (passage_id, org_id, model_id, vector)
    SELECT passage_id, org_id, model_id, vector FROM passage_vectors;
DROP TABLE passage_vectors;
ALTER TABLE passage_vectors_new RENAME TO passage_vectors;
CREATE INDEX passage_vectors_by_org ON passage_vectors (org_id, model_id);

CREATE TABLE precedent_passage_vectors_new (
    passage_id INTEGER NOT NULL REFERENCES precedent_passages(id) ON DELETE CASCADE,
    model_id   TEXT NOT NULL,
    vector     BLOB NOT NULL,
    PRIMARY KEY (passage_id, model_id)
) STRICT;
INSERT INTO precedent_passage_vectors_new (passage_id, model_id, vector)
    SELECT passage_id, model_id, vector FROM precedent_passage_vectors;
DROP TABLE precedent_passage_vectors;
ALTER TABLE precedent_passage_vectors_new RENAME TO precedent_passage_vectors;
