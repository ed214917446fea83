//! Contract repository commands: `contracts list` (filters, search, paging), `contracts show ID`, `contracts dates`
//! (upcoming expirations and notice deadlines by month, `--ics FILE` writes them as a calendar), and `finalize ID`.
//! Each is a few lines over an `api` function; `--json` prints one JSON document.

use crate::output::{Outcome, clean};
use clap::{Subcommand, ValueEnum};
use pactwise_api::{
    Api, ApiError, ContractOrder, ContractQuery, Existing, FinalizeInput, NaiveDate, OrgScope, parse_document_id,
};
use pactwise_domain::ErrorCode;
use serde_json::json;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum ContractsCommand {
    /// Finalized contracts of the current organization, filtered and searched
    List {
        /// A contract type id (see `pactwise checklists stats`), e.g. license
        #[arg(long = "type", value_name = "TYPE")]
        type_id: Option<String>,
        /// Part of the counterparty's name
        #[arg(long, value_name = "NAME")]
        counterparty: Option<String>,
        /// The governing law, e.g. "New York, United States"
        #[arg(long, value_name = "LAW")]
        law: Option<String>,
        /// high (red flags), medium (critical items missing) or low
        #[arg(long, value_name = "LEVEL")]
        risk: Option<String>,
        /// Expires within this many days from today
        #[arg(long, value_name = "DAYS")]
        expiring_within: Option<u32>,
        /// The notice of non-renewal is due within this many days from today
        #[arg(long, value_name = "DAYS")]
        notice_within: Option<u32>,
        /// Words in the name, the counterparty or the extracted values
        #[arg(long, value_name = "WORDS")]
        search: Option<String>,
        #[arg(long, value_enum, default_value = "name")]
        order: OrderArg,
        #[arg(long, default_value_t = 0)]
        offset: u32,
        /// Rows per page (1 to 500)
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// One finalized contract: its fields with their quotes, the checklist outcome, reports, runs and vendor
    Show {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Upcoming expirations and notice deadlines by month; --ics writes them as an iCalendar file
    Dates {
        /// The first day (YYYY-MM-DD) [default: today]
        #[arg(long, value_name = "DATE", value_parser = parse_date)]
        from: Option<NaiveDate>,
        /// How many months to look ahead (1 to 60)
        #[arg(long, default_value_t = 12)]
        months: u32,
        /// Write the dates as an iCalendar file (.ics) there
        #[arg(long, value_name = "FILE")]
        ics: Option<PathBuf>,
        /// Replace the file if it is already there
        #[arg(long, requires = "ics")]
        overwrite: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum OrderArg {
    Name,
    Expires,
    Notice,
    Finalized,
}

fn parse_date(text: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").map_err(|_| format!("{text:?} is not a date; write YYYY-MM-DD"))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

fn or_dash(v: Option<impl std::fmt::Display>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

pub async fn run(api: &Api, scope: &OrgScope, what: ContractsCommand) -> Result<Outcome, ApiError> {
    match what {
        ContractsCommand::List {
            type_id,
            counterparty,
            law,
            risk,
            expiring_within,
            notice_within,
            search,
            order,
            offset,
            limit,
        } => {
            let query = ContractQuery {
                type_id,
                counterparty,
                governing_law: law,
                risk,
                expiring_within_days: expiring_within,
                notice_within_days: notice_within,
                search,
                order: match order {
                    OrderArg::Name => ContractOrder::Name,
                    OrderArg::Expires => ContractOrder::ExpiresOn,
                    OrderArg::Notice => ContractOrder::NoticeBy,
                    OrderArg::Finalized => ContractOrder::Finalized,
                },
                offset,
                limit,
            };
            let page = api.contract_list(scope, query).await?;
            let mut lines = vec![format!(
                "{} contract(s) match; showing {} from {}",
                page.total,
                page.items.len(),
                page.offset + u32::from(!page.items.is_empty())
            )];
            for c in &page.items {
                lines.push(format!(
                    "{}  {}  [{}]  counterparty: {}  law: {}  expires: {}  notice by: {}  risk: {}",
                    c.document,
                    clean(&c.name),
                    c.type_name,
                    or_dash(c.counterparty.as_deref().map(clean)),
                    or_dash(c.governing_law.as_deref().map(clean)),
                    or_dash(c.expires_on),
                    or_dash(c.notice_by),
                    or_dash(c.risk.as_deref()),
                ));
            }
            Ok(Outcome::ok(to_json(&page)?, lines.join("\n")))
        }
        ContractsCommand::Show { id } => {
            let detail = api.contract_detail(scope, parse_document_id(&id)?).await?;
            let c = &detail.contract;
            let mut lines = vec![
                format!("{} ({})", clean(&c.name), c.type_name),
                format!("counterparty: {}", or_dash(c.counterparty.as_deref().map(clean))),
                format!("vendor: {}", or_dash(c.vendor.as_deref().map(clean))),
                format!("risk: {}", or_dash(c.risk.as_deref())),
                format!("finalized by {} at {}", or_dash(detail.finalized_by.as_deref().map(clean)), c.finalized_at),
                String::new(),
            ];
            for f in &detail.fields {
                let at = f.page.map(|p| format!(" (page {p})")).unwrap_or_default();
                lines.push(format!("{}: {}{at}", f.label, clean(&f.value)));
                if let Some(q) = &f.quote {
                    lines.push(format!("    \"{}\"", clean(q)));
                }
            }
            lines.push(String::new());
            lines.push(format!(
                "checklist: {} item(s), {} with red flags, {} critical, {} confirmed by a person",
                detail.outcome.items,
                detail.outcome.red_flags.len(),
                detail.outcome.critical.len(),
                detail.outcome.confirmed.len()
            ));
            lines.push(format!("reports: {}   runs: {}", detail.reports.len(), detail.runs.len()));
            if let Some(r) = &detail.reminder {
                let state = if r.started { "went out" } else { "scheduled" };
                lines.push(format!("renewal reminder: {} ({state}; notice due by {})", r.remind_on, r.notice_by));
            }
            Ok(Outcome::ok(to_json(&detail)?, lines.join("\n")))
        }
        ContractsCommand::Dates { from, months, ics, overwrite } => {
            let from = from.unwrap_or_else(|| api.today());
            let upcoming = api.upcoming_dates(scope, from, months).await?;
            let mut lines = vec![format!("{} date(s) from {} to {}", upcoming.total, upcoming.from, upcoming.until)];
            for m in &upcoming.months {
                lines.push(m.label.clone());
                for d in &m.dates {
                    lines.push(format!("  {}  {}: {}", d.date, d.label, clean(&d.name)));
                }
            }
            let mut json = to_json(&upcoming)?;
            if let Some(path) = ics {
                let existing = if overwrite { Existing::Replace } else { Existing::Refuse };
                let written = api.export_contract_calendar(scope, from, months, path, existing).await?;
                lines.push(format!("wrote {} event(s) to {}", written.events, written.path));
                json["ics"] = to_json(&written)?;
            }
            Ok(Outcome::ok(json, lines.join("\n")))
        }
    }
}

/// `pactwise finalize ID`: every critical item must already be confirmed or corrected (`pactwise correct`).
pub async fn finalize(
    api: &Api,
    scope: &OrgScope,
    id: &str,
    vendor_id: Option<String>,
    new_vendor: Option<String>,
) -> Result<Outcome, ApiError> {
    let id = parse_document_id(id)?;
    let review = api.finalize_review(scope, id, FinalizeInput { vendor_id, new_vendor_name: new_vendor }).await?;
    let text = format!(
        "finalized by {} at {}; vendor: {}",
        or_dash(review.finalized_by.as_deref().map(clean)),
        or_dash(review.finalized_at.as_deref()),
        or_dash(review.vendor.as_deref().map(clean))
    );
    Ok(Outcome::ok(json!(review), text))
}
