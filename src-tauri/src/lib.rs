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
    /// The data directory, when one could be chosen (crash reports live there even if it could not be opened).
    data_dir: Option<PathBuf>,
}

impl AppState {
    pub(crate) async fn session(&self) -> Result<(&Api, OrgScope), ApiError> {
        match &self.opened {
            Ok((api, scope)) => Ok((api, scope.read().await.clone())),
            Err(e) => Err(e.clone()),
        }
    }

    /// The data directory, or why there is none.
    pub(crate) fn data_dir(&self) -> Result<&std::path::Path, ApiError> {
        match (&self.data_dir, &self.opened) {
            (Some(dir), _) => Ok(dir),
            (None, Err(e)) => Err(e.clone()),
            (None, Ok(_)) => Err(ApiError::new(pactwise_domain::ErrorCode::Internal, "the data directory is unknown")),
        }
    }

    /// The window works in another session from now on (after a sync sign-in).
    pub(crate) async fn set_scope(&self, new: OrgScope) {
        if let Ok((_, scope)) = &self.opened {
            *scope.write().await = new;
        }
    }
}

/// Starts the sync loop of the signed-in organization, if this install syncs (a sign-in or a restart).
pub(crate) async fn start_sync(api: &Api) {
    match api.sync_loop().await {
        Ok(Some(sync_loop)) => {
            tauri::async_runtime::spawn(sync_loop.run());
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(code = %e.code, "sync did not start: {}", e.message),
    }
}

/// Runs the engine's work loop (timers, retries, leases, deadlines, escalations) for as long as the app runs, and
/// tells the window when runs change: moved by that loop, or by a sync round (another desktop's run or approval, a
/// stamped decision, a run here resumed by one).
fn start_work_loop(api: &Api, app: tauri::AppHandle) {
    use tauri_specta::Event;
    let mut records = api.watch_shared_records();
    let window = app.clone();
    tauri::async_runtime::spawn(async move {
        while records.changed().await.is_ok() {
            let rounds = *records.borrow_and_update();
            if let Err(e) = (commands::RecordsChangedEvent { rounds }).emit(&window) {
                tracing::warn!(error = %e, "could not tell the window that contracts or vendors changed");
            }
        }
    });
    let mut synced = api.watch_shared_runs();
    let window = app.clone();
    tauri::async_runtime::spawn(async move {
        while synced.changed().await.is_ok() {
            let event = commands::RunsChangedEvent { runs_moved: 0, approvals_escalated: 0 };
            if let Err(e) = event.emit(&window) {
                tracing::warn!(error = %e, "could not tell the window that runs changed on another desktop");
            }
        }
    });
    let api = api.clone();
    tauri::async_runtime::spawn(async move {
        api.run_work_loop_forever(move |round| {
            let event = commands::RunsChangedEvent {
                runs_moved: round.moved.len() as u32,
                approvals_escalated: round.escalated_approvals as u32,
            };
            if let Err(e) = event.emit(&app) {
                tracing::warn!(error = %e, "could not tell the window that runs changed");
            }
        })
        .await
    });
}

/// Prepares meaning-based search in the background: at start, then whenever an import added passages (or the
/// organization changed), for the session's organization at that moment; progress goes to the window.
fn start_semantic_search(api: &Api, app: tauri::AppHandle) {
    use tauri::Manager;
    use tauri_specta::Event;
    let api = api.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            let current = match &app.state::<AppState>().opened {
                Ok((_, scope)) => scope.read().await.clone(),
                Err(_) => return,
            };
            let emit = |status: &pactwise_api::SemanticStatus| {
                if let Err(e) = (commands::SemanticProgressEvent { status: status.clone() }).emit(&app) {
                    tracing::warn!(error = %e, "could not tell the window how far meaning-based search is");
                }
            };
            match api.prepare_semantic_search(&current, emit).await {
                Ok(status) => tracing::info!(ready = status.ready, done = status.done, "meaning-based search prepared"),
                Err(e) => tracing::warn!(code = %e.code, "meaning-based search was not prepared: {}", e.message),
            }
            api.semantic_wake().await;
        }
    });
}

/// Finishes the imports a stopped app left behind (a document without its review, or without its pages).
async fn resume_imports(api: &Api, scope: &OrgScope) {
    match api.resume_imports(scope).await {
        Ok(done) if !done.is_empty() => tracing::info!(documents = done.len(), "finished imports that had stopped"),
        Ok(_) => {}
        Err(e) => tracing::warn!(code = %e.code, "unfinished imports could not be resumed: {}", e.message),
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
        Err(e) => return (AppState { opened: Err(e), data_dir: None }, None),
    };
    let guard = init_logging(&root);
    let data_dir = Some(root.clone());
    let opened = Api::open(root).and_then(|api| {
        let scope = tauri::async_runtime::block_on(api.local_session())?;
        Ok((api, RwLock::new(scope)))
    });
    if let Err(e) = &opened {
        tracing::error!(code = %e.code, message = %e.message, "could not open the data directory");
    }
    (AppState { opened, data_dir }, guard)
}

/// Logs go to `<data dir>/logs/pactwise-desk.log` (level from `PACTWISE_LOG`, default info), rotated by size when
/// the app starts (`pactwise_api::diagnostics::rotate_log`).
fn init_logging(root: &std::path::Path) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use pactwise_api::diagnostics::{LOG_ROTATE_BYTES, LOGS_KEPT, rotate_log};
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).ok()?;
    let rotated = rotate_log(&logs, "pactwise-desk.log", LOG_ROTATE_BYTES, LOGS_KEPT);
    let appender = tracing_appender::rolling::never(logs, "pactwise-desk.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("PACTWISE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_env_filter(filter).try_init().ok()?;
    if let Err(e) = rotated {
        tracing::warn!(error = %e, "the log could not be rotated; it keeps growing until the next start");
    }
    Some(guard)
}

/// Every panic in the backend leaves a redacted report in the data directory, and the window is told where it is
/// (through a thread of its own, so the panicking thread only sends).
fn report_panics(data_dir: &std::path::Path, app: tauri::AppHandle) {
    use tauri_specta::Event;
    let (sender, reports) = std::sync::mpsc::channel::<pactwise_api::diagnostics::CrashReport>();
    let sender = std::sync::Mutex::new(sender);
    pactwise_api::diagnostics::install_panic_reports(
        data_dir,
        std::sync::Arc::new(move |report| {
            if let Ok(sender) = sender.lock() {
                let _ = sender.send(report);
            }
        }),
    );
    std::thread::spawn(move || {
        for report in reports {
            if let Err(e) = (commands::CrashReportedEvent { report }).emit(&app) {
                tracing::warn!(error = %e, "could not tell the window about a crash report");
            }
        }
    });
}

/// `PACTWISE_SAVE_DIR=DIR` (end-to-end tests only): the UI's save dialogs do not open and answer with a file of the
/// suggested name in DIR (see `ui/src/lib/dialogs.ts`), because a native file chooser cannot be driven through
/// WebDriver. Unset, nothing is injected and the dialogs open as usual.
fn save_dir_script() -> Option<String> {
    let dir = std::env::var("PACTWISE_SAVE_DIR").ok().filter(|d| !d.trim().is_empty())?;
    tracing::warn!(dir, "PACTWISE_SAVE_DIR is set: save dialogs answer with files in this folder");
    Some(format!("window.__PACTWISE_SAVE_DIR__ = {};", serde_json::to_string(&dir).ok()?))
}

/// Serves `pwpage://localhost/<document id>/<page>?scale=<zoom>`: a page rendered by pdfium (cached) as PNG.
async fn page_image_response(app: &tauri::AppHandle, uri: &tauri::http::Uri) -> tauri::http::Response<Vec<u8>> {
    use tauri::http::{Response, StatusCode, header};
    let state = app.state::<AppState>();
    let mut parts = uri.path().trim_start_matches('/').split('/');
    let id = parts.next().and_then(|s| s.parse::<pactwise_domain::DocumentId>().ok());
    let page = parts.next().and_then(|s| s.parse::<u32>().ok());
    let scale = uri
        .query()
        .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("scale=")))
        .and_then(|v| v.parse::<f32>().ok())
        .unwrap_or(1.5);
    let result = match (id, page) {
        (Some(id), Some(page)) => match state.session().await {
            Ok((api, scope)) => api.page_image(&scope, id, page, scale).await,
            Err(e) => Err(e),
        },
        _ => Err(ApiError::new(pactwise_domain::ErrorCode::InvalidInput, "expected /<document id>/<page>")),
    };
    let response = match result {
        Ok(png) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "image/png")
            .header(header::CACHE_CONTROL, "private, max-age=3600")
            .body(png),
        Err(e) => {
            tracing::warn!(code = %e.code, uri = %uri, "page image not served");
            Response::builder()
                .status(StatusCode::NOT_FOUND)
                .header(header::CONTENT_TYPE, "text/plain")
                .body(e.message.into_bytes())
        }
    };
    response.unwrap_or_else(|_| Response::new(Vec::new()))
}

/// The updater's setup for this run: the update key compiled into the app (`plugins.updater`, from `make package`)
/// and the feed, which IT may move or turn off in `pactwise_api::update::UPDATE_FEED_FILE`, read here and nowhere
/// else. The plugin runs with the decided configuration; without a key or a feed it runs with none and Settings says
/// so in words.
fn updates_for(context: &mut tauri::Context<tauri::Wry>) -> commands::Updates {
    use pactwise_api::update::{UPDATE_FEED_FILE, read_feed_override, update_setup};
    let plugins = &mut context.config_mut().plugins.0;
    let setup = update_setup(plugins.get("updater"), read_feed_override(std::path::Path::new(UPDATE_FEED_FILE)));
    match &setup.not_set_up {
        None => tracing::info!(feed = %setup.plugin_config["endpoints"], "updates are checked from this feed"),
        Some(why) => tracing::info!("updates are not checked: {why}"),
    }
    plugins.insert("updater".into(), setup.plugin_config.clone());
    commands::Updates { setup }
}

/// WebKitGTK composites pages with OpenGL unless told not to. Without a GPU (virtual and remote desktops, Xvfb) that
/// is Mesa's software renderer, and it costs: on this project's 2-core machine under Xvfb a jump to page 50 of a
/// 68-page PDF showed the page's image after a median 396 ms composited and 175 ms painted directly, and WebKit's web
/// process held 285 MB idle against 154 MB (`bench/README.md`, viewer and footprint). A contract viewer gains nothing
/// from compositing worth that, so the app paints directly unless the environment already says otherwise
/// (`WEBKIT_DISABLE_COMPOSITING_MODE=0` turns compositing back on). Call it first in `main`, before any thread starts.
pub fn choose_webkit_painting() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none() {
        set_before_threads("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    }
}

/// Painting directly, the window's process draws the bitmaps WebKit's web process sends it and needs no OpenGL, yet two
/// probes load Mesa's software OpenGL into it anyway, and with it `libLLVM-15` (17–19 MB resident): GTK's GLX check
/// when it opens the display, and WebKit asking EGL for its client extensions when it starts the web process. This
/// turns GTK's off (`GDK_GL=disable`) and has EGL read an empty list of drivers once, in this process only, before
/// putting the environment back so the web process (which renders with EGL and stops without it) finds Mesa as
/// before. The window's process held 28 MB less at the queue (`bench/README.md`, footprint). Only while painting
/// directly and while the environment names no EGL drivers of its own; call it after `choose_webkit_painting`,
/// before any thread starts.
pub fn leave_opengl_to_the_web_process() {
    #[cfg(target_os = "linux")]
    {
        const EGL_VENDORS: &str = "__EGL_VENDOR_LIBRARY_FILENAMES";
        let painting_directly = std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_some_and(|v| v == "1");
        let vendors_chosen =
            std::env::var_os(EGL_VENDORS).is_some() || std::env::var_os("__EGL_VENDOR_LIBRARY_DIRS").is_some();
        if !painting_directly || vendors_chosen {
            return;
        }
        if std::env::var_os("GDK_GL").is_none() {
            set_before_threads("GDK_GL", "disable");
        }
        set_before_threads(EGL_VENDORS, "");
        let listed = egl_client_extensions_read();
        remove_before_threads(EGL_VENDORS);
        if let Err(why) = listed {
            eprintln!("pactwise: the window may load OpenGL it does not use ({why})");
        }
    }
}

/// Has libglvnd's EGL read its list of drivers (it does so once per process, on the first call) by asking for the
/// client extensions, as WebKit does. The library stays loaded: WebKit links it.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // dlopen, dlsym and a call through the found symbol
fn egl_client_extensions_read() -> Result<(), &'static str> {
    type QueryString = unsafe extern "C" fn(display: *mut std::ffi::c_void, name: i32) -> *const std::ffi::c_char;
    const EGL_NO_DISPLAY: *mut std::ffi::c_void = std::ptr::null_mut();
    const EGL_EXTENSIONS: i32 = 0x3055;
    // SAFETY: a NUL-terminated name; the handle is never closed, so the symbol found in it stays valid.
    let library = unsafe { libc::dlopen(c"libEGL.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if library.is_null() {
        return Err("libEGL.so.1 was not found");
    }
    // SAFETY: as above; the symbol's type is eglQueryString's in EGL 1.5.
    let symbol = unsafe { libc::dlsym(library, c"eglQueryString".as_ptr()) };
    if symbol.is_null() {
        return Err("libEGL.so.1 has no eglQueryString");
    }
    // SAFETY: `symbol` is eglQueryString; EGL_NO_DISPLAY with EGL_EXTENSIONS is a valid query (client extensions),
    // and the returned string, owned by the library, is not read.
    unsafe {
        let query: QueryString = std::mem::transmute::<*mut std::ffi::c_void, QueryString>(symbol);
        query(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    }
    Ok(())
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // `std::env::set_var`, which is sound only while no other thread reads the environment
fn set_before_threads(key: &str, value: &str) {
    // SAFETY: called from `choose_webkit_painting` and `leave_opengl_to_the_web_process`, first thing in `main`, while
    // the process has one thread.
    unsafe { std::env::set_var(key, value) };
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // `std::env::remove_var`, sound only while no other thread reads the environment
fn remove_before_threads(key: &str) {
    // SAFETY: as `set_before_threads`.
    unsafe { std::env::remove_var(key) };
}

/// jemalloc (the app's allocator, `main.rs`) returns freed pages to the system a while after they were freed (its
/// decay, 10 s), but without a thread of its own it does so only when the program next allocates or frees, so an idle
/// desktop kept what its last burst freed (an import's embedding, the released model): 70 MB of the app's anonymous
/// memory 200 s after opening a 100-page contract, 37 MB with the background thread (`bench/footprint.sh`; figures in
/// `bench/README.md`). Call it from `main`, before the window opens.
pub fn give_freed_memory_back_when_idle() {
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(true) {
        eprintln!("pactwise: memory freed while idle stays with the app (jemalloc's background thread: {e})");
    }
}

/// glibc's malloc, which the C libraries use (pdfium, SQLite, GTK and WebKit's side of the window; the app's Rust code
/// uses jemalloc), gives a thread that allocates while others do an arena of its own, up to eight per core, and an
/// arena's pages stay with the process while any small block in them lives. Page images rendered on the runtime's
/// blocking threads left four or five arenas of 3–4 MB each, mostly pdfium's blocks, 200 s after opening a 100-page
/// contract (`bench/footprint.sh` with `SMAPS_DIR`). Two arenas are plenty for that work: one render runs at a time
/// per document and the rest is one window's. Call it from `main`, before any thread starts. Returns whether glibc
/// took the setting (elsewhere there is nothing to set).
pub fn share_c_heap_arenas() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    return share_c_heap_arenas_glibc();
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    true
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // `mallopt`, a plain setting of glibc's allocator
fn share_c_heap_arenas_glibc() -> bool {
    // SAFETY: `mallopt` only sets a parameter of glibc's malloc; M_ARENA_MAX takes any positive count.
    let taken = unsafe { libc::mallopt(libc::M_ARENA_MAX, 2) } == 1;
    if !taken {
        eprintln!("pactwise: the C libraries' heap keeps glibc's default arenas (mallopt refused M_ARENA_MAX)");
    }
    taken
}

pub fn run() {
    let (state, _log_guard) = open_state();
    let mut context = tauri::generate_context!();
    let updates = updates_for(&mut context);
    let builder = specta_builder();
    let mut app = tauri::Builder::default();
    if let Some(script) = save_dir_script() {
        app = app.append_invoke_initialization_script(script);
    }
    let app = app
        .plugin(tauri_plugin_dialog::init())
        // Native notifications for new approvals (the UI asks through the plugin's commands; on a desktop without a
        // notification daemon the plugin's send fails in the background and nothing else happens).
        .plugin(tauri_plugin_notification::init())
        // Signed updates: only through the app's own commands (update_check, update_install); the plugin's JS
        // commands are not allowed to the window.
        .plugin(tauri_plugin_updater::Builder::new().build())
        .manage(updates)
        .invoke_handler(builder.invoke_handler())
        .register_asynchronous_uri_scheme_protocol("pwpage", |ctx, request, responder| {
            let app = ctx.app_handle().clone();
            tauri::async_runtime::spawn(async move {
                responder.respond(page_image_response(&app, request.uri()).await);
            });
        })
        .setup(move |app| {
            builder.mount_events(app);
            if let Some(dir) = &state.data_dir {
                report_panics(dir, app.handle().clone());
            }
            if let Ok((api, scope)) = &state.opened {
                tauri::async_runtime::block_on(async { api.spawn_background_tasks() });
                let scope = tauri::async_runtime::block_on(async { scope.read().await.clone() });
                let api = api.clone();
                start_work_loop(&api, app.handle().clone());
                start_semantic_search(&api, app.handle().clone());
                tauri::async_runtime::spawn(async move {
                    resume_imports(&api, &scope).await;
                    start_sync(&api).await
                });
            }
            app.manage(state);
            tracing::info!("window ready");
            Ok(())
        })
        .build(context);
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_allocator_gives_freed_memory_back_on_its_own_thread() {
        super::give_freed_memory_back_when_idle();
        assert!(tikv_jemalloc_ctl::background_thread::read().expect("jemalloc answers"), "no background thread");
    }

    #[test]
    fn the_c_libraries_heap_takes_the_arena_limit() {
        assert!(super::share_c_heap_arenas(), "glibc refused M_ARENA_MAX");
    }
}
