//! `pactwise prep ...`: Prep Studio from the command line, a few lines per subcommand over the api.

use crate::output::Outcome;
use clap::Subcommand;
use pactwise_api::{
    Api, ApiError, ArtifactKind, Content, Intake, OrgScope, PrepExportFormat, PrepView, RunBudget, parse_artifact,
};
use pactwise_domain::ErrorCode;
use serde_json::json;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum PrepCommand {
    /// Start an RFP package from an intake file (JSON: title, buyer, brief, needs, category, currency, timeline, ...)
    New {
        #[arg(long, value_name = "FILE")]
        intake: PathBuf,
    },
    /// The organization's packages with their artifacts' states
    List,
    /// One package: artifacts, states, hashes, validator errors, findings, run and budget, lock, publish pre-check
    Show {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Draft the package through the model (scope, requirements, criteria, pricing, milestones, then the critic)
    Draft {
        #[arg(value_name = "ID")]
        id: String,
        /// Continue a paused or failed run instead of starting a new one
        #[arg(long)]
        resume: bool,
        /// Cost budget of the draft, in US dollars [default: 2]
        #[arg(long, value_name = "USD", value_parser = crate::parse_dollars)]
        max_cost: Option<i64>,
        /// Token budget of the draft [default: 400000]
        #[arg(long, value_name = "N")]
        max_tokens: Option<u64>,
        /// Time budget of this run, in seconds [default: 600]
        #[arg(long, value_name = "SECONDS")]
        max_seconds: Option<i64>,
    },
    /// Replace one artifact with the content of a JSON file (downstream artifacts become stale)
    Edit {
        #[arg(value_name = "ID")]
        id: String,
        /// intake, scope, requirements, criteria, pricing or milestones
        #[arg(long)]
        artifact: String,
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
    /// Run every validator again and print what fails
    Validate {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Approve one artifact as you saw it: --hash is the content hash `prep show` printed
    Approve {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long)]
        artifact: String,
        #[arg(long)]
        hash: String,
    },
    /// Dismiss a critic finding that waits for you (--finding N as numbered by `prep show`, from 1), with the reason
    Dismiss {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long, value_name = "N")]
        finding: u32,
        #[arg(long)]
        reason: String,
    },
    /// Take (or renew) the edit lock; another person's lock can be taken over (--take-over) once it has expired
    Lock {
        #[arg(value_name = "ID")]
        id: String,
        /// Take over another person's expired lock (audited)
        #[arg(long)]
        take_over: bool,
    },
    /// Publish through the store's gate (every artifact approved, every rule passing)
    Publish {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Write the approved package as DOCX, PDF or an OCDS 1.1 release (JSON)
    Export {
        #[arg(value_name = "ID")]
        id: String,
        /// docx, pdf or ocds
        #[arg(long, default_value = "docx")]
        format: String,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Replace FILE if it is already there (otherwise an existing file is left as it is and nothing is written)
        #[arg(long)]
        overwrite: bool,
    },
}

fn bad_input(message: String) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message)
}

fn read_json(path: &Path) -> Result<serde_json::Value, ApiError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ApiError::new(ErrorCode::FileUnreadable, format!("cannot read {} ({e})", path.display())))?;
    serde_json::from_str(&text).map_err(|e| bad_input(format!("{} is not valid JSON: {e}", path.display())))
}

fn view_outcome(view: PrepView) -> Outcome {
    let mut lines = vec![format!("{} ({}) — {}, version {}", view.package.title, view.id, view.status, view.version)];
    if let Some(lock) = &view.lock {
        let whose = if lock.held_by_me { "you".to_string() } else { lock.holder_name.clone() };
        let state = if lock.expired { "expired" } else { "until" };
        lines.push(format!("edit lock: {whose}, {state} {}", lock.expires_at.format("%Y-%m-%d %H:%M UTC")));
    }
    for kind in ArtifactKind::ALL {
        let slot = view.package.artifacts.view(kind);
        let hash = slot.content_hash.as_deref().unwrap_or("-");
        lines.push(format!("{:<13} {:<9} {hash}", kind.as_str(), slot.state.name()));
        if let pactwise_api::ArtifactState::Invalid { errors } = &slot.state {
            for e in errors {
                lines.push(format!("              ! {}", e.message));
            }
        }
        if let Some(error) = &slot.error {
            lines.push(format!("              error ({}): {}", error.code, error.message));
        }
    }
    let run = &view.package.run;
    lines.push(format!(
        "run: {:?}, {} model calls, {} critic cycles, ${:.4} of ${:.2}, {} of {} tokens{}",
        run.status,
        run.model_calls,
        run.critic_cycles,
        run.cost_micros as f64 / 1e6,
        run.budget.max_cost_micros as f64 / 1e6,
        run.tokens_used,
        run.budget.max_tokens,
        run.pause_reason.as_ref().map(|r| format!(" — paused: {r}")).unwrap_or_default()
    ));
    for (i, f) in view.package.findings.iter().enumerate() {
        lines.push(format!(
            "finding {} (cycle {}, {:?}, {:?} → {}): {}{}",
            i + 1,
            f.cycle,
            f.severity,
            f.status,
            f.target.as_str(),
            f.rationale,
            f.dismissal.as_ref().map(|r| format!(" — dismissed: {r}")).unwrap_or_default()
        ));
    }
    for w in &view.package.warnings {
        lines.push(format!("warning: {w}"));
    }
    if view.precheck.is_empty() {
        lines.push("publish pre-check: passes".into());
    } else {
        lines.push(format!("publish pre-check: {} problem(s)", view.precheck.len()));
        lines.extend(view.precheck.iter().map(|v| format!("  - [{}] {}", v.rule, v.message)));
    }
    let text = lines.join("\n");
    Outcome::ok(json!({ "package": view }), text)
}

pub async fn run(api: &Api, scope: &OrgScope, command: PrepCommand) -> Result<Outcome, ApiError> {
    match command {
        PrepCommand::New { intake } => {
            let intake: Intake = serde_json::from_value(read_json(&intake)?)
                .map_err(|e| bad_input(format!("the intake file does not match the intake's shape: {e}")))?;
            Ok(view_outcome(api.prep_new(scope, intake).await?))
        }
        PrepCommand::List => {
            let list = api.prep_list(scope).await?;
            let text = list
                .iter()
                .map(|p| {
                    let states: Vec<String> = p.states.iter().map(|(k, s)| format!("{}={s}", k.as_str())).collect();
                    format!("{}  {:<9} {}  [{}]", p.id, p.status, p.title, states.join(" "))
                })
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Outcome::ok(json!({ "packages": list }), text))
        }
        PrepCommand::Show { id } => Ok(view_outcome(api.prep_show(scope, &id).await?)),
        PrepCommand::Draft { id, resume, max_cost, max_tokens, max_seconds } => {
            let budget = (max_cost.is_some() || max_tokens.is_some() || max_seconds.is_some()).then(|| {
                let d = RunBudget::default();
                RunBudget {
                    max_cost_micros: max_cost.unwrap_or(d.max_cost_micros),
                    max_tokens: max_tokens.unwrap_or(d.max_tokens),
                    max_seconds: max_seconds.unwrap_or(d.max_seconds),
                }
            });
            let progress = |p: pactwise_api::DraftProgress| {
                let step = match p.step {
                    pactwise_api::RunStep::Draft(kind) => kind.as_str(),
                    pactwise_api::RunStep::Critique => "critic review",
                };
                eprintln!(
                    "drafting: {step} (step {} of {}, {} tokens so far)",
                    p.done + 1,
                    p.done + p.remaining,
                    p.tokens_used
                );
            };
            Ok(view_outcome(api.prep_draft(scope, &id, budget, resume, &progress).await?))
        }
        PrepCommand::Edit { id, artifact, file } => {
            let kind = parse_artifact(&artifact)?;
            let content = Content::from_json(kind, read_json(&file)?)
                .map_err(|e| bad_input(format!("{} does not match the {artifact} shape: {e}", file.display())))?;
            Ok(view_outcome(api.prep_edit(scope, &id, content).await?))
        }
        PrepCommand::Validate { id } => Ok(view_outcome(api.prep_validate(scope, &id).await?)),
        PrepCommand::Approve { id, artifact, hash } => {
            let kind = parse_artifact(&artifact)?;
            Ok(view_outcome(api.prep_approve(scope, &id, kind, hash).await?))
        }
        PrepCommand::Dismiss { id, finding, reason } => {
            if finding == 0 {
                return Err(bad_input("findings are numbered from 1 (see `prep show`)".to_string()));
            }
            Ok(view_outcome(api.prep_dismiss_finding(scope, &id, finding - 1, reason).await?))
        }
        PrepCommand::Lock { id, take_over } => {
            let lock = api.prep_lock(scope, &id, take_over).await?;
            let text = format!("You hold the edit lock until {}", lock.expires_at.format("%Y-%m-%d %H:%M UTC"));
            Ok(Outcome::ok(json!({ "lock": lock }), text))
        }
        PrepCommand::Publish { id } => Ok(view_outcome(api.prep_publish(scope, &id).await?)),
        PrepCommand::Export { id, format, out, overwrite } => {
            let format = match format.as_str() {
                "docx" => PrepExportFormat::Docx,
                "pdf" => PrepExportFormat::Pdf,
                "ocds" => PrepExportFormat::Ocds,
                other => return Err(bad_input(format!("unknown format {other:?}; use docx, pdf or ocds"))),
            };
            let existing = if overwrite { pactwise_api::Existing::Replace } else { pactwise_api::Existing::Refuse };
            let export = api.prep_export(scope, &id, format, &out, existing).await?;
            let text = format!("Wrote {} ({} bytes)", export.path, export.bytes);
            Ok(Outcome::ok(json!({ "export": export }), text))
        }
    }
}
