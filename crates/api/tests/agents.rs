//! The manager's plan through the real api: contract references and vendors resolve within the session's
//! organization only (another organization's contract and vendor are never named in the plan), and the agents'
//! thresholds are per organization, changed by owners and admins with the one check.

use pactwise_api::{Api, ApiOptions, FinalizeInput, ImportOptions, VendorInput};
use pactwise_domain::{DocumentId, ErrorCode, Role};
use pactwise_model::InMemoryApiKeySource;
use pactwise_store::OrgScope;
use std::path::PathBuf;
use std::sync::Arc;

async fn offline_api() -> (tempfile::TempDir, Api) {
    let tmp = tempfile::tempdir().unwrap();
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    (tmp, api)
}

fn side_store(api: &Api) -> pactwise_store::Store {
    pactwise_store::Store::open(&api.data_dir().database(), Arc::new(pactwise_domain::SystemClock)).unwrap()
}

fn session_in(api: &Api, org: Option<pactwise_domain::OrgId>, name: &str, role: Role) -> OrgScope {
    let store = side_store(api);
    let platform = store.platform();
    let org = org.unwrap_or_else(|| platform.create_organization("Elsewhere Inc").unwrap());
    let user = platform.create_user(name, None).unwrap();
    platform.set_membership(org, user, role).unwrap();
    let session = platform.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

/// The demo licence imported as "MSA-2026-014 Tailspin.txt" and finalized with a new vendor.
async fn finalized_msa(api: &Api, scope: &OrgScope, dir: &std::path::Path) -> DocumentId {
    let source =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/software-license-northwind-tailspin.txt");
    let path = dir.join("MSA-2026-014 Tailspin.txt");
    std::fs::copy(source, &path).unwrap();
    let report = api.import_documents(scope, vec![path], ImportOptions::default(), &|_| {}).await.unwrap();
    let id = report.imported[0].document.id;
    let review = api.document_review(scope, id).await.unwrap();
    let t = pactwise_api::catalog().unwrap().contract_type(&review.contract_type.as_ref().unwrap().id).unwrap().clone();
    for item in t.items.iter().filter(|i| i.risk == pactwise_domain::RiskLevel::Critical) {
        if review.items.iter().any(|r| r.id == item.id && r.method == "person") {
            continue;
        }
        let input = pactwise_api::CorrectionInput {
            item_id: item.id.clone(),
            confirm: true,
            status: None,
            quote: None,
            note: None,
            acknowledge_warnings: true,
        };
        api.correct_item(scope, id, input).await.unwrap();
    }
    let input = FinalizeInput { vendor_id: None, new_vendor_name: Some("Tailspin Software".into()) };
    api.finalize_review(scope, id, input).await.unwrap();
    id
}

#[tokio::test]
async fn a_plan_resolves_contracts_and_vendors_only_within_the_sessions_organization() {
    let (tmp, api) = offline_api().await;
    let ours = api.local_session().await.unwrap();
    let contract = finalized_msa(&api, &ours, tmp.path()).await;
    let theirs = session_in(&api, None, "Eve Other", Role::Owner);
    let vendor = |name: &str| VendorInput { name: Some(name.into()), aliases: None, identifiers: None };
    api.vendor_create(&theirs, vendor("Initech GmbH")).await.unwrap();

    let request = "Review MSA-2026-014 with Tailspin Software and Initech before Friday, fees capped at 50k";
    let plan = api.plan_request(&ours, request.into()).await.unwrap();
    assert_eq!(plan.request_type.id(), "contract_review");
    let c = &plan.entities.contracts[0];
    assert_eq!(c.reference, "MSA-2026-014");
    assert_eq!(c.contract.as_ref().map(|k| k.id.clone()), Some(contract.to_string()));
    let names: Vec<_> = plan.entities.vendors.iter().map(|v| (v.name.as_str(), v.vendor.is_some())).collect();
    assert_eq!(names, [("Tailspin Software", true)], "Initech is another organization's vendor");
    assert_eq!(plan.steps[0].agent.id(), "ocr");

    // The other organization names the same reference and vendor: nothing of ours resolves.
    let plan = api.plan_request(&theirs, request.into()).await.unwrap();
    assert!(plan.entities.contracts[0].contract.is_none());
    assert!(plan.notes.iter().any(|n| n.contains("MSA-2026-014 is not a contract of this organization")));
    let names: Vec<_> = plan.entities.vendors.iter().map(|v| (v.name.as_str(), v.vendor.is_some())).collect();
    assert_eq!(names, [("Initech GmbH", true)]);
    assert!(plan.steps.iter().all(|s| !s.why.contains("MSA-2026-014")));
}

#[tokio::test]
async fn thresholds_are_per_organization_checked_and_for_admins_only() {
    let (_tmp, api) = offline_api().await;
    let ours = api.local_session().await.unwrap();
    let theirs = session_in(&api, None, "Eve Other", Role::Owner);
    let viewer = session_in(&api, Some(ours.org()), "Val Viewer", Role::Viewer);

    let changed = api.set_agents_config(&ours, "secretary.reminder_days_before", "14").await.unwrap();
    assert_eq!(changed.secretary.reminder_days_before, 14);
    assert_eq!(api.agents_config(&ours).await.unwrap().secretary.reminder_days_before, 14);
    assert_eq!(api.agents_config(&theirs).await.unwrap().secretary.reminder_days_before, 30);

    let err = api.set_agents_config(&ours, "secretary.reminder_days_before", "0").await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains("from 1 to 365"), "{}", err.message);
    assert_eq!(api.agents_config(&ours).await.unwrap().secretary.reminder_days_before, 14, "nothing written");

    let err = api.set_agents_config(&viewer, "secretary.reminder_days_before", "20").await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Forbidden);

    // The organization's default currency reaches the plan.
    api.set_agents_config(&ours, "manager.default_currency", "USD").await.unwrap();
    let plan = api.plan_request(&ours, "budget approval for 40k".into()).await.unwrap();
    assert_eq!(plan.entities.amounts[0].canonical(), "USD 40000.00");
}
