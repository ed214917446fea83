//! Exports of an approved package: the OCDS 1.1 release validates against the schema in
//! `../shared/data/ocds/schema/`, the DOCX is a readable WordprocessingML package, and nothing unapproved exports.

mod support;

use chrono::{TimeZone, Utc};
use pactwise_prep::export::{ExportError, docx, ocds_release};
use pactwise_prep::*;
use std::io::Read;
use support::*;

#[test]
fn the_ocds_release_validates_against_the_ocds_1_1_schema() {
    // `../shared/data` beside the repository, or `PACTWISE_SHARED_DATA`: under CI its absence fails the test.
    let Some(schema_path) = pactwise_testkit::shared_data("ocds/schema/release-schema.json") else { return };
    let text = std::fs::read_to_string(&schema_path).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let p = approved_package();
    let release = ocds_release(&p, "pkg-1", 3, Utc.with_ymd_and_hms(2027, 1, 15, 10, 0, 0).unwrap()).unwrap();
    let errors: Vec<String> = validator.iter_errors(&release).map(|e| format!("{}: {e}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let tender = &release["tender"];
    assert_eq!(tender["items"].as_array().unwrap().len(), 1);
    assert_eq!(tender["milestones"].as_array().unwrap().len(), 6);
    assert!(tender["awardCriteriaDetails"].as_str().unwrap().contains("60.00 %"));
    assert_eq!(tender["tenderPeriod"]["endDate"], format!("{}T00:00:00Z", milestone_dates(&intake())[2].1));
    // A broken release is caught by the same validator (the test can fail).
    let mut broken = release.clone();
    broken["tag"] = serde_json::json!(["not_a_tag"]);
    assert!(validator.iter_errors(&broken).next().is_some());
}

#[test]
fn the_docx_holds_the_package_and_nothing_unapproved_exports() {
    let p = approved_package();
    let bytes = docx(&p).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    for expected in ["Request for proposals: Fleet telematics", "R-02 (scored)", "C1 Tracking — 60.00 %", "P-01"] {
        assert!(xml.contains(expected), "{expected} missing");
    }

    let mut unapproved = complete_package();
    unapproved
        .approve(ArtifactKind::Intake, &unapproved.artifacts.content_hash(ArtifactKind::Intake).unwrap())
        .unwrap();
    assert!(matches!(docx(&unapproved), Err(ExportError::NotApproved(v)) if v.len() == 5));
    assert!(ocds_release(&unapproved, "x", 1, Utc::now()).is_err());
}
