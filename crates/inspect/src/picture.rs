//! PNG and JPEG: the file's structure walked to its end marker (nothing may follow), then decoded in full within a
//! pixel budget.

use std::io::Cursor;

use crate::{Kind, Limits, Refusal};

pub(crate) fn inspect(kind: Kind, bytes: &[u8], limits: &Limits) -> Result<String, Refusal> {
    match kind {
        Kind::Png => png_structure(bytes)?,
        _ => jpeg_structure(bytes, 0)?,
    }
    let (width, height) = decode(kind, bytes, limits)?;
    Ok(format!("{width} × {height} pixels"))
}

/// Decodes the whole image after checking its declared size against the budget.
pub(crate) fn decode(kind: Kind, bytes: &[u8], limits: &Limits) -> Result<(u32, u32), Refusal> {
    let format = if kind == Kind::Png { image::ImageFormat::Png } else { image::ImageFormat::Jpeg };
    let reader = |bytes| {
        let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
        let mut bounds = image::Limits::default();
        bounds.max_alloc = Some(limits.max_image_pixels.saturating_mul(8));
        reader.limits(bounds);
        reader
    };
    let (width, height) =
        reader(bytes).into_dimensions().map_err(|error| Refusal::unreadable(kind, short(&error.to_string())))?;
    let pixels = u64::from(width) * u64::from(height);
    if pixels == 0 {
        return Err(Refusal::unreadable(kind, "it has no pixels"));
    }
    if pixels > limits.max_image_pixels {
        return Err(Refusal::over(
            kind,
            format!("is {width} × {height} pixels"),
            format!("{} million pixels", limits.max_image_pixels / 1_000_000),
        ));
    }
    reader(bytes).decode().map_err(|error| Refusal::unreadable(kind, short(&error.to_string())))?;
    Ok((width, height))
}

fn short(error: &str) -> String {
    error.chars().take(160).collect()
}

/// Chunks from the signature to `IEND`, each whole; nothing after `IEND`.
fn png_structure(bytes: &[u8]) -> Result<(), Refusal> {
    let kind = Kind::Png;
    let mut at = 8usize;
    loop {
        let header = bytes.get(at..at + 8).ok_or_else(|| Refusal::unreadable(kind, "it ends before its last part"))?;
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let name = &header[4..8];
        if !name.iter().all(u8::is_ascii_alphabetic) {
            return Err(Refusal::unreadable(kind, "a part of it is damaged"));
        }
        let end = at
            .checked_add(12)
            .and_then(|n| n.checked_add(length))
            .filter(|end| *end <= bytes.len())
            .ok_or_else(|| Refusal::unreadable(kind, "it ends in the middle of a part"))?;
        at = end;
        if name == b"IEND" {
            break;
        }
    }
    if at != bytes.len() {
        return Err(Refusal::Polyglot {
            kind,
            other: format!("{} bytes after the end of the image", bytes.len() - at),
        });
    }
    Ok(())
}

/// Segments from `SOI` to `EOI`, the entropy-coded data skipped marker by marker; after `EOI` only zero padding or
/// a further JPEG (phones store a second picture that way), itself walked.
fn jpeg_structure(bytes: &[u8], depth: usize) -> Result<(), Refusal> {
    let kind = Kind::Jpeg;
    let broken = |what: &str| Refusal::unreadable(kind, what.to_owned());
    if !bytes.starts_with(b"\xFF\xD8") {
        return Err(broken("it does not start like a JPEG image"));
    }
    let mut at = 2usize;
    let end_of_image = loop {
        // Fill bytes (0xFF) may precede a marker.
        if bytes.get(at) != Some(&0xFF) {
            return Err(broken("a part of it is damaged"));
        }
        while bytes.get(at) == Some(&0xFF) {
            at += 1;
        }
        let marker = *bytes.get(at).ok_or_else(|| broken("it ends before its end marker"))?;
        at += 1;
        match marker {
            0xD9 => break at,
            0x01 | 0xD0..=0xD7 => continue,
            0x00 | 0xD8 => return Err(broken("a part of it is damaged")),
            _ => {}
        }
        let length = bytes.get(at..at + 2).ok_or_else(|| broken("it ends in the middle of a part"))?;
        let length = u16::from_be_bytes([length[0], length[1]]) as usize;
        if length < 2 || at + length > bytes.len() {
            return Err(broken("it ends in the middle of a part"));
        }
        at += length;
        if marker == 0xDA {
            // Entropy-coded data: runs to the next marker that is neither a stuffed 0xFF00 nor a restart marker.
            loop {
                let next = bytes[at..]
                    .iter()
                    .position(|b| *b == 0xFF)
                    .ok_or_else(|| broken("it ends before its end marker"))?;
                at += next;
                match bytes.get(at + 1) {
                    Some(0x00 | 0xD0..=0xD7 | 0xFF) => at += if bytes.get(at + 1) == Some(&0xFF) { 1 } else { 2 },
                    Some(_) => break,
                    None => return Err(broken("it ends before its end marker")),
                }
            }
        }
    };
    let rest = &bytes[end_of_image..];
    if rest.iter().all(|b| *b == 0) {
        return Ok(());
    }
    if rest.starts_with(b"\xFF\xD8\xFF") && depth < 4 {
        return jpeg_structure(rest, depth + 1);
    }
    Err(Refusal::Polyglot { kind, other: format!("{} bytes after the end of the image", rest.len()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus;

    #[test]
    fn clean_images_are_accepted_with_their_size() {
        let limits = Limits::default();
        assert_eq!(inspect(Kind::Png, &corpus::png(40, 30), &limits).unwrap(), "40 × 30 pixels");
        assert_eq!(inspect(Kind::Jpeg, &corpus::jpeg(64, 48), &limits).unwrap(), "64 × 48 pixels");
    }

    #[test]
    fn data_after_the_end_marker_is_refused() {
        let limits = Limits::default();
        let mut png = corpus::png(8, 8);
        png.extend_from_slice(b"<script>alert(1)</script>");
        assert_eq!(inspect(Kind::Png, &png, &limits).unwrap_err().code(), "polyglot");
        let mut jpeg = corpus::jpeg(8, 8);
        jpeg.extend_from_slice(b"%PDF-1.4 trailing");
        assert_eq!(inspect(Kind::Jpeg, &jpeg, &limits).unwrap_err().code(), "polyglot");
        let mut padded = corpus::jpeg(8, 8);
        padded.extend_from_slice(&[0; 32]);
        assert!(inspect(Kind::Jpeg, &padded, &limits).is_ok());
    }

    #[test]
    fn an_image_larger_than_the_budget_is_refused_before_decoding() {
        let limits = Limits { max_image_pixels: 1_000, ..Limits::default() };
        let refused = inspect(Kind::Png, &corpus::png(100, 100), &limits).unwrap_err();
        assert_eq!(refused.code(), "over_limit");
        assert!(refused.to_string().contains("100 × 100"), "{refused}");
    }
}
