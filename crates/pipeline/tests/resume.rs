//! Kill-and-resume: the driver is stopped at every point where it writes a stage record (as a killed process
//! would be: nothing after that write happens), then a fresh driver resumes from the records. The final review is
//! the same as an uninterrupted run's, and a stage that had finished is never run again.

use pactwise_checklists::Catalog;
use pactwise_domain::{ItemStatus, OrgId, Page};
use pactwise_model::CallContext;
use pactwise_pipeline::driver::{MemoryLog, StageLog, StageRecord};
use pactwise_pipeline::stages::{ContractPlan, FinalizeOutput, ItemCorrection};
use pactwise_pipeline::{Mode, Runner, Stage, StageStatus, Thresholds, run};
use std::sync::Arc;

const CONTRACT: &str = "MASTER SERVICES AGREEMENT\n\nThis Master Services Agreement is made on January 15, 2026 between \
Northwind Traders, Inc. (\"Customer\") and Fabrikam Consulting Group, Inc. (\"Supplier\").\n\n1. SERVICES. Supplier \
shall perform the services described in each statement of work.\n\n2. FEES. Customer shall pay each undisputed \
invoice within thirty (30) days of receipt.\n\n3. TERM. This Agreement continues for two years and renews \
automatically for successive one-year terms unless either party gives ninety (90) days' notice.\n\n4. LIABILITY. In \
no event shall either party's aggregate liability exceed the fees paid in the twelve months before the claim.\n\n5. \
GOVERNING LAW. This Agreement is governed by the laws of the State of New York.";

fn runner() -> Runner {
    Runner {
        catalog: Arc::new(Catalog::load().unwrap()),
        model: None,
        ctx: CallContext::new(OrgId::new(), None, "test"),
        mode: Mode::Offline,
        thresholds: Thresholds::default(),
        own_names: vec!["Northwind Traders, Inc.".into()],
        concurrency: 2,
        embedder: None,
    }
}

/// A memory log that "dies" at its n-th write: the write happens (it reached the disk), then nothing else does.
struct DyingLog {
    inner: MemoryLog,
    writes: usize,
    die_after: Option<usize>,
    /// Stages the driver started (each `running` record), in order.
    started: Vec<Stage>,
}

#[derive(Debug)]
struct Killed;

impl std::fmt::Display for Killed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("killed")
    }
}

impl StageLog for DyingLog {
    type Error = Killed;

    async fn load(&mut self) -> Result<Vec<StageRecord>, Killed> {
        Ok(self.inner.records.clone())
    }

    async fn save(&mut self, record: StageRecord) -> Result<(), Killed> {
        if record.status == StageStatus::Running {
            self.started.push(record.stage);
        }
        self.inner.save(record).await.unwrap();
        self.writes += 1;
        if Some(self.writes) == self.die_after { Err(Killed) } else { Ok(()) }
    }

    async fn clear(&mut self, stages: Vec<Stage>) -> Result<(), Killed> {
        self.inner.clear(stages).await.map_err(|_| Killed)
    }

    async fn corrections(&mut self) -> Result<Vec<ItemCorrection>, Killed> {
        Ok(self.inner.corrections.clone())
    }

    async fn write_contract(&mut self, plan: ContractPlan) -> Result<FinalizeOutput, Killed> {
        self.inner.write_contract(plan).await.map_err(|_| Killed)
    }
}

fn pages() -> Vec<Page> {
    vec![Page::plain(1, CONTRACT)]
}

#[tokio::test]
async fn killed_at_every_record_write_the_pipeline_resumes_to_the_same_result_without_rerunning_finished_stages() {
    let runner = runner();
    let pages = pages();
    let mut whole = DyingLog { inner: MemoryLog::default(), writes: 0, die_after: None, started: Vec::new() };
    let expected = run(&runner, &mut whole, &pages, None, None).await.unwrap();
    assert_eq!(whole.started, Stage::ALL, "an uninterrupted run starts each stage once");
    let total_writes = whole.writes;
    assert_eq!(total_writes, 10, "two records (running, finished) per stage, extract included");
    assert_eq!(expected.stages[0].stage, Stage::Extract);
    assert_eq!((expected.stages[0].status, expected.stages[0].outcome.as_deref()), (StageStatus::Done, Some("text")));

    for die_after in 1..=total_writes {
        let mut log = DyingLog { inner: MemoryLog::default(), writes: 0, die_after: Some(die_after), started: vec![] };
        assert!(run(&runner, &mut log, &pages, None, None).await.is_err(), "the run dies at write {die_after}");
        let before = log.started.clone();
        log.die_after = None;
        let resumed = run(&runner, &mut log, &pages, None, None).await.unwrap();
        assert_eq!(resumed.findings, expected.findings, "killed at write {die_after}");
        assert_eq!(resumed.gate, expected.gate);
        assert_eq!(resumed.classification, expected.classification);
        assert_eq!(resumed.finalize, expected.finalize);
        // Each stage ran at most once more than it had finished: stages that had finished did not run again.
        let after: Vec<Stage> = log.started[before.len()..].to_vec();
        let finished_before: Vec<Stage> = before
            .iter()
            .copied()
            .filter(|s| log.inner.records.iter().any(|r| r.stage == *s && r.attempt == 1 && r.status.is_finished()))
            .collect();
        for stage in &after {
            assert!(!finished_before.contains(stage) || *stage == *before.last().unwrap(), "{stage:?} re-ran");
        }
        // The stage that was running when the process died ran again (attempt 2); none other did.
        for record in &log.inner.records {
            let expected_attempt = if before.last() == Some(&record.stage) && die_after % 2 == 1 { 2 } else { 1 };
            assert_eq!(record.attempt, expected_attempt, "{:?} after dying at write {die_after}", record.stage);
        }
    }
}

#[tokio::test]
async fn a_rerun_that_was_asked_for_runs_the_stage_and_those_after_it_and_corrections_win() {
    let runner = runner();
    let pages = pages();
    let mut log = MemoryLog::default();
    let first = run(&runner, &mut log, &pages, None, None).await.unwrap();
    let item = first.findings[0].item_id.clone();
    let corrected =
        if first.findings[0].status == ItemStatus::Absent { ItemStatus::Present } else { ItemStatus::Absent };
    log.corrections.push(ItemCorrection {
        item_id: item.clone(),
        status: corrected,
        quote: None,
        note: Some("checked".into()),
    });
    let again = run(&runner, &mut log, &pages, None, Some(Stage::Checklist)).await.unwrap();
    let attempts: Vec<(Stage, u32)> = again.stages.iter().map(|r| (r.stage, r.attempt)).collect();
    assert_eq!(
        attempts,
        vec![(Stage::Extract, 1), (Stage::Classify, 1), (Stage::Checklist, 1), (Stage::Gate, 1), (Stage::Finalize, 1)]
    );
    let f = again.findings.iter().find(|f| f.item_id == item).unwrap();
    assert_eq!(f.status, corrected, "the person's correction wins over the re-run");
    assert_eq!(f.method, pactwise_domain::Method::Person);
    // Running again without asking re-runs nothing.
    let third = run(&runner, &mut log, &pages, None, None).await.unwrap();
    assert_eq!(third.stages, again.stages);
}

#[tokio::test]
async fn a_failed_extraction_is_a_recorded_stage_with_its_reason_and_the_gate_sends_the_document_to_a_person() {
    let runner = runner();
    let failure = "the PDF is password-protected";
    let mut whole = DyingLog { inner: MemoryLog::default(), writes: 0, die_after: None, started: Vec::new() };
    let expected = run(&runner, &mut whole, &[], Some(failure), None).await.unwrap();
    let extract = &expected.stages[0];
    assert_eq!((extract.stage, extract.status, extract.attempt), (Stage::Extract, StageStatus::Degraded, 1));
    assert_eq!(extract.outcome.as_deref(), Some("unreadable"));
    assert!(extract.reason.as_deref().unwrap().contains(failure), "{:?}", extract.reason);
    assert_eq!(extract.output.as_ref().unwrap()["failure"], failure);
    let gate = expected.gate.clone().unwrap();
    assert_eq!(gate.reason, Some(pactwise_domain::GateReason::OcrFailed));

    // Killed while extract was running, or right after it was recorded: the resumed run ends the same way, and a
    // finished extract record is not written again.
    for die_after in [1, 2] {
        let mut log = DyingLog { inner: MemoryLog::default(), writes: 0, die_after: Some(die_after), started: vec![] };
        assert!(run(&runner, &mut log, &[], Some(failure), None).await.is_err());
        log.die_after = None;
        let resumed = run(&runner, &mut log, &[], Some(failure), None).await.unwrap();
        assert_eq!(resumed.gate, expected.gate, "killed at write {die_after}");
        assert_eq!(resumed.stages[0].reason, expected.stages[0].reason);
        let extract_runs = log.started.iter().filter(|s| **s == Stage::Extract).count();
        assert_eq!(extract_runs, if die_after == 1 { 2 } else { 1 }, "killed at write {die_after}");
    }
}

#[tokio::test]
async fn an_extraction_recorded_where_the_file_was_read_is_not_run_again_and_decides_the_gate() {
    let runner = runner();
    // The import read the file, failed, and recorded so; the pipeline later gets the (empty) stored pages.
    let mut log = MemoryLog::default();
    let record = pactwise_pipeline::extract_record(1, &[], Some("text recognition is not installed"), 1200);
    log.records.push(record.clone());
    let report = run(&runner, &mut log, &[], None, None).await.unwrap();
    assert_eq!(report.stages[0], record, "kept as recorded: latency and reason of the real reading");
    assert_eq!(report.gate.unwrap().reason, Some(pactwise_domain::GateReason::OcrFailed));
    // Pages read fine elsewhere: the record says so and the gate does not call them unreadable.
    let mut log = MemoryLog::default();
    log.records.push(pactwise_pipeline::extract_record(1, &pages(), None, 40));
    let report = run(&runner, &mut log, &pages(), None, None).await.unwrap();
    assert_eq!(report.stages[0].outcome.as_deref(), Some("text"));
    assert_ne!(report.gate.unwrap().reason, Some(pactwise_domain::GateReason::OcrFailed));
}
