//! How results and errors are printed: one JSON document on stdout with `--json`, text otherwise; errors also go
//! to stderr as a sentence that says what to do.

use pactwise_api::{ApiError, ImportReport};
use pactwise_domain::{Document, ErrorCode};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::io::Write;
use std::process::ExitCode;

/// Whether a character changes how the text around it is shown instead of being shown: control characters (C0,
/// DEL, C1: line breaks, terminal escape sequences) and the bidirectional marks, overrides and isolates.
fn is_hidden_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// A name received from elsewhere (document and user names from sync, an organization's name), fit to print on a
/// terminal: each control character is printed as "\u{fffd}", so a name cannot break a line, fake a table row or
/// send an escape sequence. Text output only: `--json` and the store keep the bytes.
pub fn clean(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_hidden_control) {
        Cow::Owned(text.chars().map(|c| if is_hidden_control(c) { '\u{fffd}' } else { c }).collect())
    } else {
        Cow::Borrowed(text)
    }
}

pub struct Outcome {
    json: Value,
    text: String,
    /// Set when part of the input was refused (exit 2) although a result is printed.
    refused: bool,
    /// Set when what was asked for failed (exit 1) although a result is printed.
    failed: bool,
}

impl Outcome {
    pub fn ok(json: Value, text: String) -> Outcome {
        Outcome { json, text, refused: false, failed: false }
    }

    pub fn print(self, as_json: bool) -> ExitCode {
        // A closed stdout (`pactwise ... | head`) is not an error worth a panic.
        let mut out = std::io::stdout().lock();
        if as_json {
            let _ = writeln!(out, "{}", self.json);
        } else if !self.text.is_empty() {
            let _ = writeln!(out, "{}", self.text);
        }
        if self.refused {
            ExitCode::from(2)
        } else if self.failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

pub fn fail(as_json: bool, error: &ApiError) -> ExitCode {
    if as_json {
        let _ = writeln!(std::io::stdout().lock(), "{}", json!({ "error": error }));
    }
    eprintln!("error: {}", error.message);
    exit_code(error.code)
}

fn exit_code(code: ErrorCode) -> ExitCode {
    if code.is_bad_input() { ExitCode::from(2) } else { ExitCode::from(1) }
}

pub fn import_outcome(report: &ImportReport) -> Outcome {
    let mut lines = Vec::new();
    for i in &report.imported {
        let how = match i.outcome {
            pactwise_domain::ImportOutcome::Created => "imported",
            pactwise_domain::ImportOutcome::Existing => "already imported",
            pactwise_domain::ImportOutcome::Restored => "restored from the trash",
        };
        let pages = match (&i.page_count, &i.extraction_error) {
            (Some(n), _) => format!(" ({n} page{})", if *n == 1 { "" } else { "s" }),
            (None, Some(e)) => {
                eprintln!("warning: {} is kept, but its pages could not be read: {}", clean(&i.file), e.message);
                " (pages not readable)".to_string()
            }
            (None, None) => String::new(),
        };
        lines.push(format!("{how}: {} → {}{pages}", clean(&i.file), i.document.id));
    }
    for f in &report.failed {
        eprintln!("error: {}", f.error.message);
    }
    if !report.failed.is_empty() {
        lines.push(format!(
            "{} of {} files could not be imported (see above).",
            report.failed.len(),
            report.failed.len() + report.imported.len()
        ));
    }
    Outcome { json: json!(report), text: lines.join("\n"), refused: !report.failed.is_empty(), failed: false }
}

/// The documents as a table, one row each (names cleaned: a name cannot add a row).
pub fn document_table(docs: &[Document]) -> String {
    let mut out = format!("{:<36}  {:<5}  {:>10}  {:<20}  {}\n", "ID", "TYPE", "SIZE", "IMPORTED", "NAME");
    for d in docs {
        out.push_str(&format!(
            "{:<36}  {:<5}  {:>10}  {:<20}  {}\n",
            d.id,
            d.media_type.as_str(),
            d.size,
            d.created_at.format("%Y-%m-%d %H:%M"),
            clean(&d.name)
        ));
    }
    out.trim_end().to_string()
}

/// A review: the JSON of the CLI contract, and a short text summary.
pub fn review_outcome(review: &pactwise_api::DocumentReview) -> Outcome {
    let mut lines = Vec::new();
    match &review.contract_type {
        Some(t) => lines.push(format!("Type: {} ({}, {} {:.0}%)", t.name, t.id, t.method, t.confidence * 100.0)),
        None => lines.push("Type: not classified".to_string()),
    }
    if let Some(g) = &review.gate {
        lines.push(format!(
            "Route: {}{} — {}",
            g.route,
            g.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default(),
            g.detail
        ));
    }
    let count = |s: pactwise_domain::ItemStatus| review.items.iter().filter(|i| i.status == s).count();
    lines.push(format!(
        "Items: {} ({} present, {} partial, {} absent, {} not evaluated); {} verified quotes, {} rejected",
        review.items.len(),
        count(pactwise_domain::ItemStatus::Present),
        count(pactwise_domain::ItemStatus::Partial),
        count(pactwise_domain::ItemStatus::Absent),
        count(pactwise_domain::ItemStatus::NotEvaluated),
        review.items.iter().filter(|i| i.verified).count(),
        review.rejected.len()
    ));
    if let Some(law) = &review.extractions.governing_law {
        lines.push(format!("Governing law: {}", law.value));
    }
    if let Some(c) = &review.counterparty {
        lines.push(format!("Counterparty: {}", clean(c)));
    }
    if let Some(n) = review.planned_model_calls {
        lines.push(format!("Dry run: a model run would make {n} model call(s)"));
    }
    if let Some(stage) = &review.halted_at {
        lines.push(format!("Stopped at the {stage} stage; see its reason in --json output"));
    }
    Outcome::ok(serde_json::to_value(review).unwrap_or_default(), lines.join("\n"))
}

/// The review queue.
pub fn queue_outcome(queue: &[pactwise_api::QueueEntry]) -> Outcome {
    let text = if queue.is_empty() {
        "No documents wait for a person.".to_string()
    } else {
        queue
            .iter()
            .map(|q| {
                format!(
                    "{}  {:40}  {:24}  {}",
                    q.document,
                    clean(&q.name),
                    q.type_name.as_deref().unwrap_or("-"),
                    q.reason.as_deref().unwrap_or("-")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    Outcome::ok(json!({ "queue": queue }), text)
}

/// An assistant answer with its citations.
pub fn answer_outcome(answer: &pactwise_api::Answer) -> Outcome {
    let mut lines = vec![answer.text.clone()];
    for c in &answer.citations {
        let place = match c.page {
            Some(page) => format!("{}, page {page}", clean(&c.title)),
            None => format!("{} ({})", clean(&c.title), c.label.as_deref().unwrap_or("market example")),
        };
        let excerpt: String = c.excerpt.chars().take(160).collect();
        lines.push(format!("  [{}] {place}: {excerpt}", c.marker));
    }
    if !answer.contracts.is_empty() {
        lines.push(format!(
            "Contracts: {}",
            answer.contracts.iter().map(|c| clean(&c.title)).collect::<Vec<_>>().join(", ")
        ));
    }
    Outcome::ok(serde_json::to_value(answer).unwrap_or_default(), lines.join("\n"))
}

/// Search results in words: where each passage is (document, page) and its text, the notes first.
pub fn search_outcome(found: &pactwise_api::SearchResults) -> Outcome {
    let mut lines: Vec<String> = found.notes.iter().map(|n| format!("Note: {n}")).collect();
    if found.hits.is_empty() {
        lines.push("No passages found.".into());
    }
    for hit in &found.hits {
        let excerpt: String = hit.excerpt.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(240).collect();
        lines.push(format!("{}, page {}:\n  {}", clean(&hit.document), hit.page, clean(&excerpt)));
    }
    Outcome::ok(serde_json::to_value(found).unwrap_or_default(), lines.join("\n"))
}

/// The CUAD evaluation as text: figures per category, then the totals.
pub fn eval_text(report: &Value) -> String {
    let mut lines = Vec::new();
    for c in report["categories"].as_array().into_iter().flatten() {
        if c["in_macro"].as_bool() == Some(true) {
            lines.push(format!(
                "  {:40} F1 {:.2}  tp {} fp {} fn {}",
                c["category"].as_str().unwrap_or(""),
                c["f1"].as_f64().unwrap_or(0.0),
                c["tp"],
                c["fp"],
                c["fn"]
            ));
        }
    }
    let f = |k: &str| report[k].as_f64().unwrap_or(0.0);
    lines.push(format!(
        "contracts {}, errors {}, {:.1} s (median {:.0} ms per contract)",
        report["contracts"],
        report["errors"],
        f("total_seconds"),
        f("median_ms_per_contract")
    ));
    lines.push(format!(
        "type accuracy {:.3}; presence macro-F1 {:.3}; quote precision {:.3} of {}; invented {}; governing law {:.3} ({}/{}); parties recall {:.3}",
        f("type_accuracy"),
        f("presence_macro_f1"),
        f("quote_precision"),
        report["quotes"],
        report["invented_quotes"],
        f("governing_law_accuracy"),
        report["governing_law_correct"],
        report["governing_law_labelled"],
        f("parties_recall")
    ));
    lines.push(format!(
        "evidence quote precision {:.3}; missed-present {:.3} ({}/{} labelled clauses called absent)",
        f("evidence_quote_precision"),
        f("missed_present_rate"),
        report["labelled_called_absent"],
        report["labelled_pairs"]
    ));
    if let Ok(values) = serde_json::from_value::<Vec<pactwise_api::eval::ValueScore>>(report["values"].clone()) {
        lines
            .push("values against CUAD's normalised answers (parties: recall of names, defined names allowed):".into());
        lines.extend(pactwise_api::eval::values_table(&values));
    }
    lines.join("\n")
}

/// A report run: its status, then clauses by type, rejected extractions and unprocessed parts. A failed run exits 1.
pub fn report_outcome(view: &pactwise_api::ReportView) -> Outcome {
    use pactwise_api::ReportStatus;
    let mut lines = vec![format!("Report {} on {}: {:?}", view.run, clean(&view.document_name), view.status)];
    if let Some(reason) = &view.reason {
        lines.push(format!("Reason: {reason}"));
    }
    if let Some(report) = &view.report {
        lines.push(format!(
            "{:?}; {} model call(s) of {}; {} clause(s) shown, {} rejected, {} dropped at an edge, {} part(s) not processed",
            report.completeness,
            report.bounds.calls_used,
            report.bounds.call_limit,
            report.shown_clauses().len(),
            report.rejected.len(),
            report.dropped.len(),
            report.unprocessed.len()
        ));
        for t in report.clause_types.iter().filter(|t| !t.clauses.is_empty()) {
            lines.push(format!("  {} ({})", t.item_id, t.clauses.len()));
            for c in &t.clauses {
                lines.push(format!("    p.{}: {}", c.page, c.text));
            }
        }
        for r in &report.rejected {
            lines.push(format!("  rejected {} (p.{}, {}): {}", r.clause_id, r.page, r.reason, r.text));
        }
        for u in &report.unprocessed {
            lines.push(format!("  not processed: {:?} {} ({})", u.part, u.id, u.reason.describe()));
        }
    }
    if let Some(approval) = view.approval {
        lines.push(format!("Sign it off with: pactwise approve {approval} --decision approve --reason TEXT"));
    }
    Outcome {
        json: json!(view),
        text: lines.join("\n"),
        refused: false,
        failed: matches!(view.status, ReportStatus::Failed | ReportStatus::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pactwise_domain::{DocumentId, MediaType, UserId};

    #[test]
    fn control_characters_in_names_print_as_a_visible_mark_and_ordinary_names_are_untouched() {
        assert_eq!(clean("lease\nID  fake row"), "lease\u{fffd}ID  fake row");
        assert_eq!(clean("evil\u{1b}[2J\u{1b}[31m.pdf"), "evil\u{fffd}[2J\u{fffd}[31m.pdf");
        assert_eq!(clean("bell\u{7}\u{7f}\u{85}\r"), "bell\u{fffd}\u{fffd}\u{fffd}\u{fffd}");
        assert_eq!(clean("invoice\u{202e}gnp.exe"), "invoice\u{fffd}gnp.exe");
        for name in ["Master Services Agreement.pdf", "Vertrag Müller & Söhne", "契約書.docx", "عقد.pdf"] {
            assert!(matches!(clean(name), Cow::Borrowed(_)), "{name}");
        }
    }

    #[test]
    fn a_synced_name_cannot_add_a_row_to_the_document_table() {
        let doc: Document = serde_json::from_value(json!({
            "id": DocumentId::new(),
            "name": "real.pdf\n00000000-0000-0000-0000-000000000000  pdf          1  2026-01-01 00:00  forged.pdf\u{1b}[8m",
            "media_type": MediaType::Pdf,
            "size": 10,
            "content_hash": "a".repeat(64),
            "created_by": UserId::new(),
            "created_at": "2026-11-30T09:00:00Z",
            "deleted_at": null,
        }))
        .unwrap();
        let table = document_table(std::slice::from_ref(&doc));
        assert_eq!(table.lines().count(), 2, "a header and one row:\n{table}");
        assert!(!table.contains('\u{1b}'), "no escape sequence reaches the terminal");
        assert!(doc.name.contains('\n'), "the stored name keeps its bytes");
    }
}
