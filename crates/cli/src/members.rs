//! `pactwise members …` and `pactwise org …`: the organization's members (list; add, change a role, remove, a new
//! sign-in code, for owners and admins through the sync service) and the organizations this install works in (list,
//! switch). A one-time code is printed once, when it is made.

use crate::output::{Outcome, clean};
use clap::Subcommand;
use pactwise_api::{AddMemberInput, Api, ApiError, MemberView, OrgScope};
use pactwise_domain::{ErrorCode, OrgId, Role};
use serde_json::json;

#[derive(Subcommand)]
pub enum MembersCommand {
    /// The organization's members, with their roles
    List,
    /// Add a member (owners and admins); prints the one-time sign-in code to hand over, once
    Add {
        #[arg(long, value_name = "EMAIL")]
        email: String,
        /// The member's name as everyone sees it
        #[arg(long, value_name = "NAME")]
        name: String,
        /// owner, admin, reviewer, buyer, approver or viewer
        #[arg(long, value_name = "ROLE", value_parser = parse_role)]
        role: Role,
    },
    /// Change a member's role (owners and admins; only owners make or change owners)
    Role {
        /// The member's email or id
        #[arg(value_name = "MEMBER")]
        member: String,
        #[arg(value_name = "ROLE", value_parser = parse_role)]
        role: Role,
    },
    /// Remove a member: their devices stop syncing; their past work keeps their name
    Remove {
        #[arg(value_name = "MEMBER")]
        member: String,
    },
    /// A new one-time sign-in code for a member who lost theirs (the earlier one stops working)
    Code {
        #[arg(value_name = "MEMBER")]
        member: String,
    },
}

#[derive(Subcommand)]
pub enum OrgCommand {
    /// The organizations this install works in (the current one marked)
    List,
    /// Set up a new installation, as the app's welcome screen does: the organization's name and the other names it
    /// signs contracts as (the review never takes them for the counterparty)
    Setup {
        /// The organization's name, as in its contracts
        #[arg(long, value_name = "NAME")]
        name: String,
        /// Another name it signs as (a trading name, an abbreviation); repeat for several
        #[arg(long = "also-known-as", value_name = "NAME")]
        also_known_as: Vec<String>,
    },
    /// Make another organization current (by its name or id); nothing moves between organizations
    Switch {
        #[arg(value_name = "ORG")]
        org: String,
    },
    /// Bring another organization's documents (with their corrections) into the current one as its new records;
    /// the other organization keeps its own
    Bring {
        /// The organization to bring the documents from (its name or id)
        #[arg(value_name = "FROM")]
        from: String,
    },
}

/// The one organization of this install a person named (by name or id), other than none or several.
async fn named_org(api: &Api, scope: &OrgScope, wanted: &str) -> Result<OrgId, ApiError> {
    let orgs = api.organizations(scope).await?;
    let wanted = wanted.trim();
    let by_id = wanted.parse::<OrgId>().ok();
    let matching: Vec<_> =
        orgs.iter().filter(|o| Some(o.org_id) == by_id || o.name.eq_ignore_ascii_case(wanted)).collect();
    match matching.as_slice() {
        [one] => Ok(one.org_id),
        [] => Err(ApiError::new(
            ErrorCode::NotFound,
            format!("no organization {wanted:?} on this computer; `pactwise org list` shows them"),
        )),
        _ => Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("more than one organization is named {wanted:?}; name it by its id (`org list --json`)"),
        )),
    }
}

fn parse_role(text: &str) -> Result<Role, String> {
    text.trim()
        .to_lowercase()
        .parse()
        .map_err(|_| format!("{text:?} is not a role; use one of owner, admin, reviewer, buyer, approver, viewer"))
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Owner => "Owner",
        Role::Admin => "Admin",
        Role::Reviewer => "Reviewer",
        Role::Buyer => "Buyer",
        Role::Approver => "Approver",
        Role::Viewer => "Viewer",
    }
}

fn member_line(m: &MemberView) -> String {
    format!(
        "{:<28} {:<32} {:<9}{}{}",
        clean(&m.display_name),
        clean(m.email.as_deref().unwrap_or("")),
        role_name(m.role),
        if m.is_you { " (you)" } else { "" },
        m.code_open_until.as_deref().map(|t| format!(" · sign-in code open until {t}")).unwrap_or_default()
    )
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

fn code_text(name: &str, code: &str, until: &str) -> String {
    format!(
        "Hand this one-time sign-in code to {}; it works once, until {until}, and is not shown again:\n\n    {code}\n\n\
         They sign in with `pactwise sync sign-in --code` (or the app's sync sign-in) and choose their password.",
        clean(name)
    )
}

pub async fn run(api: &Api, scope: &OrgScope, command: MembersCommand) -> Result<Outcome, ApiError> {
    match command {
        MembersCommand::List => {
            let view = api.members(scope).await?;
            let mut text = view.members.iter().map(member_line).collect::<Vec<_>>().join("\n");
            if !view.synced {
                text.push_str("\n(this organization does not sync: sign in to sync to add or change members)");
            }
            if let Some(why) = &view.offline_reason {
                text.push_str(&format!("\n(the list on this computer; the sync service was not reached: {why})"));
            }
            Ok(Outcome::ok(to_json(&view)?, text))
        }
        MembersCommand::Add { email, name, role } => {
            let added = api.add_member(scope, AddMemberInput { email, display_name: name, role }).await?;
            let text = code_text(&added.member.display_name, &added.code, &added.code_expires_at);
            Ok(Outcome::ok(to_json(&added)?, text))
        }
        MembersCommand::Role { member, role } => {
            let user = api.find_member(scope, &member).await?;
            let changed = api.change_member_role(scope, user, role).await?;
            let text = format!("{} is now {}.", clean(&changed.display_name), role_name(changed.role));
            Ok(Outcome::ok(to_json(&changed)?, text))
        }
        MembersCommand::Remove { member } => {
            let user = api.find_member(scope, &member).await?;
            api.remove_member(scope, user).await?;
            Ok(Outcome::ok(
                json!({"removed": user}),
                "Removed; their devices stop syncing at their next request.".into(),
            ))
        }
        MembersCommand::Code { member } => {
            let user = api.find_member(scope, &member).await?;
            let added = api.new_member_code(scope, user).await?;
            let text = code_text(&added.member.display_name, &added.code, &added.code_expires_at);
            Ok(Outcome::ok(to_json(&added)?, text))
        }
    }
}

pub async fn run_org(api: &Api, scope: &OrgScope, command: OrgCommand) -> Result<Outcome, ApiError> {
    match command {
        OrgCommand::List => {
            let orgs = api.organizations(scope).await?;
            let text = orgs
                .iter()
                .map(|o| format!("{} {:<40} {}", if o.current { "*" } else { " " }, clean(&o.name), role_name(o.role)))
                .collect::<Vec<_>>()
                .join("\n");
            Ok(Outcome::ok(to_json(&orgs)?, text))
        }
        OrgCommand::Setup { name, also_known_as } => {
            let input = pactwise_api::FirstRunInput { organization_name: name, own_names: also_known_as };
            let session = api.complete_first_run(scope, input).await?;
            let names = api.own_names(scope).await?;
            let text = format!(
                "{} is set up; its names: {}.",
                clean(&session.org_name),
                names.iter().map(|n| clean(n)).collect::<Vec<_>>().join(", ")
            );
            Ok(Outcome::ok(json!({ "session": session, "own_names": names }), text))
        }
        OrgCommand::Switch { org } => {
            let target = named_org(api, scope, &org).await?;
            let now = api.switch_organization(scope, target).await?;
            let session = api.session_info(&now).await?;
            let text = format!("{} is now the current organization.", clean(&session.org_name));
            Ok(Outcome::ok(json!({ "session": session }), text))
        }
        OrgCommand::Bring { from } => {
            let source = named_org(api, scope, &from).await?;
            let report = api.bring_over_documents(scope, source).await?;
            let mut text = format!(
                "Brought {} document(s) with {} correction(s) into the current organization; {} were there already.",
                report.brought, report.corrections, report.already_there
            );
            for failed in &report.failed {
                text.push_str(&format!("\nnot brought: {}", clean(failed)));
            }
            Ok(Outcome::ok(to_json(&report)?, text))
        }
    }
}
