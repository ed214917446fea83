//! The RFP package's pure rules, in one home for Prep Studio (`pactwise-prep`) and the store: the six artifacts as
//! typed content with their states, the content hash approvals are bound to, the business-day calendar of the
//! milestones (weekends, the country's public holidays, the organization's own), the words people read for each enum
//! (`labels`), the validators, and the one publish gate. The store reads what it stores into these types
//! ([`stored_artifacts`]) and calls the same [`publish_gate`] inside its transaction, so it stays authoritative
//! with no copy of the rules.

pub mod artifact;
pub mod calendar;
pub mod gate;
pub mod hash;
pub mod labels;
pub mod lease;

pub use artifact::{
    ArtifactKind, ArtifactState, Artifacts, Criteria, Criterion, Intake, Measure, Milestone, MilestoneKind, Milestones,
    Need, PriceBasis, Pricing, PricingLine, PromptStamp, Requirement, RequirementKind, Requirements, Scope, Slot,
    SlotError, SlotView, Timeline, Verification, Violation,
};
pub use calendar::{
    BusinessCalendar, DEADLINE_TIME_UTC, PUBLIC_HOLIDAY_COUNTRIES, PublicHolidays, UnknownCountry, deadline_at,
    is_business_day, milestone_dates, milestones_with_rationales,
};
pub use gate::{
    GateViolation, OPEN_AMOUNT_MARKERS, PublishRule, RULE_INTAKE_INCOMPLETE, RULE_MILESTONE_NOT_COMPUTED,
    RULE_SCOPE_INCOMPLETE, RULE_UNKNOWN_NEED, WEIGHT_TOTAL_BP, has_open_amount_marker, publish_gate, stale_approvals,
    stored_artifacts, validate,
};
pub use hash::{content_hash, hash_content};
pub use labels::{Label, category_label, identifier_in};

#[cfg(test)]
pub(crate) mod tests_support {
    use super::artifact::{Intake, Need, Timeline};

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
            country: None,
            contact: None,
            checklist_type: None,
        }
    }
}
