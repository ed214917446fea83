//! A file cache of sentence vectors for the CUAD evaluation and the pre-fill's training: embedding every sentence of
//! 356 contracts takes long, so each vector is computed once per model. Keyed by the embedding model's id and the
//! SHA-256 of the sentence's text: one append-only file per model id (`<dir>/<sha256(model id)[..16]>/vectors.bin`),
//! each record the 32-byte sentence hash then the vector as little-endian `f32`. A record cut short (a run stopped
//! mid-write) is ignored at load and overwritten by the next append. Not used by the app, only by eval and training.

use crate::offline::learned::SentenceVectors;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum EmbeddingCacheError {
    #[error("the embedding cache {path} could not be used: {source}; delete it or choose another --cache folder")]
    Io { path: String, source: std::io::Error },
    #[error("a vector of {got} dimensions cannot go in a cache of {want}-dimension vectors")]
    Dimensions { got: usize, want: usize },
}

/// Where the cache lives unless told: `/var/cache/pactwise/embed-cache`.
pub fn default_cache_dir() -> PathBuf {
    PathBuf::from("/var/cache/pactwise/embed-cache")
}

/// The SHA-256 of a sentence's text: its key in the cache.
pub fn sentence_key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// Sentence vectors of one embedding model, loaded in memory, with new ones appended to the file.
pub struct EmbeddingCache {
    model_id: String,
    path: PathBuf,
    dims: usize,
    vectors: HashMap<[u8; 32], Vec<f32>>,
    file: std::fs::File,
    /// Where the next record is written (the end of the last whole record).
    end: u64,
}

impl EmbeddingCache {
    /// Opens (or creates) the cache of `model_id`'s vectors of `dims` dimensions under `dir`.
    pub fn open(dir: &Path, model_id: &str, dims: usize) -> Result<Self, EmbeddingCacheError> {
        let folder = dir.join(&hex::encode(Sha256::digest(model_id.as_bytes()))[..16]);
        let path = folder.join("vectors.bin");
        let io = |source| EmbeddingCacheError::Io { path: path.display().to_string(), source };
        std::fs::create_dir_all(&folder).map_err(io)?;
        std::fs::write(folder.join("model_id.txt"), model_id).map_err(io)?;
        let mut file =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let record = 32 + dims * 4;
        let whole = bytes.len() / record;
        let mut vectors = HashMap::with_capacity(whole);
        for chunk in bytes.chunks_exact(record) {
            let mut key = [0u8; 32];
            key.copy_from_slice(&chunk[..32]);
            let vector = chunk[32..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            vectors.insert(key, vector);
        }
        let end = (whole * record) as u64;
        Ok(Self { model_id: model_id.to_owned(), path, dims, vectors, file, end })
    }

    /// The embedding model whose vectors these are.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// The vector of this sentence, if computed before.
    pub fn get(&self, text: &str) -> Option<&[f32]> {
        self.vectors.get(&sentence_key(text)).map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Adds vectors (one per text, in order) and writes them to the file in one append.
    pub fn put_many(&mut self, texts: &[&str], vectors: Vec<Vec<f32>>) -> Result<(), EmbeddingCacheError> {
        let mut out = Vec::with_capacity(texts.len() * (32 + self.dims * 4));
        let mut fresh = Vec::with_capacity(texts.len());
        for (text, vector) in texts.iter().zip(vectors) {
            if vector.len() != self.dims {
                return Err(EmbeddingCacheError::Dimensions { got: vector.len(), want: self.dims });
            }
            let key = sentence_key(text);
            if self.vectors.contains_key(&key) {
                continue;
            }
            out.extend_from_slice(&key);
            for x in &vector {
                out.extend_from_slice(&x.to_le_bytes());
            }
            fresh.push((key, vector));
        }
        let io = |source| EmbeddingCacheError::Io { path: self.path.display().to_string(), source };
        self.file.seek(SeekFrom::Start(self.end)).map_err(io)?;
        self.file.write_all(&out).map_err(io)?;
        self.file.flush().map_err(io)?;
        self.end += out.len() as u64;
        self.vectors.extend(fresh);
        Ok(())
    }
}

/// Sentence vectors from the cache, the missing ones embedded by the model (when given) and added to it: what the
/// evaluation and training read vectors through.
pub struct CachedVectors {
    cache: std::sync::Mutex<EmbeddingCache>,
    embedder: Option<pactwise_embed::Embedder>,
    model_id: String,
}

impl CachedVectors {
    /// Vectors of `embedder`'s model from its cache under `dir`.
    pub fn new(dir: &Path, embedder: pactwise_embed::Embedder) -> Result<Self, EmbeddingCacheError> {
        let cache = EmbeddingCache::open(dir, embedder.model_id(), pactwise_embed::DIMENSIONS)?;
        Ok(Self { model_id: embedder.model_id().to_owned(), cache: cache.into(), embedder: Some(embedder) })
    }

    /// Vectors from the cache alone (a sentence not in it is an error).
    pub fn cache_only(cache: EmbeddingCache) -> Self {
        Self { model_id: cache.model_id().to_owned(), cache: cache.into(), embedder: None }
    }
}

impl SentenceVectors for CachedVectors {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn vectors(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let mut cache =
            self.cache.lock().map_err(|_| "the embedding cache is unusable after a failed write".to_owned())?;
        let mut missing: Vec<&str> = texts.iter().copied().filter(|t| cache.get(t).is_none()).collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let Some(embedder) = &self.embedder else {
                return Err(format!(
                    "{} sentences are not in the embedding cache; fill it with embed_cuad",
                    missing.len()
                ));
            };
            let vectors = embedder.embed(&missing).map_err(|e| e.to_string())?;
            cache.put_many(&missing, vectors).map_err(|e| e.to_string())?;
        }
        texts
            .iter()
            .map(|t| cache.get(t).map(<[f32]>::to_vec).ok_or_else(|| "a vector went missing".to_owned()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_by_model_and_sentence_and_a_cut_record_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = EmbeddingCache::open(dir.path(), "model-a", 3).unwrap();
        cache.put_many(&["One.", "Two."], vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.5]]).unwrap();
        drop(cache);

        // A run stopped mid-write leaves part of a record at the end.
        let file = dir.path().join(&hex::encode(Sha256::digest(b"model-a"))[..16]).join("vectors.bin");
        let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
        f.write_all(&[7u8; 20]).unwrap();
        drop(f);

        let mut cache = EmbeddingCache::open(dir.path(), "model-a", 3).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("Two."), Some(&[0.0, 1.0, 0.5][..]));
        assert_eq!(cache.get("Three."), None);
        cache.put_many(&["Three."], vec![vec![0.0, 0.0, 1.0]]).unwrap();
        drop(cache);
        let cache = EmbeddingCache::open(dir.path(), "model-a", 3).unwrap();
        assert_eq!(cache.len(), 3, "the cut record was overwritten, not kept");
        assert_eq!(cache.get("Three."), Some(&[0.0, 0.0, 1.0][..]));

        // Another model's vectors are a different cache.
        let other = EmbeddingCache::open(dir.path(), "model-b", 3).unwrap();
        assert!(other.is_empty());
        assert!(matches!(
            EmbeddingCache::open(dir.path(), "model-b", 3).unwrap().put_many(&["x"], vec![vec![1.0]]),
            Err(EmbeddingCacheError::Dimensions { got: 1, want: 3 })
        ));
    }
}
