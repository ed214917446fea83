//! What the app keeps about its own failures, without secrets or document text: the log files rotated by size when
//! the app starts, and a report for every panic in the backend (`<data dir>/crash-reports/`), written by a panic hook
//! with the message redacted, for the window to show with where the report is.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A log file past this size is rotated when the app starts.
pub const LOG_ROTATE_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated logs kept besides the current one (`name.1` the newest … `name.5` the oldest).
pub const LOGS_KEPT: u32 = 5;
/// The longest redacted panic message kept in a report.
const MESSAGE_CHARS: usize = 300;

/// Rotates `dir/name` when it has reached `max_bytes`: `name.N` → `name.N+1` (the oldest dropped past `keep`),
/// `name` → `name.1`. Nothing happens below the size; a failure leaves the logs as they are and is answered.
pub fn rotate_log(dir: &Path, name: &str, max_bytes: u64, keep: u32) -> std::io::Result<bool> {
    let current = dir.join(name);
    match std::fs::metadata(&current) {
        Ok(meta) if meta.len() >= max_bytes => {}
        Ok(_) => return Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    let numbered = |n: u32| dir.join(format!("{name}.{n}"));
    if keep == 0 {
        std::fs::remove_file(&current)?;
        return Ok(true);
    }
    match std::fs::remove_file(numbered(keep)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    for n in (1..keep).rev() {
        match std::fs::rename(numbered(n), numbered(n + 1)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    std::fs::rename(&current, numbered(1))?;
    Ok(true)
}

/// A panic message as a report may keep it: quoted text (where document text and values travel) and anything that
/// looks like a key, a token or a long number replaced, and at most a few hundred characters.
pub fn redact(message: &str) -> String {
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '`' | '“' | '«' => {
                let close = match c {
                    '“' => '”',
                    '«' => '»',
                    other => other,
                };
                // Everything up to the closing mark (or the end) is withheld.
                for next in chars.by_ref() {
                    if next == close {
                        break;
                    }
                }
                out.push_str("[text withheld]");
            }
            _ => out.push(c),
        }
    }
    let words: Vec<String> = out.split(' ').map(redact_word).collect();
    let joined = words.join(" ");
    if joined.chars().count() > MESSAGE_CHARS {
        let mut cut: String = joined.chars().take(MESSAGE_CHARS).collect();
        cut.push('…');
        cut
    } else {
        joined
    }
}

/// A word that could be a secret or an identifying value: long, mostly letters and digits with no vowels' rhythm
/// of a word (keys, tokens, hashes), or a run of digits (account numbers, amounts).
fn redact_word(word: &str) -> String {
    let core = word.trim_matches(|c: char| !c.is_alphanumeric());
    let prefixed = ["sk-", "pws_", "pwi_", "pwv_", "Bearer"].iter().any(|p| core.starts_with(p));
    let alnum = core.chars().filter(|c| c.is_ascii_alphanumeric()).count();
    let digits = core.chars().filter(|c| c.is_ascii_digit()).count();
    let secretish = core.len() >= 20 && alnum * 10 >= core.len() * 8 && core.chars().any(|c| c.is_ascii_digit());
    if prefixed || secretish || digits >= 6 { word.replace(core, "[withheld]") } else { word.to_owned() }
}

/// One crash report, for the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CrashReport {
    /// Where the report is (a text file in the data directory).
    pub path: String,
    pub at: DateTime<Utc>,
    /// What went wrong, redacted (no document text, no secrets).
    pub summary: String,
}

/// The folder of the reports not yet seen in the window; seen ones move to `seen/` inside it.
pub fn reports_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("crash-reports")
}

/// The report's text: version, time, thread, where in the code, the redacted message and the stack's function
/// names (no arguments, no values).
pub fn report_text(at: DateTime<Utc>, thread: &str, location: &str, message: &str, backtrace: &str) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "Pactwise Desk {} stopped an operation after an internal error.", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(text, "When: {}", at.to_rfc3339());
    let _ = writeln!(text, "Thread: {}", redact(thread));
    let _ = writeln!(text, "Where: {location}");
    let _ = writeln!(text, "What: {}", redact(message));
    let _ = writeln!(text, "This report holds no document text, no keys and no passwords; quoted values are withheld.");
    let _ = writeln!(text, "\nStack:");
    for line in backtrace.lines().map(str::trim) {
        // Keep the frames' function names ("N: path::to::function"), never their arguments.
        if let Some((number, function)) = line.split_once(": ")
            && number.chars().all(|c| c.is_ascii_digit())
        {
            let _ = writeln!(text, "  {number}: {}", function.split('(').next().unwrap_or(function));
        }
    }
    text
}

/// Installs the panic hook: every panic in the process writes a report into `reports_dir(data_dir)` (and logs
/// where it is, not what it says), then `on_report` is told, so the window can show it. The previous hook still
/// runs (it prints to stderr in a terminal).
pub fn install_panic_reports(data_dir: &Path, on_report: Arc<dyn Fn(CrashReport) + Send + Sync>) {
    let dir = reports_dir(data_dir);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let at = Utc::now();
        let location =
            info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_else(|| "unknown".into());
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        let thread = std::thread::current().name().unwrap_or("unnamed").to_owned();
        let backtrace = std::backtrace::Backtrace::force_capture().to_string();
        let text = report_text(at, &thread, &location, &payload, &backtrace);
        match write_report(&dir, at, &text) {
            Ok(path) => {
                tracing::error!(report = %path.display(), location, "an internal error stopped an operation");
                on_report(CrashReport { path: path.display().to_string(), at, summary: redact(&payload) });
            }
            Err(e) => {
                tracing::error!(error = %e, location, "an internal error stopped an operation; no report was written")
            }
        }
        previous(info);
    }));
}

fn write_report(dir: &Path, at: DateTime<Utc>, text: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let name = format!("crash-{}-{}.txt", at.format("%Y%m%dT%H%M%S%.3fZ"), std::process::id());
    let path = dir.join(name);
    let partial = path.with_extension("part");
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// The reports not yet seen, oldest first (a report from an earlier run too: the app may have stopped).
pub fn pending_reports(data_dir: &Path) -> Vec<CrashReport> {
    let dir = reports_dir(data_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut reports: Vec<CrashReport> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let at = text
                .lines()
                .find_map(|l| l.strip_prefix("When: "))
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc))?;
            let summary = text.lines().find_map(|l| l.strip_prefix("What: ")).unwrap_or("").to_owned();
            Some(CrashReport { path: path.display().to_string(), at, summary })
        })
        .collect();
    reports.sort_by_key(|r| r.at);
    reports
}

/// Marks the pending reports seen (moved into `seen/`, kept for whoever asks for them).
pub fn mark_reports_seen(data_dir: &Path) -> std::io::Result<()> {
    let dir = reports_dir(data_dir);
    let seen = dir.join("seen");
    for report in pending_reports(data_dir) {
        let path = PathBuf::from(&report.path);
        if let Some(name) = path.file_name() {
            std::fs::create_dir_all(&seen)?;
            std::fs::rename(&path, seen.join(name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_keys_and_long_numbers_are_withheld_and_the_rest_kept() {
        let message = "called `Option::unwrap()` on a `None` value at clause \"The Supplier shall indemnify\" \
                       with key sk-ant-api03-abcdefghijklmnopqrstuv token pws_0123456789abcdef0123456789abcdef \
                       account 12345678 in page 4";
        let redacted = redact(message);
        for secret in ["Supplier shall", "abcdefghij", "0123456789abcdef", "12345678"] {
            assert!(!redacted.contains(secret), "{secret} leaked: {redacted}");
        }
        assert!(redacted.starts_with("called [text withheld] on a [text withheld] value at clause [text withheld]"));
        assert!(redacted.ends_with("in page 4"), "{redacted}");
        assert!(redact(&"x ".repeat(400)).chars().count() <= MESSAGE_CHARS + 1);
    }

    #[test]
    fn a_log_past_its_size_is_rotated_and_the_oldest_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("app.log");
        assert!(!rotate_log(dir.path(), "app.log", 10, 2).unwrap(), "no log, nothing to do");
        std::fs::write(&log, "small").unwrap();
        assert!(!rotate_log(dir.path(), "app.log", 10, 2).unwrap());
        for round in 1..=3 {
            std::fs::write(&log, format!("round {round} is long enough")).unwrap();
            assert!(rotate_log(dir.path(), "app.log", 10, 2).unwrap());
            assert!(!log.exists());
        }
        let read = |n: u32| std::fs::read_to_string(dir.path().join(format!("app.log.{n}"))).unwrap();
        assert_eq!((read(1), read(2)), ("round 3 is long enough".into(), "round 2 is long enough".into()));
        assert!(!dir.path().join("app.log.3").exists(), "only two kept");
    }

    #[test]
    fn a_report_keeps_the_functions_of_the_stack_and_not_their_arguments() {
        let at = DateTime::parse_from_rfc3339("2026-12-03T10:00:00Z").unwrap().with_timezone(&Utc);
        let backtrace = "   0: pactwise_api::review::finalize(\"secret clause\")\n             at ./src/review.rs:10\n   1: std::rt::lang_start";
        let text =
            report_text(at, "tokio-runtime-worker", "crates/api/src/review.rs:10", "bad \"Acme\" value", backtrace);
        assert!(text.contains("  0: pactwise_api::review::finalize\n"), "{text}");
        assert!(text.contains("  1: std::rt::lang_start"));
        assert!(!text.contains("secret clause") && !text.contains("Acme"), "{text}");
        assert!(text.contains("What: bad [text withheld] value"));
    }
}
