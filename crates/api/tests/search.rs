//! Search as a user action over a real data folder: meaning-based search prepared in the background with progress,
//! a question worded unlike the contract finds its clause, another organization's contracts and deleted ones never
//! come back, an organization not yet prepared searches words and says how far it is, bad input is refused clearly.

use pactwise_api::{Api, ApiOptions, DocumentQuery, ImportOptions, SearchMode};
use pactwise_domain::ErrorCode;
use pactwise_model::InMemoryApiKeySource;
use std::sync::{Arc, Mutex};

const OURS: &str = "SUPPLY AGREEMENT\n\nThis Supply Agreement is made between Northwind Traders, Inc. and Harbor \
Freight Logistics LLC.\n\n4. PAYMENT. Northwind shall pay each undisputed invoice within forty-five (45) days of \
receipt.\n\n9. GOVERNING LAW. This Agreement is governed by the laws of the State of Oregon.";

#[tokio::test]
async fn meaning_based_search_is_prepared_with_progress_and_stays_inside_the_organization() {
    if pactwise_testkit::embedding_model().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    let a = api.local_session().await.unwrap();
    let file = tmp.path().join("supply.txt");
    std::fs::write(&file, OURS).unwrap();
    let report = api.import_documents(&a, vec![file], ImportOptions::default(), &|_| {}).await.unwrap();
    let ours = report.imported[0].document.id;
    let (b, _) = api.seed_demo().await.unwrap();
    let theirs = api.list_documents(&b, DocumentQuery::default()).await.unwrap()[0].id;

    // Before preparation: words only, and how far meaning-based search is.
    let before =
        api.search_passages(&a, "When do we have to settle the bill?", None, SearchMode::Hybrid, 5).await.unwrap();
    assert_eq!(before.mode, "bm25");
    assert!(before.notes.iter().any(|n| n.contains("0 of")), "{:?}", before.notes);

    let seen = Mutex::new(Vec::new());
    let status = api.prepare_semantic_search(&a, |s| seen.lock().unwrap().push(s.clone())).await.unwrap();
    assert!(status.ready && status.total > 0 && status.done == status.total, "{status:?}");
    let seen = seen.into_inner().unwrap();
    assert!(seen.last().is_some_and(|s| s.ready && s.message == "Meaning-based search is ready."), "{seen:?}");
    assert_eq!(api.semantic_status(&a).await.unwrap(), status);

    // A question with no word of the clause finds it by meaning; only organization A's contract answers.
    let found =
        api.search_passages(&a, "When do we have to settle the bill?", None, SearchMode::Dense, 5).await.unwrap();
    assert_eq!(found.mode, "dense");
    assert!(found.hits[0].excerpt.contains("invoice"), "{:?}", found.hits);
    assert!(found.hits.iter().all(|h| h.document_id == ours.to_string()), "{:?}", found.hits);
    let hybrid = api.search_passages(&a, "which law governs", None, SearchMode::Hybrid, 5).await.unwrap();
    assert_eq!(hybrid.mode, "hybrid");
    assert!(hybrid.hits[0].excerpt.contains("Oregon"), "{:?}", hybrid.hits);

    // Organization B's document named as the filter: nothing. B itself is not prepared yet: words, and why.
    let other = api.search_passages(&a, "licence", Some(&theirs.to_string()), SearchMode::Hybrid, 5).await.unwrap();
    assert!(other.hits.is_empty(), "{:?}", other.hits);
    let b_search = api.search_passages(&b, "licence", None, SearchMode::Hybrid, 5).await.unwrap();
    assert_eq!(b_search.mode, "bm25");
    assert!(b_search.hits.iter().all(|h| h.document_id != ours.to_string()));

    // Bad input: refused with what to do.
    let e = api.search_passages(&a, "   ", None, SearchMode::Hybrid, 5).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    let e = api.search_passages(&a, "invoice", Some("not-an-id"), SearchMode::Hybrid, 5).await.unwrap_err();
    assert!(e.message.contains("not a document id"), "{}", e.message);

    // A deleted contract never comes back, by words or meaning.
    api.delete_document(&a, ours).await.unwrap();
    for mode in [SearchMode::Bm25, SearchMode::Dense, SearchMode::Hybrid] {
        let after = api.search_passages(&a, "invoice payment days", None, mode, 5).await.unwrap();
        assert!(after.hits.is_empty(), "{mode:?}: {:?}", after.hits);
    }
}
