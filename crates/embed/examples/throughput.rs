//! Passages embedded per second on this machine: `throughput DIR [LIMIT] [CHARS]` embeds CHARS-character (500 unless
//! given; the product's passages are about that long, a sentence about 150) pieces of the
//! `.txt` files in DIR (a CUAD folder's `contracts`), sorted by name, and prints the rate and the process's
//! resident memory before loading, after loading, after embedding and after releasing the model (`/proc/self/status`, Linux).
//! The same work by ONNX Runtime's own Python binding, as a peer: `bench/embed.sh`.

use pactwise_embed::Embedder;
use std::time::Instant;

// The desktop app's allocator (src-tauri/src/main.rs), so the memory figures are the app's.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or_else(|| anyhow::anyhow!("usage: throughput DIR [LIMIT]"))?;
    let limit: usize = args.next().map(|l| l.parse()).transpose()?.unwrap_or(2000);
    let size: usize = args.next().map(|c| c.parse()).transpose()?.unwrap_or(500).max(1);
    let mut files: Vec<_> = std::fs::read_dir(&dir)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let mut pieces = Vec::new();
    'files: for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "txt")) {
        let text = std::fs::read_to_string(f)?;
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(size) {
            pieces.push(piece.iter().collect::<String>());
            if pieces.len() >= limit {
                break 'files;
            }
        }
    }
    let before = resident_mb();
    let load_start = Instant::now();
    let embedder = Embedder::load_default()?;
    let load_ms = load_start.elapsed().as_millis();
    let loaded = resident_mb();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let start = Instant::now();
    let vectors = embedder.embed(&refs)?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} passages of ~{size} characters in {secs:.1} s: {:.0} passages/s ({} passes at once on {} cores; the model \
         loaded in {load_ms} ms)",
        vectors.len(),
        vectors.len() as f64 / secs,
        embedder.passes_at_once(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let embedded = resident_mb();
    drop(embedder);
    let dropped = resident_mb();
    // Loaded and released again as the app does it (the lazy embedder, whose release also gives the C heap's free
    // memory back to the OS).
    let lazy = pactwise_embed::LazyEmbedder::new(pactwise_embed::default_model_dir());
    lazy.get().map_err(anyhow::Error::msg)?;
    lazy.release_if_idle(Instant::now(), std::time::Duration::ZERO);
    println!(
        "resident memory: {before:.0} MB before loading, {loaded:.0} MB loaded, {embedded:.0} MB after embedding, \
         {dropped:.0} MB after dropping the model, {:.0} MB after the app's release (loaded again, then released)",
        resident_mb()
    );
    Ok(())
}

/// The process's resident set in MB (0 where /proc is not there).
fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}
