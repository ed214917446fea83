//! `pactwise agents plan|list|config` as a script uses them: one JSON document on stdout, exit 2 with the reasons
//! for a refused setting, clear outcomes for requests with nothing to plan.

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

fn ok_json(out: Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.trim().lines().count(), 1, "exactly one JSON document on stdout: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap()
}

#[test]
fn plan_list_and_config_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");

    let list = ok_json(pactwise(&data, &["agents", "list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 10);

    let plan = ok_json(pactwise(
        &data,
        &["agents", "plan", "Renew SOW-2026-021 before end of Q2, USD 22,000 per quarter", "--json"],
    ));
    assert_eq!(plan["request_type"], "renewal");
    assert_eq!(plan["entities"]["amounts"][0]["minor"], 2_200_000);
    assert_eq!(plan["entities"]["contracts"][0]["contract"], Value::Null, "no such contract in this organization");
    let agents: Vec<&str> = plan["steps"].as_array().unwrap().iter().map(|s| s["agent"].as_str().unwrap()).collect();
    assert_eq!(agents, ["ocr", "legal", "financial", "workflow", "secretary", "analytics", "notifications"]);

    let emoji = ok_json(pactwise(&data, &["agents", "plan", "🚀🔥", "--json"]));
    assert_eq!(emoji["outcome"]["kind"], "nothing_to_do");
    assert!(emoji["steps"].as_array().unwrap().is_empty());

    let changed =
        ok_json(pactwise(&data, &["agents", "config", "--set", "secretary.reminder_days_before=14", "--json"]));
    assert_eq!(changed["secretary"]["reminder_days_before"], 14);
    let refused = pactwise(&data, &["agents", "config", "--set", "secretary.reminder_days_before=0", "--json"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("from 1 to 365"));
    let shown = ok_json(pactwise(&data, &["agents", "config", "--json"]));
    assert_eq!(shown["secretary"]["reminder_days_before"], 14, "the refused change wrote nothing");
}
