//! Intake of every supported format from generated fixtures, and the clear errors for bad input.

mod common;

use common::{extractor, fixture, read};
use pactwise_domain::{ConfidenceKind, ErrorCode, MediaType, PageSource, Progress, ProgressPhase};
use pactwise_extract::eval::word_edits;
use pactwise_extract::fixtures::{self, FixturePage, SAMPLE_CONTRACT};
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor, IntakeError};
use std::sync::Mutex;

fn options() -> ExtractOptions<'static> {
    ExtractOptions::default()
}

fn word_accuracy(hypothesis: &str, truth: &str) -> f64 {
    let (edits, n) = word_edits(hypothesis, truth);
    1.0 - edits as f64 / n as f64
}

#[test]
fn text_pdf_pages_have_text_character_boxes_and_size_without_confidence() {
    let doc = extractor().extract_file(&fixture("text.pdf"), &options()).unwrap();
    assert_eq!(doc.media_type, MediaType::Pdf);
    assert_eq!(doc.page_count(), 3);
    assert_eq!(doc.content_hash, pactwise_extract::content_hash(&read("text.pdf")));
    let page = &doc.pages[0];
    assert_eq!((page.number, page.source, page.confidence.kind()), (1, PageSource::Text, ConfidenceKind::None));
    assert_eq!((page.width, page.height, page.rotation), (612.0, 792.0, 0));
    assert!(page.text.starts_with("SERVICES AGREEMENT\nThis Services Agreement is made on 3 March 2025"));
    assert!(!page.text.contains('\r'));
    // Every visible character has a box inside the page; the first one sits where it was set (x 72, baseline
    // 792 - 72 - 14.5 from the top).
    let visible = page.text.chars().filter(|c| !c.is_whitespace()).count();
    assert_eq!(page.char_boxes.len(), visible);
    let first = page.char_boxes[0];
    assert_eq!(first.index, 0);
    assert!((first.x - 72.0).abs() < 2.0, "x {}", first.x);
    let baseline = 72.0 + 14.5;
    assert!(first.y < baseline && first.y + first.height > baseline - 2.0, "y {} h {}", first.y, first.height);
    let chars: Vec<char> = page.text.chars().collect();
    for b in &page.char_boxes {
        assert!(!chars[b.index as usize].is_whitespace());
        assert!(b.x >= 0.0 && b.y >= 0.0 && b.x + b.width <= 612.0 && b.y + b.height <= 792.0);
    }
}

#[test]
fn scanned_pdf_is_ocrd_with_measured_confidence_and_boxes_in_page_points() {
    let doc = extractor().extract_file(&fixture("scanned.pdf"), &options()).unwrap();
    assert_eq!(doc.page_count(), 2);
    let truth = fixtures::page_lines(&SAMPLE_CONTRACT.repeat(3));
    for (page, lines) in doc.pages.iter().zip(&truth) {
        assert_eq!(page.source, PageSource::Ocr);
        assert_eq!(page.confidence.kind(), ConfidenceKind::Measured);
        assert!(page.confidence.value().unwrap() > 0.8, "{:?}", page.confidence);
        let accuracy = word_accuracy(&page.text, &lines.join("\n"));
        assert!(accuracy > 0.95, "page {} word accuracy {accuracy}", page.number);
        assert!(!page.char_boxes.is_empty());
        for b in &page.char_boxes {
            assert!(b.x >= 0.0 && b.y >= 0.0 && b.x + b.width <= 613.0 && b.y + b.height <= 793.0, "{b:?}");
        }
        // The first line is set 72 pt from the left and about 80 pt from the top.
        let first = page.char_boxes[0];
        assert!((first.x - 72.0).abs() < 12.0 && (first.y - 80.0).abs() < 15.0, "{first:?}");
    }
}

#[test]
fn mixed_pdf_keeps_the_text_layer_and_ocrs_only_the_page_without_one() {
    let doc = extractor().extract_file(&fixture("mixed.pdf"), &options()).unwrap();
    let sources: Vec<PageSource> = doc.pages.iter().map(|p| p.source).collect();
    assert_eq!(sources, vec![PageSource::Text, PageSource::Ocr, PageSource::Text]);
    assert_eq!(doc.pages[1].confidence.kind(), ConfidenceKind::Measured);
    assert_eq!(doc.pages[0].confidence.kind(), ConfidenceKind::None);
    assert_eq!(doc.pages.iter().map(|p| p.number).collect::<Vec<_>>(), vec![1, 2, 3]);
}

#[test]
fn progress_reports_every_page_of_reading_and_of_ocr() {
    let seen = Mutex::new(Vec::new());
    let record = |p: Progress| seen.lock().unwrap().push(p);
    let options = ExtractOptions { progress: &record, ..ExtractOptions::default() };
    extractor().extract_file(&fixture("mixed.pdf"), &options).unwrap();
    let seen = seen.into_inner().unwrap();
    let reading: Vec<u32> = seen.iter().filter(|p| p.phase == ProgressPhase::Reading).map(|p| p.done).collect();
    assert_eq!(reading, vec![1, 2, 3]);
    assert!(seen.iter().all(|p| p.phase != ProgressPhase::Reading || p.total == 3));
    let ocr: Vec<&Progress> = seen.iter().filter(|p| p.phase == ProgressPhase::Ocr).collect();
    assert_eq!(ocr.len(), 1);
    assert_eq!((ocr[0].done, ocr[0].total), (1, 1));
}

#[test]
fn docx_reads_table_cells_in_order_keeps_headers_and_footers_apart_and_splits_at_page_breaks() {
    let doc = extractor().extract_file(&fixture("table.docx"), &options()).unwrap();
    assert_eq!(doc.media_type, MediaType::Docx);
    assert_eq!(doc.page_count(), 2);
    assert!(!doc.synthetic);
    let first = &doc.pages[0].text;
    assert!(first.contains("fees & charges"));
    assert!(first.contains("Service\tMonthly fee\nHosting\tUSD 4,000\nSupport\tUSD 1,500"), "{first}");
    assert_eq!(doc.pages[1].text, "Signed for and on behalf of the parties.");
    assert_eq!(doc.headers, vec!["CONFIDENTIAL DRAFT".to_owned()]);
    assert_eq!(doc.footers, vec!["Page footer text".to_owned()]);
    assert!(doc.pages.iter().all(|p| !p.text.contains("CONFIDENTIAL DRAFT")));
    assert_eq!((doc.pages[0].width, doc.pages[0].height), (612.0, 792.0));
}

#[test]
fn docx_without_page_breaks_gets_synthetic_pages_of_about_three_thousand_characters() {
    let paragraphs: String = (0..60)
        .map(|i| format!(r#"<w:p><w:r><w:t>Clause {i}. {}</w:t></w:r></w:p>"#, "The parties agree. ".repeat(10)))
        .collect();
    let xml = format!(
        r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{paragraphs}</w:body></w:document>"#
    );
    let bytes = fixtures::docx_package(&xml, &[]).unwrap();
    let doc = extractor().extract_bytes(&bytes, None, &options()).unwrap();
    assert!(doc.synthetic);
    assert!(doc.page_count() >= 3, "{} pages", doc.page_count());
    assert!(doc.pages.iter().all(|p| p.synthetic));
    for page in &doc.pages[..doc.page_count() - 1] {
        assert!((3000..3400).contains(&page.char_count()), "{}", page.char_count());
        assert!(page.text.trim_end().ends_with("The parties agree."), "cut inside a paragraph");
    }
}

#[test]
fn docx_automatic_numbering_is_written_before_each_numbered_paragraph() {
    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    let numbering = format!(
        r#"<?xml version="1.0"?><w:numbering {W}><w:abstractNum w:abstractNumId="0">
        <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>
        <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
        <w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="(%3)"/></w:lvl>
        </w:abstractNum><w:num w:numId="5"><w:abstractNumId w:val="0"/></w:num></w:numbering>"#
    );
    let styles = format!(
        r#"<?xml version="1.0"?><w:styles {W}><w:style w:type="paragraph" w:styleId="Heading1"><w:pPr><w:numPr><w:numId w:val="5"/><w:ilvl w:val="0"/></w:numPr></w:pPr></w:style></w:styles>"#
    );
    let heading =
        |text: &str| format!(r#"<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#);
    let item = |level: u8, text: &str| {
        format!(
            r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="5"/></w:numPr></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"#
        )
    };
    let body = [
        heading("Definitions"),
        item(1, "Terms have the meanings given here."),
        heading("Liability"),
        item(1, "Exclusions. Neither party is liable for indirect loss."),
        item(1, "Cap. Liability is limited to the fees paid:"),
        item(2, "in the twelve months before the claim; or"),
        item(2, "ten thousand dollars, if greater."),
        r#"<w:p><w:r><w:t>Signed by the parties.</w:t></w:r></w:p>"#.to_owned(),
    ]
    .concat();
    let xml = format!(r#"<?xml version="1.0"?><w:document {W}><w:body>{body}</w:body></w:document>"#);
    let bytes =
        fixtures::docx_package(&xml, &[("word/numbering.xml", &numbering), ("word/styles.xml", &styles)]).unwrap();
    let doc = extractor().extract_bytes(&bytes, None, &options()).unwrap();
    let text = doc.pages.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "1. Definitions",
            "1.1 Terms have the meanings given here.",
            "2. Liability",
            "2.1 Exclusions. Neither party is liable for indirect loss.",
            "2.2 Cap. Liability is limited to the fees paid:",
            "(a) in the twelve months before the claim; or",
            "(b) ten thousand dollars, if greater.",
            "Signed by the parties.",
        ]
    );
}

#[test]
fn txt_form_feeds_split_pages_and_text_without_them_is_synthetic() {
    let doc = extractor().extract_file(&fixture("notes.txt"), &options()).unwrap();
    assert_eq!(
        doc.pages.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(),
        ["First page of notes.", "Second page of notes."]
    );
    assert!(!doc.synthetic);
    let long = SAMPLE_CONTRACT.replace('\n', "\r\n").repeat(4);
    let doc = extractor().extract_bytes(long.as_bytes(), None, &options()).unwrap();
    assert_eq!(doc.media_type, MediaType::Txt);
    assert!(doc.synthetic && doc.page_count() >= 2);
    assert!(doc.pages.iter().all(|p| !p.text.contains('\r')));
}

#[test]
fn images_are_scanned_pages_including_every_page_of_a_multi_page_tiff() {
    let png = read("scan.png");
    let gray = image::load_from_memory(&png).unwrap().into_luma8();
    // A strip of the scan keeps OCR quick: the first eight lines.
    let strip = image::imageops::crop_imm(&gray, 0, 0, gray.width(), 560).to_image();
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 85).encode_image(&strip).unwrap();
    let mut tiff = std::io::Cursor::new(Vec::new());
    {
        let mut encoder = tiff::encoder::TiffEncoder::new(&mut tiff).unwrap();
        for _ in 0..2 {
            encoder
                .write_image::<tiff::encoder::colortype::Gray8>(strip.width(), strip.height(), strip.as_raw())
                .unwrap();
        }
    }
    for (bytes, media_type, pages) in [(jpeg, MediaType::Jpeg, 1), (tiff.into_inner(), MediaType::Tiff, 2)] {
        let doc = extractor().extract_bytes(&bytes, None, &options()).unwrap();
        assert_eq!((doc.media_type, doc.page_count()), (media_type, pages));
        for page in &doc.pages {
            assert_eq!(page.source, PageSource::Ocr);
            assert_eq!(page.confidence.kind(), ConfidenceKind::Measured);
            assert!(page.text.contains("SERVICES AGREEMENT"), "{}", page.text);
            assert!((page.width - strip.width() as f32 * 72.0 / 300.0).abs() < 0.01);
        }
    }
}

#[test]
fn a_rotated_page_reports_its_rotation_and_boxes_in_display_coordinates() {
    let pdf =
        fixtures::build_pdf(&common::config().pdfium_path, &[FixturePage::Text(vec!["Rotated words".into()])]).unwrap();
    let rotated = fixtures::rotate_pages(&common::config().pdfium_path, &pdf, 90).unwrap();
    let doc = extractor().extract_bytes(&rotated, Some(MediaType::Pdf), &options()).unwrap();
    let page = &doc.pages[0];
    assert_eq!((page.rotation, page.width, page.height), (90, 792.0, 612.0));
    assert_eq!(page.text, "Rotated words");
    // Text that ran left to right now runs top to bottom, near the right-hand edge (the old top).
    let ys: Vec<f32> = page.char_boxes.iter().map(|b| b.y).collect();
    assert!(ys.windows(2).all(|w| w[1] > w[0]), "{ys:?}");
    for b in &page.char_boxes {
        assert!(b.x > 792.0 - 100.0 && b.x + b.width <= 792.0 && b.y >= 72.0 && b.y + b.height <= 612.0, "{b:?}");
    }
}

#[test]
fn protected_pdf_asks_for_its_password_and_opens_with_it() {
    let err = extractor().extract_file(&fixture("protected.pdf"), &options()).unwrap_err();
    assert!(matches!(err, IntakeError::PasswordRequired));
    assert_eq!(err.code(), ErrorCode::FileEncrypted);
    assert!(err.to_string().contains("password-protected"));
    let wrong = ExtractOptions { password: Some("guess"), ..options() };
    assert!(matches!(extractor().extract_file(&fixture("protected.pdf"), &wrong), Err(IntakeError::WrongPassword)));
    let right = ExtractOptions { password: Some(fixtures::FIXTURE_PASSWORD), ..options() };
    let doc = extractor().extract_file(&fixture("protected.pdf"), &right).unwrap();
    assert_eq!(doc.pages[0].text, "Confidential settlement terms.");
}

#[test]
fn bad_inputs_get_clear_errors_with_stable_codes() {
    let text_pdf = read("text.pdf");
    let ex = extractor();
    let truncated = ex.extract_bytes(&text_pdf[..text_pdf.len() / 3], None, &options()).unwrap_err();
    assert_eq!(truncated.code(), ErrorCode::FileCorrupt, "{truncated}");
    let garbage = ex.extract_bytes(b"%PDF-1.7\nthis is not really a pdf", None, &options()).unwrap_err();
    assert_eq!(garbage.code(), ErrorCode::FileCorrupt);

    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("contract.pdf");
    std::fs::write(&fake, read("table.docx")).unwrap();
    let err = ex.extract_file(&fake, &options()).unwrap_err();
    assert!(matches!(err, IntakeError::NotAPdf { .. }), "{err}");
    assert!(err.to_string().contains("not a PDF"));

    let empty_pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
    let err = ex.extract_bytes(empty_pdf, None, &options()).unwrap_err();
    assert!(matches!(err, IntakeError::NoPages | IntakeError::Corrupt { .. }), "{err}");
    assert_eq!(ex.extract_bytes(b"", None, &options()).unwrap_err().code(), ErrorCode::FileEmpty);

    let limited = ExtractOptions { max_pages: Some(2), ..options() };
    let err = ex.extract_bytes(&text_pdf, None, &limited).unwrap_err();
    assert!(matches!(err, IntakeError::TooManyPages { pages: 3, limit: 2 }), "{err}");

    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
    assert_eq!(ex.extract_bytes(gif, None, &options()).unwrap_err().code(), ErrorCode::UnsupportedFileType);
    let zip_not_docx = fixtures::docx_package("x", &[]).map(|_| ()).ok();
    assert!(zip_not_docx.is_some());
}

#[test]
fn a_zero_page_pdf_is_refused_as_having_no_pages() {
    // pdfium writes a valid empty document.
    let pdf = fixtures::build_pdf(&common::config().pdfium_path, &[]).unwrap();
    let err = extractor().extract_bytes(&pdf, None, &options()).unwrap_err();
    assert!(matches!(err, IntakeError::NoPages), "{err}");
    assert_eq!(err.code(), ErrorCode::FileEmpty);
}

#[test]
fn images_over_the_pixel_limit_are_refused_before_decoding() {
    let ex = Extractor::new(ExtractConfig { max_image_pixels: 1_000_000, ..common::config() });
    let err = ex.extract_file(&fixture("scan.png"), &options()).unwrap_err();
    assert!(matches!(err, IntakeError::TooManyPixels { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::ResourceLimit);
    // A PNG whose header claims 100,000 × 100,000 pixels, with no image data behind it.
    let err = ex.extract_bytes(&png_header_only(100_000, 100_000), None, &options()).unwrap_err();
    assert!(matches!(err, IntakeError::TooManyPixels { .. }), "{err}");
}

fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(&13u32.to_be_bytes());
    png.extend_from_slice(&ihdr);
    png.extend_from_slice(&crc32(&ihdr).to_be_bytes());
    // A first data chunk, so a reader gets past the header; the pixels it would need are never there.
    let idat = b"IDAT\x78\x9c\x03\x00\x00\x00\x00\x01";
    png.extend_from_slice(&((idat.len() - 4) as u32).to_be_bytes());
    png.extend_from_slice(idat);
    png.extend_from_slice(&crc32(idat).to_be_bytes());
    png
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn docx_that_would_expand_past_the_limit_is_refused_as_a_zip_bomb() {
    let big_body = format!(
        r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:body></w:document>"#,
        "a".repeat(200_000)
    );
    let bytes = fixtures::docx_package(&big_body, &[]).unwrap();
    assert!(bytes.len() < 10_000, "compresses well: {}", bytes.len());
    let config = ExtractConfig { max_docx_uncompressed_bytes: 100_000, ..common::config() };
    let err = Extractor::new(config).extract_bytes(&bytes, None, &options()).unwrap_err();
    assert!(matches!(err, IntakeError::DocxTooLarge { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::ResourceLimit);
}

#[test]
fn a_zip_that_is_not_a_word_document_is_unsupported() {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file("hello.txt", zip::write::SimpleFileOptions::default()).unwrap();
    std::io::Write::write_all(&mut zip, b"hi").unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let err = extractor().extract_bytes(&bytes, None, &options()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnsupportedFileType, "{err}");
}

#[test]
fn pages_render_to_png_at_the_requested_scale_and_are_cached() {
    let pdf = read("text.pdf");
    let cache = tempfile::tempdir().unwrap();
    let png = extractor().render_page(&pdf, 1, 1.5, None, Some(cache.path())).unwrap();
    let image = image::load_from_memory(&png).unwrap();
    assert_eq!((image.width(), image.height()), (918, 1188));
    let hash = pactwise_extract::content_hash(&pdf);
    let cached = cache.path().join(&hash).join("p1-s1500.png");
    assert_eq!(std::fs::read(&cached).unwrap(), png);
    // A second request is served from the cache: prove it by planting a marker there.
    std::fs::write(&cached, b"cached").unwrap();
    assert_eq!(extractor().render_page(&pdf, 1, 1.5, None, Some(cache.path())).unwrap(), b"cached");
    let err = extractor().render_page(&pdf, 9, 1.0, None, None).unwrap_err();
    assert!(matches!(err, IntakeError::NoSuchPage { page: 9, count: 3 }));
    let scan = extractor().render_page(&read("scan.png"), 1, 0.5, None, None).unwrap();
    let scan = image::load_from_memory(&scan).unwrap();
    assert_eq!((scan.width(), scan.height()), (204, 264));
}

#[test]
fn an_extracted_document_round_trips_through_json_for_storage() {
    let doc = extractor().extract_file(&fixture("text.pdf"), &options()).unwrap();
    let json = serde_json::to_string(&doc).unwrap();
    let back: pactwise_domain::ExtractedDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back, doc);
    let report = serde_json::to_value(pactwise_extract::ExtractReport::new("text.pdf", &doc)).unwrap();
    assert_eq!(report["page_count"], 3);
    assert_eq!(report["pages"][0]["source"], "text");
    assert_eq!(report["pages"][0]["confidence"], serde_json::Value::Null);
    assert_eq!(report["pages"][0]["confidence_kind"], "none");
    assert_eq!(report["pages"][0]["char_count"], doc.pages[0].char_count());
}
