//! The circuit breaker: after repeated failures it opens, and calls fail at once with `model_unavailable` so
//! callers fall back to rules instead of waiting on a sick API. After a cool-down it half-opens and lets one probe
//! through; the probe's result closes it again or re-opens it for another cool-down.

use chrono::{DateTime, Utc};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerPolicy {
    /// Consecutive failed attempts (transport errors, 429, 5xx) that open the breaker.
    pub failure_threshold: u32,
    /// How long it stays open before letting a probe through.
    pub cool_down: Duration,
}

impl Default for BreakerPolicy {
    fn default() -> Self {
        Self { failure_threshold: 5, cool_down: Duration::from_secs(30) }
    }
}

/// What the breaker looks like now (for the status line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerStatus {
    Closed,
    Open {
        until: DateTime<Utc>,
    },
    /// The cool-down is over; the next request is a probe.
    HalfOpen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed { failures: u32 },
    Open { until: DateTime<Utc> },
    HalfOpen { probe_in_flight: bool },
}

#[derive(Debug)]
pub struct CircuitBreaker {
    policy: BreakerPolicy,
    state: Mutex<State>,
}

/// Permission to send one request. Report its result with [`CircuitBreaker::succeeded`] or
/// [`CircuitBreaker::failed`]; a probe permit dropped without a report frees the probe slot.
#[derive(Debug)]
pub struct Permit<'a> {
    breaker: &'a CircuitBreaker,
    probe: bool,
    reported: bool,
}

impl Permit<'_> {
    pub fn is_probe(&self) -> bool {
        self.probe
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if self.probe && !self.reported {
            let mut state = self.breaker.lock();
            if let State::HalfOpen { probe_in_flight } = &mut *state {
                *probe_in_flight = false;
            }
        }
    }
}

impl CircuitBreaker {
    pub fn new(policy: BreakerPolicy) -> Self {
        Self { policy, state: Mutex::new(State::Closed { failures: 0 }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn status(&self, now: DateTime<Utc>) -> BreakerStatus {
        match *self.lock() {
            State::Closed { .. } => BreakerStatus::Closed,
            State::Open { until } if now < until => BreakerStatus::Open { until },
            State::Open { .. } | State::HalfOpen { .. } => BreakerStatus::HalfOpen,
        }
    }

    /// May a request go out now? `Err(retry_at)` when the breaker is open (or a probe is already out).
    pub fn admit(&self, now: DateTime<Utc>) -> Result<Permit<'_>, DateTime<Utc>> {
        let mut state = self.lock();
        match *state {
            State::Closed { .. } => Ok(Permit { breaker: self, probe: false, reported: false }),
            State::Open { until } if now < until => Err(until),
            State::Open { .. } | State::HalfOpen { probe_in_flight: false } => {
                *state = State::HalfOpen { probe_in_flight: true };
                Ok(Permit { breaker: self, probe: true, reported: false })
            }
            State::HalfOpen { probe_in_flight: true } => Err(now + self.cool_down_chrono()),
        }
    }

    fn cool_down_chrono(&self) -> chrono::Duration {
        chrono::Duration::from_std(self.policy.cool_down).unwrap_or(chrono::Duration::seconds(30))
    }

    /// The API answered (any answer that is not a retryable failure): close.
    pub fn succeeded(&self, mut permit: Permit<'_>) {
        permit.reported = true;
        *self.lock() = State::Closed { failures: 0 };
    }

    /// A retryable failure: count it; open when the threshold is reached or when a probe failed.
    pub fn failed(&self, mut permit: Permit<'_>, now: DateTime<Utc>) {
        permit.reported = true;
        let open = State::Open { until: now + self.cool_down_chrono() };
        let mut state = self.lock();
        *state = match *state {
            State::Closed { failures } => {
                let failures = failures + 1;
                if failures >= self.policy.failure_threshold { open } else { State::Closed { failures } }
            }
            State::HalfOpen { .. } | State::Open { .. } => open,
        };
        if matches!(*state, State::Open { .. }) {
            tracing::warn!(cool_down_secs = self.policy.cool_down.as_secs(), "model circuit breaker opened");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap()
    }

    #[test]
    fn opens_after_the_threshold_and_half_opens_after_the_cool_down() {
        let breaker = CircuitBreaker::new(BreakerPolicy { failure_threshold: 2, cool_down: Duration::from_secs(10) });
        breaker.failed(breaker.admit(t0()).unwrap(), t0());
        assert_eq!(breaker.status(t0()), BreakerStatus::Closed);
        breaker.failed(breaker.admit(t0()).unwrap(), t0());
        let until = t0() + chrono::Duration::seconds(10);
        assert_eq!(breaker.status(t0()), BreakerStatus::Open { until });
        assert_eq!(breaker.admit(t0() + chrono::Duration::seconds(9)).unwrap_err(), until);

        let later = t0() + chrono::Duration::seconds(10);
        let probe = breaker.admit(later).unwrap();
        assert!(probe.is_probe());
        assert!(breaker.admit(later).is_err(), "only one probe at a time");
        breaker.succeeded(probe);
        assert_eq!(breaker.status(later), BreakerStatus::Closed);
    }

    #[test]
    fn a_failed_probe_reopens_for_another_cool_down() {
        let breaker = CircuitBreaker::new(BreakerPolicy { failure_threshold: 1, cool_down: Duration::from_secs(10) });
        breaker.failed(breaker.admit(t0()).unwrap(), t0());
        let later = t0() + chrono::Duration::seconds(11);
        breaker.failed(breaker.admit(later).unwrap(), later);
        assert_eq!(breaker.status(later), BreakerStatus::Open { until: later + chrono::Duration::seconds(10) });
    }

    #[test]
    fn a_dropped_probe_frees_the_probe_slot() {
        let breaker = CircuitBreaker::new(BreakerPolicy { failure_threshold: 1, cool_down: Duration::from_secs(1) });
        breaker.failed(breaker.admit(t0()).unwrap(), t0());
        let later = t0() + chrono::Duration::seconds(2);
        drop(breaker.admit(later).unwrap());
        assert!(breaker.admit(later).unwrap().is_probe());
    }
}
