//! The drafting run: drafts the artifacts in order through the model gateway (forced tool call, schema
//! validation, at most two corrective re-asks, the system prompt cached), then lets the red-team critic review the
//! whole draft for up to three cycles. Blocker and major findings re-run the targeted artifact and everything
//! downstream; minor ones wait for the buyer. Budgets (tokens and cost per draft, time per run) pause the run
//! before a step that could overspend; the queue is part of the package, so `resume` continues where it stopped.
//! A refused, truncated or out-of-shape reply leaves the artifact exactly as it was, with the error on it.

use crate::artifact::{ArtifactKind, MilestoneKind, Milestones, Need, SlotError};
use crate::calendar::milestones_with_rationales;
use crate::grounding::Grounding;
use crate::machine::Event;
use crate::package::{Content, Finding, FindingStatus, Package, Perspective, RunBudget, RunStatus, RunStep, Severity};
use crate::prompts::{self, PromptModule};
use pactwise_domain::Clock;
use pactwise_model::{CallContext, ModelClient, ModelError, PromptDocument, StructuredRequest};
use pactwise_store::prep::PrepTrace;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tracing::Instrument;

/// Critic cycles at most.
pub const MAX_CRITIC_CYCLES: u32 = 3;

/// What the intake module returns: the needs it reads in the brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NeedsDraft {
    pub needs: Vec<Need>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RationaleDraft {
    pub kind: MilestoneKind,
    pub rationale: String,
}

/// What the milestones module returns: rationales only; it has no field for a date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MilestoneRationales {
    pub rationales: Vec<RationaleDraft>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FindingDraft {
    pub perspective: Perspective,
    pub severity: Severity,
    pub target: ArtifactKind,
    pub rationale: String,
}

/// What the critic returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Critique {
    pub findings: Vec<FindingDraft>,
}

/// Sets up a new drafting run: the needs (when the intake has none yet), the five drafted artifacts, the critic.
/// Spending starts from zero.
pub fn plan(package: &mut Package, budget: RunBudget) {
    let mut queue = Vec::new();
    if package.artifacts.intake.content.as_ref().is_some_and(|i| i.needs.is_empty()) {
        queue.push(RunStep::Draft(ArtifactKind::Intake));
    }
    queue.extend(ArtifactKind::ALL[1..].iter().map(|k| RunStep::Draft(*k)));
    queue.push(RunStep::Critique);
    package.run = crate::package::RunState { status: RunStatus::Running, queue, budget, ..Default::default() };
}

/// Continues a paused or failed run, with a new budget if given.
pub fn resume(package: &mut Package, budget: Option<RunBudget>) -> bool {
    if !matches!(package.run.status, RunStatus::Paused | RunStatus::Failed) || package.run.queue.is_empty() {
        return false;
    }
    if let Some(budget) = budget {
        package.run.budget = budget;
    }
    package.run.status = RunStatus::Running;
    package.run.pause_reason = None;
    package.run.error = None;
    true
}

/// Why the run must pause before its next step, if it must: a budget that the next step could overrun (the
/// largest step so far is kept in reserve), or the run's time spent.
pub fn budget_pause(run: &crate::package::RunState, elapsed_seconds: i64) -> Option<String> {
    let b = &run.budget;
    if run.tokens_used.saturating_add(run.largest_step_tokens) > b.max_tokens || run.tokens_used >= b.max_tokens {
        return Some(format!(
            "token budget: {} of {} tokens used and the next step may need {}; raise the budget to continue",
            run.tokens_used, b.max_tokens, run.largest_step_tokens
        ));
    }
    if run.cost_micros.saturating_add(run.largest_step_cost_micros) > b.max_cost_micros
        || run.cost_micros >= b.max_cost_micros
    {
        return Some(format!(
            "cost budget: ${:.4} of ${:.4} spent and the next step may cost ${:.4}; raise the budget to continue",
            run.cost_micros as f64 / 1e6,
            b.max_cost_micros as f64 / 1e6,
            run.largest_step_cost_micros as f64 / 1e6
        ));
    }
    if elapsed_seconds >= b.max_seconds {
        return Some(format!(
            "time budget: this run has taken {elapsed_seconds} s of its {} s; resume to continue",
            b.max_seconds
        ));
    }
    None
}

/// What a drafting run is about to do, sent before each step so a person sees a long run move.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct DraftProgress {
    /// The step that starts now.
    pub step: RunStep,
    /// Steps finished since this call started.
    pub done: u32,
    /// Steps still queued, this one included (a critic finding can add steps).
    pub remaining: u32,
    pub critic_cycles: u32,
    pub tokens_used: u64,
    pub cost_micros: i64,
    pub budget: RunBudget,
}

/// How a step ended when it did not succeed.
enum Stop {
    Pause(String),
    Fail(SlotError),
}

/// Runs drafting steps against the gateway for one package.
pub struct Drafter<'a> {
    pub model: &'a ModelClient,
    pub ctx: CallContext,
    pub clock: &'a dyn Clock,
    pub grounding: &'a Grounding,
}

impl Drafter<'_> {
    /// Runs the package's queue until it is empty, a budget pauses it, or a draft fails. Returns the traces of
    /// every model call (the caller stores them with the package).
    pub async fn run(&self, package: &mut Package) -> Vec<PrepTrace> {
        self.run_with_progress(package, &|_| {}).await
    }

    /// [`Drafter::run`], calling `progress` before each step starts.
    pub async fn run_with_progress(
        &self,
        package: &mut Package,
        progress: &(dyn Fn(DraftProgress) + Send + Sync),
    ) -> Vec<PrepTrace> {
        let mut traces = Vec::new();
        let mut done = 0u32;
        for warning in &self.grounding.warnings {
            if !package.warnings.contains(warning) {
                package.warnings.push(warning.clone());
            }
        }
        if package.run.status != RunStatus::Running {
            return traces;
        }
        let started = self.clock.now();
        while let Some(next) = package.run.queue.first().copied() {
            let elapsed = (self.clock.now() - started).num_seconds();
            if let Some(reason) = budget_pause(&package.run, elapsed) {
                tracing::info!(reason, "drafting run paused");
                package.run.status = RunStatus::Paused;
                package.run.pause_reason = Some(reason);
                return traces;
            }
            progress(DraftProgress {
                step: next,
                done,
                remaining: package.run.queue.len() as u32,
                critic_cycles: package.run.critic_cycles,
                tokens_used: package.run.tokens_used,
                cost_micros: package.run.cost_micros,
                budget: package.run.budget,
            });
            let result = match next {
                RunStep::Draft(kind) => self.draft(package, kind, &mut traces).await,
                RunStep::Critique => self.critique(package, &mut traces).await,
            };
            match result {
                Ok(()) => {
                    package.run.queue.remove(0);
                    done += 1;
                }
                Err(Stop::Pause(reason)) => {
                    package.run.status = RunStatus::Paused;
                    package.run.pause_reason = Some(reason);
                    return traces;
                }
                Err(Stop::Fail(error)) => {
                    package.run.status = RunStatus::Failed;
                    package.run.error = Some(error);
                    return traces;
                }
            }
        }
        package.run.status = RunStatus::Done;
        traces
    }

    fn account(&self, package: &mut Package, tokens: u64, cost: i64) {
        let run = &mut package.run;
        run.tokens_used += tokens;
        run.cost_micros += cost;
        run.largest_step_tokens = run.largest_step_tokens.max(tokens);
        run.largest_step_cost_micros = run.largest_step_cost_micros.max(cost);
        run.model_calls += 1;
    }

    /// One structured call with its trace.
    async fn call<T: JsonSchema + DeserializeOwned>(
        &self,
        package: &mut Package,
        module: &PromptModule,
        target: &str,
        documents: Vec<PromptDocument>,
        prompt: String,
        traces: &mut Vec<PrepTrace>,
    ) -> Result<T, ModelError> {
        let request = StructuredRequest {
            tool_description: format!(
                "Record the {target} drafted by prompt module {} v{}",
                module.name, module.version
            ),
            // The seed: Prep Studio leaves thinking at the model's default, so its one tool is offered, not forced
            // (ARCHITECTURE.md, "Model calls").
            ..StructuredRequest::new(module.text, prompt, module.tool_name())
                .with_documents(documents)
                .with_model_default_thinking()
        };
        let span = tracing::info_span!("prep_model_call", target, module = module.name, version = module.version,
            prompt_hash = %module.hash);
        let result = self.model.call_structured::<T>(&self.ctx, request).instrument(span).await;
        let mut trace = PrepTrace {
            artifact: target.to_string(),
            prompt_module: module.name.to_string(),
            prompt_version: module.version,
            prompt_hash: module.hash.clone(),
            outcome: "ok".into(),
            input_tokens: 0,
            output_tokens: 0,
            cost_micros: 0,
            re_asks: 0,
            detail: None,
            at: Some(self.clock.now()),
        };
        let out = match result {
            Ok(structured) => {
                trace.input_tokens = structured.tokens.prompt_tokens();
                trace.output_tokens = u64::from(structured.tokens.output);
                trace.cost_micros = structured.cost_micros;
                trace.re_asks = structured.re_asks;
                self.account(package, trace.input_tokens + trace.output_tokens, trace.cost_micros);
                Ok(structured.value)
            }
            Err(error) => {
                trace.outcome = error.code().as_str().to_string();
                trace.detail = Some(error.to_string());
                package.run.model_calls += 1;
                Err(error)
            }
        };
        traces.push(trace);
        out
    }

    fn stop_for(error: ModelError) -> Stop {
        if error.should_fall_back() {
            Stop::Pause(format!("the model cannot be used now: {error}"))
        } else {
            Stop::Fail(SlotError { code: error.code(), message: error.to_string() })
        }
    }

    fn fenced(title: &str, value: &impl Serialize) -> PromptDocument {
        PromptDocument::new(title, serde_json::to_string_pretty(value).unwrap_or_default())
    }

    async fn draft(&self, package: &mut Package, kind: ArtifactKind, traces: &mut Vec<PrepTrace>) -> Result<(), Stop> {
        let module = prompts::for_artifact(kind);
        let Some(intake) = package.artifacts.intake.content.clone() else {
            return Err(Stop::Fail(SlotError {
                code: pactwise_domain::ErrorCode::InvalidInput,
                message: "the package has no intake; enter it before drafting".into(),
            }));
        };
        package.apply(kind, Event::DraftStarted).map_err(|e| {
            Stop::Fail(SlotError { code: pactwise_domain::ErrorCode::InvalidInput, message: e.to_string() })
        })?;
        let mut documents = vec![Self::fenced("Buyer intake (buyer input)", &intake)];
        for upstream in ArtifactKind::ALL[1..].iter().take_while(|k| **k != kind) {
            if let Some(content) = package.artifacts.content_json(*upstream) {
                documents.push(Self::fenced(&format!("Draft {} (earlier artifact)", upstream.as_str()), &content));
            }
        }
        if matches!(kind, ArtifactKind::Scope | ArtifactKind::Requirements) {
            documents.extend(self.grounding.documents());
        }
        let to_address: Vec<&Finding> = package
            .findings
            .iter()
            .filter(|f| f.target == kind && f.status == FindingStatus::ReRun && f.cycle == package.run.critic_cycles)
            .collect();
        if !to_address.is_empty() {
            documents.push(Self::fenced("Critic findings to address", &to_address));
        }
        let prompt = format!(
            "TASK=draft_{name}. Draft the {name} of the RFP package \"{title}\" from the documents above, and \
             record it by calling `{tool}`.",
            name = kind.as_str(),
            title = intake.title.replace('"', "'"),
            tool = module.tool_name()
        );
        let content = match kind {
            ArtifactKind::Intake => self
                .call::<NeedsDraft>(package, &module, kind.as_str(), documents, prompt, traces)
                .await
                .map(|d| Content::Intake(crate::artifact::Intake { needs: d.needs, ..intake.clone() })),
            ArtifactKind::Scope => {
                self.call(package, &module, kind.as_str(), documents, prompt, traces).await.map(Content::Scope)
            }
            ArtifactKind::Requirements => {
                self.call(package, &module, kind.as_str(), documents, prompt, traces).await.map(Content::Requirements)
            }
            ArtifactKind::Criteria => {
                self.call(package, &module, kind.as_str(), documents, prompt, traces).await.map(Content::Criteria)
            }
            ArtifactKind::Pricing => {
                self.call(package, &module, kind.as_str(), documents, prompt, traces).await.map(Content::Pricing)
            }
            ArtifactKind::Milestones => {
                let dates = crate::calendar::milestone_dates(&intake);
                let mut documents = documents;
                documents.push(Self::fenced(
                    "Milestone dates computed by code (not to be changed)",
                    &dates.iter().map(|(k, d)| (k.as_str(), d.to_string())).collect::<Vec<_>>(),
                ));
                self.call::<MilestoneRationales>(package, &module, kind.as_str(), documents, prompt, traces).await.map(
                    |r| {
                        Content::Milestones(Milestones {
                            items: milestones_with_rationales(&intake, |k| {
                                r.rationales.iter().find(|x| x.kind == k).map(|x| x.rationale.clone())
                            }),
                        })
                    },
                )
            }
        };
        match content {
            Ok(content) => {
                package.set_content(kind, content, Some(module.stamp())).map_err(|e| {
                    Stop::Fail(SlotError { code: pactwise_domain::ErrorCode::Internal, message: e.to_string() })
                })?;
                Ok(())
            }
            Err(error) => {
                // Nothing partial is kept: the artifact goes back to the state it had, with the error shown on it.
                let _ = package.apply(kind, Event::DraftFailed);
                package.set_error(kind, Some(SlotError { code: error.code(), message: error.to_string() }));
                Err(Self::stop_for(error))
            }
        }
    }

    async fn critique(&self, package: &mut Package, traces: &mut Vec<PrepTrace>) -> Result<(), Stop> {
        let module = prompts::critic();
        let cycle = package.run.critic_cycles + 1;
        let documents = vec![Self::fenced("The full draft (all six artifacts)", &package.artifacts)];
        let prompt = format!(
            "TASK=critique cycle={cycle}. Review the draft above as a vendor's bid manager and as a protest lawyer, \
             and record your findings by calling `{}`.",
            module.tool_name()
        );
        let critique = match self.call::<Critique>(package, &module, "critic", documents, prompt, traces).await {
            Ok(c) => c,
            Err(error) => return Err(Self::stop_for(error)),
        };
        package.run.critic_cycles = cycle;
        let serious = |f: &FindingDraft| {
            matches!(f.severity, Severity::Blocker | Severity::Major) && f.target != ArtifactKind::Intake
        };
        let earliest = critique.findings.iter().filter(|f| serious(f)).map(|f| f.target).min();
        let rerun = earliest.is_some() && cycle < MAX_CRITIC_CYCLES;
        for f in &critique.findings {
            let status = match (serious(f), rerun) {
                (true, true) => FindingStatus::ReRun,
                (true, false) => FindingStatus::Unresolved,
                (false, _) => FindingStatus::AwaitingBuyer,
            };
            package.findings.push(Finding {
                cycle,
                perspective: f.perspective,
                severity: f.severity,
                target: f.target,
                rationale: f.rationale.clone(),
                status,
                dismissal: None,
            });
        }
        match earliest {
            None => {
                package.run.converged_at_cycle.get_or_insert(cycle);
            }
            Some(target) if rerun => {
                let mut steps: Vec<RunStep> = target.and_downstream().iter().map(|k| RunStep::Draft(*k)).collect();
                steps.push(RunStep::Critique);
                // After the current (critique) step, which the loop removes when this returns.
                package.run.queue.splice(1..1, steps);
            }
            Some(_) => {}
        }
        Ok(())
    }
}
