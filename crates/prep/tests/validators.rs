//! Property tests of the validators with a seeded generator (no property-testing library is available here):
//! thousands of generated packages per property, each property stated against an independent oracle. (The
//! pre-check is the publish gate itself, `pactwise_rules::prep::publish_gate`: there is no second copy to compare.)

mod support;

use pactwise_prep::*;
use std::collections::BTreeMap;
use support::*;

/// SplitMix64: small, seeded, reproducible.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const CASES: u64 = 2000;

fn rules_of(v: &[Violation]) -> Vec<&str> {
    v.iter().map(|v| v.rule.as_str()).collect()
}

/// Weights that sum to exactly 10,000, split into `n` parts; then maybe perturbed.
fn weights(g: &mut Gen, n: usize) -> Vec<u32> {
    let mut cuts: Vec<u32> = (0..n.saturating_sub(1)).map(|_| g.below(10_001) as u32).collect();
    cuts.push(0);
    cuts.push(10_000);
    cuts.sort();
    cuts.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn weights_pass_exactly_when_they_sum_to_ten_thousand_basis_points() {
    let mut g = Gen(1);
    let mut seen = [0u32; 2];
    for _ in 0..CASES {
        let n = 1 + g.below(7) as usize;
        let mut w = weights(&mut g, n);
        if g.chance(50) {
            let i = g.below(n as u64) as usize;
            let delta = 1 + g.below(500) as u32;
            w[i] = if g.chance(50) { w[i] + delta } else { w[i].saturating_sub(delta) };
        }
        if g.chance(5) {
            // Huge weights must not overflow into a false pass.
            w.push(u32::MAX);
        }
        let mut p = complete_package();
        let mut c = criteria();
        c.criteria = w
            .iter()
            .enumerate()
            .map(|(i, bp)| Criterion {
                id: format!("C{i}"),
                name: "x".into(),
                description: "x".into(),
                weight_bp: *bp,
                requirement_codes: if i == 0 { vec!["R-02".into(), "R-03".into()] } else { vec![] },
            })
            .collect();
        let sum: u128 = w.iter().map(|x| u128::from(*x)).sum();
        p.artifacts.criteria.content = Some(c);
        let flagged = rules_of(&validate(&p.artifacts, ArtifactKind::Criteria)).contains(&"weights_not_hundred");
        assert_eq!(flagged, sum != 10_000, "weights {w:?}");
        seen[usize::from(flagged)] += 1;
    }
    assert!(seen[0] > 100 && seen[1] > 100, "both outcomes generated: {seen:?}");
}

#[test]
fn each_scored_requirement_is_mapped_to_exactly_one_criterion_and_codes_are_unique() {
    let mut g = Gen(2);
    for _ in 0..CASES {
        let n = 1 + g.below(8) as usize;
        let codes = ["R-01", "R-02", "R-03", "R-04", "R-05", "R-06"];
        let items: Vec<Requirement> = (0..n)
            .map(|_| Requirement {
                code: (*g.pick(&codes)).to_string(),
                text: "t".into(),
                kind: if g.chance(60) { RequirementKind::Scored } else { RequirementKind::Mandatory },
                need_ids: vec![],
                measure: measure("m", "t"),
            })
            .collect();
        let criteria_count = 1 + g.below(3) as usize;
        let mut crit: Vec<Criterion> = (0..criteria_count)
            .map(|i| Criterion {
                id: format!("C{i}"),
                name: "c".into(),
                description: "d".into(),
                weight_bp: 0,
                requirement_codes: vec![],
            })
            .collect();
        crit[0].weight_bp = 10_000;
        for code in &codes {
            for c in crit.iter_mut() {
                if g.chance(35) {
                    c.requirement_codes.push((*code).to_string());
                }
            }
        }
        let mut p = complete_package();
        p.artifacts.requirements.content = Some(Requirements { items: items.clone() });
        p.artifacts.criteria.content = Some(Criteria { criteria: crit.clone() });

        // Oracle: count codes and mappings directly.
        let mut code_count: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &items {
            *code_count.entry(r.code.as_str()).or_default() += 1;
        }
        let scored: std::collections::BTreeSet<&str> =
            items.iter().filter(|r| r.kind == RequirementKind::Scored).map(|r| r.code.as_str()).collect();
        let map_count = |code: &str| crit.iter().flat_map(|c| &c.requirement_codes).filter(|c| *c == code).count();
        let expect_dupes: Vec<&str> = code_count.iter().filter(|(_, n)| **n > 1).map(|(c, _)| *c).collect();
        let mut expect_mapping: Vec<&str> = scored.iter().copied().filter(|c| map_count(c) != 1).collect();
        expect_mapping.extend(codes.iter().copied().filter(|c| !scored.contains(c) && map_count(c) > 0));
        expect_mapping.sort();

        let req = validate(&p.artifacts, ArtifactKind::Requirements);
        let mut dupes: Vec<&str> = req
            .iter()
            .filter(|v| v.rule == "duplicate_requirement_code")
            .map(|v| v.subject.as_deref().unwrap())
            .collect();
        dupes.dedup();
        assert_eq!(dupes, expect_dupes, "{items:?}");
        let crit_v = validate(&p.artifacts, ArtifactKind::Criteria);
        let mut mapping: Vec<&str> = crit_v
            .iter()
            .filter(|v| v.rule == "scored_requirement_mapping")
            .map(|v| v.subject.as_deref().unwrap())
            .collect();
        mapping.sort();
        assert_eq!(mapping, expect_mapping, "{items:?} {crit:?}");
    }
}

#[test]
fn scored_requirements_need_all_three_measure_fields_and_pricing_lines_must_be_priceable() {
    let mut g = Gen(3);
    let words = ["", " ", "uptime", "99.9 %"];
    let units = ["", "  ", "vehicle", "hour"];
    let descriptions = ["Device", "Travel as required", "Visits, TBD", "Licences", "TBDX units"];
    let bases = [None, Some(PriceBasis::PerUnit), Some(PriceBasis::FixedPrice)];
    for _ in 0..CASES {
        let metric = *g.pick(&words);
        let threshold = *g.pick(&words);
        let has_measure = g.chance(80);
        let kind = if g.chance(70) { RequirementKind::Scored } else { RequirementKind::Mandatory };
        let mut p = complete_package();
        let mut r = requirements();
        r.items[1].kind = kind;
        r.items[1].measure = has_measure.then(|| Measure {
            metric: metric.into(),
            threshold: threshold.into(),
            verification: Verification::Inspection,
        });
        if kind == RequirementKind::Mandatory {
            p.artifacts.criteria.content.as_mut().unwrap().criteria[0].requirement_codes.clear();
        }
        p.artifacts.requirements.content = Some(r);
        let expect = kind == RequirementKind::Scored
            && !(has_measure && !metric.trim().is_empty() && !threshold.trim().is_empty());
        let got = rules_of(&validate(&p.artifacts, ArtifactKind::Requirements)).contains(&"requirement_not_measurable");
        assert_eq!(got, expect, "{kind:?} {has_measure} {metric:?} {threshold:?}");

        let line = PricingLine {
            code: "P-09".into(),
            description: (*g.pick(&descriptions)).into(),
            unit: (*g.pick(&units)).into(),
            quantity: if g.chance(50) { Some(g.below(3) as u32) } else { None },
            basis: *g.pick(&bases),
            open_amount: g.chance(15),
        };
        let open = line.open_amount || ["Travel as required", "Visits, TBD"].contains(&line.description.as_str());
        let sized = line.quantity.is_some_and(|q| q > 0) || line.basis.is_some();
        let expect = line.unit.trim().is_empty() || !sized || open;
        p.artifacts.pricing.content = Some(Pricing { currency: "EUR".into(), lines: vec![line.clone()] });
        let got = rules_of(&validate(&p.artifacts, ArtifactKind::Pricing)).contains(&"pricing_line_not_priceable");
        assert_eq!(got, expect, "{line:?}");
    }
}
