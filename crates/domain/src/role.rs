//! What a member may do in an organization.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A member's role in one organization. Owners and admins may do everything; reviewers review contracts; buyers
/// draft RFP packages; approvers resolve workflow approvals; viewers only read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Owner,
    Admin,
    Reviewer,
    Buyer,
    Approver,
    Viewer,
}

impl Role {
    pub const ALL: [Role; 6] = [Role::Owner, Role::Admin, Role::Reviewer, Role::Buyer, Role::Approver, Role::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Reviewer => "reviewer",
            Role::Buyer => "buyer",
            Role::Approver => "approver",
            Role::Viewer => "viewer",
        }
    }

    /// May this role change the organization's documents (import, delete, restore)?
    pub fn can_edit_documents(self) -> bool {
        !matches!(self, Role::Viewer)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| format!("unknown role {s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_round_trips_through_its_name() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>().unwrap(), role);
        }
        assert!("superuser".parse::<Role>().is_err());
    }

    #[test]
    fn viewers_cannot_edit_documents() {
        assert!(!Role::Viewer.can_edit_documents());
        assert!(Role::Reviewer.can_edit_documents());
    }
}
