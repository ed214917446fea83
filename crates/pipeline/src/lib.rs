//! The document pipeline: after extraction, a contract is classified into one of the catalog's types, its checklist
//! is pre-filled (by the model through the gateway, or offline by rules), every quote is verified on its page, the
//! review gate routes it to a person or not, and finalize records the contract and its extractions. Owns the stage
//! machine (a pure `step` with a thin driver), the offline evaluator, quote verification and the gate.

pub mod offline;
pub mod verify;
