//! What can go wrong at intake, in words a person can act on, each with its stable [`ErrorCode`].

use pactwise_domain::ErrorCode;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error(
        "the PDF library was not found at {path}: run `make setup` to install it, or set PACTWISE_PDFIUM_PATH \
         to the path of libpdfium.so ({detail})"
    )]
    PdfiumMissing { path: PathBuf, detail: String },
    #[error("the OCR engine (Tesseract, English) could not start: install tesseract-ocr-eng (`make setup`) ({detail})")]
    OcrUnavailable { detail: String },
    #[error("{path} could not be read: {detail}")]
    Unreadable { path: PathBuf, detail: String },
    #[error("the file is empty")]
    Empty,
    #[error("the document has no pages")]
    NoPages,
    #[error("the PDF is password-protected; open it with its password (--password) or remove the protection")]
    PasswordRequired,
    #[error("the password given does not open this PDF; check it and try again")]
    WrongPassword,
    #[error("the file is not a PDF although it is named .pdf (it starts with {magic:?})")]
    NotAPdf { magic: String },
    #[error(
        "the {format} file is damaged or truncated and cannot be read ({detail}); open it in the program that made it \
         and save or export it again, or get a fresh copy"
    )]
    Corrupt { format: &'static str, detail: String },
    #[error(
        "the document has {pages} pages, more than the page limit of {limit}; raise the limit (--max-pages) to take it in"
    )]
    TooManyPages { pages: usize, limit: usize },
    #[error(
        "the image is {width}×{height} pixels, more than the limit of {limit} pixels; scan it at a lower resolution"
    )]
    TooManyPixels { width: u64, height: u64, limit: u64 },
    #[error("the DOCX would expand to more than {limit} bytes; it may be a zip bomb, so it was not opened")]
    DocxTooLarge { limit: u64 },
    #[error("this kind of file cannot be taken in ({what}); use PDF, DOCX, TXT, PNG, JPEG or TIFF")]
    Unsupported { what: String },
    #[error("page {page} does not exist (the document has {count})")]
    NoSuchPage { page: u32, count: u32 },
    #[error("page rendering failed: {detail}")]
    Render { detail: String },
}

impl IntakeError {
    /// The stable code the UI and scripts branch on.
    pub fn code(&self) -> ErrorCode {
        match self {
            IntakeError::PdfiumMissing { .. } | IntakeError::OcrUnavailable { .. } => ErrorCode::DependencyMissing,
            IntakeError::Unreadable { .. } => ErrorCode::FileUnreadable,
            IntakeError::Empty | IntakeError::NoPages => ErrorCode::FileEmpty,
            IntakeError::PasswordRequired | IntakeError::WrongPassword => ErrorCode::FileEncrypted,
            IntakeError::NotAPdf { .. } | IntakeError::Corrupt { .. } => ErrorCode::FileCorrupt,
            IntakeError::TooManyPages { .. } => ErrorCode::TooManyPages,
            IntakeError::TooManyPixels { .. } | IntakeError::DocxTooLarge { .. } => ErrorCode::ResourceLimit,
            IntakeError::Unsupported { .. } => ErrorCode::UnsupportedFileType,
            IntakeError::NoSuchPage { .. } => ErrorCode::InvalidInput,
            IntakeError::Render { .. } => ErrorCode::Internal,
        }
    }
}
