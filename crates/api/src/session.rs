//! The local session: the person using this installation and the organization they are working in. First start
//! creates a local organization and user.

use crate::{Api, ApiError};
use pactwise_domain::{OrgId, Role, UserId};
use pactwise_store::{OrgScope, Store, StoreError};
use serde::{Deserialize, Serialize};

/// Who is signed in, where. Sent to the UI for the frame's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SessionInfo {
    pub org_id: OrgId,
    pub org_name: String,
    pub user_id: UserId,
    pub user_name: String,
    pub role: Role,
    pub data_dir: String,
}

fn local_user_name() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "Local user".to_string())
}

/// Opens the installation's current session, creating the local organization and user on first start, or a new
/// session for the local user if the current one no longer opens.
pub(crate) fn open_local(store: &Store) -> Result<OrgScope, StoreError> {
    if let Some(current) = store.sessions().current()?
        && let Ok(scope) = store.sessions().open(current)
    {
        return Ok(scope);
    }
    let platform = store.platform();
    let user = match platform.local_user()? {
        Some(user) => user,
        None => {
            let user = platform.create_user(&local_user_name(), None)?;
            platform.set_local_user(user)?;
            user
        }
    };
    let org = match platform.organizations_of(user)?.first() {
        Some(first) => first.org,
        None => {
            let org = platform.create_organization("My organization")?;
            platform.set_membership(org, user, Role::Owner)?;
            org
        }
    };
    let session = platform.start_session(user, org)?;
    store.sessions().make_current(session)
}

impl Api {
    /// The session this installation works in (created on first start).
    pub async fn local_session(&self) -> Result<OrgScope, ApiError> {
        Ok(self.db.call(|store| open_local(store)).await?)
    }

    pub async fn session_info(&self, scope: &OrgScope) -> Result<SessionInfo, ApiError> {
        let s = scope.clone();
        let data_dir = self.data_dir.root().display().to_string();
        Ok(self
            .db
            .call(move |store| {
                let scope = store.sessions().open(s.session())?;
                let platform = store.platform();
                Ok(SessionInfo {
                    org_id: scope.org(),
                    org_name: platform.organization_name(scope.org())?,
                    user_id: scope.user(),
                    user_name: platform.user_name(scope.user())?,
                    role: scope.role(),
                    data_dir,
                })
            })
            .await?)
    }
}

/// An organization the session's user belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Membership {
    pub org_id: OrgId,
    pub name: String,
    pub role: Role,
    pub current: bool,
}

/// The organizations this install's person may work in: the memberships of every user who has signed in on this
/// install (the local user, and the sync service's user after a sign-in to sync, which works under the service's
/// ids), so the organization used before sync can be switched back to and the synced one again. Each with the user
/// who is the member; the session's own user first.
fn reachable_organizations(
    store: &Store,
    scope: &OrgScope,
) -> Result<Vec<(UserId, pactwise_store::SessionOrg)>, StoreError> {
    let platform = store.platform();
    let mut users = vec![scope.user()];
    users.extend(platform.session_users()?.into_iter().filter(|u| *u != scope.user()));
    let mut out: Vec<(UserId, pactwise_store::SessionOrg)> = Vec::new();
    for user in users {
        for m in platform.organizations_of(user)? {
            if !out.iter().any(|(_, o)| o.org == m.org) {
                out.push((user, m));
            }
        }
    }
    Ok(out)
}

impl Api {
    /// The organizations this install's person may switch to (see [`Api::switch_organization`]).
    pub async fn organizations(&self, scope: &OrgScope) -> Result<Vec<Membership>, ApiError> {
        let s = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let scope = store.sessions().open(s.session())?;
                Ok(reachable_organizations(store, &scope)?
                    .into_iter()
                    .map(|(_, m)| Membership {
                        current: m.org == scope.org(),
                        org_id: m.org,
                        name: m.name,
                        role: m.role,
                    })
                    .collect())
            })
            .await?)
    }

    /// Starts a session in another organization this install's person belongs to and makes it current. The
    /// organization must be a membership of a user who has signed in on this install (see
    /// `reachable_organizations`); anything else is refused like a missing one.
    pub async fn switch_organization(&self, scope: &OrgScope, org: OrgId) -> Result<OrgScope, ApiError> {
        let s = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let scope = store.sessions().open(s.session())?;
                let Some((user, _)) = reachable_organizations(store, &scope)?.into_iter().find(|(_, m)| m.org == org)
                else {
                    return Err(pactwise_store::StoreError::NotFound);
                };
                let session = store.platform().start_session(user, org)?;
                store.sessions().make_current(session)
            })
            .await?)
    }
}

/// What bringing an organization's documents into another did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct BringOverReport {
    /// Documents that became records of the organization they were brought into.
    pub brought: u32,
    /// Documents whose file that organization held already (not copied again).
    pub already_there: u32,
    /// Corrections that came with the documents.
    pub corrections: u32,
    /// Documents that could not be brought, each with why (the others were).
    pub failed: Vec<String>,
}

impl Api {
    /// Brings every live document of `from` (another organization this install's person works in) into the scope's
    /// organization, with its corrections, as new records of it: one transaction per document
    /// (`Documents::bring_over`), so each one is either wholly brought or not at all, and nothing of `from` is
    /// changed or lost. When the scope's organization syncs, the documents and corrections are queued for sync in
    /// those transactions. Each brought document is then read like an import (pages, search, offline review).
    pub async fn bring_over_documents(&self, scope: &OrgScope, from: OrgId) -> Result<BringOverReport, ApiError> {
        let s = scope.clone();
        let (source, documents) = self
            .db
            .call(move |store| {
                let scope = store.sessions().open(s.session())?;
                let Some((user, _)) = reachable_organizations(store, &scope)?
                    .into_iter()
                    .find(|(_, m)| m.org == from && m.org != scope.org())
                else {
                    return Err(StoreError::NotFound);
                };
                // A session in the source organization for reading it; ended when this is done.
                let session = store.platform().start_session(user, from)?;
                let source = store.sessions().open(session)?;
                let documents = store.documents().list(&source)?;
                Ok((source, documents))
            })
            .await?;
        let mut report = BringOverReport { brought: 0, already_there: 0, corrections: 0, failed: Vec::new() };
        for doc in documents {
            let (from_scope, to_scope, id) = (source.clone(), scope.clone(), doc.id);
            match self.db.call(move |store| store.documents().bring_over(&from_scope, &to_scope, id)).await {
                Ok(brought) if brought.outcome == pactwise_domain::ImportOutcome::Existing => report.already_there += 1,
                Ok(brought) => {
                    report.brought += 1;
                    report.corrections += brought.corrections;
                    self.import_received(scope, &brought.document).await;
                }
                Err(e) => {
                    let e = ApiError::from(e);
                    tracing::warn!(document = %doc.id, code = %e.code, "a document could not be brought over");
                    report.failed.push(format!("{}: {}", doc.name, e.message));
                }
            }
        }
        let session = source.session();
        self.db.call(move |store| store.sessions().revoke(session)).await?;
        tracing::info!(from = %from, to = %scope.org(), brought = report.brought, "documents brought over");
        Ok(report)
    }
}
