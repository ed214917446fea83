//! A panic anywhere in the process leaves a report in the data directory without the panic's quoted values or
//! secrets, the window's callback is told where it is, the report is listed until it is marked seen, and the panic
//! still reaches the previous hook and the thread (nothing is swallowed).

use pactwise_api::diagnostics::{CrashReport, install_panic_reports, mark_reports_seen, pending_reports, reports_dir};
use std::sync::{Arc, Mutex};

#[test]
fn a_panic_leaves_a_redacted_report_that_is_listed_until_seen() {
    let data = tempfile::tempdir().unwrap();
    let told: Arc<Mutex<Vec<CrashReport>>> = Arc::default();
    let sink = told.clone();
    install_panic_reports(data.path(), Arc::new(move |report| sink.lock().unwrap().push(report)));

    let outcome = std::thread::Builder::new()
        .name("review-worker".into())
        .spawn(|| {
            let clause = "The Supplier shall indemnify the Customer";
            let key = "sk-ant-api03-0123456789abcdefghijkl";
            panic!("could not place {clause:?} with {key} on page 4");
        })
        .unwrap()
        .join();
    assert!(outcome.is_err(), "the panic still ends its thread");

    let told = told.lock().unwrap().clone();
    assert_eq!(told.len(), 1, "the window is told once");
    let pending = pending_reports(data.path());
    assert_eq!(pending, told, "the report is listed as the window was told");
    let text = std::fs::read_to_string(&pending[0].path).unwrap();
    assert!(text.contains("Thread: review-worker"), "{text}");
    assert!(text.contains("Where: crates/api/tests/crash.rs:"), "{text}");
    assert!(text.contains("What: could not place [text withheld] with [withheld] on page 4"), "{text}");
    for secret in ["Supplier", "indemnify", "sk-ant", "0123456789"] {
        assert!(!text.contains(secret), "{secret} is in the report:\n{text}");
    }
    assert!(text.contains("Stack:"));

    mark_reports_seen(data.path()).unwrap();
    assert!(pending_reports(data.path()).is_empty(), "a seen report is not listed again");
    assert_eq!(std::fs::read_dir(reports_dir(data.path()).join("seen")).unwrap().count(), 1, "and is kept");
}
