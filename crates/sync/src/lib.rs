//! Sync between an organization's desktops and the hosted sync service. Owns the versioned wire format (`/api/v1`
//! request and response types, shared with `pactwise-sync-server`), the hybrid logical clock, the synced models with
//! their stable names and conflict rules (last-writer-wins fields; append-only corrections, audit entries and
//! approval decisions; approvals that stay requests until the server stamps them), the client's push/pull protocol
//! as a pure state machine with a thin async driver (retry with exponential backoff after any failure), the
//! content-addressed blob transfer (hash-verified, resumable, capped download), the `LocalReplica` trait the desktop
//! store implements (with an in-memory replica for tests) and the keychain entry for the device token. Requests go
//! over `https://` (plain `http://` only to this computer). Shared rules (last-writer-wins, approval eligibility,
//! the role table) come from `pactwise-rules`.
//!
//! Time comes in through `pactwise_domain::Clock`; nothing here reads the system clock inside logic.

pub mod approval;
pub mod blob;
pub mod client;
pub mod error;
pub mod hlc;
pub mod http;
pub mod lease;
pub mod machine;
pub mod members;
pub mod memory;
pub mod model;
pub mod replica;
pub mod shared;
pub mod token;
pub mod wire;

pub use approval::{ApprovalStep, ApprovalView, RequestState, StampedDecision};
pub use client::{
    HookFuture, LoopProgress, NoHooks, Pause, RoundHooks, SyncClient, SyncConfig, SyncStatus, TokioPause, WokenBy,
};
pub use error::{ReplicaError, SyncError};
pub use hlc::{Hlc, HlcClock};
pub use http::{HttpApi, TlsTrust, check_endpoint};
pub use memory::MemoryReplica;
pub use model::{ConflictRule, RecordState, SyncedModel};
pub use replica::LocalReplica;
pub use shared::{SharedApproval, SharedRun, SharedRunEvent, SharedStepStatus};
pub use token::{DeviceToken, KeyringTokenStore, MemoryTokenStore, TokenStore, TokenStoreError};
pub use wire::{
    API_PREFIX, ApprovalDecision, ApprovalOutcome, Change, ChangeBody, ErrorBody, ErrorDetail, MAX_BLOB_BYTES,
    PullResponse, PushRequest, PushResponse, PushResult, RefusalReason, ServerChange, SessionInfo, SignInRequest,
    SignInResponse, WaitResponse,
};
