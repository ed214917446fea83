//! Runs and approvals across the organization's desktops, as user actions: the runs other desktops published
//! appear in the run list and open read-only; their approval steps appear in the inbox of every eligible member;
//! when the organization syncs, a decision is a request to the sync service (waiting to sync until stamped), and
//! a stamped decision on one of this desktop's steps resumes its run here. The rules are the store's
//! (`SharedRuns::request_decision`) and the service's; this file shapes views and drives resumed runs.

use crate::runs::{
    ApprovalView, CancelOutcome, DecisionOutcome, RequestState, RequestView, RunDetail, RunEventView, RunView,
    approval_view, run_view, with_engine,
};
use crate::{Api, ApiError};
use pactwise_domain::{ApprovalId, ApprovalStatus, Decision, RunId, RunStatus};
use pactwise_store::{
    ApprovalRecord, ApprovalRequestRow, OrgScope, RequestStatus, RunEvent, RunRecord, SharedApprovalRow, SharedRunRow,
    SharedStepState, Store, StoreError, published_roles,
};
use pactwise_sync::{SharedApproval, SharedRun};
use serde_json::Value;

fn parse<T: for<'de> serde::Deserialize<'de>>(record: &Value) -> Option<T> {
    serde_json::from_value(record.clone()).ok()
}

fn request_view(r: &ApprovalRequestRow) -> RequestView {
    RequestView {
        decision: r.decision,
        reason: r.reason.clone(),
        choice: r.choice.clone(),
        status: match r.status {
            RequestStatus::Waiting => RequestState::WaitingToSync,
            RequestStatus::Stamped => RequestState::Stamped,
            RequestStatus::Refused => RequestState::Refused,
        },
        refusal: r.refusal.clone(),
        sent_at: r.created_at,
    }
}

fn shared_run_view(row: &SharedRunRow) -> Option<RunView> {
    let run: SharedRun = parse(&row.record)?;
    Some(RunView {
        id: row.run.parse().ok()?,
        graph: run.graph,
        graph_version: 0,
        status: run.status,
        superstep: 0,
        reason: run.reason,
        waiting_on: run.waiting_for,
        channels: Value::Null,
        parent: None,
        started_by: run.started_by,
        started_by_name: run.started_by_name,
        from_another_desktop: true,
        created_at: run.created_at,
        updated_at: run.updated_at,
        finished_at: run.finished_at,
    })
}

fn shared_approval_view(row: &SharedApprovalRow, mine: Option<&ApprovalRequestRow>) -> Option<ApprovalView> {
    let step: SharedApproval = parse(&row.record)?;
    Some(ApprovalView {
        id: row.step.parse().ok()?,
        run: row.run.parse().ok()?,
        node: step.node,
        title: step.title,
        status: match (row.state, row.decision) {
            (SharedStepState::Decided, Some(Decision::Approve)) => ApprovalStatus::Approved,
            (SharedStepState::Decided, Some(Decision::Reject)) => ApprovalStatus::Rejected,
            (SharedStepState::Closed, _) => ApprovalStatus::Cancelled,
            _ => ApprovalStatus::Pending,
        },
        eligible_roles: step.eligible_roles,
        four_eyes: step.four_eyes,
        state_seen: step.evidence,
        choices: step.choices,
        due_at: step.due_at,
        escalated: step.escalated_at.is_some(),
        urgent_notice: step.escalated_at.map(|_| pactwise_store::escalation_notice(&row_title(&row.record))),
        decided_by: row.decided_by,
        decided_by_name: row.decided_by_name.clone(),
        decided_at: row.decided_at,
        reason: row.reason.clone(),
        choice: row.choice.clone(),
        created_at: step.created_at,
        from_another_desktop: true,
        requested_by_name: row.requester_name.clone().or(step.requested_by_name),
        my_request: mine.map(request_view),
    })
}

/// Another desktop's run as the run record the words are made from (`run_words`): what it published, with no
/// state of its own here (its channels stay on its desktop).
pub(crate) fn remote_run_record(org: pactwise_domain::OrgId, row: &SharedRunRow) -> Option<RunRecord> {
    let run: SharedRun = parse(&row.record)?;
    Some(RunRecord {
        id: row.run.parse().ok()?,
        org,
        graph_name: run.graph,
        graph_version: 0,
        graph_snapshot_id: 0,
        input: "{}".into(),
        status: run.status,
        superstep: 0,
        revision: 0,
        state: "{}".into(),
        reason: run.reason,
        parent: None,
        parent_node: None,
        started_by: run.started_by,
        lease_owner: None,
        lease_expires_at: None,
        wake_at: None,
        deadline_at: None,
        failures: 0,
        created_at: run.created_at,
        updated_at: run.updated_at,
        finished_at: run.finished_at,
    })
}

/// Another desktop's run's published timeline as run events.
pub(crate) fn remote_events(row: &SharedRunRow) -> Vec<RunEvent> {
    let Some(run) = parse::<SharedRun>(&row.record) else { return Vec::new() };
    run.timeline
        .into_iter()
        .enumerate()
        .map(|(i, e)| RunEvent {
            seq: i as i64,
            superstep: 0,
            node: e.node,
            kind: e.kind,
            details: e.details,
            at: e.at,
        })
        .collect()
}

/// Another desktop's approval step as an approval record, with its stamped decision when one arrived.
pub(crate) fn remote_approval_record(org: pactwise_domain::OrgId, row: &SharedApprovalRow) -> Option<ApprovalRecord> {
    let step: SharedApproval = parse(&row.record)?;
    Some(ApprovalRecord {
        id: row.step.parse().ok()?,
        org,
        run: row.run.parse().ok()?,
        node: step.node,
        superstep: 0,
        title: step.title,
        eligible_roles: step.eligible_roles,
        four_eyes: step.four_eyes,
        state_seen: step.evidence,
        choices: step.choices,
        status: match (row.state, row.decision) {
            (SharedStepState::Decided, Some(Decision::Approve)) => ApprovalStatus::Approved,
            (SharedStepState::Decided, Some(Decision::Reject)) => ApprovalStatus::Rejected,
            (SharedStepState::Closed, _) => ApprovalStatus::Cancelled,
            _ => ApprovalStatus::Pending,
        },
        due_at: step.due_at,
        escalate_at: None,
        escalated_at: step.escalated_at,
        decided_by: row.decided_by,
        decided_by_name: row.decided_by_name.clone(),
        decided_at: row.decided_at,
        reason: row.reason.clone(),
        choice: row.choice.clone(),
        created_at: step.created_at,
    })
}

fn row_title(record: &Value) -> String {
    record.get("title").and_then(Value::as_str).unwrap_or("An approval").to_string()
}

/// The runs other desktops published, as run views.
pub(crate) fn shared_run_views(store: &Store, scope: &OrgScope, limit: usize) -> Result<Vec<RunView>, StoreError> {
    Ok(store.shared_runs().runs(scope, limit)?.iter().filter_map(shared_run_view).collect())
}

/// A run another desktop published, read-only: its published timeline and its steps as known here.
pub(crate) fn shared_run_detail(store: &Store, scope: &OrgScope, id: RunId) -> Result<RunDetail, StoreError> {
    let row = store.shared_runs().run(scope, &id.to_string())?;
    let run = shared_run_view(&row).ok_or_else(|| StoreError::Corrupt("a published run is unreadable".into()))?;
    let record: Option<SharedRun> = parse(&row.record);
    let events = record
        .map(|r| {
            r.timeline
                .into_iter()
                .map(|e| RunEventView { superstep: 0, node: e.node, kind: e.kind, details: e.details, at: e.at })
                .collect()
        })
        .unwrap_or_default();
    let mine = store.shared_runs().requests(scope)?;
    let approvals = store
        .shared_runs()
        .approvals(scope, Some(&row.run))?
        .iter()
        .filter_map(|a| shared_approval_view(a, latest_request(&mine, &a.step)))
        .collect();
    Ok(RunDetail { run, events, approvals, tasks: Vec::new(), checkpoints: 0 })
}

/// Another desktop's step as the inbox shows it, with this desktop's latest request on it.
pub(crate) fn remote_approval_view(
    store: &Store,
    scope: &OrgScope,
    row: &SharedApprovalRow,
) -> Result<Option<ApprovalView>, StoreError> {
    let mine = store.shared_runs().requests(scope)?;
    Ok(shared_approval_view(row, latest_request(&mine, &row.step)))
}

fn latest_request<'a>(mine: &'a [ApprovalRequestRow], step: &str) -> Option<&'a ApprovalRequestRow> {
    // Newest first: the latest request on the step is the one that counts.
    mine.iter().find(|r| r.step == step)
}

/// Sends a cancellation to the desktop another desktop's run lives on (the store checks role, reason and that
/// the run has not ended).
pub(crate) fn request_cancel(
    store: &Store,
    scope: &OrgScope,
    id: RunId,
    reason: &str,
) -> Result<CancelOutcome, StoreError> {
    store.shared_runs().request_cancel(scope, &id.to_string(), reason)?;
    let row = store.shared_runs().run(scope, &id.to_string())?;
    let run = shared_run_view(&row).ok_or_else(|| StoreError::Corrupt("a published run is unreadable".into()))?;
    Ok(CancelOutcome { run, sent_to_its_desktop: true, runs_cancelled: 0, tasks_cancelled: 0, approvals_cancelled: 0 })
}

/// The inbox: this desktop's pending steps and the open steps of other desktops' runs the session's role may
/// decide, oldest first, each with this desktop's request on it if one was sent.
pub(crate) fn with_other_desktops(
    store: &Store,
    scope: &OrgScope,
    local: Vec<ApprovalView>,
) -> Result<Vec<ApprovalView>, ApiError> {
    let mine = store.shared_runs().requests(scope)?;
    let mut inbox: Vec<ApprovalView> = local
        .into_iter()
        .map(|a| {
            let my_request = latest_request(&mine, &a.id.to_string()).map(request_view);
            ApprovalView { my_request, ..a }
        })
        .collect();
    for row in store.shared_runs().approvals(scope, None)? {
        if !published_roles(&row.record).contains(&scope.role()) {
            continue;
        }
        if let Some(view) = shared_approval_view(&row, latest_request(&mine, &row.step)) {
            inbox.push(view);
        }
    }
    inbox.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.to_string().cmp(&b.id.to_string())));
    Ok(inbox)
}

impl Api {
    /// Does the session's organization sync? Then its approvals are decided by the sync service's stamp.
    pub(crate) async fn org_syncs(&self, scope: &OrgScope) -> Result<bool, ApiError> {
        let scope = scope.clone();
        Ok(self.db.call(move |store| store.shared_runs().org_syncs(&scope)).await?)
    }

    /// Sends a decision to the sync service as a request (the store checks it first, as the service will). The
    /// step shows "waiting to sync" until the service's stamp arrives; nothing resumes before.
    pub(crate) async fn request_decision(
        &self,
        scope: &OrgScope,
        id: ApprovalId,
        decision: Decision,
        reason: String,
        choice: Option<String>,
    ) -> Result<DecisionOutcome, ApiError> {
        let scope = scope.clone();
        let outcome = self
            .db
            .call(move |store| {
                let scope = store.sessions().open(scope.session())?;
                let step = id.to_string();
                // This desktop's own runs and steps go out before a decision on one of them: a step decided on the
                // desktop it lives on before it was ever synced must reach the service and the other desktops
                // ahead of its decision, or they would see the step closed without knowing who decided.
                crate::sync::publish::publish(store, &scope)?;
                let request =
                    store.shared_runs().request_decision(&scope, &step, decision, &reason, choice.as_deref())?;
                let mine = request_view(&request);
                match store.approvals().get(&scope, id) {
                    Ok(local) => {
                        let run = run_view(&store.runs().get(&scope, local.run)?);
                        let approval = ApprovalView { my_request: Some(mine), ..approval_view(&local) };
                        Ok(DecisionOutcome { approval, run, waiting_to_sync: true })
                    }
                    Err(StoreError::NotFound) => {
                        let row = store.shared_runs().approval(&scope, &step)?;
                        let approval = shared_approval_view(&row, Some(&request))
                            .ok_or_else(|| StoreError::Corrupt("a published approval step is unreadable".into()))?;
                        let run = match store.shared_runs().run(&scope, &row.run) {
                            Ok(r) => shared_run_view(&r),
                            Err(StoreError::NotFound) => None,
                            Err(e) => return Err(e),
                        };
                        let run = run.unwrap_or_else(|| RunView {
                            id: approval.run,
                            graph: row.record.get("graph").and_then(Value::as_str).unwrap_or("workflow").to_string(),
                            graph_version: 0,
                            status: RunStatus::Waiting,
                            superstep: 0,
                            reason: None,
                            waiting_on: vec![approval.title.clone()],
                            channels: Value::Null,
                            parent: None,
                            started_by: Some(row.requester),
                            started_by_name: approval.requested_by_name.clone(),
                            from_another_desktop: true,
                            created_at: approval.created_at,
                            updated_at: approval.created_at,
                            finished_at: None,
                        });
                        Ok(DecisionOutcome { approval, run, waiting_to_sync: true })
                    }
                    Err(e) => Err(e),
                }
            })
            .await?;
        self.sync_slot.wake();
        tracing::info!(approval = %id, "decision sent to the sync service as a request");
        Ok(outcome)
    }

    /// Drives this desktop's runs a stamped decision resumed (and any other run with work), then publishes.
    pub(crate) async fn resume_runs(&self, runs: Vec<RunId>) -> Result<(), ApiError> {
        tracing::info!(runs = runs.len(), "resuming runs decided through the sync service");
        with_engine(self, move |_, engine| {
            engine.drive_many(&runs)?;
            Ok(())
        })
        .await?;
        self.sync_slot.wake();
        Ok(())
    }

    /// Changes each time a sync round changed runs or approvals on this desktop: another desktop's run or step
    /// arrived or moved, a decision was stamped or refused, or a stamped decision resumed one of this desktop's runs.
    /// The desktop refreshes its windows on each change (the inbox, its notifications, the Runs area).
    pub fn watch_shared_runs(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared_runs_changed.subscribe()
    }

    /// Changes each time a sync round changed the contract repository on this desktop: a contract, a vendor, a
    /// review's correction, reopen or finalize, or a review report arrived from another desktop, or a document was
    /// received (and reviewed). The desktop reloads its Contracts and Vendors areas and an open review on each change.
    pub fn watch_shared_records(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared_records_changed.subscribe()
    }

    /// Tells the watchers of [`Api::watch_shared_records`] that contracts, vendors or reports changed.
    pub(crate) fn shared_records_moved(&self) {
        self.shared_records_changed.send_modify(|rounds| *rounds += 1);
    }

    /// Tells the watchers of [`Api::watch_shared_runs`] that runs or approvals changed.
    pub(crate) fn shared_runs_moved(&self) {
        self.shared_runs_changed.send_modify(|rounds| *rounds += 1);
    }
}
