//! The package: six artifacts, the critic's findings, grounding warnings and the drafting run's state. Every
//! change goes through [`Package::apply`], which steps the artifact's machine and performs its commands that need
//! no I/O (validation, marking downstream artifacts stale); drafting (`Command::CallModel`) belongs to the driver.

use crate::artifact::{
    ArtifactKind, Artifacts, Criteria, Intake, Milestones, Pricing, PromptStamp, Requirements, Scope, SlotError,
    hash_content,
};
use crate::machine::{ArtifactState, Command, Event, StepError, step};
use crate::validate::validate;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The package cannot go out like this (e.g. a requirement only one vendor can meet).
    Blocker,
    /// A serious weakness a vendor or a protest would exploit.
    Major,
    /// Worth the buyer's attention; nothing is re-run for it.
    Minor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Perspective {
    /// A vendor's bid manager looking for ambiguity, lock-in and unpriceable asks.
    BidManager,
    /// A lawyer preparing a bid protest: unequal treatment, hidden criteria, unclear deadlines.
    ProtestLawyer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FindingStatus {
    /// A blocker or major finding: its artifact and everything downstream were drafted again.
    ReRun,
    /// A blocker or major finding left after the last critic cycle: the buyer decides.
    Unresolved,
    /// A minor finding: the buyer decides.
    AwaitingBuyer,
    /// The buyer read it and closed it.
    Dismissed,
}

/// An advisory finding of the red-team critic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Finding {
    pub cycle: u32,
    pub perspective: Perspective,
    pub severity: Severity,
    pub target: ArtifactKind,
    pub rationale: String,
    pub status: FindingStatus,
    /// Why the buyer dismissed it (set with [`FindingStatus::Dismissed`]).
    #[serde(default)]
    pub dismissal: Option<String>,
}

/// Why a finding cannot be dismissed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DismissError {
    #[error("the package has no finding number {0}")]
    NoSuchFinding(usize),
    #[error("this finding was already acted on (its artifact was drafted again) or dismissed")]
    Closed,
    #[error("say why the finding does not apply (a reason is kept with it)")]
    NoReason,
}

/// A step of a drafting run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "step", content = "artifact", rename_all = "snake_case")]
pub enum RunStep {
    Draft(ArtifactKind),
    Critique,
}

/// Where a drafting run stands. The container name is only the UI bindings' type name (`PrepRunStatus`, beside the
/// workflow runs' `RunStatus`); JSON carries the variant names alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(rename = "PrepRunStatus", rename_all = "snake_case")]
pub enum RunStatus {
    #[default]
    Idle,
    Running,
    /// Stopped before a budget would be overspent, or because the model is unavailable; `resume` continues.
    Paused,
    /// Stopped on a refused, truncated or out-of-shape draft; the artifact kept its content and shows the error.
    Failed,
    Done,
}

/// Limits of one drafting run. Tokens and cost count over the whole draft; time counts per run (each resume starts
/// the clock again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RunBudget {
    pub max_tokens: u64,
    pub max_cost_micros: i64,
    pub max_seconds: i64,
}

impl Default for RunBudget {
    fn default() -> Self {
        RunBudget { max_tokens: 400_000, max_cost_micros: 2_000_000, max_seconds: 600 }
    }
}

/// The drafting run's durable state: what is left to do and what was spent. Resuming replays it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, specta::Type)]
pub struct RunState {
    pub status: RunStatus,
    pub queue: Vec<RunStep>,
    pub budget: RunBudget,
    pub critic_cycles: u32,
    /// The critic cycle after which no blocker or major finding was left (convergence), if it came.
    pub converged_at_cycle: Option<u32>,
    pub tokens_used: u64,
    pub cost_micros: i64,
    /// The largest single step so far: the reserve kept free before the next step starts.
    pub largest_step_tokens: u64,
    pub largest_step_cost_micros: i64,
    pub model_calls: u32,
    pub pause_reason: Option<String>,
    pub error: Option<SlotError>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, specta::Type)]
pub struct Package {
    pub title: String,
    pub artifacts: Artifacts,
    pub findings: Vec<Finding>,
    /// Grounding problems shown to the buyer (a retrieval that failed, an unknown checklist type).
    pub warnings: Vec<String>,
    pub run: RunState,
}

impl Package {
    /// A new package from the buyer's intake.
    pub fn new(intake: Intake) -> Package {
        let mut package = Package { title: intake.title.clone(), ..Package::default() };
        package.set_content(ArtifactKind::Intake, Content::Intake(intake), None).ok();
        package
    }

    pub fn state(&self, kind: ArtifactKind) -> &ArtifactState {
        self.artifacts.state(kind)
    }

    /// Steps one artifact's machine and performs the commands that need no I/O. Returns the commands left for the
    /// caller (`CallModel`).
    pub fn apply(&mut self, kind: ArtifactKind, event: Event) -> Result<Vec<Command>, StepError> {
        let (state, commands) = step(self.artifacts.state(kind), &event)?;
        self.artifacts.set_state(kind, state);
        let mut left = Vec::new();
        for command in commands {
            match command {
                Command::Validate => {
                    let violations = validate(&self.artifacts, kind);
                    let (state, _) = step(self.artifacts.state(kind), &Event::Validated { violations })?;
                    self.artifacts.set_state(kind, state);
                }
                Command::MarkDownstreamStale => {
                    for downstream in kind.downstream() {
                        let (state, _) = step(self.artifacts.state(*downstream), &Event::UpstreamChanged)?;
                        self.artifacts.set_state(*downstream, state);
                    }
                }
                Command::CallModel => left.push(command),
            }
        }
        Ok(left)
    }

    /// Replaces an artifact's content (a person's edit when `prompt` is `None`, else a draft), hashes it, clears
    /// the error and steps the machine (`Edited` or `Drafted`).
    pub fn set_content(
        &mut self,
        kind: ArtifactKind,
        content: Content,
        prompt: Option<PromptStamp>,
    ) -> Result<(), StepError> {
        let drafted = prompt.is_some();
        match (kind, content) {
            (ArtifactKind::Intake, Content::Intake(c)) => store(&mut self.artifacts.intake, c, prompt),
            (ArtifactKind::Scope, Content::Scope(c)) => store(&mut self.artifacts.scope, c, prompt),
            (ArtifactKind::Requirements, Content::Requirements(c)) => {
                store(&mut self.artifacts.requirements, c, prompt)
            }
            (ArtifactKind::Criteria, Content::Criteria(c)) => store(&mut self.artifacts.criteria, c, prompt),
            (ArtifactKind::Pricing, Content::Pricing(c)) => store(&mut self.artifacts.pricing, c, prompt),
            (ArtifactKind::Milestones, Content::Milestones(c)) => store(&mut self.artifacts.milestones, c, prompt),
            _ => return Err(StepError::NotAllowed { state: "mismatched", event: "store content of another kind" }),
        }
        if kind == ArtifactKind::Intake {
            self.title = self.artifacts.intake.content.as_ref().map(|i| i.title.clone()).unwrap_or_default();
        }
        self.apply(kind, if drafted { Event::Drafted } else { Event::Edited })?;
        Ok(())
    }

    /// The buyer approves the content whose hash they saw.
    pub fn approve(&mut self, kind: ArtifactKind, seen_hash: &str) -> Result<(), StepError> {
        let current = self.artifacts.content_hash(kind).unwrap_or_default();
        self.apply(kind, Event::Approve { seen: seen_hash.to_string(), current })?;
        Ok(())
    }

    /// The buyer closes a finding that waits for them (a minor one, or one left after the last critic cycle), with
    /// the reason it does not apply. Findings are advisory: nothing else changes.
    pub fn dismiss_finding(&mut self, index: usize, reason: &str) -> Result<(), DismissError> {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(DismissError::NoReason);
        }
        let finding = self.findings.get_mut(index).ok_or(DismissError::NoSuchFinding(index))?;
        if !matches!(finding.status, FindingStatus::AwaitingBuyer | FindingStatus::Unresolved) {
            return Err(DismissError::Closed);
        }
        finding.status = FindingStatus::Dismissed;
        finding.dismissal = Some(reason.to_string());
        Ok(())
    }

    /// Runs the validators on every artifact with content again (after an upstream edit, or on `validate`).
    pub fn revalidate(&mut self) -> Result<(), StepError> {
        for kind in ArtifactKind::ALL {
            if matches!(self.state(kind), ArtifactState::Empty | ArtifactState::Drafting { .. }) {
                continue;
            }
            let violations = validate(&self.artifacts, kind);
            self.apply(kind, Event::Validated { violations })?;
        }
        Ok(())
    }

    pub fn set_error(&mut self, kind: ArtifactKind, error: Option<SlotError>) {
        self.artifacts.set_error(kind, error);
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

fn store<T: Serialize>(slot: &mut crate::artifact::Slot<T>, content: T, prompt: Option<PromptStamp>) {
    slot.content_hash = Some(hash_content(&content));
    slot.content = Some(content);
    slot.prompt = prompt;
    slot.error = None;
}

/// Content of any artifact, for [`Package::set_content`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "artifact", content = "content", rename_all = "snake_case")]
pub enum Content {
    Intake(Intake),
    Scope(Scope),
    Requirements(Requirements),
    Criteria(Criteria),
    Pricing(Pricing),
    Milestones(Milestones),
}

impl Content {
    pub fn kind(&self) -> ArtifactKind {
        match self {
            Content::Intake(_) => ArtifactKind::Intake,
            Content::Scope(_) => ArtifactKind::Scope,
            Content::Requirements(_) => ArtifactKind::Requirements,
            Content::Criteria(_) => ArtifactKind::Criteria,
            Content::Pricing(_) => ArtifactKind::Pricing,
            Content::Milestones(_) => ArtifactKind::Milestones,
        }
    }

    /// Parses a person's edit of one artifact from JSON.
    pub fn from_json(kind: ArtifactKind, value: serde_json::Value) -> Result<Content, serde_json::Error> {
        Ok(match kind {
            ArtifactKind::Intake => Content::Intake(serde_json::from_value(value)?),
            ArtifactKind::Scope => Content::Scope(serde_json::from_value(value)?),
            ArtifactKind::Requirements => Content::Requirements(serde_json::from_value(value)?),
            ArtifactKind::Criteria => Content::Criteria(serde_json::from_value(value)?),
            ArtifactKind::Pricing => Content::Pricing(serde_json::from_value(value)?),
            ArtifactKind::Milestones => Content::Milestones(serde_json::from_value(value)?),
        })
    }
}
