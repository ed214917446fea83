//! The Contracts area through the real api, offline (no API key): a review finalized by a person appears in the list
//! with its fields, each quote placed on its page; filters and search find it; its upcoming dates are its
//! expiration and notice deadline; correcting the notice period (reopen, correct, finalize) moves the deadline in
//! the upcoming dates and the calendar; another organization sees none of it.

use chrono::NaiveDate;
use pactwise_api::{
    Api, ApiOptions, ContractQuery, CorrectionInput, DateKind, Existing, FinalizeInput, ImportOptions, catalog,
};
use pactwise_domain::{DocumentId, ErrorCode, ItemStatus, Quote, RiskLevel};
use pactwise_model::InMemoryApiKeySource;
use pactwise_store::OrgScope;
use std::path::PathBuf;
use std::sync::Arc;

fn licence() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/software-license-northwind-tailspin.txt")
}

fn date(iso: &str) -> NaiveDate {
    NaiveDate::parse_from_str(iso, "%Y-%m-%d").unwrap()
}

async fn offline_api() -> (tempfile::TempDir, Api) {
    let tmp = tempfile::tempdir().unwrap();
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    (tmp, api)
}

/// Confirms every critical item as the pipeline answered it, then finalizes with a new vendor.
async fn confirm_and_finalize(api: &Api, scope: &OrgScope, id: DocumentId, vendor: Option<&str>) {
    let review = api.document_review(scope, id).await.unwrap();
    let t = catalog().unwrap().contract_type(&review.contract_type.as_ref().unwrap().id).unwrap().clone();
    for item in t.items.iter().filter(|i| i.risk == RiskLevel::Critical) {
        let done = review.items.iter().any(|r| r.id == item.id && r.method == "person");
        if done {
            continue;
        }
        let input = CorrectionInput {
            item_id: item.id.clone(),
            confirm: true,
            status: None,
            quote: None,
            note: None,
            acknowledge_warnings: true,
        };
        api.correct_item(scope, id, input).await.unwrap();
    }
    let input = FinalizeInput { vendor_id: None, new_vendor_name: vendor.map(str::to_owned) };
    api.finalize_review(scope, id, input).await.unwrap();
}

#[tokio::test]
async fn a_finalized_review_is_listed_with_its_fields_and_a_corrected_notice_period_moves_its_deadline() {
    let (tmp, api) = offline_api().await;
    let scope = api.local_session().await.unwrap();
    let report = api.import_documents(&scope, vec![licence()], ImportOptions::default(), &|_| {}).await.unwrap();
    let id = report.imported[0].document.id;

    let empty = api.contract_list(&scope, ContractQuery::default()).await.unwrap();
    assert_eq!(empty.total, 0, "a review that is not finalized is not a contract of the repository yet");
    let err = api.contract_detail(&scope, id).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);

    confirm_and_finalize(&api, &scope, id, Some("Tailspin Software")).await;

    let list = api.contract_list(&scope, ContractQuery::default()).await.unwrap();
    assert_eq!(list.total, 1);
    let row = &list.items[0];
    assert_eq!(row.document, id);
    assert_eq!(row.type_id, "license");
    assert_eq!(row.expires_on, Some(date("2029-08-01")), "three years from 1 August 2026");
    assert_eq!(row.notice_by, Some(date("2029-05-03")), "ninety days before it expires");
    assert_eq!(row.vendor.as_deref(), Some("Tailspin Software"));
    assert!(row.risk.is_some(), "the outcome is stamped at finalize");
    assert!(row.governing_law.as_deref().unwrap().contains("England"), "{:?}", row.governing_law);

    // Filters and search find it; others leave it out.
    let found = |q: ContractQuery| {
        let api = &api;
        let scope = scope.clone();
        async move { api.contract_list(&scope, q).await.unwrap().total }
    };
    assert_eq!(found(ContractQuery { search: Some("tailspin".into()), ..Default::default() }).await, 1);
    assert_eq!(found(ContractQuery { search: Some("england wal".into()), ..Default::default() }).await, 1);
    assert_eq!(found(ContractQuery { search: Some("contoso".into()), ..Default::default() }).await, 0);
    assert_eq!(found(ContractQuery { type_id: Some("license".into()), ..Default::default() }).await, 1);
    assert_eq!(found(ContractQuery { type_id: Some("nda".into()), ..Default::default() }).await, 0);
    let bad = api.contract_list(&scope, ContractQuery { risk: Some("dire".into()), ..Default::default() }).await;
    assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidInput);

    // The detail: each field with its quote placed on its page, and who confirmed what.
    let detail = api.contract_detail(&scope, id).await.unwrap();
    let expiration = detail.fields.iter().find(|f| f.field == "expiration_date").expect("an expiration date");
    assert!(expiration.value.contains("1 August 2029"), "{}", expiration.value);
    for f in detail.fields.iter().filter(|f| f.quote.is_some()) {
        let span = f.span.expect("a shown quote stands on its page");
        assert!(span.end > span.start);
        let page = api.page_layout(&scope, id, f.page.unwrap()).await.unwrap();
        let text: String = page.text.chars().skip(span.start as usize).take((span.end - span.start) as usize).collect();
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(squash(&text), squash(f.quote.as_deref().unwrap()), "{}", f.field);
    }
    assert!(!detail.outcome.critical.is_empty());
    assert!(detail.outcome.critical.iter().all(|i| i.confirmed_by.is_some()), "every critical item confirmed");
    assert_eq!(detail.finalized_by.as_deref().map(str::is_empty), Some(false));

    // Upcoming dates: the notice deadline and the expiration, by month.
    let upcoming = api.upcoming_dates(&scope, date("2029-01-01"), 12).await.unwrap();
    let seen: Vec<(String, DateKind)> =
        upcoming.months.iter().flat_map(|m| m.dates.iter().map(|d| (d.date.to_string(), d.kind))).collect();
    assert_eq!(
        seen,
        [("2029-05-03".to_string(), DateKind::NoticeDeadline), ("2029-08-01".to_string(), DateKind::Expiration)]
    );
    assert_eq!(upcoming.months[0].label, "May 2029");
    assert_eq!(api.upcoming_dates(&scope, date("2029-01-01"), 0).await.unwrap_err().code, ErrorCode::InvalidInput);

    // The notice period was misread: a person reopens, corrects it to 45 days, and finalizes again.
    let err = api
        .correct_item(
            &scope,
            id,
            CorrectionInput {
                item_id: "license.term.nonrenewal_notice".into(),
                confirm: false,
                status: Some(ItemStatus::Present),
                quote: Some(Quote { text: "payable within forty-five (45) days".into(), page: 1 }),
                note: None,
                acknowledge_warnings: true,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Conflict, "a finalized review takes no correction until it is reopened");
    api.reopen_review(&scope, id, "the notice period was misread".into()).await.unwrap();
    assert_eq!(api.contract_list(&scope, ContractQuery::default()).await.unwrap().total, 0, "reopened: not listed");
    api.correct_item(
        &scope,
        id,
        CorrectionInput {
            item_id: "license.term.nonrenewal_notice".into(),
            confirm: false,
            status: Some(ItemStatus::Present),
            quote: Some(Quote { text: "payable within forty-five (45) days".into(), page: 1 }),
            note: Some("the notice period is 45 days".into()),
            acknowledge_warnings: true,
        },
    )
    .await
    .unwrap();
    api.finalize_review(&scope, id, FinalizeInput::default()).await.unwrap();
    let moved = api.upcoming_dates(&scope, date("2029-01-01"), 12).await.unwrap();
    let notice: Vec<String> = moved
        .months
        .iter()
        .flat_map(|m| m.dates.iter())
        .filter(|d| d.kind == DateKind::NoticeDeadline)
        .map(|d| d.date.to_string())
        .collect();
    assert_eq!(notice, ["2029-06-17"], "45 days before 1 August 2029");

    // The calendar file has both dates as all-day events.
    let path = tmp.path().join("contract-dates.ics");
    let written =
        api.export_contract_calendar(&scope, date("2029-01-01"), 12, path.clone(), Existing::Refuse).await.unwrap();
    assert_eq!(written.events, 2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("BEGIN:VCALENDAR\r\n"));
    assert!(text.contains("DTSTART;VALUE=DATE:20290617\r\n"));
    assert!(text.contains("DTSTART;VALUE=DATE:20290801\r\n"));
    let again = api.export_contract_calendar(&scope, date("2029-01-01"), 12, path, Existing::Refuse).await;
    assert_eq!(again.unwrap_err().code, ErrorCode::FileExists);

    // Another organization of the install sees none of it.
    let (other, _) = api.seed_demo().await.unwrap();
    assert_eq!(api.contract_list(&other, ContractQuery::default()).await.unwrap().total, 0);
    assert_eq!(api.contract_detail(&other, id).await.unwrap_err().code, ErrorCode::NotFound);
    assert!(api.upcoming_dates(&other, date("2029-01-01"), 12).await.unwrap().months.is_empty());
}
