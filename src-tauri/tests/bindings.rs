//! The UI's TypeScript bindings are generated from the Tauri commands; this fails when the committed file is stale.
//! Regenerate with `make bindings` (or `UPDATE_BINDINGS=1 cargo test -p pactwise-desk --test bindings`).

use std::path::PathBuf;

#[test]
fn typescript_bindings_match_the_tauri_commands() {
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/bindings.ts");
    let fresh_dir = tempfile::tempdir().expect("temp dir");
    let fresh_path = fresh_dir.path().join("bindings.ts");
    pactwise_desk::export_bindings(&fresh_path).expect("bindings export");
    let fresh = std::fs::read_to_string(&fresh_path).expect("read fresh bindings");
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&committed, &fresh).expect("write bindings");
        return;
    }
    let current = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        current == fresh,
        "ui/src/lib/bindings.ts is stale: a Tauri command or a type it uses changed. Run `make bindings` and commit \
         the result."
    );
}
