//! Milestone dates, computed in code from the intake's timeline on a business-day calendar (weekends plus the
//! intake's holiday list): `pactwise_rules::prep::calendar`, which the publish gate uses too, re-exported here. The
//! model never writes a date; it writes only the rationale beside each one.

pub use pactwise_rules::prep::calendar::*;
