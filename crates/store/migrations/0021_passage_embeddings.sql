-- Semantic retrieval (issue 21 part R): one sentence-embedding vector per passage, in its int8 storage form
-- (`pactwise_embed::Quantized::to_bytes`), with the model that computed it. A row of another model is treated as
-- missing and recomputed. The organization's vectors and the precedent corpus's vectors are kept in separate tables,
-- as their passages are. A vector goes with its passage (ON DELETE CASCADE).
CREATE TABLE passage_vectors (
    passage_id INTEGER PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
    org_id     TEXT NOT NULL REFERENCES organizations(id),
    model_id   TEXT NOT NULL,
    vector     BLOB NOT NULL
) STRICT;
CREATE INDEX passage_vectors_by_org ON passage_vectors (org_id, model_id);

CREATE TABLE precedent_passage_vectors (
    passage_id INTEGER PRIMARY KEY REFERENCES precedent_passages(id) ON DELETE CASCADE,
    model_id   TEXT NOT NULL,
    vector     BLOB NOT NULL
) STRICT;
