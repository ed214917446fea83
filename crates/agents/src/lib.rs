//! The agent platform's pure core: the registry of the ten agent types ([`registry`]), their thresholds
//! ([`config`], schema-validated, per organization through the api) and the manager's deterministic plan
//! ([`manager::plan`]). No I/O: the organization's records come in through [`manager::OrgRecords`], time through
//! `Clock`. Also what a planned request does when it runs: the plan compiled into an engine graph ([`compile`]), the
//! agents' steps ([`steps`], on the engine through [`run`]), their follow-ups on the task queue ([`tasks`]) and the
//! ranking that recalls memories ([`memory`]).

pub mod compile;
pub mod config;
pub mod draft;
pub mod facts;
pub mod manager;
pub mod memory;
pub mod registry;
pub mod routing_set;
pub mod run;
pub mod steps;
pub mod tasks;

pub use compile::{PLAN_GRAPH, STEPS_CHANNEL, compile};
pub use config::{AgentsConfig, ConfigProblem, ConfigRefused};
pub use draft::Drafted;
pub use facts::{ContractFacts, Facts, ItemFacts, VendorFacts};
pub use manager::{
    Context, ContractMention, DateMention, Entities, KnownContract, KnownVendor, MemoryRecords, Money, OrgRecords,
    Outcome, Plan, PlanStep, RequestType, Signal, Urgency, VendorIndex, VendorMention, amounts_in, money_words, plan,
};
pub use registry::{AgentSpec, AgentType, registry};
pub use steps::{FollowUp, RunInput, StepOutput, StepStatus};
