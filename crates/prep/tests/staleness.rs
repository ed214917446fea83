//! The package's state machines together: staleness propagation downstream, approval cleared on change, approval
//! bound to the hash the buyer saw. Table-driven.

mod support;

use pactwise_prep::*;
use support::*;

fn states(p: &Package) -> Vec<&'static str> {
    ArtifactKind::ALL.iter().map(|k| p.state(*k).name()).collect()
}

#[test]
fn a_change_marks_every_downstream_artifact_stale_and_clears_approvals() {
    // (edited artifact, expected states after the edit) starting from a fully approved package.
    let cases: Vec<(ArtifactKind, [&str; 6])> = vec![
        (ArtifactKind::Intake, ["valid", "stale", "stale", "stale", "stale", "stale"]),
        (ArtifactKind::Scope, ["approved", "valid", "stale", "stale", "stale", "stale"]),
        (ArtifactKind::Requirements, ["approved", "approved", "valid", "stale", "stale", "stale"]),
        (ArtifactKind::Criteria, ["approved", "approved", "approved", "valid", "stale", "stale"]),
        (ArtifactKind::Pricing, ["approved", "approved", "approved", "approved", "valid", "stale"]),
        (ArtifactKind::Milestones, ["approved", "approved", "approved", "approved", "approved", "valid"]),
    ];
    for (edited, expected) in cases {
        let mut p = approved_package();
        assert_eq!(states(&p), ["approved"; 6]);
        let content = match edited {
            ArtifactKind::Intake => Content::Intake(Intake { brief: "changed".into(), ..intake() }),
            ArtifactKind::Scope => Content::Scope(Scope { summary: "changed".into(), ..scope() }),
            ArtifactKind::Requirements => {
                let mut r = requirements();
                r.items[0].text = "changed".into();
                Content::Requirements(r)
            }
            ArtifactKind::Criteria => {
                let mut c = criteria();
                c.criteria[0].description = "changed".into();
                Content::Criteria(c)
            }
            ArtifactKind::Pricing => {
                let mut pr = pricing();
                pr.lines[0].description = "changed".into();
                Content::Pricing(pr)
            }
            ArtifactKind::Milestones => {
                let mut m = milestones(&intake());
                m.items[0].rationale = "changed".into();
                Content::Milestones(m)
            }
        };
        p.set_content(edited, content, None).unwrap();
        assert_eq!(states(&p), expected, "after editing {edited:?}");
        // Nothing stale or merely valid passes the pre-check.
        let mut blocked: Vec<String> = precheck(&p.artifacts).iter().map(|v| v.artifact.clone()).collect();
        blocked.sort();
        let expect_blocked: Vec<String> = ArtifactKind::ALL
            .iter()
            .zip(expected)
            .filter(|(_, s)| *s != "approved")
            .map(|(k, _)| k.as_str().to_string())
            .collect();
        let mut expect_blocked = expect_blocked;
        expect_blocked.sort();
        assert_eq!(blocked, expect_blocked, "after editing {edited:?}");
    }
}

#[test]
fn approval_is_bound_to_the_hash_the_buyer_saw() {
    let mut p = complete_package();
    let seen = p.artifacts.content_hash(ArtifactKind::Scope).unwrap();
    // The scope changes after the buyer looked at it: approving what they saw is refused.
    p.set_content(ArtifactKind::Scope, Content::Scope(Scope { summary: "other".into(), ..scope() }), None).unwrap();
    let err = p.approve(ArtifactKind::Scope, &seen).unwrap_err();
    assert!(matches!(err, StepError::ApprovalOutdated { .. }), "{err:?}");
    assert_eq!(p.state(ArtifactKind::Scope).name(), "valid");
    let now = p.artifacts.content_hash(ArtifactKind::Scope).unwrap();
    p.approve(ArtifactKind::Scope, &now).unwrap();
    assert_eq!(*p.state(ArtifactKind::Scope), ArtifactState::Approved { hash: now.clone() });

    // Content changed behind the state's back (e.g. a hand-edited file): the approval no longer matches.
    let mut tampered = approved_package();
    tampered.artifacts.scope.content.as_mut().unwrap().summary = "tampered".into();
    let v = precheck(&tampered.artifacts);
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].rule, PublishRule::ApprovalOutdated);
    assert_eq!(v[0].artifact, "scope");
}

#[test]
fn an_invalid_artifact_cannot_be_approved_until_it_is_fixed() {
    let mut p = complete_package();
    let mut c = criteria();
    c.criteria[0].weight_bp = 5000; // sums to 9000
    p.set_content(ArtifactKind::Criteria, Content::Criteria(c.clone()), None).unwrap();
    match p.state(ArtifactKind::Criteria) {
        ArtifactState::Invalid { errors } => assert_eq!(errors[0].rule, "weights_not_hundred"),
        other => panic!("expected invalid, got {other:?}"),
    }
    let hash = p.artifacts.content_hash(ArtifactKind::Criteria).unwrap();
    assert!(p.approve(ArtifactKind::Criteria, &hash).is_err());
    c.criteria[0].weight_bp = 6000;
    p.set_content(ArtifactKind::Criteria, Content::Criteria(c), None).unwrap();
    assert_eq!(p.state(ArtifactKind::Criteria).name(), "valid");
}
