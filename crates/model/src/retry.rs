//! Retries: which failures are worth another attempt, how long to wait (exponential backoff with full jitter, or
//! what the server's `retry-after` says), and the injectable sleeper and jitter source so tests never really sleep.

use chrono::{DateTime, Utc};
use rand::{Rng, SeedableRng, rngs::StdRng};
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The backoff cap before the first retry; doubled for each later retry.
    pub base_delay: Duration,
    /// The backoff cap never grows beyond this.
    pub max_delay: Duration,
    /// A `retry-after` longer than this is not waited for: the call fails at once with a rate-limit error.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The upper bound of the wait before retry number `retry` (0 for the first retry).
    pub fn backoff_cap(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(20));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }

    /// Full jitter: a uniformly random wait between zero and the cap; `unit` is in `[0, 1)`.
    pub fn backoff(&self, retry: u32, unit: f64) -> Duration {
        self.backoff_cap(retry).mul_f64(unit.clamp(0.0, 1.0))
    }
}

/// Is this HTTP status worth another attempt? 408, 409, 429 and every 5xx (529 overloaded included), unless the
/// server said otherwise with `x-should-retry`.
pub fn is_retryable_status(status: u16, should_retry_header: Option<bool>) -> bool {
    if let Some(explicit) = should_retry_header {
        return explicit;
    }
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// The wait the server asked for: `retry-after-ms` (milliseconds) first, then `retry-after` (seconds, or an HTTP
/// date measured from `now`).
pub fn parse_retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now: DateTime<Utc>,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = retry_after?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?.with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

/// Waits between attempts.
pub trait Sleeper: Send + Sync {
    fn sleep(&self, duration: Duration) -> BoxFuture<'_, ()>;
}

/// Really waits (tokio timer).
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, duration: Duration) -> BoxFuture<'_, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Does not wait: records each requested wait and moves a test clock forward by it.
#[derive(Default)]
pub struct RecordingSleeper {
    waits: Mutex<Vec<Duration>>,
    clock: Option<std::sync::Arc<pactwise_domain::FixedClock>>,
}

impl RecordingSleeper {
    pub fn new() -> Self {
        Self::default()
    }

    /// Also advance this clock by every wait, so time-based logic (the breaker's cool-down) sees the time pass.
    pub fn advancing(clock: std::sync::Arc<pactwise_domain::FixedClock>) -> Self {
        Self { waits: Mutex::new(Vec::new()), clock: Some(clock) }
    }

    pub fn waits(&self) -> Vec<Duration> {
        self.waits.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, duration: Duration) -> BoxFuture<'_, ()> {
        self.waits.lock().unwrap_or_else(|e| e.into_inner()).push(duration);
        if let Some(clock) = &self.clock {
            clock.advance(chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::zero()));
        }
        Box::pin(std::future::ready(()))
    }
}

/// The random fraction behind full jitter.
pub trait Jitter: Send + Sync {
    /// A number in `[0, 1)`.
    fn unit(&self) -> f64;
}

/// A seeded generator: deterministic, for tests; seeded from the OS for real use.
pub struct SeededJitter {
    rng: Mutex<StdRng>,
}

impl SeededJitter {
    pub fn new(seed: u64) -> Self {
        Self { rng: Mutex::new(StdRng::seed_from_u64(seed)) }
    }

    pub fn from_os() -> Self {
        Self { rng: Mutex::new(StdRng::from_os_rng()) }
    }
}

impl Jitter for SeededJitter {
    fn unit(&self) -> f64 {
        self.rng.lock().unwrap_or_else(|e| e.into_inner()).random::<f64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn backoff_cap_doubles_then_stops_at_the_maximum() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.backoff_cap(0), Duration::from_millis(500));
        assert_eq!(policy.backoff_cap(1), Duration::from_secs(1));
        assert_eq!(policy.backoff_cap(4), Duration::from_secs(8));
        assert_eq!(policy.backoff_cap(30), Duration::from_secs(8));
    }

    #[test]
    fn full_jitter_stays_between_zero_and_the_cap() {
        let policy = RetryPolicy::default();
        let jitter = SeededJitter::new(7);
        let mut seen = Vec::new();
        for _ in 0..200 {
            let wait = policy.backoff(1, jitter.unit());
            assert!(wait < Duration::from_secs(1));
            seen.push(wait);
        }
        let min = seen.iter().min().unwrap();
        let max = seen.iter().max().unwrap();
        assert!(*min < Duration::from_millis(100) && *max > Duration::from_millis(900), "spread {min:?}..{max:?}");
    }

    #[test]
    fn retryable_statuses_follow_the_api_rules() {
        for status in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(status, None), "{status}");
        }
        for status in [400, 401, 403, 404, 413] {
            assert!(!is_retryable_status(status, None), "{status}");
        }
        assert!(!is_retryable_status(500, Some(false)));
        assert!(is_retryable_status(400, Some(true)));
    }

    #[test]
    fn retry_after_is_read_in_milliseconds_seconds_or_as_a_date() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        assert_eq!(parse_retry_after(Some("1500"), Some("9"), now), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after(None, Some("2"), now), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(None, Some("Mon, 30 Nov 2026 12:00:05 GMT"), now), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after(None, Some("soon"), now), None);
        assert_eq!(parse_retry_after(None, None, now), None);
    }
}
