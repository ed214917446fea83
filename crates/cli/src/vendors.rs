//! Vendor commands: `vendors list` (with `--merged`), `vendors show ID`, `vendors add NAME`, `vendors duplicates`,
//! `vendors merge KEEP DUPLICATE` (a person confirms: links follow, the duplicate is kept as merged),
//! `vendors set-status ID STATUS --reason`, `vendors onboard ID`. Each is a few lines over an `api` function.

use crate::output::{Outcome, clean};
use clap::{Subcommand, ValueEnum};
use pactwise_api::VendorIdentifier as Identifier;
use pactwise_api::{Api, ApiError, OnboardingInput, OrgScope, VendorInput, VendorSummary};
use pactwise_domain::{ErrorCode, VendorStatus};

#[derive(Subcommand)]
pub enum VendorsCommand {
    /// The organization's vendors by name, with status and how many contracts each has
    List {
        /// Include vendors merged into another
        #[arg(long)]
        merged: bool,
    },
    /// One vendor: names, identifiers, status, its contracts and documents, its runs, its likely duplicates
    Show {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Add a vendor (prospective)
    Add {
        #[arg(value_name = "NAME")]
        name: String,
        /// Another name the vendor goes by (repeat for several)
        #[arg(long = "alias", value_name = "NAME")]
        aliases: Vec<String>,
        /// An identifier as KIND=VALUE, e.g. "tax id=DE123456789" (repeat for several)
        #[arg(long = "id", value_name = "KIND=VALUE")]
        identifiers: Vec<String>,
    },
    /// Vendors that share a name, an alias or an identifier
    Duplicates,
    /// Merge DUPLICATE into KEEP: contracts follow, DUPLICATE is kept as merged (audited)
    Merge {
        #[arg(value_name = "KEEP")]
        keep: String,
        #[arg(value_name = "DUPLICATE")]
        duplicate: String,
    },
    /// Set a vendor's status, saying why
    SetStatus {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(value_enum, value_name = "STATUS")]
        status: StatusArg,
        #[arg(long, value_name = "WHY")]
        reason: String,
    },
    /// Start onboarding the vendor (its status follows the decision: active, or blocked)
    Onboard {
        #[arg(value_name = "ID")]
        id: String,
        /// A document the vendor has sent: w9, insurance_certificate, security_questionnaire (repeat)
        #[arg(long = "document", value_name = "NAME")]
        documents: Vec<String>,
        /// The sanctions list check found a possible match
        #[arg(long)]
        sanctions_hit: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum StatusArg {
    Prospective,
    Onboarding,
    Active,
    Blocked,
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

fn line(v: &VendorSummary) -> String {
    let mut s = format!("{}  {}  [{}]  contracts: {}", v.id, clean(&v.name), v.status_label, v.contracts);
    if !v.aliases.is_empty() {
        s.push_str(&format!(
            "  also: {}",
            v.aliases.iter().map(|a| clean(a).into_owned()).collect::<Vec<_>>().join(", ")
        ));
    }
    if v.possible_duplicate {
        s.push_str("  (possible duplicate)");
    }
    if let Some(into) = &v.merged_into {
        s.push_str(&format!("  merged into {}", clean(into)));
    }
    s
}

fn identifier(text: &str) -> Result<Identifier, ApiError> {
    let (kind, value) = text.split_once('=').ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("{text:?}: write an identifier as KIND=VALUE, e.g. \"tax id=DE123\""),
        )
    })?;
    Ok(Identifier { kind: kind.trim().into(), value: value.trim().into() })
}

pub async fn run(api: &Api, scope: &OrgScope, what: VendorsCommand) -> Result<Outcome, ApiError> {
    match what {
        VendorsCommand::List { merged } => {
            let list = api.vendor_list(scope, merged).await?;
            let mut lines = vec![format!("{} vendor(s)", list.len())];
            lines.extend(list.iter().map(line));
            Ok(Outcome::ok(to_json(&list)?, lines.join("\n")))
        }
        VendorsCommand::Show { id } => {
            let d = api.vendor_detail(scope, id).await?;
            let mut lines = vec![line(&d.vendor)];
            for i in &d.vendor.identifiers {
                lines.push(format!("{}: {}", i.kind.replace('_', " "), clean(&i.value)));
            }
            lines.push(format!("documents: {}", d.documents.len()));
            for doc in &d.documents {
                let state = if doc.finalized { "contract" } else { "in review" };
                lines.push(format!(
                    "  {}  {} ({}, {state}, linked by {})",
                    doc.document,
                    clean(&doc.name),
                    doc.type_name,
                    doc.linked_by
                ));
            }
            for r in &d.runs {
                lines.push(format!("run {}  {}  {}", r.run, r.workflow, r.status));
            }
            for v in &d.duplicates {
                lines.push(format!("looks like: {}", line(v)));
            }
            if let Some(why) = &d.onboard_refusal {
                lines.push(format!("onboarding: {why}"));
            }
            Ok(Outcome::ok(to_json(&d)?, lines.join("\n")))
        }
        VendorsCommand::Add { name, aliases, identifiers } => {
            let identifiers = identifiers.iter().map(|i| identifier(i)).collect::<Result<Vec<_>, _>>()?;
            let input = VendorInput { name: Some(name), aliases: Some(aliases), identifiers: Some(identifiers) };
            let v = api.vendor_create(scope, input).await?;
            Ok(Outcome::ok(to_json(&v)?, format!("added {}", line(&v))))
        }
        VendorsCommand::Duplicates => {
            let groups = api.vendor_duplicates(scope).await?;
            let mut lines = vec![format!("{} group(s) of possible duplicates", groups.len())];
            for g in &groups {
                lines.push(format!("sharing {}:", g.because.join(", ")));
                lines.extend(g.vendors.iter().map(|v| format!("  {}", line(v))));
            }
            Ok(Outcome::ok(to_json(&groups)?, lines.join("\n")))
        }
        VendorsCommand::Merge { keep, duplicate } => {
            let out = api.vendor_merge(scope, keep, duplicate).await?;
            Ok(Outcome::ok(to_json(&out)?, out.message.clone()))
        }
        VendorsCommand::SetStatus { id, status, reason } => {
            let status = match status {
                StatusArg::Prospective => VendorStatus::Prospective,
                StatusArg::Onboarding => VendorStatus::Onboarding,
                StatusArg::Active => VendorStatus::Active,
                StatusArg::Blocked => VendorStatus::Blocked,
            };
            let v = api.vendor_set_status(scope, id, status, reason).await?;
            Ok(Outcome::ok(to_json(&v)?, line(&v)))
        }
        VendorsCommand::Onboard { id, documents, sanctions_hit } => {
            let run = api.start_vendor_onboarding(scope, id, OnboardingInput { documents, sanctions_hit }).await?;
            Ok(Outcome::ok(to_json(&run)?, format!("onboarding run {} started: {}", run.id, run.status)))
        }
    }
}
