//! The built-in precedent corpus (`corpus/` at the repository root, embedded at compile time) and importing public
//! texts from a folder. Precedents belong to no organization; they are market examples.

use crate::chunk::chunk_text;
use pactwise_store::{NewPassage, NewPrecedent};
use sha2::{Digest, Sha256};
use std::path::Path;

/// (id, title, text) of every built-in precedent; `corpus/manifest.toml` lists the same files.
pub const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "pactwise.limitation-of-liability",
        "Model clause: limitation of liability",
        include_str!("../../../corpus/limitation-of-liability.txt"),
    ),
    (
        "pactwise.indemnification",
        "Model clause: indemnification for third-party claims",
        include_str!("../../../corpus/indemnification.txt"),
    ),
    (
        "pactwise.confidentiality",
        "Model clause: mutual confidentiality",
        include_str!("../../../corpus/confidentiality.txt"),
    ),
    (
        "pactwise.termination",
        "Model clause: term, renewal and termination",
        include_str!("../../../corpus/termination.txt"),
    ),
    ("pactwise.payment", "Model clause: fees, invoicing and late payment", include_str!("../../../corpus/payment.txt")),
    (
        "pactwise.assignment-and-change-of-control",
        "Model clause: assignment and change of control",
        include_str!("../../../corpus/assignment.txt"),
    ),
    (
        "pactwise.data-protection",
        "Model clause: processing of personal data",
        include_str!("../../../corpus/data-protection.txt"),
    ),
    (
        "pactwise.service-levels",
        "Model clause: service levels and service credits",
        include_str!("../../../corpus/service-levels.txt"),
    ),
    (
        "pactwise.governing-law",
        "Model clause: governing law and disputes",
        include_str!("../../../corpus/governing-law.txt"),
    ),
];

fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A precedent ready to store, its text cut into passages.
pub fn precedent(id: &str, title: &str, source: &str, license: &str, origin: &str, text: &str) -> NewPrecedent {
    NewPrecedent {
        id: id.to_owned(),
        title: title.to_owned(),
        source: source.to_owned(),
        license: license.to_owned(),
        origin: origin.to_owned(),
        content_hash: hash(text),
        passages: chunk_text(text)
            .into_iter()
            .map(|(start, end, text)| NewPassage { page: 1, start, end, text })
            .collect(),
    }
}

/// The built-in precedents.
pub fn builtin() -> Vec<NewPrecedent> {
    BUILTIN
        .iter()
        .map(|(id, title, text)| precedent(id, title, "Pactwise model clauses", "written by Pactwise", "builtin", text))
        .collect()
}

/// Precedents from the `.md` and `.txt` files of a folder (recursively); the title is the first heading or line.
/// A README in a folder gives the license line if it names one. Files that are not UTF-8 are skipped with a reason.
pub fn from_dir(dir: &Path) -> Result<(Vec<NewPrecedent>, Vec<String>), std::io::Error> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&folder)?.filter_map(Result::ok).map(|e| e.path()).collect();
        entries.sort();
        let license = entries
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("README.md")))
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| t.lines().find(|l| l.to_lowercase().contains("licen")).map(|l| l.trim().to_owned()))
            .unwrap_or_else(|| "see the source folder".to_owned());
        for path in entries {
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let ext = path.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default();
            if !(ext == "md" || ext == "txt") || name.eq_ignore_ascii_case("README.md") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                skipped.push(format!("{}: not UTF-8 text", path.display()));
                continue;
            };
            if text.trim().is_empty() {
                skipped.push(format!("{}: empty", path.display()));
                continue;
            }
            let title = text
                .lines()
                .map(|l| l.trim().trim_start_matches('#').trim())
                .find(|l| !l.is_empty())
                .unwrap_or(&name)
                .chars()
                .take(120)
                .collect::<String>();
            let relative = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
            out.push(precedent(&format!("imported.{relative}"), &title, &relative, &license, "imported", &text));
        }
    }
    Ok((out, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_lists_exactly_the_embedded_texts() {
        let manifest = include_str!("../../../corpus/manifest.toml");
        for (id, title, text) in BUILTIN {
            assert!(manifest.contains(&format!("id = \"{id}\"")), "{id} missing from the manifest");
            assert!(manifest.contains(&format!("title = \"{title}\"")));
            assert!(text.len() > 400, "{id} is a real text");
        }
        assert_eq!(manifest.matches("[[precedent]]").count(), BUILTIN.len());
    }
}
