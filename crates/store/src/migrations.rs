//! Embedded migrations, tracked in `PRAGMA user_version`. Each runs in one transaction with the version bump.

use crate::StoreError;
use rusqlite::Connection;

/// The migrations in order; the schema version is the number applied.
const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_foundation", include_str!("../migrations/0001_foundation.sql")),
    ("0002_model_usage", include_str!("../migrations/0002_model_usage.sql")),
    ("0003_document_pages", include_str!("../migrations/0003_document_pages.sql")),
    ("0004_pipeline", include_str!("../migrations/0004_pipeline.sql")),
    ("0005_retrieval", include_str!("../migrations/0005_retrieval.sql")),
    ("0006_engine", include_str!("../migrations/0006_engine.sql")),
    ("0007_sync", include_str!("../migrations/0007_sync.sql")),
    ("0008_prep", include_str!("../migrations/0008_prep.sql")),
    ("0009_sync_files", include_str!("../migrations/0009_sync_files.sql")),
    ("0010_engine_graph_snapshots", include_str!("../migrations/0010_engine_graph_snapshots.sql")),
    ("0011_sync_blob_owners", include_str!("../migrations/0011_sync_blob_owners.sql")),
    ("0012_document_structure", include_str!("../migrations/0012_document_structure.sql")),
    ("0013_usage_record_ids", include_str!("../migrations/0013_usage_record_ids.sql")),
    ("0014_extract_stage", include_str!("../migrations/0014_extract_stage.sql")),
    ("0015_shared_runs", include_str!("../migrations/0015_shared_runs.sql")),
    ("0016_contract_repository", include_str!("../migrations/0016_contract_repository.sql")),
    ("0017_vendor_records", include_str!("../migrations/0017_vendor_records.sql")),
    ("0018_shared_repository", include_str!("../migrations/0018_shared_repository.sql")),
    ("0019_records_indexes", include_str!("../migrations/0019_records_indexes.sql")),
    ("0020_citation_support", include_str!("../migrations/0020_citation_support.sql")),
    ("0021_passage_embeddings", include_str!("../migrations/0021_passage_embeddings.sql")),
    ("0022_vectors_per_model", include_str!("../migrations/0022_vectors_per_model.sql")),
    ("0023_first_run", include_str!("../migrations/0023_first_run.sql")),
    ("0024_agents", include_str!("../migrations/0024_agents.sql")),
    ("0025_vector_stamp_index", include_str!("../migrations/0025_vector_stamp_index.sql")),
    ("0026_passage_versions", include_str!("../migrations/0026_passage_versions.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

pub(crate) fn current_version(conn: &Connection) -> Result<u32, StoreError> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))?)
}

pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_to(conn, SCHEMA_VERSION)
}

fn migrate_to(conn: &mut Connection, target: u32) -> Result<(), StoreError> {
    let found = current_version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew { found, supported: SCHEMA_VERSION });
    }
    for (index, (name, sql)) in MIGRATIONS.iter().enumerate().take(target as usize).skip(found as usize) {
        let version = index as u32 + 1;
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version)?;
        tx.commit()?;
        tracing::info!(migration = name, version, "applied migration");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::OptionalExtension;

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn an_empty_database_migrates_to_the_current_schema() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(current_version(&conn).unwrap(), SCHEMA_VERSION);
        let tables = tables(&conn);
        for t in [
            "organizations",
            "users",
            "memberships",
            "sessions",
            "documents",
            "audit_log",
            "settings",
            "usage_ledger",
            "model_budgets",
            "document_extractions",
            "document_pages",
            "pipeline_stages",
            "review_corrections",
            "vendors",
            "contracts",
            "passages",
            "passages_fts",
            "precedents",
            "precedent_passages",
            "assistant_messages",
            "assistant_citations",
            "engine_runs",
            "engine_checkpoints",
            "engine_events",
            "engine_approvals",
            "engine_notifications",
            "engine_tasks",
            "sync_outbox",
            "sync_state",
            "sync_field_clocks",
            "sync_applied",
            "blob_owners",
            "sync_refused_changes",
            "prep_packages",
            "prep_locks",
            "prep_traces",
            "document_structures",
            "contracts_fts",
        ] {
            assert!(tables.iter().any(|x| x == t), "missing table {t}: {tables:?}");
        }
    }

    #[test]
    fn migrating_twice_is_a_no_op() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(current_version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn each_schema_version_migrates_forward_to_the_current_one() {
        for start in 0..SCHEMA_VERSION {
            let mut conn = Connection::open_in_memory().unwrap();
            migrate_to(&mut conn, start).unwrap();
            assert_eq!(current_version(&conn).unwrap(), start);
            migrate(&mut conn).unwrap();
            assert_eq!(current_version(&conn).unwrap(), SCHEMA_VERSION);
        }
    }

    #[test]
    fn a_database_from_before_the_engine_keeps_its_rows_and_gains_the_engine_tables() {
        let before_engine = MIGRATIONS.iter().position(|(name, _)| *name == "0006_engine").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before_engine).unwrap();
        conn.execute("INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't')", []).unwrap();
        assert!(!tables(&conn).iter().any(|t| t == "engine_runs"));
        migrate(&mut conn).unwrap();
        let name: String = conn.query_row("SELECT name FROM organizations WHERE id = 'o1'", [], |r| r.get(0)).unwrap();
        assert_eq!(name, "Acme");
        for t in ["engine_runs", "engine_checkpoints", "engine_events", "engine_approvals", "engine_tasks"] {
            assert!(tables(&conn).iter().any(|x| x == t), "missing {t}");
        }
    }

    #[test]
    fn an_installation_in_use_before_the_first_run_screen_counts_as_set_up_and_a_new_one_does_not() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0023_first_run").unwrap() as u32;
        let first_run = |conn: &Connection| -> Option<String> {
            conn.query_row("SELECT value FROM local_state WHERE key = 'first_run'", [], |r| r.get(0)).ok()
        };
        let mut used = Connection::open_in_memory().unwrap();
        migrate_to(&mut used, before).unwrap();
        used.execute("INSERT INTO local_state (key, value) VALUES ('local_user', 'u1')", []).unwrap();
        migrate(&mut used).unwrap();
        assert_eq!(first_run(&used).as_deref(), Some("done"));

        let mut fresh = Connection::open_in_memory().unwrap();
        migrate_to(&mut fresh, before).unwrap();
        migrate(&mut fresh).unwrap();
        assert_eq!(first_run(&fresh), None);
    }

    #[test]
    fn runs_of_the_previous_schema_keep_their_graph_snapshots_once_each() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0010_engine_graph_snapshots").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO engine_runs (id, org_id, graph_name, graph_version, graph_snapshot, input, status, superstep,
                 revision, state, created_at, updated_at)
             VALUES ('r1', 'o1', 'g', 1, '{\"v\":1}', '{}', 'running', 0, 0, '{}', 't1', 't1'),
                    ('r2', 'o1', 'g', 1, '{\"v\":1}', '{}', 'succeeded', 3, 3, '{}', 't2', 't2'),
                    ('r3', 'o1', 'g', 2, '{\"v\":2}', '{}', 'waiting', 1, 1, '{}', 't3', 't3');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let snapshots: Vec<(String, u32, String)> = conn
            .prepare(
                "SELECT r.id, s.graph_version, s.snapshot FROM engine_runs r
                 JOIN engine_graph_snapshots s ON s.id = r.graph_snapshot_id ORDER BY r.id",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            snapshots,
            [
                ("r1".to_string(), 1, r#"{"v":1}"#.to_string()),
                ("r2".to_string(), 1, r#"{"v":1}"#.to_string()),
                ("r3".to_string(), 2, r#"{"v":2}"#.to_string())
            ]
        );
        let kept: u32 = conn.query_row("SELECT count(*) FROM engine_graph_snapshots", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 2, "one row per distinct snapshot");
        let columns: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info('engine_runs')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!columns.iter().any(|c| c == "graph_snapshot"), "{columns:?}");
        let (status, revision): (String, u32) = conn
            .query_row("SELECT status, revision FROM engine_runs WHERE id = 'r2'", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((status.as_str(), revision), ("succeeded", 3));
    }

    #[test]
    fn extracted_documents_of_the_previous_schema_keep_their_pages_and_have_no_structure_until_one_is_read() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0012_document_structure").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        let hash = "c".repeat(64);
        conn.execute_batch(&format!(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
             VALUES ('d1', 'o1', '{hash}', 'a.txt', 'txt', 1, 'u1', 't1');
             INSERT INTO document_extractions (document_id, media_type, page_count, synthetic, extracted_at)
             VALUES ('d1', 'text/plain', 1, 1, 't1');
             INSERT INTO document_pages (document_id, number, text, source, confidence, confidence_kind, synthetic,
                 width, height, rotation, char_boxes)
             VALUES ('d1', 1, 'Terms.', 'text', NULL, 'none', 1, 612, 792, 0, x'');"
        ))
        .unwrap();
        migrate(&mut conn).unwrap();
        let pages: u32 = conn.query_row("SELECT count(*) FROM document_pages", [], |r| r.get(0)).unwrap();
        let structures: u32 = conn.query_row("SELECT count(*) FROM document_structures", [], |r| r.get(0)).unwrap();
        assert_eq!((pages, structures), (1, 0));
        conn.execute(
            "INSERT INTO document_structures (document_id, version, structure_json, built_at) VALUES ('d1', 1, '{}', 't2')",
            [],
        )
        .unwrap();
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        conn.execute("DELETE FROM document_extractions WHERE document_id = 'd1'", []).unwrap();
        let structures: u32 = conn.query_row("SELECT count(*) FROM document_structures", [], |r| r.get(0)).unwrap();
        assert_eq!(structures, 0, "the structure goes with the extraction it was read from");
    }

    #[test]
    fn documents_of_the_previous_schema_give_their_organization_its_files_and_nobody_else() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0011_sync_blob_owners").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        conn.execute_batch(&format!(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0'), ('o2', 'Beta', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
             VALUES ('d1', 'o1', '{a}', 'a.txt', 'txt', 1, 'u1', 't1'),
                    ('d2', 'o1', '{b}', 'b.txt', 'txt', 1, 'u1', 't2'),
                    ('d3', 'o2', '{b}', 'b.txt', 'txt', 1, 'u1', 't3');"
        ))
        .unwrap();
        migrate(&mut conn).unwrap();
        let owners: Vec<(String, String)> = conn
            .prepare("SELECT org_id, hash FROM blob_owners ORDER BY org_id, hash")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let pairs: Vec<(&str, &str)> = owners.iter().map(|(o, h)| (o.as_str(), h.as_str())).collect();
        assert_eq!(pairs, [("o1", a.as_str()), ("o1", b.as_str()), ("o2", b.as_str())]);
    }

    #[test]
    fn stage_records_of_the_previous_schema_are_kept_and_extract_becomes_a_stage() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0014_extract_stage").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        let hash = "d".repeat(64);
        conn.execute_batch(&format!(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
             VALUES ('d1', 'o1', '{hash}', 'a.txt', 'txt', 1, 'u1', 't1');
             INSERT INTO pipeline_stages (org_id, document_id, stage, status, attempt, model, input_tokens,
                 output_tokens, cache_read_tokens, latency_ms, outcome, reason, output_json, updated_at)
             VALUES ('o1', 'd1', 'classify', 'done', 2, 'claude-haiku-5-5', 900, 40, 12, 830, 'model', NULL,
                     '{{\"type_id\":\"msa\"}}', 't2'),
                    ('o1', 'd1', 'gate', 'done', 1, NULL, 0, 0, 0, 1, 'red_flag', 'why', '{{}}', 't3');"
        ))
        .unwrap();
        let refused = conn.execute(
            "INSERT INTO pipeline_stages (org_id, document_id, stage, status, updated_at)
             VALUES ('o1', 'd1', 'extract', 'done', 't4')",
            [],
        );
        assert!(refused.is_err(), "the previous schema has no extract stage");
        migrate(&mut conn).unwrap();
        type Row = (String, String, u32, Option<String>, u32, u32, String);
        let rows: Vec<Row> = conn
            .prepare(
                "SELECT stage, status, attempt, model, input_tokens, latency_ms, output_json FROM pipeline_stages
                 ORDER BY stage",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            (
                "classify".into(),
                "done".into(),
                2,
                Some("claude-haiku-5-5".into()),
                900,
                830,
                r#"{"type_id":"msa"}"#.into()
            )
        );
        assert_eq!((rows[1].0.as_str(), rows[1].1.as_str()), ("gate", "done"));
        conn.execute(
            "INSERT INTO pipeline_stages (org_id, document_id, stage, status, outcome, reason, updated_at)
             VALUES ('o1', 'd1', 'extract', 'degraded', 'unreadable', 'the pages could not be read', 't4')",
            [],
        )
        .unwrap();
        assert!(
            conn.execute(
                "INSERT INTO pipeline_stages (org_id, document_id, stage, status, updated_at)
                 VALUES ('o1', 'd1', 'ocr', 'done', 't4')",
                [],
            )
            .is_err(),
            "the stage CHECK still holds"
        );
        let index: u32 = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'pipeline_stages_org'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(index, 1, "the index is rebuilt with the table");
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        conn.execute("DELETE FROM documents WHERE id = 'd1'", []).unwrap();
        let left: u32 = conn.query_row("SELECT count(*) FROM pipeline_stages", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0, "a document's stage records still go with it");
    }

    #[test]
    fn contracts_of_the_previous_schema_gain_their_dates_and_are_found_by_search() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0016_contract_repository").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        let hash = "e".repeat(64);
        let fields = serde_json::json!({
            "parties": [], "agreement_date": null, "effective_date": null,
            "expiration_date": {"value": "31 March 2027", "normalized": {"kind": "date", "iso": "2027-03-31"},
                                "quote": null, "confidence": 0.9},
            "renewal": null,
            "renewal_notice": {"value": "60 days", "normalized": {"kind": "duration", "number": 60, "unit": "day"},
                               "quote": null, "confidence": 0.9},
            "governing_law": {"value": "Delaware", "normalized": {"kind": "jurisdiction", "name": "Delaware"},
                              "quote": null, "confidence": 0.9},
            "value": null, "pricing": null, "scope": null, "key_terms": []
        });
        conn.execute_batch(&format!(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
             VALUES ('d1', 'o1', '{hash}', 'Supply agreement.pdf', 'pdf', 1, 'u1', 't1');
             INSERT INTO contracts (document_id, org_id, type_id, counterparty, extractions_json, vendor_match,
                 updated_at, finalized_by, finalized_at)
             VALUES ('d1', 'o1', 'supply', 'Globex Ltd', '{fields}', 'none', 't2', 'u1', '2026-01-02T00:00:00Z');"
        ))
        .unwrap();
        migrate(&mut conn).unwrap();
        crate::contracts::refresh_derived(&mut conn).unwrap();
        let row: (Option<String>, Option<String>, Option<String>, Option<String>) = conn
            .query_row(
                "SELECT expires_on, notice_by, governing_law, risk FROM contracts WHERE document_id = 'd1'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            row,
            (Some("2027-03-31".into()), Some("2027-01-30".into()), Some("Delaware".into()), None),
            "dates derived from the kept fields; the outcome waits to be assessed"
        );
        let found = |q: &str| -> Vec<String> {
            conn.prepare("SELECT document_id FROM contracts_fts WHERE contracts_fts MATCH ?1")
                .unwrap()
                .query_map([q], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(found("globex"), ["d1"]);
        assert_eq!(found("delaware"), ["d1"]);
        assert_eq!(found("supply"), ["d1"]);
        conn.execute("UPDATE contracts SET counterparty = 'Initech' WHERE document_id = 'd1'", []).unwrap();
        assert!(found("globex").is_empty(), "the index follows the row");
        assert_eq!(found("initech"), ["d1"]);
    }

    #[test]
    fn contracts_of_the_previous_schema_stay_and_their_synced_fields_are_kept_per_organization() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0018_shared_repository").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0'), ('o2', 'Other', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
             VALUES ('d1', 'o1', '{}', 'Supply agreement.pdf', 'pdf', 1, 'u1', 't1');
             INSERT INTO contracts (document_id, org_id, type_id, extractions_json, vendor_match, updated_at,
                 finalized_by, finalized_at)
             VALUES ('d1', 'o1', 'supply', '{{}}', 'none', 't2', 'u1', '2026-01-02T00:00:00Z');",
            "e".repeat(64)
        ))
        .unwrap();
        migrate(&mut conn).unwrap();
        let kept: (String, Option<String>) = conn
            .query_row("SELECT type_id, finalized_at FROM contracts WHERE document_id = 'd1'", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(kept, ("supply".into(), Some("2026-01-02T00:00:00Z".into())));
        // A field waits for a document that is not here yet; the same record id in two organizations is two rows.
        for org in ["o1", "o2"] {
            conn.execute(
                "INSERT INTO sync_contract_fields (org_id, document_id, field, value_json) VALUES (?1, 'd9', 'type_id', '\"nda\"')",
                [org],
            )
            .unwrap();
        }
        let dup = conn.execute(
            "INSERT INTO sync_contract_fields (org_id, document_id, field, value_json) VALUES ('o1', 'd9', 'type_id', '1')",
            [],
        );
        assert!(dup.is_err(), "one merged value per field");
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        let refused = conn.execute(
            "INSERT INTO sync_contract_fields (org_id, document_id, field, value_json) VALUES ('o8', 'd9', 'x', '1')",
            [],
        );
        assert!(refused.is_err(), "only an organization of this install");
    }

    #[test]
    fn vendors_of_the_previous_schema_become_prospective_records_with_their_links_and_their_duplicates_show() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0017_vendor_records").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO vendors (id, org_id, name, normalized_name, created_by, created_at)
             VALUES ('v1', 'o1', 'Globex Ltd', 'globex ltd', 'u1', '2026-01-01T00:00:00Z'),
                    ('v2', 'o1', 'Globex, Limited', 'globex, limited', 'pipeline', '2026-01-02T00:00:00Z');
             INSERT INTO documents (id, org_id, content_hash, name, media_type, size, created_by, created_at)
             VALUES ('d1', 'o1', '{}', 'Supply.pdf', 'pdf', 1, 'u1', 't1');
             INSERT INTO contracts (document_id, org_id, type_id, counterparty, extractions_json, vendor_id,
                 vendor_link, vendor_match, updated_at)
             VALUES ('d1', 'o1', 'supply', 'Globex Ltd', '{{}}', 'v2', 'auto', 'created', 't2');",
            "e".repeat(64)
        ))
        .unwrap();
        migrate(&mut conn).unwrap();
        crate::vendors::refresh_keys(&mut conn).unwrap();
        let rows: Vec<(String, String, String, String)> = conn
            .prepare("SELECT id, status, normalized_name, match_keys FROM vendors ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                ("v1".into(), "prospective".into(), "globex".into(), "|globex|".into()),
                ("v2".into(), "prospective".into(), "globex".into(), "|globex|".into())
            ],
            "keys derived again by the new rule; the two spellings now share one"
        );
        let link: String =
            conn.query_row("SELECT vendor_id FROM contracts WHERE document_id = 'd1'", [], |r| r.get(0)).unwrap();
        assert_eq!(link, "v2");
        let err = conn.execute("UPDATE vendors SET status = 'merged' WHERE id = 'v2'", []).unwrap_err();
        assert!(err.to_string().contains("names the vendor it was merged into"), "{err}");
        conn.execute("UPDATE vendors SET status = 'merged', merged_into = 'v1' WHERE id = 'v2'", []).unwrap();
        let err =
            conn.execute("UPDATE vendors SET status = 'active', merged_into = NULL WHERE id = 'v2'", []).unwrap_err();
        assert!(err.to_string().contains("merged"), "{err}");
    }

    #[test]
    fn audit_rows_and_answers_of_the_previous_schema_are_kept_and_gain_their_indexes() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0019_records_indexes").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO audit_log (id, org_id, actor_id, at, action, entity_kind, entity_id, details)
             VALUES ('a1', 'o1', 'u1', '2026-01-01T00:00:00.000Z', 'vendor.create', 'vendor', 'v1', '{}');
             INSERT INTO assistant_messages (id, session_id, org_id, user_id, question, answer, outcome, created_at)
             VALUES ('m1', 's1', 'o1', 'u1', 'Which contracts renew?', 'None.', 'answered', 't1');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let kept: (u32, u32) = conn
            .query_row("SELECT (SELECT count(*) FROM audit_log), (SELECT count(*) FROM assistant_messages)", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(kept, (1, 1));
        for index in ["audit_log_by_org_actor", "audit_log_by_org_action", "assistant_messages_by_user"] {
            let n: u32 = conn
                .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1", [index], |r| {
                    r.get(0)
                })
                .unwrap();
            assert_eq!(n, 1, "{index}");
        }
        let plan: String = conn
            .query_row(
                "EXPLAIN QUERY PLAN SELECT seq FROM audit_log WHERE org_id = 'o1' AND actor_id = 'u1' ORDER BY seq DESC",
                [],
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("audit_log_by_org_actor"), "{plan}");
    }

    #[test]
    fn passages_of_the_previous_schema_are_kept_lack_vectors_and_take_them_with_them_when_deleted() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0021_passage_embeddings").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, name, media_type, size, content_hash, created_by, created_at)
             VALUES ('d1', 'o1', 'a.pdf', 'pdf', 1, printf('%.64c', 'a'), 'u1', 't0');
             INSERT INTO passages (id, org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
             VALUES (7, 'o1', 'd1', 1, 0, 4, 'term', 'o1', 'd1');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let lacking: u32 = conn
            .query_row(
                "SELECT count(*) FROM passages p LEFT JOIN passage_vectors v ON v.passage_id = p.id WHERE v.passage_id IS NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(lacking, 1);
        conn.execute(
            "INSERT INTO passage_vectors (passage_id, org_id, model_id, vector) VALUES (7, 'o1', 'm', x'00')",
            [],
        )
        .unwrap();
        conn.execute("DELETE FROM passages WHERE id = 7", []).unwrap();
        let left: u32 = conn.query_row("SELECT count(*) FROM passage_vectors", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0, "a vector goes with its passage");
    }

    #[test]
    fn the_vector_stamp_is_read_from_an_index_alone_after_the_previous_schema() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0025_vector_stamp_index").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, name, media_type, size, content_hash, created_by, created_at)
             VALUES ('d1', 'o1', 'a.pdf', 'pdf', 1, printf('%.64c', 'a'), 'u1', 't0');
             INSERT INTO passages (id, org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
             VALUES (7, 'o1', 'd1', 1, 0, 4, 'term', 'o1', 'd1'), (9, 'o1', 'd1', 1, 5, 9, 'fees', 'o1', 'd1');
             INSERT INTO passage_vectors (passage_id, org_id, model_id, vector)
             VALUES (7, 'o1', 'local', x'01'), (9, 'o1', 'local', x'02');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let stamp = "SELECT count(*), coalesce(max(passage_id), 0) FROM passage_vectors WHERE org_id = 'o1' AND model_id = 'local'";
        let (rows, last): (u32, i64) = conn.query_row(stamp, [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        assert_eq!((rows, last), (2, 9), "the vectors were kept");
        let plan: String = conn.query_row(&format!("EXPLAIN QUERY PLAN {stamp}"), [], |r| r.get(3)).unwrap();
        assert!(plan.contains("COVERING INDEX passage_vectors_by_org"), "{plan}");
        let plan: String = conn
            .query_row(
                "EXPLAIN QUERY PLAN SELECT count(*), max(passage_id) FROM precedent_passage_vectors WHERE model_id = 'local'",
                [],
                |r| r.get(3),
            )
            .unwrap();
        assert!(plan.contains("COVERING INDEX precedent_passage_vectors_by_model"), "{plan}");
    }

    #[test]
    fn passages_of_the_previous_schema_start_their_organizations_counter_and_every_change_moves_it() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0026_passage_versions").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0'), ('o2', 'Globex', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, name, media_type, size, content_hash, created_by, created_at)
             VALUES ('d1', 'o1', 'a.pdf', 'pdf', 1, printf('%.64c', 'a'), 'u1', 't0'),
                    ('d2', 'o2', 'b.pdf', 'pdf', 1, printf('%.64c', 'b'), 'u1', 't0');
             INSERT INTO passages (id, org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
             VALUES (7, 'o1', 'd1', 1, 0, 4, 'term', 'o1', 'd1'), (9, 'o1', 'd1', 1, 5, 9, 'fees', 'o1', 'd1');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let version = |conn: &Connection, org: &str| -> Option<i64> {
            conn.query_row("SELECT version FROM passage_versions WHERE org_id = ?1", [org], |r| r.get(0))
                .optional()
                .unwrap()
        };
        assert_eq!(version(&conn, "o1"), Some(1), "stored passages start the counter");
        assert_eq!(version(&conn, "o2"), None, "an organization without passages has none");
        conn.execute("DELETE FROM passages WHERE id = 9", []).unwrap();
        conn.execute(
            "INSERT INTO passages (id, org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
             VALUES (9, 'o1', 'd1', 1, 5, 9, 'rent', 'o1', 'd1')",
            [],
        )
        .unwrap();
        assert_eq!(version(&conn, "o1"), Some(3), "a passage removed and one written under its id: two moves");
        conn.execute(
            "INSERT INTO passages (id, org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
             VALUES (11, 'o2', 'd2', 1, 0, 4, 'fees', 'o2', 'd2')",
            [],
        )
        .unwrap();
        assert_eq!((version(&conn, "o1"), version(&conn, "o2")), (Some(3), Some(1)), "each organization its own");
    }

    #[test]
    fn vectors_of_the_previous_schema_are_kept_and_a_passage_may_then_hold_one_per_model() {
        let before = MIGRATIONS.iter().position(|(name, _)| *name == "0022_vectors_per_model").unwrap() as u32;
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
        migrate_to(&mut conn, before).unwrap();
        conn.execute_batch(
            "INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 't0');
             INSERT INTO users (id, display_name, created_at) VALUES ('u1', 'Ann', 't0');
             INSERT INTO documents (id, org_id, name, media_type, size, content_hash, created_by, created_at)
             VALUES ('d1', 'o1', 'a.pdf', 'pdf', 1, printf('%.64c', 'a'), 'u1', 't0');
             INSERT INTO passages (id, org_id, document_id, page, start_char, end_char, text, org_token, doc_token)
             VALUES (7, 'o1', 'd1', 1, 0, 4, 'term', 'o1', 'd1');
             INSERT INTO passage_vectors (passage_id, org_id, model_id, vector) VALUES (7, 'o1', 'local', x'01');",
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let kept: Vec<u8> = conn
            .query_row("SELECT vector FROM passage_vectors WHERE passage_id = 7 AND model_id = 'local'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(kept, vec![1u8], "the old vector moved as it was");
        conn.execute(
            "INSERT INTO passage_vectors (passage_id, org_id, model_id, vector) VALUES (7, 'o1', 'voyage', x'02')",
            [],
        )
        .unwrap();
        let models: u32 =
            conn.query_row("SELECT count(*) FROM passage_vectors WHERE passage_id = 7", [], |r| r.get(0)).unwrap();
        assert_eq!(models, 2, "one vector per model");
        let duplicate = conn.execute(
            "INSERT INTO passage_vectors (passage_id, org_id, model_id, vector) VALUES (7, 'o1', 'voyage', x'03')",
            [],
        );
        assert!(duplicate.is_err(), "still one per (passage, model)");
        conn.execute("DELETE FROM passages WHERE id = 7", []).unwrap();
        let left: u32 = conn.query_row("SELECT count(*) FROM passage_vectors", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0, "the vectors go with their passage");
        let precedent_pk: u32 = conn
            .query_row("SELECT count(*) FROM pragma_table_info('precedent_passage_vectors') WHERE pk > 0", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(precedent_pk, 2, "the corpus's vectors too are keyed by passage and model");
    }

    #[test]
    fn a_database_newer_than_the_code_is_refused_untouched() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(
            matches!(err, StoreError::SchemaTooNew { found, supported } if found == SCHEMA_VERSION + 1 && supported == SCHEMA_VERSION)
        );
        assert!(tables(&conn).is_empty(), "nothing may be created in a newer database");
        assert!(err.to_string().contains("newer version of Pactwise"));
    }
}
