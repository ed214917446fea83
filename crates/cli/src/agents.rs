//! Agent commands: `agents plan "REQUEST"` (the manager's plan, not run), `agents list` (the ten agent types),
//! `agents config` (the organization's thresholds; `--set agent.field=VALUE` changes one with the same check as
//! the app, `--schema` prints the JSON schema), `agents run "REQUEST"` (plans and runs it: the manager role),
//! `agents requests` and `agents show RUN` (what ran), `agents managers` (who holds the manager role),
//! `agents memory` (what the agents remember of you). Each is a few lines over an `api` function.

use crate::output::{Outcome, clean};
use clap::Subcommand;
use pactwise_api::{AgentPlan, AgentsConfig, Api, ApiError, OrgScope};
use pactwise_domain::ErrorCode;

#[derive(Subcommand)]
pub enum AgentsCommand {
    /// The manager's plan for a request in plain words (what will run, in what order, why), without running it
    Plan {
        #[arg(value_name = "REQUEST")]
        request: String,
    },
    /// Plans a request and runs it (needs the manager role): each agent's output, follow-ups and the notice
    Run {
        #[arg(value_name = "REQUEST")]
        request: String,
    },
    /// The organization's recent requests to the agents
    Requests,
    /// One request the agents ran, with each step's output
    Show {
        #[arg(value_name = "RUN")]
        run: String,
    },
    /// Members who hold the manager role besides owners and admins; --add/--remove EMAIL (owners and admins)
    Managers {
        #[arg(long, value_name = "EMAIL", conflicts_with = "remove")]
        add: Option<String>,
        #[arg(long, value_name = "EMAIL")]
        remove: Option<String>,
    },
    /// What the agents remember of you; --remember TEXT keeps a fact, --forget ID deletes one
    Memory {
        #[arg(long, value_name = "TEXT", conflicts_with = "forget")]
        remember: Option<String>,
        #[arg(long, value_name = "ID")]
        forget: Option<String>,
    },
    /// The ten agent types: what each does and whose output it reads
    List,
    /// The organization's agent thresholds; --set agent.field=VALUE changes one (owners and admins)
    Config {
        /// e.g. secretary.reminder_days_before=14
        #[arg(long, value_name = "AGENT.FIELD=VALUE")]
        set: Option<String>,
        /// Print the configuration's JSON schema instead
        #[arg(long, conflicts_with = "set")]
        schema: bool,
    },
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

fn plan_text(p: &AgentPlan) -> String {
    let mut lines = vec![format!("request: {}", p.request_type.words())];
    match &p.outcome {
        pactwise_api::AgentOutcome::Planned => {}
        pactwise_api::AgentOutcome::NothingToDo { why } | pactwise_api::AgentOutcome::Refused { why } => {
            lines.push(why.clone());
        }
    }
    let e = &p.entities;
    for c in &e.contracts {
        let state = if c.contract.is_some() { "found" } else { "not in this organization" };
        lines.push(format!("contract: {} ({state})", clean(&c.reference)));
    }
    for v in &e.vendors {
        let state = if v.vendor.is_some() { "known" } else { "new" };
        lines.push(format!("vendor: {} ({state})", clean(&v.name)));
    }
    for a in &e.amounts {
        lines.push(format!("amount: {} (\"{}\")", a.canonical(), clean(&a.text)));
    }
    for d in &e.dates {
        lines.push(format!("date: {} (\"{}\")", d.date, clean(&d.text)));
    }
    if p.urgency == pactwise_api::AgentUrgency::High {
        lines.push("urgency: high".into());
    }
    if !p.signals.is_empty() {
        let signals: Vec<_> = p.signals.iter().map(|s| format!("{s:?}").to_lowercase()).collect();
        lines.push(format!("signals: {}", signals.join(", ")));
    }
    for (i, s) in p.steps.iter().enumerate() {
        let after = if s.depends_on.is_empty() {
            String::new()
        } else {
            format!(" after {}", s.depends_on.iter().map(|a| a.id()).collect::<Vec<_>>().join(", "))
        };
        let critical = if s.critical { ", critical" } else { "" };
        lines.push(format!("{}. {}{after}{critical}: {}", i + 1, s.agent.id(), s.why));
    }
    lines.extend(p.notes.iter().map(|n| format!("note: {n}")));
    lines.join("\n")
}

fn request_text(r: &pactwise_api::AgentRequestView) -> String {
    let mut lines = vec![format!("{}: {}", clean(&r.kind), clean(&r.state)), format!("run: {}", r.run)];
    for s in &r.steps {
        lines.push(format!("{} — {}: {}", clean(&s.agent), s.state, clean(&s.summary)));
        lines.extend(s.findings.iter().map(|f| format!("    {}", clean(f))));
    }
    for f in &r.follow_ups {
        lines.push(format!("follow-up ({}): {} — {}", clean(&f.agent), clean(&f.why), clean(&f.state)));
    }
    for n in &r.notices {
        lines.push(format!("notice: {} — {}", clean(&n.title), clean(&n.message)));
    }
    lines.join("\n")
}

fn config_text(c: &AgentsConfig) -> String {
    let json = serde_json::to_value(c).unwrap_or_default();
    let mut lines = Vec::new();
    if let Some(sections) = json.as_object() {
        for (agent, fields) in sections {
            for (field, value) in fields.as_object().into_iter().flatten() {
                lines.push(format!("{agent}.{field} = {value}"));
            }
        }
    }
    lines.join("\n")
}

pub async fn run(api: &Api, scope: &OrgScope, what: AgentsCommand) -> Result<Outcome, ApiError> {
    match what {
        AgentsCommand::Plan { request } => {
            let plan = api.plan_request(scope, request).await?;
            Ok(Outcome::ok(to_json(&plan)?, plan_text(&plan)))
        }
        AgentsCommand::Run { request } => {
            let r = api.run_request(scope, request).await?;
            Ok(Outcome::ok(to_json(&r)?, request_text(&r)))
        }
        AgentsCommand::Requests => {
            let rows = api.agent_requests(scope).await?;
            let lines: Vec<String> = rows
                .iter()
                .map(|r| {
                    format!(
                        "{}  {}  {}: {}",
                        r.run,
                        r.started_at.format("%Y-%m-%d %H:%M"),
                        clean(&r.state),
                        clean(&r.request)
                    )
                })
                .collect();
            Ok(Outcome::ok(to_json(&rows)?, lines.join("\n")))
        }
        AgentsCommand::Show { run } => {
            let id = run.trim().parse().map_err(|_| {
                ApiError::new(
                    ErrorCode::InvalidInput,
                    format!("{run:?} is not a run id; `pactwise agents requests` lists them"),
                )
            })?;
            let r = api.agent_request(scope, id).await?;
            Ok(Outcome::ok(to_json(&r)?, request_text(&r)))
        }
        AgentsCommand::Managers { add, remove } => {
            let granted = match (add, remove) {
                (Some(who), _) => {
                    let user = api.find_member(scope, &who).await?;
                    api.set_manager(scope, user, true).await?
                }
                (None, Some(who)) => {
                    let user = api.find_member(scope, &who).await?;
                    api.set_manager(scope, user, false).await?
                }
                (None, None) => api.managers(scope).await?,
            };
            let text = if granted.is_empty() {
                "Owners and admins hold the manager role; no other member does.".to_string()
            } else {
                format!(
                    "Owners and admins hold the manager role, and: {}",
                    granted.iter().map(|m| clean(m)).collect::<Vec<_>>().join(", ")
                )
            };
            Ok(Outcome::ok(to_json(&granted)?, text))
        }
        AgentsCommand::Memory { remember, forget } => {
            let list = match (remember, forget) {
                (Some(text), _) => api.remember(scope, text).await?,
                (None, Some(id)) => api.forget_memory(scope, id).await?,
                (None, None) => api.memories(scope).await?,
            };
            let lines: Vec<String> =
                list.iter().map(|m| format!("{}  [{}] {} ({})", m.id, m.kind, clean(&m.text), clean(&m.why))).collect();
            let text =
                if lines.is_empty() { "The agents remember nothing of you.".to_string() } else { lines.join("\n") };
            Ok(Outcome::ok(to_json(&list)?, text))
        }
        AgentsCommand::List => {
            let list = api.agent_registry();
            let lines: Vec<String> = list
                .iter()
                .map(|a| {
                    let after = a.depends_on.iter().map(|d| d.id()).collect::<Vec<_>>().join(", ");
                    let after = if after.is_empty() { String::new() } else { format!(" (after {after})") };
                    format!("{:<13} {}{after}", a.agent.id(), a.job)
                })
                .collect();
            Ok(Outcome::ok(to_json(&list)?, lines.join("\n")))
        }
        AgentsCommand::Config { schema: true, .. } => {
            let schema = AgentsConfig::schema();
            let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
            Ok(Outcome::ok(schema, text))
        }
        AgentsCommand::Config { set: Some(assignment), .. } => {
            let (setting, value) = assignment.split_once('=').ok_or_else(|| {
                ApiError::new(
                    ErrorCode::InvalidInput,
                    format!(
                        "{assignment:?}: write a change as agent.field=VALUE, e.g. secretary.reminder_days_before=14"
                    ),
                )
            })?;
            let config = api.set_agents_config(scope, setting.trim(), value.trim()).await?;
            Ok(Outcome::ok(to_json(&config)?, format!("{} changed\n{}", setting.trim(), config_text(&config))))
        }
        AgentsCommand::Config { set: None, .. } => {
            let config = api.agents_config(scope).await?;
            Ok(Outcome::ok(to_json(&config)?, config_text(&config)))
        }
    }
}
