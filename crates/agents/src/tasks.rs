//! Follow-up work on the organization's task queue: what a task asks for ([`TaskWork`]), the one rule of how
//! deep follow-ups go ([`may_follow_up`]) and the pure handler a worker runs ([`run_task`]). A worker (the api's,
//! in the desktop's work loop and `pactwise runs work`) claims tasks, runs this under its timeout, and finishes
//! each with its outcome in one transaction.

use crate::facts::ContractFacts;
use crate::steps::{FollowUp, compliance_of};
use serde::{Deserialize, Serialize};

/// The `action` of every task the agents queue; workers claim only these (other handoffs are not the agents').
pub const ACTION: &str = "agent.follow_up";
/// Follow-ups nest this deep at most: a step's follow-up runs; a follow-up's own follow-up is not queued.
pub const MAX_DEPTH: u8 = 1;

/// The one rule of nesting: may work at `depth` (0: a plan's step) queue a follow-up?
pub fn may_follow_up(depth: u8) -> bool {
    depth < MAX_DEPTH
}

/// What a task asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskWork {
    /// Leave a notice for the organization (the inbox's list; `urgent` ones also as a desktop notification).
    Notice { title: String, message: String, urgent: bool },
    /// List the regulatory references of a contract's items hit.
    ComplianceCheck { contract: ContractFacts },
    /// Start a built-in workflow with this input (checked against its form by the worker before it starts).
    StartWorkflow { graph: String, title: String, input: serde_json::Value },
}

/// A task's payload as queued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskPayload {
    /// Always [`ACTION`].
    pub action: String,
    /// 1 for a step's follow-up.
    pub depth: u8,
    /// Why it was queued, in words.
    pub why: String,
    pub work: TaskWork,
}

impl TaskPayload {
    pub fn of(follow_up: &FollowUp, depth: u8) -> TaskPayload {
        TaskPayload { action: ACTION.into(), depth, why: follow_up.why.clone(), work: follow_up.work.clone() }
    }
}

/// A notice to leave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub message: String,
    pub urgent: bool,
}

/// A workflow a task starts: the worker checks the input against the graph's form and starts it for the task's
/// organization.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowStart {
    pub graph: String,
    pub title: String,
    pub input: serde_json::Value,
}

/// What a task did.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutcome {
    /// In words.
    pub result: String,
    pub notices: Vec<Notice>,
    /// Follow-ups to queue (only when [`may_follow_up`] allows), with their depth.
    pub follow_ups: Vec<(FollowUp, u8)>,
    /// A workflow to start (the worker says in the result whether it did).
    pub start: Option<WorkflowStart>,
}

/// Runs a task's work. `Err` says why it could not (an unreadable payload: the task fails with that reason).
pub fn run_task(payload: &serde_json::Value) -> Result<TaskOutcome, String> {
    let payload: TaskPayload = serde_json::from_value(payload.clone())
        .map_err(|e| format!("the task's payload is not one the agents read ({e}); it was not run"))?;
    if payload.action != ACTION {
        return Err(format!("the task's action {:?} is not the agents'; it was not run", payload.action));
    }
    let _span = tracing::debug_span!("agents.task", depth = payload.depth).entered();
    match payload.work {
        TaskWork::Notice { title, message, urgent } => Ok(TaskOutcome {
            result: format!("Left a notice: {title}."),
            notices: vec![Notice { title, message, urgent }],
            follow_ups: Vec::new(),
            start: None,
        }),
        TaskWork::StartWorkflow { graph, title, input } => Ok(TaskOutcome {
            result: String::new(),
            notices: Vec::new(),
            follow_ups: Vec::new(),
            start: Some(WorkflowStart { graph, title, input }),
        }),
        TaskWork::ComplianceCheck { contract } => {
            let out = compliance_of(std::slice::from_ref(&contract));
            let mut result = out.summary.clone();
            for f in &out.findings {
                result.push(' ');
                result.push_str(f);
            }
            // The references found would be worth a notice, a follow-up of this follow-up: not queued.
            let wanted = FollowUp {
                agent: crate::AgentType::Notifications,
                key: format!("compliance-notice/{}", contract.document),
                why: format!("Compliance found references in {}.", contract.reference),
                work: TaskWork::Notice {
                    title: format!("Compliance: {}", contract.reference),
                    message: out.summary,
                    urgent: false,
                },
                not_before: None,
            };
            let mut follow_ups = Vec::new();
            if out.findings.is_empty() {
            } else if may_follow_up(payload.depth) {
                follow_ups.push((wanted, payload.depth + 1));
            } else {
                result.push_str(" (A notice about it was not queued: follow-ups go one level deep.)");
            }
            Ok(TaskOutcome { result, notices: Vec::new(), follow_ups, start: None })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::ItemFacts;

    #[test]
    fn a_follow_up_of_a_follow_up_is_not_queued() {
        assert!(may_follow_up(0) && !may_follow_up(1) && !may_follow_up(2));
        let contract = ContractFacts {
            reference: "DPA-2026-001".into(),
            document: "d1".into(),
            items: vec![ItemFacts {
                question: "Are sub-processors approved?".into(),
                risk: "critical".into(),
                status: "absent".into(),
                red_flags: vec![],
                regulatory: vec!["GDPR Art. 28(2)".into()],
                page: None,
            }],
            ..ContractFacts::default()
        };
        let payload = serde_json::to_value(TaskPayload {
            action: ACTION.into(),
            depth: 1,
            why: "test".into(),
            work: TaskWork::ComplianceCheck { contract },
        })
        .unwrap();
        let out = run_task(&payload).unwrap();
        assert!(out.follow_ups.is_empty());
        assert!(out.result.contains("GDPR Art. 28(2)") && out.result.contains("one level deep"), "{}", out.result);
    }

    #[test]
    fn unreadable_payloads_are_refused_with_the_reason() {
        let e = run_task(&serde_json::json!({"action": "pay_invoice"})).unwrap_err();
        assert!(e.contains("not one the agents read"), "{e}");
        let e = run_task(&serde_json::json!({"action": "x", "depth": 1, "why": "", "work": {"kind": "notice", "title": "t", "message": "m", "urgent": false}})).unwrap_err();
        assert!(e.contains("not the agents'"), "{e}");
    }
}
