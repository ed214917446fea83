//! `audit list|export` (the audit log in words, filtered; `export --csv FILE` writes the same filter as CSV) and
//! `usage` (the organization's model spend by month, person and feature against its budgets). A few lines each over
//! `api`; `--json` prints one JSON document.

use crate::output::{Outcome, clean};
use clap::{Args, Subcommand};
use pactwise_api::{Api, ApiError, AuditQuery, Existing, NaiveDate, OrgScope};
use pactwise_domain::ErrorCode;
use std::path::PathBuf;

#[derive(Args, Clone)]
pub struct AuditFilterArgs {
    /// Only what this person did (their name as the log shows it)
    #[arg(long, value_name = "NAME")]
    person: Option<String>,
    /// Only this action (see `audit actions`)
    #[arg(long, value_name = "ACTION")]
    action: Option<String>,
    /// From this day (YYYY-MM-DD, UTC)
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    from: Option<NaiveDate>,
    /// To this day, included (YYYY-MM-DD, UTC)
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    to: Option<NaiveDate>,
    /// Words in the person's name, the thing's name or the entry
    #[arg(long, value_name = "TEXT")]
    text: Option<String>,
}

#[derive(Subcommand)]
pub enum AuditCommand {
    /// The newest entries first, a page at a time (--after NEXT gives the next page)
    List {
        #[command(flatten)]
        filter: AuditFilterArgs,
        /// Rows per page (1 to 1000)
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// Where the page starts: the `next` of the previous page
        #[arg(long, value_name = "NEXT")]
        after: Option<String>,
    },
    /// The actions and people the log holds (the values --action and --person take)
    Actions,
    /// Write every entry the filter takes as CSV
    Export {
        #[command(flatten)]
        filter: AuditFilterArgs,
        /// The CSV file to write
        #[arg(long, value_name = "FILE")]
        csv: PathBuf,
        /// Replace the file if it is already there
        #[arg(long)]
        overwrite: bool,
    },
}

fn parse_date(text: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").map_err(|_| format!("{text:?} is not a date; write YYYY-MM-DD"))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

async fn query(api: &Api, scope: &OrgScope, f: AuditFilterArgs) -> Result<AuditQuery, ApiError> {
    let person = match f.person {
        None => None,
        Some(name) => {
            let choices = api.audit_choices(scope).await?;
            let found = choices.people.iter().find(|p| p.label.eq_ignore_ascii_case(name.trim()) || p.value == name);
            let Some(found) = found else {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    format!("nobody called {name:?} is in the audit log; `pactwise audit actions` lists the people"),
                ));
            };
            Some(found.value.parse().map_err(|_| ApiError::new(ErrorCode::Internal, "a person's id is not an id"))?)
        }
    };
    Ok(AuditQuery { person, action: f.action, from: f.from, to: f.to, text: f.text })
}

pub async fn audit(api: &Api, scope: &OrgScope, what: AuditCommand) -> Result<Outcome, ApiError> {
    match what {
        AuditCommand::List { filter, limit, after } => {
            let q = query(api, scope, filter).await?;
            let page = api.audit_page(scope, q, after, Some(limit)).await?;
            let mut lines: Vec<String> = page
                .lines
                .iter()
                .map(|l| format!("{}  {} {} {}", l.at, clean(&l.person), l.action, clean(&l.thing)))
                .collect();
            if let Some(next) = &page.next {
                lines.push(format!("more: --after {next}"));
            }
            Ok(Outcome::ok(to_json(&page)?, lines.join("\n")))
        }
        AuditCommand::Actions => {
            let choices = api.audit_choices(scope).await?;
            let mut lines = vec!["actions:".to_string()];
            lines.extend(choices.actions.iter().map(|a| format!("  {}  ({})", a.value, a.label)));
            lines.push("people:".into());
            lines.extend(choices.people.iter().map(|p| format!("  {}", clean(&p.label))));
            Ok(Outcome::ok(to_json(&choices)?, lines.join("\n")))
        }
        AuditCommand::Export { filter, csv, overwrite } => {
            let q = query(api, scope, filter).await?;
            let existing = if overwrite { Existing::Replace } else { Existing::Refuse };
            let done = api.export_audit_csv(scope, q, csv, existing).await?;
            let text = format!("wrote {} entr{} to {}", done.rows, if done.rows == 1 { "y" } else { "ies" }, done.path);
            Ok(Outcome::ok(to_json(&done)?, text))
        }
    }
}

/// Micro-dollars as dollars and cents for the terminal.
fn dollars(micros: f64) -> String {
    let sign = if micros < 0.0 { "-" } else { "" };
    format!("{sign}${:.2}", micros.abs() / 1_000_000.0)
}

pub async fn usage(api: &Api, scope: &OrgScope, month: Option<String>) -> Result<Outcome, ApiError> {
    let report = api.usage_report(scope, month).await?;
    let budget = |b: Option<f64>, r: Option<f64>| match (b, r) {
        (Some(b), Some(r)) => format!("  budget {}  remaining {}", dollars(b), dollars(r)),
        _ => String::new(),
    };
    let mut lines = vec![match report.scope {
        pactwise_api::UsageScope::Organization => "the organization's model spend".to_string(),
        pactwise_api::UsageScope::Own => "your own model spend".to_string(),
    }];
    for m in &report.months {
        lines.push(format!(
            "{}  {}  {} call(s){}",
            m.month,
            dollars(m.cost_micros),
            m.calls,
            budget(m.budget_micros, m.remaining_micros)
        ));
    }
    lines.push(format!("in {}, by person:", report.month));
    for p in &report.by_person {
        let name = p.name.as_deref().map_or("background work".into(), |n| clean(n).into_owned());
        lines.push(format!("  {name}  {}{}", dollars(p.cost_micros), budget(p.budget_micros, p.remaining_micros)));
    }
    lines.push(format!("in {}, by feature:", report.month));
    for f in &report.by_feature {
        let feature = serde_json::to_value(f.feature).ok().and_then(|v| v.as_str().map(str::to_owned));
        lines.push(format!("  {}  {}", feature.unwrap_or_default().replace('_', " "), dollars(f.cost_micros)));
    }
    Ok(Outcome::ok(to_json(&report)?, lines.join("\n")))
}
