//! Document journeys through the api, as both shells use it: import, dedupe, list, delete, restore, bad input and
//! tenant isolation.

use pactwise_api::{Api, DocumentQuery, ImportOptions, ImportProgress, ImportStage, OrgScope};
use pactwise_domain::{DocumentId, ErrorCode, ImportOutcome, MediaType};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

fn quiet(_: ImportProgress) {}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

const PDF: &[u8] = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

async fn open(dir: &Path) -> (Api, OrgScope) {
    let api = Api::open(dir.join("data")).unwrap();
    let scope = api.local_session().await.unwrap();
    (api, scope)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries {
            let p = entry.unwrap().path();
            if p.is_dir() { out.extend(files_under(&p)) } else { out.push(p) }
        }
    }
    out
}

#[tokio::test]
async fn importing_the_same_file_twice_gives_one_document() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    let file = write(tmp.path(), "lease.pdf", PDF);
    let copy = write(tmp.path(), "lease-copy.pdf", PDF);
    let first = api.import_documents(&scope, vec![file.clone()], ImportOptions::default(), &quiet).await.unwrap();
    let second = api.import_documents(&scope, vec![file, copy], ImportOptions::default(), &quiet).await.unwrap();
    assert_eq!(first.imported[0].outcome, ImportOutcome::Created);
    assert_eq!(second.imported.len(), 2);
    assert!(second.imported.iter().all(|i| i.outcome == ImportOutcome::Existing));
    let docs = api.list_documents(&scope, DocumentQuery::default()).await.unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0].name, "lease.pdf");
    assert_eq!(docs[0].media_type, MediaType::Pdf);
    assert_eq!(docs[0].size, PDF.len() as u64);
    assert_eq!(files_under(&api.data_dir().blobs()).len(), 1, "one blob on disk");
}

#[tokio::test]
async fn delete_and_restore_round_trip_and_survive_reopening() {
    let tmp = tempfile::tempdir().unwrap();
    let id: DocumentId;
    {
        let (api, scope) = open(tmp.path()).await;
        let file = write(tmp.path(), "nda.txt", b"MUTUAL NON-DISCLOSURE AGREEMENT\n...");
        let report = api.import_documents(&scope, vec![file], ImportOptions::default(), &quiet).await.unwrap();
        id = report.imported[0].document.id;
        api.delete_document(&scope, id).await.unwrap();
        assert!(api.list_documents(&scope, DocumentQuery::default()).await.unwrap().is_empty());
        let trash = api.list_documents(&scope, DocumentQuery { deleted: true }).await.unwrap();
        assert_eq!(trash.iter().map(|d| d.id).collect::<Vec<_>>(), vec![id]);
    }
    let (api, scope) = open(tmp.path()).await;
    assert_eq!(api.list_documents(&scope, DocumentQuery { deleted: true }).await.unwrap().len(), 1);
    let restored = api.restore_document(&scope, id).await.unwrap();
    assert!(restored.deleted_at.is_none());
    assert_eq!(api.list_documents(&scope, DocumentQuery::default()).await.unwrap().len(), 1);
    assert_eq!(api.document_bytes(&scope, id).await.unwrap(), b"MUTUAL NON-DISCLOSURE AGREEMENT\n...");
}

#[tokio::test]
async fn bad_files_get_clear_errors_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    let folder = tmp.path().join("a-folder");
    std::fs::create_dir(&folder).unwrap();
    let empty = write(tmp.path(), "empty.pdf", b"");
    let big = write(tmp.path(), "big.pdf", &[b'%'; 2048]);
    let fake = write(tmp.path(), "fake.pdf", b"<html>not a pdf</html>");
    let missing = tmp.path().join("missing.pdf");
    let cases = [
        (folder, ErrorCode::FileUnreadable, "is a folder"),
        (empty, ErrorCode::FileEmpty, "is empty"),
        (big, ErrorCode::FileTooLarge, "over the import limit of 1.0 KB"),
        (fake, ErrorCode::UnsupportedFileType, "is not a PDF"),
        (missing, ErrorCode::FileUnreadable, "does not exist"),
    ];
    let paths = cases.iter().map(|(p, _, _)| p.clone()).collect();
    let report = api
        .import_documents(&scope, paths, ImportOptions { max_bytes: Some(1000), ..ImportOptions::default() }, &quiet)
        .await
        .unwrap();
    assert!(report.imported.is_empty());
    assert_eq!(report.failed.len(), cases.len());
    for ((path, code, words), failure) in cases.iter().zip(&report.failed) {
        assert_eq!(failure.file, path.display().to_string());
        assert_eq!(failure.error.code, *code, "{}", failure.error.message);
        assert!(failure.error.message.contains(words), "{:?} should say {words:?}", failure.error.message);
        assert!(failure.error.message.contains(&*path.file_name().unwrap().to_string_lossy()), "names the file");
    }
    assert!(api.list_documents(&scope, DocumentQuery::default()).await.unwrap().is_empty());
    assert!(api.list_documents(&scope, DocumentQuery { deleted: true }).await.unwrap().is_empty());
    assert!(files_under(&api.data_dir().blobs()).is_empty(), "no blob and no temporary file left behind");
}

#[tokio::test]
async fn a_bad_file_does_not_stop_the_good_ones_and_progress_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    let good = write(tmp.path(), "good.txt", b"MASTER SERVICES AGREEMENT\n\nThe Supplier shall perform the Services.");
    let empty = write(tmp.path(), "empty.txt", b"");
    let seen = Mutex::new(Vec::new());
    let record = |p: ImportProgress| seen.lock().unwrap().push((p.index, p.total, p.stage));
    let report = api.import_documents(&scope, vec![empty, good], ImportOptions::default(), &record).await.unwrap();
    assert_eq!((report.imported.len(), report.failed.len()), (1, 1));
    let mut seen = seen.into_inner().unwrap();
    seen.dedup();
    assert_eq!(
        seen,
        vec![
            (1, 2, ImportStage::Checking),
            (1, 2, ImportStage::Failed),
            (2, 2, ImportStage::Checking),
            (2, 2, ImportStage::Copying),
            (2, 2, ImportStage::Extracting),
            (2, 2, ImportStage::Reviewing),
            (2, 2, ImportStage::Done),
        ]
    );
}

#[tokio::test]
async fn organization_b_documents_are_invisible_to_organization_a_in_every_api_function() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, org_a) = open(tmp.path()).await;
    let (org_b, demo) = api.seed_demo().await.unwrap();
    assert_ne!(org_a.org(), org_b.org());
    assert_eq!(demo.documents, 3);
    let b_docs = api.list_documents(&org_b, DocumentQuery::default()).await.unwrap();
    let target = b_docs[0].id;

    // A sees none of B's documents, live or deleted.
    assert!(api.list_documents(&org_a, DocumentQuery::default()).await.unwrap().is_empty());
    assert!(api.list_documents(&org_a, DocumentQuery { deleted: true }).await.unwrap().is_empty());
    // Reading, deleting, restoring and fetching bytes of B's document by id answer "not found".
    assert_eq!(api.get_document(&org_a, target).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.document_bytes(&org_a, target).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.delete_document(&org_a, target).await.unwrap_err().code, ErrorCode::NotFound);
    api.delete_document(&org_b, target).await.unwrap();
    assert_eq!(api.restore_document(&org_a, target).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.list_documents(&org_b, DocumentQuery { deleted: true }).await.unwrap().len(), 1);
    api.restore_document(&org_b, target).await.unwrap();
    // Importing B's exact bytes in A makes A's own document; B's is unchanged.
    let same = write(tmp.path(), "same.txt", &api.document_bytes(&org_b, target).await.unwrap());
    let report = api.import_documents(&org_a, vec![same], ImportOptions::default(), &quiet).await.unwrap();
    assert_eq!(report.imported[0].outcome, ImportOutcome::Created);
    assert_ne!(report.imported[0].document.id, target);
    assert_eq!(api.list_documents(&org_b, DocumentQuery::default()).await.unwrap().len(), 3);
    assert_eq!(api.session_info(&org_a).await.unwrap().org_name, "My organization");
}

#[tokio::test]
async fn seeding_the_demo_twice_changes_nothing_the_second_time() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, _) = open(tmp.path()).await;
    let (_, first) = api.seed_demo().await.unwrap();
    let (scope, second) = api.seed_demo().await.unwrap();
    assert_eq!((first.created, first.documents), (3, 3));
    assert_eq!((second.created, second.documents), (0, 3));
    assert_eq!(api.local_session().await.unwrap().org(), scope.org(), "the demo organization is now current");
}

#[tokio::test]
async fn a_database_from_a_newer_pactwise_is_refused_with_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    drop(Api::open(data.clone()).unwrap());
    let db = rusqlite::Connection::open(data.join("pactwise.sqlite3")).unwrap();
    db.pragma_update(None, "user_version", 999).unwrap();
    drop(db);
    let err = Api::open(data).err().expect("must refuse");
    assert_eq!(err.code, ErrorCode::SchemaTooNew);
    assert!(err.message.contains("newer version"), "{}", err.message);
}

/// Both shells run these futures on multi-threaded runtimes; this fails to compile if one stops being `Send`.
#[allow(dead_code)]
fn api_futures_are_send(api: &Api, scope: &OrgScope) {
    fn send<T: Send>(_: T) {}
    send(api.import_documents(scope, vec![], ImportOptions::default(), &quiet));
    send(api.list_documents(scope, DocumentQuery::default()));
    send(api.delete_document(scope, DocumentId::new()));
    send(api.restore_document(scope, DocumentId::new()));
    send(api.document_bytes(scope, DocumentId::new()));
    send(api.session_info(scope));
    send(api.local_session());
    send(api.seed_demo());
}

#[tokio::test]
async fn imported_pages_are_stored_with_the_document_and_extracted_once() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    let text = "LEASE\n\nThe Tenant shall pay the Rent monthly in advance.\n\n".repeat(120);
    let file = write(tmp.path(), "lease.txt", text.as_bytes());
    let first = api.import_documents(&scope, vec![file.clone()], ImportOptions::default(), &quiet).await.unwrap();
    let imported = &first.imported[0];
    assert!(imported.extraction_error.is_none());
    let pages = imported.page_count.expect("pages stored");
    assert!(pages >= 2);
    let stored = api.document_pages(&scope, imported.document.id).await.unwrap().expect("extraction stored");
    assert_eq!(stored.pages.len() as u32, pages);
    assert!(stored.pages.iter().all(|p| p.synthetic));
    assert_eq!(stored.content_hash, imported.document.content_hash);
    // The second import finds the stored pages: no "extracting" step.
    let stages = Mutex::new(Vec::new());
    let record = |p: ImportProgress| stages.lock().unwrap().push(p.stage);
    let again = api.import_documents(&scope, vec![file], ImportOptions::default(), &record).await.unwrap();
    assert_eq!(again.imported[0].page_count, Some(pages));
    assert!(!stages.into_inner().unwrap().contains(&ImportStage::Extracting));
}

#[tokio::test]
async fn a_document_whose_pages_cannot_be_read_is_kept_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    let file = write(tmp.path(), "damaged.pdf", PDF);
    let report = api.import_documents(&scope, vec![file], ImportOptions::default(), &quiet).await.unwrap();
    let imported = &report.imported[0];
    assert_eq!(imported.page_count, None);
    let error = imported.extraction_error.as_ref().expect("the reason is reported");
    assert!(
        matches!(error.code, ErrorCode::FileCorrupt | ErrorCode::FileEmpty | ErrorCode::DependencyMissing),
        "{error:?}"
    );
    assert_eq!(api.list_documents(&scope, DocumentQuery::default()).await.unwrap().len(), 1, "the document is kept");
    assert!(api.document_pages(&scope, imported.document.id).await.unwrap().is_none());
}

#[tokio::test]
async fn another_organizations_pages_are_not_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, org_a) = open(tmp.path()).await;
    let (org_b, _) = api.seed_demo().await.unwrap();
    let b_doc = api.list_documents(&org_b, DocumentQuery::default()).await.unwrap()[0].id;
    assert!(api.document_pages(&org_b, b_doc).await.unwrap().is_some(), "demo documents have their pages stored");
    assert_eq!(api.document_pages(&org_a, b_doc).await.unwrap_err().code, ErrorCode::NotFound);
}

fn contract_text() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/demo/master-services-agreement-northwind-fabrikam.txt"),
    )
    .unwrap()
}

/// Every live document of the organization has its pages (none is visible half-imported).
async fn every_live_document_has_pages(api: &Api, scope: &OrgScope) {
    for doc in api.list_documents(scope, DocumentQuery::default()).await.unwrap() {
        assert!(api.document_pages(scope, doc.id).await.unwrap().is_some(), "{} is live without its pages", doc.name);
    }
}

#[tokio::test]
async fn an_import_stopped_while_its_pages_are_read_leaves_no_half_document_and_importing_again_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    // A long text (many synthetic pages), so reading it takes a moment.
    let file = write(tmp.path(), "msa.txt", contract_text().repeat(40).as_bytes());
    let reading = std::sync::Arc::new(tokio::sync::Notify::new());
    let told = reading.clone();
    let progress = move |p: ImportProgress| {
        if p.stage == ImportStage::Extracting {
            told.notify_one();
        }
    };
    // The injected failure point: the import is dropped (as a killed process stops) once page reading has begun.
    tokio::select! {
        biased;
        _ = reading.notified() => {}
        _ = api.import_documents(&scope, vec![file.clone()], ImportOptions::default(), &progress) => {
            panic!("the import finished before it could be stopped")
        }
    }
    every_live_document_has_pages(&api, &scope).await;

    let again = api.import_documents(&scope, vec![file], ImportOptions::default(), &quiet).await.unwrap();
    let imported = &again.imported[0];
    assert!(imported.page_count.unwrap() > 1, "{imported:?}");
    assert!(imported.extraction_error.is_none() && imported.review_error.is_none(), "{imported:?}");
    assert!(imported.route.is_some(), "the review ran");
    assert_ne!(imported.route_reason.as_deref(), Some("ocr_failed"), "pages were read: OCR did not fail");
    let review = api.document_review(&scope, imported.document.id).await.unwrap();
    assert_ne!(review.gate.as_ref().and_then(|g| g.reason.as_deref()), Some("ocr_failed"));
    every_live_document_has_pages(&api, &scope).await;
}

#[tokio::test]
async fn a_document_whose_import_stopped_before_its_pages_or_review_is_finished_at_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let id;
    {
        // What a process killed between the document row and its pages left behind (before this was one
        // transaction): the file stored, the row written, no pages, no review.
        let (api, scope) = open(tmp.path()).await;
        let bytes = contract_text();
        let blob = pactwise_store::BlobStore::new(api.data_dir().blobs())
            .put_reader(&mut bytes.as_bytes(), 10_000_000)
            .unwrap();
        let store =
            pactwise_store::Store::open(&api.data_dir().database(), std::sync::Arc::new(pactwise_domain::SystemClock))
                .unwrap();
        let scope_b = store.sessions().open(scope.session()).unwrap();
        let new = pactwise_store::NewDocument {
            name: "msa.txt".into(),
            media_type: MediaType::Txt,
            size: blob.size,
            content_hash: blob.hash,
        };
        id = store.documents().record(&scope_b, &new).unwrap().0.id;
        assert!(api.document_pages(&scope, id).await.unwrap().is_none());
    }
    // The next start of the app (or the next import) finishes it.
    let api = Api::open(data).unwrap();
    let scope = api.local_session().await.unwrap();
    assert_eq!(api.resume_imports(&scope).await.unwrap(), [id]);
    assert!(!api.document_pages(&scope, id).await.unwrap().expect("its pages are read now").pages.is_empty());
    let review = api.document_review(&scope, id).await.unwrap();
    let gate = review.gate.expect("the review ran");
    assert_ne!(gate.reason.as_deref(), Some("ocr_failed"));
    assert!(api.resume_imports(&scope).await.unwrap().is_empty(), "nothing is resumed twice");
}

#[tokio::test]
async fn a_protected_pdf_imports_with_its_password_which_is_kept_nowhere() {
    let pdfium = pactwise_extract::ExtractConfig::from_env().pdfium_path;
    if !pactwise_testkit::library("libpdfium (a protected PDF)", &pdfium) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    let password = "pw-of-the-protected-fixture";
    let file = write(
        tmp.path(),
        "protected.pdf",
        &pactwise_extract::fixtures::protected_pdf(&["SUPPLY AGREEMENT", "The supplier shall deliver."], password),
    );
    let without = api.import_documents(&scope, vec![file.clone()], ImportOptions::default(), &quiet).await.unwrap();
    let error = without.imported[0].extraction_error.as_ref().expect("it needs its password");
    assert_eq!(error.code, ErrorCode::FileEncrypted);
    assert!(error.message.contains("--password"), "{}", error.message);

    let options = ImportOptions { password: Some(password.to_string()), ..ImportOptions::default() };
    assert!(!format!("{options:?}").contains(password), "the password is not in debug output");
    let with = api.import_documents(&scope, vec![file], options, &quiet).await.unwrap();
    let imported = &with.imported[0];
    assert_eq!(imported.page_count, Some(1), "{imported:?}");
    assert_ne!(imported.route_reason.as_deref(), Some("ocr_failed"), "the review ran again on the pages");
    let text = api.document_pages(&scope, imported.document.id).await.unwrap().unwrap().pages[0].text.clone();
    assert!(text.contains("SUPPLY AGREEMENT"), "{text}");
    api.flush();
    for path in files_under(&tmp.path().join("data")) {
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes.windows(password.len()).any(|w| w == password.as_bytes()),
            "{} holds the password",
            path.display()
        );
    }
}

#[tokio::test]
async fn a_page_image_is_rendered_once_then_read_from_the_cache_and_only_for_the_documents_organization() {
    let pdfium = pactwise_extract::ExtractConfig::from_env().pdfium_path;
    if !pactwise_testkit::library("libpdfium (page images)", &pdfium) {
        return;
    }
    use pactwise_extract::fixtures::{FixturePage, build_pdf};
    let tmp = tempfile::tempdir().unwrap();
    let (api, scope) = open(tmp.path()).await;
    let lines =
        |n: u32| FixturePage::Text(vec![format!("{n}. SERVICES"), "The Supplier shall perform the services.".into()]);
    let file = write(tmp.path(), "two-pages.pdf", &build_pdf(&pdfium, &[lines(1), lines(2)]).unwrap());
    let report = api.import_documents(&scope, vec![file], ImportOptions::default(), &quiet).await.unwrap();
    let doc = &report.imported[0].document;

    let png = api.page_image(&scope, doc.id, 2, 1.0).await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG of the page");
    // The render is kept under the document's hash; asked again, the page is read from there (a marker proves it),
    // without the document being read.
    let cached = api.data_dir().cache().join("renders").join(&doc.content_hash).join("p2-s1000.png");
    assert_eq!(std::fs::read(&cached).unwrap(), png);
    std::fs::write(&cached, b"from the cache").unwrap();
    assert_eq!(api.page_image(&scope, doc.id, 2, 1.0).await.unwrap(), b"from the cache");

    // Another organization gets neither the render nor a fresh one; a page or zoom out of range is said so.
    let (other, _) = api.seed_demo().await.unwrap();
    assert_eq!(api.page_image(&other, doc.id, 2, 1.0).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.page_image(&other, doc.id, 1, 1.0).await.unwrap_err().code, ErrorCode::NotFound);
    assert_eq!(api.page_image(&scope, doc.id, 2, 9.0).await.unwrap_err().code, ErrorCode::InvalidInput);
    let beyond = api.page_image(&scope, doc.id, 3, 1.0).await.unwrap_err();
    assert!(beyond.message.contains('3'), "{beyond:?}");
}
