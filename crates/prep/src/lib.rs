//! Prep Studio: drafting an RFP package. Owns the six artifacts (intake → scope → requirements → evaluation
//! criteria → pricing schedule → milestones), each artifact's state machine (a plain enum and a pure `step`),
//! staleness and approvals bound to content hashes, the seven prompt modules, grounding from the checklist library
//! and the precedent corpus, the drafting run through the model gateway with its red-team critic and budgets, and
//! the exports (DOCX, OCDS 1.1 release; lines for PDF).
//!
//! The package's pure rules (the typed artifacts, the content hash, the business-day calendar, the validators and
//! the one publish gate) live in `pactwise_rules::prep` and are re-exported here; the pre-check is that gate. The
//! model drafts; code checks. The store runs the same gate on what it stores and stays authoritative: nothing here
//! publishes.

pub mod artifact;
pub mod calendar;
pub mod draft;
pub mod export;
pub mod grounding;
pub mod machine;
pub mod package;
pub mod prompts;
pub mod validate;

pub use artifact::{
    ArtifactKind, Criteria, Criterion, Intake, Measure, Milestone, MilestoneKind, Milestones, Need, PriceBasis,
    Pricing, PricingLine, PromptStamp, Requirement, RequirementKind, Requirements, Scope, Slot, SlotError, Timeline,
    Verification,
};
pub use calendar::{BusinessCalendar, milestone_dates};
pub use draft::{DraftProgress, Drafter, MAX_CRITIC_CYCLES, plan, resume};
pub use grounding::Grounding;
pub use machine::{ArtifactState, Command, Event, StepError, Violation, step};
pub use package::{
    Content, DismissError, Finding, FindingStatus, Package, Perspective, RunBudget, RunState, RunStatus, RunStep,
    Severity,
};
pub use validate::{GateViolation, PublishRule, precheck, validate};
