//! The Vendors area and the workflows started from records, through the real api and checked against the store:
//! onboarding started from a vendor moves it to onboarding, and the decision makes it active (approved) or blocked
//! (declined); a lifecycle started from a finalized contract takes its risk from the checklist outcome; a lifecycle
//! on a deleted contract and a merge across organizations are refused and change nothing.

use pactwise_api::VendorIdentifier as Identifier;
use pactwise_api::{Api, ApiOptions, FinalizeInput, ImportOptions, OnboardingInput, VendorInput};
use pactwise_domain::{Decision, DocumentId, ErrorCode, Role, RunStatus, VendorStatus};
use pactwise_model::InMemoryApiKeySource;
use pactwise_store::OrgScope;
use std::path::PathBuf;
use std::sync::Arc;

fn licence() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/software-license-northwind-tailspin.txt")
}

async fn offline_api() -> (tempfile::TempDir, Api) {
    let tmp = tempfile::tempdir().unwrap();
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    (tmp, api)
}

fn side_store(api: &Api) -> pactwise_store::Store {
    pactwise_store::Store::open(&api.data_dir().database(), Arc::new(pactwise_domain::SystemClock)).unwrap()
}

fn member(api: &Api, org: pactwise_domain::OrgId, name: &str, role: Role) -> OrgScope {
    let store = side_store(api);
    let platform = store.platform();
    let user = platform.create_user(name, None).unwrap();
    platform.set_membership(org, user, role).unwrap();
    let session = platform.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn other_organization(api: &Api) -> OrgScope {
    let store = side_store(api);
    let platform = store.platform();
    let org = platform.create_organization("Elsewhere Inc").unwrap();
    let user = platform.create_user("Eve Other", None).unwrap();
    platform.set_membership(org, user, Role::Owner).unwrap();
    let session = platform.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn vendor_input(name: &str, tax_id: Option<&str>) -> VendorInput {
    VendorInput {
        name: Some(name.into()),
        aliases: None,
        identifiers: tax_id.map(|t| vec![Identifier { kind: "tax id".into(), value: t.into() }]),
    }
}

/// The vendor's status as the store holds it (not as the api reports it).
fn stored_status(api: &Api, scope: &OrgScope, id: &str) -> VendorStatus {
    let store = side_store(api);
    let scope = store.sessions().open(scope.session()).unwrap();
    store.vendors().get(&scope, id).unwrap().status
}

/// The input a run started with, as the store keeps it.
fn run_input(api: &Api, scope: &OrgScope, run: pactwise_domain::RunId) -> serde_json::Value {
    let store = side_store(api);
    let scope = store.sessions().open(scope.session()).unwrap();
    serde_json::from_str(&store.runs().get(&scope, run).unwrap().input).unwrap()
}

const ALL_DOCUMENTS: [&str; 3] = ["w9", "insurance_certificate", "security_questionnaire"];

#[tokio::test]
async fn onboarding_started_from_a_vendor_makes_it_active_when_approved_and_blocked_when_declined() {
    let (_tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let approver = member(&api, scope.org(), "Ada Approver", Role::Approver);
    let globex = api.vendor_create(&scope, vendor_input("Globex Ltd", Some("GB-123"))).await.unwrap();
    assert_eq!(globex.status, VendorStatus::Prospective);

    // The Runs form offers the vendor for onboarding.
    let forms = api.run_forms(&scope).await.unwrap();
    let form = forms.iter().find(|f| f.graph == "vendor_onboarding").unwrap();
    let field = form.fields.iter().find(|f| f.key == "vendor.id").unwrap();
    assert_eq!(field.options.iter().map(|o| o.label.as_str()).collect::<Vec<_>>(), ["Globex Ltd"]);

    let input = OnboardingInput { documents: ALL_DOCUMENTS.map(String::from).to_vec(), sanctions_hit: false };
    let run = api.start_vendor_onboarding(&scope, globex.id.clone(), input.clone()).await.unwrap();
    assert_eq!(run.status, RunStatus::Waiting);
    assert_eq!(stored_status(&api, &scope, &globex.id), VendorStatus::Onboarding);
    // The run saw the record's name and tax id, so the screening is clear.
    let seen = run_input(&api, &scope, run.id);
    assert_eq!(seen["vendor"]["name"], "Globex Ltd");
    assert_eq!(seen["vendor"]["tax_id"], "GB-123");
    // Not twice at once.
    let err = api.start_vendor_onboarding(&scope, globex.id.clone(), input.clone()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Conflict, "{err:?}");

    let step = api.inbox(&approver).await.unwrap().pop().expect("the approval is in the approver's inbox");
    api.decide_approval(&approver, step.id, Decision::Approve, "documents in order".into(), None).await.unwrap();
    let done = api.show_run(&scope, run.id).await.unwrap();
    assert_eq!(
        done.run.status,
        RunStatus::Succeeded,
        "{:?}",
        done.events.iter().map(|e| e.details.to_string()).collect::<Vec<_>>()
    );
    assert_eq!(stored_status(&api, &scope, &globex.id), VendorStatus::Active, "the store holds the new status");
    let vendor = api.vendor_detail(&scope, globex.id.clone()).await.unwrap();
    assert_eq!(vendor.runs.len(), 1, "its onboarding run is listed with it");
    assert!(!vendor.can_onboard, "an active vendor is not onboarded again");

    // Declined: blocked.
    let initech = api.vendor_create(&scope, vendor_input("Initech", Some("US-9"))).await.unwrap();
    let run = api.start_vendor_onboarding(&scope, initech.id.clone(), input).await.unwrap();
    let step = api.inbox(&approver).await.unwrap().pop().unwrap();
    api.decide_approval(&approver, step.id, Decision::Reject, "no references".into(), None).await.unwrap();
    assert_eq!(api.show_run(&scope, run.id).await.unwrap().run.status, RunStatus::Succeeded);
    assert_eq!(stored_status(&api, &scope, &initech.id), VendorStatus::Blocked);
}

#[tokio::test]
async fn onboarding_from_another_organizations_vendor_is_refused_and_starts_nothing() {
    let (_tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let other = other_organization(&api);
    let theirs = api.vendor_create(&other, vendor_input("Theirs", None)).await.unwrap();
    let err = api.start_vendor_onboarding(&scope, theirs.id.clone(), OnboardingInput::default()).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{err:?}");
    assert!(api.list_runs(&scope).await.unwrap().is_empty());
    assert_eq!(stored_status(&api, &other, &theirs.id), VendorStatus::Prospective);
}

#[tokio::test]
async fn a_merge_of_vendors_from_two_organizations_is_refused_and_changes_nothing() {
    let (_tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let other = other_organization(&api);
    let ours = api.vendor_create(&scope, vendor_input("Acme", None)).await.unwrap();
    let theirs = api.vendor_create(&other, vendor_input("Acme Inc", None)).await.unwrap();
    for (kept, merged) in [(&ours, &theirs), (&theirs, &ours)] {
        let err = api.vendor_merge(&scope, kept.id.clone(), merged.id.clone()).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFound, "{err:?}");
    }
    assert_eq!(stored_status(&api, &other, &theirs.id), VendorStatus::Prospective);
    assert_eq!(stored_status(&api, &scope, &ours.id), VendorStatus::Prospective);
    assert!(api.vendor_duplicates(&scope).await.unwrap().is_empty(), "another organization's vendor is no duplicate");

    // Within one organization the merge a person confirms goes through and says what it did.
    let twin = api.vendor_create(&scope, vendor_input("ACME, Inc.", None)).await.unwrap();
    let groups = api.vendor_duplicates(&scope).await.unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].because, ["the name \u{201c}acme\u{201d}"]);
    let out = api.vendor_merge(&scope, ours.id.clone(), twin.id.clone()).await.unwrap();
    assert_eq!(out.merged.status, VendorStatus::Merged);
    assert_eq!(out.merged.merged_into.as_deref(), Some("Acme"));
    assert!(out.message.starts_with("ACME, Inc. was merged into Acme"), "{}", out.message);
    assert_eq!(api.vendor_list(&scope, false).await.unwrap().len(), 1);
    assert_eq!(api.vendor_list(&scope, true).await.unwrap().len(), 2, "the merged record is kept");
}

async fn finalized_licence(api: &Api, scope: &OrgScope) -> DocumentId {
    let report = api.import_documents(scope, vec![licence()], ImportOptions::default(), &|_| {}).await.unwrap();
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
async fn a_lifecycle_started_from_a_finalized_contract_takes_its_risk_from_the_checklist_outcome() {
    let (_tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let id = finalized_licence(&api, &scope).await;
    let row = api.contract_detail(&scope, id).await.unwrap();
    let risk = row.contract.risk.clone().expect("stamped at finalize");

    let run = api.start_contract_lifecycle(&scope, id).await.unwrap();
    assert_eq!(run.status, RunStatus::Waiting);
    let detail = api.show_run(&scope, run.id).await.unwrap();
    let seen = run_input(&api, &scope, run.id);
    assert_eq!(seen["contract"]["risk"]["level"], risk.as_str(), "the run saw the stamped outcome");
    assert_eq!(seen["contract"]["title"], row.contract.name.as_str());
    let step = &detail.approvals[0];
    let executive = step.title.contains("Executive");
    assert_eq!(executive, risk == "high", "red flags remaining need an executive: {risk} / {}", step.title);
    // The contract lists the run.
    let runs = api.contract_detail(&scope, id).await.unwrap().runs;
    assert_eq!(runs.len(), 1);

    // A deleted contract: refused, nothing started.
    api.delete_document(&scope, id).await.unwrap();
    let err = api.start_contract_lifecycle(&scope, id).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{err:?}");
    let through_form = api
        .start_run(&scope, "contract_lifecycle".into(), serde_json::json!({"contract": {"document": id.to_string()}}))
        .await
        .unwrap_err();
    assert_eq!(through_form.code, ErrorCode::NotFound, "{through_form:?}");
    assert_eq!(api.list_runs(&scope).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_lifecycle_needs_a_finalized_review() {
    let (_tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let report = api.import_documents(&scope, vec![licence()], ImportOptions::default(), &|_| {}).await.unwrap();
    let err = api.start_contract_lifecycle(&scope, report.imported[0].document.id).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Conflict, "{err:?}");
    assert!(err.message.contains("finalize"), "{}", err.message);
    let other = other_organization(&api);
    let err = api.start_contract_lifecycle(&other, report.imported[0].document.id).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "another organization's contract answers like a missing one");
}

#[tokio::test]
async fn a_due_renewal_reminder_becomes_an_inbox_decision_once_and_a_corrected_deadline_moves_it() {
    use chrono::TimeZone;
    let tmp = tempfile::tempdir().unwrap();
    let clock =
        Arc::new(pactwise_domain::FixedClock::new(chrono::Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    let options =
        ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), clock: clock.clone(), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    let scope = api.local_session().await.unwrap();
    let id = finalized_licence(&api, &scope).await;
    let reminder = |api: &Api| {
        let store = side_store(api);
        let s = store.sessions().open(scope.session()).unwrap();
        store.contracts().reminder(&s, id).unwrap().expect("a reminder")
    };
    let date = |s: &str| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    // Notice by 3 May 2029 (ninety days before 1 August 2029): reminded on 4 March 2029.
    assert_eq!((reminder(&api).notice_by, reminder(&api).remind_on), (date("2029-05-03"), date("2029-03-04")));
    assert!(api.work_round().await.unwrap().reminders_started.is_empty(), "not due yet");

    // The notice period is corrected to 45 days: notice by 17 June 2029, reminded on 18 April 2029.
    api.reopen_review(&scope, id, "the notice period was misread".into()).await.unwrap();
    api.correct_item(
        &scope,
        id,
        pactwise_api::CorrectionInput {
            item_id: "license.term.nonrenewal_notice".into(),
            confirm: false,
            status: Some(pactwise_domain::ItemStatus::Present),
            quote: Some(pactwise_domain::Quote { text: "payable within forty-five (45) days".into(), page: 1 }),
            note: Some("the notice period is 45 days".into()),
            acknowledge_warnings: true,
        },
    )
    .await
    .unwrap();
    api.finalize_review(&scope, id, FinalizeInput::default()).await.unwrap();
    assert_eq!((reminder(&api).notice_by, reminder(&api).remind_on), (date("2029-06-17"), date("2029-04-18")));

    // On the old reminder day nothing goes out: the reminder moved.
    clock.set(chrono::Utc.with_ymd_and_hms(2029, 3, 10, 9, 0, 0).unwrap());
    assert!(api.work_round().await.unwrap().reminders_started.is_empty());
    // On the new one it becomes an approval in the inbox (with its notification), once.
    clock.set(chrono::Utc.with_ymd_and_hms(2029, 4, 18, 8, 0, 0).unwrap());
    let round = api.work_round().await.unwrap();
    assert_eq!(round.reminders_started.len(), 1);
    assert!(round.changed(), "the windows are told");
    let inbox = api.inbox(&scope).await.unwrap();
    assert_eq!(inbox.len(), 1);
    assert!(inbox[0].title.contains("Renewal notice due"), "{}", inbox[0].title);
    let r = reminder(&api);
    assert_eq!((r.started, r.run), (true, Some(round.reminders_started[0])));
    assert!(api.work_round().await.unwrap().reminders_started.is_empty(), "once per deadline");
    let store = side_store(&api);
    let s = store.sessions().open(scope.session()).unwrap();
    let notes = store.approvals().notifications(&s).unwrap();
    assert_eq!(notes.len(), 1, "one notification for the reminder: {notes:?}");
}

#[tokio::test]
async fn an_imported_invoice_is_matched_to_its_contract_and_vendor_by_code_and_one_that_matches_nothing_says_so() {
    let (tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let contract = finalized_licence(&api, &scope).await;
    let vendor =
        api.vendor_list(&scope, false).await.unwrap().into_iter().find(|v| v.name == "Tailspin Software").unwrap();
    let write = |name: &str, text: &str| {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let ours = write(
        "invoice-4411.txt",
        "INVOICE 4411\nFrom: Tailspin Software Ltd.\nLicence fees, year one\nTotal due: 12,000.00 GBP\n",
    );
    let theirs =
        write("invoice-9001.txt", "INVOICE 9001\nFrom: Hooli Catering\nLunch for forty\nTotal due: 800.00 USD\n");
    let imported = api.import_documents(&scope, vec![ours, theirs], ImportOptions::default(), &|_| {}).await.unwrap();
    let (ours, theirs) = (imported.imported[0].document.id, imported.imported[1].document.id);

    let run = api
        .start_run(&scope, "invoice_processing".into(), serde_json::json!({"invoice": {"document": ours.to_string()}}))
        .await
        .unwrap();
    let seen = run_input(&api, &scope, run.id);
    assert_eq!(seen["invoice"]["matched"]["status"], "matched", "{seen}");
    assert_eq!(seen["invoice"]["matched"]["contract"], contract.to_string());
    // No order lines to match against: an approver checks it against the contract.
    assert_eq!(run.status, RunStatus::Waiting);
    // The match is recorded with the vendor, in the store.
    let store = side_store(&api);
    let s = store.sessions().open(scope.session()).unwrap();
    assert_eq!(
        store.vendors().invoices(&s, &vendor.id).unwrap(),
        [(ours, "invoice-4411.txt".to_string(), Some(contract))]
    );

    let run = api
        .start_run(
            &scope,
            "invoice_processing".into(),
            serde_json::json!({"invoice": {"document": theirs.to_string()}}),
        )
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Succeeded, "an unmatched invoice ends with its reason, waiting for nobody");
    let seen = run_input(&api, &scope, run.id);
    assert_eq!(seen["invoice"]["matched"]["status"], "none");
    let state: serde_json::Value = serde_json::from_str(&store.runs().get(&s, run.id).unwrap().state).unwrap();
    let outcome = &state["channels"]["outcome"];
    assert_eq!(outcome["status"], "unmatched");
    assert!(
        outcome["reason"].as_str().unwrap().contains("no vendor name, identifier or contract reference"),
        "{outcome}"
    );
    assert_eq!(store.vendors().invoices(&s, &vendor.id).unwrap().len(), 1, "nothing recorded for it");

    // A deleted invoice is refused.
    api.delete_document(&scope, theirs).await.unwrap();
    let err = api
        .start_run(
            &scope,
            "invoice_processing".into(),
            serde_json::json!({"invoice": {"document": theirs.to_string()}}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{err:?}");
}

#[tokio::test]
async fn obligation_tracking_starts_from_a_finalized_contracts_extracted_terms_and_dates() {
    let (_tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let id = finalized_licence(&api, &scope).await;
    let run = api
        .start_run(&scope, "obligation_tracking".into(), serde_json::json!({"contract": {"document": id.to_string()}}))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Waiting, "a person confirms the obligations");
    let seen = run_input(&api, &scope, run.id);
    let items = seen["obligations"].as_array().unwrap();
    assert!(items.iter().any(|o| o["due"] == "2029-05-03"), "the notice deadline is an obligation: {seen}");
    assert!(items.iter().any(|o| o["due"] == "2029-08-01"), "{seen}");
    assert_eq!(seen["contract"]["title"], "software-license-northwind-tailspin.txt");
    // A deleted contract is refused.
    api.delete_document(&scope, id).await.unwrap();
    let err = api
        .start_run(&scope, "obligation_tracking".into(), serde_json::json!({"contract": {"document": id.to_string()}}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn an_amendment_that_moves_the_end_date_is_compared_by_code_and_needs_legal() {
    let (tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let contract = finalized_licence(&api, &scope).await;
    let text = std::fs::read_to_string(licence()).unwrap().replace("three (3) years", "five (5) years");
    let path = tmp.path().join("amendment-1.txt");
    std::fs::write(&path, text).unwrap();
    let amendment = api.import_documents(&scope, vec![path], ImportOptions::default(), &|_| {}).await.unwrap().imported
        [0]
    .document
    .id;
    let input = serde_json::json!({"contract": {"document": contract.to_string()},
                                   "amendment": {"document": amendment.to_string()}});
    let run = api.start_run(&scope, "contract_amendment_review".into(), input).await.unwrap();
    let seen = run_input(&api, &scope, run.id);
    let changes = seen["changes"].as_array().unwrap();
    let end = changes.iter().find(|c| c["field"] == "expiration_date").expect("the end date changed");
    assert!(end["after"].as_str().unwrap().contains("2031"), "{end}");
    assert_eq!(run.status, RunStatus::Waiting);
    let detail = api.show_run(&scope, run.id).await.unwrap();
    assert!(detail.approvals[0].title.contains("Legal review"), "{}", detail.approvals[0].title);
}
