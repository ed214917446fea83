//! The batch boundary of the usage ledger: a priced call journaled but not yet in a written batch survives the
//! process's death, and is written once however the crash fell.

use chrono::{TimeZone, Utc};
use pactwise_domain::usage::{TokenUsage, UsageOutcome, UsageRecord};
use pactwise_domain::{FixedClock, OrgId};
use pactwise_store::{Store, UsageJournal};
use std::sync::Arc;

fn record(org: OrgId, cost: i64) -> UsageRecord {
    UsageRecord {
        id: uuid::Uuid::now_v7(),
        org,
        user: None,
        purpose: "classify".into(),
        model: "claude-haiku-5-5".into(),
        tokens: TokenUsage { input: 100, output: 20, ..TokenUsage::default() },
        cost_micros: cost,
        latency_ms: 10,
        outcome: UsageOutcome::Ok,
        at: Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap(),
    }
}

fn spent(store: &Store, org: OrgId) -> i64 {
    store.usage().spent_micros(org, None, Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap()).unwrap()
}

#[test]
fn a_crash_between_a_call_and_its_batch_loses_no_priced_call_and_counts_none_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    let db = tmp.path().join("pactwise.sqlite3");
    let journals = tmp.path().join("usage-journal");
    let store = Store::open(&db, clock.clone()).unwrap();
    let org = store.platform().create_organization("Acme").unwrap();

    // A process makes three priced calls. The first two went out in a batch that committed, but the process died
    // before it could empty its journal; the third was waiting for its batch.
    let journal = UsageJournal::open(&journals).unwrap();
    let calls = [record(org, 100), record(org, 200), record(org, 400)];
    for call in &calls {
        journal.append(call).unwrap();
    }
    store.usage().record_batch(&calls[..2]).unwrap();
    // A second process running meanwhile: its journal is locked and never taken.
    let running = UsageJournal::open(&journals).unwrap();
    let its_call = record(org, 10_000);
    running.append(&its_call).unwrap();
    std::mem::drop(journal); // the process is gone: its lock is released, its file stays
    assert_eq!(spent(&store, org), 300);

    // The next start writes what the dead process left, each call once, and removes its file.
    let fresh = Store::open(&db, clock.clone()).unwrap();
    assert_eq!(UsageJournal::recover(&journals, &fresh).unwrap(), 3);
    assert_eq!(spent(&fresh, org), 700, "the waiting call is priced, the committed two are not counted twice");
    assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 1, "only the running process's journal is left");
    assert_eq!(UsageJournal::recover(&journals, &fresh).unwrap(), 0, "a live journal is not taken");
    assert_eq!(spent(&fresh, org), 700);

    // The running process writes its batch and empties its journal; a clean exit leaves nothing behind.
    fresh.usage().record_batch(std::slice::from_ref(&its_call)).unwrap();
    running.clear().unwrap();
    drop(running);
    assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 0);
    assert_eq!(spent(&fresh, org), 10_700);
}
