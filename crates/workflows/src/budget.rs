//! Budget planning: lines consolidated by department in integer cents, compared with last year and the cap.

use crate::money::{cents, format_cents, required_cents};
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::json;
use std::collections::BTreeMap;

pub fn register(r: &mut Registry) {
    r.handler("budget.consolidate", consolidate);
    r.handler("budget.publish", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "published", "total": ctx.channel("plan")["total"] }))
            .write("log", json!("publish")))
    });
    r.handler("budget.revise", |ctx: &NodeContext<'_>| {
        let why = ctx.channel("approval")["reason"].as_str().unwrap_or("no reason given").to_string();
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "needs_revision", "reason": format!("sent back: {why}") }))
            .write("log", json!("revise")))
    });
}

fn consolidate(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let input = ctx.input();
    let mut by_department: BTreeMap<String, i64> = BTreeMap::new();
    for line in
        input["lines"].as_array().ok_or_else(|| NodeFailure::Fatal("the plan has no lines (input.lines)".into()))?
    {
        let dept = line["department"].as_str().unwrap_or("unassigned").trim().to_string();
        *by_department.entry(dept.clone()).or_default() +=
            required_cents(&line["amount"], &format!("a line of {dept}"))?;
    }
    let total: i64 = by_department.values().sum();
    let previous = cents(&input["previous_total"]);
    // Change against last year in basis points (integer arithmetic).
    let change_bp = previous.filter(|p| *p != 0).map(|p| (total - p) * 10_000 / p);
    let cap = cents(&input["cap"]);
    let over_cap = cap.is_some_and(|c| total > c);
    let departments: serde_json::Map<String, serde_json::Value> =
        by_department.iter().map(|(d, c)| (d.clone(), json!(format_cents(*c)))).collect();
    Ok(NodeOutput::default()
        .write(
            "plan",
            json!({
                "year": input["year"], "departments": departments, "total": format_cents(total),
                "previous_total": previous.map(format_cents),
                "change_pct": change_bp.map(|bp| format!("{}{}.{:02}", if bp < 0 { "-" } else { "" }, bp.abs() / 100, bp.abs() % 100)),
                "cap": cap.map(format_cents), "over_cap": over_cap,
            }),
        )
        .write("log", json!("consolidate")))
}
