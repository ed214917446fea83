//! The reads behind Usage, the audit log and the assistant's history, through the store's public API: each one
//! answers only the session's organization, the history only its own user, and spending only what the role may see.

use chrono::{Duration, TimeZone, Utc};
use pactwise_domain::usage::{TokenUsage, UsageOutcome, UsageRecord};
use pactwise_domain::{FixedClock, MediaType, Role};
use pactwise_store::{AuditFilter, NewAnswer, NewDocument, OrgScope, Store, spend_visible_to};
use std::sync::Arc;

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    Store::open_in_memory(clock).unwrap()
}

fn join(store: &Store, org: pactwise_domain::OrgId, name: &str, role: Role) -> OrgScope {
    let p = store.platform();
    let user = p.create_user(name, None).unwrap();
    p.set_membership(org, user, role).unwrap();
    store.sessions().open(p.start_session(user, org).unwrap()).unwrap()
}

fn org(store: &Store, name: &str) -> pactwise_domain::OrgId {
    store.platform().create_organization(name).unwrap()
}

fn answer(question: &str) -> NewAnswer {
    NewAnswer {
        session: "s".into(),
        question: question.into(),
        answer: Some("An answer.".into()),
        outcome: "answered".into(),
        iterations: 1,
        tool_calls: serde_json::json!([]),
        citations: Vec::new(),
    }
}

#[test]
fn audit_pages_answer_only_the_sessions_organization_newest_first() {
    let store = store();
    let (acme, globex) = (org(&store, "Acme"), org(&store, "Globex"));
    let a = join(&store, acme, "Ann", Role::Owner);
    let g = join(&store, globex, "Gus", Role::Owner);
    for (scope, n) in [(&a, 3), (&g, 2)] {
        for i in 0..n {
            let doc = NewDocument {
                name: format!("{}-{i}.pdf", scope.org()),
                media_type: MediaType::Pdf,
                size: 10,
                content_hash: format!("{i:0>64}"),
            };
            store.documents().record(scope, &doc).unwrap();
        }
    }
    let page = store.audit().page(&a, &AuditFilter::default(), None, 100).unwrap();
    assert_eq!(page.len(), 3);
    assert!(page.windows(2).all(|w| w[0].seq > w[1].seq), "newest first");
    assert!(page.iter().all(|r| r.actor_name.as_deref() == Some("Ann") && r.entity_name.is_some()));
    let older = store.audit().page(&a, &AuditFilter::default(), Some(page[0].seq), 100).unwrap();
    assert_eq!(older.len(), 2, "the keyset starts below the cursor");
    let gus_here = AuditFilter { actor: Some(g.user()), ..AuditFilter::default() };
    assert!(store.audit().page(&a, &gus_here, None, 100).unwrap().is_empty());
    let (actions, people) = store.audit().choices(&a).unwrap();
    assert_eq!(actions, ["document.imported"]);
    assert_eq!(people.iter().map(|p| p.1.as_str()).collect::<Vec<_>>(), ["Ann"]);
}

#[test]
fn history_is_the_askers_own_and_spending_is_what_the_role_may_see() {
    let store = store();
    let (acme, globex) = (org(&store, "Acme"), org(&store, "Globex"));
    let ann = join(&store, acme, "Ann", Role::Admin);
    let bob = join(&store, acme, "Bob", Role::Reviewer);
    let gus = join(&store, globex, "Gus", Role::Owner);
    store.passages().record_answer(&ann, &answer("Ann's question")).unwrap();
    store.passages().record_answer(&bob, &answer("Bob's question")).unwrap();
    store.passages().record_answer(&gus, &answer("Gus's question")).unwrap();
    let history = store.assistant_history();
    let of =
        |s: &OrgScope| history.page(s, None, None, 10).unwrap().into_iter().map(|e| e.question).collect::<Vec<_>>();
    assert_eq!(of(&ann), ["Ann's question"]);
    assert_eq!(of(&bob), ["Bob's question"]);
    assert_eq!(of(&gus), ["Gus's question"]);
    assert!(history.page(&ann, Some("BOB"), None, 10).unwrap().is_empty(), "search stays within one's own");

    assert_eq!(spend_visible_to(&ann), None);
    assert_eq!(spend_visible_to(&bob), Some(bob.user()));
    let at = Utc.with_ymd_and_hms(2026, 11, 20, 9, 0, 0).unwrap();
    let call = |scope: &OrgScope, cost| UsageRecord {
        id: uuid::Uuid::now_v7(),
        org: scope.org(),
        user: Some(scope.user()),
        purpose: "assistant".into(),
        model: "claude-haiku-5-5".into(),
        tokens: TokenUsage::default(),
        cost_micros: cost,
        latency_ms: 1,
        outcome: UsageOutcome::Ok,
        at,
    };
    store.usage().record_batch(&[call(&ann, 10), call(&bob, 20), call(&gus, 40)]).unwrap();
    let (from, to) = (at - Duration::days(19), at + Duration::days(10));
    let total =
        |s: &OrgScope| store.usage().spend_by_user(s, from, to).unwrap().iter().map(|r| r.cost_micros).sum::<i64>();
    assert_eq!(total(&ann), 30, "an admin reads the organization's");
    assert_eq!(total(&bob), 20, "a reviewer reads their own");
    assert_eq!(total(&gus), 40);
    assert_eq!(store.usage().spend_by_month(&bob, 12).unwrap()[0].cost_micros, 20);
    assert_eq!(store.usage().spend_by_purpose(&ann, from, to).unwrap()[0].cost_micros, 30);
}

#[test]
fn a_citations_supporting_sentences_come_back_and_a_damaged_or_older_row_falls_back_to_the_passage() {
    use pactwise_store::StoredCitation;
    let store = store();
    let acme = org(&store, "Acme");
    let ann = join(&store, acme, "Ann", Role::Admin);
    let doc =
        NewDocument { name: "msa.pdf".into(), media_type: MediaType::Pdf, size: 10, content_hash: "c".repeat(64) };
    let document = store.documents().record(&ann, &doc).unwrap().0.id;
    let cite = |supporting: Vec<(u32, u32)>| StoredCitation {
        kind: "contract".into(),
        document: Some(document),
        precedent: None,
        page: Some(3),
        start: 100,
        end: 600,
        excerpt: "…".into(),
        supporting,
    };
    let mut with = answer("Is liability capped?");
    // In the passage, in page order; the second range runs past the passage's end (as a damaged row would).
    with.citations = vec![cite(vec![(220, 310)]), cite(vec![(120, 150), (590, 700)]), cite(Vec::new())];
    store.passages().record_answer(&ann, &with).unwrap();
    let entry = store.assistant_history().page(&ann, None, None, 10).unwrap().remove(0);
    let supporting: Vec<Vec<(u32, u32)>> = entry.citations.iter().map(|c| c.supporting.clone()).collect();
    assert_eq!(supporting, vec![vec![(220, 310)], vec![(120, 150)], vec![]]);
}
