//! Renewal notices: a contract's notice deadline (computed by `rules::contract_dates` from its extracted dates and
//! kept by the store) is near, so a person decides, in the inbox, whether to let it renew or to give notice. The
//! work loop starts this graph when a finalized contract's reminder falls due (`store::Contracts::
//! due_reminders_for_worker`); the approval step is the inbox item and its notification. No step claims to send
//! anything: the outcome records what the person decided and by when notice must be given.

use chrono::NaiveDate;
use pactwise_engine::{NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::json;

pub fn register(r: &mut Registry) {
    r.handler("renewal.compute", compute);
    r.handler("renewal.renew", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "renews", "notice_by": ctx.channel("notice")["notice_by"],
                        "decided_by": ctx.channel("decision")["decided_by"],
                        "reason": ctx.channel("decision")["reason"] }),
            )
            .write("log", json!("renew")))
    });
    r.handler("renewal.give_notice", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "notice_to_give", "notice_by": ctx.channel("notice")["notice_by"],
                        "decided_by": ctx.channel("decision")["decided_by"],
                        "reason": ctx.channel("decision")["reason"] }),
            )
            .write("log", json!("give_notice")))
    });
    r.handler("renewal.too_late", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "notice_deadline_passed", "deadline": ctx.channel("notice")["notice_by"] }),
            )
            .write("log", json!("too_late")))
    });
}

fn compute(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let input = ctx.input();
    let notice_by: NaiveDate = input["notice_by"].as_str().and_then(|d| d.trim().parse().ok()).ok_or_else(|| {
        NodeFailure::Fatal(format!("the notice deadline must be a date like 2027-03-31, got {}", input["notice_by"]))
    })?;
    let days_left = (notice_by - ctx.now.date_naive()).num_days();
    let route = if days_left < 0 { "too_late" } else { "due" };
    Ok(NodeOutput::default()
        .write(
            "notice",
            json!({ "notice_by": notice_by.to_string(), "days_left": days_left, "expires_on": input["expires_on"],
                    "contract": input["contract"] }),
        )
        .write("log", json!("compute"))
        .route(route))
}
