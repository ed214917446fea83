//! The sync log's rules, through the store's public API: outbox per organization, acknowledged entries leave,
//! a page applies atomically with its cursor, the cursor and the clock never move backwards, last writer wins per
//! field.

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, Role};
use pactwise_store::{NewOutboxEntry, OrgScope, Store, StoreError};
use std::sync::Arc;

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    Store::open_in_memory(clock).unwrap()
}

fn member(store: &Store, org_name: &str) -> OrgScope {
    let p = store.platform();
    let org = p.create_organization(org_name).unwrap();
    let user = p.create_user(&format!("{org_name} user"), None).unwrap();
    p.set_membership(org, user, Role::Reviewer).unwrap();
    let session = p.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn entry(id: &str) -> NewOutboxEntry {
    NewOutboxEntry {
        change_id: id.into(),
        model: "contract".into(),
        record_id: "k-1".into(),
        change_json: format!("{{\"id\":\"{id}\"}}"),
    }
}

/// The sortable text of an HLC reading (as the desktop's encoder writes it).
fn hlc(wall_ms: u64, counter: u32, node: u8) -> String {
    pactwise_rules::lww::Hlc { wall_ms, counter, node: uuid::Uuid::from_bytes([node; 16]) }.to_sortable()
}

#[test]
fn the_outbox_is_per_organization_in_write_order_and_acknowledged_entries_leave() {
    let store = store();
    let a = member(&store, "Acme");
    let b = member(&store, "Globex");
    let log = store.sync_log();
    log.state(&a, || "node-a".into()).unwrap();
    for id in ["c1", "c2", "c3"] {
        log.queue(&a, &entry(id), &[("title", hlc(1, 0, 1).as_str())], (1, 0)).unwrap();
    }
    assert!(log.outbox(&b, 10).unwrap().is_empty(), "another organization's outbox is invisible");
    assert_eq!(log.pending(&b).unwrap(), 0);
    let ids: Vec<String> = log.outbox(&a, 2).unwrap().into_iter().map(|e| e.change_id).collect();
    assert_eq!(ids, ["c1", "c2"]);
    log.acknowledge(&b, &["c1".into()]).unwrap();
    assert_eq!(log.pending(&a).unwrap(), 3, "B cannot acknowledge A's changes");
    log.acknowledge(&a, &["c1".into(), "c2".into()]).unwrap();
    assert_eq!(log.outbox(&a, 10).unwrap()[0].change_id, "c3");
    assert_eq!(log.pending(&a).unwrap(), 1);
}

#[test]
fn a_page_applies_with_its_cursor_or_not_at_all_and_the_cursor_never_goes_back() {
    let store = store();
    let a = member(&store, "Acme");
    let log = store.sync_log();
    let state = log.state(&a, || "node-a".into()).unwrap();
    assert_eq!((state.node_id.as_str(), state.cursor), ("node-a", 0));
    assert_eq!(log.state(&a, || "other".into()).unwrap().node_id, "node-a", "created once");

    log.apply_page(&a, 10, (500, 1), |tx| {
        assert!(tx.mark_applied("r1", 10)?);
        assert!(tx.take_field("contract", "k-1", "title", &hlc(500, 0, 2))?);
        Ok(())
    })
    .unwrap();
    let failed = log.apply_page(&a, 20, (900, 0), |tx| {
        tx.mark_applied("r2", 20)?;
        Err(StoreError::Corrupt("a change could not be applied".into()))
    });
    assert!(failed.is_err());
    let state = log.state(&a, String::new).unwrap();
    assert_eq!((state.cursor, state.hlc_wall_ms, state.hlc_counter), (10, 500, 1), "the failed page left nothing");
    log.apply_page(&a, 5, (100, 0), |tx| {
        assert!(!tx.mark_applied("r1", 10)?, "a change applies once");
        assert!(tx.mark_applied("r2", 20)?, "the failed page's change was not remembered");
        // An older write of the same field loses; a newer one wins.
        assert!(!tx.take_field("contract", "k-1", "title", &hlc(400, 9, 3))?);
        assert!(tx.take_field("contract", "k-1", "title", &hlc(500, 1, 4))?);
        Ok(())
    })
    .unwrap();
    let state = log.state(&a, String::new).unwrap();
    assert_eq!((state.cursor, state.hlc_wall_ms), (10, 500), "neither the cursor nor the clock went back");
}
