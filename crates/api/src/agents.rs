//! The agent platform as user actions: the registry of the ten agent types, the organization's agent thresholds
//! (read with defaults, changed one setting at a time through `pactwise_agents::AgentsConfig`'s one check, owners
//! and admins only) and the manager's plan for a request, without running it. The plan resolves contract references
//! and vendors against a snapshot of the session's organization only ([`OrgSnapshot`]).

use crate::{Api, ApiError};
use pactwise_agents::{
    AgentSpec, AgentsConfig, Context, KnownContract, KnownVendor, MemoryRecords, OrgRecords, Plan, VendorIndex,
};
use pactwise_domain::ErrorCode;
use pactwise_store::{OrgScope, Store, StoreError};

/// The setting (per organization, not synced) holding the agents' thresholds.
pub const AGENTS_CONFIG_KEY: &str = "agents.config";

/// The records of one organization the manager resolves names against: its finalized, live contracts by
/// reference (the document name's first word, e.g. "MSA-2026-014" of "MSA-2026-014 Globex.pdf", as invoices are
/// matched) and its vendors that are not merged. Read in the session's scope, so never another organization's.
pub struct OrgSnapshot(MemoryRecords);

impl OrgSnapshot {
    pub fn read(store: &Store, scope: &OrgScope) -> Result<OrgSnapshot, StoreError> {
        let contracts = store
            .vendors()
            .finalized_contracts(scope)?
            .into_iter()
            .map(|(document, name, vendor)| KnownContract {
                id: document.to_string(),
                reference: reference_of(&name),
                vendor,
            })
            .collect();
        let vendors = store
            .vendors()
            .list(scope, false)?
            .into_iter()
            .map(|row| KnownVendor { id: row.record.id, name: row.record.name, other_names: row.record.aliases })
            .collect();
        Ok(OrgSnapshot(MemoryRecords::new(contracts, vendors)))
    }
}

impl OrgRecords for OrgSnapshot {
    fn contract(&self, reference: &str) -> Option<KnownContract> {
        self.0.contract(reference)
    }
    fn vendors(&self) -> &VendorIndex {
        self.0.vendors()
    }
}

/// A contract document's reference: its name's first word without the extension.
fn reference_of(name: &str) -> String {
    let first = name.split_whitespace().next().unwrap_or(name);
    let stem = first.rsplit_once('.').map_or(first, |(s, ext)| if ext.len() <= 4 { s } else { first });
    stem.to_ascii_uppercase()
}

fn refused(e: pactwise_agents::ConfigRefused) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, e.to_string())
}

impl Api {
    /// The ten agent types: job, dependencies, mode, whether they read thresholds.
    pub fn agent_registry(&self) -> Vec<AgentSpec> {
        pactwise_agents::registry()
    }

    /// The organization's agent thresholds (the defaults where none are set). A stored value that no longer passes
    /// the check reads as the defaults, with a warning in the log, so setting one value repairs it.
    pub async fn agents_config(&self, scope: &OrgScope) -> Result<AgentsConfig, ApiError> {
        let s = scope.clone();
        let stored =
            self.db.call(move |store| store.settings().get::<serde_json::Value>(&s, AGENTS_CONFIG_KEY)).await?;
        Ok(match stored {
            None => AgentsConfig::default(),
            Some(v) => AgentsConfig::from_json(&v).unwrap_or_else(|e| {
                tracing::warn!(org = %scope.org(), "the stored agent configuration is not valid and is ignored: {e}");
                AgentsConfig::default()
            }),
        })
    }

    /// Changes one threshold (`agent.field`, e.g. `secretary.reminder_days_before`); owners and admins only. Refused
    /// with every problem in words when the result does not pass the check; nothing is written then.
    pub async fn set_agents_config(
        &self,
        scope: &OrgScope,
        setting: &str,
        value: &str,
    ) -> Result<AgentsConfig, ApiError> {
        pactwise_rules::roles::check(scope.role(), pactwise_rules::roles::SharedChange::Setting(AGENTS_CONFIG_KEY))
            .map_err(|refusal| ApiError::new(ErrorCode::Forbidden, refusal.message))?;
        let config = self.agents_config(scope).await?.with_setting(setting, value).map_err(refused)?;
        let s = scope.clone();
        let stored = config.clone();
        self.db.call(move |store| store.settings().set(&s, AGENTS_CONFIG_KEY, &stored)).await?;
        Ok(config)
    }

    /// The manager's plan for a request, without running it: resolved against the session's organization, with
    /// its thresholds and the clock.
    pub async fn plan_request(&self, scope: &OrgScope, request: String) -> Result<Plan, ApiError> {
        let config = self.agents_config(scope).await?;
        let s = scope.clone();
        let clock = self.clock.clone();
        let snapshot = self.db.call(move |store| OrgSnapshot::read(store, &s)).await?;
        Ok(pactwise_agents::plan(&request, clock.as_ref(), &Context { records: &snapshot, config: &config }))
    }
}

#[cfg(test)]
mod tests {
    use super::reference_of;

    #[test]
    fn a_contracts_reference_is_its_names_first_word() {
        assert_eq!(reference_of("MSA-2026-014 Globex.pdf"), "MSA-2026-014");
        assert_eq!(reference_of("msa-2026-014.docx"), "MSA-2026-014");
        assert_eq!(reference_of("Contract"), "CONTRACT");
    }
}
