//! Stored passage vectors (issue 21 part R): scoped to the organization, per model, gone with deleted documents,
//! precedents kept apart.

use chrono::{TimeZone, Utc};
use pactwise_domain::{DocumentId, FixedClock, MediaType, Role};
use pactwise_store::{NewDocument, NewPassage, NewPrecedent, OrgScope, Store, VectorProgress};
use std::sync::Arc;

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 12, 2, 9, 0, 0).unwrap()));
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

fn document(store: &Store, scope: &OrgScope, hash_byte: char, texts: &[&str]) -> DocumentId {
    let new = NewDocument {
        name: format!("contract-{hash_byte}.pdf"),
        media_type: MediaType::Pdf,
        size: 10,
        content_hash: hash_byte.to_string().repeat(64),
    };
    let (d, _) = store.documents().record(scope, &new).unwrap();
    let passages: Vec<NewPassage> = texts
        .iter()
        .map(|t| NewPassage { page: 1, start: 0, end: t.chars().count() as u32, text: t.to_string() })
        .collect();
    store.passages().replace(scope, d.id, &passages).unwrap();
    d.id
}

#[test]
fn passages_lack_vectors_until_saved_and_another_model_counts_as_missing() {
    let store = store();
    let a = member(&store, "Acme");
    let d = document(&store, &a, 'a', &["payment within thirty days", "either party may terminate", "governing law"]);
    let passages = store.passages();
    let lacking = passages.lacking_vectors(&a, "m1", 0, 2).unwrap();
    assert_eq!(lacking.len(), 2, "paged");
    let rest = passages.lacking_vectors(&a, "m1", lacking[1].id, 10).unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].text, "governing law");
    let all: Vec<i64> = lacking.iter().chain(&rest).map(|p| p.id).collect();
    let written =
        passages.save_vectors(&a, "m1", &all.iter().map(|id| (*id, vec![1, 2, 3])).collect::<Vec<_>>()).unwrap();
    assert_eq!(written, 3);
    assert!(passages.lacking_vectors(&a, "m1", 0, 10).unwrap().is_empty());
    assert_eq!(passages.vector_progress(&a, "m1").unwrap(), VectorProgress { done: 3, total: 3 });
    let loaded = passages.load_vectors(&a, "m1").unwrap();
    assert_eq!(loaded.len(), 3);
    assert!(loaded.iter().all(|v| v.document == d && v.bytes == [1, 2, 3]));
    // A new model: every passage lacks its vector; the old rows are not loaded for it.
    assert_eq!(passages.lacking_vectors(&a, "m2", 0, 10).unwrap().len(), 3);
    assert!(passages.load_vectors(&a, "m2").unwrap().is_empty());
    assert_eq!(passages.vector_progress(&a, "m2").unwrap(), VectorProgress { done: 0, total: 3 });
    // A vector of the new model sits beside the old one (a passage keeps one per model).
    passages.save_vectors(&a, "m2", &[(all[0], vec![9])]).unwrap();
    assert!(passages.lacking_vectors(&a, "m1", 0, 10).unwrap().is_empty());
    assert_eq!(passages.vector_progress(&a, "m2").unwrap(), VectorProgress { done: 1, total: 3 });
    assert_eq!(passages.load_vectors(&a, "m1").unwrap()[0].bytes, [1, 2, 3]);
    // A damaged row forgotten is computed again; the other model's vector of that passage stays.
    passages.forget_vectors(&a, "m1", &[all[0], all[1]]).unwrap();
    assert_eq!(passages.vector_progress(&a, "m1").unwrap(), VectorProgress { done: 1, total: 3 });
    assert_eq!(passages.vector_progress(&a, "m2").unwrap(), VectorProgress { done: 1, total: 3 });
}

#[test]
fn another_organizations_passages_are_neither_listed_saved_nor_loaded() {
    let store = store();
    let a = member(&store, "Acme");
    let b = member(&store, "Globex");
    document(&store, &a, 'a', &["acme clause"]);
    document(&store, &b, 'b', &["globex clause"]);
    let passages = store.passages();
    let theirs = passages.lacking_vectors(&b, "m", 0, 10).unwrap();
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].text, "globex clause");
    // Acme cannot write a vector for Globex's passage, nor drop one.
    assert_eq!(passages.save_vectors(&a, "m", &[(theirs[0].id, vec![1])]).unwrap(), 0);
    passages.save_vectors(&b, "m", &[(theirs[0].id, vec![2])]).unwrap();
    passages.forget_vectors(&a, "m", &[theirs[0].id]).unwrap();
    assert_eq!(passages.load_vectors(&b, "m").unwrap().len(), 1);
    assert!(passages.load_vectors(&a, "m").unwrap().is_empty());
    assert_eq!(passages.vector_progress(&a, "m").unwrap(), VectorProgress { done: 0, total: 1 });
}

#[test]
fn deleted_documents_vectors_never_come_back_and_replaced_passages_take_theirs_along() {
    let store = store();
    let a = member(&store, "Acme");
    let gone = document(&store, &a, 'a', &["deleted clause"]);
    let kept = document(&store, &a, 'b', &["kept clause"]);
    let passages = store.passages();
    let all: Vec<(i64, Vec<u8>)> =
        passages.lacking_vectors(&a, "m", 0, 10).unwrap().into_iter().map(|p| (p.id, vec![1])).collect();
    passages.save_vectors(&a, "m", &all).unwrap();
    store.documents().soft_delete(&a, gone).unwrap();
    let loaded = passages.load_vectors(&a, "m").unwrap();
    assert_eq!(loaded.iter().map(|v| v.document).collect::<Vec<_>>(), vec![kept]);
    assert_eq!(passages.vector_progress(&a, "m").unwrap(), VectorProgress { done: 1, total: 1 });
    // Re-cutting a document's passages drops their vectors with them.
    passages.replace(&a, kept, &[NewPassage { page: 1, start: 0, end: 3, text: "new".into() }]).unwrap();
    assert!(passages.load_vectors(&a, "m").unwrap().is_empty());
    assert_eq!(passages.lacking_vectors(&a, "m", 0, 10).unwrap().len(), 1);
}

#[test]
fn precedent_vectors_are_kept_apart_from_the_organizations() {
    let store = store();
    let a = member(&store, "Acme");
    document(&store, &a, 'a', &["acme clause"]);
    let passages = store.passages();
    passages
        .put_precedent(&NewPrecedent {
            id: "p1".into(),
            title: "Model NDA".into(),
            source: "built in".into(),
            license: "CC0".into(),
            origin: "builtin".into(),
            content_hash: "h".into(),
            passages: vec![NewPassage { page: 1, start: 0, end: 9, text: "precedent".into() }],
        })
        .unwrap();
    let lacking = passages.precedents_lacking_vectors("m", 0, 10).unwrap();
    assert_eq!(lacking.len(), 1);
    assert_eq!(lacking[0].text, "precedent");
    assert_eq!(passages.save_precedent_vectors("m", &[(lacking[0].id, vec![7])]).unwrap(), 1);
    assert_eq!(passages.load_precedent_vectors("m").unwrap().len(), 1);
    assert!(passages.load_vectors(&a, "m").unwrap().is_empty(), "a precedent vector is no organization's");
    assert_eq!(passages.precedents_lacking_vectors("m2", 0, 10).unwrap().len(), 1);
    passages.forget_precedent_vectors("m", &[lacking[0].id]).unwrap();
    assert!(passages.load_precedent_vectors("m").unwrap().is_empty());
}
