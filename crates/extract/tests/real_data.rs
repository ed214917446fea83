//! Checks on real contracts from `../shared/data` (under CI they fail when it is absent; elsewhere they skip, saying
//! so; see `pactwise-testkit`): a sample of the CUAD PDFs
//! against their texts, and OCR of scanned CUAD pages against the `tesseract` command. The full runs are
//! `pactwise-extract eval-cuad` and `eval-ocr` in release (see bench/README.md).

mod common;

use common::extractor;
use pactwise_domain::ConfidenceKind;
use pactwise_extract::ExtractOptions;
use pactwise_extract::eval::{Recall, word_edits, word_recall};
use pactwise_extract::fixtures::{self, FixturePage};
use std::path::PathBuf;

#[test]
fn a_sample_of_cuad_pdfs_extracts_with_word_recall_of_at_least_098() {
    let Some(pdf_dir) = pactwise_testkit::shared_data("cuad/pdfs") else { return };
    let contracts = pdf_dir.with_file_name("contracts");
    let mut pdfs: Vec<PathBuf> =
        std::fs::read_dir(&pdf_dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    pdfs.sort();
    let mut total = Recall::default();
    let mut count = 0;
    for pdf in pdfs.iter().step_by(16) {
        let stem = pdf.file_stem().unwrap().to_string_lossy().into_owned();
        let reference = std::fs::read_to_string(contracts.join(format!("{stem}.txt"))).unwrap();
        let doc = extractor()
            .extract_file(pdf, &ExtractOptions::default())
            .unwrap_or_else(|e| panic!("{stem} did not extract: {e}"));
        let text: Vec<&str> = doc.pages.iter().map(|p| p.text.as_str()).collect();
        total.add(word_recall(&text.join("\n"), &reference));
        count += 1;
    }
    eprintln!("CUAD sample: {count} PDFs, word recall {:.4}", total.ratio());
    assert!(count >= 20);
    assert!(total.ratio() >= 0.98, "word recall {}", total.ratio());
}

#[test]
fn ocr_of_scanned_contract_pages_is_at_least_as_accurate_as_the_tesseract_command() {
    let Some(contracts) = pactwise_testkit::shared_data("cuad/contracts") else { return };
    if !pactwise_testkit::command("tesseract") {
        return;
    }
    let pdfium = common::config().pdfium_path;
    let dir = tempfile::tempdir().unwrap();
    let texts = [
        "abilityinc-06-15-2020-ex-4-25-services-agreement.txt",
        "acceleratedtechnologiesholdingcorp-04-24-2003-ex-10-13-joint-venture-agreement.txt",
    ];
    let (mut ours, mut theirs, mut words) = (0, 0, 0);
    for (i, name) in texts.iter().enumerate() {
        let path = contracts.join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{} is unreadable: {e}", path.display()));
        let lines = fixtures::page_lines(&text).into_iter().nth(1).unwrap();
        let truth = lines.join("\n");
        let scan = fixtures::scanned_page(&pdfium, &lines, 200, 77 + i as u64).unwrap();
        let png = dir.path().join(format!("page-{i}.png"));
        scan.save(&png).unwrap();
        let pdf = fixtures::build_pdf(&pdfium, &[FixturePage::Scan(scan)]).unwrap();
        let doc = extractor().extract_bytes(&pdf, None, &ExtractOptions::default()).unwrap();
        assert_eq!(doc.pages[0].confidence.kind(), ConfidenceKind::Measured);
        let (e, n) = word_edits(&doc.pages[0].text, &truth);
        ours += e;
        words += n;
        let cli = std::process::Command::new("tesseract")
            .arg(&png)
            .arg("-")
            .env("OMP_THREAD_LIMIT", "1")
            .stderr(std::process::Stdio::null())
            .output()
            .unwrap();
        theirs += word_edits(&String::from_utf8_lossy(&cli.stdout), &truth).0;
    }
    let accuracy = |e: usize| 1.0 - e as f64 / words as f64;
    eprintln!("OCR word accuracy: ours {:.4}, tesseract command {:.4}", accuracy(ours), accuracy(theirs));
    assert!(ours <= theirs, "ours {} vs tesseract {}", accuracy(ours), accuracy(theirs));
}
