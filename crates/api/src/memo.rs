//! The review memo: a finalized review written for a client, as DOCX or PDF (both from the same blocks,
//! `pactwise-docx`). The first page sums the review up — the contract, who reviewed and confirmed it and when, the
//! outcome, red flags, critical items and their outcome, and the deviations from the preferred position with the
//! fallback position — then every item follows under its section: its question, answer, verified quote and page,
//! note, and who confirmed it. Items are named by their question and sections by their name from the catalog (never
//! by id); dates are written for people ("2 December 2026").

use crate::ApiError;
use crate::review::{DocumentReview, ReviewItem};
use chrono::{DateTime, NaiveDate};
use pactwise_docx::Block;
use pactwise_domain::{ChecklistItem, ContractType, ErrorCode, ItemStatus};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum MemoFormat {
    Docx,
    Pdf,
}

/// One paragraph of the memo, with its role.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Title(String),
    Heading(String),
    Subheading(String),
    Text(String),
    /// A label and its value.
    Field(String, String),
    /// A label and its value, under the bullet before it.
    Detail(String, String),
    Quote(String),
    Bullet(String),
    PageBreak,
}

/// The memo's content, format-free.
pub struct Memo {
    pub lines: Vec<Line>,
}

/// A date as people write it: "2 December 2026" (the UTC calendar day of an RFC 3339 time, or an ISO date). Text
/// that is neither is returned as it is.
pub fn people_date(value: &str) -> String {
    let date = DateTime::parse_from_rfc3339(value)
        .map(|t| t.to_utc().date_naive())
        .or_else(|_| NaiveDate::parse_from_str(value, "%Y-%m-%d"));
    match date {
        Ok(d) => d.format("%-d %B %Y").to_string(),
        Err(_) => value.to_owned(),
    }
}

fn status_words(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::Present => "Present",
        ItemStatus::Partial => "Partly present",
        ItemStatus::Absent => "Absent",
        ItemStatus::NotEvaluated => "Not evaluated",
    }
}

fn risk_words(risk: &str) -> &'static str {
    match risk {
        "critical" => "critical risk",
        "high" => "high risk",
        "medium" => "medium risk",
        _ => "low risk",
    }
}

/// Who answered an item, in words: the person who confirmed or corrected it and when, or how it was pre-filled.
fn answered_by(item: &ReviewItem) -> String {
    match (&item.confirmed_by, &item.confirmed_at) {
        (Some(by), Some(at)) => format!("confirmed by {by} on {}", people_date(at)),
        (Some(by), None) => format!("confirmed by {by}"),
        _ => match item.method.as_str() {
            "model" => "pre-filled by the model, not confirmed by a person".into(),
            "rules" => "pre-filled by the rules, not confirmed by a person".into(),
            _ => "not answered yet".into(),
        },
    }
}

/// The outcome of an item in one phrase: "Absent, confirmed by Ada Lovelace on 2 December 2026".
fn outcome(item: &ReviewItem) -> String {
    format!("{}, {}", status_words(item.status), answered_by(item))
}

/// An item departs from our preferred position when the clause is missing or only partly there, or a red flag
/// was raised on it.
fn deviates(item: &ReviewItem) -> bool {
    matches!(item.status, ItemStatus::Partial | ItemStatus::Absent) || !item.red_flags.is_empty()
}

/// The people who confirmed or corrected items, each with how many and when: "Ada Lovelace (12 items, 2 December
/// 2026)".
fn reviewers(items: &[ReviewItem]) -> Vec<String> {
    let mut by: BTreeMap<&str, (usize, Vec<String>)> = BTreeMap::new();
    for item in items {
        if let Some(name) = &item.confirmed_by {
            let entry = by.entry(name.as_str()).or_default();
            entry.0 += 1;
            if let Some(at) = &item.confirmed_at {
                entry.1.push(at.clone());
            }
        }
    }
    by.into_iter()
        .map(|(name, (count, mut times))| {
            times.sort();
            let items = if count == 1 { "1 item".to_owned() } else { format!("{count} items") };
            match (times.first().map(|t| people_date(t)), times.last().map(|t| people_date(t))) {
                (Some(first), Some(last)) if first != last => format!("{name} ({items}, {first} to {last})"),
                (Some(day), _) => format!("{name} ({items}, {day})"),
                _ => format!("{name} ({items})"),
            }
        })
        .collect()
}

impl Memo {
    /// The memo of `review`; `contract_type` is the catalog's entry for the review's type (section names and
    /// positions), when the document has one.
    pub fn new(
        document_name: &str,
        organization: &str,
        review: &DocumentReview,
        contract_type: Option<&ContractType>,
    ) -> Memo {
        let catalog_item = |id: &str| -> Option<&ChecklistItem> { contract_type?.items.iter().find(|i| i.id == id) };
        let mut lines = vec![Line::Title(format!("Contract review memo: {document_name}"))];
        let field = |label: &str, value: String| Line::Field(label.into(), value);
        if let Some(t) = &review.contract_type {
            lines.push(field("Contract type", t.name.clone()));
        }
        lines.push(field("Prepared for", organization.to_owned()));
        if let Some(c) = &review.counterparty {
            lines.push(field("Counterparty", c.clone()));
        }
        if let Some(v) = &review.vendor {
            lines.push(field("Vendor", v.clone()));
        }
        let x = &review.extractions;
        if !x.parties.is_empty() {
            lines.push(field("Parties", x.parties.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join("; ")));
        }
        for (label, value) in [
            ("Agreement date", &x.agreement_date),
            ("Effective date", &x.effective_date),
            ("Expiration", &x.expiration_date),
            ("Renewal term", &x.renewal),
            ("Notice to stop renewal", &x.renewal_notice),
            ("Governing law", &x.governing_law),
        ] {
            if let Some(v) = value {
                lines.push(field(label, v.value.clone()));
            }
        }
        let people = reviewers(&review.items);
        if !people.is_empty() {
            lines.push(field("Reviewed by", people.join("; ")));
        }
        match (&review.finalized_by, &review.finalized_at) {
            (Some(by), Some(at)) => lines.push(field("Finalized", format!("by {by} on {}", people_date(at)))),
            (None, Some(at)) => lines.push(field("Finalized", format!("on {}", people_date(at)))),
            _ => lines.push(field("Finalized", "not yet".into())),
        }

        let count = |status: ItemStatus| review.items.iter().filter(|i| i.status == status).count();
        let confirmed = review.items.iter().filter(|i| i.confirmed_by.is_some()).count();
        lines.push(field(
            "Outcome",
            format!(
                "{} items checked: {} present, {} partly present, {} absent, {} not evaluated; {confirmed} confirmed \
                 or corrected by a person.",
                review.items.len(),
                count(ItemStatus::Present),
                count(ItemStatus::Partial),
                count(ItemStatus::Absent),
                count(ItemStatus::NotEvaluated),
            ),
        ));

        lines.push(Line::Heading("Red flags".into()));
        let flagged: Vec<&ReviewItem> = review.items.iter().filter(|i| !i.red_flags.is_empty()).collect();
        if flagged.is_empty() {
            lines.push(Line::Text("No red flag was raised.".into()));
        }
        for item in flagged {
            for flag in &item.red_flags {
                lines.push(Line::Bullet(format!("{flag} — {} ({})", item.question, outcome(item))));
            }
        }

        lines.push(Line::Heading("Critical items".into()));
        let critical: Vec<&ReviewItem> = review.items.iter().filter(|i| i.risk == "critical").collect();
        if critical.is_empty() {
            lines.push(Line::Text("This checklist has no critical item.".into()));
        }
        for item in critical {
            lines.push(Line::Bullet(format!("{} — {}", item.question, outcome(item))));
        }

        lines.push(Line::Heading("Deviations from our preferred position".into()));
        let deviations: Vec<(&ReviewItem, &ChecklistItem)> = review
            .items
            .iter()
            .filter(|i| deviates(i))
            .filter_map(|i| catalog_item(&i.id).filter(|c| c.preferred_position.is_some()).map(|c| (i, c)))
            .collect();
        if deviations.is_empty() {
            lines.push(Line::Text("No deviation from a stated preferred position was found.".into()));
        }
        for (item, entry) in deviations {
            lines.push(Line::Bullet(format!("{} — {}", item.question, outcome(item))));
            if let Some(p) = &entry.preferred_position {
                lines.push(Line::Detail("Preferred position".into(), p.clone()));
            }
            if let Some(f) = &entry.fallback_position {
                lines.push(Line::Detail("Fallback position".into(), f.clone()));
            }
        }

        lines.push(Line::PageBreak);
        lines.push(Line::Heading("Items by section".into()));
        // Sections in the catalog's order; items of a section the catalog does not know come last, under one name.
        let mut sections: Vec<(String, Vec<&ReviewItem>)> =
            contract_type.map(|t| t.sections.iter().map(|s| (s.id.clone(), Vec::new())).collect()).unwrap_or_default();
        for item in &review.items {
            match sections.iter_mut().find(|(id, _)| *id == item.section) {
                Some((_, items)) => items.push(item),
                None => sections.push((item.section.clone(), vec![item])),
            }
        }
        for (section, items) in sections.into_iter().filter(|(_, items)| !items.is_empty()) {
            let name = contract_type
                .and_then(|t| t.sections.iter().find(|s| s.id == section))
                .map_or_else(|| "Other items".to_owned(), |s| s.name.clone());
            lines.push(Line::Heading(name));
            for item in items {
                lines.push(Line::Subheading(item.question.clone()));
                lines.push(field("Answer", format!("{} ({})", status_words(item.status), risk_words(&item.risk))));
                if let Some(value) = &item.value {
                    lines.push(field("Value", value.clone()));
                }
                for flag in &item.red_flags {
                    lines.push(field("Red flag", flag.clone()));
                }
                if let (Some(q), Some(page)) = (&item.quote, item.page) {
                    lines.push(Line::Quote(format!("“{q}” (page {page})")));
                }
                if let Some(note) = &item.note {
                    lines.push(field("Note", note.clone()));
                }
                let by = answered_by(item);
                let mut by_chars = by.chars();
                let by: String =
                    by_chars.next().map(|c| c.to_uppercase().chain(by_chars).collect()).unwrap_or_default();
                lines.push(Line::Text(format!("{by}.")));
            }
        }
        Memo { lines }
    }

    fn blocks(&self) -> Vec<Block<'_>> {
        self.lines
            .iter()
            .map(|l| match l {
                Line::Title(t) => Block::Title(t),
                Line::Heading(t) => Block::Heading(t),
                Line::Subheading(t) => Block::Subheading(t),
                Line::Text(t) => Block::Text(t),
                Line::Field(label, value) => Block::Field(label, value),
                Line::Detail(label, value) => Block::Detail(label, value),
                Line::Quote(t) => Block::Quote(t),
                Line::Bullet(t) => Block::Bullet(t),
                Line::PageBreak => Block::PageBreak,
            })
            .collect()
    }

    pub fn pdf(&self) -> Result<Vec<u8>, ApiError> {
        pactwise_docx::pdf::write(&self.blocks()).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
    }

    pub fn docx(&self) -> Result<Vec<u8>, ApiError> {
        pactwise_docx::write(&self.blocks()).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::{ReviewType, catalog};
    use pactwise_domain::{Extractions, RiskLevel};

    const QUOTE: &str = "The Supplier's total liability under this Agreement shall\nnot exceed the fees paid in the \
                         twelve months before the claim;\r\nthis cap does not apply to\n  fraud or wilful misconduct.";

    fn service() -> ContractType {
        catalog().unwrap().contract_type("service").unwrap().clone()
    }

    /// A finalized review of a service agreement: every item answered; the first critical item absent with a red
    /// flag, confirmed by a person; one present item quoted with line breaks; a very long quote on another.
    fn review(t: &ContractType) -> DocumentReview {
        let critical: Vec<&str> =
            t.items.iter().filter(|i| i.risk == RiskLevel::Critical).map(|i| i.id.as_str()).collect();
        let long = "The Customer may terminate this Agreement for convenience at any time on thirty days' written \
                    notice; fees for Services performed up to the date of termination remain payable. "
            .repeat(12);
        let plain: Vec<&str> =
            t.items.iter().filter(|i| i.risk != RiskLevel::Critical).map(|i| i.id.as_str()).collect();
        let items = t
            .items
            .iter()
            .map(|item| {
                let first_critical = item.id == critical[0];
                let (status, quote) = match item.id.as_str() {
                    _ if first_critical => (ItemStatus::Absent, None),
                    id if id == plain[0] => (ItemStatus::Present, Some(QUOTE.to_owned())),
                    id if id == plain[1] => (ItemStatus::Partial, Some(long.clone())),
                    _ => (ItemStatus::Present, None),
                };
                ReviewItem {
                    id: item.id.clone(),
                    section: item.section.clone(),
                    question: item.question.clone(),
                    risk: item.risk.as_str().into(),
                    status,
                    confidence: 0.8,
                    page: quote.as_ref().map(|_| 3),
                    quote,
                    quote_span: None,
                    verified: true,
                    value: (item.id == plain[0]).then(|| "90 days".into()),
                    normalized: None,
                    warnings: Vec::new(),
                    method: if first_critical { "person" } else { "rules" }.into(),
                    reason: None,
                    red_flags: if first_critical { vec![item.red_flags[0].clone()] } else { Vec::new() },
                    note: first_critical.then(|| "Ask for a cap of twelve months' fees;\nsee the fallback.".into()),
                    confirmed_by: first_critical.then(|| "Ada Lovelace".into()),
                    confirmed_at: first_critical.then(|| "2026-12-02T09:30:00+00:00".into()),
                }
            })
            .collect();
        DocumentReview {
            file: None,
            document: None,
            contract_type: Some(ReviewType {
                id: t.id.clone(),
                name: t.name.clone(),
                confidence: 0.9,
                method: "keyword".into(),
                reason: String::new(),
            }),
            items,
            rejected: Vec::new(),
            gate: None,
            extractions: Extractions {
                agreement_date: Some(pactwise_domain::Extracted {
                    value: "18 March 2019".into(),
                    normalized: None,
                    quote: None,
                    confidence: 0.3,
                }),
                ..Extractions::default()
            },
            counterparty: Some("Fabrikam Consulting Group".into()),
            vendor_match: None,
            summary: None,
            stages: Vec::new(),
            mode: "recorded".into(),
            planned_model_calls: None,
            halted_at: None,
            vendor: None,
            vendor_link: None,
            finalized_by: Some("Ada Lovelace".into()),
            finalized_at: Some("2026-12-02T10:00:00+00:00".into()),
        }
    }

    fn memo() -> (ContractType, Memo) {
        let t = service();
        let m = Memo::new("northwind-msa.pdf", "Northwind Traders", &review(&t), Some(&t));
        (t, m)
    }

    /// The pages of a PDF as pdfium reads them, or `None` (with the reason) when libpdfium is not installed; under
    /// `CI=true` a missing libpdfium fails the test.
    fn read_back(pdf: &[u8]) -> Option<Vec<pactwise_domain::Page>> {
        let config = pactwise_extract::ExtractConfig::from_env();
        if !config.pdfium_path.exists() {
            let reason = format!("libpdfium is not installed at {} (run make setup)", config.pdfium_path.display());
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
            eprintln!("skipped: {reason}");
            return None;
        }
        let doc = pactwise_extract::Extractor::new(config)
            .extract_bytes(pdf, None, &pactwise_extract::ExtractOptions::default())
            .unwrap();
        Some(doc.pages)
    }

    /// Words as a reader sees them: every run of whitespace one space.
    fn words(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn no_ids(text: &str, t: &ContractType) {
        for item in &t.items {
            assert!(!text.contains(&item.id), "the item id {} is printed", item.id);
        }
        for id in ["not_evaluated", "rules", "person", "critical]"] {
            assert!(!text.contains(&format!("[{id}")), "a raw label {id} is printed");
        }
    }

    #[test]
    fn dates_are_written_for_people() {
        assert_eq!(people_date("2026-12-02T09:30:00+00:00"), "2 December 2026");
        assert_eq!(people_date("2026-12-02T23:30:00-05:00"), "3 December 2026", "the UTC calendar day");
        assert_eq!(people_date("2019-05-09"), "9 May 2019");
        assert_eq!(people_date("sometime"), "sometime");
    }

    #[test]
    fn the_first_page_sums_up_red_flags_critical_items_deviations_and_who_reviewed() {
        let (t, m) = memo();
        let first_page: Vec<&Line> = m.lines.iter().take_while(|l| **l != Line::PageBreak).collect();
        let text = |l: &Line| match l {
            Line::Field(a, b) | Line::Detail(a, b) => format!("{a}: {b}"),
            Line::Title(s)
            | Line::Heading(s)
            | Line::Subheading(s)
            | Line::Text(s)
            | Line::Quote(s)
            | Line::Bullet(s) => s.clone(),
            Line::PageBreak => String::new(),
        };
        let summary: Vec<String> = first_page.iter().map(|l| text(l)).collect();
        let critical = t.items.iter().find(|i| i.risk == RiskLevel::Critical).unwrap();
        let has = |needle: &str| summary.iter().any(|l| l.contains(needle));
        assert!(has("Reviewed by: Ada Lovelace (1 item, 2 December 2026)"), "{summary:#?}");
        assert!(has("Finalized: by Ada Lovelace on 2 December 2026"));
        assert!(has("Agreement date: 18 March 2019"), "the contract's dates are on the first page");
        for heading in ["Red flags", "Critical items", "Deviations from our preferred position"] {
            assert!(first_page.contains(&&Line::Heading(heading.into())), "{heading}");
        }
        assert!(has(&format!("{} — {}", critical.red_flags[0], critical.question)), "the red flag with its item");
        assert!(has(&format!("{} — Absent, confirmed by Ada Lovelace on 2 December 2026", critical.question)));
        assert!(has(&format!("Preferred position: {}", critical.preferred_position.as_ref().unwrap())));
        assert!(has(&format!("Fallback position: {}", critical.fallback_position.as_ref().unwrap())));
        let plain = t.items.iter().find(|i| i.risk != RiskLevel::Critical).unwrap();
        assert!(!has(&plain.question), "a present item without a red flag is not a deviation");
        // The details follow on the next pages, under the catalog's section names.
        let rest: Vec<&Line> = m.lines.iter().skip_while(|l| **l != Line::PageBreak).collect();
        assert!(rest.contains(&&Line::Heading(t.sections[0].name.clone())));
        assert!(rest.contains(&&Line::Subheading(critical.question.clone())));
    }

    #[test]
    fn the_docx_memo_has_questions_section_names_and_dates_never_ids_or_joined_words() {
        let (t, m) = memo();
        let bytes = m.docx().unwrap();
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut xml = String::new();
        std::io::Read::read_to_string(&mut zip.by_name("word/document.xml").unwrap(), &mut xml).unwrap();
        assert!(xml.contains(
            "shall not exceed the fees paid in the twelve months before the claim; this cap does not apply to fraud"
        ));
        assert!(!xml.contains("shallnot") && !xml.contains("claim;this") && !xml.contains("tofraud"));
        assert!(xml.contains(&t.sections[0].name.replace('&', "&amp;")));
        assert!(xml.contains("2 December 2026"));
        assert!(xml.contains("Confirmed by Ada Lovelace on 2 December 2026."));
        no_ids(&xml, &t);
    }

    #[test]
    fn the_pdf_memo_reads_back_with_every_glyph_words_apart_and_no_ids() {
        let (t, m) = memo();
        let pdf = m.pdf().unwrap();
        // PACTWISE_MEMO_SAMPLE=DIR keeps the sample memo to look at.
        if let Some(dir) = std::env::var_os("PACTWISE_MEMO_SAMPLE") {
            std::fs::write(std::path::Path::new(&dir).join("memo.pdf"), &pdf).unwrap();
            std::fs::write(std::path::Path::new(&dir).join("memo.docx"), m.docx().unwrap()).unwrap();
        }
        let Some(pages) = read_back(&pdf) else { return };
        let text: String = pages.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n");
        assert!(text.contains(';'), "the semicolon is printed");
        assert!(!text.contains('ÿ'), "no glyph is replaced");
        for expected in ["“The Supplier's total liability", "Ada Lovelace", "2 December 2026", "Page 1 of", "—"] {
            assert!(text.contains(expected), "{expected:?} is missing from\n{text}");
        }
        let read = words(&text);
        assert!(
            read.contains("shall not exceed the fees paid in the twelve months before the claim; this cap does not apply to fraud or wilful misconduct."),
            "the quote reads as written: {read}"
        );
        for joined in ["shallnot", "claim;this", "tofraud", "daysʼ", "payable.The"] {
            assert!(!read.contains(joined), "{joined:?} is joined");
        }
        assert!(words(&pages[0].text).contains("Deviations from our preferred position"), "the summary is on page 1");
        assert!(words(&pages[0].text).contains(&t.sections[0].name) || pages.len() > 1);
        no_ids(&text, &t);
    }

    #[test]
    fn a_long_quote_wraps_inside_the_margin_in_the_pdf() {
        let (_, m) = memo();
        let pdf = m.pdf().unwrap();
        let Some(pages) = read_back(&pdf) else { return };
        let margin = pactwise_docx::pdf::MARGIN;
        let mut checked = 0;
        for page in &pages {
            assert!((page.width - pactwise_docx::pdf::PAGE_WIDTH).abs() < 1.0, "A4");
            for b in &page.char_boxes {
                assert!(b.x >= margin - 0.5, "a character starts left of the margin on page {}: {b:?}", page.number);
                assert!(
                    b.x + b.width <= page.width - margin + 0.5,
                    "a character ends past the right margin on page {}: {b:?}",
                    page.number
                );
                checked += 1;
            }
        }
        assert!(checked > 5_000, "the boxes of the whole memo were checked ({checked})");
        let longest = pages
            .iter()
            .flat_map(|p| p.text.lines())
            .filter(|l| l.contains("terminate this Agreement for convenience"))
            .count();
        assert!(longest >= 2, "the long quote runs over several lines");
    }
}
