//! Resumable uploads of a vendor's files (`/api/v1/source/vendor/…/uploads`): a file too large or a connection too
//! poor for one request travels in chunks, each stored as it arrives, so a cut connection loses at most the chunk in
//! flight.
//!
//! 1. `POST /source/vendor/tenders/{id}/uploads` `{name, size, sha256}` → `{id, received: 0, chunk_limit, …}`;
//! 2. `PUT /source/vendor/uploads/{upload}?offset=N` with the chunk's bytes: accepted only when `N` is exactly what
//!    the service has (otherwise refused in words, with the offset to send from); a chunk whose body does not arrive
//!    whole is not stored at all;
//! 3. `GET /source/vendor/uploads/{upload}` → how much the service has (where to resume);
//! 4. `POST /source/vendor/uploads/{upload}/finish` → the service checks the size and the SHA-256 and inspects the
//!    whole file (`pactwise_inspect`, as a file sent whole is); a refusal says why, beside the file, and drops it;
//! 5. the submission names its finished uploads (`uploads: [id, …]`); they are sealed as envelopes like files sent
//!    whole and deleted in the submission's transaction.
//!
//! At rest each chunk is sealed to the service's key-wrapping key (`pactwise_source::envelope::seal_upload_chunk`;
//! the threat model is that module's): the database never holds plaintext of a file in progress. Limits: a file's
//! size ([`FILE_LIMIT`]), a chunk's ([`CHUNK_LIMIT`]), uploads open per vendor ([`MAX_OPEN_UPLOADS`]); an upload that
//! receives nothing for [`IDLE_HOURS`] hours of the service's clock expires and is deleted (at the next upload a
//! vendor starts). Every upload belongs to one vendor account and tender: another vendor's id reads as absent.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, Duration, Utc};
use pactwise_inspect::{Limits, inspect};
use pactwise_source::envelope;
use pactwise_source::tender::{self, Event};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::http::{ApiError, AppState, blocking, json_rejection};
use crate::source::Vendor;
pub use crate::source_files::SUBMISSION_UPLOADS_LIMIT;
use crate::source_files::{FormProblem, FormRefused, file_name, whole_file};
use crate::source_rows::UploadRow;

/// The largest file a vendor may upload.
pub const FILE_LIMIT: u64 = 64 * 1024 * 1024;
/// The largest chunk one request may carry.
pub const CHUNK_LIMIT: usize = 4 * 1024 * 1024;
/// Uploads one vendor account may have open (not yet sealed in a submission).
pub const MAX_OPEN_UPLOADS: usize = 20;
/// An upload that receives nothing for this long (the service's clock) is abandoned.
pub const IDLE_HOURS: i64 = 24;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/source/vendor/tenders/{id}/uploads", post(create))
        .route(
            "/source/vendor/uploads/{upload}",
            get(progress).delete(cancel).put(append).layer(DefaultBodyLimit::max(CHUNK_LIMIT)),
        )
        .route("/source/vendor/uploads/{upload}/finish", post(finish))
}

/// The refusal when a vendor has too many uploads open (one sentence for both backends).
pub(crate) fn too_many_open(max_open: usize) -> String {
    format!(
        "you have {max_open} uploads in progress already; finish or cancel one (or submit) before you start another"
    )
}

#[derive(Debug, Deserialize)]
pub struct NewUpload {
    pub name: String,
    pub size: u64,
    pub sha256: String,
}

/// Where an upload stands.
#[derive(Debug, Serialize, Deserialize)]
pub struct UploadProgress {
    pub id: Uuid,
    pub tender: Uuid,
    pub name: String,
    pub size: u64,
    /// Bytes the service has: the next chunk starts here.
    pub received: u64,
    /// The largest chunk the service takes in one request.
    pub chunk_limit: usize,
    /// What the inspection found, once finished.
    pub finished: Option<String>,
    pub expires_at: DateTime<Utc>,
}

fn progress_of(row: &UploadRow) -> UploadProgress {
    UploadProgress {
        id: row.id,
        tender: row.tender,
        name: row.name.clone(),
        size: row.size,
        received: row.received,
        chunk_limit: CHUNK_LIMIT,
        finished: row.finished.clone(),
        expires_at: row.expires_at,
    }
}

fn no_upload() -> ApiError {
    ApiError::NotFound(
        "no such upload: it was finished and submitted, cancelled, or it expired after a day without progress; \
         start the file again"
            .into(),
    )
}

/// The caller's upload, not expired; another vendor's reads as absent.
async fn own_upload(
    state: &AppState,
    vendor: &Vendor,
    path: Result<Path<String>, PathRejection>,
) -> Result<UploadRow, ApiError> {
    let Path(id) = path.map_err(|_| no_upload())?;
    let id = Uuid::parse_str(&id).map_err(|_| no_upload())?;
    let row = blocking(state, move |s| s.source_upload(id)).await?.ok_or_else(no_upload)?;
    if row.account != vendor.account || row.expires_at <= state.0.clock.now() {
        return Err(no_upload());
    }
    Ok(row)
}

fn one_problem(field: &str, code: &str, message: String) -> Response {
    FormRefused(vec![FormProblem { field: field.into(), code: code.into(), message }]).into_response()
}

/// `POST /source/vendor/tenders/{id}/uploads`: a new upload for a tender this vendor joined, while it takes
/// submissions.
async fn create(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<NewUpload>, JsonRejection>,
) -> Result<Response, ApiError> {
    let id = crate::source::tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    let (_, tender, _) = crate::source::vendor_row(&state, &vendor, id).await?;
    let now = state.0.clock.now();
    tender::step(&tender, Event::Submit { vendor: vendor.account.to_string(), at: now })
        .map_err(|refusal| ApiError::InvalidInput(refusal.to_string()))?;
    let Some(name) = file_name(&request.name) else {
        return Ok(one_problem(&request.name, "bad_name", "give each file its own name (up to 150 characters)".into()));
    };
    if request.size == 0 {
        return Ok(one_problem(&name, "empty", "the file is empty; choose the file you meant".into()));
    }
    if request.size > FILE_LIMIT {
        return Ok(one_problem(
            &name,
            "too_large",
            format!(
                "the file is {} MB; the limit is {} MB a file: split it or compress it",
                request.size.div_ceil(1024 * 1024),
                FILE_LIMIT / (1024 * 1024)
            ),
        ));
    }
    let sha256 = request.sha256.trim().to_ascii_lowercase();
    if sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ApiError::InvalidInput("sha256 must be the file's SHA-256 as 64 hexadecimal digits".into()));
    }
    let row = UploadRow {
        id: Uuid::new_v4(),
        tender: id,
        account: vendor.account,
        name,
        size: request.size,
        sha256,
        received: 0,
        finished: None,
        created_at: now,
        expires_at: now + Duration::hours(IDLE_HOURS),
    };
    let stored = row.clone();
    blocking(&state, move |s| s.source_upload_create(&stored, MAX_OPEN_UPLOADS, now)).await?;
    tracing::info!(upload = %row.id, tender = %id, size = row.size, "upload started");
    Ok((StatusCode::CREATED, Json(progress_of(&row))).into_response())
}

/// `GET /source/vendor/uploads/{upload}`: how much the service has.
async fn progress(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<UploadProgress>, ApiError> {
    Ok(Json(progress_of(&own_upload(&state, &vendor, path).await?)))
}

/// `DELETE /source/vendor/uploads/{upload}`: the vendor gives the upload up.
async fn cancel(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let row = own_upload(&state, &vendor, path).await?;
    blocking(&state, move |s| s.source_upload_delete(row.id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize)]
pub struct ChunkAt {
    pub offset: u64,
}

/// `PUT /source/vendor/uploads/{upload}?offset=N`: the next chunk, sealed on arrival.
async fn append(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
    at: Result<Query<ChunkAt>, QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<UploadProgress>, ApiError> {
    let row = own_upload(&state, &vendor, path).await?;
    let Query(ChunkAt { offset }) = at.map_err(|_| {
        ApiError::InvalidInput(format!(
            "say where this chunk starts (?offset=N); the service has {} bytes of {}",
            row.received, row.name
        ))
    })?;
    let chunk = body.map_err(|e| match e {
        BytesRejection::FailedToBufferBody(_) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::PayloadTooLarge(format!("a chunk may carry at most {CHUNK_LIMIT} bytes; send smaller chunks"))
        }
        _ => ApiError::InvalidInput("the chunk did not arrive whole; send it again from the service's offset".into()),
    })?;
    if row.finished.is_some() {
        return Err(ApiError::InvalidInput(format!("{} is complete already; submit it or start again", row.name)));
    }
    if offset != row.received {
        return Err(wrong_offset(&row, offset));
    }
    let length = chunk.len() as u64;
    if length == 0 {
        return Err(ApiError::InvalidInput("the chunk is empty; send the file's next bytes".into()));
    }
    if offset + length > row.size {
        return Err(ApiError::InvalidInput(format!(
            "this chunk goes past the size you declared for {} ({} bytes); start again with the right size",
            row.name, row.size
        )));
    }
    let wrapping = crate::source::wrapping_key(&state)?;
    let sealed = envelope::seal_upload_chunk(&chunk, &row.id.to_string(), offset, wrapping.public())
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    drop(chunk);
    let expires_at = state.0.clock.now() + Duration::hours(IDLE_HOURS);
    let id = row.id;
    let appended = blocking(&state, move |s| s.source_upload_append(id, offset, length, &sealed, expires_at)).await?;
    if !appended {
        // Another request moved it meanwhile: say where it stands now.
        let now = blocking(&state, move |s| s.source_upload(id)).await?.ok_or_else(no_upload)?;
        return Err(wrong_offset(&now, offset));
    }
    Ok(Json(UploadProgress { received: offset + length, expires_at, ..progress_of(&row) }))
}

fn wrong_offset(row: &UploadRow, offset: u64) -> ApiError {
    ApiError::InvalidInput(format!(
        "this chunk starts at byte {offset} but the service has {} bytes of {}; send the file from byte {}",
        row.received, row.name, row.received
    ))
}

/// `POST /source/vendor/uploads/{upload}/finish`: size and hash checked, the whole file inspected; a refused file
/// is dropped with the reason.
async fn finish(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let row = own_upload(&state, &vendor, path).await?;
    if row.finished.is_some() {
        return Ok(Json(progress_of(&row)).into_response());
    }
    let wrapping = crate::source::wrapping_key(&state)?;
    let bytes = match whole_file(&state, &row, &wrapping).await? {
        Ok(bytes) => bytes,
        Err(problem) if problem.code == "incomplete" => return Ok(FormRefused(vec![problem]).into_response()),
        Err(problem) => {
            let id = row.id;
            blocking(&state, move |s| s.source_upload_delete(id)).await?;
            return Ok(FormRefused(vec![problem]).into_response());
        }
    };
    let name = row.name.clone();
    let inspected = tokio::task::spawn_blocking(move || inspect(&name, &bytes, &Limits::default()))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let id = row.id;
    match inspected {
        Ok(found) => {
            let summary = found.summary.clone();
            blocking(&state, move |s| s.source_upload_finish(id, &summary)).await?;
            tracing::info!(upload = %id, "upload finished and inspected");
            Ok(Json(UploadProgress { finished: Some(found.summary), ..progress_of(&row) }).into_response())
        }
        Err(refusal) => {
            blocking(&state, move |s| s.source_upload_delete(id)).await?;
            tracing::info!(upload = %id, finding = refusal.finding(), "upload refused by the inspection");
            Ok(one_problem(&row.name, refusal.finding(), refusal.to_string()))
        }
    }
}
