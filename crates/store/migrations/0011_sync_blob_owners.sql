-- Which organization holds which file. The blob store on disk (blobs/sha256/..) is shared by every organization of
-- the install and stores a file once, so its presence says nothing about who may read it. A file is reachable for
-- an organization only through a row here, written in the transaction that records the organization's document:
-- a local import, or a document received by sync whose file the organization's own sync service served.
CREATE TABLE blob_owners (
    org_id     TEXT NOT NULL REFERENCES organizations(id),
    hash       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (org_id, hash)
);

-- Every document already here is its organization's file.
INSERT OR IGNORE INTO blob_owners (org_id, hash, created_at) SELECT org_id, content_hash, created_at FROM documents;

-- Local changes the sync service refused to store (the author's role may not make them, say): kept whole with the
-- service's reason, for the sync status; they left the outbox, so they are not pushed again.
CREATE TABLE sync_refused_changes (
    org_id      TEXT NOT NULL REFERENCES organizations(id),
    change_id   TEXT NOT NULL,
    model       TEXT NOT NULL,
    record_id   TEXT NOT NULL,
    change_json TEXT NOT NULL,
    code        TEXT NOT NULL,
    message     TEXT NOT NULL,
    refused_at  TEXT NOT NULL,
    PRIMARY KEY (org_id, change_id)
);
