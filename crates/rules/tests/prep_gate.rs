//! The RFP publish gate, its one home: what it refuses on the typed package, and how a stored package is read into
//! those types (absent artifacts empty, anything that does not read whole refused as malformed).

use chrono::NaiveDate;
use pactwise_rules::prep::*;
use serde::Serialize;
use serde_json::{Value, json};

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

fn approved<T: Serialize>(content: T) -> Slot<T> {
    Slot {
        state: ArtifactState::Approved { hash: hash_content(&content) },
        content: Some(content),
        content_hash: None,
        prompt: None,
        error: None,
    }
}

fn intake() -> Intake {
    Intake {
        title: "Fleet telematics".into(),
        buyer: "City of Example".into(),
        brief: "GPS tracking for 120 vehicles.".into(),
        needs: vec![Need { id: "N1".into(), text: "Track vehicle positions".into() }],
        category: "services".into(),
        currency: "EUR".into(),
        budget_ceiling_minor: Some(25_000_000),
        timeline: Timeline {
            publication: d(2027, 1, 4),
            question_days: 5,
            submission_days: 10,
            evaluation_days: 5,
            award_days: 3,
            contract_start_days: 10,
        },
        holidays: vec![d(2027, 1, 6)],
        country: None,
        contact: None,
        checklist_type: None,
    }
}

fn requirement(code: &str, kind: RequirementKind, measure: Option<Measure>) -> Requirement {
    Requirement { code: code.into(), text: format!("Requirement {code}"), kind, need_ids: vec!["N1".into()], measure }
}

fn measure() -> Option<Measure> {
    Some(Measure {
        metric: "position update interval".into(),
        threshold: "<= 60 s".into(),
        verification: Verification::Test,
    })
}

fn criterion(id: &str, weight_bp: u32, codes: &[&str]) -> Criterion {
    Criterion {
        id: id.into(),
        name: format!("Criterion {id}"),
        description: String::new(),
        weight_bp,
        requirement_codes: codes.iter().map(|c| c.to_string()).collect(),
    }
}

fn line(code: &str, description: &str) -> PricingLine {
    PricingLine {
        code: code.into(),
        description: description.into(),
        unit: "vehicle-month".into(),
        quantity: Some(120),
        basis: Some(PriceBasis::PerUnit),
        open_amount: false,
    }
}

/// A package the gate lets through: every artifact approved, every rule held.
fn package() -> Artifacts {
    let intake = intake();
    let milestones = Milestones { items: milestones_with_rationales(&intake, |_| Some("Enough time.".into())) };
    Artifacts {
        scope: approved(Scope {
            summary: "Telematics".into(),
            in_scope: vec!["Tracking".into()],
            out_of_scope: vec![],
            deliverables: vec!["Devices".into()],
            need_ids: vec!["N1".into()],
        }),
        requirements: approved(Requirements {
            items: vec![
                requirement("R-01", RequirementKind::Mandatory, None),
                requirement("R-02", RequirementKind::Scored, measure()),
            ],
        }),
        criteria: approved(Criteria { criteria: vec![criterion("C1", 6_000, &["R-02"]), criterion("C2", 4_000, &[])] }),
        pricing: approved(Pricing { currency: "EUR".into(), lines: vec![line("P-1", "Tracking service")] }),
        milestones: approved(milestones),
        intake: approved(intake),
    }
}

fn rules(v: &[GateViolation]) -> Vec<(PublishRule, String, Option<String>)> {
    v.iter().map(|v| (v.rule, v.artifact.clone(), v.subject.clone())).collect()
}

fn one(rule: PublishRule, artifact: &str, subject: Option<&str>) -> Vec<(PublishRule, String, Option<String>)> {
    vec![(rule, artifact.to_string(), subject.map(str::to_string))]
}

/// Replaces an artifact's content and approves the new content again, so only the content rule under test fails.
fn reapprove<T: Serialize + Clone>(slot: &mut Slot<T>, change: impl FnOnce(&mut T)) {
    let mut content = slot.content.clone().unwrap();
    change(&mut content);
    *slot = approved(content);
}

#[test]
fn an_approved_package_that_holds_every_rule_passes() {
    let p = package();
    assert_eq!(publish_gate(&p), vec![]);
    for kind in ArtifactKind::ALL {
        assert_eq!(validate(&p, kind), vec![], "{kind:?}");
    }
}

#[test]
fn each_broken_rule_is_named_with_its_artifact_and_item() {
    type Case = (&'static str, fn(&mut Artifacts), Vec<(PublishRule, String, Option<String>)>);
    let cases: Vec<Case> = vec![
        (
            "weights of 95 %",
            |p| reapprove(&mut p.criteria, |c| c.criteria[1].weight_bp = 3_500),
            one(PublishRule::WeightsNotHundred, "criteria", None),
        ),
        (
            "a scored requirement under two criteria",
            |p| reapprove(&mut p.criteria, |c| c.criteria[1].requirement_codes.push("R-02".into())),
            one(PublishRule::ScoredRequirementMapping, "criteria", Some("R-02")),
        ),
        (
            "a criterion mapping a mandatory requirement",
            |p| reapprove(&mut p.criteria, |c| c.criteria[1].requirement_codes.push("R-01".into())),
            one(PublishRule::ScoredRequirementMapping, "criteria", Some("R-01")),
        ),
        (
            "two requirements with one code",
            |p| reapprove(&mut p.requirements, |r| r.items[0].code = "R-02".into()),
            one(PublishRule::DuplicateRequirementCode, "requirements", Some("R-02")),
        ),
        (
            "a scored requirement without a threshold",
            |p| {
                reapprove(&mut p.requirements, |r| {
                    if let Some(m) = r.items[1].measure.as_mut() {
                        m.threshold = "  ".into();
                    }
                })
            },
            one(PublishRule::RequirementNotMeasurable, "requirements", Some("R-02")),
        ),
        (
            "a pricing line whose amount is to be determined",
            |p| reapprove(&mut p.pricing, |pr| pr.lines[0].description = "Extra visits, TBD".into()),
            one(PublishRule::PricingLineNotPriceable, "pricing", Some("P-1")),
        ),
        (
            "a pricing line with neither quantity nor basis",
            |p| {
                reapprove(&mut p.pricing, |pr| {
                    pr.lines[0].quantity = Some(0);
                    pr.lines[0].basis = None;
                })
            },
            one(PublishRule::PricingLineNotPriceable, "pricing", Some("P-1")),
        ),
        (
            "a milestone on the intake's holiday",
            |p| reapprove(&mut p.milestones, |m| m.items[0].date = d(2027, 1, 6)),
            one(PublishRule::MilestonesInvalid, "milestones", Some("publication")),
        ),
        (
            "a milestone on a Saturday",
            |p| reapprove(&mut p.milestones, |m| m.items[3].date = d(2027, 1, 30)),
            one(PublishRule::MilestonesInvalid, "milestones", Some("evaluation")),
        ),
        (
            "milestones out of order",
            |p| {
                reapprove(&mut p.milestones, |m| {
                    let (a, b) = (m.items[1].date, m.items[2].date);
                    m.items[1].date = b;
                    m.items[2].date = a;
                })
            },
            one(PublishRule::MilestonesInvalid, "milestones", Some("submission_deadline")),
        ),
        (
            "a milestone missing",
            |p| reapprove(&mut p.milestones, |m| m.items.retain(|x| x.kind != MilestoneKind::Award)),
            one(PublishRule::MilestonesInvalid, "milestones", Some("award")),
        ),
        (
            "content changed after its approval",
            |p| {
                if let Some(s) = p.scope.content.as_mut() {
                    s.summary = "Changed".into();
                }
            },
            one(PublishRule::ApprovalOutdated, "scope", None),
        ),
        (
            "an artifact not approved",
            |p| p.intake.state = ArtifactState::Valid,
            one(PublishRule::NotApproved, "intake", None),
        ),
    ];
    for (name, break_it, expected) in cases {
        let mut p = package();
        break_it(&mut p);
        assert_eq!(rules(&publish_gate(&p)), expected, "{name}");
    }
}

#[test]
fn an_empty_package_names_every_artifact_the_weights_and_every_milestone() {
    let v = publish_gate(&Artifacts::default());
    let malformed: Vec<&str> =
        v.iter().filter(|v| v.rule == PublishRule::Malformed).map(|v| v.artifact.as_str()).collect();
    assert_eq!(malformed, ["criteria", "intake", "milestones", "pricing", "requirements", "scope"]);
    assert!(v.iter().any(|v| v.rule == PublishRule::WeightsNotHundred));
    assert_eq!(v.iter().filter(|v| v.rule == PublishRule::MilestonesInvalid).count(), 6);
    // The validators leave an artifact without content alone: it is empty, not invalid.
    for kind in ArtifactKind::ALL {
        assert_eq!(validate(&Artifacts::default(), kind), vec![]);
    }
}

#[test]
fn the_validators_report_the_gates_rules_of_their_artifact_and_their_own() {
    let mut p = package();
    reapprove(&mut p.criteria, |c| c.criteria[0].weight_bp = 5_000);
    reapprove(&mut p.requirements, |r| r.items[0].need_ids.push("N9".into()));
    let criteria = validate(&p, ArtifactKind::Criteria);
    assert_eq!(criteria.len(), 1);
    assert_eq!(criteria[0].rule, "weights_not_hundred");
    assert_eq!(
        criteria[0].message,
        "criteria weights sum to 9000 basis points; they must sum to exactly 10000 (100 %)"
    );
    let requirements = validate(&p, ArtifactKind::Requirements);
    assert_eq!(requirements.iter().map(|v| v.rule.as_str()).collect::<Vec<_>>(), [RULE_UNKNOWN_NEED]);
    // A milestone date that is a business day but not the computed one is the validator's concern, not the gate's.
    reapprove(&mut p.milestones, |m| m.items[5].date = d(2027, 12, 1));
    assert_eq!(validate(&p, ArtifactKind::Milestones)[0].rule, RULE_MILESTONE_NOT_COMPUTED);
    assert!(!rules(&publish_gate(&p)).iter().any(|(r, a, _)| *r == PublishRule::MilestonesInvalid || a == "intake"));
}

#[test]
fn open_amount_markers_match_whole_words_only() {
    assert!(has_open_amount_marker("Travel, as required"));
    assert!(has_open_amount_marker("TBD"));
    assert!(has_open_amount_marker("Costs (to be determined)"));
    assert!(!has_open_amount_marker("TBDX hours"));
    assert!(!has_open_amount_marker("Monthly licence fee"));
}

fn stored(p: &Artifacts) -> Value {
    json!({"title": "Fleet telematics", "artifacts": serde_json::to_value(p).unwrap(), "findings": []})
}

#[test]
fn a_stored_package_reads_back_as_the_package_it_was() {
    let p = package();
    assert_eq!(stored_artifacts(&stored(&p)), Ok(p));
    // Absent or null artifacts are empty, and the gate names them.
    let read = stored_artifacts(&json!({"artifacts": {"scope": null}})).unwrap();
    assert_eq!(read, Artifacts::default());
}

#[test]
fn a_stored_package_that_does_not_read_whole_is_malformed_and_names_the_artifact() {
    let no_artifacts = stored_artifacts(&json!({"title": "x"})).unwrap_err();
    assert_eq!(rules(&no_artifacts), one(PublishRule::Malformed, "package", None));

    // A weight that is not a whole number of basis points.
    let mut json = stored(&package());
    json["artifacts"]["criteria"]["content"]["criteria"][0]["weight_bp"] = json!(59.5);
    assert_eq!(rules(&stored_artifacts(&json).unwrap_err()), one(PublishRule::Malformed, "criteria", None));

    // A field the package format does not have is not silently dropped before the gate looks.
    let mut json = stored(&package());
    json["artifacts"]["pricing"]["content"]["lines"][0]["discount"] = json!("50 % if asked");
    let v = stored_artifacts(&json).unwrap_err();
    assert_eq!(rules(&v), one(PublishRule::Malformed, "pricing", None));
    assert!(v[0].message.contains("pricing"), "{v:?}");

    // Nor is a missing one filled in with a default (a line whose open amount is not stated).
    let mut json = stored(&package());
    json["artifacts"]["pricing"]["content"]["lines"][0].as_object_mut().unwrap().remove("open_amount");
    assert_eq!(rules(&stored_artifacts(&json).unwrap_err()), one(PublishRule::Malformed, "pricing", None));
}

#[test]
fn a_milestone_on_a_public_holiday_of_the_buyers_country_is_refused_and_an_unknown_country_is_named() {
    // Contract start moved to Monday 29 March 2027, Easter Monday: a business day without a country.
    let mut p = package();
    reapprove(&mut p.milestones, |m| {
        m.items.iter_mut().filter(|x| x.kind == MilestoneKind::ContractStart).for_each(|x| x.date = d(2027, 3, 29))
    });
    assert_eq!(publish_gate(&p), vec![]);
    // In Germany it is a public holiday: the gate refuses it, naming the milestone.
    reapprove(&mut p.intake, |i| i.country = Some("DE".into()));
    assert_eq!(rules(&publish_gate(&p)), one(PublishRule::MilestonesInvalid, "milestones", Some("contract_start")));
    assert!(publish_gate(&p)[0].message.contains("2027-03-29 is not a business day"));
    // In the United States it is not.
    reapprove(&mut p.intake, |i| i.country = Some("US".into()));
    assert_eq!(publish_gate(&p), vec![]);

    // A code with no known holidays: the intake's validator says which codes are known; the gate is unchanged.
    reapprove(&mut p.intake, |i| i.country = Some("FR".into()));
    let found = validate(&p, ArtifactKind::Intake);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].rule.as_str(), found[0].subject.as_deref()), (RULE_INTAKE_INCOMPLETE, Some("country")));
    assert!(found[0].message.contains("\"FR\"") && found[0].message.contains("BR, DE, US"), "{}", found[0].message);
}
