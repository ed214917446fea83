//! Last-writer-wins merging: the one rule every replica (the desktop store, the sync client's in-memory replica)
//! uses for ordinary synced fields. A write is stamped with a hybrid logical clock reading ([`Hlc`]); a field takes
//! a write only when the write's stamp is greater than the stamp of the write that set it ([`wins`]). Stamps are
//! totally ordered (wall time, then counter, then the node that made them), so the merge is commutative,
//! associative and idempotent: replicas that saw the same writes in any order hold the same values.
//!
//! The sync service does not merge fields: it keeps each organization's log in arrival order and every replica
//! merges with this rule.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use uuid::Uuid;

/// A hybrid logical clock reading: physical milliseconds, a counter, and the node (device) that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hlc {
    pub wall_ms: u64,
    pub counter: u32,
    pub node: Uuid,
}

impl Ord for Hlc {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.wall_ms, self.counter, self.node).cmp(&(other.wall_ms, other.counter, other.node))
    }
}

impl PartialOrd for Hlc {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hlc {
    /// A text form that sorts like the stamp (zero-padded), for stores that keep stamps as text.
    pub fn to_sortable(&self) -> String {
        format!("{:020}-{:010}-{}", self.wall_ms, self.counter, self.node)
    }

    pub fn from_sortable(text: &str) -> Option<Hlc> {
        let mut parts = text.splitn(3, '-');
        let wall_ms = parts.next()?.parse().ok()?;
        let counter = parts.next()?.parse().ok()?;
        let node = Uuid::parse_str(parts.next()?).ok()?;
        Some(Hlc { wall_ms, counter, node })
    }
}

/// Does a write stamped `incoming` replace a field last set by a write stamped `current` (None: never set)?
/// Only a strictly later stamp wins, so the same write applied twice changes nothing.
pub fn wins(incoming: &Hlc, current: Option<&Hlc>) -> bool {
    current.is_none_or(|current| incoming > current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hlc(wall_ms: u64, counter: u32, node: u8) -> Hlc {
        Hlc { wall_ms, counter, node: Uuid::from_bytes([node; 16]) }
    }

    #[test]
    fn a_later_stamp_wins_an_earlier_or_equal_one_does_not() {
        let a = hlc(10, 0, 1);
        assert!(wins(&a, None), "a field never set takes any write");
        assert!(wins(&hlc(11, 0, 1), Some(&a)));
        assert!(wins(&hlc(10, 1, 1), Some(&a)), "the counter orders writes within one millisecond");
        assert!(wins(&hlc(10, 0, 2), Some(&a)), "the node breaks a tie between devices");
        assert!(!wins(&a, Some(&a)), "the same write again changes nothing");
        assert!(!wins(&hlc(9, 99, 9), Some(&a)));
    }

    #[test]
    fn the_order_is_total_so_two_writes_never_both_win() {
        let stamps = [hlc(1, 0, 1), hlc(1, 0, 2), hlc(1, 1, 1), hlc(2, 0, 0)];
        for x in &stamps {
            for y in &stamps {
                if x != y {
                    assert_ne!(wins(x, Some(y)), wins(y, Some(x)), "{x:?} vs {y:?}");
                }
            }
        }
    }

    #[test]
    fn the_sortable_text_sorts_like_the_stamp_and_round_trips() {
        let stamps = [hlc(9, 12, 3), hlc(10, 0, 1), hlc(10, 2, 1), hlc(10, 2, 0xab), hlc(u64::MAX, u32::MAX, 0xff)];
        for w in stamps.windows(2) {
            assert!(w[0] < w[1] && w[0].to_sortable() < w[1].to_sortable(), "{:?} {:?}", w[0], w[1]);
        }
        for s in stamps {
            assert_eq!(Hlc::from_sortable(&s.to_sortable()), Some(s));
        }
        assert_eq!(Hlc::from_sortable("nonsense"), None);
    }
}
