//! The Vendors area as user actions: the organization's vendor records (name, aliases, identifiers, status), one
//! vendor in full (its contracts and documents, its onboarding runs, the vendors that look like it), a person's
//! create, edit and status change, the duplicate groups and the merge a person confirms, and starting onboarding
//! from a vendor. Rules are `pactwise_rules::vendors`; writes are `store::Vendors` (scoped, audited).

use crate::run_words::graph_title;
use crate::runs::{RunView, run_view};
use crate::{Api, ApiError, ContractRunLine};
use chrono::{DateTime, Utc};
use pactwise_domain::{DocumentId, ErrorCode, VendorStatus};
use pactwise_rules::vendors::{Identifier, SameBecause};
use pactwise_store::{NewVendor, OrgScope, Store, VendorEdit, VendorRecord};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A vendor in the Vendors list.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct VendorSummary {
    pub id: String,
    pub name: String,
    pub aliases: Vec<String>,
    pub identifiers: Vec<Identifier>,
    pub status: VendorStatus,
    /// The status in people's words.
    pub status_label: String,
    /// Finalized contracts linked to it.
    pub contracts: u32,
    /// Documents linked to it (contracts and reviews in progress).
    pub documents: u32,
    /// Shares a name, alias or identifier with another vendor (see Duplicates).
    pub possible_duplicate: bool,
    /// For a merged record: the name of the vendor it was merged into.
    pub merged_into: Option<String>,
}

/// A document linked to a vendor.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct VendorDocumentLine {
    pub document: DocumentId,
    pub name: String,
    /// The contract type's name.
    pub type_name: String,
    /// A contract of the repository (finalized), else a review in progress.
    pub finalized: bool,
    /// "a person" or "the finalize match".
    pub linked_by: String,
    pub expires_on: Option<String>,
}

/// Vendors that look like one, with what they share in words.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct DuplicateGroupView {
    pub vendors: Vec<VendorSummary>,
    /// e.g. `the name "acme"`, `tax id US99`.
    pub because: Vec<String>,
}

/// One vendor in full.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct VendorDetail {
    pub vendor: VendorSummary,
    pub documents: Vec<VendorDocumentLine>,
    /// Onboarding and other runs started for this vendor.
    pub runs: Vec<ContractRunLine>,
    /// The other vendors of its duplicate group, if any.
    pub duplicates: Vec<VendorSummary>,
    /// Whether an onboarding run may start for it now, and if not why.
    pub can_onboard: bool,
    pub onboard_refusal: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// What a person enters for a new vendor or a change.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, specta::Type)]
#[serde(default)]
pub struct VendorInput {
    pub name: Option<String>,
    pub aliases: Option<Vec<String>>,
    pub identifiers: Option<Vec<Identifier>>,
}

/// What a merge did, in words.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MergeResult {
    pub kept: VendorSummary,
    pub merged: VendorSummary,
    pub contracts_moved: u32,
    pub message: String,
}

/// What starting onboarding from a vendor asks.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, specta::Type)]
#[serde(default)]
pub struct OnboardingInput {
    /// The documents the vendor has sent (`w9`, `insurance_certificate`, `security_questionnaire`).
    pub documents: Vec<String>,
    /// The sanctions list check found a possible match.
    pub sanctions_hit: bool,
}

/// A status in people's words.
pub fn status_label(s: VendorStatus) -> &'static str {
    match s {
        VendorStatus::Prospective => "Prospective",
        VendorStatus::Onboarding => "Onboarding",
        VendorStatus::Active => "Active",
        VendorStatus::Blocked => "Blocked",
        VendorStatus::Merged => "Merged",
    }
}

fn because_words(b: &SameBecause) -> String {
    match b {
        SameBecause::Name(n) => format!("the name \u{201c}{n}\u{201d}"),
        SameBecause::Identifier(kind, value) => format!("{} {value}", kind.replace('_', " ")),
    }
}

fn summary(r: &VendorRecord, contracts: u32, documents: u32, dup: bool, merged_into: Option<String>) -> VendorSummary {
    VendorSummary {
        id: r.id.clone(),
        name: r.name.clone(),
        aliases: r.aliases.clone(),
        identifiers: r.identifiers.clone(),
        status: r.status,
        status_label: status_label(r.status).into(),
        contracts,
        documents,
        possible_duplicate: dup,
        merged_into,
    }
}

/// Every vendor of the organization (merged ones too) as summaries, by id.
fn summaries(store: &Store, scope: &OrgScope) -> Result<Vec<VendorSummary>, pactwise_store::StoreError> {
    let rows = store.vendors().list(scope, true)?;
    let dups: std::collections::BTreeSet<String> =
        store.vendors().duplicates(scope)?.into_iter().flat_map(|g| g.ids).collect();
    let name_of = |id: &str| rows.iter().find(|r| r.record.id == id).map(|r| r.record.name.clone());
    Ok(rows
        .iter()
        .map(|r| {
            let into = r.record.merged_into.as_deref().and_then(name_of);
            summary(&r.record, r.contracts, r.documents, dups.contains(&r.record.id), into)
        })
        .collect())
}

fn identifiers_of(input: &Option<Vec<Identifier>>) -> Option<Vec<(String, String)>> {
    input.as_ref().map(|ids| ids.iter().map(|i| (i.kind.clone(), i.value.clone())).collect())
}

/// Fills an onboarding run's input from the vendor record it starts from (`vendor.id`): its name and tax id, after
/// checking that onboarding may start (`rules::vendors::check_start_onboarding`). Returns the input to start with.
pub(crate) fn onboarding_input(store: &Store, scope: &OrgScope, mut input: Value) -> Result<Value, ApiError> {
    let Some(id) = input["vendor"]["id"].as_str().filter(|s| !s.is_empty()).map(str::to_owned) else {
        return Ok(input);
    };
    let v = store.vendors().get(scope, &id).map_err(|e| match e {
        pactwise_store::StoreError::NotFound => ApiError::new(
            ErrorCode::NotFound,
            "that vendor is not among your organization's vendors (it may have been deleted); choose another",
        ),
        e => e.into(),
    })?;
    pactwise_rules::vendors::check_start_onboarding(v.status).map_err(|m| ApiError::new(ErrorCode::Conflict, m))?;
    let tax_id = v.identifiers.iter().find(|i| i.kind == "tax_id").map(|i| i.value.clone());
    let vendor = input["vendor"].as_object_mut().ok_or_else(|| ApiError::new(ErrorCode::InvalidInput, "no vendor"))?;
    vendor.insert("name".into(), json!(v.name));
    match tax_id {
        Some(t) => vendor.insert("tax_id".into(), json!(t)),
        None => vendor.remove("tax_id"),
    };
    Ok(input)
}

impl Api {
    /// The organization's vendors by name; merged records only when asked.
    pub async fn vendor_list(&self, scope: &OrgScope, include_merged: bool) -> Result<Vec<VendorSummary>, ApiError> {
        let scope = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let all = summaries(store, &scope)?;
                Ok::<_, pactwise_store::StoreError>(
                    all.into_iter().filter(|v| include_merged || v.status != VendorStatus::Merged).collect(),
                )
            })
            .await?)
    }

    /// One vendor in full.
    pub async fn vendor_detail(&self, scope: &OrgScope, id: String) -> Result<VendorDetail, ApiError> {
        let scope = scope.clone();
        let registry = self.workflows.clone();
        let catalog = crate::review::catalog().ok();
        Ok(self
            .db
            .call(move |store| {
                let record = store.vendors().get(&scope, &id)?;
                let all = summaries(store, &scope)?;
                let vendor = all.iter().find(|v| v.id == id).cloned().ok_or(pactwise_store::StoreError::NotFound)?;
                let group = store.vendors().duplicates(&scope)?.into_iter().find(|g| g.ids.contains(&id));
                let duplicates = group
                    .map(|g| all.iter().filter(|v| v.id != id && g.ids.contains(&v.id)).cloned().collect())
                    .unwrap_or_default();
                let documents = store
                    .vendors()
                    .documents(&scope, &id)?
                    .into_iter()
                    .map(|d| VendorDocumentLine {
                        document: d.document,
                        name: d.name,
                        type_name: catalog
                            .as_ref()
                            .and_then(|c| c.contract_type(&d.type_id))
                            .map(|t| t.name.clone())
                            .unwrap_or_else(|| d.type_id.replace('_', " ")),
                        finalized: d.finalized,
                        linked_by: if d.linked_by_person { "a person" } else { "the finalize match" }.into(),
                        expires_on: d.expires_on,
                    })
                    .collect();
                let runs = store
                    .runs()
                    .list(&scope, 500)?
                    .into_iter()
                    .filter(|r| r.input.contains(&format!("\"{id}\"")))
                    .map(|r| ContractRunLine {
                        run: r.id,
                        workflow: registry
                            .graph(&r.graph_name)
                            .map(graph_title)
                            .unwrap_or_else(|_| r.graph_name.clone()),
                        status: r.status,
                        started_at: r.created_at,
                    })
                    .collect();
                let refusal = pactwise_rules::vendors::check_start_onboarding(record.status).err();
                Ok::<_, pactwise_store::StoreError>(VendorDetail {
                    vendor,
                    documents,
                    runs,
                    duplicates,
                    can_onboard: refusal.is_none(),
                    onboard_refusal: refusal,
                    created_at: record.created_at,
                })
            })
            .await?)
    }

    /// A person adds a vendor (prospective).
    pub async fn vendor_create(&self, scope: &OrgScope, input: VendorInput) -> Result<VendorSummary, ApiError> {
        let new = NewVendor {
            name: input.name.clone().unwrap_or_default(),
            aliases: input.aliases.clone().unwrap_or_default(),
            identifiers: identifiers_of(&input.identifiers).unwrap_or_default(),
        };
        let s = scope.clone();
        let id = self.db.call(move |store| store.vendors().create(&s, &new).map(|v| v.id)).await?;
        self.vendor_summary((scope.clone(), id)).await
    }

    /// A person changes a vendor's name, aliases or identifiers (fields left out stay).
    pub async fn vendor_edit(
        &self,
        scope: &OrgScope,
        id: String,
        input: VendorInput,
    ) -> Result<VendorSummary, ApiError> {
        let edit = VendorEdit {
            name: input.name.clone(),
            aliases: input.aliases.clone(),
            identifiers: identifiers_of(&input.identifiers),
        };
        let s = scope.clone();
        let id = self.db.call(move |store| store.vendors().edit(&s, &id, &edit).map(|v| v.id)).await?;
        self.vendor_summary((scope.clone(), id)).await
    }

    /// A person sets a vendor's status, saying why.
    pub async fn vendor_set_status(
        &self,
        scope: &OrgScope,
        id: String,
        status: VendorStatus,
        reason: String,
    ) -> Result<VendorSummary, ApiError> {
        let s = scope.clone();
        let id = self.db.call(move |store| store.vendors().set_status(&s, &id, status, &reason).map(|v| v.id)).await?;
        self.vendor_summary((scope.clone(), id)).await
    }

    /// The groups of vendors that look like one, for a person to merge.
    pub async fn vendor_duplicates(&self, scope: &OrgScope) -> Result<Vec<DuplicateGroupView>, ApiError> {
        let scope = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let all = summaries(store, &scope)?;
                let groups = store.vendors().duplicates(&scope)?;
                Ok::<_, pactwise_store::StoreError>(
                    groups
                        .into_iter()
                        .map(|g| DuplicateGroupView {
                            vendors: all.iter().filter(|v| g.ids.contains(&v.id)).cloned().collect(),
                            because: g.because.iter().map(because_words).collect(),
                        })
                        .collect(),
                )
            })
            .await?)
    }

    /// A person confirms that `merged` is the same vendor as `kept`: links follow, the merged record is kept as
    /// merged, audited (`store::Vendors::merge`).
    pub async fn vendor_merge(&self, scope: &OrgScope, kept: String, merged: String) -> Result<MergeResult, ApiError> {
        let scope = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let out = store.vendors().merge(&scope, &kept, &merged)?;
                let all = summaries(store, &scope)?;
                let find =
                    |id: &str| all.iter().find(|v| v.id == id).cloned().ok_or(pactwise_store::StoreError::NotFound);
                let message = format!(
                    "{} was merged into {}; {} moved with it. {} is kept as a merged record.",
                    out.merged.name,
                    out.kept.name,
                    match out.contracts_moved {
                        0 => "no contracts".to_string(),
                        1 => "1 contract".to_string(),
                        n => format!("{n} contracts"),
                    },
                    out.merged.name
                );
                Ok::<_, pactwise_store::StoreError>(MergeResult {
                    kept: find(&out.kept.id)?,
                    merged: find(&out.merged.id)?,
                    contracts_moved: out.contracts_moved,
                    message,
                })
            })
            .await?)
    }

    /// Starts vendor onboarding from a vendor record: the vendor becomes onboarding and the run's decision will
    /// make it active or blocked.
    pub async fn start_vendor_onboarding(
        &self,
        scope: &OrgScope,
        vendor: String,
        input: OnboardingInput,
    ) -> Result<RunView, ApiError> {
        let input = json!({ "vendor": { "id": vendor, "documents": input.documents,
                                        "sanctions_hit": input.sanctions_hit } });
        self.start_run(scope, "vendor_onboarding".into(), input).await
    }

    async fn vendor_summary(&self, (scope, id): (OrgScope, String)) -> Result<VendorSummary, ApiError> {
        Ok(self
            .db
            .call(move |store| {
                summaries(store, &scope)?.into_iter().find(|v| v.id == id).ok_or(pactwise_store::StoreError::NotFound)
            })
            .await?)
    }
}

/// Starts the onboarding run and moves the vendor in one call on the store's thread (nothing runs in between).
pub(crate) fn start_onboarding_run(
    store: &Store,
    engine: &pactwise_engine::Engine<'_>,
    scope: &OrgScope,
    input: Value,
) -> Result<RunView, ApiError> {
    let input = onboarding_input(store, scope, input)?;
    let vendor = input["vendor"]["id"].as_str().map(str::to_owned);
    let id = engine.start(scope, "vendor_onboarding", input)?;
    if let Some(v) = vendor {
        store.vendors().begin_onboarding(scope, &v)?;
    }
    Ok(run_view(&engine.drive(id)?))
}
