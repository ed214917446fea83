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
    "review_queue",
    "document_review",
    "rerun_pipeline",
    "page_layout",
    "checklist_type",
    "correct_item",
    "finalize_review",
    "export_review",
    "vendors",
    "review_thresholds",
    "set_review_threshold",
    "own_names",
    "set_own_names",
    "ask_assistant",
    "approvals_inbox",
    "decide_approval",
    "run_detail",
    "list_runs",
    "workflow_graphs",
    "start_run",
    "sync_status",
    "sync_sign_in",
    "sync_sign_out",
    "sync_retry",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build script");
}
