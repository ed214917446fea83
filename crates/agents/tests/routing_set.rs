//! The routing set's training split stays routed (the holdout is only reported, by the example `routing_eval`, never
//! asserted on, so no rule is tuned to it), and no request of either split resolves another organization's contract.

use pactwise_agents::routing_set::{self, figures, score};
use pactwise_agents::{AgentsConfig, Context, OrgRecords, plan};
use pactwise_domain::FixedClock;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/agents")
}

#[test]
fn the_training_split_routes_at_its_measured_level() {
    let records = routing_set::load_records(&dir().join("records.json")).unwrap();
    let train = routing_set::load_split(&dir().join("train.jsonl")).unwrap();
    assert_eq!(train.requests.len(), 200);
    let mut config = AgentsConfig::default();
    config.manager.default_currency = train.header.default_currency.clone();
    let own = records.own();
    let ctx = Context { records: &own, config: &config };
    let clock = FixedClock::new(train.header.clock);
    let scored: Vec<_> = train.requests.iter().map(|l| score(l, &plan(&l.text, &clock, &ctx))).collect();
    let f = figures(&scored);
    // Measured 2026-12-03: type 1.000, entity F1 0.997, exact plan 0.990 (two known misses: a vendor name with a
    // typo, "legal tech" read as a legal signal).
    assert!(f.type_accuracy >= 0.99, "{f:?}");
    assert!(f.entity_f1 >= 0.99, "{f:?}");
    assert!(f.exact_plan >= 0.98, "{f:?}");
    assert_eq!(f.planted_accuracy, 1.0, "{f:?}");
}

#[test]
fn splits_are_the_promised_sizes_and_never_resolve_another_organizations_contracts() {
    let records = routing_set::load_records(&dir().join("records.json")).unwrap();
    let own = records.own();
    let config = AgentsConfig::default();
    let ctx = Context { records: &own, config: &config };
    let mut sizes = Vec::new();
    for name in ["train.jsonl", "holdout.jsonl"] {
        let split = routing_set::load_split(&dir().join(name)).unwrap();
        sizes.push(split.requests.len());
        let clock = FixedClock::new(split.header.clock);
        for l in &split.requests {
            let p = plan(&l.text, &clock, &ctx);
            for c in &p.entities.contracts {
                let foreign = records.other_organization_contracts.iter().any(|o| o.reference == c.reference);
                if foreign {
                    assert!(c.contract.is_none(), "{}: {} resolved", l.id, c.reference);
                }
                if let Some(k) = &c.contract {
                    assert_eq!(own.contract(&c.reference).as_ref(), Some(k));
                }
            }
        }
    }
    assert_eq!(sizes, [200, 100]);
}
