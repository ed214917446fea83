//! Every verified quote reaches the UI with the character range where it stands on its page, found in the backend
//! with quote verification's own search (`pipeline::verify::locate`) when the review is loaded: findings stored
//! before ranges were sent get theirs too, and the UI keeps no quote search of its own.

use pactwise_api::{Api, CorrectionInput, ImportOptions, quote_span};
use pactwise_domain::{ItemStatus, Page, Quote};
use std::path::PathBuf;

fn msa() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/demo/master-services-agreement-northwind-fabrikam.txt")
}

fn page(number: u32, text: &str) -> Page {
    Page::plain(number, text)
}

/// An empty correction input (each test sets the fields its correction changes).
fn correction() -> CorrectionInput {
    CorrectionInput {
        item_id: String::new(),
        confirm: false,
        status: None,
        quote: None,
        note: None,
        acknowledge_warnings: false,
    }
}

fn chars(text: &str, start: u32, end: u32) -> String {
    text.chars().skip(start as usize).take((end - start) as usize).collect()
}

#[test]
fn the_range_is_in_characters_of_the_page_text_and_follows_verifications_normalisation() {
    let pages = [
        page(1, "Société 🙂 Générale shall pay the “Fees” within 30 days."),
        page(2, "The Licensee may termi-\n  nate it \u{2014} at will."),
    ];
    let span = quote_span(&pages, 1, "Générale  shall pay").unwrap();
    assert_eq!((span.start, span.end), (10, 28));
    assert_eq!(chars(&pages[0].text, span.start, span.end), "Générale shall pay");
    // Typographic quotes, hyphenation across a line break and dashes are matched as verification matches them.
    let span = quote_span(&pages, 1, "the \"Fees\" within").unwrap();
    assert_eq!(chars(&pages[0].text, span.start, span.end), "the “Fees” within");
    let span = quote_span(&pages, 2, "may terminate it - at will").unwrap();
    assert_eq!(chars(&pages[1].text, span.start, span.end), "may termi-\n  nate it \u{2014} at will");
    // Nothing is placed where verification would not find it.
    assert_eq!(quote_span(&pages, 1, "shall pay the fees within 60 days"), None);
    assert_eq!(quote_span(&pages, 3, "Générale"), None);
    assert_eq!(quote_span(&pages, 1, "   "), None);
}

#[tokio::test]
async fn every_verified_quote_of_a_loaded_review_comes_with_its_range_on_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let api = Api::open(tmp.path().join("data")).unwrap();
    let scope = api.local_session().await.unwrap();
    let report = api.import_documents(&scope, vec![msa()], ImportOptions::default(), &|_| {}).await.unwrap();
    let id = report.imported[0].document.id;

    let review = api.document_review(&scope, id).await.unwrap();
    let quoted: Vec<_> = review.items.iter().filter(|i| i.quote.is_some()).collect();
    assert!(!quoted.is_empty(), "the offline rules quote the contract");
    for item in &quoted {
        let span = item.quote_span.unwrap_or_else(|| panic!("{} has a quote but no range", item.id));
        let text = api.page_layout(&scope, id, item.page.unwrap()).await.unwrap().text;
        assert_eq!(chars(&text, span.start, span.end), *item.quote.as_ref().unwrap(), "{}", item.id);
    }
    assert!(review.items.iter().filter(|i| i.quote.is_none()).all(|i| i.quote_span.is_none()));

    // A person's quote, selected with other whitespace, is kept as the page has it and placed there.
    let item = quoted[0].id.clone();
    let selected = Quote { text: "Customer   shall pay the\nfees".into(), page: 1 };
    let input = CorrectionInput {
        item_id: item.clone(),
        status: Some(ItemStatus::Partial),
        quote: Some(selected),
        ..correction()
    };
    let corrected = api.correct_item(&scope, id, input).await.unwrap();
    let shown = corrected.items.iter().find(|i| i.id == item).unwrap();
    let span = shown.quote_span.unwrap();
    let text = api.page_layout(&scope, id, 1).await.unwrap().text;
    assert_eq!(chars(&text, span.start, span.end), "Customer shall pay the fees");
    assert_eq!(shown.quote.as_deref(), Some("Customer shall pay the fees"));
}
