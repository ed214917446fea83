//! How results and errors are printed: one JSON document on stdout with `--json`, text otherwise; errors also go
//! to stderr as a sentence that says what to do.

use pactwise_api::{ApiError, ImportReport};
use pactwise_domain::{Document, ErrorCode};
use serde_json::{Value, json};
use std::io::Write;
use std::process::ExitCode;

pub struct Outcome {
    json: Value,
    text: String,
    /// Set when part of the input was refused (exit 2) although a result is printed.
    refused: bool,
}

impl Outcome {
    pub fn ok(json: Value, text: String) -> Outcome {
        Outcome { json, text, refused: false }
    }

    pub fn print(self, as_json: bool) -> ExitCode {
        // A closed stdout (`pactwise ... | head`) is not an error worth a panic.
        let mut out = std::io::stdout().lock();
        if as_json {
            let _ = writeln!(out, "{}", self.json);
        } else if !self.text.is_empty() {
            let _ = writeln!(out, "{}", self.text);
        }
        if self.refused { ExitCode::from(2) } else { ExitCode::SUCCESS }
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
                eprintln!("warning: {} is kept, but its pages could not be read: {}", i.file, e.message);
                " (pages not readable)".to_string()
            }
            (None, None) => String::new(),
        };
        lines.push(format!("{how}: {} → {}{pages}", i.file, i.document.id));
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
    Outcome { json: json!(report), text: lines.join("\n"), refused: !report.failed.is_empty() }
}

pub fn document_table(docs: &[Document]) -> String {
    let mut out = format!("{:<36}  {:<5}  {:>10}  {:<20}  {}\n", "ID", "TYPE", "SIZE", "IMPORTED", "NAME");
    for d in docs {
        out.push_str(&format!(
            "{:<36}  {:<5}  {:>10}  {:<20}  {}\n",
            d.id,
            d.media_type.as_str(),
            d.size,
            d.created_at.format("%Y-%m-%d %H:%M"),
            d.name
        ));
    }
    out.trim_end().to_string()
}
