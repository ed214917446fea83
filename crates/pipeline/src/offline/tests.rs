//! The offline path on a small contract written for these tests (not CUAD text).

use super::*;
use pactwise_checklists::Catalog;
use pactwise_domain::{DurationUnit, ItemStatus, Page, Value};
use std::sync::LazyLock;

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| Catalog::load().expect("the embedded library loads"));

const DISTRIBUTION: &str = "EXCLUSIVE DISTRIBUTOR AGREEMENT

This Exclusive Distributor Agreement (the \"Agreement\") is made as of March 3, 2021 by and between Northwind \
Instruments, Inc., a Delaware corporation (\"Supplier\"), and Harbor Medical Supply LLC, a Texas limited liability \
company (\"Distributor\").

1. Appointment. Supplier hereby appoints Distributor as its exclusive distributor of the Products in the Territory, \
and Supplier shall not appoint any other distributor in the Territory during the Term.

2. Term. The initial term of this Agreement shall commence on the Effective Date and continue for three (3) years. \
Thereafter this Agreement shall automatically renew for successive one (1) year periods unless either party gives \
written notice of non-renewal at least ninety (90) days prior to the end of the then-current term.

3. Minimum Purchases. Distributor shall purchase a minimum quantity of 500 units per calendar year.

4. Assignment. Neither party may assign this Agreement without the prior written consent of the other party.

5. Records. Supplier may audit the books and records of Distributor once per year upon reasonable notice.

6. Governing Law. This Agreement shall be governed by and construed in accordance with the laws of the State of \
New York, without regard to its conflict of laws principles.";

fn pages(text: &str) -> Vec<Page> {
    vec![Page::plain(1, text)]
}

#[test]
fn the_title_decides_the_type_and_the_confidence_stays_capped() {
    let index = ContractIndex::build(&pages(DISTRIBUTION));
    let classification = classify(&CATALOG, &index);
    assert_eq!(classification.type_id, "distributor");
    assert_eq!(classification.method, pactwise_domain::Method::Rules);
    assert!(classification.confidence <= RULES_CONFIDENCE_CAP);
}

#[test]
fn a_compound_title_is_the_type_its_longest_first_title_phrase_names() {
    let text = "SOFTWARE LICENSE AND MAINTENANCE AGREEMENT\n\nThis agreement is made between Alpha Ltd (\"Customer\") \
                and Beta Systems Inc. (\"Vendor\"). Vendor shall provide maintenance and support for the Software.";
    let classification = classify(&CATALOG, &ContractIndex::build(&pages(text)));
    assert_eq!(classification.type_id, "maintenance");
}

#[test]
fn every_item_is_answered_in_order_and_every_quote_is_its_pages_own_text() {
    let pages = pages(DISTRIBUTION);
    let index = ContractIndex::build(&pages);
    let distributor = CATALOG.contract_type("distributor").unwrap();
    let mut findings = evaluate(&CATALOG, distributor, &index);
    let ids: Vec<&str> = findings.iter().map(|f| f.item_id.as_str()).collect();
    let expected: Vec<&str> = distributor.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, expected);
    for f in &findings {
        assert!(f.confidence <= RULES_CONFIDENCE_CAP);
        let positive = matches!(f.status, ItemStatus::Present | ItemStatus::Partial);
        assert_eq!(
            positive,
            f.quote.is_some(),
            "{}: a quote exactly where the status is present or partial",
            f.item_id
        );
        if let Some(q) = &f.quote {
            assert!(DISTRIBUTION.contains(&q.text), "{}: {:?}", f.item_id, q.text);
        }
    }
    assert!(crate::verify::verify_findings(&pages, &mut findings).is_empty());
}

#[test]
fn clauses_the_contract_has_are_present_and_ones_it_lacks_are_absent() {
    let index = ContractIndex::build(&pages(DISTRIBUTION));
    let distributor = CATALOG.contract_type("distributor").unwrap();
    let findings = evaluate(&CATALOG, distributor, &index);
    let status_of = |category: &str| -> Vec<(ItemStatus, Option<String>)> {
        distributor
            .items
            .iter()
            .zip(&findings)
            .filter(|(item, _)| item.cuad_category.is_some_and(|c| c.as_str() == category))
            .map(|(_, f)| (f.status, f.quote.as_ref().map(|q| q.text.clone())))
            .collect()
    };
    for category in ["Exclusivity", "Anti-Assignment", "Audit Rights", "Governing Law", "Renewal Term"] {
        let found = status_of(category);
        assert!(!found.is_empty(), "the distributor checklist maps {category}");
        assert!(found.iter().any(|(s, _)| *s == ItemStatus::Present), "{category}: {found:?}");
    }
    let law = status_of("Governing Law");
    assert!(law[0].1.as_deref().unwrap().starts_with("This Agreement shall be governed by"));
    for category in ["Liquidated Damages", "Insurance", "Non-Compete"] {
        assert!(status_of(category).iter().all(|(s, _)| *s == ItemStatus::Absent), "{category}");
    }
}

#[test]
fn fields_name_the_parties_the_date_and_the_governing_law() {
    let fields = extract_fields(&ContractIndex::build(&pages(DISTRIBUTION)));
    let parties: Vec<&str> = fields.parties.iter().map(|p| p.value.as_str()).collect();
    assert_eq!(parties, ["Northwind Instruments, Inc. (\"Supplier\")", "Harbor Medical Supply LLC (\"Distributor\")"]);
    assert_eq!(fields.agreement_date.unwrap().value, "3 March 2021");
    let law = fields.governing_law.unwrap();
    assert_eq!(law.value, "New York, United States");
    assert!(DISTRIBUTION.contains(&law.quote.unwrap().text));
    assert!(fields.renewal.unwrap().value.contains("renews for 1 year"));
}

#[test]
fn jurisdictions_are_named_neutrally_from_the_complete_table() {
    let named = |text: &str| jurisdiction_in(text);
    let cases = [
        ("laws of the Commonwealth of Massachusetts", "Massachusetts, United States"),
        ("laws of the Province of Ontario and the federal laws of Canada", "Ontario, Canada"),
        ("laws of the United States of America and of the State of Texas", "Texas, United States"),
        ("the laws of the United States and the laws of the State of New York", "New York, United States"),
        ("the laws of the United States and Canada", "United States"),
        ("laws of England and Wales", "England and Wales, United Kingdom"),
        ("laws of the State of West Virginia", "West Virginia, United States"),
        ("laws of the People\u{2019}s Republic of China", "China"),
        ("the laws of the PRC", "China"),
        ("the laws of the Republic of South Africa", "South Africa"),
        ("the laws of South Africa", "South Africa"),
        ("the laws of New Zealand", "New Zealand"),
        ("the laws of Papua New Guinea", "Papua New Guinea"),
        ("the laws of the Federal Republic of Germany", "Germany"),
        ("the laws of New South Wales", "New South Wales, Australia"),
        ("the laws of the State of Georgia", "Georgia, United States"),
        ("the laws of Georgia", "Georgia"),
        ("the laws of C\u{f4}te d'Ivoire", "C\u{f4}te d'Ivoire"),
        ("the laws of Cote d'Ivoire", "C\u{f4}te d'Ivoire"),
        ("This Agreement is governed by English law", "England, United Kingdom"),
        ("governed by Swiss substantive law", "Switzerland"),
    ];
    for (text, expected) in cases {
        assert_eq!(named(text).as_deref(), Some(expected), "{text}");
    }
    // An adjective counts only before "law": the language of the contract is not its law.
    assert_eq!(
        named("written in the English language and governed by the laws of the State of New York").as_deref(),
        Some("New York, United States")
    );
    assert_eq!(named("the laws of Newark"), None);
    assert_eq!(named("the laws of New Jerseyland"), None);
}

#[test]
fn the_term_clause_gives_the_expiry_the_renewal_and_the_notice_to_stop_it() {
    let fields = extract_fields(&ContractIndex::build(&pages(DISTRIBUTION)));
    let normalized = |x: &Option<pactwise_domain::Extracted>| x.as_ref().and_then(|e| e.normalized.clone());
    assert_eq!(normalized(&fields.agreement_date), Some(Value::Date { iso: "2021-03-03".into() }));
    // Three years from the date the agreement bears (it names no other start), and said to be computed.
    assert_eq!(normalized(&fields.expiration_date), Some(Value::Date { iso: "2024-03-03".into() }));
    assert!(fields.expiration_date.as_ref().is_some_and(|e| e.value.contains("computed")));
    assert_eq!(normalized(&fields.renewal), Some(Value::Duration { number: 1, unit: DurationUnit::Year }));
    assert_eq!(normalized(&fields.renewal_notice), Some(Value::Duration { number: 90, unit: DurationUnit::Day }));
}

#[test]
fn a_term_until_terminated_has_no_end_and_an_end_date_is_read_as_written() {
    let until_terminated = "SERVICES AGREEMENT\n\nThis Services Agreement is made as of June 9, 2015 by and between \
Alder Widgets Inc. (\"Alder\") and Birch Labs LLC (\"Birch\").\n\n1. Services. Birch shall provide the services.\n\n\
2. Term. This Agreement shall commence on the date first written above and shall continue in effect until terminated \
by either party under Section 3.\n\n3. Termination. Either party may terminate on notice.";
    let fields = extract_fields(&ContractIndex::build(&pages(until_terminated)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Perpetual));
    let parties: Vec<String> = fields.parties.iter().map(|p| p.value.clone()).collect();
    assert_eq!(parties, ["Alder Widgets Inc. (\"Alder\")", "Birch Labs LLC (\"Birch\")"]);

    let end_date = until_terminated.replace(
        "shall continue in effect until terminated by either party under Section 3",
        "shall expire on December 31, 2018",
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&end_date)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2018-12-31".into() }));
}

#[test]
fn a_renewal_period_followed_by_the_word_written_is_still_the_renewal_not_a_notice() {
    let text = "HOSTING AGREEMENT\n\nThis Hosting Agreement is made as of May 2, 2019 by and between Cedar Hosting Ltd. \
(\"Host\") and Dune Analytics Inc. (\"Customer\").\n\n1. Term. This Agreement shall commence on the date first written \
above and continue for two (2) years. It shall then renew for successive six (6) month periods unless written notice \
of non-renewal is given by either party no later than thirty (30) days before the end of the then-current period.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(
        fields.renewal.and_then(|r| r.normalized),
        Some(Value::Duration { number: 6, unit: DurationUnit::Month })
    );
    assert_eq!(
        fields.renewal_notice.and_then(|r| r.normalized),
        Some(Value::Duration { number: 30, unit: DurationUnit::Day })
    );
}

#[test]
fn the_first_party_follows_the_opening_clause_not_the_sentence_before_it() {
    let text = "LICENSE AGREEMENT\n\nThis License Agreement is entered into on March 3, 2025 by Oakridge Analytics Ltd., \
a company registered in Scotland (\"Licensor\"), and Pinecrest Foods, Inc. (\"Licensee\").\n\n1. Grant. Licensor grants \
Licensee a licence.";
    let parties = extract_fields(&ContractIndex::build(&pages(text))).parties;
    let found: Vec<Option<Value>> = parties.into_iter().map(|p| p.normalized).collect();
    let party =
        |name: &str, defined: &str| Value::Party { name: name.into(), defined_as: Some(defined.into()), role: None };
    assert_eq!(
        found,
        [Some(party("Oakridge Analytics Ltd.", "Licensor")), Some(party("Pinecrest Foods, Inc.", "Licensee"))]
    );
}

#[test]
fn parties_without_defined_names_are_read_from_between_and_from_party_letter_lines() {
    let between = "SUPPLY AGREEMENT\n\nThis Supply Agreement is made as of 2 May 2019 by and between Elm Foundry Ltd., \
having its registered office at 4 Quay Road, and Fir Coatings GmbH, a German company.\n\n1. Supply. Elm Foundry shall \
supply the goods.";
    let names: Vec<String> =
        extract_fields(&ContractIndex::build(&pages(between))).parties.into_iter().map(|p| p.value).collect();
    assert_eq!(names, ["Elm Foundry Ltd.", "Fir Coatings GmbH"], "the stop of a company form is part of the name");

    let letters = "COOPERATION AGREEMENT\n\nParty A:\n\nGinkgo Media Co., Ltd.\n\nParty B: Hazel Games Co., Ltd.\n\n\
1. Cooperation. Party A and Party B shall cooperate.";
    let parties = extract_fields(&ContractIndex::build(&pages(letters))).parties;
    let found: Vec<Option<Value>> = parties.into_iter().map(|p| p.normalized).collect();
    assert_eq!(
        found,
        [
            Some(Value::Party {
                name: "Ginkgo Media Co., Ltd.".into(),
                defined_as: Some("Party A".into()),
                role: None
            }),
            Some(Value::Party { name: "Hazel Games Co., Ltd.".into(), defined_as: Some("Party B".into()), role: None }),
        ]
    );
}

#[test]
fn the_definition_of_the_term_is_quoted_for_the_expiry_when_no_operative_sentence_sets_it() {
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of May 1, 2019 by and between Cedar \
Optics Inc. (\"Supplier\") and Dogwood Trading LLC (\"Distributor\").\n\n1. Definitions.\n\n1.1 \"Products\" means the \
lenses listed in Exhibit A.\n\n1.2 \"Initial Term\" means the period from the Effective Date through December 31, 2021, \
unless earlier terminated under Section 5.\n\n2. Appointment. Supplier appoints Distributor as a distributor of the \
Products.\n\n3. Orders. Distributor shall order Products by written purchase order.";
    let index = ContractIndex::build(&pages(text));
    let distributor = CATALOG.contract_type("distributor").unwrap();
    let findings = evaluate(&CATALOG, distributor, &index);
    let expiry: Vec<_> = distributor
        .items
        .iter()
        .zip(&findings)
        .filter(|(item, _)| item.cuad_category.is_some_and(|c| c.as_str() == "Expiration Date"))
        .map(|(_, f)| f)
        .collect();
    assert!(!expiry.is_empty(), "the distributor checklist maps Expiration Date");
    let quoted = expiry.iter().find_map(|f| f.quote.as_ref()).expect("the expiry is quoted");
    assert!(quoted.text.contains("\"Initial Term\" means the period"), "{:?}", quoted.text);
    // The definition of another term is never quoted as the expiry.
    assert!(expiry.iter().all(|f| f.quote.as_ref().is_none_or(|q| !q.text.contains("\"Products\""))));
}

#[test]
fn a_warranty_or_confidentiality_period_is_not_the_term_the_expiry_is_computed_from() {
    let text = "SUPPLY AGREEMENT\n\nThis Supply Agreement is made as of January 15, 2020 by and between Elm Foundry \
Ltd. (\"Seller\") and Fir Coatings GmbH (\"Buyer\").\n\n1. Warranty. Seller warrants the goods for a period of one (1) \
year from delivery.\n\n2. Confidentiality. The obligations of confidentiality shall continue for a period of five (5) \
years after termination.\n\n3. Term. This Agreement shall commence on the date first written above and continue for \
a period of two (2) years.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2022-01-15".into() }));
}

#[test]
fn an_agreement_signed_on_different_days_is_dated_by_the_last_signature() {
    let text = "CONSULTING AGREEMENT\n\nThe parties agree as follows.\n\n1. Services. Consultant shall advise the \
Company on its products.\n\n2. Fees. The Company shall pay the fees in Exhibit A.\n\nIN WITNESS WHEREOF, the parties \
have executed this Agreement as of the last date below.\n\nBy: /s/ A. Alder   By: /s/ B. Birch\nDate: March 29, 2016   \
Date: March 31, 2016";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2016-03-31".into() }));
}

#[test]
fn the_expiry_counts_from_the_date_the_agreement_bears_and_ignores_cure_periods() {
    let head = "PROMOTION AGREEMENT\n\nThis Promotion Agreement is made as of March 4, 2016 by and between Ivy Media \
Inc. (\"Ivy\") and Juniper Foods LLC (\"Juniper\").\n\n1. Promotion. Ivy shall promote the products of Juniper.\n\n";
    // The first anniversary of the date of this Agreement, although the term begins on another date.
    let anniversary = format!(
        "{head}2. Term. The term of this Agreement will begin on April 1, 2016 and end on the first anniversary of the \
date of this Agreement."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&anniversary)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2017-03-04".into() }));

    // A term until terminated is not overruled by the period to cure a breach named elsewhere.
    let cure = format!(
        "{head}2. Term. The term of this Agreement shall commence on the date first written above and shall remain in \
effect until terminated by either party.\n\n3. Breach. Either party may end this Agreement if the other party's \
breach is not remedied for a period of thirty (30) days after notice."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&cure)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Perpetual));

    // "until the earlier of (i) a date and (ii) an event" ends on that date.
    let earlier = format!(
        "{head}2. Term. The term of this Agreement will continue until the earlier of (i) December 31, 2019 and (ii) \
the closing of the sale of Juniper."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&earlier)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2019-12-31".into() }));
}

#[test]
fn a_renewal_of_unknown_length_is_said_in_words_and_only_from_a_sentence_about_the_term_renewing() {
    let head = "SUPPLY AGREEMENT\n\nThis Supply Agreement is made as of March 4, 2016 by and between Kapok Parts Inc. \
(\"Supplier\") and Larch Motors LLC (\"Buyer\").\n\n1. Supply. Supplier shall supply the parts.\n\n";
    // A cure period "extended" and an extension the parties may agree on are not a renewal of the term.
    let not_renewing = format!(
        "{head}2. Term. This Agreement shall continue until December 31, 2019, unless extended by mutual written \
agreement of the parties.\n\n3. Cure. The period to cure a breach shall be extended while the breach is being cured."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&not_renewing)));
    assert_eq!(fields.renewal, None);

    let renewing = format!(
        "{head}2. Term. This Agreement shall continue until December 31, 2019 and shall thereafter automatically \
renew unless either party objects."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&renewing)));
    let renewal = fields.renewal.expect("the term renews");
    assert_eq!(renewal.value, "renews; the length is not stated");
    assert_eq!(renewal.normalized, None);
}

#[test]
fn an_agreement_signed_on_a_stated_day_is_dated_by_it_and_takes_effect_then_unless_it_says_otherwise() {
    let text = "JOINT FILING AGREEMENT\n\nThe undersigned agree that the statement is filed on behalf of each of them.\n\n\
IN WITNESS WHEREOF, the undersigned hereby execute this Agreement this 14th day of FEBRUARY , 2020.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2020-02-14".into() }));
    let effective = fields.effective_date.expect("effective when made");
    assert_eq!(effective.normalized, Some(Value::Date { iso: "2020-02-14".into() }));
    assert!(effective.value.contains("no other effective date is stated"), "{}", effective.value);
}

#[test]
fn organisations_that_sign_are_parties_when_the_opening_does_not_name_them() {
    let text = "JOINT FILING AGREEMENT\n\nThe undersigned agree that the statement on Schedule 13G is filed on behalf of \
each of them.\n\nIN WITNESS WHEREOF, the undersigned execute this Agreement as of May 11, 2020.\n\nMAPLE HOLDINGS LP\n\n\
By: /s/ Ann Lee Name: Ann Lee Title: Chief Financial Officer OAK CAPITAL MANAGEMENT, INC.\n\nBy: /s/ Ann Lee\n\n\
By: Rowan Fund GP, L.P.";
    let names: Vec<String> =
        extract_fields(&ContractIndex::build(&pages(text))).parties.into_iter().map(|p| p.value).collect();
    assert_eq!(
        names,
        ["MAPLE HOLDINGS LP", "OAK CAPITAL MANAGEMENT, INC."],
        "capitals ending a mixed-case name are not one"
    );
}

#[test]
fn each_party_signing_for_and_on_behalf_of_itself_is_a_party() {
    let text = "CONSTRUCTION AND MAINTENANCE AGREEMENT\n\nTHIS AGREEMENT is made among the Parties signatory hereto.\n\n\
1. Cable. The Parties shall build the cable.\n\nIN WITNESS WHEREOF, the Parties have signed this Agreement.\n\n\
For and on behalf of Quince Telecom plc     By: /s/ R. Roe\n\nFor and on behalf of Sorrel Networks B.V.\n\nBy: /s/ T. Poe";
    let names: Vec<String> =
        extract_fields(&ContractIndex::build(&pages(text))).parties.into_iter().map(|p| p.value).collect();
    assert_eq!(names, ["Quince Telecom plc", "Sorrel Networks B.V."]);
}

#[test]
fn the_term_defined_as_a_period_or_running_to_the_end_of_a_year_gives_the_expiry() {
    let head = "SPONSORSHIP AGREEMENT\n\nThis Sponsorship Agreement is made as of March 4, 2016 by and between Ivy Media \
Inc. (\"Ivy\") and Juniper Foods LLC (\"Juniper\").\n\n";
    let defined = format!(
        "{head}1. Definitions. \"Contract Period\" shall mean that period of time from March 4, 2016 through December \
31, 2018.\n\n2. Sponsorship. Juniper shall sponsor the events of Ivy during the Contract Period."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&defined)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2018-12-31".into() }));

    let end_of_year = format!("{head}1. Term. This agreement will be in effect until the end of 2017.");
    let fields = extract_fields(&ContractIndex::build(&pages(&end_of_year)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2017-12-31".into() }));
}

#[test]
fn a_renewal_by_notice_or_as_automatic_extensions_keeps_its_length() {
    let head = "LICENSE AGREEMENT\n\nThis License Agreement is made as of March 4, 2016 by and between Ivy Media Inc. \
(\"Ivy\") and Juniper Foods LLC (\"Juniper\").\n\n";
    let by_notice = format!(
        "{head}7. Term. This Agreement may be renewed for an additional term of ten (10) years by notice in writing \
given by Juniper at the expiry of the Term."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&by_notice)));
    assert_eq!(
        fields.renewal.and_then(|r| r.normalized),
        Some(Value::Duration { number: 10, unit: DurationUnit::Year })
    );
    let automatic = format!(
        "{head}7. Term. The Term will be 3 years from the Effective Date with automatic 2 year term extensions unless \
either party objects."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&automatic)));
    assert_eq!(
        fields.renewal.and_then(|r| r.normalized),
        Some(Value::Duration { number: 2, unit: DurationUnit::Year })
    );
}

mod learned_prefill {
    use super::*;
    use crate::offline::learned::{
        CategoryWeights, ClassifierFile, Combine, LearnedError, PrefillClassifier, QuoteFrom, SentenceVectors,
    };
    use pactwise_domain::CuadCategory;

    /// Sentence vectors made by rule for the test: the sentence naming a minimum quantity points one way, every other
    /// sentence another.
    struct MarkedVectors(&'static str);

    impl SentenceVectors for MarkedVectors {
        fn model_id(&self) -> &str {
            self.0
        }

        fn vectors(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0.0; pactwise_embed::DIMENSIONS];
                    v[usize::from(!t.contains("minimum quantity"))] = 1.0;
                    v
                })
                .collect())
        }
    }

    fn weights(category: CuadCategory, combine: Combine, first: f32, bias: f32) -> CategoryWeights {
        let mut weights = vec![0.0; pactwise_embed::DIMENSIONS];
        weights[0] = first;
        CategoryWeights {
            category: category.as_str().into(),
            combine,
            quote: QuoteFrom::Rules,
            threshold: 0.5,
            bias,
            weights,
        }
    }

    fn classifier(categories: Vec<CategoryWeights>) -> PrefillClassifier {
        let file = ClassifierFile {
            embedding_model_id: "test-model".into(),
            dimensions: pactwise_embed::DIMENSIONS,
            seed: 1,
            epochs: 1,
            trained_on: "the test".into(),
            contracts: Vec::new(),
            categories,
        };
        PrefillClassifier::from_json(&serde_json::to_string(&file).unwrap()).unwrap()
    }

    fn status_of(findings: &[pactwise_domain::ItemFinding], category: CuadCategory) -> Vec<ItemStatus> {
        findings
            .iter()
            .filter(|f| CATALOG.item(&f.item_id).and_then(|i| i.cuad_category) == Some(category))
            .map(|f| f.status)
            .collect()
    }

    #[test]
    fn the_classifier_adds_a_clause_the_rules_missed_and_holds_back_one_it_does_not_see_with_the_reason() {
        let pages = pages(DISTRIBUTION);
        let index = ContractIndex::build(&pages);
        let distributor = CATALOG.contract_type("distributor").unwrap();
        let rules = evaluate(&CATALOG, distributor, &index);
        let categories: Vec<CuadCategory> = distributor.items.iter().filter_map(|i| i.cuad_category).collect();
        // One category the rules call present, one they do not.
        let found = *categories.iter().find(|&&c| status_of(&rules, c).contains(&ItemStatus::Present)).unwrap();
        let missed = *categories.iter().find(|&&c| !status_of(&rules, c).contains(&ItemStatus::Present)).unwrap();

        let classifier = classifier(vec![
            // Sees nothing anywhere, and decides alone.
            weights(found, Combine::Classifier, 0.0, -5.0),
            // Sees the minimum-quantity sentence, and adds to the rules.
            weights(missed, Combine::Either, 10.0, -5.0),
        ]);
        let scores = classifier.score_with(&index, &MarkedVectors("test-model")).unwrap();
        let mut findings = evaluate_with(&CATALOG, distributor, &index, Some(&scores));
        assert_eq!(findings.len(), rules.len(), "one finding per item still");

        let held = findings.iter().find(|f| CATALOG.item(&f.item_id).and_then(|i| i.cuad_category) == Some(found));
        let held = held.unwrap();
        assert_eq!(held.status, ItemStatus::NotEvaluated);
        assert!(held.reason.as_deref().unwrap().contains("learned classifier scores no sentence"), "{held:?}");

        let added = findings.iter().find(|f| CATALOG.item(&f.item_id).and_then(|i| i.cuad_category) == Some(missed));
        let added = added.unwrap();
        assert_eq!(added.status, ItemStatus::Present);
        assert!(added.confidence <= RULES_CONFIDENCE_CAP);
        assert!(added.quote.as_ref().unwrap().text.contains("minimum quantity of 500 units"), "{added:?}");
        assert!(added.reason.as_deref().unwrap().contains("learned classifier found"));

        // The quote is the page's own text: verification keeps it.
        let rejected = crate::stages::check_findings(&CATALOG, &pages, &index, &mut findings);
        assert!(rejected.is_empty(), "{rejected:?}");

        // Other categories are the rules' answers unchanged.
        for (with, without) in findings.iter().zip(&rules) {
            let category = CATALOG.item(&with.item_id).and_then(|i| i.cuad_category);
            if category != Some(found) && category != Some(missed) {
                assert_eq!(with.status, without.status, "{}", with.item_id);
            }
        }
    }

    #[test]
    fn weights_for_another_embedding_model_or_of_the_wrong_size_are_refused() {
        let index = ContractIndex::build(&pages(DISTRIBUTION));
        let classifier = classifier(vec![weights(CuadCategory::AuditRights, Combine::Either, 1.0, 0.0)]);
        let refused = classifier.score_with(&index, &MarkedVectors("another-model")).unwrap_err();
        assert!(matches!(&refused, LearnedError::ModelMismatch { trained, installed }
            if trained == "test-model" && installed == "another-model"));
        assert!(refused.to_string().contains("the rules alone answer"));

        let mut file = classifier.file().clone();
        file.categories[0].weights.truncate(3);
        let bad = PrefillClassifier::from_json(&serde_json::to_string(&file).unwrap()).unwrap_err();
        assert!(bad.to_string().contains("Audit Rights"), "{bad}");
        assert!(PrefillClassifier::from_json("{").is_err());
    }

    #[test]
    fn the_shipped_weights_load_and_name_their_embedding_model_and_training_data() {
        let shipped = PrefillClassifier::shipped().expect("the shipped weights read");
        assert!(shipped.file().embedding_model_id.starts_with(pactwise_embed::MODEL_NAME));
        assert!(shipped.file().trained_on.contains("CUAD"));
        assert!(!shipped.file().contracts.is_empty());
        assert!(shipped.file().categories.len() >= 30, "a regression per clause category");
    }

    #[test]
    fn combining_follows_the_trained_choice() {
        let table = [(Combine::Rules, [false, false, true, true]), (Combine::Classifier, [false, true, false, true])];
        for (combine, expected) in table {
            let got = [(false, false), (false, true), (true, false), (true, true)].map(|(r, c)| combine.present(r, c));
            assert_eq!(got, expected, "{combine:?}");
        }
        assert!(Combine::Either.present(false, true) && !Combine::Both.present(false, true));
    }
}

#[test]
fn a_renewal_mentioned_only_in_passing_outside_the_term_is_left_for_a_person_not_quoted() {
    // The only sentence the Renewal Term signals match sits in a pricing section and carries one signal: a passing
    // mention, not the renewal clause.
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of April 4, 2022 by and between Gale \
Optics Inc. (\"Supplier\") and Heron Trading LLC (\"Distributor\").\n\n1. Appointment. Supplier appoints Distributor \
as its distributor of the Products in the Territory.\n\n2. Pricing. The prices in Exhibit A are reviewed by \
the parties on a year-to-year basis and change only by written amendment.\n\n3. Governing Law. This Agreement shall be \
governed by the laws of the State of Ohio.";
    let distributor = CATALOG.contract_type("distributor").unwrap();
    let findings = evaluate(&CATALOG, distributor, &ContractIndex::build(&pages(text)));
    let renewal: Vec<_> = distributor
        .items
        .iter()
        .zip(&findings)
        .filter(|(item, _)| item.cuad_category.is_some_and(|c| c.as_str() == "Renewal Term"))
        .map(|(_, f)| f)
        .collect();
    assert!(!renewal.is_empty());
    for finding in renewal {
        assert_eq!(finding.status, ItemStatus::NotEvaluated, "{finding:?}");
        assert!(finding.quote.is_none());
        assert!(finding.reason.as_deref().is_some_and(|r| r.contains("passing mention") && r.contains("Pricing")));
    }
    // The same words in the term's own section are the clause.
    let in_home =
        text.replace("2. Pricing. The prices in Exhibit A are reviewed", "2. Term. This Agreement is renewed");
    let findings = evaluate(&CATALOG, distributor, &ContractIndex::build(&pages(&in_home)));
    assert!(
        distributor.items.iter().zip(&findings).any(|(item, f)| {
            item.cuad_category.is_some_and(|c| c.as_str() == "Renewal Term") && f.status == ItemStatus::Present
        }),
        "{findings:?}"
    );
}

#[test]
fn an_outer_limit_on_the_term_is_its_end_and_an_extension_s_end_date_is_not() {
    let capped = "LICENSE AGREEMENT\n\nThis License Agreement is made as of May 1, 2011 by and between Ivy Games Inc. \
(\"Licensor\") and Juniper Media LLC (\"Licensee\").\n\n1. Term. This Agreement shall terminate three (3) years after \
the launch of the first licensed title, but in no event later than June 30, 2015.";
    let fields = extract_fields(&ContractIndex::build(&pages(capped)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2015-06-30".into() }));

    let extended = "SERVICES AGREEMENT\n\nThis Services Agreement is made as of January 5, 2011 by and between Kite \
Data Ltd. (\"Provider\") and Larch Press Inc. (\"Customer\").\n\n1. Services. Provider shall host the Customer's \
archive.\n\n2. Renewal. If the Customer exercises its right to renew, the term of the Services shall be extended by \
one further year, up to and including March 31, 2013.\n\n3. Term. The initial term of the Services, unless \
terminated as set out herein, shall continue up to and including March 31, 2012.";
    let fields = extract_fields(&ContractIndex::build(&pages(extended)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2012-03-31".into() }));
}

#[test]
fn an_agreement_dated_only_where_it_is_signed_or_as_of_its_defined_effective_date_has_that_date() {
    let signed = "SUPPLY AGREEMENT\n\nBetween Maple Foods Inc. (\"Buyer\") and Nettle Farms Ltd. (\"Seller\").\n\n\
1. Supply. Seller shall supply the goods listed in the order.\n\n2. Price. Buyer shall pay within thirty days.\n\n\
IN WITNESS WHEREOF, the parties have signed this agreement.\n\nOslo, 7 October 2021\nMaple Foods Inc.    Nettle Farms Ltd.";
    let fields = extract_fields(&ContractIndex::build(&pages(signed)));
    assert_eq!(fields.agreement_date.and_then(|d| d.normalized), Some(Value::Date { iso: "2021-10-07".into() }));

    let defined = "SUPPLY AGREEMENT\n\nThis Supply Agreement is between Maple Foods Inc. (\"Buyer\") and Nettle Farms \
Ltd. (\"Seller\").\n\n1. Definitions\n1.1 \"Goods\" shall mean the goods listed in the order form.\n1.2 \"Effective Date\" \
shall mean August 9, 2016.\n\n2. Supply. Seller shall supply the Goods.\n\nIN WITNESS WHEREOF, the parties have \
executed this Agreement as of the Effective Date.\n\nMaple Foods Inc.    Nettle Farms Ltd.";
    let fields = extract_fields(&ContractIndex::build(&pages(defined)));
    assert_eq!(fields.agreement_date.and_then(|d| d.normalized), Some(Value::Date { iso: "2016-08-09".into() }));
}

#[test]
fn a_term_named_by_dates_an_abbreviated_agreement_or_a_lasting_condition_is_read() {
    let head = "JOINT VENTURE AGREEMENT\n\nThis Joint Venture Agreement (the \"JVA\") is made as of March 2, 2017 by \
and between Olive Tools Inc. (\"Olive\") and Pine Works LLC (\"Pine\").\n\n1. Purpose. The parties shall develop a \
tool line together.\n\n2. Duration. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    assert_eq!(
        read("The venture is a fixed venture beginning April 1, 2017 and ending June 30th, 2018."),
        Some(Value::Date { iso: "2018-06-30".into() })
    );
    assert_eq!(
        read(
            "This JVA shall expire upon the earlier of (i) the second anniversary of the date hereof and (ii) a sale of Pine."
        ),
        Some(Value::Date { iso: "2019-03-02".into() })
    );
    assert_eq!(
        read(
            "This Agreement shall continue in full force and effect for so long as both parties hold shares of the venture."
        ),
        Some(Value::Perpetual)
    );
}

#[test]
fn a_term_that_lasts_until_an_event_has_no_fixed_end() {
    let head = "LICENCE AGREEMENT\n\nThis Licence Agreement is made as of May 5, 2018 by and between Quartz Labs Inc. \
(\"Quartz\") and Rowan Pharma LLC (\"Rowan\").\n\n1. Licence. Quartz grants Rowan a licence to the Compound.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    // The agreement or its term runs until something happens, not until a date: no fixed end.
    for term in [
        "This Agreement shall take effect on the Effective Date and shall remain in effect until the last Licensed Patent covering the Compound has expired.",
        "The term of this Agreement shall begin on the Launch Date and will not end until Quartz has delivered every batch ordered.",
        "This Agreement shall expire if Rowan ceases to market the Compound in any country.",
    ] {
        assert_eq!(read(term), Some(Value::Perpetual), "{term}");
    }
    // Running until the term's own end says nothing about when that is, and a period still gives the date.
    assert_eq!(read("This Agreement shall remain in effect until the expiration of the Term."), None);
    assert_eq!(
        read(
            "This Agreement shall remain in effect for two (2) years, and thereafter until either party gives notice."
        ),
        Some(Value::Date { iso: "2020-05-05".into() })
    );
}

#[test]
fn a_term_clause_ending_in_a_colon_is_read_with_its_list() {
    let text = "SUPPLY AGREEMENT\n\nThis Supply Agreement is made as of October 3, 2016 by and between Spruce Metals \
Inc. (\"Spruce\") and Teak Tools LLC (\"Teak\").\n\n1. Supply. Spruce shall supply the goods Teak orders.\n\n2. Term. \
This Agreement shall remain in force until whichever of the following happens first:\n\n(a) the third anniversary of \
this Agreement; or\n\n(b) Teak no longer buys goods from Spruce.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    // The anniversary of this Agreement counts from the date it bears.
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2019-10-03".into() }));
}

#[test]
fn the_date_the_contract_defines_as_its_effective_date_is_the_effective_date() {
    let text = "HOSTING AGREEMENT\n\nThis Hosting Agreement dated February 7, 2011 (the \"Effective Date\") is made between \
Umber Cloud Inc. (\"Umber\") and Violet Retail LLC (\"Violet\").\n\n1. Fees. Violet shall pay the fee in two parts, \
beginning on April 30, 2011 and on July 31, 2011.\n\n2. Term. The Term of this Agreement shall begin on the Effective \
Date and shall end eighteen months therefrom.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    // Not the date a payment begins on, and the term counts from it.
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2011-02-07".into() }));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2012-08-07".into() }));
}

#[test]
fn a_term_that_runs_on_after_its_period_until_a_party_ends_it_renews_without_end() {
    let head = "STORAGE AGREEMENT\n\nThis Storage Agreement is made as of July 1, 2014 by and between Walnut Depots Inc. \
(\"Walnut\") and Yew Grain LLC (\"Yew\").\n\n1. Storage. Walnut shall store the grain Yew delivers.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.renewal.and_then(|e| e.normalized)
    };
    assert_eq!(
        read(
            "This Agreement shall begin on the date above and continue until the end of the eighth Storage Year, and shall remain in full force and effect thereafter until terminated by either party on sixty (60) days' notice."
        ),
        Some(Value::Perpetual)
    );
    // A term until terminated from the start has no fixed period to run on after: no renewal is read.
    assert_eq!(read("This Agreement shall remain in effect until terminated by either party on notice."), None);
}

#[test]
fn the_notice_that_ends_an_open_ended_term_is_the_notice_to_stop_it() {
    let head = "PIPELINE AGREEMENT\n\nThis Pipeline Agreement is made as of March 9, 2015 by and between Alder Gas Inc. \
(\"Alder\") and Birch Power LLC (\"Birch\").\n\n1. Carriage. Alder shall carry the gas Birch tenders.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.renewal_notice.and_then(|e| e.normalized)
    };
    assert_eq!(
        read(
            "The term of this Agreement shall begin on the date above and shall remain in force until terminated by either party upon forty-five (45) days' prior written notice."
        ),
        Some(Value::Duration { number: 45, unit: DurationUnit::Day })
    );
    // A notice to end the agreement for a breach is not one that ends an open-ended term.
    assert_eq!(
        read(
            "This Agreement shall remain in force until terminated. Either party may terminate this Agreement for breach on ten (10) days' notice."
        ),
        None
    );
}

#[test]
fn incidental_negated_or_unrelated_mentions_do_not_support_a_clause_category() {
    use pactwise_domain::CuadCategory::*;
    // (category, sentence, supports the category). Sentences written for this test.
    let table = [
        // Returning or destroying confidential information at the end is the end of the relationship, not a
        // service after it; a sell-off period still is.
        (
            PostTerminationServices,
            "Upon termination of this Agreement, each party shall promptly return or destroy the Confidential Information of the other party.",
            false,
        ),
        (
            PostTerminationServices,
            "Following the expiration of this Agreement, Distributor shall be entitled to sell its remaining inventory for ninety (90) days.",
            true,
        ),
        // Provisions that survive the end, the relief a party may seek and pay for work done before it are no service
        // after the end.
        (
            PostTerminationServices,
            "Upon any termination of this Agreement, the following provisions shall remain in effect: Sections 7, 9 and 12.",
            false,
        ),
        (
            PostTerminationServices,
            "Upon termination for breach, the non-breaching party shall be entitled to seek all remedies available at law or in equity.",
            false,
        ),
        (
            PostTerminationServices,
            "In the event of termination, the Consultant shall be entitled to payment for services rendered prior to the date of termination.",
            false,
        ),
        (
            PostTerminationServices,
            "Upon termination of this Agreement, the Supplier shall continue to provide transition assistance for up to six months.",
            true,
        ),
        // A shareholders' vote by majority, a software's control panel and a court's division are no change of control.
        (
            ChangeOfControl,
            "This Agreement may be terminated at any time by a vote of a majority of the outstanding voting securities of the Fund.",
            false,
        ),
        (
            ChangeOfControl,
            "The Publisher may record changes in the control panel settings at any time without notice to the Reseller.",
            false,
        ),
        (
            ChangeOfControl,
            "Any action shall be brought in the United States District Court, Northern Division, and each party consents to that venue.",
            false,
        ),
        (
            ChangeOfControl,
            "Either party may terminate this Agreement upon a change of control of the other party by giving thirty days' notice.",
            true,
        ),
        // A proxy solicitation and an exclusive remedy are no exception to a restriction on competition.
        (
            CompetitiveRestrictionException,
            "The Investor shall not engage in any solicitation of proxies with respect to the Company, provided, however, that it may vote its shares.",
            false,
        ),
        (
            CompetitiveRestrictionException,
            "The decision of the panel shall be the sole, exclusive and binding remedy of the parties, provided that either may seek costs.",
            false,
        ),
        // Ending a fund or a service at any time is not ending the agreement for convenience.
        (TerminationForConvenience, "The Sponsor may terminate the Fund at any time in its sole discretion.", false),
        (
            TerminationForConvenience,
            "The Customer may terminate this Agreement at any time in its sole discretion.",
            true,
        ),
        // A warranty of title, a denial of the right to use, leave to use office space and the word "Licensee" grant
        // no licence.
        (
            LicenseGrant,
            "The Supplier owns or otherwise has the right to use all trademarks it provides to the Buyer for packaging.",
            false,
        ),
        (
            LicenseGrant,
            "The Agent will not have the right to use the name or marks of the Company without its prior written approval.",
            false,
        ),
        (
            LicenseGrant,
            "The Company will provide the Consultant with a license to use office space in its building free of charge.",
            false,
        ),
        (
            LicenseGrant,
            "The Seller hereby grants to the Licensee an option to purchase all of the assets of the Seller at a fixed price.",
            false,
        ),
        (
            LicenseGrant,
            "The Licensor hereby grants to the Licensee a non-exclusive license to use the Software in the Territory.",
            true,
        ),
        // Common ways of stating the term, an exception to a restriction, an exclusive right and buying back the
        // inventory after the end; each beside a near miss.
        (
            ExpirationDate,
            "The term of this Agreement starts on the Effective Date and will expire five (5) years from the Effective Date.",
            true,
        ),
        (ExpirationDate, "The initial term is 24 months beginning on the Launch Date.", true),
        (
            ExpirationDate,
            "The Reseller's duties shall remain in full force and effect for at least one year after the Effective Date.",
            true,
        ),
        (
            ExpirationDate,
            "This Agreement shall commence on the Effective Date and shall expire upon the earlier of the last payment or the fifth anniversary.",
            true,
        ),
        (ExpirationDate, "Invoices expire thirty (30) days from the date of issue.", false),
        (
            CompetitiveRestrictionException,
            "The foregoing restrictions shall not apply to products that the Distributor sold before the Effective Date.",
            true,
        ),
        (
            CompetitiveRestrictionException,
            "Nothing herein shall preclude the Licensor from selling the Product outside the Territory to any third party.",
            true,
        ),
        (
            CompetitiveRestrictionException,
            "Nothing herein shall preclude the Licensor from disclosing information required by law.",
            false,
        ),
        (
            Exclusivity,
            "Within the Area, the Franchisor shall not operate or grant to anyone else a franchise to operate a restaurant.",
            true,
        ),
        (Exclusivity, "The Distributor's right to sell the Products in the Territory shall be exclusive.", true),
        (Exclusivity, "The Distributor shall procure the Products solely from the Manufacturer.", true),
        (Exclusivity, "The Distributor shall procure insurance from a reputable carrier.", false),
        (
            PostTerminationServices,
            "The Supplier agrees to repurchase all Products in the Distributor's inventory within sixty days following the effective date of termination.",
            true,
        ),
        (
            PostTerminationServices,
            "Within thirty days after termination, the Franchisor may purchase any inventory bearing its marks at fair market value.",
            true,
        ),
        (
            PostTerminationServices,
            "The Distributor shall keep a stock of the Products sufficient for ninety days of sales.",
            false,
        ),
        (
            IpOwnershipAssignment,
            "Any improvements to the System made by the Franchisee shall be our sole property.",
            true,
        ),
        (IpOwnershipAssignment, "The delivery vehicles shall be our sole property.", false),
        // A minimum the contract denies is no commitment, and a shortfall found by an audit is not one either.
        (
            MinimumCommitment,
            "There shall be no minimum purchase amount due from the Buyer under this Agreement.",
            false,
        ),
        (
            MinimumCommitment,
            "Nothing in this Agreement obligates the Buyer to purchase any minimum quantity of Products during the Term.",
            false,
        ),
        (
            MinimumCommitment,
            "If the inspection discloses a shortfall in the amounts paid, the Licensee shall promptly pay the difference.",
            false,
        ),
        (
            MinimumCommitment,
            "If the Royalties paid in a year fall below the guaranteed amount, the Licensee shall pay the shortfall within thirty days.",
            true,
        ),
        (MinimumCommitment, "The Buyer shall purchase a minimum quantity of 1,000 units in each calendar year.", true),
        // "Over" inside "cover" and "cap" inside "capital" or "capabilities" are not a cap on volume.
        (
            VolumeRestriction,
            "The operator shall identify the charge to cover capital costs of the equipment it maintains.",
            false,
        ),
        (
            VolumeRestriction,
            "Any usage over the cap of five hundred hours per month shall be charged at the overage rate.",
            true,
        ),
        // Commissions or royalties the contract says nobody shares are not a revenue share.
        (
            RevenueProfitSharing,
            "No deduction shall be made for commissions payable to the sales employees of either party.",
            false,
        ),
        (
            RevenueProfitSharing,
            "The Licensor shall bear any royalties payable to third parties for the content it supplies.",
            false,
        ),
        (
            RevenueProfitSharing,
            "The Reseller shall pay the Company a royalty of five percent (5%) of Net Sales of the Products.",
            true,
        ),
        // An exclusive licence stays exclusive with other words between "exclusive" and "license"; the exclusivity
        // of a remedy is no exclusive dealing.
        (
            Exclusivity,
            "The Owner hereby grants to the Reseller an exclusive, non-transferable, royalty-bearing right and license to sell the Software in the Territory.",
            true,
        ),
        (
            Exclusivity,
            "Exclusivity of Remedies. The credits in this Schedule are the Customer's only remedy for a missed service level.",
            false,
        ),
        // Owning something is an IP ownership clause only when what is owned is intellectual property.
        (
            IpOwnershipAssignment,
            "Upon payment of the cancellation charges, all components in stock shall become the property of the Buyer.",
            false,
        ),
        (
            IpOwnershipAssignment,
            "All inventions and improvements made by the Developer under this Agreement shall be the sole and exclusive property of the Company.",
            true,
        ),
        // "Sublicensees" is not a licence the licensor's affiliates grant.
        (
            AffiliateLicenseLicensor,
            "The Supplier shall, and shall cause its Affiliates and sublicensees to, comply with all applicable laws.",
            false,
        ),
        (
            AffiliateLicenseLicensor,
            "The Licensor, on behalf of itself and its Affiliates, hereby grants to the Licensee a licence to the Marks.",
            true,
        ),
        // A forum clause's waiver of objections to a court is not a promise not to sue.
        (
            CovenantNotToSue,
            "Each party irrevocably submits to the jurisdiction of the courts of Ontario and agrees not to bring any action in another venue.",
            false,
        ),
        (
            CovenantNotToSue,
            "The Licensee covenants not to sue the Licensor for infringement of any patent licensed under this Agreement.",
            true,
        ),
        // Ending the agreement by mutual agreement, or because a party violated it, is not ending it at will.
        (
            TerminationForConvenience,
            "This Agreement may be terminated at any time by the mutual written agreement of the parties.",
            false,
        ),
        (
            TerminationForConvenience,
            "If the Reseller violates any of its obligations, the Supplier shall have the right to terminate this Agreement at any time.",
            false,
        ),
        (
            TerminationForConvenience,
            "Either party may terminate this Agreement at any time, for any reason, upon sixty (60) days' written notice.",
            true,
        ),
        // Who employs whom, and who may see confidential information, is not a promise not to hire.
        (
            NoSolicitOfEmployees,
            "Staff that the Vendor assigns to the Project shall remain employees of the Vendor and shall not be deemed employees of the Client.",
            false,
        ),
        (
            NoSolicitOfEmployees,
            "The Recipient shall not disclose the Confidential Information except to those of its employees who need to know it.",
            false,
        ),
        (
            NoSolicitOfEmployees,
            "During the Term, neither party shall solicit for employment any employee of the other party.",
            true,
        ),
        // A licence the agreement says it does not grant is no grant.
        (
            LicenseGrant,
            "Nothing in this Agreement shall be construed to grant either party any right or license to the other party's patents.",
            false,
        ),
        // A change in a company's internal control over financial reporting is not a change of control.
        (
            ChangeOfControl,
            "Since the date of the last audited balance sheet there has been no change in the Company's internal control over financial reporting.",
            false,
        ),
        (
            ChangeOfControl,
            "Either party may terminate this Agreement upon a change of control of the other party.",
            true,
        ),
        // Reverse engineering for competitive analysis, an arbitrator's conflicts and exclusivity the agreement denies
        // are no promise not to compete.
        (NonCompete, "The Reseller may not decompile the Software or use it for any competitive analysis.", false),
        (NonCompete, "No arbitrator shall be an employee of either party or of any competitor of either party.", false),
        (
            NonCompete,
            "No marketing exclusivity is conferred by this Agreement on the Sponsor or against its competitors.",
            false,
        ),
        (
            NonCompete,
            "During the Term, the Distributor shall not sell any products that compete with the Products.",
            true,
        ),
        // Pay owed or reckoned up to the end, returning proprietary information, and a statement that the end excuses
        // nobody from what it owed are the end of the relationship, not a service after it.
        (
            PostTerminationServices,
            "Upon termination, the Agent shall be paid any fees owed through the date of termination.",
            false,
        ),
        (
            PostTerminationServices,
            "If this Agreement ends during a quarter, the commission shall be calculated up to and including the termination date.",
            false,
        ),
        (
            PostTerminationServices,
            "Within ten days after termination, the Customer shall return all Proprietary Information of the Vendor.",
            false,
        ),
        (
            PostTerminationServices,
            "Expiration of this Agreement shall not relieve either party from paying amounts that fell due before it.",
            false,
        ),
        // The end of a period inside the agreement (a warranty or an option period) is not the end of the agreement,
        // and a numbered provision that survives the end is no service after it.
        (
            PostTerminationServices,
            "Upon expiration of the Warranty Period, paid support shall commence and shall continue for one year.",
            false,
        ),
        (
            PostTerminationServices,
            "This Article 11 shall survive the termination of this Agreement and remain in effect for three years.",
            false,
        ),
        // A limit on assigning a party's rights and obligations under the agreement is the assignment clause, not a
        // licence that cannot be transferred; a licence called non-transferable still is one.
        (
            NonTransferableLicense,
            "The Contractor shall not have the right to assign any of its rights or obligations under this Agreement to another person.",
            false,
        ),
        (
            NonTransferableLicense,
            "The Licensor grants the Licensee a non-transferable licence to use the Software at its own sites.",
            true,
        ),
        // Keeping royalties already paid is no sharing of revenue, and dissolving a committee is not ending the
        // agreement.
        (
            RevenueProfitSharing,
            "Whatever the reason for termination, the Athlete shall retain all royalties paid before the termination date.",
            false,
        ),
        (
            RevenueProfitSharing,
            "The Licensee shall pay the Licensor a royalty of five percent (5%) of Net Sales of each Product.",
            true,
        ),
        (
            TerminationForConvenience,
            "The advisory committee may be terminated or dissolved by the Franchisor at any time.",
            false,
        ),
        // An indemnity however its verbs are listed ("agrees to fully defend, protect, indemnify", "defend, indemnify and
        // hold harmless") is no exception to a cap; a cap that does not apply to an indemnity still is.
        (
            UncappedLiability,
            "The Carrier agrees to fully defend, protect, indemnify and hold harmless the Shipper from any liability or damages, except for damages caused by the Shipper's gross negligence.",
            false,
        ),
        (
            UncappedLiability,
            "The limitation of liability in this Section shall not apply to a party's indemnification obligations or to damages arising from its gross negligence.",
            true,
        ),
        // A penalty the contract waives, a right of first refusal it denies and a licence granted before or to someone
        // else are not those clauses.
        (
            LiquidatedDamages,
            "The Buyer may end this Agreement at once and without any early termination penalty if the Seller breaks the law.",
            false,
        ),
        (
            RofrRofoRofn,
            "The parties agree that the Supplier's duty to negotiate in good faith shall not constitute a right of first refusal.",
            false,
        ),
        (
            LicenseGrant,
            "The Owner acknowledges that it has previously granted the exclusive right to license its Marks to a third party.",
            false,
        ),
        (
            LicenseGrant,
            "The Customer has been granted a licence to use the software under a separate agreement.",
            false,
        ),
        // Approving the other's advertising, unlimited access to a party's offices and an irrevocable option to buy are
        // no audit and no licence.
        (
            AuditRights,
            "The owner of a Mark shall have the right to inspect and require changes to any advertising that uses it.",
            false,
        ),
        (
            UnlimitedAllYouCanEatLicense,
            "The Franchisee shall give the Franchisor unlimited access to its offices and to the licence records it keeps.",
            false,
        ),
        (
            IrrevocableOrPerpetualLicense,
            "The Licensor hereby grants the Licensee the irrevocable right and option to purchase the licensed patents.",
            false,
        ),
        // A securities filing that reports changes in ownership is no change of control, and a statement that handing
        // over material assigns no intellectual property is no limit on assigning the agreement.
        (
            ChangeOfControl,
            "Holdings of the Company's shares by its directors are reported in Statements of Change in Ownership on Forms 4 filed with the SEC, and notice of each is given.",
            false,
        ),
        (
            AntiAssignment,
            "Delivery of the Source Code to the Licensee shall not constitute an assignment of any intellectual property rights and may not be made without consent.",
            false,
        ),
        // The agreement having no further effect after it ends, and a failure to perform as a ground for ending it,
        // are no service after the end.
        (
            PostTerminationServices,
            "Upon any such termination, this Agreement shall have no further force or effect and neither party shall continue to perform.",
            false,
        ),
        (
            PostTerminationServices,
            "The Customer may end this Agreement if the Supplier fails to comply with the transition plan it agreed.",
            false,
        ),
        // A termination whose conditions follow in a list is for cause, and a representation that the closing will not
        // impair a party's rights is no promise not to sue.
        (
            TerminationForConvenience,
            "The Sponsor may, at its sole option, terminate this Agreement at any time before the closing by notice to the Issuer if:",
            false,
        ),
        (
            CovenantNotToSue,
            "The consummation of the transactions contemplated hereby will not impair or restrict the Seller's rights in or to the Patents.",
            false,
        ),
        // A review period extended is no renewal of the agreement, and selling partnership interests on terms no less
        // favourable than an offer is no most favoured customer term.
        (
            RenewalTerm,
            "The review period may be extended for an additional thirty (30) days if the reviewing party asks for it.",
            false,
        ),
        (
            MostFavoredNation,
            "A partner may then sell its partnership interests to the buyer on terms no less favorable than those offered to the other partners.",
            false,
        ),
        (
            RevenueProfitSharing,
            "The University grants the Company an exclusive, royalty-bearing license to any invention it owns.",
            false,
        ),
        // A force majeure lasting months and the years a party files reports are not the term; registering a change in
        // ownership with an authority is no change of control; exclusive licences held by other companies are not
        // this agreement's exclusivity.
        (
            ExpirationDate,
            "If the Force Majeure continues for a period of six (6) months from its start, either party may end this Agreement.",
            false,
        ),
        (
            ExpirationDate,
            "The Company agrees, for a period of three years from the Closing Date, to file all reports the securities laws require.",
            false,
        ),
        (
            ChangeOfControl,
            "Once the transfer is approved, the venture company shall register the change in ownership with the licensing authority and give notice of it.",
            false,
        ),
        (
            Exclusivity,
            "The Licensee acknowledges that the Licensor may have granted exclusive licenses to other companies in other fields.",
            false,
        ),
        // A cap on a rate (a dividend rate, an interest rate) is a price term, not a limit on volume.
        (
            VolumeRestriction,
            "The Agent shall set the Coupon Rate each quarter, provided that the rate may not exceed the Maximum Rate.",
            false,
        ),
        (
            VolumeRestriction,
            "The Consultant shall provide up to ten (10) hours per month of support at no additional charge.",
            true,
        ),
        // A minimum the contract says does not apply, and keeping the fewest copies of secret papers, are no
        // commitment.
        (
            MinimumCommitment,
            "The Reseller shall not be subject to any minimum purchase requirement during the first year.",
            false,
        ),
        (MinimumCommitment, "This licence does not include a minimum annual royalty payable by the Licensee.", false),
        (
            MinimumCommitment,
            "The Recipient shall make only the minimum number of copies of the Confidential Information it needs.",
            false,
        ),
        (
            MinimumCommitment,
            "The Distributor shall purchase at least five hundred (500) units in each Contract Year.",
            true,
        ),
        // A termination after a change in ownership is a change of control, and ending a product's development is not
        // ending the agreement.
        (
            TerminationForConvenience,
            "Either party may terminate this Agreement upon thirty (30) days' notice if the other party undergoes a material ownership change.",
            false,
        ),
        (
            TerminationForConvenience,
            "At any time before launch, the Licensee may terminate such development upon ninety (90) days' written notice.",
            false,
        ),
        // A statement made to a party's knowledge is a representation about facts, not a promise not to sue.
        (
            CovenantNotToSue,
            "To the Seller's knowledge, no third party has challenged the validity of any of the Transferred Patents.",
            false,
        ),
        // A non-compete period with its hyphen split by the text layer ("Non- Compete") is no term of the agreement.
        (
            ExpirationDate,
            "For a period commencing on the Closing Date and ending three years after it (the \"Non- Compete Period\"), the Seller shall not compete.",
            false,
        ),
        // Not answering for the other party's debts, and a member's liability limited to its capital, are no cap on
        // damages under the contract.
        (CapOnLiability, "In no event shall the Agent be liable for the debts or obligations of the Principal.", false),
        (
            CapOnLiability,
            "The liability of each member to the Company shall be limited to its registered capital contribution.",
            false,
        ),
        (
            CapOnLiability,
            "In no event shall either party's aggregate liability exceed the fees paid in the preceding twelve months.",
            true,
        ),
        // The word "employees" is no verb of hiring: staffing the work with employees or contractors, and a right or
        // no duty to hire, do not restrict soliciting anyone.
        (
            NoSolicitOfEmployees,
            "The Provider shall staff the Services with qualified employees or contractors of its choosing.",
            false,
        ),
        (
            NoSolicitOfEmployees,
            "The Provider is not obligated to: (i) hire any additional employees to perform the Services.",
            false,
        ),
        (
            NoSolicitOfEmployees,
            "The Sponsor shall have the right, but not the obligation, to hire personnel to staff its booth.",
            false,
        ),
        (
            NoSolicitOfEmployees,
            "For one year after the Term, the Client shall not offer employment to any employee of the Consultant.",
            true,
        ),
    ];
    for (category, sentence, expected) in table {
        let signals = CATALOG.category_signals(category).expect("the category has signals");
        assert_eq!(signals.supports(sentence), expected, "{category}: {sentence}");
    }
}

#[test]
fn a_sentence_that_qualifies_the_one_before_it_is_quoted_with_it() {
    // (the sentence chosen as evidence, the sentence before it, the quote starts with that one). Sentences written
    // for this test; each is padded so that no two fit in one quote, which leaves only the rule to join them.
    let pad = ", each as the parties have recorded it in the schedules to this Agreement, in the order forms the \
Distributor has placed under it, in the price lists the Supplier has issued for the Products from time to time, and \
in the written instructions that either party has given to the other in the course of performing this Agreement";
    let long = |sentence: &str| format!("{}{pad}{pad}.", sentence.trim_end_matches('.'));
    let table = [
        (
            "The foregoing restrictions shall not apply to products the Distributor sold before the Effective Date.",
            "The Distributor shall not sell any product that competes with the Products in the Territory.",
            true,
        ),
        (
            "Provided, however, that the Licensee may assign this Agreement to a successor to its whole business.",
            "The Licensee may not assign this Agreement without the prior written consent of the Licensor.",
            true,
        ),
        (
            "Notwithstanding Section 4.2, the Reseller may sell the Products online to customers outside the Territory.",
            "The Reseller shall sell the Products only to customers located in the Territory.",
            true,
        ),
        (
            "However, the cap in this Section shall not apply to a party's breach of its duty of confidentiality.",
            "In no event shall either party's total liability exceed the fees paid in the preceding twelve months.",
            true,
        ),
        (
            "Such inspection shall take place during normal business hours upon ten days' prior notice.",
            "The Licensor may inspect the books and records of the Licensee once in each calendar year.",
            true,
        ),
        // A sentence that states its own clause is quoted alone.
        (
            "Neither party may assign this Agreement without the prior written consent of the other party.",
            "The Agent shall use its best efforts to promote the Products.",
            false,
        ),
    ];
    for (chosen, before, joined) in table {
        let (before, after) = (long(before), long("The parties shall meet once in each quarter to review the plan"));
        let text = format!(
            "DISTRIBUTOR AGREEMENT\n\n4. Obligations. {before} {chosen} {after}\n\n5. Governing Law. This Agreement \
shall be governed by the laws of the State of Ohio."
        );
        let index = ContractIndex::build(&pages(&text));
        let i = (0..index.sentences().len())
            .find(|&i| index.sentence_text(&index.sentences()[i]) == chosen)
            .unwrap_or_else(|| panic!("the sentence is one of the index's: {chosen}"));
        let quote = clause_quote(&index, i);
        let expected = if joined { format!("{before} {chosen}") } else { chosen.to_owned() };
        assert_eq!(quote.text, expected, "{chosen}");
    }
}

#[test]
fn a_clause_too_long_to_quote_whole_is_quoted_by_the_sentence_and_the_sentences_around_it() {
    // Ten sentences of one numbered clause, too long together for one quote: the quote holds the chosen sentence and
    // its neighbours, one after and one before in turn, as many as fit. Written for this test.
    let sentences: Vec<String> = (1..=10)
        .map(|n| format!("The Supplier shall deliver batch number {n} of the Products to the Distributor's warehouse in the Territory."))
        .collect();
    let text = format!(
        "SUPPLY AGREEMENT\n\n3. Deliveries. {}\n\n4. Governing Law. This Agreement shall be governed by the laws of \
the State of Ohio.",
        sentences.join(" ")
    );
    let index = ContractIndex::build(&pages(&text));
    let i = (0..index.sentences().len())
        .find(|&i| index.sentence_text(&index.sentences()[i]) == sentences[4])
        .expect("the fifth sentence is one of the index's");
    let quote = clause_quote(&index, i);
    assert!(quote.text.len() <= 700, "{}", quote.text);
    assert!(text.contains(&quote.text), "a span of the page: {}", quote.text);
    assert!(
        quote.text.contains(&sentences[4]) && quote.text.contains(&sentences[3]) && quote.text.contains(&sentences[5])
    );
    assert!(!quote.text.contains("Deliveries") && !quote.text.contains(&sentences[9]), "{}", quote.text);
    // A clause short enough is quoted whole.
    let short = "SUPPLY AGREEMENT\n\n3. Deliveries. The Supplier shall deliver the Products monthly. It shall bear the \
freight.\n\n4. Governing Law. This Agreement shall be governed by the laws of the State of Ohio.";
    let index = ContractIndex::build(&pages(short));
    let i = (0..index.sentences().len())
        .find(|&i| index.sentence_text(&index.sentences()[i]) == "It shall bear the freight.")
        .expect("the second sentence is one of the index's");
    assert_eq!(
        clause_quote(&index, i).text,
        "The Supplier shall deliver the Products monthly. It shall bear the freight."
    );
}

/// The quote of the distributor checklist's item for the CUAD `category` in `text`, which must find it present.
fn distributor_quote(category: &str, text: &str) -> String {
    let distributor = CATALOG.contract_type("distributor").unwrap();
    let findings = evaluate(&CATALOG, distributor, &ContractIndex::build(&pages(text)));
    let (_, finding) = distributor
        .items
        .iter()
        .zip(&findings)
        .find(|(item, _)| item.cuad_category.is_some_and(|c| c.as_str() == category))
        .unwrap_or_else(|| panic!("the distributor type has a {category} item"));
    assert_eq!(finding.status, ItemStatus::Present, "{finding:?}");
    finding.quote.as_ref().expect("a present item is quoted").text.clone()
}

#[test]
fn of_two_equally_placed_sentences_the_one_whose_clause_says_more_of_the_clause_is_quoted() {
    // Each sentence carries one License Grant signal; the clause of the later one carries two, so it is quoted
    // (before, the earliest was). Without its second sentence the earliest is quoted again. Written for this test.
    let contract = |brand: &str| {
        format!(
            "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of April 4, 2022 by and between Gale Optics \
Inc. (\"Supplier\") and Heron Trading LLC (\"Distributor\").\n\n2. Promotion. The Distributor is permitted to use the \
Supplier marks in its catalogues for the Products.\n\n9. Brand. {brand}\n\n10. Governing Law. This Agreement shall be \
governed by the laws of the State of Ohio."
        )
    };
    let quote_of_licence = |text: &str| distributor_quote("License Grant", text);
    let both = "The Distributor is authorized to use the Supplier logos on its website. The Supplier gives the \
Distributor the permission to use its trade names on invoices.";
    let quote = quote_of_licence(&contract(both));
    assert!(quote.contains("authorized to use the Supplier logos") && quote.contains("permission to use"), "{quote}");
    let one = "The Distributor is authorized to use the Supplier logos on its website.";
    let quote = quote_of_licence(&contract(one));
    assert!(quote.contains("permitted to use the Supplier marks"), "{quote}");
}

#[test]
fn a_sentence_that_only_names_the_clause_refers_to_it_and_does_not_state_it() {
    use pactwise_domain::CuadCategory::*;
    // (category, sentence, every signal it matches is the clause's own name). Sentences written for this test.
    let table = [
        (
            CapOnLiability,
            "The parties agree that the limitation of liability in this section reflects the agreed allocation of risk.",
            true,
        ),
        (
            CapOnLiability,
            "In no event shall either party's aggregate liability under this Agreement exceed the fees paid in the prior year.",
            false,
        ),
        (
            WarrantyDuration,
            "All claims must be made in writing to the Supplier before the end of the Warranty Period.",
            true,
        ),
        (
            WarrantyDuration,
            "The Supplier warrants that the Products will be free from defects for a period of twelve (12) months after delivery.",
            false,
        ),
        (Exclusivity, "The exclusivity granted above does not extend to products sold through the website.", true),
        (
            Exclusivity,
            "The Supplier hereby appoints the Distributor as its exclusive distributor in the Territory.",
            false,
        ),
        // A sentence no signal matches names nothing.
        (Exclusivity, "The Distributor shall keep its warehouse clean and orderly.", false),
    ];
    for (category, sentence, expected) in table {
        let signals = CATALOG.category_signals(category).expect("the category has signals");
        let topic = CATALOG.topic(category).expect("the category has a topic");
        if expected {
            assert!(signals.supports(sentence), "{category}: {sentence} matches a signal");
        }
        assert_eq!(
            super::evaluate::only_names_the_clause(signals, topic, sentence),
            expected,
            "{category}: {sentence}"
        );
    }
}

#[test]
fn of_two_equally_placed_sentences_the_one_that_performs_the_clause_with_hereby_is_quoted() {
    // Both sentences make the distributor exclusive and sit in sections about something else; the later one performs
    // the appointment ("hereby"), so it is quoted; without "hereby" the earlier one is. Written for this test.
    let contract = |supply: &str| {
        format!(
            "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of April 4, 2022 by and between Gale Optics \
Inc. (\"Supplier\") and Heron Trading LLC (\"Distributor\").\n\n2. Marketing. The Supplier names the Distributor as its \
exclusive distributor of the Products in its catalogues.\n\n9. Supply. {supply}\n\n10. Governing Law. This Agreement \
shall be governed by the laws of the State of Ohio."
        )
    };
    let quote_of_exclusivity = |text: &str| distributor_quote("Exclusivity", text);
    let quote = quote_of_exclusivity(&contract(
        "The Supplier hereby names the Distributor as its exclusive distributor of the Products in the Territory.",
    ));
    assert!(quote.contains("hereby names"), "{quote}");
    let quote = quote_of_exclusivity(&contract(
        "The Supplier also names the Distributor as its exclusive distributor of the Products in the Territory.",
    ));
    assert!(quote.contains("in its catalogues"), "{quote}");
}

#[test]
fn a_section_headed_for_a_minimum_payment_names_the_minimum_commitment() {
    use pactwise_domain::CuadCategory::*;
    // (category, heading, the heading names the clause). Headings written for this test.
    let table = [
        (MinimumCommitment, "6.2 Minimum Royalty", true),
        (MinimumCommitment, "Minimum Payments", true),
        (MinimumCommitment, "MINIMUM ANNUAL FEES", true),
        (MinimumCommitment, "Guaranteed Minimum", true),
        (MinimumCommitment, "Minimum Purchase Requirements", true),
        (MinimumCommitment, "Royalties", false),
        (MinimumCommitment, "Payment Terms", false),
    ];
    for (category, heading, expected) in table {
        let topic = CATALOG.topic(category).expect("the category has a topic");
        assert_eq!(topic.names_clause(heading), expected, "{category}: {heading}");
    }
}

#[test]
fn a_tacit_renewal_renews_and_a_renewal_for_an_unlimited_period_has_no_end() {
    let head = "SERVICES AGREEMENT\n\nThis Services Agreement is made as of April 2, 2013 by and between Ironwood Care \
Inc. (\"Provider\") and Juniper Clinics LLC (\"Client\").\n\n1. Services. Provider shall clean the clinics.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        (fields.renewal.and_then(|e| e.normalized), fields.renewal_notice.and_then(|e| e.normalized))
    };
    // Civil-law drafting: a term renewed tacitly (without a new agreement) renews as an automatic renewal does.
    assert_eq!(
        read(
            "The contract runs for the calendar year and is renewed tacitly every year. Either party may stop a renewal by registered letter at least two (2) months prior to the end of the then-current year, with notice."
        ),
        (
            Some(Value::Duration { number: 1, unit: DurationUnit::Year }),
            Some(Value::Duration { number: 2, unit: DurationUnit::Month })
        )
    );
    assert_eq!(
        read(
            "This Agreement shall remain in force for five (5) years and shall thereafter automatically renew for an unlimited period unless terminated under Section 9."
        )
        .0,
        Some(Value::Perpetual)
    );
    // An unlimited number of renewals of a stated length renews for that length.
    assert_eq!(
        read(
            "This Agreement shall remain in force for five (5) years and shall thereafter automatically renew for an unlimited number of successive two (2) year terms."
        )
        .0,
        Some(Value::Duration { number: 2, unit: DurationUnit::Year })
    );
}

#[test]
fn the_notice_to_stop_a_renewal_may_be_a_request_not_to_renew_or_a_notice_after_the_first_term() {
    let head = "RESELLER AGREEMENT\n\nThis Reseller Agreement is made as of June 9, 2017 by and between Kauri Devices \
Inc. (\"Vendor\") and Linden Sales LLC (\"Reseller\").\n\n1. Resale. Reseller may resell the Devices.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.renewal_notice.and_then(|e| e.normalized)
    };
    // Without the word "notice": a written request, made a period before the renewal, that the term not renew.
    assert_eq!(
        read(
            "This Agreement shall renew for successive one (1) year periods unless either party asks in writing, no later than sixty (60) days before the anniversary date, that it not be renewed."
        ),
        Some(Value::Duration { number: 60, unit: DurationUnit::Day })
    );
    // After the first term either party may end the agreement on notice: that notice stops it going on.
    assert_eq!(
        read(
            "The initial term of this Agreement is two (2) years. After the Initial Term, either party may terminate this Agreement for convenience upon written notice of at least four (4) months."
        ),
        Some(Value::Duration { number: 4, unit: DurationUnit::Month })
    );
    // A notice to end the agreement for a breach, at any time, is not such a notice.
    assert_eq!(
        read(
            "The initial term of this Agreement is two (2) years. Either party may terminate this Agreement for breach upon thirty (30) days' written notice."
        ),
        None
    );
}

#[test]
fn a_term_sentence_cut_by_a_page_break_is_read_whole_and_an_extended_cure_period_is_no_renewal() {
    let first = "HOSTING AGREEMENT\n\nThis Hosting Agreement is made as of January 4, 2010 by and between Maple Hosting \
Inc. (\"Host\") and Nutmeg Stores LLC (\"Customer\").\n\n1. Term. The initial term is two (2) years, and this Agreement \
shall automatically renew for further";
    let second = "two (2) year terms unless either party gives notice of non-renewal at least sixty (60) days before the \
end of the then-current term.\n\n2. Fees. Customer shall pay the fees monthly.";
    let index = ContractIndex::build(&[Page::plain(1, first), Page::plain(2, second)]);
    let fields = extract_fields(&index);
    assert_eq!(
        fields.renewal.and_then(|e| e.normalized),
        Some(Value::Duration { number: 2, unit: DurationUnit::Year })
    );

    let cure = "OPERATION AGREEMENT\n\nThis Operation Agreement is made as of May 2, 2012 by and between Olive Power \
Inc. (\"Owner\") and Poplar Services LLC (\"Operator\").\n\n1. Default. The Operator shall have thirty (30) days to cure a \
failure, and if the Operator is diligently attempting to cure it, that period shall be extended by a further \
ninety (90) days.";
    let fields = extract_fields(&ContractIndex::build(&pages(cure)));
    assert_eq!(fields.renewal, None);
}

#[test]
fn a_date_something_else_begins_on_is_not_the_effective_date() {
    let head = "CHANNEL AGREEMENT\n\nThis Channel Agreement is dated May 12, 2016 and is made between Quince Media Inc. \
(\"Quince\") and Rowan Video LLC (\"Rowan\").\n\n1. Definitions. \"Effective Date\" means the date of this Agreement.\n\n\
2. Launch. ";
    let read = |text: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{text}"))));
        fields.effective_date.and_then(|e| e.normalized)
    };
    // A phase of the work or a sales period that begins on a date is not the agreement beginning.
    assert_eq!(
        read("Phase One will commence on September 1, 2016 and end on August 31, 2017."),
        Some(Value::Date { iso: "2016-05-12".into() })
    );
    // The term, the contract or the venture it sets up beginning on a date is.
    assert_eq!(
        read("The Initial Term shall commence on July 1, 2016."),
        Some(Value::Date { iso: "2016-07-01".into() })
    );
    assert_eq!(read("Contract start: 07-01-16"), Some(Value::Date { iso: "2016-07-01".into() }));
}

#[test]
fn a_letter_agreement_is_dated_by_the_date_line_above_its_salutation() {
    let letter = "SIDE LETTER\n\nMarch 14, 2019\n\nSorrel Bank plc\n12 Harbour Road\nLeith\n\nLadies and Gentlemen:\n\n\
Tansy Holdings Inc. (the \"Company\") sold notes to you under the Purchase Agreement, dated June 2, 2015 (the \
\"Purchase Agreement\"). The Company agrees with you as follows.\n\n1. Fees. The Company shall pay the fee on demand.";
    let fields = extract_fields(&ContractIndex::build(&pages(letter)));
    assert_eq!(fields.agreement_date.and_then(|d| d.normalized), Some(Value::Date { iso: "2019-03-14".into() }));
}

#[test]
fn an_agreement_dated_nowhere_else_is_dated_on_the_line_its_parties_sign() {
    let body = "SERVICES AGREEMENT\n\nThis Services Agreement is entered into by Umbra Paints Inc. (\"Umbra\") and Vetch \
Logistics LLC (\"Vetch\").\n\n1. Services. Vetch shall carry the paint Umbra orders.\n\n2. Fees. Umbra shall pay the \
fees within thirty days.\n\n3. Law. This Agreement is governed by the laws of the State of Ohio.\n\n";
    for signed in [
        "Columbus, 9 October 2017\n\n/s/ Ann Ash          /s/ Ben Birch\nUmbra Paints Inc.    Vetch Logistics LLC",
        "10/09/17              10/09/17 ________________   ________________\nDate                  Date",
    ] {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{body}{signed}"))));
        assert_eq!(
            fields.agreement_date.and_then(|d| d.normalized),
            Some(Value::Date { iso: "2017-10-09".into() }),
            "{signed}"
        );
    }
}

#[test]
fn an_agreement_that_ends_only_on_listed_events_or_on_termination_has_no_fixed_end() {
    let head = "AGENCY AGREEMENT\n\nThis Agency Agreement is made as of October 2, 2008 by and between Wisteria Mutual \
Inc. (\"Insurer\") and Yarrow Brokers LLC (\"Agent\").\n\n1. Appointment. Insurer appoints Agent to sell its policies.\n\n\
2. Records. Agent shall keep records while it acts for Insurer and for a period of two years thereafter.\n\n3. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    for term in [
        "This Agreement shall terminate:\n\n(a) automatically if Agent's licence is revoked;\n\n(b) upon the sale of Agent's business.",
        "This Agreement shall terminate upon the earliest of (i) the closing of the offering, (ii) the resignation of Agent or (iii) a written agreement of the parties.",
        "This Agreement shall take effect on the date above and shall govern the parties thereafter, unless terminated under Section 4.",
    ] {
        assert_eq!(read(term), Some(Value::Perpetual), "{term}");
    }
    // A listed event beside a fixed period still gives the period's end.
    assert_eq!(
        read(
            "This Agreement shall terminate upon the earlier of (i) the third anniversary of this Agreement and (ii) the sale of Agent's business."
        ),
        Some(Value::Date { iso: "2011-10-02".into() })
    );
}

#[test]
fn a_forms_end_date_label_gives_the_expiry_when_no_term_clause_does() {
    let form = "CONFIRMATION\n\nThis confirmation sets out the terms of the swap between Alder Bank plc (\"Bank\") and Briar \
Trust (\"Trust\").\n\nTrade Date:            14 May 2007\n\nEffective Date:        1 June 2007\n\nTermination Date:      \
1 June 2010\n\nNotional Amount:       USD 5,000,000";
    let fields = extract_fields(&ContractIndex::build(&pages(form)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2010-06-01".into() }));
    // A definition of the term "Termination Date" is not a date.
    let defined =
        form.replace("Termination Date:      1 June 2010", "\"Termination Date\" means the day the swap ends.");
    let fields = extract_fields(&ContractIndex::build(&pages(&defined)));
    assert_eq!(fields.expiration_date, None);
}

#[test]
fn a_term_set_for_a_licence_or_lease_in_the_present_tense_or_as_a_duration_gives_the_expiry() {
    let head = "LICENCE AND LEASE\n\nThis Licence is made as of April 4, 2019 by and between Cedar Media Inc. \
(\"Licensor\") and Dune Studios LLC (\"Licensee\").\n\n1. Grant. Licensor grants Licensee a licence to show the films.\n\n\
2. Records. Licensee shall keep records while it shows the films.\n\n3. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    for term in [
        "This Licence shall last two (2) years from the date above.",
        "This lease runs for two years after the date above.",
        "The Agreement is valid for two (2) years.",
        "This Licence shall have a duration of two years.",
    ] {
        assert_eq!(read(term), Some(Value::Date { iso: "2021-04-04".into() }), "{term}");
    }
    assert_eq!(read("This Licence expires on June 30, 2020."), Some(Value::Date { iso: "2020-06-30".into() }));
}

#[test]
fn a_term_for_a_period_the_contract_defines_by_dates_ends_where_that_period_ends() {
    let text = "SERVICE AGREEMENT\n\nThis Service Agreement is made as of May 2, 2021 by and between Elm Data Inc. \
(\"Client\") and Fern Systems LLC (\"Provider\").\n\n1. Definitions.\n\n1.1 \"Support Period\" means June 1, 2021 through \
May 31, 2022.\n\n2. Services. Provider shall support the Client's systems during the Support Period.\n\n3. Term. This \
Agreement shall commence on the date above and continue in effect for the Support Period, unless terminated earlier.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2022-05-31".into() }));
    // The term's own name is not a period defined apart from it.
    let own = text.replace("for the Support Period", "for the Initial Term");
    let fields = extract_fields(&ContractIndex::build(&pages(&own)));
    assert_ne!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2022-05-31".into() }));
}

#[test]
fn the_expiry_item_quotes_the_sentence_the_term_is_read_from_not_another_period() {
    // The records duty's "for a period of five (5) years" matches the Expiration Date signals and the term clause's
    // wording does not, but the term (no fixed end) is read from the term clause, so that is the quote. Written for
    // this test.
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of May 2, 2022 by and between Kestrel \
Tools Inc. (\"Supplier\") and Plover Supply LLC (\"Distributor\").\n\n3. Records. Distributor shall keep complete \
records of its sales of the Products for a period of five (5) years.\n\n8. Term. This Agreement shall last until it is \
terminated by either party under Section 9.\n\n9. Termination. Either party may terminate this Agreement on ninety \
days' notice.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Perpetual));
    let quote = distributor_quote("Expiration Date", text);
    assert!(quote.contains("shall last until it is terminated"), "{quote}");
    assert!(!quote.contains("records"), "{quote}");
}

#[test]
fn a_sentence_whose_subject_is_the_agreement_or_its_term_already_states_the_expiry() {
    use pactwise_domain::CuadCategory::*;
    // (category, sentence the signals chose, whether it states the value itself). Written for this test.
    let table = [
        (ExpirationDate, "This Agreement shall commence on the Effective Date and continue for two (2) years.", true),
        (ExpirationDate, "The initial term shall end on the third anniversary of the Effective Date.", true),
        (ExpirationDate, "Supplier shall retain all invoices for a period of six (6) years.", false),
        (GoverningLaw, "This Agreement shall be governed by the laws of the State of Ohio.", false),
    ];
    for (category, text, states) in table {
        assert_eq!(super::fields::states_the_value(category, text), states, "{category}: {text}");
    }
}

#[test]
fn the_quote_prefers_the_term_clause_and_the_assignment_clause_over_sentences_that_only_touch_them() {
    use pactwise_domain::CuadCategory::*;
    // (category, sentence, opens with the term as subject, a grant rather than the assignment clause). Written for
    // this test.
    let table = [
        (
            ExpirationDate,
            "This Agreement shall commence on the Effective Date and continue for three (3) years.",
            true,
            false,
        ),
        (ExpirationDate, "7.1 Unless earlier terminated, the Initial Term shall end on June 30, 2025.", true, false),
        // Mentions the agreement in passing: another period, not the term.
        (
            ExpirationDate,
            "In the event this Agreement is terminated for breach, the defaulting party shall not compete for a period of six (6) months.",
            false,
            false,
        ),
        (
            AntiAssignment,
            "The Supplier hereby grants to the Distributor a non-exclusive, non-transferable license to use the Marks in the Territory.",
            false,
            true,
        ),
        // A grant that also limits assigning the agreement is the assignment clause too.
        (
            AntiAssignment,
            "The license is non-transferable, and the Distributor may not assign this Agreement without the Supplier's prior written consent.",
            false,
            false,
        ),
        (
            AntiAssignment,
            "Neither party may assign this Agreement without the prior written consent of the other party.",
            false,
            false,
        ),
        // The term rule is the Expiration Date's alone, the grant rule the Anti-Assignment's alone.
        (
            AntiAssignment,
            "This Agreement shall commence on the Effective Date and continue for three (3) years.",
            false,
            false,
        ),
        (
            LicenseGrant,
            "The Supplier hereby grants to the Distributor a non-transferable license to use the Marks.",
            false,
            false,
        ),
    ];
    for (category, text, term, grant) in table {
        assert_eq!(super::fields::opens_with_the_term(category, text), term, "{category}: {text}");
        assert_eq!(super::evaluate::grants_rather_than_assigns(category, text), grant, "{category}: {text}");
    }
}

#[test]
fn a_change_of_control_quote_prefers_what_the_change_ends_over_its_definition() {
    use pactwise_domain::CuadCategory::*;
    // (category, sentence, ties a change of control to an end). Sentences written for this test.
    let table = [
        (
            ChangeOfControl,
            "Either party may terminate this Agreement upon a Change of Control of the other party.",
            true,
        ),
        (
            ChangeOfControl,
            "Upon the occurrence of a change in control of the Licensee, the licences granted hereunder shall automatically terminate.",
            true,
        ),
        // The definition of the term, and consent to assign on a merger, say nothing of what the change ends.
        (
            ChangeOfControl,
            "The term \"Change of Control\" means the acquisition by any person of more than fifty percent of the voting shares.",
            false,
        ),
        (
            ChangeOfControl,
            "Neither party may assign this Agreement without consent, except to a successor in a merger or change of control.",
            false,
        ),
        // The rule is Change Of Control's alone.
        (
            TerminationForConvenience,
            "Either party may terminate this Agreement upon a change of control of the other party.",
            false,
        ),
    ];
    for (category, text, ends) in table {
        assert_eq!(super::evaluate::control_ends_something(category, text), ends, "{category}: {text}");
    }
}

#[test]
fn the_anti_assignment_item_quotes_the_assignment_clause_not_the_grant_of_a_non_transferable_licence() {
    // Both sentences match the Anti-Assignment signals in sections about other topics; the grant comes first and
    // performs with "hereby", but it is the licence's, so the assignment clause is quoted. Written for this test.
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of March 1, 2022 by and between Wren \
Audio Inc. (\"Supplier\") and Finch Retail LLC (\"Distributor\").\n\n4. Marks. The Supplier hereby grants to the \
Distributor a non-exclusive, non-transferable license to use the Marks in the Territory.\n\n12. General. The \
Distributor shall not assign or transfer this Agreement without the prior written consent of the Supplier.\n\n13. \
Governing Law. This Agreement shall be governed by the laws of the State of Ohio.";
    let quote = distributor_quote("Anti-Assignment", text);
    assert!(quote.contains("shall not assign or transfer this Agreement"), "{quote}");
    assert!(!quote.contains("license to use the Marks"), "{quote}");
}

#[test]
fn an_anniversary_counted_in_years_or_by_a_large_ordinal_ends_the_term() {
    let head = "SUPPLY AGREEMENT\n\nThis Supply Agreement is made as of September 12, 2011 by and between Alder Mills \
Inc. (\"Supplier\") and Birch Foods LLC (\"Buyer\").\n\n1. Supply. Supplier shall supply the Products.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    let cases = [
        ("This Agreement lasts until the four-year anniversary of the date above.", "2015-09-12"),
        ("This Agreement shall run on until the twentieth (20th) anniversary of the date above.", "2031-09-12"),
        ("The initial term shall end on the five (5) year anniversary of the date above.", "2016-09-12"),
        (
            "This Agreement becomes effective on the date above and shall continue until the 3rd anniversary thereof.",
            "2014-09-12",
        ),
    ];
    for (term, end) in cases {
        assert_eq!(read(term), Some(Value::Date { iso: end.into() }), "{term}");
    }
}

#[test]
fn a_definition_of_something_else_does_not_set_the_term() {
    // The definition's "end on September 30, 2012" is a quarter's end, not the term's. Written for this test.
    let text = "PROMOTION AGREEMENT\n\nThis Promotion Agreement is made as of August 14, 2012 by and between Alder \
Mills Inc. (\"Alder\") and Birch Foods LLC (\"Birch\").\n\n1. Definitions.\n\n\"Reporting Quarter\" means three months \
ending with March, June, September or December, but the first Reporting Quarter of the Term shall commence on the date \
above and end on September 30, 2012.\n\n11. Duration. Unless terminated earlier, the parties' obligations \
shall continue for five (5) years from the date above.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2017-08-14".into() }));
}

#[test]
fn the_terms_length_and_end_are_read_in_their_common_wordings() {
    let head = "SUPPLY AGREEMENT\n\nThis Supply Agreement is made as of October 8, 2014 by and between Alder Mills Inc. \
(\"Supplier\") and Birch Foods LLC (\"Buyer\").\n\n1. Supply. Supplier shall supply the Products.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    let cases = [
        (
            "This Agreement begins on the date above and shall extend for a period of five (5) years thereafter.",
            "2019-10-08",
        ),
        ("The Agreement shall run for the entire four (4) year term unless ended earlier.", "2018-10-08"),
        (
            "This contract shall remain in force initially for the five (5) year term (the \"Term\") from signing.",
            "2019-10-08",
        ),
        (
            "This Agreement shall remain in effect until one (1) year after the date above, provided that Buyer may \
terminate it at any time before the expiration of sixty (60) days after the date above.",
            "2015-10-08",
        ),
        ("This Agreement is to be effective through and including March 31, 2024.", "2024-03-31"),
        ("The term of this Agreement shall begin on June 1, 2015 and ends at May 31, 2024.", "2024-05-31"),
        ("The Term of the Agreement is hereby extended to November 15, 2021, unless ended earlier.", "2021-11-15"),
    ];
    for (term, end) in cases {
        assert_eq!(read(term), Some(Value::Date { iso: end.into() }), "{term}");
    }
    // A renewal's length is still not the term's.
    assert_eq!(
        read(
            "This Agreement shall continue for two (2) years and shall then renew for a further period of one (1) year."
        ),
        Some(Value::Date { iso: "2016-10-08".into() })
    );
}

#[test]
fn a_term_that_lasts_until_another_event_or_until_terminated_has_no_fixed_end() {
    let head = "AFFILIATE AGREEMENT\n\nThis Affiliate Agreement is made as of February 17, 2011 by and between Alder Mills \
Inc. \
(\"Alder\") and Birch Foods LLC (\"Birch\").\n\n1. Program. Birch shall promote the Products.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    for term in [
        "The term of this Agreement will commence on the date above and will end when terminated by either party.",
        "This Agreement is entered into for an unlimited period of time.",
        "This Agreement shall extend until the last date of expiration of the patents licensed under it.",
        "This Agreement shall continue until the termination of the Supply Agreement between the parties.",
        "This Agreement shall terminate as to Birch and its duties under it upon the earliest to occur of (a) its \
resignation and (b) the sale of the business.",
        "This Agreement shall begin on the date above and shall continue until the termination of the Alliance \
Agreement; provided, however, that if Birch makes a Termination Election before then, this Agreement shall \
terminate 36 months after such Termination Election.",
    ] {
        assert_eq!(read(term), Some(Value::Perpetual), "{term}");
    }
    // A period in a sentence about what follows a termination is not the term, and does not overrule it.
    let text = format!(
        "{head}This Agreement shall continue indefinitely until terminated by either party.\n\n9. Restriction. In the \
event this Agreement is terminated for breach, the party in default shall not compete for a period of six (6) months."
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&text)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Perpetual));
}

#[test]
fn a_term_ending_on_a_defined_date_or_counted_in_contract_years_and_records_that_are_no_duty_are_read() {
    let head = "SERVICES AGREEMENT\n\nThis Services Agreement is made as of April 9, 2013 by and between Alder Mills Inc. \
(\"Client\") and Birch Foods LLC (\"Agent\").\n\n1. Definitions. \"Expiration Date\" means September 30, 2021.\n\n2. Term. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    let cases = [
        (
            "This Agreement begins on the date above and, unless ended earlier, shall expire on the Expiration Date.",
            "2021-09-30",
        ),
        ("This Agreement begins on the date above and shall run for ten (10) Contract Years.", "2023-04-09"),
        (
            "Agent's appointment shall commence on the later of the date above and the day the Agent has moved the \
Client's records onto its own system, and shall run for three years after that.",
            "2016-04-09",
        ),
    ];
    for (term, end) in cases {
        assert_eq!(read(term), Some(Value::Date { iso: end.into() }), "{term}");
    }
    // A duty to keep records for a period is not the term.
    assert_eq!(read("The Agent shall keep complete records of the Services for a period of seven (7) years."), None);
}

#[test]
fn a_cover_date_label_and_an_opening_sentence_after_a_title_date_the_agreement() {
    // "Date:" then spaces then the date, on a cover line; written for this test.
    let text = "ALDER FREIGHT COMPANY      P.O. BOX 12      Form No. 44      Date: May 4, 2001\n\nHAULAGE \
CONTRACT\n\nTHIS CONTRACT is entered into by and between Alder Freight Company (\"Carrier\") and Birch Foods LLC \
(\"Shipper\").\n\n1. Term. This contract runs for a term of two years commencing on the date first above written.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2001-05-04".into() }));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2003-05-04".into() }));
    // The opening sentence that dates the agreement may follow its title in capitals.
    let text = "PARTS SUPPLY AGREEMENT THIS AGREEMENT is made on the 12th day of March 2016.\n\nBETWEEN Alder Mills \
Inc. (\"Maker\") and Birch Foods LLC (\"Buyer\").\n\n4. Term This agreement is for a term of six (6) years.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2016-03-12".into() }));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2022-03-12".into() }));
    // Two "Date:" labels are the days the parties sign: the agreement is made when the last of them signs.
    let text = "DISTRIBUTOR AGREEMENT\n\nAlder Mills Inc. (\"Alder\") and Birch Foods LLC (\"Birch\") agree as follows.\n\n\
1. Appointment. Alder appoints Birch as its distributor.\n\n2. Acceptance. Alder Mills Inc. Date: 2/3/09 Birch Foods \
LLC Date: February 6, 2009";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2009-02-06".into() }));
}

#[test]
fn the_end_the_term_clause_states_beats_the_one_computed_beside_it() {
    // The term's length counts from the date above (5 March), but the clause also states its own start and end.
    let text = "CO-BRANDING AGREEMENT\n\nThis Co-Branding Agreement is made as of March 5, 2015 by and between Alder \
Mills Inc. (\"Alder\") and Birch Foods LLC (\"Birch\").\n\n1. Program. The parties shall promote the Products.\n\n2. Term. \
The Agreement will have a term of four (4) years. The Term begins on March 2, 2015 and shall expire on March 1, \
2019, unless ended earlier.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2019-03-01".into() }));
    // Without a stated end, the computed one stands.
    let computed =
        text.replace(" The Term begins on March 2, 2015 and shall expire on March 1, 2019, unless ended earlier.", "");
    let fields = extract_fields(&ContractIndex::build(&pages(&computed)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2019-03-05".into() }));
}

#[test]
fn a_renewal_by_the_month_or_year_or_that_continues_automatically_keeps_its_length() {
    let head = "SERVICES AGREEMENT\n\nThis Services Agreement is made as of May 2, 2019 by and between Alder Mills Inc. \
(\"Client\") and Birch Foods LLC (\"Provider\").\n\n1. Services. Provider shall provide the Services.\n\n2. Term. This \
Agreement shall continue for two years from the date above. ";
    let read = |renewal: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{renewal}"))));
        (fields.renewal.and_then(|e| e.normalized), fields.renewal_notice.and_then(|e| e.normalized))
    };
    let month = Some(Value::Duration { number: 1, unit: DurationUnit::Month });
    let year = Some(Value::Duration { number: 1, unit: DurationUnit::Year });
    let cases = [
        ("Thereafter this Agreement shall continue automatically for successive annual periods.", year.clone()),
        ("This Agreement will extend automatically for monthly periods unless either party objects.", month.clone()),
        (
            "Thereafter, this Agreement shall be effective month to month, until terminated by either party upon the \
following written notice: sixty (60) days.",
            month,
        ),
        (
            "Thereafter this Agreement may be extended on a yearly basis up to ten (10) years at the Client's option.",
            year,
        ),
        (
            "This Agreement shall automatically continue following the Initial Term for an additional period of three \
(3) years.",
            Some(Value::Duration { number: 3, unit: DurationUnit::Year }),
        ),
    ];
    for (renewal, length) in cases {
        assert_eq!(read(renewal).0, length, "{renewal}");
    }
    // A period to object "within a period of" is the notice, not the renewal.
    let (renewal, notice) = read(
        "Unless the Client notifies the Provider of its intent not to renew within a period of three (3) months \
following the renewal notice, this Agreement shall automatically renew for one (1) twelve-month period.",
    );
    assert_eq!(renewal, Some(Value::Duration { number: 12, unit: DurationUnit::Month }));
    assert_eq!(notice, Some(Value::Duration { number: 3, unit: DurationUnit::Month }));
    // After its first term the contract continues until a party ends it.
    let text = head.replace(
        "from the date above. ",
        "from the date above; thereafter, it shall automatically continue until terminated by either party upon \
thirty (30) days' notice.",
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&text)));
    assert_eq!(fields.renewal.and_then(|e| e.normalized), Some(Value::Perpetual));
}

#[test]
fn the_notice_that_stops_a_renewal_in_its_less_common_wordings() {
    let head = "RESELLER AGREEMENT\n\nThis Reseller Agreement is made as of May 2, 2019 by and between Alder Mills Inc. \
(\"Supplier\") and Birch Foods LLC (\"Reseller\").\n\n1. Appointment. Supplier appoints Reseller.\n\n2. Term. The initial \
term of this Agreement is two (2) years from the date above. ";
    let notice = |clause: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{clause}"))));
        fields.renewal_notice.and_then(|e| e.normalized)
    };
    let days = |number| Some(Value::Duration { number, unit: DurationUnit::Day });
    let cases = [
        (
            "Upon expiration of the initial term, this Agreement shall automatically renew for consecutive one (1) year \
periods, unless terminated by Reseller within sixty (60) days prior to the expiration of the then-current term.",
            days(60),
        ),
        (
            "This Agreement will be automatically renewed at the end of every two (2) year term. A ninety (90) days \
notice must be given by either party of its intention to terminate relations.",
            days(90),
        ),
        (
            "Reseller, upon thirty days prior written notice, may cancel this Agreement at the end of the Initial Term \
and thereafter on each anniversary.",
            days(30),
        ),
        (
            "Thereafter, this Agreement shall be effective month to month, until terminated by either party upon the \
following written notice to the other: sixty (60) days.",
            days(60),
        ),
    ];
    for (clause, expected) in cases {
        assert_eq!(notice(clause), expected, "{clause}");
    }
    // A notice that exercises an option to renew is not the notice that stops a renewal.
    let clause = "Reseller may renew for two (2) successive terms of two (2) years each, provided that Reseller has given \
written notice of its desire to renew at least six (6) months before the end of the term. Supplier shall give Reseller \
written notice of its election not to renew at least three (3) months prior to the expiration of the initial term.";
    assert_eq!(notice(clause), Some(Value::Duration { number: 3, unit: DurationUnit::Month }));
}

#[test]
fn a_renewal_of_unknown_length_takes_the_length_a_looser_clause_names() {
    let head = "CO-BRANDING AGREEMENT\n\nThis Co-Branding Agreement is made as of May 2, 2019 by and between Alder Mills \
Inc. (\"Alder\") and Birch Foods LLC (\"Birch\").\n\n1. Program. The parties shall promote the Products.\n\n2. Term. The \
initial term of this Agreement is three (3) years. ";
    let renewal = |clause: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{clause}"))));
        fields.renewal.and_then(|e| e.normalized)
    };
    // "shall automatically be extended" names no length; the option to extend before it does.
    let clause = "Birch may elect by written notice to seek to extend such term for additional two (2)-year periods (each \
a \"Renewal Period\"). If Birch so elects, the term of this Agreement shall automatically be extended for the Renewal \
Period.";
    assert_eq!(renewal(clause), Some(Value::Duration { number: 2, unit: DurationUnit::Year }));
    // An option to continue for further terms renews.
    let clause = "When this Agreement expires, you will have the option to continue the relationship with us for two (2) \
additional terms of ten (10) years each.";
    assert_eq!(renewal(clause), Some(Value::Duration { number: 10, unit: DurationUnit::Year }));
    // The initial term's length is not the renewal's.
    let clause = "INITIAL TERM AND RENEWALS: This Agreement shall remain effective for an initial term of 10 Years \
following the launch of the Products.";
    assert_ne!(renewal(clause), Some(Value::Duration { number: 10, unit: DurationUnit::Year }));
}

#[test]
fn a_renewal_clause_the_structure_placed_among_the_definitions_is_still_read() {
    let text = "TRANSPORTATION SERVICES AGREEMENT\n\nThis Agreement is made as of May 2, 2015 by and between Alder Pipe \
Inc. (\"Carrier\") and Birch Oil LLC (\"Shipper\").\n\n1. Definitions.\n\n\"Initial Term\" means ten years from the date \
above.\n\nThis Agreement will automatically renew for up to two (2) renewal terms of five (5) years each unless either Party \
provides the other Party with written notice of its intent to terminate this Agreement at least six (6) months prior to \
the end of the Initial Term.\n\n2. Services. Carrier shall carry the Shipper's oil.";
    let index = ContractIndex::build(&pages(text));
    let fields = extract_fields(&index);
    assert_eq!(
        fields.renewal.and_then(|e| e.normalized),
        Some(Value::Duration { number: 5, unit: DurationUnit::Year })
    );
    assert_eq!(
        fields.renewal_notice.and_then(|e| e.normalized),
        Some(Value::Duration { number: 6, unit: DurationUnit::Month })
    );
}

#[test]
fn organisations_signing_page_after_page_or_in_small_letters_before_by_are_parties() {
    // A joint filing signed after "Dated:", one signatory per line, the structure seeing no signature block; names in
    // capitals and in small letters. Written for this test.
    let text = "JOINT FILING AGREEMENT\n\nThe undersigned agree that the statement on Schedule 13G is filed on behalf of \
each of them.\n\nDated: May 11, 2020\n\nMAPLE HOLDINGS LP /s/ Ann Lee Name: Ann Lee Title: Authorized Signatory\n\n\
[Signature Page to Joint Filing Agreement]\n\nOAK CAPITAL MANAGEMENT, INC. By: Maple Holdings LP, its general partner \
/s/ Ann Lee Name: Ann Lee\n\nRowan Fund Growth and Income, Ltd. By:/s/ Ann Lee Date: 5/11/2020 Ann Lee Chief Compliance \
Officer Birch Advisors II, LLC By:/s/ Ann Lee\n\nELM LABS, SA Cedar Devices, Inc. By:/s/ Ann Lee";
    let names: Vec<String> =
        extract_fields(&ContractIndex::build(&pages(text))).parties.into_iter().map(|p| p.value).collect();
    for name in [
        "MAPLE HOLDINGS LP",
        "OAK CAPITAL MANAGEMENT, INC.",
        "Rowan Fund Growth and Income, Ltd.",
        "Birch Advisors II, LLC",
        "Cedar Devices, Inc.",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    // A name is read back to the title or the legal form before it, never into them.
    assert!(!names.iter().any(|n| n.contains("Officer") || n.contains("SA Cedar")), "{names:?}");
}

#[test]
fn a_term_of_at_least_a_period_from_an_effective_date_the_definitions_name_gives_the_expiry() {
    let text = "MAINTENANCE AGREEMENT\n\nThis Maintenance Agreement is made as of March 15, 2002 by and between Alder \
Imaging Inc. (\"Alder\") and Birch Health LLC (\"Birch\").\n\n1. Definitions.\n\nEFFECTIVE DATE shall mean the day the \
scanners are installed at the clinic, i.e. February 1, 2002.\n\n2. Term of Agreement.\n\nAlder's support duties will begin \
on the \"Effective Date\" and, unless ended sooner, shall remain in full force and effect for at least two years after it.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2002-02-01".into() }));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2004-02-01".into() }));
}

#[test]
fn a_period_for_which_a_party_acts_elsewhere_in_the_contract_is_not_the_term() {
    // No term clause at all: periods of duties elsewhere give no expiry. Written for this test.
    let head = "COOPERATION AGREEMENT\n\nThis Cooperation Agreement is made as of October 5, 2016 by and between Alder \
Mills Inc. (\"Alder\") and Birch Foods LLC (\"Birch\").\n\n1. Standstill. ";
    let read = |text: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{text}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    for duty in [
        "Birch shall make no public announcement about this Agreement for a period of three (3) months after its date.",
        "Alder will give Birch's customers free help by telephone for a period of 30 days.",
        "If termination happens after the second anniversary of the opening date but before the last year of the Term, Birch \
shall pay liquidated damages.",
    ] {
        assert_eq!(read(duty), None, "{duty}");
    }
    // What a thing is or lasts still gives it.
    assert_eq!(
        read("The support service is for a period of one (1) year starting on the date above."),
        Some(Value::Date { iso: "2017-10-05".into() })
    );
}

#[test]
fn the_date_another_document_bears_does_not_date_the_agreement() {
    // An amendment whose opening names the agreement it amends, dated where its parties sign. Written for this test.
    let text = "SECOND AMENDMENT\n\nThis is the Second Amendment to the Research Agreement (\"Research Agreement\") \
entered into on May 9, 2012, by and between Alder Mills Inc. (\"Alder\") and Birch Foods LLC (\"Birch\").\n\n1. \
Amendment. Section 7 of the Research Agreement is struck out.\n\nIN WITNESS WHEREOF, Alder and Birch have signed this \
Second Amendment as of this 21st day of August, 2013.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2013-08-21".into() }));
    // A recital's date of another agreement is not this one's either; this agreement's own date still is.
    let text = "RELEASE AGREEMENT\n\nWHEREAS, Alder Mills Inc. (\"Alder\") and Birch Trust (\"Trust\") entered into a \
Premium Loan Agreement, dated as of October 3, 1997; and\n\nWHEREAS, the parties wish to end it.\n\n1. Release. This \
Agreement ends the Premium Loan Agreement.\n\nIN WITNESS WHEREOF, Alder and the Trust have signed this Agreement as of \
this 9th day of June, 2004.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2004-06-09".into() }));
    // This agreement's own date, written the same way, is kept.
    let text = "SPONSORSHIP AGREEMENT\n\nThis Sponsorship Agreement (this \"Agreement\") dated as of May 22, 2001 is made \
by and between Alder Mills Inc. (\"Sponsor\") and Birch Media LLC (\"Organizer\").\n\n1. Sponsorship. Sponsor shall \
pay for the event.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2001-05-22".into() }));
    // An amendment made effective on a date is dated by it, though another agreement is named before the verb.
    let text = "AMENDMENT\n\nThis amendment to Section 5 of the Marketing Agreement is made effective November 4, 1997 \
by and between Alder Mills Inc. (\"Alder\") and Birch Media LLC (\"Birch\").\n\n1. Term. The term is longer.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "1997-11-04".into() }));
}

#[test]
fn the_opening_is_dated_by_the_date_it_is_made_on_not_by_a_date_it_names_first() {
    let text = "OFFTAKE AGREEMENT\n\nThis Offtake Agreement (the \"Offtake\") shall be effective as of July 1, 2017 and \
is made and entered into this 12th day of March, 2017 by and between Alder Mills Inc. (\"Alder\") and Birch Foods LLC \
(\"Birch\").\n\n1. Supply. Alder shall sell the Products to Birch.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2017-03-12".into() }));
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2017-07-01".into() }));
}

#[test]
fn a_term_that_starts_on_a_named_date_the_contract_states_counts_from_it() {
    let text = "CO-BRANDING AGREEMENT\n\nThis Co-Branding Agreement is made as of August 1, 2003 by and between Alder Media \
Inc. (\"Alder\") and Birch Health LLC (\"Birch\").\n\n1. Portal. Both parties approve the portal's pages, and the launch \
date of the portal shall be October 15th, 2003 unless moved by both.\n\n2. Term. The term of this Agreement shall be for a \
period of three (3) years. The start of the Term will be from the Launch Date.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    let expiry = fields.expiration_date.expect("an expiry");
    assert_eq!(expiry.normalized, Some(Value::Date { iso: "2006-10-15".into() }));
    assert!(expiry.value.contains("the Launch Date"), "{}", expiry.value);
}

#[test]
fn an_agreement_effective_when_signed_takes_effect_on_the_last_signature() {
    let text = "SUPPORT AGREEMENT\n\nDate: April 2, 2004\n\nThis Support Agreement is between Alder Systems Inc. \
(\"Alder\") and Birch Health LLC (\"Customer\").\n\n1. Support. Alder shall support the Customer's servers.\n\n2. Term. \
This Agreement is effective on the date of signed acceptance (the \"Effective Date\") by Alder. The Initial Term of this \
Agreement is two years, beginning on the Effective Date.\n\n3. Fees. The Customer shall pay the fees.\n\n4. \
Signatures. Customer Alder Date: April 6, 2004 Date: 4-8-04";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2004-04-02".into() }));
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2004-04-08".into() }));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2006-04-08".into() }));
}

#[test]
fn the_agreement_terminating_on_a_date_a_term_with_its_name_in_brackets_and_an_effective_date_named_in_the_clause() {
    let head = "SERVICES AGREEMENT\n\nThis Services Agreement is signed on April 3, 2018 and takes effect as of May 1, \
2018 (the \"Effective Date\"), by and between Alder Mills Inc. (\"Provider\") and Birch Foods LLC (\"Recipient\").\n\n\
1. Services. Provider shall provide the Services.\n\n3. Termination of Agreement. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    // The text layer lost words between the subject and its verb.
    assert_eq!(
        read(
            "This Agreement be in force from the Effective Date, Agreement and shall terminate on June 30, 2021, \
unless ended earlier."
        ),
        Some(Value::Date { iso: "2021-06-30".into() })
    );
    assert_eq!(
        read(
            "This Agreement is for a term (the \"Term\") of 12 months from the Effective Date and expiring April 30, 2019."
        ),
        Some(Value::Date { iso: "2019-04-30".into() })
    );
    // A date the clause names as the start is not the end, and a term that ends when the agreement is terminated has
    // no fixed end.
    assert_eq!(
        read(
            "The term of this Agreement shall start upon the product's approval no later than August 14, 2018 (such \
date, the \"Effective Date\") and shall end upon the termination or expiration of the Agreement under Section 9."
        ),
        Some(Value::Perpetual)
    );
}

#[test]
fn a_date_another_document_bears_near_the_end_does_not_date_an_agreement_signed_on_a_later_day() {
    // The only dates are a closing clause's mention of an earlier agreement and the place and day of signing.
    let text = "SUPPLY AGREEMENT\n\nAlder Mills GmbH (\"Alder\") and Birch Pharma Inc. (\"Birch\") agree as follows.\n\n\
1) Supply. Alder shall make the compound Birch orders.\n\n2) Entire Agreement. This Agreement replaces every earlier \
understanding of the parties, except the Nondisclosure Agreement between the parties dated March 3rd, 2015.\n\n\
3) Law. The laws of Portugal govern this Agreement.\n\n4) Notices. Notices are sent to the addresses above.\n\n\
5) Counterparts. The parties may sign this Agreement in counterparts.\n\nLisbon, June 8th, 2015\n\n\
/s/ A. Alder          /s/ B. Birch";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2015-06-08".into() }));
}

#[test]
fn an_effective_date_whose_name_lost_its_space_is_still_the_effective_date() {
    // A later mention of another document "effective" on an earlier day must not win over the glued name.
    let text = "RESEARCH AGREEMENT\n\nThis Research Agreement is entered into on May 11 , 2016 (\"EffectiveDate\") by \
and between Alder Labs Inc. (\"Alder\") and Birch Seeds SA (\"Birch\").\n\n1. Research. Alder shall breed the lines \
Birch names.\n\n2. Secrecy. This Section replaces the secrecy letter of the parties, which was effective June 2, 2015.\n\n\
3. Term. This Research Agreement will begin on the Effective Date and continue for two (2) years.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2016-05-11".into() }));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2018-05-11".into() }));
}

#[test]
fn an_agreement_effective_as_of_the_latest_date_below_takes_effect_on_the_day_its_parties_sign() {
    // The signing dates stand on lines of their own above the signatures; the opening bears an earlier date.
    let text = "MAINTENANCE AGREEMENT\n\nThis Maintenance Agreement is made on June 1, 2011 by and between Alder Power LLC (\"Owner\") and \
Birch Services Inc. (\"Contractor\").\n\n1. Services. Contractor shall keep the Owner's turbines in good repair under \
the Supply Contract dated March 2, 2011.\n\n2. Term. The term of this Agreement shall commence on the Effective Date \
and remain effective for five (5) years.\n\n3. Fees. Owner shall pay the fees monthly.\n\nThe parties have signed this \
Agreement effective as of the latest date set forth below.\n\nOWNER:\n\nDate: June 14, 2011\n\nALDER POWER LLC\n\n\
By: /s/ A. Alder\n\nCONTRACTOR:\n\nDate: June 14, 2011\n\nBIRCH SERVICES INC.\n\nBy: /s/ B. Birch";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2011-06-01".into() }));
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2011-06-14".into() }));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2016-06-14".into() }));
}

#[test]
fn an_end_on_a_numbered_day_after_the_effective_date_is_counted_in_days() {
    let head = "UNDERWRITING SUPPORT AGREEMENT\n\nThis Underwriting Support Agreement is made as of March 1, 2019 (the \
\"Effective Date\") by and between Alder Capital LLC (\"Alder\") and Birch Partners LP (\"Birch\").\n\n1. Support. Birch \
shall support the offering Alder plans.\n\n2. Termination. ";
    let read = |term: &str| {
        let fields = extract_fields(&ContractIndex::build(&pages(&format!("{head}{term}"))));
        fields.expiration_date.and_then(|e| e.normalized)
    };
    assert_eq!(
        read(
            "This Agreement shall automatically terminate upon the first to occur of: (a) midnight on the 45th day \
after the Effective Date, if the offering has not begun by then; (b) the closing of the offering."
        ),
        Some(Value::Date { iso: "2019-04-15".into() })
    );
    // A day on which something starts is not the end.
    assert_ne!(
        read(
            "The Term shall commence on the tenth day after the Effective Date and end when either party terminates it."
        ),
        Some(Value::Date { iso: "2019-03-11".into() })
    );
}

#[test]
fn an_end_on_the_last_day_of_a_month_a_period_after_the_start_closes_that_month() {
    // A franchise form whose body sends the reader to the schedule's label, which counts from the effective date.
    let form = "LICENCE AGREEMENT\n\nThis Licence Agreement is made as of June 10, 2015 (the \"Effective Date\") by and \
between Alder Inns LLC (\"Licensor\") and Birch Lodging Inc. (\"Licensee\").\n\n1. Licence. Licensor licenses its \
brand to Licensee for the Inn.\n\nSCHEDULE   Inn Name: Birch Lodge     Rooms: 80     Expiration Date: at noon on the \
last day of the month twelve (12) years from the Effective Date     Monthly Fee: four percent";
    let fields = extract_fields(&ContractIndex::build(&pages(form)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2027-06-30".into() }));
    // The same close of a month in the term clause itself.
    let clause = form.replace(
        "SCHEDULE",
        "2. Term. This Agreement shall expire on the last day of the calendar month in which the third anniversary of \
the Effective Date falls.\n\nSCHEDULE",
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&clause)));
    assert_eq!(fields.expiration_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2018-06-30".into() }));
}

#[test]
fn a_non_compete_period_whose_name_a_text_layer_spaced_is_not_the_term() {
    let text = "STOCK PURCHASE AGREEMENT\n\nThis Stock Purchase Agreement is made as of May 2, 2017 (the \"Effective \
Date\") by and between Alder Holdings Inc. (\"Buyer\") and Birch Family Trust (\"Seller\").\n\n1. Sale. Seller sells \
the shares to Buyer.\n\n2. Term of Restriction. The Non- Compete Period shall be for a period of three (3) years from the \
Effective Date.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.expiration_date, None);
}

#[test]
fn an_effective_date_left_to_a_schedule_is_read_from_the_schedules_label() {
    // A long body, as franchise forms have: the schedule comes after the opening text the effective date is sought in.
    let body = "3. Upkeep. Licensee shall keep every room of the Inn clean and in good repair.\n\n".repeat(300);
    let text = format!(
        "LICENCE AGREEMENT\n\nThis Licence Agreement is between Alder Inns LLC (\"Licensor\") and Birch Lodging \
Inc. (\"Licensee\").\n\n1. Definitions. \"Effective Date\" means the date set out in the Schedule on which this Agreement \
takes effect.\n\n2. Licence. Licensor licenses its brand to Licensee for the Inn.\n\n{body}IN WITNESS WHEREOF the \
parties have signed this Agreement on May 2, 2016.\n\nBy: /s/ A. Alder   By: /s/ B. Birch\n\nSCHEDULE   Effective \
Date: September 19, 2016     Inn Name: Birch Lodge     Rooms: 80"
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&text)));
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2016-09-19".into() }));
    // Without the definition the label may be an attached document's own, and the agreement's date stays.
    let attached = text.replace(
        "1. Definitions. \"Effective Date\" means the date set out in the Schedule on which this Agreement takes effect.",
        "1. Brand. Licensor owns the brand.",
    );
    let fields = extract_fields(&ContractIndex::build(&pages(&attached)));
    assert_eq!(fields.effective_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2016-05-02".into() }));
}

#[test]
fn a_date_another_agreement_bears_is_skipped_when_its_name_joins_words_with_and() {
    let text = "SERVICE AGREEMENT\n\nThis Service Agreement is entered into as of the latest date on the signature page \
by and between Alder Solar LLC (\"Owner\") and Birch Energy Inc. (\"Provider\").\n\n1. Services. Provider shall service \
the plant built under the Design, Supply and Installation Agreement dated May 4, 2012.\n\n2. Fees. Owner shall pay \
the fees monthly.\n\n3. Law. The laws of the State of Nevada govern this Agreement.\n\n4. Notices. Notices are sent \
to the addresses above.\n\n5. Counterparts. The parties may sign in counterparts.\n\nOWNER:\n\nDate: August 20, 2012\n\n\
By: /s/ A. Alder\n\nPROVIDER:\n\nDate: August 20, 2012\n\nBy: /s/ B. Birch";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2012-08-20".into() }));
}

#[test]
fn the_dates_another_agreement_was_amended_on_do_not_date_the_amendment_that_refers_to_it() {
    let text = "AMENDMENT NO. 4\n\nDated as of January 15, 2013\n\nReference is made to that certain Master Supply \
Agreement dated as of June 2, 2010, as amended May 5, 2011 and April 9, 2012 (the \"Agreement\"), between Alder Mills \
Inc. (\"Alder\") and Birch Foods LLC (\"Birch\").\n\nThe parties agree to change the Agreement as follows.\n\n1. \
Prices. The prices in Exhibit A are replaced.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    assert_eq!(fields.agreement_date.and_then(|e| e.normalized), Some(Value::Date { iso: "2013-01-15".into() }));
}

#[test]
fn a_last_party_whose_company_form_has_a_doubled_full_stop_is_read() {
    let text = "SPONSORSHIP AGREEMENT\n\nThis agreement (the \"Agreement\") is entered into as of June 3, 2011 by and \
between Alder Racing, LLC, 14 Mill Road, Dover, DE 19901 (\"Vendor\") and Birch Motors Inc.., an Ohio corporation with \
its principal place of business at 200 Lake Street, Akron, OH 44301 (Birch).\n\n1. Sponsorship. Birch sponsors the team.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    let names: Vec<String> = fields.parties.iter().map(|p| p.value.clone()).collect();
    assert!(names.iter().any(|n| n == "Birch Motors Inc."), "{names:?}");
}

#[test]
fn a_last_party_named_after_the_previous_partys_description_and_described_as_a_corporation_is_read() {
    let text = "SPEAKING AGREEMENT\n\nThis SPEAKING AGREEMENT (the \"Agreement\") is made this 2nd day of May, 2008 by \
and between Ann Ash, an individual (\"SPEAKER\"), who lives in Oregon; and Blue Heron Works, a Utah Corporation (the \
HOST), with its offices at 9 Pine Road, Provo, Utah.\n\nWHEREAS, the HOST holds seminars.\n\n1. Talks. The SPEAKER \
shall speak at four seminars.";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    let names: Vec<String> = fields.parties.iter().map(|p| p.value.clone()).collect();
    assert!(names.iter().any(|n| n == "Blue Heron Works"), "{names:?}");
}

#[test]
fn an_and_in_capitals_inside_a_partys_name_does_not_cut_it() {
    let read = |opening: &str| {
        let text = format!("{opening}\n\n1. Licence. The licensor grants the licence in Exhibit A.");
        let fields = extract_fields(&ContractIndex::build(&pages(&text)));
        fields.parties.iter().map(|p| p.value.clone()).collect::<Vec<_>>()
    };
    let names = read(
        "CONTENT LICENSE AGREEMENT\n\nThis Content License Agreement is between BLUE RIVER FILM AND TELEVISION \
CORPORATION, located at 12 Oak Lane, Reno, NV 89501 and GREY OWL MEDIA, located at 4 Elm Road, Boise, ID 83702",
    );
    assert!(names.iter().any(|n| n == "BLUE RIVER FILM AND TELEVISION CORPORATION"), "{names:?}");
    // Two companies in capitals are still two.
    let names = read(
        "SUPPLY AGREEMENT\n\nThis Supply Agreement is between ALDER MILLS INC. AND BIRCH FOODS LLC, located at 4 Elm \
Road, Boise, ID 83702",
    );
    assert!(names.iter().any(|n| n == "ALDER MILLS INC."), "{names:?}");
    assert!(names.iter().any(|n| n == "BIRCH FOODS LLC"), "{names:?}");
}

#[test]
fn an_organisation_named_alone_on_the_line_above_a_signature_signs_a_joint_filing() {
    let text = "JOINT FILING AGREEMENT\n\nThe undersigned agree that the statement on Schedule 13G is filed on behalf of \
each of them.\n\nDated: March 2, 2021\n\nRED KITE FUND L.P. By: Red Kite GP L.L.C., its general partner\n\nBy: /s/ Ann \
Ash Name: Ann Ash Title: Manager\n\nRED KITE GP L.L.C.\n\nBy: /s/ Ann Ash Name: Ann Ash Title: Manager\n\nTHE KITE \
GROUP INC.\n\nBy: /s/ Ann Ash Name: Ann Ash Title: Manager";
    let fields = extract_fields(&ContractIndex::build(&pages(text)));
    let names: Vec<String> = fields.parties.iter().map(|p| p.value.clone()).collect();
    for name in ["RED KITE FUND L.P.", "RED KITE GP L.L.C.", "THE KITE GROUP INC."] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }
}

#[test]
fn a_heading_that_denies_exclusivity_does_not_name_the_exclusivity_clause() {
    let topic = CATALOG.topic(pactwise_domain::CuadCategory::Exclusivity).expect("the category has a topic");
    for heading in [
        "Exclusivity",
        "3.2 Exclusive Appointment",
        "Grant of Exclusive Rights",
        "(c) Exclusivity",
        "Appointment / Exclusive Territory",
    ] {
        assert!(topic.names_clause(heading), "{heading}");
    }
    for heading in [
        "No Exclusivity",
        "Non-Exclusive Remedies",
        "Nonexclusive Rights",
        "Relationship of the Parties / No Exclusivity",
        "Non- exclusive Market Rights",
    ] {
        assert!(!topic.names_clause(heading), "{heading}");
    }
}

#[test]
fn the_anti_assignment_item_quotes_the_sentence_about_assigning_the_agreement_not_a_passing_transfer() {
    // Both sentences match the Anti-Assignment signals and the item's own in sections about other topics; the first
    // only forbids transferring gifts, the second is the assignment clause. Written for this test.
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of March 1, 2022 by and between Wren \
Audio Inc. (\"Supplier\") and Finch Retail LLC (\"Distributor\").\n\n6. Buyers. The Distributor shall not transfer \
anything of value to any buyer to induce a purchase of the Products.\n\n12. Parties. Neither party may assign its \
rights under this Agreement to any other person, and any such assignment shall be void.\n\n13. Governing Law. This Agreement shall be governed by the laws of the State of Ohio.";
    let quote = distributor_quote("Anti-Assignment", text);
    assert!(quote.contains("assign its rights under this Agreement"), "{quote}");
    assert!(!quote.contains("anything of value"), "{quote}");
}

#[test]
fn the_insurance_item_quotes_the_duty_to_carry_insurance_not_its_certificates() {
    // Both sentences sit in sections headed for insurance and match the category's and the item's signals; the first
    // is about certificates and the insured named on the policies, the second binds the supplier to carry the cover.
    // Written for this test.
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of March 1, 2022 by and between Wren \
Audio Inc. (\"Supplier\") and Finch Retail LLC (\"Distributor\").\n\n9. Insurance. The Distributor shall be named as an \
additional insured on the Supplier's general liability insurance policies, and certificates of insurance showing \
the insurance coverage shall be given to it on request.\n\n10. Insurance. The \
Supplier shall obtain and maintain product liability insurance of at least one million dollars per occurrence.\n\n13. Governing Law. This \
Agreement shall be governed by the laws of the State of Ohio.";
    let quote = distributor_quote("Insurance", text);
    assert!(quote.starts_with("The Supplier shall obtain and maintain product liability insurance"), "{quote}");
}

#[test]
fn the_non_compete_item_quotes_the_restriction_not_its_exception() {
    // Both sentences match the Non-Compete signals and the item's own in sections about other topics; the first is an
    // exception (the Competitive Restriction Exception's signals support it), the second the restriction. Written for
    // this test.
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of March 1, 2022 by and between Wren \
Audio Inc. (\"Supplier\") and Finch Retail LLC (\"Distributor\").\n\n4. Existing Lines. This Agreement shall not \
prevent the Distributor from selling competing products that it carried before the Effective Date.\n\n9. Range. \
During the Term, the Distributor shall not sell any product that competes with the Products in the Territory.\n\n13. \
Governing Law. This Agreement shall be governed by the laws of the State of Ohio.";
    let quote = distributor_quote("Non-Compete", text);
    assert!(quote.contains("shall not sell any product that competes"), "{quote}");
    assert!(!quote.contains("products that it carried"), "{quote}");
}

#[test]
fn a_section_binding_successors_and_assigns_is_no_anti_assignment_clause() {
    // The only sentence about assigns says who the agreement binds; nothing limits assigning it. Written for this test.
    let text = "DISTRIBUTOR AGREEMENT\n\nThis Distributor Agreement is made as of March 1, 2022 by and between Wren \
Audio Inc. (\"Supplier\") and Finch Retail LLC (\"Distributor\").\n\n12. Successors and Assigns. This Agreement shall \
be binding upon and inure to the benefit of the parties and their respective successors and assigns.\n\n13. Governing \
Law. This Agreement shall be governed by the laws of the State of Ohio.";
    let distributor = CATALOG.contract_type("distributor").unwrap();
    let findings = evaluate(&CATALOG, distributor, &ContractIndex::build(&pages(text)));
    let (_, finding) = distributor
        .items
        .iter()
        .zip(&findings)
        .find(|(item, _)| item.cuad_category.is_some_and(|c| c.as_str() == "Anti-Assignment"))
        .expect("the distributor type has an Anti-Assignment item");
    assert_ne!(finding.status, ItemStatus::Present, "{finding:?}");
}
