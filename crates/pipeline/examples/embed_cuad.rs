//! Fills the embedding cache with the vectors of every sentence the pre-fill's classifier reads in a labelled CUAD
//! folder ([`learned::classifier_sentences`]: operative sentences of six words or more), so training and the evaluation never
//! embed a sentence twice. Prints the cold time: contracts, sentences embedded, seconds, sentences per second. Run
//! with `--release`:
//!
//! ```sh
//! cargo run --release -p pactwise-pipeline --example embed_cuad -- DIR [--half even|odd] [--limit N] [--cache DIR]
//! ```

use anyhow::{Context, bail};
use pactwise_embed::{DIMENSIONS, Embedder};
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use pactwise_pipeline::embedding_cache::{EmbeddingCache, default_cache_dir};
use pactwise_pipeline::eval;
use pactwise_pipeline::offline::{ContractIndex, learned};
use std::path::PathBuf;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut limit: Option<usize> = None;
    let mut half: Option<usize> = None;
    let mut cache_dir = default_cache_dir();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--limit" => limit = Some(args.next().context("--limit needs a number")?.parse()?),
            "--cache" => cache_dir = args.next().context("--cache needs a directory")?.into(),
            "--half" => {
                half = Some(match args.next().as_deref() {
                    Some("even") => 0,
                    Some("odd") => 1,
                    _ => bail!("--half takes even or odd"),
                })
            }
            other if !other.starts_with("--") && dir.is_none() => dir = Some(other.into()),
            other => bail!("unknown argument {other}"),
        }
    }
    let dir = dir.context("usage: embed_cuad DIR [--half even|odd] [--limit N] [--cache DIR]")?;
    let records = eval::read_labels(&dir)?;
    let embedder = Embedder::load_default()?;
    let mut cache = EmbeddingCache::open(&cache_dir, embedder.model_id(), DIMENSIONS)?;
    let extractor = Extractor::new(ExtractConfig::default());
    let started = Instant::now();
    let (mut contracts, mut embedded, mut seen) = (0usize, 0usize, 0usize);
    for (i, record) in records.iter().enumerate() {
        if half.is_some_and(|h| i % 2 != h) {
            continue;
        }
        if contracts >= limit.unwrap_or(usize::MAX) {
            break;
        }
        let path = dir.join("contracts").join(format!("{}.txt", record.contract));
        let document = match extractor.extract_file(&path, &ExtractOptions { ocr: false, ..ExtractOptions::default() })
        {
            Ok(d) => d,
            Err(error) => {
                eprintln!("{}: not read ({error})", record.contract);
                continue;
            }
        };
        let index = ContractIndex::build(&document.pages);
        let mut texts: Vec<&str> = learned::classifier_sentences(&index)
            .into_iter()
            .map(|i| index.sentence_text(&index.sentences()[i]))
            .collect();
        seen += texts.len();
        texts.sort_unstable();
        texts.dedup();
        texts.retain(|t| cache.get(t).is_none());
        let one = Instant::now();
        let vectors = embedder.embed(&texts)?;
        cache.put_many(&texts, vectors)?;
        embedded += texts.len();
        contracts += 1;
        eprintln!(
            "{contracts:>4} {:<60.60} {:>5} new sentences in {:>6.1} s (total {:.0} s)",
            record.contract,
            texts.len(),
            one.elapsed().as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "contracts {contracts}, sentences seen {seen}, embedded {embedded}, cached {}, {seconds:.0} s, {:.1} sentences/s",
        cache.len(),
        embedded as f64 / seconds.max(1e-9)
    );
    Ok(())
}
