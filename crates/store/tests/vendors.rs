//! Vendor records through the store's public API: create, edit, status, duplicates, the merge a person confirms
//! (links follow it in one transaction, audited, the merged-away record kept), the onboarding decision a run writes,
//! and another organization's vendors never reachable.

use chrono::{TimeZone, Utc};
use pactwise_domain::{FixedClock, MediaType, Role, RunId, VendorStatus};
use pactwise_store::{
    FinalVendor, Finalization, NewDocument, NewVendor, OnboardedVendor, OrgScope, Store, StoreError, VendorDecision,
    VendorEdit,
};
use std::sync::Arc;

fn store() -> Store {
    let clock = Arc::new(FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()));
    Store::open_in_memory(clock).unwrap()
}

fn member(store: &Store, org_name: &str) -> OrgScope {
    let p = store.platform();
    let org = p.create_organization(org_name).unwrap();
    let user = p.create_user(&format!("{org_name} user"), None).unwrap();
    p.set_membership(org, user, Role::Owner).unwrap();
    let session = p.start_session(user, org).unwrap();
    store.sessions().open(session).unwrap()
}

fn vendor(store: &Store, scope: &OrgScope, name: &str, aliases: &[&str], ids: &[(&str, &str)]) -> String {
    store
        .vendors()
        .create(
            scope,
            &NewVendor {
                name: name.into(),
                aliases: aliases.iter().map(|a| a.to_string()).collect(),
                identifiers: ids.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            },
        )
        .unwrap()
        .id
}

/// A contract linked by a person to `vendor`, finalized.
fn contract(store: &Store, scope: &OrgScope, n: u32, name: &str, vendor: &str) -> pactwise_domain::DocumentId {
    let new =
        NewDocument { name: name.into(), media_type: MediaType::Pdf, size: 10, content_hash: format!("{n:064x}") };
    let (doc, _) = store.documents().record(scope, &new).unwrap();
    let fields = serde_json::json!({});
    store.reviews().save_contract(scope, doc.id, "service", None, &fields, &VendorDecision::None).unwrap();
    store
        .reviews()
        .finalize(
            scope,
            doc.id,
            &Finalization {
                vendor: FinalVendor::Existing(vendor),
                counterparty: None,
                extractions: &fields,
                outcome: Default::default(),
            },
        )
        .unwrap();
    doc.id
}

fn audit_actions(store: &Store, scope: &OrgScope) -> Vec<String> {
    store.audit().list(scope).unwrap().into_iter().map(|e| e.action).collect()
}

#[test]
fn a_vendor_keeps_its_aliases_and_identifiers_and_a_person_sets_its_status_with_a_reason() {
    let store = store();
    let a = member(&store, "A");
    let id = vendor(&store, &a, "  Acme,   Inc. ", &["Acme Widgets", "ACME INC"], &[("Tax ID", "US-12 345")]);
    let v = store.vendors().get(&a, &id).unwrap();
    assert_eq!(v.name, "Acme, Inc.");
    // "ACME INC" normalises like the name itself: not kept as an alias.
    assert_eq!(v.aliases, ["Acme Widgets"]);
    assert_eq!(v.identifiers[0].kind, "tax_id");
    assert_eq!(v.status, VendorStatus::Prospective);

    let err = store.vendors().set_status(&a, &id, VendorStatus::Active, " ").unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    let v = store.vendors().set_status(&a, &id, VendorStatus::Blocked, "failed the security review").unwrap();
    assert_eq!(v.status, VendorStatus::Blocked);
    let err = store.vendors().set_status(&a, &id, VendorStatus::Merged, "tidy").unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");

    let v = store
        .vendors()
        .edit(&a, &id, &VendorEdit { aliases: Some(vec!["Roadrunner".into()]), ..Default::default() })
        .unwrap();
    assert_eq!(v.aliases, ["Roadrunner"]);
    let err = store
        .vendors()
        .create(
            &a,
            &NewVendor { name: "X".into(), identifiers: vec![("tax id".into(), "--".into())], ..Default::default() },
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    let actions = audit_actions(&store, &a);
    for want in ["vendor.create", "vendor.status", "vendor.edit"] {
        assert!(actions.iter().any(|x| x == want), "{want} in {actions:?}");
    }
}

#[test]
fn duplicates_by_name_alias_and_identifier_are_listed_and_a_merge_moves_the_links_and_keeps_the_record() {
    let store = store();
    let a = member(&store, "A");
    let keep = vendor(&store, &a, "Acme, Inc.", &[], &[("tax_id", "US-1")]);
    let away = vendor(&store, &a, "ACME Incorporated", &["Acme Widgets"], &[("duns", "99")]);
    let other = vendor(&store, &a, "Initech", &[], &[]);
    let c1 = contract(&store, &a, 1, "msa.pdf", &away);
    let c2 = contract(&store, &a, 2, "sow.pdf", &keep);
    let c3 = contract(&store, &a, 3, "initech.pdf", &other);

    let groups = store.vendors().duplicates(&a).unwrap();
    assert_eq!(groups.len(), 1);
    let mut want = vec![keep.clone(), away.clone()];
    want.sort();
    assert_eq!(groups[0].ids, want);

    store.vendors().set_status(&a, &away, VendorStatus::Active, "onboarded by hand").unwrap();
    let out = store.vendors().merge(&a, &keep, &away).unwrap();
    assert_eq!(out.contracts_moved, 1);
    assert_eq!(out.kept.aliases, ["Acme Widgets"]);
    assert_eq!(out.kept.identifiers.len(), 2);
    assert_eq!(out.kept.status, VendorStatus::Active);
    assert_eq!(out.merged.status, VendorStatus::Merged);
    assert_eq!(out.merged.merged_into.as_deref(), Some(keep.as_str()));

    // The links followed; the third contract kept its vendor.
    for (doc, want) in [(c1, &keep), (c2, &keep), (c3, &other)] {
        let row = store.reviews().contract(&a, doc).unwrap().unwrap();
        assert_eq!(&row.vendor.unwrap().id, want);
    }
    // The merged record is kept (listed when asked), no longer offered, no longer a duplicate.
    assert_eq!(store.vendors().list(&a, false).unwrap().len(), 2);
    assert_eq!(store.vendors().list(&a, true).unwrap().len(), 3);
    assert!(store.reviews().vendors(&a).unwrap().iter().all(|v| v.id != away));
    assert!(store.vendors().duplicates(&a).unwrap().is_empty());
    let docs = store.vendors().documents(&a, &keep).unwrap();
    assert_eq!(docs.len(), 2);
    assert!(docs.iter().all(|d| d.finalized && d.linked_by_person));
    let kept = store.vendors().list(&a, false).unwrap().into_iter().find(|r| r.record.id == keep).unwrap();
    assert_eq!((kept.contracts, kept.documents), (2, 2));

    // The finalize match now finds the merged name as an alias of the kept vendor.
    let new =
        NewDocument { name: "po.pdf".into(), media_type: MediaType::Pdf, size: 1, content_hash: format!("{:064x}", 9) };
    let (doc, _) = store.documents().record(&a, &new).unwrap();
    let decision = VendorDecision::Match {
        name: "Acme Widgets Ltd".into(),
        normalized: pactwise_store::normalized_vendor_name("Acme Widgets Ltd"),
        create: true,
    };
    let row = store
        .reviews()
        .save_contract(&a, doc.id, "service", Some("Acme Widgets Ltd"), &serde_json::json!({}), &decision)
        .unwrap();
    assert_eq!(row.vendor.unwrap().id, keep);
    assert_eq!(row.vendor_match, "linked");

    // Merging again, or into the merged record, is refused and changes nothing.
    assert!(matches!(store.vendors().merge(&a, &away, &keep), Err(StoreError::Conflict(_))));
    assert!(matches!(store.vendors().set_status(&a, &away, VendorStatus::Active, "x"), Err(StoreError::Conflict(_))));
    let actions = audit_actions(&store, &a);
    assert!(actions.iter().any(|x| x == "vendor.merge"));
    assert!(actions.iter().any(|x| x == "vendor.merged_into"));
}

#[test]
fn two_vendors_with_different_tax_ids_are_not_merged_and_nothing_changes() {
    let store = store();
    let a = member(&store, "A");
    let keep = vendor(&store, &a, "Acme", &[], &[("tax_id", "US-1")]);
    let away = vendor(&store, &a, "Acme Inc", &[], &[("tax id", "US-2")]);
    let c = contract(&store, &a, 1, "msa.pdf", &away);
    let err = store.vendors().merge(&a, &keep, &away).unwrap_err();
    assert!(err.to_string().contains("different companies"), "{err}");
    assert_eq!(store.vendors().get(&a, &away).unwrap().status, VendorStatus::Prospective);
    assert_eq!(store.reviews().contract(&a, c).unwrap().unwrap().vendor.unwrap().id, away);
}

#[test]
fn a_merge_of_vendors_from_two_organizations_is_refused_like_a_missing_vendor_and_changes_nothing() {
    let store = store();
    let a = member(&store, "A");
    let b = member(&store, "B");
    let ours = vendor(&store, &a, "Acme", &[], &[]);
    let theirs = vendor(&store, &b, "Acme Inc", &[], &[]);
    let c = contract(&store, &b, 1, "theirs.pdf", &theirs);
    for (keep, away) in [(&ours, &theirs), (&theirs, &ours)] {
        let err = store.vendors().merge(&a, keep, away).unwrap_err();
        assert!(matches!(err, StoreError::NotFound), "{err:?}");
    }
    assert_eq!(store.vendors().get(&b, &theirs).unwrap().status, VendorStatus::Prospective);
    assert_eq!(store.reviews().contract(&b, c).unwrap().unwrap().vendor.unwrap().id, theirs);
    // Nor can A read, list, edit, set or find duplicates with B's vendor.
    assert!(matches!(store.vendors().get(&a, &theirs), Err(StoreError::NotFound)));
    assert!(matches!(store.vendors().documents(&a, &theirs), Err(StoreError::NotFound)));
    assert!(matches!(store.vendors().set_status(&a, &theirs, VendorStatus::Blocked, "x"), Err(StoreError::NotFound)));
    assert!(matches!(store.vendors().edit(&a, &theirs, &VendorEdit::default()), Err(StoreError::NotFound)));
    assert!(matches!(store.vendors().begin_onboarding(&a, &theirs), Err(StoreError::NotFound)));
    assert_eq!(store.vendors().list(&a, true).unwrap().len(), 1);
    assert!(store.vendors().duplicates(&a).unwrap().is_empty());
}

#[test]
fn an_onboarding_decision_moves_the_vendor_once_and_follows_a_merge() {
    let store = store();
    let a = member(&store, "A");
    let id = vendor(&store, &a, "Globex", &[], &[]);
    let v = store.vendors().begin_onboarding(&a, &id).unwrap();
    assert_eq!(v.status, VendorStatus::Onboarding);
    assert!(matches!(store.vendors().begin_onboarding(&a, &id), Err(StoreError::Conflict(_))));

    // Merged while the run waited: the decision lands on the kept vendor.
    let keep = vendor(&store, &a, "Globex Corp", &[], &[]);
    store.vendors().merge(&a, &keep, &id).unwrap();
    let worker = store.into_platform_worker("test");
    let (store, credential) = (worker.store(), worker.credential());
    let run = RunId::new();
    let v = store
        .vendors()
        .onboarding_decided_for_worker(credential, a.org(), OnboardedVendor::Record(&id), run, true)
        .unwrap()
        .unwrap();
    assert_eq!(v.id, keep);
    assert_eq!(v.status, VendorStatus::Active);
    // The same run's decision again changes nothing and audits once.
    store
        .vendors()
        .onboarding_decided_for_worker(credential, a.org(), OnboardedVendor::Record(&id), run, true)
        .unwrap();
    let n = audit_actions(store, &a).iter().filter(|x| *x == "vendor.onboarding_decided").count();
    assert_eq!(n, 1);

    // Declined: blocked. Another organization's run cannot reach A's vendor.
    let other = vendor(store, &a, "Initech", &[], &[]);
    let v = store
        .vendors()
        .onboarding_decided_for_worker(credential, a.org(), OnboardedVendor::Record(&other), RunId::new(), false)
        .unwrap()
        .unwrap();
    assert_eq!(v.status, VendorStatus::Blocked);
    let b = member(store, "B");
    let err = store
        .vendors()
        .onboarding_decided_for_worker(credential, b.org(), OnboardedVendor::Record(&other), RunId::new(), true)
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound), "{err:?}");

    // A run started by name only: approved, a new active record; declined, nothing written.
    let declined = RunId::new();
    let none = store
        .vendors()
        .onboarding_decided_for_worker(
            credential,
            a.org(),
            OnboardedVendor::New { name: "Hooli", tax_id: None },
            declined,
            false,
        )
        .unwrap();
    assert!(none.is_none());
    let run = RunId::new();
    let new = OnboardedVendor::New { name: "Hooli Inc", tax_id: Some("US-77") };
    let v = store.vendors().onboarding_decided_for_worker(credential, a.org(), new, run, true).unwrap().unwrap();
    assert_eq!((v.name.as_str(), v.status, v.identifiers.len()), ("Hooli Inc", VendorStatus::Active, 1));
    let again = store.vendors().onboarding_decided_for_worker(credential, a.org(), new, run, true).unwrap().unwrap();
    assert_eq!(again.id, v.id, "a step run again after a crash registers nothing more");
    assert_eq!(
        store.vendors().list(&a, false).unwrap().iter().filter(|r| r.record.name.starts_with("Hooli")).count(),
        1
    );
}
