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

#[test]
fn an_underlined_heading_is_a_heading_and_its_underline_no_words_of_the_clause() {
    let text = "10.5 Limitation of Liability\n____________________________\nIn no event shall either party be liable for \
                indirect damages.\n\nConfidentiality\n===============\nEach party shall keep the other's information \
                confidential.\n--------\nThis sentence ends a clause.\n";
    let pages = [Page::plain(1, text)];
    let s = DocumentStructure::build(&pages);
    let place = |quote: &str| {
        let at = text.find(quote).unwrap();
        s.place(1, at..at + quote.len())
    };
    assert!(place("10.5 Limitation of Liability").in_heading);
    assert!(place("10.5 Limitation of Liability\n____________________________").in_heading, "with its underline");
    assert!(place("Confidentiality").in_heading, "an unnumbered heading, underlined");
    assert!(place("Confidentiality\n===============").in_heading);
    assert!(!place("Confidentiality\n===============\nEach party shall keep").in_heading, "the clause's words");
    assert!(!place("Each party shall keep the other's information confidential.").in_heading);
    assert!(
        !place("This sentence ends a clause.").in_heading && !place("confidential.\n--------").in_heading,
        "a sentence above a separator is not a heading"
    );
    let rules: Vec<&str> = s.lines.iter().filter(|l| l.rule).map(|l| &text[l.range()]).collect();
    assert_eq!(rules, ["____________________________", "===============", "--------"]);
    assert!(s.sections.iter().all(|x| x.heading.as_deref() != Some("Confidentiality")), "no section of its own");
}
