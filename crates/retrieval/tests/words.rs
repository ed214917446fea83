//! Search by words (the in-memory word index) on a real store: only the organization's own live passages come back,
//! another organization's contracts never weigh a word, the index follows every change to the passages (even one
//! that keeps their ids) and searches inside one contract, and a query's words are stemmed as the contract's are.

use chrono::{TimeZone, Utc};
use pactwise_domain::{DocumentId, FixedClock, MediaType, Role};
use pactwise_retrieval::{Mode, Retriever};
use pactwise_store::{NewDocument, NewPassage, OrgScope, Store};
use std::sync::Arc;

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 12, 4, 9, 0, 0).unwrap()));
    Store::open_in_memory(clock).unwrap()
}

fn member(store: &Store, org_name: &str) -> OrgScope {
    let p = store.platform();
    let org = p.create_organization(org_name).unwrap();
    let user = p.create_user(&format!("{org_name} user"), None).unwrap();
    p.set_membership(org, user, Role::Owner).unwrap();
    store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
}

fn passages(texts: &[&str]) -> Vec<NewPassage> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| NewPassage { page: i as u32 + 1, start: 0, end: t.chars().count() as u32, text: t.to_string() })
        .collect()
}

fn document(store: &Store, scope: &OrgScope, name: &str, texts: &[&str]) -> DocumentId {
    let new = NewDocument {
        name: name.into(),
        media_type: MediaType::Pdf,
        size: 10,
        content_hash: format!("{:064x}", name.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)))),
    };
    let (d, _) = store.documents().record(scope, &new).unwrap();
    store.passages().replace(scope, d.id, &passages(texts)).unwrap();
    d.id
}

fn texts(retriever: &Retriever, store: &Store, scope: &OrgScope, query: &str, limit: usize) -> Vec<String> {
    let found = retriever.search(store, scope, query, None, Mode::Bm25, limit).unwrap();
    assert_eq!(found.mode, Mode::Bm25);
    found.hits.into_iter().map(|h| h.text).collect()
}

#[test]
fn deleted_documents_never_hide_a_live_match() {
    let store = store();
    let acme = member(&store, "Acme");
    // Sixty deleted documents that match better (the word several times) than the one live document.
    for i in 0..60 {
        let d = document(
            &store,
            &acme,
            &format!("old-{i}.pdf"),
            &["indemnification indemnification indemnification by the supplier"],
        );
        store.documents().soft_delete(&acme, d).unwrap();
    }
    let live = document(
        &store,
        &acme,
        "live.pdf",
        &["The customer's indemnification duties are limited to direct damages and a long tail of other words that \
         dilute the match"],
    );
    let retriever = Retriever::words_only();
    for limit in [1, 5] {
        let found = retriever.search(&store, &acme, "indemnification", None, Mode::Bm25, limit).unwrap();
        assert_eq!(found.hits.len(), 1, "limit {limit}: the live match is found, the deleted ones are not");
        assert_eq!((found.hits[0].document, found.hits[0].page), (live, 1));
    }
}

#[test]
fn another_organizations_contracts_never_come_back_and_never_weigh_a_word() {
    // Acme's passages: "escrow" is the rarer word in Acme's contracts, so the passage with it twice ranks first.
    let acme_texts: Vec<String> = ["escrow escrow fee", "fee fee escrow", "fee"]
        .into_iter()
        .map(str::to_owned)
        .chain((0..17).map(|i| format!("unrelated clause number {i}")))
        .collect();
    let acme_texts: Vec<&str> = acme_texts.iter().map(String::as_str).collect();
    let alone = store();
    let acme_alone = member(&alone, "Acme");
    document(&alone, &acme_alone, "acme.pdf", &acme_texts);
    let retriever = Retriever::words_only();
    let ranked_alone = texts(&retriever, &alone, &acme_alone, "escrow fee", 10);
    assert_eq!(ranked_alone[..2], ["escrow escrow fee", "fee fee escrow"]);

    // The same contract on a desktop where Globex holds a hundred passages with "escrow": counted over every
    // organization, "escrow" would weigh nothing and the order would turn.
    let shared = store();
    let acme = member(&shared, "Acme");
    let globex = member(&shared, "Globex");
    document(&shared, &acme, "acme.pdf", &acme_texts);
    let globex_texts: Vec<String> = (0..100).map(|i| format!("globex escrow secret {i}")).collect();
    document(&shared, &globex, "globex.pdf", &globex_texts.iter().map(String::as_str).collect::<Vec<_>>());
    let retriever = Retriever::words_only();
    let ranked = texts(&retriever, &shared, &acme, "escrow fee", 10);
    assert_eq!(ranked, ranked_alone, "Globex's contracts change nothing in Acme's ranking");
    assert!(texts(&retriever, &shared, &acme, "globex secret", 10).is_empty(), "nor come back");
    assert_eq!(texts(&retriever, &shared, &globex, "escrow secret", 3).len(), 3, "Globex finds its own");
    assert!(texts(&retriever, &shared, &globex, "fee", 10).is_empty(), "and nothing of Acme's");
}

#[test]
fn the_index_follows_every_change_even_one_that_keeps_the_passage_ids() {
    let store = store();
    let acme = member(&store, "Acme");
    let retriever = Retriever::words_only();
    let d = document(&store, &acme, "lease.pdf", &["the tenant pays rent monthly", "the landlord repairs the roof"]);
    assert_eq!(texts(&retriever, &store, &acme, "rent", 5), ["the tenant pays rent monthly"]);
    // As many passages again: the next ids are the same as before.
    store.passages().replace(&acme, d, &passages(&["royalties are paid quarterly", "audit once a year"])).unwrap();
    assert!(texts(&retriever, &store, &acme, "rent", 5).is_empty(), "the old words are gone");
    assert_eq!(texts(&retriever, &store, &acme, "royalty", 5), ["royalties are paid quarterly"], "stemmed alike");
    assert_eq!(texts(&retriever, &store, &acme, "audits yearly", 5), ["audit once a year"]);
}

#[test]
fn a_search_inside_one_contract_finds_only_its_passages_and_follows_its_changes() {
    let store = store();
    let acme = member(&store, "Acme");
    let globex = member(&store, "Globex");
    let retriever = Retriever::words_only();
    let lease = document(&store, &acme, "lease.pdf", &["the tenant pays rent monthly", "rent reviews every year"]);
    let other = document(&store, &acme, "other.pdf", &["rent is not mentioned here except now"]);
    let theirs = document(&store, &globex, "globex.pdf", &["globex rent secret"]);
    let inside = |d: DocumentId, scope: &OrgScope, query: &str| -> Vec<String> {
        let found = retriever.search(&store, scope, query, Some(d), Mode::Bm25, 10).unwrap();
        found.hits.into_iter().map(|h| h.text).collect()
    };
    let found = inside(lease, &acme, "rent monthly");
    assert_eq!(found, ["the tenant pays rent monthly", "rent reviews every year"], "every word first");
    assert_eq!(inside(other, &acme, "rent"), ["rent is not mentioned here except now"]);
    assert!(inside(theirs, &acme, "rent").is_empty(), "another organization's contract reads as nothing");
    store.passages().replace(&acme, lease, &passages(&["royalties are paid quarterly", "audit once a year"])).unwrap();
    assert!(inside(lease, &acme, "rent").is_empty(), "the replaced words are gone");
    assert_eq!(inside(lease, &acme, "royalty"), ["royalties are paid quarterly"]);
    store.documents().soft_delete(&acme, other).unwrap();
    assert!(inside(other, &acme, "rent").is_empty(), "a deleted contract");
}
