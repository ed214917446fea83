//! Scores the offline path on a labelled CUAD folder and prints the figures; also the speed benchmark (total seconds
//! and the median per contract). Run with `--release`:
//!
//! ```sh
//! cargo run --release -p pactwise-pipeline --example eval_cuad -- DIR [--checklists DIR] [--limit N]
//!     [--half even|odd] [--dump FILE] [--json] [--learned [--weights FILE] [--cache DIR]]
//! ```
//! `--learned` adds the pre-fill's learned classifier (the shipped weights, or `--weights FILE` from `train_prefill`)
//! to the rules, its sentence vectors read from the embedding cache (`--cache`, default
//! `/var/cache/pactwise/embed-cache`) and the missing ones embedded by the installed model and added to it.
//! `--checklists` reads the library from a directory instead of the embedded one (to iterate on signals without a
//! rebuild); `--half` keeps every other contract (tune on one half, check on the other); `--dump` writes one JSON line
//! per contract with the categories predicted and labelled and the quotes, each with its item's status and reason,
//! where it sits (page, zones, section number, headings, a definition) and where its category's labelled spans sit.

use anyhow::{Context, bail};
use pactwise_checklists::Catalog;
use pactwise_pipeline::embedding_cache::{CachedVectors, default_cache_dir};
use pactwise_pipeline::eval;
use pactwise_pipeline::offline::learned::{Learned, PrefillClassifier};
use std::io::Write;
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut checklists: Option<PathBuf> = None;
    let mut limit: Option<usize> = None;
    let mut half: Option<usize> = None;
    let mut dump: Option<PathBuf> = None;
    let mut json = false;
    let mut learned = false;
    let mut weights: Option<PathBuf> = None;
    let mut cache_dir = default_cache_dir();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--checklists" => checklists = Some(args.next().context("--checklists needs a directory")?.into()),
            "--limit" => limit = Some(args.next().context("--limit needs a number")?.parse()?),
            "--half" => {
                half = Some(match args.next().as_deref() {
                    Some("even") => 0,
                    Some("odd") => 1,
                    _ => bail!("--half takes even or odd"),
                })
            }
            "--dump" => dump = Some(args.next().context("--dump needs a file")?.into()),
            "--json" => json = true,
            "--learned" => learned = true,
            "--weights" => weights = Some(args.next().context("--weights needs a file")?.into()),
            "--cache" => cache_dir = args.next().context("--cache needs a directory")?.into(),
            other if !other.starts_with("--") && dir.is_none() => dir = Some(other.into()),
            other => bail!("unknown argument {other}"),
        }
    }
    let dir = dir.context("usage: eval_cuad DIR [--checklists DIR] [--limit N] [--half even|odd] [--dump FILE]")?;
    if !dir.join("labels.jsonl").exists() {
        bail!("{} holds no labels.jsonl", dir.display());
    }
    let catalog = match &checklists {
        Some(path) => Catalog::from_dir(path)?,
        None => Catalog::load()?,
    };
    let records = eval::read_labels(&dir)?;
    let records: Vec<_> = records
        .into_iter()
        .enumerate()
        .filter(|(i, _)| half.is_none_or(|h| i % 2 == h))
        .map(|(_, r)| r)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let mut out = match &dump {
        Some(path) => Some(std::io::BufWriter::new(std::fs::File::create(path)?)),
        None => None,
    };
    let classifier = match &weights {
        Some(path) => PrefillClassifier::from_json(&std::fs::read_to_string(path)?)?,
        None => PrefillClassifier::shipped()?.clone(),
    };
    let vectors =
        if learned { Some(CachedVectors::new(&cache_dir, pactwise_embed::Embedder::load_default()?)?) } else { None };
    let learned = vectors.as_ref().map(|v| Learned { classifier: &classifier, vectors: v });
    if let Some(l) = &learned {
        eprintln!("with the learned classifier trained on: {}", l.classifier.file().trained_on);
    }
    let report = eval::score_with(&catalog, &dir, &records, learned.as_ref(), &mut |outcome, _text| {
        let Some(out) = out.as_mut() else { return };
        let Some(review) = outcome.review else { return };
        let truth: Vec<&String> =
            outcome.record.clauses.iter().filter(|(_, spans)| !spans.is_empty()).map(|(c, _)| c).collect();
        let structure = pactwise_structure::DocumentStructure::build(&review.pages);
        // Where a span of text sits (for reading the errors): zones, section number, headings, heading, definition.
        let place_of = |page: u32, text: &str| -> serde_json::Value {
            let Some(p) = review.pages.iter().find(|p| p.number == page) else { return serde_json::Value::Null };
            let Some(range) = pactwise_pipeline::verify::locate(&p.text, text) else { return serde_json::Value::Null };
            let place = structure.place(page, range);
            serde_json::json!({
                "page": page,
                "zones": place.zones,
                "section": place.section.and_then(|s| s.label.clone()),
                "headings": place.section.map(|s| structure.headings_of(s)),
                "in_heading": place.in_heading,
                "definition": place.definition,
            })
        };
        let locate_anywhere = |text: &str| -> serde_json::Value {
            let probe: String = text.chars().take(120).collect();
            for p in &review.pages {
                if pactwise_pipeline::verify::locate(&p.text, &probe).is_some() {
                    return place_of(p.number, &probe);
                }
            }
            serde_json::Value::Null
        };
        let quotes: Vec<serde_json::Value> = review
            .findings
            .iter()
            .filter(|f| f.quote.is_some())
            .map(|f| {
                let category = catalog.item(&f.item_id).and_then(|i| i.cuad_category).map(|c| c.as_str());
                let quote = f.quote.as_ref().expect("filtered");
                let spans: Vec<serde_json::Value> = category
                    .and_then(|c| outcome.record.clauses.get(c))
                    .map(|spans| spans.iter().map(|s| locate_anywhere(&s.text)).collect())
                    .unwrap_or_default();
                serde_json::json!({"item": f.item_id, "category": category, "quote": quote.text,
                    "status": f.status, "reason": f.reason, "place": place_of(quote.page, &quote.text), "label_places": spans})
            })
            .collect();
        let findings: Vec<serde_json::Value> = review
            .findings
            .iter()
            .map(|f| {
                let category = catalog.item(&f.item_id).and_then(|i| i.cuad_category).map(|c| c.as_str());
                serde_json::json!({"item": f.item_id, "category": category, "status": f.status, "reason": f.reason})
            })
            .collect();
        let line = serde_json::json!({
            "findings": findings,
            "contract": outcome.record.contract,
            "type": outcome.record.contract_type,
            "predicted_type": review.classification.type_id,
            "reason": review.classification.reason,
            "predicted": outcome.predicted,
            "truth": truth,
            "quotes": quotes,
            "extractions": review.extractions,
            "governing_law": outcome.record.answers.get("Governing Law"),
        });
        let _ = writeln!(out, "{line}");
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    for c in report.categories.iter().filter(|c| c.in_macro) {
        println!(
            "  {:40} F1 {:.2}  P {:.2} R {:.2}  tp {} fp {} fn {}",
            c.category, c.f1, c.precision, c.recall, c.tp, c.fp, c.false_negatives
        );
    }
    for m in &report.misclassified {
        println!("  misclassified {}: {} -> {}", m.contract, m.expected, m.predicted);
    }
    println!(
        "contracts {}, errors {}, missing items {}, learned classifier unused {}",
        report.contracts, report.errors, report.missing_items, report.learned_unused
    );
    println!(
        "type accuracy {:.3}; presence macro-F1 {:.3}; quote precision {:.3} of {}; invented {}; rejected {}",
        report.type_accuracy,
        report.presence_macro_f1,
        report.quote_precision,
        report.quotes,
        report.invented_quotes,
        report.rejected_quotes
    );
    println!(
        "evidence quote precision {:.3} ({}/{} quotes of present items); missed-present {:.3} ({}/{} labelled clauses called absent)",
        report.evidence_quote_precision,
        report.evidence_quotes_on_labelled_span,
        report.evidence_quotes,
        report.missed_present_rate,
        report.labelled_called_absent,
        report.labelled_pairs
    );
    println!(
        "governing law {:.3} ({}/{}); parties recall {:.3} ({}/{})",
        report.governing_law_accuracy,
        report.governing_law_correct,
        report.governing_law_labelled,
        report.parties_recall,
        report.parties_found,
        report.parties_labelled
    );
    println!("values against CUAD's normalised answers (parties: recall of names, defined names allowed):");
    for line in eval::values_table(&report.values) {
        println!("{line}");
    }
    println!(
        "{{\"figure\":\"offline_review_cuad\",\"contracts\":{},\"total_seconds\":{:.2},\"median_ms_per_contract\":{:.2}}}",
        report.contracts, report.total_seconds, report.median_ms_per_contract
    );
    Ok(())
}
