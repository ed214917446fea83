//! The real model, as `make setup` installs it.

use pactwise_embed::{DIMENSIONS, Embedder, Quantized, dot};

#[test]
fn clauses_that_mean_the_same_are_closer_than_clauses_that_do_not() -> anyhow::Result<()> {
    let Some(dir) = pactwise_testkit::embedding_model() else { return Ok(()) };
    let embedder = Embedder::load(&dir)?;
    assert!(embedder.model_id().starts_with("all-MiniLM-L6-v2@"));
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
    // A batch gives what one text alone gives (padding is masked), and the stored form keeps the order.
    let alone = embedder.embed_one(texts[2])?;
    assert!((dot(&alone, law) - 1.0).abs() < 1e-4);
    let stored = Quantized::from_vector(termination);
    assert!(stored.dot(question) > stored.dot(law));
    Ok(())
}
