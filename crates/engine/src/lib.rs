//! The durable state-graph engine. Owns graph definitions as data ([`graph`]), the pure run state machine
//! ([`machine`]: Pregel-style super-steps over typed nodes — agent, condition, approval, wait, subgraph, compensate —
//! with reducer channels and conditional edges), and the thin driver ([`Engine`]) that runs handlers and writes each
//! super-step with its checkpoint, event log, approvals, task handoffs and child runs in one transaction, grouping
//! many runs into one commit. Retries with exponential backoff and saga compensation (after a failed step, and when
//! the watchdog stops a run) are decided by the machine; leases, the watchdog's queries, approvals' authorization and
//! the task queue live in the store (`pactwise-store`), whose
//! platform operations need a `PlatformCredential`. Agent nodes may ask the model through the gateway
//! ([`model::GatewayModel`]) and fall back to rules without it.

mod driver;
mod error;
pub mod graph;
pub mod machine;
pub mod model;
mod registry;

pub use driver::{Advanced, Engine};
pub use error::EngineError;
pub use graph::{Edge, FieldKind, GraphDef, InputField, ModelSpec, NodeDef, NodeKind, Reducer, RetryPolicy};
pub use machine::{Handoff, NodeFailure, NodeOutput, Phase, RunState};
pub use model::{AskFailure, GatewayModel, ModelPort, ToolAsk};
pub use registry::{DocumentText, NodeContext, NodeHandler, Records, Registry};
