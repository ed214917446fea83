//! The first-run screen (issue 24): whether this installation still needs setting up, and setting it up. Until it
//! is set up the desktop shows the welcome screen instead of its areas. It counts as set up once the person names
//! their organization here, explores the demo (`seed_demo`, also what `make run` does) or signs in to their
//! organization's sync service (`finish_sign_in`).

use crate::session::SessionInfo;
use crate::workspace::clean_own_names;
use crate::{Api, ApiError};
use pactwise_domain::ErrorCode;
use pactwise_store::OrgScope;
use serde::{Deserialize, Serialize};

/// Whether the welcome screen is shown, and what it starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FirstRunView {
    /// True until this installation is set up.
    pub needed: bool,
    /// The current organization's name (the placeholder "My organization" on a new installation).
    pub organization_name: String,
}

/// What the person types on the welcome screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FirstRunInput {
    /// The organization's name, e.g. "Northwind Traders Ltd".
    pub organization_name: String,
    /// Other names it signs contracts as (trading names, abbreviations, former names); the review never takes
    /// them, or the name above, for the counterparty.
    pub own_names: Vec<String>,
}

/// The longest organization name accepted (longer is almost certainly a paste gone wrong).
const MAX_NAME_CHARS: usize = 200;

/// The organization's name as typed, trimmed, or why it cannot be used.
fn organization_name(typed: &str) -> Result<String, ApiError> {
    let name = typed.trim();
    if name.is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "Type your organization's name, as it appears in your contracts (e.g. Northwind Traders Ltd).",
        ));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("The organization's name is longer than {MAX_NAME_CHARS} characters; shorten it."),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            "The organization's name holds a line break or another control character; type it on one line.",
        ));
    }
    Ok(name.to_owned())
}

impl Api {
    /// Whether this installation still needs its first-run screen.
    pub async fn first_run(&self, scope: &OrgScope) -> Result<FirstRunView, ApiError> {
        let org = scope.org();
        Ok(self
            .db
            .call(move |store| {
                let platform = store.platform();
                Ok(FirstRunView {
                    needed: !platform.first_run_done()?,
                    organization_name: platform.organization_name(org)?,
                })
            })
            .await?)
    }

    /// Sets this installation up from the welcome screen: names the organization and stores its own names (the
    /// organization's name first among them). Nothing is written when the input is refused.
    pub async fn complete_first_run(&self, scope: &OrgScope, input: FirstRunInput) -> Result<SessionInfo, ApiError> {
        let name = organization_name(&input.organization_name)?;
        let mut own_names = vec![name.clone()];
        own_names.extend(input.own_names);
        let own_names = clean_own_names(own_names)?;
        let s = scope.clone();
        self.db.call(move |store| store.platform().complete_first_run(&s, &name, &own_names)).await?;
        tracing::info!(org = %scope.org(), "first run completed");
        self.session_info(scope).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_organization_name_is_trimmed_and_refused_when_empty_too_long_or_on_several_lines() {
        assert_eq!(organization_name("  Northwind Traders Ltd ").unwrap(), "Northwind Traders Ltd");
        for bad in ["", "   ", "Northwind\nTraders", &"x".repeat(MAX_NAME_CHARS + 1)] {
            let e = organization_name(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad:?}");
        }
    }
}
