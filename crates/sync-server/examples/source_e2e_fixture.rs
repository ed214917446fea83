//! Writes what the vendor page's browser test (`tests/e2e/vendor.test.mjs`) needs and node cannot make faithfully:
//! `source_e2e_fixture DIR PUBLICATION_DATE` → `DIR/artifacts.json` (an RFP package whose six artifacts are valid
//! and approved, hashed by the rules the service checks, published on PUBLICATION_DATE, `YYYY-MM-DD`),
//! `DIR/opening.json` (a buyer's opening key pair, as the desktop keeps it), and files from the inspector's clean
//! corpus builders: `offer.pdf`, `approach.docx`, and the hostile `brochure.pdf` (a PDF that runs JavaScript).

use anyhow::Context as _;
use chrono::NaiveDate;
use pactwise_inspect::corpus::{Ooxml, PdfBuilder};
use pactwise_rules::prep::{
    ArtifactKind, ArtifactState, Artifacts, Criteria, Intake, Milestones, Pricing, Requirements, Scope, content_hash,
    milestones_with_rationales,
};
use pactwise_source::envelope::KeyPair;
use serde_json::json;

fn approved_artifacts(publication: NaiveDate) -> anyhow::Result<Artifacts> {
    let intake: Intake = serde_json::from_value(json!({
        "title": "Fleet telematics", "buyer": "City of Northbridge", "brief": "GPS tracking for 120 vehicles.",
        "needs": [{"id": "N1", "text": "Live vehicle positions"}], "category": "services", "currency": "EUR",
        "budget_ceiling_minor": 18000000,
        "timeline": {"publication": publication, "question_days": 2, "submission_days": 5, "evaluation_days": 10,
                     "award_days": 5, "contract_start_days": 10},
        "holidays": []
    }))?;
    let mut a = Artifacts::default();
    a.milestones.content =
        Some(Milestones { items: milestones_with_rationales(&intake, |_| Some("Enough time.".into())) });
    a.intake.content = Some(intake);
    a.scope.content = Some(serde_json::from_value::<Scope>(json!({
        "summary": "Telematics for 120 vehicles.", "in_scope": ["Devices"], "out_of_scope": ["Repairs"],
        "deliverables": ["Installed devices"], "need_ids": ["N1"]
    }))?);
    a.requirements.content = Some(serde_json::from_value::<Requirements>(json!({"items": [
        {"code": "R-01", "text": "EU hosting", "kind": "mandatory", "need_ids": [], "measure": null},
        {"code": "R-02", "text": "Position updates", "kind": "scored", "need_ids": ["N1"],
         "measure": {"metric": "update interval", "threshold": "<= 30 s", "verification": "test"}}
    ]}))?);
    a.criteria.content = Some(serde_json::from_value::<Criteria>(json!({"criteria": [
        {"id": "C1", "name": "Tracking", "description": "Tracking quality", "weight_bp": 10000, "requirement_codes": ["R-02"]}
    ]}))?);
    a.pricing.content = Some(serde_json::from_value::<Pricing>(json!({"currency": "EUR", "lines": [
        {"code": "P-01", "description": "Device", "unit": "vehicle", "quantity": 120, "basis": "per_unit", "open_amount": false}
    ]}))?);
    for kind in ArtifactKind::ALL {
        let hash = content_hash(&a.content_json(kind).context("an artifact without content")?);
        let (state, stamp) = (ArtifactState::Approved { hash: hash.clone() }, Some(hash));
        match kind {
            ArtifactKind::Intake => (a.intake.state, a.intake.content_hash) = (state, stamp),
            ArtifactKind::Scope => (a.scope.state, a.scope.content_hash) = (state, stamp),
            ArtifactKind::Requirements => (a.requirements.state, a.requirements.content_hash) = (state, stamp),
            ArtifactKind::Criteria => (a.criteria.state, a.criteria.content_hash) = (state, stamp),
            ArtifactKind::Pricing => (a.pricing.state, a.pricing.content_hash) = (state, stamp),
            ArtifactKind::Milestones => (a.milestones.state, a.milestones.content_hash) = (state, stamp),
        }
    }
    Ok(a)
}

fn main() -> anyhow::Result<()> {
    let mut arguments = std::env::args().skip(1);
    let (Some(dir), Some(date)) = (arguments.next(), arguments.next()) else {
        anyhow::bail!("usage: source_e2e_fixture DIR PUBLICATION_DATE (YYYY-MM-DD)");
    };
    let dir = std::path::PathBuf::from(dir);
    let publication = NaiveDate::parse_from_str(&date, "%Y-%m-%d").context("PUBLICATION_DATE is YYYY-MM-DD")?;
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("artifacts.json"), serde_json::to_vec_pretty(&approved_artifacts(publication)?)?)?;
    let opening = KeyPair::generate();
    let keys = json!({"public": opening.public(), "secret": hex::encode(opening.secret_bytes())});
    std::fs::write(dir.join("opening.json"), serde_json::to_vec_pretty(&keys)?)?;
    std::fs::write(dir.join("offer.pdf"), PdfBuilder::new(3).build())?;
    let docx = Ooxml::docx()
        .body("<w:p><w:r><w:t>Our approach: positions every 20 seconds, hosted in Frankfurt.</w:t></w:r></w:p>");
    std::fs::write(dir.join("approach.docx"), docx.build())?;
    let hostile = PdfBuilder::new(1).catalog_entry("/OpenAction << /S /JavaScript /JS (app.alert(1)) >>").build();
    std::fs::write(dir.join("brochure.pdf"), hostile)?;
    Ok(())
}
