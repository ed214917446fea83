//! Deterministic test inputs made by code: text PDFs, image-only "scanned" PDFs (rendered pages degraded with noise,
//! a slight skew and a lower resolution), a mixed PDF, a DOCX with a table, headers and footers, and a
//! password-protected PDF. Tests write them into a temporary folder; `pactwise-extract fixtures DIR` writes them for
//! people.

use crate::pdf::pdfium;
use image::{GrayImage, Luma};
use md5::{Digest, Md5};
use pdfium_render::prelude::*;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("fixture generation failed: {0}")]
pub struct FixtureError(pub String);

fn fail(e: impl std::fmt::Display) -> FixtureError {
    FixtureError(e.to_string())
}

/// A short agreement of our own writing, used where no real contract text is at hand.
pub const SAMPLE_CONTRACT: &str = "\
SERVICES AGREEMENT

This Services Agreement is made on 3 March 2025 between Harbour Lane Logistics Ltd, a company registered in \
England (the Customer), and Copperfield Data Systems Inc, a Delaware corporation (the Supplier).

1. Services. The Supplier shall provide the hosting, monitoring and support services described in Schedule 1 \
with reasonable skill and care and in accordance with good industry practice.

2. Fees. The Customer shall pay the fees set out in Schedule 2 within thirty days of receiving a valid invoice. \
Late payments bear interest at two percent above the base rate of the Bank of England.

3. Term. This Agreement starts on the effective date and continues for an initial term of twenty four months, \
after which it renews for successive periods of twelve months unless either party gives ninety days notice.

4. Confidentiality. Each party shall keep the other party's confidential information secret and use it only to \
perform this Agreement. This obligation survives termination for five years.

5. Liability. Neither party limits its liability for death or personal injury caused by negligence or for fraud. \
Otherwise the total liability of each party in any contract year is limited to the fees paid in that year.

6. Termination. Either party may terminate this Agreement by written notice if the other party commits a material \
breach which it fails to remedy within thirty days after being notified of it.

7. Governing Law. This Agreement is governed by the laws of England and Wales, and the courts of London have \
exclusive jurisdiction over any dispute arising from it.";

/// Words of `text` wrapped into lines of at most `width` characters, paragraphs kept apart by an empty line.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split("\n\n") {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            lines.push(line);
        }
        lines.push(String::new());
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// Text printable in a PDF standard font: typographic quotes and dashes made plain, other non-ASCII dropped.
pub fn printable(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            '\u{2018}' | '\u{2019}' => Some('\''),
            '\u{201C}' | '\u{201D}' => Some('"'),
            '\u{2013}' | '\u{2014}' => Some('-'),
            '\u{A0}' => Some(' '),
            c if c.is_ascii() && (!c.is_ascii_control() || c == '\n') => Some(c),
            _ => None,
        })
        .collect()
}

/// One page of a fixture PDF.
pub enum FixturePage {
    /// Lines set in Helvetica 11 pt on a US Letter page: a real text layer.
    Text(Vec<String>),
    /// A scanned image covering the whole page, stored as JPEG: no text layer.
    Scan(GrayImage),
}

pub const LINES_PER_PAGE: usize = 46;
const LEADING: f32 = 14.5;

/// Builds a PDF from pages, through pdfium.
pub fn build_pdf(pdfium_path: &Path, pages: &[FixturePage]) -> Result<Vec<u8>, FixtureError> {
    let pdfium = pdfium(pdfium_path).map_err(fail)?;
    let mut document = pdfium.create_new_pdf().map_err(fail)?;
    let font = document.fonts_mut().helvetica();
    for content in pages {
        let size = PdfPagePaperSize::new_custom(PdfPoints::new(612.0), PdfPoints::new(792.0));
        let mut page = document.pages_mut().create_page_at_end(size).map_err(fail)?;
        match content {
            FixturePage::Text(lines) => {
                for (i, line) in lines.iter().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                    let y = 792.0 - 72.0 - LEADING * (i as f32 + 1.0);
                    page.objects_mut()
                        .create_text_object(PdfPoints::new(72.0), PdfPoints::new(y), line, font, PdfPoints::new(11.0))
                        .map_err(fail)?;
                }
            }
            FixturePage::Scan(image) => {
                let mut jpeg = Vec::new();
                image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 80).encode_image(image).map_err(fail)?;
                let mut object =
                    PdfPageImageObject::new_from_jpeg_reader(&document, Cursor::new(jpeg)).map_err(fail)?;
                object.scale(612.0, 792.0).map_err(fail)?;
                page.objects_mut().add_image_object(object).map_err(fail)?;
            }
        }
    }
    document.save_to_bytes().map_err(fail)
}

/// The same PDF with every page's display rotation set to `degrees` clockwise (0, 90, 180 or 270).
pub fn rotate_pages(pdfium_path: &Path, pdf: &[u8], degrees: u16) -> Result<Vec<u8>, FixtureError> {
    let rotation = match degrees {
        90 => PdfPageRenderRotation::Degrees90,
        180 => PdfPageRenderRotation::Degrees180,
        270 => PdfPageRenderRotation::Degrees270,
        _ => PdfPageRenderRotation::None,
    };
    let pdfium = pdfium(pdfium_path).map_err(fail)?;
    let document = pdfium.load_pdf_from_byte_slice(pdf, None).map_err(fail)?;
    for mut page in document.pages().iter() {
        page.set_rotation(rotation);
    }
    document.save_to_bytes().map_err(fail)
}

/// Renders text lines as a page would be printed, then "scans" it: at `dpi`, skewed by a small seeded angle, with
/// paper tone, sensor noise and specks.
pub fn scanned_page(pdfium_path: &Path, lines: &[String], dpi: u32, seed: u64) -> Result<GrayImage, FixtureError> {
    let pdf = build_pdf(pdfium_path, &[FixturePage::Text(lines.to_vec())])?;
    let pdfium = pdfium(pdfium_path).map_err(fail)?;
    let document = pdfium.load_pdf_from_byte_slice(&pdf, None).map_err(fail)?;
    let page = document.pages().get(0).map_err(fail)?;
    let config = PdfRenderConfig::new().scale_page_by_factor(dpi as f32 / 72.0);
    let clean = page.render_with_config(&config).map_err(fail)?.as_image().map_err(fail)?.into_luma8();
    let mut rng = SplitMix(seed);
    let angle = (rng.unit() * 2.0 - 1.0) * 0.9 + 0.3; // between -0.6° and 1.2°, never flat
    Ok(degrade(&clean, angle, &mut rng))
}

/// Skew by `degrees` about the centre (bilinear, white outside), then paper tone, Gaussian-ish noise and specks.
pub fn degrade(clean: &GrayImage, degrees: f64, rng: &mut SplitMix) -> GrayImage {
    let (w, h) = clean.dimensions();
    let (sin, cos) = degrees.to_radians().sin_cos();
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    let sample = |x: f64, y: f64| -> f64 {
        if x < 0.0 || y < 0.0 || x >= (w - 1) as f64 || y >= (h - 1) as f64 {
            return 255.0;
        }
        let (x0, y0) = (x.floor() as u32, y.floor() as u32);
        let (fx, fy) = (x - x0 as f64, y - y0 as f64);
        let p = |xx: u32, yy: u32| clean.get_pixel(xx, yy)[0] as f64;
        let top = p(x0, y0) * (1.0 - fx) + p(x0 + 1, y0) * fx;
        let bottom = p(x0, y0 + 1) * (1.0 - fx) + p(x0 + 1, y0 + 1) * fx;
        top * (1.0 - fy) + bottom * fy
    };
    let mut out = GrayImage::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = (x as f64 - cx, y as f64 - cy);
            let v = sample(cx + dx * cos + dy * sin, cy - dx * sin + dy * cos);
            let toned = 30.0 + v * (232.0 - 30.0) / 255.0;
            let noise = (rng.unit() + rng.unit() + rng.unit() - 1.5) * 2.0 * 14.0;
            let speck = if rng.unit() < 0.0008 { -140.0 } else { 0.0 };
            out.put_pixel(x, y, Luma([(toned + noise + speck).clamp(0.0, 255.0) as u8]));
        }
    }
    out
}

/// A small seeded generator (SplitMix64), so fixtures are the same on every machine.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Lines of `text` cut into pages of [`LINES_PER_PAGE`].
pub fn page_lines(text: &str) -> Vec<Vec<String>> {
    wrap(&printable(text), 88).chunks(LINES_PER_PAGE).map(|c| c.to_vec()).collect()
}

/// A DOCX with a heading, paragraphs, a 3×2 table, an explicit page break, a header and a footer.
pub fn table_docx() -> Result<Vec<u8>, FixtureError> {
    let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;
    let para = |t: &str| format!(r#"<w:p><w:r><w:t xml:space="preserve">{t}</w:t></w:r></w:p>"#);
    let cell = |t: &str| format!(r#"<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>{}</w:tc>"#, para(t));
    let row = |a: &str, b: &str| format!("<w:tr>{}{}</w:tr>", cell(a), cell(b));
    let body = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {w}><w:body>{}{}<w:tbl><w:tblPr><w:tblW w:w="6000" w:type="dxa"/></w:tblPr>{}{}{}</w:tbl>{}<w:p><w:r><w:br w:type="page"/></w:r></w:p>{}<w:sectPr><w:headerReference w:type="default" r:id="rId1"/><w:footerReference w:type="default" r:id="rId2"/><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:body></w:document>"#,
        para("PRICING SCHEDULE"),
        para("The Customer shall pay the following fees &amp; charges."),
        row("Service", "Monthly fee"),
        row("Hosting", "USD 4,000"),
        row("Support", "USD 1,500"),
        para("Fees are exclusive of value added tax."),
        para("Signed for and on behalf of the parties."),
    );
    let header = format!(r#"<?xml version="1.0" encoding="UTF-8"?><w:hdr {w}>{}</w:hdr>"#, para("CONFIDENTIAL DRAFT"));
    let footer = format!(r#"<?xml version="1.0" encoding="UTF-8"?><w:ftr {w}>{}</w:ftr>"#, para("Page footer text"));
    docx_package(&body, &[("word/header1.xml", &header), ("word/footer1.xml", &footer)])
}

/// Zips a main document part (and optional extra parts) into a DOCX package.
pub fn docx_package(document_xml: &str, extra: &[(&str, &str)]) -> Result<Vec<u8>, FixtureError> {
    let content_types = r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/><Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/></Types>"#;
    let rels = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#;
    let doc_rels = r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer1.xml"/></Relationships>"#;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut parts: Vec<(&str, &str)> = vec![
        ("[Content_Types].xml", content_types),
        ("_rels/.rels", rels),
        ("word/_rels/document.xml.rels", doc_rels),
        ("word/document.xml", document_xml),
    ];
    parts.extend_from_slice(extra);
    for (name, content) in parts {
        zip.start_file(name, options).map_err(fail)?;
        zip.write_all(content.as_bytes()).map_err(fail)?;
    }
    Ok(zip.finish().map_err(fail)?.into_inner())
}

const PASSWORD_PAD: [u8; 32] = [
    0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08, 0x2E, 0x2E, 0x00,
    0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A,
];

fn rc4(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut s: Vec<u8> = (0..=255).collect();
    let mut j: u8 = 0;
    for i in 0..256 {
        j = j.wrapping_add(s[i]).wrapping_add(key[i % key.len()]);
        s.swap(i, j as usize);
    }
    let (mut i, mut j) = (0u8, 0u8);
    data.iter()
        .map(|b| {
            i = i.wrapping_add(1);
            j = j.wrapping_add(s[i as usize]);
            s.swap(i as usize, j as usize);
            b ^ s[s[i as usize].wrapping_add(s[j as usize]) as usize]
        })
        .collect()
}

fn padded(password: &str) -> Vec<u8> {
    let mut p: Vec<u8> = password.bytes().take(32).collect();
    p.extend_from_slice(&PASSWORD_PAD[..32 - p.len()]);
    p
}

/// A one-page PDF protected by a user password (standard security handler, revision 2, RC4 40-bit), written by
/// hand because pdfium does not encrypt.
pub fn protected_pdf(lines: &[&str], user_password: &str) -> Vec<u8> {
    let id: [u8; 16] = *b"pactwise-fixture";
    let permissions: i32 = -4;
    let owner_key = &Md5::digest(padded("owner-secret"))[..5];
    let o = rc4(owner_key, &padded(user_password));
    let mut h = Md5::new();
    h.update(padded(user_password));
    h.update(&o);
    h.update(permissions.to_le_bytes());
    h.update(id);
    let key = h.finalize()[..5].to_vec();
    let u = rc4(&key, &PASSWORD_PAD);

    let mut content = String::from("BT /F1 14 Tf 16 TL 72 720 Td\n");
    for line in lines {
        let escaped = line.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)");
        content.push_str(&format!("({escaped}) Tj T*\n"));
    }
    content.push_str("ET\n");
    let mut object_key = key.clone();
    object_key.extend_from_slice(&[4, 0, 0, 0, 0]);
    let stream = rc4(&Md5::digest(&object_key)[..10], content.as_bytes());

    let mut pdf: Vec<u8> = b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::new();
    let mut object = |pdf: &mut Vec<u8>, n: usize, body: &[u8]| {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{n} 0 obj\n").as_bytes());
        pdf.extend_from_slice(body);
        pdf.extend_from_slice(b"\nendobj\n");
    };
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02X}")).collect::<String>();
    object(&mut pdf, 1, b"<< /Type /Catalog /Pages 2 0 R >>");
    object(&mut pdf, 2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
    object(
        &mut pdf,
        3,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
    );
    let mut body = format!("<< /Length {} >>\nstream\n", stream.len()).into_bytes();
    body.extend_from_slice(&stream);
    body.extend_from_slice(b"\nendstream");
    object(&mut pdf, 4, &body);
    object(&mut pdf, 5, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    let encrypt =
        format!("<< /Filter /Standard /V 1 /R 2 /Length 40 /O <{}> /U <{}> /P {permissions} >>", hex(&o), hex(&u));
    object(&mut pdf, 6, encrypt.as_bytes());
    let xref = pdf.len();
    pdf.extend_from_slice(b"xref\n0 7\n0000000000 65535 f \n");
    for offset in &offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size 7 /Root 1 0 R /Encrypt 6 0 R /ID [<{0}> <{0}>] >>\nstartxref\n{xref}\n%%EOF\n",
            hex(&id)
        )
        .as_bytes(),
    );
    pdf
}

/// The password of the protected fixture.
pub const FIXTURE_PASSWORD: &str = "open-sesame";

/// Writes the standard fixtures into `dir`: `text.pdf` (3 pages), `scanned.pdf` (2 image-only pages at 200 dpi),
/// `mixed.pdf` (text, scan, text), `table.docx`, `protected.pdf` (password [`FIXTURE_PASSWORD`]), `notes.txt`
/// (form-feed pages) and `scan.png`. Returns the paths written.
pub fn write_all(dir: &Path, pdfium_path: &Path) -> Result<Vec<PathBuf>, FixtureError> {
    std::fs::create_dir_all(dir).map_err(fail)?;
    let pages = page_lines(&SAMPLE_CONTRACT.repeat(3));
    let texts: Vec<FixturePage> = pages.iter().take(3).map(|l| FixturePage::Text(l.clone())).collect();
    let scan1 = scanned_page(pdfium_path, &pages[0], 200, 1)?;
    let scan2 = scanned_page(pdfium_path, &pages[1], 200, 2)?;
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("text.pdf", build_pdf(pdfium_path, &texts)?),
        ("scanned.pdf", build_pdf(pdfium_path, &[FixturePage::Scan(scan1.clone()), FixturePage::Scan(scan2)])?),
    ];
    let mixed = [
        FixturePage::Text(pages[0].clone()),
        FixturePage::Scan(scanned_page(pdfium_path, &pages[1], 200, 3)?),
        FixturePage::Text(pages[2].clone()),
    ];
    files.push(("mixed.pdf", build_pdf(pdfium_path, &mixed)?));
    files.push(("table.docx", table_docx()?));
    files.push(("protected.pdf", protected_pdf(&["Confidential settlement terms."], FIXTURE_PASSWORD)));
    files.push(("notes.txt", b"First page of notes.\n\x0cSecond page of notes.\n".to_vec()));
    let mut png = Vec::new();
    scan1.write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png).map_err(fail)?;
    files.push(("scan.png", png));
    let mut written = Vec::new();
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(fail)?;
        written.push(path);
    }
    Ok(written)
}
