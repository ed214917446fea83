//! The contract repository through the store's public API: only finalized contracts of the session's organization
//! are listed; each filter, the search and paging; the dates view; another organization's contracts never appear.

use chrono::{NaiveDate, TimeZone, Utc};
use pactwise_domain::{
    DocumentId, DurationUnit, Extracted, Extractions, FixedClock, MediaType, Quote, Role, Value as Normalized,
};
use pactwise_store::{
    ContractFilter, ContractOutcome, ContractSort, FinalVendor, Finalization, NewDocument, OrgScope, Store, StoreError,
    VendorDecision,
};
use std::sync::Arc;

/// Today for every test: 30 November 2026.
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

fn field(value: Normalized) -> Option<Extracted> {
    Some(Extracted {
        value: value.display(),
        normalized: Some(value),
        quote: Some(Quote { text: "words".into(), page: 1 }),
        confidence: 0.9,
    })
}

struct Spec<'a> {
    name: &'a str,
    type_id: &'a str,
    counterparty: Option<&'a str>,
    law: Option<&'a str>,
    expires: Option<&'a str>,
    notice_days: Option<u32>,
    outcome: ContractOutcome,
    finalize: bool,
}

impl Default for Spec<'_> {
    fn default() -> Self {
        Spec {
            name: "contract.pdf",
            type_id: "service",
            counterparty: None,
            law: None,
            expires: None,
            notice_days: None,
            outcome: ContractOutcome::default(),
            finalize: true,
        }
    }
}

fn add(store: &Store, scope: &OrgScope, n: usize, spec: Spec<'_>) -> DocumentId {
    let new =
        NewDocument { name: spec.name.into(), media_type: MediaType::Pdf, size: 10, content_hash: format!("{n:064x}") };
    let (doc, _) = store.documents().record(scope, &new).unwrap();
    let fields = Extractions {
        expiration_date: spec.expires.and_then(|iso| field(Normalized::Date { iso: iso.into() })),
        renewal_notice: spec
            .notice_days
            .and_then(|d| field(Normalized::Duration { number: d, unit: DurationUnit::Day })),
        governing_law: spec.law.and_then(|l| field(Normalized::Jurisdiction { name: l.into() })),
        ..Extractions::default()
    };
    let json = serde_json::to_value(&fields).unwrap();
    let reviews = store.reviews();
    reviews.save_contract(scope, doc.id, spec.type_id, spec.counterparty, &json, &VendorDecision::None).unwrap();
    if spec.finalize {
        let f = Finalization {
            vendor: FinalVendor::Keep,
            counterparty: spec.counterparty,
            extractions: &json,
            outcome: spec.outcome,
        };
        reviews.finalize(scope, doc.id, &f).unwrap();
    }
    doc.id
}

fn page(limit: u32) -> ContractFilter {
    ContractFilter { limit, ..ContractFilter::default() }
}

fn names(store: &Store, scope: &OrgScope, filter: &ContractFilter) -> Vec<String> {
    store.contracts().list(scope, filter).unwrap().rows.into_iter().map(|r| r.name).collect()
}

fn date(iso: &str) -> NaiveDate {
    NaiveDate::parse_from_str(iso, "%Y-%m-%d").unwrap()
}

/// A small repository: four finalized contracts of Acme and one that is not finalized.
fn repository(store: &Store, a: &OrgScope) -> Vec<DocumentId> {
    vec![
        add(
            store,
            a,
            1,
            Spec {
                name: "Alpha supply.pdf",
                type_id: "supply",
                counterparty: Some("Globex Ltd"),
                law: Some("New York"),
                expires: Some("2026-12-20"),
                notice_days: Some(30),
                outcome: ContractOutcome { red_flags: 1, critical_gaps: 0 },
                ..Spec::default()
            },
        ),
        add(
            store,
            a,
            2,
            Spec {
                name: "Beta services.pdf",
                type_id: "service",
                counterparty: Some("Initech"),
                law: Some("Delaware"),
                expires: Some("2027-06-30"),
                notice_days: Some(90),
                outcome: ContractOutcome { red_flags: 0, critical_gaps: 2 },
                ..Spec::default()
            },
        ),
        add(
            store,
            a,
            3,
            Spec {
                name: "Gamma licence.pdf",
                type_id: "license",
                counterparty: Some("Globex Asia"),
                law: Some("new york"),
                expires: Some("2030-01-01"),
                ..Spec::default()
            },
        ),
        add(store, a, 4, Spec { name: "delta NDA.pdf", type_id: "nda", ..Spec::default() }),
        add(
            store,
            a,
            5,
            Spec {
                name: "Draft under review.pdf",
                counterparty: Some("Globex Ltd"),
                finalize: false,
                ..Spec::default()
            },
        ),
    ]
}

#[test]
fn only_finalized_contracts_are_listed_with_their_derived_columns() {
    let store = store();
    let a = member(&store, "Acme");
    let ids = repository(&store, &a);
    let list = store.contracts().list(&a, &page(50)).unwrap();
    assert_eq!(list.total, 4);
    let names: Vec<&str> = list.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Alpha supply.pdf", "Beta services.pdf", "delta NDA.pdf", "Gamma licence.pdf"], "by name");
    let alpha = &list.rows[0];
    assert_eq!(alpha.document, ids[0]);
    assert_eq!(alpha.expires_on, Some(date("2026-12-20")));
    assert_eq!(alpha.notice_by, Some(date("2026-11-20")), "thirty days before it expires");
    assert_eq!(alpha.governing_law.as_deref(), Some("New York"));
    assert_eq!((alpha.risk.as_deref(), alpha.red_flags), (Some("high"), 1));
    assert_eq!(list.rows[1].risk.as_deref(), Some("medium"));
    assert_eq!(list.rows[2].risk.as_deref(), Some("low"));
}

#[test]
fn each_filter_narrows_the_list() {
    let store = store();
    let a = member(&store, "Acme");
    repository(&store, &a);
    let with = |f: ContractFilter| names(&store, &a, &ContractFilter { limit: 50, ..f });
    assert_eq!(with(ContractFilter { type_id: Some("supply".into()), ..page(50) }), ["Alpha supply.pdf"]);
    assert_eq!(
        with(ContractFilter { counterparty: Some("globex".into()), ..page(50) }),
        ["Alpha supply.pdf", "Gamma licence.pdf"],
        "part of the name, any case; the draft is not finalized"
    );
    assert!(with(ContractFilter { counterparty: Some("%".into()), ..page(50) }).is_empty(), "% is a character");
    assert_eq!(
        with(ContractFilter { governing_law: Some("NEW YORK".into()), ..page(50) }),
        ["Alpha supply.pdf", "Gamma licence.pdf"]
    );
    assert_eq!(with(ContractFilter { risk: Some("medium".into()), ..page(50) }), ["Beta services.pdf"]);
    assert!(matches!(
        store.contracts().list(&a, &ContractFilter { risk: Some("dire".into()), ..page(50) }),
        Err(StoreError::Invalid(_))
    ));
    // Today is 30 November 2026: Alpha expires in 20 days, Beta in 212.
    assert_eq!(with(ContractFilter { expiring_within_days: Some(30), ..page(50) }), ["Alpha supply.pdf"]);
    assert_eq!(
        with(ContractFilter { expiring_within_days: Some(365), ..page(50) }),
        ["Alpha supply.pdf", "Beta services.pdf"]
    );
    // Alpha's notice deadline (20 November) has passed; Beta's is 1 April 2027 (90 days before 30 June).
    assert!(with(ContractFilter { notice_within_days: Some(60), ..page(50) }).is_empty());
    assert_eq!(with(ContractFilter { notice_within_days: Some(130), ..page(50) }), ["Beta services.pdf"]);
    assert_eq!(
        with(ContractFilter { counterparty: Some("globex".into()), expiring_within_days: Some(365), ..page(50) }),
        ["Alpha supply.pdf"],
        "filters combine"
    );
}

#[test]
fn search_finds_names_counterparties_and_extracted_values_by_word_and_prefix() {
    let store = store();
    let a = member(&store, "Acme");
    repository(&store, &a);
    let search = |q: &str| names(&store, &a, &ContractFilter { search: Some(q.into()), ..page(50) });
    assert_eq!(search("initech"), ["Beta services.pdf"]);
    assert_eq!(search("glob"), ["Alpha supply.pdf", "Gamma licence.pdf"], "prefix of the last word");
    assert_eq!(search("delaware"), ["Beta services.pdf"], "an extracted value");
    assert_eq!(search("globex new york supply"), ["Alpha supply.pdf"], "every word must match");
    assert_eq!(search("licence"), ["Gamma licence.pdf"], "the document's name");
    assert!(search("under review").is_empty(), "the draft is not finalized");
    assert_eq!(search("\"NEAR( -").len(), 0, "operators are words, not syntax");
    assert_eq!(search("   ").len(), 4, "no words: no search");
}

#[test]
fn pages_follow_the_order_and_the_total_counts_every_match() {
    let store = store();
    let a = member(&store, "Acme");
    for n in 0..25 {
        let name = format!("Contract {n:02}.pdf");
        let expires = format!("2027-{:02}-01", 12 - n % 12);
        add(&store, &a, n, Spec { name: &name, expires: Some(&expires), ..Spec::default() });
    }
    let mut seen = Vec::new();
    let mut offset = 0;
    loop {
        let page =
            store.contracts().list(&a, &ContractFilter { offset, limit: 10, ..ContractFilter::default() }).unwrap();
        assert_eq!(page.total, 25);
        if page.rows.is_empty() {
            break;
        }
        offset += page.rows.len() as u32;
        seen.extend(page.rows.into_iter().map(|r| r.name));
    }
    let expected: Vec<String> = (0..25).map(|n| format!("Contract {n:02}.pdf")).collect();
    assert_eq!(seen, expected, "every contract once, in order");
    let soonest = store
        .contracts()
        .list(&a, &ContractFilter { sort: ContractSort::ExpiresOn, limit: 3, ..ContractFilter::default() })
        .unwrap();
    let dates: Vec<_> = soonest.rows.iter().map(|r| r.expires_on.unwrap().to_string()).collect();
    assert_eq!(dates, ["2027-01-01", "2027-01-01", "2027-02-01"]);
    assert!(matches!(store.contracts().list(&a, &page(0)), Err(StoreError::Invalid(_))));
    assert!(matches!(store.contracts().list(&a, &page(501)), Err(StoreError::Invalid(_))));
}

#[test]
fn the_dates_view_lists_expirations_and_notice_deadlines_in_range_by_date() {
    let store = store();
    let a = member(&store, "Acme");
    repository(&store, &a);
    let rows = store.contracts().dates(&a, date("2026-11-01"), date("2027-07-01")).unwrap();
    let seen: Vec<(String, &str, &str)> = rows.iter().map(|r| (r.date.to_string(), r.kind, r.name.as_str())).collect();
    assert_eq!(
        seen,
        [
            ("2026-11-20".to_string(), "notice_deadline", "Alpha supply.pdf"),
            ("2026-12-20".to_string(), "expiration", "Alpha supply.pdf"),
            ("2027-04-01".to_string(), "notice_deadline", "Beta services.pdf"),
            ("2027-06-30".to_string(), "expiration", "Beta services.pdf"),
        ]
    );
    assert!(store.contracts().dates(&a, date("2027-07-01"), date("2029-12-31")).unwrap().is_empty(), "end excluded");
}

#[test]
fn a_deleted_or_reopened_contract_leaves_the_list_and_a_refinalized_one_has_its_new_dates() {
    let store = store();
    let a = member(&store, "Acme");
    let ids = repository(&store, &a);
    store.documents().soft_delete(&a, ids[3]).unwrap();
    assert_eq!(store.contracts().list(&a, &page(50)).unwrap().total, 3);
    store.reviews().reopen(&a, ids[1], "the notice period was misread").unwrap();
    assert_eq!(store.contracts().list(&a, &page(50)).unwrap().total, 2);
    assert!(store.contracts().row(&a, ids[1]).unwrap().is_none());
    let fields = Extractions {
        expiration_date: field(Normalized::Date { iso: "2027-06-30".into() }),
        renewal_notice: field(Normalized::Duration { number: 30, unit: DurationUnit::Day }),
        ..Extractions::default()
    };
    let json = serde_json::to_value(&fields).unwrap();
    let f = Finalization {
        vendor: FinalVendor::Keep,
        counterparty: Some("Initech"),
        extractions: &json,
        outcome: ContractOutcome::default(),
    };
    store.reviews().finalize(&a, ids[1], &f).unwrap();
    let row = store.contracts().row(&a, ids[1]).unwrap().unwrap();
    assert_eq!(row.notice_by, Some(date("2027-05-31")));
    assert_eq!(row.risk.as_deref(), Some("low"));
}

#[test]
fn another_organizations_contracts_never_appear() {
    let store = store();
    let a = member(&store, "Acme");
    let b = member(&store, "Globex");
    let ours = repository(&store, &a);
    let theirs = add(
        &store,
        &b,
        99,
        Spec {
            name: "Their secret supply.pdf",
            type_id: "supply",
            counterparty: Some("Globex Ltd"),
            law: Some("New York"),
            expires: Some("2026-12-24"),
            notice_days: Some(10),
            ..Spec::default()
        },
    );
    let contracts = store.contracts();
    let listed = contracts.list(&a, &page(50)).unwrap();
    assert_eq!(listed.total, 4);
    assert!(listed.rows.iter().all(|r| r.document != theirs));
    assert_eq!(names(&store, &a, &ContractFilter { search: Some("secret".into()), ..page(50) }).len(), 0);
    assert!(contracts.row(&a, theirs).unwrap().is_none());
    assert!(contracts.dates(&a, date("2026-01-01"), date("2031-01-01")).unwrap().iter().all(|r| r.document != theirs));
    let facets = contracts.facets(&a).unwrap();
    assert_eq!(facets.counterparties.iter().find(|f| f.value == "Globex Ltd").map(|f| f.count), Some(1));
    assert!(matches!(contracts.set_outcome(&a, theirs, ContractOutcome::default()), Err(StoreError::NotFound)));
    let b_list = contracts.list(&b, &page(50)).unwrap();
    assert_eq!(b_list.rows.iter().map(|r| r.document).collect::<Vec<_>>(), [theirs]);
    assert!(b_list.rows.iter().all(|r| !ours.contains(&r.document)));
}

#[test]
fn facets_count_the_values_of_finalized_contracts() {
    let store = store();
    let a = member(&store, "Acme");
    repository(&store, &a);
    let facets = store.contracts().facets(&a).unwrap();
    let laws: Vec<(String, u32)> = facets.governing_laws.iter().map(|f| (f.value.clone(), f.count)).collect();
    assert_eq!(laws.len(), 2, "New York in any case is one law: {laws:?}");
    assert_eq!(laws.iter().find(|(v, _)| v.eq_ignore_ascii_case("new york")).map(|l| l.1), Some(2));
    assert_eq!(facets.types.len(), 4);
    assert_eq!(facets.counterparties.iter().map(|f| f.count).sum::<u32>(), 3, "the draft is not counted");
}

#[test]
fn ten_thousand_contracts_page_and_filter_through_the_indexes() {
    let store = store();
    let a = member(&store, "Acme");
    for n in 0..10_000usize {
        let name = format!("Contract {n:05}.pdf");
        let expires = format!("20{:02}-{:02}-15", 27 + n % 10, 1 + n % 12);
        let counterparty = format!("Supplier {}", n % 50);
        add(
            &store,
            &a,
            n,
            Spec {
                name: &name,
                counterparty: Some(&counterparty),
                expires: Some(&expires),
                notice_days: Some(60),
                law: Some(if n % 2 == 0 { "New York" } else { "Delaware" }),
                ..Spec::default()
            },
        );
    }
    let last = store.contracts().list(&a, &ContractFilter { offset: 9_990, limit: 50, ..ContractFilter::default() });
    let last = last.unwrap();
    assert_eq!((last.total, last.rows.len()), (10_000, 10));
    assert_eq!(last.rows[9].name, "Contract 09999.pdf");
    let law = store
        .contracts()
        .list(&a, &ContractFilter { governing_law: Some("delaware".into()), limit: 1, ..ContractFilter::default() })
        .unwrap();
    assert_eq!(law.total, 5_000);
    let search = store
        .contracts()
        .list(&a, &ContractFilter { search: Some("supplier 7".into()), limit: 500, ..ContractFilter::default() })
        .unwrap();
    assert_eq!(search.total, 200, "Supplier 7 names 200 contracts");
}

#[test]
fn a_renewal_reminder_follows_the_notice_deadline_and_a_correction_moves_it() {
    let store = store();
    let a = member(&store, "Acme");
    let b = member(&store, "Globex");
    // Expires 31 March 2027 with 90 days' notice: notice by 31 December 2026, reminder due 1 November 2026.
    let id = add(
        &store,
        &a,
        1,
        Spec { name: "MSA.pdf", expires: Some("2027-03-31"), notice_days: Some(90), ..Spec::default() },
    );
    let none = add(&store, &a, 2, Spec { name: "No notice.pdf", expires: Some("2027-03-31"), ..Spec::default() });
    let draft = add(
        &store,
        &a,
        3,
        Spec { expires: Some("2027-03-31"), notice_days: Some(10), finalize: false, ..Spec::default() },
    );
    let r = store.contracts().reminder(&a, id).unwrap().expect("a finalized contract with a deadline has one");
    assert_eq!((r.notice_by, r.remind_on, r.started), (date("2026-12-31"), date("2026-11-01"), false));
    assert!(store.contracts().reminder(&a, none).unwrap().is_none(), "no notice period, no reminder");
    assert!(store.contracts().reminder(&a, draft).unwrap().is_none(), "not finalized, no reminder");
    assert!(store.contracts().reminder(&b, id).unwrap().is_none(), "another organization sees none");

    let worker = store.into_platform_worker("test");
    let (store, credential) = (worker.store(), worker.credential());
    // Today is 30 November 2026: the reminder is due.
    let due = store.contracts().due_reminders_for_worker(credential, date("2026-11-30"), 10).unwrap();
    assert_eq!(
        due.iter().map(|d| (d.document, d.org, d.name.as_str())).collect::<Vec<_>>(),
        [(id, a.org(), "MSA.pdf")]
    );
    assert!(store.contracts().due_reminders_for_worker(credential, date("2026-10-31"), 10).unwrap().is_empty());
    let run = pactwise_domain::RunId::new();
    assert!(store.contracts().reminder_started_for_worker(credential, id, date("2026-12-31"), run).unwrap());
    assert!(!store.contracts().reminder_started_for_worker(credential, id, date("2026-12-31"), run).unwrap(), "once");
    assert!(store.contracts().due_reminders_for_worker(credential, date("2026-11-30"), 10).unwrap().is_empty());
    assert_eq!(store.contracts().reminder(&a, id).unwrap().unwrap().run, Some(run));

    // A person corrects the notice period to 30 days: reopen (the reminder goes), finalize again (it comes back for
    // the new deadline, 1 March 2027, due 31 December 2026, scheduled again).
    store.reviews().reopen(&a, id, "the notice period is 30 days").unwrap();
    assert!(store.contracts().reminder(&a, id).unwrap().is_none());
    let fields = Extractions {
        expiration_date: field(Normalized::Date { iso: "2027-03-31".into() }),
        renewal_notice: field(Normalized::Duration { number: 30, unit: DurationUnit::Day }),
        ..Extractions::default()
    };
    let json = serde_json::to_value(&fields).unwrap();
    let f = Finalization {
        vendor: FinalVendor::Keep,
        counterparty: None,
        extractions: &json,
        outcome: ContractOutcome::default(),
    };
    store.reviews().finalize(&a, id, &f).unwrap();
    let r = store.contracts().reminder(&a, id).unwrap().unwrap();
    assert_eq!((r.notice_by, r.remind_on, r.started, r.run), (date("2027-03-01"), date("2026-12-31"), false, None));
    assert!(
        store.contracts().due_reminders_for_worker(credential, date("2026-11-30"), 10).unwrap().is_empty(),
        "moved"
    );
    assert_eq!(store.contracts().due_reminders_for_worker(credential, date("2026-12-31"), 10).unwrap().len(), 1);
    // A deleted contract's reminder never goes out.
    store.documents().soft_delete(&a, id).unwrap();
    assert!(store.contracts().due_reminders_for_worker(credential, date("2027-12-31"), 10).unwrap().is_empty());
}
