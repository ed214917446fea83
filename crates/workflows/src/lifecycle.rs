//! Contract lifecycle: risk by rules; high risk routes to an executive (owner) approval. A run started from a
//! finalized contract carries its checklist outcome (`contract.risk`, put there by the api from the stamp): red
//! flags remaining make it high risk. Otherwise, and in addition, the value and the flagged terms entered count.

use crate::money::{format_cents, required_cents, text_list};
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::{Value, json};

/// A contract at or above this value (in cents) is high risk.
const HIGH_VALUE_CENTS: i64 = 25_000_000;
/// Terms that make a contract high risk on their own.
const HIGH_RISK_FLAGS: &[&str] =
    &["uncapped_liability", "unilateral_termination", "ip_assignment", "auto_renewal_without_notice"];

pub fn register(r: &mut Registry) {
    r.handler("lifecycle.assess", assess);
    r.handler("lifecycle.route", |ctx: &NodeContext<'_>| {
        let high = ctx.channel("risk")["level"] == "high";
        Ok(NodeOutput::default().route(if high { "high" } else { "standard" }))
    });
    r.handler("lifecycle.activate", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "active", "approved_by": ctx.channel("approval")["decided_by"] }))
            .write("log", json!("activate")))
    });
    r.handler("lifecycle.declined", |ctx: &NodeContext<'_>| {
        let why = ctx.channel("approval")["reason"].as_str().unwrap_or("no reason given").to_string();
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "declined", "reason": format!("declined: {why}") }))
            .write("log", json!("declined")))
    });
}

fn assess(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let contract = &ctx.input()["contract"];
    let outcome = &contract["risk"];
    let value = match &contract["value"] {
        Value::Null if outcome.is_object() => None,
        v => Some(required_cents(v, "the contract value (input.contract.value)")?),
    };
    let flags = text_list(&contract["risk_flags"]);
    let mut reasons = Vec::new();
    if outcome.is_object() {
        let red = outcome["red_flags"].as_u64().unwrap_or(0);
        if outcome["level"] == "high" || red > 0 {
            reasons.push(format!(
                "the checklist found {red} red flag{} the review left in place",
                if red == 1 { "" } else { "s" }
            ));
        }
    }
    if let Some(value) = value
        && value >= HIGH_VALUE_CENTS
    {
        reasons.push(format!("value {} is at or above {}", format_cents(value), format_cents(HIGH_VALUE_CENTS)));
    }
    for f in flags.iter().filter(|f| HIGH_RISK_FLAGS.contains(&f.as_str())) {
        reasons.push(format!("flagged term: {f}"));
    }
    if flags.len() >= 3 {
        reasons.push(format!("{} flagged terms", flags.len()));
    }
    let level = if reasons.is_empty() { "standard" } else { "high" };
    Ok(NodeOutput::default()
        .write(
            "risk",
            json!({ "level": level, "reasons": reasons, "value": value.map(format_cents), "flags": flags,
                    "critical_gaps": outcome["critical_gaps"], "red_flags": outcome["red_flags"] }),
        )
        .write("log", json!("assess")))
}
