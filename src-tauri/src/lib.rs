//! The desktop shell: opens the window, holds the session, and exposes Tauri commands that are thin wrappers over
//! `pactwise-api`. No logic lives here; if a command grows logic, that logic belongs in a crate.

mod commands;

use pactwise_api::{Api, ApiError, OrgScope};
use std::path::PathBuf;
use tauri::Manager;
use tokio::sync::RwLock;

pub use commands::{export_bindings, specta_builder};

/// What the window's commands work on. If the data directory could not be opened, the app still starts and the UI
/// shows `startup_error` where the user is looking.
pub struct AppState {
    opened: Result<(Api, RwLock<OrgScope>), ApiError>,
}

impl AppState {
    pub(crate) async fn session(&self) -> Result<(&Api, OrgScope), ApiError> {
        match &self.opened {
            Ok((api, scope)) => Ok((api, scope.read().await.clone())),
            Err(e) => Err(e.clone()),
        }
    }
}

/// `--data-dir DIR` (or `--data-dir=DIR`) from the command line, if given.
fn data_dir_argument() -> Option<PathBuf> {
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        if text == "--data-dir" {
            return args.next().map(PathBuf::from);
        }
        if let Some(value) = text.strip_prefix("--data-dir=") {
            return Some(PathBuf::from(value));
        }
    }
    None
}

fn open_state() -> (AppState, Option<tracing_appender::non_blocking::WorkerGuard>) {
    let root = match pactwise_api::resolve_data_dir(data_dir_argument()) {
        Ok(root) => root,
        Err(e) => return (AppState { opened: Err(e) }, None),
    };
    let guard = init_logging(&root);
    let opened = Api::open(root).and_then(|api| {
        let scope = tauri::async_runtime::block_on(api.local_session())?;
        Ok((api, RwLock::new(scope)))
    });
    if let Err(e) = &opened {
        tracing::error!(code = %e.code, message = %e.message, "could not open the data directory");
    }
    (AppState { opened }, guard)
}

/// Logs go to `<data dir>/logs/pactwise-desk.log` (level from `PACTWISE_LOG`, default info).
fn init_logging(root: &std::path::Path) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).ok()?;
    let appender = tracing_appender::rolling::never(logs, "pactwise-desk.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("PACTWISE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_env_filter(filter).try_init().ok()?;
    Some(guard)
}

pub fn run() {
    let (state, _log_guard) = open_state();
    let builder = specta_builder();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            if let Ok((api, _)) = &state.opened {
                tauri::async_runtime::block_on(async { api.spawn_background_tasks() });
            }
            app.manage(state);
            tracing::info!("window ready");
            Ok(())
        })
        .build(tauri::generate_context!());
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            tracing::error!(error = %e, "the app could not start");
            eprintln!("Pactwise Desk could not start: {e}");
            std::process::exit(1);
        }
    };
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event
            && let Ok((api, _)) = &handle.state::<AppState>().opened
        {
            api.flush();
        }
    });
}
