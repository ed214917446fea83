//! Graph definitions are data (JSON): typed nodes, reducer channels and (conditional) edges. A definition is
//! validated when it is loaded, against the handlers and graphs a [`crate::Registry`] knows, and a run keeps the
//! definition it started with.

use pactwise_domain::Role;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The name of the channel that holds a run's input.
pub const INPUT_CHANNEL: &str = "input";
/// An edge to this name ends the branch.
pub const END: &str = "end";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphDef {
    pub name: String,
    pub version: u32,
    #[serde(default)]
    pub description: String,
    /// The nodes active in the first super-step.
    pub entry: Vec<String>,
    /// Shared state: each channel's reducer says how writes of one super-step combine.
    #[serde(default)]
    pub channels: BTreeMap<String, Reducer>,
    pub nodes: Vec<NodeDef>,
    #[serde(default)]
    pub edges: Vec<Edge>,
    /// A run still going after this many seconds is stopped by the watchdog.
    #[serde(default)]
    pub deadline_secs: Option<i64>,
    /// The graph's name in people's words ("Procurement").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What a person fills in to start a run: the form of the Runs area, checked before a run starts
    /// (`pactwise_workflows::check_input`). Empty: the graph is started from elsewhere (a document's report).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input: Vec<InputField>,
}

/// One field of a graph's input: where it goes in the input object and how a person fills it in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputField {
    /// The field's place in the input object; dots name nested objects (`vendor.name`). In a table's columns, the
    /// key inside each row.
    pub key: String,
    /// The field's name on the form and in error messages.
    pub label: String,
    pub kind: FieldKind,
    #[serde(default)]
    pub required: bool,
    /// A line of help under the field.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub help: String,
    /// For `choice` (one of them) and `tags` (only these, when given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// For `table`: the fields of each row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<InputField>,
    /// Bounds of a `whole_number`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
}

/// How a field is filled in and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// One line of text.
    Text,
    /// Several lines of text.
    LongText,
    /// An amount in currency units (a number or numeric text; kept exact in cents by the steps).
    Money,
    WholeNumber,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// Yes or no.
    Flag,
    /// One of `options`.
    Choice,
    /// A list of short words (capabilities, documents provided).
    Tags,
    /// A document of the organization, by id.
    Document,
    /// A vendor record of the organization, by id (the Runs form offers the organization's vendors).
    Vendor,
    /// Rows of `columns`.
    Table,
}

/// How writes to a channel combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reducer {
    /// The last write wins (writes of one super-step apply in node order).
    LastValue,
    /// Objects merge key by key; later keys win.
    Merge,
    /// Values are appended to a list (a list written is appended item by item).
    Append,
}

/// A node. (Unknown fields cannot be refused here: serde's `flatten` does not support it.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeDef {
    pub id: String,
    /// The step's name in people's words ("Research vendors"), shown in timelines instead of the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(flatten)]
    pub kind: NodeKind,
    /// Retries of a failing agent node, with exponential backoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryPolicy>,
    /// A handler that undoes this node's effect when the run fails later (saga compensation, reverse order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensate: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NodeKind {
    /// Runs a handler (rule-based code; it may ask the model through the gateway with the mode and prompt given
    /// here, never from run input).
    Agent {
        handler: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<ModelSpec>,
    },
    /// Runs a deterministic rule that names the route to take; edges with `when` pick the branch.
    Condition { handler: String },
    /// Pauses the run until an eligible person decides; routes `approved` or `rejected`.
    Approval(ApprovalSpec),
    /// Pauses the run for a number of seconds (by the injected clock).
    Wait { seconds: i64 },
    /// Runs another graph as a child run and waits for it; the child's channels are written to `output`, and the
    /// route is the child's final status (`succeeded`, `failed`, `cancelled`).
    Subgraph {
        graph: String,
        /// Channels copied into the child's input.
        #[serde(default)]
        input: Vec<String>,
        output: String,
    },
    /// Undoes every completed step (reverse order) and ends the run as failed with `reason`.
    Compensate { reason: String },
}

/// The model's part in an agent node: fixed by the graph definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// A short stable name for the ledger (`draft_agreement`).
    pub mode: String,
    /// The instruction; run data is attached as fenced, untrusted documents.
    pub prompt: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSpec {
    pub title: String,
    #[serde(default = "default_approvers")]
    pub eligible_roles: Vec<Role>,
    /// One person may not decide two steps of the same run.
    #[serde(default)]
    pub four_eyes: bool,
    #[serde(default)]
    pub due_secs: Option<i64>,
    /// After this long without a decision, one urgent notification goes out.
    #[serde(default)]
    pub escalate_after_secs: Option<i64>,
    /// Channels shown to the approver and recorded as the state they saw.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// A channel holding a list of options (strings, or objects with a `name`) the approver picks from.
    #[serde(default)]
    pub choices_from: Option<String>,
    /// The channel the decision is written to.
    pub output: String,
}

fn default_approvers() -> Vec<Role> {
    vec![Role::Owner, Role::Admin, Role::Approver]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in all, including the first (1 = no retry).
    pub max_attempts: u32,
    #[serde(default = "default_backoff_ms")]
    pub backoff_ms: u64,
    #[serde(default = "default_max_backoff_ms")]
    pub max_backoff_ms: u64,
}

fn default_backoff_ms() -> u64 {
    1_000
}

fn default_max_backoff_ms() -> u64 {
    300_000
}

impl RetryPolicy {
    pub const NONE: RetryPolicy = RetryPolicy { max_attempts: 1, backoff_ms: 1_000, max_backoff_ms: 300_000 };

    /// The wait before attempt `failed + 1` after `failed` failures: backoff × 2^(failed−1), capped.
    pub fn backoff(&self, failed: u32) -> chrono::Duration {
        let factor = 1u64.checked_shl(failed.saturating_sub(1)).unwrap_or(u64::MAX);
        let ms = self.backoff_ms.saturating_mul(factor).min(self.max_backoff_ms);
        chrono::Duration::milliseconds(ms as i64)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: String,
    pub to: String,
    /// Taken only when the `from` node's route is this label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

impl GraphDef {
    pub fn node(&self, id: &str) -> Option<&NodeDef> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn reducer(&self, channel: &str) -> Option<Reducer> {
        if channel == INPUT_CHANNEL { Some(Reducer::LastValue) } else { self.channels.get(channel).copied() }
    }

    /// Checks the definition on its own: ids, edges, channels, routes, retry policies, reachability. Handler and
    /// subgraph names are checked by [`crate::Registry::add_graph`].
    pub fn validate(&self) -> Result<(), String> {
        let name = &self.name;
        if name.trim().is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("graph name {name:?} must be letters, digits, '_' or '-'"));
        }
        let mut ids = BTreeSet::new();
        for n in &self.nodes {
            if n.id.is_empty() || n.id == END || n.id == INPUT_CHANNEL || n.id.contains('/') {
                return Err(format!("{name}: node id {:?} is not allowed", n.id));
            }
            if !ids.insert(n.id.as_str()) {
                return Err(format!("{name}: node {:?} is defined twice", n.id));
            }
        }
        if self.entry.is_empty() {
            return Err(format!("{name}: no entry node"));
        }
        for e in &self.entry {
            if !ids.contains(e.as_str()) {
                return Err(format!("{name}: entry node {e:?} does not exist"));
            }
        }
        if self.channels.contains_key(INPUT_CHANNEL) {
            return Err(format!("{name}: the channel {INPUT_CHANNEL:?} is reserved for the run's input"));
        }
        let channel = |c: &str, what: &str| -> Result<(), String> {
            if self.reducer(c).is_none() {
                return Err(format!("{name}: {what} uses channel {c:?}, which is not declared"));
            }
            Ok(())
        };
        for e in &self.edges {
            if !ids.contains(e.from.as_str()) {
                return Err(format!("{name}: edge from unknown node {:?}", e.from));
            }
            if e.to != END && !ids.contains(e.to.as_str()) {
                return Err(format!("{name}: edge to unknown node {:?}", e.to));
            }
        }
        for n in &self.nodes {
            let labels: BTreeSet<&str> =
                self.edges.iter().filter(|e| e.from == n.id).filter_map(|e| e.when.as_deref()).collect();
            match &n.kind {
                NodeKind::Condition { .. } if labels.is_empty() => {
                    return Err(format!("{name}: condition {:?} has no edge with `when`", n.id));
                }
                NodeKind::Approval(spec) => {
                    if let Some(bad) = labels.iter().find(|l| !matches!(**l, "approved" | "rejected")) {
                        return Err(format!("{name}: approval {:?} routes only approved/rejected, not {bad:?}", n.id));
                    }
                    if spec.eligible_roles.is_empty() {
                        return Err(format!("{name}: approval {:?} names no eligible role", n.id));
                    }
                    if spec.eligible_roles.contains(&Role::Viewer) {
                        return Err(format!("{name}: approval {:?}: viewers cannot approve", n.id));
                    }
                    channel(&spec.output, &format!("approval {:?}", n.id))?;
                    for c in spec.evidence.iter().chain(spec.choices_from.iter()) {
                        channel(c, &format!("approval {:?}", n.id))?;
                    }
                }
                NodeKind::Subgraph { input, output, graph } => {
                    if graph == &self.name {
                        return Err(format!("{name}: subgraph {:?} runs its own graph", n.id));
                    }
                    channel(output, &format!("subgraph {:?}", n.id))?;
                    for c in input {
                        channel(c, &format!("subgraph {:?}", n.id))?;
                    }
                }
                NodeKind::Wait { seconds } if *seconds < 0 => {
                    return Err(format!("{name}: wait {:?} has a negative duration", n.id));
                }
                _ => {}
            }
            if let Some(r) = &n.retry
                && !(1..=20).contains(&r.max_attempts)
            {
                return Err(format!("{name}: node {:?}: max_attempts must be 1..=20", n.id));
            }
            if n.retry.is_some() && !matches!(n.kind, NodeKind::Agent { .. }) {
                return Err(format!("{name}: node {:?}: only agent nodes retry", n.id));
            }
        }
        // Every node must be reachable from the entry.
        let mut seen: BTreeSet<&str> = self.entry.iter().map(String::as_str).collect();
        let mut todo: Vec<&str> = seen.iter().copied().collect();
        while let Some(n) = todo.pop() {
            for e in self.edges.iter().filter(|e| e.from == n && e.to != END) {
                if seen.insert(e.to.as_str()) {
                    todo.push(e.to.as_str());
                }
            }
        }
        if let Some(lost) = self.nodes.iter().find(|n| !seen.contains(n.id.as_str())) {
            return Err(format!("{name}: node {:?} cannot be reached from the entry", lost.id));
        }
        validate_fields(name, &self.input, false)
    }
}

/// The input form's declaration: keys unique and well formed, choices with options, tables with plain columns.
fn validate_fields(graph: &str, fields: &[InputField], in_table: bool) -> Result<(), String> {
    let mut keys = BTreeSet::new();
    for f in fields {
        let well_formed = !f.key.is_empty()
            && f.key.split('.').all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && part != INPUT_CHANNEL
            });
        if !well_formed || (in_table && f.key.contains('.')) {
            return Err(format!("{graph}: input field key {:?} is not allowed", f.key));
        }
        if !keys.insert(f.key.as_str()) {
            return Err(format!("{graph}: input field {:?} is declared twice", f.key));
        }
        if f.label.trim().is_empty() {
            return Err(format!("{graph}: input field {:?} has no label", f.key));
        }
        match f.kind {
            FieldKind::Choice if f.options.is_empty() => {
                return Err(format!("{graph}: choice field {:?} has no options", f.key));
            }
            FieldKind::Table if in_table || f.columns.is_empty() => {
                return Err(format!("{graph}: table field {:?} needs columns (and no table inside a table)", f.key));
            }
            FieldKind::Table => validate_fields(graph, &f.columns, true)?,
            _ if !f.columns.is_empty() => {
                return Err(format!("{graph}: only a table field has columns ({:?})", f.key));
            }
            _ => {}
        }
        if let (Some(min), Some(max)) = (f.min, f.max)
            && min > max
        {
            return Err(format!("{graph}: input field {:?} has min above max", f.key));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(json: serde_json::Value) -> Result<(), String> {
        serde_json::from_value::<GraphDef>(json).map_err(|e| e.to_string())?.validate()
    }

    #[test]
    fn a_declared_input_form_is_checked_when_the_graph_loads() {
        let with = |input: serde_json::Value| {
            graph(serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "input": input,
                "nodes": [{"id": "a", "kind": "wait", "seconds": 1}]}))
        };
        assert_eq!(with(serde_json::json!([{"key": "vendor.name", "label": "Vendor", "kind": "text"}])), Ok(()));
        let refused = [
            (serde_json::json!([{"key": "x", "label": "X", "kind": "choice"}]), "no options"),
            (serde_json::json!([{"key": "t", "label": "T", "kind": "table"}]), "needs columns"),
            (serde_json::json!([{"key": "a..b", "label": "A", "kind": "text"}]), "not allowed"),
            (
                serde_json::json!([{"key": "a", "label": "A", "kind": "text"}, {"key": "a", "label": "B", "kind": "text"}]),
                "twice",
            ),
            (
                serde_json::json!([{"key": "n", "label": "N", "kind": "whole_number", "min": 5, "max": 1}]),
                "min above max",
            ),
            (serde_json::json!([{"key": "a", "label": " ", "kind": "text"}]), "no label"),
        ];
        for (input, words) in refused {
            let e = with(input.clone()).expect_err(&input.to_string());
            assert!(e.contains(words), "{e} / {words}");
        }
    }

    #[test]
    fn a_minimal_graph_validates() {
        graph(serde_json::json!({
            "name": "g", "version": 1, "entry": ["a"], "channels": {"log": "append"},
            "nodes": [{"id": "a", "kind": "agent", "handler": "h"}], "edges": [{"from": "a", "to": "end"}]
        }))
        .unwrap();
    }

    #[test]
    fn broken_graphs_are_refused_with_the_reason() {
        let cases = [
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["x"], "nodes": [{"id": "a", "kind": "agent", "handler": "h"}]}),
                "entry node",
            ),
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "nodes": [{"id": "a", "kind": "agent", "handler": "h"}, {"id": "b", "kind": "agent", "handler": "h"}]}),
                "cannot be reached",
            ),
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "nodes": [{"id": "a", "kind": "agent", "handler": "h"}], "edges": [{"from": "a", "to": "zz"}]}),
                "unknown node",
            ),
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "nodes": [{"id": "a", "kind": "condition", "handler": "h"}]}),
                "no edge with `when`",
            ),
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "nodes": [{"id": "a", "kind": "approval", "title": "t", "output": "nope"}]}),
                "not declared",
            ),
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "nodes": [{"id": "a", "kind": "agent", "handler": "h", "retry": {"max_attempts": 0}}]}),
                "max_attempts",
            ),
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "nodes": [{"id": "a", "kind": "agent", "handler": "h"}, {"id": "a", "kind": "agent", "handler": "h"}]}),
                "twice",
            ),
            (
                serde_json::json!({"name": "g", "version": 1, "entry": ["a"], "nodes": [{"id": "a", "kind": "agent", "handler": "h"}], "surprise": 1}),
                "unknown field",
            ),
        ];
        for (json, expected) in cases {
            let err = graph(json.clone()).expect_err(&json.to_string());
            assert!(err.contains(expected), "{json}: {err}");
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy { max_attempts: 5, backoff_ms: 100, max_backoff_ms: 350 };
        let ms: Vec<i64> = (1..=4).map(|n| p.backoff(n).num_milliseconds()).collect();
        assert_eq!(ms, vec![100, 200, 350, 350]);
    }
}
