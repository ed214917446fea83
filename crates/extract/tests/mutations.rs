//! Seeded mutation testing of intake: at least 1,000 damaged PDF and DOCX inputs must each end in a result or a
//! clear error, never a panic. OCR is off so the run stays quick (pages that lost their text are not recognised).

mod common;

use common::{extractor, read};
use pactwise_extract::ExtractOptions;
use pactwise_extract::fixtures::SplitMix;

/// One random damage: flip bytes, cut the tail, splice a chunk elsewhere, zero a run, or duplicate a run.
fn mutate(input: &[u8], rng: &mut SplitMix) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(3) {
        if out.is_empty() {
            break;
        }
        let at = rng.below(out.len());
        match rng.below(5) {
            0 => {
                for _ in 0..=rng.below(8) {
                    let i = rng.below(out.len());
                    out[i] ^= 1 << rng.below(8);
                }
            }
            1 => out.truncate(at),
            2 => {
                let len = rng.below(64).min(out.len() - at);
                let chunk: Vec<u8> = out[at..at + len].to_vec();
                let to = rng.below(out.len());
                out.splice(to..to, chunk);
            }
            3 => {
                let end = (at + rng.below(256)).min(out.len());
                out[at..end].iter_mut().for_each(|b| *b = 0);
            }
            _ => {
                let end = (at + rng.below(32)).min(out.len());
                let run: Vec<u8> = out[at..end].to_vec();
                for _ in 0..rng.below(4) {
                    out.splice(at..at, run.iter().copied());
                }
            }
        }
    }
    out
}

#[test]
fn a_thousand_mutated_pdf_and_docx_inputs_end_in_results_or_errors_never_panics() {
    let seeds = [read("text.pdf"), read("mixed.pdf"), read("protected.pdf"), read("table.docx")];
    let options = ExtractOptions { ocr: false, ..ExtractOptions::default() };
    let mut rng = SplitMix(0x5EED_1DEA);
    let (mut ok, mut errors) = (0, 0);
    let total = 1_200;
    for n in 0..total {
        let seed = &seeds[n % seeds.len()];
        let input = mutate(seed, &mut rng);
        match extractor().extract_bytes(&input, None, &options) {
            Ok(doc) => {
                ok += 1;
                assert!(doc.pages.iter().enumerate().all(|(i, p)| p.number as usize == i + 1));
            }
            Err(e) => {
                errors += 1;
                assert!(!e.to_string().is_empty());
            }
        }
    }
    assert_eq!(ok + errors, total);
    assert!(errors > 0 && ok > 0, "mutations should produce both outcomes: {ok} ok, {errors} errors");
}
