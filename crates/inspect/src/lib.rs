//! Default-deny structural inspection of the files vendors upload to a tender.
//!
//! A file is accepted only when all of these hold; anything else is refused with the reason, in words the vendor
//! can act on ([`Refusal`]):
//! - its name ends in one of the allowed types ([`Kind`]: PDF, DOCX, XLSX, PNG, JPEG, TXT, CSV);
//! - the type read from its bytes is the type its name says, and no other format's signature sits where a reader
//!   of that other format would find it (polyglots);
//! - its real parser reads it completely, within limits ([`Limits`]): lopdf for PDF (every object the file
//!   declares must load), the zip reader and an XML reader for DOCX and XLSX (every part, counted while
//!   expanding), the image decoders for PNG and JPEG (within a pixel budget), UTF-8 for text;
//! - it carries no active or external content: PDF without JavaScript, automatic actions (`/AA`, an `/OpenAction`
//!   that is more than a page to open at), actions other than go-to, web link and named page actions, embedded
//!   files, XFA forms, rich media or encryption; OOXML without macros, ActiveX, OLE objects, external
//!   relationships other than hyperlinks, DDE or fields that fetch other files, or XML document type declarations;
//!   CSV without cells a spreadsheet would run as a formula.
//!
//! Pure: bytes in, a verdict out, no I/O, no clock; every caller (the service on upload, the desktop before it
//! opens a file, the hostile-file corpus test) uses [`inspect`].

mod ooxml;
mod pdf;
mod picture;
mod refusal;
mod sniff;
mod text;

pub mod corpus;

pub use refusal::Refusal;
pub use sniff::Kind;

use sha2::{Digest, Sha256};

/// Bounds on what one file may make the inspector do. The defaults suit tender documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The largest file accepted, in bytes.
    pub max_file_bytes: u64,
    /// The most a single PDF stream may expand to when decompressed.
    pub max_pdf_stream_bytes: usize,
    /// The most objects a PDF may declare.
    pub max_pdf_objects: usize,
    /// The most pages a PDF may have.
    pub max_pdf_pages: usize,
    /// The most entries a DOCX or XLSX archive may hold.
    pub max_archive_entries: usize,
    /// The most all entries of an archive may expand to together.
    pub max_archive_expanded_bytes: u64,
    /// The largest expansion of one archive entry, as uncompressed ÷ compressed bytes.
    pub max_archive_ratio: u64,
    /// The most pixels (width × height) an image, or an image inside a DOCX or XLSX, may decode to.
    pub max_image_pixels: u64,
    /// How deep PDF objects or XML elements may nest.
    pub max_nesting: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_file_bytes: 100 * 1024 * 1024,
            max_pdf_stream_bytes: 64 * 1024 * 1024,
            max_pdf_objects: 500_000,
            max_pdf_pages: 5_000,
            max_archive_entries: 5_000,
            max_archive_expanded_bytes: 512 * 1024 * 1024,
            max_archive_ratio: 200,
            max_image_pixels: 100_000_000,
            max_nesting: 128,
        }
    }
}

/// What the inspector found in an accepted file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Inspection {
    /// The file's type, from its bytes (the same as its name's).
    pub kind: Kind,
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, lower-case hex: the verdict belongs to exactly these bytes.
    pub sha256: String,
    /// A fact a person can check: pages of a PDF, parts of a DOCX or XLSX, pixels of an image, lines of a text.
    pub summary: String,
}

/// Inspects one file: `name` as the vendor gave it (only its extension counts), `bytes` its whole content.
pub fn inspect(name: &str, bytes: &[u8], limits: &Limits) -> Result<Inspection, Refusal> {
    let _span = tracing::info_span!("inspect", bytes = bytes.len()).entered();
    let verdict = inspect_inner(name, bytes, limits);
    match &verdict {
        Ok(found) => tracing::info!(kind = found.kind.label(), "file accepted"),
        Err(refusal) => tracing::info!(code = refusal.code(), "file refused"),
    }
    verdict
}

fn inspect_inner(name: &str, bytes: &[u8], limits: &Limits) -> Result<Inspection, Refusal> {
    if bytes.is_empty() {
        return Err(Refusal::Empty);
    }
    if bytes.len() as u64 > limits.max_file_bytes {
        return Err(Refusal::TooLarge { bytes: bytes.len() as u64, limit: limits.max_file_bytes });
    }
    let named = Kind::from_name(name)?;
    let found = sniff::kind_of(bytes);
    if found != Some(named.family()) {
        return Err(Refusal::TypeMismatch { named, found: sniff::describe(bytes) });
    }
    sniff::refuse_polyglot(named, bytes)?;
    let summary = match named {
        Kind::Pdf => pdf::inspect(bytes, limits)?,
        Kind::Docx | Kind::Xlsx => ooxml::inspect(named, bytes, limits)?,
        Kind::Png | Kind::Jpeg => picture::inspect(named, bytes, limits)?,
        Kind::Text | Kind::Csv => text::inspect(named, bytes)?,
    };
    Ok(Inspection { kind: named, bytes: bytes.len() as u64, sha256: hex::encode(Sha256::digest(bytes)), summary })
}
