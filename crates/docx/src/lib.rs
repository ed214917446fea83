//! Writes plain, styled documents from one list of [`Block`]s (a title, headings, body text, labelled fields,
//! indented quotes, bullets, tables with a header row repeated on every page, page breaks), A4 with 2 cm margins, in two formats: DOCX (WordprocessingML parts in a
//! zip, one paragraph per block, built-in styles; [`write`]) and PDF (DejaVu Sans embedded, lines broken by the
//! measured width of the text; [`pdf::write`]). The review memo and the contract review report (`api`) and the RFP
//! export (`prep`) are written with it; reading DOCX is `extract`'s.
//!
//! A block is one paragraph: whatever whitespace its text holds (the line breaks of a quote taken from a page
//! included) becomes one space ([`one_line`]), so words are never joined where a line broke.

use std::io::Write;

pub mod pdf;

/// One paragraph of a document, by its role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block<'a> {
    Title(&'a str),
    Heading(&'a str),
    /// A smaller heading inside a section (a checklist item's question).
    Subheading(&'a str),
    Text(&'a str),
    /// A label in bold, then its value: "Governing law: Delaware".
    Field(&'a str, &'a str),
    /// A field indented under the bullet before it.
    Detail(&'a str, &'a str),
    /// Indented: text quoted from a contract.
    Quote(&'a str),
    /// Indented, after a bullet sign.
    Bullet(&'a str),
    /// A table of plain text cells with a header row.
    Table(&'a Table),
    /// What follows starts on a new page.
    PageBreak,
}

/// A table: a header row (bold, repeated at the top of each page it runs onto) and body rows of plain text cells.
/// `widths` are the columns' relative widths, one per header cell; a row with fewer cells is padded with empty ones
/// and extra cells are dropped. An empty cell stays empty (a form's blank to fill in).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub widths: Vec<u16>,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The columns' widths in `total` units, proportional to `widths` (equal when they are missing or all zero).
    pub fn column_widths(&self, total: f32) -> Vec<f32> {
        let n = self.header.len();
        let given: Vec<f32> = (0..n).map(|i| f32::from(self.widths.get(i).copied().unwrap_or(0))).collect();
        let sum: f32 = given.iter().sum();
        if sum <= 0.0 || given.contains(&0.0) {
            return vec![total / n.max(1) as f32; n];
        }
        given.iter().map(|w| total * w / sum).collect()
    }

    /// A body row as exactly one cell per column.
    pub fn cells<'t>(&self, row: &'t [String]) -> Vec<&'t str> {
        (0..self.header.len()).map(|i| row.get(i).map_or("", String::as_str)).collect()
    }
}

/// The text of one paragraph: every run of whitespace (line breaks, tabs, non-breaking spaces) becomes one space,
/// other control characters are dropped, and the ends are trimmed. A quote's line breaks therefore become spaces,
/// never nothing.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
        } else if !c.is_control() {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    }
    out
}

#[derive(Debug, thiserror::Error)]
#[error("writing the DOCX failed: {0}")]
pub struct DocxError(String);

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// The document as the bytes of a `.docx` file.
pub fn write(blocks: &[Block<'_>]) -> Result<Vec<u8>, DocxError> {
    let mut body = String::new();
    // A run of text already on one line.
    let raw = |text: &str, bold: bool| {
        let props = if bold { "<w:rPr><w:b/></w:rPr>" } else { "" };
        format!("<w:r>{props}<w:t xml:space=\"preserve\">{}</w:t></w:r>", xml_escape(text))
    };
    let run = |text: &str, bold: bool| raw(&one_line(text), bold);
    for block in blocks {
        let (style, runs) = match *block {
            Block::Title(t) => ("Title", run(t, false)),
            Block::Heading(t) => ("Heading1", run(t, false)),
            Block::Subheading(t) => ("Heading2", run(t, false)),
            Block::Text(t) => ("", run(t, false)),
            Block::Field(label, value) => {
                ("", format!("{}{}", raw(&format!("{}: ", one_line(label)), true), run(value, false)))
            }
            Block::Detail(label, value) => {
                ("Detail", format!("{}{}", raw(&format!("{}: ", one_line(label)), true), run(value, false)))
            }
            Block::Quote(t) => ("Quote", run(t, false)),
            Block::Bullet(t) => ("ListBullet", run(&format!("• {}", one_line(t)), false)),
            Block::PageBreak => ("", "<w:r><w:br w:type=\"page\"/></w:r>".to_owned()),
            Block::Table(table) => {
                body.push_str(&table_xml(table, &run));
                continue;
            }
        };
        let style =
            if style.is_empty() { String::new() } else { format!("<w:pPr><w:pStyle w:val=\"{style}\"/></w:pPr>") };
        body.push_str(&format!("<w:p>{style}{runs}</w:p>"));
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
         <w:pPr><w:keepNext/><w:spacing w:before=\"240\"/></w:pPr><w:rPr><w:b/><w:sz w:val=\"26\"/></w:rPr></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"Heading2\"><w:name w:val=\"heading 2\"/><w:basedOn w:val=\"Normal\"/>\
         <w:pPr><w:keepNext/><w:spacing w:before=\"160\"/></w:pPr><w:rPr><w:b/><w:sz w:val=\"21\"/></w:rPr></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"Quote\"><w:name w:val=\"Quote\"/><w:basedOn w:val=\"Normal\"/>\
         <w:pPr><w:ind w:left=\"360\"/></w:pPr><w:rPr><w:i/></w:rPr></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"Detail\"><w:name w:val=\"Detail\"/><w:basedOn w:val=\"Normal\"/>\
         <w:pPr><w:ind w:left=\"360\"/></w:pPr></w:style>\
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

/// The width lines may take on A4 with 2 cm margins, in twentieths of a point.
const TEXT_WIDTH_TWIPS: f32 = 11906.0 - 2.0 * 1134.0;

/// A table as WordprocessingML: fixed layout over the text width, thin grey borders, the header row bold and
/// repeated on every page, rows kept whole; an empty paragraph after it so the next block does not touch it.
fn table_xml(table: &Table, run: &dyn Fn(&str, bool) -> String) -> String {
    let widths: Vec<u32> = table.column_widths(TEXT_WIDTH_TWIPS).iter().map(|w| w.floor() as u32).collect();
    let border = |side: &str| format!("<w:{side} w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"808080\"/>");
    let mut xml = format!(
        "<w:tbl><w:tblPr><w:tblW w:w=\"{}\" w:type=\"dxa\"/><w:tblBorders>{}</w:tblBorders>\
         <w:tblLayout w:type=\"fixed\"/><w:tblCellMar><w:left w:w=\"80\" w:type=\"dxa\"/>\
         <w:right w:w=\"80\" w:type=\"dxa\"/></w:tblCellMar></w:tblPr><w:tblGrid>",
        widths.iter().sum::<u32>(),
        ["top", "left", "bottom", "right", "insideH", "insideV"].map(border).concat()
    );
    for w in &widths {
        xml.push_str(&format!("<w:gridCol w:w=\"{w}\"/>"));
    }
    xml.push_str("</w:tblGrid>");
    let row = |cells: &[&str], header: bool| {
        let props =
            if header { "<w:trPr><w:cantSplit/><w:tblHeader/></w:trPr>" } else { "<w:trPr><w:cantSplit/></w:trPr>" };
        let mut tr = format!("<w:tr>{props}");
        for (cell, w) in cells.iter().zip(&widths) {
            let text = if cell.trim().is_empty() { String::new() } else { run(cell, header) };
            tr.push_str(&format!("<w:tc><w:tcPr><w:tcW w:w=\"{w}\" w:type=\"dxa\"/></w:tcPr><w:p>{text}</w:p></w:tc>"));
        }
        tr.push_str("</w:tr>");
        tr
    };
    let header: Vec<&str> = table.header.iter().map(String::as_str).collect();
    xml.push_str(&row(&header, true));
    for r in &table.rows {
        xml.push_str(&row(&table.cells(r), false));
    }
    xml.push_str("</w:tbl><w:p/>");
    xml
}

/// Text as XML character data (already on one line: [`one_line`]).
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().filter(|c| !c.is_control()) {
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
            Block::Subheading("Is liability capped?"),
            Block::Text("Plain\u{0007} text\twith a tab"),
            Block::Field("Governing law", "Delaware"),
            Block::Quote("The Receiving Party shall hold…"),
            Block::Bullet("P-01 Service desk"),
            Block::Detail("Fallback position", "Twelve months' fees"),
            Block::PageBreak,
        ])
        .unwrap();
        let document = part(&bytes, "word/document.xml");
        let styles = part(&bytes, "word/styles.xml");
        assert_eq!(document.matches("<w:p>").count(), 9);
        assert!(document.contains("Review of &quot;NDA&quot; &lt;draft&gt;"));
        assert!(document.contains("Red flags &amp; critical items"));
        assert!(document.contains("Plain text with a tab"), "control characters are dropped, a tab is a space");
        assert!(document.contains("<w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">Governing law: </w:t>"));
        assert!(document.contains("• P-01 Service desk"));
        assert!(document.contains("<w:br w:type=\"page\"/>"));
        for style in ["Title", "Heading1", "Heading2", "Quote", "ListBullet", "Detail"] {
            assert!(document.contains(&format!("w:pStyle w:val=\"{style}\"")), "{style} is used");
            assert!(styles.contains(&format!("w:styleId=\"{style}\"")), "{style} is defined");
        }
        for name in ["[Content_Types].xml", "_rels/.rels", "word/_rels/document.xml.rels"] {
            assert!(!part(&bytes, name).is_empty());
        }
    }

    #[test]
    fn a_quotes_line_breaks_become_spaces_never_nothing() {
        let quote = "the Supplier shall\nindemnify the Customer;\r\nand hold it\u{00a0}\n  harmless";
        assert_eq!(one_line(quote), "the Supplier shall indemnify the Customer; and hold it harmless");
        let document =
            part(&write(&[Block::Quote(quote), Block::Field("Note", "first\nsecond")]).unwrap(), "word/document.xml");
        assert!(document.contains("the Supplier shall indemnify the Customer; and hold it harmless"), "{document}");
        assert!(document.contains("first second"));
        assert!(!document.contains("shallindemnify") && !document.contains("Customer;and"));
    }

    #[test]
    fn a_table_has_its_header_repeated_its_columns_sized_and_its_blank_cells_empty() {
        let table = Table {
            widths: vec![1, 3],
            header: vec!["Item".into(), "Your answer".into()],
            rows: vec![vec!["R-01 <EU> hosting".into()], vec!["R-02".into(), "yes".into(), "dropped".into()]],
        };
        let document =
            part(&write(&[Block::Heading("Response form"), Block::Table(&table)]).unwrap(), "word/document.xml");
        assert_eq!(document.matches("<w:tr>").count(), 3);
        assert_eq!(document.matches("<w:tblHeader/>").count(), 1);
        assert_eq!(document.matches("<w:tc>").count(), 6, "every row has one cell per column");
        assert!(document.contains("<w:gridCol w:w=\"2409\"/><w:gridCol w:w=\"7228\"/>"), "{document}");
        assert!(document.contains("R-01 &lt;EU&gt; hosting"));
        assert!(document.contains("<w:p></w:p></w:tc>"), "the blank answer stays empty");
        assert!(!document.contains("dropped"));
        assert!(document.contains("<w:b/></w:rPr><w:t xml:space=\"preserve\">Your answer</w:t>"));
        assert!(document.contains("</w:tbl><w:p/>"));
    }

    #[test]
    fn an_empty_document_is_still_a_valid_package() {
        let bytes = write(&[]).unwrap();
        assert!(part(&bytes, "word/document.xml").contains("<w:body><w:sectPr>"));
    }
}
