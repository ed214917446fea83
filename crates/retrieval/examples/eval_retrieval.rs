//! The retrieval benchmark (see `pactwise_retrieval::eval`) in a release build:
//!
//!     cargo run --release -p pactwise-retrieval --example eval_retrieval -- ../shared/data/cuad \
//!         [--store DIR] [--limit N] [--dense-weight W] [--json]
//!
//! `--store` keeps the benchmark's store (its vectors are the embedding cache; default
//! /var/cache/pactwise/retrieval-eval). `--dense-weight` sets the dense list's weight in the fusion (BM25's is 1) to
//! compare weights. `pactwise eval retrieval DIR` runs the same code.

use anyhow::{Context, bail};
use pactwise_retrieval::{Retriever, eval};
use std::path::PathBuf;
use std::sync::Arc;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut store = PathBuf::from("/var/cache/pactwise/retrieval-eval");
    let mut limit = None;
    let mut json = false;
    let mut dense_weight = pactwise_retrieval::DENSE_WEIGHT;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--store" => store = args.next().context("--store takes a folder")?.into(),
            "--limit" => limit = Some(args.next().context("--limit takes a number")?.parse()?),
            "--json" => json = true,
            "--dense-weight" => dense_weight = args.next().context("--dense-weight takes a number")?.parse()?,
            other if other.starts_with("--") => bail!("unknown option {other}"),
            other => dir = Some(other.into()),
        }
    }
    let dir = dir.context("usage: eval_retrieval DIR [--store DIR] [--limit N] [--dense-weight W] [--json]")?;
    let retriever = Retriever::new(Arc::new(pactwise_embed::LazyEmbedder::new(pactwise_embed::default_model_dir())))
        .with_dense_weight(dense_weight);
    let mut last = String::new();
    let report = eval::run(&dir, &store, &retriever, limit, &mut |step, done, total| {
        let line = format!("{step}: {}%", (done * 100).checked_div(total).unwrap_or(100));
        if line != last {
            eprintln!("{line}");
            last = line;
        }
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", eval::table(&report));
    }
    Ok(())
}
