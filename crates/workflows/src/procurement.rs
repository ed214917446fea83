//! The procurement graph's agents. Research reads the local vendor table; analysis is code — a budget check and a
//! capability match give the shortlist, in alphabetical order, never ranked; a person picks the vendor at the
//! approval step; legal drafts the purchase agreement (by the model when available, else from our template).

use crate::money::{cents, format_cents, required_cents, text_list};
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::{Value, json};

/// The local vendor table shipped with the app (a run may bring its own under `input.vendors`).
const VENDOR_TABLE: &str = include_str!("../data/vendors.json");

pub fn register(r: &mut Registry) {
    r.handler("procurement.research", research);
    r.handler("procurement.analysis", analysis);
    r.handler("procurement.no_vendor", no_vendor);
    r.handler("procurement.rejected", rejected);
    r.handler("procurement.legal", legal);
}

fn research(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let vendors = match &ctx.input()["vendors"] {
        Value::Array(list) => Value::Array(list.clone()),
        Value::Null => {
            serde_json::from_str(VENDOR_TABLE).map_err(|e| NodeFailure::Fatal(format!("vendor table: {e}")))?
        }
        other => return Err(NodeFailure::Fatal(format!("input.vendors must be a list, got {other}"))),
    };
    Ok(NodeOutput::default().write("vendors", vendors).write("log", json!("research")))
}

fn analysis(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let budget = required_cents(&ctx.input()["budget"], "the budget (input.budget)")?;
    let required = text_list(&ctx.input()["capabilities"]);
    let mut over_budget = Vec::new();
    let mut missing = serde_json::Map::new();
    let mut shortlist = Vec::new();
    let mut lowest_capable: Option<i64> = None;
    for v in ctx.channel("vendors").as_array().into_iter().flatten() {
        let name = v["name"].as_str().unwrap_or("").trim().to_string();
        let Some(price) = cents(&v["price"]) else { continue };
        if name.is_empty() {
            continue;
        }
        let has = text_list(&v["capabilities"]);
        let lacks: Vec<&String> = required.iter().filter(|c| !has.contains(c)).collect();
        if lacks.is_empty() {
            lowest_capable = Some(lowest_capable.map_or(price, |l| l.min(price)));
        } else {
            missing.insert(name.clone(), json!(lacks));
        }
        if price > budget {
            over_budget.push(name.clone());
        }
        if price <= budget && lacks.is_empty() {
            shortlist.push(json!({
                "name": name, "price": format_cents(price), "price_cents": price,
                "lead_days": v["lead_days"], "capabilities": has,
            }));
        }
    }
    shortlist.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let reason = if !shortlist.is_empty() {
        None
    } else if let Some(lowest) = lowest_capable {
        Some(format!(
            "over budget: the lowest price among vendors with the required capabilities is {}, above the budget of {}",
            format_cents(lowest),
            format_cents(budget)
        ))
    } else {
        Some(format!("no vendor in the table has the required capabilities ({})", required.join(", ")))
    };
    let analysis = json!({
        "budget": format_cents(budget), "required_capabilities": required, "over_budget": over_budget,
        "missing_capabilities": missing, "shortlisted": shortlist.len(), "reason": reason,
        "method": "code: price <= budget and every required capability; alphabetical, not ranked",
    });
    let route = if shortlist.is_empty() { "none" } else { "shortlisted" };
    Ok(NodeOutput::default()
        .write("shortlist", Value::Array(shortlist))
        .write("analysis", analysis)
        .write("log", json!("analysis"))
        .route(route))
}

fn no_vendor(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let reason = ctx.channel("analysis")["reason"].as_str().unwrap_or("no vendor fits the request").to_string();
    Ok(NodeOutput::default()
        .write("outcome", json!({ "status": "ended", "reason": reason }))
        .write("log", json!("no_vendor")))
}

fn rejected(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let why = ctx.channel("approval")["reason"].as_str().unwrap_or("no reason given");
    Ok(NodeOutput::default()
        .write("outcome", json!({ "status": "rejected", "reason": format!("rejected by the approver: {why}") }))
        .write("log", json!("rejected")))
}

/// Our purchase agreement template; every figure comes from the run's channels.
fn template(
    request: &str,
    vendor: &str,
    price: &str,
    lead_days: &Value,
    approver: &str,
    decided_at: &str,
    reason: &str,
) -> String {
    format!(
        "PURCHASE AGREEMENT\n\
         1. Purchase. The buyer orders from {vendor}: {request}.\n\
         2. Price. {price} in total, as quoted by {vendor}; no other charge applies unless both parties agree in writing.\n\
         3. Delivery. Within {lead_days} days of the date of this agreement.\n\
         4. Acceptance. The buyer may refuse goods that do not match the order within 10 days of delivery.\n\
         5. Approval. {vendor} was chosen by approver {approver} on {decided_at}: \"{reason}\".\n"
    )
}

fn legal(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let approval = ctx.channel("approval");
    let choice =
        approval["choice"].as_str().ok_or_else(|| NodeFailure::Fatal("the approval names no vendor".into()))?;
    let vendor = ctx
        .channel("shortlist")
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"].as_str() == Some(choice))
        .ok_or_else(|| NodeFailure::Fatal(format!("{choice:?} is not on the shortlist")))?;
    let request = ctx.input()["request"].as_str().unwrap_or("the goods described in the request");
    let price = vendor["price"].as_str().unwrap_or("");
    let approver = approval["decided_by_name"].as_str().or(approval["decided_by"].as_str()).unwrap_or("unknown");
    let decided_at = approval["decided_at"].as_str().unwrap_or("");
    let reason = approval["reason"].as_str().unwrap_or("");
    let data = json!({ "request": request, "vendor": choice, "price": price, "lead_days": vendor["lead_days"] });
    let (text, drafted_by) = match ctx.draft(&data) {
        Some(text) => (text, "model"),
        None => (template(request, choice, price, &vendor["lead_days"], approver, decided_at, reason), "template"),
    };
    Ok(NodeOutput::default()
        .write(
            "agreement",
            json!({ "vendor": choice, "price": price, "lead_days": vendor["lead_days"], "text": text, "drafted_by": drafted_by }),
        )
        .write("outcome", json!({ "status": "agreement_drafted", "vendor": choice, "price": price }))
        .write("log", json!("legal")))
}
