//! Finds the memo's font at build time and embeds it (`include_bytes!` in `src/pdf.rs`): DejaVu Sans, regular and
//! bold, from the Debian package `fonts-dejavu-core` (installed by `make setup`) in `PACTWISE_FONT_DIR` (default
//! `/usr/share/fonts/truetype/dejavu`). Embedding at build time means an exported PDF never depends on a font
//! being present where the app runs.

use std::env;
use std::path::PathBuf;

const DEFAULT_DIR: &str = "/usr/share/fonts/truetype/dejavu";
const FILES: [(&str, &str); 2] =
    [("PACTWISE_FONT_REGULAR", "DejaVuSans.ttf"), ("PACTWISE_FONT_BOLD", "DejaVuSans-Bold.ttf")];

fn main() {
    println!("cargo::rerun-if-env-changed=PACTWISE_FONT_DIR");
    let dir = env::var_os("PACTWISE_FONT_DIR").map_or_else(|| PathBuf::from(DEFAULT_DIR), PathBuf::from);
    for (key, name) in FILES {
        let path = dir.join(name);
        if !path.is_file() {
            panic!(
                "the PDF writer's font {} is missing: run `make setup` (it installs the Debian package \
                 fonts-dejavu-core) or set PACTWISE_FONT_DIR to a folder holding {name}",
                path.display()
            );
        }
        println!("cargo::rerun-if-changed={}", path.display());
        println!("cargo::rustc-env={key}={}", path.display());
    }
}
