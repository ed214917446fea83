//! Unit tests across the passes live beside each pass; this module holds the checks of the whole.

use crate::{DocumentStructure, Zone};
use pactwise_domain::Page;

#[test]
fn an_empty_document_has_an_empty_structure() {
    let s = DocumentStructure::build(&[]);
    assert!(s.lines.is_empty() && s.sections.is_empty());
    let s = DocumentStructure::build(&[Page::plain(1, "\n\n  \n")]);
    assert!(s.lines.is_empty());
}

#[test]
fn the_structure_round_trips_through_json() {
    let pages = [Page::plain(1, "1. TERM\nThe term is one year.\n2. FEES\nFees are due monthly.")];
    let s = DocumentStructure::build(&pages);
    let json = serde_json::to_string(&s).unwrap();
    let back: DocumentStructure = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
    assert!(s.lines.iter().all(|l| l.zone == Zone::Operative));
}

#[test]
fn hostile_text_never_panics() {
    let nasty = [
        "(".repeat(10_000),
        "1.".repeat(5_000),
        "Article ".repeat(3_000),
        "\u{201C}a\u{201D} means ".repeat(2_000),
        "ÿ\u{0}\u{202E}é".repeat(1_000),
        "WHEREAS\nNOW, THEREFORE\nIN WITNESS WHEREOF\nEXHIBIT A\n".repeat(500),
    ];
    for text in nasty {
        let s = DocumentStructure::build(&[Page::plain(1, text.clone()), Page::plain(2, text)]);
        for line in &s.lines {
            let _ = s.place(line.page, line.range());
        }
    }
}
