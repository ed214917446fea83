//! The review memo: a finalized review written for people outside the app, as DOCX (WordprocessingML written by
//! hand: one document part, built-in styles) or PDF (through pdfium). Red flags first, then critical items, then
//! the rest; each item with its answer, the verified quote and its page, the note, and who confirmed it.

use crate::ApiError;
use crate::review::{DocumentReview, ReviewItem};
use pactwise_domain::{ErrorCode, ItemStatus};
use pactwise_extract::write::{Paragraph, text_pdf};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum MemoFormat {
    Docx,
    Pdf,
}

/// One line of the memo, with its weight.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Title(String),
    Heading(String),
    Text(String),
    Quote(String),
}

/// The memo's content, format-free.
pub struct Memo {
    pub lines: Vec<Line>,
}

fn status_text(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::Present => "Present",
        ItemStatus::Partial => "Partial",
        ItemStatus::Absent => "Absent",
        ItemStatus::NotEvaluated => "Not evaluated",
    }
}

impl Memo {
    pub fn new(document_name: &str, organization: &str, review: &DocumentReview) -> Memo {
        let mut lines = vec![Line::Title(format!("Contract review memo: {document_name}"))];
        if let Some(t) = &review.contract_type {
            lines.push(Line::Text(format!("Contract type: {}", t.name)));
        }
        lines.push(Line::Text(format!("Organization: {organization}")));
        if let Some(c) = &review.counterparty {
            lines.push(Line::Text(format!("Counterparty: {c}")));
        }
        if let Some(v) = &review.vendor {
            lines.push(Line::Text(format!("Vendor: {v}")));
        }
        if let Some(law) = &review.extractions.governing_law {
            lines.push(Line::Text(format!("Governing law: {}", law.value)));
        }
        if let (Some(by), Some(at)) = (&review.finalized_by, &review.finalized_at) {
            lines.push(Line::Text(format!("Finalized by {by} on {at}")));
        }
        let red: Vec<&ReviewItem> = review.items.iter().filter(|i| !i.red_flags.is_empty()).collect();
        let critical: Vec<&ReviewItem> =
            review.items.iter().filter(|i| i.red_flags.is_empty() && i.risk == "critical").collect();
        let rest: Vec<&ReviewItem> =
            review.items.iter().filter(|i| i.red_flags.is_empty() && i.risk != "critical").collect();
        for (heading, items) in [("Red flags", red), ("Critical items", critical), ("Other items", rest)] {
            if items.is_empty() {
                continue;
            }
            lines.push(Line::Heading(heading.into()));
            for item in items {
                lines.push(Line::Text(format!(
                    "{} [{}] — {} ({} risk)",
                    item.question,
                    item.id,
                    status_text(item.status),
                    item.risk
                )));
                for flag in &item.red_flags {
                    lines.push(Line::Text(format!("Red flag: {flag}")));
                }
                if let (Some(q), Some(page)) = (&item.quote, item.page) {
                    lines.push(Line::Quote(format!("“{q}” (page {page})")));
                }
                if let Some(note) = &item.note {
                    lines.push(Line::Text(format!("Note: {note}")));
                }
                match (&item.confirmed_by, &item.confirmed_at) {
                    (Some(by), Some(at)) => lines.push(Line::Text(format!("Confirmed by {by} on {at}"))),
                    _ => lines.push(Line::Text(format!("Pre-filled by {}; not confirmed by a person", item.method))),
                }
            }
        }
        Memo { lines }
    }

    pub fn pdf(&self, pdfium: &Path) -> Result<Vec<u8>, ApiError> {
        let paragraphs: Vec<Paragraph> = self
            .lines
            .iter()
            .map(|l| match l {
                Line::Title(t) => Paragraph::new(t, 16.0, true),
                Line::Heading(t) => Paragraph { space_before: 14.0, ..Paragraph::new(t, 13.0, true) },
                Line::Text(t) => Paragraph::new(t, 10.0, false),
                Line::Quote(t) => Paragraph { indent: 18.0, ..Paragraph::new(t, 10.0, false) },
            })
            .collect();
        text_pdf(pdfium, &paragraphs).map_err(|e| ApiError::new(e.code(), e.to_string()))
    }

    pub fn docx(&self) -> Result<Vec<u8>, ApiError> {
        let blocks: Vec<pactwise_docx::Block<'_>> = self
            .lines
            .iter()
            .map(|l| match l {
                Line::Title(t) => pactwise_docx::Block::Title(t),
                Line::Heading(t) => pactwise_docx::Block::Heading(t),
                Line::Text(t) => pactwise_docx::Block::Text(t),
                Line::Quote(t) => pactwise_docx::Block::Quote(t),
            })
            .collect();
        pactwise_docx::write(&blocks).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
    }
}
