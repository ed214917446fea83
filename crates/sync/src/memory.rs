//! An in-memory [`LocalReplica`]: the reference implementation of the replica contract, used by tests and
//! benchmarks. One mutex stands in for the store's transaction: each method's changes happen all at once.

use crate::approval::{ApprovalStep, ApprovalView};
use crate::error::ReplicaError;
use crate::hlc::HlcClock;
use crate::model::{RecordState, SyncedModel};
use crate::replica::LocalReplica;
use crate::wire::{ApprovalDecision, Change, ChangeBody, PullResponse, PushResult};
use pactwise_domain::{Clock, Role};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use uuid::Uuid;

/// An appended event as the replica keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    pub change_id: Uuid,
    pub record_id: String,
    pub hlc: crate::Hlc,
    pub event: Value,
}

#[derive(Debug, Default)]
struct Inner {
    records: BTreeMap<(SyncedModel, String), RecordState>,
    events: BTreeMap<SyncedModel, Vec<StoredEvent>>,
    event_ids: HashSet<Uuid>,
    approvals: BTreeMap<String, ApprovalStep>,
    outbox: VecDeque<Change>,
    cursor: u64,
}

pub struct MemoryReplica {
    clock: Arc<dyn Clock>,
    hlc: Mutex<HlcClock>,
    inner: Mutex<Inner>,
}

impl MemoryReplica {
    /// A replica for one device (`node` is the device's id in HLC timestamps).
    pub fn new(node: Uuid, clock: Arc<dyn Clock>) -> Self {
        Self { clock, hlc: Mutex::new(HlcClock::new(node)), inner: Mutex::new(Inner::default()) }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.clock.now().timestamp_millis()).unwrap_or(0)
    }

    fn stamp(&self) -> crate::Hlc {
        let now = self.now_ms();
        self.hlc.lock().unwrap_or_else(|e| e.into_inner()).tick(now)
    }

    /// A local edit of ordinary fields: applied locally and queued, together.
    pub fn set_fields(&self, model: SyncedModel, record_id: &str, fields: BTreeMap<String, Value>) -> Change {
        let hlc = self.stamp();
        let change = Change {
            id: Uuid::now_v7(),
            model,
            record_id: record_id.to_string(),
            hlc,
            body: ChangeBody::Fields { fields },
        };
        let mut inner = self.inner();
        apply_change(&mut inner, &change, None);
        inner.outbox.push_back(change.clone());
        change
    }

    /// A local append-only event (a correction, an audit entry).
    pub fn append_event(&self, model: SyncedModel, record_id: &str, event: Value) -> Change {
        let hlc = self.stamp();
        let change = Change {
            id: Uuid::now_v7(),
            model,
            record_id: record_id.to_string(),
            hlc,
            body: ChangeBody::Event { event },
        };
        let mut inner = self.inner();
        apply_change(&mut inner, &change, None);
        inner.outbox.push_back(change.clone());
        change
    }

    /// An approval decided on this desktop, for a step open to owners, admins and approvers: pending until the
    /// server stamps or refuses it.
    pub fn request_approval(&self, step_id: &str, decision: ApprovalDecision) -> Change {
        self.request_approval_of(step_id, decision, &[Role::Owner, Role::Admin, Role::Approver])
    }

    /// The same, for a step open to `eligible_roles`.
    pub fn request_approval_of(&self, step_id: &str, decision: ApprovalDecision, eligible_roles: &[Role]) -> Change {
        let hlc = self.stamp();
        let change = Change {
            id: Uuid::now_v7(),
            model: SyncedModel::ApprovalDecision,
            record_id: step_id.to_string(),
            hlc,
            body: ChangeBody::ApprovalRequest {
                decision,
                note: None,
                eligible_roles: eligible_roles.to_vec(),
                choice: None,
                decider_name: None,
            },
        };
        let mut inner = self.inner();
        inner.approvals.entry(step_id.to_string()).or_default().request(change.id, decision);
        inner.outbox.push_back(change.clone());
        change
    }

    pub fn record(&self, model: SyncedModel, record_id: &str) -> Option<BTreeMap<String, Value>> {
        self.inner().records.get(&(model, record_id.to_string())).map(RecordState::values)
    }

    /// Every record of every model with its merged fields (for comparing replicas).
    pub fn snapshot(&self) -> BTreeMap<(SyncedModel, String), BTreeMap<String, Value>> {
        self.inner().records.iter().map(|(k, v)| (k.clone(), v.values())).collect()
    }

    /// A model's events in HLC order (ties by id), the order every replica shows.
    pub fn events(&self, model: SyncedModel) -> Vec<StoredEvent> {
        let mut events = self.inner().events.get(&model).cloned().unwrap_or_default();
        events.sort_by_key(|e| (e.hlc, e.change_id));
        events
    }

    pub fn approval(&self, step_id: &str) -> Option<ApprovalView> {
        self.inner().approvals.get(step_id).and_then(ApprovalStep::view)
    }

    pub fn approval_step(&self, step_id: &str) -> Option<ApprovalStep> {
        self.inner().approvals.get(step_id).cloned()
    }
}

fn apply_change(inner: &mut Inner, change: &Change, outcome: Option<(u64, &crate::ApprovalOutcome)>) {
    match &change.body {
        ChangeBody::Fields { fields } => {
            inner.records.entry((change.model, change.record_id.clone())).or_default().merge(fields, change.hlc);
        }
        ChangeBody::Event { event } => {
            if inner.event_ids.insert(change.id) {
                inner.events.entry(change.model).or_default().push(StoredEvent {
                    change_id: change.id,
                    record_id: change.record_id.clone(),
                    hlc: change.hlc,
                    event: event.clone(),
                });
            }
        }
        ChangeBody::ApprovalRequest { .. } => {
            if let Some((seq, outcome)) = outcome {
                inner.approvals.entry(change.record_id.clone()).or_default().apply(change.id, seq, outcome);
            }
        }
    }
}

impl LocalReplica for MemoryReplica {
    fn outbox(&self, limit: usize) -> Result<Vec<Change>, ReplicaError> {
        Ok(self.inner().outbox.iter().take(limit).cloned().collect())
    }

    fn pending_count(&self) -> Result<u64, ReplicaError> {
        Ok(self.inner().outbox.len() as u64)
    }

    fn mark_pushed(&self, results: &[PushResult]) -> Result<(), ReplicaError> {
        let done: HashSet<Uuid> = results.iter().map(|r| r.change_id).collect();
        self.inner().outbox.retain(|c| !done.contains(&c.id));
        Ok(())
    }

    fn cursor(&self) -> Result<u64, ReplicaError> {
        Ok(self.inner().cursor)
    }

    fn apply_remote(&self, page: &PullResponse, now_ms: u64) -> Result<(), ReplicaError> {
        let mut hlc = self.hlc.lock().unwrap_or_else(|e| e.into_inner());
        let mut inner = self.inner();
        for remote in &page.changes {
            if remote.seq <= inner.cursor {
                continue;
            }
            hlc.observe(&remote.change.hlc, now_ms);
            apply_change(&mut inner, &remote.change, remote.outcome.as_ref().map(|o| (remote.seq, o)));
        }
        inner.cursor = inner.cursor.max(page.next_cursor);
        Ok(())
    }
}
