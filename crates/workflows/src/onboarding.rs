//! Vendor onboarding: required documents and screening checked by rules; missing documents are requested through
//! the task queue (an idempotent handoff); approvals are four-eyes. The decision really moves the vendor record
//! through the engine's `Records` (store, idempotent per run): approved → active (a vendor given only by name is
//! registered as a new active record), declined → blocked. The api fills `vendor.name` and `vendor.tax_id` from the
//! record when a run starts from one.

use crate::money::text_list;
use pactwise_engine::{Handoff, NodeContext, NodeFailure, NodeOutput, Registry};
use pactwise_store::OnboardedVendor;
use serde_json::json;

const REQUIRED_DOCUMENTS: &[&str] = &["w9", "insurance_certificate", "security_questionnaire"];

pub fn register(r: &mut Registry) {
    r.handler("onboarding.check_documents", check_documents);
    r.handler("onboarding.request_documents", |ctx: &NodeContext<'_>| {
        let vendor = ctx.input()["vendor"]["name"].clone();
        let missing = ctx.channel("documents")["missing"].clone();
        Ok(NodeOutput::default()
            .handoff(Handoff {
                agent_type: "vendor".into(),
                priority: 5,
                payload: json!({ "action": "request_documents", "vendor": vendor, "missing": missing }),
                scheduled_at: None,
                key: None,
            })
            .write("outcome", json!({ "status": "waiting_for_documents", "missing": missing }))
            .write("log", json!("request_documents")))
    });
    r.handler("onboarding.screen", |ctx: &NodeContext<'_>| {
        let vendor = &ctx.input()["vendor"];
        let mut reasons = Vec::new();
        if vendor["sanctions_hit"] == json!(true) {
            reasons.push("the sanctions list check returned a possible match".to_string());
        }
        if vendor["tax_id"].as_str().is_none_or(|t| t.trim().is_empty()) {
            reasons.push("no tax id".to_string());
        }
        let status = if reasons.is_empty() { "clear" } else { "flagged" };
        Ok(NodeOutput::default()
            .write("screening", json!({ "status": status, "reasons": reasons }))
            .write("log", json!("screen"))
            .route(status))
    });
    r.handler("onboarding.register", |ctx: &NodeContext<'_>| {
        let vendor = decide(ctx, true)?;
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "registered", "vendor": vendor["name"], "vendor_id": vendor["id"],
                        "vendor_status": vendor["status"] }),
            )
            .write("log", json!("register")))
    });
    r.handler("onboarding.declined", |ctx: &NodeContext<'_>| {
        let decision = if ctx.channel("compliance")["decision"] == "reject" {
            ctx.channel("compliance")
        } else {
            ctx.channel("approval")
        };
        let why = decision["reason"].as_str().unwrap_or("no reason given").to_string();
        let vendor = decide(ctx, false)?;
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "declined", "reason": format!("declined: {why}"), "vendor_id": vendor["id"],
                        "vendor_status": vendor["status"] }),
            )
            .write("log", json!("declined")))
    });
}

/// Writes the decision into the vendor record and returns it as `{id, name, status}` (nulls when nothing was
/// written: a vendor given only by name and declined).
fn decide(ctx: &NodeContext<'_>, approved: bool) -> Result<serde_json::Value, NodeFailure> {
    let records = ctx
        .records
        .ok_or_else(|| NodeFailure::Fatal("no record store behind this run; the vendor cannot be changed".into()))?;
    let input = &ctx.input()["vendor"];
    let vendor = match input["id"].as_str().filter(|s| !s.is_empty()) {
        Some(id) => OnboardedVendor::Record(id),
        None => {
            OnboardedVendor::New { name: input["name"].as_str().unwrap_or_default(), tax_id: input["tax_id"].as_str() }
        }
    };
    let written = records.vendor_onboarding_decided(ctx.org, ctx.run, vendor, approved).map_err(NodeFailure::Fatal)?;
    Ok(match written {
        Some(v) => json!({ "id": v.id, "name": v.name, "status": v.status }),
        None => json!({ "id": null, "name": input["name"], "status": null }),
    })
}

fn check_documents(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let vendor = &ctx.input()["vendor"];
    if vendor["name"].as_str().is_none_or(|n| n.trim().is_empty()) {
        return Err(NodeFailure::Fatal("choose a vendor of the records, or give a new vendor's name".into()));
    }
    let provided = text_list(&vendor["documents"]);
    let missing: Vec<&str> = REQUIRED_DOCUMENTS.iter().copied().filter(|d| !provided.iter().any(|p| p == d)).collect();
    let route = if missing.is_empty() { "complete" } else { "incomplete" };
    Ok(NodeOutput::default()
        .write("documents", json!({ "provided": provided, "missing": missing }))
        .write("log", json!("check_documents"))
        .route(route))
}
