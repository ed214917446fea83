//! Trains the pre-fill's sentence classifier: one logistic regression per CUAD clause category the checklists map to,
//! over the 384-dimension sentence vector plus a bias, on the sentences of one half of a labelled CUAD folder (a
//! sentence is positive for a category when it overlaps one of the category's labelled spans). Each category also
//! gets a threshold on its best sentence's score, chosen on the training half for the contract-level presence F1.
//! Deterministic: a fixed seed orders the passes. Reads vectors only from the embedding cache (fill it first with the
//! `embed_cuad` example; sentences not in the cache are counted and left out). Then scores presence on the other half
//! (the classifier alone, no rules) and prints the per-category table. Run with `--release`:
//!
//! ```sh
//! cargo run --release -p pactwise-pipeline --example train_prefill -- DIR --train even|odd [--out FILE]
//!     [--cache DIR] [--epochs N] [--limit N]
//! ```

use anyhow::{Context, bail};
use pactwise_checklists::Catalog;
use pactwise_embed::DIMENSIONS;
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use pactwise_pipeline::embedding_cache::{EmbeddingCache, default_cache_dir};
use pactwise_pipeline::eval::{self, LabelRecord};
use pactwise_pipeline::offline::ContractIndex;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SEED: u64 = 0x5eed_2126;

/// One contract's sentences: vectors and, per category (by index), whether the sentence overlaps a labelled span.
struct Contract {
    name: String,
    vectors: Vec<Vec<f32>>,
    positive: Vec<Vec<bool>>,
    /// Per category, whether the contract holds a labelled span.
    present: Vec<bool>,
}

#[derive(Serialize)]
struct Weights {
    embedding_model_id: String,
    dimensions: usize,
    seed: u64,
    epochs: usize,
    trained_on: String,
    contracts: Vec<String>,
    categories: Vec<CategoryWeights>,
}

#[derive(Serialize)]
struct CategoryWeights {
    category: String,
    bias: f32,
    threshold: f32,
    weights: Vec<f32>,
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut train: Option<usize> = None;
    let mut out: Option<PathBuf> = None;
    let mut cache_dir = default_cache_dir();
    let mut epochs = 4usize;
    let mut limit = usize::MAX;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--train" => {
                train = Some(match args.next().as_deref() {
                    Some("even") => 0,
                    Some("odd") => 1,
                    _ => bail!("--train takes even or odd"),
                })
            }
            "--out" => out = Some(args.next().context("--out needs a file")?.into()),
            "--cache" => cache_dir = args.next().context("--cache needs a directory")?.into(),
            "--epochs" => epochs = args.next().context("--epochs needs a number")?.parse()?,
            "--limit" => limit = args.next().context("--limit needs a number")?.parse()?,
            other if !other.starts_with("--") && dir.is_none() => dir = Some(other.into()),
            other => bail!("unknown argument {other}"),
        }
    }
    let dir = dir.context("usage: train_prefill DIR --train even|odd [--out FILE] [--cache DIR] [--epochs N]")?;
    let train = train.context("--train even|odd is required")?;
    let catalog = Catalog::load()?;
    let categories: Vec<String> = catalog
        .items()
        .filter_map(|i| i.cuad_category)
        .map(|c| c.as_str().to_owned())
        .filter(|c| !eval::META_CATEGORIES.contains(&c.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let model_id = std::fs::read_to_string(cache_model_id_file(&cache_dir)?)?;
    let cache = EmbeddingCache::open(&cache_dir, &model_id, DIMENSIONS)?;
    let records = eval::read_labels(&dir)?;
    let half = |h: usize| -> Vec<&LabelRecord> {
        records.iter().enumerate().filter(|(i, _)| i % 2 == h).map(|(_, r)| r).take(limit).collect()
    };
    let (train_records, test_records) = (half(train), half(1 - train));
    let (train_set, missing_train) = load(&dir, &cache, &categories, &train_records);
    let (test_set, missing_test) = load(&dir, &cache, &categories, &test_records);
    eprintln!(
        "train {} contracts ({} sentences not cached), test {} contracts ({} not cached)",
        train_set.len(),
        missing_train,
        test_set.len(),
        missing_test
    );

    let mut weights = Vec::with_capacity(categories.len());
    for (c, category) in categories.iter().enumerate() {
        let (w, b) = fit(&train_set, c, epochs);
        let threshold = best_threshold(&train_set, c, &w, b);
        weights.push(CategoryWeights { category: category.clone(), bias: b, threshold, weights: w });
    }

    println!("{:<40} {:>4} {:>4} {:>4} {:>6} {:>6} {:>6}", "category", "tp", "fp", "fn", "P", "R", "F1");
    let (mut f1_sum, mut n) = (0.0, 0usize);
    for (c, cw) in weights.iter().enumerate() {
        let (tp, fp, fals) = presence_counts(&test_set, c, &cw.weights, cw.bias, cw.threshold);
        if tp + fals == 0 {
            continue;
        }
        let p = ratio(tp, tp + fp);
        let r = ratio(tp, tp + fals);
        let f1 = if p + r > 0.0 { 2.0 * p * r / (p + r) } else { 0.0 };
        f1_sum += f1;
        n += 1;
        println!("{:<40} {tp:>4} {fp:>4} {fals:>4} {p:>6.3} {r:>6.3} {f1:>6.3}", cw.category);
    }
    println!(
        "classifier-alone presence macro-F1 on the held-out half: {:.3} over {n} categories",
        f1_sum / n.max(1) as f64
    );

    if let Some(out) = out {
        let file = Weights {
            embedding_model_id: model_id,
            dimensions: DIMENSIONS,
            seed: SEED,
            epochs,
            trained_on: format!("CUAD dev split, {} half", if train == 0 { "even" } else { "odd" }),
            contracts: train_set.iter().map(|c| c.name.clone()).collect(),
            categories: weights
                .into_iter()
                .map(|mut w| {
                    w.weights.iter_mut().for_each(|x| *x = (*x * 1e4).round() / 1e4);
                    w
                })
                .collect(),
        };
        std::fs::write(&out, serde_json::to_string(&file)?)?;
        eprintln!("wrote {} ({} bytes)", out.display(), std::fs::metadata(&out)?.len());
    }
    Ok(())
}

/// The model id the cache folder was filled for (the only model folder under `dir`).
fn cache_model_id_file(dir: &Path) -> anyhow::Result<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)
        .with_context(|| format!("no embedding cache at {}: run embed_cuad first", dir.display()))?
    {
        let path = entry?.path().join("model_id.txt");
        if path.exists() {
            found.push(path);
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!("the embedding cache at {} is empty: run embed_cuad first", dir.display()),
        _ => bail!("the embedding cache at {} holds several models: give --cache the folder of one", dir.display()),
    }
}

fn load(dir: &Path, cache: &EmbeddingCache, categories: &[String], records: &[&LabelRecord]) -> (Vec<Contract>, usize) {
    let extractor = Extractor::new(ExtractConfig::default());
    let mut out = Vec::new();
    let mut missing = 0;
    for record in records {
        let path = dir.join("contracts").join(format!("{}.txt", record.contract));
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n").replace('\r', "\n");
        let Ok(document) = extractor.extract_file(&path, &ExtractOptions { ocr: false, ..ExtractOptions::default() })
        else {
            continue;
        };
        let index = ContractIndex::build(&document.pages);
        let mut contract = Contract {
            name: record.contract.clone(),
            vectors: Vec::new(),
            positive: Vec::new(),
            present: categories.iter().map(|c| record.clauses.get(c).is_some_and(|s| !s.is_empty())).collect(),
        };
        for sentence in index.sentences() {
            let sentence_text = index.sentence_text(sentence);
            let Some(vector) = cache.get(sentence_text) else {
                missing += 1;
                continue;
            };
            // Character offsets, as the labels (the scorer's rule for a quote on a labelled span).
            let Some(byte_start) = text.find(sentence_text) else { continue };
            let start = text[..byte_start].chars().count();
            let end = start + sentence_text.chars().count();
            let labels = categories
                .iter()
                .map(|c| {
                    record.clauses.get(c).is_some_and(|spans| spans.iter().any(|s| s.start < end && start < s.end))
                })
                .collect();
            contract.vectors.push(vector.to_vec());
            contract.positive.push(labels);
        }
        out.push(contract);
    }
    (out, missing)
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn score(w: &[f32], b: f32, v: &[f32]) -> f32 {
    w.iter().zip(v).map(|(a, b)| a * b).sum::<f32>() + b
}

/// Weighted logistic regression by SGD with L2, the positives weighted up to balance the classes (capped at 50).
fn fit(set: &[Contract], c: usize, epochs: usize) -> (Vec<f32>, f32) {
    let mut samples: Vec<(usize, usize)> =
        set.iter().enumerate().flat_map(|(i, k)| (0..k.vectors.len()).map(move |j| (i, j))).collect();
    let positives = samples.iter().filter(|(i, j)| set[*i].positive[*j][c]).count();
    let mut w = vec![0.0f32; DIMENSIONS];
    let mut b = 0.0f32;
    if positives == 0 {
        return (w, -10.0);
    }
    let pos_weight = ((samples.len() - positives) as f32 / positives as f32).min(50.0);
    let lambda = 1e-4f32;
    let mut rng = SEED ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for epoch in 0..epochs {
        shuffle(&mut samples, &mut rng);
        let rate = 0.5 / (1.0 + epoch as f32);
        for &(i, j) in &samples {
            let v = &set[i].vectors[j];
            let y = set[i].positive[j][c];
            let p = sigmoid(score(&w, b, v));
            let g = if y { (p - 1.0) * pos_weight } else { p } / pos_weight.sqrt();
            for (wk, vk) in w.iter_mut().zip(v) {
                *wk -= rate * (g * vk + lambda * *wk);
            }
            b -= rate * g;
        }
    }
    (w, b)
}

fn shuffle<T>(items: &mut [T], state: &mut u64) {
    for i in (1..items.len()).rev() {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        items.swap(i, (*state % (i as u64 + 1)) as usize);
    }
}

fn best_score(k: &Contract, w: &[f32], b: f32) -> f32 {
    k.vectors.iter().map(|v| sigmoid(score(w, b, v))).fold(0.0, f32::max)
}

fn presence_counts(set: &[Contract], c: usize, w: &[f32], b: f32, t: f32) -> (usize, usize, usize) {
    let bests: Vec<f32> = set.iter().map(|k| best_score(k, w, b)).collect();
    counts_at(set, c, &bests, t)
}

fn counts_at(set: &[Contract], c: usize, bests: &[f32], t: f32) -> (usize, usize, usize) {
    let (mut tp, mut fp, mut fals) = (0, 0, 0);
    for (k, best) in set.iter().zip(bests) {
        let guess = *best >= t;
        match (k.present[c], guess) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (true, false) => fals += 1,
            _ => {}
        }
    }
    (tp, fp, fals)
}

/// The threshold on the best sentence's score with the best presence F1 on the training set (ties: the higher).
fn best_threshold(set: &[Contract], c: usize, w: &[f32], b: f32) -> f32 {
    let bests: Vec<f32> = set.iter().map(|k| best_score(k, w, b)).collect();
    let mut best = (f64::MIN, 0.5f32);
    for step in 1..100 {
        let t = step as f32 / 100.0;
        let (tp, fp, fals) = counts_at(set, c, &bests, t);
        let f1 = ratio(2 * tp, 2 * tp + fp + fals);
        if f1 >= best.0 {
            best = (f1, t);
        }
    }
    best.1
}

fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}
