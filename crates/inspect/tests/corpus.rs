//! The hostile-file corpus: every generated hostile file is refused, every clean one accepted, nothing panics.

use std::collections::BTreeMap;

use pactwise_inspect::{Limits, corpus, inspect};

#[test]
fn clean_files_of_every_kind_are_accepted() {
    for sample in corpus::clean() {
        let verdict = inspect(&sample.name, &sample.bytes, &Limits::default());
        assert!(verdict.is_ok(), "{} was refused: {}", sample.name, verdict.unwrap_err());
    }
}

#[test]
fn every_hostile_file_is_refused() {
    let samples = corpus::hostile();
    assert!(samples.len() >= 1_000, "the corpus has only {} files", samples.len());
    let mut by_group: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut opened = Vec::new();
    for sample in &samples {
        let entry = by_group.entry(sample.group).or_default();
        entry.0 += 1;
        match inspect(&sample.name, &sample.bytes, &Limits::default()) {
            Err(refusal) => {
                entry.1 += 1;
                assert!(!refusal.to_string().is_empty());
            }
            Ok(found) => {
                if let Ok(dir) = std::env::var("PACTWISE_INSPECT_DUMP") {
                    let _ = std::fs::write(format!("{dir}/{}-{}", opened.len(), sample.name), &sample.bytes);
                }
                opened.push(format!("{} ({}, {})", sample.name, sample.group, found.summary))
            }
        }
    }
    for (group, (tried, refused)) in &by_group {
        println!("{group:<14} tried {tried:>5}  refused {refused:>5}");
    }
    assert!(opened.is_empty(), "{} hostile files were accepted: {opened:#?}", opened.len());
}

/// Real contracts as filed (CUAD's 356 PDFs, from scanners, word processors and filing software): the inspector
/// must not refuse ordinary documents.
#[test]
fn real_contract_pdfs_are_accepted() {
    let Some(folder) = pactwise_testkit::shared_data("cuad/pdfs") else { return };
    let mut refused = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&folder).expect("the CUAD folder reads") {
        let path = entry.expect("a folder entry").path();
        let bytes = std::fs::read(&path).expect("the PDF reads");
        count += 1;
        if let Err(refusal) = inspect(&path.file_name().unwrap().to_string_lossy(), &bytes, &Limits::default()) {
            refused.push(format!("{}: {refusal}", path.display()));
        }
    }
    assert!(count >= 300, "only {count} PDFs in {}", folder.display());
    assert!(refused.is_empty(), "{} of {count} real PDFs were refused: {refused:#?}", refused.len());
}
