//! A long, filed contract as a lawyer meets it, offline (no API key): a 68-page distributor agreement from the CUAD
//! set (a PDF with a table of contents and a filing line at the foot of every page). The structure is read once and
//! kept with the pages; the liability item quotes the operative clause, not the table of contents; a person who
//! picks the table of contents by hand is warned and may keep it knowingly; the agreement date comes from the body,
//! never the filing line; a confirmed item's value becomes the contract's field at finalize; a finalized review
//! changes only after it is reopened.

use pactwise_api::{Api, ApiOptions, CorrectionInput, ImportOptions, catalog};
use pactwise_domain::{CuadCategory, ErrorCode, ItemStatus, Quote, Value};
use pactwise_model::InMemoryApiKeySource;
use std::sync::Arc;

const CONTRACT: &str = "cuad/pdfs/zogenixinc-20190509-10-q-ex-10-2-11663313-ex-10-2-distributor-agreement.pdf";

fn item_of(type_id: &str, category: CuadCategory) -> String {
    let catalog = catalog().unwrap();
    catalog.contract_type(type_id).unwrap().items.iter().find(|i| i.cuad_category == Some(category)).unwrap().id.clone()
}

#[tokio::test]
async fn a_filed_distributor_agreement_is_reviewed_from_its_body_and_finalized_with_what_people_confirmed() {
    let Some(pdf) = pactwise_testkit::shared_data(CONTRACT) else { return };
    if !pactwise_testkit::library("libpdfium", &pactwise_extract::ExtractConfig::from_env().pdfium_path) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    let scope = api.local_session().await.unwrap();
    api.set_own_names(&scope, vec!["Zogenix, Inc.".into()]).await.unwrap();
    let report = api.import_documents(&scope, vec![pdf], ImportOptions::default(), &|_| {}).await.unwrap();
    let id = report.imported[0].document.id;
    let review = api.document_review(&scope, id).await.unwrap();
    let type_id = review.contract_type.as_ref().expect("classified").id.clone();
    assert_eq!(type_id, "distributor");

    // No quote of the review is a running line, the table of contents, a bare heading or a cross-reference.
    for item in review.items.iter().filter(|i| i.quote.is_some()) {
        assert!(
            item.warnings.iter().all(|w| !w.concern.disqualifies()),
            "{}: {:?} {:?}",
            item.id,
            item.quote,
            item.warnings
        );
        assert!(item.page.unwrap() > 5, "{} quotes the front matter (page {:?})", item.id, item.page);
    }
    // The liability item quotes Article 10's operative limitation, on its page in the body.
    let cap_id = item_of(&type_id, CuadCategory::CapOnLiability);
    let cap = review.items.iter().find(|i| i.id == cap_id).unwrap();
    assert_eq!(cap.status, ItemStatus::Present);
    let quote = cap.quote.as_deref().unwrap();
    assert!(quote.to_uppercase().contains("SHALL BE ENTITLED TO RECOVER"), "{quote}");

    // The contract's date comes from its opening paragraph (18 March 2019), not the filing line (9 May 2019); the
    // counterparty is the party that is not the organization.
    let date = review.extractions.agreement_date.as_ref().expect("an agreement date");
    assert_eq!(date.normalized, Some(Value::Date { iso: "2019-03-18".into() }));
    assert!(date.quote.as_ref().unwrap().page > 5, "from the body: {:?}", date.quote);
    let parties: Vec<&str> = review.extractions.parties.iter().map(|p| p.value.as_str()).collect();
    assert!(parties.iter().any(|p| p.contains("Nippon Shinyaku")), "{parties:?}");
    assert!(
        review.counterparty.as_deref().unwrap_or_default().contains("Nippon Shinyaku"),
        "{:?}",
        review.counterparty
    );

    // A person picks the table of contents' line as the liability clause: warned with the reason, nothing saved.
    let pages = api.document_pages(&scope, id).await.unwrap().unwrap().pages;
    let toc = pages
        .iter()
        .take(5)
        .find(|p| p.text.contains("Limitation of Liability"))
        .expect("the table of contents names the clause");
    let by_hand = CorrectionInput {
        item_id: cap_id.clone(),
        confirm: false,
        status: Some(ItemStatus::Present),
        quote: Some(Quote { text: "Limitation of Liability".into(), page: toc.number }),
        note: None,
        acknowledge_warnings: false,
    };
    let warned = api.correct_item(&scope, id, by_hand.clone()).await.unwrap_err();
    assert_eq!(warned.code, ErrorCode::QuoteNeedsCheck);
    assert!(warned.message.contains("table of contents"), "{}", warned.message);
    let unchanged = api.document_review(&scope, id).await.unwrap();
    assert_eq!(unchanged.items.iter().find(|i| i.id == cap_id).unwrap().method, cap.method, "nothing was saved");
    // Kept knowingly, it is saved, and the review still shows why it is doubtful.
    let kept = api.correct_item(&scope, id, CorrectionInput { acknowledge_warnings: true, ..by_hand }).await.unwrap();
    let shown = kept.items.iter().find(|i| i.id == cap_id).unwrap();
    assert_eq!(shown.method, "person");
    assert!(shown.warnings.iter().any(|w| w.message.contains("table of contents")), "{:?}", shown.warnings);

    // The operative clause again, then the expiry confirmed: its value is the contract's expiration at finalize.
    let operative = Quote { text: quote.to_owned(), page: cap.page.unwrap() };
    api.correct_item(
        &scope,
        id,
        CorrectionInput {
            item_id: cap_id.clone(),
            confirm: false,
            status: Some(ItemStatus::Present),
            quote: Some(operative),
            note: None,
            acknowledge_warnings: false,
        },
    )
    .await
    .unwrap();
    let expiry_id = item_of(&type_id, CuadCategory::ExpirationDate);
    let expiry = review.items.iter().find(|i| i.id == expiry_id).unwrap();
    assert_eq!(expiry.normalized, Some(Value::Date { iso: "2045-09-01".into() }), "{:?}", expiry.quote);
    let confirm = |item_id: &str| CorrectionInput {
        item_id: item_id.to_owned(),
        confirm: true,
        status: None,
        quote: None,
        note: None,
        acknowledge_warnings: true,
    };
    api.correct_item(&scope, id, confirm(&expiry_id)).await.unwrap();
    let t = catalog().unwrap().contract_type(&type_id).unwrap().clone();
    for item in t.items.iter().filter(|i| i.risk == pactwise_domain::RiskLevel::Critical && i.id != cap_id) {
        api.correct_item(&scope, id, confirm(&item.id)).await.unwrap();
    }
    let finalized = api.finalize_review(&scope, id, Default::default()).await.unwrap();
    let expiration = finalized.extractions.expiration_date.as_ref().expect("the confirmed expiry");
    assert_eq!(expiration.normalized, Some(Value::Date { iso: "2045-09-01".into() }));
    assert_eq!(expiration.confidence, 1.0, "a person's value");

    // Finalized: items are not changed until the review is reopened, with a reason.
    let refused = api.correct_item(&scope, id, confirm(&expiry_id)).await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::Conflict);
    let reopened = api.reopen_review(&scope, id, "the expiry needs a second look".into()).await.unwrap();
    assert!(reopened.finalized_at.is_none());
    api.correct_item(&scope, id, confirm(&expiry_id)).await.unwrap();
}
