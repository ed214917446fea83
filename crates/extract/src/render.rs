//! Page images for the review view: PDF pages through pdfium, image pages scaled; PNG, cached by document hash,
//! page and scale.

use crate::images::{IMAGE_SCALE, decode_pages};
use crate::pdf::{Geometry, open, pdfium};
use crate::{ExtractConfig, IntakeError, Limits, content_hash, detect};
use image::{DynamicImage, ImageFormat};
use pactwise_domain::MediaType;
use pdfium_render::prelude::*;
use std::io::Cursor;
use std::path::{Path, PathBuf};

pub(crate) fn render_page(
    config: &ExtractConfig,
    bytes: &[u8],
    page: u32,
    scale: f32,
    password: Option<&str>,
    cache_dir: Option<&Path>,
) -> Result<Vec<u8>, IntakeError> {
    if !(0.05..=16.0).contains(&scale) || !scale.is_finite() {
        return Err(IntakeError::Render { detail: format!("scale {scale} is outside 0.05..=16") });
    }
    let cached = cache_dir.map(|dir| cache_path(dir, &content_hash(bytes), page, scale));
    if let Some(path) = &cached
        && let Ok(png) = std::fs::read(path)
    {
        return Ok(png);
    }
    let image = match detect::sniff_media_type(bytes) {
        Some(MediaType::Pdf) => render_pdf(config, bytes, page, scale, password)?,
        Some(m) if m.is_image() => render_image(config, bytes, m, page, scale)?,
        Some(m) => return Err(IntakeError::Unsupported { what: format!("rendering pages of {m} files") }),
        None => return Err(IntakeError::Unsupported { what: detect::describe_unknown(bytes) }),
    };
    let mut png = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| IntakeError::Render { detail: e.to_string() })?;
    if let Some(path) = cached {
        write_atomically(&path, &png);
    }
    Ok(png)
}

/// `<cache>/<hash>/p<page>-s<scale in thousandths>.png`
pub(crate) fn cache_path(dir: &Path, hash: &str, page: u32, scale: f32) -> PathBuf {
    dir.join(hash).join(format!("p{page}-s{}.png", (scale * 1000.0).round() as u32))
}

/// Best effort: a cache that cannot be written only costs a re-render.
fn write_atomically(path: &Path, png: &[u8]) {
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, png).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

fn render_pdf(
    config: &ExtractConfig,
    bytes: &[u8],
    page: u32,
    scale: f32,
    password: Option<&str>,
) -> Result<DynamicImage, IntakeError> {
    let pdfium = pdfium(&config.pdfium_path)?;
    let document = open(pdfium, bytes, password)?;
    let count = document.pages().len() as u32;
    if page == 0 || page > count {
        return Err(IntakeError::NoSuchPage { page, count });
    }
    let pdf_page = document
        .pages()
        .get((page - 1) as PdfPageIndex)
        .map_err(|e| IntakeError::Corrupt { format: "PDF", detail: e.to_string() })?;
    let g = Geometry::of(&pdf_page);
    let pixels = (g.width * scale) as f64 * (g.height * scale) as f64;
    if pixels > config.max_image_pixels as f64 {
        return Err(IntakeError::TooManyPixels {
            width: (g.width * scale) as u64,
            height: (g.height * scale) as u64,
            limit: config.max_image_pixels,
        });
    }
    let render = PdfRenderConfig::new().scale_page_by_factor(scale).render_form_data(true);
    let bitmap = pdf_page.render_with_config(&render).map_err(|e| IntakeError::Render { detail: e.to_string() })?;
    let image = bitmap.as_image().map_err(|e| IntakeError::Render { detail: e.to_string() })?;
    Ok(DynamicImage::ImageRgb8(image.into_rgb8()))
}

fn render_image(
    config: &ExtractConfig,
    bytes: &[u8],
    media_type: MediaType,
    page: u32,
    scale: f32,
) -> Result<DynamicImage, IntakeError> {
    let limits = Limits { max_pages: config.max_pages, config };
    let mut pages = decode_pages(bytes, media_type, &limits)?;
    let count = pages.len() as u32;
    if page == 0 || page > count {
        return Err(IntakeError::NoSuchPage { page, count });
    }
    let image = pages.swap_remove((page - 1) as usize);
    let factor = scale / IMAGE_SCALE;
    let (w, h) = (
        ((image.width() as f32 * factor).round() as u32).max(1),
        ((image.height() as f32 * factor).round() as u32).max(1),
    );
    limits.check_pixels(w as u64, h as u64)?;
    let resized = image::imageops::resize(&image, w, h, image::imageops::FilterType::Triangle);
    Ok(DynamicImage::ImageLuma8(resized))
}
