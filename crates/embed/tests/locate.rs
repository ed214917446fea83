//! Which model folder the app and the CLI read: the environment variable, else the one a package installed beside
//! the program, else where `make setup` puts it.

use pactwise_embed::{BUNDLED_MODEL_DIR, SETUP_MODEL_DIR, locate_model_dir};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// An installed layout like the `.deb`'s: `<prefix>/bin/pactwise` and, when `with_model`, the model's folder under
/// `<prefix>/lib/pactwise/models/`. Returns the program's path.
fn installed(prefix: &Path, with_model: bool) -> PathBuf {
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    let exe = prefix.join("bin/pactwise");
    std::fs::write(&exe, b"").unwrap();
    if with_model {
        std::fs::create_dir_all(prefix.join(BUNDLED_MODEL_DIR)).unwrap();
    }
    exe
}

#[test]
fn a_packaged_program_finds_the_model_installed_beside_it() {
    let prefix = tempfile::tempdir().unwrap();
    let exe = installed(prefix.path(), true);
    assert_eq!(locate_model_dir(None, Some(&exe)), prefix.path().join("lib/pactwise/models/all-minilm-l6-v2"));
}

#[test]
fn the_environment_variable_wins_over_the_packaged_model() {
    let prefix = tempfile::tempdir().unwrap();
    let exe = installed(prefix.path(), true);
    assert_eq!(locate_model_dir(Some(OsStr::new("/opt/model")), Some(&exe)), PathBuf::from("/opt/model"));
}

#[test]
fn without_a_packaged_model_it_is_where_make_setup_installs_it() {
    let prefix = tempfile::tempdir().unwrap();
    let exe = installed(prefix.path(), false);
    assert_eq!(locate_model_dir(None, Some(&exe)), PathBuf::from(SETUP_MODEL_DIR));
    assert_eq!(locate_model_dir(Some(OsStr::new("")), Some(&exe)), PathBuf::from(SETUP_MODEL_DIR));
    assert_eq!(locate_model_dir(None, None), PathBuf::from(SETUP_MODEL_DIR));
}
