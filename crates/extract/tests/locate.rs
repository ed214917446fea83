//! Which libpdfium the app and the CLI load: the environment variable, else the one a package installed beside the
//! program, else where `make setup` puts it.

use pactwise_extract::{BUNDLED_PDFIUM_PATH, DEFAULT_PDFIUM_PATH, locate_pdfium};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// An installed layout like the `.deb`'s: `<prefix>/bin/pactwise-desk` and, when `with_library`, the library under
/// `<prefix>/lib/pactwise/`. Returns the program's path.
fn installed(prefix: &Path, with_library: bool) -> PathBuf {
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    let exe = prefix.join("bin/pactwise-desk");
    std::fs::write(&exe, b"").unwrap();
    if with_library {
        let library = prefix.join(BUNDLED_PDFIUM_PATH);
        std::fs::create_dir_all(library.parent().unwrap()).unwrap();
        std::fs::write(&library, b"not really a library").unwrap();
    }
    exe
}

#[test]
fn a_packaged_program_finds_the_library_installed_beside_it() {
    let prefix = tempfile::tempdir().unwrap();
    let exe = installed(prefix.path(), true);
    assert_eq!(locate_pdfium(None, Some(&exe)), prefix.path().join("lib/pactwise/libpdfium.so"));
}

#[test]
fn the_environment_variable_wins_over_the_packaged_library() {
    let prefix = tempfile::tempdir().unwrap();
    let exe = installed(prefix.path(), true);
    let chosen = locate_pdfium(Some(OsStr::new("/opt/elsewhere/libpdfium.so")), Some(&exe));
    assert_eq!(chosen, PathBuf::from("/opt/elsewhere/libpdfium.so"));
}

#[test]
fn without_a_packaged_library_it_is_where_make_setup_installs_it() {
    let prefix = tempfile::tempdir().unwrap();
    let exe = installed(prefix.path(), false);
    assert_eq!(locate_pdfium(None, Some(&exe)), PathBuf::from(DEFAULT_PDFIUM_PATH));
    // An empty variable counts as unset, and a program whose path is unknown falls back the same way.
    assert_eq!(locate_pdfium(Some(OsStr::new("")), Some(&exe)), PathBuf::from(DEFAULT_PDFIUM_PATH));
    assert_eq!(locate_pdfium(None, None), PathBuf::from(DEFAULT_PDFIUM_PATH));
}
