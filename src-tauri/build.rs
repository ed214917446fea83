// The app's own commands are declared here so that the capability file must allow each one explicitly
// (capabilities/default.json): a command the UI does not use is not callable from the web view.
const COMMANDS: &[&str] = &[
    "session_info",
    "list_documents",
    "import_documents",
    "delete_document",
    "restore_document",
    "model_availability",
    "set_api_key",
    "clear_api_key",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build script");
}
