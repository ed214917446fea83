//! The `pactwise-sync-server` binary as an operator runs it: `admin create-org`, `admin create-user` with the
//! password on stdin, `serve --tls-cert --tls-key` (HTTPS with a certificate the test makes and the client trusts),
//! a sign-in over HTTPS, and a graceful stop on SIGTERM.

use crate::common::*;
use pactwise_sync::wire::SignInRequest;
use pactwise_sync::{DeviceToken, HttpApi, TlsTrust};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_pactwise-sync-server");

fn database(backend: Backend, dir: &std::path::Path) -> String {
    match backend {
        Backend::Sqlite => format!("sqlite:{}", dir.join("sync.sqlite3").display()),
        Backend::Postgres => blocking(pg_database),
    }
}

fn admin(database: &str, args: &[&str], stdin: Option<&str>) -> serde_json::Value {
    let mut child = Command::new(BIN)
        .args(["admin", "--database", database])
        .args(args)
        .env("PACTWISE_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "admin {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn an_operator_creates_a_tenant_serves_and_stops_gracefully(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let db = database(backend, dir.path());
    let created = blocking(|| admin(&db, &["create-org", "--slug", "alpha", "--name", "Alpha LLP"], None));
    assert_eq!(created["slug"], "alpha");
    let user = blocking(|| {
        admin(
            &db,
            &["create-user", "--org", "alpha", "--email", "ann@alpha.example", "--role", "approver"],
            Some("correct horse battery\n"),
        )
    });
    assert_eq!(user["role"], "approver");
    assert!(!user.to_string().contains("horse"), "the password is never printed");

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let (cert, key) = crate::security::self_signed();
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let mut server = Command::new(BIN)
        .args(["serve", "--listen", &listen, "--database", &db])
        .arg("--tls-cert")
        .arg(&cert_file)
        .arg("--tls-key")
        .arg(&key_file)
        .env("PACTWISE_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The server says when it listens; read its log on a thread and wait for that line (bounded).
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stderr = server.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut log = String::new();
    blocking(|| {
        while !log.contains("listening") {
            let line = lines.recv_timeout(Duration::from_secs(30)).expect("the server did not start");
            log.push_str(&line);
            log.push('\n');
        }
    });
    assert!(log.contains("scheme=\"https\"") || log.contains("https"), "{log}");
    let endpoint = format!("https://localhost:{port}");
    let trusting = reqwest::Client::builder()
        .tls_certs_merge([reqwest::Certificate::from_pem(cert.as_bytes()).unwrap()])
        .build()
        .unwrap();
    let health: serde_json::Value =
        trusting.get(format!("{endpoint}/health")).send().await.unwrap().json().await.unwrap();
    assert_eq!(health["status"], "ok");
    let trust = TlsTrust::default().with_pem(cert.clone().into_bytes());
    let signed = HttpApi::with_trust(&endpoint, None, &trust)
        .unwrap()
        .sign_in(&SignInRequest {
            org: "alpha".into(),
            email: "ann@alpha.example".into(),
            password: "correct horse battery".into(),
            device_name: "laptop".into(),
        })
        .await
        .unwrap();
    let me =
        HttpApi::with_trust(&endpoint, Some(DeviceToken::new(&signed.token)), &trust).unwrap().session().await.unwrap();
    assert_eq!(me.org_name, "Alpha LLP");

    let status = Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap();
    assert!(status.success());
    let status = blocking(|| server.wait()).unwrap();
    assert!(status.success(), "the server exits cleanly on SIGTERM: {status:?}");
    blocking(|| reader.join()).unwrap();
    log.extend(lines.try_iter().map(|l| l + "\n"));
    assert!(log.contains("shutting down") && log.contains("stopped"), "{log}");
    assert!(!log.contains(&signed.token), "the token never reaches the log");
}

crate::both_backends!(an_operator_creates_a_tenant_serves_and_stops_gracefully);
