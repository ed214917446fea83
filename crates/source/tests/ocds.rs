//! The tender's OCDS 1.1 release package validates against the release package schema in
//! `../shared/data/ocds/schema/` (its `$ref` to the release schema resolved from the same folder, never fetched).

use chrono::{Duration, TimeZone, Utc};
use pactwise_source::ocds::{Award, Extension, TenderRecord, release_package};
use pactwise_source::tender::Deadlines;
use rust_decimal::Decimal;
use serde_json::{Value, json};

#[path = "support/ocds_schema.rs"]
mod ocds_schema;

fn tender_release() -> Value {
    json!({
        "ocid": "ocds-pwdesk-pkg-1",
        "id": "pkg-1-tender-v1",
        "date": "2027-03-01T08:00:00Z",
        "tag": ["tender"],
        "initiationType": "tender",
        "language": "en",
        "parties": [{"id": "buyer", "name": "City of Example", "roles": ["buyer", "procuringEntity"]}],
        "buyer": {"id": "buyer", "name": "City of Example"},
        "tender": {
            "id": "pkg-1-tender",
            "title": "Fleet telematics",
            "status": "planned",
            "procurementMethod": "open",
            "submissionMethod": ["electronicSubmission"],
            "enquiryPeriod": {"startDate": "2027-03-01T00:00:00Z", "endDate": "2027-03-05T00:00:00Z"},
            "tenderPeriod": {"startDate": "2027-03-01T00:00:00Z", "endDate": "2027-03-12T00:00:00Z"},
            "awardPeriod": {"startDate": "2027-03-12T00:00:00Z", "endDate": "2027-03-26T00:00:00Z"}
        }
    })
}

#[test]
fn the_tender_amendments_bids_and_award_validate_as_an_ocds_release_package() {
    let Some(folder) = pactwise_testkit::shared_data("ocds/schema") else { return };
    let validator = ocds_schema::release_package_validator(&folder).expect("the package schema compiles");

    let published_at = Utc.with_ymd_and_hms(2027, 3, 1, 8, 0, 0).unwrap();
    let deadlines = Deadlines {
        questions_close: Utc.with_ymd_and_hms(2027, 3, 5, 16, 0, 0).unwrap(),
        submissions_close: Utc.with_ymd_and_hms(2027, 3, 12, 16, 0, 0).unwrap(),
    };
    let extended = Deadlines { submissions_close: deadlines.submissions_close + Duration::days(7), ..deadlines };
    let extensions =
        [Extension { at: published_at + Duration::days(3), to: extended, reason: "Site visit moved".into() }];
    let base = tender_release();
    let record = TenderRecord {
        tender_release: &base,
        published_at,
        deadlines,
        extensions: &extensions,
        tenderers: Some(3),
        award: Some(Award {
            at: extended.submissions_close + Duration::days(5),
            supplier_id: "vendor-acme".into(),
            supplier_name: "Acme Telematics Ltd".into(),
            reason: "Highest technical total within the budget".into(),
            value: Some((Decimal::new(1_480_940, 2), "EUR".into())),
        }),
        publisher: "City of Example",
        uri: "https://example.org/tenders/pkg-1.json",
    };
    let package = release_package(&record, extended.submissions_close + Duration::days(6));
    let errors = ocds_schema::problems(&validator, &package);
    assert!(errors.is_empty(), "{errors:#?}");

    let releases = package["releases"].as_array().unwrap();
    let tags: Vec<&str> = releases.iter().map(|r| r["tag"][0].as_str().unwrap()).collect();
    assert_eq!(tags, ["tender", "tenderAmendment", "tenderUpdate", "award"]);
    assert_eq!(releases[1]["tender"]["tenderPeriod"]["endDate"], "2027-03-19T16:00:00Z");
    assert_eq!(releases[1]["tender"]["amendments"][0]["rationale"], "Site visit moved");
    assert_eq!(releases[2]["tender"]["numberOfTenderers"], 3);
    assert_eq!(releases[3]["awards"][0]["suppliers"][0]["name"], "Acme Telematics Ltd");
    assert_eq!(releases[3]["awards"][0]["value"]["amount"], 14809.4);

    // The same validator catches a broken package (the test can fail).
    let mut broken = package.clone();
    broken["releases"][3]["awards"][0]["status"] = json!("won");
    assert!(validator.iter_errors(&broken).next().is_some());
}
