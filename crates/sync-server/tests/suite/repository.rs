//! The contract repository's shared records on the service, on both backends: contracts (a finalize's fields),
//! vendors and review reports are stored for every member but a viewer (refused with a reason), reach the
//! organization's other devices in log order and never another organization's; the service merges nothing (two
//! finalizes and two reports of one run are both kept in the log; desktops merge and keep the first report).

use crate::common::*;
use pactwise_domain::Role;
use pactwise_sync::wire::PushRequest;
use pactwise_sync::{Change, ChangeBody, DeviceToken, Hlc, HttpApi, SyncedModel};
use serde_json::{Value, json};
use uuid::Uuid;

fn change(model: SyncedModel, record: &str, wall_ms: u64, body: ChangeBody) -> Change {
    Change {
        id: Uuid::now_v7(),
        model,
        record_id: record.into(),
        hlc: Hlc { wall_ms, counter: 0, node: Uuid::now_v7() },
        body,
    }
}

fn fields(v: Value) -> ChangeBody {
    ChangeBody::Fields { fields: v.as_object().unwrap().clone().into_iter().collect() }
}

fn push(changes: Vec<Change>) -> PushRequest {
    PushRequest { idempotency_key: Uuid::now_v7(), changes }
}

async fn contracts_vendors_and_reports_reach_the_organizations_devices_only_and_never_from_a_viewer(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer, Role::Admin, Role::Viewer]);
    let c = org(fresh.storage.as_ref(), clock.as_ref(), "charlie", &[Role::Owner]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let device = |token: &str| HttpApi::new(&server.endpoint, Some(DeviceToken::new(token))).unwrap();
    let (reviewer, admin, viewer, other) =
        (device(&a.tokens[0]), device(&a.tokens[1]), device(&a.tokens[2]), device(&c.tokens[0]));

    let doc = Uuid::now_v7().to_string();
    let vendor = Uuid::now_v7().to_string();
    let run = Uuid::now_v7().to_string();
    let stamp = |at: &str| json!({"by": Uuid::now_v7().to_string(), "at": at});
    let report = ChangeBody::Event { event: json!({"document_id": doc, "report": {"document": doc}}) };
    let ours = vec![
        change(SyncedModel::Vendor, &vendor, 10, fields(json!({"name": "Tailspin Software", "deleted_at": null}))),
        change(
            SyncedModel::Contract,
            &doc,
            11,
            fields(
                json!({"type_id": "license", "finalized": stamp("2026-03-01T10:00:00Z"), "vendor": {"id": vendor, "link": "person"}}),
            ),
        ),
        change(SyncedModel::ReviewReport, &run, 12, report.clone()),
    ];
    let stored = reviewer.push(&push(ours)).await.unwrap();
    assert!(stored.results.iter().all(|r| r.refused.is_none() && r.seq > 0), "{stored:?}");
    // A second finalize of the same contract (another desktop, before they synced) and a second report of the run:
    // the service keeps both in order; it merges nothing.
    let theirs = vec![
        change(SyncedModel::Contract, &doc, 20, fields(json!({"finalized": stamp("2026-03-01T10:05:00Z")}))),
        change(SyncedModel::ReviewReport, &run, 21, report.clone()),
    ];
    assert!(admin.push(&push(theirs)).await.unwrap().results.iter().all(|r| r.refused.is_none()));

    // A viewer may change none of them: the push is refused whole, with a reason, and nothing is stored.
    let refused = viewer
        .push(&push(vec![
            change(SyncedModel::Contract, &doc, 30, fields(json!({"finalized": null}))),
            change(SyncedModel::Vendor, &vendor, 31, fields(json!({"name": "Renamed"}))),
            change(SyncedModel::ReviewReport, &Uuid::now_v7().to_string(), 32, report.clone()),
        ]))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, pactwise_sync::SyncError::Rejected { code, message }
            if code == "forbidden" && message == "viewers cannot change the organization's data"),
        "{refused:?}"
    );

    // The organization's devices receive the five changes in log order; another organization nothing.
    let page = viewer.pull(0, 50).await.unwrap();
    let models: Vec<SyncedModel> = page.changes.iter().map(|c| c.change.model).collect();
    assert_eq!(
        models,
        [
            SyncedModel::Vendor,
            SyncedModel::Contract,
            SyncedModel::ReviewReport,
            SyncedModel::Contract,
            SyncedModel::ReviewReport
        ]
    );
    assert!(page.changes.windows(2).all(|w| w[0].seq < w[1].seq));
    let author = |i: usize| page.changes[i].author;
    assert_eq!((author(0), author(3)), (author(2), author(4)), "each change's author is its pushing token's user");
    assert_ne!(author(0), author(3), "two members, two authors: the stamp's `by` is never the author");
    assert!(other.pull(0, 50).await.unwrap().changes.is_empty(), "another organization receives nothing");
    assert_eq!(counts(fresh.storage.as_ref()).changes, 5);
}

crate::both_backends!(contracts_vendors_and_reports_reach_the_organizations_devices_only_and_never_from_a_viewer);
