//! Who may decide an approval step: one rule for the desktop store (`Approvals::decide`, whose SQL trigger
//! `engine_approvals_decider_is_eligible` encodes the same eligibility as a last defence) and the sync service
//! (which stamps offline approval requests). In order:
//!
//! 1. a step is decided once: a step already decided refuses every later decision;
//! 2. the decider's role must be one of the step's eligible roles (the step names them; the organization's owner
//!    is not special);
//! 3. with four-eyes, the person who started the run decides none of its steps, and nobody decides two steps of
//!    the same run (so a two-step four-eyes check needs two people besides the requester).
//!
//! A step's eligible roles are checked when the step is defined ([`check_eligible_roles`]): at least one, none
//! twice, never a viewer.

use pactwise_domain::Role;

/// What the rule needs to know about the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step<'a> {
    pub eligible_roles: &'a [Role],
    pub four_eyes: bool,
    /// A decision is recorded already.
    pub decided: bool,
}

/// What the rule needs to know about the person deciding (the role from their session or token, never input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decider {
    pub role: Role,
    /// They decided another step of the same run (only matters with four-eyes).
    pub decided_another_step_of_the_run: bool,
    /// They started the run the step belongs to (only matters with four-eyes).
    pub started_the_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    AlreadyDecided,
    NotEligible,
    FourEyes,
    /// Four-eyes: the requester may not approve their own request.
    OwnRequest,
}

impl Refusal {
    pub fn message(self, role: Role, eligible: &[Role]) -> String {
        match self {
            Refusal::AlreadyDecided => "this approval was already decided; a decision is recorded once".into(),
            Refusal::NotEligible => format!(
                "your role ({role}) may not decide this approval; it needs one of: {}",
                eligible.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
            ),
            Refusal::FourEyes => {
                "you decided another step of this workflow run; with four-eyes someone else must decide this one".into()
            }
            Refusal::OwnRequest => {
                "you started this workflow run; with four-eyes someone else must decide its approvals".into()
            }
        }
    }
}

/// May this person decide this step now?
pub fn may_decide(step: &Step<'_>, decider: &Decider) -> Result<(), Refusal> {
    if step.decided {
        return Err(Refusal::AlreadyDecided);
    }
    if !step.eligible_roles.contains(&decider.role) {
        return Err(Refusal::NotEligible);
    }
    if step.four_eyes && decider.started_the_run {
        return Err(Refusal::OwnRequest);
    }
    if step.four_eyes && decider.decided_another_step_of_the_run {
        return Err(Refusal::FourEyes);
    }
    Ok(())
}

/// Is this a valid list of a step's eligible roles? At least one, none twice, never a viewer.
pub fn check_eligible_roles(roles: &[Role]) -> Result<(), String> {
    if roles.is_empty() {
        return Err("an approval step names no eligible role".into());
    }
    if roles.contains(&Role::Viewer) {
        return Err("viewers cannot approve".into());
    }
    for (i, role) in roles.iter().enumerate() {
        if roles[..i].contains(role) {
            return Err(format!("the eligible role {role} is named twice"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(roles: &[Role]) -> Step<'_> {
        Step { eligible_roles: roles, four_eyes: false, decided: false }
    }

    fn by(role: Role) -> Decider {
        Decider { role, decided_another_step_of_the_run: false, started_the_run: false }
    }

    #[test]
    fn the_step_eligible_roles_decide_not_a_fixed_list() {
        // A report's sign-off is open to reviewers; a procurement approval is not.
        let sign_off = [Role::Owner, Role::Admin, Role::Reviewer];
        let purchase = [Role::Owner, Role::Admin, Role::Approver];
        assert_eq!(may_decide(&step(&sign_off), &by(Role::Reviewer)), Ok(()));
        assert_eq!(may_decide(&step(&purchase), &by(Role::Reviewer)), Err(Refusal::NotEligible));
        assert_eq!(may_decide(&step(&purchase), &by(Role::Approver)), Ok(()));
        assert_eq!(may_decide(&step(&[Role::Owner]), &by(Role::Admin)), Err(Refusal::NotEligible));
        for role in Role::ALL {
            assert_eq!(may_decide(&step(&sign_off), &by(role)).is_ok(), sign_off.contains(&role), "{role}");
        }
    }

    #[test]
    fn a_decided_step_refuses_everyone_first_then_eligibility_then_four_eyes() {
        let roles = [Role::Approver];
        let decided = Step { decided: true, ..step(&roles) };
        assert_eq!(may_decide(&decided, &by(Role::Viewer)), Err(Refusal::AlreadyDecided));
        let four = Step { four_eyes: true, ..step(&roles) };
        let again = Decider { role: Role::Approver, decided_another_step_of_the_run: true, started_the_run: false };
        assert_eq!(may_decide(&four, &again), Err(Refusal::FourEyes));
        assert_eq!(may_decide(&step(&roles), &again), Ok(()), "without four-eyes one person may decide both");
        let ineligible_again =
            Decider { role: Role::Buyer, decided_another_step_of_the_run: true, started_the_run: false };
        assert_eq!(may_decide(&four, &ineligible_again), Err(Refusal::NotEligible));
        let requester = Decider { started_the_run: true, ..by(Role::Approver) };
        assert_eq!(may_decide(&four, &requester), Err(Refusal::OwnRequest));
        assert_eq!(may_decide(&step(&roles), &requester), Ok(()), "without four-eyes the requester may decide");
    }

    #[test]
    fn eligible_role_lists_are_not_empty_have_no_viewer_and_no_repeats() {
        assert!(check_eligible_roles(&[Role::Owner, Role::Reviewer]).is_ok());
        assert!(check_eligible_roles(&[]).is_err());
        assert!(check_eligible_roles(&[Role::Viewer]).is_err());
        assert!(check_eligible_roles(&[Role::Admin, Role::Admin]).is_err());
    }
}
