//! The first-run screen's backend on a real data directory: a new installation needs it, naming the organization
//! sets it up once (the name and its own names stored together), refused input writes nothing, and the demo or a
//! reopened installation does not ask again.

use pactwise_api::{Api, ApiOptions, FirstRunInput};
use pactwise_domain::ErrorCode;
use pactwise_model::InMemoryApiKeySource;
use std::path::Path;
use std::sync::Arc;

fn open(dir: &Path) -> Api {
    let options = ApiOptions { keys: Arc::new(InMemoryApiKeySource::empty()), ..ApiOptions::default() };
    Api::open_with(dir.to_path_buf(), options).unwrap()
}

fn input(name: &str, own: &[&str]) -> FirstRunInput {
    FirstRunInput { organization_name: name.into(), own_names: own.iter().map(|s| s.to_string()).collect() }
}

#[tokio::test]
async fn a_new_installation_is_set_up_once_with_its_organizations_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let api = open(&dir);
    let scope = api.local_session().await.unwrap();
    let view = api.first_run(&scope).await.unwrap();
    assert!(view.needed);
    assert_eq!(view.organization_name, "My organization");

    // Refused input changes nothing.
    for bad in [input("   ", &["Acme"]), input("Acme\nGmbH", &[]), input("Acme GmbH", &[&"x".repeat(201)])] {
        let e = api.complete_first_run(&scope, bad).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput, "{}", e.message);
    }
    let view = api.first_run(&scope).await.unwrap();
    assert!(view.needed);
    assert_eq!(view.organization_name, "My organization");
    assert!(api.own_names(&scope).await.unwrap().is_empty());

    let session =
        api.complete_first_run(&scope, input("  Acme GmbH ", &["Acme", " acme ", "", "ACME Trading"])).await.unwrap();
    assert_eq!(session.org_name, "Acme GmbH");
    assert_eq!(api.own_names(&scope).await.unwrap(), ["Acme GmbH", "Acme", "ACME Trading"]);
    assert!(!api.first_run(&scope).await.unwrap().needed);

    // Once set up, names change in Settings, not here.
    let again = api.complete_first_run(&scope, input("Other AG", &[])).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::Conflict, "{}", again.message);
    assert_eq!(api.session_info(&scope).await.unwrap().org_name, "Acme GmbH");

    // The next start of the app does not ask again.
    drop(api);
    let api = open(&dir);
    let scope = api.local_session().await.unwrap();
    let view = api.first_run(&scope).await.unwrap();
    assert!(!view.needed);
    assert_eq!(view.organization_name, "Acme GmbH");
}

#[tokio::test]
async fn exploring_the_demo_sets_the_installation_up() {
    let tmp = tempfile::tempdir().unwrap();
    let api = open(&tmp.path().join("data"));
    let scope = api.local_session().await.unwrap();
    assert!(api.first_run(&scope).await.unwrap().needed);
    let (demo, _) = api.seed_demo().await.unwrap();
    assert!(!api.first_run(&demo).await.unwrap().needed);
    let orgs = api.organizations(&demo).await.unwrap();
    assert!(orgs.iter().any(|o| o.org_id == scope.org() && !o.current), "the local one stays to switch to: {orgs:?}");
    // The welcome screen cannot rename the demo organization afterwards.
    let e = api.complete_first_run(&demo, input("Acme GmbH", &[])).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict);
}
