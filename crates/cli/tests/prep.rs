//! `pactwise prep` through the real binary, offline: new, edit, validate, approve bound to the hash shown, the
//! gate's refusal (exit 2, code `publish_blocked`), bad input (exit 2), and one JSON document per command.

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
        .expect("the binary runs")
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn prep_new_edit_approve_and_the_gate_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/prep/fleet-telematics.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let intake = dir.path().join("intake.json");
    std::fs::write(&intake, fixture["intake"].to_string()).unwrap();
    let scope_reply = fixture["script"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["when_contains"] == "TASK=draft_scope")
        .unwrap()["reply"]["input"]
        .clone();
    let scope = dir.path().join("scope.json");
    std::fs::write(&scope, scope_reply.to_string()).unwrap();

    let out = pactwise(&data, &["prep", "new", "--intake", intake.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = json_of(&out)["package"]["id"].as_str().unwrap().to_string();

    let out =
        pactwise(&data, &["prep", "edit", &id, "--artifact", "scope", "--file", scope.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let view = json_of(&out);
    assert_eq!(view["package"]["package"]["artifacts"]["scope"]["state"]["status"], "valid");
    let hash = view["package"]["package"]["artifacts"]["scope"]["content_hash"].as_str().unwrap().to_string();

    let out = pactwise(&data, &["prep", "approve", &id, "--artifact", "scope", "--hash", "stale", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_of(&out)["error"]["code"], "approval_outdated");
    let out = pactwise(&data, &["prep", "approve", &id, "--artifact", "scope", "--hash", &hash, "--json"]);
    assert!(out.status.success());
    assert_eq!(json_of(&out)["package"]["package"]["artifacts"]["scope"]["state"]["status"], "approved");

    let out = pactwise(&data, &["prep", "publish", &id, "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_of(&out)["error"]["code"], "publish_blocked");

    let out = pactwise(&data, &["prep", "approve", &id, "--artifact", "budget", "--hash", &hash]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown artifact"));
    // Nothing drafted offline, so no critic findings: dismissing one is refused, as is a finding number 0.
    let out = pactwise(&data, &["prep", "dismiss", &id, "--finding", "1", "--reason", "n/a", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_of(&out)["error"]["code"], "not_found");
    let out = pactwise(&data, &["prep", "dismiss", &id, "--finding", "0", "--reason", "n/a", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_of(&out)["error"]["code"], "invalid_input");
    let out = pactwise(&data, &["prep", "show", "no-such-id", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_of(&out)["error"]["code"], "not_found");
}
