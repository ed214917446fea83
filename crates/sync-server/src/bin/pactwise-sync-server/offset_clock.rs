//! The clock of `serve --clock-offset-file`: the system's time moved by the seconds a test writes in a file, so an
//! end-to-end test can pass a tender's deadline without waiting for it.

use chrono::{DateTime, Utc};
use pactwise_domain::Clock;
use std::path::PathBuf;

pub struct OffsetFileClock {
    file: PathBuf,
}

impl OffsetFileClock {
    pub fn new(file: PathBuf) -> Self {
        Self { file }
    }

    /// The offset in the file: a whole number of seconds (may be negative); a missing or empty file is 0, and so is
    /// anything else, with a warning (a test that wrote a bad offset sees the deadline not pass, and the log says why).
    fn offset(&self) -> chrono::Duration {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return chrono::Duration::zero(),
            Err(e) => {
                tracing::warn!(error = %e, "the clock offset file cannot be read; no offset");
                return chrono::Duration::zero();
            }
        };
        let text = text.trim();
        if text.is_empty() {
            return chrono::Duration::zero();
        }
        match text.parse::<i64>().ok().and_then(chrono::Duration::try_seconds) {
            Some(offset) => offset,
            None => {
                tracing::warn!("the clock offset file does not hold a whole number of seconds; no offset");
                chrono::Duration::zero()
            }
        }
    }
}

impl Clock for OffsetFileClock {
    fn now(&self) -> DateTime<Utc> {
        let now = Utc::now();
        now.checked_add_signed(self.offset()).unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_moves_by_the_seconds_in_the_file_and_a_bad_or_missing_file_moves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("offset");
        let clock = OffsetFileClock::new(file.clone());
        let close = |a: DateTime<Utc>, b: DateTime<Utc>| (a - b).num_seconds().abs() <= 5;
        assert!(close(clock.now(), Utc::now()), "no file: no offset");
        std::fs::write(&file, "86400\n").unwrap();
        assert!(close(clock.now(), Utc::now() + chrono::Duration::days(1)));
        std::fs::write(&file, "-3600").unwrap();
        assert!(close(clock.now(), Utc::now() - chrono::Duration::hours(1)));
        std::fs::write(&file, "tomorrow").unwrap();
        assert!(close(clock.now(), Utc::now()), "not a number: no offset");
        std::fs::write(&file, i64::MAX.to_string()).unwrap();
        assert!(close(clock.now(), Utc::now()), "out of range: no offset, no panic");
    }
}
