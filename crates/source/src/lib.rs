//! PactWise Source's rules, one home for the service and the desktop: sealed envelopes (`envelope`), a tender's
//! machine and deadlines (`tender`), the evaluation's arithmetic (`evaluation`), the hash-chained audit trail
//! (`audit`), the OCDS release package (`ocds`) and the buyer routes' wire types (`wire`). Pure: no I/O, time passed in.
//! No model is involved anywhere here; no code scores, ranks or recommends a vendor (people score, code adds up).

pub mod audit;
pub mod envelope;
pub mod evaluation;
pub mod ocds;
pub mod tender;
pub mod wire;
