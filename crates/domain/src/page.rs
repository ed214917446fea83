//! Pages of an extracted document: their text, where each character sits, where the text came from and how far it
//! can be trusted. The confidence's kind travels with its figure, so an estimate can never pass for a measurement.

use serde::{Deserialize, Serialize};

use crate::document::MediaType;

/// Where a page's text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PageSource {
    /// The file's own text: a PDF text layer, a DOCX body or a plain-text file.
    Text,
    /// Optical character recognition of a rendered or scanned page.
    Ocr,
}

impl PageSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PageSource::Text => "text",
            PageSource::Ocr => "ocr",
        }
    }
}

/// How a confidence figure was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ConfidenceKind {
    /// Computed from the recogniser's own per-word confidences.
    Measured,
    /// A heuristic figure; informative only, never enough to approve anything.
    Estimated,
    /// No figure: the text was read from the file itself, not recognised.
    None,
}

impl ConfidenceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ConfidenceKind::Measured => "measured",
            ConfidenceKind::Estimated => "estimated",
            ConfidenceKind::None => "none",
        }
    }
}

/// A page's confidence: the figure (0..=1) cannot be had without its kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Confidence {
    Measured(f32),
    Estimated(f32),
    /// Text read from the file; there is nothing to be unsure about.
    None,
}

impl Confidence {
    pub fn kind(self) -> ConfidenceKind {
        match self {
            Confidence::Measured(_) => ConfidenceKind::Measured,
            Confidence::Estimated(_) => ConfidenceKind::Estimated,
            Confidence::None => ConfidenceKind::None,
        }
    }

    /// The figure, whatever its kind (for display next to the kind).
    pub fn value(self) -> Option<f32> {
        match self {
            Confidence::Measured(v) | Confidence::Estimated(v) => Some(v),
            Confidence::None => None,
        }
    }

    /// May this page count towards approving a document without a person, given the threshold for measured OCR?
    /// A text layer may; a measured figure may if it reaches the threshold; an estimated figure never may.
    pub fn allows_auto_approval(self, measured_threshold: f32) -> bool {
        match self {
            Confidence::None => true,
            Confidence::Measured(v) => v >= measured_threshold,
            Confidence::Estimated(_) => false,
        }
    }
}

/// The rectangle of one character, in page coordinates: points (1/72 inch), origin at the top-left corner of the page
/// as displayed (its rotation applied), y growing downwards. `index` is the position of the character in the page's
/// `text`, counted in Unicode scalar values (Rust `char`s), not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct CharBox {
    pub index: u32,
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
}

impl CharBox {
    /// Size of one box in [`CharBox::encode_all`]'s blob.
    pub const ENCODED_LEN: usize = 20;

    /// A compact little-endian blob (index u32, x, y, width, height as f32), for storing a page's boxes as one value.
    pub fn encode_all(boxes: &[CharBox]) -> Vec<u8> {
        let mut out = Vec::with_capacity(boxes.len() * Self::ENCODED_LEN);
        for b in boxes {
            out.extend_from_slice(&b.index.to_le_bytes());
            for v in [b.x, b.y, b.width, b.height] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// Reads a blob written by [`CharBox::encode_all`]; `None` if its length is not a whole number of boxes.
    pub fn decode_all(blob: &[u8]) -> Option<Vec<CharBox>> {
        if !blob.len().is_multiple_of(Self::ENCODED_LEN) {
            return None;
        }
        let word = |c: &[u8], i: usize| [c[i], c[i + 1], c[i + 2], c[i + 3]];
        Some(
            blob.chunks_exact(Self::ENCODED_LEN)
                .map(|c| CharBox {
                    index: u32::from_le_bytes(word(c, 0)),
                    x: f32::from_le_bytes(word(c, 4)),
                    y: f32::from_le_bytes(word(c, 8)),
                    width: f32::from_le_bytes(word(c, 12)),
                    height: f32::from_le_bytes(word(c, 16)),
                })
                .collect(),
        )
    }
}

/// One page of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct Page {
    /// 1-based page number.
    pub number: u32,
    /// The page's text; line endings are `\n`.
    pub text: String,
    pub source: PageSource,
    pub confidence: Confidence,
    /// True when the page boundary was made by us (a DOCX or TXT without explicit page breaks), not by the file.
    pub synthetic: bool,
    /// Page size as displayed, in points. Zero for pages of formats without a layout (TXT).
    pub width: f32,
    pub height: f32,
    /// The rotation the file asks for when displaying the page, clockwise degrees: 0, 90, 180 or 270. Character
    /// boxes, width and height already have it applied.
    pub rotation: u16,
    /// Boxes of the characters that have one (text layers and OCR); empty for DOCX and TXT.
    pub char_boxes: Vec<CharBox>,
}

impl Page {
    /// A page of plain text with no layout: what a TXT file gives (boundary made by us), and handy in tests.
    pub fn plain(number: u32, text: impl Into<String>) -> Page {
        Page {
            number,
            text: text.into(),
            source: PageSource::Text,
            confidence: Confidence::None,
            synthetic: true,
            width: 0.0,
            height: 0.0,
            rotation: 0,
            char_boxes: Vec::new(),
        }
    }

    /// Number of characters (Unicode scalar values) of the text.
    pub fn char_count(&self) -> usize {
        self.text.chars().count()
    }
}

/// A document after intake: its pages in order, and the parts kept apart from the body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct ExtractedDocument {
    pub media_type: MediaType,
    /// SHA-256 of the input bytes, lowercase hex.
    pub content_hash: String,
    pub pages: Vec<Page>,
    /// True when any page boundary is synthetic.
    pub synthetic: bool,
    /// DOCX header texts, one per header part, in part order (kept out of the page text).
    pub headers: Vec<String>,
    /// DOCX footer texts, likewise.
    pub footers: Vec<String>,
}

impl ExtractedDocument {
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }
}

/// What intake is doing, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ProgressPhase {
    /// Reading text layers (or DOCX/TXT) page by page.
    Reading,
    /// Recognising pages without a text layer.
    Ocr,
}

/// Progress of one extraction: `done` of `total` pages of the phase are finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
pub struct Progress {
    pub phase: ProgressPhase,
    pub done: u32,
    pub total: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimated_confidence_never_allows_auto_approval_whatever_its_figure() {
        assert!(!Confidence::Estimated(1.0).allows_auto_approval(0.0));
        assert!(Confidence::Measured(0.95).allows_auto_approval(0.9));
        assert!(!Confidence::Measured(0.5).allows_auto_approval(0.9));
        assert!(Confidence::None.allows_auto_approval(0.9));
    }

    #[test]
    fn confidence_serializes_with_its_kind() {
        let json = serde_json::to_string(&Confidence::Estimated(0.5)).unwrap();
        assert_eq!(json, r#"{"kind":"estimated","value":0.5}"#);
        assert_eq!(serde_json::to_string(&Confidence::None).unwrap(), r#"{"kind":"none"}"#);
        assert_eq!(Confidence::Measured(0.8).kind().as_str(), "measured");
    }

    #[test]
    fn char_boxes_round_trip_through_the_compact_blob() {
        let boxes = vec![
            CharBox { index: 0, x: 1.5, y: 2.0, width: 3.25, height: 4.0 },
            CharBox { index: 7, x: 100.0, y: 700.5, width: 5.0, height: 9.0 },
        ];
        let blob = CharBox::encode_all(&boxes);
        assert_eq!(blob.len(), 2 * CharBox::ENCODED_LEN);
        assert_eq!(CharBox::decode_all(&blob).unwrap(), boxes);
        assert!(CharBox::decode_all(&blob[..7]).is_none());
    }
}
