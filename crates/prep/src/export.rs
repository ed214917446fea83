//! Exports of an approved package: the RFP a vendor can answer, as format-free parts ([`document`]) written as a
//! DOCX ([`docx`]) or a PDF ([`pdf`]) by `pactwise-docx`, and an OCDS 1.1 release (tag `tender`: items from the
//! pricing schedule, award criteria with their weights, periods and milestones from the computed dates, documents).
//! Export refuses a package the publish pre-check refuses.
//!
//! The RFP is generated in code from the artifacts, never by a model: what is bought (scope and needs), the
//! timeline, instructions to bidders (submission through the vendor page in two sealed envelopes, deadlines with
//! their time zone, questions, accepted files, the buyer's contact, validity of offers), the requirements, how
//! proposals are evaluated (criteria and weights; price opened after the technical evaluation; no automated
//! scoring), the terms of the request, and two forms (Form A, the response form; Form B, the pricing form). Every
//! enum is shown through `rules::prep::labels`; a section or sub-section with nothing in it is left out.

use crate::artifact::{Criteria, Intake, MilestoneKind, Milestones, Pricing, RequirementKind, Requirements, Scope};
use crate::package::Package;
use crate::validate::{GateViolation, precheck};
use chrono::{DateTime, Days, NaiveDate, Utc};
use pactwise_docx::{Block, Table};
use pactwise_rules::prep::calendar::DEADLINE_TIME_UTC;
use pactwise_rules::prep::{Label, category_label};
use serde_json::{Value, json};

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("the package is not ready to export: {}", .0.iter().map(|v| v.message.as_str()).collect::<Vec<_>>().join("; "))]
    NotApproved(Vec<GateViolation>),
    /// Writing the DOCX or the PDF failed (one variant for both, so callers matching on it need no change).
    #[error(transparent)]
    Docx(WriteError),
}

/// A writer's failure.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Docx(#[from] pactwise_docx::DocxError),
    #[error(transparent)]
    Pdf(#[from] pactwise_docx::pdf::PdfError),
}

impl From<pactwise_docx::DocxError> for ExportError {
    fn from(e: pactwise_docx::DocxError) -> Self {
        ExportError::Docx(e.into())
    }
}

impl From<pactwise_docx::pdf::PdfError> for ExportError {
    fn from(e: pactwise_docx::pdf::PdfError) -> Self {
        ExportError::Docx(e.into())
    }
}

/// How long offers must stay valid after the submission deadline, in calendar days.
pub const OFFER_VALIDITY_DAYS: u64 = 90;

/// The file types the vendor page accepts (the inspection's allowlist), as the RFP names them.
pub const ACCEPTED_FILE_TYPES: &str = "PDF, DOCX, XLSX, PNG, JPEG, TXT and CSV";

/// What the RFP says where the intake names no contact. The publish gate does not check the contact yet (see
/// `ARCHITECTURE.md`); the bracketed text makes the gap plain to whoever reads the export.
pub const CONTACT_PLACEHOLDER: &str =
    "[To be completed before publication: the name and email address of the person who answers vendors' questions]";

/// One part of the exported RFP, by its role (owned; [`blocks`] borrows them for the writers).
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Title(String),
    Heading(String),
    Subheading(String),
    Text(String),
    /// A label in bold, then its value.
    Field(String, String),
    Bullet(String),
    Table(Table),
    PageBreak,
}

fn require_approved(package: &Package) -> Result<(), ExportError> {
    let violations = precheck(&package.artifacts);
    if violations.is_empty() { Ok(()) } else { Err(ExportError::NotApproved(violations)) }
}

fn percent(bp: u32) -> String {
    format!("{}.{:02} %", bp / 100, bp % 100)
}

/// A day as people write it: "Monday 8 February 2027".
pub fn day_for_people(day: NaiveDate) -> String {
    day.format("%A %-d %B %Y").to_string()
}

/// A deadline as people read it, with its time and zone: "Monday 8 February 2027 at 17:00 UTC".
pub fn deadline_for_people(day: NaiveDate) -> String {
    format!("{} at {} UTC", day_for_people(day), DEADLINE_TIME_UTC.format("%H:%M"))
}

/// Parts under a heading: the heading only when something follows it.
struct Section {
    parts: Vec<Part>,
}

impl Section {
    fn new() -> Section {
        Section { parts: Vec::new() }
    }

    /// `heading` (as `make`s it) followed by `body`, or nothing when the body is empty.
    fn add(&mut self, heading: Part, body: Vec<Part>) {
        if !body.is_empty() {
            self.parts.push(heading);
            self.parts.extend(body);
        }
    }

    /// A sub-heading with bullets, or nothing when there are none.
    fn list(&mut self, heading: &str, items: impl IntoIterator<Item = String>) {
        let bullets: Vec<Part> = items.into_iter().filter(|t| !t.trim().is_empty()).map(Part::Bullet).collect();
        self.add(Part::Subheading(heading.into()), bullets);
    }

    fn text(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.trim().is_empty() {
            self.parts.push(Part::Text(text));
        }
    }
}

fn table(widths: &[u16], header: &[&str], rows: Vec<Vec<String>>) -> Part {
    Part::Table(Table { widths: widths.to_vec(), header: header.iter().map(|h| h.to_string()).collect(), rows })
}

/// The six artifacts of an approved package.
struct Approved<'p> {
    intake: &'p Intake,
    scope: &'p Scope,
    requirements: &'p Requirements,
    criteria: &'p Criteria,
    pricing: &'p Pricing,
    milestones: &'p Milestones,
}

/// The package's contents when every artifact is approved; else what stops the export.
fn approved(package: &Package) -> Result<Approved<'_>, ExportError> {
    require_approved(package)?;
    let a = &package.artifacts;
    match (
        &a.intake.content,
        &a.scope.content,
        &a.requirements.content,
        &a.criteria.content,
        &a.pricing.content,
        &a.milestones.content,
    ) {
        (Some(intake), Some(scope), Some(requirements), Some(criteria), Some(pricing), Some(milestones)) => {
            Ok(Approved { intake, scope, requirements, criteria, pricing, milestones })
        }
        _ => Err(ExportError::NotApproved(precheck(&package.artifacts))),
    }
}

/// The RFP as parts (approved packages only).
pub fn document(package: &Package) -> Result<Vec<Part>, ExportError> {
    let Approved { intake, scope, requirements, criteria, pricing, milestones } = approved(package)?;
    let buyer = intake.buyer.trim();
    let date_of = |kind: MilestoneKind| milestones.items.iter().find(|m| m.kind == kind).map(|m| m.date);
    let questions = date_of(MilestoneKind::QuestionsDeadline);
    let submission = date_of(MilestoneKind::SubmissionDeadline);
    let contact = intake.contact.as_deref().map(str::trim).filter(|c| !c.is_empty()).unwrap_or(CONTACT_PLACEHOLDER);

    let mut doc = Section::new();
    doc.parts.push(Part::Title(format!("Request for proposals: {}", intake.title.trim())));
    doc.parts.push(Part::Field("Issued by".into(), buyer.into()));
    doc.parts.push(Part::Field("Category".into(), category_label(&intake.category).into()));
    if let Some(day) = submission {
        doc.parts.push(Part::Field("Submission deadline".into(), deadline_for_people(day)));
    }
    if let Some(day) = questions {
        doc.parts.push(Part::Field("Questions until".into(), deadline_for_people(day)));
    }
    doc.parts.push(Part::Field("Contact".into(), contact.into()));
    doc.text(format!(
        "{buyer} invites you to submit a proposal. This document says what is bought, how and when to submit, how \
         proposals are evaluated, and holds the two forms to fill in: Form A, the response form, and Form B, the \
         pricing form."
    ));

    // 1. What is bought.
    let mut what = Section::new();
    what.text(scope.summary.trim());
    what.list("What we need", intake.needs.iter().map(|n| n.text.trim().to_string()));
    what.list("In scope", scope.in_scope.iter().cloned());
    what.list("Out of scope", scope.out_of_scope.iter().cloned());
    what.list("Deliverables", scope.deliverables.iter().cloned());
    doc.add(Part::Heading("1. What we are buying".into()), what.parts);

    // 2. Timeline.
    let mut timeline = Section::new();
    let rows: Vec<Vec<String>> = milestones
        .items
        .iter()
        .map(|m| {
            let when = match m.kind {
                MilestoneKind::QuestionsDeadline | MilestoneKind::SubmissionDeadline => deadline_for_people(m.date),
                MilestoneKind::Publication => day_for_people(m.date),
                _ => format!("{} (planned)", day_for_people(m.date)),
            };
            vec![m.kind.label().to_string(), when]
        })
        .collect();
    if !rows.is_empty() {
        timeline.parts.push(table(&[2, 3], &["Milestone", "Date"], rows));
        timeline.text(
            "The deadlines for questions and submissions change only by an extension announced to every invited \
             vendor on the vendor page. Dates after the submission deadline are planned. Times are Coordinated \
             Universal Time (UTC).",
        );
    }
    doc.add(Part::Heading("2. Timeline".into()), timeline.parts);

    // 3. Instructions to bidders.
    let mut instructions = Section::new();
    let submission_words = submission.map_or_else(|| "the submission deadline".to_string(), deadline_for_people);
    instructions.list(
        "How to submit",
        [
            format!(
                "Submit your proposal only through the vendor page, with the personal invitation link {buyer} \
                 sends you. Proposals sent by email, post or any other way are not accepted."
            ),
            "Submit two envelopes separately: a technical envelope (Form A with your answers, and any supporting \
             files) and a price envelope (Form B with your prices). Put no price in the technical envelope."
                .to_string(),
            format!(
                "Envelopes stay sealed until the submission deadline ({submission_words}): nobody, {buyer} included, \
                 can open them before then."
            ),
            "Submissions received after the deadline are refused.".to_string(),
            "Until the deadline you may replace your submission as often as you need; the last one received counts."
                .to_string(),
        ],
    );
    let mut questions_section = Section::new();
    if let Some(day) = questions {
        questions_section.text(format!(
            "Ask questions about this request on the vendor page until {}. Answers are published to every invited \
             vendor, without the name of who asked. Questions received later may go unanswered.",
            deadline_for_people(day)
        ));
    }
    instructions.add(Part::Subheading("Questions".into()), questions_section.parts);
    instructions.add(
        Part::Subheading("Files".into()),
        vec![Part::Text(format!(
            "Accepted file types: {ACCEPTED_FILE_TYPES}. Each file is checked when it is uploaded: files with macros, \
             scripts, embedded files or attachments, or that cannot be read completely, are refused with the reason \
             shown, and do not count as submitted. Upload a clean version before the deadline."
        ))],
    );
    instructions.add(
        Part::Subheading("Contact".into()),
        vec![
            Part::Field("Contact for this request".into(), contact.into()),
            Part::Text(format!(
                "Ask questions on the vendor page rather than by email, so that every vendor gets the same answers. \
                 Do not contact other staff of {buyer} about this request while it is open."
            )),
        ],
    );
    let mut validity = Section::new();
    if let Some(until) = submission.and_then(|day| day.checked_add_days(Days::new(OFFER_VALIDITY_DAYS))) {
        validity.text(format!(
            "Your offer must remain valid for {OFFER_VALIDITY_DAYS} days after the submission deadline, that is until \
             {}.",
            day_for_people(until)
        ));
    }
    instructions.add(Part::Subheading("Validity of offers".into()), validity.parts);
    instructions.add(
        Part::Subheading("Prices".into()),
        vec![Part::Text(format!(
            "Quote every price in {} in Form B, for every line, and only there.",
            pricing.currency.trim()
        ))],
    );
    doc.add(Part::Heading("3. Instructions to bidders".into()), instructions.parts);

    // 4. Requirements.
    let rows: Vec<Vec<String>> = requirements
        .items
        .iter()
        .map(|r| {
            let checked = match &r.measure {
                Some(m) => {
                    format!("{}: {}, verified by {}", m.metric.trim(), m.threshold.trim(), m.verification.label())
                }
                None if r.kind == RequirementKind::Mandatory => "Met or not met, from your answer".to_string(),
                None => "From your answer".to_string(),
            };
            vec![r.code.clone(), r.text.trim().to_string(), r.kind.label().to_string(), checked]
        })
        .collect();
    let mut reqs = Section::new();
    if !rows.is_empty() {
        reqs.text(
            "Mandatory requirements are pass or fail: a proposal that does not meet one is not evaluated further. \
             Scored requirements are scored under the criteria of section 5. Answer each one in Form A.",
        );
        reqs.parts.push(table(&[2, 6, 3, 5], &["Code", "Requirement", "Type", "How it is checked"], rows));
    }
    doc.add(Part::Heading("4. Requirements".into()), reqs.parts);

    // 5. Evaluation.
    let mut evaluation = Section::new();
    evaluation.list(
        "How evaluation works",
        [
            "The technical envelopes are opened after the submission deadline and checked against the mandatory \
             requirements."
                .to_string(),
            format!(
                "Evaluators of {buyer} score each criterion below by hand, each score with a written reason; the \
                 weighted total is computed from the weights below."
            ),
            "Price envelopes are opened only after the technical evaluation is complete and locked.".to_string(),
            format!(
                "No automated system scores, ranks or recommends a vendor. The award is a decision of people at \
                 {buyer}, recorded with its reason."
            ),
        ],
    );
    let rows: Vec<Vec<String>> = criteria
        .criteria
        .iter()
        .map(|c| {
            let assessed = [c.name.trim(), c.description.trim()]
                .into_iter()
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(": ");
            vec![c.id.clone(), assessed, percent(c.weight_bp), c.requirement_codes.join(", ")]
        })
        .collect();
    if !rows.is_empty() {
        evaluation.add(
            Part::Subheading("Criteria and weights".into()),
            vec![table(&[2, 6, 2, 3], &["Criterion", "What is assessed", "Weight", "Requirements"], rows)],
        );
    }
    doc.add(Part::Heading("5. How proposals are evaluated".into()), evaluation.parts);

    // 6. Terms.
    let terms: Vec<Part> = [
        "This request is an invitation to submit proposals, not an offer to contract. A contract exists only once \
         signed by both parties after the award."
            .to_string(),
        "Vendors bear their own costs of preparing and submitting a proposal.".to_string(),
        format!(
            "{buyer} may clarify, extend or cancel this request; every invited vendor is told of a change at the same \
             time on the vendor page."
        ),
        format!("{buyer} keeps the contents of proposals confidential and uses them only to evaluate this request."),
        "By submitting, a vendor confirms that the information in its proposal is accurate and complete.".to_string(),
    ]
    .into_iter()
    .map(Part::Bullet)
    .collect();
    doc.add(Part::Heading("6. Terms of this request".into()), terms);

    // Form A.
    let rows: Vec<Vec<String>> = requirements
        .items
        .iter()
        .map(|r| {
            let mandatory = if r.kind == RequirementKind::Mandatory { "Yes" } else { "No (scored)" };
            vec![r.code.clone(), r.text.trim().to_string(), mandatory.to_string(), String::new()]
        })
        .collect();
    if !rows.is_empty() {
        doc.parts.push(Part::PageBreak);
        doc.add(
            Part::Heading("Form A: Response form".into()),
            vec![
                Part::Text(
                    "Answer every requirement in the column \u{201c}Your answer\u{201d}; name any supporting file you \
                     upload. A mandatory requirement left unanswered counts as not met. This form goes in the \
                     technical envelope."
                        .into(),
                ),
                table(&[2, 6, 2, 6], &["Code", "Requirement", "Mandatory", "Your answer"], rows),
            ],
        );
    }

    // Form B.
    let currency = pricing.currency.trim();
    let mut rows: Vec<Vec<String>> = pricing
        .lines
        .iter()
        .map(|line| {
            vec![
                format!("{} {}", line.code, line.description.trim()),
                line.unit.trim().to_string(),
                line.basis.map(|b| b.label().to_string()).unwrap_or_default(),
                line.quantity.map(|q| q.to_string()).unwrap_or_else(|| "Your estimate".into()),
                String::new(),
                String::new(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        rows.push(vec!["Total".into(), String::new(), String::new(), String::new(), String::new(), String::new()]);
        doc.parts.push(Part::PageBreak);
        let unit_price = format!("Unit price ({currency})");
        let total = format!("Total ({currency})");
        doc.add(
            Part::Heading("Form B: Pricing form".into()),
            vec![
                Part::Text(format!(
                    "All prices in {currency}. Fill in the unit price and the line total (unit price \u{d7} \
                     quantity) of every line, and the total. This form goes in the price envelope only."
                )),
                table(&[5, 3, 3, 2, 3, 3], &["Item", "Unit", "Pricing basis", "Quantity", &unit_price, &total], rows),
            ],
        );
    }
    Ok(doc.parts)
}

/// The parts as the writers' blocks.
pub fn blocks(parts: &[Part]) -> Vec<Block<'_>> {
    parts
        .iter()
        .map(|part| match part {
            Part::Title(t) => Block::Title(t),
            Part::Heading(t) => Block::Heading(t),
            Part::Subheading(t) => Block::Subheading(t),
            Part::Text(t) => Block::Text(t),
            Part::Field(label, value) => Block::Field(label, value),
            Part::Bullet(t) => Block::Bullet(t),
            Part::Table(table) => Block::Table(table),
            Part::PageBreak => Block::PageBreak,
        })
        .collect()
}

/// The RFP as a DOCX file.
pub fn docx(package: &Package) -> Result<Vec<u8>, ExportError> {
    let parts = document(package)?;
    Ok(pactwise_docx::write(&blocks(&parts))?)
}

/// The RFP as a PDF file.
pub fn pdf(package: &Package) -> Result<Vec<u8>, ExportError> {
    let parts = document(package)?;
    Ok(pactwise_docx::pdf::write(&blocks(&parts))?)
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
    let Approved { intake, scope, requirements, criteria, pricing, milestones } = approved(package)?;
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
