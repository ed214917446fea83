//! The document pipeline: how the pages were read is recorded (extract), a contract is classified into one of the
//! catalog's types, its checklist is pre-filled (by the model through the gateway, or offline by rules), every quote
//! is verified on its page, the review gate routes it to a person or not, and finalize records the contract and its
//! extractions. Owns the stage machine (a pure `step` with a thin driver over a `StageLog`), the model path, the
//! offline evaluator, quote verification and the gate. Imports domain, checklists, extract and model; the
//! store-backed `StageLog` lives in `pactwise-api`.

pub mod cuad_answers;
pub mod driver;
pub mod embedding_cache;
pub mod eval;
pub mod evidence;
pub mod gate;
pub mod machine;
pub mod model_path;
pub mod offline;
pub mod stages;
pub mod values;
pub mod verify;

pub use driver::{
    DriverError, MemoryLog, PipelineReport, StageLog, StageRecord, extract_record, next_attempt, run,
    run_with_structure,
};
pub use gate::{THRESHOLDS_KEY, Thresholds};
pub use machine::{Stage, StageStatus};
pub use stages::{
    ChecklistOutput, ChecklistSummary, ContractPlan, ExtractOutput, FinalizeOutput, ItemCorrection, Mode, Runner,
};
