//! The six artifacts of an RFP package as typed content, each in a slot with its state, hash and stamp. The
//! serialized shape is what `pactwise-prep` stores and what the store reads back for the publish gate.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The artifacts, in dependency order: each depends on every one before it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    Intake,
    Scope,
    Requirements,
    Criteria,
    Pricing,
    Milestones,
}

impl ArtifactKind {
    pub const ALL: [ArtifactKind; 6] = [
        ArtifactKind::Intake,
        ArtifactKind::Scope,
        ArtifactKind::Requirements,
        ArtifactKind::Criteria,
        ArtifactKind::Pricing,
        ArtifactKind::Milestones,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::Intake => "intake",
            ArtifactKind::Scope => "scope",
            ArtifactKind::Requirements => "requirements",
            ArtifactKind::Criteria => "criteria",
            ArtifactKind::Pricing => "pricing",
            ArtifactKind::Milestones => "milestones",
        }
    }

    pub fn parse(text: &str) -> Option<ArtifactKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }

    /// Every artifact that depends on this one (all later ones), in order.
    pub fn downstream(self) -> &'static [ArtifactKind] {
        &Self::ALL[self.index() + 1..]
    }

    /// This artifact and everything downstream of it.
    pub fn and_downstream(self) -> &'static [ArtifactKind] {
        &Self::ALL[self.index()..]
    }
}

/// One need the buyer states; requirements and scope say which needs they serve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Need {
    /// A short code such as `N1`.
    pub id: String,
    pub text: String,
}

/// Business days between the milestones; dates are computed from these in code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Timeline {
    /// The day the RFP is published (moved to the next business day if it is not one).
    pub publication: NaiveDate,
    /// Business days from publication to the questions deadline.
    pub question_days: u32,
    /// Business days from the questions deadline to the submission deadline.
    pub submission_days: u32,
    /// Business days of evaluation after the submission deadline.
    pub evaluation_days: u32,
    /// Business days from the end of evaluation to the award.
    pub award_days: u32,
    /// Business days from the award to the contract start.
    pub contract_start_days: u32,
}

/// What the buyer needs: entered by the buyer (the intake module only proposes `needs` from the brief).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Intake {
    pub title: String,
    /// The buying organization's name as it appears on the RFP.
    pub buyer: String,
    /// The buyer's description in their own words.
    pub brief: String,
    #[serde(default)]
    pub needs: Vec<Need>,
    /// `goods`, `services` or `works`.
    pub category: String,
    /// ISO 4217 code.
    pub currency: String,
    /// The budget ceiling in minor units (cents), if the buyer states one.
    #[serde(default)]
    pub budget_ceiling_minor: Option<u64>,
    pub timeline: Timeline,
    /// The organization's own non-working days besides weekends (and besides the country's public holidays).
    #[serde(default)]
    pub holidays: Vec<NaiveDate>,
    /// The buyer's country, ISO 3166-1 alpha-2 (e.g. `DE`): its public holidays are not business days either
    /// (`calendar::PUBLIC_HOLIDAY_COUNTRIES` lists those known). None: weekends and `holidays` only. Left out of the
    /// JSON when none, so the content hash of an intake written before this field existed does not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// Who answers vendors' questions, as printed on the RFP (a name and an email address). None: the RFP says a
    /// contact is still to be added. Left out of the JSON when none, like `country`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<String>,
    /// A contract type of the checklist library to ground requirements in (e.g. `saas_subscription`).
    #[serde(default)]
    pub checklist_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Scope {
    pub summary: String,
    pub in_scope: Vec<String>,
    pub out_of_scope: Vec<String>,
    pub deliverables: Vec<String>,
    /// The intake needs this scope covers.
    pub need_ids: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RequirementKind {
    /// Pass or fail; not scored.
    Mandatory,
    /// Scored under exactly one evaluation criterion; must be measurable.
    Scored,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    Test,
    Demonstration,
    Document,
    Reference,
    Inspection,
}

/// How a scored requirement is measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Measure {
    /// What is measured, e.g. "monthly availability".
    pub metric: String,
    /// The level to meet, e.g. ">= 99.9 %".
    pub threshold: String,
    pub verification: Verification,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Requirement {
    /// Unique within the package, e.g. `R-07`.
    pub code: String,
    pub text: String,
    pub kind: RequirementKind,
    /// The intake needs it serves.
    #[serde(default)]
    pub need_ids: Vec<String>,
    #[serde(default)]
    pub measure: Option<Measure>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Requirements {
    pub items: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Criterion {
    pub id: String,
    pub name: String,
    pub description: String,
    /// Weight in basis points: 10,000 is 100 %. Weights of all criteria sum to exactly 10,000.
    pub weight_bp: u32,
    /// The scored requirements evaluated under this criterion.
    pub requirement_codes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Criteria {
    pub criteria: Vec<Criterion>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PriceBasis {
    FixedPrice,
    PerUnit,
    TimeAndMaterials,
    Subscription,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct PricingLine {
    pub code: String,
    pub description: String,
    /// What one unit is, e.g. "vehicle-month".
    pub unit: String,
    /// How many units are priced, when known.
    #[serde(default)]
    pub quantity: Option<u32>,
    #[serde(default)]
    pub basis: Option<PriceBasis>,
    /// The amount is left open ("to be determined"); such a line cannot be priced.
    #[serde(default)]
    pub open_amount: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Pricing {
    pub currency: String,
    pub lines: Vec<PricingLine>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum MilestoneKind {
    Publication,
    QuestionsDeadline,
    SubmissionDeadline,
    Evaluation,
    Award,
    ContractStart,
}

impl MilestoneKind {
    pub const ALL: [MilestoneKind; 6] = [
        MilestoneKind::Publication,
        MilestoneKind::QuestionsDeadline,
        MilestoneKind::SubmissionDeadline,
        MilestoneKind::Evaluation,
        MilestoneKind::Award,
        MilestoneKind::ContractStart,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MilestoneKind::Publication => "publication",
            MilestoneKind::QuestionsDeadline => "questions_deadline",
            MilestoneKind::SubmissionDeadline => "submission_deadline",
            MilestoneKind::Evaluation => "evaluation",
            MilestoneKind::Award => "award",
            MilestoneKind::ContractStart => "contract_start",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            MilestoneKind::Publication => "Publication",
            MilestoneKind::QuestionsDeadline => "Deadline for questions",
            MilestoneKind::SubmissionDeadline => "Submission deadline",
            MilestoneKind::Evaluation => "End of evaluation",
            MilestoneKind::Award => "Award",
            MilestoneKind::ContractStart => "Contract start",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Milestone {
    pub kind: MilestoneKind,
    /// Computed in code from the intake's timeline on the business-day calendar.
    pub date: NaiveDate,
    /// Written by the model (or the buyer): why this milestone sits where it does.
    pub rationale: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, specta::Type)]
pub struct Milestones {
    pub items: Vec<Milestone>,
}

/// Which prompt module produced a piece of content, stamped with the module's content hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PromptStamp {
    pub module: String,
    pub version: u32,
    pub hash: String,
}

/// An error shown on an artifact (a refused or truncated draft); the content stays as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SlotError {
    pub code: pactwise_domain::ErrorCode,
    pub message: String,
}

/// A validator's finding: a rule with a stable name, the item it is about, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type)]
pub struct Violation {
    /// Stable name (the publish gate's rules use the names of `PublishRule`).
    pub rule: String,
    pub artifact: ArtifactKind,
    pub subject: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ArtifactState {
    Empty,
    /// A model draft is in flight; `previous` is restored if it fails.
    Drafting {
        previous: Box<ArtifactState>,
    },
    Drafted,
    Invalid {
        errors: Vec<Violation>,
    },
    Valid,
    /// Approved by the buyer, bound to the hash of the content they saw.
    Approved {
        hash: String,
    },
    /// Something upstream changed after this was drafted; approval is gone until it is validated and approved again.
    Stale,
}

impl ArtifactState {
    pub fn name(&self) -> &'static str {
        match self {
            ArtifactState::Empty => "empty",
            ArtifactState::Drafting { .. } => "drafting",
            ArtifactState::Drafted => "drafted",
            ArtifactState::Invalid { .. } => "invalid",
            ArtifactState::Valid => "valid",
            ArtifactState::Approved { .. } => "approved",
            ArtifactState::Stale => "stale",
        }
    }

    pub fn is_approved(&self) -> bool {
        matches!(self, ArtifactState::Approved { .. })
    }
}

/// One artifact: its state, its content (none before the first draft), the hash of that content, and the prompt
/// module that drafted it (none when a person wrote it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Slot<T> {
    pub state: ArtifactState,
    pub content: Option<T>,
    pub content_hash: Option<String>,
    pub prompt: Option<PromptStamp>,
    pub error: Option<SlotError>,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot { state: ArtifactState::Empty, content: None, content_hash: None, prompt: None, error: None }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, specta::Type)]
pub struct Artifacts {
    pub intake: Slot<Intake>,
    pub scope: Slot<Scope>,
    pub requirements: Slot<Requirements>,
    pub criteria: Slot<Criteria>,
    pub pricing: Slot<Pricing>,
    pub milestones: Slot<Milestones>,
}

/// The state and bookkeeping of an artifact, whatever its content type.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotView {
    pub kind: ArtifactKind,
    pub state: ArtifactState,
    pub content_hash: Option<String>,
    pub prompt: Option<PromptStamp>,
    pub error: Option<SlotError>,
    pub content: Option<serde_json::Value>,
}

macro_rules! each_slot {
    ($artifacts:expr, $kind:expr, |$slot:ident| $body:expr) => {
        match $kind {
            ArtifactKind::Intake => {
                let $slot = &mut $artifacts.intake;
                $body
            }
            ArtifactKind::Scope => {
                let $slot = &mut $artifacts.scope;
                $body
            }
            ArtifactKind::Requirements => {
                let $slot = &mut $artifacts.requirements;
                $body
            }
            ArtifactKind::Criteria => {
                let $slot = &mut $artifacts.criteria;
                $body
            }
            ArtifactKind::Pricing => {
                let $slot = &mut $artifacts.pricing;
                $body
            }
            ArtifactKind::Milestones => {
                let $slot = &mut $artifacts.milestones;
                $body
            }
        }
    };
}

impl Artifacts {
    pub fn state(&self, kind: ArtifactKind) -> &ArtifactState {
        match kind {
            ArtifactKind::Intake => &self.intake.state,
            ArtifactKind::Scope => &self.scope.state,
            ArtifactKind::Requirements => &self.requirements.state,
            ArtifactKind::Criteria => &self.criteria.state,
            ArtifactKind::Pricing => &self.pricing.state,
            ArtifactKind::Milestones => &self.milestones.state,
        }
    }

    /// Sets an artifact's state (the machine's `step` decides which; `pactwise-prep`'s package calls this).
    pub fn set_state(&mut self, kind: ArtifactKind, state: ArtifactState) {
        each_slot!(self, kind, |slot| slot.state = state)
    }

    pub fn set_error(&mut self, kind: ArtifactKind, error: Option<SlotError>) {
        each_slot!(self, kind, |slot| slot.error = error)
    }

    pub fn content_hash(&self, kind: ArtifactKind) -> Option<String> {
        self.view(kind).content_hash
    }

    /// The artifact's content as JSON (what the gate and the hash see).
    pub fn content_json(&self, kind: ArtifactKind) -> Option<serde_json::Value> {
        match kind {
            ArtifactKind::Intake => self.intake.content.as_ref().and_then(|c| serde_json::to_value(c).ok()),
            ArtifactKind::Scope => self.scope.content.as_ref().and_then(|c| serde_json::to_value(c).ok()),
            ArtifactKind::Requirements => self.requirements.content.as_ref().and_then(|c| serde_json::to_value(c).ok()),
            ArtifactKind::Criteria => self.criteria.content.as_ref().and_then(|c| serde_json::to_value(c).ok()),
            ArtifactKind::Pricing => self.pricing.content.as_ref().and_then(|c| serde_json::to_value(c).ok()),
            ArtifactKind::Milestones => self.milestones.content.as_ref().and_then(|c| serde_json::to_value(c).ok()),
        }
    }

    pub fn view(&self, kind: ArtifactKind) -> SlotView {
        let (state, content_hash, prompt, error) = match kind {
            ArtifactKind::Intake => {
                (&self.intake.state, &self.intake.content_hash, &self.intake.prompt, &self.intake.error)
            }
            ArtifactKind::Scope => (&self.scope.state, &self.scope.content_hash, &self.scope.prompt, &self.scope.error),
            ArtifactKind::Requirements => (
                &self.requirements.state,
                &self.requirements.content_hash,
                &self.requirements.prompt,
                &self.requirements.error,
            ),
            ArtifactKind::Criteria => {
                (&self.criteria.state, &self.criteria.content_hash, &self.criteria.prompt, &self.criteria.error)
            }
            ArtifactKind::Pricing => {
                (&self.pricing.state, &self.pricing.content_hash, &self.pricing.prompt, &self.pricing.error)
            }
            ArtifactKind::Milestones => {
                (&self.milestones.state, &self.milestones.content_hash, &self.milestones.prompt, &self.milestones.error)
            }
        };
        SlotView {
            kind,
            state: state.clone(),
            content_hash: content_hash.clone(),
            prompt: prompt.clone(),
            error: error.clone(),
            content: self.content_json(kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::prep::hash::hash_content;

    #[test]
    fn an_intake_without_country_or_contact_serialises_as_before_so_its_hash_and_approval_stay() {
        let mut intake = crate::prep::tests_support::intake_with(super::Timeline {
            publication: chrono::NaiveDate::from_ymd_opt(2027, 1, 4).unwrap(),
            question_days: 5,
            submission_days: 10,
            evaluation_days: 5,
            award_days: 5,
            contract_start_days: 5,
        });
        let json = serde_json::to_value(&intake).unwrap();
        assert!(json.get("country").is_none() && json.get("contact").is_none(), "{json}");
        // A package stored before the fields existed reads back with none of them, with the same hash.
        let read: super::Intake = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(read, intake);
        assert_eq!(hash_content(&read), crate::prep::hash::content_hash(&json));
        let before = hash_content(&intake);
        intake.country = Some("DE".into());
        assert_ne!(hash_content(&intake), before, "a country set is part of the approved content");
    }
}
