//! The contract repository across an organization's desktops, through a real sync service on loopback: a contract
//! finalized on one desktop reaches another (with its fields, its stamp and its outcome; each desktop derives the
//! expiration and notice deadline itself), even when the finalize arrives before the document's file; a reopen and
//! a corrected notice period move the deadline there too; a finalize on two desktops before they synced keeps both
//! as events in both audit logs and the later stamp wins per field; another organization sees none of it; malformed
//! or forged contract records from another device are skipped or re-stamped on their own.

use chrono::NaiveDate;
use pactwise_api::{
    Api, ApiOptions, ContractQuery, CorrectionInput, FinalizeInput, ImportOptions, MemorySyncTokens, OrgScope,
    SignInInput, catalog,
};
use pactwise_domain::{Clock, DocumentId, ItemStatus, Quote, RiskLevel, Role, SystemClock};
use pactwise_model::InMemoryApiKeySource;
use pactwise_sync_server::{AppState, ServerConfig, admin, sqlite::SqliteStorage};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PASSWORD: &str = "a-long-password-for-sync";

fn licence() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/demo/software-license-northwind-tailspin.txt")
}

fn date(iso: &str) -> NaiveDate {
    NaiveDate::parse_from_str(iso, "%Y-%m-%d").unwrap()
}

/// Organization `alpha`: Ann (admin), Bob (reviewer), Dave (admin); `charlie`: Carol.
struct Service {
    endpoint: String,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Service {
    async fn start() -> Service {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(SqliteStorage::open(&dir.path().join("sync.sqlite3")).unwrap());
        let now = SystemClock.now();
        admin::create_org(storage.as_ref(), "alpha", "Alpha LLP", now).unwrap();
        for (email, role) in [
            ("ann@alpha.example", Role::Admin),
            ("bob@alpha.example", Role::Reviewer),
            ("dave@alpha.example", Role::Admin),
        ] {
            admin::create_user(storage.as_ref(), "alpha", email, PASSWORD, role, now).unwrap();
        }
        admin::create_org(storage.as_ref(), "charlie", "Charlie GmbH", now).unwrap();
        admin::create_user(storage.as_ref(), "charlie", "carol@charlie.example", PASSWORD, Role::Owner, now).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let state = AppState::new(storage, Arc::new(SystemClock), ServerConfig::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(pactwise_sync_server::serve(listener, state, async move {
            let _ = stopped.await;
        }));
        Service { endpoint, _dir: dir, stop: Some(stop) }
    }

    fn sign_in(&self, org: &str, email: &str) -> SignInInput {
        SignInInput { server: self.endpoint.clone(), org: org.into(), email: email.into(), password: PASSWORD.into() }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

struct Desktop {
    api: Api,
    scope: OrgScope,
    root: PathBuf,
}

async fn desktop(service: &Service, dir: &Path, org: &str, email: &str) -> Desktop {
    let options = ApiOptions {
        keys: Arc::new(InMemoryApiKeySource::empty()),
        sync_tokens: Arc::new(MemorySyncTokens::default()),
        ..ApiOptions::default()
    };
    let root = dir.join(email);
    let api = Api::open_with(root.clone(), options).unwrap();
    let scope = api.sync_sign_in(service.sign_in(org, email)).await.unwrap();
    Desktop { api, scope, root }
}

impl Desktop {
    async fn sync(&self) {
        self.api.sync_now().await.unwrap();
    }

    async fn import(&self) -> DocumentId {
        let report =
            self.api.import_documents(&self.scope, vec![licence()], ImportOptions::default(), &|_| {}).await.unwrap();
        report.imported[0].document.id
    }

    /// Confirms every critical item as the pipeline answered it, then finalizes (with a new vendor, if named).
    async fn confirm_and_finalize(&self, id: DocumentId, vendor: Option<&str>) {
        let review = self.api.document_review(&self.scope, id).await.unwrap();
        let t = catalog().unwrap().contract_type(&review.contract_type.as_ref().unwrap().id).unwrap().clone();
        for item in t.items.iter().filter(|i| i.risk == RiskLevel::Critical) {
            if review.items.iter().any(|r| r.id == item.id && r.method == "person") {
                continue;
            }
            let input = CorrectionInput {
                item_id: item.id.clone(),
                confirm: true,
                status: None,
                quote: None,
                note: None,
                acknowledge_warnings: true,
            };
            self.api.correct_item(&self.scope, id, input).await.unwrap();
        }
        let input = FinalizeInput { vendor_id: None, new_vendor_name: vendor.map(str::to_owned) };
        self.api.finalize_review(&self.scope, id, input).await.unwrap();
    }

    /// The notice period was misread: 45 days.
    async fn correct_notice_to_45_days(&self, id: DocumentId) {
        let input = CorrectionInput {
            item_id: "license.term.nonrenewal_notice".into(),
            confirm: false,
            status: Some(ItemStatus::Present),
            quote: Some(Quote { text: "payable within forty-five (45) days".into(), page: 1 }),
            note: Some("the notice period is 45 days".into()),
            acknowledge_warnings: true,
        };
        self.api.correct_item(&self.scope, id, input).await.unwrap();
    }

    async fn contracts(&self) -> Vec<pactwise_api::ContractRow> {
        self.api.contract_list(&self.scope, ContractQuery::default()).await.unwrap().items
    }

    /// The audit log's finalize entries for a document: (actor, whether its values were kept here).
    fn finalizes(&self, id: DocumentId) -> Vec<(String, Option<bool>)> {
        let conn = rusqlite::Connection::open(self.root.join("pactwise.sqlite3")).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT actor_id, details FROM audit_log WHERE action = 'review.finalize' AND entity_id = ?1
                 ORDER BY seq",
            )
            .unwrap();
        stmt.query_map([id.to_string()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .unwrap()
            .map(|row| {
                let (actor, details) = row.unwrap();
                let details: serde_json::Value = serde_json::from_str(&details).unwrap_or_default();
                (actor, details.get("kept").and_then(serde_json::Value::as_bool))
            })
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalized_contract_reaches_the_other_desktop_and_a_corrected_notice_period_moves_its_deadline_there() {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let ann = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let id = ann.import().await;
    ann.confirm_and_finalize(id, Some("Tailspin Software")).await;
    ann.sync().await;

    // Bob's desktop has never seen the document: the finalize arrives in the same round as the document, before
    // its file, waits, and is laid over the contract when the document is read here.
    let bob = desktop(&service, tmp.path(), "alpha", "bob@alpha.example").await;
    let mut repository = bob.api.watch_shared_records();
    repository.mark_unchanged();
    let got = bob.api.sync_now().await.unwrap();
    assert_eq!(got.documents_imported, 1);
    assert!(repository.has_changed().unwrap(), "Bob's windows are told the repository changed (Contracts reloads)");
    let (on_ann, on_bob) = (ann.contracts().await, bob.contracts().await);
    assert_eq!(on_bob.len(), 1, "the finalized contract is in Bob's repository");
    let (a, b) = (&on_ann[0], &on_bob[0]);
    assert_eq!(b.document, id);
    assert_eq!(
        (b.type_id.as_str(), b.expires_on, b.notice_by),
        ("license", Some(date("2029-08-01")), Some(date("2029-05-03")))
    );
    assert_eq!((&b.counterparty, &b.governing_law, &b.risk), (&a.counterparty, &a.governing_law, &a.risk));
    assert_eq!((b.red_flags, b.critical_gaps, b.finalized_at), (a.red_flags, a.critical_gaps, a.finalized_at));
    let detail = bob.api.contract_detail(&bob.scope, id).await.unwrap();
    assert_eq!(detail.finalized_by.as_deref(), Some("ann@alpha.example"), "finalized by Ann, as the service stamped");
    // The vendor Ann linked arrived before Bob's pipeline read the document; his pipeline did not replace it.
    assert_eq!((b.vendor.as_deref(), detail.vendor_link.as_deref()), (Some("Tailspin Software"), Some("person")));
    let vendors = bob.api.vendors(&bob.scope).await.unwrap();
    let ann_vendors = ann.api.vendors(&ann.scope).await.unwrap();
    assert!(vendors.iter().any(|v| v.name == "Tailspin Software"), "{vendors:?}");
    let tailspin =
        |vs: &[pactwise_store::Vendor]| vs.iter().find(|v| v.name == "Tailspin Software").unwrap().id.clone();
    assert_eq!(tailspin(&vendors), tailspin(&ann_vendors), "one vendor, the same on both desktops");
    let review = bob.api.document_review(&bob.scope, id).await.unwrap();
    assert!(review.finalized_at.is_some(), "Bob's review is finalized too: it takes no correction");
    assert_eq!(got.pushed, 0, "nothing received is queued back");

    // Ann reopens, corrects the notice period and finalizes again: Bob's deadline moves (derived on his desktop).
    ann.api.reopen_review(&ann.scope, id, "the notice period was misread".into()).await.unwrap();
    ann.correct_notice_to_45_days(id).await;
    // Her reopen and correction alone tell Bob's windows (a review he has open reloads) and show there.
    ann.sync().await;
    repository.mark_unchanged();
    bob.sync().await;
    assert!(repository.has_changed().unwrap(), "a correction from another desktop tells Bob's windows");
    let seen = bob.api.document_review(&bob.scope, id).await.unwrap();
    assert!(seen.finalized_at.is_none(), "reopened on Ann's desktop");
    let notice = seen.items.iter().find(|i| i.id == "license.term.nonrenewal_notice").unwrap();
    assert_eq!(
        notice.quote.as_deref(),
        Some("payable within forty-five (45) days"),
        "Ann's correction, on Bob's desktop"
    );
    ann.api.finalize_review(&ann.scope, id, FinalizeInput::default()).await.unwrap();
    ann.sync().await;
    bob.sync().await;
    let moved = bob.contracts().await;
    assert_eq!(moved[0].notice_by, Some(date("2029-06-17")), "45 days before 1 August 2029, derived on Bob's desktop");
    assert_eq!(ann.contracts().await[0].notice_by, moved[0].notice_by);

    // A reopen alone takes the contract out of Bob's repository too.
    ann.api.reopen_review(&ann.scope, id, "one more look".into()).await.unwrap();
    ann.sync().await;
    bob.sync().await;
    assert!(bob.contracts().await.is_empty(), "reopened on Ann's desktop: not a contract on Bob's");

    // Another organization's desktop never sees any of it.
    let carol = desktop(&service, tmp.path(), "charlie", "carol@charlie.example").await;
    let theirs = carol.api.sync_now().await.unwrap();
    assert_eq!((theirs.pulled, theirs.documents_imported), (0, 0));
    assert!(carol.contracts().await.is_empty());
    assert!(carol.api.contract_detail(&carol.scope, id).await.is_err());
    assert!(carol.api.vendors(&carol.scope).await.unwrap().is_empty(), "nor Alpha's vendors");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalize_on_two_desktops_before_they_synced_keeps_both_and_the_later_stamp_wins_per_field() {
    two_finalizes(false).await;
}

/// The same, when the later finalize reaches the service first: the earlier desktop's own change comes back after
/// the later one and is neither taken nor audited twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_finalizes_converge_whichever_desktop_pushes_first() {
    two_finalizes(true).await;
}

async fn two_finalizes(later_pushes_first: bool) {
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let ann = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let bob = desktop(&service, tmp.path(), "alpha", "bob@alpha.example").await;
    let id = ann.import().await;
    ann.sync().await;
    bob.sync().await;

    // Offline from each other: Ann finalizes as read, linking a vendor; Bob corrects the notice period and
    // finalizes later, keeping his pipeline's link.
    ann.confirm_and_finalize(id, Some("Tailspin Software")).await;
    bob.correct_notice_to_45_days(id).await;
    bob.confirm_and_finalize(id, None).await;
    assert_eq!(ann.contracts().await[0].notice_by, Some(date("2029-05-03")));
    assert_eq!(bob.contracts().await[0].notice_by, Some(date("2029-06-17")));

    if later_pushes_first {
        bob.sync().await;
        ann.sync().await;
        bob.sync().await;
    } else {
        ann.sync().await;
        bob.sync().await;
        ann.sync().await;
    }

    // Both converge on Bob's later finalize, field by field, and each desktop derived the same deadline.
    let (a, b) = (ann.contracts().await, bob.contracts().await);
    assert_eq!((a.len(), b.len()), (1, 1));
    assert_eq!(a[0].notice_by, Some(date("2029-06-17")));
    assert_eq!(a[0], b[0], "the same contract on both desktops");
    assert_eq!(b[0].vendor.as_deref(), Some("Tailspin Software"), "Ann's link replaced Bob's automatic one");
    for d in [&ann, &bob] {
        let detail = d.api.contract_detail(&d.scope, id).await.unwrap();
        assert_eq!(detail.finalized_by.as_deref(), Some("bob@alpha.example"));
    }

    // Both finalizes are events in both audit logs: Ann's own and Bob's (kept) on Ann's; Bob's own and Ann's (not
    // kept: the later stamp won) on Bob's.
    let (ann_user, bob_user) = (ann.scope.user().to_string(), bob.scope.user().to_string());
    assert_eq!(ann.finalizes(id), [(ann_user.clone(), None), (bob_user.clone(), Some(true))]);
    assert_eq!(bob.finalizes(id), [(bob_user, None), (ann_user, Some(false))]);
}

/// What another device pushes about contracts is untrusted: an unknown field, a derived column, a malformed stamp,
/// a contract of a document nobody has, each on its own; a stamp naming someone else is re-stamped with the pushing
/// device's user. A real finalize behind them still applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_or_forged_contract_records_are_skipped_or_restamped_on_their_own() {
    use pactwise_sync::wire::{ChangeBody, PushRequest, SignInRequest};
    use pactwise_sync::{Change, DeviceToken, Hlc, HttpApi, SyncedModel};
    use serde_json::{Value, json};
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let ann = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let bob = desktop(&service, tmp.path(), "alpha", "bob@alpha.example").await;
    let id = ann.import().await;
    ann.sync().await;
    bob.sync().await;

    let sign_in = SignInRequest {
        org: "alpha".into(),
        email: "dave@alpha.example".into(),
        password: PASSWORD.into(),
        device_name: "a modified client".into(),
    };
    let token = HttpApi::new(&service.endpoint, None).unwrap().sign_in(&sign_in).await.unwrap().token;
    let raw = HttpApi::new(&service.endpoint, Some(DeviceToken::new(token))).unwrap();
    let node = uuid::Uuid::now_v7();
    let early = SystemClock.now().timestamp_millis() as u64 - 60_000;
    let change = |n: u32, record: &str, fields: Value| Change {
        id: uuid::Uuid::now_v7(),
        model: SyncedModel::Contract,
        record_id: record.into(),
        hlc: Hlc { wall_ms: early, counter: n, node },
        body: ChangeBody::Fields { fields: fields.as_object().unwrap().clone().into_iter().collect() },
    };
    let doc = id.to_string();
    let at = "2026-01-01T00:00:00Z";
    let changes = vec![
        change(1, &doc, json!({"expires_on": "2099-01-01"})),
        change(2, &doc, json!({"type_id": "license", "finalized_by": "someone"})),
        change(3, &doc, json!({"finalized": {"by": "nobody", "at": at}})),
        change(4, &doc, json!({"field.expiration_date": 20990101})),
        change(5, "not-a-document", json!({"type_id": "license"})),
        change(6, &DocumentId::new().to_string(), json!({"type_id": "nda", "finalized": null})),
        // Well formed, but naming Ann as the finalizer: the stamp is Dave's (the token's user).
        change(7, &doc, json!({"finalized": {"by": ann.scope.user().to_string(), "by_name": "Ann", "at": at}})),
    ];
    let pushed = raw.push(&PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes }).await.unwrap();
    assert!(pushed.results.iter().all(|r| r.refused.is_none()), "the service stores them: {pushed:?}");

    bob.sync().await;
    let forged = bob.api.contract_detail(&bob.scope, id).await.unwrap();
    assert_eq!(forged.finalized_by.as_deref(), Some("dave@alpha.example"), "stamped with the pushing device's user");
    assert_eq!(forged.contract.expires_on, Some(date("2029-08-01")), "derived from the contract's own fields");
    assert!(bob.api.sync_status().await.unwrap().last_error.is_none(), "nothing blocked the sync");

    // Ann's real finalize, later, wins over the forged stamp and reaches Bob behind the malformed changes.
    ann.confirm_and_finalize(id, Some("Tailspin Software")).await;
    ann.sync().await;
    bob.sync().await;
    let real = bob.api.contract_detail(&bob.scope, id).await.unwrap();
    assert_eq!(real.finalized_by.as_deref(), Some("ann@alpha.example"));
    assert_eq!(real.contract.notice_by, Some(date("2029-05-03")));
    assert_eq!(bob.contracts().await.len(), 1, "only the real contract");

    // A later automatic link from another device never replaces Ann's; malformed vendors are skipped alone.
    let globex = pactwise_store::vendor_id_for(&ann.scope.org().to_string(), "globex");
    let now = SystemClock.now().timestamp_millis() as u64 + 60_000;
    let later = |n: u32, model: SyncedModel, record: &str, fields: Value| Change {
        id: uuid::Uuid::now_v7(),
        model,
        record_id: record.into(),
        hlc: Hlc { wall_ms: now, counter: n, node },
        body: ChangeBody::Fields { fields: fields.as_object().unwrap().clone().into_iter().collect() },
    };
    let changes = vec![
        later(1, SyncedModel::Vendor, "not-a-vendor-id", json!({"name": "Initech"})),
        later(2, SyncedModel::Vendor, &uuid::Uuid::now_v7().to_string(), json!({"name": "\u{7}"})),
        later(3, SyncedModel::Vendor, &uuid::Uuid::now_v7().to_string(), json!({"normalized_name": "initech"})),
        later(4, SyncedModel::Vendor, &globex, json!({"name": "Globex", "deleted_at": null})),
        later(5, SyncedModel::Contract, &doc, json!({"vendor": {"id": globex, "link": "auto"}})),
        later(6, SyncedModel::Contract, &doc, json!({"vendor": {"id": globex, "link": "robot"}})),
    ];
    let pushed = raw.push(&PushRequest { idempotency_key: uuid::Uuid::now_v7(), changes }).await.unwrap();
    assert!(pushed.results.iter().all(|r| r.refused.is_none()), "the service stores them: {pushed:?}");
    for d in [&ann, &bob] {
        d.sync().await;
        let detail = d.api.contract_detail(&d.scope, id).await.unwrap();
        assert_eq!(detail.contract.vendor.as_deref(), Some("Tailspin Software"), "a person's link stays");
        assert_eq!(detail.vendor_link.as_deref(), Some("person"));
        let names: Vec<String> = d.api.vendors(&d.scope).await.unwrap().into_iter().map(|v| v.name).collect();
        assert!(names.contains(&"Globex".to_string()) && !names.iter().any(|n| n.contains("Initech")), "{names:?}");
        assert!(d.api.sync_status().await.unwrap().last_error.is_none());
    }
}

/// Vendor records travel field by field: a second record with its alias and tax id reaches the other desktop as a
/// duplicate; then, offline on both, Ann merges the records while Dave blocks the merged-away one and renames the
/// kept one. Whatever order they sync in, both desktops end with the merge (a later status never undoes it), Dave's
/// name, and the contract's link moved to the vendor kept. Another organization sees none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vendor_records_reach_the_other_desktop_field_by_field_and_a_merge_is_final_on_both() {
    use pactwise_api::{VendorIdentifier, VendorInput};
    use pactwise_domain::VendorStatus;
    let service = Service::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let ann = desktop(&service, tmp.path(), "alpha", "ann@alpha.example").await;
    let dave = desktop(&service, tmp.path(), "alpha", "dave@alpha.example").await;
    let id = ann.import().await;
    ann.confirm_and_finalize(id, Some("Tailspin Software")).await;
    let input = VendorInput {
        name: Some("Tailspin Software Inc.".into()),
        aliases: Some(vec!["TSW".into()]),
        identifiers: Some(vec![VendorIdentifier { kind: "tax id".into(), value: "US 12-3456789".into() }]),
    };
    let second = ann.api.vendor_create(&ann.scope, input).await.unwrap();
    ann.sync().await;
    dave.sync().await;

    let first = ann.api.vendor_list(&ann.scope, true).await.unwrap();
    let first = first.iter().find(|v| v.name == "Tailspin Software").unwrap().id.clone();
    assert_ne!(first, second.id, "a second record for the same name: a duplicate, not a refusal");
    let on_dave = dave.api.vendor_list(&dave.scope, true).await.unwrap();
    let copy = on_dave.iter().find(|v| v.id == second.id).expect("Ann's second record is on Dave's desktop");
    assert_eq!((copy.name.as_str(), copy.aliases.clone()), ("Tailspin Software Inc.", vec!["TSW".to_string()]));
    assert_eq!(copy.identifiers.len(), 1);
    assert_eq!((copy.identifiers[0].kind.as_str(), copy.identifiers[0].value.as_str()), ("tax_id", "US 12-3456789"));
    assert!(on_dave.iter().any(|v| v.id == first), "and the vendor the finalize created, under the same id");
    let groups = dave.api.vendor_duplicates(&dave.scope).await.unwrap();
    assert!(
        groups.iter().any(|g| g.vendors.iter().any(|v| v.id == first) && g.vendors.iter().any(|v| v.id == second.id)),
        "Dave's desktop shows them as duplicates: {groups:?}"
    );

    // Offline on both: Ann merges; afterwards Dave blocks the record she merged away and renames the kept one.
    ann.api.vendor_merge(&ann.scope, second.id.clone(), first.clone()).await.unwrap();
    dave.api
        .vendor_set_status(&dave.scope, first.clone(), VendorStatus::Blocked, "on a sanctions list".into())
        .await
        .unwrap();
    let rename = VendorInput { name: Some("Tailspin Software Incorporated".into()), ..VendorInput::default() };
    dave.api.vendor_edit(&dave.scope, second.id.clone(), rename).await.unwrap();
    assert_eq!(dave.contracts().await[0].vendor.as_deref(), Some("Tailspin Software"), "not merged on Dave's yet");
    dave.sync().await;
    ann.sync().await;
    dave.sync().await;

    for (who, d) in [("Ann", &ann), ("Dave", &dave)] {
        let vs = d.api.vendor_list(&d.scope, true).await.unwrap();
        let away = vs.iter().find(|v| v.id == first).unwrap();
        assert_eq!(
            (away.status, away.merged_into.as_deref()),
            (VendorStatus::Merged, Some("Tailspin Software Incorporated")),
            "{who}: the merge holds (into the kept record, by its name); Dave's later status did not undo it"
        );
        let kept = vs.iter().find(|v| v.id == second.id).unwrap();
        assert_eq!(kept.name, "Tailspin Software Incorporated", "{who}: Dave's rename, a field of its own, is kept");
        assert_eq!(kept.aliases, vec!["TSW".to_string()], "{who}");
        assert_eq!(
            d.contracts().await[0].vendor.as_deref(),
            Some("Tailspin Software Incorporated"),
            "{who}: the contract's link follows the merge"
        );
    }

    let carol = desktop(&service, tmp.path(), "charlie", "carol@charlie.example").await;
    carol.sync().await;
    assert!(carol.api.vendor_list(&carol.scope, true).await.unwrap().is_empty(), "another organization sees none");
    assert!(carol.api.vendor_detail(&carol.scope, second.id.clone()).await.is_err());
}
