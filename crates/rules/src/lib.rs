//! Pure rules shared by every place that must agree on them: the desktop (`api`, `store`), the engine and the sync
//! service. Each rule has exactly one home here; callers never keep a copy of their own. No I/O, no clock: time and
//! facts come in as arguments.

pub mod approval;
pub mod contract_dates;
pub mod invoices;
pub mod lww;
pub mod prep;
pub mod roles;
pub mod settings;
pub mod vendor_link;
pub mod vendors;
