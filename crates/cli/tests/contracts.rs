//! `pactwise finalize` and `pactwise contracts list|show|dates` as a script uses them: one JSON document on stdout,
//! exit 2 with a message for bad input.

use serde_json::Value;
use std::path::{Path, PathBuf};
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

fn licence() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/software-license-northwind-tailspin.txt")
}

#[test]
fn a_contract_finalized_from_the_command_line_is_listed_shown_and_its_dates_written_as_a_calendar() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let imported = ok_json(pactwise(&data, &["import", licence().to_str().unwrap(), "--json"]));
    let id = imported["imported"][0]["document"]["id"].as_str().unwrap().to_string();

    let refused = pactwise(&data, &["finalize", &id, "--json"]);
    assert_eq!(refused.status.code(), Some(2), "critical items are not confirmed yet: bad input, said so");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("critical item"));

    let review = ok_json(pactwise(&data, &["pipeline", &id, "--json"]));
    for item in review["items"].as_array().unwrap().iter().filter(|i| i["risk"] == "critical") {
        let item = item["id"].as_str().unwrap();
        ok_json(pactwise(&data, &["correct", &id, "--item", item, "--confirm", "--keep-despite-warnings", "--json"]));
    }
    let finalized = ok_json(pactwise(&data, &["finalize", &id, "--new-vendor", "Tailspin Software", "--json"]));
    assert!(finalized["finalized_at"].is_string());

    let list = ok_json(pactwise(&data, &["contracts", "list", "--search", "tailspin", "--json"]));
    assert_eq!(list["total"], 1);
    assert_eq!(list["items"][0]["document"], id.as_str());
    assert_eq!(list["items"][0]["expires_on"], "2029-08-01");
    assert_eq!(list["items"][0]["notice_by"], "2029-05-03");
    let none = ok_json(pactwise(&data, &["contracts", "list", "--type", "nda", "--json"]));
    assert_eq!(none["total"], 0);

    let shown = ok_json(pactwise(&data, &["contracts", "show", &id, "--json"]));
    assert_eq!(shown["contract"]["vendor"], "Tailspin Software");
    assert!(shown["fields"].as_array().unwrap().iter().any(|f| f["field"] == "expiration_date"));

    let ics = tmp.path().join("dates.ics");
    let dates = ok_json(pactwise(
        &data,
        &["contracts", "dates", "--from", "2029-01-01", "--months", "12", "--ics", ics.to_str().unwrap(), "--json"],
    ));
    assert_eq!(dates["total"], 2);
    assert_eq!(dates["ics"]["events"], 2);
    let text = std::fs::read_to_string(&ics).unwrap();
    assert!(text.contains("DTSTART;VALUE=DATE:20290503\r\n"), "{text}");

    for bad in [
        vec!["contracts", "list", "--risk", "dire", "--json"],
        vec!["contracts", "dates", "--months", "0", "--json"],
        vec!["contracts", "dates", "--from", "next week", "--json"],
        vec!["contracts", "show", "not-an-id", "--json"],
    ] {
        let out = pactwise(&data, &bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let again = pactwise(&data, &["contracts", "dates", "--from", "2029-01-01", "--ics", ics.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "an existing file is kept unless --overwrite");
}
