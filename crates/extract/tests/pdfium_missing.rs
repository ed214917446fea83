//! A missing libpdfium gives an error that says how to install it. Its own test binary: pdfium binds once per
//! process, so no other test may have bound it first.

use pactwise_domain::ErrorCode;
use pactwise_extract::{ExtractConfig, ExtractOptions, Extractor, IntakeError};

#[test]
fn a_missing_pdfium_library_says_to_run_make_setup() {
    let config = ExtractConfig { pdfium_path: "/nonexistent/libpdfium.so".into(), ..ExtractConfig::default() };
    let extractor = Extractor::new(config);
    let err = extractor.extract_bytes(b"%PDF-1.4\n%%EOF\n", None, &ExtractOptions::default()).unwrap_err();
    assert!(matches!(err, IntakeError::PdfiumMissing { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::DependencyMissing);
    let message = err.to_string();
    assert!(message.contains("make setup") && message.contains("PACTWISE_PDFIUM_PATH"), "{message}");
    assert!(matches!(extractor.check_pdfium(), Err(IntakeError::PdfiumMissing { .. })));
}

#[test]
fn the_pdfium_path_comes_from_the_environment_with_the_setup_default() {
    // Reading only: the variable is set (or not) by whoever runs the tests.
    let config = ExtractConfig::from_env();
    match std::env::var_os(pactwise_extract::PDFIUM_PATH_ENV).filter(|v| !v.is_empty()) {
        Some(path) => assert_eq!(config.pdfium_path.as_os_str(), path),
        None => assert_eq!(config.pdfium_path.to_str(), Some(pactwise_extract::DEFAULT_PDFIUM_PATH)),
    }
}
