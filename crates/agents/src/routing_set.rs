//! The labelled routing set in `fixtures/agents/` (see its README): loading it and scoring plans against it (type
//! accuracy, entity F1, exact-plan rate). Used by the example `routing_eval` and the tests.

use crate::manager::{KnownContract, KnownVendor, MemoryRecords, Plan, Signal, Urgency};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// A split's header line.
#[derive(Debug, Clone, Deserialize)]
pub struct Header {
    pub split: String,
    pub clock: DateTime<Utc>,
    pub default_currency: String,
}

/// One labelled request.
#[derive(Debug, Clone, Deserialize)]
pub struct Labelled {
    pub id: String,
    pub text: String,
    #[serde(rename = "type")]
    pub request_type: String,
    pub contracts: Vec<String>,
    pub unresolved_contracts: Vec<String>,
    pub vendors: Vec<String>,
    pub new_vendors: Vec<String>,
    pub amounts: Vec<String>,
    pub dates: Vec<String>,
    pub urgency: String,
    pub signals: Vec<String>,
    pub planted: bool,
    pub plan: Vec<String>,
}

/// A split: its header and requests.
#[derive(Debug, Clone)]
pub struct Split {
    pub header: Header,
    pub requests: Vec<Labelled>,
}

#[derive(Debug, thiserror::Error)]
#[error("the routing set could not be read ({path}): {why}")]
pub struct LoadError {
    pub path: String,
    pub why: String,
}

fn err(path: &Path, why: impl ToString) -> LoadError {
    LoadError { path: path.display().to_string(), why: why.to_string() }
}

/// Reads a split (`train.jsonl` or `holdout.jsonl`).
pub fn load_split(path: &Path) -> Result<Split, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| err(path, e))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Header =
        serde_json::from_str(lines.next().ok_or_else(|| err(path, "empty"))?).map_err(|e| err(path, e))?;
    let requests = lines
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| err(path, format!("line {}: {e}", i + 2))))
        .collect::<Result<_, _>>()?;
    Ok(Split { header, requests })
}

#[derive(Deserialize)]
struct RecordsFile {
    vendors: Vec<VendorRow>,
    contracts: Vec<ContractRow>,
    other_organization: OtherOrg,
}
#[derive(Deserialize)]
struct VendorRow {
    id: String,
    name: String,
    aliases: Vec<String>,
}
#[derive(Deserialize)]
struct ContractRow {
    id: String,
    reference: String,
    vendor: Option<String>,
}
#[derive(Deserialize)]
struct OtherOrg {
    contracts: Vec<ContractRow>,
}

/// The routing set's records (`records.json`): the organization's contracts and vendors, and another
/// organization's contracts, which a plan must never resolve.
#[derive(Debug, Clone)]
pub struct Records {
    pub contracts: Vec<KnownContract>,
    pub vendors: Vec<KnownVendor>,
    pub other_organization_contracts: Vec<KnownContract>,
}

impl Records {
    /// The organization's records as the manager resolves against them.
    pub fn own(&self) -> MemoryRecords {
        MemoryRecords::new(self.contracts.clone(), self.vendors.clone())
    }
}

pub fn load_records(path: &Path) -> Result<Records, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| err(path, e))?;
    let f: RecordsFile = serde_json::from_str(&text).map_err(|e| err(path, e))?;
    let contract = |c: ContractRow| KnownContract { id: c.id, reference: c.reference, vendor: c.vendor };
    Ok(Records {
        contracts: f.contracts.into_iter().map(contract).collect(),
        vendors: f
            .vendors
            .into_iter()
            .map(|v| KnownVendor { id: v.id, name: v.name, other_names: v.aliases })
            .collect(),
        other_organization_contracts: f.other_organization.contracts.into_iter().map(contract).collect(),
    })
}

/// The labelled entities of a request as comparable strings.
pub fn expected_entities(l: &Labelled) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    s.extend(l.contracts.iter().map(|c| format!("contract:{c}")));
    s.extend(l.unresolved_contracts.iter().map(|c| format!("contract?:{c}")));
    s.extend(l.vendors.iter().map(|v| format!("vendor:{v}")));
    s.extend(l.new_vendors.iter().map(|v| format!("vendor?:{}", v.to_lowercase())));
    s.extend(l.amounts.iter().map(|a| format!("amount:{a}")));
    s.extend(l.dates.iter().map(|d| format!("date:{d}")));
    if l.urgency == "high" {
        s.insert("urgency:high".into());
    }
    s.extend(l.signals.iter().map(|x| format!("signal:{x}")));
    s
}

/// A plan's entities as comparable strings.
pub fn planned_entities(p: &Plan) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    for c in &p.entities.contracts {
        s.insert(if c.contract.is_some() {
            format!("contract:{}", c.reference)
        } else {
            format!("contract?:{}", c.reference)
        });
    }
    for v in &p.entities.vendors {
        s.insert(if v.vendor.is_some() {
            format!("vendor:{}", v.name)
        } else {
            format!("vendor?:{}", v.name.to_lowercase())
        });
    }
    s.extend(p.entities.amounts.iter().map(|a| format!("amount:{}", a.canonical())));
    s.extend(p.entities.dates.iter().map(|d| format!("date:{}", d.date)));
    if p.urgency == Urgency::High {
        s.insert("urgency:high".into());
    }
    for x in &p.signals {
        s.insert(
            match x {
                Signal::Financial => "signal:financial",
                Signal::Legal => "signal:legal",
            }
            .into(),
        );
    }
    s
}

/// One request scored.
#[derive(Debug, Clone)]
pub struct Scored {
    pub id: String,
    pub type_ok: bool,
    pub plan_ok: bool,
    pub planted_ok: bool,
    pub true_positives: usize,
    pub expected: usize,
    pub found: usize,
    pub missing: Vec<String>,
    pub extra: Vec<String>,
    pub expected_type: String,
    pub planned_type: String,
    pub expected_plan: Vec<String>,
    pub planned_plan: Vec<String>,
}

/// Scores a plan against its label.
pub fn score(l: &Labelled, p: &Plan) -> Scored {
    let expected = expected_entities(l);
    let found = planned_entities(p);
    let planned_plan: Vec<String> = p.steps.iter().map(|s| s.agent.id().to_string()).collect();
    Scored {
        id: l.id.clone(),
        type_ok: p.request_type.id() == l.request_type,
        plan_ok: planned_plan == l.plan,
        planted_ok: p.planted_instruction == l.planted,
        true_positives: expected.intersection(&found).count(),
        expected: expected.len(),
        found: found.len(),
        missing: expected.difference(&found).cloned().collect(),
        extra: found.difference(&expected).cloned().collect(),
        expected_type: l.request_type.clone(),
        planned_type: p.request_type.id().to_string(),
        expected_plan: l.plan.clone(),
        planned_plan,
    }
}

/// A split's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub requests: usize,
    pub type_accuracy: f64,
    pub entity_precision: f64,
    pub entity_recall: f64,
    pub entity_f1: f64,
    pub exact_plan: f64,
    pub planted_accuracy: f64,
}

/// Micro-averaged figures over scored requests (a request with no entities expected and none found counts for
/// nothing in the F1).
pub fn figures(scored: &[Scored]) -> Figures {
    let n = scored.len().max(1) as f64;
    let tp: usize = scored.iter().map(|s| s.true_positives).sum();
    let exp: usize = scored.iter().map(|s| s.expected).sum();
    let found: usize = scored.iter().map(|s| s.found).sum();
    let precision = if found == 0 { 1.0 } else { tp as f64 / found as f64 };
    let recall = if exp == 0 { 1.0 } else { tp as f64 / exp as f64 };
    let f1 = if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
    Figures {
        requests: scored.len(),
        type_accuracy: scored.iter().filter(|s| s.type_ok).count() as f64 / n,
        entity_precision: precision,
        entity_recall: recall,
        entity_f1: f1,
        exact_plan: scored.iter().filter(|s| s.plan_ok).count() as f64 / n,
        planted_accuracy: scored.iter().filter(|s| s.planted_ok).count() as f64 / n,
    }
}
