//! Document intake as a user action: `pactwise extract FILE` turns a file into pages (text, character boxes,
//! source, confidence with its kind) without keeping it.

use crate::ApiError;
use pactwise_domain::ErrorCode;
use pactwise_domain::page::Progress;
use pactwise_extract::{ExtractConfig, ExtractOptions, ExtractReport, Extractor};
use std::path::Path;

/// What `extract` may be told.
#[derive(Debug, Clone, Default)]
pub struct ExtractRequest {
    pub password: Option<String>,
    pub max_pages: Option<usize>,
}

/// The error, naming the file it is about.
fn intake_error(path: &Path, e: pactwise_extract::IntakeError) -> ApiError {
    ApiError::new(e.code(), format!("{}: {e}", path.display()))
}

/// Extracts a file's pages (OCR for pages without a text layer) and reports them in the CLI contract's shape.
/// Runs on a blocking thread; `progress` is called with page i of n.
pub async fn extract_file(
    path: &Path,
    request: ExtractRequest,
    progress: impl Fn(Progress) + Send + Sync + 'static,
) -> Result<ExtractReport, ApiError> {
    if let Some(n) = request.max_pages {
        pactwise_extract::parse_max_pages(&n.to_string()).map_err(|m| ApiError::new(ErrorCode::InvalidInput, m))?;
    }
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let extractor = Extractor::new(ExtractConfig::from_env());
        let options = ExtractOptions {
            password: request.password.as_deref(),
            max_pages: request.max_pages,
            ocr: true,
            progress: &progress,
        };
        let doc = extractor.extract_file(&path, &options).map_err(|e| intake_error(&path, e))?;
        let name =
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
        Ok(ExtractReport::new(name, &doc))
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("extraction was interrupted ({e})")))?
}
