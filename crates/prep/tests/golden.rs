//! The golden drafting runs replayed through the fake server: each converges (or not) as written, stays within its
//! cost ceiling, and the store, reading what it stored, refuses exactly what the pre-check shows.

mod support;

use support::golden::{load_all, replay};

#[tokio::test]
async fn every_golden_run_replays_with_the_expected_figures() {
    let fixtures = load_all().unwrap();
    assert!(fixtures.len() >= 3);
    for f in &fixtures {
        let r = replay(f).await.unwrap();
        assert!(r.store_agrees, "{}: the store's refusal is not the pre-check's: {:?}", r.name, r.gate_violations);
        assert!(r.all_traces_stamped, "{}", r.name);
        assert!(r.cost_micros <= r.ceiling_micros, "{}: {} > {}", r.name, r.cost_micros, r.ceiling_micros);
        assert_eq!(r.measurable, r.scored, "{}", r.name);
        match r.name.as_str() {
            "fleet-telematics" => {
                assert!(r.published, "{:?}", r.gate_violations);
                assert_eq!(r.converged_at_cycle, Some(2));
                assert_eq!(r.needs_covered, r.needs);
            }
            "office-cleaning" => {
                assert!(r.published, "{:?}", r.gate_violations);
                assert_eq!(r.converged_at_cycle, Some(1));
            }
            "it-service-desk" => {
                assert!(!r.published);
                assert_eq!(r.converged_at_cycle, None);
                let rules: Vec<&str> = r.gate_violations.iter().map(|v| v.rule.as_str()).collect();
                assert!(
                    rules.contains(&"weights_not_hundred") && rules.contains(&"pricing_line_not_priceable"),
                    "{rules:?}"
                );
                assert_eq!(r.needs_covered, 3, "N4 (accessibility) is not covered");
            }
            other => panic!("unexpected fixture {other}"),
        }
    }
}
