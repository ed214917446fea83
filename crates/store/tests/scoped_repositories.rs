//! The store's tenant and session rules, exercised through its public API only.

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, MediaType, Role};
use pactwise_store::{ImportOutcome, NewDocument, OrgScope, Store, StoreError};
use std::sync::Arc;

fn store() -> (Store, Arc<FixedClock>) {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    (Store::open_in_memory(clock.clone()).unwrap(), clock)
}

fn member(store: &Store, org_name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let org = p.create_organization(org_name).unwrap();
    let user = p.create_user(&format!("{org_name} user"), None).unwrap();
    p.set_membership(org, user, role).unwrap();
    let session = p.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn doc(hash_byte: char) -> NewDocument {
    NewDocument {
        name: format!("contract-{hash_byte}.pdf"),
        media_type: MediaType::Pdf,
        size: 1234,
        content_hash: hash_byte.to_string().repeat(64),
    }
}

#[test]
fn recording_the_same_bytes_twice_gives_one_document() {
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let (first, o1) = store.documents().record(&a, &doc('a')).unwrap();
    let (second, o2) = store.documents().record(&a, &doc('a')).unwrap();
    assert_eq!((o1, o2), (ImportOutcome::Created, ImportOutcome::Existing));
    assert_eq!(first.id, second.id);
    assert_eq!(store.documents().list(&a).unwrap().len(), 1);
}

#[test]
fn the_same_bytes_in_two_organizations_are_two_documents() {
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = member(&store, "Globex", Role::Owner);
    let (da, _) = store.documents().record(&a, &doc('a')).unwrap();
    let (db, outcome) = store.documents().record(&b, &doc('a')).unwrap();
    assert_eq!(outcome, ImportOutcome::Created);
    assert_ne!(da.id, db.id);
}

#[test]
fn another_organizations_document_is_indistinguishable_from_a_missing_one() {
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = member(&store, "Globex", Role::Owner);
    let (theirs, _) = store.documents().record(&b, &doc('b')).unwrap();
    let docs = store.documents();
    assert!(docs.list(&a).unwrap().is_empty());
    assert!(matches!(docs.get(&a, theirs.id), Err(StoreError::NotFound)));
    assert!(matches!(docs.soft_delete(&a, theirs.id), Err(StoreError::NotFound)));
    docs.soft_delete(&b, theirs.id).unwrap();
    assert!(docs.list_deleted(&a).unwrap().is_empty());
    assert!(matches!(docs.restore(&a, theirs.id), Err(StoreError::NotFound)));
    assert_eq!(docs.list_deleted(&b).unwrap().len(), 1, "B's document is untouched by A's attempts");
    assert!(store.audit().list(&a).unwrap().is_empty(), "A's attempts leave nothing in A's audit log either");
}

#[test]
fn soft_deleted_documents_are_hidden_until_restored() {
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Reviewer);
    let (d, _) = store.documents().record(&a, &doc('c')).unwrap();
    let deleted = store.documents().soft_delete(&a, d.id).unwrap();
    assert!(deleted.is_deleted());
    assert!(store.documents().list(&a).unwrap().is_empty());
    assert!(matches!(store.documents().get(&a, d.id), Err(StoreError::NotFound)));
    assert!(matches!(store.documents().soft_delete(&a, d.id), Err(StoreError::NotFound)));
    let restored = store.documents().restore(&a, d.id).unwrap();
    assert!(!restored.is_deleted());
    assert_eq!(store.documents().list(&a).unwrap(), vec![restored]);
}

#[test]
fn importing_bytes_that_are_in_the_trash_restores_them() {
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let (d, _) = store.documents().record(&a, &doc('d')).unwrap();
    store.documents().soft_delete(&a, d.id).unwrap();
    let (again, outcome) = store.documents().record(&a, &doc('d')).unwrap();
    assert_eq!(outcome, ImportOutcome::Restored);
    assert_eq!(again.id, d.id);
    assert!(!again.is_deleted());
}

#[test]
fn viewers_cannot_change_documents() {
    let (store, _) = store();
    let viewer = member(&store, "Acme", Role::Viewer);
    assert!(matches!(store.documents().record(&viewer, &doc('e')), Err(StoreError::Forbidden { role: Role::Viewer })));
}

#[test]
fn every_change_is_audited_in_order_and_the_log_refuses_edits() {
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let (d, _) = store.documents().record(&a, &doc('f')).unwrap();
    store.documents().soft_delete(&a, d.id).unwrap();
    store.documents().restore(&a, d.id).unwrap();
    let actions: Vec<String> = store.audit().list(&a).unwrap().into_iter().map(|e| e.action).collect();
    assert_eq!(actions, ["document.imported", "document.deleted", "document.restored"]);
    assert!(store.audit().list(&a).unwrap().iter().all(|e| e.actor == Some(a.user())));
}

#[test]
fn revoked_expired_and_unknown_sessions_do_not_open() {
    let (store, _) = store();
    let p = store.platform();
    let org = p.create_organization("Acme").unwrap();
    let user = p.create_user("Ann", None).unwrap();
    let outsider = p.create_user("Olaf", None).unwrap();
    p.set_membership(org, user, Role::Owner).unwrap();
    assert!(matches!(p.start_session(outsider, org), Err(StoreError::Unauthenticated)));
    let session = p.start_session(user, org).unwrap();
    assert_eq!(store.sessions().open(session).unwrap().role(), Role::Owner);
    store.sessions().revoke(session).unwrap();
    assert!(matches!(store.sessions().open(session), Err(StoreError::Unauthenticated)));
    assert!(matches!(store.sessions().open(pactwise_domain::SessionId::new()), Err(StoreError::Unauthenticated)));
}

#[test]
fn the_current_session_survives_reopening_a_file_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite3");
    let clock = Arc::new(pactwise_domain::SystemClock);
    let session = {
        let store = Store::open(&path, clock.clone()).unwrap();
        let p = store.platform();
        let org = p.create_organization("Acme").unwrap();
        let user = p.create_user("Ann", None).unwrap();
        p.set_membership(org, user, Role::Owner).unwrap();
        let session = p.start_session(user, org).unwrap();
        store.sessions().make_current(session).unwrap();
        session
    };
    let store = Store::open(&path, clock).unwrap();
    assert_eq!(store.sessions().current().unwrap(), Some(session));
    let journal: String =
        rusqlite::Connection::open(&path).unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");
}

#[test]
fn one_page_of_a_stored_extraction_loads_alone_and_only_for_its_organization() {
    use pactwise_domain::page::{Confidence, ExtractedDocument, Page, PageSource};
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = member(&store, "Globex", Role::Owner);
    let (d, _) = store.documents().record(&a, &doc('c')).unwrap();
    let page = |number: u32| Page {
        number,
        text: format!("Text of page {number}."),
        source: PageSource::Text,
        confidence: Confidence::None,
        synthetic: false,
        width: 612.0,
        height: 792.0,
        rotation: 0,
        char_boxes: Vec::new(),
    };
    let extracted = ExtractedDocument {
        media_type: MediaType::Pdf,
        content_hash: "c".repeat(64),
        pages: (1..=3).map(page).collect(),
        synthetic: false,
        headers: Vec::new(),
        footers: Vec::new(),
    };
    store.pages().save(&a, d.id, &extracted).unwrap();

    let second = store.pages().load_page(&a, d.id, 2).unwrap().expect("extracted");
    assert_eq!(second.pages.len(), 1);
    assert_eq!(second.pages[0].number, 2);
    assert_eq!(second.pages[0].text, "Text of page 2.");
    assert_eq!(second.media_type, MediaType::Pdf);
    assert!(store.pages().load_page(&a, d.id, 9).unwrap().expect("extracted").pages.is_empty());
    assert_eq!(store.pages().load(&a, d.id).unwrap().expect("extracted").pages.len(), 3);
    assert!(store.pages().load_page(&b, d.id, 2).is_err(), "another organization's page is not loaded");
    assert_eq!(store.pages().page_count(&a, d.id).unwrap(), Some(3));
    assert!(store.pages().page_count(&b, d.id).is_err(), "another organization's document is not counted");
}

#[test]
fn a_worker_reads_page_text_only_of_the_runs_organization_and_never_of_a_deleted_document() {
    use pactwise_domain::{ExtractedDocument, Page};
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = member(&store, "Globex", Role::Owner);
    let (document, _) = store.documents().record(&a, &doc('p')).unwrap();
    let (store, worker) = store.into_platform_worker("w").into_parts();
    let pages = store.pages();
    assert_eq!(pages.texts_for_worker(&worker, a.org(), document.id, 1, 9).unwrap(), None, "not extracted yet");
    let extracted = ExtractedDocument {
        media_type: MediaType::Pdf,
        content_hash: "p".repeat(64),
        pages: (1..=3).map(|n| Page::plain(n, format!("page {n} text"))).collect(),
        synthetic: false,
        headers: Vec::new(),
        footers: Vec::new(),
    };
    pages.save(&a, document.id, &extracted).unwrap();
    let texts = pages.texts_for_worker(&worker, a.org(), document.id, 2, 3).unwrap().unwrap();
    assert_eq!(texts.page_count, 3);
    assert_eq!(texts.pages, [(2, "page 2 text".to_string()), (3, "page 3 text".to_string())]);
    assert!(pages.texts_for_worker(&worker, a.org(), document.id, 1, 0).unwrap().unwrap().pages.is_empty());
    assert!(matches!(pages.texts_for_worker(&worker, b.org(), document.id, 1, 3), Err(StoreError::NotFound)));
    store.documents().soft_delete(&a, document.id).unwrap();
    assert!(matches!(pages.texts_for_worker(&worker, a.org(), document.id, 1, 3), Err(StoreError::NotFound)));
}

#[test]
fn a_document_recorded_with_its_pages_appears_only_with_them() {
    use pactwise_domain::{ExtractedDocument, Page};
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let pages = ExtractedDocument {
        media_type: MediaType::Pdf,
        content_hash: "w".repeat(64),
        pages: (1..=2).map(|n| Page::plain(n, format!("page {n}"))).collect(),
        synthetic: false,
        headers: Vec::new(),
        footers: Vec::new(),
    };
    let (d, outcome) = store.documents().record_with_pages(&a, &doc('w'), &pages).unwrap();
    assert_eq!(outcome, ImportOutcome::Created);
    assert_eq!(store.pages().page_count(&a, d.id).unwrap(), Some(2));
    // Recording the same bytes again with other pages keeps the pages it has.
    let other = ExtractedDocument { pages: vec![Page::plain(1, "other")], ..pages.clone() };
    let (again, outcome) = store.documents().record_with_pages(&a, &doc('w'), &other).unwrap();
    assert_eq!((again.id, outcome), (d.id, ImportOutcome::Existing));
    assert_eq!(store.pages().page_count(&a, d.id).unwrap(), Some(2));
    // A viewer records nothing.
    let viewer = member(&store, "Viewers", Role::Viewer);
    assert!(matches!(
        store.documents().record_with_pages(&viewer, &doc('v'), &pages),
        Err(StoreError::Forbidden { .. })
    ));
}

#[test]
fn documents_whose_review_never_started_are_listed_for_resuming_and_only_the_organizations() {
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = member(&store, "Globex", Role::Owner);
    let (first, _) = store.documents().record(&a, &doc('1')).unwrap();
    let (second, _) = store.documents().record(&a, &doc('2')).unwrap();
    let (deleted, _) = store.documents().record(&a, &doc('3')).unwrap();
    store.documents().soft_delete(&a, deleted.id).unwrap();
    store.documents().record(&b, &doc('4')).unwrap();
    let waiting: Vec<_> = store.documents().awaiting_pipeline(&a).unwrap().into_iter().map(|d| d.id).collect();
    assert_eq!(waiting, [first.id, second.id]);
}

#[test]
fn a_documents_structure_is_kept_with_its_pages_and_only_its_organization_reads_it() {
    use pactwise_domain::{ExtractedDocument, Page};
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = member(&store, "Globex", Role::Owner);
    let (unread, _) = store.documents().record(&a, &doc('u')).unwrap();
    assert!(
        matches!(store.pages().save_structure(&a, unread.id, 1, "{}"), Err(StoreError::NotFound)),
        "no pages, no structure"
    );
    let pages = ExtractedDocument {
        media_type: MediaType::Pdf,
        content_hash: "s".repeat(64),
        pages: vec![Page::plain(1, "1. Term")],
        synthetic: false,
        headers: Vec::new(),
        footers: Vec::new(),
    };
    let (d, _) = store.documents().record_with_pages(&a, &doc('s'), &pages).unwrap();
    assert_eq!(store.pages().structure(&a, d.id).unwrap(), None);
    store.pages().save_structure(&a, d.id, 1, r#"{"v":1}"#).unwrap();
    store.pages().save_structure(&a, d.id, 2, r#"{"v":2}"#).unwrap();
    assert_eq!(store.pages().structure(&a, d.id).unwrap(), Some((2, r#"{"v":2}"#.to_owned())));
    assert!(matches!(store.pages().structure(&b, d.id), Err(StoreError::NotFound)));
    assert!(matches!(store.pages().save_structure(&b, d.id, 3, "{}"), Err(StoreError::NotFound)));
    assert_eq!(store.pages().structure(&a, d.id).unwrap(), Some((2, r#"{"v":2}"#.to_owned())), "B changed nothing");
    // New pages replace the extraction, and the structure read from the old ones goes with it.
    store.pages().save(&a, d.id, &pages).unwrap();
    assert_eq!(store.pages().structure(&a, d.id).unwrap(), None);
}

#[test]
fn finalize_writes_the_vendor_fields_and_stamp_together_and_reopen_is_audited() {
    use pactwise_store::{FinalVendor, Finalization, NewCorrection, VendorDecision};
    let (store, _) = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = member(&store, "Globex", Role::Owner);
    let (d, _) = store.documents().record(&a, &doc('f')).unwrap();
    let reviews = store.reviews();
    reviews.save_contract(&a, d.id, "distributor", Some("Old"), &serde_json::json!({}), &VendorDecision::None).unwrap();
    let fields = serde_json::json!({"expiration_date": {"value": "1 September 2045"}});
    let finalization = Finalization {
        vendor: FinalVendor::New("Nippon Example"),
        counterparty: Some("Nippon Example"),
        extractions: &fields,
        outcome: Default::default(),
    };
    assert!(matches!(reviews.finalize(&b, d.id, &finalization), Err(StoreError::NotFound)), "not B's document");
    reviews.finalize(&a, d.id, &finalization).unwrap();
    let row = reviews.contract(&a, d.id).unwrap().unwrap();
    assert_eq!(row.vendor.map(|v| v.name).as_deref(), Some("Nippon Example"));
    assert_eq!(row.counterparty.as_deref(), Some("Nippon Example"));
    assert_eq!(row.extractions, fields);
    assert!(row.finalized_at.is_some());
    assert!(matches!(reviews.finalize(&a, d.id, &finalization), Err(StoreError::Conflict(_))), "once");

    // A finalized review's items are not changed until it is reopened.
    let correction = NewCorrection {
        item_id: "x".into(),
        kind: "confirm".into(),
        status: "present".into(),
        quote: None,
        note: None,
        acknowledged: vec!["the quote is in the table of contents".into()],
    };
    assert!(matches!(reviews.add_correction(&a, d.id, &correction), Err(StoreError::Conflict(_))));
    assert!(matches!(reviews.reopen(&a, d.id, "  "), Err(StoreError::Invalid(_))), "a reason is required");
    assert!(matches!(reviews.reopen(&b, d.id, "mine"), Err(StoreError::NotFound)));
    reviews.reopen(&a, d.id, "the expiry was read from the wrong clause").unwrap();
    assert!(reviews.contract(&a, d.id).unwrap().unwrap().finalized_at.is_none());
    assert!(matches!(reviews.reopen(&a, d.id, "again"), Err(StoreError::Conflict(_))), "nothing to reopen");
    reviews.add_correction(&a, d.id, &correction).unwrap();

    let audit = store.audit().list(&a).unwrap();
    let actions: Vec<&str> = audit.iter().map(|e| e.action.as_str()).collect();
    for want in ["vendor.create", "contract.link_vendor", "review.finalize", "review.reopen", "review.confirm"] {
        assert!(actions.contains(&want), "{want} in {actions:?}");
    }
    let reopen = audit.iter().find(|e| e.action == "review.reopen").unwrap();
    assert_eq!(reopen.details["reason"], "the expiry was read from the wrong clause");
    let confirm = audit.iter().find(|e| e.action == "review.confirm").unwrap();
    assert_eq!(confirm.details["kept_despite"][0], "the quote is in the table of contents");
    // A vendor that is not the organization's is refused and nothing of the finalize is kept.
    let (e, _) = store.documents().record(&a, &doc('g')).unwrap();
    reviews.save_contract(&a, e.id, "distributor", None, &serde_json::json!({}), &VendorDecision::None).unwrap();
    let theirs = reviews.create_vendor(&b, "Theirs").unwrap();
    let bad = Finalization {
        vendor: FinalVendor::Existing(&theirs.id),
        counterparty: None,
        extractions: &fields,
        outcome: Default::default(),
    };
    assert!(matches!(reviews.finalize(&a, e.id, &bad), Err(StoreError::NotFound)));
    assert!(reviews.contract(&a, e.id).unwrap().unwrap().finalized_at.is_none());
}
