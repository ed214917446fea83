//! Invoice processing: an imported invoice's contract and vendor (matched by code when the run starts,
//! `rules::invoices::match_invoice`, in the input as `invoice.matched`) recorded through the engine's `Records`;
//! then the three-way match of purchase order, goods receipt and invoice, by code in integer cents. An invoice that
//! matches nothing ends as unmatched with the reason; one without order lines goes to an approver.

use crate::money::{cents, format_cents, required_cents};
use pactwise_engine::{Handoff, NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub fn register(r: &mut Registry) {
    r.handler("invoice.match", three_way_match);
    r.handler("invoice.schedule_payment", |ctx: &NodeContext<'_>| {
        let amount = ctx.channel("match")["invoice_total"].clone();
        let number = ctx.input()["invoice"]["number"].clone();
        Ok(NodeOutput::default()
            .handoff(Handoff {
                agent_type: "financial".into(),
                priority: 5,
                payload: json!({ "action": "pay_invoice", "invoice": number, "amount": amount }),
                scheduled_at: None,
                key: None,
            })
            .write("payment", json!({ "scheduled": true, "amount": amount }))
            .write("outcome", json!({ "status": "payment_scheduled", "amount": amount }))
            .write("log", json!("schedule_payment")))
    });
    r.handler("invoice.cancel_payment", |_: &NodeContext<'_>| {
        Ok(NodeOutput::default().write("payment", json!({ "scheduled": false, "cancelled": true })))
    });
    r.handler("invoice.unmatched", |ctx: &NodeContext<'_>| {
        let why = ctx.channel("match")["why"].as_str().unwrap_or("nothing on the invoice matches").to_string();
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "unmatched", "reason": format!("unmatched: {why}") }))
            .write("log", json!("unmatched")))
    });
    r.handler("invoice.dispute", |ctx: &NodeContext<'_>| {
        let why = ctx.channel("approval")["reason"].as_str().unwrap_or("no reason given").to_string();
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "disputed", "reason": format!("disputed: {why}"), "exceptions": ctx.channel("match")["exceptions"] }))
            .write("log", json!("dispute")))
    });
}

struct Line {
    qty: i64,
    unit_cents: Option<i64>,
}

fn lines(doc: &Value, what: &str, priced: bool) -> Result<BTreeMap<String, Line>, NodeFailure> {
    let mut out = BTreeMap::new();
    for l in doc["lines"].as_array().ok_or_else(|| NodeFailure::Fatal(format!("{what} has no lines")))? {
        let sku = l["sku"].as_str().ok_or_else(|| NodeFailure::Fatal(format!("a line of {what} has no sku")))?;
        let qty = l["qty"]
            .as_i64()
            .ok_or_else(|| NodeFailure::Fatal(format!("{what} line {sku}: qty must be a whole number")))?;
        let unit_cents = if priced {
            Some(required_cents(&l["unit_price"], &format!("{what} line {sku}: unit_price"))?)
        } else {
            None
        };
        let entry = out.entry(sku.to_string()).or_insert(Line { qty: 0, unit_cents });
        entry.qty += qty;
    }
    Ok(out)
}

fn three_way_match(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let input = ctx.input();
    let matched = &input["invoice"]["matched"];
    let record = if matched.is_object() {
        if matched["status"] == "none" {
            return Ok(NodeOutput::default()
                .write("match", json!({ "status": "unmatched", "why": matched["why"] }))
                .write("log", json!("match"))
                .route("unmatched"));
        }
        let records = ctx.records.ok_or_else(|| {
            NodeFailure::Fatal("no record store behind this run; the match cannot be recorded".into())
        })?;
        let doc = |v: &Value| v.as_str().and_then(|s| s.parse::<pactwise_domain::DocumentId>().ok());
        let invoice = doc(&input["invoice"]["document"])
            .ok_or_else(|| NodeFailure::Fatal("the invoice document is missing (input.invoice.document)".into()))?;
        records
            .invoice_matched(ctx.org, ctx.run, invoice, doc(&matched["contract"]), matched["vendor"].as_str())
            .map_err(NodeFailure::Fatal)?;
        json!({ "contract": matched["contract_name"], "vendor": matched["vendor_name"], "why": matched["why"] })
    } else {
        Value::Null
    };
    if !input["po"]["lines"].is_array() || !input["invoice"]["lines"].is_array() {
        let exceptions =
            vec!["no purchase order or invoice lines were given to match; check the invoice against its contract"];
        return Ok(NodeOutput::default()
            .write("match", json!({ "status": "exception", "exceptions": exceptions, "record": record }))
            .write("log", json!("match"))
            .route("exception"));
    }
    let po = lines(&input["po"], "the purchase order", true)?;
    let receipt = lines(&input["receipt"], "the goods receipt", false)?;
    let invoice = lines(&input["invoice"], "the invoice", true)?;
    // Price tolerance in basis points of the order price (0 = exact).
    let tolerance_bp = input["tolerance_bp"].as_i64().unwrap_or(0).clamp(0, 1000);
    let mut exceptions = Vec::new();
    let mut computed_total = 0i64;
    for (sku, inv) in &invoice {
        let unit = inv.unit_cents.unwrap_or(0);
        computed_total += unit * inv.qty;
        let Some(ordered) = po.get(sku) else {
            exceptions.push(format!("{sku}: invoiced but not on the purchase order"));
            continue;
        };
        if inv.qty > ordered.qty {
            exceptions.push(format!("{sku}: invoiced {} but ordered {}", inv.qty, ordered.qty));
        }
        let received = receipt.get(sku).map_or(0, |r| r.qty);
        if inv.qty > received {
            exceptions.push(format!("{sku}: invoiced {} but received {received}", inv.qty));
        }
        let po_unit = ordered.unit_cents.unwrap_or(0);
        if (unit - po_unit).abs() * 10_000 > po_unit * tolerance_bp {
            exceptions.push(format!(
                "{sku}: unit price {} differs from the order's {}",
                format_cents(unit),
                format_cents(po_unit)
            ));
        }
    }
    if let Some(stated) = cents(&input["invoice"]["total"])
        && stated != computed_total
    {
        exceptions.push(format!(
            "the invoice total {} is not the sum of its lines {}",
            format_cents(stated),
            format_cents(computed_total)
        ));
    }
    let status = if exceptions.is_empty() { "matched" } else { "exception" };
    Ok(NodeOutput::default()
        .write(
            "match",
            json!({ "status": status, "exceptions": exceptions, "invoice_total": format_cents(computed_total),
                    "record": record }),
        )
        .write("log", json!("match"))
        .route(status))
}
