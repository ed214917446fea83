// Keep a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// jemalloc instead of the system allocator: it gives memory back to the system after a burst (an import's
/// embedding, the model released when idle), where glibc's and mimalloc's heaps keep it. Measured with the embed
/// crate's `throughput` example (resident MB after loading the model / after embedding 200 passages / after
/// releasing the model): glibc 102 / 196 / 120, mimalloc 204 / 178 / 178, jemalloc 106 / 130 / 82.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    // First, while this is the process's only thread: WebKit reads it when the window opens.
    pactwise_desk::choose_webkit_painting();
    pactwise_desk::leave_opengl_to_the_web_process();
    pactwise_desk::give_freed_memory_back_when_idle();
    let _ = pactwise_desk::share_c_heap_arenas();
    pactwise_desk::run()
}
