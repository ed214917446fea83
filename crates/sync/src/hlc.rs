//! A hybrid logical clock: physical milliseconds plus a counter plus the node (device) id. Timestamps from one node
//! strictly increase, a node that has seen a remote timestamp only issues later ones, and ties between nodes break
//! on the node id, so every pair of timestamps is ordered and every replica orders them the same way. The
//! timestamp type and its order live in `pactwise_rules::lww` (the last-writer-wins rule); this module is the clock
//! that issues them. The physical time is passed in (`now_ms`); this module never reads a clock.

pub use pactwise_rules::lww::Hlc;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// How far ahead of our own physical time a remote timestamp may be before we stop adopting it (one hour). A
/// device with a wildly wrong clock then cannot drag everyone's clocks into the future.
pub const MAX_DRIFT_MS: u64 = 60 * 60 * 1000;

/// One node's clock state. The desktop persists it (`to_parts`/`from_parts`) in the same transaction as the
/// changes it stamped, so a restart never issues an earlier timestamp.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HlcClock {
    node: Uuid,
    wall_ms: u64,
    counter: u32,
}

impl HlcClock {
    pub fn new(node: Uuid) -> Self {
        Self { node, wall_ms: 0, counter: 0 }
    }

    pub fn from_parts(node: Uuid, wall_ms: u64, counter: u32) -> Self {
        Self { node, wall_ms, counter }
    }

    pub fn node(&self) -> Uuid {
        self.node
    }

    pub fn last(&self) -> Hlc {
        Hlc { wall_ms: self.wall_ms, counter: self.counter, node: self.node }
    }

    /// A timestamp for a local change.
    pub fn tick(&mut self, now_ms: u64) -> Hlc {
        if now_ms > self.wall_ms {
            self.wall_ms = now_ms;
            self.counter = 0;
        } else {
            self.counter = self.counter.saturating_add(1);
        }
        self.last()
    }

    /// Take a remote timestamp into account, so later local changes order after it. A remote time more than
    /// [`MAX_DRIFT_MS`] ahead of `now_ms` is not adopted (returns `false`); the change itself still applies.
    pub fn observe(&mut self, remote: &Hlc, now_ms: u64) -> bool {
        if remote.wall_ms > now_ms.saturating_add(MAX_DRIFT_MS) {
            return false;
        }
        let wall = self.wall_ms.max(remote.wall_ms).max(now_ms);
        let counter = if wall == self.wall_ms && wall == remote.wall_ms {
            self.counter.max(remote.counter).saturating_add(1)
        } else if wall == self.wall_ms {
            self.counter.saturating_add(1)
        } else if wall == remote.wall_ms {
            remote.counter.saturating_add(1)
        } else {
            0
        };
        self.wall_ms = wall;
        self.counter = counter;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(n: u8) -> Uuid {
        Uuid::from_bytes([n; 16])
    }

    #[test]
    fn local_ticks_strictly_increase_even_when_the_wall_clock_goes_back() {
        let mut c = HlcClock::new(node(1));
        let a = c.tick(1_000);
        let b = c.tick(1_000);
        let d = c.tick(500);
        let e = c.tick(2_000);
        assert!(a < b && b < d && d < e, "{a:?} {b:?} {d:?} {e:?}");
        assert_eq!(d.wall_ms, 1_000);
        assert_eq!(e, Hlc { wall_ms: 2_000, counter: 0, node: node(1) });
    }

    #[test]
    fn after_observing_a_remote_time_the_next_tick_is_later_than_it() {
        let mut c = HlcClock::new(node(1));
        c.tick(1_000);
        let remote = Hlc { wall_ms: 5_000, counter: 7, node: node(2) };
        assert!(c.observe(&remote, 1_200));
        let next = c.tick(1_300);
        assert!(next > remote, "{next:?} should follow {remote:?}");
    }

    #[test]
    fn a_remote_time_far_in_the_future_is_not_adopted() {
        let mut c = HlcClock::new(node(1));
        let remote = Hlc { wall_ms: 10 * MAX_DRIFT_MS, counter: 0, node: node(2) };
        assert!(!c.observe(&remote, 1_000));
        assert_eq!(c.tick(1_000).wall_ms, 1_000);
    }

    #[test]
    fn equal_physical_times_from_two_nodes_order_by_node() {
        let a = Hlc { wall_ms: 1, counter: 0, node: node(1) };
        let b = Hlc { wall_ms: 1, counter: 0, node: node(2) };
        assert!(a < b);
        assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
    }
}
