//! The push channel's in-process notifier: one `watch` channel per organization that has a waiting device, holding
//! the highest place in that organization's log this process has stored. The push route feeds it after a push
//! commits (whatever the storage backend); the wait route (`GET /api/v1/changes/wait`) subscribes before it reads
//! the log, so a change committed in between is seen one way or the other. An organization's channel exists only
//! while one of its devices waits, and only its own pushes reach it: nothing crosses organizations.
//!
//! Limits: [`WaitLimits`] caps the waits open per device and per organization; a wait over a limit is refused
//! at once. Shutting down ([`ChangeNotifier::close`]) ends every wait with nothing new, so a graceful shutdown is
//! not held up by long polls.
//!
//! The notifier is per process: a service run as several processes over one PostgreSQL database wakes only the
//! waits of the process that stored the change; the others' devices get it with their next poll.

use pactwise_domain::OrgId;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::watch;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitLimits {
    /// Waits one device may hold open at once.
    pub per_device: usize,
    /// Waits one organization's devices may hold open at once.
    pub per_org: usize,
}

impl Default for WaitLimits {
    fn default() -> Self {
        Self { per_device: pactwise_sync::wire::MAX_WAITS_PER_DEVICE, per_org: 1_000 }
    }
}

/// Why a wait was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WaitRefused {
    #[error(
        "this device already holds {0} waits for changes open; wait for one to end (the sync client needs only one)"
    )]
    Device(usize),
    #[error("the organization's devices hold {0} waits for changes open, the most this service allows; poll instead")]
    Organization(usize),
}

struct OrgWaits {
    head: watch::Sender<u64>,
    waits: usize,
    per_device: HashMap<Uuid, usize>,
}

pub struct ChangeNotifier {
    limits: WaitLimits,
    orgs: Mutex<HashMap<OrgId, OrgWaits>>,
    closing: watch::Sender<bool>,
}

impl ChangeNotifier {
    pub fn new(limits: WaitLimits) -> Self {
        Self { limits, orgs: Mutex::new(HashMap::new()), closing: watch::Sender::new(false) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<OrgId, OrgWaits>> {
        self.orgs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Register a wait of `device` in `org`, within the limits. The ticket wakes on the organization's new
    /// changes and gives its place back when dropped (the answer was sent, or the client went away).
    pub fn register(&self, org: OrgId, device: Uuid) -> Result<WaitTicket<'_>, WaitRefused> {
        let mut orgs = self.lock();
        let entry = orgs.entry(org).or_insert_with(|| OrgWaits {
            head: watch::Sender::new(0),
            waits: 0,
            per_device: HashMap::new(),
        });
        let mine = entry.per_device.get(&device).copied().unwrap_or(0);
        if mine >= self.limits.per_device {
            return Err(WaitRefused::Device(mine));
        }
        if entry.waits >= self.limits.per_org {
            return Err(WaitRefused::Organization(entry.waits));
        }
        entry.waits += 1;
        *entry.per_device.entry(device).or_insert(0) += 1;
        let head = entry.head.subscribe();
        Ok(WaitTicket { notifier: self, org, device, head, closing: self.closing.subscribe() })
    }

    /// `org`'s log now holds a change at `seq`: wake its waits (only its own; no other organization's channel is
    /// touched). Nothing happens when none of its devices waits.
    pub fn advanced(&self, org: OrgId, seq: u64) {
        if let Some(entry) = self.lock().get(&org) {
            entry.head.send_if_modified(|head| {
                let moved = seq > *head;
                *head = (*head).max(seq);
                moved
            });
        }
    }

    /// Waits open now (all organizations).
    pub fn open_waits(&self) -> usize {
        self.lock().values().map(|o| o.waits).sum()
    }

    /// End every wait with nothing new, and every later one at once (the service is shutting down).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    fn release(&self, org: OrgId, device: Uuid) {
        let mut orgs = self.lock();
        let Some(entry) = orgs.get_mut(&org) else { return };
        entry.waits = entry.waits.saturating_sub(1);
        if let Some(n) = entry.per_device.get_mut(&device) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                entry.per_device.remove(&device);
            }
        }
        if entry.waits == 0 {
            orgs.remove(&org);
        }
    }
}

/// One open wait; dropping it gives its place back.
pub struct WaitTicket<'a> {
    notifier: &'a ChangeNotifier,
    org: OrgId,
    device: Uuid,
    head: watch::Receiver<u64>,
    closing: watch::Receiver<bool>,
}

impl WaitTicket<'_> {
    /// Resolves with true once this process stores a change of the organization past `since`, or with false when
    /// the service shuts down. Bound it with a timer.
    pub async fn changed_past(&mut self, since: u64) -> bool {
        tokio::select! {
            seen = self.head.wait_for(|head| *head > since) => seen.is_ok(),
            _ = self.closing.wait_for(|closing| *closing) => false,
        }
    }
}

impl Drop for WaitTicket<'_> {
    fn drop(&mut self) {
        self.notifier.release(self.org, self.device);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> WaitLimits {
        WaitLimits { per_device: 2, per_org: 3 }
    }

    #[tokio::test]
    async fn a_change_wakes_only_its_own_organizations_waits() {
        let n = ChangeNotifier::new(limits());
        let (a, b) = (OrgId::new(), OrgId::new());
        let mut wait_a = n.register(a, Uuid::now_v7()).unwrap();
        n.advanced(b, 50);
        n.advanced(a, 3);
        assert!(wait_a.changed_past(2).await, "a's own change past its cursor wakes it");
        let waiting = n.register(a, Uuid::now_v7()).unwrap();
        n.advanced(b, 99);
        assert!(!waiting.head.has_changed().unwrap(), "b's change never reaches a's channel");
    }

    #[tokio::test]
    async fn limits_hold_per_device_and_per_organization_and_places_come_back() {
        let n = ChangeNotifier::new(limits());
        let org = OrgId::new();
        let device = Uuid::now_v7();
        let first = n.register(org, device).unwrap();
        let _second = n.register(org, device).unwrap();
        assert_eq!(n.register(org, device).err(), Some(WaitRefused::Device(2)));
        let _other = n.register(org, Uuid::now_v7()).unwrap();
        assert_eq!(n.register(org, Uuid::now_v7()).err(), Some(WaitRefused::Organization(3)));
        assert!(n.register(OrgId::new(), device).is_ok(), "another organization has its own places");
        drop(first);
        let _again = n.register(org, device).unwrap();
        assert_eq!(n.open_waits(), 3);
    }

    #[tokio::test]
    async fn an_organization_without_waits_keeps_no_channel_and_closing_ends_waits_with_nothing_new() {
        let n = ChangeNotifier::new(limits());
        let org = OrgId::new();
        n.advanced(org, 7);
        assert!(n.lock().is_empty(), "a push with nobody waiting creates nothing");
        let mut wait = n.register(org, Uuid::now_v7()).unwrap();
        n.close();
        assert!(!wait.changed_past(0).await);
        drop(wait);
        assert!(n.lock().is_empty());
    }
}
