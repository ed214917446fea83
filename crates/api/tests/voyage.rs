//! The optional Voyage provider through the api, with the real Voyage client against its loopback fake: passages'
//! vectors computed in the background beside the local model's, a search read by Voyage and priced in the usage
//! ledger, and, when Voyage cannot be reached or the budget is spent, search by the local model with a note why.

use pactwise_api::{Api, ApiOptions, ImportOptions, SearchMode};
use pactwise_model::fake_voyage::FakeVoyageServer;
use pactwise_model::{ApiKey, InMemoryApiKeySource, RetryPolicy, VoyageConfig};
use std::path::Path;
use std::sync::Arc;

const VOYAGE_KEY: &str = "pa-voyage-api-test-7311";

const MSA: &str = "MASTER SERVICES AGREEMENT\n\n12. TERMINATION FOR CONVENIENCE. Either party may terminate this \
Agreement at any time, without cause, upon ninety (90) days prior written notice to the other party.\n\n14. \
GOVERNING LAW. This Agreement is governed by the laws of the State of Oregon.\n\n15. PAYMENT. Customer shall pay each \
invoice within thirty (30) days of receipt.";

fn api(dir: &Path, endpoint: &str, key: Option<&str>) -> Api {
    let mut voyage = VoyageConfig::default().with_endpoint(endpoint);
    voyage.retry = RetryPolicy { max_attempts: 1, ..RetryPolicy::default() };
    let voyage_keys = Arc::new(match key {
        Some(k) => InMemoryApiKeySource::with_key(ApiKey::parse(k).unwrap()),
        None => InMemoryApiKeySource::empty(),
    });
    let options =
        ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), voyage_keys, voyage, ..ApiOptions::default() };
    Api::open_with(dir.join("data"), options).unwrap()
}

#[tokio::test]
async fn voyage_reads_passages_and_searches_when_configured_and_the_local_model_stands_in_when_it_cannot() {
    let Some(_) = pactwise_testkit::embedding_model() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = FakeVoyageServer::start(VOYAGE_KEY).await.unwrap();
    let api = api(tmp.path(), &server.endpoint(), Some(VOYAGE_KEY));
    let scope = api.local_session().await.unwrap();
    let file = tmp.path().join("msa.txt");
    std::fs::write(&file, MSA).unwrap();
    api.import_documents(&scope, vec![file], ImportOptions::default(), &|_| {}).await.unwrap();
    assert!(api.voyage_status().await.configured);

    let status = api.prepare_semantic_search(&scope, |_| {}).await.unwrap();
    assert!(status.ready, "{status:?}");
    let documents = server.requests();
    assert!(!documents.is_empty() && documents.iter().all(|r| r.input_type == "document" && r.status == 200));

    let found = api.search_passages(&scope, "terminate for convenience", None, SearchMode::Dense, 3).await.unwrap();
    assert_eq!(found.mode, "dense");
    assert!(found.hits[0].excerpt.contains("terminate"), "{:?}", found.hits);
    assert!(found.notes.is_empty(), "Voyage read it: {:?}", found.notes);
    assert_eq!(server.requests().last().unwrap().input_type, "query");

    api.flush();
    let usage = api.usage_report(&scope, None).await.unwrap();
    let feature = usage
        .by_feature
        .iter()
        .find(|f| f.feature == pactwise_domain::usage::UsageFeature::SearchEmbeddings)
        .expect("Voyage's requests are in the ledger");
    assert_eq!(feature.calls as usize, server.requests().len());
    assert!(feature.cost_micros >= 0.0);

    // The provider goes away (offline): the search still answers, by the local model, and says why.
    drop(server);
    let offline = api.search_passages(&scope, "which law governs", None, SearchMode::Hybrid, 3).await.unwrap();
    assert_eq!(offline.mode, "hybrid");
    assert!(!offline.hits.is_empty());
    assert!(offline.notes.iter().any(|n| n.contains("local model")), "{:?}", offline.notes);
}

#[tokio::test]
async fn without_a_key_the_local_model_serves_and_nothing_is_sent() {
    let Some(_) = pactwise_testkit::embedding_model() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let server = FakeVoyageServer::start(VOYAGE_KEY).await.unwrap();
    let api = api(tmp.path(), &server.endpoint(), None);
    let scope = api.local_session().await.unwrap();
    let file = tmp.path().join("msa.txt");
    std::fs::write(&file, MSA).unwrap();
    api.import_documents(&scope, vec![file], ImportOptions::default(), &|_| {}).await.unwrap();
    let status = api.voyage_status().await;
    assert!(!status.configured);
    assert!(status.summary.contains("local model"), "{}", status.summary);
    api.prepare_semantic_search(&scope, |_| {}).await.unwrap();
    let found = api.search_passages(&scope, "terminate for convenience", None, SearchMode::Dense, 3).await.unwrap();
    assert_eq!(found.mode, "dense");
    assert!(found.notes.is_empty(), "{:?}", found.notes);
    assert!(server.requests().is_empty(), "no key: nothing goes to Voyage");

    // A bad key is refused in words, and nothing changes.
    let error = api.set_voyage_key(&scope, "two words".into()).await.unwrap_err();
    assert!(error.message.contains("Voyage key"), "{}", error.message);
    assert!(!api.voyage_status().await.configured);
}
