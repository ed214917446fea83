//! Document intake: turns PDF (text layer through pdfium), scanned pages (Tesseract through leptess), DOCX and TXT
//! into pages with text, character boxes, a source and a confidence whose kind (measured, estimated, none) travels
//! with it; renders PDF and image pages to PNG for the review view. Pure: no store, no network.
//!
//! Processes that OCR must be started with `OMP_THREAD_LIMIT=1` in their environment (setting it from `main` is too
//! late for Tesseract's OpenMP runtime): parallelism comes from our own workers, one Tesseract engine each.

mod detect;
mod docx;
mod docx_numbering;
mod error;
pub mod eval;
pub mod fixtures;
mod images;
mod ocr;
mod paginate;
mod pdf;
mod render;
mod report;
mod txt;

pub use detect::sniff_media_type;
pub use error::IntakeError;
pub use report::{ExtractReport, ReportPage};

use ocr::OcrPool;
use pactwise_domain::{ExtractedDocument, MediaType, Progress};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where `make setup` installs libpdfium.
pub const DEFAULT_PDFIUM_PATH: &str = "/usr/local/lib/pactwise/libpdfium.so";
/// Environment variable that overrides [`ExtractConfig::pdfium_path`] in [`ExtractConfig::from_env`].
pub const PDFIUM_PATH_ENV: &str = "PACTWISE_PDFIUM_PATH";
/// Where an installed package puts libpdfium, under the install prefix (the parent of the program's folder): the
/// `.deb` installs `/usr/bin/pactwise-desk` and `/usr/lib/pactwise/libpdfium.so` (`packaging/`).
pub const BUNDLED_PDFIUM_PATH: &str = "lib/pactwise/libpdfium.so";

/// The libpdfium to load, one rule for the app and the CLI: `PACTWISE_PDFIUM_PATH` when set (`env`); else the one a
/// package installed beside the program (`exe`, the running program's path) when it is there; else where
/// `make setup` installs it ([`DEFAULT_PDFIUM_PATH`]).
pub fn locate_pdfium(env: Option<&std::ffi::OsStr>, exe: Option<&Path>) -> PathBuf {
    if let Some(path) = env.filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    exe.and_then(Path::parent)
        .and_then(Path::parent)
        .map(|prefix| prefix.join(BUNDLED_PDFIUM_PATH))
        .filter(|bundled| bundled.is_file())
        .unwrap_or_else(|| PathBuf::from(DEFAULT_PDFIUM_PATH))
}

/// Settings of an [`Extractor`]; the defaults suit a desktop.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ExtractConfig {
    /// Path of libpdfium.so.
    pub pdfium_path: PathBuf,
    /// Tesseract's tessdata folder; `None` uses the system's.
    pub tessdata_dir: Option<PathBuf>,
    /// Tesseract language(s), e.g. `eng`.
    pub ocr_language: String,
    /// OCR workers (one Tesseract engine each); 0 means one per core.
    pub ocr_workers: usize,
    /// Resolution at which PDF pages without a text layer are rendered for OCR.
    pub ocr_dpi: u32,
    /// Documents with more pages are refused ([`DEFAULT_MAX_PAGES`] unless set).
    pub max_pages: usize,
    /// Images (and renders) with more pixels are refused, against decompression bombs.
    pub max_image_pixels: u64,
    /// DOCX files that would expand past this many bytes are refused, against zip bombs.
    pub max_docx_uncompressed_bytes: u64,
    /// A PDF page with fewer non-blank characters than this, mostly covered by images, is OCR'd.
    pub min_text_layer_chars: usize,
    /// Target size of synthetic pages of DOCX and TXT without explicit page breaks.
    pub synthetic_page_chars: usize,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig {
            pdfium_path: PathBuf::from(DEFAULT_PDFIUM_PATH),
            tessdata_dir: None,
            ocr_language: "eng".to_owned(),
            ocr_workers: 0,
            ocr_dpi: 300,
            max_pages: DEFAULT_MAX_PAGES,
            max_image_pixels: 150_000_000,
            max_docx_uncompressed_bytes: 256 * 1024 * 1024,
            min_text_layer_chars: 40,
            synthetic_page_chars: 3_000,
        }
    }
}

impl ExtractConfig {
    /// The defaults, with the pdfium path found by [`locate_pdfium`] (`PACTWISE_PDFIUM_PATH` first).
    pub fn from_env() -> Self {
        ExtractConfig {
            pdfium_path: locate_pdfium(
                std::env::var_os(PDFIUM_PATH_ENV).as_deref(),
                std::env::current_exe().ok().as_deref(),
            ),
            ..ExtractConfig::default()
        }
    }

    fn workers(&self) -> usize {
        if self.ocr_workers > 0 {
            self.ocr_workers
        } else {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        }
    }
}

/// Documents with more pages than this are refused unless the caller sets another limit. The one page limit: the
/// configuration's default, the help of `pactwise extract` and of `pactwise-extract`, and their checks use it.
pub const DEFAULT_MAX_PAGES: usize = 5_000;

/// Checks a page limit a person gave (`--max-pages`): a whole number of at least 1, since 0 would refuse every
/// document. The message is the one both commands print.
pub fn parse_max_pages(text: &str) -> Result<usize, String> {
    match text.trim().replace([',', '_'], "").parse::<usize>() {
        Ok(0) => Err(format!(
            "--max-pages 0 would refuse every document; give at least 1 (the default is {})",
            thousands(DEFAULT_MAX_PAGES)
        )),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "--max-pages takes a whole number of pages, at least 1 (the default is {}); {text:?} is not one",
            thousands(DEFAULT_MAX_PAGES)
        )),
    }
}

/// The help line of `--max-pages`, with the limit that applies when it is not given.
pub fn max_pages_help() -> String {
    format!("Refuse documents with more pages than this, at least 1 [default: {}]", thousands(DEFAULT_MAX_PAGES))
}

/// `5000` as `5,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn no_progress(_: Progress) {}

/// Per-call options of [`Extractor::extract_file`] and [`Extractor::extract_bytes`].
#[derive(Clone, Copy)]
pub struct ExtractOptions<'a> {
    /// Password of a protected PDF.
    pub password: Option<&'a str>,
    /// Overrides the configured page limit for this call.
    pub max_pages: Option<usize>,
    /// When false, pages that would need OCR come back empty with a measured confidence of 0, so nothing trusts them.
    pub ocr: bool,
    /// Called with progress (page i of n) from the calling thread.
    pub progress: &'a (dyn Fn(Progress) + Sync),
}

impl Default for ExtractOptions<'_> {
    fn default() -> Self {
        ExtractOptions { password: None, max_pages: None, ocr: true, progress: &no_progress }
    }
}

/// Turns files into pages. Cheap to share: pdfium is bound on first use, OCR workers start on the first scan and
/// live (each with its Tesseract engine) until the extractor is dropped.
pub struct Extractor {
    config: ExtractConfig,
    ocr: OnceLock<OcrPool>,
}

impl Extractor {
    pub fn new(config: ExtractConfig) -> Self {
        Extractor { config, ocr: OnceLock::new() }
    }

    pub fn config(&self) -> &ExtractConfig {
        &self.config
    }

    /// Checks that libpdfium can be loaded, with the error that says how to install it if not.
    pub fn check_pdfium(&self) -> Result<(), IntakeError> {
        pdf::pdfium(&self.config.pdfium_path).map(|_| ())
    }

    /// Reads a file and extracts it; its type comes from its bytes, and a `.pdf` name that holds no PDF is refused.
    pub fn extract_file(&self, path: &Path, options: &ExtractOptions<'_>) -> Result<ExtractedDocument, IntakeError> {
        let bytes = std::fs::read(path)
            .map_err(|e| IntakeError::Unreadable { path: path.to_owned(), detail: e.to_string() })?;
        let named_pdf = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf"));
        let declared = if named_pdf { Some(MediaType::Pdf) } else { None };
        self.extract_bytes(&bytes, declared, options)
    }

    /// Extracts bytes. `media_type`, when given, is checked against the bytes (a PDF must start like one); when
    /// absent it is detected.
    #[tracing::instrument(level = "info", skip_all, fields(len = bytes.len()))]
    pub fn extract_bytes(
        &self,
        bytes: &[u8],
        media_type: Option<MediaType>,
        options: &ExtractOptions<'_>,
    ) -> Result<ExtractedDocument, IntakeError> {
        if bytes.is_empty() {
            return Err(IntakeError::Empty);
        }
        let sniffed = detect::sniff_media_type(bytes);
        let media_type = match (media_type, sniffed) {
            (Some(MediaType::Pdf), Some(MediaType::Pdf)) | (None, Some(MediaType::Pdf)) => MediaType::Pdf,
            (Some(MediaType::Pdf), _) => return Err(IntakeError::NotAPdf { magic: detect::magic_of(bytes) }),
            (_, Some(found)) => found,
            (_, None) => return Err(IntakeError::Unsupported { what: detect::describe_unknown(bytes) }),
        };
        let limits = Limits { max_pages: options.max_pages.unwrap_or(self.config.max_pages), config: &self.config };
        let ocr = Ocr { extractor: self, enabled: options.ocr };
        let mut doc = match media_type {
            MediaType::Pdf => pdf::extract(&self.config, bytes, options, &limits, &ocr)?,
            MediaType::Docx => docx::extract(bytes, &limits)?,
            MediaType::Txt => txt::extract(bytes, &limits)?,
            MediaType::Png | MediaType::Jpeg | MediaType::Tiff => {
                images::extract(bytes, media_type, options, &limits, &ocr)?
            }
        };
        doc.content_hash = content_hash(bytes);
        doc.synthetic = doc.pages.iter().any(|p| p.synthetic);
        tracing::info!(media_type = %doc.media_type, pages = doc.pages.len(), "extracted");
        Ok(doc)
    }

    /// Renders one page (1-based) of a PDF or image document to PNG at `scale` (1.0 = 72 pixels per inch). With a
    /// cache directory, renders are kept under `<cache>/<content hash>/` and reused.
    /// A page's render kept by [`Extractor::render_page`] under `cache_dir` for the document whose content hash is
    /// `hash`, without reading the document: a page seen before costs one file read.
    pub fn cached_render(&self, cache_dir: &Path, hash: &str, page: u32, scale: f32) -> Option<Vec<u8>> {
        std::fs::read(render::cache_path(cache_dir, hash, page, scale)).ok()
    }

    pub fn render_page(
        &self,
        bytes: &[u8],
        page: u32,
        scale: f32,
        password: Option<&str>,
        cache_dir: Option<&Path>,
    ) -> Result<Vec<u8>, IntakeError> {
        render::render_page(&self.config, bytes, page, scale, password, cache_dir)
    }

    fn ocr_pool(&self) -> &OcrPool {
        self.ocr.get_or_init(|| {
            OcrPool::start(self.config.workers(), self.config.tessdata_dir.clone(), self.config.ocr_language.clone())
        })
    }
}

/// SHA-256 of the bytes, lowercase hex: the document's content hash.
pub fn content_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub(crate) struct Limits<'a> {
    pub max_pages: usize,
    pub config: &'a ExtractConfig,
}

impl Limits<'_> {
    pub fn check_pages(&self, pages: usize) -> Result<(), IntakeError> {
        if pages == 0 {
            return Err(IntakeError::NoPages);
        }
        if pages > self.max_pages {
            return Err(IntakeError::TooManyPages { pages, limit: self.max_pages });
        }
        Ok(())
    }

    pub fn check_pixels(&self, width: u64, height: u64) -> Result<(), IntakeError> {
        let limit = self.config.max_image_pixels;
        if width.saturating_mul(height) > limit || width == 0 || height == 0 {
            if width == 0 || height == 0 {
                return Err(IntakeError::Corrupt { format: "image", detail: "zero-sized image".to_owned() });
            }
            return Err(IntakeError::TooManyPixels { width, height, limit });
        }
        Ok(())
    }
}

/// OCR as the formats see it: on or off for this call, through the extractor's pool.
pub(crate) struct Ocr<'a> {
    extractor: &'a Extractor,
    pub enabled: bool,
}

impl Ocr<'_> {
    pub fn pool(&self) -> &OcrPool {
        self.extractor.ocr_pool()
    }
}
