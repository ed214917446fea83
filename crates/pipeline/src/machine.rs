//! The durable stage machine of one document: a plain state and a pure [`step`] that says what to do next. The
//! driver ([`crate::driver`]) does the I/O: it persists each stage's record (running, then done/degraded/failed
//! with its output) and feeds the outcome back as an event. Because the records are the state, a process killed
//! mid-pipeline resumes from the last finished stage, and a finished stage is never re-run unless asked.

use serde::{Deserialize, Serialize};

/// The pipeline's stages, in order. `Extract` records how the pages were read (pages, OCR, why none could be);
/// the reading itself runs where the file is (import, sync, `review FILE`) and is recorded through the same log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Extract,
    Classify,
    Checklist,
    Gate,
    Finalize,
}

impl Stage {
    pub const ALL: [Stage; 5] = [Stage::Extract, Stage::Classify, Stage::Checklist, Stage::Gate, Stage::Finalize];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Extract => "extract",
            Stage::Classify => "classify",
            Stage::Checklist => "checklist",
            Stage::Gate => "gate",
            Stage::Finalize => "finalize",
        }
    }

    pub fn parse(text: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// A stage's status as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    Pending,
    Running,
    Done,
    /// Finished with a fallback or with some of its work missing (the reason says which).
    Degraded,
    /// Could not finish at all; the pipeline stops here and says why.
    Failed,
}

impl StageStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StageStatus::Pending => "pending",
            StageStatus::Running => "running",
            StageStatus::Done => "done",
            StageStatus::Degraded => "degraded",
            StageStatus::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<StageStatus> {
        [StageStatus::Pending, StageStatus::Running, StageStatus::Done, StageStatus::Degraded, StageStatus::Failed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }

    /// Done or degraded: the stage's output exists and is not produced again unless asked.
    pub fn is_finished(self) -> bool {
        matches!(self, StageStatus::Done | StageStatus::Degraded)
    }
}

/// The machine's state: each stage's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineState {
    pub statuses: [StageStatus; 5],
}

impl Default for PipelineState {
    fn default() -> Self {
        PipelineState { statuses: [StageStatus::Pending; 5] }
    }
}

impl PipelineState {
    pub fn status(&self, stage: Stage) -> StageStatus {
        self.statuses[stage.index()]
    }

    fn with(mut self, stage: Stage, status: StageStatus) -> Self {
        self.statuses[stage.index()] = status;
        self
    }
}

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Start, or resume after a restart: run the first stage that has not finished.
    Resume,
    /// A person asked to run this stage again (and so every stage after it).
    Rerun(Stage),
    /// The driver finished running a stage with this status (done, degraded or failed).
    Finished(Stage, StageStatus),
}

/// What the driver must do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Forget these stages' records (a re-run that was asked for).
    Clear(Vec<Stage>),
    /// Record the stage as running, run it, record its outcome, then send `Finished`.
    Run(Stage),
    /// Every stage has finished.
    Complete,
    /// A stage failed; the pipeline stops until asked again.
    Halt(Stage),
}

/// The pure transition function.
pub fn step(state: PipelineState, event: Event) -> (PipelineState, Vec<Command>) {
    match event {
        Event::Resume => (state, vec![next(&state)]),
        Event::Rerun(stage) => {
            let mut state = state;
            let cleared: Vec<Stage> = Stage::ALL.into_iter().filter(|s| *s >= stage).collect();
            for s in &cleared {
                state = state.with(*s, StageStatus::Pending);
            }
            (state, vec![Command::Clear(cleared), Command::Run(stage)])
        }
        Event::Finished(stage, status) => {
            let state = state.with(stage, status);
            if status == StageStatus::Failed || !status.is_finished() {
                (state, vec![Command::Halt(stage)])
            } else {
                (state, vec![next(&state)])
            }
        }
    }
}

/// The first stage that has not finished (a stage left running by a killed process runs again), or `Complete`.
fn next(state: &PipelineState) -> Command {
    Stage::ALL.into_iter().find(|s| !state.status(*s).is_finished()).map_or(Command::Complete, Command::Run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use StageStatus::*;

    #[test]
    fn a_fresh_document_runs_every_stage_in_order() {
        let mut state = PipelineState::default();
        let mut ran = Vec::new();
        let (s, mut commands) = step(state, Event::Resume);
        state = s;
        while let Some(Command::Run(stage)) = commands.first().cloned() {
            ran.push(stage);
            let (s, c) = step(state, Event::Finished(stage, Done));
            state = s;
            commands = c;
        }
        assert_eq!(ran, Stage::ALL);
        assert_eq!(commands, vec![Command::Complete]);
    }

    #[test]
    fn resume_starts_at_the_first_unfinished_stage_and_reruns_one_left_running() {
        let state = PipelineState { statuses: [Running, Pending, Pending, Pending, Pending] };
        assert_eq!(step(state, Event::Resume).1, vec![Command::Run(Stage::Extract)]);
        let state = PipelineState { statuses: [Done, Done, Running, Pending, Pending] };
        assert_eq!(step(state, Event::Resume).1, vec![Command::Run(Stage::Checklist)]);
        let state = PipelineState { statuses: [Degraded, Degraded, Done, Done, Pending] };
        assert_eq!(step(state, Event::Resume).1, vec![Command::Run(Stage::Finalize)]);
        let state = PipelineState { statuses: [Done, Done, Done, Degraded, Done] };
        assert_eq!(step(state, Event::Resume).1, vec![Command::Complete]);
    }

    #[test]
    fn a_failed_stage_halts_and_a_later_resume_retries_it() {
        let start = PipelineState { statuses: [Done, Pending, Pending, Pending, Pending] };
        let (state, commands) = step(start, Event::Finished(Stage::Classify, Failed));
        assert_eq!(commands, vec![Command::Halt(Stage::Classify)]);
        assert_eq!(step(state, Event::Resume).1, vec![Command::Run(Stage::Classify)]);
    }

    #[test]
    fn a_rerun_clears_the_stage_and_everything_after_it_but_nothing_before() {
        let state = PipelineState { statuses: [Done, Done, Done, Done, Done] };
        let (state, commands) = step(state, Event::Rerun(Stage::Checklist));
        assert_eq!(
            commands,
            vec![Command::Clear(vec![Stage::Checklist, Stage::Gate, Stage::Finalize]), Command::Run(Stage::Checklist)]
        );
        assert_eq!(state.statuses, [Done, Done, Pending, Pending, Pending]);
    }
}
