//! The file's type from its name and from its bytes, and the signatures of other formats that must not be there.

use crate::Refusal;

/// The types a vendor may upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Pdf,
    Docx,
    Xlsx,
    Png,
    Jpeg,
    Text,
    Csv,
}

/// What the bytes alone can tell: DOCX and XLSX are both ZIP archives, TXT and CSV both text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    Pdf,
    Zip,
    Png,
    Jpeg,
    Text,
}

impl Kind {
    /// Every kind, in the order the vendor page lists them.
    pub const ALL: [Kind; 7] = [Kind::Pdf, Kind::Docx, Kind::Xlsx, Kind::Png, Kind::Jpeg, Kind::Text, Kind::Csv];

    /// The kind a file name's extension says; names with no or another extension are refused.
    pub fn from_name(name: &str) -> Result<Kind, Refusal> {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let Some((stem, extension)) = base.rsplit_once('.') else {
            return Err(Refusal::TypeNotAllowed {
                what: "without a type at the end of their name (such as .pdf)".into(),
            });
        };
        if stem.is_empty() {
            return Err(Refusal::TypeNotAllowed { what: "without a name before their type".into() });
        }
        let lower = extension.to_ascii_lowercase();
        match lower.as_str() {
            "pdf" => Ok(Kind::Pdf),
            "docx" => Ok(Kind::Docx),
            "xlsx" => Ok(Kind::Xlsx),
            "png" => Ok(Kind::Png),
            "jpg" | "jpeg" => Ok(Kind::Jpeg),
            "txt" => Ok(Kind::Text),
            "csv" => Ok(Kind::Csv),
            "docm" | "dotm" | "xlsm" | "xltm" | "xlsb" | "pptm" => {
                Err(Refusal::TypeNotAllowed { what: format!("ending in .{lower} (Office files with macros)") })
            }
            "doc" | "xls" | "ppt" | "rtf" => Err(Refusal::TypeNotAllowed {
                what: format!("ending in .{lower} (older Office formats; save as .docx or .xlsx)"),
            }),
            _ => {
                let shown: String = lower.chars().filter(|c| c.is_ascii_alphanumeric()).take(12).collect();
                Err(Refusal::TypeNotAllowed { what: format!("ending in .{shown}") })
            }
        }
    }

    /// The kind in people's words.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Pdf => "PDF",
            Kind::Docx => "Word document (.docx)",
            Kind::Xlsx => "Excel workbook (.xlsx)",
            Kind::Png => "PNG image",
            Kind::Jpeg => "JPEG image",
            Kind::Text => "text file",
            Kind::Csv => "CSV file",
        }
    }

    pub(crate) fn family(self) -> Family {
        match self {
            Kind::Pdf => Family::Pdf,
            Kind::Docx | Kind::Xlsx => Family::Zip,
            Kind::Png => Family::Png,
            Kind::Jpeg => Family::Jpeg,
            Kind::Text | Kind::Csv => Family::Text,
        }
    }
}

const PDF_MAGIC: &[u8] = b"%PDF-";
const ZIP_LOCAL: &[u8] = b"PK\x03\x04";
const ZIP_END: &[u8] = b"PK\x05\x06";
const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";
const JPEG_MAGIC: &[u8] = b"\xFF\xD8\xFF";
/// PDF readers look for their header this far into a file.
const PDF_HEADER_WINDOW: usize = 1024;

/// The family the bytes belong to, if it is one we accept.
pub(crate) fn kind_of(bytes: &[u8]) -> Option<Family> {
    if bytes.starts_with(PDF_MAGIC) {
        Some(Family::Pdf)
    } else if bytes.starts_with(ZIP_LOCAL) {
        Some(Family::Zip)
    } else if bytes.starts_with(PNG_MAGIC) {
        Some(Family::Png)
    } else if bytes.starts_with(JPEG_MAGIC) {
        Some(Family::Jpeg)
    } else if crate::text::looks_like_text(bytes) && markup(bytes).is_none() {
        Some(Family::Text)
    } else {
        None
    }
}

/// What the bytes look like, in words, for a mismatch message.
pub(crate) fn describe(bytes: &[u8]) -> String {
    let what = match kind_of(bytes) {
        Some(Family::Pdf) => "a PDF",
        Some(Family::Zip) => "a ZIP archive (such as a Word or Excel file)",
        Some(Family::Png) => "a PNG image",
        Some(Family::Jpeg) => "a JPEG image",
        Some(Family::Text) => "plain text",
        None => {
            if let Some(markup) = markup(bytes) {
                markup
            } else if bytes.starts_with(b"MZ") {
                "a Windows program"
            } else if bytes.starts_with(b"\x7FELF") {
                "a Linux program"
            } else if bytes.starts_with(b"#!") {
                "a script"
            } else if bytes.starts_with(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
                "an older Office file (.doc, .xls) or another compound file"
            } else if bytes.starts_with(b"GIF8") {
                "a GIF image"
            } else if bytes.starts_with(b"Rar!") || bytes.starts_with(b"7z\xBC\xAF\x27\x1C") {
                "a compressed archive"
            } else if bytes.starts_with(b"{\\rtf") {
                "a rich-text (RTF) document"
            } else {
                "in a format that is not recognised"
            }
        }
    };
    what.to_owned()
}

/// HTML, SVG or XML at the start of a text: browsers and other programs would run or interpret it.
fn markup(bytes: &[u8]) -> Option<&'static str> {
    let start = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start: Vec<u8> =
        start.iter().skip_while(|b| b.is_ascii_whitespace()).take(64).map(|b| b.to_ascii_lowercase()).collect();
    if start.starts_with(b"<!doctype html") || start.starts_with(b"<html") || start.starts_with(b"<script") {
        Some("an HTML page")
    } else if start.starts_with(b"<svg") {
        Some("an SVG image")
    } else if start.starts_with(b"<?xml") {
        Some("an XML document")
    } else if start.starts_with(b"{\\rtf") {
        Some("a rich-text (RTF) document")
    } else {
        None
    }
}

/// Refuses signatures of another format where that format's reader would find them: a PDF header near the start of
/// a file that is not a PDF, or a ZIP archive's end record ending the file for a file that is not a ZIP. (Data after
/// the end of a PDF, PNG or JPEG is checked by their own inspections.)
pub(crate) fn refuse_polyglot(kind: Kind, bytes: &[u8]) -> Result<(), Refusal> {
    let family = kind.family();
    if family != Family::Pdf {
        let window = &bytes[..bytes.len().min(PDF_HEADER_WINDOW)];
        if find(window, PDF_MAGIC).is_some() {
            return Err(Refusal::Polyglot { kind, other: "a PDF header".into() });
        }
    }
    if family != Family::Zip && zip_end_record_ends(bytes) {
        return Err(Refusal::Polyglot { kind, other: "a ZIP archive".into() });
    }
    Ok(())
}

/// Whether a ZIP end-of-central-directory record, with its comment, ends the file: what a ZIP reader looks for.
pub(crate) fn zip_end_record_ends(bytes: &[u8]) -> bool {
    zip_end_record(bytes).is_some()
}

/// The number of entries the end record says the archive holds (`None` when there is no such record or it is
/// ZIP64).
pub(crate) fn zip_end_record_count(bytes: &[u8]) -> Option<usize> {
    let record = zip_end_record(bytes)?;
    let total = u16::from_le_bytes([record[10], record[11]]);
    (total != u16::MAX).then_some(total as usize)
}

/// The last end-of-central-directory record whose comment runs exactly to the end of the file (the record is 22
/// bytes plus a comment of at most 65,535 bytes).
fn zip_end_record(bytes: &[u8]) -> Option<&[u8]> {
    let from = bytes.len().saturating_sub(22 + 65_535);
    let tail = &bytes[from..];
    let mut at = tail.len();
    while let Some(found) = rfind(&tail[..at], ZIP_END) {
        if let Some(record) = tail.get(found..found + 22) {
            let comment = u16::from_le_bytes([record[20], record[21]]) as usize;
            if found + 22 + comment == tail.len() {
                return Some(record);
            }
        }
        at = found;
    }
    None
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

pub(crate) fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decide_the_claimed_kind() {
        assert_eq!(Kind::from_name("Offer FINAL.PDF").unwrap(), Kind::Pdf);
        assert_eq!(Kind::from_name("C:\\Users\\a\\prices.xlsx").unwrap(), Kind::Xlsx);
        assert_eq!(Kind::from_name("photo.JPG").unwrap(), Kind::Jpeg);
        assert_eq!(Kind::from_name("invoice.pdf.exe").unwrap_err().code(), "type_not_allowed");
        assert!(Kind::from_name("tender.docm").unwrap_err().to_string().contains("macros"));
        assert_eq!(Kind::from_name("README").unwrap_err().code(), "type_not_allowed");
        assert_eq!(Kind::from_name(".pdf").unwrap_err().code(), "type_not_allowed");
    }

    #[test]
    fn bytes_decide_the_real_kind() {
        assert_eq!(kind_of(b"%PDF-1.7\n"), Some(Family::Pdf));
        assert_eq!(kind_of(b"PK\x03\x04rest"), Some(Family::Zip));
        assert_eq!(kind_of(b"Line one\r\nLine two\n"), Some(Family::Text));
        assert_eq!(kind_of(b"MZ\x90\x00\x03"), None);
        assert_eq!(describe(b"MZ\x90\x00\x03"), "a Windows program");
        assert_eq!(kind_of(b"  <!DOCTYPE html><script>x</script>"), None);
        assert_eq!(describe(b"<svg onload=x>"), "an SVG image");
    }

    #[test]
    fn a_zip_end_record_at_the_end_is_found_with_its_comment() {
        let mut bytes = b"just text ".to_vec();
        bytes.extend_from_slice(ZIP_END);
        bytes.extend_from_slice(&[0; 16]);
        bytes.extend_from_slice(&3u16.to_le_bytes());
        bytes.extend_from_slice(b"abc");
        assert!(zip_end_record_ends(&bytes));
        bytes.push(b'!');
        assert!(!zip_end_record_ends(&bytes));
    }

    #[test]
    fn a_pdf_header_inside_a_text_is_a_polyglot() {
        let refusal = refuse_polyglot(Kind::Text, b"notes\n%PDF-1.4\n1 0 obj").unwrap_err();
        assert_eq!(refusal.code(), "polyglot");
        assert!(refuse_polyglot(Kind::Text, b"plain notes about PDF files").is_ok());
    }
}
