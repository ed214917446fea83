//! The real checklist library (`checklists/`): counts, ids, sections, patterns, near-duplicate questions, CUAD
//! category mapping, coverage targets and regulatory references.

use pactwise_checklists::{Catalog, closest_question_pair};
use pactwise_domain::{CuadCategory, CuadType, RiskLevel};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::load().unwrap_or_else(|error| panic!("{error}")))
}

/// Items per type: 34 types, 1032 items (831 as first planned, plus 201 asking about CUAD categories that each type's
/// contracts contain).
const ITEMS_PER_TYPE: &[(&str, usize)] = &[
    ("msa", 25),
    ("saas", 25),
    ("dpa", 25),
    ("employment", 25),
    ("lease", 25),
    ("nda", 24),
    ("sow", 24),
    ("independent_contractor", 24),
    ("purchase_of_goods", 24),
    ("development", 34),
    ("distributor", 36),
    ("franchise", 31),
    ("affiliate", 40),
    ("agency", 32),
    ("co_branding", 32),
    ("collaboration", 33),
    ("consulting", 33),
    ("endorsement", 29),
    ("hosting", 35),
    ("joint_venture", 31),
    ("license", 34),
    ("manufacturing", 30),
    ("ip", 26),
    ("maintenance", 33),
    ("marketing", 32),
    ("non_compete", 25),
    ("outsourcing", 32),
    ("service", 35),
    ("supply", 32),
    ("promotion", 33),
    ("reseller", 34),
    ("sponsorship", 31),
    ("strategic_alliance", 33),
    ("transportation", 35),
];

/// The type id of each CUAD contract type.
const CUAD_TYPE_IDS: &[(&str, &str)] = &[
    ("Affiliate", "affiliate"),
    ("Agency", "agency"),
    ("Co-Branding", "co_branding"),
    ("Collaboration", "collaboration"),
    ("Consulting", "consulting"),
    ("Development", "development"),
    ("Distributor", "distributor"),
    ("Endorsement", "endorsement"),
    ("Franchise", "franchise"),
    ("Hosting", "hosting"),
    ("IP", "ip"),
    ("Joint Venture", "joint_venture"),
    ("License", "license"),
    ("Maintenance", "maintenance"),
    ("Manufacturing", "manufacturing"),
    ("Marketing", "marketing"),
    ("Non-Compete/Non-Solicit", "non_compete"),
    ("Outsourcing", "outsourcing"),
    ("Promotion", "promotion"),
    ("Reseller", "reseller"),
    ("Service", "service"),
    ("Sponsorship", "sponsorship"),
    ("Strategic Alliance", "strategic_alliance"),
    ("Supply", "supply"),
    ("Transportation", "transportation"),
];

/// For each CUAD contract type: the number of its contracts in the labelled CUAD set, and the clause categories
/// labelled in at least 30% of them, most common first. Derived once from the CUAD labels
/// (`../shared/data/cuad/labels.jsonl`, summarised per type in the project's planning notes as
/// "category (contracts with it / contracts of the type)") by keeping every category with count / contracts >= 0.3.
/// Kept here as data so the test does not read the dataset. A category that common must be tested by at least one
/// item of the type.
const COMMON_CUAD_CATEGORIES: &[(&str, usize, &[&str])] = &[
    (
        "Affiliate",
        7,
        &[
            "Expiration Date",
            "Governing Law",
            "Termination For Convenience",
            "Cap On Liability",
            "Audit Rights",
            "License Grant",
            "Exclusivity",
            "Anti-Assignment",
            "Revenue/Profit Sharing",
        ],
    ),
    (
        "Agency",
        9,
        &[
            "Governing Law",
            "Revenue/Profit Sharing",
            "Insurance",
            "Termination For Convenience",
            "Cap On Liability",
            "Minimum Commitment",
            "Post-Termination Services",
            "Audit Rights",
            "Expiration Date",
            "Exclusivity",
            "Anti-Assignment",
        ],
    ),
    (
        "Co-Branding",
        15,
        &[
            "Governing Law",
            "Anti-Assignment",
            "Expiration Date",
            "License Grant",
            "Cap On Liability",
            "Revenue/Profit Sharing",
            "Audit Rights",
            "Renewal Term",
            "Non-Compete",
            "Change Of Control",
            "Non-Transferable License",
            "Uncapped Liability",
            "Post-Termination Services",
            "Competitive Restriction Exception",
            "Exclusivity",
            "Covenant Not To Sue",
            "Minimum Commitment",
            "Notice Period To Terminate Renewal",
            "Volume Restriction",
            "Ip Ownership Assignment",
        ],
    ),
    (
        "Collaboration",
        18,
        &[
            "Governing Law",
            "Expiration Date",
            "Anti-Assignment",
            "Cap On Liability",
            "Post-Termination Services",
            "Exclusivity",
            "Ip Ownership Assignment",
            "License Grant",
            "Termination For Convenience",
            "Rofr/Rofo/Rofn",
            "Audit Rights",
            "Insurance",
            "Revenue/Profit Sharing",
        ],
    ),
    (
        "Consulting",
        8,
        &[
            "Expiration Date",
            "Governing Law",
            "Termination For Convenience",
            "Anti-Assignment",
            "No-Solicit Of Employees",
            "Ip Ownership Assignment",
            "Post-Termination Services",
        ],
    ),
    (
        "Development",
        20,
        &[
            "Governing Law",
            "Expiration Date",
            "Anti-Assignment",
            "License Grant",
            "Exclusivity",
            "Termination For Convenience",
            "Revenue/Profit Sharing",
            "Cap On Liability",
            "Non-Compete",
            "Ip Ownership Assignment",
            "Audit Rights",
            "Post-Termination Services",
            "Insurance",
            "Joint Ip Ownership",
            "Minimum Commitment",
            "Rofr/Rofo/Rofn",
            "Non-Transferable License",
            "Irrevocable Or Perpetual License",
            "Renewal Term",
        ],
    ),
    (
        "Distributor",
        22,
        &[
            "Expiration Date",
            "Governing Law",
            "Anti-Assignment",
            "License Grant",
            "Cap On Liability",
            "Renewal Term",
            "Warranty Duration",
            "Exclusivity",
            "Termination For Convenience",
            "Post-Termination Services",
            "Audit Rights",
            "Minimum Commitment",
            "Non-Transferable License",
            "Notice Period To Terminate Renewal",
            "Non-Compete",
            "Uncapped Liability",
            "Revenue/Profit Sharing",
            "Covenant Not To Sue",
        ],
    ),
    (
        "Endorsement",
        17,
        &[
            "Governing Law",
            "Expiration Date",
            "Anti-Assignment",
            "License Grant",
            "Volume Restriction",
            "Post-Termination Services",
            "Exclusivity",
            "Revenue/Profit Sharing",
            "Non-Compete",
        ],
    ),
    (
        "Franchise",
        10,
        &[
            "Governing Law",
            "Expiration Date",
            "Anti-Assignment",
            "License Grant",
            "Audit Rights",
            "Insurance",
            "Covenant Not To Sue",
            "Revenue/Profit Sharing",
            "Non-Compete",
            "Ip Ownership Assignment",
            "Competitive Restriction Exception",
            "No-Solicit Of Employees",
            "Rofr/Rofo/Rofn",
            "Post-Termination Services",
            "Change Of Control",
            "Renewal Term",
            "Exclusivity",
            "No-Solicit Of Customers",
            "Minimum Commitment",
            "Non-Transferable License",
            "Liquidated Damages",
            "Cap On Liability",
            "Notice Period To Terminate Renewal",
            "Non-Disparagement",
        ],
    ),
    (
        "Hosting",
        14,
        &[
            "Expiration Date",
            "Governing Law",
            "Anti-Assignment",
            "Cap On Liability",
            "License Grant",
            "Renewal Term",
            "Non-Transferable License",
            "Uncapped Liability",
            "Post-Termination Services",
            "Audit Rights",
            "Notice Period To Terminate Renewal",
            "Termination For Convenience",
            "Liquidated Damages",
            "Ip Ownership Assignment",
            "Source Code Escrow",
        ],
    ),
    (
        "IP",
        12,
        &[
            "Governing Law",
            "Ip Ownership Assignment",
            "License Grant",
            "Anti-Assignment",
            "Affiliate License-Licensee",
            "Irrevocable Or Perpetual License",
            "Expiration Date",
            "Non-Transferable License",
            "Covenant Not To Sue",
            "Exclusivity",
            "Change Of Control",
        ],
    ),
    ("Joint Venture", 16, &["Expiration Date", "Governing Law", "Anti-Assignment"]),
    (
        "License",
        23,
        &[
            "License Grant",
            "Expiration Date",
            "Governing Law",
            "Anti-Assignment",
            "Revenue/Profit Sharing",
            "Non-Transferable License",
            "Exclusivity",
            "Audit Rights",
            "Cap On Liability",
            "Post-Termination Services",
            "Covenant Not To Sue",
            "Ip Ownership Assignment",
            "Renewal Term",
            "Uncapped Liability",
            "Change Of Control",
            "Termination For Convenience",
        ],
    ),
    (
        "Maintenance",
        24,
        &[
            "Expiration Date",
            "Anti-Assignment",
            "Cap On Liability",
            "Governing Law",
            "Termination For Convenience",
            "Insurance",
            "Renewal Term",
            "Audit Rights",
        ],
    ),
    (
        "Manufacturing",
        12,
        &[
            "Expiration Date",
            "Governing Law",
            "Audit Rights",
            "Minimum Commitment",
            "Anti-Assignment",
            "Post-Termination Services",
            "Cap On Liability",
            "Renewal Term",
            "Warranty Duration",
            "Insurance",
            "Uncapped Liability",
            "Notice Period To Terminate Renewal",
            "License Grant",
        ],
    ),
    (
        "Marketing",
        12,
        &[
            "Expiration Date",
            "Governing Law",
            "Anti-Assignment",
            "Exclusivity",
            "Post-Termination Services",
            "Insurance",
            "Cap On Liability",
            "Audit Rights",
            "Revenue/Profit Sharing",
            "License Grant",
            "Change Of Control",
            "Renewal Term",
            "Notice Period To Terminate Renewal",
        ],
    ),
    (
        "Non-Compete/Non-Solicit",
        2,
        &[
            "Governing Law",
            "Competitive Restriction Exception",
            "Non-Compete",
            "No-Solicit Of Employees",
            "Anti-Assignment",
            "Revenue/Profit Sharing",
            "Expiration Date",
        ],
    ),
    (
        "Outsourcing",
        13,
        &[
            "Governing Law",
            "Expiration Date",
            "Anti-Assignment",
            "Audit Rights",
            "Cap On Liability",
            "Termination For Convenience",
            "Insurance",
            "Post-Termination Services",
            "Renewal Term",
            "Minimum Commitment",
            "License Grant",
            "Notice Period To Terminate Renewal",
            "Liquidated Damages",
            "Revenue/Profit Sharing",
        ],
    ),
    (
        "Promotion",
        8,
        &[
            "Governing Law",
            "Expiration Date",
            "Revenue/Profit Sharing",
            "Anti-Assignment",
            "Audit Rights",
            "Cap On Liability",
            "Minimum Commitment",
            "License Grant",
            "Exclusivity",
            "Post-Termination Services",
            "Renewal Term",
            "Non-Compete",
            "Termination For Convenience",
            "Rofr/Rofo/Rofn",
            "Change Of Control",
            "Uncapped Liability",
            "Insurance",
        ],
    ),
    (
        "Reseller",
        8,
        &[
            "Expiration Date",
            "Governing Law",
            "Anti-Assignment",
            "Cap On Liability",
            "License Grant",
            "Non-Transferable License",
            "Termination For Convenience",
            "Renewal Term",
            "Exclusivity",
            "Uncapped Liability",
            "Notice Period To Terminate Renewal",
            "Post-Termination Services",
            "Minimum Commitment",
            "Covenant Not To Sue",
            "Volume Restriction",
        ],
    ),
    (
        "Service",
        20,
        &[
            "Expiration Date",
            "Governing Law",
            "Anti-Assignment",
            "Termination For Convenience",
            "Cap On Liability",
            "Audit Rights",
        ],
    ),
    (
        "Sponsorship",
        22,
        &[
            "Governing Law",
            "Expiration Date",
            "Anti-Assignment",
            "Cap On Liability",
            "License Grant",
            "Exclusivity",
            "Insurance",
            "Uncapped Liability",
        ],
    ),
    (
        "Strategic Alliance",
        22,
        &[
            "Governing Law",
            "Anti-Assignment",
            "Expiration Date",
            "Cap On Liability",
            "Termination For Convenience",
            "Audit Rights",
            "Renewal Term",
            "Exclusivity",
            "Revenue/Profit Sharing",
            "Minimum Commitment",
            "Notice Period To Terminate Renewal",
            "No-Solicit Of Employees",
            "Rofr/Rofo/Rofn",
            "License Grant",
        ],
    ),
    (
        "Supply",
        13,
        &[
            "Expiration Date",
            "Governing Law",
            "Anti-Assignment",
            "Cap On Liability",
            "Minimum Commitment",
            "Insurance",
            "Audit Rights",
            "Warranty Duration",
            "Exclusivity",
            "Renewal Term",
            "Notice Period To Terminate Renewal",
            "Uncapped Liability",
            "Post-Termination Services",
            "Change Of Control",
            "Termination For Convenience",
            "License Grant",
            "Volume Restriction",
        ],
    ),
    (
        "Transportation",
        9,
        &[
            "Expiration Date",
            "Governing Law",
            "Renewal Term",
            "Notice Period To Terminate Renewal",
            "Anti-Assignment",
            "Cap On Liability",
            "Volume Restriction",
            "Minimum Commitment",
            "Termination For Convenience",
            "Insurance",
            "Uncapped Liability",
            "Exclusivity",
            "Audit Rights",
            "Liquidated Damages",
        ],
    ),
];

#[test]
fn library_has_exactly_34_types_and_1032_items() {
    let catalog = catalog();
    assert_eq!(catalog.types().len(), 34);
    assert_eq!(catalog.item_count(), 1032);
    assert_eq!(catalog.items().count(), 1032);
}

#[test]
fn each_type_has_the_planned_number_of_items() {
    let catalog = catalog();
    assert_eq!(ITEMS_PER_TYPE.len(), 34);
    assert_eq!(ITEMS_PER_TYPE.iter().map(|(_, n)| n).sum::<usize>(), 1032);
    let mismatched: Vec<String> = ITEMS_PER_TYPE
        .iter()
        .filter_map(|&(id, planned)| {
            let actual = catalog.contract_type(id).map(|t| t.items.len());
            (actual != Some(planned)).then(|| format!("{id}: planned {planned}, found {actual:?}"))
        })
        .collect();
    assert!(mismatched.is_empty(), "{mismatched:#?}");
}

#[test]
fn ids_are_unique_across_the_library() {
    let catalog = catalog();
    let type_ids: HashSet<&str> = catalog.types().iter().map(|t| t.id.as_str()).collect();
    assert_eq!(type_ids.len(), catalog.types().len());
    let item_ids: HashSet<&str> = catalog.items().map(|i| i.id.as_str()).collect();
    assert_eq!(item_ids.len(), catalog.items().count());
    for t in catalog.types() {
        let sections: HashSet<&str> = t.sections.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(sections.len(), t.sections.len(), "{} has a section id twice", t.id);
    }
}

#[test]
fn every_item_belongs_to_an_existing_type_and_section() {
    let catalog = catalog();
    for item in catalog.items() {
        let section = catalog.section(&item.type_id, &item.section);
        assert!(section.is_some(), "{} points at {}/{}", item.id, item.type_id, item.section);
        assert!(item.id.starts_with(&format!("{}.{}.", item.type_id, item.section)), "{}", item.id);
        assert_eq!(catalog.item(&item.id).map(|i| &i.id), Some(&item.id));
    }
}

#[test]
fn every_type_has_four_to_eight_sections_each_with_items() {
    for t in catalog().types() {
        assert!((4..=8).contains(&t.sections.len()), "{} has {} sections", t.id, t.sections.len());
        for section in &t.sections {
            assert!(t.items.iter().any(|i| i.section == section.id), "{}.{} is empty", t.id, section.id);
        }
    }
}

#[test]
fn every_pattern_compiles_case_insensitively() {
    // The catalog compiles with `compile_pattern` and leaves out a pattern that fails, so equal counts mean every
    // pattern compiled. A catalog of its own: the shared one compiles other signals in other tests.
    let catalog = &Catalog::load().unwrap();
    let mut patterns = 0;
    let mut distinct = std::collections::HashSet::new();
    for t in catalog.types() {
        let compiled = catalog.type_signals(&t.id).unwrap();
        let signals = &t.signals;
        distinct.extend(signals.title_patterns.iter().chain(&signals.distinctive_terms).chain(&signals.negative_cues));
        assert_eq!(compiled.title_patterns.len(), signals.title_patterns.len(), "{}", t.id);
        assert_eq!(compiled.distinctive_terms.len(), signals.distinctive_terms.len(), "{}", t.id);
        assert_eq!(compiled.negative_cues.len(), signals.negative_cues.len(), "{}", t.id);
        patterns += signals.title_patterns.len() + signals.distinctive_terms.len() + signals.negative_cues.len();
        for item in &t.items {
            let compiled = catalog.item_signals(&item.id).unwrap();
            assert!(!item.signals.present.is_empty(), "{} has no present pattern", item.id);
            assert_eq!(compiled.present.len(), item.signals.present.len(), "{}", item.id);
            assert_eq!(compiled.partial.len(), item.signals.partial.len(), "{}", item.id);
            assert_eq!(compiled.absent.len(), item.signals.absent.len(), "{}", item.id);
            patterns += item.signals.present.len() + item.signals.partial.len() + item.signals.absent.len();
            distinct.extend(item.signals.present.iter().chain(&item.signals.partial).chain(&item.signals.absent));
        }
    }
    eprintln!("{patterns} patterns compile, {} distinct", distinct.len());
    assert!(patterns >= 831);
    // A pattern repeated across types and items is compiled once.
    assert_eq!(catalog.compiled_pattern_count(), distinct.len());
    assert!(distinct.len() < patterns);
    let title = &catalog.type_signals("nda").unwrap().title_patterns;
    assert!(title.iter().any(|re| re.is_match("MUTUAL NON-DISCLOSURE AGREEMENT")), "matching ignores case");
}

#[test]
fn an_uncompiled_copy_keeps_the_library_and_compiles_again_on_use() {
    let catalog = &Catalog::load().unwrap();
    let sentence = "Neither party shall assign this Agreement without the prior written consent of the other party.";
    let matches = |c: &Catalog| {
        let mut hits = Vec::new();
        for item in c.items() {
            let compiled = c.item_signals(&item.id).unwrap();
            hits.extend(
                compiled.present.iter().filter(|r| r.is_match(sentence)).map(|r| format!("{} {}", item.id, r.as_str())),
            );
        }
        for category in CuadCategory::ALL {
            if c.category_signals(*category).is_some_and(|s| s.supports(sentence)) {
                hits.push(category.to_string());
            }
        }
        hits
    };
    let before = matches(catalog);
    assert!(!before.is_empty(), "the sentence is an assignment clause");
    assert!(catalog.compiled_pattern_count() > 0);

    let copy = catalog.uncompiled();
    assert_eq!(copy.compiled_pattern_count(), 0, "nothing compiled is carried over");
    assert_eq!(copy.version(), catalog.version());
    assert_eq!(copy.item_count(), catalog.item_count());
    assert_eq!(matches(&copy), before);
    assert_eq!(copy.compiled_pattern_count(), catalog.compiled_pattern_count());
}

/// Sentences nearly every contract contains; a pattern that matches one says nothing about any clause.
const BOILERPLATE: &[&str] = &[
    "This Agreement is entered into as of the Effective Date by and between Company and the Customer.",
    "The parties agree as follows. Each party shall perform its obligations under this Agreement in a timely manner.",
    "IN WITNESS WHEREOF, the parties have executed this Agreement by their duly authorized representatives.",
    "Section 1. Definitions. Capitalized terms used herein shall have the meanings set forth below.",
    "All notices shall be in writing and delivered to the addresses set forth above.",
];

#[test]
fn no_present_or_partial_pattern_matches_boilerplate_every_contract_has() {
    let catalog = catalog();
    let mut generic = Vec::new();
    for item in catalog.items() {
        let compiled = catalog.item_signals(&item.id).unwrap();
        for regex in compiled.present.iter().chain(&compiled.partial) {
            if let Some(sentence) = BOILERPLATE.iter().find(|s| regex.is_match(s)) {
                generic.push(format!("{}: {} matches {sentence:?}", item.id, regex.as_str()));
            }
        }
    }
    assert!(generic.is_empty(), "{generic:#?}");
}

#[test]
fn category_signals_cover_every_clause_category_and_never_match_boilerplate() {
    let catalog = catalog();
    let facts =
        [CuadCategory::DocumentName, CuadCategory::Parties, CuadCategory::AgreementDate, CuadCategory::EffectiveDate];
    for category in CuadCategory::ALL.iter().filter(|c| !facts.contains(c)) {
        let signals = catalog.category_signals(*category).unwrap_or_else(|| panic!("no signals for {category}"));
        assert!(!signals.clause.is_empty(), "{category}");
        if let Some(sentence) = BOILERPLATE.iter().find(|s| signals.supports(s)) {
            panic!("{category} signals match boilerplate: {sentence:?}");
        }
    }
}

#[test]
fn every_type_has_classifier_signals() {
    for t in catalog().types() {
        assert!(!t.signals.title_patterns.is_empty(), "{}", t.id);
        assert!(
            (5..=15).contains(&t.signals.distinctive_terms.len()),
            "{}: {} terms",
            t.id,
            t.signals.distinctive_terms.len()
        );
        assert!(!t.signals.negative_cues.is_empty(), "{} has no negative cues", t.id);
    }
}

/// Questions whose content words overlap this much (Jaccard) ask the same thing.
const NEAR_DUPLICATE: f64 = 0.8;

#[test]
fn no_two_items_of_a_type_ask_the_same_question() {
    let mut offenders = Vec::new();
    for t in catalog().types() {
        let Some(pair) = closest_question_pair(t) else { continue };
        let question = |id: &str| t.items.iter().find(|i| i.id == id).map(|i| i.question.clone()).unwrap_or_default();
        eprintln!(
            "{:<24} closest {:.2}: {} ~ {}\n{:26}{:?}\n{:26}{:?}",
            t.id,
            pair.similarity,
            pair.first,
            pair.second,
            "",
            question(&pair.first),
            "",
            question(&pair.second)
        );
        if pair.similarity >= NEAR_DUPLICATE {
            offenders.push(format!("{} ~ {} ({:.2})", pair.first, pair.second, pair.similarity));
        }
    }
    assert!(offenders.is_empty(), "near-duplicate questions: {offenders:#?}");
}

#[test]
fn exactly_the_25_cuad_types_name_their_cuad_type() {
    let catalog = catalog();
    assert_eq!(CUAD_TYPE_IDS.len(), 25);
    let expected: HashMap<&str, &str> = CUAD_TYPE_IDS.iter().map(|&(cuad, id)| (id, cuad)).collect();
    for t in catalog.types() {
        assert_eq!(t.cuad_type.map(CuadType::as_str), expected.get(t.id.as_str()).copied(), "{}", t.id);
    }
    let claimed: HashSet<CuadType> = catalog.types().iter().filter_map(|t| t.cuad_type).collect();
    assert_eq!(claimed.len(), CuadType::ALL.len());
}

#[test]
fn every_cuad_category_common_in_a_cuad_type_is_mapped_by_one_of_its_items() {
    let catalog = catalog();
    let mut missing = Vec::new();
    assert_eq!(COMMON_CUAD_CATEGORIES.len(), 25);
    for &(cuad_type, _contracts, categories) in COMMON_CUAD_CATEGORIES {
        let id = CUAD_TYPE_IDS.iter().find(|(c, _)| *c == cuad_type).map(|(_, id)| *id).unwrap();
        let t = catalog.contract_type(id).unwrap_or_else(|| panic!("no type {id}"));
        let mapped: HashSet<CuadCategory> = t.items.iter().filter_map(|i| i.cuad_category).collect();
        for name in categories {
            let category: CuadCategory = name.parse().unwrap();
            if !mapped.contains(&category) {
                missing.push(format!("{id}: {name}"));
            }
        }
    }
    assert!(missing.is_empty(), "common CUAD categories with no item: {missing:#?}");
}

#[test]
fn every_cuad_clause_category_is_mapped_somewhere() {
    // Document Name, Parties, Agreement Date and Effective Date are extracted facts, not clauses to assess. Every
    // clause category, Third Party Beneficiary included (asked in each CUAD type's general section), is tested.
    let facts =
        [CuadCategory::DocumentName, CuadCategory::Parties, CuadCategory::AgreementDate, CuadCategory::EffectiveDate];
    let mapped: HashSet<CuadCategory> = catalog().items().filter_map(|i| i.cuad_category).collect();
    let unmapped: Vec<&str> =
        CuadCategory::ALL.iter().filter(|c| !facts.contains(c) && !mapped.contains(c)).map(|c| c.as_str()).collect();
    assert!(unmapped.is_empty(), "{unmapped:?}");
}

#[test]
fn coverage_meets_the_targets() {
    let stats = catalog().stats();
    eprintln!("{}", serde_json::to_string_pretty(&stats.fields).unwrap());
    assert!(stats.fields.benchmark.percent >= 40.0, "benchmark {}", stats.fields.benchmark.percent);
    assert!(stats.fields.red_flags.percent >= 50.0, "red flags {}", stats.fields.red_flags.percent);
}

#[test]
fn every_critical_item_has_guidance_and_a_red_flag() {
    let critical: Vec<_> = catalog().items().filter(|i| i.risk == RiskLevel::Critical).collect();
    assert!(!critical.is_empty());
    for item in critical {
        assert!(!item.red_flags.is_empty(), "{}", item.id);
        let g = &item.guidance;
        assert!(![&g.present, &g.partial, &g.absent].iter().any(|t| t.trim().is_empty()), "{}", item.id);
    }
}

#[test]
fn every_item_has_distinct_guidance_for_present_partial_and_absent() {
    for item in catalog().items() {
        let g = &item.guidance;
        for (what, text) in [("present", &g.present), ("partial", &g.partial), ("absent", &g.absent)] {
            assert!(!text.trim().is_empty(), "{} guidance.{what} is empty", item.id);
        }
        let same = g.present == g.partial || g.partial == g.absent || g.present == g.absent;
        assert!(!same, "{} gives the same guidance for two answers: {g:?}", item.id);
    }
}

/// The kinds of source our regulatory references cite, each with a provision number. A citation must contain at
/// least one; a new kind of source is added here only after a person has checked the citations that use it.
const CITATION_SOURCES: &[&str] = &[
    r"\b\d+ U\.S\.C\. \d+",
    r"\b\d+ C\.F\.R\. (Parts? )?\d+",
    r"\bUCC \d-\d{3}",
    r"\b(UK )?GDPR Arts?\. \d+",
    r"\bCal\. (Civ\.|Bus\. & Prof\.|Lab\.|Gov\.|Com\.) Code \d+",
    r"\b(Commission Implementing Decision|Commission Delegated Regulation|Regulation|Directive) \(EU\) \d{4}/\d+",
    r"\bEU (Reg\.|Regulation|Directive) \d{4}/\d+",
    r"\bTreas\. Reg\. \d",
    r"\bMass\. Gen\. Laws ch\. \d+",
    r"\bN\.Y\.C\. Admin\. Code \d",
    r"\bN\.Y\. [A-Z][A-Za-z. ]+ Law \d+",
    r"\bDirective \d{2,4}/\d+/(EEC|EC|EU) Arts?\. \d+",
    r"\b[A-Z][A-Za-z ]+ Act \d{4},? s\. \d+",
];

#[test]
fn regulatory_references_look_like_real_citations() {
    let sources: Vec<regex::Regex> = CITATION_SOURCES.iter().map(|p| regex::Regex::new(p).unwrap()).collect();
    let mut odd = Vec::new();
    let mut count = 0;
    for item in catalog().items() {
        for reference in &item.regulatory {
            count += 1;
            let citation = reference.citation.as_str();
            let tidy = !citation.is_empty() && citation.trim() == citation && citation.len() <= 120;
            let no_links = !citation.contains("http") && !citation.contains("www.");
            if !tidy || !no_links || !sources.iter().any(|source| source.is_match(citation)) {
                odd.push(format!("{}: {citation:?}", item.id));
            }
            assert!(reference.note.trim().len() >= 20, "{}: note too short for {citation}", item.id);
        }
    }
    eprintln!("{count} regulatory references");
    assert!(odd.is_empty(), "citations that do not look like a checked kind of citation: {odd:#?}");
}

#[test]
fn embedded_library_is_the_one_in_the_checklists_directory() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../checklists");
    let from_dir = Catalog::from_dir(&dir).unwrap();
    assert_eq!(from_dir.version(), catalog().version());
    assert_eq!(catalog().version().version, "2026.11.2");
}

#[test]
fn export_and_stats_agree_with_the_catalog() {
    let catalog = catalog();
    let export = catalog.export();
    assert_eq!(export.types.len(), 34);
    assert_eq!(export.types.iter().map(|t| t.items.len()).sum::<usize>(), export.item_count);
    assert_eq!(export.catalog, *catalog.version());
    let stats = catalog.stats();
    let by_risk = stats.by_risk;
    assert_eq!(by_risk.critical + by_risk.high + by_risk.medium + by_risk.low, 1032);
    assert_eq!(stats.per_type.iter().map(|t| t.items).sum::<usize>(), 1032);
    assert_eq!(stats.per_section.iter().map(|s| s.items).sum::<usize>(), 1032);
    assert_eq!(stats.cuad_type_count, 25);
}
