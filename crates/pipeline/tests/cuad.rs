//! The offline path over the labelled CUAD folder (`shared/data/cuad` in a folder above the repository, or
//! `PACTWISE_CUAD_DIR`):
//! every item of the predicted type is answered and no quote is invented. Skips, saying so, when the folder is absent.

use pactwise_checklists::Catalog;
use pactwise_pipeline::eval;
use std::path::PathBuf;

fn cuad_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PACTWISE_CUAD_DIR") {
        let dir = PathBuf::from(dir);
        return dir.join("labels.jsonl").exists().then_some(dir);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().map(|a| a.join("shared/data/cuad")).find(|d| d.join("labels.jsonl").exists())
}

#[test]
fn offline_reviews_of_cuad_contracts_answer_every_item_and_invent_no_quote() {
    let Some(dir) = cuad_dir() else {
        eprintln!("skipped: no CUAD folder (set PACTWISE_CUAD_DIR to a folder with labels.jsonl and contracts/)");
        return;
    };
    let catalog = Catalog::load().expect("the embedded library loads");
    let limit = std::env::var("PACTWISE_CUAD_LIMIT").ok().and_then(|n| n.parse().ok()).unwrap_or(12);
    let report = eval::cuad(&catalog, &dir, Some(limit)).expect("the CUAD folder reads");
    eprintln!(
        "{} contracts: type accuracy {:.3}, presence macro-F1 {:.3}, quotes {}, invented {}, governing law {:.3}",
        report.contracts,
        report.type_accuracy,
        report.presence_macro_f1,
        report.quotes,
        report.invented_quotes,
        report.governing_law_accuracy
    );
    assert_eq!(report.errors, 0);
    assert_eq!(report.missing_items, 0, "every item of the predicted type has a finding");
    assert!(report.quotes > 0, "the rules quote the clauses they find");
    assert_eq!(report.invented_quotes, 0);
    assert_eq!(report.rejected_quotes, 0, "rule quotes are cut from their page, so verification keeps them all");
}
