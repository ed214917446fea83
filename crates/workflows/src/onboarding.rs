//! Vendor onboarding: required documents and screening checked by rules; missing documents are requested through
//! the task queue (an idempotent handoff); approvals are four-eyes.

use crate::money::text_list;
use pactwise_engine::{Handoff, NodeContext, NodeFailure, NodeOutput, Registry};
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
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "registered", "vendor": ctx.input()["vendor"]["name"] }))
            .write("log", json!("register")))
    });
    r.handler("onboarding.declined", |ctx: &NodeContext<'_>| {
        let decision = if ctx.channel("compliance")["decision"] == "reject" {
            ctx.channel("compliance")
        } else {
            ctx.channel("approval")
        };
        let why = decision["reason"].as_str().unwrap_or("no reason given").to_string();
        Ok(NodeOutput::default()
            .write("outcome", json!({ "status": "declined", "reason": format!("declined: {why}") }))
            .write("log", json!("declined")))
    });
}

fn check_documents(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let vendor = &ctx.input()["vendor"];
    if vendor["name"].as_str().is_none_or(|n| n.trim().is_empty()) {
        return Err(NodeFailure::Fatal("the vendor has no name (input.vendor.name)".into()));
    }
    let provided = text_list(&vendor["documents"]);
    let missing: Vec<&str> = REQUIRED_DOCUMENTS.iter().copied().filter(|d| !provided.iter().any(|p| p == d)).collect();
    let route = if missing.is_empty() { "complete" } else { "incomplete" };
    Ok(NodeOutput::default()
        .write("documents", json!({ "provided": provided, "missing": missing }))
        .write("log", json!("check_documents"))
        .route(route))
}
