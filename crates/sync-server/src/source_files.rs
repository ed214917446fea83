//! What a Source submission form and the resumable uploads share, apart from both so neither imports the other
//! (the module graph test): the refusals a form answers with, a file's name as kept, the limit of a submission's
//! uploads, and a finished upload read back whole (its chunks opened, size and hash checked).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use pactwise_source::envelope::{self, KeyPair};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::http::{ApiError, AppState, blocking};
use crate::source_rows::UploadRow;

/// What the uploads of one submission may add up to (the service holds them in memory while it seals them).
pub const SUBMISSION_UPLOADS_LIMIT: u64 = 256 * 1024 * 1024;

/// One refused file or price line, for the form.
#[derive(Debug, Serialize, Deserialize)]
pub struct FormProblem {
    pub field: String,
    pub code: String,
    pub message: String,
}

pub(crate) struct FormRefused(pub(crate) Vec<FormProblem>);

impl IntoResponse for FormRefused {
    fn into_response(self) -> Response {
        let message = self.0.iter().map(|p| format!("{}: {}", p.field, p.message)).collect::<Vec<_>>().join(" ");
        let body = serde_json::json!({
            "error": {"code": "invalid_input", "message": format!("Nothing was submitted. {message}")},
            "problems": self.0,
        });
        (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response()
    }
}

/// A file's name as the submission keeps it (the last path segment), or why it cannot be one.
pub(crate) fn file_name(given: &str) -> Option<String> {
    let name = given.trim().rsplit(['/', '\\']).next().unwrap_or("").to_owned();
    let reserved = name == "answers.json" || name == "prices.json";
    (!name.is_empty() && name.chars().count() <= 150 && !reserved && !name.chars().any(char::is_control))
        .then_some(name)
}

/// The whole file of an upload, opened from its sealed chunks, when it is complete and its SHA-256 is the declared
/// one; otherwise the problem, for the form.
pub(crate) async fn whole_file(
    state: &AppState,
    row: &UploadRow,
    wrapping: &KeyPair,
) -> Result<Result<Vec<u8>, FormProblem>, ApiError> {
    if row.received != row.size {
        return Ok(Err(FormProblem {
            field: row.name.clone(),
            code: "incomplete".into(),
            message: format!("the service has {} of {} bytes; send the rest before you finish", row.received, row.size),
        }));
    }
    let id = row.id;
    let chunks = blocking(state, move |s| s.source_upload_chunks(id)).await?;
    let mut bytes = Vec::with_capacity(usize::try_from(row.size).unwrap_or(0));
    for (first_byte, sealed) in chunks {
        if first_byte != bytes.len() as u64 {
            return Err(ApiError::Internal(format!("upload {id}: a chunk is missing before byte {first_byte}")));
        }
        let plain = envelope::open_upload_chunk(&sealed, &id.to_string(), first_byte, wrapping)
            .map_err(|e| ApiError::Internal(format!("upload {id}: {e}")))?;
        bytes.extend_from_slice(&plain);
    }
    if bytes.len() as u64 != row.size {
        return Err(ApiError::Internal(format!("upload {id}: stored chunks do not add up to its size")));
    }
    if hex::encode(Sha256::digest(&bytes)) != row.sha256 {
        return Ok(Err(FormProblem {
            field: row.name.clone(),
            code: "hash_mismatch".into(),
            message: "the file that arrived is not the file you chose (its SHA-256 differs): it changed while it \
                      was uploading or was damaged on the way; upload it again"
                .into(),
        }));
    }
    Ok(Ok(bytes))
}
