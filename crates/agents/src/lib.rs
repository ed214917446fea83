//! The agent platform's pure core: the registry of the ten agent types ([`registry`]), their thresholds
//! ([`config`], schema-validated, per organization through the api) and the manager's deterministic plan
//! ([`manager::plan`]). No I/O: the organization's records come in through [`manager::OrgRecords`], time through
//! `Clock`.

pub mod config;
pub mod manager;
pub mod registry;
pub mod routing_set;

pub use config::{AgentsConfig, ConfigProblem, ConfigRefused};
pub use manager::{
    Context, ContractMention, DateMention, Entities, KnownContract, KnownVendor, MemoryRecords, Money, OrgRecords,
    Outcome, Plan, PlanStep, RequestType, Signal, Urgency, VendorIndex, VendorMention, plan,
};
pub use registry::{AgentSpec, AgentType, registry};
