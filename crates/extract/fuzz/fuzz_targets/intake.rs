//! Any bytes, any type: intake must return a document or an error, never panic or hang. OCR is off (pages without
//! text come back empty) so each input stays fast; limits are lowered so bombs are refused quickly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor};
use std::sync::OnceLock;

fn extractor() -> &'static Extractor {
    static EXTRACTOR: OnceLock<Extractor> = OnceLock::new();
    EXTRACTOR.get_or_init(|| {
        let mut config = ExtractConfig::from_env();
        config.max_pages = 64;
        config.max_image_pixels = 16_000_000;
        config.max_docx_uncompressed_bytes = 16 * 1024 * 1024;
        Extractor::new(config)
    })
}

fuzz_target!(|data: &[u8]| {
    let options = ExtractOptions { ocr: false, ..ExtractOptions::default() };
    let _ = extractor().extract_bytes(data, None, &options);
});
