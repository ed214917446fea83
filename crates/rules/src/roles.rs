//! The role table: which role may make which change to an organization's shared (synced) data. The desktop checks
//! it before a local write of a synced setting, the sync service before it accepts a pushed change, so a member
//! whose role may not make a change can make it neither locally nor by pushing it from a modified client.
//!
//! | change | roles |
//! |---|---|
//! | a setting (`review.thresholds`, `organization.aliases`, any other key) | owner, admin |
//! | a document's fields (import, rename, delete, restore) | every role but viewer |
//! | a review correction, an audit entry | every role but viewer |
//! | a contract's or a vendor's fields | every role but viewer |
//! | an approval request | every role but viewer (who may *decide* a step is [`crate::approval`]'s rule) |
//! | a workflow run's summary or approval step, a review report it assembled (published by the desktop the run lives on), a request to cancel a run | every role but viewer |
//! | an RFP package (Prep Studio) | owner, admin, buyer |
//!
//! A setting key the table does not name is an owner/admin change: the strictest row is the default.
//!
//! Members (who belongs to the organization, with which role) change only through the sync service's members
//! routes, never as a pushed change ([`check_member_change`]):
//!
//! | change to the members | roles |
//! |---|---|
//! | add a member, change a role, remove a member, see the open sign-in codes | owner, admin |
//! | make someone an owner, change or remove an owner | owner |
//! | remove or demote the last owner | nobody |

use pactwise_domain::Role;

/// A change to the organization's shared data, as the table knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedChange<'a> {
    /// A setting, by key.
    Setting(&'a str),
    Document,
    ReviewCorrection,
    AuditEntry,
    Contract,
    Vendor,
    ApprovalRequest,
    /// A run's summary or one of its approval steps, published by the desktop that runs it.
    WorkflowRun,
    /// An RFP package of Prep Studio (its content, title, publication).
    PrepPackage,
}

const ADMINS: &[Role] = &[Role::Owner, Role::Admin];
const MEMBERS: &[Role] = &[Role::Owner, Role::Admin, Role::Reviewer, Role::Buyer, Role::Approver];
const PREPARERS: &[Role] = &[Role::Owner, Role::Admin, Role::Buyer];

impl<'a> SharedChange<'a> {
    /// The change a synced record names: its model's stable wire name and its record id (a setting's key).
    /// None for a model the table does not know (refused by whoever asks).
    pub fn of_synced(model: &str, record_id: &'a str) -> Option<SharedChange<'a>> {
        Some(match model {
            "setting" => SharedChange::Setting(record_id),
            "document" => SharedChange::Document,
            "review_correction" => SharedChange::ReviewCorrection,
            "audit_entry" => SharedChange::AuditEntry,
            "contract" => SharedChange::Contract,
            "vendor" => SharedChange::Vendor,
            "approval_decision" => SharedChange::ApprovalRequest,
            "run" | "approval_step" | "run_cancel" | "review_report" => SharedChange::WorkflowRun,
            "prep_package" => SharedChange::PrepPackage,
            _ => return None,
        })
    }

    /// The roles that may make this change.
    pub fn roles(self) -> &'static [Role] {
        match self {
            SharedChange::Setting(_) => ADMINS,
            SharedChange::Document
            | SharedChange::ReviewCorrection
            | SharedChange::AuditEntry
            | SharedChange::Contract
            | SharedChange::Vendor
            | SharedChange::ApprovalRequest
            | SharedChange::WorkflowRun => MEMBERS,
            SharedChange::PrepPackage => PREPARERS,
        }
    }

    /// What the change is, in people's words.
    pub fn describe(self) -> String {
        match self {
            SharedChange::Setting("review.thresholds") => "change the review thresholds".into(),
            SharedChange::Setting("organization.aliases") => "change the organization's names".into(),
            SharedChange::Setting(key) => format!("change the organization's setting {key:?}"),
            SharedChange::Document => "change the organization's documents".into(),
            SharedChange::ReviewCorrection => "correct a review".into(),
            SharedChange::AuditEntry => "add to the audit log".into(),
            SharedChange::Contract => "change a contract record".into(),
            SharedChange::Vendor => "change a vendor".into(),
            SharedChange::ApprovalRequest => "decide approvals".into(),
            SharedChange::WorkflowRun => "run workflows".into(),
            SharedChange::PrepPackage => "prepare RFP packages".into(),
        }
    }
}

/// A change the role table refuses; its message says who may make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleRefusal {
    pub role: Role,
    pub message: String,
}

impl std::fmt::Display for RoleRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RoleRefusal {}

/// May `role` make `change`? The refusal names the change and the roles that may make it.
pub fn check(role: Role, change: SharedChange<'_>) -> Result<(), RoleRefusal> {
    let allowed = change.roles();
    if allowed.contains(&role) {
        return Ok(());
    }
    let who = if allowed == ADMINS {
        "an owner or admin".to_string()
    } else if allowed == PREPARERS {
        "an owner, admin or buyer".to_string()
    } else {
        "a member who is not a viewer".to_string()
    };
    Err(RoleRefusal {
        role,
        message: format!("your role ({role}) cannot {}; ask {who} of the organization", change.describe()),
    })
}

/// A change to the organization's members, as [`check_member_change`] judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange {
    /// Add a member with this role.
    Add { role: Role },
    /// Change a member's role.
    ChangeRole { from: Role, to: Role },
    /// Remove a member who holds this role.
    Remove { role: Role },
    /// See the sign-in codes not yet used (who has one, until when; never the code itself).
    SeeCodes,
}

/// May `actor` make this change to the members of an organization that has `owners` owners now? Owners and admins
/// manage members; only an owner makes someone an owner or changes or removes an owner; the last owner is never
/// removed or demoted (an organization always has someone who can manage it).
pub fn check_member_change(actor: Role, change: MemberChange, owners: u64) -> Result<(), RoleRefusal> {
    let refuse = |message: String| Err(RoleRefusal { role: actor, message });
    if !ADMINS.contains(&actor) {
        let what = match change {
            MemberChange::SeeCodes => "see the members' sign-in codes",
            _ => "change the organization's members",
        };
        return refuse(format!("your role ({actor}) cannot {what}; ask an owner or admin of the organization"));
    }
    let touches_owner = match change {
        MemberChange::Add { role } => role == Role::Owner,
        MemberChange::ChangeRole { from, to } => from == Role::Owner || to == Role::Owner,
        MemberChange::Remove { role } => role == Role::Owner,
        MemberChange::SeeCodes => false,
    };
    if touches_owner && actor != Role::Owner {
        return refuse(format!(
            "your role ({actor}) cannot make, change or remove an owner; ask an owner of the organization"
        ));
    }
    let loses_an_owner = match change {
        MemberChange::ChangeRole { from: Role::Owner, to } => to != Role::Owner,
        MemberChange::Remove { role: Role::Owner } => true,
        _ => false,
    };
    if loses_an_owner && owners <= 1 {
        return refuse(
            "this is the organization's last owner: make another member an owner first, then change or remove this one"
                .to_string(),
        );
    }
    Ok(())
}

/// May a member orchestrate the agents (run a request's plan)? The seed's manager role: owners and admins hold
/// it; any other member only when an owner or admin granted it (`granted`); a viewer never.
pub fn may_orchestrate(role: Role, granted: bool) -> Result<(), RoleRefusal> {
    match role {
        Role::Owner | Role::Admin => Ok(()),
        Role::Viewer => Err(RoleRefusal {
            role,
            message: "Viewers cannot run requests to the agents; ask an owner or admin to run it, or for another role."
                .into(),
        }),
        _ if granted => Ok(()),
        _ => Err(RoleRefusal {
            role,
            message: format!(
                "Running a request needs the manager role, and your role ({role}) does not have it; an owner or                  admin can grant it (pactwise agents managers add EMAIL). You can still see the plan."
            ),
        }),
    }
}

/// May `role` push any change at all? (A viewer may not.)
pub fn may_change_anything(role: Role) -> bool {
    MEMBERS.contains(&role)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manager_role_is_owners_admins_and_granted_members_never_viewers() {
        for role in Role::ALL {
            let plain = may_orchestrate(role, false).is_ok();
            let granted = may_orchestrate(role, true).is_ok();
            assert_eq!(plain, matches!(role, Role::Owner | Role::Admin), "{role}");
            assert_eq!(granted, role != Role::Viewer, "{role}");
        }
        assert!(may_orchestrate(Role::Reviewer, false).unwrap_err().message.contains("manager role"));
    }

    #[test]
    fn only_owners_and_admins_change_synced_settings_whatever_the_key() {
        for key in ["review.thresholds", "organization.aliases", "some.future.key"] {
            for role in Role::ALL {
                let allowed = check(role, SharedChange::Setting(key)).is_ok();
                assert_eq!(allowed, matches!(role, Role::Owner | Role::Admin), "{role} {key}");
            }
        }
        let refusal = check(Role::Reviewer, SharedChange::Setting("review.thresholds")).unwrap_err();
        assert_eq!(
            refusal.message,
            "your role (reviewer) cannot change the review thresholds; ask an owner or admin of the organization"
        );
    }

    #[test]
    fn owners_and_admins_manage_members_but_only_owners_touch_owners_and_the_last_owner_stays() {
        use MemberChange::*;
        for actor in Role::ALL {
            let manages = matches!(actor, Role::Owner | Role::Admin);
            assert_eq!(check_member_change(actor, Add { role: Role::Reviewer }, 1).is_ok(), manages, "{actor}");
            assert_eq!(check_member_change(actor, SeeCodes, 1).is_ok(), manages, "{actor}");
            assert_eq!(check_member_change(actor, Remove { role: Role::Viewer }, 1).is_ok(), manages, "{actor}");
            let owner_change = [
                Add { role: Role::Owner },
                ChangeRole { from: Role::Admin, to: Role::Owner },
                ChangeRole { from: Role::Owner, to: Role::Admin },
                Remove { role: Role::Owner },
            ];
            for change in owner_change {
                assert_eq!(check_member_change(actor, change, 2).is_ok(), actor == Role::Owner, "{actor} {change:?}");
            }
        }
        let last = check_member_change(Role::Owner, Remove { role: Role::Owner }, 1).unwrap_err();
        assert!(last.message.contains("last owner"), "{}", last.message);
        assert!(check_member_change(Role::Owner, ChangeRole { from: Role::Owner, to: Role::Viewer }, 1).is_err());
        assert!(check_member_change(Role::Owner, ChangeRole { from: Role::Owner, to: Role::Owner }, 1).is_ok());
        let admin = check_member_change(Role::Admin, Add { role: Role::Owner }, 3).unwrap_err();
        assert_eq!(
            admin.message,
            "your role (admin) cannot make, change or remove an owner; ask an owner of the organization"
        );
        let viewer = check_member_change(Role::Viewer, SeeCodes, 1).unwrap_err();
        assert!(viewer.message.contains("sign-in codes"), "{}", viewer.message);
    }

    #[test]
    fn viewers_change_nothing_and_other_members_change_documents_and_corrections() {
        for model in ["document", "review_correction", "audit_entry", "contract", "vendor", "approval_decision"] {
            let change = SharedChange::of_synced(model, "x").unwrap();
            for role in Role::ALL {
                assert_eq!(check(role, change).is_ok(), role != Role::Viewer, "{role} {model}");
            }
        }
        assert!(!may_change_anything(Role::Viewer));
        assert!(Role::ALL.into_iter().filter(|r| *r != Role::Viewer).all(may_change_anything));
        assert_eq!(SharedChange::of_synced("payroll", "x"), None);
        assert_eq!(
            SharedChange::of_synced("setting", "review.thresholds"),
            Some(SharedChange::Setting("review.thresholds"))
        );
    }
}
