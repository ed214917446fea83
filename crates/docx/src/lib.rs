//! Writes plain, styled DOCX documents: WordprocessingML parts in a zip, one paragraph per [`Block`] (a title,
//! headings, body text, indented quotes, bullets), A4 with 2 cm margins. The review memo and the contract review
//! report (`api`) and the RFP export (`prep`) are written with it; reading DOCX is `extract`'s.

use std::io::Write;

/// One paragraph of a document, by its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block<'a> {
    Title(&'a str),
    Heading(&'a str),
    Text(&'a str),
    /// Indented and italic: text quoted from a contract.
    Quote(&'a str),
    /// Indented, after a bullet sign.
    Bullet(&'a str),
}

#[derive(Debug, thiserror::Error)]
#[error("writing the DOCX failed: {0}")]
pub struct DocxError(String);

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// The document as the bytes of a `.docx` file.
pub fn write(blocks: &[Block<'_>]) -> Result<Vec<u8>, DocxError> {
    let mut body = String::new();
    for block in blocks {
        let (style, text) = match *block {
            Block::Title(t) => ("Title", t.to_string()),
            Block::Heading(t) => ("Heading1", t.to_string()),
            Block::Text(t) => ("", t.to_string()),
            Block::Quote(t) => ("Quote", t.to_string()),
            Block::Bullet(t) => ("ListBullet", format!("• {t}")),
        };
        let style =
            if style.is_empty() { String::new() } else { format!("<w:pPr><w:pStyle w:val=\"{style}\"/></w:pPr>") };
        body.push_str(&format!("<w:p>{style}<w:r><w:t xml:space=\"preserve\">{}</w:t></w:r></w:p>", xml_escape(&text)));
    }
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><w:document xmlns:w=\"{W}\"><w:body>{body}\
         <w:sectPr><w:pgSz w:w=\"11906\" w:h=\"16838\"/><w:pgMar w:top=\"1134\" w:right=\"1134\" w:bottom=\"1134\" \
         w:left=\"1134\" w:header=\"708\" w:footer=\"708\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>"
    );
    let styles = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><w:styles xmlns:w=\"{W}\">\
         <w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/>\
         <w:rPr><w:sz w:val=\"20\"/></w:rPr></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"Title\"><w:name w:val=\"Title\"/><w:basedOn w:val=\"Normal\"/>\
         <w:rPr><w:b/><w:sz w:val=\"32\"/></w:rPr></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"Heading1\"><w:name w:val=\"heading 1\"/><w:basedOn w:val=\"Normal\"/>\
         <w:pPr><w:spacing w:before=\"240\"/></w:pPr><w:rPr><w:b/><w:sz w:val=\"26\"/></w:rPr></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"Quote\"><w:name w:val=\"Quote\"/><w:basedOn w:val=\"Normal\"/>\
         <w:pPr><w:ind w:left=\"360\"/></w:pPr><w:rPr><w:i/></w:rPr></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"ListBullet\"><w:name w:val=\"List Bullet\"/>\
         <w:basedOn w:val=\"Normal\"/><w:pPr><w:ind w:left=\"360\"/></w:pPr></w:style></w:styles>"
    );
    let content_types = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
        <Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">\
        <Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>\
        <Default Extension=\"xml\" ContentType=\"application/xml\"/>\
        <Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/>\
        <Override PartName=\"/word/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml\"/>\
        </Types>";
    let rels = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
        <Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
        <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/>\
        </Relationships>";
    let document_rels = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\
        <Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
        <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>\
        </Relationships>";
    let failed = |e: &dyn std::fmt::Display| DocxError(e.to_string());
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, text) in [
            ("[Content_Types].xml", content_types),
            ("_rels/.rels", rels),
            ("word/_rels/document.xml.rels", document_rels),
            ("word/styles.xml", styles.as_str()),
            ("word/document.xml", document.as_str()),
        ] {
            zip.start_file(name, options).map_err(|e| failed(&e))?;
            zip.write_all(text.as_bytes()).map_err(|e| failed(&e))?;
        }
        zip.finish().map_err(|e| failed(&e))?;
    }
    Ok(out.into_inner())
}

/// Text as XML character data; control characters other than tab (not allowed in XML 1.0) are dropped.
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().filter(|c| !c.is_control() || *c == '\t') {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn part(bytes: &[u8], name: &str) -> String {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut text = String::new();
        zip.by_name(name).unwrap().read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn every_block_becomes_a_paragraph_with_a_style_the_document_defines() {
        let bytes = write(&[
            Block::Title("Review of \"NDA\" <draft>"),
            Block::Heading("Red flags & critical items"),
            Block::Text("Plain\u{0007} text\twith a tab"),
            Block::Quote("The Receiving Party shall hold…"),
            Block::Bullet("P-01 Service desk"),
        ])
        .unwrap();
        let document = part(&bytes, "word/document.xml");
        let styles = part(&bytes, "word/styles.xml");
        assert_eq!(document.matches("<w:p>").count(), 5);
        assert!(document.contains("Review of &quot;NDA&quot; &lt;draft&gt;"));
        assert!(document.contains("Red flags &amp; critical items"));
        assert!(document.contains("Plain text\twith a tab"), "control characters other than tab are dropped");
        assert!(document.contains("• P-01 Service desk"));
        for style in ["Title", "Heading1", "Quote", "ListBullet"] {
            assert!(document.contains(&format!("w:pStyle w:val=\"{style}\"")), "{style} is used");
            assert!(styles.contains(&format!("w:styleId=\"{style}\"")), "{style} is defined");
        }
        for name in ["[Content_Types].xml", "_rels/.rels", "word/_rels/document.xml.rels"] {
            assert!(!part(&bytes, name).is_empty());
        }
    }

    #[test]
    fn an_empty_document_is_still_a_valid_package() {
        let bytes = write(&[]).unwrap();
        assert!(part(&bytes, "word/document.xml").contains("<w:body><w:sectPr>"));
    }
}
