//! Reading a file from the blob store, for one organization. The store on disk is shared by every organization of
//! the install; a file is read only for an organization that holds it (`store::BlobOwners`), and another
//! organization's file answers like a missing one. Every read of a file by its hash goes through here.

use crate::{Api, ApiError};
use pactwise_domain::ErrorCode;
use pactwise_store::{OrgScope, StoreError};

impl Api {
    /// The bytes of the file with this hash, if the caller's organization holds it.
    pub(crate) async fn read_org_blob(&self, scope: &OrgScope, hash: &str) -> Result<Vec<u8>, ApiError> {
        let (s, h) = (scope.clone(), hash.to_string());
        if !self.db.call(move |store| store.blob_owners().holds(&s, &h)).await? {
            tracing::warn!(org = %scope.org(), "a file this organization does not hold was asked for");
            return Err(StoreError::NotFound.into());
        }
        let blobs = self.blobs.clone();
        let hash = hash.to_string();
        tokio::task::spawn_blocking(move || blobs.read(&hash))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("reading was interrupted ({e})")))?
            .map_err(ApiError::from)
    }
}
