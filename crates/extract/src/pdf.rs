//! PDF through pdfium: text layers with character boxes, and pages without one handed to OCR.

use crate::ocr::{OcrImage, OcrResult};
use crate::{ExtractConfig, ExtractOptions, IntakeError, Limits, Ocr};
use image::GrayImage;
use pactwise_domain::{CharBox, Confidence, ExtractedDocument, MediaType, Page, PageSource, Progress, ProgressPhase};
use pdfium_render::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

static PDFIUM: OnceLock<Pdfium> = OnceLock::new();
static BINDING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// The process's pdfium, bound from `path` on first use. pdfium can be bound once per process: later calls get the
/// first binding whatever path they pass.
pub(crate) fn pdfium(path: &Path) -> Result<&'static Pdfium, IntakeError> {
    if let Some(p) = PDFIUM.get() {
        return Ok(p);
    }
    let mut bound = BINDING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = PDFIUM.get() {
        return Ok(p);
    }
    if !path.is_file() {
        return Err(IntakeError::PdfiumMissing { path: path.to_owned(), detail: "no such file".to_owned() });
    }
    let bindings = Pdfium::bind_to_library(path)
        .map_err(|e| IntakeError::PdfiumMissing { path: path.to_owned(), detail: e.to_string() })?;
    *bound = Some(path.to_owned());
    Ok(PDFIUM.get_or_init(|| Pdfium::new(bindings)))
}

pub(crate) fn open<'a>(
    pdfium: &'a Pdfium,
    bytes: &'a [u8],
    password: Option<&str>,
) -> Result<PdfDocument<'a>, IntakeError> {
    pdfium.load_pdf_from_byte_slice(bytes, password).map_err(|e| match e {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError) => {
            if password.is_some() {
                IntakeError::WrongPassword
            } else {
                IntakeError::PasswordRequired
            }
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::SecurityError) => {
            IntakeError::Unsupported { what: "a PDF with an unsupported security handler".to_owned() }
        }
        other => {
            tracing::debug!(error = ?other, "pdfium could not load the PDF");
            IntakeError::Corrupt { format: "PDF", detail: describe_load_error(&other).to_owned() }
        }
    })
}

/// Words for a person, not pdfium's enum names (those go to the debug log).
fn describe_load_error(e: &PdfiumError) -> &'static str {
    match e {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FormatError) => {
            "its internal structure is broken or cut off"
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FileError) => "the PDF reader could not open it",
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PageError) => "one of its pages is broken",
        _ => "the PDF reader could not parse it",
    }
}

#[tracing::instrument(level = "info", skip_all)]
pub(crate) fn extract(
    config: &ExtractConfig,
    bytes: &[u8],
    options: &ExtractOptions<'_>,
    limits: &Limits<'_>,
    ocr: &Ocr<'_>,
) -> Result<ExtractedDocument, IntakeError> {
    let pdfium = pdfium(&config.pdfium_path)?;
    let document = open(pdfium, bytes, options.password)?;
    let pages = document.pages();
    let count = pages.len() as usize;
    limits.check_pages(count)?;

    let mut out: Vec<Option<Page>> = Vec::with_capacity(count);
    let mut needs_ocr: Vec<(usize, Geometry)> = Vec::new();
    // pdfium keeps a loaded font only while a page uses it: holding the previous page open until the next one is
    // loaded lets pages that share fonts share their parsing (a third of the time on long documents).
    let mut previous_page: Option<PdfPage<'_>> = None;
    for index in 0..count {
        let page = pages
            .get(index as PdfPageIndex)
            .map_err(|e| IntakeError::Corrupt { format: "PDF", detail: format!("page {}: {e}", index + 1) })?;
        let geometry = Geometry::of(&page);
        let layer = text_layer(&page, &geometry);
        if layer_is_usable(&page, &layer, &geometry, config.min_text_layer_chars) {
            out.push(Some(Page {
                number: index as u32 + 1,
                text: layer.text,
                source: PageSource::Text,
                confidence: Confidence::None,
                synthetic: false,
                width: geometry.width,
                height: geometry.height,
                rotation: geometry.rotation,
                char_boxes: layer.boxes,
            }));
        } else {
            out.push(None);
            needs_ocr.push((index, geometry));
        }
        previous_page = Some(page);
        (options.progress)(Progress { phase: ProgressPhase::Reading, done: index as u32 + 1, total: count as u32 });
    }
    drop(previous_page);

    if !needs_ocr.is_empty() {
        let total = needs_ocr.len() as u32;
        let results = if ocr.enabled {
            let renders = needs_ocr.iter().map(|(index, geometry)| {
                let image = pages
                    .get(*index as PdfPageIndex)
                    .map_err(|e| e.to_string())
                    .and_then(|page| render_gray(&page, geometry, config.ocr_dpi, config.max_image_pixels));
                image.map(|image| OcrImage { key: *index, scale: image.width() as f32 / geometry.width, image })
            });
            ocr.pool().recognize_all(renders, |done| {
                (options.progress)(Progress { phase: ProgressPhase::Ocr, done, total });
            })?
        } else {
            needs_ocr.iter().map(|(index, _)| (*index, OcrResult::empty())).collect()
        };
        for (index, result) in results {
            let geometry = &needs_ocr.iter().find(|(i, _)| *i == index).map(|(_, g)| *g).unwrap_or_default();
            out[index] = Some(Page {
                number: index as u32 + 1,
                text: result.text,
                source: PageSource::Ocr,
                confidence: Confidence::Measured(result.confidence),
                synthetic: false,
                width: geometry.width,
                height: geometry.height,
                rotation: geometry.rotation,
                char_boxes: result.boxes,
            });
        }
    }

    Ok(ExtractedDocument {
        media_type: MediaType::Pdf,
        content_hash: String::new(),
        pages: out.into_iter().flatten().collect(),
        synthetic: false,
        headers: Vec::new(),
        footers: Vec::new(),
    })
}

/// A page's size as displayed and the rotation that maps its own coordinates to the display.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Geometry {
    pub width: f32,
    pub height: f32,
    pub rotation: u16,
}

impl Geometry {
    pub fn of(page: &PdfPage<'_>) -> Geometry {
        let rotation = match page.rotation() {
            Ok(PdfPageRenderRotation::Degrees90) => 90,
            Ok(PdfPageRenderRotation::Degrees180) => 180,
            Ok(PdfPageRenderRotation::Degrees270) => 270,
            _ => 0,
        };
        Geometry { width: page.width().value, height: page.height().value, rotation }
    }

    /// Maps a rectangle in the page's own space (points, origin bottom-left, before rotation) to display space
    /// (origin top-left, y down, rotation applied): returns x, y, width, height.
    fn to_display(self, left: f32, bottom: f32, right: f32, top: f32) -> (f32, f32, f32, f32) {
        // Unrotated size: width and height as displayed are swapped for quarter turns.
        let (w0, h0) = if self.rotation % 180 == 90 { (self.height, self.width) } else { (self.width, self.height) };
        let (x0, y0, x1, y1) = match self.rotation {
            90 => (bottom, left, top, right),
            180 => (w0 - right, bottom, w0 - left, top),
            270 => (h0 - top, w0 - right, h0 - bottom, w0 - left),
            _ => (left, h0 - top, right, h0 - bottom),
        };
        (x0, y0, (x1 - x0).max(0.0), (y1 - y0).max(0.0))
    }
}

pub(crate) struct TextLayer {
    pub text: String,
    pub boxes: Vec<CharBox>,
    /// Characters that are not whitespace.
    pub visible_chars: usize,
}

/// Reads a page's text layer: text with `\n` line endings and a box per visible character.
pub(crate) fn text_layer(page: &PdfPage<'_>, geometry: &Geometry) -> TextLayer {
    let mut layer = TextLayer { text: String::new(), boxes: Vec::new(), visible_chars: 0 };
    let Ok(text) = page.text() else {
        return layer;
    };
    let mut index: u32 = 0;
    let mut after_cr = false;
    for ch in text.chars().iter() {
        let Some(c) = ch.unicode_char() else { continue };
        if c == '\n' && after_cr {
            after_cr = false;
            continue;
        }
        after_cr = c == '\r';
        let c = if c == '\r' { '\n' } else { c };
        if (c as u32) < 0x20 && c != '\n' && c != '\t' || c == '\u{FFFE}' || c == '\u{FFFF}' {
            continue;
        }
        let expanded = expand_ligature(c);
        let rect = if c.is_whitespace() { None } else { ch.tight_bounds().ok() };
        let parts = expanded.len().max(1) as f32;
        for (k, part) in expanded.iter().enumerate() {
            if let Some(r) = rect {
                let (x, y, w, h) =
                    geometry.to_display(r.left().value, r.bottom().value, r.right().value, r.top().value);
                let piece = w / parts;
                layer.boxes.push(CharBox { index, x: x + piece * k as f32, y, width: piece, height: h });
            }
            if !part.is_whitespace() {
                layer.visible_chars += 1;
            }
            layer.text.push(*part);
            index += 1;
        }
    }
    layer
}

/// Typographic ligatures become their letters, so searches and quotes match what a person reads.
fn expand_ligature(c: char) -> Vec<char> {
    match c {
        '\u{FB00}' => vec!['f', 'f'],
        '\u{FB01}' => vec!['f', 'i'],
        '\u{FB02}' => vec!['f', 'l'],
        '\u{FB03}' => vec!['f', 'f', 'i'],
        '\u{FB04}' => vec!['f', 'f', 'l'],
        '\u{FB05}' | '\u{FB06}' => vec!['s', 't'],
        other => vec![other],
    }
}

/// A text layer is usable unless it is empty, or nearly empty on a page that is mostly image.
fn layer_is_usable(page: &PdfPage<'_>, layer: &TextLayer, geometry: &Geometry, min_chars: usize) -> bool {
    if layer.visible_chars == 0 {
        return false;
    }
    if layer.visible_chars >= min_chars {
        return true;
    }
    image_coverage(page, geometry) < 0.5
}

/// Share of the page area covered by image objects (overlaps counted twice, capped at 1).
fn image_coverage(page: &PdfPage<'_>, geometry: &Geometry) -> f32 {
    let area = (geometry.width * geometry.height).max(1.0);
    let mut covered = 0.0;
    for object in page.objects().iter() {
        if object.object_type() == PdfPageObjectType::Image
            && let Ok(b) = object.bounds()
        {
            covered += (b.width().value * b.height().value).abs();
        }
    }
    (covered / area).min(1.0)
}

/// Renders a page in grey at `dpi`, lowering the resolution if the render would exceed the pixel limit.
pub(crate) fn render_gray(
    page: &PdfPage<'_>,
    geometry: &Geometry,
    dpi: u32,
    max_pixels: u64,
) -> Result<GrayImage, String> {
    let mut scale = dpi as f32 / 72.0;
    let pixels = (geometry.width * scale) as f64 * (geometry.height * scale) as f64;
    if pixels > max_pixels as f64 {
        scale *= (max_pixels as f64 / pixels).sqrt() as f32;
    }
    let config = PdfRenderConfig::new().scale_page_by_factor(scale).render_form_data(true);
    let bitmap = page.render_with_config(&config).map_err(|e| e.to_string())?;
    let image = bitmap.as_image().map_err(|e| e.to_string())?;
    Ok(image.into_luma8())
}
