//! The store as the sync client's replica: outbox, cursor, the service's answers to pushes (stored or refused),
//! and remote pages applied in one transaction (last-writer-wins fields through `pactwise_rules::lww`, append-only
//! corrections kept once, synced settings checked like a local change).

use chrono::{DateTime, Utc};
use pactwise_domain::RunId;
use pactwise_domain::{DocumentId, UserId};
use pactwise_store::members::KnownMember;
use pactwise_store::{
    CorrectionApplied, Db, OrgScope, RemoteCorrection, RequestOutcome, ServiceRefusal, StoreError,
    check_document_fields,
};
use pactwise_sync::members::MemberFields;
use pactwise_sync::shared::SharedStepStatus;
use pactwise_sync::wire::{ApprovalDecision, ApprovalOutcome, ChangeBody, PullResponse, PushResult, ServerChange};
use pactwise_sync::{Change, HlcClock, LocalReplica, ReplicaError, SyncedModel};
use pactwise_sync::{SharedApproval, SharedRun};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use uuid::Uuid;

/// The store as `sync::LocalReplica` for one signed-in organization. Its methods are synchronous (the client's
/// contract); they run on the store's thread and wait for it ([`Db::call_blocking`]), so every read and write of
/// sync state is ordered with the app's own writes.
pub(crate) struct StoreReplica {
    db: Db,
    pub(crate) scope: OrgScope,
    /// Documents that received corrections from other devices this round: their gate runs again.
    touched: Mutex<BTreeSet<DocumentId>>,
    /// This desktop's runs whose approval the service stamped this round: they resume after the page.
    resumed: Mutex<BTreeSet<RunId>>,
    /// Whether a page applied since the last [`StoreReplica::take_runs_moved`] changed runs or approvals.
    runs_moved: std::sync::atomic::AtomicBool,
    /// Whether a page applied since the last [`StoreReplica::take_records_moved`] changed contracts, vendors,
    /// reviews (a person's correction, a document's reopen or finalize) or review reports.
    records_moved: std::sync::atomic::AtomicBool,
}

pub(crate) fn storage(e: StoreError) -> ReplicaError {
    ReplicaError::Storage(e.to_string())
}

/// A remote change decoded into what the store applies.
enum Op {
    Document {
        id: DocumentId,
        hlc: String,
        author: UserId,
        author_name: Option<String>,
        fields: BTreeMap<String, Value>,
    },
    /// A contract's synced fields (a finalize, a reopen), each taken if it wins last-writer-wins here.
    Contract {
        id: DocumentId,
        hlc: String,
        author: UserId,
        author_name: Option<String>,
        fields: BTreeMap<String, Value>,
    },
    /// A review report another desktop's run assembled (kept once).
    Report {
        run: String,
        document: String,
        author: UserId,
        report: Value,
    },
    /// A vendor's synced fields, each taken if it wins last-writer-wins here.
    Vendor {
        id: String,
        hlc: String,
        author: UserId,
        fields: BTreeMap<String, Value>,
    },
    Correction {
        correction: RemoteCorrection,
        user_name: Option<String>,
    },
    Setting {
        key: String,
        hlc: String,
        value: Value,
    },
    /// A member of the organization, as the service wrote it (every field, applied in log order).
    Member {
        member: KnownMember,
        removed: bool,
    },
    /// A run another desktop published, whole (taken if it is newer than the copy here).
    Run {
        id: String,
        hlc: String,
        record: Value,
        status: String,
    },
    /// An approval step another desktop published, whole.
    Step {
        id: String,
        hlc: String,
        run: String,
        requester: UserId,
        record: Value,
        open: bool,
    },
    /// Another desktop asks to cancel a run (carried out if the run lives here).
    Cancel {
        run: String,
        author: UserId,
        author_name: Option<String>,
        reason: String,
    },
    /// The service escalated an approval step (it waited past its escalation time undecided).
    Escalation {
        step: String,
        at: DateTime<Utc>,
    },
    /// The service's answer to a decision request (this desktop's or another's).
    Outcome {
        request: String,
        step: String,
        outcome: RequestOutcome,
    },
    /// An RFP package's synced fields, each taken if it wins last-writer-wins here.
    PrepPackage {
        id: String,
        hlc: String,
        author: UserId,
        fields: BTreeMap<String, Value>,
    },
    /// The service's word on a package's edit lease (taken, taken over, released).
    PrepLease {
        id: String,
        lease: pactwise_store::RemoteLease,
    },
    /// Not applied on the desktop (a model it does not keep yet, or a malformed change); marked applied.
    Skip,
}

fn decode(remote: &ServerChange) -> Op {
    let change = &remote.change;
    let skip = |why: &str| {
        tracing::warn!(change = %change.id, model = %change.model, seq = remote.seq, "remote change skipped: {why}");
        Op::Skip
    };
    match (change.model, &change.body) {
        (SyncedModel::Document, ChangeBody::Fields { fields }) => {
            let Ok(id) = change.record_id.parse::<DocumentId>() else { return skip("bad document id") };
            let mut fields = fields.clone();
            // Who created a document is who pushed its creation, as the service stamped it.
            if fields.contains_key("created_by") {
                fields.insert("created_by".into(), Value::String(remote.author.to_string()));
            }
            if let Err(e) = check_document_fields(&fields) {
                return skip(&e.to_string());
            }
            let author_name = fields.get("created_by_name").and_then(Value::as_str).map(str::to_string);
            Op::Document { id, hlc: change.hlc.to_sortable(), author: remote.author, author_name, fields }
        }
        (SyncedModel::Contract, ChangeBody::Fields { fields }) => {
            let Ok(id) = change.record_id.parse::<DocumentId>() else { return skip("bad document id") };
            let mut fields = fields.clone();
            // Who finalized is who pushed the finalize, as the service stamped it; the name is only a hint.
            let mut author_name = None;
            if let Some(stamp) = fields.get_mut("finalized").and_then(Value::as_object_mut) {
                author_name = stamp.get("by_name").and_then(Value::as_str).map(str::to_string);
                stamp.insert("by".into(), Value::String(remote.author.to_string()));
            }
            if let Err(e) = pactwise_store::check_contract_fields(&fields) {
                return skip(&e.to_string());
            }
            Op::Contract { id, hlc: change.hlc.to_sortable(), author: remote.author, author_name, fields }
        }
        (SyncedModel::ReviewReport, ChangeBody::Event { event }) => {
            let Ok(run) = change.record_id.parse::<RunId>() else { return skip("bad run id") };
            let document = event.get("document_id").and_then(Value::as_str).and_then(|d| d.parse::<DocumentId>().ok());
            let Some(document) = document else { return skip("a report without its document") };
            let report = event.get("report").cloned().unwrap_or(Value::Null);
            match serde_json::from_value::<pactwise_domain::ContractReport>(report.clone()) {
                Ok(r) if r.document == document => {
                    Op::Report { run: run.to_string(), document: document.to_string(), author: remote.author, report }
                }
                Ok(_) => skip("a report of another document than it names"),
                Err(e) => skip(&format!("not a contract review report: {e}")),
            }
        }
        (SyncedModel::Vendor, ChangeBody::Fields { fields }) => {
            if Uuid::parse_str(&change.record_id).is_err() {
                return skip("bad vendor id");
            }
            if let Err(e) = pactwise_store::check_vendor_fields(fields) {
                return skip(&e.to_string());
            }
            Op::Vendor {
                id: change.record_id.clone(),
                hlc: change.hlc.to_sortable(),
                author: remote.author,
                fields: fields.clone(),
            }
        }
        (SyncedModel::PrepPackage, ChangeBody::Fields { fields }) => {
            if Uuid::parse_str(&change.record_id).is_err() {
                return skip("bad package id");
            }
            if let Err(e) = pactwise_store::check_prep_package_fields(fields) {
                return skip(&e.to_string());
            }
            // The whole package must read as Prep Studio's package (findings, warnings, the drafting run too).
            if let Some(package) = fields.get("package")
                && let Err(e) = serde_json::from_value::<pactwise_prep::Package>(package.clone())
            {
                return skip(&format!("not an RFP package: {e}"));
            }
            Op::PrepPackage {
                id: change.record_id.clone(),
                hlc: change.hlc.to_sortable(),
                author: remote.author,
                fields: fields.clone(),
            }
        }
        (SyncedModel::PrepLease, ChangeBody::Event { event }) => {
            if Uuid::parse_str(&change.record_id).is_err() {
                return skip("bad package id");
            }
            match pactwise_sync::lease::LeaseEvent::from_event(event) {
                // The service writes these for the token's user: the holder is the change's author.
                Ok(e) if e.holder == remote.author => Op::PrepLease {
                    id: change.record_id.clone(),
                    lease: pactwise_store::RemoteLease {
                        event: match e.event {
                            pactwise_sync::lease::LeaseEventKind::Taken => "taken",
                            pactwise_sync::lease::LeaseEventKind::TakenOver => "taken_over",
                            pactwise_sync::lease::LeaseEventKind::Released => "released",
                        }
                        .to_string(),
                        lease: pactwise_store::prep::ServiceLease {
                            holder: e.holder,
                            holder_name: e.holder_name,
                            acquired_at: e.acquired_at,
                            expires_at: e.expires_at,
                        },
                        previous: e
                            .previous_holder
                            .zip(e.previous_expires_at)
                            .map(|(user, at)| (user, e.previous_holder_name, at)),
                    },
                },
                Ok(_) => skip("a lease event whose holder is not its author"),
                Err(why) => skip(&why),
            }
        }
        (SyncedModel::ReviewCorrection, ChangeBody::Event { event }) => {
            let text = |k: &str| event.get(k).and_then(Value::as_str).map(str::to_string);
            let (Some(document), Some(item_id), Some(kind), Some(status), Some(created_at)) =
                (text("document_id"), text("item_id"), text("kind"), text("status"), text("created_at"))
            else {
                return skip("a correction without its document, item, kind, status or time");
            };
            let Ok(document) = document.parse::<DocumentId>() else { return skip("bad document id") };
            let Ok(created_at) = DateTime::parse_from_rfc3339(&created_at) else { return skip("bad time") };
            let quote = match (text("quote_text"), event.get("quote_page").and_then(Value::as_u64)) {
                (Some(t), Some(p)) if p >= 1 && p <= u64::from(u32::MAX) => Some((t, p as u32)),
                (None, None) => None,
                _ => return skip("a quote without its page"),
            };
            let audit = event.get("audit");
            let correction = RemoteCorrection {
                id: change.record_id.clone(),
                document,
                item_id,
                kind: kind.clone(),
                status,
                quote,
                note: text("note"),
                user: remote.author,
                created_at: created_at.with_timezone(&Utc),
                audit_action: audit
                    .and_then(|a| a.get("action"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("review.{kind}")),
                audit_details: audit.and_then(|a| a.get("details")).cloned().unwrap_or(Value::Null),
            };
            Op::Correction { correction, user_name: text("user_name") }
        }
        (SyncedModel::Setting, ChangeBody::Fields { fields }) => match fields.get("value") {
            Some(value) if pactwise_store::SYNCED_SETTINGS.contains(&change.record_id.as_str()) => {
                Op::Setting { key: change.record_id.clone(), hlc: change.hlc.to_sortable(), value: value.clone() }
            }
            _ => skip("a setting that does not sync"),
        },
        (SyncedModel::Member, ChangeBody::Fields { fields }) => {
            let Ok(user) = change.record_id.parse::<UserId>() else { return skip("bad member id") };
            let Some(f) = MemberFields::from_fields(fields) else { return skip("a member without all its fields") };
            let member = KnownMember { user, display_name: f.display_name, email: Some(f.email), role: f.role };
            Op::Member { member, removed: f.removed }
        }
        (SyncedModel::Run, ChangeBody::Fields { fields }) => match SharedRun::from_fields(fields) {
            Ok(run) => Op::Run {
                id: change.record_id.clone(),
                hlc: change.hlc.to_sortable(),
                status: run.status.as_str().to_string(),
                record: Value::Object(fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            },
            Err(why) => skip(&why),
        },
        (SyncedModel::ApprovalStep, ChangeBody::Fields { fields }) => match SharedApproval::from_fields(fields) {
            Ok(step) => Op::Step {
                id: change.record_id.clone(),
                hlc: change.hlc.to_sortable(),
                run: step.run_id.to_string(),
                requester: remote.author,
                open: step.status == SharedStepStatus::Open,
                record: Value::Object(fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            },
            Err(why) => skip(&why),
        },
        (SyncedModel::RunCancel, ChangeBody::Event { event }) => {
            let reason = event.get("reason").and_then(Value::as_str).unwrap_or("").chars().take(2000).collect();
            let author_name = event.get("requested_by_name").and_then(Value::as_str).map(str::to_string);
            Op::Cancel { run: change.record_id.clone(), author: remote.author, author_name, reason }
        }
        // Only the service writes escalations (it refuses any a desktop pushes): no member is their author.
        (SyncedModel::ApprovalEscalation, ChangeBody::Event { event }) if remote.author.as_uuid().is_nil() => {
            match pactwise_sync::shared::Escalation::from_event(event) {
                Ok(e) => Op::Escalation { step: change.record_id.clone(), at: e.escalated_at },
                Err(why) => skip(&why),
            }
        }
        (SyncedModel::ApprovalDecision, ChangeBody::ApprovalRequest { note, choice, decider_name, .. }) => {
            let outcome = match &remote.outcome {
                // The stamp names the approver (the request's author, from its token); the name is the
                // author's own desktop's hint, used only for display.
                Some(ApprovalOutcome::Stamped { decision, approver, decided_at, approver_role }) => {
                    RequestOutcome::Stamped {
                        approve: *decision == ApprovalDecision::Approve,
                        approver: *approver,
                        approver_role: *approver_role,
                        approver_name: decider_name.clone().filter(|_| *approver == remote.author),
                        decided_at: *decided_at,
                        note: note.clone(),
                        choice: choice.clone(),
                    }
                }
                Some(ApprovalOutcome::Refused { reason }) => {
                    RequestOutcome::Refused { message: reason.message().to_string() }
                }
                None => return skip("a decision request the service did not answer"),
            };
            Op::Outcome { request: change.id.to_string(), step: change.record_id.clone(), outcome }
        }
        _ => Op::Skip,
    }
}

impl StoreReplica {
    pub(crate) fn new(db: Db, scope: OrgScope) -> Self {
        StoreReplica {
            db,
            scope,
            touched: Mutex::new(BTreeSet::new()),
            resumed: Mutex::new(BTreeSet::new()),
            runs_moved: std::sync::atomic::AtomicBool::new(false),
            records_moved: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(crate) fn take_touched(&self) -> BTreeSet<DocumentId> {
        std::mem::take(&mut *self.touched.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// This desktop's runs a stamped decision resumed since the last call.
    pub(crate) fn take_resumed(&self) -> BTreeSet<RunId> {
        std::mem::take(&mut *self.resumed.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether runs or approvals changed since the last call (a run, a step, a cancel or a decision's outcome).
    pub(crate) fn take_runs_moved(&self) -> bool {
        self.runs_moved.swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn take_records_moved(&self) -> bool {
        self.records_moved.swap(false, std::sync::atomic::Ordering::Relaxed)
    }
}

impl LocalReplica for StoreReplica {
    fn outbox(&self, limit: usize) -> Result<Vec<Change>, ReplicaError> {
        let s = self.scope.clone();
        let entries = self
            .db
            .call_blocking(move |store| {
                // What the engine committed since the last read goes out with this push.
                if let Err(e) = super::publish::publish(store, &s) {
                    tracing::warn!(error = %e, "runs and approvals could not be published this round");
                }
                store.sync_log().outbox(&s, limit)
            })
            .map_err(storage)?;
        entries
            .iter()
            .map(|e| {
                serde_json::from_str(&e.change_json)
                    .map_err(|err| ReplicaError::Invalid(format!("outbox entry {}: {err}", e.change_id)))
            })
            .collect()
    }

    fn pending_count(&self) -> Result<u64, ReplicaError> {
        let s = self.scope.clone();
        self.db.call_blocking(move |store| store.sync_log().pending(&s)).map_err(storage)
    }

    fn mark_pushed(&self, results: &[PushResult]) -> Result<(), ReplicaError> {
        let s = self.scope.clone();
        let mut stored = Vec::new();
        let mut refused = Vec::new();
        for r in results {
            match &r.refused {
                None => stored.push(r.change_id.to_string()),
                Some(why) => {
                    tracing::warn!(change = %r.change_id, code = %why.code, "the sync service refused a change: {}", why.message);
                    refused.push(ServiceRefusal {
                        change_id: r.change_id.to_string(),
                        code: why.code.clone(),
                        message: why.message.clone(),
                    });
                }
            }
        }
        self.db.call_blocking(move |store| store.sync_log().settle(&s, &stored, &refused)).map_err(storage)
    }

    fn cursor(&self) -> Result<u64, ReplicaError> {
        let s = self.scope.clone();
        self.db
            .call_blocking(move |store| store.sync_log().state(&s, || Uuid::now_v7().to_string()).map(|st| st.cursor))
            .map_err(storage)
    }

    #[tracing::instrument(skip_all, name = "sync_apply", fields(changes = page.changes.len()))]
    fn apply_remote(&self, page: &PullResponse, now_ms: u64) -> Result<(), ReplicaError> {
        let s = self.scope.clone();
        let changes: Vec<(u64, String, pactwise_sync::Hlc, Op)> = page
            .changes
            .iter()
            .map(|remote| (remote.seq, remote.change.id.to_string(), remote.change.hlc, decode(remote)))
            .collect();
        let next_cursor = page.next_cursor;
        let applied = self
            .db
            .call_blocking(move |store| {
                let log = store.sync_log();
                let state = log.state(&s, || Uuid::now_v7().to_string())?;
                let node = Uuid::parse_str(&state.node_id)
                    .map_err(|_| StoreError::Corrupt(format!("bad HLC node id {:?}", state.node_id)))?;
                let mut clock = HlcClock::from_parts(node, state.hlc_wall_ms, state.hlc_counter);
                let mut touched = BTreeSet::new();
                let mut resumed = BTreeSet::new();
                let mut moved = false;
                let mut records = false;
                let fresh: Vec<_> = changes.into_iter().filter(|(seq, ..)| *seq > state.cursor).collect();
                for (_, _, hlc, _) in &fresh {
                    clock.observe(hlc, now_ms);
                }
                let last = clock.last();
                log.apply_page(&s, next_cursor, (last.wall_ms, last.counter), |a| {
                    for (seq, change_id, _, op) in fresh {
                        if !a.mark_applied(&change_id, seq)? {
                            continue;
                        }
                        let outcome = match op {
                            Op::Document { id, hlc, author, author_name, fields } => {
                                let mut taken = BTreeMap::new();
                                for (field, value) in fields {
                                    if a.take_field("document", &id.to_string(), &field, &hlc)? {
                                        taken.insert(field, value);
                                    }
                                }
                                if taken.is_empty() {
                                    continue;
                                }
                                a.ensure_user(author, author_name.as_deref())?;
                                records = true;
                                a.document_fields(id, author, &taken).map(|_| ())
                            }
                            Op::Contract { id, hlc, author, author_name, fields } => {
                                let mut taken = BTreeMap::new();
                                for (field, value) in &fields {
                                    // The vendor link has its own merge: a person's link beats an automatic one.
                                    let wins = if field == "vendor" {
                                        a.take_vendor_link(id, value, &hlc)?
                                    } else {
                                        a.take_field("contract", &id.to_string(), field, &hlc)?
                                    };
                                    if wins {
                                        taken.insert(field.clone(), value.clone());
                                    }
                                }
                                a.ensure_user(author, author_name.as_deref())?;
                                records = true;
                                a.contract(id, author, &hlc, &fields, &taken)
                            }
                            Op::Report { run, document, author, report } => {
                                a.ensure_user(author, None)?;
                                moved = true;
                                records = true;
                                a.shared_report(&run, &document, author, &report)
                            }
                            Op::Vendor { id, hlc, author, fields } => {
                                let mut taken = BTreeMap::new();
                                for (field, value) in fields {
                                    // The status has its own merge: a merge is final.
                                    let wins = if field == "status" {
                                        a.take_vendor_status(&id, &value, &hlc)?
                                    } else {
                                        a.take_field("vendor", &id, &field, &hlc)?
                                    };
                                    if wins {
                                        taken.insert(field, value);
                                    }
                                }
                                if taken.is_empty() {
                                    continue;
                                }
                                a.ensure_user(author, None)?;
                                records = true;
                                a.vendor(&id, author, &taken)
                            }
                            Op::PrepPackage { id, hlc, author, fields } => {
                                let mut taken = BTreeMap::new();
                                for (field, value) in fields {
                                    if a.take_field("prep_package", &id, &field, &hlc)? {
                                        taken.insert(field, value);
                                    }
                                }
                                if taken.is_empty() {
                                    continue;
                                }
                                a.ensure_user(author, None)?;
                                a.prep_package(&id, author, &taken)
                            }
                            Op::PrepLease { id, lease } => a.prep_lease(&id, &lease),
                            Op::Correction { correction, user_name } => {
                                a.ensure_user(correction.user, user_name.as_deref())?;
                                a.correction(&correction).map(|applied| {
                                    if applied == CorrectionApplied::Applied {
                                        touched.insert(correction.document);
                                        records = true;
                                    }
                                })
                            }
                            // Checked with the same function as a local change before its clock is taken.
                            Op::Setting { key, hlc, value } => a.setting(&key, &hlc, &value).map(|_| ()),
                            // Only the service writes members, and pages come in log order: the latest state wins.
                            Op::Member { member, removed } => a.member(&member, removed),
                            Op::Run { id, hlc, record, status } => {
                                if !a.take_field("run", &id, "record", &hlc)? {
                                    continue;
                                }
                                moved = true;
                                a.shared_run(&id, &record, &status)
                            }
                            Op::Step { id, hlc, run, requester, record, open } => {
                                if !a.take_field("approval_step", &id, "record", &hlc)? {
                                    continue;
                                }
                                a.ensure_user(requester, record.get("requested_by_name").and_then(Value::as_str))?;
                                moved = true;
                                a.shared_approval(&id, &run, requester, &record, open)
                            }
                            // A cancelled run goes with the resumed ones: the round's hook wakes the loop, which
                            // publishes it.
                            Op::Cancel { run, author, author_name, reason } => {
                                a.ensure_user(author, author_name.as_deref())?;
                                moved = true;
                                a.cancel_request(&run, author, &reason).map(|done| {
                                    if let (true, Ok(id)) = (done, run.parse::<RunId>()) {
                                        resumed.insert(id);
                                    }
                                })
                            }
                            Op::Escalation { step, at } => {
                                moved = true;
                                a.approval_escalated(&step, at)
                            }
                            Op::Outcome { request, step, outcome } => {
                                moved = true;
                                a.approval_outcome(&request, &step, &outcome).map(|run| {
                                    resumed.extend(run);
                                })
                            }
                            Op::Skip => Ok(()),
                        };
                        match outcome {
                            Ok(()) => {}
                            // One malformed change is skipped on its own; it never blocks the organization's sync.
                            Err(StoreError::Invalid(why)) => {
                                tracing::warn!(change = %change_id, seq, "remote change skipped: {why}");
                            }
                            Err(other) => return Err(other),
                        }
                    }
                    Ok(())
                })?;
                Ok((touched, resumed, moved, records))
            })
            .map_err(storage)?;
        let (touched, resumed, moved, records) = applied;
        if moved {
            self.runs_moved.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if records {
            self.records_moved.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.touched.lock().unwrap_or_else(|e| e.into_inner()).extend(touched);
        self.resumed.lock().unwrap_or_else(|e| e.into_inner()).extend(resumed);
        Ok(())
    }
}
