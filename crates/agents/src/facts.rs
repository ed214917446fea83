//! What a run knows of the organization's records: read by the api in the session's scope when the request is
//! run and kept in the run's input, so every step works from the same snapshot, a run replays the same way, and
//! no step reads a store (nor another organization's rows). Text here came from documents: it is data, shown as
//! such and never followed.

use crate::manager::Money;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// The organization's records a plan names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Facts {
    /// The contracts the request names that the organization holds.
    pub contracts: Vec<ContractFacts>,
    /// The vendors the request names that the organization knows.
    pub vendors: Vec<VendorFacts>,
}

/// One contract as the agents see it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ContractFacts {
    /// Its reference (`MSA-2026-014`).
    pub reference: String,
    pub document: String,
    /// The document's name.
    pub name: String,
    pub counterparty: Option<String>,
    /// The linked vendor's id.
    pub vendor: Option<String>,
    pub pages: u32,
    /// Pages whose text came from OCR.
    pub scanned_pages: u32,
    /// Pages without any text (a blank or unreadable scan).
    pub empty_pages: u32,
    /// A person finalized the review (else its items are pre-filled suggestions).
    pub finalized: bool,
    /// Checklist items evaluated in all.
    pub items_evaluated: u32,
    /// The items that matter here: red-flagged ones and critical ones missing or partial.
    pub items: Vec<ItemFacts>,
    pub expires_on: Option<NaiveDate>,
    pub notice_by: Option<NaiveDate>,
    /// A renewal notice run is already deciding on this contract's notice deadline (the reminder went out).
    #[serde(default)]
    pub renewal_started: bool,
    /// The contract's value as written in it ("USD 1,200,000 per year").
    pub value_text: Option<String>,
    /// The pricing or payment terms as written.
    pub payment_terms: Option<String>,
}

/// A checklist item of a contract.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ItemFacts {
    pub question: String,
    /// `critical`, `high`, `medium` or `low`.
    pub risk: String,
    /// `present`, `partial`, `absent` or `not evaluated`.
    pub status: String,
    /// The catalog's red flags the evidence triggers.
    pub red_flags: Vec<String>,
    /// The catalog's regulatory references of the item ("GDPR Art. 28").
    pub regulatory: Vec<String>,
    pub page: Option<u32>,
}

/// One vendor as the agents see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VendorFacts {
    pub id: String,
    pub name: String,
    /// Its onboarding state: `active`, `onboarding`, `blocked`, …
    pub status: String,
    /// When its record was created (an onboarding's start).
    pub since: DateTime<Utc>,
    /// Finalized contracts linked to it.
    pub contracts: u32,
}

impl ContractFacts {
    /// The contract's value read as money (the manager's amount reading), if it states one.
    pub fn value(&self, default_currency: &str) -> Option<Money> {
        self.value_text.as_deref().and_then(|t| crate::manager::amounts_in(t, default_currency).into_iter().next())
    }
}
