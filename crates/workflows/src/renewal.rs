//! Renewal notices from a contract's extracted dates (given as input for now): the notice deadline is the end date
//! minus the notice period, computed by code; the reminder is queued now if near, scheduled if later.

use chrono::{Duration, NaiveDate, TimeZone, Utc};
use pactwise_engine::{Handoff, NodeContext, NodeFailure, NodeOutput, Registry};
use serde_json::json;

/// A reminder goes out this many days before the notice deadline.
const REMIND_DAYS_BEFORE: i64 = 60;

pub fn register(r: &mut Registry) {
    r.handler("renewal.compute", compute);
    r.handler("renewal.notify_now", |ctx: &NodeContext<'_>| {
        let notice = ctx.channel("notice").clone();
        let urgent = notice["days_left"].as_i64().is_some_and(|d| d <= 14);
        Ok(NodeOutput::default()
            .handoff(Handoff {
                agent_type: "notifications".into(),
                priority: if urgent { 10 } else { 5 },
                payload: json!({ "action": "renewal_reminder", "contract": ctx.input()["contract"], "notice": notice }),
                scheduled_at: None,
            })
            .write("outcome", json!({ "status": "reminder_queued", "urgent": urgent }))
            .write("log", json!("notify_now")))
    });
    r.handler("renewal.schedule", |ctx: &NodeContext<'_>| {
        let notice = ctx.channel("notice").clone();
        let remind_on: NaiveDate = notice["remind_on"]
            .as_str()
            .and_then(|d| d.parse().ok())
            .ok_or_else(|| NodeFailure::Fatal("no reminder date".into()))?;
        let at = Utc.from_utc_datetime(&remind_on.and_hms_opt(9, 0, 0).unwrap_or_default());
        Ok(NodeOutput::default()
            .handoff(Handoff {
                agent_type: "notifications".into(),
                priority: 5,
                payload: json!({ "action": "renewal_reminder", "contract": ctx.input()["contract"], "notice": notice }),
                scheduled_at: Some(at),
            })
            .write("outcome", json!({ "status": "reminder_scheduled", "at": at }))
            .write("log", json!("schedule")))
    });
    r.handler("renewal.too_late", |ctx: &NodeContext<'_>| {
        Ok(NodeOutput::default()
            .write(
                "outcome",
                json!({ "status": "notice_deadline_passed", "deadline": ctx.channel("notice")["deadline"],
                                      "auto_renew": ctx.channel("notice")["auto_renew"] }),
            )
            .write("log", json!("too_late")))
    });
}

fn compute(ctx: &NodeContext<'_>) -> Result<NodeOutput, NodeFailure> {
    let input = ctx.input();
    let end: NaiveDate = input["end_date"].as_str().and_then(|d| d.trim().parse().ok()).ok_or_else(|| {
        NodeFailure::Fatal(format!("input.end_date must be a date like 2027-03-31, got {}", input["end_date"]))
    })?;
    let notice_days = input["notice_days"]
        .as_i64()
        .filter(|d| (0..=3650).contains(d))
        .ok_or_else(|| NodeFailure::Fatal("input.notice_days must be a whole number of days".into()))?;
    let deadline = end - Duration::days(notice_days);
    let today = ctx.now.date_naive();
    let days_left = (deadline - today).num_days();
    let remind_on = deadline - Duration::days(REMIND_DAYS_BEFORE);
    let route = if days_left < 0 {
        "too_late"
    } else if days_left <= REMIND_DAYS_BEFORE {
        "notify_now"
    } else {
        "later"
    };
    Ok(NodeOutput::default()
        .write(
            "notice",
            json!({
                "end_date": end.to_string(), "notice_days": notice_days, "deadline": deadline.to_string(),
                "days_left": days_left, "remind_on": remind_on.to_string(),
                "auto_renew": input["auto_renew"].as_bool().unwrap_or(false),
            }),
        )
        .write("log", json!("compute"))
        .route(route))
}
