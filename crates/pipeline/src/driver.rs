//! The thin driver: loads the stage records, feeds events to [`crate::machine::step`] and carries out its
//! commands — recording a stage as running, running it, recording its outcome. Where records live is the
//! [`StageLog`]'s business: the store for an imported document, memory for `pactwise review` (which keeps nothing).

use crate::machine::{Command, Event, PipelineState, Stage, StageStatus, step};
use crate::model_path::CallFigures;
use crate::offline::ContractIndex;
use crate::stages::{
    ChecklistOutput, ContractPlan, ExtractOutput, FinalizeOutput, ItemCorrection, Runner, StageResult,
    apply_corrections, extract_result, parse_output,
};
use pactwise_domain::usage::TokenUsage;
use pactwise_domain::{Classification, GateDecision, ItemFinding, Page, RejectedExtraction};
use pactwise_structure::DocumentStructure;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::time::Instant;

/// One stage's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    pub stage: Stage,
    pub status: StageStatus,
    pub attempt: u32,
    pub model: Option<String>,
    pub tokens: TokenUsage,
    pub latency_ms: u64,
    pub outcome: Option<String>,
    pub reason: Option<String>,
    pub output: Option<serde_json::Value>,
}

impl StageRecord {
    /// The record written when a stage starts: a record left `running` is a stage a stopped process did not finish.
    pub fn running(stage: Stage, attempt: u32) -> StageRecord {
        StageRecord {
            stage,
            status: StageStatus::Running,
            attempt,
            model: None,
            tokens: TokenUsage::default(),
            latency_ms: 0,
            outcome: None,
            reason: None,
            output: None,
        }
    }

    fn finished(stage: Stage, attempt: u32, result: StageResult, latency_ms: u64) -> StageRecord {
        StageRecord {
            stage,
            status: result.status,
            attempt,
            model: result.model,
            tokens: result.figures.tokens,
            latency_ms,
            outcome: Some(result.outcome),
            reason: result.reason,
            output: Some(result.output),
        }
    }
}

/// The attempt number of the stage's next run.
pub fn next_attempt(records: &[StageRecord], stage: Stage) -> u32 {
    records.iter().find(|r| r.stage == stage).map_or(0, |r| r.attempt) + 1
}

/// The extract stage's record when the reading ran where the file is (import, sync, `review FILE`): the pages read,
/// or why none could be (`failure`), and how long the reading took.
pub fn extract_record(attempt: u32, pages: &[Page], failure: Option<&str>, latency_ms: u64) -> StageRecord {
    StageRecord::finished(Stage::Extract, attempt, extract_result(pages, failure), latency_ms)
}

/// Where the driver keeps stage records, reads corrections and writes the contract record.
pub trait StageLog {
    type Error: std::fmt::Display;
    fn load(&mut self) -> impl Future<Output = Result<Vec<StageRecord>, Self::Error>> + Send;
    fn save(&mut self, record: StageRecord) -> impl Future<Output = Result<(), Self::Error>> + Send;
    fn clear(&mut self, stages: Vec<Stage>) -> impl Future<Output = Result<(), Self::Error>> + Send;
    fn corrections(&mut self) -> impl Future<Output = Result<Vec<ItemCorrection>, Self::Error>> + Send;
    fn write_contract(
        &mut self,
        plan: ContractPlan,
    ) -> impl Future<Output = Result<FinalizeOutput, Self::Error>> + Send;
}

/// Why the driver could not go on: the stage log's own error, kept as it is (typed, with its code), so the caller
/// can tell a missing document from a full disk. Stage failures are recorded, not returned.
#[derive(Debug, thiserror::Error)]
#[error("the pipeline's records could not be read or written: {0}")]
pub struct DriverError<E: std::fmt::Display>(pub E);

impl<E: std::fmt::Display> DriverError<E> {
    /// The stage log's error.
    pub fn into_inner(self) -> E {
        self.0
    }
}

/// Everything known about a document after the driver stops.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PipelineReport {
    pub stages: Vec<StageRecord>,
    pub classification: Option<Classification>,
    /// With people's corrections applied.
    pub findings: Vec<ItemFinding>,
    pub rejected: Vec<RejectedExtraction>,
    pub checklist: Option<ChecklistOutput>,
    pub gate: Option<GateDecision>,
    pub finalize: Option<FinalizeOutput>,
    /// The stage that failed, if the pipeline stopped.
    pub halted_at: Option<Stage>,
}

/// Runs (or resumes) the pipeline of one document. `rerun` asks for a stage and everything after it to run again.
/// `pages` are the document's pages as read; when the log holds no finished extract record (the reading was not
/// recorded where it ran), the extract stage records them, with `extraction_failure` as the reason none could be
/// read. The document's structure is read from the pages; [`run_with_structure`] takes one read before.
pub async fn run<L: StageLog>(
    runner: &Runner,
    log: &mut L,
    pages: &[Page],
    extraction_failure: Option<&str>,
    rerun: Option<Stage>,
) -> Result<PipelineReport, DriverError<L::Error>> {
    run_with_structure(runner, log, pages, DocumentStructure::build(pages), extraction_failure, rerun).await
}

/// [`run`] with the document's structure as stored with it, so both review paths (the rules' choice of evidence and
/// the check of every quote) read the same structure.
pub async fn run_with_structure<L: StageLog>(
    runner: &Runner,
    log: &mut L,
    pages: &[Page],
    structure: DocumentStructure,
    extraction_failure: Option<&str>,
    rerun: Option<Stage>,
) -> Result<PipelineReport, DriverError<L::Error>> {
    let err = DriverError;
    let mut records: Vec<StageRecord> = log.load().await.map_err(err)?;
    let mut state = PipelineState::default();
    for r in &records {
        state.statuses[r.stage.index()] = r.status;
    }
    let index = ContractIndex::with_structure(pages, structure);
    let mut event = rerun.map_or(Event::Resume, Event::Rerun);
    let mut halted_at = None;
    'outer: loop {
        let (next_state, commands) = step(state, event);
        state = next_state;
        for command in commands {
            match command {
                Command::Clear(stages) => {
                    records.retain(|r| !stages.contains(&r.stage));
                    log.clear(stages).await.map_err(err)?;
                }
                Command::Run(stage) => {
                    let attempt = next_attempt(&records, stage);
                    let running = StageRecord::running(stage, attempt);
                    log.save(running.clone()).await.map_err(err)?;
                    upsert(&mut records, running);
                    let started = Instant::now();
                    let span = tracing::info_span!("pipeline_stage", stage = stage.as_str(), attempt);
                    let result = {
                        let _enter = span.enter();
                        tracing::info!("stage started");
                        drop(_enter);
                        run_stage(runner, log, stage, &index, pages, extraction_failure, &records).await
                    };
                    let result = match result {
                        Ok(r) => r,
                        Err(e) => return Err(e),
                    };
                    let elapsed = started.elapsed().as_millis() as u64;
                    tracing::info!(
                        stage = stage.as_str(),
                        status = result.status.as_str(),
                        outcome = %result.outcome,
                        calls = result.figures.calls,
                        input_tokens = result.figures.tokens.input,
                        output_tokens = result.figures.tokens.output,
                        latency_ms = elapsed,
                        "stage finished"
                    );
                    let status = result.status;
                    let record = StageRecord::finished(stage, attempt, result, elapsed);
                    log.save(record.clone()).await.map_err(err)?;
                    upsert(&mut records, record);
                    event = Event::Finished(stage, status);
                    continue 'outer;
                }
                Command::Complete => break 'outer,
                Command::Halt(stage) => {
                    halted_at = Some(stage);
                    break 'outer;
                }
            }
        }
        break;
    }
    report(log, records, halted_at).await
}

fn upsert(records: &mut Vec<StageRecord>, record: StageRecord) {
    match records.iter_mut().find(|r| r.stage == record.stage) {
        Some(r) => *r = record,
        None => records.push(record),
    }
}

fn output_of(records: &[StageRecord], stage: Stage) -> Option<&serde_json::Value> {
    records.iter().find(|r| r.stage == stage && r.status.is_finished()).and_then(|r| r.output.as_ref())
}

async fn run_stage<L: StageLog>(
    runner: &Runner,
    log: &mut L,
    stage: Stage,
    index: &ContractIndex,
    pages: &[Page],
    extraction_failure: Option<&str>,
    records: &[StageRecord],
) -> Result<StageResult, DriverError<L::Error>> {
    let err = DriverError;
    let classification = || parse_output::<Classification>(Stage::Classify, output_of(records, Stage::Classify));
    let checklist = || parse_output::<ChecklistOutput>(Stage::Checklist, output_of(records, Stage::Checklist));
    Ok(match stage {
        Stage::Extract => extract_result(pages, extraction_failure),
        Stage::Classify => runner.classify(index).await,
        Stage::Checklist => match classification() {
            Ok(c) => runner.checklist(index, &c).await,
            Err(reason) => failed(reason),
        },
        Stage::Gate => match (classification(), checklist()) {
            (Ok(c), Ok(k)) => {
                // Whether the pages could be read is the extract stage's record (the reading may have run elsewhere).
                let ocr_failed = parse_output::<ExtractOutput>(Stage::Extract, output_of(records, Stage::Extract))
                    .map_or(pages.is_empty(), |e| e.failed());
                let corrections = log.corrections().await.map_err(err)?;
                runner.gate(pages, ocr_failed, &c, &k, &corrections)
            }
            (Err(reason), _) | (_, Err(reason)) => failed(reason),
        },
        Stage::Finalize => match checklist() {
            Ok(k) => {
                let corrections = log.corrections().await.map_err(err)?;
                let plan = runner.finalize_plan(&k, &corrections);
                let outcome = log.write_contract(plan).await.map_err(err)?;
                StageResult {
                    status: StageStatus::Done,
                    model: None,
                    figures: CallFigures::default(),
                    outcome: outcome.vendor_match.clone(),
                    reason: None,
                    output: serde_json::to_value(&outcome).unwrap_or_default(),
                }
            }
            Err(reason) => failed(reason),
        },
    })
}

fn failed(reason: String) -> StageResult {
    StageResult {
        status: StageStatus::Failed,
        model: None,
        figures: CallFigures::default(),
        outcome: "failed".into(),
        reason: Some(reason),
        output: serde_json::Value::Null,
    }
}

/// Builds the report from the records, with the current corrections applied.
pub async fn report<L: StageLog>(
    log: &mut L,
    mut records: Vec<StageRecord>,
    halted_at: Option<Stage>,
) -> Result<PipelineReport, DriverError<L::Error>> {
    records.sort_by_key(|r| r.stage);
    let classification = parse_output::<Classification>(Stage::Classify, output_of(&records, Stage::Classify)).ok();
    let checklist = parse_output::<ChecklistOutput>(Stage::Checklist, output_of(&records, Stage::Checklist)).ok();
    let gate = parse_output::<GateDecision>(Stage::Gate, output_of(&records, Stage::Gate)).ok();
    let finalize = parse_output::<FinalizeOutput>(Stage::Finalize, output_of(&records, Stage::Finalize)).ok();
    let corrections = log.corrections().await.map_err(DriverError)?;
    let findings = checklist.as_ref().map(|k| apply_corrections(&k.findings, &corrections)).unwrap_or_default();
    let rejected = checklist.as_ref().map(|k| k.rejected.clone()).unwrap_or_default();
    Ok(PipelineReport { stages: records, classification, findings, rejected, checklist, gate, finalize, halted_at })
}

/// A stage log in memory: `pactwise review` and dry runs, which keep nothing.
#[derive(Debug, Default)]
pub struct MemoryLog {
    pub records: Vec<StageRecord>,
    pub corrections: Vec<ItemCorrection>,
    pub plan: Option<ContractPlan>,
}

impl StageLog for MemoryLog {
    type Error = std::convert::Infallible;

    async fn load(&mut self) -> Result<Vec<StageRecord>, Self::Error> {
        Ok(self.records.clone())
    }

    async fn save(&mut self, record: StageRecord) -> Result<(), Self::Error> {
        upsert(&mut self.records, record);
        Ok(())
    }

    async fn clear(&mut self, stages: Vec<Stage>) -> Result<(), Self::Error> {
        self.records.retain(|r| !stages.contains(&r.stage));
        Ok(())
    }

    async fn corrections(&mut self) -> Result<Vec<ItemCorrection>, Self::Error> {
        Ok(self.corrections.clone())
    }

    async fn write_contract(&mut self, plan: ContractPlan) -> Result<FinalizeOutput, Self::Error> {
        let vendor_match = match (&plan.counterparty, plan.create_vendor) {
            (None, _) => "none",
            (Some(_), true) => "would_create_or_link",
            (Some(_), false) => "needs_review",
        };
        let output = FinalizeOutput {
            counterparty: plan.counterparty.as_ref().map(|c| c.value.clone()),
            vendor_match: vendor_match.into(),
            vendor: None,
        };
        self.plan = Some(plan);
        Ok(output)
    }
}
