//! The data directory's layout. The CLI and the desktop app share one directory.

use crate::StoreError;
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// Uses `root` as the data directory, creating it and its subfolders if needed.
    pub fn create(root: impl Into<PathBuf>) -> Result<DataDir, StoreError> {
        let dir = DataDir { root: root.into() };
        for sub in [dir.root.clone(), dir.blobs(), dir.logs(), dir.cache()] {
            fs::create_dir_all(&sub).map_err(|e| StoreError::io(&sub, e))?;
        }
        Ok(dir)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn database(&self) -> PathBuf {
        self.root.join("pactwise.sqlite3")
    }

    pub fn blobs(&self) -> PathBuf {
        self.root.join("blobs")
    }

    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    pub fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// Each process's usage journal (`crate::UsageJournal`).
    pub fn usage_journal(&self) -> PathBuf {
        self.root.join("usage-journal")
    }
}
