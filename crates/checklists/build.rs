//! Embeds the checklist library (`checklists/catalog.toml` and every `checklists/types/*.toml`) into the crate, so
//! the program finds it from any working directory. Generates `$OUT_DIR/embedded.rs` with one `include_str!` per file;
//! adding, removing or editing a data file re-runs this script.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let library = manifest_dir.join("..").join("..").join("checklists");
    let catalog = library.join("catalog.toml");
    let types_dir = library.join("types");
    let categories = library.join("categories.toml");
    let topics = library.join("topics.toml");
    println!("cargo::rerun-if-changed={}", topics.display());
    println!("cargo::rerun-if-changed={}", catalog.display());
    println!("cargo::rerun-if-changed={}", categories.display());
    println!("cargo::rerun-if-changed={}", types_dir.display());

    let mut files: Vec<PathBuf> = match fs::read_dir(&types_dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();

    let mut code = String::new();
    code.push_str("/// The text of `checklists/catalog.toml`.\n");
    writeln!(code, "pub(crate) const CATALOG_TOML: &str = include_str!({});", literal(&catalog)).unwrap();
    code.push_str("/// The text of `checklists/categories.toml` (per-category clause signals).\n");
    writeln!(code, "pub(crate) const CATEGORIES_TOML: &str = include_str!({});", literal(&categories)).unwrap();
    code.push_str("/// The text of `checklists/topics.toml` (where each category's clauses live).\n");
    writeln!(code, "pub(crate) const TOPICS_TOML: &str = include_str!({});", literal(&topics)).unwrap();
    code.push_str("/// (file name, text) of every `checklists/types/*.toml`, sorted by file name.\n");
    code.push_str("pub(crate) const TYPE_FILES: &[(&str, &str)] = &[\n");
    for path in &files {
        let name = path.file_name().and_then(|n| n.to_str()).expect("checklist file names are UTF-8");
        println!("cargo::rerun-if-changed={}", path.display());
        writeln!(code, "    ({name:?}, include_str!({})),", literal(path)).unwrap();
    }
    code.push_str("];\n");

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded.rs");
    fs::write(out, code).expect("write embedded.rs");
}

/// A Rust string literal holding the absolute path.
fn literal(path: &Path) -> String {
    let absolute = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    format!("{:?}", absolute.to_str().expect("checklist paths are UTF-8"))
}
