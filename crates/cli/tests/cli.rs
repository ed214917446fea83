//! The CLI contract, run as a person or a script would: one JSON document on stdout, exit codes 0/1/2.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn pactwise(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pactwise"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("PACTWISE_DATA_DIR")
        .output()
        .expect("runs")
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim().lines().count(), 1, "exactly one JSON document on stdout: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[test]
fn import_twice_gives_one_document_and_documents_lists_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let file = tmp.path().join("supply.pdf");
    std::fs::write(&file, b"%PDF-1.4\n% a tiny test file\n%%EOF\n").unwrap();
    let f = file.to_str().unwrap();

    let first = pactwise(&data, &["import", f, "--json"]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let first = json_of(&first);
    assert_eq!(first["imported"][0]["outcome"], "created");
    let second = json_of(&pactwise(&data, &["import", f, "--json"]));
    assert_eq!(second["imported"][0]["outcome"], "existing");
    assert_eq!(first["imported"][0]["document"]["id"], second["imported"][0]["document"]["id"]);

    let listed = pactwise(&data, &["documents", "--json"]);
    assert!(listed.status.success());
    let listed = json_of(&listed);
    let docs = listed["documents"].as_array().unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["name"], "supply.pdf");
    assert_eq!(docs[0]["media_type"], "pdf");
}

#[test]
fn delete_and_restore_by_id() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let file = tmp.path().join("memo.txt");
    std::fs::write(&file, "Term sheet").unwrap();
    let imported = json_of(&pactwise(&data, &["import", file.to_str().unwrap(), "--json"]));
    let id = imported["imported"][0]["document"]["id"].as_str().unwrap().to_string();

    let deleted = pactwise(&data, &["delete", &id, "--json"]);
    assert!(deleted.status.success());
    assert!(json_of(&deleted)["document"]["deleted_at"].is_string());
    assert!(json_of(&pactwise(&data, &["documents", "--json"]))["documents"].as_array().unwrap().is_empty());
    assert_eq!(json_of(&pactwise(&data, &["documents", "--deleted", "--json"]))["documents"][0]["id"], id.as_str());

    let restored = pactwise(&data, &["restore", &id, "--json"]);
    assert!(restored.status.success());
    assert!(json_of(&restored)["document"]["deleted_at"].is_null());
}

#[test]
fn bad_input_exits_2_with_a_message_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let empty = tmp.path().join("empty.pdf");
    std::fs::write(&empty, b"").unwrap();
    for (args, words) in [
        (vec!["import", tmp.path().to_str().unwrap(), "--json"], "is a folder"),
        (vec!["import", empty.to_str().unwrap(), "--json"], "empty.pdf is empty"),
        (vec!["import", "/no/such/file.pdf", "--json"], "/no/such/file.pdf does not exist"),
        (vec!["delete", "not-an-id", "--json"], "is not a document id"),
    ] {
        let out = pactwise(&data, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(words), "{args:?}: stderr should say {words:?}: {stderr}");
        json_of(&out);
    }
    let unknown_id = pactwise(&data, &["delete", "0193a0b4-0000-7000-8000-000000000000", "--json"]);
    assert_eq!(unknown_id.status.code(), Some(2));
    assert_eq!(json_of(&unknown_id)["error"]["code"], "not_found");
    assert!(json_of(&pactwise(&data, &["documents", "--json"]))["documents"].as_array().unwrap().is_empty());
}

#[test]
fn unknown_commands_and_flags_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    for args in [vec!["frobnicate"], vec!["documents", "--colour"], vec!["import"]] {
        let out = pactwise(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn the_size_limit_is_configurable_per_import() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let file = tmp.path().join("big.txt");
    std::fs::write(&file, "x".repeat(5000)).unwrap();
    let out = pactwise(&data, &["import", file.to_str().unwrap(), "--max-size", "4KB", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_of(&out)["failed"][0]["error"]["code"], "file_too_large");
    let ok = pactwise(&data, &["import", file.to_str().unwrap(), "--max-size", "5KB", "--json"]);
    assert!(ok.status.success());
}

#[test]
fn demo_seeds_once_and_becomes_the_current_organization() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let first = json_of(&pactwise(&data, &["demo", "--json"]));
    assert_eq!(first["created"], 3);
    let second = json_of(&pactwise(&data, &["demo", "--json"]));
    assert_eq!((second["created"].as_u64(), second["documents"].as_u64()), (Some(0), Some(3)));
    assert_eq!(json_of(&pactwise(&data, &["documents", "--json"]))["documents"].as_array().unwrap().len(), 3);
}
