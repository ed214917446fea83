//! Plain text: UTF-8 (with or without BOM), UTF-16 with BOM, else Windows-1252. Form feeds split pages; without any,
//! pages are synthetic.

use crate::paginate::synthetic_pages;
use crate::{IntakeError, Limits};
use pactwise_domain::{Confidence, ExtractedDocument, MediaType, Page, PageSource};

pub(crate) fn extract(bytes: &[u8], limits: &Limits<'_>) -> Result<ExtractedDocument, IntakeError> {
    let text = decode(bytes).replace("\r\n", "\n").replace('\r', "\n");
    let (texts, synthetic) = if text.contains('\x0C') {
        let mut parts: Vec<String> = text.split('\x0C').map(|p| p.trim_matches('\n').to_owned()).collect();
        if parts.len() > 1 && parts.last().is_some_and(|p| p.trim().is_empty()) {
            parts.pop();
        }
        (parts, false)
    } else {
        (synthetic_pages(&text, limits.config.synthetic_page_chars, false), true)
    };
    limits.check_pages(texts.len())?;
    Ok(text_document(MediaType::Txt, texts, synthetic, (0.0, 0.0)))
}

pub(crate) fn text_document(
    media_type: MediaType,
    texts: Vec<String>,
    synthetic: bool,
    (width, height): (f32, f32),
) -> ExtractedDocument {
    let pages = texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| Page {
            number: i as u32 + 1,
            text,
            source: PageSource::Text,
            confidence: Confidence::None,
            synthetic,
            width,
            height,
            rotation: 0,
            char_boxes: Vec::new(),
        })
        .collect();
    ExtractedDocument { media_type, content_hash: String::new(), pages, synthetic, headers: vec![], footers: vec![] }
}

fn decode(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => bytes.iter().map(|&b| windows_1252(b)).collect(),
    }
}

fn windows_1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8D}', 'Ž', '\u{8F}', '\u{90}', '‘',
        '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9D}', 'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9F => HIGH[(b - 0x80) as usize],
        _ => b as char,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_encodings_decode() {
        assert_eq!(decode(b"caf\xe9 \x93q\x94"), "café “q”");
        assert_eq!(decode(&[0xFF, 0xFE, b'h', 0, b'i', 0]), "hi");
        assert_eq!(decode("naïve".as_bytes()), "naïve");
    }
}
