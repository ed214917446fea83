//! Encoding local changes: the store's [`ChangeEncoder`] stamps each local change of a synced record with the
//! organization's HLC and serializes it as the wire's `Change`, and wakes the running loop ([`LoopSlot`]).

use super::replica::StoreReplica;
use crate::ApiError;
use pactwise_store::{ChangeEncoder, ChangePayload, EncodedChange, LocalChange, NewOutboxEntry};
use pactwise_sync::wire::ChangeBody;
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

impl ChangeEncoder for WireEncoder {
    fn encode(&self, local: &LocalChange<'_>) -> Result<EncodedChange, String> {
        let model: SyncedModel = local.model.parse()?;
        let node = Uuid::parse_str(local.node_id).map_err(|_| format!("bad HLC node id {:?}", local.node_id))?;
        let mut clock = HlcClock::from_parts(node, local.clock.0, local.clock.1);
        let hlc = clock.tick(local.now_ms);
        let body = match local.payload {
            ChangePayload::Fields(fields) => ChangeBody::Fields { fields: fields.clone() },
            ChangePayload::Event(event) => ChangeBody::Event { event: event.clone() },
        };
        let change = Change { id: Uuid::now_v7(), model, record_id: local.record_id.to_string(), hlc, body };
        change.check()?;
        let change_json = serde_json::to_string(&change).map_err(|e| e.to_string())?;
        self.slot.wake();
        Ok(EncodedChange {
            entry: NewOutboxEntry {
                change_id: change.id.to_string(),
                model: local.model.to_string(),
                record_id: change.record_id,
                change_json,
            },
            hlc: hlc.to_sortable(),
            clock: (hlc.wall_ms, hlc.counter),
        })
    }
}
