//! Two graphs S0's nine imply beyond the seven built before: obligation tracking (a finalized contract's extracted
//! terms become a list of obligations a person confirms; the confirmed list and the next date due are the run's
//! record) and contract amendment review (the terms an amendment changes, found by comparing extracted fields by
//! code; key terms need legal approval). The api fills their input from the records (`api::record_runs`).

use chrono::NaiveDate;
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::{Value, json};

/// Terms whose change needs legal (owner or admin) approval.
pub const KEY_TERMS: &[&str] = &["expiration_date", "value", "governing_law", "renewal_notice", "renewal"];

pub fn register(r: &mut Registry) {
    r.handler("obligations.list", list);
    r.handler("obligations.record", |ctx: &NodeContext<'_>| {
        let o = ctx.channel("obligations");
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "confirmed", "count": o["items"].as_array().map_or(0, Vec::len),
                        "next_due": o["next_due"], "confirmed_by": ctx.channel("confirmation")["decided_by"] }),
            )
            .write("log", json!("record")))
    });
    r.handler("obligations.not_confirmed", |ctx: &NodeContext<'_>| {
        let why = ctx.channel("confirmation")["reason"].as_str().unwrap_or("no reason given").to_string();
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "not_confirmed", "reason": format!("not confirmed: {why}") }))
            .write("log", json!("not_confirmed")))
    });
    r.handler("obligations.none", |_: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "no_obligations", "reason": "the contract's fields name no obligation" }),
            )
            .write("log", json!("none")))
    });
    r.handler("amendment.compare", compare);
    r.handler("amendment.accept", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "accepted", "changes": ctx.channel("changes")["items"],
                        "approved_by": ctx.channel("approval")["decided_by"] }),
            )
            .write("log", json!("accept")))
    });
    r.handler("amendment.decline", |ctx: &NodeContext<'_>| {
        let why = ctx.channel("approval")["reason"].as_str().unwrap_or("no reason given").to_string();
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "declined", "reason": format!("declined: {why}") }))
            .write("log", json!("decline")))
    });
    r.handler("amendment.no_change", |_: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "no_change", "reason": "the amendment changes none of the extracted terms" }),
            )
            .write("log", json!("no_change")))
    });
}

fn rows(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn list(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let mut items = Vec::new();
    for (i, row) in rows(&ctx.input()["obligations"]).iter().enumerate() {
        let term = row["term"].as_str().map(str::trim).filter(|t| !t.is_empty()).ok_or_else(|| {
            NodeFailure::Fatal(format!("obligation {} has no words (input.obligations[{i}].term)", i + 1))
        })?;
        let due = match &row["due"] {
            Value::Null => None,
            v => Some(v.as_str().and_then(|d| d.trim().parse::<NaiveDate>().ok()).ok_or_else(|| {
                NodeFailure::Fatal(format!(
                    "obligation {:?}: its due date must be a date like 2027-03-31, got {v}",
                    term
                ))
            })?),
        };
        items.push((term.to_string(), due));
    }
    items.sort_by_key(|a| (a.1.is_none(), a.1));
    let today = ctx.now.date_naive();
    let next_due = items.iter().filter_map(|(_, d)| *d).find(|d| *d >= today);
    let route = if items.is_empty() { "none" } else { "some" };
    Ok(NodeOutput::default()
        .write(
            "obligations",
            json!({ "items": items.iter().map(|(t, d)| json!({ "term": t, "due": d.map(|d| d.to_string()) })).collect::<Vec<_>>(),
                    "next_due": next_due.map(|d| d.to_string()) }),
        )
        .write("log", json!("list"))
        .route(route))
}

fn compare(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let mut items = Vec::new();
    let mut key = Vec::new();
    for row in rows(&ctx.input()["changes"]) {
        let field = row["field"]
            .as_str()
            .ok_or_else(|| NodeFailure::Fatal("a changed term has no name (input.changes[].field)".into()))?;
        if row["before"] == row["after"] {
            continue;
        }
        if KEY_TERMS.contains(&field) {
            key.push(field.to_string());
        }
        items.push(json!({ "field": field, "before": row["before"], "after": row["after"] }));
    }
    let route = if items.is_empty() {
        "none"
    } else if key.is_empty() {
        "other_terms"
    } else {
        "key_terms"
    };
    Ok(NodeOutput::default()
        .write("changes", json!({ "items": items, "key_terms": key }))
        .write("log", json!("compare"))
        .route(route))
}
