//! What tests need from the machine, said once: the OS keychain (`tests/with-keyring.sh`), the shared data folder
//! beside the repository (`../shared/data`, or `PACTWISE_SHARED_DATA`), libpdfium and commands such as `tesseract`.
//! A test asks here before it uses one. When it is missing, the test fails with the reason under CI (`CI` set to
//! anything but empty, `0` or `false`, as CI services set it), so a regression cannot pass by skipping; elsewhere it
//! prints that it skipped and why (past the harness's output capture), and the caller returns.
//!
//! ```no_run
//! let Some(cuad) = pactwise_testkit::shared_data("cuad") else { return };
//! if !pactwise_testkit::keychain() { return; }
//! ```
//! Dev-dependency only; no dependencies of its own.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether the tests run under CI.
pub fn in_ci() -> bool {
    ci_value_means_ci(std::env::var("CI").ok().as_deref())
}

fn ci_value_means_ci(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// A prerequisite of the running test is missing: under CI the test fails with `reason`; elsewhere it prints that it
/// skipped and why (the caller then returns).
#[track_caller]
pub fn missing(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if in_ci() {
        panic!("{test} needs what is missing here: {reason} (CI must not pass by skipping)");
    }
    // Straight to the process's stderr: the test harness captures `eprintln!` of passing tests, and a skip must show.
    let _ = writeln!(std::io::stderr(), "skipped {test}: {reason}");
}

/// `true` when `ok`; otherwise [`missing`] with `reason` and `false`.
#[track_caller]
pub fn require(ok: bool, reason: impl FnOnce() -> String) -> bool {
    if !ok {
        missing(&reason());
    }
    ok
}

/// Whether the OS keychain may be used: the tests run inside `tests/with-keyring.sh` (a private D-Bus session with
/// an unlocked gnome-keyring), which sets `PACTWISE_KEYRING_TESTS=1`.
#[track_caller]
pub fn keychain() -> bool {
    require(std::env::var("PACTWISE_KEYRING_TESTS").as_deref() == Ok("1"), || {
        "the OS keychain: run the tests under tests/with-keyring.sh (it sets PACTWISE_KEYRING_TESTS=1 inside a D-Bus \
         session with an unlocked gnome-keyring)"
            .to_owned()
    })
}

/// The shared data folder: `PACTWISE_SHARED_DATA` when set, else the first `shared/data` in a folder above this
/// repository (`../shared/data` beside the clone, as CI lays it out).
pub fn shared_data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PACTWISE_SHARED_DATA").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // crates/testkit → the repository → the folders above it.
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2)?;
    repository.ancestors().skip(1).map(|a| a.join("shared/data")).find(|d| d.is_dir())
}

/// `relative` inside the shared data folder (a file or a folder), when it is there; otherwise [`missing`].
#[track_caller]
pub fn shared_data(relative: &str) -> Option<PathBuf> {
    let path = shared_data_dir().map(|d| d.join(relative));
    match path {
        Some(path) if path.exists() => Some(path),
        Some(path) => {
            missing(&format!(
                "{} is absent (the shared data folder beside the repository, or PACTWISE_SHARED_DATA)",
                path.display()
            ));
            None
        }
        None => {
            missing(&format!(
                "no shared/data folder above the repository holds {relative}; put the shared data beside the clone \
                 or set PACTWISE_SHARED_DATA"
            ));
            None
        }
    }
}

/// The library file at `path` (libpdfium: pass `ExtractConfig::from_env().pdfium_path`, which honours
/// `PACTWISE_PDFIUM_PATH`) when it exists; otherwise [`missing`].
#[track_caller]
pub fn library(name: &str, path: &Path) -> bool {
    require(path.is_file(), || {
        format!("{name} is not installed at {} (run make setup, or set its path in the environment)", path.display())
    })
}

/// The local embedding model's folder (`PACTWISE_EMBED_MODEL_DIR`, else where `make setup` installs it) when its
/// weights and runtime are there; otherwise [`missing`].
#[track_caller]
pub fn embedding_model() -> Option<PathBuf> {
    let dir = std::env::var_os("PACTWISE_EMBED_MODEL_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/lib/pactwise/models/all-minilm-l6-v2"));
    require(dir.join("model.onnx").is_file() && dir.join("libonnxruntime.so.1.31.1").is_file(), || {
        format!("the embedding model is not installed in {} (run make setup)", dir.display())
    })
    .then_some(dir)
}

/// Whether `command` runs (`command --version` succeeds); otherwise [`missing`].
#[track_caller]
pub fn command(command: &str) -> bool {
    let runs = std::process::Command::new(command)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    require(runs, || format!("the `{command}` command is not installed (run make setup)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_is_recognised_from_the_values_ci_services_set() {
        let ci = |v| ci_value_means_ci(Some(v));
        assert!(ci("true") && ci("1") && ci("TRUE"));
        assert!(!ci("") && !ci("0") && !ci("false") && !ci_value_means_ci(None));
    }

    #[test]
    fn a_missing_prerequisite_fails_under_ci_and_is_reported_elsewhere() {
        let outcome = std::panic::catch_unwind(|| require(false, || "the thing".to_owned()));
        if in_ci() {
            let message = outcome.expect_err("under CI a missing prerequisite fails the test");
            let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(text.contains("the thing"), "the failure says what is missing: {text}");
        } else {
            assert_eq!(outcome.ok(), Some(false), "outside CI the caller is told to return");
        }
        assert!(require(true, || unreachable!("no reason is built when the prerequisite is there")));
    }

    #[test]
    fn a_library_that_is_not_there_is_missing() {
        let outcome = std::panic::catch_unwind(|| library("libnothing", Path::new("/nonexistent/libnothing.so")));
        assert_ne!(outcome.ok(), Some(true));
    }
}
