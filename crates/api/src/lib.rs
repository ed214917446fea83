//! The application's front door: one function per user action, called by both shells (the Tauri commands and the
//! `pactwise` CLI), returning typed results or an [`ApiError`] whose `code` the UI branches on. The session's
//! [`OrgScope`] is the only source of the organization; no function here takes an organization id for tenant data.

mod demo;
mod documents;
mod error;
mod intake;
mod session;

pub use demo::DemoReport;
pub use documents::{
    DocumentQuery, ImportFailure, ImportOptions, ImportProgress, ImportReport, ImportStage, ImportedDocument,
    MAX_IMPORT_BYTES_SETTING, parse_document_id,
};
pub use error::ApiError;
pub use intake::DEFAULT_MAX_IMPORT_BYTES;
pub use pactwise_store::OrgScope;
pub use session::SessionInfo;

use pactwise_domain::{Clock, SystemClock};
use pactwise_store::{BlobStore, DataDir, Db, Store};
use std::path::PathBuf;
use std::sync::Arc;

/// The environment variable that overrides the default data directory (the `--data-dir` flag wins over it).
pub const DATA_DIR_ENV: &str = "PACTWISE_DATA_DIR";

/// Where the data lives: the explicit path if given, else `$PACTWISE_DATA_DIR`, else the platform's app-data
/// directory (`~/.local/share/pactwise` on Linux).
pub fn resolve_data_dir(explicit: Option<PathBuf>) -> Result<PathBuf, ApiError> {
    if let Some(dir) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        return Ok(dir);
    }
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::data_dir().map(|d| d.join("pactwise")).ok_or_else(|| {
        ApiError::new(
            pactwise_domain::ErrorCode::Storage,
            "could not find the platform's app-data directory; pass --data-dir DIR or set PACTWISE_DATA_DIR",
        )
    })
}

/// The application over one data directory.
pub struct Api {
    db: Db,
    blobs: BlobStore,
    data_dir: DataDir,
}

impl Api {
    /// Opens (creating if needed) the data directory and its database.
    pub fn open(root: PathBuf) -> Result<Api, ApiError> {
        Self::open_with_clock(root, Arc::new(SystemClock))
    }

    pub fn open_with_clock(root: PathBuf, clock: Arc<dyn Clock>) -> Result<Api, ApiError> {
        let data_dir = DataDir::create(&root).map_err(|e| ApiError::from_store_at(e, &root))?;
        let store = Store::open(&data_dir.database(), clock.clone()).map_err(|e| ApiError::from_store_at(e, &root))?;
        Ok(Api { db: Db::spawn(store), blobs: BlobStore::new(data_dir.blobs()), data_dir })
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }
}
