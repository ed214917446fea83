//! Inspects real files and the generated hostile corpus, and prints what was accepted and refused and how fast.
//!
//! `inspect_files [--json] [--corpus] [--dump DIR] [PATH ...]`: every file under each PATH (folders walked), then
//! with `--corpus` the generated hostile files. One line per refusal code and per corpus group, then the throughput
//! (MB/s over the bytes inspected, one thread). `--dump DIR` writes the hostile corpus into DIR (one file per
//! sample, numbered, under its upload name) and stops, so a peer can read the same files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pactwise_inspect::{Limits, corpus, inspect};

fn main() -> anyhow::Result<()> {
    let mut json = false;
    let mut with_corpus = false;
    let mut paths = Vec::new();
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--json" => json = true,
            "--corpus" => with_corpus = true,
            "--dump" => {
                let folder = PathBuf::from(arguments.next().ok_or_else(|| anyhow::anyhow!("--dump needs a folder"))?);
                std::fs::create_dir_all(&folder)?;
                for (index, sample) in corpus::hostile().iter().enumerate() {
                    std::fs::write(folder.join(format!("{index:05}-{}-{}", sample.group, sample.name)), &sample.bytes)?;
                }
                return Ok(());
            }
            other => paths.push(PathBuf::from(other)),
        }
    }
    let mut files = Vec::new();
    for path in &paths {
        collect(path, &mut files)?;
    }
    files.sort();
    let limits = Limits::default();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut refused_files = Vec::new();
    let (mut bytes, mut seconds) = (0u64, 0f64);
    for file in &files {
        let content = std::fs::read(file)?;
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        let started = Instant::now();
        let verdict = inspect(name, &content, &limits);
        seconds += started.elapsed().as_secs_f64();
        bytes += content.len() as u64;
        let key = match &verdict {
            Ok(_) => "accepted".to_owned(),
            Err(refusal) => {
                refused_files.push(format!("{}: {refusal}", file.display()));
                format!("refused: {}", refusal.finding())
            }
        };
        *outcomes.entry(key).or_default() += 1;
    }
    let mut groups: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut corpus_bytes, mut corpus_seconds) = (0u64, 0f64);
    if with_corpus {
        for sample in corpus::hostile() {
            let started = Instant::now();
            let refused = inspect(&sample.name, &sample.bytes, &limits).is_err();
            corpus_seconds += started.elapsed().as_secs_f64();
            corpus_bytes += sample.bytes.len() as u64;
            let entry = groups.entry(sample.group).or_default();
            entry.0 += 1;
            entry.1 += usize::from(refused);
        }
    }
    let megabytes = |b: u64| b as f64 / 1_000_000.0;
    if json {
        let report = serde_json::json!({
            "files": files.len(),
            "file_megabytes": megabytes(bytes),
            "file_seconds": seconds,
            "file_mb_per_s": megabytes(bytes) / seconds.max(1e-9),
            "outcomes": outcomes,
            "corpus": groups.iter().map(|(g, (t, r))| (g.to_string(), serde_json::json!({"tried": t, "refused": r}))).collect::<BTreeMap<_, _>>(),
            "corpus_tried": groups.values().map(|(t, _)| t).sum::<usize>(),
            "corpus_refused": groups.values().map(|(_, r)| r).sum::<usize>(),
            "corpus_megabytes": megabytes(corpus_bytes),
            "corpus_seconds": corpus_seconds,
        });
        println!("{report}");
        return Ok(());
    }
    if !files.is_empty() {
        println!(
            "{} files, {:.1} MB in {:.2} s: {:.1} MB/s",
            files.len(),
            megabytes(bytes),
            seconds,
            megabytes(bytes) / seconds.max(1e-9)
        );
        for (outcome, count) in &outcomes {
            println!("  {outcome:<32} {count:>6}");
        }
        for line in refused_files.iter().take(40) {
            println!("    {line}");
        }
    }
    if with_corpus {
        let tried: usize = groups.values().map(|(t, _)| t).sum();
        let refused: usize = groups.values().map(|(_, r)| r).sum();
        println!(
            "hostile corpus: {tried} tried, {refused} refused, {} accepted ({:.1} MB in {:.2} s)",
            tried - refused,
            megabytes(corpus_bytes),
            corpus_seconds
        );
        for (group, (t, r)) in &groups {
            println!("  {group:<14} tried {t:>5}  refused {r:>5}");
        }
    }
    Ok(())
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            collect(&entry?.path(), files)?;
        }
    } else if path.is_file() {
        files.push(path.to_path_buf());
    }
    Ok(())
}
