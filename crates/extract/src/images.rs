//! Photos and scans (PNG, JPEG, TIFF with any number of pages) as scanned pages: decoded within a pixel limit and
//! OCR'd. Without resolution information an image is taken to be 300 dpi.

use crate::ocr::{OcrImage, OcrResult};
use crate::{ExtractOptions, IntakeError, Limits, Ocr};
use image::{GrayImage, ImageReader};
use pactwise_domain::{Confidence, ExtractedDocument, MediaType, Page, PageSource, Progress, ProgressPhase};
use std::io::Cursor;

/// Pixels per point assumed for images.
pub(crate) const IMAGE_SCALE: f32 = 300.0 / 72.0;

pub(crate) fn extract(
    bytes: &[u8],
    media_type: MediaType,
    options: &ExtractOptions<'_>,
    limits: &Limits<'_>,
    ocr: &Ocr<'_>,
) -> Result<ExtractedDocument, IntakeError> {
    let images = decode_pages(bytes, media_type, limits)?;
    let total = images.len() as u32;
    (options.progress)(Progress { phase: ProgressPhase::Reading, done: total, total });
    let sizes: Vec<(u32, u32)> = images.iter().map(|i| i.dimensions()).collect();
    let results: Vec<(usize, OcrResult)> = if ocr.enabled {
        let pages = images.into_iter().enumerate().map(|(key, image)| Ok(OcrImage { key, scale: IMAGE_SCALE, image }));
        ocr.pool()
            .recognize_all(pages, |done| (options.progress)(Progress { phase: ProgressPhase::Ocr, done, total }))?
    } else {
        (0..sizes.len()).map(|k| (k, OcrResult::empty())).collect()
    };
    let mut pages: Vec<Page> = results
        .into_iter()
        .map(|(key, r)| Page {
            number: key as u32 + 1,
            text: r.text,
            source: PageSource::Ocr,
            confidence: Confidence::Measured(r.confidence),
            synthetic: false,
            width: sizes[key].0 as f32 / IMAGE_SCALE,
            height: sizes[key].1 as f32 / IMAGE_SCALE,
            rotation: 0,
            char_boxes: r.boxes,
        })
        .collect();
    pages.sort_by_key(|p| p.number);
    Ok(ExtractedDocument {
        media_type,
        content_hash: String::new(),
        pages,
        synthetic: false,
        headers: Vec::new(),
        footers: Vec::new(),
    })
}

/// Decodes every page of an image file to grey, refusing anything over the pixel or page limits before decoding it.
pub(crate) fn decode_pages(
    bytes: &[u8],
    media_type: MediaType,
    limits: &Limits<'_>,
) -> Result<Vec<GrayImage>, IntakeError> {
    if media_type == MediaType::Tiff {
        return decode_tiff(bytes, limits);
    }
    let format = if media_type == MediaType::Png { image::ImageFormat::Png } else { image::ImageFormat::Jpeg };
    let corrupt = |e: image::ImageError| IntakeError::Corrupt { format: media_type.as_str(), detail: e.to_string() };
    let (w, h) = ImageReader::with_format(Cursor::new(bytes), format).into_dimensions().map_err(corrupt)?;
    limits.check_pixels(w as u64, h as u64)?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut image_limits = image::Limits::default();
    image_limits.max_image_width = Some(w);
    image_limits.max_image_height = Some(h);
    image_limits.max_alloc = Some(limits.config.max_image_pixels.saturating_mul(8));
    reader.limits(image_limits);
    let image = reader.decode().map_err(corrupt)?;
    Ok(vec![image.into_luma8()])
}

fn decode_tiff(bytes: &[u8], limits: &Limits<'_>) -> Result<Vec<GrayImage>, IntakeError> {
    use tiff::ColorType;
    use tiff::decoder::{Decoder, DecodingResult};
    let corrupt = |e: tiff::TiffError| IntakeError::Corrupt { format: "TIFF", detail: e.to_string() };
    let mut tiff_limits = tiff::decoder::Limits::default();
    tiff_limits.decoding_buffer_size =
        usize::try_from(limits.config.max_image_pixels.saturating_mul(8)).unwrap_or(usize::MAX);
    let mut decoder = Decoder::new(Cursor::new(bytes)).map_err(corrupt)?.with_limits(tiff_limits);
    let mut pages = Vec::new();
    loop {
        if pages.len() >= limits.max_pages {
            return Err(IntakeError::TooManyPages { pages: pages.len() + 1, limit: limits.max_pages });
        }
        let (w, h) = decoder.dimensions().map_err(corrupt)?;
        limits.check_pixels(w as u64, h as u64)?;
        let colortype = decoder.colortype().map_err(corrupt)?;
        let data = decoder.read_image().map_err(corrupt)?;
        let pixels = (w as usize) * (h as usize);
        let gray: Vec<u8> = match (colortype, data) {
            (ColorType::Gray(8), DecodingResult::U8(v)) => v,
            (ColorType::Gray(16), DecodingResult::U16(v)) => v.iter().map(|&p| (p >> 8) as u8).collect(),
            (ColorType::Gray(1), DecodingResult::U8(v)) => unpack_bilevel(&v, w as usize, h as usize),
            (ColorType::GrayA(8), DecodingResult::U8(v)) => v.chunks_exact(2).map(|c| c[0]).collect(),
            (ColorType::RGB(8), DecodingResult::U8(v)) => v.chunks_exact(3).map(luma).collect(),
            (ColorType::RGBA(8), DecodingResult::U8(v)) => v.chunks_exact(4).map(luma).collect(),
            (other, _) => {
                return Err(IntakeError::Unsupported { what: format!("a TIFF with {other:?} pixels") });
            }
        };
        if gray.len() < pixels {
            return Err(IntakeError::Corrupt { format: "TIFF", detail: "image data shorter than its size".into() });
        }
        let image = GrayImage::from_raw(w, h, gray[..pixels].to_vec())
            .ok_or_else(|| IntakeError::Corrupt { format: "TIFF", detail: "bad image size".into() })?;
        pages.push(image);
        if !decoder.more_images() {
            break;
        }
        decoder.next_image().map_err(corrupt)?;
    }
    Ok(pages)
}

fn luma(c: &[u8]) -> u8 {
    ((c[0] as u32 * 299 + c[1] as u32 * 587 + c[2] as u32 * 114) / 1000) as u8
}

/// One bit per pixel, rows padded to whole bytes; TIFF's default photometric says 0 is white.
fn unpack_bilevel(packed: &[u8], w: usize, h: usize) -> Vec<u8> {
    let row = w.div_ceil(8);
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let byte = packed.get(y * row + x / 8).copied().unwrap_or(0);
            let bit = (byte >> (7 - (x % 8))) & 1;
            out.push(if bit == 1 { 0 } else { 255 });
        }
    }
    out
}
