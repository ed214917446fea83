//! PactWise Source's rules, one home for the service and the desktop: sealed envelopes (`envelope`), a tender's
//! machine and deadlines (`tender`), and the evaluation's arithmetic (`evaluation`). Pure: no I/O, time passed in.
//! No model is involved anywhere here; no code scores, ranks or recommends a vendor (people score, code adds up).

pub mod envelope;
pub mod evaluation;
pub mod tender;
