//! Trains the pre-fill's sentence classifier (`crates/pipeline/src/offline/learned.rs`): one logistic regression per
//! CUAD clause category the checklists map to, over the 384-dimension sentence vector plus a bias, on the
//! classifier's sentences (operative text, [`learned::classifier_sentences`]) of a labelled CUAD folder. A sentence is
//! positive for a category when it overlaps one of the category's labelled spans.
//!
//! Per category the training also chooses, on classifier scores it did not fit on (an inner 2-fold over the training
//! contracts), the threshold on a contract's best sentence and how presence combines the rules and the classifier
//! ([`Combine`]: the rules alone or either by default; `--combinations` allows classifier and both too), by the
//! contract-level presence F1; then it fits on every training
//! contract. Deterministic: a fixed seed orders the passes. Vectors come only from the embedding cache (fill it first
//! with `embed_cuad`; sentences not cached are counted and left out).
//!
//! `--train even|odd` trains on that half (the `eval cuad --half` halves) and prints presence on the other half
//! (rules alone, classifier alone, combined); `--train all` trains on both halves (the shipped weights). Run with
//! `--release`:
//!
//! ```sh
//! cargo run --release -p pactwise-pipeline --example train_prefill -- DIR --train even|odd|all [--out FILE]
//!     [--cache DIR] [--epochs N] [--limit N] [--min-gain F1] [--combinations rules,classifier,either,both]
//! ```

use anyhow::{Context, bail};
use pactwise_checklists::Catalog;
use pactwise_domain::ItemStatus;
use pactwise_embed::DIMENSIONS;
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use pactwise_pipeline::embedding_cache::{EmbeddingCache, default_cache_dir};
use pactwise_pipeline::eval::{self, LabelRecord};
use pactwise_pipeline::offline::learned::{self, CategoryWeights, ClassifierFile, Combine, QuoteFrom, sigmoid};
use pactwise_pipeline::offline::{ContractIndex, clause_quote};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SEED: u64 = 0x5eed_2126;
/// A combination with the classifier replaces the rules alone only when its out-of-fold presence F1 is higher by
/// this much (a category has a few dozen contracts per inner fold: smaller gains are noise). `--min-gain` changes it
/// (above 1: the rules alone decide presence everywhere, the classifier only offers quotes).
const MIN_GAIN: f64 = 0.02;

/// One contract: its classifier sentences' vectors and, per category (by index), whether each sentence overlaps a
/// labelled span, whether the contract holds the clause, and whether the rules alone call it present.
struct Contract {
    name: String,
    vectors: Vec<Vec<f32>>,
    positive: Vec<Vec<bool>>,
    present: Vec<bool>,
    rules: Vec<bool>,
    /// Per sentence and category: whether the sentence's quote (its clause, as the pre-fill quotes it) overlaps a
    /// labelled span.
    quote_on_span: Vec<Vec<bool>>,
    /// Per category: whether the rules' quote of a present item overlaps a labelled span.
    rules_quote_on_span: Vec<bool>,
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut train: Option<Option<usize>> = None;
    let mut out: Option<PathBuf> = None;
    let mut cache_dir = default_cache_dir();
    let mut epochs = 4usize;
    let mut limit = usize::MAX;
    let mut min_gain = MIN_GAIN;
    // By default the classifier only adds clauses (or quotes) to the rules', never takes one away: in the 2-fold
    // cross-validation "both" and "classifier" removed clauses the rules had right (bench/README.md).
    let mut allowed: Vec<Combine> = vec![Combine::Rules, Combine::Either];
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--train" => {
                train = Some(match args.next().as_deref() {
                    Some("even") => Some(0),
                    Some("odd") => Some(1),
                    Some("all") => None,
                    _ => bail!("--train takes even, odd or all"),
                })
            }
            "--out" => out = Some(args.next().context("--out needs a file")?.into()),
            "--cache" => cache_dir = args.next().context("--cache needs a directory")?.into(),
            "--epochs" => epochs = args.next().context("--epochs needs a number")?.parse()?,
            "--limit" => limit = args.next().context("--limit needs a number")?.parse()?,
            "--min-gain" => min_gain = args.next().context("--min-gain needs a number")?.parse()?,
            "--combinations" => {
                let list = args.next().context("--combinations needs a list such as rules,either")?;
                allowed = list
                    .split(',')
                    .map(|name| serde_json::from_value(serde_json::Value::String(name.trim().to_owned())))
                    .collect::<Result<_, _>>()
                    .context("--combinations takes rules, classifier, either, both")?;
            }
            other if !other.starts_with("--") && dir.is_none() => dir = Some(other.into()),
            other => bail!("unknown argument {other}"),
        }
    }
    let dir = dir.context("usage: train_prefill DIR --train even|odd|all [--out FILE] [--cache DIR] [--epochs N]")?;
    let train = train.context("--train even|odd|all is required")?;
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
    let (train_records, test_records) = match train {
        Some(h) => (half(h), half(1 - h)),
        None => (records.iter().take(limit).collect(), Vec::new()),
    };
    let (train_set, missing_train) = load(&catalog, &dir, &cache, &categories, &train_records);
    let (test_set, missing_test) = load(&catalog, &dir, &cache, &categories, &test_records);
    eprintln!(
        "train {} contracts ({} sentences not cached), test {} contracts ({} not cached)",
        train_set.len(),
        missing_train,
        test_set.len(),
        missing_test
    );

    // Inner folds: every other training contract.
    let inner: [Vec<&Contract>; 2] =
        [0, 1].map(|f| train_set.iter().enumerate().filter(|(i, _)| i % 2 == f).map(|(_, k)| k).collect());
    let mut weights = Vec::with_capacity(categories.len());
    for (c, category) in categories.iter().enumerate() {
        // Out-of-fold best sentences and scores, in the order of `inner[0]` then `inner[1]`.
        let mut oof: Vec<(&Contract, (f32, usize))> = Vec::new();
        for f in 0..2 {
            let (w, b) = fit(&inner[1 - f], c, epochs);
            oof.extend(inner[f].iter().map(|k| (*k, best_sentence(k, &w, b))));
        }
        let (combine, threshold, f1) = choose(&oof, c, min_gain, &allowed);
        // The quote of a clause both found: whichever lay on a labelled span more often.
        let (mut rules_hits, mut classifier_hits) = (0usize, 0usize);
        for (k, (s, j)) in &oof {
            if k.rules[c] && *s >= threshold && combine.present(true, true) && !k.vectors.is_empty() {
                rules_hits += usize::from(k.rules_quote_on_span[c]);
                classifier_hits += usize::from(k.quote_on_span[*j][c]);
            }
        }
        let quote = if classifier_hits > rules_hits { QuoteFrom::Classifier } else { QuoteFrom::Rules };
        let all: Vec<&Contract> = train_set.iter().collect();
        let (w, b) = fit(&all, c, epochs);
        eprintln!(
            "{category:<40} {combine:?} at {threshold:.2} (inner F1 {f1:.3}), quote from {quote:?} \
             (on a span: rules {rules_hits}, classifier {classifier_hits})"
        );
        weights.push(CategoryWeights { category: category.clone(), combine, quote, threshold, bias: b, weights: w });
    }

    if !test_set.is_empty() {
        println!(
            "{:<40} {:>8} {:>8} {:>8} {:>10} {:>5}",
            "presence F1 on the other half", "rules", "classif.", "combined", "combine", "t"
        );
        let mut sums = [0.0f64; 3];
        let mut n = 0usize;
        for (c, cw) in weights.iter().enumerate() {
            if !test_set.iter().any(|k| k.present[c]) {
                continue;
            }
            let bests: Vec<f32> = test_set.iter().map(|k| best_score(k, &cw.weights, cw.bias)).collect();
            let f1_of = |decide: &dyn Fn(&Contract, f32) -> bool| {
                let (tp, fp, fals) = counts(test_set.iter().zip(&bests).map(|(k, &s)| (k.present[c], decide(k, s))));
                ratio(2 * tp, 2 * tp + fp + fals)
            };
            let row = [
                f1_of(&|k, _| k.rules[c]),
                f1_of(&|_, s| s >= cw.threshold),
                f1_of(&|k, s| cw.combine.present(k.rules[c], s >= cw.threshold)),
            ];
            for (sum, x) in sums.iter_mut().zip(row) {
                *sum += x;
            }
            n += 1;
            println!(
                "{:<40} {:>8.3} {:>8.3} {:>8.3} {:>10} {:>5.2}",
                cw.category,
                row[0],
                row[1],
                row[2],
                format!("{:?}", cw.combine),
                cw.threshold
            );
        }
        let n = n.max(1) as f64;
        println!(
            "macro-F1 over {n} categories (presence from the classifier's sentences; eval_cuad --learned gives the \
             review's figures): rules {:.3}, classifier {:.3}, combined {:.3}",
            sums[0] / n,
            sums[1] / n,
            sums[2] / n
        );
    }

    if let Some(out) = out {
        let trained_on = match train {
            Some(0) => "CUAD dev split (../shared/data/cuad), even half (records 0, 2, 4, … of labels.jsonl)",
            Some(_) => "CUAD dev split (../shared/data/cuad), odd half (records 1, 3, 5, … of labels.jsonl)",
            None => "CUAD dev split (../shared/data/cuad), both halves (all records of labels.jsonl)",
        };
        let file = ClassifierFile {
            embedding_model_id: model_id,
            dimensions: DIMENSIONS,
            seed: SEED,
            epochs,
            trained_on: trained_on.to_owned(),
            contracts: train_set.iter().map(|c| c.name.clone()).collect(),
            categories: weights
                .into_iter()
                .map(|mut w| {
                    w.weights.iter_mut().for_each(|x| *x = (*x * 1e4).round() / 1e4);
                    w.bias = (w.bias * 1e4).round() / 1e4;
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

fn load(
    catalog: &Catalog,
    dir: &Path,
    cache: &EmbeddingCache,
    categories: &[String],
    records: &[&LabelRecord],
) -> (Vec<Contract>, usize) {
    let extractor = Extractor::new(ExtractConfig::default());
    let mut out = Vec::new();
    let mut missing = 0;
    for record in records {
        let path = dir.join("contracts").join(format!("{}.txt", record.contract));
        let Ok(bytes) = std::fs::read(&path) else { continue };
        // As the scorer reads the text (character offsets of the labels).
        let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n").replace('\r', "\n");
        let Ok(document) = extractor.extract_file(&path, &ExtractOptions { ocr: false, ..ExtractOptions::default() })
        else {
            continue;
        };
        let index = ContractIndex::build(&document.pages);
        let review = eval::review_pages(catalog, document.pages);
        let predicted = eval::predicted_categories(catalog, &review.findings);
        let mut contract = Contract {
            name: record.contract.clone(),
            vectors: Vec::new(),
            positive: Vec::new(),
            present: categories.iter().map(|c| record.clauses.get(c).is_some_and(|s| !s.is_empty())).collect(),
            rules: categories.iter().map(|c| predicted.contains(c)).collect(),
            quote_on_span: Vec::new(),
            rules_quote_on_span: categories
                .iter()
                .map(|c| {
                    review.findings.iter().any(|f| {
                        catalog.item(&f.item_id).and_then(|i| i.cuad_category).is_some_and(|k| k.as_str() == c)
                            && matches!(f.status, ItemStatus::Present | ItemStatus::Partial)
                            && f.quote.as_ref().is_some_and(|q| on_span(&text, &q.text, record, c))
                    })
                })
                .collect(),
        };
        for i in learned::classifier_sentences(&index) {
            let sentence_text = index.sentence_text(&index.sentences()[i]);
            let Some(vector) = cache.get(sentence_text) else {
                missing += 1;
                continue;
            };
            let labels = match text.find(sentence_text) {
                Some(byte_start) => {
                    let start = text[..byte_start].chars().count();
                    let end = start + sentence_text.chars().count();
                    categories
                        .iter()
                        .map(|c| {
                            record
                                .clauses
                                .get(c)
                                .is_some_and(|spans| spans.iter().any(|s| s.start < end && start < s.end))
                        })
                        .collect()
                }
                None => vec![false; categories.len()],
            };
            let quote = clause_quote(&index, i);
            contract.quote_on_span.push(categories.iter().map(|c| on_span(&text, &quote.text, record, c)).collect());
            contract.vectors.push(vector.to_vec());
            contract.positive.push(labels);
        }
        out.push(contract);
    }
    (out, missing)
}

/// Whether `quote` (found in the scorer's text) overlaps a labelled span of `category`, as the evaluation counts it.
fn on_span(text: &str, quote: &str, record: &LabelRecord, category: &str) -> bool {
    let Some(byte_start) = text.find(quote) else { return false };
    let start = text[..byte_start].chars().count();
    let end = start + quote.chars().count();
    record.clauses.get(category).is_some_and(|spans| spans.iter().any(|s| s.start < end && start < s.end))
}

fn score(w: &[f32], b: f32, v: &[f32]) -> f32 {
    w.iter().zip(v).map(|(a, b)| a * b).sum::<f32>() + b
}

/// Weighted logistic regression by SGD with L2, the positives weighted up to balance the classes (capped at 50).
fn fit(set: &[&Contract], c: usize, epochs: usize) -> (Vec<f32>, f32) {
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
    best_sentence(k, w, b).0
}

/// The highest probability among a contract's sentences, and that sentence (the first among equals).
fn best_sentence(k: &Contract, w: &[f32], b: f32) -> (f32, usize) {
    let mut best = (0.0f32, 0usize);
    for (j, v) in k.vectors.iter().enumerate() {
        let p = sigmoid(score(w, b, v));
        if p > best.0 {
            best = (p, j);
        }
    }
    best
}

/// (true positives, false positives, false negatives) over (truth, guess) pairs.
fn counts(pairs: impl Iterator<Item = (bool, bool)>) -> (usize, usize, usize) {
    let (mut tp, mut fp, mut fals) = (0, 0, 0);
    for (truth, guess) in pairs {
        match (truth, guess) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (true, false) => fals += 1,
            _ => {}
        }
    }
    (tp, fp, fals)
}

/// The combination and threshold with the best presence F1 over out-of-fold scores. Another combination than the
/// rules alone must gain [`MIN_GAIN`] of F1 and must not lower the share of present calls whose quote lies on a
/// labelled span (issue 18's quote precision: the rules' quote where the rules found the clause, the classifier's best
/// sentence where only it did). Ties: the earlier combination of [`Combine::ALL`], then the higher threshold. The rules
/// alone keep the classifier-alone best threshold, which then only decides when the classifier's sentence may be the
/// quote.
fn choose(oof: &[(&Contract, (f32, usize))], c: usize, min_gain: f64, allowed: &[Combine]) -> (Combine, f32, f64) {
    let f1_at = |combine: Combine, t: f32| {
        let (tp, fp, fals) = counts(oof.iter().map(|(k, (s, _))| (k.present[c], combine.present(k.rules[c], *s >= t))));
        ratio(2 * tp, 2 * tp + fp + fals)
    };
    let quote_precision_at = |combine: Combine, t: f32| {
        let (mut called, mut on_span) = (0usize, 0usize);
        for (k, (s, j)) in oof {
            if !combine.present(k.rules[c], *s >= t) {
                continue;
            }
            called += 1;
            on_span += usize::from(if k.rules[c] {
                k.rules_quote_on_span[c]
            } else {
                k.quote_on_span.get(*j).is_some_and(|q| q[c])
            });
        }
        ratio(on_span, called)
    };
    let rules_quotes = quote_precision_at(Combine::Rules, 0.5);
    let best_threshold = |combine: Combine, guard: bool| {
        let mut best = (f64::MIN, 0.5f32);
        for step in 5..100 {
            let t = step as f32 / 100.0;
            if guard && quote_precision_at(combine, t) < rules_quotes {
                continue;
            }
            let f1 = f1_at(combine, t);
            if f1 >= best.0 {
                best = (f1, t);
            }
        }
        best
    };
    let (_, classifier_t) = best_threshold(Combine::Classifier, false);
    let mut chosen = (Combine::Rules, classifier_t, f1_at(Combine::Rules, classifier_t));
    for combine in Combine::ALL.into_iter().skip(1).filter(|c| allowed.contains(c)) {
        let (f1, t) = best_threshold(combine, true);
        if f1 > chosen.2 + min_gain {
            chosen = (combine, t, f1);
        }
    }
    chosen
}

fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}
