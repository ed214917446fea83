//! The Contract Assistant as a user action, the passage index kept with each document, and the precedent corpus.

use crate::{Api, ApiError};
use pactwise_assistant::{Answer, AssistantError, chunk, corpus};
use pactwise_domain::{DocumentId, ErrorCode};
use pactwise_store::OrgScope;
use serde::{Deserialize, Serialize};
use std::path::Path;

impl From<AssistantError> for ApiError {
    fn from(e: AssistantError) -> ApiError {
        match e {
            AssistantError::Store(s) => s.into(),
            other => ApiError::new(other.code(), other.to_string()),
        }
    }
}

/// What `corpus import` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CorpusImport {
    pub imported: u32,
    pub unchanged: u32,
    pub skipped: Vec<String>,
    pub total: u32,
}

impl Api {
    /// Indexes a document's pages for retrieval unless they are indexed already.
    pub(crate) async fn ensure_passages(&self, scope: &OrgScope, id: DocumentId) -> Result<(), ApiError> {
        let s = scope.clone();
        let written = self
            .db
            .call(move |store| {
                if store.passages().is_indexed(&s, id)? {
                    return Ok(false);
                }
                let Some(doc) = store.pages().load(&s, id)? else { return Ok(false) };
                let passages = chunk::chunk_pages(&doc.pages);
                store.passages().replace(&s, id, &passages)?;
                Ok(!passages.is_empty())
            })
            .await?;
        if written {
            // New passages lack vectors: the background preparation of meaning-based search picks them up.
            self.wake_semantic_search();
        }
        Ok(())
    }

    /// Stores the built-in precedents that are missing or changed.
    async fn ensure_builtin_corpus(&self) -> Result<(), ApiError> {
        self.db
            .call(|store| {
                for p in corpus::builtin() {
                    store.passages().put_precedent(&p)?;
                }
                Ok(())
            })
            .await?;
        Ok(())
    }

    /// Answers a question about the organization's contracts, with citations from this request's retrieval.
    pub async fn ask(&self, scope: &OrgScope, question: &str, session: Option<String>) -> Result<Answer, ApiError> {
        self.ensure_builtin_corpus().await?;
        Ok(self.assistant.ask(scope, question, session).await?)
    }

    /// Questions asked in the session's organization.
    pub async fn assistant_answer_count(&self, scope: &OrgScope) -> Result<u32, ApiError> {
        let s = scope.clone();
        Ok(self.db.call(move |store| store.passages().answer_count(&s)).await?)
    }

    /// Adds the `.md` and `.txt` files of a folder to the precedent corpus (kept apart from every organization).
    pub async fn corpus_import(&self, dir: &Path) -> Result<CorpusImport, ApiError> {
        if !dir.is_dir() {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("{} is not a folder; give a folder of .md or .txt files", dir.display()),
            ));
        }
        self.ensure_builtin_corpus().await?;
        let (precedents, skipped) = corpus::from_dir(dir)
            .map_err(|e| ApiError::new(ErrorCode::FileUnreadable, format!("cannot read {} ({e})", dir.display())))?;
        if precedents.is_empty() {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("{} holds no .md or .txt files to import", dir.display()),
            ));
        }
        Ok(self
            .db
            .call(move |store| {
                let mut report = CorpusImport { imported: 0, unchanged: 0, skipped, total: 0 };
                for p in &precedents {
                    if store.passages().put_precedent(p)? {
                        report.imported += 1;
                    } else {
                        report.unchanged += 1;
                    }
                }
                report.total = store.passages().precedent_count()?;
                Ok(report)
            })
            .await?)
    }
}
