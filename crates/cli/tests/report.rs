//! `pactwise report FILE --json`: imports the file if needed and runs the contract review report; without a model
//! it fails with the reason (exit 1); with the fake model server it prints a report whose invented clause is only
//! among the rejected, which `approve` then signs off.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The API key lives in the one keychain entry of the installation, shared by every data directory: the two tests
/// that depend on it (one sets a key, one needs none) take turns.
static KEYCHAIN_ENTRY: Mutex<()> = Mutex::new(());

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/report").join(name)
}

fn pactwise(data: &Path, endpoint: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pactwise"));
    command.arg("--data-dir").arg(data).args(args).env_remove("PACTWISE_DATA_DIR");
    match endpoint {
        Some(e) => command.env("PACTWISE_MODEL_ENDPOINT", e),
        // Nothing listens here: no call can reach a real API.
        None => command.env("PACTWISE_MODEL_ENDPOINT", "http://127.0.0.1:9"),
    };
    command.output().expect("runs")
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim().lines().count(), 1, "exactly one JSON document on stdout: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[test]
fn without_a_model_the_report_fails_with_the_reason_and_exit_code_1() {
    let _turn = KEYCHAIN_ENTRY.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // Inside tests/with-keyring.sh the keychain works: make sure no key is left there (by a test that failed midway).
    if std::env::var("PACTWISE_KEYRING_TESTS").as_deref() == Ok("1") {
        let cleared = pactwise(&data, None, &["settings", "api-key", "--clear"]);
        assert!(cleared.status.success(), "{}", String::from_utf8_lossy(&cleared.stderr));
    }
    let out = pactwise(&data, None, &["report", fixture("nda-six-pages.txt").to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let view = json_of(&out);
    assert_eq!(view["status"], "failed");
    assert!(view["reason"].as_str().unwrap().contains("needs the model"), "{view}");
    assert_eq!(view["document_name"], "nda-six-pages.txt");
    assert!(view["report"].is_null());
}

#[test]
fn bad_bounds_are_refused_as_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let file = fixture("nda-six-pages.txt");
    let out = pactwise(&data, None, &["report", file.to_str().unwrap(), "--max-calls", "0", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_of(&out)["error"]["code"], "invalid_input");
}

#[test]
fn with_the_fake_model_the_report_is_printed_and_approve_signs_it_off() {
    if !pactwise_testkit::keychain() {
        return;
    }
    let _turn = KEYCHAIN_ENTRY.lock().unwrap_or_else(|e| e.into_inner());
    use pactwise_model::fake::{FakeModelServer, FakeScript};
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let script: FakeScript =
        serde_json::from_str(&std::fs::read_to_string(fixture("fake-model.json")).unwrap()).unwrap();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let endpoint = server.endpoint();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");

    let mut child = Command::new(env!("CARGO_BIN_EXE_pactwise"))
        .args(["--data-dir", data.to_str().unwrap(), "settings", "api-key"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"sk-ant-cli-report-test\n").unwrap();
    assert!(child.wait().unwrap().success());

    let file = fixture("nda-six-pages.txt");
    let out = pactwise(&data, Some(&endpoint), &["report", file.to_str().unwrap(), "--json"]);
    let cleared = pactwise(&data, None, &["settings", "api-key", "--clear"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(cleared.status.success());
    let view = json_of(&out);
    assert_eq!(view["status"], "awaiting_sign_off", "{view}");
    let report = &view["report"];
    assert_eq!(report["completeness"], "complete");
    assert_eq!(report["contract_type"], "nda");
    assert_eq!(report["rejected"][0]["clause_id"], "W1-c3");
    let shown = report["clause_types"].to_string() + &report["unassigned"].to_string();
    assert!(!shown.contains("terminate this Agreement at any time"), "the invented clause is only among the rejected");
    let calls: Vec<Value> = server
        .message_requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| matches!(b["tool_choice"]["name"].as_str(), Some("record_clauses" | "record_clause_type")))
        .collect();
    assert_eq!(calls.len(), 30);
    assert_eq!(report["bounds"]["calls_used"], 30);

    let approval = view["approval"].as_str().unwrap();
    let signed = pactwise(
        &data,
        None,
        &["approve", approval, "--decision", "approve", "--reason", "Checked against the signed copy", "--json"],
    );
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
    let signed = json_of(&signed);
    assert_eq!(signed["approval"]["status"], "approved");
    assert_eq!(signed["run"]["status"], "succeeded");
    assert_eq!(signed["run"]["channels"]["outcome"]["status"], "signed_off");
}
