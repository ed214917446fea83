//! The manager's plan compiled into a graph on the engine: one agent node per step (handler `agents.<type>`),
//! in levels — a step runs in the super-step after the last of the steps it depends on — so steps of one level
//! run side by side and every dependency is done before its dependants start. The graph carries no request data
//! (that is the run's input), so plans with the same steps share one snapshot. The agents' default processing is
//! rule-based; an agent's model part comes only from the built-in graph definition (`draft::model_parts`), never
//! from a request, and is used only when a model is configured.

use crate::manager::Plan;
use crate::registry::AgentType;
use pactwise_engine::{Edge, GraphDef, NodeDef, NodeKind, Reducer};
use std::collections::BTreeMap;

/// The name of every compiled plan's graph.
pub const PLAN_GRAPH: &str = "agent_plan";
/// The channel the steps write their outputs to (merged by agent id).
pub const STEPS_CHANNEL: &str = "steps";
/// A run of a plan still going after this long is stopped by the watchdog.
pub const PLAN_DEADLINE_SECS: i64 = 3600;

/// The handler name of an agent's step.
pub fn handler_name(agent: AgentType) -> String {
    format!("agents.{}", agent.id())
}

/// Each step's level: 0 without dependencies, else one after its latest dependency.
pub fn levels(plan: &Plan) -> BTreeMap<AgentType, usize> {
    let mut level = BTreeMap::new();
    // Steps are in plan order and depend only on earlier ones (the registry's rule), so one pass is enough.
    for s in &plan.steps {
        let l = s.depends_on.iter().filter_map(|d| level.get(d)).map(|l| l + 1).max().unwrap_or(0);
        level.insert(s.agent, l);
    }
    level
}

/// The plan as a graph. `None` for a plan without steps (nothing to run).
pub fn compile(plan: &Plan) -> Option<GraphDef> {
    if plan.steps.is_empty() {
        return None;
    }
    let level = levels(plan);
    let depth = level.values().copied().max().unwrap_or(0);
    let at = |l: usize| -> Vec<String> {
        plan.steps.iter().filter(|s| level[&s.agent] == l).map(|s| s.agent.id().to_string()).collect()
    };
    let nodes = plan
        .steps
        .iter()
        .map(|s| NodeDef {
            id: s.agent.id().into(),
            label: Some(s.agent.name().into()),
            kind: NodeKind::Agent {
                handler: handler_name(s.agent),
                model: crate::draft::model_parts().get(&s.agent).cloned(),
            },
            retry: None,
            compensate: None,
        })
        .collect();
    let mut edges = Vec::new();
    for l in 0..depth {
        for from in at(l) {
            for to in at(l + 1) {
                edges.push(Edge { from: from.clone(), to, when: None });
            }
        }
    }
    Some(GraphDef {
        name: PLAN_GRAPH.into(),
        version: 1,
        description: "A request planned by the manager: the agents in the seed's order.".into(),
        entry: at(0),
        channels: BTreeMap::from([(STEPS_CHANNEL.to_string(), Reducer::Merge)]),
        nodes,
        edges,
        deadline_secs: Some(PLAN_DEADLINE_SECS),
        title: Some("Request to the agents".into()),
        input: Vec::new(),
    })
}
