//! Workflow runs through the api, as the Approvals view uses them: an approval that sits too long escalates once, and
//! the urgent notification its escalation wrote reaches the inbox.

use chrono::{Duration, TimeZone, Utc};
use pactwise_api::{Api, ApiOptions};
use pactwise_domain::FixedClock;
use std::sync::Arc;

const PROCUREMENT: &str =
    r#"{"request": "REQ-7 standing desks", "budget": 10000, "capabilities": ["office_furniture", "delivery"]}"#;

#[tokio::test]
async fn an_approval_that_sits_too_long_shows_its_urgent_notification_in_the_inbox_once() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    let options = ApiOptions {
        clock: clock.clone(),
        keys: Arc::new(pactwise_model::InMemoryApiKeySource::empty()),
        ..ApiOptions::default()
    };
    let api = Api::open_with(tmp.path().join("data"), options).unwrap();
    let scope = api.local_session().await.unwrap();
    api.start_run(&scope, "procurement".into(), serde_json::from_str(PROCUREMENT).unwrap()).await.unwrap();

    let inbox = api.inbox(&scope).await.unwrap();
    assert_eq!(inbox.len(), 1);
    assert!(!inbox[0].escalated && inbox[0].urgent_notice.is_none(), "{:?}", inbox[0]);

    // The procurement graph escalates its approval after 48 hours.
    clock.advance(Duration::hours(49));
    let inbox = api.inbox(&scope).await.unwrap();
    assert!(inbox[0].escalated);
    let notice = inbox[0].urgent_notice.clone().expect("the urgent notification is shown");
    assert!(!notice.trim().is_empty());

    // Once: a later look shows the same single notice, and the approval is still undecided.
    clock.advance(Duration::hours(49));
    let inbox = api.inbox(&scope).await.unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].urgent_notice.as_deref(), Some(notice.as_str()));
    assert_eq!(inbox[0].status, pactwise_domain::ApprovalStatus::Pending, "escalation never decides");
}
