// Keep a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// mimalloc instead of the system allocator: the engine, the pipeline and serde allocate many small short-lived
/// objects (about a tenth fewer CPU cycles per workflow run in `bench/engine.sh`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    pactwise_desk::run()
}
