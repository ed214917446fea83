//! The optional Voyage provider of meaning-based search (`voyage-law-2`, the seed's legal-domain model): used when a
//! Voyage key is in the OS keychain, beside the local model, which stays the default and the fallback. Its vectors
//! are computed in the background with the local ones (`search.rs`), its query vectors before each search
//! (`Retriever::prepare_query`); every request is priced in the usage ledger under the organization's budgets by
//! `pactwise_model::VoyageClient`. Offline, without a key or with the budget spent, search uses the local model and
//! says so.

use crate::{Api, ApiError};
use pactwise_domain::{ErrorCode, OrgId};
use pactwise_model::voyage::VOYAGE_MODEL;
use pactwise_model::{ApiKey, ApiKeySource, CallContext, InputType, ModelClient, VoyageClient, VoyageConfig};
use pactwise_retrieval::{BoxFuture, RemoteVectors, TextKind};
use pactwise_store::OrgScope;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Passages sent in one background request (the API's list limit).
const BATCH: u32 = 128;

/// The client, its key source, and whether the key was looked for yet in this process.
pub(crate) struct VoyageSetup {
    client: Option<Arc<VoyageClient>>,
    keys: Arc<dyn ApiKeySource>,
    checked: AtomicBool,
}

impl VoyageSetup {
    pub(crate) fn new(config: VoyageConfig, keys: Arc<dyn ApiKeySource>, accounts: &ModelClient) -> Self {
        let client = match VoyageClient::new(config, keys.clone(), accounts) {
            Ok(client) => Some(Arc::new(client)),
            Err(e) => {
                tracing::warn!(error = %e, "the Voyage provider is off");
                None
            }
        };
        VoyageSetup { client, keys, checked: AtomicBool::new(false) }
    }
}

/// Retrieval's remote model over the Voyage client.
struct VoyageVectors {
    client: Arc<VoyageClient>,
}

impl RemoteVectors for VoyageVectors {
    fn model_id(&self) -> &str {
        VOYAGE_MODEL
    }

    fn name(&self) -> &str {
        "The legal-domain model (Voyage)"
    }

    fn embed<'a>(
        &'a self,
        org: OrgId,
        texts: Vec<String>,
        kind: TextKind,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, String>> {
        Box::pin(async move {
            let (purpose, input) = match kind {
                TextKind::Query => ("embed_query", InputType::Query),
                TextKind::Document => ("embed_passages", InputType::Document),
            };
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            self.client.embed(&CallContext::new(org, None, purpose), &refs, input).await.map_err(|e| e.to_string())
        })
    }
}

/// What Settings shows about the Voyage provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct VoyageStatus {
    /// A key is stored and searches use Voyage's vectors where they exist.
    pub configured: bool,
    /// In people's words: what is used and why.
    pub summary: String,
}

impl Api {
    /// Turns the Voyage provider on when its key is in the keychain (once per process, and again after the key is set
    /// or cleared), off otherwise. Never fails: without a key or keychain, search uses the local model.
    pub(crate) async fn use_voyage_if_configured(&self) {
        if self.voyage.checked.swap(true, Ordering::SeqCst) {
            return;
        }
        self.refresh_voyage().await;
    }

    async fn refresh_voyage(&self) -> bool {
        let Some(client) = self.voyage.client.clone() else {
            self.retriever.set_remote(None);
            return false;
        };
        let configured = client.has_key().await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the Voyage key could not be read; the local model is used");
            false
        });
        self.retriever.set_remote(configured.then(|| Arc::new(VoyageVectors { client }) as Arc<dyn RemoteVectors>));
        configured
    }

    pub async fn voyage_status(&self) -> VoyageStatus {
        self.voyage.checked.store(true, Ordering::SeqCst);
        let configured = self.refresh_voyage().await;
        let summary = match (&self.voyage.client, configured) {
            (None, _) => {
                "Voyage is off: its address (PACTWISE_VOYAGE_ENDPOINT) is refused; search uses the local model."
                    .to_owned()
            }
            (Some(_), true) => "Searches use Voyage's legal-domain model where its vectors are ready, and the local \
                                model when Voyage cannot be reached; every Voyage request counts against the model \
                                budget."
                .to_owned(),
            (Some(_), false) => {
                "Search uses the local model. Add a Voyage key to use its legal-domain model when online.".to_owned()
            }
        };
        VoyageStatus { configured, summary }
    }

    /// Stores the Voyage key in the OS keychain (never in the database, files or logs) and turns the provider on.
    /// Owners and admins only.
    pub async fn set_voyage_key(&self, scope: &OrgScope, key: String) -> Result<VoyageStatus, ApiError> {
        crate::model::require_key_manager(scope)?;
        let key = ApiKey::parse(&key).map_err(|_| {
            ApiError::new(
                ErrorCode::InvalidInput,
                "the Voyage key is empty or has spaces; paste exactly the key Voyage gave you",
            )
        })?;
        let keys = self.voyage.keys.clone();
        tokio::task::spawn_blocking(move || keys.set(&key))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the keychain call was interrupted ({e})")))?
            .map_err(crate::model::key_error)?;
        tracing::info!("Voyage key stored in the keychain");
        self.wake_semantic_search();
        Ok(self.voyage_status().await)
    }

    /// Removes the Voyage key; search goes back to the local model (Voyage's stored vectors stay for a later key).
    pub async fn clear_voyage_key(&self, scope: &OrgScope) -> Result<VoyageStatus, ApiError> {
        crate::model::require_key_manager(scope)?;
        let keys = self.voyage.keys.clone();
        tokio::task::spawn_blocking(move || keys.clear())
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the keychain call was interrupted ({e})")))?
            .map_err(crate::model::key_error)?;
        tracing::info!("Voyage key removed from the keychain");
        Ok(self.voyage_status().await)
    }

    /// Computes the remote model's vectors for the organization's passages (and the precedent corpus's) still lacking
    /// one, in batches; stops at the first failure (offline, budget spent) and says why, leaving the rest for the next
    /// wake. Nothing to do without a configured remote model.
    #[tracing::instrument(name = "prepare_remote_vectors", skip_all)]
    pub(crate) async fn prepare_remote_vectors(&self, scope: &OrgScope) -> Result<Option<String>, ApiError> {
        self.use_voyage_if_configured().await;
        let Some(remote) = self.retriever.remote() else { return Ok(None) };
        let model = remote.model_id().to_owned();
        for precedents in [false, true] {
            loop {
                let todo = self.lacking_vectors(scope, &model, precedents, BATCH).await?;
                if todo.is_empty() {
                    break;
                }
                let texts: Vec<String> = todo.iter().map(|p| p.text.clone()).collect();
                let vectors = match remote.embed(scope.org(), texts, TextKind::Document).await {
                    Ok(v) if v.len() == todo.len() => v,
                    Ok(_) => return Ok(Some("Voyage's reply did not match the passages sent".to_owned())),
                    Err(reason) => {
                        tracing::warn!("Voyage vectors not computed now; the local model serves search meanwhile");
                        return Ok(Some(reason));
                    }
                };
                let rows: Vec<(i64, Vec<u8>)> = todo
                    .iter()
                    .zip(vectors)
                    .map(|(p, v)| (p.id, pactwise_embed::Quantized::from_vector(&v).to_bytes()))
                    .collect();
                let (s, m) = (scope.clone(), model.clone());
                self.db
                    .call(move |store| {
                        let passages = store.passages();
                        if precedents {
                            passages.save_precedent_vectors(&m, &rows).map(|_| ())
                        } else {
                            passages.save_vectors(&s, &m, &rows).map(|_| ())
                        }
                    })
                    .await?;
            }
        }
        Ok(None)
    }
}
