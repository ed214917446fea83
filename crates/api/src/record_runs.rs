//! Runs started from the organization's records: the record is read through the session's scope when the run starts
//! and what the steps decide on is put into the run's input (so the run shows what it saw). A contract lifecycle
//! names a contract: its checklist outcome, stamped at finalize (red flags, critical gaps → risk), decides whether
//! an executive must approve. Vendor onboarding is in `vendors.rs` (it also moves the vendor).

use crate::runs::RunView;
use crate::{Api, ApiError};
use pactwise_domain::{DocumentId, ErrorCode, Extractions, Value as Normalized};
use pactwise_store::{ContractListRow, OrgScope, Store, StoreError};
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
        "obligation_tracking" => obligations_input(store, scope, input),
        "contract_amendment_review" => amendment_input(store, scope, input),
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

/// A finalized contract's fields, by document id: refused when deleted (or another organization's) or not finalized.
fn finalized_fields(
    store: &Store,
    scope: &OrgScope,
    doc: &str,
) -> Result<(String, Extractions, ContractListRow), ApiError> {
    let id: DocumentId = doc.parse().map_err(|_| gone())?;
    let stored = store.reviews().contract(scope, id).map_err(|e| match e {
        StoreError::NotFound => gone(),
        e => e.into(),
    })?;
    let (Some(stored), Some(row)) = (stored, store.contracts().row(scope, id)?) else {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "this contract's review is not finalized; finalize it first, then start again",
        ));
    };
    let fields = serde_json::from_value(stored.extractions).unwrap_or_default();
    Ok((row.name.clone(), fields, row))
}

/// Fills an obligation tracking run from its contract: each extracted key term, the pricing and scope, and the
/// dates that fall due (the notice deadline, the end date), unless the person listed obligations.
fn obligations_input(store: &Store, scope: &OrgScope, mut input: Value) -> Result<Value, ApiError> {
    let Some(doc) = input["contract"]["document"].as_str().map(str::to_owned) else {
        return Ok(input);
    };
    let (name, fields, row) = finalized_fields(store, scope, &doc)?;
    if input["contract"]["title"].as_str().is_none_or(|t| t.trim().is_empty()) {
        input["contract"]["title"] = json!(name);
    }
    if input["obligations"].as_array().is_some_and(|a| !a.is_empty()) {
        return Ok(input);
    }
    let mut items = Vec::new();
    if let Some(n) = row.notice_by {
        items.push(json!({ "term": "Give notice if the contract is not to renew", "due": n.to_string() }));
    }
    if let Some(e) = row.expires_on {
        items.push(json!({ "term": "The contract ends (renew, replace or let it lapse)", "due": e.to_string() }));
    }
    for (label, f) in [("Pricing", &fields.pricing), ("Scope", &fields.scope)] {
        if let Some(f) = f {
            items.push(json!({ "term": format!("{label}: {}", f.value) }));
        }
    }
    for t in &fields.key_terms {
        items.push(json!({ "term": t.value }));
    }
    input["obligations"] = json!(items);
    Ok(input)
}

/// Fills an amendment review from its two documents: the contract (finalized) and the amendment (read by the
/// pipeline); each extracted term the amendment gives a different value is a change.
fn amendment_input(store: &Store, scope: &OrgScope, mut input: Value) -> Result<Value, ApiError> {
    let (Some(doc), Some(amendment)) = (
        input["contract"]["document"].as_str().map(str::to_owned),
        input["amendment"]["document"].as_str().map(str::to_owned),
    ) else {
        return Ok(input);
    };
    let (name, before, _) = finalized_fields(store, scope, &doc)?;
    let amendment_id: DocumentId = amendment.parse().map_err(|_| gone())?;
    let after: Extractions = match store.reviews().contract(scope, amendment_id).map_err(|e| match e {
        StoreError::NotFound => gone(),
        e => e.into(),
    })? {
        Some(row) => serde_json::from_value(row.extractions).unwrap_or_default(),
        None => {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "the amendment has not been read yet; wait until its import finishes, then start again",
            ));
        }
    };
    if input["contract"]["title"].as_str().is_none_or(|t| t.trim().is_empty()) {
        input["contract"]["title"] = json!(name);
    }
    let value = |f: &Option<pactwise_domain::Extracted>| f.as_ref().map(|x| x.value.clone());
    let mut changes = Vec::new();
    for (field, b, a) in [
        ("effective_date", &before.effective_date, &after.effective_date),
        ("expiration_date", &before.expiration_date, &after.expiration_date),
        ("renewal", &before.renewal, &after.renewal),
        ("renewal_notice", &before.renewal_notice, &after.renewal_notice),
        ("governing_law", &before.governing_law, &after.governing_law),
        ("value", &before.value, &after.value),
        ("pricing", &before.pricing, &after.pricing),
        ("scope", &before.scope, &after.scope),
    ] {
        if let Some(new) = value(a)
            && value(b).as_deref() != Some(new.as_str())
        {
            changes.push(json!({ "field": field, "before": value(b), "after": new }));
        }
    }
    input["changes"] = json!(changes);
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
