//! Deterministic validators, and the publish pre-check that mirrors the store's gate rule for rule.
//!
//! Weights are integers (basis points) and are summed in a `u64`: no floating point anywhere. The gate rules use
//! the names of `pactwise_store::prep::PublishRule`; validators add a few rules of their own (intake completeness,
//! unknown needs, milestone dates that differ from the computed ones) that the gate does not need.

use crate::artifact::{ArtifactKind, Artifacts, RequirementKind};
use crate::calendar::milestone_dates;
use crate::machine::{ArtifactState, Violation};
use pactwise_store::prep::{GateViolation, PublishRule, WEIGHT_TOTAL_BP, has_open_amount_marker, is_business_day};
use std::collections::{BTreeMap, BTreeSet};

/// Validator-only rules (not part of the publish gate).
pub const RULE_INTAKE_INCOMPLETE: &str = "intake_incomplete";
pub const RULE_UNKNOWN_NEED: &str = "unknown_need";
pub const RULE_SCOPE_INCOMPLETE: &str = "scope_incomplete";
pub const RULE_MILESTONE_NOT_COMPUTED: &str = "milestone_date_not_computed";

fn v(rule: &str, artifact: ArtifactKind, subject: Option<String>, message: String) -> Violation {
    Violation { rule: rule.to_string(), artifact, subject, message }
}

fn gate(rule: PublishRule, artifact: ArtifactKind, subject: Option<String>, message: String) -> Violation {
    v(rule.as_str(), artifact, subject, message)
}

/// Every violation of the artifact's content, given the rest of the package (empty when valid). An artifact with
/// no content yields nothing: it is `empty`, not invalid.
pub fn validate(artifacts: &Artifacts, kind: ArtifactKind) -> Vec<Violation> {
    let mut out = match kind {
        ArtifactKind::Intake => intake(artifacts),
        ArtifactKind::Scope => scope(artifacts),
        ArtifactKind::Requirements => requirements(artifacts),
        ArtifactKind::Criteria => criteria(artifacts),
        ArtifactKind::Pricing => pricing(artifacts),
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
    let mut out = requirement_gate_rules(artifacts);
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

/// Unique codes; scored requirements measurable.
fn requirement_gate_rules(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(r) = &artifacts.requirements.content else { return vec![] };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for item in &r.items {
        let code = item.code.trim().to_string();
        if !seen.insert(code.clone()) {
            out.push(gate(
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
                out.push(gate(
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

fn criteria(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(c) = &artifacts.criteria.content else { return vec![] };
    let mut out = Vec::new();
    let total: u64 = c.criteria.iter().map(|c| u64::from(c.weight_bp)).sum();
    if c.criteria.is_empty() || total != WEIGHT_TOTAL_BP {
        out.push(gate(
            PublishRule::WeightsNotHundred,
            ArtifactKind::Criteria,
            None,
            format!("criteria weights sum to {total} basis points; they must sum to exactly 10000 (100 %)"),
        ));
    }
    let scored: BTreeSet<String> = artifacts
        .requirements
        .content
        .iter()
        .flat_map(|r| r.items.iter())
        .filter(|r| r.kind == RequirementKind::Scored)
        .map(|r| r.code.trim().to_string())
        .collect();
    let mut mapped: BTreeMap<String, u32> = BTreeMap::new();
    for criterion in &c.criteria {
        for code in &criterion.requirement_codes {
            *mapped.entry(code.trim().to_string()).or_default() += 1;
        }
    }
    for code in &scored {
        let n = mapped.get(code).copied().unwrap_or(0);
        if n != 1 {
            out.push(gate(
                PublishRule::ScoredRequirementMapping,
                ArtifactKind::Criteria,
                Some(code.clone()),
                format!("scored requirement {code} is mapped to {n} criteria; it must be mapped to exactly one"),
            ));
        }
    }
    for code in mapped.keys().filter(|c| !scored.contains(*c)) {
        out.push(gate(
            PublishRule::ScoredRequirementMapping,
            ArtifactKind::Criteria,
            Some(code.clone()),
            format!("a criterion maps {code:?}, which is not a scored requirement"),
        ));
    }
    out
}

fn pricing(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(p) = &artifacts.pricing.content else { return vec![] };
    p.lines
        .iter()
        .filter(|line| {
            let open =
                line.open_amount || has_open_amount_marker(&line.description) || has_open_amount_marker(&line.unit);
            let sized = line.quantity.is_some_and(|q| q > 0) || line.basis.is_some();
            line.unit.trim().is_empty() || !sized || open
        })
        .map(|line| {
            gate(
                PublishRule::PricingLineNotPriceable,
                ArtifactKind::Pricing,
                Some(line.code.clone()),
                format!("pricing line {} needs a unit, a quantity or pricing basis, and no open amount", line.code),
            )
        })
        .collect()
}

fn milestones(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(m) = &artifacts.milestones.content else { return vec![] };
    let mut out = milestone_gate_rules(artifacts);
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

fn milestone_gate_rules(artifacts: &Artifacts) -> Vec<Violation> {
    let Some(m) = &artifacts.milestones.content else { return vec![] };
    let holidays: BTreeSet<_> = artifacts.intake.content.iter().flat_map(|i| i.holidays.iter().copied()).collect();
    let mut out = Vec::new();
    let mut previous = None;
    let kinds = crate::artifact::MilestoneKind::ALL;
    for (index, kind) in kinds.iter().enumerate() {
        let found: Vec<_> = m.items.iter().filter(|x| x.kind == *kind).collect();
        let name = kind.as_str();
        let date = found.first().map(|x| x.date);
        let problem = match (found.len(), date) {
            (0, _) => Some(format!("the {name} milestone is missing")),
            (1, Some(d)) if !is_business_day(d, &holidays) => {
                Some(format!("the {name} date {d} is not a business day"))
            }
            (1, Some(d)) if previous.is_some_and(|p| d <= p) => {
                Some(format!("the {name} date {d} is not after the {} milestone", kinds[index - 1].as_str()))
            }
            (1, _) => None,
            (n, _) => Some(format!("the {name} milestone appears {n} times")),
        };
        if let Some(message) = problem {
            out.push(gate(PublishRule::MilestonesInvalid, ArtifactKind::Milestones, Some(name.into()), message));
        }
        if date.is_some() {
            previous = date;
        }
    }
    if m.items.len() > kinds.len() {
        out.push(gate(
            PublishRule::MilestonesInvalid,
            ArtifactKind::Milestones,
            None,
            format!("{} milestones where six are expected", m.items.len()),
        ));
    }
    out
}

/// The publish pre-check: the store gate's rules, one for one, on the typed package. What it refuses, the gate
/// refuses (tested against `pactwise_store::prep::publish_gate` on generated packages).
pub fn precheck(artifacts: &Artifacts) -> Vec<GateViolation> {
    let mut out = Vec::new();
    for kind in ArtifactKind::ALL {
        let view = artifacts.view(kind);
        let name = kind.as_str();
        let Some(content) = view.content else {
            out.push(GateViolation {
                rule: PublishRule::Malformed,
                artifact: name.into(),
                subject: None,
                message: format!("the {name} has no content"),
            });
            continue;
        };
        match &view.state {
            ArtifactState::Approved { hash } if *hash == pactwise_store::prep::content_hash(&content) => {}
            ArtifactState::Approved { .. } => out.push(GateViolation {
                rule: PublishRule::ApprovalOutdated,
                artifact: name.into(),
                subject: None,
                message: format!("the {name} changed after it was approved"),
            }),
            _ => out.push(GateViolation {
                rule: PublishRule::NotApproved,
                artifact: name.into(),
                subject: None,
                message: format!("the {name} is not approved"),
            }),
        }
    }
    let content_rules = requirement_gate_rules(artifacts)
        .into_iter()
        .chain(criteria_or_empty(artifacts))
        .chain(pricing(artifacts))
        .chain(milestones_or_empty(artifacts));
    for violation in content_rules {
        let rule = PublishRule::ALL.into_iter().find(|r| r.as_str() == violation.rule);
        if let Some(rule) = rule {
            out.push(GateViolation {
                rule,
                artifact: violation.artifact.as_str().into(),
                subject: violation.subject,
                message: violation.message,
            });
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The gate checks weights even when the criteria artifact has no content (it then finds no criteria).
fn criteria_or_empty(artifacts: &Artifacts) -> Vec<Violation> {
    if artifacts.criteria.content.is_some() {
        return criteria(artifacts);
    }
    let mut copy = artifacts.clone();
    copy.criteria.content = Some(crate::artifact::Criteria { criteria: vec![] });
    criteria(&copy)
}

/// The gate reports every missing milestone even when the milestones artifact has no content.
fn milestones_or_empty(artifacts: &Artifacts) -> Vec<Violation> {
    if artifacts.milestones.content.is_some() {
        return milestone_gate_rules(artifacts);
    }
    let mut copy = artifacts.clone();
    copy.milestones.content = Some(crate::artifact::Milestones { items: vec![] });
    milestone_gate_rules(&copy)
}
