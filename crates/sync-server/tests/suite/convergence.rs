//! Two devices editing the same records offline converge to the same state once both have synced, whatever order
//! they sync in: fields by last writer (HLC), corrections and audit entries appended once each.

use crate::common::*;
use pactwise_domain::{FixedClock, Role};
use pactwise_sync::client::{Pause, SyncConfig};
use pactwise_sync::{DeviceToken, HttpApi, MemoryReplica, SyncClient, SyncedModel};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

pub struct NoWait;
impl Pause for NoWait {
    fn pause(&self, _: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async {})
    }
}

pub fn device(
    server: &TestServer,
    token: &str,
    clock: Arc<FixedClock>,
) -> (Arc<MemoryReplica>, SyncClient<MemoryReplica>) {
    let replica = Arc::new(MemoryReplica::new(Uuid::now_v7(), clock.clone()));
    let client = SyncClient::with_api(
        replica.clone(),
        HttpApi::new(&server.endpoint, Some(DeviceToken::new(token))).unwrap(),
        clock,
        Arc::new(NoWait),
        SyncConfig::default(),
    );
    (replica, client)
}

fn f(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

async fn two_devices_editing_the_same_record_offline_converge(backend: Backend) {
    let fresh = fresh(backend);
    let server_clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), server_clock.as_ref(), "alpha", &[Role::Reviewer, Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), server_clock.clone(), generous()).await;
    // Each laptop has its own clock; the second one runs 2 s ahead.
    let clock1 = Arc::new(FixedClock::new(start_time()));
    let clock2 = Arc::new(FixedClock::new(start_time() + chrono::Duration::seconds(2)));
    let (r1, c1) = device(&server, &a.tokens[0], clock1.clone());
    let (r2, c2) = device(&server, &a.tokens[1], clock2.clone());

    // Offline on both: the same contract edited, the same item corrected.
    r1.set_fields(SyncedModel::Contract, "k-1", f(&[("title", json!("MSA")), ("value", json!(100))]));
    clock1.advance(chrono::Duration::seconds(10));
    r1.set_fields(SyncedModel::Contract, "k-1", f(&[("status", json!("signed"))]));
    r2.set_fields(SyncedModel::Contract, "k-1", f(&[("title", json!("Master Services Agreement"))]));
    clock2.advance(chrono::Duration::seconds(20));
    r2.set_fields(SyncedModel::Contract, "k-1", f(&[("value", json!(250)), ("status", json!(Value::Null))]));
    r1.append_event(SyncedModel::ReviewCorrection, "k-1", json!({"item": "governing_law", "status": "present"}));
    r2.append_event(SyncedModel::ReviewCorrection, "k-1", json!({"item": "governing_law", "status": "absent"}));
    r2.set_fields(SyncedModel::Vendor, "v-9", f(&[("name", json!("Acme"))]));

    // The later writer pushes first; the earlier writer's changes arrive later and must not win.
    c2.sync_now(Some(1)).await.unwrap();
    c1.sync_now(Some(1)).await.unwrap();
    c2.sync_now(Some(1)).await.unwrap();

    assert_eq!(r1.snapshot(), r2.snapshot());
    assert_eq!(
        r1.record(SyncedModel::Contract, "k-1").unwrap(),
        // title: device 2 at +2 s beats device 1 at 0 s; value and status: device 2 at +22 s beats device 1 at +10 s.
        f(&[("status", Value::Null), ("title", json!("Master Services Agreement")), ("value", json!(250))])
    );
    // Corrections are events: both kept, in the same order on both devices, never merged by last writer.
    let e1 = r1.events(SyncedModel::ReviewCorrection);
    let e2 = r2.events(SyncedModel::ReviewCorrection);
    assert_eq!(e1.len(), 2);
    assert_eq!(e1, e2);

    // Syncing again changes nothing anywhere.
    let before = r1.snapshot();
    assert_eq!(c1.sync_now(Some(1)).await.unwrap().pulled, 0);
    assert_eq!(r1.snapshot(), before);
    // After seeing device 2's clock, device 1's next edit orders after everything it has seen, even though its own
    // wall clock is behind.
    r1.set_fields(SyncedModel::Contract, "k-1", f(&[("title", json!("MSA v2"))]));
    c1.sync_now(Some(1)).await.unwrap();
    c2.sync_now(Some(1)).await.unwrap();
    assert_eq!(r2.record(SyncedModel::Contract, "k-1").unwrap()["title"], json!("MSA v2"));
    assert_eq!(r1.snapshot(), r2.snapshot());
}

async fn many_offline_edits_in_any_sync_order_converge(backend: Backend) {
    let fresh = fresh(backend);
    let server_clock = fixed_clock();
    let roles = [Role::Reviewer, Role::Reviewer, Role::Reviewer];
    let a = org(fresh.storage.as_ref(), server_clock.as_ref(), "alpha", &roles);
    let server = TestServer::start(fresh.storage.clone(), server_clock.clone(), generous()).await;
    let clocks: Vec<Arc<FixedClock>> =
        (0..3).map(|i| Arc::new(FixedClock::new(start_time() + chrono::Duration::milliseconds(i * 7)))).collect();
    let devices: Vec<_> = (0..3).map(|i| device(&server, &a.tokens[i], clocks[i].clone())).collect();
    // A seeded sequence of edits: device, record, field, value.
    let mut seed: u64 = 12345;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for round in 0..4 {
        for _ in 0..30 {
            let d = next(3) as usize;
            let record = format!("k-{}", next(5));
            let field = ["title", "value", "status"][next(3) as usize];
            clocks[d].advance(chrono::Duration::milliseconds(next(50) as i64));
            devices[d].0.set_fields(SyncedModel::Contract, &record, f(&[(field, json!(next(1000)))]));
        }
        // Sync in a different order each round.
        let order: Vec<usize> = match round % 3 {
            0 => vec![0, 1, 2],
            1 => vec![2, 0, 1],
            _ => vec![1, 2, 0],
        };
        for d in order {
            devices[d].1.sync_now(Some(1)).await.unwrap();
        }
    }
    for d in &devices {
        d.1.sync_now(Some(1)).await.unwrap();
    }
    let first = devices[0].0.snapshot();
    assert_eq!(first.len(), 5);
    for d in &devices[1..] {
        assert_eq!(d.0.snapshot(), first);
    }
    assert_eq!(counts(fresh.storage.as_ref()).changes, 120);
}

crate::both_backends!(
    two_devices_editing_the_same_record_offline_converge,
    many_offline_edits_in_any_sync_order_converge
);
