//! Synced records through the store's public API: local writes of documents, corrections and synced settings queue
//! their change in the same transaction (only for an organization signed in to sync), remote changes apply without
//! queueing anything back, a remote document waits for its file and its corrections wait for it, and sign-in binds
//! the service's organization and user in one transaction.

use chrono::{TimeZone, Utc};
use pactwise_domain::{DocumentId, FixedClock, MediaType, Role, UserId};
use pactwise_store::{
    ChangeEncoder, ChangePayload, CorrectionApplied, DocumentApplied, EncodedChange, LocalChange, NewCorrection,
    NewDocument, NewOutboxEntry, OrgScope, Received, ReceivedFile, RemoteCorrection, ServiceRefusal, Store, StoreError,
    SyncBinding,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Encodes a change as plain JSON with a sortable HLC, as the real encoder (in `api`) does with the wire types.
/// A change naming "refused" is refused, like a change too large to sync.
struct TestEncoder;

impl ChangeEncoder for TestEncoder {
    fn encode(&self, c: &LocalChange<'_>) -> Result<EncodedChange, String> {
        if let ChangePayload::Fields(f) = c.payload
            && (f.get("name") == Some(&json!("refused.pdf")) || f.get("value") == Some(&json!(["refused"])))
        {
            return Err("too large".into());
        }
        let (wall, counter) = if c.now_ms > c.clock.0 { (c.now_ms, 0) } else { (c.clock.0, c.clock.1 + 1) };
        let hlc = format!("{wall:020}-{counter:010}-{}", c.node_id);
        let payload = match c.payload {
            ChangePayload::Fields(f) => json!({"fields": f}),
            ChangePayload::Event(e) => json!({"event": e}),
            ChangePayload::ApprovalRequest(r) => json!({"approve": r.approve, "note": r.note}),
        };
        let id = uuid::Uuid::now_v7().to_string();
        Ok(EncodedChange {
            entry: NewOutboxEntry {
                change_id: id.clone(),
                model: c.model.into(),
                record_id: c.record_id.into(),
                change_json: json!({"id": id, "model": c.model, "record_id": c.record_id, "body": payload}).to_string(),
            },
            hlc,
            clock: (wall, counter),
        })
    }
}

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    let mut store = Store::open_in_memory(clock).unwrap();
    store.set_change_encoder(Arc::new(TestEncoder));
    store
}

fn member(store: &Store, org_name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let org = p.create_organization(org_name).unwrap();
    let user = p.create_user(&format!("{org_name} user"), None).unwrap();
    p.set_membership(org, user, role).unwrap();
    let session = p.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

/// A member of an organization that is signed in to sync (it has a sync state).
fn synced_member(store: &Store, org_name: &str) -> OrgScope {
    let scope = member(store, org_name, Role::Owner);
    store.sync_log().state(&scope, || uuid::Uuid::from_bytes([1; 16]).to_string()).unwrap();
    scope
}

fn doc(hash_byte: char) -> NewDocument {
    NewDocument {
        name: format!("contract-{hash_byte}.pdf"),
        media_type: MediaType::Pdf,
        size: 1234,
        content_hash: hash_byte.to_string().repeat(64),
    }
}

fn outbox(store: &Store, scope: &OrgScope) -> Vec<Value> {
    store
        .sync_log()
        .outbox(scope, 100)
        .unwrap()
        .into_iter()
        .map(|e| serde_json::from_str(&e.change_json).unwrap())
        .collect()
}

#[test]
fn documents_corrections_and_synced_settings_queue_their_change_with_the_write() {
    let store = store();
    let a = synced_member(&store, "Acme");
    let (d, _) = store.documents().record(&a, &doc('a')).unwrap();
    store.documents().soft_delete(&a, d.id).unwrap();
    store.documents().restore(&a, d.id).unwrap();
    let correction = NewCorrection {
        item_id: "term.duration".into(),
        kind: "correct".into(),
        status: "absent".into(),
        quote: None,
        note: Some("no term stated".into()),
        acknowledged: Vec::new(),
    };
    let kept = store.reviews().add_correction(&a, d.id, &correction).unwrap();
    store.settings().set(&a, "review.thresholds", &json!({"ocr_min_confidence": 0.9})).unwrap();
    store.settings().set(&a, "import.max_bytes", &1_000u64).unwrap();

    let changes = outbox(&store, &a);
    let models: Vec<&str> = changes.iter().map(|c| c["model"].as_str().unwrap()).collect();
    assert_eq!(models, ["document", "document", "document", "review_correction", "setting"], "{changes:#?}");
    let created = &changes[0]["body"]["fields"];
    assert_eq!(created["name"], "contract-a.pdf");
    assert_eq!(created["content_hash"], "a".repeat(64));
    assert_eq!(created["created_by"], a.user().to_string());
    assert_eq!(created["created_by_name"], "Acme user");
    assert!(created["deleted_at"].is_null());
    assert!(changes[1]["body"]["fields"]["deleted_at"].is_string(), "the soft delete syncs");
    assert!(changes[2]["body"]["fields"]["deleted_at"].is_null(), "the restore syncs");
    let event = &changes[3]["body"]["event"];
    assert_eq!(changes[3]["record_id"], kept.id);
    assert_eq!((event["item_id"].as_str(), event["status"].as_str()), (Some("term.duration"), Some("absent")));
    assert_eq!(event["document_id"], d.id.to_string());
    assert_eq!(event["audit"]["action"], "review.correct", "the audit entry's facts travel with the event");
    assert_eq!(changes[4]["record_id"], "review.thresholds");
    assert_eq!(changes[4]["body"]["fields"]["value"]["ocr_min_confidence"], 0.9);

    // The HLC each field was set with is recorded, and the clock moved forward with the changes.
    let state = store.sync_log().state(&a, String::new).unwrap();
    assert!(state.hlc_wall_ms > 0);
}

#[test]
fn an_organization_not_signed_in_to_sync_queues_nothing() {
    let store = store();
    let local = member(&store, "Local", Role::Owner);
    let (d, _) = store.documents().record(&local, &doc('b')).unwrap();
    store.documents().soft_delete(&local, d.id).unwrap();
    store.settings().set(&local, "organization.aliases", &vec!["Local Ltd"]).unwrap();
    assert_eq!(store.sync_log().pending(&local).unwrap(), 0);
}

#[test]
fn a_change_that_cannot_be_synced_leaves_no_write_behind() {
    let store = store();
    let a = synced_member(&store, "Acme");
    let err = store.settings().set(&a, "organization.aliases", &["refused"]).unwrap_err();
    assert!(matches!(&err, StoreError::Invalid(m) if m.contains("cannot be synced")), "{err}");
    assert_eq!(store.settings().get::<Value>(&a, "organization.aliases").unwrap(), None, "the setting was not kept");
    let refused = NewDocument { name: "refused.pdf".into(), ..doc('c') };
    assert!(store.documents().record(&a, &refused).is_err());
    assert!(store.documents().list(&a).unwrap().is_empty(), "the document was not kept");
    assert!(store.audit().list(&a).unwrap().is_empty(), "nor its audit entry");
    assert_eq!(store.sync_log().pending(&a).unwrap(), 0);
}

fn fields(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn remote_document(hash: char, author: UserId) -> BTreeMap<String, Value> {
    fields(&[
        ("name", json!("remote-nda.txt")),
        ("content_hash", json!(hash.to_string().repeat(64))),
        ("media_type", json!("txt")),
        ("size", json!(42)),
        ("created_at", json!("2026-11-29T08:00:00Z")),
        ("created_by", json!(author.to_string())),
        ("created_by_name", json!("ann@alpha.example")),
        ("deleted_at", Value::Null),
    ])
}

fn remote_correction(id: &str, document: DocumentId, author: UserId) -> RemoteCorrection {
    RemoteCorrection {
        id: id.into(),
        document,
        item_id: "gov.law".into(),
        kind: "correct".into(),
        status: "present".into(),
        quote: Some(("laws of New York".into(), 1)),
        note: Some("checked".into()),
        user: author,
        created_at: Utc.with_ymd_and_hms(2026, 11, 29, 9, 0, 0).unwrap(),
        audit_action: "review.correct".into(),
        audit_details: json!({"item": "gov.law", "status": "present"}),
    }
}

#[test]
fn a_remote_document_waits_for_its_file_and_its_corrections_wait_for_it() {
    let store = store();
    let b = synced_member(&store, "Alpha");
    let author = UserId::new();
    let id = DocumentId::new();
    let log = store.sync_log();
    log.apply_page(&b, 2, (1, 0), |a| {
        a.ensure_user(author, Some("ann@alpha.example"))?;
        assert_eq!(a.document_fields(id, author, &remote_document('d', author))?, DocumentApplied::Wanted);
        assert_eq!(a.correction(&remote_correction("c-1", id, author))?, CorrectionApplied::Deferred);
        Ok(())
    })
    .unwrap();
    assert!(store.documents().list(&b).unwrap().is_empty(), "not listed before its file is here");
    assert_eq!(log.deferred_count(&b).unwrap(), 1);
    let wanted = log.wanted(&b).unwrap();
    assert_eq!((wanted.len(), wanted[0].id), (1, id));
    assert_eq!(wanted[0].content_hash.as_deref(), Some("d".repeat(64).as_str()));

    // The file arrived: the document is kept under the same id, with its corrections, and nothing is queued back.
    let Received::Inserted(kept) = log.receive_document(&b, id, ReceivedFile::FetchedFromService).unwrap() else {
        panic!("not inserted")
    };
    assert!(store.blob_owners().holds(&b, &"d".repeat(64)).unwrap(), "the fetched file is the organization's now");
    assert_eq!((kept.id, kept.name.as_str(), kept.created_by), (id, "remote-nda.txt", author));
    let corrections = store.reviews().corrections(&b, id).unwrap();
    assert_eq!(corrections.len(), 1);
    assert_eq!((corrections[0].user, corrections[0].status.as_str()), (author, "present"));
    assert_eq!(corrections[0].quote, Some(("laws of New York".into(), 1)));
    assert_eq!(log.deferred_count(&b).unwrap(), 0);
    assert_eq!(log.pending(&b).unwrap(), 0, "remote changes are never queued again");
    let audit = store.audit().list(&b).unwrap();
    let actions: Vec<(&str, Option<UserId>)> = audit.iter().map(|e| (e.action.as_str(), e.actor)).collect();
    assert_eq!(actions, [("document.received", Some(author)), ("review.correct", Some(author))]);
    assert_eq!(store.platform().user_name(author).unwrap(), "ann@alpha.example");

    // Receiving again (a retry after a crash) finds it here; once imported, it no longer waits.
    assert!(matches!(log.receive_document(&b, id, ReceivedFile::AlreadyHeld).unwrap(), Received::AlreadyHere(_)));
    log.forget_wanted(&b, id).unwrap();
    assert!(log.wanted(&b).unwrap().is_empty());
}

#[test]
fn a_remote_delete_and_restore_apply_to_a_document_that_is_here() {
    let store = store();
    let b = synced_member(&store, "Alpha");
    let (d, _) = store.documents().record(&b, &doc('e')).unwrap();
    let queued = store.sync_log().pending(&b).unwrap();
    let other = UserId::new();
    let log = store.sync_log();
    log.apply_page(&b, 3, (1, 0), |a| {
        a.ensure_user(other, None)?;
        a.document_fields(d.id, other, &fields(&[("deleted_at", json!("2026-11-30T10:00:00Z"))]))?;
        Ok(())
    })
    .unwrap();
    assert!(store.documents().get(&b, d.id).is_err(), "deleted on another device, deleted here");
    assert_eq!(store.documents().list_deleted(&b).unwrap()[0].id, d.id);
    log.apply_page(&b, 4, (1, 0), |a| {
        let applied = a.document_fields(d.id, other, &fields(&[("deleted_at", Value::Null)]))?;
        assert_eq!(applied, DocumentApplied::Updated { wants_import: true }, "restored without pages: import it");
        Ok(())
    })
    .unwrap();
    assert!(store.documents().get(&b, d.id).is_ok());
    assert_eq!(store.sync_log().pending(&b).unwrap(), queued, "nothing queued back");
    let deleted_by_other = store
        .audit()
        .list(&b)
        .unwrap()
        .into_iter()
        .filter(|e| e.actor == Some(other))
        .map(|e| e.action)
        .collect::<Vec<_>>();
    assert_eq!(deleted_by_other, ["document.deleted", "document.restored"]);
    let placeholder = store.platform().user_name(other).unwrap();
    assert!(placeholder.starts_with("Member "), "{placeholder}");
    // The first change that names the member gives the row its name; a later one does not rename it.
    log.apply_page(&b, 5, (1, 0), |a| {
        a.ensure_user(other, Some("bob@alpha.example"))?;
        a.ensure_user(other, Some("someone else"))
    })
    .unwrap();
    assert_eq!(store.platform().user_name(other).unwrap(), "bob@alpha.example");
}

#[test]
fn malformed_remote_values_are_refused_before_anything_is_written() {
    let store = store();
    let b = synced_member(&store, "Alpha");
    let author = UserId::new();
    let id = DocumentId::new();
    store
        .sync_log()
        .apply_page(&b, 1, (1, 0), |a| {
            let bad_hash = fields(&[("content_hash", json!("NOT-A-HASH"))]);
            assert!(matches!(a.document_fields(id, author, &bad_hash), Err(StoreError::Invalid(_))));
            let unknown = fields(&[("owner_org", json!("someone else"))]);
            assert!(matches!(a.document_fields(id, author, &unknown), Err(StoreError::Invalid(_))));
            let mut bad_status = remote_correction("c-2", id, author);
            bad_status.status = "maybe".into();
            assert!(matches!(a.correction(&bad_status), Err(StoreError::Invalid(_))));
            let hlc = format!("{:020}-{:010}-node-9", 5, 0);
            assert!(
                matches!(a.setting("sync.account", &hlc, &json!({})), Err(StoreError::Invalid(_))),
                "does not sync"
            );
            Ok(())
        })
        .unwrap();
    assert!(store.sync_log().wanted(&b).unwrap().is_empty());
    assert_eq!(store.sync_log().deferred_count(&b).unwrap(), 0);
}

#[test]
fn the_same_file_imported_here_before_sync_is_not_kept_twice() {
    let store = store();
    let b = synced_member(&store, "Alpha");
    let (local, _) = store.documents().record(&b, &doc('f')).unwrap();
    let author = UserId::new();
    let id = DocumentId::new();
    store
        .sync_log()
        .apply_page(&b, 1, (1, 0), |a| {
            a.ensure_user(author, None)?;
            a.document_fields(id, author, &remote_document('f', author)).map(|_| ())
        })
        .unwrap();
    let Received::Refused(reason) =
        store.sync_log().receive_document(&b, id, ReceivedFile::FetchedFromService).unwrap()
    else {
        panic!("kept twice")
    };
    assert!(reason.contains(&local.id.to_string()), "{reason}");
    assert_eq!(store.documents().list(&b).unwrap().len(), 1);
    assert_eq!(store.sync_log().wanted(&b).unwrap()[0].last_error.as_deref(), Some(reason.as_str()));
}

#[test]
fn sign_in_binds_the_services_organization_and_user_and_keeps_the_local_one() {
    let store = store();
    let local = member(&store, "My organization", Role::Owner);
    let (org, user) = (pactwise_domain::OrgId::new(), UserId::new());
    let binding = SyncBinding {
        org,
        org_name: "Alpha LLP".into(),
        user,
        user_name: "ann@alpha.example".into(),
        email: "ann@alpha.example".into(),
        role: Role::Reviewer,
        node_id: "node-b".into(),
        account: json!({"server": "http://127.0.0.1:1", "org_slug": "alpha"}),
    };
    let session = store.sync_log().bind(&binding).unwrap();
    let scope = store.sessions().make_current(session).unwrap();
    assert_eq!((scope.org(), scope.user(), scope.role()), (org, user, Role::Reviewer));
    assert_eq!(store.sync_log().bound_session().unwrap(), Some(session));
    assert_eq!(store.sync_log().state(&scope, || "other".into()).unwrap().node_id, "node-b");
    assert_eq!(store.platform().organization_name(org).unwrap(), "Alpha LLP");
    assert!(store.sessions().open(local.session()).is_ok(), "the local organization's session still opens");
    // Binding again (a second sign-in) keeps the node and cursor.
    store.sync_log().bind(&SyncBinding { node_id: "node-c".into(), ..binding }).unwrap();
    assert_eq!(store.sync_log().state(&scope, String::new).unwrap().node_id, "node-b");
    store.sync_log().unbind().unwrap();
    assert_eq!(store.sync_log().bound_session().unwrap(), None);
}

/// A sortable HLC text for node `n` at `ms`.
fn hlc(ms: u64, n: u8) -> String {
    pactwise_rules::lww::Hlc { wall_ms: ms, counter: 0, node: uuid::Uuid::from_bytes([n; 16]) }.to_sortable()
}

#[test]
fn a_document_naming_a_file_only_another_organization_holds_never_gets_that_file() {
    // Regression: the blob store is shared by every organization on the install. Organization A imported a file;
    // a member of synced organization B pushed a document naming the same hash and uploaded nothing.
    let store = store();
    let a = member(&store, "Acme", Role::Owner);
    let b = synced_member(&store, "Alpha");
    store.documents().record(&a, &doc('9')).unwrap();
    let hash = "9".repeat(64);
    assert!(store.blob_owners().holds(&a, &hash).unwrap());
    assert!(!store.blob_owners().holds(&b, &hash).unwrap(), "B does not hold A's file");
    let author = UserId::new();
    let id = DocumentId::new();
    store
        .sync_log()
        .apply_page(&b, 1, (1, 0), |x| {
            x.ensure_user(author, None)?;
            x.document_fields(id, author, &remote_document('9', author)).map(|_| ())
        })
        .unwrap();
    // Reusing the file on disk without B's service serving it is refused; nothing of A's reaches B.
    let Received::Refused(reason) = store.sync_log().receive_document(&b, id, ReceivedFile::AlreadyHeld).unwrap()
    else {
        panic!("B received a document whose file only A holds")
    };
    assert!(reason.contains("not been fetched"), "{reason}");
    assert!(store.documents().list(&b).unwrap().is_empty());
    assert!(!store.blob_owners().holds(&b, &hash).unwrap());
    assert_eq!(store.sync_log().wanted(&b).unwrap().len(), 1, "it still waits for B's service to serve the file");
}

#[test]
fn a_malformed_synced_setting_is_refused_logged_and_the_old_value_kept() {
    let store = store();
    let b = synced_member(&store, "Alpha");
    store.settings().set(&b, "review.thresholds", &json!({"ocr_min_confidence": 0.9})).unwrap();
    store.settings().set(&b, "organization.aliases", &["Alpha LLP"]).unwrap();
    let log = store.sync_log();
    log.apply_page(&b, 1, (1, 0), |a| {
        // From another member, later than the local values: still refused, as a local change would be.
        let refused = a.setting("review.thresholds", &hlc(u64::MAX / 2, 7), &json!(1));
        assert!(matches!(&refused, Err(StoreError::Invalid(m)) if m.contains("must be an object")), "{refused:?}");
        let refused = a.setting("organization.aliases", &hlc(u64::MAX / 2, 7), &json!({"not": "a list"}));
        assert!(matches!(&refused, Err(StoreError::Invalid(m)) if m.contains("list of names")), "{refused:?}");
        let past_review =
            a.setting("review.thresholds", &hlc(u64::MAX / 2, 7), &json!({"max_not_evaluated_share": 1.0}));
        assert!(matches!(past_review, Err(StoreError::Invalid(_))), "no member can let everything past review");
        Ok(())
    })
    .unwrap();
    assert_eq!(
        store.settings().get::<Value>(&b, "review.thresholds").unwrap(),
        Some(json!({"ocr_min_confidence": 0.9}))
    );
    assert_eq!(
        store.settings().get::<Vec<String>>(&b, "organization.aliases").unwrap(),
        Some(vec!["Alpha LLP".into()])
    );
    // A refused value does not move the field's clock: a valid change stamped earlier than it still applies.
    log.apply_page(&b, 2, (1, 0), |a| {
        assert!(a.setting("organization.aliases", &hlc(u64::MAX / 4, 8), &json!(["Alpha", "ALPHA LLP"]))?);
        Ok(())
    })
    .unwrap();
    assert_eq!(store.settings().get::<Vec<String>>(&b, "organization.aliases").unwrap().unwrap().len(), 2);
    // The same check on a local write.
    assert!(matches!(store.settings().set(&b, "review.thresholds", &json!(1)), Err(StoreError::Invalid(_))));
    assert!(matches!(
        store.settings().set(&b, "review.thresholds", &json!({"ocr_min_confidence": 0.0})),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn a_bad_stored_setting_reads_as_unset_so_it_can_be_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pactwise.sqlite3");
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    let mut store = Store::open(&path, clock).unwrap();
    store.set_change_encoder(Arc::new(TestEncoder));
    let b = synced_member(&store, "Alpha");
    // Written before values were checked (a second connection stands in for an older version).
    let raw = rusqlite::Connection::open(&path).unwrap();
    for (key, bad) in [("review.thresholds", "1"), ("organization.aliases", r#"{"not": "a list"}"#)] {
        raw.execute(
            "INSERT INTO settings (org_id, key, value) VALUES (?1, ?2, ?3)",
            rusqlite::params![b.org().to_string(), key, bad],
        )
        .unwrap();
        assert_eq!(store.settings().get::<Value>(&b, key).unwrap(), None, "{key} reads as unset");
    }
    store.settings().set(&b, "review.thresholds", &json!({"critical_min_confidence": 0.8})).unwrap();
    assert_eq!(
        store.settings().get::<Value>(&b, "review.thresholds").unwrap(),
        Some(json!({"critical_min_confidence": 0.8})),
        "the repair is kept"
    );
}

#[test]
fn only_owners_and_admins_write_synced_settings_here_too() {
    let store = store();
    let reviewer = member(&store, "Alpha", Role::Reviewer);
    let err = store.settings().set(&reviewer, "review.thresholds", &json!({"ocr_min_confidence": 0.9})).unwrap_err();
    assert!(matches!(err, StoreError::Forbidden { role: Role::Reviewer }), "{err}");
    store.settings().set(&reviewer, "import.max_bytes", &5u64).unwrap();
}

#[test]
fn a_change_the_service_refused_leaves_the_outbox_and_is_kept_with_its_reason() {
    let store = store();
    let a = synced_member(&store, "Acme");
    store.settings().set(&a, "organization.aliases", &["Acme Corp"]).unwrap();
    store.documents().record(&a, &doc('7')).unwrap();
    let queued = store.sync_log().outbox(&a, 10).unwrap();
    assert_eq!(queued.len(), 2);
    let refusal = ServiceRefusal {
        change_id: queued[0].change_id.clone(),
        code: "forbidden".into(),
        message: "your role (reviewer) cannot change the organization's names; ask an owner or admin".into(),
    };
    store.sync_log().settle(&a, &[queued[1].change_id.clone()], &[refusal]).unwrap();
    assert_eq!(store.sync_log().pending(&a).unwrap(), 0);
    let (refused, total) = store.sync_log().refused(&a, 10).unwrap();
    assert_eq!(total, 1);
    assert_eq!((refused[0].model.as_str(), refused[0].record_id.as_str()), ("setting", "organization.aliases"));
    assert!(refused[0].message.contains("cannot change the organization's names"));
}
