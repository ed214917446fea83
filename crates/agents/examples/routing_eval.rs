//! The manager's routing table on the labelled set in `fixtures/agents/`: type accuracy, entity F1 and exact-plan
//! rate on the training split (200), the holdout (100) and the fresh set (60, written after the rules), then the plan time per request (p50/p95 over all 300
//! requests, repeated) beside the same requests planned in an organization with 2,000 vendors.
//!
//! cargo run -p pactwise-agents --example routing_eval [-- --misses]   (--misses lists the training split's misses
//! only; the holdout's are never listed, so rules are never tuned on them)

use anyhow::Result;
use pactwise_agents::routing_set::{self, Scored};
use pactwise_agents::{AgentsConfig, Context, KnownVendor, MemoryRecords, plan};
use pactwise_domain::clock::FixedClock;
use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<()> {
    let misses = std::env::args().any(|a| a == "--misses");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/agents");
    let set = routing_set::load_records(&dir.join("records.json"))?;
    let records = set.own();
    let train = routing_set::load_split(&dir.join("train.jsonl"))?;
    let holdout = routing_set::load_split(&dir.join("holdout.jsonl"))?;
    let fresh = routing_set::load_split(&dir.join("fresh.jsonl"))?;
    let mut config = AgentsConfig::default();
    config.manager.default_currency = train.header.default_currency.clone();
    let clock = FixedClock::new(train.header.clock);
    let ctx = Context { records: &records, config: &config };

    println!("split     n    type   entity P   entity R   entity F1   exact plan   planted");
    for split in [&train, &holdout, &fresh] {
        let scored: Vec<Scored> =
            split.requests.iter().map(|l| routing_set::score(l, &plan(&l.text, &clock, &ctx))).collect();
        let f = routing_set::figures(&scored);
        println!(
            "{:<8} {:>3}   {:.3}   {:.3}      {:.3}      {:.3}       {:.3}        {:.3}",
            split.header.split,
            f.requests,
            f.type_accuracy,
            f.entity_precision,
            f.entity_recall,
            f.entity_f1,
            f.exact_plan,
            f.planted_accuracy
        );
        if misses && split.header.split == "train" {
            for s in scored.iter().filter(|s| !s.type_ok || !s.plan_ok || !s.missing.is_empty() || !s.extra.is_empty())
            {
                println!(
                    "  {} type {}→{} missing {:?} extra {:?}{}",
                    s.id,
                    s.expected_type,
                    s.planned_type,
                    s.missing,
                    s.extra,
                    if s.plan_ok {
                        String::new()
                    } else {
                        format!(" plan {:?}→{:?}", s.expected_plan, s.planned_plan)
                    }
                );
            }
        }
    }

    // Plan time per request: all 300 requests, 20 rounds, each call timed.
    let all: Vec<&str> = train.requests.iter().chain(&holdout.requests).map(|l| l.text.as_str()).collect();
    let mut vendors = set.vendors.clone();
    vendors.extend((0..2_000).map(|i| KnownVendor {
        id: format!("bulk-{i}"),
        name: format!("Supplier Number {i} Holdings"),
        other_names: vec![format!("SN{i}")],
    }));
    let big = MemoryRecords::new(set.contracts.clone(), vendors);
    for (label, recs) in [("20 vendors", &records), ("2,020 vendors", &big)] {
        let ctx = Context { records: recs as &MemoryRecords, config: &config };
        for t in &all {
            std::hint::black_box(plan(t, &clock, &ctx));
        }
        let mut times: Vec<f64> = Vec::with_capacity(all.len() * 20);
        for _ in 0..20 {
            for t in &all {
                let start = Instant::now();
                std::hint::black_box(plan(t, &clock, &ctx));
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.sort_by(f64::total_cmp);
        let pct = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
        println!(
            "plan time, {label:<13} ({} plans): p50 {:.3} ms, p95 {:.3} ms, max {:.3} ms ({} build)",
            times.len(),
            pct(0.50),
            pct(0.95),
            times[times.len() - 1],
            if cfg!(debug_assertions) { "debug" } else { "release" }
        );
    }
    Ok(())
}
