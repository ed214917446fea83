//! DOCX: the body's paragraphs and tables (cell text in reading order: cells of a row joined by tabs, rows by
//! lines), with headers and footers kept apart. Explicit page breaks (`w:br w:type="page"`, `w:pageBreakBefore`,
//! section breaks that start a new page) split pages; without any, pages are synthetic. Automatic numbering
//! (`w:numPr`, directly or through a paragraph style) is written before its paragraph as Word draws it ("10.5",
//! "(a)"; `docx_numbering`), so the structure sees clause numbers in DOCX as in PDF. Archives are read within
//! an uncompressed-size limit, so a zip bomb is refused before it expands.

use crate::docx_numbering::{Numbering, NumberingRef};
use crate::paginate::synthetic_pages;
use crate::txt::text_document;
use crate::{IntakeError, Limits};
use pactwise_domain::{ExtractedDocument, MediaType};
use quick_xml::events::{BytesStart, Event};
use std::io::{Cursor, Read};
use zip::ZipArchive;

pub(crate) fn extract(bytes: &[u8], limits: &Limits<'_>) -> Result<ExtractedDocument, IntakeError> {
    let limit = limits.config.max_docx_uncompressed_bytes;
    let corrupt = |detail: String| IntakeError::Corrupt { format: "DOCX", detail };
    let mut archive = ZipArchive::new(Cursor::new(bytes)).map_err(|e| corrupt(e.to_string()))?;
    let mut declared: u64 = 0;
    let mut names = Vec::new();
    for i in 0..archive.len() {
        let file = archive.by_index_raw(i).map_err(|e| corrupt(e.to_string()))?;
        declared = declared.saturating_add(file.size());
        names.push(file.name().to_owned());
    }
    if declared > limit {
        return Err(IntakeError::DocxTooLarge { limit });
    }
    if !names.iter().any(|n| n == "word/document.xml") {
        return Err(IntakeError::Unsupported { what: "a zip archive that is not a Word document".to_owned() });
    }
    let mut budget = limit;
    let mut read_part = |archive: &mut ZipArchive<Cursor<&[u8]>>, name: &str| -> Result<String, IntakeError> {
        let file = archive.by_name(name).map_err(|e| corrupt(format!("{name}: {e}")))?;
        let mut out = Vec::new();
        file.take(budget + 1).read_to_end(&mut out).map_err(|e| corrupt(format!("{name}: {e}")))?;
        if out.len() as u64 > budget {
            return Err(IntakeError::DocxTooLarge { limit });
        }
        budget -= out.len() as u64;
        String::from_utf8(out).map_err(|_| corrupt(format!("{name} is not UTF-8")))
    };

    let mut optional_part =
        |archive: &mut ZipArchive<Cursor<&[u8]>>, name: &str| -> Result<Option<String>, IntakeError> {
            if names.iter().any(|n| n == name) { read_part(archive, name).map(Some) } else { Ok(None) }
        };
    let numbering_xml = optional_part(&mut archive, "word/numbering.xml")?;
    let styles_xml = optional_part(&mut archive, "word/styles.xml")?;
    let mut numbering = Numbering::read(numbering_xml.as_deref(), styles_xml.as_deref());
    let body = parse(&read_part(&mut archive, "word/document.xml")?, &mut numbering).map_err(corrupt)?;
    let mut headers = Vec::new();
    let mut footers = Vec::new();
    let mut furniture: Vec<&String> = names
        .iter()
        .filter(|n| (n.starts_with("word/header") || n.starts_with("word/footer")) && n.ends_with(".xml"))
        .collect();
    furniture.sort_by_key(|n| (n.len(), n.to_string()));
    for name in furniture {
        let part = parse(&read_part(&mut archive, name)?, &mut Numbering::default()).map_err(corrupt)?;
        let text = part.pages.join("\n").trim().to_owned();
        if name.starts_with("word/header") {
            headers.push(text);
        } else {
            footers.push(text);
        }
    }

    let size = body.page_size.unwrap_or((612.0, 792.0));
    let (texts, synthetic) = if body.pages.len() > 1 {
        (body.pages, false)
    } else {
        let all = body.pages.into_iter().next().unwrap_or_default();
        (synthetic_pages(&all, limits.config.synthetic_page_chars, true), true)
    };
    limits.check_pages(texts.len())?;
    let mut doc = text_document(MediaType::Docx, texts, synthetic, size);
    doc.headers = headers;
    doc.footers = footers;
    Ok(doc)
}

struct Parsed {
    pages: Vec<String>,
    /// Width and height in points from the last `w:pgSz`.
    page_size: Option<(f32, f32)>,
}

#[derive(Default)]
struct Table {
    row: Vec<String>,
    cell: String,
}

#[derive(Default)]
struct Body {
    pages: Vec<String>,
    page: String,
    paragraph: String,
    paragraph_depth: usize,
    tables: Vec<Table>,
    in_text: bool,
    in_section: bool,
    section_breaks_page: bool,
    break_after_paragraph: bool,
    /// The outermost paragraph's numbering (`w:numPr`) and style (`w:pStyle`), for its automatic label.
    numbering: NumberingRef,
    style: Option<String>,
}

impl Body {
    fn end_paragraph(&mut self) {
        let text = std::mem::take(&mut self.paragraph);
        if let Some(table) = self.tables.last_mut() {
            if !text.trim().is_empty() {
                if !table.cell.is_empty() {
                    table.cell.push(' ');
                }
                table.cell.push_str(text.trim());
            }
        } else {
            self.page.push_str(&text);
            self.page.push('\n');
        }
    }

    fn page_break(&mut self) {
        if self.tables.is_empty() {
            let page = std::mem::take(&mut self.page);
            self.pages.push(page.trim_end_matches('\n').to_owned());
        }
    }

    fn end_row(&mut self) {
        let Some(table) = self.tables.last_mut() else { return };
        let line = std::mem::take(&mut table.row).join("\t");
        let depth = self.tables.len();
        if depth >= 2 {
            let parent = &mut self.tables[depth - 2];
            if !parent.cell.is_empty() {
                parent.cell.push(' ');
            }
            parent.cell.push_str(&line);
        } else {
            self.page.push_str(&line);
            self.page.push('\n');
        }
    }
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

fn is_off(value: Option<String>) -> bool {
    matches!(value.as_deref(), Some("0") | Some("false") | Some("off"))
}

fn parse(xml: &str, numbering: &mut Numbering) -> Result<Parsed, String> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut b = Body::default();
    let mut page_size = None;
    loop {
        let event = reader.read_event().map_err(|e| format!("XML error at {}: {e}", reader.buffer_position()))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                match e.local_name().as_ref() {
                    b"p" if !empty => {
                        if b.paragraph_depth > 0 {
                            b.paragraph.push('\n');
                        } else {
                            b.numbering = NumberingRef::default();
                            b.style = None;
                        }
                        b.paragraph_depth += 1;
                    }
                    b"pStyle" if b.paragraph_depth == 1 => b.style = attr(e, b"val"),
                    b"numId" if b.paragraph_depth == 1 => b.numbering.num_id = attr(e, b"val"),
                    b"ilvl" if b.paragraph_depth == 1 => {
                        b.numbering.level = attr(e, b"val").and_then(|v| v.trim().parse().ok());
                    }
                    b"t" if !empty => b.in_text = true,
                    b"tab" if b.paragraph_depth > 0 && !b.in_section => b.paragraph.push('\t'),
                    b"cr" => b.paragraph.push('\n'),
                    b"noBreakHyphen" => b.paragraph.push('-'),
                    b"br" => match attr(e, b"type").as_deref() {
                        Some("page") => {
                            if b.tables.is_empty() {
                                b.end_paragraph_part();
                                b.page_break();
                            }
                        }
                        Some("column") => b.paragraph.push('\n'),
                        _ => b.paragraph.push('\n'),
                    },
                    b"pageBreakBefore"
                        if !is_off(attr(e, b"val"))
                            && b.tables.is_empty()
                            && !b.page.trim().is_empty()
                            && b.paragraph.is_empty() =>
                    {
                        b.page_break();
                    }
                    b"tbl" if !empty => b.tables.push(Table::default()),
                    b"sectPr" if !empty => {
                        b.in_section = true;
                        b.section_breaks_page = b.paragraph_depth > 0;
                    }
                    b"sectPr" if b.paragraph_depth > 0 => b.break_after_paragraph = true,
                    b"type" if b.in_section => {
                        if matches!(attr(e, b"val").as_deref(), Some("continuous") | Some("nextColumn")) {
                            b.section_breaks_page = false;
                        }
                    }
                    b"pgSz" if b.in_section => {
                        let twips = |n: &[u8]| attr(e, n).and_then(|v| v.parse::<f32>().ok());
                        if let (Some(w), Some(h)) = (twips(b"w"), twips(b"h")) {
                            page_size = Some((w / 20.0, h / 20.0));
                        }
                    }
                    _ => {}
                }
            }
            Event::End(ref e) => match e.local_name().as_ref() {
                b"p" => {
                    b.paragraph_depth = b.paragraph_depth.saturating_sub(1);
                    if b.paragraph_depth == 0 {
                        // Word counts a numbered paragraph even when it is empty; the label is written only before text.
                        let label = numbering.next_label(&b.numbering, b.style.as_deref());
                        if let Some(label) = label
                            && !b.paragraph.trim().is_empty()
                        {
                            b.paragraph = format!("{label} {}", b.paragraph.trim_start());
                        }
                        b.end_paragraph();
                        if std::mem::take(&mut b.break_after_paragraph) {
                            b.page_break();
                        }
                    }
                }
                b"t" => b.in_text = false,
                b"tc" => {
                    if let Some(t) = b.tables.last_mut() {
                        let cell = std::mem::take(&mut t.cell);
                        t.row.push(cell);
                    }
                }
                b"tr" => b.end_row(),
                b"tbl" => {
                    b.tables.pop();
                }
                b"sectPr" => {
                    b.in_section = false;
                    if b.paragraph_depth > 0 && b.section_breaks_page {
                        b.break_after_paragraph = true;
                    }
                }
                _ => {}
            },
            Event::Text(ref t) if b.in_text => {
                b.paragraph.push_str(&t.decode().map_err(|e| e.to_string())?);
            }
            Event::GeneralRef(ref r) if b.in_text => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    b.paragraph.push(c);
                } else {
                    let name = r.decode().map_err(|e| e.to_string())?;
                    b.paragraph.push_str(match name.as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        _ => "",
                    });
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if b.paragraph_depth > 0 {
        b.end_paragraph();
    }
    let last = std::mem::take(&mut b.page);
    b.pages.push(last.trim_end_matches('\n').to_owned());
    if b.pages.len() > 1 && b.pages.last().is_some_and(|p| p.trim().is_empty()) {
        b.pages.pop();
    }
    let pages = b.pages.into_iter().map(|p| p.trim_matches('\n').to_owned()).collect();
    Ok(Parsed { pages, page_size })
}

impl Body {
    /// Ends the text before a page break inside a paragraph: it stays on the page before the break.
    fn end_paragraph_part(&mut self) {
        let text = std::mem::take(&mut self.paragraph);
        if !text.is_empty() {
            self.page.push_str(&text);
            self.page.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(body: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
        )
    }

    #[test]
    fn paragraphs_tables_and_page_breaks_are_read_in_order() {
        let xml = doc(concat!(
            r#"<w:p><w:r><w:t>Fees &amp; Terms</w:t></w:r></w:p>"#,
            r#"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Item</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Price</w:t></w:r></w:p></w:tc></w:tr>"#,
            r#"<w:tr><w:tc><w:p><w:r><w:t>Support</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>100</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#,
            r#"<w:p><w:r><w:t xml:space="preserve">Before </w:t></w:r><w:r><w:br w:type="page"/><w:t>after</w:t></w:r></w:p>"#,
            r#"<w:p><w:r><w:delText>deleted</w:delText><w:t>Last</w:t></w:r></w:p>"#,
        ));
        let parsed = parse(&xml, &mut Numbering::default()).unwrap();
        assert_eq!(parsed.pages, vec!["Fees & Terms\nItem\tPrice\nSupport\t100\nBefore ", "after\nLast"]);
    }

    #[test]
    fn a_new_page_section_break_splits_pages_and_a_continuous_one_does_not() {
        let xml = doc(concat!(
            r#"<w:p><w:pPr><w:sectPr><w:type w:val="continuous"/></w:sectPr></w:pPr><w:r><w:t>One</w:t></w:r></w:p>"#,
            r#"<w:p><w:pPr><w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:pPr><w:r><w:t>Two</w:t></w:r></w:p>"#,
            r#"<w:p><w:r><w:t>Three</w:t></w:r></w:p>"#,
        ));
        let parsed = parse(&xml, &mut Numbering::default()).unwrap();
        assert_eq!(parsed.pages, vec!["One\nTwo", "Three"]);
        assert_eq!(parsed.page_size, Some((612.0, 792.0)));
    }

    #[test]
    fn an_automatic_number_is_counted_on_empty_paragraphs_and_written_only_before_text() {
        let numbering = r#"<w:numbering xmlns:w="w"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="10"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum><w:num w:numId="4"><w:abstractNumId w:val="0"/></w:num></w:numbering>"#;
        let numbered = |text: &str| {
            format!(
                r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="4"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#
            )
        };
        let xml = doc(&[
            numbered("Term"),
            numbered(""),
            numbered("Fees"),
            r#"<w:p><w:r><w:t>Plain</w:t></w:r></w:p>"#.into(),
        ]
        .concat());
        let parsed = parse(&xml, &mut Numbering::read(Some(numbering), None)).unwrap();
        assert_eq!(parsed.pages, vec!["10. Term\n\n12. Fees\nPlain"]);
    }
}
