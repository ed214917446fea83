//! Shared set-up of the intake tests: one extractor per test binary and the generated fixtures.
#![allow(dead_code)]

use pactwise_extract::{ExtractConfig, Extractor, fixtures};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn extractor() -> &'static Extractor {
    static EXTRACTOR: OnceLock<Extractor> = OnceLock::new();
    EXTRACTOR.get_or_init(|| Extractor::new(config()))
}

pub fn config() -> ExtractConfig {
    let mut config = ExtractConfig::from_env();
    config.ocr_workers = 2;
    config
}

/// The standard fixtures, generated once per test binary under cargo's target temp dir.
pub fn fixture(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let binary = std::env::current_exe().ok().and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()));
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("extract-fixtures-{}", binary.unwrap_or_default()));
        fixtures::write_all(&dir, &extractor().config().pdfium_path).expect("fixtures are generated");
        dir
    });
    dir.join(name)
}

pub fn read(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).expect("fixture exists")
}
