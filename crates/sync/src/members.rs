//! The members routes of the sync service (wire types and the client's calls). Members change only through these
//! routes, by an owner or admin (`pactwise_rules::roles::check_member_change`); the service then appends a
//! [`crate::SyncedModel::Member`] change to the organization's log (fields [`MemberFields`]), so every desktop
//! learns of it in its next pull. A new member signs in once with a one-time code the admin hands over, choosing a
//! password.
//!
//! - `GET    /api/v1/members` → [`MembersResponse`] (every member of the token's organization)
//! - `POST   /api/v1/members` [`AddMemberRequest`] → [`AddedMember`] (the code is in this answer only)
//! - `PUT    /api/v1/members/{user_id}` [`ChangeRoleRequest`] → [`Member`]
//! - `DELETE /api/v1/members/{user_id}` → 204 (the member's device tokens stop working at their next request)
//! - `POST   /api/v1/members/{user_id}/code` → [`AddedMember`] (a new code; the earlier one stops working)
//! - `GET    /api/v1/members/codes` → [`OpenCodesResponse`] (owners and admins: who has an unused code, until
//!   when; never the code)
//! - `POST   /api/v1/sign-in/code` [`CodeSignInRequest`] → [`crate::wire::SignInResponse`] (no token needed)

use crate::error::SyncError;
use crate::http::{HttpApi, check, json_or_error, unreachable};
use crate::wire::SignInResponse;
use chrono::{DateTime, Utc};
use pactwise_domain::{Role, UserId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The longest display name the service keeps.
pub const MAX_DISPLAY_NAME: usize = 200;

/// A member of the organization, as the service knows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub user_id: UserId,
    pub email: String,
    pub display_name: String,
    pub role: Role,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MembersResponse {
    pub members: Vec<Member>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddMemberRequest {
    pub email: String,
    pub display_name: String,
    pub role: Role,
}

/// A member with a new one-time sign-in code. The code is shown once: the service keeps only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedMember {
    pub member: Member,
    pub code: String,
    pub code_expires_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeRoleRequest {
    pub role: Role,
}

/// A member who has a sign-in code not yet used (the code itself is never shown again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenCode {
    pub user_id: UserId,
    pub email: String,
    pub expires_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenCodesResponse {
    pub codes: Vec<OpenCode>,
}

/// Sign in once with the code an admin handed over, choosing a password (used from then on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeSignInRequest {
    /// The organization's short name (slug).
    pub org: String,
    pub email: String,
    pub code: String,
    /// The member's new password (at least 10 characters).
    pub password: String,
    pub device_name: String,
}

/// The fields of a `member` change in the organization's log (record id: the member's user id). The service writes
/// all of them every time, so the latest change says everything about the member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberFields {
    pub email: String,
    pub display_name: String,
    pub role: Role,
    /// The member was removed: they keep their name in the history, but no longer belong to the organization.
    pub removed: bool,
}

impl MemberFields {
    /// As a `Fields` change body.
    pub fn to_fields(&self) -> BTreeMap<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map.into_iter().collect(),
            _ => BTreeMap::new(),
        }
    }

    /// From a `Fields` change body; None when a field is missing or malformed.
    pub fn from_fields(fields: &BTreeMap<String, Value>) -> Option<Self> {
        let map: serde_json::Map<String, Value> = fields.clone().into_iter().collect();
        let read: MemberFields = serde_json::from_value(Value::Object(map)).ok()?;
        let ok = !read.display_name.trim().is_empty()
            && read.display_name.chars().count() <= MAX_DISPLAY_NAME
            && read.email.contains('@')
            && read.email.len() <= 320;
        ok.then_some(read)
    }
}

impl HttpApi {
    pub async fn members(&self) -> Result<MembersResponse, SyncError> {
        let response = self.authorized(self.client().get(self.url("/members"))).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }

    pub async fn add_member(&self, request: &AddMemberRequest) -> Result<AddedMember, SyncError> {
        let response = self
            .authorized(self.client().post(self.url("/members")))
            .json(request)
            .send()
            .await
            .map_err(unreachable)?;
        json_or_error(response).await
    }

    pub async fn change_member_role(&self, user: UserId, role: Role) -> Result<Member, SyncError> {
        let response = self
            .authorized(self.client().put(self.url(&format!("/members/{user}"))))
            .json(&ChangeRoleRequest { role })
            .send()
            .await
            .map_err(unreachable)?;
        json_or_error(response).await
    }

    pub async fn remove_member(&self, user: UserId) -> Result<(), SyncError> {
        let response = self
            .authorized(self.client().delete(self.url(&format!("/members/{user}"))))
            .send()
            .await
            .map_err(unreachable)?;
        check(response).await.map(|_| ())
    }

    /// A new one-time code for a member (the earlier one stops working).
    pub async fn new_member_code(&self, user: UserId) -> Result<AddedMember, SyncError> {
        let response = self
            .authorized(self.client().post(self.url(&format!("/members/{user}/code"))))
            .send()
            .await
            .map_err(unreachable)?;
        json_or_error(response).await
    }

    pub async fn open_codes(&self) -> Result<OpenCodesResponse, SyncError> {
        let response =
            self.authorized(self.client().get(self.url("/members/codes"))).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }

    /// Sign in with a one-time code, setting the member's password; the answer carries the new device token.
    pub async fn sign_in_with_code(&self, request: &CodeSignInRequest) -> Result<SignInResponse, SyncError> {
        let response = self.client().post(self.url("/sign-in/code")).json(request).send().await.map_err(unreachable)?;
        json_or_error(response).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_fields_round_trip_and_refuse_what_is_missing_or_malformed() {
        let fields = MemberFields {
            email: "ana@example.com".into(),
            display_name: "Ana Lima".into(),
            role: Role::Approver,
            removed: false,
        };
        let body = fields.to_fields();
        assert_eq!(body["role"], "approver");
        assert_eq!(MemberFields::from_fields(&body), Some(fields));
        let mut no_role = body.clone();
        no_role.remove("role");
        assert_eq!(MemberFields::from_fields(&no_role), None);
        let mut blank = body.clone();
        blank.insert("display_name".into(), Value::String("  ".into()));
        assert_eq!(MemberFields::from_fields(&blank), None);
        let mut bad_role = body;
        bad_role.insert("role".into(), Value::String("emperor".into()));
        assert_eq!(MemberFields::from_fields(&bad_role), None);
    }
}
