//! Prep Studio: drafting an RFP package. Owns the six artifacts (intake → scope → requirements → evaluation
//! criteria → pricing schedule → milestones) as typed content, each artifact's state machine (a plain enum and a
//! pure `step`), staleness and approvals bound to content hashes, the deterministic validators and the publish
//! pre-check that mirrors the store's gate rule for rule, milestone dates on a business-day calendar, the seven
//! prompt modules, grounding from the checklist library and the precedent corpus, the drafting run through the
//! model gateway with its red-team critic and budgets, and the exports (DOCX, OCDS 1.1 release; lines for PDF).
//!
//! The model drafts; code checks. The store's publish gate (`pactwise_store::prep`) stays authoritative: nothing
//! here publishes.

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
pub use validate::{precheck, validate};

#[cfg(test)]
pub(crate) mod tests_support {
    use crate::artifact::{Intake, Need, Timeline};

    pub fn intake_with(timeline: Timeline) -> Intake {
        Intake {
            title: "Fleet telematics".into(),
            buyer: "City of Example".into(),
            brief: "We need GPS tracking for 120 vehicles.".into(),
            needs: vec![Need { id: "N1".into(), text: "Track vehicle positions".into() }],
            category: "services".into(),
            currency: "EUR".into(),
            budget_ceiling_minor: Some(25_000_000),
            timeline,
            holidays: vec![],
            checklist_type: None,
        }
    }
}
