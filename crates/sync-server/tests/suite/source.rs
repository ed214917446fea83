//! PactWise Source on the service, on both backends: a tender published by one member and approved by another,
//! vendors invited by single-use links, submissions inspected and sealed, nothing readable in the database before
//! the deadline, late submissions refused, technical envelopes opened after the deadline and read only with the
//! buyer's opening key, another organization seeing nothing, and a hash-chained audit trail; every hostile file of
//! the corpus refused through the service, and a restart before the deadline leaving the envelopes sealed and
//! intact.

use crate::common::*;
use base64::Engine as _;
use chrono::{Duration, NaiveDate};
use pactwise_domain::Role;
use pactwise_inspect::corpus::PdfBuilder;
use pactwise_rules::prep::{
    ArtifactKind, ArtifactState, Artifacts, Criteria, Intake, Milestones, Pricing, Requirements, Scope, content_hash,
    milestones_with_rationales,
};
use pactwise_source::envelope::{self, EnvelopeContext, EnvelopeKind, KeyPair};
use pactwise_sync_server::ServerConfig;
use serde_json::{Value, json};
use std::sync::Arc;

fn from<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a test artifact deserialises")
}

/// A package whose six artifacts are valid and approved, published on `publication`.
fn approved_artifacts(publication: NaiveDate) -> Artifacts {
    let intake: Intake = from(json!({
        "title": "Fleet telematics", "buyer": "City of Northbridge", "brief": "GPS tracking for 120 vehicles.",
        "needs": [{"id": "N1", "text": "Live vehicle positions"}], "category": "services", "currency": "EUR",
        "budget_ceiling_minor": 18000000,
        "timeline": {"publication": publication, "question_days": 2, "submission_days": 5, "evaluation_days": 10,
                     "award_days": 5, "contract_start_days": 10},
        "holidays": []
    }));
    let mut a = Artifacts::default();
    a.milestones.content =
        Some(Milestones { items: milestones_with_rationales(&intake, |_| Some("Enough time.".into())) });
    a.intake.content = Some(intake);
    a.scope.content = Some(from::<Scope>(json!({
        "summary": "Telematics for 120 vehicles.", "in_scope": ["Devices"], "out_of_scope": ["Repairs"],
        "deliverables": ["Installed devices"], "need_ids": ["N1"]
    })));
    a.requirements.content = Some(from::<Requirements>(json!({"items": [
        {"code": "R-01", "text": "EU hosting", "kind": "mandatory", "need_ids": [], "measure": null},
        {"code": "R-02", "text": "Position updates", "kind": "scored", "need_ids": ["N1"],
         "measure": {"metric": "update interval", "threshold": "<= 30 s", "verification": "test"}}
    ]})));
    a.criteria.content = Some(from::<Criteria>(json!({"criteria": [
        {"id": "C1", "name": "Tracking", "description": "Tracking quality", "weight_bp": 10000, "requirement_codes": ["R-02"]}
    ]})));
    a.pricing.content = Some(from::<Pricing>(json!({"currency": "EUR", "lines": [
        {"code": "P-01", "description": "Device", "unit": "vehicle", "quantity": 120, "basis": "per_unit", "open_amount": false}
    ]})));
    for kind in ArtifactKind::ALL {
        let hash = content_hash(&a.content_json(kind).expect("content"));
        let (state, stamp) = (ArtifactState::Approved { hash: hash.clone() }, Some(hash));
        match kind {
            ArtifactKind::Intake => (a.intake.state, a.intake.content_hash) = (state, stamp),
            ArtifactKind::Scope => (a.scope.state, a.scope.content_hash) = (state, stamp),
            ArtifactKind::Requirements => (a.requirements.state, a.requirements.content_hash) = (state, stamp),
            ArtifactKind::Criteria => (a.criteria.state, a.criteria.content_hash) = (state, stamp),
            ArtifactKind::Pricing => (a.pricing.state, a.pricing.content_hash) = (state, stamp),
            ArtifactKind::Milestones => (a.milestones.state, a.milestones.content_hash) = (state, stamp),
        }
    }
    a
}

fn tender_release() -> Value {
    json!({
        "ocid": "ocds-pwdesk-pkg-1", "id": "pkg-1-tender-v1", "date": "2026-03-01T08:00:00Z", "tag": ["tender"],
        "initiationType": "tender", "language": "en",
        "parties": [{"id": "buyer", "name": "City of Northbridge", "roles": ["buyer", "procuringEntity"]}],
        "buyer": {"id": "buyer", "name": "City of Northbridge"},
        "tender": {"id": "pkg-1-tender", "title": "Fleet telematics", "status": "planned", "procurementMethod": "open",
                   "submissionMethod": ["electronicSubmission"],
                   "enquiryPeriod": {"startDate": "2026-03-02T00:00:00Z"}, "tenderPeriod": {"startDate": "2026-03-02T00:00:00Z"}}
    })
}

struct LocalSchemas(Value);

impl jsonschema::Retrieve for LocalSchemas {
    fn retrieve(&self, uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        if uri.as_str().ends_with("/release-schema.json") {
            Ok(self.0.clone())
        } else {
            Err(format!("{uri} is not in the shared OCDS folder").into())
        }
    }
}

pub(crate) struct Call<'a> {
    pub(crate) http: reqwest::Client,
    pub(crate) server: &'a TestServer,
}

impl Call<'_> {
    pub(crate) async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        let response =
            self.http.post(self.server.url(path)).bearer_auth(token).json(&body).send().await.expect("the request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let response = self.http.get(self.server.url(path)).bearer_auth(token).send().await.expect("the request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

pub(crate) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Every byte the Source tables hold: for SQLite the database file and its WAL; for PostgreSQL each table's rows as
/// text and the sealed envelopes' raw bytes.
pub(crate) fn stored_bytes(backend: Backend, location: &str) -> Vec<u8> {
    match backend {
        Backend::Sqlite => {
            let mut bytes = std::fs::read(location).unwrap();
            bytes.extend(std::fs::read(format!("{location}-wal")).unwrap_or_default());
            bytes
        }
        Backend::Postgres => blocking(|| {
            let mut client = ::postgres::Client::connect(location, ::postgres::NoTls).unwrap();
            let mut bytes = Vec::new();
            for table in [
                "source_tenders",
                "source_audit",
                "source_invitations",
                "source_participants",
                "source_questions",
                "source_scores",
                "source_releases",
                "source_envelopes",
                "source_uploads",
                "source_upload_chunks",
            ] {
                for row in client.query(&format!("SELECT t::text FROM {table} t"), &[]).unwrap() {
                    bytes.extend(row.get::<_, String>(0).into_bytes());
                }
            }
            for table in ["source_envelopes", "source_upload_chunks"] {
                for row in client.query(&format!("SELECT sealed FROM {table}"), &[]).unwrap() {
                    bytes.extend(row.get::<_, Vec<u8>>(0));
                }
            }
            bytes
        }),
    }
}

/// The sealed envelopes as stored, in a fixed order.
fn sealed_rows(backend: Backend, location: &str) -> Vec<Vec<u8>> {
    let sql = "SELECT sealed FROM source_envelopes ORDER BY tender_id, account_id, submission, kind, part";
    match backend {
        Backend::Sqlite => {
            let connection = rusqlite::Connection::open(location).unwrap();
            let mut statement = connection.prepare(sql).unwrap();
            statement.query_map([], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
        }
        Backend::Postgres => blocking(|| {
            let mut client = ::postgres::Client::connect(location, ::postgres::NoTls).unwrap();
            client.query(sql, &[]).unwrap().iter().map(|r| r.get::<_, Vec<u8>>(0)).collect()
        }),
    }
}

pub(crate) fn reopen(backend: Backend, location: &str) -> Arc<dyn pactwise_sync_server::SyncStorage> {
    blocking(|| match backend {
        Backend::Sqlite => {
            Arc::new(pactwise_sync_server::sqlite::SqliteStorage::open(std::path::Path::new(location)).unwrap())
                as Arc<dyn pactwise_sync_server::SyncStorage>
        }
        Backend::Postgres => Arc::new(pactwise_sync_server::postgres::PgStorage::connect(location, 8).unwrap()),
    })
}

crate::both_backends!(
    a_sealed_tender_from_publication_to_opening,
    every_hostile_file_is_refused_by_the_service_and_a_restart_keeps_envelopes_sealed_and_intact,
);

const MARKERS: [&str; 3] = ["ZEBRA-ANSWER-7781", "SECRET-NOTE-4411", "ZEBRA-ANSWER-SECOND"];

async fn a_sealed_tender_from_publication_to_opening(backend: Backend) {
    let (fresh, db_path) = fresh_at(backend);
    let clock = fixed_clock();
    let alpha = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer, Role::Buyer]);
    let charlie = org(fresh.storage.as_ref(), clock.as_ref(), "charlie", &[Role::Buyer]);
    let config = ServerConfig { source_wrapping_key: Some(Arc::new(KeyPair::generate())), ..generous() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let call = Call { http: reqwest::Client::new(), server: &server };
    let (ann, bob, other) = (&alpha.tokens[0], &alpha.tokens[1], &charlie.tokens[0]);
    let opening = KeyPair::generate(); // the buyer's desktop keeps the secret half
    let artifacts = approved_artifacts(start_time().date_naive() + Duration::days(1));

    // Ann asks to publish; the gate and the deadlines are the service's; she cannot approve it herself.
    let request = json!({
        "title": "Fleet telematics", "artifacts": artifacts, "opening_key": opening.public(), "tender_release": tender_release()
    });
    let (status, tender) = call.post("/api/v1/source/tenders", ann, request.clone()).await;
    assert_eq!(status, 201, "{tender}");
    assert_eq!(tender["status"], "awaiting_approval");
    let id = tender["id"].as_str().unwrap().to_owned();
    let (status, body) = call.post(&format!("/api/v1/source/tenders/{id}/approve"), ann, json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("second member"));
    let mut unapproved = request.clone();
    unapproved["artifacts"]["pricing"]["state"] = json!({"status": "valid"});
    let (status, body) = call.post("/api/v1/source/tenders", ann, unapproved).await;
    assert_eq!(status, 400, "{body}");
    let (status, tender) = call.post(&format!("/api/v1/source/tenders/{id}/approve"), bob, json!({})).await;
    assert_eq!(status, 200, "{tender}");
    assert_eq!(tender["status"], "published");
    let submissions_close: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(tender["deadlines"]["submissions_close"].clone()).unwrap();
    assert_eq!(submissions_close.format("%H:%M").to_string(), "17:00", "the closing time the RFP states");

    // Another organization's buyer sees nothing of it: not in its list, not by id.
    for path in [
        format!("/api/v1/source/tenders/{id}"),
        format!("/api/v1/source/tenders/{id}/audit"),
        format!("/api/v1/source/tenders/{id}/package"),
    ] {
        assert_eq!(call.get(&path, other).await.0, 404);
    }
    assert_eq!(call.get("/api/v1/source/tenders", other).await.1, json!([]));
    let (status, listed) = call.get("/api/v1/source/tenders", ann).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!((listed[0]["id"].as_str(), listed[0]["requested_by_you"].as_bool()), (Some(id.as_str()), Some(true)));
    assert_eq!(call.get("/api/v1/source/tenders", bob).await.1[0]["requested_by_you"], false);
    let (_, package) = call.get(&format!("/api/v1/source/tenders/{id}/package"), bob).await;
    assert_eq!(package["criteria"]["content"]["criteria"][0]["id"], "C1");
    let (status, _) = call
        .post(
            &format!("/api/v1/source/tenders/{id}/invitations"),
            other,
            json!({"vendor_name": "Mallory", "email": "m@example.org"}),
        )
        .await;
    assert_eq!(status, 404);

    // Invitations: single-use links.
    let (status, invitation) = call
        .post(
            &format!("/api/v1/source/tenders/{id}/invitations"),
            ann,
            json!({"vendor_name": "Acme Telematics Ltd", "email": "bids@acme.example"}),
        )
        .await;
    assert_eq!(status, 201, "{invitation}");
    let token = invitation["token"].as_str().unwrap().to_owned();
    // Bad input to the invitation link: a clear refusal, and the link still works afterwards.
    for (body, status, words) in [
        (json!({"token": token, "email": "bids@acme.example", "password": "short"}), 400, "at least 10 characters"),
        (json!({"token": token, "email": "not an address", "password": "acme-password-1"}), 400, "email address"),
        (json!({"token": "pwi_0000", "email": "bids@acme.example", "password": "acme-password-1"}), 403, "not valid"),
    ] {
        let (got, answer) = call.post("/api/v1/source/vendor/accept", "", body).await;
        assert_eq!(got, status, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(words), "{answer}");
    }
    let accept = json!({"token": token, "email": "bids@acme.example", "password": "acme-password-1"});
    let (status, session) = call.post("/api/v1/source/vendor/accept", "", accept.clone()).await;
    assert_eq!(status, 200, "{session}");
    let acme = session["token"].as_str().unwrap().to_owned();
    assert_eq!(call.post("/api/v1/source/vendor/accept", "", accept).await.0, 403, "a link works once");
    let (_, mine) = call.get("/api/v1/source/vendor/tenders", &acme).await;
    assert_eq!(mine.as_array().unwrap().len(), 1);
    assert_eq!(mine[0]["joined_as"], "Acme Telematics Ltd");
    let (status, detail) = call.get(&format!("/api/v1/source/vendor/tenders/{id}"), &acme).await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["requirements"][0]["code"], "R-01");
    assert_eq!(detail["requirements"][0]["mandatory"], true);
    assert_eq!(detail["price_lines"][0]["unit"], "vehicle");
    assert_eq!(detail["currency"], "EUR");
    let (_, invitation) = call
        .post(
            &format!("/api/v1/source/tenders/{id}/invitations"),
            ann,
            json!({"vendor_name": "Globex Fleet", "email": "tenders@globex.example"}),
        )
        .await;
    let accept =
        json!({"token": invitation["token"], "email": "tenders@globex.example", "password": "globex-password-1"});
    let (_, session) = call.post("/api/v1/source/vendor/accept", "", accept).await;
    let globex = session["token"].as_str().unwrap().to_owned();
    assert_eq!(call.get(&format!("/api/v1/source/tenders/{id}"), ann).await.1["invited"], 2, "links made, counted");
    // A vendor of another tender, or with no session, sees nothing of this one.
    assert_eq!(call.get(&format!("/api/v1/source/vendor/tenders/{id}"), "pwv_nope").await.0, 401);

    // A question: answered to every vendor, the asker's name only for the buyer.
    let questions = format!("/api/v1/source/vendor/tenders/{id}/questions");
    let (status, asked) =
        call.post(&questions, &acme, json!({"question": "Is a 60 s update interval acceptable?"})).await;
    assert_eq!(status, 201, "{asked}");
    let (_, seen) = call.get(&questions, &globex).await;
    assert_eq!(seen.as_array().unwrap().len(), 0, "unanswered questions are the asker's only");
    let (_, listed) = call.get(&format!("/api/v1/source/tenders/{id}/questions"), ann).await;
    assert_eq!(listed[0]["asked_by"], "Acme Telematics Ltd");
    let answer_path = format!("/api/v1/source/tenders/{id}/questions/{}/answer", asked["id"].as_str().unwrap());
    let (status, _) = call.post(&answer_path, ann, json!({"answer": "No: at most 30 s (R-02)."})).await;
    assert_eq!(status, 200);
    let (_, seen) = call.get(&questions, &globex).await;
    assert_eq!(seen[0]["answer"], "No: at most 30 s (R-02).");
    assert_eq!((seen[0]["mine"].as_bool(), seen[0]["asked_by"].is_null()), (Some(false), true));
    assert_eq!(call.get(&questions, &acme).await.1[0]["mine"], true);

    // An extension, later and with a reason; every vendor sees it.
    let first_close = submissions_close;
    let submissions_close = first_close + Duration::days(2);
    let extension = json!({
        "questions_close": tender["deadlines"]["questions_close"], "submissions_close": submissions_close,
        "reason": "Site visit moved"
    });
    let (status, body) = call.post(&format!("/api/v1/source/tenders/{id}/extension"), ann, extension).await;
    assert_eq!(status, 200, "{body}");
    let (_, mine) = call.get("/api/v1/source/vendor/tenders", &globex).await;
    assert_eq!(
        serde_json::from_value::<chrono::DateTime<chrono::Utc>>(mine[0]["deadlines"]["submissions_close"].clone())
            .unwrap(),
        submissions_close
    );

    // A hostile file refuses the whole submission, with the reason, and stores nothing.
    let hostile = PdfBuilder::new(1).catalog_entry("/OpenAction << /S /JavaScript /JS (app.alert(1)) >>").build();
    let submission = |answer: &str, files: Value| json!({"answers": {"R-01": answer}, "files": files, "prices": {"currency": "EUR", "unit_prices": {"P-01": "123.45"}}});
    let path = format!("/api/v1/source/vendor/tenders/{id}/submission");
    let (status, body) = call
        .post(&path, &acme, submission(MARKERS[0], json!([{"name": "offer.pdf", "content_base64": b64(&hostile)}])))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["problems"][0]["code"], "pdf_javascript");
    assert_eq!(call.get(&format!("/api/v1/source/tenders/{id}"), ann).await.1["submissions"], 0);
    let (status, body) = call
        .post(
            &path,
            &acme,
            json!({"answers": {}, "files": [], "prices": {"currency": "USD", "unit_prices": {"P-01": "12,5"}}}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["problems"].as_array().unwrap().len(), 2, "{body}");

    // A submission, then a replacement: the last counts, both are kept, the count is visible, the content is not.
    let files = json!([
        {"name": "offer.pdf", "content_base64": b64(&PdfBuilder::new(2).build())},
        {"name": "notes.txt", "content_base64": b64(format!("Our note: {}", MARKERS[1]).as_bytes())}
    ]);
    let (status, first) = call.post(&path, &acme, submission(MARKERS[0], files.clone())).await;
    assert_eq!(status, 201, "{first}");
    clock.advance(Duration::hours(1));
    let (status, second) = call.post(&path, &acme, submission(MARKERS[2], files)).await;
    assert_eq!((status, second["submission"].as_u64()), (201, Some(2)), "{second}");
    assert_eq!(second["files"][0][1], "2 pages");
    let globex_files = json!([{"name": "offer.pdf", "content_base64": b64(&PdfBuilder::new(1).build())}]);
    let globex_offer = json!({"answers": {"R-01": "Hosted in Frankfurt"}, "files": globex_files,
                               "prices": {"currency": "EUR", "unit_prices": {"P-01": "99.90"}}});
    assert_eq!(call.post(&path, &globex, globex_offer).await.0, 201);
    let (_, status_now) = call.get(&format!("/api/v1/source/tenders/{id}"), ann).await;
    assert_eq!(status_now["submissions"], 2);
    let (status, body) =
        call.post(&format!("/api/v1/source/tenders/{id}/open"), ann, json!({"kind": "technical"})).await;
    assert_eq!(status, 400, "{body}");

    // Before the deadline the database holds no plaintext of any envelope (the file, its WAL, every row).
    let stored = stored_bytes(backend, &db_path);
    for marker in MARKERS.iter().chain(["123.45", "Our note"].iter()) {
        assert!(!stored.windows(marker.len()).any(|w| w == marker.as_bytes()), "{marker} readable in the database");
    }
    let sealed = sealed_rows(backend, &db_path).len();
    assert_eq!(sealed, 11, "Acme: answers, two files and prices, twice; Globex: answers, a file, prices");

    // One second after the deadline: late is late; the technical envelopes open, for the buyer's key only.
    let late = submissions_close - start_time() - Duration::hours(1) + Duration::seconds(1);
    clock.advance(late);
    let (status, body) = call.post(&path, &acme, submission("late", json!([]))).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("late submission"));
    let (status, opened) =
        call.post(&format!("/api/v1/source/tenders/{id}/open"), ann, json!({"kind": "technical"})).await;
    assert_eq!(status, 200, "{opened}");
    let parts: Vec<&Value> =
        opened["parts"].as_array().unwrap().iter().filter(|p| p["vendor"] == "Acme Telematics Ltd").collect();
    assert_eq!(parts.len(), 3, "Acme's last submission: answers and two files: {opened}");
    assert_eq!(opened["parts"].as_array().unwrap().len(), 5);
    let published_hash = status_now["published_hash"].as_str().unwrap();
    let vendor_id = parts[0]["vendor_account"].as_str().unwrap();
    for part in parts {
        assert_eq!(part["submission"], 2);
        let name = part["part"].as_str().unwrap();
        let sealed =
            base64::engine::general_purpose::STANDARD.decode(part["sealed_for_opening_key"].as_str().unwrap()).unwrap();
        let context = EnvelopeContext {
            tender_id: &id,
            vendor_id,
            kind: EnvelopeKind::Technical,
            submission: 2,
            published_hash,
            part: name,
        };
        let plain = envelope::open(&sealed, &context, &opening).expect("the buyer's key opens it");
        if name == "answers.json" {
            assert!(String::from_utf8_lossy(&plain).contains(MARKERS[2]));
        }
        if name == "notes.txt" {
            assert!(String::from_utf8_lossy(&plain).contains(MARKERS[1]));
        }
        // The service's own layer is gone, but without the buyer's key the part stays closed.
        assert!(envelope::open(&sealed, &context, &KeyPair::generate()).is_err());
    }
    let (status, body) = call.post(&format!("/api/v1/source/tenders/{id}/open"), ann, json!({"kind": "price"})).await;
    assert_eq!(status, 400, "price opens only after the technical evaluation is locked: {body}");

    // People score by hand with reasons; the lock waits for every criterion of every bidder.
    let globex_id =
        opened["parts"].as_array().unwrap().iter().find(|p| p["vendor"] == "Globex Fleet").unwrap()["vendor_account"]
            .clone();
    let scores = format!("/api/v1/source/tenders/{id}/scores");
    let score = |vendor: Value, points: u32| json!({"vendor_account": vendor, "criterion_id": "C1", "points": points, "reason": "Meets R-02 as written"});
    assert_eq!(call.post(&scores, ann, score(json!(vendor_id), 8)).await.0, 204);
    assert_eq!(call.post(&scores, bob, score(json!(vendor_id), 7)).await.0, 204);
    let (status, body) = call
        .post(&scores, ann, json!({"vendor_account": globex_id, "criterion_id": "C1", "points": 11, "reason": "x"}))
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = call.post(&format!("/api/v1/source/tenders/{id}/lock"), ann, json!({})).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("Globex Fleet"), "{body}");
    assert_eq!(call.post(&scores, ann, score(globex_id.clone(), 6)).await.0, 204);
    assert_eq!(call.post(&format!("/api/v1/source/tenders/{id}/lock"), ann, json!({})).await.0, 200);
    let (_, totals) = call.get(&format!("/api/v1/source/tenders/{id}/evaluation"), ann).await;
    assert_eq!(totals[0]["vendor"], "Acme Telematics Ltd");
    assert_eq!(totals[0]["technical_total"], "75.00", "(8 + 7) / 2 / 10 × 100");
    assert_eq!(totals[1]["technical_total"], "60.00");

    // Prices open now; the buyer's desktop reads them and adds up with the same rule.
    let (status, opened) = call.post(&format!("/api/v1/source/tenders/{id}/open"), ann, json!({"kind": "price"})).await;
    assert_eq!(status, 200, "{opened}");
    let pricing: pactwise_rules::prep::Pricing =
        serde_json::from_value(request["artifacts"]["pricing"]["content"].clone()).unwrap();
    let mut totals = std::collections::BTreeMap::new();
    for part in opened["parts"].as_array().unwrap() {
        let sealed =
            base64::engine::general_purpose::STANDARD.decode(part["sealed_for_opening_key"].as_str().unwrap()).unwrap();
        let vendor = part["vendor_account"].as_str().unwrap();
        let submission = part["submission"].as_u64().unwrap() as u32;
        let context = EnvelopeContext {
            tender_id: &id,
            vendor_id: vendor,
            kind: EnvelopeKind::Price,
            submission,
            published_hash,
            part: "prices.json",
        };
        let offer: pactwise_source::evaluation::PriceOffer =
            serde_json::from_slice(&envelope::open(&sealed, &context, &opening).unwrap()).unwrap();
        let total = pactwise_source::evaluation::price_total(&pricing, &offer).unwrap();
        totals.insert(part["vendor"].as_str().unwrap().to_owned(), total.total.to_string());
    }
    assert_eq!(totals["Acme Telematics Ltd"], "14814.00");
    assert_eq!(totals["Globex Fleet"], "11988.00");

    // The award is a person's, with a reason; the public record validates as OCDS.
    let (status, body) = call
        .post(&format!("/api/v1/source/tenders/{id}/award"), ann, json!({"vendor_account": vendor_id, "reason": "Higher technical total within the budget", "price_total": ["14814.00", "EUR"]}))
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, record) = call.get(&format!("/api/v1/source/tenders/{id}/ocds"), ann).await;
    assert_eq!(status, 200, "{record}");
    let tags: Vec<&str> =
        record["releases"].as_array().unwrap().iter().map(|r| r["tag"][0].as_str().unwrap()).collect();
    assert_eq!(tags, ["tender", "tenderAmendment", "tenderUpdate", "award"]);
    assert_eq!(record["releases"][2]["tender"]["numberOfTenderers"], 2);
    assert_eq!(record["releases"][3]["awards"][0]["value"]["amount"], 14814.0);
    if let Some(folder) = pactwise_testkit::shared_data("ocds/schema") {
        let read = |name: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(folder.join(name)).unwrap()).unwrap()
        };
        let validator = jsonschema::options()
            .with_retriever(LocalSchemas(read("release-schema.json")))
            .build(&read("release-package-schema.json"))
            .unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&record).map(|e| format!("{}: {e}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }

    // The trail: every event in order, chained and verified.
    let (_, trail) = call.get(&format!("/api/v1/source/tenders/{id}/audit"), ann).await;
    assert_eq!(trail["verified"], true, "{trail}");
    let actions: Vec<&str> =
        trail["entries"].as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(
        actions,
        [
            "published",
            "invited",
            "joined",
            "invited",
            "joined",
            "question",
            "answer",
            "extension",
            "submission",
            "replacement",
            "submission",
            "opening",
            "score",
            "score",
            "score",
            "score",
            "opening",
            "award"
        ]
    );
    assert!(!trail.to_string().contains(MARKERS[0]), "the trail never holds content");
    // People are named as they are known, never by an id.
    assert_eq!(trail["entries"][0]["actor"], "user1@alpha.example");
    assert_eq!(trail["entries"][0]["details"], "asked for by user0@alpha.example, approved by user1@alpha.example");
    assert!(
        trail["entries"][12]["details"]
            .as_str()
            .unwrap()
            .contains("scored Acme Telematics Ltd on Tracking: 8 out of 10"),
        "{trail}"
    );
}

/// Publishes a tender (Ann asks, Bob approves) and lets one vendor join; returns the tender id and the vendor's
/// session token.
pub(crate) async fn published_with_vendor(
    call: &Call<'_>,
    ann: &str,
    bob: &str,
    opening: &KeyPair,
) -> (String, String) {
    let artifacts = approved_artifacts(start_time().date_naive() + Duration::days(1));
    let request = json!({"title": "Fleet telematics", "artifacts": artifacts, "opening_key": opening.public()});
    let (_, tender) = call.post("/api/v1/source/tenders", ann, request).await;
    let id = tender["id"].as_str().unwrap().to_owned();
    assert_eq!(call.post(&format!("/api/v1/source/tenders/{id}/approve"), bob, json!({})).await.0, 200);
    let (_, invitation) = call
        .post(
            &format!("/api/v1/source/tenders/{id}/invitations"),
            ann,
            json!({"vendor_name": "Acme", "email": "a@acme.example"}),
        )
        .await;
    let accept = json!({"token": invitation["token"], "email": "a@acme.example", "password": "acme-password-1"});
    let (_, session) = call.post("/api/v1/source/vendor/accept", "", accept).await;
    (id, session["token"].as_str().unwrap().to_owned())
}

async fn every_hostile_file_is_refused_by_the_service_and_a_restart_keeps_envelopes_sealed_and_intact(
    backend: Backend,
) {
    let (fresh, db_path) = fresh_at(backend);
    let clock = fixed_clock();
    let alpha = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer, Role::Buyer]);
    let wrapping = Arc::new(KeyPair::generate());
    let config = ServerConfig { source_wrapping_key: Some(wrapping.clone()), ..generous() };
    let mut server = TestServer::start(fresh.storage.clone(), clock.clone(), config.clone()).await;
    let opening = KeyPair::generate();
    let (ann, bob) = (&alpha.tokens[0], &alpha.tokens[1]);
    let (id, acme) = {
        let call = Call { http: reqwest::Client::new(), server: &server };
        published_with_vendor(&call, ann, bob, &opening).await
    };
    let path = format!("/api/v1/source/vendor/tenders/{id}/submission");
    let prices = json!({"currency": "EUR", "unit_prices": {"P-01": "10.00"}});

    // The whole hostile corpus, each file in a submission of its own: every one refused with a reason, none stored,
    // the service answering throughout.
    {
        let call = Call { http: reqwest::Client::new(), server: &server };
        let samples = pactwise_inspect::corpus::hostile();
        assert!(samples.len() >= 1_000);
        for sample in &samples {
            let body = json!({"answers": {}, "files": [{"name": sample.name, "content_base64": b64(&sample.bytes)}], "prices": prices});
            let (status, answer) = call.post(&path, &acme, body).await;
            assert_eq!(status, 422, "{} ({}) was not refused: {answer}", sample.name, sample.group);
            assert!(!answer["problems"][0]["message"].as_str().unwrap_or("").is_empty());
        }
        let (_, status) = call.get(&format!("/api/v1/source/tenders/{id}"), ann).await;
        assert_eq!(status["submissions"], 0);
        assert!(sealed_rows(backend, &db_path).is_empty(), "a refused submission stores nothing");

        // One good submission.
        let files = json!([{"name": "offer.pdf", "content_base64": b64(&PdfBuilder::new(1).build())}]);
        let (status, body) = call
            .post(&path, &acme, json!({"answers": {"R-01": "ZEBRA-RESTART"}, "files": files, "prices": prices}))
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let before = sealed_rows(backend, &db_path);

    // The service stops before the deadline and starts again on the same database and key file.
    server.stop();
    drop(server);
    let server = TestServer::start(reopen(backend, &db_path), clock.clone(), config).await;
    let call = Call { http: reqwest::Client::new(), server: &server };
    assert_eq!(sealed_rows(backend, &db_path), before, "the envelopes are byte for byte what was stored");
    let (status, body) =
        call.post(&format!("/api/v1/source/tenders/{id}/open"), ann, json!({"kind": "technical"})).await;
    assert_eq!(status, 400, "still sealed before the deadline: {body}");

    // After the deadline they open, and the buyer's key reads them.
    let (_, tender) = call.get(&format!("/api/v1/source/tenders/{id}"), ann).await;
    let close: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(tender["deadlines"]["submissions_close"].clone()).unwrap();
    clock.advance(close - start_time());
    let (status, opened) =
        call.post(&format!("/api/v1/source/tenders/{id}/open"), ann, json!({"kind": "technical"})).await;
    assert_eq!(status, 200, "{opened}");
    let answers = opened["parts"].as_array().unwrap().iter().find(|p| p["part"] == "answers.json").unwrap();
    let sealed =
        base64::engine::general_purpose::STANDARD.decode(answers["sealed_for_opening_key"].as_str().unwrap()).unwrap();
    let context = EnvelopeContext {
        tender_id: &id,
        vendor_id: answers["vendor_account"].as_str().unwrap(),
        kind: EnvelopeKind::Technical,
        submission: 1,
        published_hash: tender["published_hash"].as_str().unwrap(),
        part: "answers.json",
    };
    assert!(String::from_utf8(envelope::open(&sealed, &context, &opening).unwrap()).unwrap().contains("ZEBRA-RESTART"));
    drop(fresh);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vendor_sign_in_attempts_are_rate_limited_like_members() {
    let fresh = fresh(Backend::Sqlite);
    let clock = fixed_clock();
    let config = ServerConfig { source_wrapping_key: Some(Arc::new(KeyPair::generate())), ..ServerConfig::default() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let call = Call { http: reqwest::Client::new(), server: &server };
    let mut statuses = Vec::new();
    for _ in 0..15 {
        let body = json!({"email": "someone@vendor.example", "password": "guessing-password"});
        statuses.push(call.post("/api/v1/source/vendor/sign-in", "", body).await.0);
    }
    assert_eq!(statuses[0], 401);
    assert!(statuses.contains(&429), "{statuses:?}");
    let (status, _) = call
        .post(
            "/api/v1/source/vendor/accept",
            "",
            json!({"token": "pwi_guess", "email": "a@b.example", "password": "x"}),
        )
        .await;
    assert_eq!(status, 429, "accepting an invitation shares the limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vendor_page_is_served_with_a_strict_content_security_policy() {
    let fresh = fresh(Backend::Sqlite);
    let server = TestServer::start(fresh.storage.clone(), fixed_clock(), generous()).await;
    let http = reqwest::Client::new();
    for (path, kind) in [
        ("/source/", "text/html"),
        ("/source/invitation", "text/html"),
        ("/source/app.js", "text/javascript"),
        ("/source/app.css", "text/css"),
    ] {
        let response = http.get(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let headers = response.headers();
        assert!(headers["content-type"].to_str().unwrap().starts_with(kind), "{path}");
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"), "{policy}");
        assert!(!policy.contains("unsafe-inline") && !policy.contains("http"), "{policy}");
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["referrer-policy"], "no-referrer");
        let body = response.text().await.unwrap();
        if kind == "text/html" {
            assert!(!body.contains("<script>") && !body.contains("style="), "no inline script or style");
            assert!(!body.contains("://"), "no third-party requests");
        }
    }
}
