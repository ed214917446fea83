//! Writing a simple text PDF through pdfium (the review memo): A4 pages, the standard Helvetica fonts, paragraphs
//! wrapped to the page width by the font's average character width, new pages as needed.

use crate::IntakeError;
use crate::pdf::pdfium;
use pdfium_render::prelude::*;
use std::path::Path;

/// One paragraph of the memo.
#[derive(Debug, Clone, PartialEq)]
pub struct Paragraph {
    pub text: String,
    pub size: f32,
    pub bold: bool,
    /// Extra space before, in points.
    pub space_before: f32,
    /// Left indent, in points.
    pub indent: f32,
}

impl Paragraph {
    pub fn new(text: impl Into<String>, size: f32, bold: bool) -> Paragraph {
        Paragraph { text: text.into(), size, bold, space_before: size * 0.5, indent: 0.0 }
    }
}

const MARGIN: f32 = 56.0;
/// Helvetica's average glyph width is about half the font size; a little less keeps lines from running over.
const AVERAGE_WIDTH: f32 = 0.52;

/// Breaks `text` into lines of at most `max_chars` characters at spaces (a longer word is cut).
pub fn wrap(text: &str, max_chars: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for raw in text.split('\n') {
        let mut line = String::new();
        for word in raw.split_whitespace() {
            let mut word = word.to_owned();
            while word.chars().count() > max_chars {
                let head: String = word.chars().take(max_chars).collect();
                word = word.chars().skip(max_chars).collect();
                if !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                }
                lines.push(head);
            }
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > max_chars {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&word);
        }
        lines.push(line);
    }
    lines
}

/// Writes the paragraphs as a PDF and returns its bytes.
pub fn text_pdf(pdfium_path: &Path, paragraphs: &[Paragraph]) -> Result<Vec<u8>, IntakeError> {
    let pdfium = pdfium(pdfium_path)?;
    let failed = |e: PdfiumError| IntakeError::Render { detail: format!("writing the PDF failed: {e}") };
    let mut document = pdfium.create_new_pdf().map_err(failed)?;
    let regular = document.fonts_mut().helvetica();
    let bold = document.fonts_mut().helvetica_bold();
    let size = PdfPagePaperSize::a4();
    let (width, height) = (size.width().value, size.height().value);
    let mut page = document.pages_mut().create_page_at_end(size).map_err(failed)?;
    let mut y = height - MARGIN;
    for p in paragraphs {
        let line_height = p.size * 1.3;
        let max_chars = (((width - 2.0 * MARGIN - p.indent) / (p.size * AVERAGE_WIDTH)) as usize).max(10);
        y -= p.space_before;
        for line in wrap(&p.text, max_chars) {
            if y - line_height < MARGIN {
                page = document.pages_mut().create_page_at_end(size).map_err(failed)?;
                y = height - MARGIN;
            }
            y -= line_height;
            if !line.is_empty() {
                let font = if p.bold { bold } else { regular };
                page.objects_mut()
                    .create_text_object(
                        PdfPoints::new(MARGIN + p.indent),
                        PdfPoints::new(y),
                        &line,
                        font,
                        PdfPoints::new(p.size),
                    )
                    .map_err(failed)?;
            }
        }
    }
    drop(page);
    document.save_to_bytes().map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_wrap_at_spaces_and_cut_words_longer_than_a_line() {
        assert_eq!(wrap("one two three four", 9), vec!["one two", "three", "four"]);
        assert_eq!(wrap("abcdefghijkl", 5), vec!["abcde", "fghij", "kl"]);
        assert_eq!(wrap("a\n\nb", 5), vec!["a", "", "b"]);
    }

    #[test]
    fn a_memo_pdf_reads_back_with_its_text_on_the_pages() {
        let config = crate::ExtractConfig::from_env();
        if !pactwise_testkit::library("libpdfium", &config.pdfium_path) {
            return;
        }
        let mut paragraphs = vec![Paragraph::new("Review memo", 16.0, true)];
        for i in 0..120 {
            paragraphs.push(Paragraph::new(
                format!("Item {i}: the supplier shall indemnify the customer."),
                10.0,
                false,
            ));
        }
        let bytes = text_pdf(&config.pdfium_path, &paragraphs).unwrap();
        let doc = crate::Extractor::new(config).extract_bytes(&bytes, None, &crate::ExtractOptions::default()).unwrap();
        assert!(doc.pages.len() >= 2, "120 paragraphs need more than one page");
        let all: String = doc.pages.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n");
        assert!(all.contains("Review memo"));
        assert!(all.contains("Item 119: the supplier shall indemnify the customer."));
    }
}
