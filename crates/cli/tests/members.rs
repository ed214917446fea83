//! `pactwise members …`, `pactwise org …` and `pactwise sync sign-in --code`, as a person or a script runs them:
//! one JSON document on stdout with `--json`, exit codes 0/1/2. The journey (needs the keychain) uses a real sync
//! service on loopback.

use pactwise_domain::{Clock, Role, SystemClock};
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

fn pactwise(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pactwise"));
    cmd.arg("--data-dir").arg(data).args(args).env_remove("PACTWISE_DATA_DIR");
    cmd.env_remove("PACTWISE_SYNC_PASSWORD").env_remove("PACTWISE_SYNC_CODE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(std::process::Stdio::null()).output().expect("runs")
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim().lines().count(), 1, "exactly one JSON document on stdout: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

fn ok(out: Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json_of(&out)
}

#[test]
fn members_of_a_local_organization_are_listed_and_cannot_be_managed_and_org_lists_and_switches() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let list = ok(pactwise(&data, &["members", "list", "--json"], &[]));
    assert_eq!(list["synced"], false);
    assert_eq!(list["members"].as_array().unwrap().len(), 1);
    assert_eq!(list["members"][0]["role"], "owner");
    assert_eq!(list["members"][0]["is_you"], true);

    let add = pactwise(
        &data,
        &["members", "add", "--email", "a@b.example", "--name", "A", "--role", "viewer", "--json"],
        &[],
    );
    assert_eq!(add.status.code(), Some(2), "bad input: the organization does not sync");
    assert!(json_of(&add)["error"]["message"].as_str().unwrap().contains("sign in to sync"));
    let bad_role =
        pactwise(&data, &["members", "add", "--email", "a@b.example", "--name", "A", "--role", "emperor"], &[]);
    assert_eq!(bad_role.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_role.stderr).contains("owner, admin, reviewer, buyer, approver, viewer"));

    let orgs = ok(pactwise(&data, &["org", "list", "--json"], &[]));
    assert_eq!(orgs.as_array().unwrap().len(), 1);
    assert_eq!(orgs[0]["current"], true);
    let name = orgs[0]["name"].as_str().unwrap().to_string();
    let switched = ok(pactwise(&data, &["org", "switch", &name, "--json"], &[]));
    assert_eq!(switched["session"]["org_name"], name.as_str());
    let nothing = pactwise(&data, &["org", "bring", &name, "--json"], &[]);
    assert_eq!(json_of(&nothing)["error"]["code"], "not_found", "an organization is no source for itself");
    let missing = pactwise(&data, &["org", "switch", "Nowhere Ltd", "--json"], &[]);
    assert_eq!(missing.status.code(), Some(2), "a name that is not here is bad input");
    assert_eq!(json_of(&missing)["error"]["code"], "not_found");
}

#[test]
fn org_setup_names_a_new_installation_once_and_refuses_bad_names_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let empty = pactwise(&data, &["org", "setup", "--name", "  ", "--json"], &[]);
    assert_eq!(empty.status.code(), Some(2));
    assert_eq!(json_of(&empty)["error"]["code"], "invalid_input");
    let set = ok(pactwise(
        &data,
        &["org", "setup", "--name", "Acme GmbH", "--also-known-as", "Acme", "--also-known-as", "ACME", "--json"],
        &[],
    ));
    assert_eq!(set["session"]["org_name"], "Acme GmbH");
    assert_eq!(set["own_names"], serde_json::json!(["Acme GmbH", "Acme"]));
    let again = pactwise(&data, &["org", "setup", "--name", "Other AG", "--json"], &[]);
    assert_eq!(json_of(&again)["error"]["code"], "conflict", "set up once; names change in Settings afterwards");
    let orgs = ok(pactwise(&data, &["org", "list", "--json"], &[]));
    assert_eq!(orgs[0]["name"], "Acme GmbH");
}

/// A sync service on loopback (its own runtime) with organization `alpha` and its owner Ann.
fn service(dir: &Path) -> (String, tokio::runtime::Runtime) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let storage = Arc::new(SqliteStorage::open(&dir.join("sync.sqlite3")).unwrap());
    let now = SystemClock.now();
    admin::create_org(storage.as_ref(), "alpha", "Alpha LLP", now).unwrap();
    admin::create_user(storage.as_ref(), "alpha", "ann@alpha.example", "ann-password-123", Role::Owner, now).unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let state = AppState::new(storage, Arc::new(SystemClock), ServerConfig::default());
    runtime.spawn(pactwise_sync_server::serve(listener, state, std::future::pending::<()>()));
    (endpoint, runtime)
}

#[test]
fn an_owner_adds_a_member_who_signs_in_with_the_code_then_changes_and_removes_them() {
    if !pactwise_testkit::keychain() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (server, _runtime) = service(tmp.path());
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let sign_in = ["sync", "sign-in", "--server", &server, "--org", "alpha", "--json"];
    ok(pactwise(
        &a,
        &[&sign_in[..], &["--email", "ann@alpha.example"]].concat(),
        &[("PACTWISE_SYNC_PASSWORD", "ann-password-123")],
    ));

    let added = ok(pactwise(
        &a,
        &["members", "add", "--email", "bea@alpha.example", "--name", "Bea Ortiz", "--role", "approver", "--json"],
        &[],
    ));
    let code = added["code"].as_str().unwrap().to_string();
    assert_eq!(added["member"]["role"], "approver");
    // The human output shows the code once, with what to do with it.
    let listed = pactwise(&a, &["members", "list"], &[]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("Bea Ortiz") && text.contains("Approver") && text.contains("sign-in code open"), "{text}");
    assert!(!text.contains(&code));

    let first = [&sign_in[..], &["--email", "bea@alpha.example", "--code"]].concat();
    let bea =
        ok(pactwise(&b, &first, &[("PACTWISE_SYNC_CODE", &code), ("PACTWISE_SYNC_PASSWORD", "bea-chose-this-1")]));
    assert_eq!(bea["session"]["user_name"], "Bea Ortiz");
    assert_eq!(bea["session"]["role"], "approver");
    assert!(!bea.to_string().contains(&code), "the code is never printed back");
    let again = pactwise(&b, &first, &[("PACTWISE_SYNC_CODE", &code), ("PACTWISE_SYNC_PASSWORD", "bea-chose-this-1")]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(json_of(&again)["error"]["code"], "unauthenticated");

    let forbidden = pactwise(&b, &["members", "role", "ann@alpha.example", "viewer", "--json"], &[]);
    assert_eq!(json_of(&forbidden)["error"]["code"], "forbidden");
    let changed = ok(pactwise(&a, &["members", "role", "bea@alpha.example", "reviewer", "--json"], &[]));
    assert_eq!(changed["role"], "reviewer");
    ok(pactwise(&b, &["sync", "now", "--json"], &[]));
    let on_b = ok(pactwise(&b, &["members", "list", "--json"], &[]));
    assert!(
        on_b["members"].as_array().unwrap().iter().any(|m| m["display_name"] == "Bea Ortiz" && m["role"] == "reviewer")
    );

    ok(pactwise(&a, &["members", "remove", "bea@alpha.example", "--json"], &[]));
    let stopped = pactwise(&b, &["sync", "now", "--json"], &[]);
    assert_eq!(json_of(&stopped)["error"]["code"], "unauthenticated");
    ok(pactwise(&a, &["sync", "sign-out", "--json"], &[]));
    ok(pactwise(&b, &["sync", "sign-out", "--json"], &[]));
}
