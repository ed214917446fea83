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

#[test]
fn the_api_key_goes_to_the_keychain_from_stdin_and_never_into_output_or_files() {
    if !pactwise_testkit::keychain() {
        return;
    }
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let key = "sk-ant-cli-test-0123456789-never-shown";
    let mut child = Command::new(env!("CARGO_BIN_EXE_pactwise"))
        .args(["--data-dir", data.to_str().unwrap(), "settings", "api-key", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{key}\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let set = json_of(&out);
    assert_eq!((set["api_key"].as_str(), set["model"].as_str()), (Some("set"), Some("ready")));
    assert!(!String::from_utf8_lossy(&out.stdout).contains(key) && !String::from_utf8_lossy(&out.stderr).contains(key));
    assert_eq!(json_of(&pactwise(&data, &["settings", "model", "--json"]))["model"], "ready");

    for entry in walk(&data) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(!bytes.windows(key.len()).any(|w| w == key.as_bytes()), "the key leaked into {}", entry.display());
    }
    let cleared = json_of(&pactwise(&data, &["settings", "api-key", "--clear", "--json"]));
    assert_eq!(cleared["model"], "no_api_key");
    assert_eq!(json_of(&pactwise(&data, &["settings", "model", "--json"]))["model"], "no_api_key");
}

#[test]
fn an_empty_api_key_is_refused_as_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pactwise"))
        .args(["--data-dir", tmp.path().join("d").to_str().unwrap(), "settings", "api-key", "--json"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_of(&out)["error"]["code"], "invalid_input");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

#[test]
fn checklists_export_and_stats_print_the_whole_library() {
    let tmp = tempfile::tempdir().unwrap();
    let export = pactwise(tmp.path(), &["checklists", "export", "--json"]);
    assert!(export.status.success(), "{}", String::from_utf8_lossy(&export.stderr));
    let export = json_of(&export);
    let types = export["types"].as_array().expect("types");
    assert_eq!(types.len(), 34);
    let items: usize = types.iter().map(|t| t["items"].as_array().unwrap().len()).sum();
    assert_eq!(items, 1032);
    assert_eq!(export["catalog"]["hash"].as_str().unwrap().len(), 64);

    let stats = json_of(&pactwise(tmp.path(), &["checklists", "stats", "--json"]));
    assert_eq!((stats["type_count"].as_u64(), stats["item_count"].as_u64()), (Some(34), Some(1032)));
    assert_eq!(stats["catalog"], export["catalog"]);
}

#[test]
fn extract_prints_pages_with_source_confidence_kind_and_char_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("terms.txt");
    let para = "The Supplier shall deliver the Goods to the Delivery Point on the Delivery Date.\n\n";
    std::fs::write(&file, para.repeat(80)).unwrap();
    let out = pactwise(tmp.path(), &["extract", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json_of(&out);
    assert_eq!(report["file"], "terms.txt");
    let pages = report["pages"].as_array().unwrap();
    assert!(pages.len() >= 2, "about 3,000 characters a page");
    assert_eq!(report["page_count"].as_u64(), Some(pages.len() as u64));
    for (i, page) in pages.iter().enumerate() {
        assert_eq!(page["number"].as_u64(), Some(i as u64 + 1));
        assert_eq!((page["source"].as_str(), page["confidence_kind"].as_str()), (Some("text"), Some("none")));
        assert!(page["confidence"].is_null());
        assert_eq!(page["synthetic"], true, "no explicit breaks: synthetic pages");
        assert_eq!(page["char_count"].as_u64(), Some(page["text"].as_str().unwrap().chars().count() as u64));
    }
}

#[test]
fn extract_refuses_a_broken_pdf_as_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("broken.pdf");
    std::fs::write(&file, b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R").unwrap();
    let out = pactwise(tmp.path(), &["extract", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let error = &json_of(&out)["error"];
    let code = error["code"].as_str().unwrap();
    assert!(["file_corrupt", "file_empty"].contains(&code), "{code}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("broken.pdf"), "names the file: {message}");
    assert!(!message.contains("Pdfium"), "no library internals: {message}");
}

#[test]
fn extract_reads_a_real_contract_pdf_from_its_text_layer() {
    let Some(root) = pactwise_testkit::shared_data("cuad/pdfs") else { return };
    let pdf = std::fs::read_dir(&root).unwrap().find_map(|e| e.ok().map(|e| e.path())).expect("a CUAD PDF");
    let tmp = tempfile::tempdir().unwrap();
    let out = pactwise(tmp.path(), &["extract", pdf.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json_of(&out);
    let pages = report["pages"].as_array().unwrap();
    assert!(!pages.is_empty());
    assert!(pages.iter().map(|p| p["char_count"].as_u64().unwrap()).sum::<u64>() > 1000);
}

#[test]
fn a_data_directory_that_cannot_be_used_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let not_a_dir = tmp.path().join("a-file");
    std::fs::write(&not_a_dir, b"x").unwrap();
    let out = pactwise(&not_a_dir, &["documents", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let error = &json_of(&out)["error"];
    assert_eq!(error["code"], "storage");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("a-file") && message.contains("--data-dir"), "names it and says what to do: {message}");
    assert_eq!(std::fs::read(&not_a_dir).unwrap(), b"x", "the file is left as it was");
}

#[test]
fn review_prints_every_item_of_the_type_with_the_contract_fields_and_refuses_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/demo/master-services-agreement-northwind-fabrikam.txt");
    let out = pactwise(&data, &["review", file.to_str().unwrap(), "--json", "--offline"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let review = json_of(&out);
    assert_eq!(review["type"]["method"], "keyword");
    let type_id = review["type"]["id"].as_str().unwrap().to_owned();
    let catalog = json_of(&pactwise(&data, &["checklists", "export", "--json"]));
    let expected = catalog["types"].as_array().unwrap().iter().find(|t| t["id"] == type_id.as_str()).unwrap()["items"]
        .as_array()
        .unwrap()
        .len();
    let items = review["items"].as_array().unwrap();
    assert_eq!(items.len(), expected, "every item of the type appears");
    let text = std::fs::read_to_string(&file).unwrap();
    for item in items {
        for key in ["id", "status", "confidence", "quote", "page", "verified"] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
        if let Some(quote) = item["quote"].as_str() {
            assert_eq!(item["verified"], true);
            assert!(text.contains(quote), "a quote not in the file: {quote}");
        }
    }
    assert_eq!(review["gate"]["route"], "person");
    assert_eq!(review["gate"]["reason"], "classification_unresolved");
    // Bad input: a missing file, an unknown threshold, a value out of range, a folder that is not a CUAD folder.
    let missing = pactwise(&data, &["review", "/nonexistent/contract.pdf", "--json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(json_of(&missing)["error"]["message"].as_str().unwrap().contains("/nonexistent/contract.pdf"));
    for set in ["bogus=0.5", "critical_min_confidence=1.5", "critical_min_confidence=high"] {
        let out = pactwise(&data, &["settings", "thresholds", "--set", set, "--json"]);
        assert_eq!(out.status.code(), Some(2), "{set}");
    }
    let thresholds = json_of(&pactwise(&data, &["settings", "thresholds", "--json"]));
    assert_eq!(thresholds["thresholds"]["critical_min_confidence"], 0.7f32 as f64, "a refused value changes nothing");
    let not_cuad = pactwise(&data, &["eval", "cuad", tmp.path().to_str().unwrap(), "--json"]);
    assert_eq!(not_cuad.status.code(), Some(2));
}

#[test]
fn sync_says_it_is_not_signed_in_and_refuses_a_bad_address() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let status = pactwise(&data, &["sync", "status", "--json"]);
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let status = json_of(&status);
    assert_eq!(status["phase"], "not_signed_in");
    assert_eq!(status["pending_uploads"], 0);

    let now = pactwise(&data, &["sync", "now", "--json"]);
    assert_eq!(now.status.code(), Some(1));
    assert_eq!(json_of(&now)["error"]["code"], "unauthenticated");
    assert!(String::from_utf8_lossy(&now.stderr).contains("sync sign-in"), "says what to do");

    let bad = Command::new(env!("CARGO_BIN_EXE_pactwise"))
        .arg("--data-dir")
        .arg(&data)
        .args(["sync", "sign-in", "--server", "sync.example.com", "--org", "alpha", "--email", "a@b.c", "--json"])
        .env("PACTWISE_SYNC_PASSWORD", "secret-password")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "bad input");
    let bad = json_of(&bad);
    assert_eq!(bad["error"]["code"], "invalid_input");
    assert!(!bad.to_string().contains("secret-password"), "the password is never printed");
}

#[test]
fn extract_says_one_page_limit_and_refuses_zero_with_exit_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let help = Command::new(env!("CARGO_BIN_EXE_pactwise")).args(["extract", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[default: 5,000]"), "{help}");
    assert!(!help.contains("2000") && !help.contains("2,000"), "{help}");
    let file = tmp.path().join("a.txt");
    std::fs::write(&file, "one page").unwrap();
    let out = pactwise(&tmp.path().join("data"), &["extract", file.to_str().unwrap(), "--max-pages", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--max-pages 0 would refuse every document; give at least 1 (the default is 5,000)"),
        "{stderr}"
    );
    let one = pactwise(&tmp.path().join("data"), &["extract", file.to_str().unwrap(), "--max-pages", "1", "--json"]);
    assert!(one.status.success(), "{}", String::from_utf8_lossy(&one.stderr));
}

#[test]
fn queue_health_thresholds_are_set_checked_and_reported_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let out = pactwise(dir.path(), &["runs", "health", "--failures-per-hour", "7", "--backlog", "40"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("The task queue is healthy."), "{text}");
    assert!(text.contains("flagged at 7 failures in an hour, a queue at 40 pending tasks"), "{text}");
    assert!(!text.contains('{'), "words, never JSON: {text}");
    let json = json_of(&pactwise(dir.path(), &["runs", "health", "--json"]));
    assert_eq!(json["thresholds"]["failures_per_hour"], 7);
    // A value outside the setting's bounds is refused as bad input and changes nothing.
    let refused = pactwise(dir.path(), &["runs", "health", "--backlog", "0"]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert_eq!(json_of(&pactwise(dir.path(), &["runs", "health", "--json"]))["thresholds"]["backlog"], 40);
}

#[test]
fn vendors_are_added_found_as_duplicates_merged_and_set_as_a_script_uses_them() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path();
    let add = |name: &str, extra: &[&str]| {
        let mut args = vec!["vendors", "add", name, "--json"];
        args.extend_from_slice(extra);
        let out = pactwise(data, &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        json_of(&out)["id"].as_str().unwrap().to_string()
    };
    let keep = add("Acme, Inc.", &["--id", "tax id=US-1"]);
    let twin = add("ACME Incorporated", &["--alias", "Acme Widgets"]);
    add("Initech", &[]);
    let bad = pactwise(data, &["vendors", "add", "Hooli", "--id", "no-equals-sign"]);
    assert_eq!(bad.status.code(), Some(2), "a malformed identifier is bad input");

    let dups = json_of(&pactwise(data, &["vendors", "duplicates", "--json"]));
    assert_eq!(dups.as_array().unwrap().len(), 1);
    assert_eq!(dups[0]["vendors"].as_array().unwrap().len(), 2);

    let merged = pactwise(data, &["vendors", "merge", &keep, &twin, "--json"]);
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    assert_eq!(json_of(&merged)["merged"]["status"], "merged");
    let list = json_of(&pactwise(data, &["vendors", "list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 2);
    let all = json_of(&pactwise(data, &["vendors", "list", "--merged", "--json"]));
    assert_eq!(all.as_array().unwrap().len(), 3, "the merged record is kept");
    let again = pactwise(data, &["vendors", "merge", &keep, &twin]);
    assert!(!again.status.success(), "a merged record is not merged again");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already merged"));

    let no_reason = pactwise(data, &["vendors", "set-status", &keep, "blocked"]);
    assert_eq!(no_reason.status.code(), Some(2), "a status change needs a reason");
    let set =
        json_of(&pactwise(data, &["vendors", "set-status", &keep, "blocked", "--reason", "failed audit", "--json"]));
    assert_eq!(set["status"], "blocked");
    let show = json_of(&pactwise(data, &["vendors", "show", &keep, "--json"]));
    assert_eq!(show["vendor"]["aliases"], serde_json::json!(["Acme Widgets"]));
    assert_eq!(show["can_onboard"], true, "a blocked vendor may be onboarded again");
    let missing = pactwise(data, &["vendors", "show", "no-such-vendor"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no such item"));
}

#[test]
fn audit_lists_and_exports_the_same_filter_as_csv_and_usage_prints_one_document() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let file = tmp.path().join("=cmd,memo.txt");
    std::fs::write(&file, "Term sheet").unwrap();
    assert!(pactwise(&data, &["import", file.to_str().unwrap(), "--json"]).status.success());

    let listed = json_of(&pactwise(&data, &["audit", "list", "--action", "document.imported", "--json"]));
    let lines = listed["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["action"], "imported");
    assert_eq!(lines[0]["thing"], "the document “=cmd,memo.txt”");
    assert!(listed["next"].is_null());

    let csv = tmp.path().join("audit.csv");
    let out = pactwise(&data, &["audit", "export", "--csv", csv.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_of(&out)["rows"], 1);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("When (UTC),Person,Action,Thing\r\n"), "{text}");
    assert!(text.contains(",imported,\"the document “=cmd,memo.txt”\"\r\n"), "{text}");
    let again = pactwise(&data, &["audit", "export", "--csv", csv.to_str().unwrap(), "--json"]);
    assert_eq!(again.status.code(), Some(2), "an existing file is refused without --overwrite");

    let bad = pactwise(&data, &["audit", "list", "--person", "Nobody at all", "--json"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("audit actions"));

    let usage = json_of(&pactwise(&data, &["usage", "--json"]));
    assert_eq!(usage["scope"], "organization");
    assert_eq!(usage["months"][0]["month"], usage["current_month"]);
}
