//! Telling file types apart by their bytes, not their names.

use pactwise_domain::MediaType;

/// The media type the bytes are, if Pactwise takes it in.
pub fn sniff_media_type(bytes: &[u8]) -> Option<MediaType> {
    let head = &bytes[..bytes.len().min(1024)];
    if head.windows(5).any(|w| w == b"%PDF-") {
        return Some(MediaType::Pdf);
    }
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(MediaType::Png);
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(MediaType::Jpeg);
    }
    if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") {
        return Some(MediaType::Tiff);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        // A zip: a DOCX if it has the main document part; the DOCX reader says so if not.
        return Some(MediaType::Docx);
    }
    if looks_like_text(bytes) {
        return Some(MediaType::Txt);
    }
    None
}

fn looks_like_text(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return true;
    }
    let sample = &bytes[..bytes.len().min(64 * 1024)];
    if sample.contains(&0) {
        return false;
    }
    let control = sample.iter().filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0C)).count();
    control * 100 <= sample.len()
}

/// The first bytes, printable, for error messages.
pub(crate) fn magic_of(bytes: &[u8]) -> String {
    bytes.iter().take(8).map(|&b| if b.is_ascii_graphic() { b as char } else { '.' }).collect()
}

pub(crate) fn describe_unknown(bytes: &[u8]) -> String {
    if bytes.starts_with(b"GIF8") {
        "a GIF image".to_owned()
    } else if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        "an old Office (.doc) file; save it as .docx or PDF".to_owned()
    } else {
        format!("unrecognised content starting with {:?}", magic_of(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_told_apart_by_their_bytes() {
        assert_eq!(sniff_media_type(b"%PDF-1.7\n..."), Some(MediaType::Pdf));
        assert_eq!(sniff_media_type(b"\x89PNG\r\n\x1a\nrest"), Some(MediaType::Png));
        assert_eq!(sniff_media_type(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(MediaType::Jpeg));
        assert_eq!(sniff_media_type(b"II*\0rest"), Some(MediaType::Tiff));
        assert_eq!(sniff_media_type(b"PK\x03\x04rest"), Some(MediaType::Docx));
        assert_eq!(sniff_media_type(b"Plain words.\n\x0cNext page."), Some(MediaType::Txt));
        assert_eq!(sniff_media_type(b"GIF89a\0\0\x01\x02"), None);
    }
}
