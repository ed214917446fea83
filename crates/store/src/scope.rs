//! The tenant scope. Every tenant-scoped repository function takes an `&OrgScope`; there is no public way to build
//! one from raw ids, only [`crate::Sessions::open`] on a valid session. Nothing in a request body, a document or a
//! model reply can therefore choose the organization.

use pactwise_domain::{OrgId, Role, SessionId, UserId};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrgScope {
    org: OrgId,
    user: UserId,
    role: Role,
    session: SessionId,
}

impl OrgScope {
    /// Only the sessions module may mint a scope, after checking the session, the membership and the organization.
    pub(crate) fn from_verified_session(org: OrgId, user: UserId, role: Role, session: SessionId) -> Self {
        OrgScope { org, user, role, session }
    }

    pub fn org(&self) -> OrgId {
        self.org
    }

    pub fn user(&self) -> UserId {
        self.user
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn session(&self) -> SessionId {
        self.session
    }

    /// Fails with `Forbidden` unless the role may change documents.
    pub(crate) fn require_document_editor(&self) -> Result<(), crate::StoreError> {
        if self.role.can_edit_documents() { Ok(()) } else { Err(crate::StoreError::Forbidden { role: self.role }) }
    }
}
