//! The real model, as `make setup` installs it.

use pactwise_embed::{DIMENSIONS, Embedder, Quantized, dot};

#[test]
fn clauses_that_mean_the_same_are_closer_than_clauses_that_do_not() -> anyhow::Result<()> {
    let Some(dir) = pactwise_testkit::embedding_model() else { return Ok(()) };
    let embedder = Embedder::load(&dir)?;
    assert!(embedder.model_id().starts_with("all-MiniLM-L6-v2-int8@"));
    let texts = [
        "Either party may terminate this Agreement for convenience upon ninety days' written notice.",
        "Can they walk away from the contract early?",
        "This Agreement shall be governed by the laws of the State of New York.",
        "",
    ];
    let vectors = embedder.embed(&texts)?;
    assert_eq!(vectors.len(), 4);
    for v in &vectors {
        assert_eq!(v.len(), DIMENSIONS);
        assert!((dot(v, v) - 1.0).abs() < 1e-4, "unit length");
    }
    let (termination, question, law) = (&vectors[0], &vectors[1], &vectors[2]);
    assert!(
        dot(question, termination) > dot(question, law) + 0.1,
        "{} vs {}",
        dot(question, termination),
        dot(question, law)
    );
    // A text alone gets exactly what it gets in a batch, and so does each copy of it in a batch run side by side on
    // every session: the vector never depends on its neighbours or on which session ran it.
    let alone = embedder.embed_one(texts[2])?;
    assert_eq!(&alone, law);
    let many: Vec<&str> = texts.iter().cycle().take(5 * texts.len()).copied().collect();
    for (i, again) in embedder.embed(&many)?.iter().enumerate() {
        assert_eq!(again, &vectors[i % texts.len()], "text {} of the long batch", i);
    }
    // Work nobody waits on runs on the idle-priority threads and gives the same vectors.
    let background = embedder.embed_in_background(&texts)?;
    assert_eq!(background, vectors);
    // The stored form keeps the order.
    let stored = Quantized::from_vector(termination);
    assert!(stored.dot(question) > stored.dot(law));
    Ok(())
}

#[test]
fn the_lazy_model_is_released_after_sitting_unused_and_loads_again_on_the_next_use() -> anyhow::Result<()> {
    use pactwise_embed::LazyEmbedder;
    use std::time::{Duration, Instant};
    let Some(dir) = pactwise_testkit::embedding_model() else { return Ok(()) };
    let lazy = LazyEmbedder::new(dir);
    assert!(!lazy.is_loaded(), "nothing loads before it is needed");
    let known = lazy.model_id().map_err(anyhow::Error::msg)?;
    assert!(!lazy.is_loaded(), "the id of the model in place is known (its files checked) without loading it");
    let id = lazy.get().map_err(anyhow::Error::msg)?.model_id().to_owned();
    assert_eq!(id, known);
    assert!(lazy.is_loaded());
    let idle = Duration::from_secs(120);
    let now = Instant::now();
    assert!(!lazy.release_if_idle(now, idle), "just used: kept");
    assert!(lazy.is_loaded());
    assert!(lazy.release_if_idle(now + idle + Duration::from_secs(1), idle), "unused for longer than `idle`: released");
    assert!(!lazy.is_loaded());
    assert_eq!(lazy.model_id().map_err(anyhow::Error::msg)?, id, "the id is known without loading again");
    assert!(!lazy.is_loaded());
    let again = lazy.get().map_err(anyhow::Error::msg)?;
    assert_eq!(again.model_id(), id);
    assert!(lazy.is_loaded(), "the next use loads it again");
    Ok(())
}

#[test]
fn a_missing_model_stays_unavailable_with_its_reason_and_is_never_released_into_a_reload() {
    use pactwise_embed::LazyEmbedder;
    let lazy = LazyEmbedder::new(std::path::PathBuf::from("/nonexistent/no-embedding-model"));
    let first = lazy.get().unwrap_err();
    assert!(first.contains("make setup"), "{first}");
    assert_eq!(lazy.model_id().unwrap_err(), first);
    assert!(!lazy.release_if_idle(std::time::Instant::now(), std::time::Duration::ZERO));
}

#[test]
fn a_replaced_model_file_is_said_by_its_id_before_any_search_loads_it() -> anyhow::Result<()> {
    use pactwise_embed::{LazyEmbedder, MODEL_FILES, RUNTIME_FILE};
    let Some(dir) = pactwise_testkit::embedding_model() else { return Ok(()) };
    let replaced = tempfile::tempdir()?;
    for (name, _) in MODEL_FILES {
        std::fs::copy(dir.join(name), replaced.path().join(name))?;
    }
    // A runtime library that is not the one we ship is refused before it is loaded into the process.
    std::fs::write(replaced.path().join(RUNTIME_FILE), b"\x7fELF not the runtime")?;
    let lazy = LazyEmbedder::new(replaced.path().to_path_buf());
    let why = lazy.model_id().unwrap_err();
    assert!(why.contains(RUNTIME_FILE) && why.contains("make setup"), "{why}");
    assert_eq!(lazy.get().unwrap_err(), why, "and it stays unavailable, with the same reason");
    Ok(())
}
