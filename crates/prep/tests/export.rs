//! Exports of an approved package: the OCDS 1.1 release validates against the schema in
//! `../shared/data/ocds/schema/`, the DOCX is a readable WordprocessingML package, and nothing unapproved exports.

mod support;

use chrono::{TimeZone, Utc};
use pactwise_prep::export::{self, ExportError, docx, ocds_release, pdf};
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

/// Whether a poppler tool runs (they answer `-v`, and exit 1 on `--version`); under CI its absence fails the test.
fn poppler(tool: &str) -> bool {
    let runs = std::process::Command::new(tool)
        .arg("-v")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    pactwise_testkit::require(runs, || format!("`{tool}` is not installed (Debian's poppler-utils)"))
}

/// The text of every `w:t` run of a DOCX, one paragraph or cell per line.
fn docx_text(bytes: &[u8]) -> String {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    let mut out = String::new();
    for piece in xml.split("<w:t xml:space=\"preserve\">").skip(1) {
        let text = piece.split("</w:t>").next().unwrap();
        out.push_str(&text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\""));
        out.push('\n');
    }
    out
}

/// A package that uses every variant people see: both requirement kinds, every verification method, every
/// pricing basis, every milestone; approved.
fn package_with_every_variant() -> Package {
    let intake = Intake { country: Some("DE".into()), ..intake() };
    let mut p = Package::new(intake.clone());
    p.set_content(ArtifactKind::Scope, Content::Scope(scope()), None).unwrap();
    let mut items = requirements().items;
    let verifications = pactwise_rules::prep::labels::every::VERIFICATIONS;
    for (i, verification) in verifications.iter().enumerate() {
        items.push(Requirement {
            code: format!("R-1{i}"),
            text: format!("Check number {i}"),
            kind: RequirementKind::Mandatory,
            need_ids: vec![],
            measure: Some(Measure { metric: "result".into(), threshold: "passed".into(), verification: *verification }),
        });
    }
    p.set_content(ArtifactKind::Requirements, Content::Requirements(Requirements { items }), None).unwrap();
    p.set_content(ArtifactKind::Criteria, Content::Criteria(criteria()), None).unwrap();
    let lines = pactwise_rules::prep::labels::every::PRICE_BASES
        .iter()
        .enumerate()
        .map(|(i, basis)| PricingLine {
            code: format!("P-0{}", i + 1),
            description: format!("Item {}", i + 1),
            unit: "vehicle-month".into(),
            quantity: if i == 2 { None } else { Some(12) },
            basis: Some(*basis),
            open_amount: false,
        })
        .collect();
    p.set_content(ArtifactKind::Pricing, Content::Pricing(Pricing { currency: "EUR".into(), lines }), None).unwrap();
    p.set_content(ArtifactKind::Milestones, Content::Milestones(milestones(&intake)), None).unwrap();
    p.revalidate().unwrap();
    assert_eq!(approve_all_valid(&mut p), 6, "{:#?}", ArtifactKind::ALL.map(|k| p.state(k).clone()));
    p
}

/// Each heading is followed by something before the next heading of its rank or above (and a sub-heading by
/// something before any heading).
fn empty_headings(parts: &[export::Part]) -> Vec<String> {
    use export::Part;
    let rank = |p: &Part| match p {
        Part::Title(_) => Some(0),
        Part::Heading(_) => Some(1),
        Part::Subheading(_) => Some(2),
        _ => None,
    };
    let mut empty = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let (Some(r), Part::Heading(name) | Part::Subheading(name)) = (rank(part), part) else { continue };
        let next = parts[i + 1..].iter().find(|p| !matches!(p, Part::PageBreak));
        let has_body = next.is_some_and(|n| rank(n).is_none_or(|nr| nr > r));
        if !has_body || name.trim().is_empty() {
            empty.push(name.clone());
        }
    }
    empty
}

#[test]
fn every_enum_a_person_sees_is_in_words_in_the_docx_and_the_pdf() {
    let p = package_with_every_variant();
    let text = docx_text(&docx(&p).unwrap());
    for word in text.split_whitespace() {
        assert_eq!(pactwise_rules::prep::identifier_in(word), None, "an identifier in the DOCX:\n{text}");
    }
    for debug in ["Some(", "None", "PerUnit", "TimeAndMaterials", "FixedPrice", "questions_deadline"] {
        assert!(!text.contains(debug), "{debug} in the DOCX");
    }
    for words in [
        "price per unit",
        "fixed price",
        "time and materials",
        "subscription",
        "verified by a demonstration",
        "verified by customer references",
        "verified by documents",
        "verified by an inspection",
        "verified by a test",
        "Mandatory (pass or fail)",
        "Scored",
        "Deadline for questions",
        "Contract start",
    ] {
        assert!(text.contains(words), "{words:?} missing from the DOCX:\n{text}");
    }
    // The same words in the PDF, read back by poppler.
    if poppler("pdftotext") {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rfp.pdf");
        std::fs::write(&path, pdf(&p).unwrap()).unwrap();
        let out = std::process::Command::new("pdftotext").arg(&path).arg("-").output().unwrap();
        let pdf_text = String::from_utf8_lossy(&out.stdout);
        assert!(pdf_text.contains("Form B: Pricing form") && pdf_text.contains("price per unit"), "{pdf_text}");
        for word in pdf_text.split_whitespace() {
            assert_eq!(pactwise_rules::prep::identifier_in(word), None, "an identifier in the PDF:\n{pdf_text}");
        }
    }
}

#[test]
fn a_section_with_nothing_in_it_is_left_out() {
    let p = approved_package();
    let parts = export::document(&p).unwrap();
    assert_eq!(empty_headings(&parts), Vec::<String>::new());
    let has = |parts: &[export::Part], name: &str| {
        parts.iter().any(|x| matches!(x, export::Part::Subheading(h) if h == name))
    };
    assert!(has(&parts, "Out of scope"));

    // No in-scope or out-of-scope items: those sub-headings are not printed, and nothing else is empty.
    let intake = intake();
    let mut q = Package::new(intake.clone());
    let bare = Scope { in_scope: vec![], out_of_scope: vec![], ..scope() };
    q.set_content(ArtifactKind::Scope, Content::Scope(bare), None).unwrap();
    q.set_content(ArtifactKind::Requirements, Content::Requirements(requirements()), None).unwrap();
    q.set_content(ArtifactKind::Criteria, Content::Criteria(criteria()), None).unwrap();
    q.set_content(ArtifactKind::Pricing, Content::Pricing(pricing()), None).unwrap();
    q.set_content(ArtifactKind::Milestones, Content::Milestones(milestones(&intake)), None).unwrap();
    q.revalidate().unwrap();
    assert_eq!(approve_all_valid(&mut q), 6);
    let parts = export::document(&q).unwrap();
    assert!(!has(&parts, "In scope") && !has(&parts, "Out of scope"));
    assert!(has(&parts, "Deliverables"));
    assert_eq!(empty_headings(&parts), Vec::<String>::new());
    let text = docx_text(&docx(&q).unwrap());
    assert!(!text.contains("Out of scope"), "{text}");
}

#[test]
fn the_instructions_to_bidders_come_from_the_package() {
    let p = approved_package();
    let text = docx_text(&docx(&p).unwrap());
    let dates = milestone_dates(&intake());
    let questions = export::deadline_for_people(dates[1].1);
    let submission = export::deadline_for_people(dates[2].1);
    assert!(submission.ends_with(" at 17:00 UTC") && submission.contains("2027"), "{submission}");
    for expected in [
        "3. Instructions to bidders",
        "Submit your proposal only through the vendor page, with the personal invitation link City of Northbridge",
        "a technical envelope",
        "a price envelope",
        "Envelopes stay sealed until the submission deadline",
        "Submissions received after the deadline are refused.",
        "the last one received counts",
        "Accepted file types: PDF, DOCX, XLSX, PNG, JPEG, TXT and CSV.",
        "macros, scripts, embedded files or attachments",
        export::CONTACT_PLACEHOLDER,
        "Your offer must remain valid for 90 days after the submission deadline",
        "Price envelopes are opened only after the technical evaluation is complete and locked.",
        "No automated system scores, ranks or recommends a vendor.",
        "Tracking: Tracking quality",
        "60.00 %",
        "40.00 %",
        "6. Terms of this request",
    ] {
        assert!(text.contains(expected), "{expected:?} missing:\n{text}");
    }
    assert!(text.contains(&format!("until {questions}")), "the question window in words:\n{text}");
    assert!(text.contains(&submission));
    assert!(!text.contains("2027-0"), "no ISO dates for people:\n{text}");

    // A contact in the intake replaces the placeholder.
    let mut q =
        complete_package_with(Intake { contact: Some("Ana Buyer, ana@northbridge.example".into()), ..intake() });
    assert_eq!(approve_all_valid(&mut q), 6);
    let text = docx_text(&docx(&q).unwrap());
    assert!(text.contains("Ana Buyer, ana@northbridge.example") && !text.contains(export::CONTACT_PLACEHOLDER));
}

fn complete_package_with(intake: Intake) -> Package {
    let mut p = Package::new(intake.clone());
    p.set_content(ArtifactKind::Scope, Content::Scope(scope()), None).unwrap();
    p.set_content(ArtifactKind::Requirements, Content::Requirements(requirements()), None).unwrap();
    p.set_content(ArtifactKind::Criteria, Content::Criteria(criteria()), None).unwrap();
    p.set_content(ArtifactKind::Pricing, Content::Pricing(pricing()), None).unwrap();
    p.set_content(ArtifactKind::Milestones, Content::Milestones(milestones(&intake)), None).unwrap();
    p.revalidate().unwrap();
    p
}

#[test]
fn the_response_and_pricing_forms_are_tables_with_blanks_to_fill() {
    let p = package_with_every_variant();
    let parts = export::document(&p).unwrap();
    let table_after = |heading: &str| {
        let at = parts.iter().position(|x| matches!(x, export::Part::Heading(h) if h == heading)).unwrap();
        parts[at..]
            .iter()
            .find_map(|x| match x {
                export::Part::Table(t) => Some(t.clone()),
                _ => None,
            })
            .unwrap()
    };
    let form_a = table_after("Form A: Response form");
    assert_eq!(form_a.header, ["Code", "Requirement", "Mandatory", "Your answer"]);
    assert_eq!(form_a.rows.len(), 8, "every requirement");
    assert_eq!(form_a.rows[0], ["R-01", "EU hosting", "Yes", ""]);
    assert_eq!(form_a.rows[1][2], "No (scored)");
    assert!(form_a.rows.iter().all(|r| r[3].is_empty()), "the answers are blank");

    let form_b = table_after("Form B: Pricing form");
    assert_eq!(form_b.header, ["Item", "Unit", "Pricing basis", "Quantity", "Unit price (EUR)", "Total (EUR)"]);
    assert_eq!(form_b.rows.len(), 5, "four lines and the total");
    assert_eq!(form_b.rows[1], ["P-02 Item 2", "vehicle-month", "price per unit", "12", "", ""]);
    assert_eq!(form_b.rows[2][3], "Your estimate", "a line without a quantity asks for the vendor's");
    assert_eq!(form_b.rows[4][0], "Total");
    assert!(form_b.rows.iter().all(|r| r[4].is_empty() && r[5].is_empty()), "prices are blank");
    // The forms start on their own pages.
    let form_at = parts.iter().position(|x| matches!(x, export::Part::Heading(h) if h.starts_with("Form A"))).unwrap();
    assert_eq!(parts[form_at - 1], export::Part::PageBreak);
}

#[test]
fn the_exported_pdf_is_a_document_of_several_pages() {
    let p = approved_package();
    let bytes = pdf(&p).unwrap();
    assert!(bytes.starts_with(b"%PDF-"));
    if poppler("pdfinfo") {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rfp.pdf");
        std::fs::write(&path, &bytes).unwrap();
        let out = std::process::Command::new("pdfinfo").arg(&path).output().unwrap();
        let info = String::from_utf8_lossy(&out.stdout);
        let pages: u32 =
            info.lines().find_map(|l| l.strip_prefix("Pages:")).and_then(|n| n.trim().parse().ok()).unwrap_or(0);
        eprintln!("the exported RFP of the test package: {pages} pages, {} bytes", bytes.len());
        if let Ok(dir) = std::env::var("PACTWISE_RFP_OUT") {
            std::fs::write(std::path::Path::new(&dir).join("rfp.pdf"), &bytes).unwrap();
            std::fs::write(std::path::Path::new(&dir).join("rfp.docx"), docx(&p).unwrap()).unwrap();
        }
        assert!(pages >= 4, "instructions, requirements, evaluation and the two forms: {pages} pages");
    }
}

#[test]
fn the_docx_holds_the_package_and_nothing_unapproved_exports() {
    let p = approved_package();
    let text = docx_text(&docx(&p).unwrap());
    for expected in
        ["Request for proposals: Fleet telematics", "R-02", "Scored", "Tracking: Tracking quality", "P-01 Device"]
    {
        assert!(text.contains(expected), "{expected} missing");
    }

    let mut unapproved = complete_package();
    unapproved
        .approve(ArtifactKind::Intake, &unapproved.artifacts.content_hash(ArtifactKind::Intake).unwrap())
        .unwrap();
    assert!(matches!(docx(&unapproved), Err(ExportError::NotApproved(v)) if v.len() == 5));
    assert!(matches!(pdf(&unapproved), Err(ExportError::NotApproved(_))));
    assert!(ocds_release(&unapproved, "x", 1, Utc::now()).is_err());
}
