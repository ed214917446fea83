//! The offline path: what a lawyer sees with no network or no API key. The contract is indexed once
//! ([`ContractIndex`]: pages cut into sentences); a keyword classifier reads the title and the catalog's type signals
//! ([`classify`]); a rule-based evaluator answers every item of the type from shared per-category clause signals and
//! the items' own signals ([`evaluate`]); and rules pick out the contract record's fields ([`extract_fields`]). Rule
//! answers carry a confidence capped at [`RULES_CONFIDENCE_CAP`], so they are pre-fills a person confirms, never
//! answers the gate trusts. Every quote is a sentence cut from its page's own text.

mod classify;
mod evaluate;
mod fields;
mod index;
pub mod jurisdictions;
pub mod learned;

pub use classify::classify;
pub use evaluate::{Evidence, category_evidence, clause_quote, evaluate, evaluate_with, learned_finding};
pub use fields::{extract_fields, governing_law, parties};
pub use index::{ContractIndex, Place, Sentence};
pub use jurisdictions::jurisdiction_in;

/// No rule-based answer claims more confidence than this.
pub const RULES_CONFIDENCE_CAP: f32 = 0.5;

#[cfg(test)]
mod tests;
