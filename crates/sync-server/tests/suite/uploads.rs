//! Resumable uploads on both backends: a file sent in chunks whose connection is cut mid-chunk resumes from the
//! service's offset and is sealed whole (its hash, opened after the deadline, is the original's); nothing of a
//! half-uploaded file is readable in the database; a chunk at the wrong offset, a hash mismatch, a hostile file,
//! a file too large, too many open uploads and a late upload are refused in words; another vendor cannot touch an
//! upload; abandoned uploads expire on the service's clock; an upload in progress survives a restart of the service
//! (its chunks are stored, sealed); the tables arrive on a database made before them.

use crate::common::*;
use crate::source::{Call, published_with_vendor, reopen, stored_bytes};
use chrono::Duration;
use pactwise_domain::Role;
use pactwise_inspect::corpus::PdfBuilder;
use pactwise_source::envelope::{self, EnvelopeContext, EnvelopeKind, KeyPair};
use pactwise_sync_server::ServerConfig;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

crate::both_backends!(
    an_upload_cut_mid_chunk_resumes_from_the_service_offset_and_is_sealed_whole,
    upload_refusals_are_said_in_words_and_abandoned_uploads_expire,
    upload_tables_arrive_on_a_database_made_before_them,
    an_upload_in_progress_survives_a_restart_of_the_service,
);

const MARKER: &str = "HALFWAY-MARKER-5521";
const CHUNK: usize = 256 * 1024;

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A text file of about 700 KB (three chunks), every line carrying the marker.
fn notes_file() -> Vec<u8> {
    let mut text = String::new();
    let mut line = 0;
    while text.len() < 700_000 {
        text.push_str(&format!("{MARKER} line {line}: our approach to the tracking requirement.\n"));
        line += 1;
    }
    text.into_bytes()
}

async fn put_chunk(call: &Call<'_>, token: &str, upload: &str, offset: usize, bytes: &[u8]) -> (u16, Value) {
    let response = call
        .http
        .put(call.server.url(&format!("/api/v1/source/vendor/uploads/{upload}?offset={offset}")))
        .bearer_auth(token)
        .header("content-type", "application/octet-stream")
        .body(bytes.to_vec())
        .send()
        .await
        .expect("the request");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A chunk whose connection dies after `sent` of its bytes: a raw client that announces the whole chunk, writes
/// part of it and closes.
async fn cut_chunk(call: &Call<'_>, token: &str, upload: &str, offset: usize, bytes: &[u8], sent: usize) {
    let mut stream = tokio::net::TcpStream::connect(call.server.addr).await.unwrap();
    let head = format!(
        "PUT /api/v1/source/vendor/uploads/{upload}?offset={offset} HTTP/1.1\r\nhost: {}\r\nauthorization: Bearer \
         {token}\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\n\r\n",
        call.server.addr,
        bytes.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&bytes[..sent]).await.unwrap();
    stream.flush().await.unwrap();
    stream.shutdown().await.unwrap();
    drop(stream);
}

async fn start_upload(call: &Call<'_>, token: &str, tender: &str, name: &str, bytes: &[u8]) -> (u16, Value) {
    call.post(
        &format!("/api/v1/source/vendor/tenders/{tender}/uploads"),
        token,
        json!({"name": name, "size": bytes.len(), "sha256": sha256_hex(bytes)}),
    )
    .await
}

/// Sends `bytes` from `from` in chunks and finishes the upload.
async fn send_rest(call: &Call<'_>, token: &str, upload: &str, bytes: &[u8], from: usize) -> (u16, Value) {
    let mut offset = from;
    while offset < bytes.len() {
        let end = (offset + CHUNK).min(bytes.len());
        let (status, body) = put_chunk(call, token, upload, offset, &bytes[offset..end]).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["received"].as_u64(), Some(end as u64));
        offset = end;
    }
    call.post(&format!("/api/v1/source/vendor/uploads/{upload}/finish"), token, json!({})).await
}

fn chunk_rows(backend: Backend, location: &str) -> i64 {
    let sql = "SELECT COUNT(*) FROM source_upload_chunks";
    match backend {
        Backend::Sqlite => rusqlite::Connection::open(location).unwrap().query_row(sql, [], |r| r.get(0)).unwrap(),
        Backend::Postgres => blocking(|| {
            let mut client = ::postgres::Client::connect(location, ::postgres::NoTls).unwrap();
            client.query_one(sql, &[]).unwrap().get(0)
        }),
    }
}

async fn invite_second_vendor(call: &Call<'_>, ann: &str, tender: &str) -> String {
    let (_, invitation) = call
        .post(
            &format!("/api/v1/source/tenders/{tender}/invitations"),
            ann,
            json!({"vendor_name": "Globex", "email": "g@globex.example"}),
        )
        .await;
    let accept = json!({"token": invitation["token"], "email": "g@globex.example", "password": "globex-password-1"});
    let (status, session) = call.post("/api/v1/source/vendor/accept", "", accept).await;
    assert_eq!(status, 200, "{session}");
    session["token"].as_str().unwrap().to_owned()
}

async fn an_upload_cut_mid_chunk_resumes_from_the_service_offset_and_is_sealed_whole(backend: Backend) {
    let (fresh, db_path) = fresh_at(backend);
    let clock = fixed_clock();
    let alpha = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer, Role::Buyer]);
    let config = ServerConfig { source_wrapping_key: Some(Arc::new(KeyPair::generate())), ..generous() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let call = Call { http: reqwest::Client::new(), server: &server };
    let opening = KeyPair::generate();
    let (ann, bob) = (&alpha.tokens[0], &alpha.tokens[1]);
    let (id, acme) = published_with_vendor(&call, ann, bob, &opening).await;
    let globex = invite_second_vendor(&call, ann, &id).await;
    let file = notes_file();

    let (status, started) = start_upload(&call, &acme, &id, "approach.txt", &file).await;
    assert_eq!(status, 201, "{started}");
    let upload = started["id"].as_str().unwrap().to_owned();
    assert_eq!(started["received"], 0);

    // The first chunk arrives; the second is cut off mid-body: the service keeps only whole chunks.
    assert_eq!(put_chunk(&call, &acme, &upload, 0, &file[..CHUNK]).await.0, 200);
    cut_chunk(&call, &acme, &upload, CHUNK, &file[CHUNK..2 * CHUNK], CHUNK / 3).await;
    let (status, progress) = call.get(&format!("/api/v1/source/vendor/uploads/{upload}"), &acme).await;
    assert_eq!(status, 200, "{progress}");
    assert_eq!(progress["received"].as_u64(), Some(CHUNK as u64), "resume from the last whole chunk");

    // Half-uploaded: the database holds no plaintext of it (chunks are sealed to the service's key).
    let stored = stored_bytes(backend, &db_path);
    assert!(chunk_rows(backend, &db_path) >= 1);
    assert!(!stored.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()), "plaintext of an upload in the database");

    // A chunk at the wrong offset is refused, saying where to resume.
    let (status, body) = put_chunk(&call, &acme, &upload, 0, &file[..CHUNK]).await;
    assert_eq!(status, 400, "{body}");
    let words = body["error"]["message"].as_str().unwrap();
    assert!(words.contains(&format!("send the file from byte {CHUNK}")), "{words}");

    // Another vendor of the same tender cannot see, extend, finish or cancel it: it reads as absent.
    let path = format!("/api/v1/source/vendor/uploads/{upload}");
    assert_eq!(call.get(&path, &globex).await.0, 404);
    assert_eq!(put_chunk(&call, &globex, &upload, CHUNK, &file[CHUNK..2 * CHUNK]).await.0, 404);
    assert_eq!(call.post(&format!("{path}/finish"), &globex, json!({})).await.0, 404);
    let cancelled = call.http.delete(server.url(&path)).bearer_auth(&globex).send().await.unwrap();
    assert_eq!(cancelled.status().as_u16(), 404);
    assert_eq!(call.get(&path, &acme).await.1["received"].as_u64(), Some(CHUNK as u64));

    // Finishing early is refused in words; resuming from the service's offset completes it.
    let (status, body) = call.post(&format!("{path}/finish"), &acme, json!({})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["problems"][0]["code"], "incomplete");
    let (status, finished) = send_rest(&call, &acme, &upload, &file, CHUNK).await;
    assert_eq!(status, 200, "{finished}");
    assert!(finished["finished"].as_str().is_some(), "{finished}");

    // Another vendor cannot submit it either; its owner does, and the upload is gone after sealing.
    let prices = json!({"currency": "EUR", "unit_prices": {"P-01": "10.00"}});
    let submission = format!("/api/v1/source/vendor/tenders/{id}/submission");
    let (status, body) =
        call.post(&submission, &globex, json!({"answers": {}, "uploads": [upload], "prices": prices})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["problems"][0]["code"], "no_upload");
    let (status, body) = call
        .post(&submission, &acme, json!({"answers": {"R-01": "Frankfurt"}, "uploads": [upload], "prices": prices}))
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["files"][0][0], "approach.txt");
    assert_eq!(call.get(&path, &acme).await.0, 404, "deleted after sealing");
    assert_eq!(chunk_rows(backend, &db_path), 0);
    let stored = stored_bytes(backend, &db_path);
    assert!(!stored.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()), "plaintext of a sealed file");

    // After the deadline the buyer opens it: the very file that was chosen.
    let (_, tender) = call.get(&format!("/api/v1/source/tenders/{id}"), ann).await;
    let close: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(tender["deadlines"]["submissions_close"].clone()).unwrap();
    clock.advance(close - start_time());
    let (status, opened) =
        call.post(&format!("/api/v1/source/tenders/{id}/open"), ann, json!({"kind": "technical"})).await;
    assert_eq!(status, 200, "{opened}");
    let part = opened["parts"].as_array().unwrap().iter().find(|p| p["part"] == "approach.txt").unwrap();
    let sealed = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        part["sealed_for_opening_key"].as_str().unwrap(),
    )
    .unwrap();
    let context = EnvelopeContext {
        tender_id: &id,
        vendor_id: part["vendor_account"].as_str().unwrap(),
        kind: EnvelopeKind::Technical,
        submission: 1,
        published_hash: tender["published_hash"].as_str().unwrap(),
        part: "approach.txt",
    };
    let plain = envelope::open(&sealed, &context, &opening).expect("the buyer's key opens it");
    assert_eq!(sha256_hex(&plain), sha256_hex(&file), "the sealed file is the original, byte for byte");
    drop(fresh);
}

async fn upload_refusals_are_said_in_words_and_abandoned_uploads_expire(backend: Backend) {
    let (fresh, db_path) = fresh_at(backend);
    let clock = fixed_clock();
    let alpha = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer, Role::Buyer]);
    let config = ServerConfig { source_wrapping_key: Some(Arc::new(KeyPair::generate())), ..generous() };
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), config).await;
    let call = Call { http: reqwest::Client::new(), server: &server };
    let opening = KeyPair::generate();
    let (ann, bob) = (&alpha.tokens[0], &alpha.tokens[1]);
    let (id, acme) = published_with_vendor(&call, ann, bob, &opening).await;

    // The bytes that arrive are not the file declared: refused, and the upload is dropped.
    let good = PdfBuilder::new(2).build();
    let (_, started) = call
        .post(
            &format!("/api/v1/source/vendor/tenders/{id}/uploads"),
            &acme,
            json!({"name": "offer.pdf", "size": good.len(), "sha256": sha256_hex(b"another file")}),
        )
        .await;
    let upload = started["id"].as_str().unwrap().to_owned();
    let (status, body) = send_rest(&call, &acme, &upload, &good, 0).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        (body["problems"][0]["code"].as_str(), body["problems"][0]["field"].as_str()),
        (Some("hash_mismatch"), Some("offer.pdf"))
    );
    assert!(body["problems"][0]["message"].as_str().unwrap().contains("upload it again"));
    assert_eq!(call.get(&format!("/api/v1/source/vendor/uploads/{upload}"), &acme).await.0, 404);

    // A hostile file is refused with the inspection's reason, beside its name.
    let hostile = PdfBuilder::new(1).catalog_entry("/OpenAction << /S /JavaScript /JS (app.alert(1)) >>").build();
    let (_, started) = start_upload(&call, &acme, &id, "brochure.pdf", &hostile).await;
    let (status, body) = send_rest(&call, &acme, started["id"].as_str().unwrap(), &hostile, 0).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["problems"][0]["code"], "pdf_javascript");
    assert_eq!(body["problems"][0]["field"], "brochure.pdf");

    // A chunk past the declared size, a file over the limit, a bad hash: refused in words.
    let (_, started) = start_upload(&call, &acme, &id, "small.txt", b"twelve bytes").await;
    let (status, body) = put_chunk(&call, &acme, started["id"].as_str().unwrap(), 0, b"thirteen bytes").await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("past the size you declared"), "{body}");
    let big = json!({"name": "video.pdf", "size": pactwise_sync_server::source_uploads::FILE_LIMIT + 1, "sha256": sha256_hex(b"x")});
    let (status, body) = call.post(&format!("/api/v1/source/vendor/tenders/{id}/uploads"), &acme, big).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["problems"][0]["code"], "too_large");
    let bad_hash = json!({"name": "a.txt", "size": 3, "sha256": "not-a-hash"});
    let (status, body) = call.post(&format!("/api/v1/source/vendor/tenders/{id}/uploads"), &acme, bad_hash).await;
    assert_eq!(status, 400, "{body}");

    // At most MAX_OPEN_UPLOADS in progress; abandoned ones expire a day later (the service's clock) and make room.
    let limit = pactwise_sync_server::source_uploads::MAX_OPEN_UPLOADS;
    let mut opened = 1; // small.txt
    while opened < limit {
        let (status, body) = start_upload(&call, &acme, &id, &format!("part-{opened}.txt"), b"some text").await;
        assert_eq!(status, 201, "{body}");
        opened += 1;
    }
    let (status, body) = start_upload(&call, &acme, &id, "one-more.txt", b"some text").await;
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("finish or cancel one"), "{body}");
    clock.advance(Duration::hours(pactwise_sync_server::source_uploads::IDLE_HOURS) + Duration::seconds(1));
    let (status, body) = start_upload(&call, &acme, &id, "one-more.txt", b"some text").await;
    assert_eq!(status, 201, "expired uploads were deleted: {body}");
    let rows = match backend {
        Backend::Sqlite => rusqlite::Connection::open(&db_path)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM source_uploads", [], |r| r.get::<_, i64>(0))
            .unwrap(),
        Backend::Postgres => blocking(|| {
            let mut client = ::postgres::Client::connect(&db_path, ::postgres::NoTls).unwrap();
            client.query_one("SELECT COUNT(*) FROM source_uploads", &[]).unwrap().get::<_, i64>(0)
        }),
    };
    assert_eq!(rows, 1, "only the new upload is left");

    // After the deadline no upload starts, in words.
    let (_, tender) = call.get(&format!("/api/v1/source/tenders/{id}"), ann).await;
    let close: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(tender["deadlines"]["submissions_close"].clone()).unwrap();
    clock.advance(close - clock_now(&clock) + Duration::seconds(1));
    let (status, body) = start_upload(&call, &acme, &id, "late.txt", b"some text").await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("late submission"), "{body}");
    drop(fresh);
}

fn clock_now(clock: &pactwise_domain::FixedClock) -> chrono::DateTime<chrono::Utc> {
    pactwise_domain::Clock::now(clock)
}

async fn upload_tables_arrive_on_a_database_made_before_them(backend: Backend) {
    let (fresh, location) = fresh_at(backend);
    let clock = fixed_clock();
    org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer]);
    drop(fresh.storage);
    // The schema as it was before uploads: the same database without their tables.
    let drop_tables = "DROP TABLE source_upload_chunks; DROP TABLE source_uploads;";
    let count = "SELECT (SELECT COUNT(*) FROM source_uploads) + (SELECT COUNT(*) FROM source_upload_chunks)";
    match backend {
        Backend::Sqlite => rusqlite::Connection::open(&location).unwrap().execute_batch(drop_tables).unwrap(),
        Backend::Postgres => blocking(|| {
            ::postgres::Client::connect(&location, ::postgres::NoTls).unwrap().batch_execute(drop_tables).unwrap()
        }),
    }
    let storage = reopen(backend, &location);
    assert_eq!(counts(storage.as_ref()).organizations, 1, "the earlier rows are kept");
    let uploads: i64 = match backend {
        Backend::Sqlite => rusqlite::Connection::open(&location).unwrap().query_row(count, [], |r| r.get(0)).unwrap(),
        Backend::Postgres => blocking(|| {
            ::postgres::Client::connect(&location, ::postgres::NoTls).unwrap().query_one(count, &[]).unwrap().get(0)
        }),
    };
    assert_eq!(uploads, 0, "the upload tables were created on open");
    drop(storage);
}

async fn an_upload_in_progress_survives_a_restart_of_the_service(backend: Backend) {
    let (fresh, db_path) = fresh_at(backend);
    let clock = fixed_clock();
    let alpha = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Buyer, Role::Buyer]);
    let config = ServerConfig { source_wrapping_key: Some(Arc::new(KeyPair::generate())), ..generous() };
    let mut server = TestServer::start(fresh.storage.clone(), clock.clone(), config.clone()).await;
    let (ann, bob) = (&alpha.tokens[0], &alpha.tokens[1]);
    let file = notes_file();
    let (id, acme, upload) = {
        let call = Call { http: reqwest::Client::new(), server: &server };
        let (id, acme) = published_with_vendor(&call, ann, bob, &KeyPair::generate()).await;
        let (status, started) = start_upload(&call, &acme, &id, "approach.txt", &file).await;
        assert_eq!(status, 201, "{started}");
        let upload = started["id"].as_str().unwrap().to_owned();
        assert_eq!(put_chunk(&call, &acme, &upload, 0, &file[..CHUNK]).await.0, 200);
        (id, acme, upload)
    };

    // The service stops and starts again on the same database and key file: the upload is where it was.
    server.stop();
    drop(server);
    let server = TestServer::start(reopen(backend, &db_path), clock.clone(), config).await;
    let call = Call { http: reqwest::Client::new(), server: &server };
    let (status, progress) = call.get(&format!("/api/v1/source/vendor/uploads/{upload}"), &acme).await;
    assert_eq!((status, progress["received"].as_u64()), (200, Some(CHUNK as u64)), "{progress}");
    let (status, finished) = send_rest(&call, &acme, &upload, &file, CHUNK).await;
    assert_eq!(status, 200, "{finished}");
    let prices = json!({"currency": "EUR", "unit_prices": {"P-01": "10.00"}});
    let (status, body) = call
        .post(
            &format!("/api/v1/source/vendor/tenders/{id}/submission"),
            &acme,
            json!({"answers": {}, "uploads": [upload], "prices": prices}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    drop(fresh);
}
