//! Workflow commands: `runs start|show|list|cancel|graphs|work`, `inbox`, `approve`, and `bench engine`. Each is a
//! few lines over an `api` function; `--json` prints one JSON document.

use crate::output::{self, Outcome};
use clap::{Subcommand, ValueEnum};
use pactwise_api::{Api, ApiError, ApprovalView, OrgScope, RunStory, RunView, Tone, parse_approval_id, parse_run_id};
use pactwise_domain::{Decision, ErrorCode};
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum WorkflowCommand {
    /// Workflow runs: start one, show, list, cancel, the built-in graphs
    Runs {
        #[command(subcommand)]
        what: RunsCommand,
    },
    /// Pending approvals you may resolve
    Inbox,
    /// Approve or reject a pending approval (as the signed-in user)
    Approve {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long, value_enum)]
        decision: DecisionArg,
        /// Why (recorded with the decision)
        #[arg(long, value_name = "TEXT")]
        reason: String,
        /// The option picked, when the step offers choices (e.g. the vendor)
        #[arg(long, value_name = "NAME")]
        choice: Option<String>,
    },
    /// Benchmarks
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Subcommand)]
pub enum RunsCommand {
    /// Start a run of a built-in graph and drive it until it waits or ends
    Start {
        #[arg(value_name = "GRAPH")]
        graph: String,
        /// The run's input, a JSON object
        #[arg(long, value_name = "JSON", default_value = "{}")]
        input: String,
    },
    /// A run with its timeline, approvals and tasks
    Show {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// The organization's runs, newest first
    List,
    /// Cancel a run, its child runs, queued tasks and pending approvals
    Cancel {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long, value_name = "TEXT", default_value = "cancelled from the command line")]
        reason: String,
    },
    /// The built-in graphs
    Graphs,
    /// One round of background work: the watchdog, then runs with due retries, timers or woken parents
    Work,
    /// The task queue's health: failing agent types (last hour) and large backlogs; the flags change the
    /// organization's thresholds first (owners and admins)
    Health {
        /// Failures of one agent type in the last hour at which it is flagged
        #[arg(long, value_name = "N")]
        failures_per_hour: Option<u32>,
        /// Pending tasks of one agent type at which the queue is flagged
        #[arg(long, value_name = "N")]
        backlog: Option<u32>,
    },
}

#[derive(Subcommand)]
pub enum BenchCommand {
    /// Procurement runs on a file database with synchronous=FULL, no model calls, approvals given programmatically
    Engine {
        #[arg(long, default_value_t = 200)]
        runs: usize,
        /// Runs moved together; their super-steps share commits
        #[arg(long, default_value_t = 1)]
        concurrency: usize,
        /// Where to put the database [default: a temporary directory, removed afterwards]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DecisionArg {
    Approve,
    Reject,
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

/// A run as the Runs area tells it: what it is and where it stands, who decided what, and its timeline.
fn story_text(story: &RunStory) -> String {
    let when = |t: &chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    let tone = |t: Tone| match t {
        Tone::Info => "",
        Tone::Good => " (done)",
        Tone::Warn => " (warning)",
        Tone::Bad => " (problem)",
    };
    let s = &story.summary;
    let mut text = format!("{}: {}", s.title, s.status_text);
    text.push_str(&format!("\n  started {}", when(&s.created_at)));
    if let Some(name) = &s.started_by_name {
        text.push_str(&format!(" by {name}"));
    }
    if let Some(end) = &s.finished_at {
        text.push_str(&format!(", ended {}", when(end)));
    }
    if s.on_another_desktop {
        text.push_str("; it runs on another desktop of the organization");
    }
    if let Some(now) = &story.now {
        text.push_str(&format!("\n  Now: {} (since {})", now.text, when(&now.since)));
    }
    if let Some(outcome) = &s.outcome {
        text.push_str(&format!("\n  Outcome: {outcome}"));
    }
    if !story.decisions.is_empty() {
        text.push_str("\n  Decisions:");
        for d in &story.decisions {
            text.push_str(&format!("\n    {}: {}", d.step, d.text));
            if let Some(reason) = &d.reason {
                text.push_str(&format!(" — “{reason}”"));
            }
            if let Some(at) = &d.at {
                text.push_str(&format!(" ({})", when(at)));
            }
        }
    }
    text.push_str("\n  Timeline:");
    for line in &story.timeline {
        text.push_str(&format!("\n    {}  {}{}", when(&line.at), line.text, tone(line.tone)));
    }
    text.push_str(&format!("\n  (run {})", s.id));
    text
}

fn run_line(r: &RunView) -> String {
    let mut line = format!("{}  {:<20} {:<12} step {}", r.id, r.graph, r.status.as_str(), r.superstep);
    if !r.waiting_on.is_empty() {
        line.push_str(&format!("  waiting on {}", r.waiting_on.join(", ")));
    }
    if let Some(reason) = &r.reason {
        line.push_str(&format!("  ({reason})"));
    }
    if r.from_another_desktop {
        let by = r.started_by_name.as_deref().map(|n| format!(", started by {}", output::clean(n))).unwrap_or_default();
        line.push_str(&format!("  [runs on another desktop{by}]"));
    }
    line
}

fn approval_line(a: &ApprovalView) -> String {
    let due = a.due_at.map(|d| format!(" due {}", d.format("%Y-%m-%d %H:%M"))).unwrap_or_default();
    let urgent = if a.escalated { " URGENT" } else { "" };
    let choices = if a.choices.is_empty() { String::new() } else { format!(" choices: {}", a.choices.join(", ")) };
    let state = match &a.my_request {
        Some(r) if r.status == pactwise_api::RequestState::WaitingToSync => {
            format!("  [your {} is waiting to sync]", r.decision.as_str())
        }
        Some(r) if r.status == pactwise_api::RequestState::Refused => {
            format!(
                "  [your {} was refused: {}]",
                r.decision.as_str(),
                r.refusal.as_deref().unwrap_or("no reason given")
            )
        }
        _ => String::new(),
    };
    format!("{}  {}{due}{urgent}{choices}  (run {}){state}", a.id, a.title, a.run)
}

/// `bench engine` needs no data directory.
pub async fn bench(what: BenchCommand) -> Result<Outcome, ApiError> {
    let BenchCommand::Engine { runs, concurrency, dir } = what;
    let report = pactwise_api::bench_engine(dir, runs, concurrency).await?;
    let text = format!(
        "{} runs, concurrency {}: {:.1} runs/s, {:.3} commits per run ({} commits, synchronous={})",
        report.runs,
        report.concurrency,
        report.runs_per_s,
        report.commits_per_run,
        report.commits,
        report.sqlite_synchronous
    );
    Ok(Outcome::ok(to_json(&report)?, text))
}

pub async fn dispatch(api: &Api, scope: &OrgScope, command: WorkflowCommand) -> Result<Outcome, ApiError> {
    match command {
        WorkflowCommand::Runs { what } => runs(api, scope, what).await,
        WorkflowCommand::Inbox => {
            let inbox = api.inbox(scope).await?;
            let text = if inbox.is_empty() {
                "Nothing to approve.".to_string()
            } else {
                inbox.iter().map(approval_line).collect::<Vec<_>>().join("\n")
            };
            Ok(Outcome::ok(json!({ "approvals": inbox }), text))
        }
        WorkflowCommand::Approve { id, decision, reason, choice } => {
            let decision = match decision {
                DecisionArg::Approve => Decision::Approve,
                DecisionArg::Reject => Decision::Reject,
            };
            let outcome = api.decide_approval(scope, parse_approval_id(&id)?, decision, reason, choice).await?;
            let text = if outcome.waiting_to_sync {
                format!(
                    "waiting to sync: your decision ({}) on {} is sent to the sync service and counts once it is \
                     stamped; `pactwise sync now` sends it at once\n{}",
                    decision.as_str(),
                    outcome.approval.title,
                    run_line(&outcome.run)
                )
            } else {
                format!("{}: {}\n{}", outcome.approval.status.as_str(), outcome.approval.title, run_line(&outcome.run))
            };
            Ok(Outcome::ok(to_json(&outcome)?, text))
        }
        WorkflowCommand::Bench { what } => bench(what).await,
    }
}

async fn runs(api: &Api, scope: &OrgScope, what: RunsCommand) -> Result<Outcome, ApiError> {
    match what {
        RunsCommand::Start { graph, input } => {
            let input: Value = serde_json::from_str(&input).map_err(|e| {
                ApiError::new(
                    ErrorCode::InvalidInput,
                    format!("--input is not valid JSON ({e}); pass an object, e.g. '{{\"budget\": 10000}}'"),
                )
            })?;
            if !input.is_object() {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    "--input must be a JSON object, e.g. '{\"budget\": 10000}'",
                ));
            }
            let run = api.start_run(scope, graph, input).await?;
            let text = run_line(&run);
            Ok(Outcome::ok(json!({ "run": run }), text))
        }
        RunsCommand::Show { id } => {
            let id = parse_run_id(&id)?;
            let detail = api.show_run(scope, id).await?;
            // People read the run in the words of the Runs area; the JSON keeps the full record.
            let text = story_text(&api.run_story(scope, id).await?);
            Ok(Outcome::ok(to_json(&detail)?, text))
        }
        RunsCommand::List => {
            let runs = api.list_runs(scope).await?;
            let text = if runs.is_empty() {
                "No runs yet.".to_string()
            } else {
                runs.iter().map(run_line).collect::<Vec<_>>().join("\n")
            };
            Ok(Outcome::ok(json!({ "runs": runs }), text))
        }
        RunsCommand::Cancel { id, reason } => {
            let outcome = api.cancel_run(scope, parse_run_id(&id)?, reason).await?;
            let text = if outcome.sent_to_its_desktop {
                "Sent: the run lives on another desktop, which cancels it when the request arrives \
                 (`pactwise sync now` sends it at once)"
                    .to_string()
            } else {
                format!(
                    "Cancelled: {} run(s), {} task(s), {} approval(s)",
                    outcome.runs_cancelled, outcome.tasks_cancelled, outcome.approvals_cancelled
                )
            };
            Ok(Outcome::ok(to_json(&outcome)?, text))
        }
        RunsCommand::Graphs => {
            let graphs = pactwise_api::workflow_graphs()?;
            let text = graphs
                .iter()
                .map(|g| format!("{:<20} v{}  {}", g.name, g.version, g.description))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Outcome::ok(json!({ "graphs": graphs }), text))
        }
        RunsCommand::Health { failures_per_hour, backlog } => {
            if failures_per_hour.is_some() || backlog.is_some() {
                let current: pactwise_api::HealthThresholds =
                    serde_json::from_value(api.queue_health(scope).await?["thresholds"].clone()).unwrap_or_default();
                let wanted = pactwise_api::HealthThresholds {
                    failures_per_hour: failures_per_hour.unwrap_or(current.failures_per_hour),
                    backlog: backlog.unwrap_or(current.backlog),
                };
                api.set_queue_health_thresholds(scope, wanted).await?;
            }
            let health = api.queue_health(scope).await?;
            Ok(Outcome::ok(health.clone(), health_words(&health)))
        }
        RunsCommand::Work => {
            let moved = api.work_runs(scope).await?;
            let tasks = api.work_agent_tasks(pactwise_api::WorkerOptions::default()).await?;
            let text = format!(
                "{} run(s) moved; {} follow-up(s) done, {} failed, {} stopped at their timeout",
                moved.len(),
                tasks.done,
                tasks.failed,
                tasks.timed_out
            );
            Ok(Outcome::ok(json!({ "runs": moved, "follow_ups": tasks }), text))
        }
    }
}

/// The queue's health in words: what is flagged and against which thresholds.
fn health_words(health: &serde_json::Value) -> String {
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let t = &health["thresholds"];
    let mut lines = vec![format!(
        "Thresholds: an agent type is flagged at {} failures in an hour, a queue at {} pending tasks.",
        n(&t["failures_per_hour"]),
        n(&t["backlog"])
    )];
    for a in health["failing_agents"].as_array().into_iter().flatten() {
        lines.push(format!(
            "Agent type {} failed {} times in the last hour.",
            output::clean(a["agent_type"].as_str().unwrap_or("?")),
            n(&a["failures_last_hour"])
        ));
    }
    for b in health["backlogs"].as_array().into_iter().flatten() {
        lines.push(format!(
            "{} tasks of agent type {} are waiting.",
            n(&b["pending"]),
            output::clean(b["agent_type"].as_str().unwrap_or("?"))
        ));
    }
    if health["healthy"] == true {
        lines.insert(0, "The task queue is healthy.".into());
    }
    lines.join("\n")
}
