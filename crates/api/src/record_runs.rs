//! Runs started from the organization's records: the record is read through the session's scope when the run starts
//! and what the steps decide on is put into the run's input (so the run shows what it saw). A contract lifecycle
//! names a contract: its checklist outcome, stamped at finalize (red flags, critical gaps → risk), decides whether
//! an executive must approve. Vendor onboarding is in `vendors.rs` (it also moves the vendor).

use crate::runs::RunView;
use crate::{Api, ApiError};
use pactwise_domain::{DocumentId, ErrorCode, Extractions, Value as Normalized};
use pactwise_store::{OrgScope, Store, StoreError};
use serde_json::{Value, json};

pub(crate) fn input_from_records(
    store: &Store,
    scope: &OrgScope,
    graph: &str,
    input: Value,
) -> Result<Value, ApiError> {
    match graph {
        "contract_lifecycle" => lifecycle_input(store, scope, input, false),
        "invoice_processing" => invoice_input(store, scope, input),
        _ => Ok(input),
    }
}

fn gone() -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        "that contract is not among your organization's documents (it may have been deleted); choose another",
    )
}

/// Fills a lifecycle run's input from the contract it names (`contract.document`): its name, its value when the
/// fields have one and the person gave none, and its risk as finalize stamped it. A deleted contract (or another
/// organization's) is refused; a document not finalized is refused when `finalized_only`, else left as entered.
fn lifecycle_input(store: &Store, scope: &OrgScope, mut input: Value, finalized_only: bool) -> Result<Value, ApiError> {
    let Some(doc) = input["contract"]["document"].as_str().map(str::to_owned) else {
        return Ok(input);
    };
    let id: DocumentId = doc.parse().map_err(|_| gone())?;
    let stored = store.reviews().contract(scope, id).map_err(|e| match e {
        StoreError::NotFound => gone(),
        e => e.into(),
    })?;
    let row = store.contracts().row(scope, id)?;
    let (Some(stored), Some(row)) = (stored, row) else {
        if finalized_only {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "this contract's review is not finalized; finalize it first, then start its lifecycle",
            ));
        }
        return Ok(input);
    };
    let Some(risk) = row.risk.clone() else {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "this contract's checklist outcome is not assessed yet; open Contracts once so it is, then start again",
        ));
    };
    let fields: Extractions = serde_json::from_value(stored.extractions.clone()).unwrap_or_default();
    let contract =
        input["contract"].as_object_mut().ok_or_else(|| ApiError::new(ErrorCode::InvalidInput, "no contract"))?;
    if contract.get("title").and_then(Value::as_str).is_none_or(|t| t.trim().is_empty()) {
        contract.insert("title".into(), json!(row.name));
    }
    if contract.get("value").is_none_or(Value::is_null)
        && let Some(Normalized::Money { amount, currency }) = fields.value.as_ref().and_then(|v| v.normalized.clone())
    {
        contract.insert("value".into(), json!(amount));
        contract.insert("currency".into(), json!(currency));
    }
    contract.insert(
        "risk".into(),
        json!({ "level": risk, "red_flags": row.red_flags, "critical_gaps": row.critical_gaps,
                "from": "the checklist outcome stamped at finalize" }),
    );
    Ok(input)
}

/// Matches an invoice run's document (`invoice.document`) to the organization's contracts and vendors by code
/// (`rules::invoices::match_invoice` over its extracted text) and puts the outcome in the input as
/// `invoice.matched`. A missing or deleted invoice is refused; an invoice not read yet is refused until it is.
fn invoice_input(store: &Store, scope: &OrgScope, mut input: Value) -> Result<Value, ApiError> {
    use pactwise_rules::invoices::{ContractKeys, VendorKeys, match_invoice};
    let Some(doc) = input["invoice"]["document"].as_str().map(str::to_owned) else {
        return Ok(input);
    };
    let missing = || {
        ApiError::new(
            ErrorCode::NotFound,
            "that invoice is not among your organization's documents (it may have been deleted); import it first",
        )
    };
    let id: DocumentId = doc.parse().map_err(|_| missing())?;
    let pages = store.pages().load(scope, id).map_err(|e| match e {
        StoreError::NotFound => missing(),
        e => e.into(),
    })?;
    let Some(pages) = pages else {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "the invoice has not been read yet; wait until its import finishes, then start again",
        ));
    };
    let text: String = pages.pages.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("\n");
    let vendors: Vec<VendorKeys> = store
        .vendors()
        .list(scope, false)?
        .into_iter()
        .map(|r| VendorKeys {
            id: r.record.id,
            name: r.record.name,
            names: r.record.aliases,
            identifiers: r.record.identifiers.into_iter().map(|i| i.value).collect(),
        })
        .collect();
    let contracts: Vec<ContractKeys> = store
        .vendors()
        .finalized_contracts(scope)?
        .into_iter()
        .filter(|(d, _, _)| *d != id)
        .map(|(d, name, vendor)| ContractKeys { document: d.to_string(), name, vendor })
        .collect();
    let matched = match_invoice(&text, &vendors, &contracts);
    let invoice =
        input["invoice"].as_object_mut().ok_or_else(|| ApiError::new(ErrorCode::InvalidInput, "no invoice"))?;
    invoice.insert("matched".into(), serde_json::to_value(&matched).unwrap_or(Value::Null));
    Ok(input)
}

impl Api {
    /// Starts the contract lifecycle from a finalized contract (the Contracts area's "Start lifecycle"): its risk
    /// from the checklist outcome decides whether an executive approves.
    pub async fn start_contract_lifecycle(&self, scope: &OrgScope, document: DocumentId) -> Result<RunView, ApiError> {
        let s = scope.clone();
        let input = self
            .db
            .call(move |store| {
                Ok(lifecycle_input(store, &s, json!({ "contract": { "document": document.to_string() } }), true))
            })
            .await??;
        self.start_run(scope, "contract_lifecycle".into(), input).await
    }
}
