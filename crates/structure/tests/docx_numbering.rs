//! A Word document whose clause numbers are automatic (`w:numPr`, not text): once extraction writes the numbers, the
//! structure finds the numbered sections, their headings and their nesting, as it does in a PDF.

use pactwise_extract::{ExtractOptions, Extractor, fixtures};
use pactwise_structure::DocumentStructure;

const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

fn numbered_docx() -> Vec<u8> {
    let numbering = format!(
        r#"<?xml version="1.0"?><w:numbering {W}><w:abstractNum w:abstractNumId="3">
        <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
        <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
        </w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="3"/></w:num></w:numbering>"#
    );
    let p = |level: Option<u8>, text: &str| match level {
        Some(l) => format!(
            r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="{l}"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#
        ),
        None => format!(r#"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"#),
    };
    let body = [
        p(None, "SERVICES AGREEMENT"),
        p(None, "This Agreement is made between the Customer and the Supplier."),
        p(Some(0), "SERVICES"),
        p(Some(1), "The Supplier shall provide the services described in the order form."),
        p(Some(1), "The Supplier shall perform the services with reasonable skill and care."),
        p(Some(0), "LIMITATION OF LIABILITY"),
        p(Some(1), "Neither party shall be liable for any indirect or consequential loss."),
        p(Some(1), "Each party's total liability shall not exceed the fees paid in the prior twelve months."),
        p(Some(0), "GOVERNING LAW"),
        p(Some(1), "This Agreement is governed by the laws of England and Wales."),
    ]
    .concat();
    let xml = format!(r#"<?xml version="1.0"?><w:document {W}><w:body>{body}</w:body></w:document>"#);
    fixtures::docx_package(&xml, &[("word/numbering.xml", &numbering)]).expect("the fixture zips")
}

#[test]
fn automatic_clause_numbers_become_nested_sections_with_their_headings() {
    let extractor = Extractor::new(Default::default());
    let doc = extractor.extract_bytes(&numbered_docx(), None, &ExtractOptions::default()).expect("the DOCX reads");
    let structure = DocumentStructure::build(&doc.pages);
    let cap = structure
        .sections
        .iter()
        .find(|s| s.key.as_deref() == Some("2.2"))
        .unwrap_or_else(|| panic!("no section 2.2 among {:?}", structure.sections));
    let path: Vec<Option<&str>> = structure.section_path(cap).iter().map(|s| s.key.as_deref()).collect();
    assert_eq!(path, [Some("2"), Some("2.2")], "2.2 sits under 2 (the path runs from the outermost section)");
    let parent = structure.sections.iter().find(|s| s.key.as_deref() == Some("2")).unwrap();
    assert_eq!(parent.heading.as_deref().map(str::to_lowercase).as_deref(), Some("limitation of liability"));
}
