//! Content-addressed file storage in the data directory: `blobs/sha256/ab/abcdef…`. Bytes are written to a
//! temporary file beside the target and renamed into place, so a blob is either whole or absent; the same bytes are
//! stored once however often they are imported.

use crate::StoreError;
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct BlobStore {
    root: PathBuf,
}

/// A blob that is safely on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBlob {
    /// SHA-256, lowercase hex.
    pub hash: String,
    pub size: u64,
}

/// Why copying a file into the store stopped.
#[derive(Debug)]
pub enum PutError {
    /// The source grew past the limit while being read.
    TooLarge {
        limit: u64,
    },
    Io(StoreError),
}

impl BlobStore {
    pub fn new(root: PathBuf) -> BlobStore {
        BlobStore { root }
    }

    pub fn path_of(&self, hash: &str) -> PathBuf {
        let prefix = hash.get(..2).unwrap_or("00");
        self.root.join("sha256").join(prefix).join(hash)
    }

    pub fn contains(&self, hash: &str) -> bool {
        self.path_of(hash).is_file()
    }

    /// Streams `reader` into the store, hashing as it goes, refusing more than `limit` bytes.
    pub fn put_reader(&self, reader: &mut dyn Read, limit: u64) -> Result<StoredBlob, PutError> {
        let tmp_dir = self.root.join("tmp");
        fs::create_dir_all(&tmp_dir).map_err(|e| PutError::Io(StoreError::io(&tmp_dir, e)))?;
        let tmp_path = tmp_dir.join(format!("{}.part", uuid::Uuid::new_v4()));
        let result = self.copy_into(reader, limit, &tmp_path);
        if result.is_err() {
            let _ = fs::remove_file(&tmp_path);
        }
        result
    }

    fn copy_into(&self, reader: &mut dyn Read, limit: u64, tmp_path: &Path) -> Result<StoredBlob, PutError> {
        let io_err = |e: io::Error| PutError::Io(StoreError::io(tmp_path, e));
        let mut out = File::create(tmp_path).map_err(io_err)?;
        let mut hasher = Sha256::new();
        let mut size: u64 = 0;
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_err(e)),
            };
            size += n as u64;
            if size > limit {
                return Err(PutError::TooLarge { limit });
            }
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n]).map_err(io_err)?;
        }
        out.sync_all().map_err(io_err)?;
        drop(out);
        let hash = hex::encode(hasher.finalize());
        let target = self.path_of(&hash);
        if target.is_file() {
            let _ = fs::remove_file(tmp_path);
        } else {
            let parent = target.parent().unwrap_or(&self.root);
            fs::create_dir_all(parent).map_err(|e| PutError::Io(StoreError::io(parent, e)))?;
            fs::rename(tmp_path, &target).map_err(|e| PutError::Io(StoreError::io(&target, e)))?;
        }
        Ok(StoredBlob { hash, size })
    }

    pub fn put_bytes(&self, bytes: &[u8]) -> Result<StoredBlob, StoreError> {
        let mut reader = bytes;
        self.put_reader(&mut reader, u64::MAX).map_err(|e| match e {
            PutError::Io(e) => e,
            PutError::TooLarge { .. } => StoreError::Corrupt("unreachable size limit".into()),
        })
    }

    pub fn read(&self, hash: &str) -> Result<Vec<u8>, StoreError> {
        let path = self.path_of(hash);
        fs::read(&path).map_err(|e| StoreError::io(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_bytes_are_stored_once_under_their_hash() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobStore::new(dir.path().to_path_buf());
        let a = blobs.put_bytes(b"hello contract").unwrap();
        let b = blobs.put_bytes(b"hello contract").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.size, 14);
        assert_eq!(blobs.read(&a.hash).unwrap(), b"hello contract");
        let files = walk(dir.path());
        assert_eq!(files.len(), 1, "one blob file, no leftovers: {files:?}");
    }

    #[test]
    fn a_source_over_the_limit_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobStore::new(dir.path().to_path_buf());
        let mut reader: &[u8] = &[7u8; 1000];
        let err = blobs.put_reader(&mut reader, 999).unwrap_err();
        assert!(matches!(err, PutError::TooLarge { limit: 999 }));
        assert!(walk(dir.path()).is_empty());
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
        }
        out
    }
}
