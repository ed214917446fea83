//! Workflow runs and their approval steps as the organization's other desktops see them. A run executes on the
//! desktop that started it (its home); the home desktop publishes each run's summary and timeline (model `run`) and
//! each approval step (model `approval_step`) as last-writer-wins fields, always whole, so the record a desktop
//! merges is the home's latest. Every reader checks a record at the edge ([`SharedApproval::from_fields`],
//! [`SharedRun::from_fields`]): synced data is untrusted input. The sync service reads an approval step's first
//! publication to pin who requested it, its run, its eligible roles and four-eyes; decisions stay
//! `ApprovalDecision` requests that the service stamps.

use chrono::{DateTime, Utc};
use pactwise_domain::{Role, RunStatus, UserId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The longest title, step or graph name accepted from another desktop.
pub const MAX_NAME_CHARS: usize = 300;
/// The most choices an approval step may offer.
pub const MAX_CHOICES: usize = 50;
/// The most timeline entries a published run carries (the latest ones).
pub const MAX_TIMELINE: usize = 60;
/// The most characters of one timeline entry's details kept when publishing.
pub const MAX_DETAIL_CHARS: usize = 600;

/// Where an approval step stands, as its home desktop knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedStepStatus {
    /// Waiting for a decision.
    Open,
    /// Decided (the decision itself is the service's stamp on an `ApprovalDecision` request).
    Decided,
    /// The run was cancelled or ended without it: it takes no decision.
    Closed,
}

/// An approval step published by its run's home desktop (record id: the step's id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedApproval {
    pub run_id: Uuid,
    pub graph: String,
    pub node: String,
    pub title: String,
    pub eligible_roles: Vec<Role>,
    pub four_eyes: bool,
    pub choices: Vec<String>,
    /// What the approver reads: the run's state when the step paused.
    pub evidence: Value,
    pub status: SharedStepStatus,
    /// The person who started the run, by name (a hint for display; the service pins the requester by token).
    pub requested_by_name: Option<String>,
    pub due_at: Option<DateTime<Utc>>,
    /// When the step was escalated: by the sync service (an [`Escalation`]) when the organization syncs.
    pub escalated_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// How long after its first publication the step escalates if still undecided (the graph's
    /// `escalate_after_secs`); the service pins it from the first publication and keeps the time by its own clock.
    #[serde(default)]
    pub escalate_after_secs: Option<u64>,
}

/// The longest escalation delay a published step may ask for (a year).
pub const MAX_ESCALATE_AFTER_SECS: u64 = 366 * 24 * 3600;

/// The service's escalation of an approval step (model `approval_escalation`, an event; record id: the step's id), written
/// once when the step waited past its escalation time, by the service's clock. It makes the step urgent on every
/// desktop; it never decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Escalation {
    pub run_id: Uuid,
    pub escalated_at: DateTime<Utc>,
}

impl Escalation {
    /// The escalation as its change's event (an append-only record).
    pub fn to_event(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub fn from_event(event: &Value) -> Result<Self, String> {
        serde_json::from_value(event.clone()).map_err(|e| format!("an escalation is malformed: {e}"))
    }
}

/// One line of a published run's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedRunEvent {
    pub kind: String,
    pub node: Option<String>,
    pub details: Value,
    pub at: DateTime<Utc>,
}

/// A run published by its home desktop (record id: the run's id). Read-only elsewhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedRun {
    pub graph: String,
    pub status: RunStatus,
    pub reason: Option<String>,
    pub started_by: Option<UserId>,
    pub started_by_name: Option<String>,
    /// The steps the run waits on, by title.
    pub waiting_for: Vec<String>,
    /// The latest [`MAX_TIMELINE`] events, oldest first.
    pub timeline: Vec<SharedRunEvent>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

fn name(what: &str, text: &str) -> Result<(), String> {
    let n = text.chars().count();
    if text.trim().is_empty() || n > MAX_NAME_CHARS {
        return Err(format!("its {what} must be 1 to {MAX_NAME_CHARS} characters"));
    }
    if text.chars().any(|c| c.is_control()) {
        return Err(format!("its {what} holds control characters"));
    }
    Ok(())
}

fn to_fields<T: Serialize>(record: &T) -> BTreeMap<String, Value> {
    match serde_json::to_value(record) {
        Ok(Value::Object(map)) => map.into_iter().collect(),
        _ => BTreeMap::new(),
    }
}

fn from_fields<T: for<'de> Deserialize<'de>>(what: &str, fields: &BTreeMap<String, Value>) -> Result<T, String> {
    let object: serde_json::Map<String, Value> = fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    serde_json::from_value(Value::Object(object)).map_err(|e| format!("a published {what} is malformed: {e}"))
}

impl SharedApproval {
    pub fn to_fields(&self) -> BTreeMap<String, Value> {
        to_fields(self)
    }

    /// Reads and checks a published step (all its fields, as merged).
    pub fn from_fields(fields: &BTreeMap<String, Value>) -> Result<Self, String> {
        let step: SharedApproval = from_fields("approval step", fields)?;
        step.check()?;
        Ok(step)
    }

    pub fn check(&self) -> Result<(), String> {
        name("workflow name", &self.graph)?;
        name("step name", &self.node)?;
        name("title", &self.title)?;
        pactwise_rules::approval::check_eligible_roles(&self.eligible_roles)?;
        if self.choices.len() > MAX_CHOICES {
            return Err(format!("it offers more than {MAX_CHOICES} choices"));
        }
        for choice in &self.choices {
            name("choice", choice)?;
        }
        if let Some(n) = &self.requested_by_name {
            name("requester's name", n)?;
        }
        if self.escalate_after_secs.is_some_and(|secs| secs == 0 || secs > MAX_ESCALATE_AFTER_SECS) {
            return Err(format!("its escalation delay must be 1 second to {MAX_ESCALATE_AFTER_SECS} seconds"));
        }
        Ok(())
    }
}

impl SharedRun {
    pub fn to_fields(&self) -> BTreeMap<String, Value> {
        to_fields(self)
    }

    pub fn from_fields(fields: &BTreeMap<String, Value>) -> Result<Self, String> {
        let run: SharedRun = from_fields("run", fields)?;
        run.check()?;
        Ok(run)
    }

    pub fn check(&self) -> Result<(), String> {
        name("workflow name", &self.graph)?;
        if let Some(n) = &self.started_by_name {
            name("starter's name", n)?;
        }
        if self.timeline.len() > MAX_TIMELINE {
            return Err(format!("its timeline holds more than {MAX_TIMELINE} entries"));
        }
        for event in &self.timeline {
            name("timeline entry", &event.kind)?;
        }
        for step in &self.waiting_for {
            name("waiting step", step)?;
        }
        Ok(())
    }
}

/// Cuts a timeline entry's details to what a published run may carry: long strings are shortened, and details
/// whose JSON is still too long are replaced by a note saying so.
pub fn trim_details(details: &Value) -> Value {
    fn shorten(v: &Value) -> Value {
        match v {
            Value::String(s) if s.chars().count() > MAX_DETAIL_CHARS => {
                Value::String(s.chars().take(MAX_DETAIL_CHARS).chain("…".chars()).collect())
            }
            Value::Array(items) => Value::Array(items.iter().take(20).map(shorten).collect()),
            Value::Object(map) => Value::Object(map.iter().take(20).map(|(k, v)| (k.clone(), shorten(v))).collect()),
            other => other.clone(),
        }
    }
    let short = shorten(details);
    if serde_json::to_string(&short).map(|s| s.len()).unwrap_or(usize::MAX) > 4 * MAX_DETAIL_CHARS {
        return Value::String("(details kept on the desktop that runs this workflow)".into());
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step() -> SharedApproval {
        SharedApproval {
            run_id: Uuid::nil(),
            graph: "procurement".into(),
            node: "choose_vendor".into(),
            title: "Choose the vendor".into(),
            eligible_roles: vec![Role::Owner, Role::Approver],
            four_eyes: false,
            choices: vec!["Acme".into()],
            evidence: json!({"shortlist": [{"vendor": "Acme"}]}),
            status: SharedStepStatus::Open,
            requested_by_name: Some("Bea Buyer".into()),
            due_at: None,
            escalated_at: None,
            created_at: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            escalate_after_secs: Some(172_800),
        }
    }

    #[test]
    fn a_step_round_trips_through_fields_and_bad_ones_are_refused_with_the_reason() {
        let s = step();
        assert_eq!(SharedApproval::from_fields(&s.to_fields()).unwrap(), s);
        let mut fields = s.to_fields();
        fields.insert("eligible_roles".into(), json!(["viewer"]));
        assert!(SharedApproval::from_fields(&fields).unwrap_err().contains("viewer"));
        let mut fields = s.to_fields();
        fields.insert("org_id".into(), json!("someone else's"));
        assert!(SharedApproval::from_fields(&fields).unwrap_err().contains("malformed"), "unknown fields refused");
        let mut fields = s.to_fields();
        fields.remove("title");
        assert!(SharedApproval::from_fields(&fields).is_err());
        let long = SharedApproval { title: "x".repeat(MAX_NAME_CHARS + 1), ..step() };
        assert!(long.check().unwrap_err().contains("title"));
        let never = SharedApproval { escalate_after_secs: Some(0), ..step() };
        assert!(never.check().unwrap_err().contains("escalation delay"));
        let too_late = SharedApproval { escalate_after_secs: Some(MAX_ESCALATE_AFTER_SECS + 1), ..step() };
        assert!(too_late.check().is_err());
        // A step published before the delay travelled has none.
        let mut fields = s.to_fields();
        fields.remove("escalate_after_secs");
        assert_eq!(SharedApproval::from_fields(&fields).unwrap().escalate_after_secs, None);
    }

    #[test]
    fn an_escalation_round_trips_and_refuses_what_it_does_not_know() {
        let e = Escalation { run_id: Uuid::nil(), escalated_at: DateTime::from_timestamp(1_800_000_000, 0).unwrap() };
        assert_eq!(Escalation::from_event(&e.to_event()).unwrap(), e);
        let mut event = e.to_event();
        event["decision"] = json!("approve");
        assert!(Escalation::from_event(&event).is_err(), "an escalation never carries a decision");
    }

    #[test]
    fn long_details_are_shortened_before_they_travel() {
        let d = trim_details(&json!({"reason": "r".repeat(5000), "n": 3}));
        assert!(d["reason"].as_str().unwrap().chars().count() <= MAX_DETAIL_CHARS + 1);
        assert_eq!(d["n"], 3);
        let huge = json!((0..20).map(|i| json!({"k": "v".repeat(500), "i": i})).collect::<Vec<_>>());
        assert!(trim_details(&huge).is_string());
    }
}
