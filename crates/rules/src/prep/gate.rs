//! The validators and the publish gate, on the typed package. One function per rule: the validators report the
//! rules of one artifact as the buyer edits it, the gate reports every rule of the package before it is published,
//! and the store reads the stored package into these types and calls the same gate inside its transaction.
//!
//! Weights are integers (basis points) summed in a `u64`: no floating point anywhere. The gate's rules have the
//! names of [`PublishRule`]; the validators add a few of their own (intake completeness, unknown needs, milestone
//! dates that differ from the computed ones) that the gate does not need.

use super::artifact::{
    ArtifactKind, ArtifactState, Artifacts, Criterion, Milestone, MilestoneKind, Pricing, RequirementKind,
    Requirements, Slot, Violation,
};
use super::calendar::{BusinessCalendar, PublicHolidays, milestone_dates};
use super::hash::content_hash;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Weights are basis points of the total: 10,000 is 100 %.
pub const WEIGHT_TOTAL_BP: u64 = 10_000;

/// Words that make a pricing line an open amount (compared in lower case, as whole words).
pub const OPEN_AMOUNT_MARKERS: [&str; 5] = ["tbd", "to be determined", "as required", "open amount", "at cost"];

/// Validator-only rules (not part of the publish gate).
pub const RULE_INTAKE_INCOMPLETE: &str = "intake_incomplete";
pub const RULE_UNKNOWN_NEED: &str = "unknown_need";
pub const RULE_SCOPE_INCOMPLETE: &str = "scope_incomplete";
pub const RULE_MILESTONE_NOT_COMPUTED: &str = "milestone_date_not_computed";

/// A rule of the publish gate. Stable names: the UI, the CLI and scripts branch on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PublishRule {
    /// The package lacks an artifact's content, or the stored package does not read as the package format.
    Malformed,
    /// An artifact is not approved.
    NotApproved,
    /// An approval names content that is not the artifact's current content.
    ApprovalOutdated,
    /// Criteria weights do not sum to exactly 100 % (10,000 basis points).
    WeightsNotHundred,
    /// A scored requirement is mapped to no criterion or to several, or a criterion maps an unknown or unscored code.
    ScoredRequirementMapping,
    /// Two requirements share a code.
    DuplicateRequirementCode,
    /// A scored requirement lacks a metric, a threshold or a verification method.
    RequirementNotMeasurable,
    /// A pricing line lacks a unit, a quantity or basis, or leaves its amount open.
    PricingLineNotPriceable,
    /// Milestones are missing, repeated, out of order or not on business days.
    MilestonesInvalid,
}

impl PublishRule {
    pub const ALL: [PublishRule; 9] = [
        PublishRule::Malformed,
        PublishRule::NotApproved,
        PublishRule::ApprovalOutdated,
        PublishRule::WeightsNotHundred,
        PublishRule::ScoredRequirementMapping,
        PublishRule::DuplicateRequirementCode,
        PublishRule::RequirementNotMeasurable,
        PublishRule::PricingLineNotPriceable,
        PublishRule::MilestonesInvalid,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PublishRule::Malformed => "malformed",
            PublishRule::NotApproved => "not_approved",
            PublishRule::ApprovalOutdated => "approval_outdated",
            PublishRule::WeightsNotHundred => "weights_not_hundred",
            PublishRule::ScoredRequirementMapping => "scored_requirement_mapping",
            PublishRule::DuplicateRequirementCode => "duplicate_requirement_code",
            PublishRule::RequirementNotMeasurable => "requirement_not_measurable",
            PublishRule::PricingLineNotPriceable => "pricing_line_not_priceable",
            PublishRule::MilestonesInvalid => "milestones_invalid",
        }
    }
}

/// One failed rule of the gate, with the artifact (`package` for the package as a whole) and the item (a
/// requirement code, a line code, a milestone) it is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GateViolation {
    pub rule: PublishRule,
    pub artifact: String,
    pub subject: Option<String>,
    pub message: String,
}

impl GateViolation {
    fn new(rule: PublishRule, artifact: ArtifactKind, subject: Option<String>, message: String) -> Self {
        GateViolation { rule, artifact: artifact.as_str().to_string(), subject, message }
    }

    fn malformed(artifact: &str, message: String) -> Self {
        GateViolation { rule: PublishRule::Malformed, artifact: artifact.to_string(), subject: None, message }
    }

    /// The same finding as a validator reports it.
    fn into_violation(self, artifact: ArtifactKind) -> Violation {
        Violation { rule: self.rule.as_str().to_string(), artifact, subject: self.subject, message: self.message }
    }
}

/// Does this pricing text leave the amount open (a marker as a whole word)?
pub fn has_open_amount_marker(text: &str) -> bool {
    let lower = text.to_lowercase();
    OPEN_AMOUNT_MARKERS.iter().any(|m| {
        lower.match_indices(m).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + m.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })
}

// ---------------------------------------------------------------------------------------------------------------
// The gate's content rules: one function each, used by the validators and by the gate.

/// Requirement codes are unique; scored requirements are measurable.
fn requirement_rules(requirements: Option<&Requirements>) -> Vec<GateViolation> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for item in requirements.iter().flat_map(|r| r.items.iter()) {
        let code = item.code.trim().to_string();
        if !seen.insert(code.clone()) {
            out.push(GateViolation::new(
                PublishRule::DuplicateRequirementCode,
                ArtifactKind::Requirements,
                Some(code.clone()),
                format!("the requirement code {code:?} is used more than once"),
            ));
        }
        if item.kind == RequirementKind::Scored {
            let measurable =
                item.measure.as_ref().is_some_and(|m| !m.metric.trim().is_empty() && !m.threshold.trim().is_empty());
            if !measurable {
                out.push(GateViolation::new(
                    PublishRule::RequirementNotMeasurable,
                    ArtifactKind::Requirements,
                    Some(code.clone()),
                    format!("scored requirement {code} needs a metric, a threshold and a verification method"),
                ));
            }
        }
    }
    out
}

/// Weights sum to exactly 100 % (no criteria is not 100 %); each scored requirement sits under exactly one criterion
/// and a criterion maps only scored requirements.
fn criteria_rules(criteria: &[Criterion], requirements: Option<&Requirements>) -> Vec<GateViolation> {
    let mut out = Vec::new();
    let total: u64 = criteria.iter().map(|c| u64::from(c.weight_bp)).sum();
    if criteria.is_empty() || total != WEIGHT_TOTAL_BP {
        out.push(GateViolation::new(
            PublishRule::WeightsNotHundred,
            ArtifactKind::Criteria,
            None,
            format!("criteria weights sum to {total} basis points; they must sum to exactly 10000 (100 %)"),
        ));
    }
    let scored: BTreeSet<String> = requirements
        .iter()
        .flat_map(|r| r.items.iter())
        .filter(|r| r.kind == RequirementKind::Scored)
        .map(|r| r.code.trim().to_string())
        .collect();
    let mut mapped: BTreeMap<String, u32> = BTreeMap::new();
    for code in criteria.iter().flat_map(|c| c.requirement_codes.iter()) {
        *mapped.entry(code.trim().to_string()).or_default() += 1;
    }
    for code in &scored {
        let n = mapped.get(code).copied().unwrap_or(0);
        if n != 1 {
            out.push(GateViolation::new(
                PublishRule::ScoredRequirementMapping,
                ArtifactKind::Criteria,
                Some(code.clone()),
                format!("scored requirement {code} is mapped to {n} criteria; it must be mapped to exactly one"),
            ));
        }
    }
    for code in mapped.keys().filter(|c| !scored.contains(*c)) {
        out.push(GateViolation::new(
            PublishRule::ScoredRequirementMapping,
            ArtifactKind::Criteria,
            Some(code.clone()),
            format!("a criterion maps {code:?}, which is not a scored requirement"),
        ));
    }
    out
}

/// Every pricing line has a unit, a quantity or a pricing basis, and no open amount.
fn pricing_rules(pricing: Option<&Pricing>) -> Vec<GateViolation> {
    pricing
        .iter()
        .flat_map(|p| p.lines.iter())
        .filter(|line| {
            let open =
                line.open_amount || has_open_amount_marker(&line.description) || has_open_amount_marker(&line.unit);
            let sized = line.quantity.is_some_and(|q| q > 0) || line.basis.is_some();
            line.unit.trim().is_empty() || !sized || open
        })
        .map(|line| {
            GateViolation::new(
                PublishRule::PricingLineNotPriceable,
                ArtifactKind::Pricing,
                Some(line.code.clone()),
                format!("pricing line {} needs a unit, a quantity or pricing basis, and no open amount", line.code),
            )
        })
        .collect()
}

/// The six milestones once each, in order, each after the one before, on business days (weekends, the intake's
/// holidays and its country's public holidays are not).
fn milestone_rules(items: &[Milestone], artifacts: &Artifacts) -> Vec<GateViolation> {
    let calendar = artifacts.intake.content.as_ref().map(BusinessCalendar::of_intake).unwrap_or_default();
    let mut out = Vec::new();
    let mut previous = None;
    let kinds = MilestoneKind::ALL;
    for (index, kind) in kinds.iter().enumerate() {
        let found: Vec<_> = items.iter().filter(|x| x.kind == *kind).collect();
        let name = kind.as_str();
        let date = found.first().map(|x| x.date);
        let problem = match (found.len(), date) {
            (0, _) => Some(format!("the {name} milestone is missing")),
            (1, Some(d)) if !calendar.is_business_day(d) => Some(format!("the {name} date {d} is not a business day")),
            (1, Some(d)) if previous.is_some_and(|p| d <= p) => {
                Some(format!("the {name} date {d} is not after the {} milestone", kinds[index - 1].as_str()))
            }
            (1, _) => None,
            (n, _) => Some(format!("the {name} milestone appears {n} times")),
        };
        if let Some(message) = problem {
            out.push(GateViolation::new(
                PublishRule::MilestonesInvalid,
                ArtifactKind::Milestones,
                Some(name.into()),
                message,
            ));
        }
        if date.is_some() {
            previous = date;
        }
    }
    if items.len() > kinds.len() {
        out.push(GateViolation::new(
            PublishRule::MilestonesInvalid,
            ArtifactKind::Milestones,
            None,
            format!("{} milestones where six are expected", items.len()),
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------------------------
// The validators: one artifact, as the buyer edits it.

fn v(rule: &str, artifact: ArtifactKind, subject: Option<String>, message: String) -> Violation {
    Violation { rule: rule.to_string(), artifact, subject, message }
}

fn as_violations(gate: Vec<GateViolation>, artifact: ArtifactKind) -> Vec<Violation> {
    gate.into_iter().map(|g| g.into_violation(artifact)).collect()
}

/// Every violation of the artifact's content, given the rest of the package (empty when valid). An artifact with
/// no content yields nothing: it is `empty`, not invalid.
pub fn validate(artifacts: &Artifacts, kind: ArtifactKind) -> Vec<Violation> {
    let mut out = match kind {
        ArtifactKind::Intake => intake(artifacts),
        ArtifactKind::Scope => scope(artifacts),
        ArtifactKind::Requirements => requirements(artifacts),
        ArtifactKind::Criteria => artifacts.criteria.content.as_ref().map_or_else(Vec::new, |c| {
            as_violations(criteria_rules(&c.criteria, artifacts.requirements.content.as_ref()), kind)
        }),
        ArtifactKind::Pricing => as_violations(pricing_rules(artifacts.pricing.content.as_ref()), kind),
        ArtifactKind::Milestones => milestones(artifacts),
    };
    out.sort();
    out.dedup();
    out
}

fn known_needs(artifacts: &Artifacts) -> BTreeSet<String> {
    artifacts.intake.content.iter().flat_map(|i| i.needs.iter().map(|n| n.id.clone())).collect()
}

fn intake(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(i) = &artifacts.intake.content else { return vec![] };
    let mut out = Vec::new();
    let mut missing = |what: &str| {
        out.push(v(RULE_INTAKE_INCOMPLETE, ArtifactKind::Intake, Some(what.into()), format!("the intake needs {what}")))
    };
    if i.title.trim().is_empty() {
        missing("a title");
    }
    if i.buyer.trim().is_empty() {
        missing("the buyer's name");
    }
    if i.needs.is_empty() {
        missing("at least one need");
    }
    if i.currency.trim().len() != 3 {
        missing("a three-letter currency code");
    }
    if let Some(Err(unknown)) = i.country.as_deref().map(PublicHolidays::of) {
        out.push(v(RULE_INTAKE_INCOMPLETE, ArtifactKind::Intake, Some("country".into()), unknown.to_string()));
    }
    let mut ids = BTreeSet::new();
    for n in &i.needs {
        if n.id.trim().is_empty() || !ids.insert(n.id.trim()) {
            out.push(v(
                RULE_INTAKE_INCOMPLETE,
                ArtifactKind::Intake,
                Some(n.id.clone()),
                format!("need id {:?} is empty or used twice", n.id),
            ));
        }
    }
    out
}

fn scope(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(s) = &artifacts.scope.content else { return vec![] };
    let mut out = Vec::new();
    if s.summary.trim().is_empty() || s.deliverables.is_empty() {
        out.push(v(
            RULE_SCOPE_INCOMPLETE,
            ArtifactKind::Scope,
            None,
            "the scope needs a summary and at least one deliverable".into(),
        ));
    }
    let known = known_needs(artifacts);
    for id in s.need_ids.iter().filter(|id| !known.contains(*id)) {
        out.push(v(RULE_UNKNOWN_NEED, ArtifactKind::Scope, Some(id.clone()), format!("no intake need has id {id:?}")));
    }
    out
}

fn requirements(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(r) = &artifacts.requirements.content else { return vec![] };
    let mut out = as_violations(requirement_rules(Some(r)), ArtifactKind::Requirements);
    let known = known_needs(artifacts);
    for item in &r.items {
        for id in item.need_ids.iter().filter(|id| !known.contains(*id)) {
            out.push(v(
                RULE_UNKNOWN_NEED,
                ArtifactKind::Requirements,
                Some(item.code.clone()),
                format!("requirement {} serves need {id:?}, which the intake does not list", item.code),
            ));
        }
    }
    out
}

fn milestones(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(m) = &artifacts.milestones.content else { return vec![] };
    let mut out = as_violations(milestone_rules(&m.items, artifacts), ArtifactKind::Milestones);
    if let Some(intake) = &artifacts.intake.content {
        for (kind, date) in milestone_dates(intake) {
            if let Some(found) = m.items.iter().find(|x| x.kind == kind)
                && found.date != date
            {
                out.push(v(
                    RULE_MILESTONE_NOT_COMPUTED,
                    ArtifactKind::Milestones,
                    Some(kind.as_str().into()),
                    format!("the {} date is {}; the intake's timeline gives {date}", kind.as_str(), found.date),
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------------------------
// The publish gate.

/// Is an approval bound to `hash` still an approval of `content`? The one test of a hash-bound approval: the gate
/// runs it, and so does a desktop receiving a package another desktop changed ([`stale_approvals`]).
fn approval_holds(hash: &str, content: &Value) -> bool {
    hash == content_hash(content)
}

/// The artifacts whose approval no longer holds: approved, but bound to a hash that is not their content's (or with
/// no content at all). A package from another desktop shows these as needing approval again.
pub fn stale_approvals(artifacts: &Artifacts) -> Vec<ArtifactKind> {
    ArtifactKind::ALL
        .into_iter()
        .filter(|kind| match artifacts.state(*kind) {
            ArtifactState::Approved { hash } => {
                artifacts.content_json(*kind).is_none_or(|content| !approval_holds(hash, &content))
            }
            _ => false,
        })
        .collect()
}

/// The publish gate: every rule the package breaks (empty when it may be published). Each artifact must have
/// content and an approval bound to the hash of that content; then the content rules run on the whole package (an
/// artifact without content counts as empty: no criteria is not 100 %, no milestones are six missing ones). Pure:
/// `pactwise-prep` shows it as the pre-check, and the store runs it on what it stores before publishing.
pub fn publish_gate(artifacts: &Artifacts) -> Vec<GateViolation> {
    let mut out = Vec::new();
    for kind in ArtifactKind::ALL {
        let name = kind.as_str();
        let Some(content) = artifacts.content_json(kind) else {
            out.push(GateViolation::new(PublishRule::Malformed, kind, None, format!("the {name} has no content")));
            continue;
        };
        match artifacts.state(kind) {
            ArtifactState::Approved { hash } if approval_holds(hash, &content) => {}
            ArtifactState::Approved { .. } => out.push(GateViolation::new(
                PublishRule::ApprovalOutdated,
                kind,
                None,
                format!("the {name} changed after it was approved"),
            )),
            _ => out.push(GateViolation::new(
                PublishRule::NotApproved,
                kind,
                None,
                format!("the {name} is not approved"),
            )),
        }
    }
    let requirements = artifacts.requirements.content.as_ref();
    out.extend(requirement_rules(requirements));
    let criteria = artifacts.criteria.content.as_ref().map_or(&[][..], |c| &c.criteria[..]);
    out.extend(criteria_rules(criteria, requirements));
    out.extend(pricing_rules(artifacts.pricing.content.as_ref()));
    let milestones = artifacts.milestones.content.as_ref().map_or(&[][..], |m| &m.items[..]);
    out.extend(milestone_rules(milestones, artifacts));
    out.sort();
    out.dedup();
    out
}

/// Reads a stored package (the JSON `pactwise-prep` writes, whose `artifacts` object holds one slot per artifact)
/// into the typed artifacts the gate checks. An artifact that is absent or null is empty (the gate then names it).
/// One that does not read as its type, or whose stored content is not exactly what its type holds (a field it does
/// not know, or one missing), is refused as malformed: the gate never decides on content it cannot see whole.
pub fn stored_artifacts(package: &Value) -> Result<Artifacts, Vec<GateViolation>> {
    let Some(stored) = package.get("artifacts").filter(|a| a.is_object()) else {
        return Err(vec![GateViolation::malformed("package", "the package has no artifacts".into())]);
    };
    let mut problems = Vec::new();
    let artifacts = Artifacts {
        intake: stored_slot(stored, ArtifactKind::Intake, &mut problems),
        scope: stored_slot(stored, ArtifactKind::Scope, &mut problems),
        requirements: stored_slot(stored, ArtifactKind::Requirements, &mut problems),
        criteria: stored_slot(stored, ArtifactKind::Criteria, &mut problems),
        pricing: stored_slot(stored, ArtifactKind::Pricing, &mut problems),
        milestones: stored_slot(stored, ArtifactKind::Milestones, &mut problems),
    };
    if problems.is_empty() { Ok(artifacts) } else { Err(problems) }
}

fn stored_slot<T: DeserializeOwned + Serialize>(
    stored: &Value,
    kind: ArtifactKind,
    problems: &mut Vec<GateViolation>,
) -> Slot<T> {
    let name = kind.as_str();
    let value = match stored.get(name) {
        None | Some(Value::Null) => return Slot::default(),
        Some(value) => value,
    };
    match serde_json::from_value::<Slot<T>>(value.clone()) {
        Ok(slot) => {
            let read_back = slot.content.as_ref().map(|c| serde_json::to_value(c).unwrap_or(Value::Null));
            let as_stored = value.get("content").filter(|c| !c.is_null());
            if read_back.as_ref() != as_stored {
                problems.push(GateViolation::malformed(
                    name,
                    format!("the stored {name} holds fields the package format does not have, or lacks some"),
                ));
            }
            slot
        }
        Err(e) => {
            problems.push(GateViolation::malformed(name, format!("the stored {name} cannot be read: {e}")));
            Slot::default()
        }
    }
}
