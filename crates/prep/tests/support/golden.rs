//! The golden replay: a hand-written drafting run (recorded model replies in `fixtures/prep/*.json`) replayed
//! through the fake server, then the buyer approves what is valid and the store's publish gate decides. Returns
//! the figures the golden report prints.

use super::{ctx, member, model, org};
use pactwise_domain::Role;
use pactwise_model::fake::FakeScript;
use pactwise_prep::*;
use pactwise_store::{Store, StoreError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
pub struct Fixture {
    pub name: String,
    pub description: String,
    pub intake: Intake,
    pub budget: RunBudget,
    pub script: FakeScript,
}

#[derive(Debug)]
pub struct GoldenResult {
    pub name: String,
    pub status: RunStatus,
    pub model_calls: u32,
    pub critic_cycles: u32,
    pub converged_at_cycle: Option<u32>,
    pub tokens: u64,
    pub cost_micros: i64,
    pub ceiling_micros: i64,
    pub scored: usize,
    pub measurable: usize,
    pub needs: usize,
    pub needs_covered: usize,
    pub findings_rerun: usize,
    pub findings_for_buyer: usize,
    pub warnings: Vec<String>,
    pub published: bool,
    pub gate_violations: Vec<GateViolation>,
    /// The store, reading the package it stored, refused exactly what the pre-check showed (or published it when
    /// the pre-check showed nothing).
    pub store_agrees: bool,
    pub all_traces_stamped: bool,
    pub package: Package,
}

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/prep")
}

pub fn load_all() -> anyhow::Result<Vec<Fixture>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixture_dir())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p)?;
            serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))
        })
        .collect()
}

fn triples(v: &[GateViolation]) -> Vec<(String, String, Option<String>)> {
    let mut t: Vec<_> =
        v.iter().map(|v| (v.rule.as_str().to_string(), v.artifact.clone(), v.subject.clone())).collect();
    t.sort();
    t
}

pub async fn replay(fixture: &Fixture) -> anyhow::Result<GoldenResult> {
    let clock = super::clock();
    let model = model(fixture.script.clone(), clock.clone()).await;
    let store = Store::open_in_memory(clock.clone())?;
    let acme = org(&store, "Buyer org");
    let buyer = member(&store, acme, "Buyer", Role::Buyer);
    let catalog = pactwise_checklists::Catalog::load().map_err(|e| e.to_string());
    let grounding = pactwise_prep::grounding::gather(
        &store,
        &pactwise_retrieval::Retriever::words_only(),
        catalog.as_ref().map_err(Clone::clone),
        &fixture.intake,
    );

    let mut package = Package::new(fixture.intake.clone());
    plan(&mut package, fixture.budget);
    let drafter = Drafter { model: &model.client, ctx: ctx(&buyer), clock: clock.as_ref(), grounding: &grounding };
    let traces = drafter.run(&mut package).await;
    let all_traces_stamped = traces.iter().all(|t| {
        pactwise_prep::prompts::modules().iter().any(|m| m.name == t.prompt_module && m.hash == t.prompt_hash)
    });

    let requirements = package.artifacts.requirements.content.clone().unwrap_or(Requirements { items: vec![] });
    let scored: Vec<&Requirement> = requirements.items.iter().filter(|r| r.kind == RequirementKind::Scored).collect();
    let measurable = scored
        .iter()
        .filter(|r| r.measure.as_ref().is_some_and(|m| !m.metric.trim().is_empty() && !m.threshold.trim().is_empty()))
        .count();
    let needs = package.artifacts.intake.content.as_ref().map(|i| i.needs.clone()).unwrap_or_default();
    let needs_covered = needs.iter().filter(|n| requirements.items.iter().any(|r| r.need_ids.contains(&n.id))).count();

    approve_and_publish(
        fixture,
        package,
        all_traces_stamped,
        &store,
        &buyer,
        scored.len(),
        measurable,
        needs.len(),
        needs_covered,
    )
}

#[allow(clippy::too_many_arguments)]
fn approve_and_publish(
    fixture: &Fixture,
    mut package: Package,
    all_traces_stamped: bool,
    store: &Store,
    buyer: &pactwise_store::OrgScope,
    scored: usize,
    measurable: usize,
    needs: usize,
    needs_covered: usize,
) -> anyhow::Result<GoldenResult> {
    super::approve_all_valid(&mut package);
    let pre = precheck(&package.artifacts);
    let id = store.prep().create(buyer, &package.title, &package.to_json(), chrono::Duration::minutes(30))?;
    let (published, gate_violations) = match store.prep().publish(buyer, &id) {
        Ok(_) => (true, vec![]),
        Err(StoreError::PublishRefused { violations }) => (false, violations),
        Err(e) => return Err(e.into()),
    };
    let store_agrees = triples(&pre) == triples(&gate_violations);
    let run = &package.run;
    Ok(GoldenResult {
        name: fixture.name.clone(),
        status: run.status,
        model_calls: run.model_calls,
        critic_cycles: run.critic_cycles,
        converged_at_cycle: run.converged_at_cycle,
        tokens: run.tokens_used,
        cost_micros: run.cost_micros,
        ceiling_micros: run.budget.max_cost_micros,
        scored,
        measurable,
        needs,
        needs_covered,
        findings_rerun: package.findings.iter().filter(|f| f.status == FindingStatus::ReRun).count(),
        findings_for_buyer: package
            .findings
            .iter()
            .filter(|f| matches!(f.status, FindingStatus::AwaitingBuyer | FindingStatus::Unresolved))
            .count(),
        warnings: package.warnings.clone(),
        published,
        gate_violations,
        store_agrees,
        all_traces_stamped,
        package,
    })
}
