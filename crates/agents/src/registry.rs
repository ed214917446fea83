//! The ten agent types as typed values: what each one does and which agents' outputs it reads. The dependencies
//! follow the seed: document extraction (OCR) before legal, financial and vendor; analytics after those data
//! providers; notifications after analytics.

use serde::{Deserialize, Serialize};

/// One of the ten agent types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentType {
    Ocr,
    Legal,
    Financial,
    Vendor,
    Compliance,
    Workflow,
    Secretary,
    Analytics,
    Notifications,
    Manager,
}

impl AgentType {
    /// Every agent type, in the order a plan runs them (the manager, which makes the plan, last).
    pub const ALL: [AgentType; 10] = [
        AgentType::Ocr,
        AgentType::Legal,
        AgentType::Financial,
        AgentType::Vendor,
        AgentType::Compliance,
        AgentType::Workflow,
        AgentType::Secretary,
        AgentType::Analytics,
        AgentType::Notifications,
        AgentType::Manager,
    ];

    /// The name used in plans, configuration and the command line (`ocr`, `legal`, …).
    pub fn id(self) -> &'static str {
        match self {
            AgentType::Ocr => "ocr",
            AgentType::Legal => "legal",
            AgentType::Financial => "financial",
            AgentType::Vendor => "vendor",
            AgentType::Compliance => "compliance",
            AgentType::Workflow => "workflow",
            AgentType::Secretary => "secretary",
            AgentType::Analytics => "analytics",
            AgentType::Notifications => "notifications",
            AgentType::Manager => "manager",
        }
    }

    /// The agent type named `id`, if any.
    pub fn from_id(id: &str) -> Option<AgentType> {
        AgentType::ALL.into_iter().find(|a| a.id() == id.trim().to_ascii_lowercase())
    }

    /// The agent's name in people's words.
    pub fn name(self) -> &'static str {
        match self {
            AgentType::Ocr => "Document reading (OCR)",
            AgentType::Legal => "Legal",
            AgentType::Financial => "Financial",
            AgentType::Vendor => "Vendor",
            AgentType::Compliance => "Compliance",
            AgentType::Workflow => "Workflow",
            AgentType::Secretary => "Secretary",
            AgentType::Analytics => "Analytics",
            AgentType::Notifications => "Notifications",
            AgentType::Manager => "Manager",
        }
    }

    /// The agent's job, in one sentence.
    pub fn job(self) -> &'static str {
        match self {
            AgentType::Ocr => "Reads the documents' text, scans through OCR, so the other agents work from it.",
            AgentType::Legal => "Reviews the contract against its type's checklist and reports the red flags.",
            AgentType::Financial => {
                "Checks value, pricing, payment terms and the budget, every figure computed by code."
            }
            AgentType::Vendor => {
                "Matches the vendors named to the organization's records and follows their onboarding state."
            }
            AgentType::Compliance => "Lists the regulatory references of the checklist items the contract hits.",
            AgentType::Workflow => {
                "Starts the built-in workflow that does the request's work (onboarding, invoices, budgets)."
            }
            AgentType::Secretary => "Keeps the dates: deadlines, reminders and the calendar.",
            AgentType::Analytics => "Summarises the risk over the other agents' outputs.",
            AgentType::Notifications => "Puts the outcome in the inbox and sends the native notification.",
            AgentType::Manager => "Turns a request into a plan: the request type, what it names, the agents in order.",
        }
    }

    /// The agent types whose output this one reads, when they are in the same plan.
    pub fn depends_on(self) -> &'static [AgentType] {
        match self {
            AgentType::Ocr | AgentType::Manager => &[],
            AgentType::Legal | AgentType::Financial | AgentType::Vendor | AgentType::Secretary => &[AgentType::Ocr],
            AgentType::Compliance => &[AgentType::Ocr, AgentType::Legal],
            AgentType::Workflow => &[AgentType::Ocr, AgentType::Financial, AgentType::Vendor],
            AgentType::Analytics => {
                &[AgentType::Legal, AgentType::Financial, AgentType::Vendor, AgentType::Compliance, AgentType::Workflow]
            }
            AgentType::Notifications => &[AgentType::Analytics],
        }
    }

    /// Whether the agent reads thresholds from the organization's agent configuration.
    pub fn has_thresholds(self) -> bool {
        matches!(
            self,
            AgentType::Secretary
                | AgentType::Analytics
                | AgentType::Vendor
                | AgentType::Notifications
                | AgentType::Financial
                | AgentType::Manager
        )
    }
}

impl std::fmt::Display for AgentType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// One agent type as the registry lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentSpec {
    pub agent: AgentType,
    pub name: &'static str,
    pub job: &'static str,
    pub depends_on: Vec<AgentType>,
    /// The agents' default processing mode (the seed): rule-based (`rules`). An agent with a model part in the plan's
    /// graph definition (`draft::model_parts`) is `rules+model draft`: with a model configured, the model drafts its
    /// summary and code checks it.
    pub mode: &'static str,
    pub has_thresholds: bool,
}

/// The registry: the ten agent types in plan order.
pub fn registry() -> Vec<AgentSpec> {
    AgentType::ALL
        .into_iter()
        .map(|agent| AgentSpec {
            agent,
            name: agent.name(),
            job: agent.job(),
            depends_on: agent.depends_on().to_vec(),
            mode: if crate::draft::model_parts().contains_key(&agent) { "rules+model draft" } else { "rules" },
            has_thresholds: agent.has_thresholds(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_agent_types_with_unique_ids_that_read_back() {
        let ids: std::collections::BTreeSet<_> = AgentType::ALL.iter().map(|a| a.id()).collect();
        assert_eq!(ids.len(), 10);
        for a in AgentType::ALL {
            assert_eq!(AgentType::from_id(a.id()), Some(a));
            assert_eq!(serde_json::to_value(a).unwrap(), serde_json::json!(a.id()));
        }
        assert_eq!(AgentType::from_id(" Legal "), Some(AgentType::Legal));
        assert_eq!(AgentType::from_id("lawyer"), None);
    }

    #[test]
    fn dependencies_point_backwards_in_plan_order() {
        // The seed's order: extraction before legal, financial and vendor; analytics after them; notifications last.
        for a in AgentType::ALL {
            for d in a.depends_on() {
                assert!(d < &a, "{a} depends on {d}, which runs after it");
            }
        }
        for a in [AgentType::Legal, AgentType::Financial, AgentType::Vendor] {
            assert!(a.depends_on().contains(&AgentType::Ocr));
            assert!(AgentType::Analytics.depends_on().contains(&a));
        }
        assert_eq!(AgentType::Notifications.depends_on(), &[AgentType::Analytics]);
        assert_eq!(registry().len(), 10);
    }
}
