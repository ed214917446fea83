//! What an approver reads: the evidence an approval step recorded when it paused (`state_seen`), shaped per graph
//! and step into a typed view the UI only renders — the procurement shortlist as a table, a contract's risk with
//! its red flags, a report's clauses, an invoice's mismatches, a budget by department, a vendor's checks — with
//! links that open the contract, the report or the Prep package. Anything else falls back to labelled rows in
//! words. Never JSON, never ids on screen (a link carries its id; the UI shows its label).

use crate::run_words::{humanize, value_words};
use pactwise_domain::{ContractReport, DocumentId, ReportCompleteness};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a link in the evidence leads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum LinkTarget {
    /// The contract's review view, at a page when one is known.
    Contract { document: DocumentId, page: Option<u32> },
    /// The document's contract review report.
    Report { document: DocumentId },
    /// A Prep Studio package.
    PrepPackage { package: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct EvidenceLink {
    pub label: String,
    /// The name of what it opens (the view's title).
    pub name: String,
    pub target: LinkTarget,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ShortlistRow {
    pub name: String,
    pub price: String,
    /// "10 days", or "—" when the vendor gave none.
    pub delivery: String,
    pub capabilities: Vec<String>,
}

/// The procurement shortlist: the request, the budget and the vendors that fit, alphabetical, never ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ShortlistEvidence {
    pub request: String,
    pub budget: String,
    pub required: Vec<String>,
    pub vendors: Vec<ShortlistRow>,
    /// Vendors left out and why ("Initech: over the budget").
    pub left_out: Vec<String>,
    /// How the shortlist was made, in words.
    pub method: String,
}

/// A contract's risk with its red flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ContractRiskEvidence {
    pub contract: String,
    pub value: String,
    /// "High risk" or "Standard risk".
    pub level: String,
    pub high: bool,
    pub reasons: Vec<String>,
    pub red_flags: Vec<String>,
    pub link: Option<EvidenceLink>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ClauseRow {
    pub text: String,
    pub page: u32,
    pub link: EvidenceLink,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ClauseTypeRow {
    /// The playbook's question for this clause type.
    pub question: String,
    pub section: String,
    /// "critical", "high", "medium", "low".
    pub risk: String,
    pub clauses: Vec<ClauseRow>,
}

/// A contract review report's clauses, as the sign-off step saw them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ReportEvidence {
    pub contract_type: String,
    pub complete: bool,
    /// "Complete", or what was left unprocessed.
    pub completeness: String,
    pub clause_types: Vec<ClauseTypeRow>,
    /// Clause types with no clause found.
    pub without_clause: u32,
    /// Extractions refused because their text is not on the page they cite.
    pub rejected: u32,
    pub unprocessed: Vec<String>,
    pub link: EvidenceLink,
}

/// An invoice's three-way match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct InvoiceEvidence {
    pub invoice: String,
    pub total: String,
    pub matched: bool,
    pub exceptions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AmountRow {
    pub label: String,
    pub amount: String,
}

/// A budget plan by department.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct BudgetEvidence {
    pub year: String,
    pub departments: Vec<AmountRow>,
    pub total: String,
    pub previous_total: Option<String>,
    /// "+12.50 %".
    pub change: Option<String>,
    pub cap: Option<String>,
    pub over_cap: bool,
}

/// A new vendor's documents and screening.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct VendorEvidence {
    pub vendor: String,
    pub tax_id: Option<String>,
    pub provided: Vec<String>,
    pub missing: Vec<String>,
    /// "Clear" or "Flagged".
    pub screening: String,
    pub flagged: bool,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct EvidenceRow {
    pub label: String,
    pub text: String,
}

/// Evidence of a step without a view of its own: labelled rows in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct GenericEvidence {
    pub rows: Vec<EvidenceRow>,
    pub links: Vec<EvidenceLink>,
}

/// The evidence of an approval, shaped for reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalEvidence {
    Shortlist(ShortlistEvidence),
    ContractRisk(ContractRiskEvidence),
    ReportClauses(ReportEvidence),
    InvoiceMatch(InvoiceEvidence),
    BudgetPlan(BudgetEvidence),
    VendorCheck(VendorEvidence),
    Generic(GenericEvidence),
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        other => value_words(other),
    }
}

fn words(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().map(text).filter(|t| !t.is_empty()).collect()).unwrap_or_default()
}

fn opt(v: &Value) -> Option<String> {
    Some(text(v)).filter(|t| !t.is_empty())
}

/// Shapes the evidence an approval recorded; a shape that does not fit its view falls back to rows.
pub fn shape_evidence(graph: &str, node: &str, seen: &Value) -> ApprovalEvidence {
    let shaped = match (graph, node) {
        ("procurement", "choose_vendor") => shortlist(seen),
        ("contract_lifecycle", _) => contract_risk(seen),
        ("contract_review_report", "sign_off") => report(seen),
        ("invoice_processing", _) => invoice(seen),
        ("budget_planning", _) => budget(seen),
        ("vendor_onboarding", _) => vendor(seen),
        _ => None,
    };
    shaped.unwrap_or_else(|| generic(seen))
}

fn shortlist(seen: &Value) -> Option<ApprovalEvidence> {
    let input = &seen["input"];
    let analysis = &seen["analysis"];
    let vendors = seen["shortlist"]
        .as_array()?
        .iter()
        .map(|v| ShortlistRow {
            name: text(&v["name"]),
            price: text(&v["price"]),
            delivery: v["lead_days"].as_i64().map_or_else(|| "—".into(), |d| format!("{d} days")),
            capabilities: words(&v["capabilities"]).into_iter().map(|c| humanize(&c)).collect(),
        })
        .collect();
    let mut left_out: Vec<String> =
        words(&analysis["over_budget"]).into_iter().map(|n| format!("{n}: over the budget")).collect();
    if let Some(missing) = analysis["missing_capabilities"].as_object() {
        for (name, lacks) in missing {
            let lacks: Vec<String> = words(lacks).into_iter().map(|c| humanize(&c).to_lowercase()).collect();
            left_out.push(format!("{name}: lacks {}", lacks.join(", ")));
        }
    }
    Some(ApprovalEvidence::Shortlist(ShortlistEvidence {
        request: text(&input["request"]),
        budget: opt(&analysis["budget"]).unwrap_or_else(|| text(&input["budget"])),
        required: words(&analysis["required_capabilities"]).into_iter().map(|c| humanize(&c)).collect(),
        vendors,
        left_out,
        method: "Shortlisted by code: a price within the budget and every required capability. Listed \
                 alphabetically; nothing ranks the vendors, you choose."
            .into(),
    }))
}

fn document_link(v: &Value, label: &str, name: &str) -> Option<EvidenceLink> {
    let document: DocumentId = v.as_str()?.parse().ok()?;
    Some(EvidenceLink { label: label.into(), name: name.into(), target: LinkTarget::Contract { document, page: None } })
}

fn contract_risk(seen: &Value) -> Option<ApprovalEvidence> {
    let contract = &seen["input"]["contract"];
    let risk = seen.get("risk")?.as_object()?;
    let high = risk.get("level").and_then(Value::as_str) == Some("high");
    let title = opt(&contract["title"]).unwrap_or_else(|| "The contract".into());
    Some(ApprovalEvidence::ContractRisk(ContractRiskEvidence {
        link: document_link(&contract["document"], "Open the contract", &title),
        contract: title,
        value: text(&risk["value"]),
        level: if high { "High risk" } else { "Standard risk" }.into(),
        high,
        reasons: words(&risk["reasons"]),
        red_flags: words(&risk["flags"]).into_iter().map(|f| humanize(&f)).collect(),
    }))
}

fn report(seen: &Value) -> Option<ApprovalEvidence> {
    let report: ContractReport = serde_json::from_value(seen.get("report")?.clone()).ok()?;
    let document = report.document;
    let name = report.contract_type_name.clone();
    let clause_link = |page: u32| EvidenceLink {
        label: format!("page {page}"),
        name: name.clone(),
        target: LinkTarget::Contract { document, page: Some(page) },
    };
    let with_clauses: Vec<ClauseTypeRow> = report
        .clause_types
        .iter()
        .filter(|t| !t.clauses.is_empty())
        .map(|t| ClauseTypeRow {
            question: t.question.clone(),
            section: t.section.clone(),
            risk: serde_json::to_value(t.risk).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
            clauses: t
                .clauses
                .iter()
                .map(|c| ClauseRow { text: c.text.clone(), page: c.page, link: clause_link(c.page) })
                .collect(),
        })
        .collect();
    let complete = matches!(report.completeness, ReportCompleteness::Complete);
    Some(ApprovalEvidence::ReportClauses(ReportEvidence {
        contract_type: report.contract_type_name.clone(),
        complete,
        completeness: if complete {
            "Complete: every window of pages and every clause type was processed".into()
        } else {
            format!("Incomplete: {} part(s) left unprocessed", report.unprocessed.len())
        },
        without_clause: report.clause_types.iter().filter(|t| t.processed && t.clauses.is_empty()).count() as u32,
        rejected: report.rejected.len() as u32,
        unprocessed: report.unprocessed.iter().map(|u| u.label.clone()).collect(),
        clause_types: with_clauses,
        link: EvidenceLink { label: "Open the report".into(), name, target: LinkTarget::Report { document } },
    }))
}

fn invoice(seen: &Value) -> Option<ApprovalEvidence> {
    let matched = seen.get("match")?.as_object()?;
    Some(ApprovalEvidence::InvoiceMatch(InvoiceEvidence {
        invoice: opt(&seen["input"]["invoice"]["number"]).unwrap_or_else(|| "The invoice".into()),
        total: text(&matched.get("invoice_total").cloned().unwrap_or_default()),
        matched: matched.get("status").and_then(Value::as_str) == Some("matched"),
        exceptions: words(matched.get("exceptions").unwrap_or(&Value::Null)),
    }))
}

fn budget(seen: &Value) -> Option<ApprovalEvidence> {
    let plan = seen.get("plan")?.as_object()?;
    let departments = plan
        .get("departments")
        .and_then(Value::as_object)
        .map(|d| d.iter().map(|(k, v)| AmountRow { label: k.clone(), amount: text(v) }).collect())
        .unwrap_or_default();
    let field = |k: &str| plan.get(k).and_then(opt);
    Some(ApprovalEvidence::BudgetPlan(BudgetEvidence {
        year: field("year").unwrap_or_default(),
        departments,
        total: field("total").unwrap_or_default(),
        previous_total: field("previous_total"),
        change: field("change_pct").map(|c| if c.starts_with('-') { format!("{c} %") } else { format!("+{c} %") }),
        cap: field("cap"),
        over_cap: plan.get("over_cap").and_then(Value::as_bool).unwrap_or(false),
    }))
}

fn vendor(seen: &Value) -> Option<ApprovalEvidence> {
    let vendor = &seen["input"]["vendor"];
    let screening = seen.get("screening")?.as_object()?;
    let flagged = screening.get("status").and_then(Value::as_str) == Some("flagged");
    let documents = &seen["documents"];
    let provided = if documents.is_null() { words(&vendor["documents"]) } else { words(&documents["provided"]) };
    Some(ApprovalEvidence::VendorCheck(VendorEvidence {
        vendor: text(&vendor["name"]),
        tax_id: opt(&vendor["tax_id"]),
        provided: provided.into_iter().map(|d| humanize(&d)).collect(),
        missing: words(&documents["missing"]).into_iter().map(|d| humanize(&d)).collect(),
        screening: if flagged { "Flagged" } else { "Clear" }.into(),
        flagged,
        reasons: words(screening.get("reasons").unwrap_or(&Value::Null)),
    }))
}

/// Any evidence as labelled rows: one per field (nested fields as "Input · Budget"), values in words; a field
/// naming a document or a Prep package becomes a link.
fn generic(seen: &Value) -> ApprovalEvidence {
    fn walk(prefix: &str, key: &str, v: &Value, rows: &mut Vec<EvidenceRow>, links: &mut Vec<EvidenceLink>, depth: u8) {
        let label = if prefix.is_empty() { humanize(key) } else { format!("{prefix} · {}", humanize(key)) };
        if key == "document"
            && let Some(link) = document_link(v, &format!("Open the contract ({label})"), "Contract")
        {
            links.push(link);
            return;
        }
        if key == "package"
            && let Some(package) = v.as_str()
        {
            links.push(EvidenceLink {
                label: format!("Open the Prep package ({label})"),
                name: "Prep package".into(),
                target: LinkTarget::PrepPackage { package: package.to_string() },
            });
            return;
        }
        match v {
            Value::Object(map) if depth < 2 => {
                for (k, v) in map {
                    walk(&label, k, v, rows, links, depth + 1);
                }
            }
            Value::Null => {}
            other => rows.push(EvidenceRow { label, text: value_words(other) }),
        }
    }
    let mut rows = Vec::new();
    let mut links = Vec::new();
    match seen {
        Value::Object(map) => {
            for (k, v) in map {
                walk("", k, v, &mut rows, &mut links, 0);
            }
        }
        Value::Null => {}
        other => rows.push(EvidenceRow { label: "Evidence".into(), text: value_words(other) }),
    }
    ApprovalEvidence::Generic(GenericEvidence { rows, links })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reports_sign_off_shows_its_clauses_by_type_with_links_to_their_pages() {
        use pactwise_domain::{ReportBounds, ReportClause, ReportClauseType, RiskLevel};
        let document = DocumentId::new();
        let clause = |id: &str, page: u32| ReportClause {
            clause_id: id.into(),
            text: format!("clause {id} as printed"),
            page,
            window: 1,
            also_under: vec![],
        };
        let report = ContractReport {
            document,
            contract_type: "msa".into(),
            contract_type_name: "Master services agreement".into(),
            page_count: 9,
            completeness: ReportCompleteness::Complete,
            clause_types: vec![
                ReportClauseType {
                    item_id: "msa.liability".into(),
                    section: "Risk".into(),
                    question: "Is liability capped?".into(),
                    risk: RiskLevel::High,
                    processed: true,
                    clauses: vec![clause("c1", 4)],
                },
                ReportClauseType {
                    item_id: "msa.audit".into(),
                    section: "Operations".into(),
                    question: "May the customer audit?".into(),
                    risk: RiskLevel::Low,
                    processed: true,
                    clauses: vec![],
                },
            ],
            unassigned: vec![],
            rejected: vec![],
            dropped: vec![],
            unprocessed: vec![],
            windows: vec![],
            bounds: ReportBounds { calls_used: 2, call_limit: 10, time_used_ms: 1, time_limit_ms: 10 },
        };
        let seen = json!({ "report": report });
        let ApprovalEvidence::ReportClauses(r) = shape_evidence("contract_review_report", "sign_off", &seen) else {
            panic!("report")
        };
        assert_eq!(r.contract_type, "Master services agreement");
        assert!(r.complete);
        assert_eq!(r.without_clause, 1);
        assert_eq!(r.clause_types.len(), 1);
        assert_eq!(r.clause_types[0].question, "Is liability capped?");
        assert_eq!(r.clause_types[0].risk, "high");
        assert_eq!(r.clause_types[0].clauses[0].text, "clause c1 as printed");
        assert_eq!(r.clause_types[0].clauses[0].link.target, LinkTarget::Contract { document, page: Some(4) });
        assert_eq!(r.link.target, LinkTarget::Report { document });
    }

    #[test]
    fn unknown_evidence_becomes_labelled_rows_in_words_with_links() {
        let doc = DocumentId::new();
        let seen = json!({"input": {"request_note": "urgent", "amounts": [1, 2], "document": doc.to_string()},
                          "flag": true, "package": "pkg-1"});
        let ApprovalEvidence::Generic(g) = shape_evidence("some_graph", "step", &seen) else { panic!("generic") };
        let rows: Vec<(String, String)> = g.rows.into_iter().map(|r| (r.label, r.text)).collect();
        assert!(rows.contains(&("Input · Request note".into(), "urgent".into())), "{rows:?}");
        assert!(rows.contains(&("Input · Amounts".into(), "1, 2".into())), "{rows:?}");
        assert!(rows.contains(&("Flag".into(), "yes".into())), "{rows:?}");
        assert!(rows.iter().all(|(_, t)| !t.contains('{') && !t.contains('"')), "{rows:?}");
        assert_eq!(g.links.len(), 2);
        assert!(g.links.iter().any(|l| l.target == LinkTarget::Contract { document: doc, page: None }));
        assert!(g.links.iter().any(|l| l.target == LinkTarget::PrepPackage { package: "pkg-1".into() }));
    }
}
