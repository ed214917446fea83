//! Hybrid retrieval on a real store with the real embedding model: a question worded unlike the contract finds the
//! clause by meaning; another organization's and deleted documents never come back; bad input and a damaged or
//! replaced model give clear outcomes while words-only search still answers.

use chrono::{TimeZone, Utc};
use pactwise_domain::{DocumentId, FixedClock, MediaType, Role};
use pactwise_embed::LazyEmbedder;
use pactwise_retrieval::{Mode, Retriever};
use pactwise_store::{NewDocument, NewPassage, OrgScope, Store};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const CONVENIENCE: &str = "Either party may terminate this Agreement at any time, without cause, upon ninety (90) days \
                           prior written notice to the other party.";
const LAW: &str = "This Agreement shall be governed by and construed in accordance with the laws of the State of New \
                   York, without regard to its conflict of laws principles.";
const PAYMENT: &str = "Customer shall pay each invoice within thirty (30) days of receipt. Late amounts bear interest \
                       at one percent per month.";
const CONFIDENTIAL: &str = "Each party shall hold the other party's Confidential Information in strict confidence and \
                            use it solely to perform this Agreement.";

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 12, 3, 9, 0, 0).unwrap()));
    Store::open_in_memory(clock).unwrap()
}

fn member(store: &Store, org_name: &str) -> OrgScope {
    let p = store.platform();
    let org = p.create_organization(org_name).unwrap();
    let user = p.create_user(&format!("{org_name} user"), None).unwrap();
    p.set_membership(org, user, Role::Owner).unwrap();
    let session = p.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn document(store: &Store, scope: &OrgScope, name: &str, texts: &[&str]) -> DocumentId {
    let new = NewDocument {
        name: name.into(),
        media_type: MediaType::Pdf,
        size: 10,
        content_hash: hex::encode(Sha256::digest(name.as_bytes())),
    };
    let (d, _) = store.documents().record(scope, &new).unwrap();
    let passages: Vec<NewPassage> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| NewPassage { page: i as u32 + 1, start: 0, end: t.chars().count() as u32, text: t.to_string() })
        .collect();
    store.passages().replace(scope, d.id, &passages).unwrap();
    d.id
}

fn model() -> Option<PathBuf> {
    pactwise_testkit::embedding_model()
}

fn retriever(dir: &Path) -> Retriever {
    Retriever::new(Arc::new(LazyEmbedder::new(dir.to_owned())))
}

fn embed_all(retriever: &Retriever, store: &Store, scope: &OrgScope) {
    while retriever.embed_some(store, scope, 8).unwrap().is_some() {}
}

#[test]
fn a_question_worded_unlike_the_contract_finds_the_clause_by_meaning_and_only_in_its_organization() {
    let Some(dir) = model() else { return };
    let store = store();
    let acme = member(&store, "Acme");
    let globex = member(&store, "Globex");
    let msa = document(&store, &acme, "acme-msa.pdf", &[LAW, CONVENIENCE, PAYMENT, CONFIDENTIAL]);
    // Globex holds the same clause: it must never reach Acme.
    document(&store, &globex, "globex-msa.pdf", &[CONVENIENCE, LAW]);
    let retriever = retriever(&dir);
    embed_all(&retriever, &store, &acme);
    embed_all(&retriever, &store, &globex);

    let question = "Can they walk away from the deal early?";
    let words = retriever.search(&store, &acme, question, None, Mode::Bm25, 3).unwrap();
    assert!(
        words.hits.iter().all(|h| !h.text.contains("without cause")),
        "words alone do not find it (no shared word): {:?}",
        words.hits
    );
    for mode in [Mode::Dense, Mode::Hybrid] {
        let found = retriever.search(&store, &acme, question, None, mode, 3).unwrap();
        assert_eq!(found.mode, mode);
        assert!(found.notes.is_empty(), "{:?}", found.notes);
        assert!(found.hits[0].text.contains("without cause"), "{mode:?}: {:?}", found.hits);
        assert!(found.hits.iter().all(|h| h.document == msa), "only Acme's contract: {:?}", found.hits);
    }
    let in_doc = retriever.search(&store, &acme, "which state's law applies", Some(msa), Mode::Hybrid, 2).unwrap();
    assert!(in_doc.hits[0].text.contains("New York"), "{:?}", in_doc.hits);

    // A document of another organization named as the filter finds nothing.
    let globex_doc = store.documents().list(&globex).unwrap()[0].id;
    let other = retriever.search(&store, &acme, question, Some(globex_doc), Mode::Hybrid, 3).unwrap();
    assert!(other.hits.is_empty(), "{:?}", other.hits);
}

#[test]
fn a_deleted_contract_never_comes_back_from_the_index() {
    let Some(dir) = model() else { return };
    let store = store();
    let acme = member(&store, "Acme");
    let keep = document(&store, &acme, "keep.pdf", &[PAYMENT, LAW]);
    let gone = document(&store, &acme, "gone.pdf", &[CONVENIENCE]);
    let retriever = retriever(&dir);
    embed_all(&retriever, &store, &acme);
    let question = "terminate without cause on notice";
    let before = retriever.search(&store, &acme, question, None, Mode::Dense, 5).unwrap();
    assert!(before.hits.iter().any(|h| h.document == gone));
    store.documents().soft_delete(&acme, gone).unwrap();
    for mode in Mode::ALL {
        let after = retriever.search(&store, &acme, question, None, mode, 5).unwrap();
        assert!(after.hits.iter().all(|h| h.document == keep), "{mode:?}: {:?}", after.hits);
    }
}

#[test]
fn bad_queries_get_clear_outcomes_and_words_still_answer() {
    let Some(dir) = model() else { return };
    let store = store();
    let acme = member(&store, "Acme");
    document(&store, &acme, "msa.pdf", &[LAW, CONVENIENCE, PAYMENT]);
    let retriever = retriever(&dir);
    embed_all(&retriever, &store, &acme);

    // 2,000 characters and more: cut, said so, still found.
    let long = format!("governed by the laws of New York {}", "and other provisions ".repeat(120));
    let found = retriever.search(&store, &acme, &long, None, Mode::Hybrid, 3).unwrap();
    assert!(found.notes.iter().any(|n| n.contains("cut to its first 2000 characters")), "{:?}", found.notes);
    assert!(found.hits.iter().any(|h| h.text.contains("New York")));

    // Only stop words: nothing to search, said so.
    let stop = retriever.search(&store, &acme, "what is the of and to", None, Mode::Hybrid, 3).unwrap();
    assert!(!stop.searchable && stop.hits.is_empty());
    assert!(stop.notes[0].contains("no words to look for"), "{:?}", stop.notes);

    // FTS operators are words, never syntax.
    for hostile in ["law\" OR x:* NEAR(a b) AND NOT -col:secret", "NEAR(invoice", "\"\"\"", "payment*"] {
        let r = retriever.search(&store, &acme, hostile, None, Mode::Hybrid, 3);
        assert!(r.is_ok(), "{hostile}: {r:?}");
    }
    let words = retriever.search(&store, &acme, "invoice\" OR NOT \"law", None, Mode::Bm25, 3).unwrap();
    assert!(words.hits.iter().any(|h| h.text.contains("invoice")));

    // Another script: no error; meaning-based search still ranks the organization's passages.
    let other = retriever.search(&store, &acme, "準拠法はどこですか", None, Mode::Hybrid, 3).unwrap();
    assert!(other.searchable);
    assert_eq!(other.mode, Mode::Hybrid);
}

#[test]
fn a_damaged_vector_is_left_out_and_computed_again() {
    let Some(dir) = model() else { return };
    let store = store();
    let acme = member(&store, "Acme");
    document(&store, &acme, "msa.pdf", &[LAW, CONVENIENCE]);
    let retriever = retriever(&dir);
    embed_all(&retriever, &store, &acme);
    let model_id = retriever.embedder().unwrap().model_id().to_owned();
    let vectors = store.passages().load_vectors(&acme, &model_id).unwrap();
    // A row cut short (a damaged write or disk): saved as is, bypassing the embedder.
    store.passages().save_vectors(&acme, &model_id, &[(vectors[0].passage, vec![1, 2, 3])]).unwrap();
    let found = retriever.search(&store, &acme, "walk away early", None, Mode::Hybrid, 3).unwrap();
    assert_eq!(found.mode, Mode::Hybrid);
    let progress = store.passages().vector_progress(&acme, &model_id).unwrap();
    assert_eq!((progress.done, progress.total), (1, 2), "the damaged row was forgotten, to be computed again");
    assert!(found.notes.iter().any(|n| n.contains("1 of 2")), "{:?}", found.notes);
    embed_all(&retriever, &store, &acme);
    assert_eq!(store.passages().vector_progress(&acme, &model_id).unwrap().done, 2);
}

#[test]
fn without_the_model_or_with_a_replaced_file_search_matches_words_and_says_why() {
    let store = store();
    let acme = member(&store, "Acme");
    document(&store, &acme, "msa.pdf", &[LAW, PAYMENT]);

    let missing = retriever(Path::new("/nonexistent/model"));
    let found = missing.search(&store, &acme, "governing law", None, Mode::Hybrid, 3).unwrap();
    assert_eq!(found.mode, Mode::Bm25);
    assert!(found.hits[0].text.contains("New York"));
    assert!(found.notes[0].contains("make setup"), "{:?}", found.notes);
    assert!(missing.embed_some(&store, &acme, 8).unwrap_err().to_string().contains("make setup"));

    let Some(dir) = model() else { return };
    let replaced = tempfile::tempdir().unwrap();
    for (file, _) in pactwise_embed::MODEL_FILES {
        std::fs::copy(dir.join(file), replaced.path().join(file)).unwrap();
    }
    std::fs::write(replaced.path().join("tokenizer.json"), b"{\"version\": \"1.0\"}").unwrap();
    let swapped = retriever(replaced.path());
    let found = swapped.search(&store, &acme, "governing law", None, Mode::Hybrid, 3).unwrap();
    assert_eq!(found.mode, Mode::Bm25);
    assert!(found.hits[0].text.contains("New York"));
    assert!(found.notes[0].contains("checksum"), "{:?}", found.notes);
}

#[test]
fn vectors_still_being_computed_leave_search_to_words_with_how_far() {
    let Some(dir) = model() else { return };
    let store = store();
    let acme = member(&store, "Acme");
    document(&store, &acme, "msa.pdf", &[LAW, PAYMENT, CONVENIENCE]);
    let retriever = retriever(&dir);
    let found = retriever.search(&store, &acme, "governing law", None, Mode::Hybrid, 3).unwrap();
    assert_eq!(found.mode, Mode::Bm25);
    assert!(found.notes[0].contains("0 of 3 passages prepared"), "{:?}", found.notes);
    retriever.embed_some(&store, &acme, 2).unwrap();
    let found = retriever.search(&store, &acme, "governing law", None, Mode::Hybrid, 3).unwrap();
    assert_eq!(found.mode, Mode::Hybrid);
    assert!(found.notes[0].contains("2 of 3"), "{:?}", found.notes);
}

/// A remote model for this test: a fixed meaning per topic (as a legal-domain model would read them), 1,024 numbers
/// like Voyage's. The api's test drives the real Voyage client against its loopback fake.
struct Topics {
    fail: bool,
}

fn topic_vector(text: &str) -> Vec<f32> {
    let text = text.to_lowercase();
    let mut v = vec![0.0f32; 1024];
    let axis = if text.contains("terminate") || text.contains("walk away") {
        0
    } else if text.contains("governed") {
        1
    } else if text.contains("invoice") {
        2
    } else {
        3
    };
    v[axis] = 1.0;
    v
}

impl pactwise_retrieval::RemoteVectors for Topics {
    fn model_id(&self) -> &str {
        "topics-1024"
    }
    fn name(&self) -> &str {
        "The legal-domain model"
    }
    fn embed<'a>(
        &'a self,
        _org: pactwise_domain::OrgId,
        texts: Vec<String>,
        _kind: pactwise_retrieval::TextKind,
    ) -> pactwise_retrieval::BoxFuture<'a, Result<Vec<Vec<f32>>, String>> {
        let fail = self.fail;
        Box::pin(async move {
            if fail {
                return Err("the network could not be reached".to_owned());
            }
            Ok(texts.iter().map(|t| topic_vector(t)).collect())
        })
    }
}

#[tokio::test]
async fn a_remote_models_vectors_are_used_when_it_read_the_query_and_the_local_ones_when_it_could_not() {
    let Some(dir) = model() else { return };
    let store = store();
    let acme = member(&store, "Acme");
    let globex = member(&store, "Globex");
    document(&store, &acme, "acme-msa.pdf", &[LAW, PAYMENT, CONVENIENCE, CONFIDENTIAL]);
    document(&store, &globex, "globex-msa.pdf", &[CONVENIENCE]);
    let retriever = retriever(&dir);
    embed_all(&retriever, &store, &acme);
    // The remote model's vectors of Acme's passages, stored beside the local model's.
    let passages = store.passages();
    let todo = passages.lacking_vectors(&acme, "topics-1024", 0, 100).unwrap();
    assert_eq!(todo.len(), 4, "the local model's vectors do not count for another model");
    let vectors: Vec<(i64, Vec<u8>)> = todo
        .iter()
        .map(|p| (p.id, pactwise_embed::Quantized::from_vector(&topic_vector(&p.text)).to_bytes()))
        .collect();
    passages.save_vectors(&acme, "topics-1024", &vectors).unwrap();

    retriever.set_remote(Some(Arc::new(Topics { fail: false })));
    let question = "Could the customer walk away before the term ends?";
    retriever.prepare_query(acme.org(), question).await;
    let found = retriever.search(&store, &acme, question, None, Mode::Dense, 2).unwrap();
    assert_eq!(found.mode, Mode::Dense);
    assert_eq!(found.hits[0].text, CONVENIENCE, "the remote model's reading");
    assert!(found.notes.is_empty(), "{:?}", found.notes);
    assert!(found.hits.iter().all(|h| h.document_name == "acme-msa.pdf"), "never another organization's");

    // Globex has no remote vectors yet: its search says so and uses the local model.
    retriever.prepare_query(globex.org(), question).await;
    embed_all(&retriever, &store, &globex);
    let theirs = retriever.search(&store, &globex, question, None, Mode::Dense, 2).unwrap();
    assert!(theirs.notes.iter().any(|n| n.contains("still being prepared")), "{:?}", theirs.notes);
    assert!(theirs.hits.iter().all(|h| h.document_name == "globex-msa.pdf"));

    // Unreachable: the search still answers, by the local model, and says why.
    retriever.set_remote(Some(Arc::new(Topics { fail: true })));
    let other = "Which law governs the agreement?";
    retriever.prepare_query(acme.org(), other).await;
    let fallback = retriever.search(&store, &acme, other, None, Mode::Hybrid, 2).unwrap();
    assert_eq!(fallback.mode, Mode::Hybrid);
    assert!(!fallback.hits.is_empty());
    assert!(
        fallback.notes.iter().any(|n| n.contains("could not be reached") && n.contains("local model")),
        "{:?}",
        fallback.notes
    );
}
