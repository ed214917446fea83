//! Settings → Members: the organization's members and, for owners and admins, adding a member (the one-time code
//! to hand over is in the answer, once), changing a role and removing a member, all through the sync service (who
//! may do what is `pactwise_rules::roles::check_member_change`, checked here to offer the controls and by the
//! service for real). What the service answers is recorded here at once ([`pactwise_store::members`]); the other
//! desktops learn of it from the organization's log.

use crate::{Api, ApiError};
use pactwise_domain::{ErrorCode, Role, UserId};
use pactwise_rules::roles::{self, MemberChange};
use pactwise_store::OrgScope;
use pactwise_store::members::KnownMember;
use pactwise_sync::members::{AddMemberRequest, Member};
use pactwise_sync::{DeviceToken, HttpApi, SyncError};
use serde::{Deserialize, Serialize};

/// A member as the Members table shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct MemberView {
    pub user_id: UserId,
    pub display_name: String,
    pub email: Option<String>,
    pub role: Role,
    /// The person using this session.
    pub is_you: bool,
    /// Holds a sign-in code not used yet, valid until this time (RFC 3339); only owners and admins see it.
    pub code_open_until: Option<String>,
}

/// The organization's members and what this person may do with them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct MembersView {
    pub members: Vec<MemberView>,
    /// The organization syncs (members are managed through its sync service).
    pub synced: bool,
    /// This person's role may add, change and remove members (owners and admins).
    pub can_manage: bool,
    /// Only owners make, change or remove owners.
    pub can_manage_owners: bool,
    /// Why the list shown is this desktop's copy rather than the service's (unreachable, say); None when fresh.
    pub offline_reason: Option<String>,
}

/// What an owner or admin types to add a member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AddMemberInput {
    pub email: String,
    pub display_name: String,
    pub role: Role,
}

/// A member just added, with the one-time code to hand over: shown once, never again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AddedMemberView {
    pub member: MemberView,
    pub code: String,
    pub code_expires_at: String,
}

fn known(m: &Member) -> KnownMember {
    KnownMember { user: m.user_id, display_name: m.display_name.clone(), email: Some(m.email.clone()), role: m.role }
}

fn view(m: &Member, scope: &OrgScope) -> MemberView {
    MemberView {
        user_id: m.user_id,
        display_name: m.display_name.clone(),
        email: Some(m.email.clone()),
        role: m.role,
        is_you: m.user_id == scope.user(),
        code_open_until: None,
    }
}

/// A refusal of the members routes in people's words (the service's own message), other failures as sync's.
fn members_error(e: SyncError) -> ApiError {
    match e {
        SyncError::Rejected { ref message, .. } => ApiError::new(e.code(), message.clone()),
        SyncError::Unauthenticated => ApiError::new(
            ErrorCode::Unauthenticated,
            "the sync service did not accept this device's sign-in (it may have been signed out, or you were \
             removed from the organization); sign in to sync again",
        ),
        other => ApiError::new(
            other.code(),
            format!("{other}. Members change only through the sync service: try again when it can be reached"),
        ),
    }
}

fn can(scope: &OrgScope, change: MemberChange) -> bool {
    // The owner count matters only for the last owner, which the service checks; 2 here keeps it out.
    roles::check_member_change(scope.role(), change, 2).is_ok()
}

impl Api {
    /// The service (with this device's token) when `scope`'s organization is the one this install syncs with.
    pub(crate) async fn members_service(&self, scope: &OrgScope) -> Result<Option<HttpApi>, ApiError> {
        let Some((bound, account, _)) = self.bound_sync().await? else { return Ok(None) };
        if bound.org() != scope.org() {
            return Ok(None);
        }
        let device = uuid::Uuid::parse_str(&account.device_id)
            .map_err(|_| ApiError::new(ErrorCode::Unauthenticated, "the sync sign-in is incomplete; sign in again"))?;
        let token: DeviceToken = self
            .sync_tokens
            .store_for(device)
            .get()
            .map_err(crate::sync::token_error)?
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthenticated, "sign in to sync again to manage members"))?;
        Ok(Some(self.sync_http(&account.server, Some(token))?))
    }

    async fn require_members_service(&self, scope: &OrgScope, change: MemberChange) -> Result<HttpApi, ApiError> {
        if let Err(refusal) = roles::check_member_change(scope.role(), change, 2) {
            return Err(ApiError::new(ErrorCode::Forbidden, refusal.message));
        }
        self.members_service(scope).await?.ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidInput,
                "members are managed through the organization's sync service; sign in to sync (Settings → Sync) to \
                 add, change or remove members",
            )
        })
    }

    /// The members of the scope's organization: from the sync service when it can be reached (recorded here too),
    /// else this desktop's copy with the reason.
    pub async fn members(&self, scope: &OrgScope) -> Result<MembersView, ApiError> {
        let service = self.members_service(scope).await?;
        let synced = service.is_some();
        let mut offline_reason = None;
        let mut codes = Vec::new();
        if let Some(http) = service {
            match http.members().await {
                Ok(list) => {
                    let s = scope.clone();
                    let members: Vec<KnownMember> = list.members.iter().map(known).collect();
                    self.db.call(move |store| store.members().record(&s, &members)).await?;
                    if can(scope, MemberChange::SeeCodes) {
                        codes = http.open_codes().await.map(|c| c.codes).unwrap_or_default();
                    }
                }
                Err(e) => offline_reason = Some(members_error(e).message),
            }
        }
        let s = scope.clone();
        let local = self.db.call(move |store| store.members().list(&s)).await?;
        let members = local
            .into_iter()
            .map(|m| MemberView {
                is_you: m.user == scope.user(),
                code_open_until: codes.iter().find(|c| c.user_id == m.user).map(|c| c.expires_at.to_rfc3339()),
                user_id: m.user,
                display_name: m.display_name,
                email: m.email,
                role: m.role,
            })
            .collect();
        Ok(MembersView {
            members,
            synced,
            can_manage: synced && can(scope, MemberChange::Add { role: Role::Viewer }),
            can_manage_owners: synced && can(scope, MemberChange::Add { role: Role::Owner }),
            offline_reason,
        })
    }

    /// The members of the scope's organization as this desktop knows them (from sign-in and the organization's
    /// log), without asking the service: for names of approvers and authors, offline too.
    pub async fn known_members(&self, scope: &OrgScope) -> Result<Vec<MemberView>, ApiError> {
        let s = scope.clone();
        let local = self.db.call(move |store| store.members().list(&s)).await?;
        Ok(local
            .into_iter()
            .map(|m| MemberView {
                is_you: m.user == scope.user(),
                code_open_until: None,
                user_id: m.user,
                display_name: m.display_name,
                email: m.email,
                role: m.role,
            })
            .collect())
    }

    /// Adds a member through the sync service; the answer carries the one-time code to hand over (shown once).
    pub async fn add_member(&self, scope: &OrgScope, input: AddMemberInput) -> Result<AddedMemberView, ApiError> {
        let (email, display_name) = (input.email.trim().to_lowercase(), input.display_name.trim().to_string());
        if display_name.is_empty() || !email.split_once('@').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty()) {
            return Err(ApiError::new(ErrorCode::InvalidInput, "give the new member's name and email address"));
        }
        let http = self.require_members_service(scope, MemberChange::Add { role: input.role }).await?;
        let request = AddMemberRequest { email, display_name, role: input.role };
        let added = http.add_member(&request).await.map_err(members_error)?;
        let (s, member) = (scope.clone(), known(&added.member));
        self.db.call(move |store| store.members().record(&s, &[member])).await?;
        self.sync_slot.wake();
        Ok(AddedMemberView {
            member: MemberView {
                code_open_until: Some(added.code_expires_at.to_rfc3339()),
                ..view(&added.member, scope)
            },
            code: added.code,
            code_expires_at: added.code_expires_at.to_rfc3339(),
        })
    }

    /// A new one-time code for a member who lost theirs (the earlier one stops working).
    pub async fn new_member_code(&self, scope: &OrgScope, user: UserId) -> Result<AddedMemberView, ApiError> {
        let http = self.require_members_service(scope, MemberChange::Add { role: Role::Viewer }).await?;
        let added = http.new_member_code(user).await.map_err(members_error)?;
        Ok(AddedMemberView {
            member: MemberView {
                code_open_until: Some(added.code_expires_at.to_rfc3339()),
                ..view(&added.member, scope)
            },
            code: added.code,
            code_expires_at: added.code_expires_at.to_rfc3339(),
        })
    }

    /// Changes a member's role through the sync service.
    pub async fn change_member_role(&self, scope: &OrgScope, user: UserId, role: Role) -> Result<MemberView, ApiError> {
        let http = self.require_members_service(scope, MemberChange::Add { role: Role::Viewer }).await?;
        let member = http.change_member_role(user, role).await.map_err(members_error)?;
        let (s, m) = (scope.clone(), known(&member));
        self.db.call(move |store| store.members().record(&s, &[m])).await?;
        self.sync_slot.wake();
        Ok(view(&member, scope))
    }

    /// Removes a member through the sync service: their devices stop syncing at their next request; their past
    /// work keeps their name here.
    pub async fn remove_member(&self, scope: &OrgScope, user: UserId) -> Result<(), ApiError> {
        let http = self.require_members_service(scope, MemberChange::Remove { role: Role::Viewer }).await?;
        http.remove_member(user).await.map_err(members_error)?;
        let s = scope.clone();
        self.db.call(move |store| store.members().remove(&s, user)).await?;
        self.sync_slot.wake();
        Ok(())
    }
}

/// A member id as typed or sent by the UI.
pub fn parse_member_id(text: &str) -> Result<UserId, ApiError> {
    text.trim().parse().map_err(|_| ApiError::new(ErrorCode::InvalidInput, format!("{text:?} is not a member id")))
}

impl Api {
    /// The member of the scope's organization a person named: their id, or their email (as this desktop knows
    /// the members). Anyone else answers like a missing member.
    pub async fn find_member(&self, scope: &OrgScope, id_or_email: &str) -> Result<UserId, ApiError> {
        if let Ok(id) = parse_member_id(id_or_email) {
            return Ok(id);
        }
        let wanted = id_or_email.trim().to_lowercase();
        self.known_members(scope)
            .await?
            .into_iter()
            .find(|m| m.email.as_deref().is_some_and(|e| e.eq_ignore_ascii_case(&wanted)))
            .map(|m| m.user_id)
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::NotFound,
                    format!("no member {id_or_email:?} in this organization; `pactwise members list` shows them"),
                )
            })
    }
}
