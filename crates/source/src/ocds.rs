//! The tender's public record as an OCDS 1.1 release package: the published tender, one amendment release per
//! deadline extension, the number of tenderers once submissions close, and the award a person made. Built from the
//! package's own tender release (Prep Studio's export) and the facts the tender machine recorded; nothing about a
//! submission's content is in it.

use chrono::{DateTime, SecondsFormat, Utc};
use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::tender::Deadlines;

/// A deadline extension as published to vendors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extension {
    pub at: DateTime<Utc>,
    pub to: Deadlines,
    pub reason: String,
}

/// The award, as a person decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Award {
    pub at: DateTime<Utc>,
    pub supplier_id: String,
    pub supplier_name: String,
    pub reason: String,
    /// The awarded price total and its currency, from the price envelope's arithmetic.
    pub value: Option<(Decimal, String)>,
}

/// What the record is built from.
#[derive(Debug, Clone)]
pub struct TenderRecord<'a> {
    /// Prep Studio's OCDS release of the published package (`tag: ["tender"]`), as published.
    pub tender_release: &'a Value,
    pub published_at: DateTime<Utc>,
    /// The deadlines as first published.
    pub deadlines: Deadlines,
    pub extensions: &'a [Extension],
    /// The number of vendors that submitted, once submissions have closed.
    pub tenderers: Option<usize>,
    pub award: Option<Award>,
    /// Who publishes the record (the organization's name).
    pub publisher: &'a str,
    /// Where the package will be found.
    pub uri: &'a str,
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The release package, releases in the order they happened.
pub fn release_package(record: &TenderRecord<'_>, generated_at: DateTime<Utc>) -> Value {
    let base = record.tender_release;
    let ocid = base["ocid"].as_str().unwrap_or("ocds-pwdesk-unknown").to_owned();
    let first_id = format!("{ocid}-published");
    let mut releases = Vec::new();

    let mut tender = base["tender"].clone();
    tender["status"] = json!("active");
    set_periods(&mut tender, &record.deadlines);
    let mut published = base.clone();
    published["id"] = json!(first_id);
    published["date"] = json!(time(record.published_at));
    published["tag"] = json!(["tender"]);
    published["tender"] = tender.clone();
    releases.push(published);

    let mut amendments = Vec::new();
    let mut previous_id = first_id;
    for (index, extension) in record.extensions.iter().enumerate() {
        let id = format!("{ocid}-amendment-{}", index + 1);
        amendments.push(json!({
            "id": format!("extension-{}", index + 1),
            "date": time(extension.at),
            "rationale": extension.reason,
            "description": format!(
                "Deadline for questions {}; submission deadline {}.",
                time(extension.to.questions_close),
                time(extension.to.submissions_close)
            ),
            "amendsReleaseID": previous_id,
            "releaseID": id,
        }));
        set_periods(&mut tender, &extension.to);
        tender["amendments"] = json!(amendments);
        let mut release = base.clone();
        release["id"] = json!(id);
        release["date"] = json!(time(extension.at));
        release["tag"] = json!(["tenderAmendment"]);
        release["tender"] = tender.clone();
        releases.push(release);
        previous_id = id;
    }

    if let Some(count) = record.tenderers {
        let closed = record.extensions.last().map_or(record.deadlines, |e| e.to).submissions_close;
        tender["numberOfTenderers"] = json!(count);
        tender["status"] = json!("complete");
        let mut release = base.clone();
        release["id"] = json!(format!("{ocid}-closed"));
        release["date"] = json!(time(closed));
        release["tag"] = json!(["tenderUpdate"]);
        release["tender"] = tender.clone();
        releases.push(release);
    }

    if let Some(award) = &record.award {
        let mut release = base.clone();
        let mut parties = base["parties"].as_array().cloned().unwrap_or_default();
        parties.push(json!({"id": award.supplier_id, "name": award.supplier_name, "roles": ["supplier", "tenderer"]}));
        let mut entry = json!({
            "id": format!("{ocid}-award-1"),
            "title": format!("Award to {}", award.supplier_name),
            "description": award.reason,
            "status": "active",
            "date": time(award.at),
            "suppliers": [{"id": award.supplier_id, "name": award.supplier_name}],
        });
        if let Some((amount, currency)) = &award.value {
            let amount: f64 = amount.to_string().parse().unwrap_or(0.0);
            entry["value"] = json!({"amount": amount, "currency": currency});
        }
        release["id"] = json!(format!("{ocid}-award"));
        release["date"] = json!(time(award.at));
        release["tag"] = json!(["award"]);
        release["tender"] = tender.clone();
        release["parties"] = json!(parties);
        release["awards"] = json!([entry]);
        releases.push(release);
    }

    json!({
        "uri": record.uri,
        "version": "1.1",
        "publishedDate": time(generated_at),
        "publisher": {"name": record.publisher},
        "releases": releases,
    })
}

fn set_periods(tender: &mut Value, deadlines: &Deadlines) {
    tender["enquiryPeriod"]["endDate"] = json!(time(deadlines.questions_close));
    tender["tenderPeriod"]["endDate"] = json!(time(deadlines.submissions_close));
    tender["awardPeriod"]["startDate"] = json!(time(deadlines.submissions_close));
}
