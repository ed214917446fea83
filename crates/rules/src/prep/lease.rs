//! The edit lease of an RFP package: one person edits a package at a time. One rule for every place that grants
//! a lease — the sync service for an organization that syncs (its clock decides expiry), the desktop's store for
//! one that does not:
//!
//! | the lease now | the asker | outcome |
//! |---|---|---|
//! | nobody holds it (never taken, or released) | anyone who may prepare packages | taken |
//! | the asker holds it (live or expired) | the holder | renewed |
//! | another person holds it, live | anyone, take-over asked or not | refused: the holder's name and expiry |
//! | another person holds it, expired | without asking to take over | refused: it expired, take it over |
//! | another person holds it, expired | asking to take over | taken over (audited with the holder and expiry) |
//!
//! A live lease is never taken over, whatever the asker's role: an admin would otherwise throw away an editor's
//! unsaved work; waiting for the expiry (the lease lasts minutes and every edit renews it) costs little. The explicit
//! take-over of an expired lease keeps a person in the loop (Prep Studio offers it, with the holder's name).

use chrono::{DateTime, Duration, Utc};
use pactwise_domain::UserId;

/// A lease as whoever keeps it stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub holder: UserId,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Lease {
    /// Expired at `now` (an expiry at `now` is past).
    pub fn expired(&self, now: DateTime<Utc>) -> bool {
        self.expires_at <= now
    }
}

/// What a granted request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseGrant {
    /// Nobody held it.
    Taken,
    /// The asker held it already; the expiry moves on.
    Renewed,
    /// Another person's expired lease, taken over on request: audited with `previous`.
    TakenOver { previous: Lease },
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseRefusal {
    /// Another person holds a live lease.
    Held { lease: Lease },
    /// Another person's lease expired; the asker must say they take it over.
    ExpiredTakeOverNeeded { lease: Lease },
}

/// The decision and, when granted, the lease that results (held by `asker` for `ttl` from `now`).
pub fn decide(
    current: Option<&Lease>,
    asker: UserId,
    take_over: bool,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<(LeaseGrant, Lease), LeaseRefusal> {
    let grant = match current {
        None => LeaseGrant::Taken,
        Some(lease) if lease.holder == asker => LeaseGrant::Renewed,
        Some(lease) if !lease.expired(now) => return Err(LeaseRefusal::Held { lease: *lease }),
        Some(lease) if !take_over => return Err(LeaseRefusal::ExpiredTakeOverNeeded { lease: *lease }),
        Some(lease) => LeaseGrant::TakenOver { previous: *lease },
    };
    let acquired_at = match (grant, current) {
        // A renewal of a live lease keeps when it was first taken.
        (LeaseGrant::Renewed, Some(lease)) if !lease.expired(now) => lease.acquired_at,
        _ => now,
    };
    Ok((grant, Lease { holder: asker, acquired_at, expires_at: now + ttl }))
}

/// May `user` save an edit of the package now, under `current`? Only its holder, before it expires. The desktop of a
/// syncing organization asks this of the lease the service last granted it when the service cannot be reached.
pub fn may_edit(current: Option<&Lease>, user: UserId, now: DateTime<Utc>) -> bool {
    current.is_some_and(|l| l.holder == user && !l.expired(now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(min: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap() + Duration::minutes(min)
    }

    #[test]
    fn the_lease_table_decides_every_case() {
        let (ann, bob) = (UserId::new(), UserId::new());
        let ttl = Duration::minutes(30);
        let ann_until_30 = Lease { holder: ann, acquired_at: t(0), expires_at: t(30) };
        // Nobody holds it.
        assert_eq!(decide(None, bob, false, t(5), ttl).unwrap().0, LeaseGrant::Taken);
        // The holder renews, live or expired; a live renewal keeps its start.
        let (g, l) = decide(Some(&ann_until_30), ann, false, t(10), ttl).unwrap();
        assert_eq!((g, l.acquired_at, l.expires_at), (LeaseGrant::Renewed, t(0), t(40)));
        let (g, l) = decide(Some(&ann_until_30), ann, false, t(50), ttl).unwrap();
        assert_eq!((g, l.acquired_at), (LeaseGrant::Renewed, t(50)));
        // Another person's live lease: refused with or without take-over.
        for take_over in [false, true] {
            assert_eq!(
                decide(Some(&ann_until_30), bob, take_over, t(29), ttl),
                Err(LeaseRefusal::Held { lease: ann_until_30 })
            );
        }
        // Expiry is at the instant, by the caller's clock.
        assert_eq!(
            decide(Some(&ann_until_30), bob, false, t(30), ttl),
            Err(LeaseRefusal::ExpiredTakeOverNeeded { lease: ann_until_30 })
        );
        let (g, l) = decide(Some(&ann_until_30), bob, true, t(30), ttl).unwrap();
        assert_eq!(g, LeaseGrant::TakenOver { previous: ann_until_30 });
        assert_eq!((l.holder, l.acquired_at, l.expires_at), (bob, t(30), t(60)));
    }

    #[test]
    fn only_the_holder_of_a_live_lease_may_edit() {
        let (ann, bob) = (UserId::new(), UserId::new());
        let lease = Lease { holder: ann, acquired_at: t(0), expires_at: t(30) };
        assert!(may_edit(Some(&lease), ann, t(29)));
        assert!(!may_edit(Some(&lease), ann, t(30)));
        assert!(!may_edit(Some(&lease), bob, t(1)));
        assert!(!may_edit(None, ann, t(1)));
    }
}
