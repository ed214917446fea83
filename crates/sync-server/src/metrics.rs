//! Counters for `/metrics`, in the Prometheus text format.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Metrics {
    pub requests_2xx: AtomicU64,
    pub requests_4xx: AtomicU64,
    pub requests_5xx: AtomicU64,
    pub request_micros_total: AtomicU64,
    pub pushes: AtomicU64,
    pub changes_stored: AtomicU64,
    pub pushes_replayed: AtomicU64,
    pub pulls: AtomicU64,
    pub changes_served: AtomicU64,
    pub sign_ins: AtomicU64,
    pub sign_ins_failed: AtomicU64,
    pub rate_limited: AtomicU64,
    pub unauthenticated: AtomicU64,
    pub blob_bytes_in: AtomicU64,
    pub blob_bytes_out: AtomicU64,
    /// Waits for changes accepted, answered with new changes, refused over a limit.
    pub waits: AtomicU64,
    pub waits_changed: AtomicU64,
    pub waits_refused: AtomicU64,
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let _ = writeln!(out, "# TYPE pactwise_sync_requests_total counter");
        for (class, c) in [("2xx", &self.requests_2xx), ("4xx", &self.requests_4xx), ("5xx", &self.requests_5xx)] {
            let _ = writeln!(out, "pactwise_sync_requests_total{{class=\"{class}\"}} {}", get(c));
        }
        for (name, c) in [
            ("request_micros_total", &self.request_micros_total),
            ("pushes_total", &self.pushes),
            ("pushes_replayed_total", &self.pushes_replayed),
            ("changes_stored_total", &self.changes_stored),
            ("pulls_total", &self.pulls),
            ("changes_served_total", &self.changes_served),
            ("sign_ins_total", &self.sign_ins),
            ("sign_ins_failed_total", &self.sign_ins_failed),
            ("rate_limited_total", &self.rate_limited),
            ("unauthenticated_total", &self.unauthenticated),
            ("blob_bytes_in_total", &self.blob_bytes_in),
            ("blob_bytes_out_total", &self.blob_bytes_out),
            ("waits_total", &self.waits),
            ("waits_changed_total", &self.waits_changed),
            ("waits_refused_total", &self.waits_refused),
        ] {
            let _ = writeln!(out, "# TYPE pactwise_sync_{name} counter");
            let _ = writeln!(out, "pactwise_sync_{name} {}", get(c));
        }
        out
    }
}
