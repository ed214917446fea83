//! Shared by the prep journeys: a model client wired to a fresh fake server, an in-memory store with members of
//! two organizations, a hand-written package, and the golden replay.

#![allow(dead_code)]

pub mod golden;

use chrono::{NaiveDate, TimeZone, Utc};
use pactwise_domain::{FixedClock, OrgId, Role};
use pactwise_model::fake::{FakeModelServer, FakeScript};
use pactwise_model::{
    ApiKey, CallContext, InMemoryApiKeySource, InMemoryUsage, LedgerPolicy, ModelClient, ModelConfig, RecordingSleeper,
    SeededJitter,
};
use pactwise_prep::*;
use pactwise_store::{OrgScope, Store};
use std::sync::Arc;
use std::time::Duration;

pub const KEY: &str = "sk-ant-test-prep-0000000000000000";

pub struct Model {
    pub server: FakeModelServer,
    pub client: ModelClient,
    pub clock: Arc<FixedClock>,
    pub usage: Arc<InMemoryUsage>,
}

pub fn clock() -> Arc<FixedClock> {
    Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()))
}

pub async fn model(script: FakeScript, clock: Arc<FixedClock>) -> Model {
    let server = FakeModelServer::start(FakeScript { api_key: Some(KEY.to_string()), ..script })
        .await
        .expect("the fake server starts");
    let usage = Arc::new(InMemoryUsage::new());
    let keys = Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap()));
    let mut config = ModelConfig::default().with_endpoint(server.endpoint());
    config.ledger = LedgerPolicy { flush_at_count: 1000, flush_every: Duration::from_secs(3600) };
    let client = ModelClient::new(config, keys, usage.clone(), usage.clone(), clock.clone())
        .expect("the client builds")
        .with_sleeper(Arc::new(RecordingSleeper::advancing(clock.clone())))
        .with_jitter(Arc::new(SeededJitter::new(7)));
    Model { server, client, clock, usage }
}

pub fn ctx(scope: &OrgScope) -> CallContext {
    CallContext::new(scope.org(), Some(scope.user()), "prep_draft")
}

pub fn org(store: &Store, name: &str) -> OrgId {
    store.platform().create_organization(name).unwrap()
}

pub fn member(store: &Store, org: OrgId, name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let user = p.create_user(name, None).unwrap();
    p.set_membership(org, user, role).unwrap();
    store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
}

pub fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

pub fn intake() -> Intake {
    Intake {
        title: "Fleet telematics".into(),
        buyer: "City of Northbridge".into(),
        brief: "GPS tracking and fuel reports for 120 vehicles.".into(),
        needs: vec![
            Need { id: "N1".into(), text: "Live vehicle positions".into() },
            Need { id: "N2".into(), text: "Monthly fuel reports".into() },
        ],
        category: "services".into(),
        currency: "EUR".into(),
        budget_ceiling_minor: Some(18_000_000),
        timeline: Timeline {
            publication: d(2027, 2, 1),
            question_days: 5,
            submission_days: 15,
            evaluation_days: 10,
            award_days: 5,
            contract_start_days: 10,
        },
        holidays: vec![d(2027, 2, 15)],
        country: None,
        contact: None,
        checklist_type: None,
    }
}

pub fn scope() -> Scope {
    Scope {
        summary: "Telematics for 120 vehicles.".into(),
        in_scope: vec!["Devices".into(), "Platform".into()],
        out_of_scope: vec!["Repairs".into()],
        deliverables: vec!["Installed devices".into()],
        need_ids: vec!["N1".into(), "N2".into()],
    }
}

pub fn measure(metric: &str, threshold: &str) -> Option<Measure> {
    Some(Measure { metric: metric.into(), threshold: threshold.into(), verification: Verification::Test })
}

pub fn requirements() -> Requirements {
    Requirements {
        items: vec![
            Requirement {
                code: "R-01".into(),
                text: "EU hosting".into(),
                kind: RequirementKind::Mandatory,
                need_ids: vec![],
                measure: None,
            },
            Requirement {
                code: "R-02".into(),
                text: "Position updates".into(),
                kind: RequirementKind::Scored,
                need_ids: vec!["N1".into()],
                measure: measure("update interval", "<= 30 s"),
            },
            Requirement {
                code: "R-03".into(),
                text: "Fuel reports".into(),
                kind: RequirementKind::Scored,
                need_ids: vec!["N2".into()],
                measure: measure("delivery day", "5th business day"),
            },
        ],
    }
}

pub fn criteria() -> Criteria {
    Criteria {
        criteria: vec![
            Criterion {
                id: "C1".into(),
                name: "Tracking".into(),
                description: "Tracking quality".into(),
                weight_bp: 6000,
                requirement_codes: vec!["R-02".into()],
            },
            Criterion {
                id: "C2".into(),
                name: "Reporting".into(),
                description: "Reports".into(),
                weight_bp: 4000,
                requirement_codes: vec!["R-03".into()],
            },
        ],
    }
}

pub fn pricing() -> Pricing {
    Pricing {
        currency: "EUR".into(),
        lines: vec![PricingLine {
            code: "P-01".into(),
            description: "Device".into(),
            unit: "vehicle".into(),
            quantity: Some(120),
            basis: Some(PriceBasis::PerUnit),
            open_amount: false,
        }],
    }
}

pub fn milestones(intake: &Intake) -> Milestones {
    Milestones { items: pactwise_prep::calendar::milestones_with_rationales(intake, |_| Some("Enough time.".into())) }
}

/// A complete package written by a person, every artifact valid (not yet approved).
pub fn complete_package() -> Package {
    let intake = intake();
    let mut p = Package::new(intake.clone());
    p.set_content(ArtifactKind::Scope, Content::Scope(scope()), None).unwrap();
    p.set_content(ArtifactKind::Requirements, Content::Requirements(requirements()), None).unwrap();
    p.set_content(ArtifactKind::Criteria, Content::Criteria(criteria()), None).unwrap();
    p.set_content(ArtifactKind::Pricing, Content::Pricing(pricing()), None).unwrap();
    p.set_content(ArtifactKind::Milestones, Content::Milestones(milestones(&intake)), None).unwrap();
    p.revalidate().unwrap();
    p
}

/// The buyer approves every valid artifact, in order, with the hash they were shown.
pub fn approve_all_valid(p: &mut Package) -> u32 {
    let mut approved = 0;
    for kind in ArtifactKind::ALL {
        if *p.state(kind) == ArtifactState::Valid {
            let hash = p.artifacts.content_hash(kind).unwrap();
            p.approve(kind, &hash).unwrap();
            approved += 1;
        }
    }
    approved
}

pub fn approved_package() -> Package {
    let mut p = complete_package();
    assert_eq!(approve_all_valid(&mut p), 6, "{:#?}", ArtifactKind::ALL.map(|k| p.state(k).clone()));
    p
}
