//! Documents' files travel content-addressed: a blob's name is the SHA-256 of its bytes. Upload sends the bytes under
//! their hash (the server checks it); download writes to `<dest>.partial`, resumes a broken transfer with an HTTP
//! Range request from the bytes already there, verifies the hash of the whole file and only then renames it into
//! place. A file that does not hash to its name is discarded, never kept. A download is capped at the size the
//! change announced (and [`MAX_BLOB_BYTES`]): reading stops at the first byte past it and the file is discarded.

use crate::error::SyncError;
use crate::http::{HttpApi, check, unreachable};
use crate::wire::{MAX_BLOB_BYTES, is_blob_name, sha256_hex};
use reqwest::{StatusCode, header};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Where a download in progress keeps its bytes.
pub fn partial_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    dest.with_file_name(name)
}

impl HttpApi {
    /// Is this blob stored for the caller's organization?
    pub async fn has_blob(&self, hash: &str) -> Result<bool, SyncError> {
        if !is_blob_name(hash) {
            return Err(SyncError::Rejected { code: "invalid_input".into(), message: "not a blob name".into() });
        }
        let response = self
            .authorized(self.client().head(self.url(&format!("/blobs/{hash}"))))
            .send()
            .await
            .map_err(unreachable)?;
        match response.status() {
            StatusCode::NOT_FOUND => Ok(false),
            _ => check(response).await.map(|_| true),
        }
    }

    /// Upload bytes unless the server has them already; returns their name.
    pub async fn upload_blob(&self, bytes: Vec<u8>) -> Result<String, SyncError> {
        let hash = sha256_hex(&bytes);
        if self.has_blob(&hash).await? {
            return Ok(hash);
        }
        let response = self
            .authorized(self.client().put(self.url(&format!("/blobs/{hash}"))))
            .header(header::CONTENT_TYPE, "application/octet-stream")
            .body(bytes)
            .send()
            .await
            .map_err(unreachable)?;
        check(response).await?;
        Ok(hash)
    }

    /// Download a blob to `dest`, resuming from `<dest>.partial` if an earlier download broke. The file appears at
    /// `dest` only whole and verified. `announced` is the size the change that names the file gave (None: not
    /// known); the download stops and is discarded past it or past [`MAX_BLOB_BYTES`]. Returns the number of bytes
    /// fetched in this call.
    pub async fn download_blob(&self, hash: &str, dest: &Path, announced: Option<u64>) -> Result<u64, SyncError> {
        if !is_blob_name(hash) {
            return Err(SyncError::Rejected { code: "invalid_input".into(), message: "not a blob name".into() });
        }
        let limit = announced.map_or(MAX_BLOB_BYTES, |n| n.min(MAX_BLOB_BYTES));
        let partial = partial_path(dest);
        let mut have = tokio::fs::metadata(&partial).await.map(|m| m.len()).unwrap_or(0);
        if have > limit {
            let _ = tokio::fs::remove_file(&partial).await;
            have = 0;
        }
        let mut request = self.authorized(self.client().get(self.url(&format!("/blobs/{hash}"))));
        if have > 0 {
            request = request.header(header::RANGE, format!("bytes={have}-"));
        }
        let response = request.send().await.map_err(unreachable)?;
        let mut file = match response.status() {
            StatusCode::PARTIAL_CONTENT if have > 0 => {
                tokio::fs::OpenOptions::new().append(true).open(&partial).await.map_err(io)?
            }
            StatusCode::RANGE_NOT_SATISFIABLE => {
                // What we have is already as long as the blob (or longer): verify it as it is.
                return finish(hash, &partial, dest).await.map(|_| 0);
            }
            _ => {
                if !response.status().is_success() {
                    check(response).await?;
                    return Err(SyncError::Protocol("unexpected answer to a download".into()));
                }
                // A whole answer (the server ignored the range, or nothing was there): start the file over.
                have = 0;
                tokio::fs::File::create(&partial).await.map_err(io)?
            }
        };
        let too_large = || async {
            let _ = tokio::fs::remove_file(&partial).await;
            SyncError::BlobTooLarge { limit }
        };
        if response.content_length().is_some_and(|n| have.saturating_add(n) > limit) {
            drop(file);
            return Err(too_large().await);
        }
        let mut response = response;
        let mut fetched = 0u64;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if have.saturating_add(fetched).saturating_add(chunk.len() as u64) > limit {
                        drop(file);
                        return Err(too_large().await);
                    }
                    file.write_all(&chunk).await.map_err(io)?;
                    fetched += chunk.len() as u64;
                }
                Ok(None) => break,
                Err(e) => {
                    // Keep what arrived: the next call resumes from it.
                    file.flush().await.map_err(io)?;
                    return Err(unreachable(e));
                }
            }
        }
        file.flush().await.map_err(io)?;
        file.sync_all().await.map_err(io)?;
        drop(file);
        finish(hash, &partial, dest).await?;
        Ok(fetched)
    }
}

async fn finish(hash: &str, partial: &Path, dest: &Path) -> Result<(), SyncError> {
    let mut file = tokio::fs::File::open(partial).await.map_err(io)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).await.map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let actual = hex::encode(hasher.finalize());
    if actual != hash {
        let _ = tokio::fs::remove_file(partial).await;
        return Err(SyncError::BlobCorrupt { expected: hash.to_string(), actual });
    }
    tokio::fs::rename(partial, dest).await.map_err(io)?;
    Ok(())
}

fn io(error: std::io::Error) -> SyncError {
    SyncError::Io(error.kind().to_string())
}
