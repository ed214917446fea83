//! What people asked for and could not find, through the real api: Settings → Usage (by month, person and feature,
//! with budgets and what remains; admins see the organization, others their own), the audit log (words, keyset
//! pages, filters, CSV with the same filter), a document's stage log, and the assistant's earlier answers (the
//! signed-in person's own, with citations that open their page). Another organization's rows never show, nor
//! another member's answers.

use chrono::{Datelike, Duration, NaiveDate, Utc};
use pactwise_api::{Api, ApiOptions, AuditQuery, Existing, ImportOptions, OrgScope, UsageScope, VendorInput};
use pactwise_domain::usage::{TokenUsage, UsageFeature, UsageOutcome, UsageRecord};
use pactwise_domain::{ErrorCode, OrgId, Role, UserId};
use pactwise_model::fake::{FakeModelServer, FakeReply, FakeScript, WhenExhausted};
use pactwise_model::{ApiKey, InMemoryApiKeySource, ModelConfig, RetryPolicy};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const KEY: &str = "sk-ant-test-key-for-the-records-tests";

fn offline_api(dir: &Path) -> Api {
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    Api::open_with(dir.join("data"), options).unwrap()
}

async fn model_api(dir: &Path, replies: Vec<FakeReply>) -> (Api, FakeModelServer) {
    let script =
        FakeScript { api_key: Some(KEY.into()), when_exhausted: WhenExhausted::RepeatLast, ..FakeScript::new(replies) };
    let server = FakeModelServer::start(script).await.unwrap();
    let mut model = ModelConfig::default().with_endpoint(server.endpoint());
    model.retry = RetryPolicy { max_attempts: 1, ..RetryPolicy::default() };
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::with_key(ApiKey::parse(KEY).unwrap())),
        model,
        ..ApiOptions::default()
    };
    (Api::open_with(dir.join("data"), options).unwrap(), server)
}

fn side_store(api: &Api) -> pactwise_store::Store {
    pactwise_store::Store::open(&api.data_dir().database(), Arc::new(pactwise_domain::SystemClock)).unwrap()
}

fn member(api: &Api, org: OrgId, name: &str, role: Role) -> OrgScope {
    let store = side_store(api);
    let platform = store.platform();
    let user = platform.create_user(name, None).unwrap();
    platform.set_membership(org, user, role).unwrap();
    let session = platform.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn other_organization(api: &Api) -> OrgScope {
    let store = side_store(api);
    let platform = store.platform();
    let org = platform.create_organization("Elsewhere Inc").unwrap();
    let user = platform.create_user("Eve Other", None).unwrap();
    platform.set_membership(org, user, Role::Owner).unwrap();
    let session = platform.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn call(org: OrgId, user: Option<UserId>, purpose: &str, cost: i64, at: chrono::DateTime<Utc>) -> UsageRecord {
    UsageRecord {
        id: uuid::Uuid::now_v7(),
        org,
        user,
        purpose: purpose.into(),
        model: "claude-haiku-5-5".into(),
        tokens: TokenUsage { input: 1000, output: 100, cache_read: 500, ..TokenUsage::default() },
        cost_micros: cost,
        latency_ms: 900,
        outcome: UsageOutcome::Ok,
        at,
    }
}

fn licence() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/software-license-northwind-tailspin.txt")
}

#[tokio::test]
async fn usage_by_month_person_and_feature_with_budgets_admins_see_the_organization_others_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let api = offline_api(tmp.path());
    let owner = api.local_session().await.unwrap();
    let bob = member(&api, owner.org(), "Bob Reviewer", Role::Reviewer);
    let elsewhere = other_organization(&api);
    let now = Utc::now();
    let last_month = now.with_day(1).unwrap() - Duration::days(3);
    let store = side_store(&api);
    store
        .usage()
        .record_batch(&[
            call(owner.org(), Some(owner.user()), "classify", 100_000, now),
            call(owner.org(), Some(owner.user()), "checklist_section", 300_000, now),
            call(owner.org(), Some(bob.user()), "assistant", 250_000, now),
            call(owner.org(), None, "workflow_report_extract", 50_000, now),
            call(owner.org(), Some(bob.user()), "a_purpose_from_long_ago", 7_000, now),
            call(owner.org(), Some(owner.user()), "prep_draft", 1_000_000, last_month),
            call(elsewhere.org(), Some(elsewhere.user()), "assistant", 9_999_999, now),
        ])
        .unwrap();
    api.set_model_budget(&owner, "organization", "monthly", 2_000_000).await.unwrap();
    api.set_model_budget(&owner, "each_user", "monthly", 500_000).await.unwrap();
    api.set_model_budget(&owner, &bob.user().to_string(), "monthly", 200_000).await.unwrap();
    api.set_model_budget(&owner, "organization", "daily", 1_000_000).await.unwrap();

    let report = api.usage_report(&owner, None).await.unwrap();
    assert_eq!(report.scope, UsageScope::Organization);
    let this = report.months.iter().find(|m| m.month == report.current_month).unwrap();
    assert_eq!(this.cost_micros, 707_000.0, "the organization's calls only, background work included");
    assert_eq!(this.calls, 5);
    assert_eq!((this.budget_micros, this.remaining_micros), (Some(2_000_000.0), Some(1_293_000.0)));
    assert_eq!(this.input_tokens, 7_500.0, "uncached and cached input together");
    let previous = report.months.iter().find(|m| m.month != report.current_month).unwrap();
    assert_eq!(previous.cost_micros, 1_000_000.0);

    let person = |name: Option<&str>| report.by_person.iter().find(|p| p.name.as_deref() == name).unwrap();
    let me = report.by_person.iter().find(|p| p.you).unwrap();
    assert_eq!((me.cost_micros, me.budget_micros, me.remaining_micros), (400_000.0, Some(500_000.0), Some(100_000.0)));
    let b = person(Some("Bob Reviewer"));
    assert_eq!(
        (b.cost_micros, b.budget_micros, b.remaining_micros),
        (257_000.0, Some(200_000.0), Some(-57_000.0)),
        "the tightest budget applies; a budget lowered below the spend shows the overrun"
    );
    assert_eq!(person(None).cost_micros, 50_000.0, "background work is its own line, with no budget");
    assert!(!report.by_person.iter().any(|p| p.name.as_deref() == Some("Eve Other")));

    let feature = |f: UsageFeature| report.by_feature.iter().find(|x| x.feature == f).map(|x| x.cost_micros);
    assert_eq!(feature(UsageFeature::Classification), Some(100_000.0));
    assert_eq!(feature(UsageFeature::Checklist), Some(300_000.0));
    assert_eq!(feature(UsageFeature::Assistant), Some(250_000.0));
    assert_eq!(feature(UsageFeature::ReviewReport), Some(50_000.0));
    assert_eq!(feature(UsageFeature::Other), Some(7_000.0), "a purpose this build does not know reads as other");
    assert_eq!(feature(UsageFeature::PrepDrafting), None, "last month's drafting is not this month's");
    let today = report.today.unwrap();
    assert_eq!((today.spent_micros, today.remaining_micros), (707_000.0, 293_000.0));

    let past = api.usage_report(&owner, Some(previous.month.clone())).await.unwrap();
    assert_eq!(past.by_feature.len(), 1);
    assert_eq!(past.by_feature[0].feature, UsageFeature::PrepDrafting);

    // A reviewer sees their own spending only, against their own budget.
    let own = api.usage_report(&bob, None).await.unwrap();
    assert_eq!(own.scope, UsageScope::Own);
    assert_eq!(own.by_person.len(), 1);
    assert!(own.by_person[0].you);
    let this = own.months.iter().find(|m| m.month == own.current_month).unwrap();
    assert_eq!((this.cost_micros, this.budget_micros), (257_000.0, Some(200_000.0)));
    assert!(own.months.iter().all(|m| m.month == own.current_month), "the owner's last month is not Bob's");
    assert!(own.today.is_none(), "the organization's daily budget is not a person's to read");

    // Another organization sees only its own.
    let theirs = api.usage_report(&elsewhere, None).await.unwrap();
    let this = theirs.months.iter().find(|m| m.month == theirs.current_month).unwrap();
    assert_eq!(this.cost_micros, 9_999_999.0);
    assert_eq!(theirs.by_person.len(), 1);

    let err = api.usage_report(&owner, Some("November".into())).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

/// Raw entries as other code paths write them (the store's writers are private to it): `n` vendor entries by
/// `actor` on `day`.
fn plant_audit(api: &Api, org: OrgId, actor: Option<UserId>, action: &str, n: usize, day: &str) {
    let conn = rusqlite::Connection::open(api.data_dir().database()).unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    for i in 0..n {
        tx.execute(
            "INSERT INTO audit_log (id, org_id, actor_id, at, action, entity_kind, entity_id, details)
             VALUES (?1, ?2, ?3, ?4, ?5, 'vendor', ?6, '{}')",
            rusqlite::params![
                uuid::Uuid::now_v7().to_string(),
                org.to_string(),
                actor.map(|a| a.to_string()),
                format!("{day}T10:{:02}:{:02}.000000Z", (i / 60) % 60, i % 60),
                action,
                format!("planted-{i}"),
            ],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

#[tokio::test]
async fn the_audit_log_reads_in_words_pages_newest_first_filters_and_exports_the_same_filter_as_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let api = offline_api(tmp.path());
    let owner = api.local_session().await.unwrap();
    let bob = member(&api, owner.org(), "Bob Reviewer", Role::Reviewer);
    let elsewhere = other_organization(&api);
    // Many older entries (as a long-lived organization has), Bob's among them, and another organization's.
    plant_audit(&api, owner.org(), Some(owner.user()), "vendor.edit", 2500, "2025-03-01");
    plant_audit(&api, owner.org(), Some(bob.user()), "vendor.status", 40, "2025-04-01");
    plant_audit(&api, elsewhere.org(), Some(elsewhere.user()), "vendor.edit", 30, "2025-04-02");
    // A name with a line break, quotes and a comma.
    let dana = member(&api, owner.org(), "Dana \"DJ\" O'Neil,\nProcurement", Role::Viewer);
    plant_audit(&api, owner.org(), Some(dana.user()), "vendor.edit", 1, "2025-05-01");
    // Today's, through the real api: names that need escaping and one that a spreadsheet would run.
    let tricky = "=HYPERLINK(\"http://x\"), \"Acme\"";
    for name in ["Globex Ltd", tricky, "Initech West"] {
        let input = VendorInput { name: Some(name.into()), ..VendorInput::default() };
        api.vendor_create(&owner, input).await.unwrap();
    }

    let my_name = side_store(&api).platform().user_name(owner.user()).unwrap();
    let first = api.audit_page(&owner, AuditQuery::default(), None, Some(2)).await.unwrap();
    assert_eq!(first.lines.len(), 2);
    assert_eq!(first.lines[0].person, my_name);
    assert_eq!(first.lines[0].action, "added");
    assert_eq!(first.lines[0].thing, "the vendor “Initech West”", "newest first, the thing named");
    assert!(!first.lines[0].thing.contains("vendor.") && !first.lines[0].action.contains('_'));

    // Every entry once, across pages.
    let mut seen = 0;
    let mut cursor = None;
    let mut last_at = String::from("9999");
    loop {
        let page = api.audit_page(&owner, AuditQuery::default(), cursor.clone(), Some(500)).await.unwrap();
        for line in &page.lines {
            assert!(line.at <= last_at, "newest first");
            last_at = line.at.clone();
        }
        seen += page.lines.len();
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert!(seen >= 2544, "every entry of the organization, none of the other's: {seen}");
    assert!(seen < 2544 + 30, "{seen}");

    // Filters: person, action, dates, text.
    let by_bob = AuditQuery { person: Some(bob.user()), ..AuditQuery::default() };
    let page = api.audit_page(&owner, by_bob, None, Some(100)).await.unwrap();
    assert_eq!(page.lines.len(), 40);
    assert!(page.lines.iter().all(|l| l.person == "Bob Reviewer" && l.action == "changed the status of"));
    let created = AuditQuery { action: Some("vendor.create".into()), ..AuditQuery::default() };
    assert_eq!(api.audit_page(&owner, created, None, None).await.unwrap().lines.len(), 3);
    let day = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    let march = AuditQuery { from: Some(day("2025-03-01")), to: Some(day("2025-03-31")), ..AuditQuery::default() };
    let page = api.audit_page(&owner, march.clone(), None, Some(1000)).await.unwrap();
    assert_eq!(page.lines.len(), 1000);
    assert!(page.next.is_some());
    let april_first =
        AuditQuery { from: Some(day("2025-04-01")), to: Some(day("2025-04-01")), ..AuditQuery::default() };
    assert_eq!(api.audit_page(&owner, april_first, None, None).await.unwrap().lines.len(), 40, "both ends included");
    let text = AuditQuery { text: Some("globex".into()), ..AuditQuery::default() };
    let page = api.audit_page(&owner, text, None, None).await.unwrap();
    assert_eq!(page.lines.len(), 1);
    assert_eq!(page.lines[0].thing, "the vendor “Globex Ltd”");
    let backwards = AuditQuery { from: Some(day("2025-04-02")), to: Some(day("2025-04-01")), ..AuditQuery::default() };
    assert_eq!(api.audit_page(&owner, backwards, None, None).await.unwrap_err().code, ErrorCode::InvalidInput);
    let err = api.audit_page(&owner, AuditQuery::default(), Some("not a page".into()), None).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);

    // The filter's choices are the organization's own, in words.
    let choices = api.audit_choices(&owner).await.unwrap();
    assert!(choices.actions.iter().any(|c| c.value == "vendor.create" && c.label == "Vendor added"));
    let people: Vec<&str> = choices.people.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(people.len(), 3, "Bob, Dana and me; not Eve of the other organization: {people:?}");
    assert!(["Bob Reviewer", my_name.as_str()].iter().all(|e| people.contains(e)), "{people:?}");

    // Another organization sees only its own.
    let theirs = api.audit_page(&elsewhere, AuditQuery::default(), None, Some(1000)).await.unwrap();
    assert_eq!(theirs.lines.len(), 30);
    assert!(theirs.lines.iter().all(|l| l.person == "Eve Other"));
    let mine_from_there = AuditQuery { person: Some(owner.user()), ..AuditQuery::default() };
    assert!(api.audit_page(&elsewhere, mine_from_there, None, None).await.unwrap().lines.is_empty());
    assert_eq!(api.audit_choices(&elsewhere).await.unwrap().people.len(), 1);

    // CSV: the same filter, escaped, formulas neutralised.
    let out = tmp.path().join("audit.csv");
    let query = AuditQuery { action: Some("vendor.create".into()), ..AuditQuery::default() };
    let done = api.export_audit_csv(&owner, query.clone(), out.clone(), Existing::Refuse).await.unwrap();
    assert_eq!(done.rows, 3);
    let csv = std::fs::read_to_string(&out).unwrap();
    assert!(csv.starts_with("When (UTC),Person,Action,Thing\r\n"), "{csv}");
    assert!(
        csv.contains("\"the vendor “=HYPERLINK(\"\"http://x\"\"), \"\"Acme\"\"”\""),
        "quotes doubled, comma quoted: {csv}"
    );
    let again = api.export_audit_csv(&owner, query.clone(), out.clone(), Existing::Refuse).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::FileExists, "an existing file is left as it was");
    let (by_dana, _) =
        api.audit_csv(&owner, AuditQuery { person: Some(dana.user()), ..AuditQuery::default() }).await.unwrap();
    assert!(
        by_dana.contains(",\"Dana \"\"DJ\"\" O'Neil,\nProcurement\",edited"),
        "a line break, quotes and a comma stay inside one quoted cell: {by_dana}"
    );
    let (formula, _) =
        api.audit_csv(&owner, AuditQuery { text: Some("hyperlink".into()), ..AuditQuery::default() }).await.unwrap();
    assert!(!formula.lines().any(|l| l.starts_with('=') || l.contains(",=")), "{formula}");
    let (all, rows) = api.audit_csv(&owner, march).await.unwrap();
    assert_eq!(rows, 2500, "the export is not one page: every row the filter takes");
    assert_eq!(all.matches("\r\n").count(), 2501);
}

#[tokio::test]
async fn a_documents_stage_log_lists_every_stage_in_order_and_another_organization_cannot_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    let api = offline_api(tmp.path());
    let scope = api.local_session().await.unwrap();
    let report = api.import_documents(&scope, vec![licence()], ImportOptions::default(), &|_| {}).await.unwrap();
    let id = report.imported[0].document.id;

    let log = api.stage_log(&scope, id).await.unwrap();
    let stages: Vec<&str> = log.iter().map(|s| s.stage.as_str()).collect();
    assert_eq!(stages, ["extract", "classify", "checklist", "gate", "finalize"]);
    assert_eq!((log[0].status.as_str(), log[0].outcome.as_deref()), ("done", Some("text")));
    let classify = &log[1];
    assert_eq!(classify.outcome.as_deref(), Some("keyword"), "offline: the keyword classifier");
    assert_eq!((classify.model.as_deref(), classify.input_tokens), (None, 0), "no model call, no tokens");
    assert!(classify.reason.as_deref().unwrap().contains("offline"));
    assert!(!log.iter().any(|s| s.at.is_empty()));

    let elsewhere = other_organization(&api);
    assert_eq!(api.stage_log(&elsewhere, id).await.unwrap_err().code, ErrorCode::NotFound);
}

#[tokio::test]
async fn earlier_answers_are_the_askers_own_with_citations_that_open_their_page_searchable_and_paged() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, ours) = {
        let api = offline_api(tmp.path());
        let a = api.local_session().await.unwrap();
        let text = "SUPPLY AGREEMENT\n\n4. PAYMENT. Northwind shall pay each undisputed invoice within forty-five \
                    (45) days of receipt.";
        let path = tmp.path().join("supply.txt");
        std::fs::write(&path, text).unwrap();
        let report = api.import_documents(&a, vec![path], ImportOptions::default(), &|_| {}).await.unwrap();
        let (b, _) = api.seed_demo().await.unwrap();
        (a, b, report.imported[0].document.id)
    };
    let replies = vec![
        FakeReply::tool_use(vec![("search_contract_text", json!({"query": "pay undisputed invoice days"}))]),
        FakeReply::text("Northwind pays within 45 days [C1]."),
    ];
    let (api, _server) = model_api(tmp.path(), replies).await;
    let a = side_store(&api).sessions().open(a.session()).unwrap();
    let colleague = member(&api, a.org(), "Cleo Colleague", Role::Reviewer);
    let first = api.ask(&a, "When do we pay Harbor Freight?", None).await.unwrap();
    assert_eq!(first.citations.len(), 1);
    api.ask(&a, "And the second question?", None).await.unwrap();
    api.ask(&colleague, "A colleague's own question", None).await.unwrap();

    let mine = api.assistant_history(&a, None, None, None).await.unwrap();
    let questions: Vec<&str> = mine.answers.iter().map(|x| x.question.as_str()).collect();
    assert_eq!(questions, ["And the second question?", "When do we pay Harbor Freight?"], "newest first, own only");
    let earlier = &mine.answers[1];
    assert_eq!(earlier.text.as_deref(), Some(first.text.as_str()));
    assert_eq!(earlier.citations.len(), 1);
    let c = &earlier.citations[0];
    let live = &first.citations[0];
    assert_eq!(
        (c.marker.as_str(), c.document, c.page, c.start, c.end),
        (live.marker.as_str(), Some(ours), live.page, live.start, live.end),
        "the citation opens the page and range the live answer did"
    );
    assert_eq!(c.title, "supply.txt");

    // Paged and searchable.
    let one = api.assistant_history(&a, None, None, Some(1)).await.unwrap();
    assert_eq!(one.answers.len(), 1);
    let rest = api.assistant_history(&a, None, one.next.clone(), Some(1)).await.unwrap();
    assert_eq!(rest.answers[0].question, "When do we pay Harbor Freight?");
    assert!(rest.next.is_none());
    let found = api.assistant_history(&a, Some("harbor".into()), None, None).await.unwrap();
    assert_eq!(found.answers.len(), 1);

    // A colleague sees only theirs; another organization nothing; a cursor from someone else's list starts nowhere.
    let theirs = api.assistant_history(&colleague, None, None, None).await.unwrap();
    assert_eq!(theirs.answers.len(), 1);
    assert_eq!(theirs.answers[0].question, "A colleague's own question");
    let b = side_store(&api).sessions().open(b.session()).unwrap();
    assert!(api.assistant_history(&b, None, None, None).await.unwrap().answers.is_empty());
    let foreign = api.assistant_history(&colleague, None, Some(mine.answers[0].id.clone()), None).await.unwrap();
    assert!(foreign.answers.is_empty());

    // A cited document deleted since is named as gone and opens nothing.
    api.delete_document(&a, ours).await.unwrap();
    let after = api.assistant_history(&a, Some("harbor".into()), None, None).await.unwrap();
    let c = &after.answers[0].citations[0];
    assert_eq!((c.document, c.title.as_str()), (None, "A document deleted since"));
}
