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

impl Api {
    /// The organizations the session's user belongs to.
    pub async fn organizations(&self, scope: &OrgScope) -> Result<Vec<Membership>, ApiError> {
        let s = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let scope = store.sessions().open(s.session())?;
                Ok(store
                    .platform()
                    .organizations_of(scope.user())?
                    .into_iter()
                    .map(|m| Membership { current: m.org == scope.org(), org_id: m.org, name: m.name, role: m.role })
                    .collect())
            })
            .await?)
    }

    /// Starts a session in another organization the user belongs to and makes it current. The organization must be
    /// one of the user's memberships; anything else is refused like a missing one.
    pub async fn switch_organization(&self, scope: &OrgScope, org: OrgId) -> Result<OrgScope, ApiError> {
        let s = scope.clone();
        Ok(self
            .db
            .call(move |store| {
                let scope = store.sessions().open(s.session())?;
                let platform = store.platform();
                if !platform.organizations_of(scope.user())?.iter().any(|m| m.org == org) {
                    return Err(pactwise_store::StoreError::NotFound);
                }
                let session = platform.start_session(scope.user(), org)?;
                store.sessions().make_current(session)
            })
            .await?)
    }
}
