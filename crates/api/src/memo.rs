//! The review memo: a finalized review written for people outside the app, as DOCX (WordprocessingML written by
//! hand: one document part, built-in styles) or PDF (through pdfium). Red flags first, then critical items, then
//! the rest; each item with its answer, the verified quote and its page, the note, and who confirmed it.

use crate::ApiError;
use crate::review::{DocumentReview, ReviewItem};
use pactwise_domain::{ErrorCode, ItemStatus};
use pactwise_extract::write::{Paragraph, text_pdf};
use serde::{Deserialize, Serialize};
use std::io::Write;
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
        let mut body = String::new();
        for line in &self.lines {
            let (style, text) = match line {
                Line::Title(t) => ("Title", t),
                Line::Heading(t) => ("Heading1", t),
                Line::Text(t) => ("", t),
                Line::Quote(t) => ("Quote", t),
            };
            let style =
                if style.is_empty() { String::new() } else { format!("<w:pPr><w:pStyle w:val=\"{style}\"/></w:pPr>") };
            body.push_str(&format!(
                "<w:p>{style}<w:r><w:t xml:space=\"preserve\">{}</w:t></w:r></w:p>",
                xml_escape(text)
            ));
        }
        let document = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
             <w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{body}\
             <w:sectPr><w:pgSz w:w=\"11906\" w:h=\"16838\"/><w:pgMar w:top=\"1134\" w:right=\"1134\" w:bottom=\"1134\" \
             w:left=\"1134\" w:header=\"708\" w:footer=\"708\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>"
        );
        let styles = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
            <w:styles xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">\
            <w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/>\
            <w:rPr><w:sz w:val=\"20\"/></w:rPr></w:style>\
            <w:style w:type=\"paragraph\" w:styleId=\"Title\"><w:name w:val=\"Title\"/><w:basedOn w:val=\"Normal\"/>\
            <w:rPr><w:b/><w:sz w:val=\"32\"/></w:rPr></w:style>\
            <w:style w:type=\"paragraph\" w:styleId=\"Heading1\"><w:name w:val=\"heading 1\"/><w:basedOn w:val=\"Normal\"/>\
            <w:pPr><w:spacing w:before=\"240\"/></w:pPr><w:rPr><w:b/><w:sz w:val=\"26\"/></w:rPr></w:style>\
            <w:style w:type=\"paragraph\" w:styleId=\"Quote\"><w:name w:val=\"Quote\"/><w:basedOn w:val=\"Normal\"/>\
            <w:pPr><w:ind w:left=\"360\"/></w:pPr><w:rPr><w:i/></w:rPr></w:style></w:styles>";
        let content_types = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
            <Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">\
            <Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>\
            <Default Extension=\"xml\" ContentType=\"application/xml\"/>\
            <Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/>\
            <Override PartName=\"/word/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml\"/>\
            </Types>";
        let rels = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
            <Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
            <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/>\
            </Relationships>";
        let document_rels = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
            <Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
            <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>\
            </Relationships>";
        let failed =
            |e: &dyn std::fmt::Display| ApiError::new(ErrorCode::Internal, format!("writing the DOCX failed: {e}"));
        let mut out = std::io::Cursor::new(Vec::new());
        {
            let mut zip = zip::ZipWriter::new(&mut out);
            let options: zip::write::SimpleFileOptions =
                zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            for (name, text) in [
                ("[Content_Types].xml", content_types),
                ("_rels/.rels", rels),
                ("word/_rels/document.xml.rels", document_rels),
                ("word/styles.xml", styles),
                ("word/document.xml", document.as_str()),
            ] {
                zip.start_file(name, options).map_err(|e| failed(&e))?;
                zip.write_all(text.as_bytes()).map_err(|e| failed(&e))?;
            }
            zip.finish().map_err(|e| failed(&e))?;
        }
        Ok(out.into_inner())
    }
}

fn xml_escape(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\t')
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            other => other.to_string(),
        })
        .collect()
}
