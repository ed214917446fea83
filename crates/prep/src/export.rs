//! Exports of an approved package: the document as format-free lines (the api renders them to PDF), a DOCX
//! (`pactwise-docx`), and an OCDS 1.1 release (tag `tender`:
//! items from the pricing schedule, award criteria with their weights, periods and milestones from the computed
//! dates, documents). Export refuses a package the publish pre-check refuses.

use crate::artifact::{MilestoneKind, RequirementKind};
use crate::package::Package;
use crate::validate::{GateViolation, precheck};
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Value, json};

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("the package is not ready to export: {}", .0.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("; "))]
    NotApproved(Vec<GateViolation>),
    #[error(transparent)]
    Docx(#[from] pactwise_docx::DocxError),
}

/// One line of the exported document, with its weight.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Title(String),
    Heading(String),
    Text(String),
    Bullet(String),
}

fn require_approved(package: &Package) -> Result<(), ExportError> {
    let violations = precheck(&package.artifacts);
    if violations.is_empty() { Ok(()) } else { Err(ExportError::NotApproved(violations)) }
}

fn percent(bp: u32) -> String {
    format!("{}.{:02} %", bp / 100, bp % 100)
}

/// The RFP as lines (approved packages only).
pub fn document_lines(package: &Package) -> Result<Vec<Line>, ExportError> {
    require_approved(package)?;
    let a = &package.artifacts;
    let mut lines = Vec::new();
    if let Some(i) = &a.intake.content {
        lines.push(Line::Title(format!("Request for proposals: {}", i.title)));
        lines.push(Line::Text(format!("Issued by {}", i.buyer)));
        lines.push(Line::Heading("Needs".into()));
        lines.extend(i.needs.iter().map(|n| Line::Bullet(format!("{}: {}", n.id, n.text))));
    }
    if let Some(s) = &a.scope.content {
        lines.push(Line::Heading("Scope".into()));
        lines.push(Line::Text(s.summary.clone()));
        lines.push(Line::Text("In scope:".into()));
        lines.extend(s.in_scope.iter().map(|x| Line::Bullet(x.clone())));
        lines.push(Line::Text("Out of scope:".into()));
        lines.extend(s.out_of_scope.iter().map(|x| Line::Bullet(x.clone())));
        lines.push(Line::Text("Deliverables:".into()));
        lines.extend(s.deliverables.iter().map(|x| Line::Bullet(x.clone())));
    }
    if let Some(r) = &a.requirements.content {
        lines.push(Line::Heading("Requirements".into()));
        for item in &r.items {
            let kind = match item.kind {
                RequirementKind::Mandatory => "mandatory",
                RequirementKind::Scored => "scored",
            };
            lines.push(Line::Bullet(format!("{} ({kind}): {}", item.code, item.text)));
            if let Some(m) = &item.measure {
                lines.push(Line::Text(format!(
                    "Measured by {}; threshold {}; verified by {:?}",
                    m.metric, m.threshold, m.verification
                )));
            }
        }
    }
    if let Some(c) = &a.criteria.content {
        lines.push(Line::Heading("Evaluation criteria".into()));
        for criterion in &c.criteria {
            lines.push(Line::Bullet(format!(
                "{} {} — {} (requirements {})",
                criterion.id,
                criterion.name,
                percent(criterion.weight_bp),
                criterion.requirement_codes.join(", ")
            )));
            lines.push(Line::Text(criterion.description.clone()));
        }
    }
    if let Some(p) = &a.pricing.content {
        lines.push(Line::Heading(format!("Pricing schedule ({})", p.currency)));
        for line in &p.lines {
            let qty = line.quantity.map(|q| format!("{q} × ")).unwrap_or_default();
            let basis = line.basis.map(|b| format!(", {b:?}")).unwrap_or_default();
            lines.push(Line::Bullet(format!("{}: {} — {qty}{}{basis}", line.code, line.description, line.unit)));
        }
    }
    if let Some(m) = &a.milestones.content {
        lines.push(Line::Heading("Timeline".into()));
        for milestone in &m.items {
            lines.push(Line::Bullet(format!("{}: {}", milestone.kind.title(), milestone.date)));
            lines.push(Line::Text(milestone.rationale.clone()));
        }
    }
    Ok(lines)
}

/// The RFP as a DOCX file.
pub fn docx(package: &Package) -> Result<Vec<u8>, ExportError> {
    let lines = document_lines(package)?;
    let blocks: Vec<pactwise_docx::Block<'_>> = lines
        .iter()
        .map(|line| match line {
            Line::Title(t) => pactwise_docx::Block::Title(t),
            Line::Heading(t) => pactwise_docx::Block::Heading(t),
            Line::Text(t) => pactwise_docx::Block::Text(t),
            Line::Bullet(t) => pactwise_docx::Block::Bullet(t),
        })
        .collect();
    Ok(pactwise_docx::write(&blocks)?)
}

fn at_midnight(day: NaiveDate) -> String {
    format!("{day}T00:00:00Z")
}

/// The milestone type of the OCDS `milestoneType` codelist.
fn ocds_milestone_type(kind: MilestoneKind) -> &'static str {
    match kind {
        MilestoneKind::Publication | MilestoneKind::QuestionsDeadline | MilestoneKind::SubmissionDeadline => {
            "engagement"
        }
        MilestoneKind::Evaluation => "assessment",
        MilestoneKind::Award => "approval",
        MilestoneKind::ContractStart => "delivery",
    }
}

/// An OCDS 1.1 release (tag `tender`) of an approved package. `package_id` makes the `ocid`; `at` is the release
/// date.
pub fn ocds_release(
    package: &Package,
    package_id: &str,
    version: u32,
    at: DateTime<Utc>,
) -> Result<Value, ExportError> {
    require_approved(package)?;
    let a = &package.artifacts;
    let (Some(intake), Some(scope), Some(requirements), Some(criteria), Some(pricing), Some(milestones)) = (
        &a.intake.content,
        &a.scope.content,
        &a.requirements.content,
        &a.criteria.content,
        &a.pricing.content,
        &a.milestones.content,
    ) else {
        return Err(ExportError::NotApproved(precheck(&package.artifacts)));
    };
    let date_of = |kind: MilestoneKind| milestones.items.iter().find(|m| m.kind == kind).map(|m| at_midnight(m.date));
    let buyer = json!({"id": "buyer", "name": intake.buyer});
    let items: Vec<Value> = pricing
        .lines
        .iter()
        .map(|line| {
            let mut item = json!({"id": line.code, "description": line.description, "unit": {"name": line.unit}});
            if let Some(q) = line.quantity {
                item["quantity"] = json!(q);
            }
            item
        })
        .collect();
    let award_details = criteria
        .criteria
        .iter()
        .map(|c| format!("{} {}: weight {} ({})", c.id, c.name, percent(c.weight_bp), c.requirement_codes.join(", ")))
        .collect::<Vec<_>>()
        .join("; ");
    let eligibility = requirements
        .items
        .iter()
        .filter(|r| r.kind == RequirementKind::Mandatory)
        .map(|r| format!("{}: {}", r.code, r.text))
        .collect::<Vec<_>>()
        .join("\n");
    let ocds_milestones: Vec<Value> = milestones
        .items
        .iter()
        .map(|m| {
            json!({
                "id": m.kind.as_str(),
                "title": m.kind.title(),
                "type": ocds_milestone_type(m.kind),
                "code": m.kind.as_str(),
                "description": m.rationale,
                "dueDate": at_midnight(m.date),
                "status": "scheduled",
            })
        })
        .collect();
    let category = match intake.category.as_str() {
        c @ ("goods" | "services" | "works") => c,
        _ => "services",
    };
    let mut tender = json!({
        "id": format!("{package_id}-tender"),
        "title": intake.title,
        "description": scope.summary,
        "status": "planned",
        "procuringEntity": buyer,
        "items": items,
        "procurementMethod": "open",
        "mainProcurementCategory": category,
        "awardCriteria": "ratedCriteria",
        "awardCriteriaDetails": award_details,
        "submissionMethod": ["electronicSubmission"],
        "enquiryPeriod": {"startDate": date_of(MilestoneKind::Publication), "endDate": date_of(MilestoneKind::QuestionsDeadline)},
        "tenderPeriod": {"startDate": date_of(MilestoneKind::Publication), "endDate": date_of(MilestoneKind::SubmissionDeadline)},
        "awardPeriod": {"startDate": date_of(MilestoneKind::SubmissionDeadline), "endDate": date_of(MilestoneKind::Award)},
        "contractPeriod": {"startDate": date_of(MilestoneKind::ContractStart)},
        "eligibilityCriteria": eligibility,
        "documents": [
            {"id": "rfp", "documentType": "tenderNotice", "title": format!("Request for proposals: {}", intake.title),
             "format": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "language": "en"},
            {"id": "evaluation-criteria", "documentType": "evaluationCriteria", "title": "Evaluation criteria",
             "description": award_details, "language": "en"},
            {"id": "pricing-schedule", "documentType": "billOfQuantity", "title": "Pricing schedule", "language": "en"},
        ],
        "milestones": ocds_milestones,
    });
    if let Some(ceiling) = intake.budget_ceiling_minor {
        tender["value"] = json!({"amount": ceiling as f64 / 100.0, "currency": intake.currency});
    }
    Ok(json!({
        "ocid": format!("ocds-pwdesk-{package_id}"),
        "id": format!("{package_id}-tender-v{version}"),
        "date": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "tag": ["tender"],
        "initiationType": "tender",
        "language": "en",
        "parties": [{"id": "buyer", "name": intake.buyer, "roles": ["buyer", "procuringEntity"]}],
        "buyer": {"id": "buyer", "name": intake.buyer},
        "tender": tender,
    }))
}
