//! The structure of real layouts (CUAD PDFs from the shared data folder): a filed agreement with a table of contents
//! and a filing line on every page, one without a table of contents, and a page of the first scanned (rendered to an
//! image and read back by OCR). The DOCX with automatic numbering is in `docx_numbering.rs`.

use pactwise_domain::Page;
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use pactwise_structure::{DocumentStructure, Section, Zone};

const WITH_TOC: &str = "cuad/pdfs/zogenixinc-20190509-10-q-ex-10-2-11663313-ex-10-2-distributor-agreement.pdf";
const WITHOUT_TOC: &str = "cuad/pdfs/hyperionsoftwarecorp-09-28-1994-ex-10-47-exclusive-distributor-agreement.pdf";

fn pages_of(relative: &str) -> Option<(Extractor, Vec<u8>, Vec<Page>)> {
    let path = pactwise_testkit::shared_data(relative)?;
    let config = ExtractConfig::from_env();
    if !pactwise_testkit::library("libpdfium", &config.pdfium_path) {
        return None;
    }
    let extractor = Extractor::new(config);
    let bytes = std::fs::read(&path).unwrap();
    let pages = extractor.extract_bytes(&bytes, None, &ExtractOptions::default()).unwrap().pages;
    Some((extractor, bytes, pages))
}

fn lines_with<'a>(
    s: &'a DocumentStructure,
    pages: &[Page],
    needle: &str,
) -> Vec<(&'a pactwise_structure::Line, String)> {
    s.lines.iter().map(|l| (l, s.line_text(pages, l).to_owned())).filter(|(_, t)| t.contains(needle)).collect()
}

fn section<'a>(s: &'a DocumentStructure, key: &str) -> Option<&'a Section> {
    s.sections.iter().find(|x| x.key.as_deref() == Some(key))
}

#[test]
fn a_filed_agreement_has_its_contents_filing_line_and_nested_articles_found() {
    let Some((_, _, pages)) = pages_of(WITH_TOC) else { return };
    let s = DocumentStructure::build(&pages);
    // The filing line at the foot of every page is furniture, never content.
    let filing = lines_with(&s, &pages, "Source: ZOGENIX");
    assert!(filing.len() > 60, "one per page: {}", filing.len());
    assert!(filing.iter().all(|(l, _)| l.zone.is_running()), "{:?}", filing.iter().find(|(l, _)| !l.zone.is_running()));
    // The table of contents names Article 10's limitation on an early page; the body holds the clause on page 46.
    let named = lines_with(&s, &pages, "Limitation of Liability");
    let toc: Vec<_> = named.iter().filter(|(l, _)| l.page <= 5).collect();
    assert!(!toc.is_empty());
    assert!(toc.iter().all(|(l, _)| l.zone == Zone::TableOfContents), "{toc:?}");
    let body = named.iter().find(|(l, _)| l.page > 40).expect("the clause in the body");
    assert_eq!(body.0.zone, Zone::Operative, "{:?}", body.1);
    // 10.5 is a section of Article 10, headed by its words.
    let cap = section(&s, "10.5").expect("section 10.5");
    assert!(cap.heading.as_deref().unwrap_or_default().contains("Limitation of Liability"), "{cap:?}");
    let parent = &s.sections[cap.parent.expect("nested") as usize];
    assert_eq!(parent.key.as_deref(), Some("10"), "{parent:?}");
    assert!(s.lines[cap.first_line as usize].page > 40, "the section starts in the body, not in the contents");
    // The definitions and their terms are found.
    assert!(s.definitions.len() > 20, "{} definitions", s.definitions.len());
    assert!(
        s.definitions.iter().any(|d| d.term == "Territory"),
        "{:?}",
        s.definitions.iter().take(10).collect::<Vec<_>>()
    );
}

#[test]
fn an_agreement_without_contents_has_no_contents_and_its_numbered_sections_nest() {
    let Some((_, _, pages)) = pages_of(WITHOUT_TOC) else { return };
    let s = DocumentStructure::build(&pages);
    assert!(s.lines.iter().all(|l| l.zone != Zone::TableOfContents), "{:?}", s.zone_counts());
    let operative = s.lines.iter().filter(|l| l.zone == Zone::Operative).count();
    assert!(operative * 2 > s.lines.len(), "most lines are the body: {:?}", s.zone_counts());
    for (key, parent, heading) in [("1.1", "1", "Exclusive Distribution License"), ("2.1", "2", "Price")] {
        let x = section(&s, key)
            .unwrap_or_else(|| panic!("section {key}: {:?}", s.sections.iter().take(12).collect::<Vec<_>>()));
        assert!(x.heading.as_deref().unwrap_or_default().starts_with(heading), "{x:?}");
        assert_eq!(s.sections[x.parent.expect("nested") as usize].key.as_deref(), Some(parent));
    }
}

#[test]
fn a_scanned_page_read_by_ocr_has_its_section_and_heading_found() {
    let Some((extractor, bytes, pages)) = pages_of(WITH_TOC) else { return };
    let page =
        pages.iter().find(|p| p.text.contains("10.5 Limitation of Liability.")).expect("the page of 10.5").number;
    // The page as a scanner would give it: an image, read back by OCR.
    let png = extractor.render_page(&bytes, page, 3.0, None, None).unwrap();
    let scanned = extractor.extract_bytes(&png, None, &ExtractOptions::default()).unwrap();
    assert!(matches!(scanned.pages[0].source, pactwise_domain::PageSource::Ocr));
    let s = DocumentStructure::build(&scanned.pages);
    let cap = section(&s, "10.5").unwrap_or_else(|| panic!("10.5 in the OCR'd page: {:?}", s.sections));
    assert!(cap.heading.as_deref().unwrap_or_default().contains("Limitation of Liability"), "{cap:?}");
    assert!(s.lines.iter().all(|l| l.zone != Zone::TableOfContents));
}
