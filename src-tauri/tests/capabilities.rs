//! Every command the app registers is declared to Tauri's ACL (`build.rs`) and allowed for the main window
//! (`capabilities/default.json`); a command left out of either is refused in the window with no message, which is
//! how a whole area can break unnoticed. Nothing is declared or allowed that the app does not register.

use std::collections::BTreeSet;

fn read(relative: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)).expect(relative)
}

/// The names in `collect_commands![…]` in `src/commands.rs`.
fn registered() -> BTreeSet<String> {
    let source = read("src/commands.rs");
    let start = source.find("collect_commands![").expect("the command list") + "collect_commands![".len();
    let end = start + source[start..].find(']').expect("the list's end");
    source[start..end].split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect()
}

/// The quoted names in `COMMANDS` in `build.rs`.
fn declared() -> BTreeSet<String> {
    let build = read("build.rs");
    let start = build.find("const COMMANDS").expect("COMMANDS in build.rs");
    let end = start + build[start..].find("];").expect("the list's end");
    build[start..end].split('"').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The app commands the main window's capability allows (`allow-the-command` → `the_command`).
fn allowed() -> BTreeSet<String> {
    let capability: serde_json::Value = serde_json::from_str(&read("capabilities/default.json")).expect("JSON");
    let permissions = capability["permissions"].as_array().expect("permissions");
    permissions
        .iter()
        .filter_map(|p| p.as_str())
        .filter(|p| !p.contains(':'))
        .filter_map(|p| p.strip_prefix("allow-"))
        .map(|p| p.replace('-', "_"))
        .collect()
}

#[test]
fn every_registered_command_is_declared_and_allowed_and_nothing_else() {
    let registered = registered();
    assert!(registered.len() > 50 && registered.contains("source_publish"), "{registered:?}");
    let declared = declared();
    let allowed = allowed();
    let undeclared: Vec<_> = registered.difference(&declared).collect();
    assert!(undeclared.is_empty(), "registered but not in build.rs's COMMANDS: {undeclared:?}");
    let refused: Vec<_> = registered.difference(&allowed).collect();
    assert!(refused.is_empty(), "registered but not allowed in capabilities/default.json: {refused:?}");
    let stray: Vec<_> = declared.union(&allowed).filter(|c| !registered.contains(*c)).collect();
    assert!(stray.is_empty(), "declared or allowed but not registered: {stray:?}");
}
