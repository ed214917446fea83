//! Writing a file a person asked for — the review memo, the contract review report, the RFP export: every export
//! goes through [`write_export`]. The file is whole or absent: the bytes go to a hidden temporary file in the same
//! folder, which then takes the file's name in one rename. A file already there is replaced only when the caller
//! says the person chose to replace it ([`Existing::Replace`]); otherwise it is left exactly as it was and the
//! export is refused with `file_exists`. On any failure the temporary file is removed: nothing is left beside it.

use crate::ApiError;
use pactwise_domain::ErrorCode;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// What to do when the export's file is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Existing {
    /// Leave it as it is and refuse the export (`file_exists`).
    Refuse,
    /// Replace it: the person chose to (the save dialog asked them, or `--overwrite`).
    Replace,
}

fn exists_error(path: &Path) -> ApiError {
    ApiError::new(
        ErrorCode::FileExists,
        format!(
            "{} already exists and was left as it is; choose another file name, or replace it (--overwrite)",
            path.display()
        ),
    )
}

fn write_error(path: &Path, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::FileUnreadable,
        format!("cannot write {} ({e}); nothing was written there. Choose another place", path.display()),
    )
}

/// Refuses early (before the export is rendered) when the file is there and may not be replaced, or when the path
/// is a folder. [`write_export`] checks again when it writes.
pub(crate) fn check_target(path: &Path, existing: Existing) -> Result<(), ApiError> {
    if path.is_dir() {
        return Err(write_error(path, "it is a folder"));
    }
    if existing == Existing::Refuse && path.symlink_metadata().is_ok() {
        return Err(exists_error(path));
    }
    Ok(())
}

/// Writes `bytes` to `path`, whole or not at all; see the module documentation.
pub(crate) fn write_export(path: &Path, bytes: &[u8], existing: Existing) -> Result<(), ApiError> {
    check_target(path, existing)?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".pactwise-export-")
        .suffix(".tmp")
        .tempfile_in(folder)
        .map_err(|e| write_error(path, e))?;
    // Dropping `tmp` on any early return removes the temporary file.
    tmp.write_all(bytes).and_then(|_| tmp.as_file().sync_all()).map_err(|e| write_error(path, e))?;
    let persisted = match existing {
        Existing::Refuse => tmp.persist_noclobber(path),
        Existing::Replace => tmp.persist(path),
    };
    match persisted {
        Ok(_) => Ok(()),
        // The error hands the temporary file back; dropping it removes it.
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Err(exists_error(path)),
        Err(e) => Err(write_error(path, e.error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn an_export_writes_the_whole_file_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memo.docx");
        write_export(&path, b"the memo", Existing::Refuse).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"the memo");
        assert_eq!(names(dir.path()), ["memo.docx"]);
    }

    #[test]
    fn an_existing_file_is_never_replaced_unless_the_person_chose_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memo.docx");
        std::fs::write(&path, b"kept").unwrap();
        let refused = write_export(&path, b"new", Existing::Refuse).unwrap_err();
        assert_eq!(refused.code, ErrorCode::FileExists);
        assert!(refused.message.contains("already exists"), "{}", refused.message);
        assert_eq!(std::fs::read(&path).unwrap(), b"kept", "the file is left as it was");
        assert_eq!(names(dir.path()), ["memo.docx"], "no temporary file is left beside it");
        write_export(&path, b"new", Existing::Replace).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["memo.docx"]);
    }

    #[test]
    fn a_failed_export_leaves_no_partial_file_and_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        // The rename fails after the bytes were written: the target is a folder holding a file.
        let folder = dir.path().join("report.pdf");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("inside"), b"x").unwrap();
        let error = write_export(&folder, b"bytes", Existing::Replace).unwrap_err();
        assert_eq!(error.code, ErrorCode::FileUnreadable);
        assert!(error.message.contains("Choose another place"), "{}", error.message);
        assert_eq!(names(dir.path()), ["report.pdf"], "no temporary or partial file is left");
        // A folder that does not exist: nothing is created anywhere.
        let missing = dir.path().join("no-such-folder").join("memo.docx");
        assert_eq!(write_export(&missing, b"bytes", Existing::Refuse).unwrap_err().code, ErrorCode::FileUnreadable);
        assert_eq!(names(dir.path()), ["report.pdf"]);
        assert!(!dir.path().join("memo.partial").exists());
    }

    #[test]
    fn a_file_that_appears_while_the_export_is_rendered_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rfp.json");
        check_target(&path, Existing::Refuse).unwrap();
        std::fs::write(&path, b"someone else's").unwrap();
        assert_eq!(write_export(&path, b"ours", Existing::Refuse).unwrap_err().code, ErrorCode::FileExists);
        assert_eq!(std::fs::read(&path).unwrap(), b"someone else's");
        assert_eq!(names(dir.path()), ["rfp.json"]);
    }
}
