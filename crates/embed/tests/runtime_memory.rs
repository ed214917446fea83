//! The runtime library's code leaves memory with the model (Linux): a test binary of its own, so no other test loads
//! the model meanwhile, on a copy of the model's folder, so no other process (an app, another test run) shares the
//! library's pages (the kernel does not page out pages another process maps).

/// Resident kB of this process's read-only mappings of the runtime library (/proc/self/smaps).
#[cfg(target_os = "linux")]
fn runtime_resident_kb() -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut in_runtime = false;
    let mut total = 0;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && !first.ends_with(':') {
            let perms = fields.next().unwrap_or_default();
            in_runtime = line.ends_with(pactwise_embed::RUNTIME_FILE) && !perms.contains('w');
        } else if in_runtime && first == "Rss:" {
            total += fields.next().and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    total
}

#[cfg(target_os = "linux")]
#[test]
fn releasing_the_model_takes_the_runtimes_code_out_of_memory() -> anyhow::Result<()> {
    use std::time::{Duration, Instant};
    let Some(dir) = pactwise_testkit::embedding_model() else { return Ok(()) };
    let copy = tempfile::tempdir()?;
    for (name, _) in pactwise_embed::MODEL_FILES {
        std::fs::copy(dir.join(name), copy.path().join(name))?;
    }
    let lazy = pactwise_embed::LazyEmbedder::new(copy.path().to_path_buf());
    let embedder = lazy.get().map_err(anyhow::Error::msg)?;
    embedder.embed(&["Either party may terminate this Agreement on ninety days' written notice."])?;
    drop(embedder);
    let loaded = runtime_resident_kb();
    assert!(loaded > 1024, "the runtime's code is resident while the model is used ({loaded} kB)");
    assert!(lazy.release_if_idle(Instant::now() + Duration::from_secs(1), Duration::ZERO));
    let released = runtime_resident_kb();
    assert!(released < loaded / 4, "{loaded} kB resident before the release, {released} kB after");
    // And the runtime still works: the next use loads the model again.
    let again = lazy.get().map_err(anyhow::Error::msg)?.embed_one("governed by the laws of New York")?;
    assert_eq!(again.len(), pactwise_embed::DIMENSIONS);
    Ok(())
}
