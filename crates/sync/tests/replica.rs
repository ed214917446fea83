//! The replica contract, on the in-memory replica: local writes queue their change; acknowledged changes leave the
//! outbox; a pulled page applies once (applying it again changes nothing) and moves the cursor with it.

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, UserId};
use pactwise_sync::wire::{ApprovalDecision, ApprovalOutcome, PullResponse, PushResult, RefusalReason, ServerChange};
use pactwise_sync::{ApprovalView, LocalReplica, MemoryReplica, SyncedModel};
use serde_json::json;
use std::sync::Arc;
use uuid::Uuid;

fn clock() -> Arc<FixedClock> {
    Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 5, 1, 8, 0, 0).unwrap()))
}

fn served(seq: u64, change: pactwise_sync::Change, outcome: Option<ApprovalOutcome>) -> ServerChange {
    ServerChange {
        seq,
        change,
        author: UserId::new(),
        device_id: Uuid::now_v7(),
        received_at: Utc.with_ymd_and_hms(2026, 5, 1, 8, 0, 0).unwrap(),
        outcome,
    }
}

#[test]
fn local_writes_queue_in_order_and_leave_the_outbox_only_when_acknowledged() {
    let r = MemoryReplica::new(Uuid::now_v7(), clock());
    let a = r.set_fields(SyncedModel::Contract, "k", [("title".to_string(), json!("A"))].into());
    let b = r.append_event(SyncedModel::AuditEntry, "k", json!({"action": "viewed"}));
    let c = r.set_fields(SyncedModel::Contract, "k", [("title".to_string(), json!("B"))].into());
    assert!(a.hlc < b.hlc && b.hlc < c.hlc, "one device's changes are ordered even within one millisecond");
    assert_eq!(r.outbox(2).unwrap().iter().map(|x| x.id).collect::<Vec<_>>(), vec![a.id, b.id]);
    r.mark_pushed(&[PushResult::stored(a.id, 1)]).unwrap();
    assert_eq!(r.pending_count().unwrap(), 2);
    assert_eq!(r.outbox(10).unwrap()[0].id, b.id);
    assert_eq!(r.record(SyncedModel::Contract, "k").unwrap()["title"], json!("B"));
}

#[test]
fn a_page_applies_once_and_moves_the_cursor_with_it() {
    let writer = MemoryReplica::new(Uuid::now_v7(), clock());
    let e = writer.append_event(SyncedModel::ReviewCorrection, "k", json!({"item": "term", "status": "present"}));
    let f = writer.set_fields(SyncedModel::Vendor, "v", [("name".to_string(), json!("Acme"))].into());
    let page = PullResponse { changes: vec![served(1, e, None), served(2, f, None)], next_cursor: 2, has_more: false };
    let reader = MemoryReplica::new(Uuid::now_v7(), clock());
    reader.apply_remote(&page, 0).unwrap();
    reader.apply_remote(&page, 0).unwrap();
    assert_eq!(reader.cursor().unwrap(), 2);
    assert_eq!(reader.events(SyncedModel::ReviewCorrection).len(), 1, "an event is kept once");
    assert_eq!(reader.record(SyncedModel::Vendor, "v").unwrap()["name"], json!("Acme"));
    assert_eq!(reader.pending_count().unwrap(), 0, "remote changes are not queued again");
}

#[test]
fn an_offline_approval_is_pending_until_the_server_decides_and_a_refusal_is_shown() {
    let me = MemoryReplica::new(Uuid::now_v7(), clock());
    let mine = me.request_approval("step-1", ApprovalDecision::Approve);
    assert_eq!(me.approval("step-1"), Some(ApprovalView::Pending { decision: ApprovalDecision::Approve }));
    // Someone else's rejection was stamped first; ours was refused.
    let other = MemoryReplica::new(Uuid::now_v7(), clock()).request_approval("step-1", ApprovalDecision::Reject);
    let approver = UserId::new();
    let at = Utc.with_ymd_and_hms(2026, 5, 1, 9, 0, 0).unwrap();
    let page = PullResponse {
        changes: vec![
            served(
                4,
                other,
                Some(ApprovalOutcome::Stamped {
                    decision: ApprovalDecision::Reject,
                    approver,
                    decided_at: at,
                    approver_role: None,
                }),
            ),
            served(5, mine.clone(), Some(ApprovalOutcome::Refused { reason: RefusalReason::AlreadyDecided })),
        ],
        next_cursor: 5,
        has_more: false,
    };
    me.apply_remote(&page, 0).unwrap();
    assert_eq!(me.approval("step-1"), Some(ApprovalView::Decided { decision: ApprovalDecision::Reject, approver }));
    let step = me.approval_step("step-1").unwrap();
    assert_eq!(step.requests[&mine.id], pactwise_sync::RequestState::Refused { reason: RefusalReason::AlreadyDecided });
}
