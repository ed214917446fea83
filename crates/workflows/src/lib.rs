//! The built-in workflow graphs and the rule-based agents they call: procurement (research from the local vendor
//! table, a code-made shortlist, a person picks the vendor, legal drafts the purchase agreement — by the model when
//! available, else from a template), contract lifecycle, vendor onboarding, invoice processing (three-way match),
//! budget planning, renewal notices, obligation tracking, contract amendment review and the contract review report ([`report`], WF-CR-1: the model extracts and
//! files clauses, code checks every edge, verifies each clause on its cited page, enforces the call and time
//! bounds and assembles the report a person signs off). Each graph declares the form that starts it (`input`, checked
//! by [`check_input`]) and its steps' names in people's words. Graphs are data (`graphs/*.json`), validated when loaded; no
//! model ranks, scores or recommends a vendor, and every figure is computed by code. Also the engine benchmark
//! ([`bench`]).

pub mod bench;
mod budget;
mod input;
mod invoice;
mod lifecycle;
mod money;
mod obligations;
mod onboarding;
mod procurement;
mod renewal;
pub mod report;

pub use input::{InputProblem, check_input};
use pactwise_engine::{EngineError, Registry};

/// The built-in graph definitions, by name.
pub const GRAPHS: &[(&str, &str)] = &[
    ("procurement", include_str!("../graphs/procurement.json")),
    ("contract_lifecycle", include_str!("../graphs/contract_lifecycle.json")),
    ("vendor_onboarding", include_str!("../graphs/vendor_onboarding.json")),
    ("invoice_processing", include_str!("../graphs/invoice_processing.json")),
    ("budget_planning", include_str!("../graphs/budget_planning.json")),
    ("renewal_notice", include_str!("../graphs/renewal_notice.json")),
    ("contract_review_report", include_str!("../graphs/contract_review_report.json")),
    ("obligation_tracking", include_str!("../graphs/obligation_tracking.json")),
    ("contract_amendment_review", include_str!("../graphs/contract_amendment_review.json")),
];

/// A registry with every built-in handler and graph (each graph validated as it is added).
pub fn registry() -> Result<Registry, EngineError> {
    let mut r = Registry::new();
    procurement::register(&mut r);
    lifecycle::register(&mut r);
    onboarding::register(&mut r);
    invoice::register(&mut r);
    budget::register(&mut r);
    renewal::register(&mut r);
    report::register(&mut r);
    obligations::register(&mut r);
    for (_, json) in GRAPHS {
        r.add_graph_json(json)?;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_built_in_graph_loads_and_validates() {
        let r = super::registry().unwrap();
        let names: Vec<&str> = r.graphs().map(|g| g.name.as_str()).collect();
        assert_eq!(names.len(), super::GRAPHS.len());
        for (name, _) in super::GRAPHS {
            assert!(names.contains(name), "{name}");
        }
    }
}
