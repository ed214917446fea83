//! Rate limits: a token bucket per key (a device, or a client address for sign-in). Time comes from the `Clock`,
//! so tests drive it without sleeping.

use pactwise_domain::Clock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy)]
pub struct RateConfig {
    /// Requests allowed in a burst.
    pub burst: f64,
    /// Requests per second refilled.
    pub per_second: f64,
}

pub struct RateLimiter {
    config: RateConfig,
    clock: Arc<dyn Clock>,
    buckets: Mutex<HashMap<String, (f64, i64)>>,
}

impl RateLimiter {
    pub fn new(config: RateConfig, clock: Arc<dyn Clock>) -> Self {
        Self { config, clock, buckets: Mutex::new(HashMap::new()) }
    }

    /// Take one request from `key`'s bucket; `Err(seconds)` says when the next one is allowed.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        let now = self.clock.now().timestamp_millis();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > 100_000 {
            // Forget full buckets so the map cannot grow without bound.
            let burst = self.config.burst;
            let rate = self.config.per_second;
            buckets.retain(|_, (tokens, at)| *tokens + (now - *at) as f64 / 1000.0 * rate < burst);
        }
        let (tokens, at) = buckets.entry(key.to_string()).or_insert((self.config.burst, now));
        let refilled = (*tokens + (now - *at).max(0) as f64 / 1000.0 * self.config.per_second).min(self.config.burst);
        *at = now;
        if refilled >= 1.0 {
            *tokens = refilled - 1.0;
            Ok(())
        } else {
            *tokens = refilled;
            let wait = ((1.0 - refilled) / self.config.per_second.max(f64::MIN_POSITIVE)).ceil();
            Err(wait.max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use pactwise_domain::FixedClock;

    #[test]
    fn a_burst_is_allowed_then_refused_until_the_bucket_refills() {
        let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()));
        let limiter = RateLimiter::new(RateConfig { burst: 3.0, per_second: 1.0 }, clock.clone());
        for _ in 0..3 {
            assert!(limiter.check("a").is_ok());
        }
        assert_eq!(limiter.check("a"), Err(1));
        assert!(limiter.check("b").is_ok(), "buckets are per key");
        clock.advance(chrono::Duration::seconds(1));
        assert!(limiter.check("a").is_ok());
        assert!(limiter.check("a").is_err());
    }
}
