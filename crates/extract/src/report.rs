//! The JSON shape of `pactwise extract FILE --json` (DESIGN.md's CLI contract, plus `synthetic` and `char_count`).

use pactwise_domain::{ExtractedDocument, Page};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct ExtractReport {
    pub file: String,
    pub media_type: String,
    pub page_count: usize,
    pub synthetic: bool,
    pub pages: Vec<ReportPage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReportPage {
    pub number: u32,
    pub text: String,
    pub source: &'static str,
    pub confidence: Option<f32>,
    pub confidence_kind: &'static str,
    pub synthetic: bool,
    pub char_count: usize,
}

impl ExtractReport {
    pub fn new(file: impl Into<String>, doc: &ExtractedDocument) -> Self {
        ExtractReport {
            file: file.into(),
            media_type: doc.media_type.as_str().to_owned(),
            page_count: doc.page_count(),
            synthetic: doc.synthetic,
            pages: doc.pages.iter().map(ReportPage::new).collect(),
        }
    }
}

impl ReportPage {
    fn new(page: &Page) -> Self {
        ReportPage {
            number: page.number,
            text: page.text.clone(),
            source: page.source.as_str(),
            confidence: page.confidence.value().map(|v| (v * 1000.0).round() / 1000.0),
            confidence_kind: page.confidence.kind().as_str(),
            synthetic: page.synthetic,
            char_count: page.char_count(),
        }
    }
}
