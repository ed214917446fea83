//! The workflow commands as a person or a script uses them: one JSON document on stdout, exit codes 0/1/2.

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

const PROCUREMENT: &str =
    r#"{"request": "REQ-7 standing desks", "budget": 10000, "capabilities": ["office_furniture", "delivery"]}"#;

#[test]
fn a_procurement_run_pauses_for_approval_and_finishes_with_the_agreement() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let started = pactwise(&data, &["runs", "start", "procurement", "--input", PROCUREMENT, "--json"]);
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let run = json_of(&started)["run"].clone();
    assert_eq!(run["status"], "waiting");
    let run_id = run["id"].as_str().unwrap().to_string();

    let inbox = json_of(&pactwise(&data, &["inbox", "--json"]));
    let approvals = inbox["approvals"].as_array().unwrap();
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["choices"], serde_json::json!(["Globex"]));
    let approval = approvals[0]["id"].as_str().unwrap().to_string();

    let decided =
        pactwise(&data, &["approve", &approval, "--decision", "approve", "--reason", "fits the budget", "--json"]);
    assert!(decided.status.success(), "{}", String::from_utf8_lossy(&decided.stderr));
    let decided = json_of(&decided);
    assert_eq!(decided["approval"]["status"], "approved");
    assert_eq!(decided["run"]["status"], "succeeded");
    assert!(decided["run"]["channels"]["agreement"]["text"].as_str().unwrap().contains("Globex"));

    // A decision is recorded once.
    let again =
        pactwise(&data, &["approve", &approval, "--decision", "reject", "--reason", "changed my mind", "--json"]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(json_of(&again)["error"]["code"], "conflict", "already decided is not bad input");

    let shown = json_of(&pactwise(&data, &["runs", "show", &run_id, "--json"]));
    assert_eq!(shown["approvals"][0]["reason"], "fits the budget");
    assert!(shown["approvals"][0]["decided_by"].is_string());
    assert!(shown["checkpoints"].as_u64().unwrap() >= 4);
    let kinds: Vec<&str> = shown["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"approval_opened") && kinds.contains(&"succeeded"), "{kinds:?}");
    assert!(json_of(&pactwise(&data, &["inbox", "--json"]))["approvals"].as_array().unwrap().is_empty());

    // For a person, the run in the Runs area's words: who decided what and why, the timeline, no step codes.
    let told = pactwise(&data, &["runs", "show", &run_id]);
    assert!(told.status.success());
    let told = String::from_utf8_lossy(&told.stdout);
    assert!(told.starts_with("Procurement: finished"), "{told}");
    assert!(
        told.contains("Decisions:") && told.contains("Approved by") && told.contains("“fits the budget”"),
        "{told}"
    );
    assert!(told.contains("Timeline:") && told.contains("Shortlist by budget and capabilities: done"), "{told}");
    for code in ["choose_vendor", "approval_opened", "step 0", "{"] {
        assert!(!told.contains(code), "no {code:?} for a person: {told}");
    }
}

#[test]
fn cancelling_a_waiting_run_empties_the_inbox() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let run = json_of(&pactwise(&data, &["runs", "start", "procurement", "--input", PROCUREMENT, "--json"]));
    let id = run["run"]["id"].as_str().unwrap();
    let cancelled = pactwise(&data, &["runs", "cancel", id, "--json"]);
    assert!(cancelled.status.success());
    let cancelled = json_of(&cancelled);
    assert_eq!(
        (cancelled["run"]["status"].as_str(), cancelled["approvals_cancelled"].as_u64()),
        (Some("cancelled"), Some(1))
    );
    assert!(json_of(&pactwise(&data, &["inbox", "--json"]))["approvals"].as_array().unwrap().is_empty());
    let again = pactwise(&data, &["runs", "cancel", id, "--json"]);
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn bad_input_exits_2_with_a_message_that_says_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    for (args, says) in [
        (vec!["runs", "start", "no_such_graph", "--json"], "runs graphs"),
        (vec!["runs", "start", "procurement", "--input", "{not json", "--json"], "not valid JSON"),
        (vec!["runs", "start", "procurement", "--input", "[1, 2]", "--json"], "JSON object"),
        (vec!["runs", "show", "12345", "--json"], "not a run id"),
        (vec!["approve", "nope", "--decision", "approve", "--reason", "x", "--json"], "not an approval id"),
        (vec!["runs", "show", "01a22b1d-0f6a-7043-8fe2-d280cc4fa7a4", "--json"], "no such item"),
    ] {
        let out = pactwise(&data, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let error = json_of(&out)["error"].clone();
        assert!(error["message"].as_str().unwrap().contains(says), "{args:?}: {error}");
    }
    let out = pactwise(&data, &["approve", "x", "--decision", "maybe", "--reason", "x"]);
    assert_eq!(out.status.code(), Some(2), "clap refuses an unknown decision");
}

#[test]
fn bench_engine_prints_its_figures_as_one_json_document() {
    let tmp = tempfile::tempdir().unwrap();
    let out = pactwise(
        &tmp.path().join("data"),
        &["bench", "engine", "--runs", "6", "--concurrency", "3", "--dir", tmp.path().to_str().unwrap(), "--json"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json_of(&out);
    assert_eq!((report["runs"].as_u64(), report["concurrency"].as_u64()), (Some(6), Some(3)));
    assert_eq!(report["all_agreements_drafted"], true);
    assert_eq!(report["sqlite_synchronous"], 2, "synchronous=FULL");
    assert_eq!(report["journal_mode"], "wal");
    assert!(report["runs_per_s"].as_f64().unwrap() > 0.0);
    // Two groups of three runs, three commits each (start with research, analysis, the decisions with legal), and
    // one checkpoint per super-step (research, analysis, choose_vendor, legal).
    assert_eq!(report["commits"], 6);
    assert_eq!(report["checkpoints_written"], 24);
}
