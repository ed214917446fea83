//! PactWise Source from the buyer's desktop, against the real sync service on loopback: a published Prep Studio
//! package becomes a tender (the opening key made here, kept in the keychain store and nowhere in SQLite), a second
//! member approves, vendors are invited by link (from a vendor record and by name) and submit through the service's
//! vendor routes, a question is answered; after the deadline (the service's clock) the technical envelopes open
//! only on the desktop that keeps the key (another desktop is told which), people score, lock, the prices open and
//! add up by code, the award starts the contract workflow, and the OCDS record and the verified audit trail are
//! saved. Another organization's buyer can neither list, open nor score the tender.

use base64::Engine as _;
use chrono::{Duration, Utc};
use pactwise_api::{
    Api, ApiOptions, ArtifactKind, AwardInput, Content, Existing, InviteInput, MemoryOpeningKeys, MemorySyncTokens,
    OrgScope, ScoreInput, SignInInput, VendorInput,
};
use pactwise_domain::{Clock, ErrorCode, FixedClock, Role};
use pactwise_model::InMemoryApiKeySource;
use pactwise_source::envelope::KeyPair;
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

const PASSWORD: &str = "a-long-password-for-sync";

struct Service {
    endpoint: String,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Organization `alpha`: Ann and Bob (buyers); `charlie`: Carol (buyer). The service's clock is `clock`.
async fn start(clock: Arc<FixedClock>) -> Service {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
    let now = clock.now();
    admin::create_org(storage.as_ref(), "alpha", "Alpha Council", now).unwrap();
    admin::create_user(storage.as_ref(), "alpha", "ann@alpha.example", PASSWORD, Role::Buyer, now).unwrap();
    admin::create_user(storage.as_ref(), "alpha", "bob@alpha.example", PASSWORD, Role::Buyer, now).unwrap();
    admin::create_org(storage.as_ref(), "charlie", "Charlie GmbH", now).unwrap();
    admin::create_user(storage.as_ref(), "charlie", "carol@charlie.example", PASSWORD, Role::Buyer, now).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = ServerConfig { source_wrapping_key: Some(Arc::new(KeyPair::generate())), ..ServerConfig::default() };
    let state = AppState::new(storage, clock, config);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = pactwise_sync_server::serve(listener, state, async move {
            let _ = stopped.await;
        })
        .await;
    });
    Service { endpoint: format!("http://{addr}"), _dir: dir, stop: Some(stop) }
}

struct Desktop {
    api: Api,
    scope: OrgScope,
    keys: Arc<MemoryOpeningKeys>,
}

async fn desktop(service: &Service, dir: &Path, org: &str, email: &str, clock: Arc<FixedClock>) -> Desktop {
    let keys = Arc::new(MemoryOpeningKeys::default());
    let options = ApiOptions {
        clock,
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        opening_keys: keys.clone(),
        ..ApiOptions::default()
    };
    let api = Api::open_with(dir.join(email), options).unwrap();
    let input = SignInInput {
        server: service.endpoint.clone(),
        org: org.into(),
        email: email.into(),
        password: PASSWORD.into(),
    };
    let scope = api.sync_sign_in(input).await.unwrap();
    Desktop { api, scope, keys }
}

fn from<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a test artifact deserialises")
}

/// A package drafted by hand, validated, approved part by part and published through the store's gate.
async fn published_package(d: &Desktop, publication: chrono::NaiveDate) -> String {
    let intake: pactwise_api::Intake = from(json!({
        "title": "Fleet telematics", "buyer": "City of Northbridge", "brief": "GPS tracking for 120 vehicles.",
        "needs": [{"id": "N1", "text": "Live vehicle positions"}], "category": "services", "currency": "EUR",
        "budget_ceiling_minor": 18000000,
        "timeline": {"publication": publication, "question_days": 2, "submission_days": 5, "evaluation_days": 10,
                     "award_days": 5, "contract_start_days": 10},
        "holidays": []
    }));
    let milestones = pactwise_rules::prep::milestones_with_rationales(&intake, |_| Some("Enough time.".into()));
    let view = d.api.prep_new(&d.scope, intake).await.unwrap();
    let id = view.id.clone();
    let contents = [
        Content::Scope(from(json!({
            "summary": "Telematics for 120 vehicles.", "in_scope": ["Devices"], "out_of_scope": ["Repairs"],
            "deliverables": ["Installed devices"], "need_ids": ["N1"]
        }))),
        Content::Requirements(from(json!({"items": [
            {"code": "R-01", "text": "EU hosting", "kind": "mandatory", "need_ids": [], "measure": null},
            {"code": "R-02", "text": "Position updates", "kind": "scored", "need_ids": ["N1"],
             "measure": {"metric": "update interval", "threshold": "<= 30 s", "verification": "test"}}
        ]}))),
        Content::Criteria(from(json!({"criteria": [
            {"id": "C1", "name": "Tracking", "description": "Tracking quality", "weight_bp": 10000, "requirement_codes": ["R-02"]}
        ]}))),
        Content::Pricing(from(json!({"currency": "EUR", "lines": [
            {"code": "P-01", "description": "Device", "unit": "vehicle", "quantity": 120, "basis": "per_unit", "open_amount": false}
        ]}))),
        Content::Milestones(pactwise_rules::prep::Milestones { items: milestones }),
    ];
    for content in contents {
        d.api.prep_edit(&d.scope, &id, content).await.unwrap();
    }
    let mut view = d.api.prep_validate(&d.scope, &id).await.unwrap();
    for kind in ArtifactKind::ALL {
        let hash = view.package.artifacts.content_hash(kind).unwrap();
        view = d.api.prep_approve(&d.scope, &id, kind, hash).await.unwrap();
    }
    assert!(view.precheck.is_empty(), "{:?}", view.precheck);
    assert_eq!(d.api.prep_publish(&d.scope, &id).await.unwrap().status, "published");
    id
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A vendor accepts its invitation link and gets a session (the vendor page's calls, from the test).
async fn vendor_joins(http: &reqwest::Client, service: &Service, link: &str, email: &str) -> String {
    let token = link.split_once('#').expect("the token after #").1;
    let session: Value = http
        .post(format!("{}/api/v1/source/vendor/accept", service.endpoint))
        .json(&json!({"token": token, "email": email, "password": "vendor-password-1"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    session["token"].as_str().unwrap_or_else(|| panic!("{session}")).to_owned()
}

async fn vendor_post(http: &reqwest::Client, service: &Service, token: &str, path: &str, body: Value) -> Value {
    let response = http
        .post(format!("{}/api/v1/source/vendor/tenders/{path}", service.endpoint))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    response.json().await.unwrap()
}

/// Every byte of every SQLite file (database and WAL) under `dir`.
fn sqlite_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains(".sqlite") || path.to_string_lossy().contains(".db") {
                out.extend(std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tender_from_publication_to_award_on_the_buyers_desktop() {
    let clock = Arc::new(FixedClock::new(Utc::now()));
    let service = start(clock.clone()).await;
    let tmp = tempfile::tempdir().unwrap();
    let ann = desktop(&service, tmp.path(), "alpha", "ann@alpha.example", clock.clone()).await;
    let bob = desktop(&service, tmp.path(), "alpha", "bob@alpha.example", clock.clone()).await;
    let carol = desktop(&service, tmp.path(), "charlie", "carol@charlie.example", clock.clone()).await;
    let http = reqwest::Client::new();

    // A draft package cannot become a tender; a published one can, and waits for a second member.
    let package = published_package(&ann, clock.now().date_naive() + Duration::days(1)).await;
    let tender = ann.api.source_publish(&ann.scope, &package).await.unwrap();
    assert_eq!(tender.status, "Awaiting second approval");
    assert!(tender.key_here && !tender.can_approve, "{tender:?}");
    let id = tender.id.clone();
    let err = ann.api.source_approve(&ann.scope, &id).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert!(err.message.contains("second member"), "{err:?}");
    let listed = bob.api.source_list(&bob.scope).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].can_approve && !listed[0].key_here, "{:?}", listed[0]);
    assert_eq!(listed[0].requested_by, "ann@alpha.example");
    let tender = bob.api.source_approve(&bob.scope, &id).await.unwrap();
    assert_eq!(tender.status, "Open");
    assert!(tender.can_invite);

    // Another organization's buyer can neither list, see, invite to, open nor score it.
    assert!(carol.api.source_list(&carol.scope).await.unwrap().is_empty());
    assert_eq!(carol.api.source_show(&carol.scope, &id).await.unwrap_err().code, ErrorCode::NotFound);
    let invite = InviteInput { vendor_name: Some("Mallory".into()), email: "m@example.org".into(), vendor_id: None };
    assert_eq!(carol.api.source_invite(&carol.scope, &id, invite).await.unwrap_err().code, ErrorCode::NotFound);

    // Invitations: from a vendor record and by name; the link is the vendor page's, on the service's address.
    let globex = ann
        .api
        .vendor_create(&ann.scope, VendorInput { name: Some("Globex Fleet".into()), aliases: None, identifiers: None })
        .await
        .unwrap();
    let acme_link = ann
        .api
        .source_invite(
            &ann.scope,
            &id,
            InviteInput {
                vendor_name: Some("Acme Telematics Ltd".into()),
                email: "bids@acme.example".into(),
                vendor_id: None,
            },
        )
        .await
        .unwrap();
    assert!(acme_link.link.starts_with(&format!("{}/source/invitation#pwi_", service.endpoint)), "{acme_link:?}");
    let globex_link = ann
        .api
        .source_invite(
            &ann.scope,
            &id,
            InviteInput {
                vendor_id: Some(globex.id.clone()),
                vendor_name: None,
                email: "tenders@globex.example".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(globex_link.vendor_name, "Globex Fleet");
    let bad = InviteInput { vendor_name: Some("X".into()), email: "not an address".into(), vendor_id: None };
    let err = ann.api.source_invite(&ann.scope, &id, bad).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(err.message.contains("email"), "{err:?}");

    // The vendors join and submit through the service; a question is answered to every vendor.
    let acme = vendor_joins(&http, &service, &acme_link.link, "bids@acme.example").await;
    let globex_session = vendor_joins(&http, &service, &globex_link.link, "tenders@globex.example").await;
    let asked =
        vendor_post(&http, &service, &acme, &format!("{id}/questions"), json!({"question": "Is 60 s acceptable?"}))
            .await;
    let questions = ann.api.source_questions(&ann.scope, &id).await.unwrap();
    assert_eq!(questions[0].asked_by.as_deref(), Some("Acme Telematics Ltd"));
    let answered = ann
        .api
        .source_answer(&ann.scope, &id, asked["id"].as_str().unwrap(), "No: at most 30 s (R-02).".into())
        .await
        .unwrap();
    assert_eq!(answered.answer.as_deref(), Some("No: at most 30 s (R-02)."));
    let offer = |answer: &str, price: &str| {
        json!({"answers": {"R-01": answer, "R-02": "Every 10 s"},
               "files": [{"name": "notes.txt", "content_base64": b64(format!("Our note {answer}").as_bytes())}],
               "prices": {"currency": "EUR", "unit_prices": {"P-01": price}}})
    };
    vendor_post(&http, &service, &acme, &format!("{id}/submission"), offer("Frankfurt MARKER-ACME", "123.45")).await;
    vendor_post(&http, &service, &globex_session, &format!("{id}/submission"), offer("Dublin", "99.90")).await;
    let tender = ann.api.source_show(&ann.scope, &id).await.unwrap();
    assert_eq!((tender.invited, tender.joined, tender.submissions), (2, 2, 2));
    let err = ann.api.source_open_technical(&ann.scope, &id).await.unwrap_err();
    assert!(err.message.contains("only after the submission deadline"), "{err:?}");

    // After the deadline by the service's clock.
    let close = chrono::DateTime::parse_from_rfc3339(&tender.submissions_close).unwrap().with_timezone(&Utc);
    clock.set(close + Duration::seconds(1));
    let tender = ann.api.source_show(&ann.scope, &id).await.unwrap();
    assert_eq!(tender.status, "Closed");
    assert!(tender.can_open_technical && !tender.can_invite);

    // Bob's desktop has no opening key: it is told which desktop has it.
    let err = bob.api.source_open_technical(&bob.scope, &id).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Forbidden);
    assert!(
        err.message.contains("signed in as ann@alpha.example") && err.message.contains("Open the envelopes there"),
        "{err:?}"
    );
    assert_eq!(carol.api.source_open_technical(&carol.scope, &id).await.unwrap_err().code, ErrorCode::NotFound);

    // Ann's desktop opens them with the key from its keychain.
    let opened = ann.api.source_open_technical(&ann.scope, &id).await.unwrap();
    assert_eq!(opened.tender.status, "Technical envelopes open");
    let vendors: Vec<&str> = opened.submissions.iter().map(|s| s.vendor.as_str()).collect();
    assert_eq!(vendors, ["Acme Telematics Ltd", "Globex Fleet"]);
    let acme_sub = &opened.submissions[0];
    assert_eq!(acme_sub.answers[0].code, "R-01");
    assert_eq!(acme_sub.answers[0].answer, "Frankfurt MARKER-ACME");
    assert!(acme_sub.answers[0].mandatory);
    assert_eq!(acme_sub.files[0].name, "notes.txt");
    assert!(!acme_sub.files[0].inspection.is_empty());
    assert_eq!(opened.criteria[0].name, "Tracking");
    assert_eq!(opened.criteria[0].weight, "100%");
    let saved = tmp.path().join("acme-notes.txt");
    ann.api
        .source_save_file(&ann.scope, &id, &acme_sub.vendor_account, "notes.txt", &saved, Existing::Refuse)
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), "Our note Frankfurt MARKER-ACME");

    // People score by hand; another organization cannot; the lock waits for every bidder.
    let score = |vendor: &str, points: u32| ScoreInput {
        vendor_account: vendor.to_owned(),
        criterion_id: "C1".into(),
        points,
        reason: "Meets R-02 as written".into(),
    };
    let (acme_id, globex_id) = (acme_sub.vendor_account.clone(), opened.submissions[1].vendor_account.clone());
    assert_eq!(
        carol.api.source_score(&carol.scope, &id, score(&acme_id, 1)).await.unwrap_err().code,
        ErrorCode::NotFound
    );
    assert_eq!(
        ann.api.source_score(&ann.scope, &id, score(&acme_id, 11)).await.unwrap_err().code,
        ErrorCode::InvalidInput
    );
    ann.api.source_score(&ann.scope, &id, score(&acme_id, 8)).await.unwrap();
    bob.api.source_score(&bob.scope, &id, score(&acme_id, 7)).await.unwrap();
    let err = ann.api.source_lock(&ann.scope, &id).await.unwrap_err();
    assert!(err.message.contains("Globex Fleet"), "{err:?}");
    ann.api.source_score(&ann.scope, &id, score(&globex_id, 6)).await.unwrap();
    assert_eq!(ann.api.source_lock(&ann.scope, &id).await.unwrap().status, "Technical evaluation locked");

    // Prices open after the lock and add up by code.
    let evaluation = ann.api.source_open_price(&ann.scope, &id).await.unwrap();
    assert_eq!(evaluation.tender.status, "Price envelopes open");
    let figures: Vec<(&str, Option<&str>, Option<&str>)> = evaluation
        .vendors
        .iter()
        .map(|v| (v.vendor.as_str(), v.technical_total.as_deref(), v.price_total.as_deref()))
        .collect();
    assert_eq!(
        figures,
        [("Acme Telematics Ltd", Some("75.00"), Some("14814.00")), ("Globex Fleet", Some("60.00"), Some("11988.00"))]
    );
    assert_eq!(evaluation.vendors[0].criteria[0].criterion, "Tracking");

    // The award is a person's, with a reason, and starts the contract workflow with the vendor's record.
    let award = AwardInput { vendor_account: acme_id.clone(), reason: " ".into(), start_contract: true };
    assert_eq!(ann.api.source_award(&ann.scope, &id, award).await.unwrap_err().code, ErrorCode::InvalidInput);
    let award = AwardInput {
        vendor_account: acme_id.clone(),
        reason: "Higher technical total within the budget".into(),
        start_contract: true,
    };
    let awarded = ann.api.source_award(&ann.scope, &id, award).await.unwrap();
    assert_eq!(awarded.tender.status, "Awarded");
    assert_eq!(awarded.price_total.as_deref(), Some("14814.00 EUR"));
    assert_eq!(awarded.vendor_record.as_deref(), Some("Acme Telematics Ltd"));
    let run = awarded.contract_run.clone().expect("the contract workflow started");
    let runs = ann.api.list_runs(&ann.scope).await.unwrap();
    assert!(runs.iter().any(|r| r.id.to_string() == run && r.graph == "contract_lifecycle"), "{runs:?}");

    // The OCDS record and the audit trail, saved and checked.
    let ocds = tmp.path().join("tender.json");
    ann.api.source_export_ocds(&ann.scope, &id, &ocds, Existing::Refuse).await.unwrap();
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&ocds).unwrap()).unwrap();
    let tags: Vec<&str> =
        record["releases"].as_array().unwrap().iter().map(|r| r["tag"][0].as_str().unwrap()).collect();
    assert_eq!(tags, ["tender", "tenderUpdate", "award"]);
    assert_eq!(record["releases"][2]["awards"][0]["value"]["amount"], 14814.0);
    let audit = tmp.path().join("audit.csv");
    let trail = ann.api.source_export_audit(&ann.scope, &id, &audit, Existing::Refuse).await.unwrap();
    assert_eq!(trail.verified, Some(true));
    assert!(trail.message.contains("intact"), "{}", trail.message);
    let csv = std::fs::read_to_string(&audit).unwrap();
    assert!(csv.lines().count() > 10 && csv.contains("Acme Telematics Ltd"), "{csv}");
    let again = ann.api.source_export_audit(&ann.scope, &id, &audit, Existing::Refuse).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::FileExists);

    // The opening key's secret half is in the keychain store only: never in any SQLite file of the desktop.
    let secrets = ann.keys.kept_secrets();
    assert_eq!(secrets.len(), 1, "one entry per tender");
    let stored = sqlite_bytes(&tmp.path().join("ann@alpha.example"));
    assert!(!stored.is_empty());
    let raw: Vec<u8> =
        (0..secrets[0].len()).step_by(2).map(|i| u8::from_str_radix(&secrets[0][i..i + 2], 16).unwrap()).collect();
    assert!(!contains(&stored, secrets[0].as_bytes()) && !contains(&stored, &raw), "the opening key is in SQLite");
    assert!(!contains(&stored, b"MARKER-ACME"), "an opened answer was written to the store");
    assert!(bob.keys.kept_secrets().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_desktop_not_signed_in_to_sync_is_told_to_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        opening_keys: Arc::new(MemoryOpeningKeys::default()),
        ..ApiOptions::default()
    };
    let api = Api::open_with(dir.path().join("data"), options).unwrap();
    let scope = api.local_session().await.unwrap();
    let err = api.source_list(&scope).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::SyncUnavailable);
    assert!(err.message.contains("sign in to sync (Settings → Sync)"), "{err:?}");
}
