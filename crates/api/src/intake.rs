//! The checks a file passes before its bytes enter the store: it exists, is a regular readable file, is not empty,
//! is within the size limit, and is a type Pactwise takes in, recognised from its bytes rather than its name.

use crate::ApiError;
use pactwise_domain::{ErrorCode, MediaType};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The default import limit: 200 MB.
pub const DEFAULT_MAX_IMPORT_BYTES: u64 = 200 * 1000 * 1000;

/// Formats a byte count for messages: "1.5 MB".
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64;
    let mut unit = "bytes";
    for u in UNITS {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        unit = u;
    }
    format!("{value:.1} {unit}")
}

const SUPPORTED: &str = "Pactwise imports PDF, Word (.docx), plain text (.txt) and images of pages (PNG, JPEG, TIFF)";

/// Checks the file and returns its size and type; nothing is written.
pub(crate) fn check_file(path: &Path, max_bytes: u64) -> Result<(u64, MediaType), ApiError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        let message = match e.kind() {
            std::io::ErrorKind::NotFound => format!("{shown} does not exist; check the path and try again"),
            std::io::ErrorKind::PermissionDenied => {
                format!("{shown} cannot be read (permission denied); check the file's permissions")
            }
            _ => format!("{shown} cannot be read ({e}); check the path and try again"),
        };
        ApiError::new(ErrorCode::FileUnreadable, message)
    })?;
    if meta.is_dir() {
        return Err(ApiError::new(
            ErrorCode::FileUnreadable,
            format!("{shown} is a folder, not a file; choose the files inside it instead"),
        ));
    }
    if !meta.is_file() {
        return Err(ApiError::new(
            ErrorCode::FileUnreadable,
            format!("{shown} is not a regular file (a device or a pipe?); copy it to a file first"),
        ));
    }
    let size = meta.len();
    if size == 0 {
        return Err(ApiError::new(
            ErrorCode::FileEmpty,
            format!("{shown} is empty (0 bytes); check that it was saved or downloaded completely"),
        ));
    }
    if size > max_bytes {
        return Err(too_large(path, size, max_bytes));
    }
    let mut file = File::open(path).map_err(|e| {
        ApiError::new(ErrorCode::FileUnreadable, format!("{shown} cannot be opened ({e}); check its permissions"))
    })?;
    let mut head = vec![0u8; 8192.min(size as usize)];
    file.read_exact(&mut head)
        .map_err(|e| ApiError::new(ErrorCode::FileUnreadable, format!("{shown} could not be read ({e})")))?;
    let tail = if size > 8192 {
        let len = 65_536.min(size);
        let mut tail = vec![0u8; len as usize];
        file.seek(SeekFrom::End(-(len as i64)))
            .and_then(|_| file.read_exact(&mut tail))
            .map_err(|e| ApiError::new(ErrorCode::FileUnreadable, format!("{shown} could not be read ({e})")))?;
        tail
    } else {
        head.clone()
    };
    let media_type = sniff(path, &head, &tail)?;
    Ok((size, media_type))
}

pub(crate) fn too_large(path: &Path, size: u64, max_bytes: u64) -> ApiError {
    ApiError::new(
        ErrorCode::FileTooLarge,
        format!(
            "{} is {}, over the import limit of {}; split the document, or raise the limit (pactwise import --max-size)",
            path.display(),
            human_size(size),
            human_size(max_bytes)
        ),
    )
}

fn extension(path: &Path) -> String {
    path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default()
}

/// Recognises the type from the first bytes with the intake crate's detection (the one that decides how the
/// file is read), then adds what only the file's name and the zip's directory can tell: a zip that is not a Word
/// document, an old Office file, text under a name that is not a text file's, RTF.
pub(crate) fn sniff(path: &Path, head: &[u8], tail: &[u8]) -> Result<MediaType, ApiError> {
    let ext = extension(path);
    let shown = path.display();
    if head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(ApiError::new(
            ErrorCode::UnsupportedFileType,
            format!(
                "{shown} is an old Word (.doc) or Office file; save it as .docx or PDF and import that. {SUPPORTED}"
            ),
        ));
    }
    let found = match pactwise_extract::sniff_media_type(head) {
        Some(MediaType::Docx) if !(contains(tail, b"word/document.xml") || contains(head, b"word/document.xml")) => {
            return Err(ApiError::new(
                ErrorCode::UnsupportedFileType,
                format!(
                    "{shown} is a zip archive but not a Word document; unpack it and import the files inside. {SUPPORTED}"
                ),
            ));
        }
        Some(MediaType::Txt) if head.starts_with(b"{\\rtf") || !matches!(ext.as_str(), "txt" | "text" | "md" | "") => {
            None
        }
        other => other,
    };
    match found {
        Some(m) => Ok(m),
        None if ext == "pdf" => Err(ApiError::new(
            ErrorCode::UnsupportedFileType,
            format!(
                "{shown} is named .pdf but is not a PDF (it starts with {:?}); export it again as PDF",
                preview(head)
            ),
        )),
        None => Err(ApiError::new(
            ErrorCode::UnsupportedFileType,
            format!("{shown} is not a type Pactwise can read. {SUPPORTED}"),
        )),
    }
}

fn preview(head: &[u8]) -> String {
    head.iter().take(8).map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniffed(name: &str, bytes: &[u8]) -> Result<MediaType, ErrorCode> {
        sniff(Path::new(name), bytes, bytes).map_err(|e| e.code)
    }

    #[test]
    fn types_are_recognised_from_their_bytes() {
        assert_eq!(sniffed("a.pdf", b"%PDF-1.7\n..."), Ok(MediaType::Pdf));
        assert_eq!(sniffed("scan.bin", b"%PDF-1.4"), Ok(MediaType::Pdf));
        assert_eq!(sniffed("p.png", b"\x89PNG\r\n\x1a\n...."), Ok(MediaType::Png));
        assert_eq!(sniffed("p.jpg", &[0xFF, 0xD8, 0xFF, 0xE0]), Ok(MediaType::Jpeg));
        assert_eq!(sniffed("p.tif", b"II*\0...."), Ok(MediaType::Tiff));
        assert_eq!(sniffed("c.docx", b"PK\x03\x04....word/document.xml...."), Ok(MediaType::Docx));
        assert_eq!(sniffed("c.txt", "Café agreement".as_bytes()), Ok(MediaType::Txt));
        assert_eq!(sniffed("README", b"plain words"), Ok(MediaType::Txt));
    }

    #[test]
    fn misnamed_and_foreign_files_are_refused_with_a_reason() {
        assert_eq!(sniffed("fake.pdf", b"<html>hello"), Err(ErrorCode::UnsupportedFileType));
        let e = sniff(Path::new("fake.pdf"), b"GIF89a....", b"").unwrap_err();
        assert!(e.message.contains("named .pdf but is not a PDF"), "{}", e.message);
        assert_eq!(sniffed("old.doc", &[0xD0, 0xCF, 0x11, 0xE0, 0, 0]), Err(ErrorCode::UnsupportedFileType));
        assert_eq!(sniffed("a.zip", b"PK\x03\x04....other.xml"), Err(ErrorCode::UnsupportedFileType));
        assert_eq!(sniffed("bin.dat", &[1, 2, 0, 4]), Err(ErrorCode::UnsupportedFileType));
        assert_eq!(sniffed("data.csv", b"a,b,c"), Err(ErrorCode::UnsupportedFileType));
        assert_eq!(sniffed("x.txt", b"{\\rtf1 hello"), Err(ErrorCode::UnsupportedFileType));
    }

    #[test]
    fn text_the_extractor_can_decode_is_taken_in_under_a_text_name() {
        // UTF-16 with a byte-order mark and Windows-1252 are read by the TXT extractor, so import takes them too.
        let utf16: Vec<u8> =
            [0xFF, 0xFE].into_iter().chain("Lease".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert_eq!(sniffed("lease.txt", &utf16), Ok(MediaType::Txt));
        assert_eq!(sniffed("caf\u{e9}.txt", b"Caf\xe9 supply terms"), Ok(MediaType::Txt));
        assert_eq!(sniffed("lease.csv", &utf16), Err(ErrorCode::UnsupportedFileType));
    }

    #[test]
    fn sizes_read_like_a_person_writes_them() {
        assert_eq!(human_size(999), "999 bytes");
        assert_eq!(human_size(1_500_000), "1.5 MB");
        assert_eq!(human_size(200_000_000), "200.0 MB");
    }
}
