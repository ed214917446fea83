//! Demo data: an organization with a few contracts we wrote, for first looks and for `make run`.

use crate::session::open_local;
use crate::{Api, ApiError};
use pactwise_domain::{ImportOutcome, MediaType, Role};
use pactwise_store::{NewDocument, OrgScope};
use serde::{Deserialize, Serialize};

pub const DEMO_ORGANIZATION: &str = "Northwind Traders (demo)";

const DEMO_DOCUMENTS: &[(&str, &str)] = &[
    ("mutual-nda-northwind-contoso.txt", include_str!("../../../fixtures/demo/mutual-nda-northwind-contoso.txt")),
    (
        "master-services-agreement-northwind-fabrikam.txt",
        include_str!("../../../fixtures/demo/master-services-agreement-northwind-fabrikam.txt"),
    ),
    (
        "software-license-northwind-tailspin.txt",
        include_str!("../../../fixtures/demo/software-license-northwind-tailspin.txt"),
    ),
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct DemoReport {
    pub organization: String,
    /// Documents of the demo organization after seeding.
    pub documents: u32,
    /// Documents created by this run (0 when the demo was already seeded).
    pub created: u32,
}

impl Api {
    /// Seeds the demo organization (idempotent), makes the local user its owner and switches this installation's
    /// session to it. Returns the new session's scope with the report.
    pub async fn seed_demo(&self) -> Result<(OrgScope, DemoReport), ApiError> {
        let blobs = self.blobs.clone();
        let stored: Vec<(String, pactwise_store::StoredBlob)> = DEMO_DOCUMENTS
            .iter()
            .map(|(name, text)| Ok((name.to_string(), blobs.put_bytes(text.as_bytes())?)))
            .collect::<Result<_, pactwise_store::StoreError>>()?;
        let (scope, report) = self
            .db
            .call(move |store| {
                let local = open_local(store)?;
                let platform = store.platform();
                let org = match platform.find_organization(DEMO_ORGANIZATION)? {
                    Some(org) => org,
                    None => platform.create_organization(DEMO_ORGANIZATION)?,
                };
                platform.set_membership(org, local.user(), Role::Owner)?;
                let session = platform.start_session(local.user(), org)?;
                let scope = store.sessions().make_current(session)?;
                // `make run` and the first-run screen's "explore the demo": set up, no welcome screen. The local
                // organization stays, to switch to once the person starts on their own contracts.
                platform.mark_first_run_done()?;
                let mut created = 0;
                for (name, blob) in stored {
                    let new =
                        NewDocument { name, media_type: MediaType::Txt, size: blob.size, content_hash: blob.hash };
                    let (_, outcome) = store.documents().record(&scope, &new)?;
                    created += u32::from(outcome == ImportOutcome::Created);
                }
                let documents = store.documents().list(&scope)?.len() as u32;
                Ok((scope, DemoReport { organization: DEMO_ORGANIZATION.to_string(), documents, created }))
            })
            .await?;
        // Like any import, the demo documents have their pages stored (a document is extracted once).
        let quiet = |_: crate::ImportStage, _: u32, _: u32| {};
        for doc in self.list_documents(&scope, crate::DocumentQuery::default()).await? {
            self.ensure_pages(&scope, &doc, &quiet).await?;
            self.ensure_passages(&scope, doc.id).await?;
            // Rules only: the demo is the same on every machine, key or not.
            self.run_pipeline(&scope, doc.id, crate::ReviewMode::Offline, None).await?;
        }
        Ok((scope, report))
    }
}
