//! Encoding local changes: the store's [`ChangeEncoder`] stamps each local change of a synced record with the
//! organization's HLC and serializes it as the wire's `Change`, and wakes the running loop ([`LoopSlot`]).

use super::replica::StoreReplica;
use crate::ApiError;
use pactwise_store::{ChangeEncoder, ChangePayload, EncodedChange, LocalChange, NewOutboxEntry};
use pactwise_sync::wire::{ApprovalDecision, ChangeBody};
use pactwise_sync::{Change, HlcClock, SyncClient, SyncedModel};
use std::sync::{Arc, Mutex, Weak};
use uuid::Uuid;

/// The running loop, as far as the rest of the process needs it: to wake it and to read its status; or why it
/// could not start (a token missing from the keychain, say), for the status line.
#[derive(Clone, Default)]
pub(crate) struct LoopSlot(Arc<Mutex<SlotState>>);

#[derive(Default)]
pub(crate) struct SlotState {
    pub(crate) running: Option<Running>,
    pub(crate) start_error: Option<ApiError>,
}

pub(crate) struct Running {
    pub(crate) client: Weak<SyncClient<StoreReplica>>,
    /// Dropping it stops the loop.
    pub(crate) _stop: tokio::sync::oneshot::Sender<()>,
}

impl LoopSlot {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn client(&self) -> Option<Arc<SyncClient<StoreReplica>>> {
        self.lock().running.as_ref().and_then(|r| r.client.upgrade())
    }

    pub(crate) fn start_error(&self) -> Option<ApiError> {
        self.lock().start_error.clone()
    }

    pub(crate) fn wake(&self) {
        if let Some(client) = self.client() {
            client.wake();
        }
    }

    pub(crate) fn stop(&self) {
        *self.lock() = SlotState::default();
    }
}

/// The store's [`ChangeEncoder`]: stamps a local change with the organization's HLC and serializes it as the wire's
/// `Change`. Each encoded change also wakes the running sync loop (the store thread commits before the loop can read
/// the outbox, since every read goes through the same thread).
pub(crate) struct WireEncoder {
    slot: LoopSlot,
}

impl WireEncoder {
    pub(crate) fn new(slot: LoopSlot) -> Self {
        WireEncoder { slot }
    }
}

/// Stamps one change with the organization's HLC (node id and last reading) and serializes it as the wire's
/// `Change`, checked like the service checks it. Used for every local change: the store's hook and the publisher.
pub(crate) fn encode_change(
    model: SyncedModel,
    record_id: &str,
    body: ChangeBody,
    node_id: &str,
    clock: (u64, u32),
    now_ms: u64,
) -> Result<EncodedChange, String> {
    let node = Uuid::parse_str(node_id).map_err(|_| format!("bad HLC node id {node_id:?}"))?;
    let mut hlc_clock = HlcClock::from_parts(node, clock.0, clock.1);
    let hlc = hlc_clock.tick(now_ms);
    let change = Change { id: Uuid::now_v7(), model, record_id: record_id.to_string(), hlc, body };
    change.check()?;
    let change_json = serde_json::to_string(&change).map_err(|e| e.to_string())?;
    Ok(EncodedChange {
        entry: NewOutboxEntry {
            change_id: change.id.to_string(),
            model: model.as_str().to_string(),
            record_id: change.record_id,
            change_json,
        },
        hlc: hlc.to_sortable(),
        clock: (hlc.wall_ms, hlc.counter),
    })
}

impl ChangeEncoder for WireEncoder {
    fn encode(&self, local: &LocalChange<'_>) -> Result<EncodedChange, String> {
        let model: SyncedModel = local.model.parse()?;
        let body = match local.payload {
            ChangePayload::Fields(fields) => ChangeBody::Fields { fields: fields.clone() },
            ChangePayload::Event(event) => ChangeBody::Event { event: event.clone() },
            ChangePayload::ApprovalRequest(r) => ChangeBody::ApprovalRequest {
                decision: if r.approve { ApprovalDecision::Approve } else { ApprovalDecision::Reject },
                note: Some(r.note.clone()),
                eligible_roles: r.eligible_roles.clone(),
                choice: r.choice.clone(),
                decider_name: r.decider_name.clone(),
            },
        };
        let encoded = encode_change(model, local.record_id, body, local.node_id, local.clock, local.now_ms)?;
        self.slot.wake();
        Ok(encoded)
    }
}
