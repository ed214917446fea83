//! Publishing this desktop's workflow runs and approval steps to the organization's other desktops: each run whose
//! revision and each step whose status (or escalation) changed since it was last published becomes one whole
//! last-writer-wins record (`pactwise_sync::SharedRun`, `SharedApproval`), queued with the mark of what was
//! published in one transaction. It runs on the store's thread each time the sync client reads the outbox, so what
//! the engine committed goes out in the next push; nothing is published twice. A record too large for one change
//! goes out without its bulky part (the evidence, the oldest timeline entries) and says so.

use super::encoding::encode_change;
use pactwise_domain::{ApprovalStatus, RunId};
use pactwise_store::{ApprovalRecord, OrgScope, RunRecord, Store, StoreError};
use pactwise_sync::shared::{MAX_TIMELINE, trim_details};
use pactwise_sync::wire::ChangeBody;
use pactwise_sync::{SharedApproval, SharedRun, SharedRunEvent, SharedStepStatus, SyncedModel};
use serde_json::{Value, json};
use std::collections::HashMap;
use uuid::Uuid;

/// The most records published per outbox read (the rest go with the next one).
const BATCH: usize = 200;

/// Publishes what changed; returns how many records were queued. Does nothing for an organization that does not sync.
pub(crate) fn publish(store: &Store, scope: &OrgScope) -> Result<usize, StoreError> {
    let shared = store.shared_runs();
    if !shared.org_syncs(scope)? {
        return Ok(0);
    }
    let runs = shared.unpublished_runs(scope, BATCH)?;
    let approvals = shared.unpublished_approvals(scope, BATCH)?;
    if runs.is_empty() && approvals.is_empty() {
        return Ok(0);
    }
    let _span = tracing::info_span!("sync_publish", runs = runs.len(), steps = approvals.len()).entered();
    let state = store.sync_log().state(scope, || Uuid::now_v7().to_string())?;
    let mut clock = (state.hlc_wall_ms, state.hlc_counter);
    let now_ms = u64::try_from(store.clock().now().timestamp_millis()).unwrap_or(0);
    let mut names: HashMap<pactwise_domain::UserId, Option<String>> = HashMap::new();
    let mut name_of = |user: Option<pactwise_domain::UserId>| -> Option<String> {
        let user = user?;
        names.entry(user).or_insert_with(|| store.platform().user_name(user).ok()).clone()
    };
    let mut graphs: HashMap<RunId, (String, Option<pactwise_domain::UserId>)> = HashMap::new();
    let mut entries = Vec::new();
    let mut published: Vec<(&str, String, String)> = Vec::new();
    for run in &runs {
        // A review report is published once, whole, when its run has assembled it (append-only).
        if let Some(event) = assembled_report(run)
            && !shared.published(scope, REPORT_MODEL, &run.id.to_string())?
        {
            let mut small = event.clone();
            if let Some(report) = small.get_mut("report").and_then(Value::as_object_mut) {
                report.insert("rejected".into(), json!([]));
            }
            let mut queued = false;
            for form in [event, small] {
                let body = ChangeBody::Event { event: form };
                match encode_change(SyncedModel::ReviewReport, &run.id.to_string(), body, &state.node_id, clock, now_ms)
                {
                    Ok(encoded) => {
                        clock = encoded.clock;
                        entries.push((encoded.entry, encoded.hlc));
                        queued = true;
                        break;
                    }
                    Err(why) => tracing::debug!(run = %run.id, "a report form did not fit: {why}"),
                }
            }
            if !queued {
                tracing::warn!(run = %run.id, "this report is too large to share; it stays on this desktop");
            }
            published.push((REPORT_MODEL, run.id.to_string(), "assembled".into()));
        }
    }
    let mut encode = |model: SyncedModel, record: &str, fields: Vec<serde_json::Map<String, Value>>| {
        // The fuller form first; a form that does not fit one change gives way to the next, smaller one.
        for f in fields {
            let body = ChangeBody::Fields { fields: f.into_iter().collect() };
            match encode_change(model, record, body, &state.node_id, clock, now_ms) {
                Ok(encoded) => {
                    clock = encoded.clock;
                    entries.push((encoded.entry, encoded.hlc));
                    return;
                }
                Err(why) => tracing::debug!(%model, record, "a published form did not fit: {why}"),
            }
        }
        tracing::warn!(%model, record, "this record could not be published to the other desktops");
    };
    for run in &runs {
        graphs.insert(run.id, (run.graph_name.clone(), run.started_by));
        let record = shared_run(store, scope, run, name_of(run.started_by))?;
        let mut small = record.clone();
        small.timeline = small.timeline.split_off(small.timeline.len().saturating_sub(10));
        let forms = [record, small].iter().filter_map(|r| object(r.to_fields())).collect();
        encode(SyncedModel::Run, &run.id.to_string(), forms);
        published.push(("run", run.id.to_string(), run.revision.to_string()));
    }
    for (approval, version) in &approvals {
        let (graph, starter) = match graphs.get(&approval.run) {
            Some(g) => g.clone(),
            None => {
                let run = store.runs().get(scope, approval.run)?;
                (run.graph_name, run.started_by)
            }
        };
        let record = shared_approval(approval, graph, name_of(starter));
        let mut small = record.clone();
        small.evidence = json!({
            "note": "The evidence is too large to share; open this approval on the desktop that runs the workflow."
        });
        let forms = [record, small].iter().filter_map(|r| object(r.to_fields())).collect();
        encode(SyncedModel::ApprovalStep, &approval.id.to_string(), forms);
        published.push(("approval_step", approval.id.to_string(), version.clone()));
    }
    let queued = entries.len();
    store.sync_log().publish(scope, &entries, &published, clock)?;
    Ok(queued)
}

/// The synced model name of a review report (`SyncedModel::ReviewReport`).
const REPORT_MODEL: &str = "review_report";

/// A report run's assembled report as the event other desktops keep: the document and the report.
fn assembled_report(run: &RunRecord) -> Option<Value> {
    if run.graph_name != pactwise_workflows::report::GRAPH {
        return None;
    }
    let state: pactwise_engine::RunState = serde_json::from_str(&run.state).ok()?;
    let report = state.channels.get("report").filter(|v| !v.is_null())?.clone();
    let document = report.get("document")?.as_str()?.to_string();
    Some(json!({"document_id": document, "report": report}))
}

fn object(fields: std::collections::BTreeMap<String, Value>) -> Option<serde_json::Map<String, Value>> {
    (!fields.is_empty()).then(|| fields.into_iter().collect())
}

fn shared_run(
    store: &Store,
    scope: &OrgScope,
    run: &RunRecord,
    started_by_name: Option<String>,
) -> Result<SharedRun, StoreError> {
    let events = store.runs().events(scope, run.id)?;
    let skip = events.len().saturating_sub(MAX_TIMELINE);
    let timeline = events
        .into_iter()
        .skip(skip)
        .map(|e| SharedRunEvent { kind: e.kind, node: e.node, details: trim_details(&e.details), at: e.at })
        .collect();
    let waiting_for = store
        .approvals()
        .for_run(scope, run.id)?
        .into_iter()
        .filter(|a| a.status == ApprovalStatus::Pending)
        .map(|a| a.title)
        .collect();
    Ok(SharedRun {
        graph: run.graph_name.clone(),
        status: run.status,
        reason: run.reason.clone(),
        started_by: run.started_by,
        started_by_name,
        waiting_for,
        timeline,
        created_at: run.created_at,
        updated_at: run.updated_at,
        finished_at: run.finished_at,
    })
}

fn shared_approval(a: &ApprovalRecord, graph: String, requested_by_name: Option<String>) -> SharedApproval {
    SharedApproval {
        run_id: a.run.as_uuid(),
        graph,
        node: a.node.clone(),
        title: a.title.clone(),
        eligible_roles: a.eligible_roles.clone(),
        four_eyes: a.four_eyes,
        choices: a.choices.clone(),
        evidence: a.state_seen.clone(),
        status: match a.status {
            ApprovalStatus::Pending => SharedStepStatus::Open,
            ApprovalStatus::Approved | ApprovalStatus::Rejected => SharedStepStatus::Decided,
            ApprovalStatus::Cancelled => SharedStepStatus::Closed,
        },
        requested_by_name,
        due_at: a.due_at,
        escalated_at: a.escalated_at,
        created_at: a.created_at,
        // The service keeps the escalation time by its own clock, from the first publication.
        escalate_after_secs: a
            .escalate_at
            .map(|at| u64::try_from((at - a.created_at).num_seconds()).unwrap_or(0).max(1)),
    }
}
