//! What people asked for and could not find: the organization's model spend against its budgets (Settings → Usage),
//! the audit log in words (filtered, paged newest first, exported as CSV), each document's stage log, and the
//! signed-in user's earlier assistant answers with their citations. Every read goes through the session's scope.
//!
//! Who sees spending is `store::spend_visible_to` (owners and admins the organization's, everyone else their own).

use crate::export_file::Existing;
use crate::{Api, ApiError};
use chrono::{DateTime, Datelike, Months, NaiveDate, TimeZone, Utc};
use pactwise_assistant::{Citation, CitationKind};
use pactwise_domain::usage::{Budget, BudgetPeriod, BudgetSubject, UsageFeature};
use pactwise_domain::{DocumentId, ErrorCode, UserId};
use pactwise_store::{AuditFilter, AuditRow, OrgScope, SpendRow, spend_visible_to};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Months of spending the Usage view lists.
const USAGE_MONTHS: u32 = 24;
/// Rows of one page of the audit log unless the caller asks for another number, and the most one page holds.
pub const AUDIT_PAGE: u32 = 100;
pub const AUDIT_PAGE_LIMIT: u32 = 1000;
/// Rows read per query while exporting.
const EXPORT_BATCH: u32 = 1000;
/// Earlier answers per page, and the most one page holds.
pub const HISTORY_PAGE: u32 = 20;
pub const HISTORY_PAGE_LIMIT: u32 = 100;

// ---------------------------------------------------------------------------------------------------------------
// Usage

/// Whose spending the report covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum UsageScope {
    /// The whole organization (owners and admins).
    Organization,
    /// Only the signed-in person's own calls (every other role).
    Own,
}

/// Spending of one month, with the monthly budget that applies to it and what remains of it. Money is in the
/// ledger's unit, micro-dollars (1 USD = 1,000,000), as whole numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct MonthSpend {
    /// `YYYY-MM` (UTC calendar).
    pub month: String,
    pub calls: u32,
    pub cost_micros: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    /// The monthly budget as set now; `None` when there is none.
    pub budget_micros: Option<f64>,
    /// Budget minus spend (negative when the budget was lowered below what was already spent).
    pub remaining_micros: Option<f64>,
}

/// Spending of one person in the chosen month.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PersonSpend {
    /// The person's name; `None` for background work no person started (workflow steps, the work loop).
    pub name: Option<String>,
    /// Whether this is the signed-in person.
    pub you: bool,
    pub calls: u32,
    pub cost_micros: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    /// The tightest monthly budget that applies to this person (their own, or the one each person has).
    pub budget_micros: Option<f64>,
    pub remaining_micros: Option<f64>,
}

/// Spending on one feature in the chosen month.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FeatureSpend {
    pub feature: UsageFeature,
    pub calls: u32,
    pub cost_micros: f64,
    pub input_tokens: f64,
    pub output_tokens: f64,
}

/// Today's spending against a daily budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct DailySpend {
    pub budget_micros: f64,
    pub spent_micros: f64,
    pub remaining_micros: f64,
}

/// Settings → Usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct UsageReport {
    pub scope: UsageScope,
    /// The month the people and features are for (`YYYY-MM`).
    pub month: String,
    /// The current month (`YYYY-MM`), by the app's clock.
    pub current_month: String,
    /// Newest first; the current month is always listed.
    pub months: Vec<MonthSpend>,
    pub by_person: Vec<PersonSpend>,
    pub by_feature: Vec<FeatureSpend>,
    /// Today against the daily budget, when one applies.
    pub today: Option<DailySpend>,
}

fn month_key(t: DateTime<Utc>) -> String {
    format!("{:04}-{:02}", t.year(), t.month())
}

/// The first instant of a `YYYY-MM` month and of the next one.
fn month_bounds(month: &str) -> Result<(DateTime<Utc>, DateTime<Utc>), ApiError> {
    let bad = || {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("{month:?} is not a month; write it as year and month, e.g. 2026-11"),
        )
    };
    let (y, m) = month.split_once('-').ok_or_else(bad)?;
    if y.len() != 4 || m.len() != 2 {
        return Err(bad());
    }
    let first =
        NaiveDate::from_ymd_opt(y.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?, 1).ok_or_else(bad)?;
    let next = first.checked_add_months(Months::new(1)).ok_or_else(bad)?;
    let at = |d: NaiveDate| Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default());
    Ok((at(first), at(next)))
}

/// The tightest budget of `period` that limits `spender` (`None`: the organization as a whole).
fn budget_for(budgets: &[Budget], period: BudgetPeriod, spender: Option<UserId>) -> Option<i64> {
    budgets
        .iter()
        .filter(|b| b.period == period)
        .filter(|b| match (spender, b.subject) {
            (None, BudgetSubject::Organization) => true,
            (Some(_), BudgetSubject::EachUser) => true,
            (Some(u), BudgetSubject::User(v)) => u == v,
            _ => false,
        })
        .map(|b| b.limit_micros)
        .min()
}

fn remaining(budget: Option<i64>, spent: i64) -> (Option<f64>, Option<f64>) {
    (budget.map(|b| b as f64), budget.map(|b| (b - spent) as f64))
}

// ---------------------------------------------------------------------------------------------------------------
// Audit log

/// Which entries to show or export. Dates are whole days (UTC), both included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AuditQuery {
    pub person: Option<UserId>,
    /// An action from [`AuditChoices::actions`].
    pub action: Option<String>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub text: Option<String>,
}

/// One entry in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AuditLine {
    /// RFC 3339 (UTC).
    pub at: String,
    pub person: String,
    pub action: String,
    pub thing: String,
}

/// One page, newest first, and where the next one starts (`None` at the end).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AuditPage {
    pub lines: Vec<AuditLine>,
    pub next: Option<String>,
}

/// A value a filter can take, with its words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// What the audit log's filters offer: the actions and the people its entries hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AuditChoices {
    pub actions: Vec<Choice>,
    pub people: Vec<Choice>,
}

/// What an audit export wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ExportedAudit {
    pub path: String,
    pub bytes: u64,
    pub rows: u32,
}

/// An action in words, as a sentence's verb phrase ("finalized the review"). Unknown actions read as their name
/// in words.
pub fn action_words(action: &str) -> String {
    let words = match action {
        "document.imported" => "imported",
        "document.restored" => "restored from the trash",
        "document.deleted" => "moved to the trash",
        "document.received" => "received from another desktop",
        "document.brought_over" => "brought over between organizations",
        "review.confirm" => "confirmed a checklist item of",
        "review.correct" => "corrected a checklist item of",
        "review.finalize" => "finalized the review of",
        "review.reopen" => "reopened the review of",
        "contract.link_vendor" => "linked a vendor to",
        "vendor.create" => "added",
        "vendor.edit" => "edited",
        "vendor.status" => "changed the status of",
        "vendor.merge" => "merged duplicates into",
        "vendor.merged_into" => "merged away",
        "vendor.onboarding_decided" => "decided the onboarding of",
        "prep.create" => "created",
        "prep.save" => "saved",
        "prep.publish" => "published",
        "prep.lock_taken_over" => "took over editing",
        "model_budget.set" => "set",
        "run_started" => "started",
        "run_finished" => "saw finish",
        "run_cancelled" => "cancelled",
        "run_cancel_requested" => "asked to cancel",
        "run_stopped" => "stopped (it was stuck)",
        "approval_decided" => "decided",
        "approval_requested" => "asked to decide",
        "approval_escalated" => "escalated",
        other => return crate::run_words::humanize(other).to_lowercase(),
    };
    words.to_string()
}

/// An action as the filter lists it ("Review finalized").
fn action_label(action: &str) -> String {
    let label = match action {
        "document.imported" => "Document imported",
        "document.restored" => "Document restored",
        "document.deleted" => "Document moved to the trash",
        "document.received" => "Document received by sync",
        "document.brought_over" => "Document brought over",
        "review.confirm" => "Checklist item confirmed",
        "review.correct" => "Checklist item corrected",
        "review.finalize" => "Review finalized",
        "review.reopen" => "Review reopened",
        "contract.link_vendor" => "Vendor linked to a contract",
        "vendor.create" => "Vendor added",
        "vendor.edit" => "Vendor edited",
        "vendor.status" => "Vendor status changed",
        "vendor.merge" => "Vendors merged",
        "vendor.merged_into" => "Vendor merged away",
        "vendor.onboarding_decided" => "Vendor onboarding decided",
        "prep.create" => "RFP package created",
        "prep.save" => "RFP package saved",
        "prep.publish" => "RFP package published",
        "prep.lock_taken_over" => "RFP package editing taken over",
        "model_budget.set" => "Model budget set",
        "run_started" => "Workflow run started",
        "run_finished" => "Workflow run finished",
        "run_cancelled" => "Workflow run cancelled",
        "run_cancel_requested" => "Workflow run cancel asked",
        "run_stopped" => "Workflow run stopped",
        "approval_decided" => "Approval decided",
        "approval_requested" => "Approval decision asked",
        "approval_escalated" => "Approval escalated",
        other => return crate::run_words::humanize(other),
    };
    label.to_string()
}

fn quoted(name: &Option<String>) -> Option<String> {
    name.as_deref().map(|n| format!("“{}”", n.trim()))
}

/// The thing an entry is about, in words.
fn thing_words(row: &AuditRow) -> String {
    let name = quoted(&row.entity_name);
    match (row.entity_kind.as_str(), name) {
        ("document", Some(n)) => format!("the document {n}"),
        ("document", None) => "a document no longer here".into(),
        ("vendor", Some(n)) => format!("the vendor {n}"),
        ("vendor", None) => "a vendor".into(),
        ("prep_package", Some(n)) => format!("the RFP package {n}"),
        ("prep_package", None) => "an RFP package".into(),
        ("run", Some(_)) => {
            let graph = row.entity_name.as_deref().unwrap_or_default();
            format!("a run of “{}”", crate::run_words::graph_title_by_name(graph))
        }
        ("run", None) => "a workflow run".into(),
        ("approval", Some(n)) => format!("the approval step {n}"),
        ("approval", None) => "an approval step".into(),
        ("model_budget", _) => "a model budget".into(),
        (other, _) => format!("a {}", crate::run_words::humanize(other).to_lowercase()),
    }
}

fn person_words(row: &AuditRow) -> String {
    match (&row.actor, &row.actor_name) {
        (_, Some(name)) => name.clone(),
        (Some(_), None) => "A former member".into(),
        (None, None) => "The app".into(),
    }
}

fn line_of(row: &AuditRow) -> AuditLine {
    AuditLine {
        at: row.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        person: person_words(row),
        action: action_words(&row.action),
        thing: thing_words(row),
    }
}

impl AuditQuery {
    fn filter(&self) -> Result<AuditFilter, ApiError> {
        let day = |d: NaiveDate| Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default());
        if let (Some(from), Some(to)) = (self.from, self.to)
            && to < from
        {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("the range ends ({to}) before it starts ({from}); swap the two dates"),
            ));
        }
        Ok(AuditFilter {
            actor: self.person,
            action: self.action.clone().filter(|a| !a.is_empty()),
            from: self.from.map(day),
            to: self.to.and_then(|d| d.succ_opt()).map(day),
            text: self.text.clone(),
        })
    }
}

fn parse_cursor(cursor: Option<&str>) -> Result<Option<i64>, ApiError> {
    cursor
        .map(|c| {
            c.parse::<i64>().map_err(|_| {
                ApiError::new(ErrorCode::InvalidInput, "that page of the audit log is not known; start from the newest")
            })
        })
        .transpose()
}

/// One CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break (quotes doubled); a cell that a
/// spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a
/// leading apostrophe first, so it opens as text.
pub fn csv_cell(value: &str) -> String {
    let mut cell = String::with_capacity(value.len() + 2);
    if value.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        cell.push('\'');
    }
    cell.push_str(value);
    if cell.contains([',', '"', '\n', '\r']) { format!("\"{}\"", cell.replace('"', "\"\"")) } else { cell }
}

fn csv_row(cells: &[&str]) -> String {
    let mut row = cells.iter().map(|c| csv_cell(c)).collect::<Vec<_>>().join(",");
    row.push_str("\r\n");
    row
}

// ---------------------------------------------------------------------------------------------------------------
// Stage log

/// One pipeline stage of a document as it last ran. `stage`, `status` and `outcome` are keys the UI words
/// (`ui/src/lib/review.ts`); `reason` is the stage's own sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct StageLogEntry {
    pub stage: String,
    pub status: String,
    pub attempt: u32,
    pub model: Option<String>,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub cache_read_tokens: u32,
    pub latency_ms: u32,
    pub outcome: Option<String>,
    pub reason: Option<String>,
    /// When the record was written (RFC 3339).
    pub at: String,
}

// ---------------------------------------------------------------------------------------------------------------
// Assistant history

/// One earlier question and its answer, with the citations it was given (markers as in the text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct EarlierAnswer {
    pub id: String,
    pub question: String,
    /// The answer; `None` when the question got none (`failed` says why).
    pub text: Option<String>,
    /// Why there was no answer, in words.
    pub failed: Option<String>,
    /// RFC 3339.
    pub at: String,
    pub citations: Vec<Citation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct HistoryPage {
    pub answers: Vec<EarlierAnswer>,
    /// Where the next page starts; `None` at the end.
    pub next: Option<String>,
}

fn no_answer_words(outcome: &str) -> String {
    match outcome {
        "budget_exhausted" => "The model budget was reached, so the question was not sent.",
        "model_unavailable" | "no_api_key" => "The model could not be reached (offline or no API key).",
        "rate_limited" => "Too many questions at once; it was not answered.",
        _ => "The question could not be answered.",
    }
    .to_string()
}

fn earlier_answer(entry: pactwise_store::HistoryEntry) -> EarlierAnswer {
    let markers = entry.answer.as_deref().map(pactwise_assistant::markers_in).unwrap_or_default();
    let (mut contracts, mut precedents) = (0, 0);
    let citations = entry
        .citations
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let kind = if c.kind == "precedent" { CitationKind::Precedent } else { CitationKind::Contract };
            // Stored in the order of first mention, so the n-th marker of the text is the n-th citation; should
            // the text hold fewer markers than citations, the rest are numbered per kind.
            let fallback = match kind {
                CitationKind::Contract => {
                    contracts += 1;
                    format!("C{contracts}")
                }
                CitationKind::Precedent => {
                    precedents += 1;
                    format!("M{precedents}")
                }
            };
            let title = match (kind, &c.title) {
                (_, Some(t)) => t.clone(),
                (CitationKind::Contract, None) => "A document deleted since".to_string(),
                (CitationKind::Precedent, None) => "A market example".to_string(),
            };
            Citation {
                marker: markers.get(i).cloned().unwrap_or(fallback),
                kind,
                document: c.document,
                precedent: c.precedent,
                title,
                page: c.page,
                start: c.start,
                end: c.end,
                excerpt: c.excerpt,
                label: (kind == CitationKind::Precedent).then(|| "market example".to_string()),
                supporting: c
                    .supporting
                    .iter()
                    .map(|(start, end)| pactwise_assistant::support::TextRange { start: *start, end: *end })
                    .collect(),
            }
        })
        .collect();
    let failed = entry.answer.is_none().then(|| no_answer_words(&entry.outcome));
    EarlierAnswer {
        id: entry.id,
        question: entry.question,
        text: entry.answer,
        failed,
        at: entry.at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        citations,
    }
}

fn u32_of(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

impl Api {
    /// Settings → Usage: spending by month, and by person and by feature for `month` (`YYYY-MM`; the current
    /// month when `None`), each with the monthly budget that applies and what remains.
    pub async fn usage_report(&self, scope: &OrgScope, month: Option<String>) -> Result<UsageReport, ApiError> {
        // Calls still waiting in the client's batch count too.
        let model = self.model.clone();
        let _ = tokio::task::spawn_blocking(move || model.flush_ledger()).await;
        let now = self.clock.now();
        let current_month = month_key(now);
        let month = month.filter(|m| !m.trim().is_empty()).unwrap_or_else(|| current_month.clone());
        let (from, to) = month_bounds(month.trim())?;
        let today_start = BudgetPeriod::Daily.start_containing(now);
        let s = scope.clone();
        let (months, people, purposes, budgets, today_spent) = self
            .db
            .call(move |store| {
                let usage = store.usage();
                let months = usage.spend_by_month(&s, USAGE_MONTHS)?;
                let people = usage.spend_by_user(&s, from, to)?;
                let purposes = usage.spend_by_purpose(&s, from, to)?;
                let budgets = usage.list_budgets(&s)?;
                let today = usage.spent_micros(s.org(), spend_visible_to(&s), today_start)?;
                Ok((months, people, purposes, budgets, today))
            })
            .await?;
        let visible = spend_visible_to(scope);
        let month_budget = budget_for(&budgets, BudgetPeriod::Monthly, visible);
        let mut month_rows: Vec<MonthSpend> = months
            .iter()
            .map(|r| {
                let (budget_micros, remaining_micros) = remaining(month_budget, r.cost_micros);
                MonthSpend {
                    month: r.key.clone().unwrap_or_default(),
                    calls: u32_of(r.calls),
                    cost_micros: r.cost_micros as f64,
                    input_tokens: r.input_tokens as f64,
                    output_tokens: r.output_tokens as f64,
                    budget_micros,
                    remaining_micros,
                }
            })
            .collect();
        if !month_rows.iter().any(|m| m.month == current_month) {
            let (budget_micros, remaining_micros) = remaining(month_budget, 0);
            month_rows.insert(
                0,
                MonthSpend {
                    month: current_month.clone(),
                    calls: 0,
                    cost_micros: 0.0,
                    input_tokens: 0.0,
                    output_tokens: 0.0,
                    budget_micros,
                    remaining_micros,
                },
            );
        }
        let by_person = people
            .iter()
            .map(|r: &SpendRow| {
                let user = r.key.as_deref().and_then(|k| k.parse::<UserId>().ok());
                let budget = user.and_then(|u| budget_for(&budgets, BudgetPeriod::Monthly, Some(u)));
                let (budget_micros, remaining_micros) = remaining(budget, r.cost_micros);
                PersonSpend {
                    name: r.key.as_ref().map(|_| r.name.clone().unwrap_or_else(|| "A former member".into())),
                    you: user == Some(scope.user()),
                    calls: u32_of(r.calls),
                    cost_micros: r.cost_micros as f64,
                    input_tokens: r.input_tokens as f64,
                    output_tokens: r.output_tokens as f64,
                    budget_micros,
                    remaining_micros,
                }
            })
            .collect();
        let mut features: BTreeMap<UsageFeature, FeatureSpend> = BTreeMap::new();
        for r in &purposes {
            let feature = UsageFeature::of_purpose(r.key.as_deref().unwrap_or_default());
            let f = features.entry(feature).or_insert(FeatureSpend {
                feature,
                calls: 0,
                cost_micros: 0.0,
                input_tokens: 0.0,
                output_tokens: 0.0,
            });
            f.calls = f.calls.saturating_add(u32_of(r.calls));
            f.cost_micros += r.cost_micros as f64;
            f.input_tokens += r.input_tokens as f64;
            f.output_tokens += r.output_tokens as f64;
        }
        let mut by_feature: Vec<FeatureSpend> = features.into_values().collect();
        by_feature.sort_by(|a, b| b.cost_micros.total_cmp(&a.cost_micros).then(a.feature.cmp(&b.feature)));
        let today = budget_for(&budgets, BudgetPeriod::Daily, visible).map(|b| DailySpend {
            budget_micros: b as f64,
            spent_micros: today_spent as f64,
            remaining_micros: (b - today_spent) as f64,
        });
        Ok(UsageReport {
            scope: if visible.is_none() { UsageScope::Organization } else { UsageScope::Own },
            month,
            current_month,
            months: month_rows,
            by_person,
            by_feature,
            today,
        })
    }

    /// The audit log's filter choices: the actions and the people in the organization's entries.
    pub async fn audit_choices(&self, scope: &OrgScope) -> Result<AuditChoices, ApiError> {
        let s = scope.clone();
        let (actions, people) = self.db.call(move |store| store.audit().choices(&s)).await?;
        let mut actions: Vec<Choice> =
            actions.into_iter().map(|a| Choice { label: action_label(&a), value: a }).collect();
        actions.sort_by(|a, b| a.label.cmp(&b.label));
        Ok(AuditChoices {
            actions,
            people: people.into_iter().map(|(id, name)| Choice { value: id.to_string(), label: name }).collect(),
        })
    }

    /// One page of the audit log in words, newest first, from `cursor` (the previous page's `next`).
    pub async fn audit_page(
        &self,
        scope: &OrgScope,
        query: AuditQuery,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<AuditPage, ApiError> {
        let filter = query.filter()?;
        let before = parse_cursor(cursor.as_deref())?;
        let limit = limit.unwrap_or(AUDIT_PAGE).clamp(1, AUDIT_PAGE_LIMIT);
        let s = scope.clone();
        // One more than asked tells whether another page follows.
        let rows = self.db.call(move |store| store.audit().page(&s, &filter, before, limit + 1)).await?;
        let more = rows.len() > limit as usize;
        let rows = &rows[..rows.len().min(limit as usize)];
        Ok(AuditPage {
            lines: rows.iter().map(line_of).collect(),
            next: if more { rows.last().map(|r| r.seq.to_string()) } else { None },
        })
    }

    /// The whole filtered audit log as CSV (header, then newest first): When (UTC), Person, Action, Thing.
    pub async fn audit_csv(&self, scope: &OrgScope, query: AuditQuery) -> Result<(String, u32), ApiError> {
        let filter = query.filter()?;
        let mut out = csv_row(&["When (UTC)", "Person", "Action", "Thing"]);
        let mut before = None;
        let mut count = 0u32;
        loop {
            let (s, f) = (scope.clone(), filter.clone());
            let rows = self.db.call(move |store| store.audit().page(&s, &f, before, EXPORT_BATCH)).await?;
            for row in &rows {
                let line = line_of(row);
                out.push_str(&csv_row(&[&line.at, &line.person, &line.action, &line.thing]));
            }
            count += rows.len() as u32;
            if rows.len() < EXPORT_BATCH as usize {
                break;
            }
            before = rows.last().map(|r| r.seq);
        }
        Ok((out, count))
    }

    /// Writes the filtered audit log as CSV to `path` (whole or not at all).
    pub async fn export_audit_csv(
        &self,
        scope: &OrgScope,
        query: AuditQuery,
        path: PathBuf,
        existing: Existing,
    ) -> Result<ExportedAudit, ApiError> {
        crate::export_file::check_target(&path, existing)?;
        let (text, rows) = self.audit_csv(scope, query).await?;
        crate::export_file::write_export(&path, text.as_bytes(), existing)?;
        Ok(ExportedAudit { path: path.display().to_string(), bytes: text.len() as u64, rows })
    }

    /// A document's stage log: each pipeline stage as it last ran, in the pipeline's order.
    pub async fn stage_log(&self, scope: &OrgScope, document: DocumentId) -> Result<Vec<StageLogEntry>, ApiError> {
        let s = scope.clone();
        let rows = self.db.call(move |store| store.reviews().stages(&s, document)).await?;
        let mut entries: Vec<(usize, StageLogEntry)> = rows
            .into_iter()
            .map(|r| {
                let order = pactwise_pipeline::Stage::parse(&r.stage)
                    .and_then(|st| pactwise_pipeline::Stage::ALL.iter().position(|x| *x == st))
                    .unwrap_or(usize::MAX);
                let entry = StageLogEntry {
                    stage: r.stage,
                    status: r.status,
                    attempt: r.attempt,
                    model: r.model,
                    input_tokens: u32::try_from(r.input_tokens).unwrap_or(u32::MAX),
                    output_tokens: u32::try_from(r.output_tokens).unwrap_or(u32::MAX),
                    cache_read_tokens: u32::try_from(r.cache_read_tokens).unwrap_or(u32::MAX),
                    latency_ms: u32::try_from(r.latency_ms).unwrap_or(u32::MAX),
                    outcome: r.outcome,
                    reason: r.reason,
                    at: r.updated_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                };
                (order, entry)
            })
            .collect();
        entries.sort_by_key(|(order, _)| *order);
        Ok(entries.into_iter().map(|(_, e)| e).collect())
    }

    /// The signed-in person's earlier assistant answers, newest first, from `cursor` (the previous page's `next`);
    /// with `search`, only those whose question or answer contains it.
    pub async fn assistant_history(
        &self,
        scope: &OrgScope,
        search: Option<String>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<HistoryPage, ApiError> {
        let limit = limit.unwrap_or(HISTORY_PAGE).clamp(1, HISTORY_PAGE_LIMIT);
        let s = scope.clone();
        let mut entries = self
            .db
            .call(move |store| store.assistant_history().page(&s, search.as_deref(), cursor.as_deref(), limit + 1))
            .await?;
        let more = entries.len() > limit as usize;
        entries.truncate(limit as usize);
        let next = if more { entries.last().map(|e| e.id.clone()) } else { None };
        Ok(HistoryPage { answers: entries.into_iter().map(earlier_answer).collect(), next })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_quoted_when_they_must_be_and_formulas_open_as_text() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a, b"), "\"a, b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_cell("=SUM(A1:A9)"), "'=SUM(A1:A9)");
        assert_eq!(csv_cell("+1"), "'+1");
        assert_eq!(csv_cell("-1"), "'-1");
        assert_eq!(csv_cell("@cmd"), "'@cmd");
        assert_eq!(csv_cell("=HYPERLINK(\"x\",\"y\")"), "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"");
        assert_eq!(csv_row(&["a", "b,c"]), "a,\"b,c\"\r\n");
    }

    #[test]
    fn months_are_checked_and_bounded_by_the_calendar() {
        let (from, to) = month_bounds("2026-12").unwrap();
        assert_eq!(from.to_rfc3339(), "2026-12-01T00:00:00+00:00");
        assert_eq!(to.to_rfc3339(), "2027-01-01T00:00:00+00:00");
        for bad in ["2026-13", "26-01", "2026/01", "", "2026-1"] {
            assert_eq!(month_bounds(bad).unwrap_err().code, ErrorCode::InvalidInput, "{bad}");
        }
    }

    #[test]
    fn every_known_action_has_words_and_unknown_ones_never_show_their_code() {
        assert_eq!(action_words("review.finalize"), "finalized the review of");
        assert_eq!(action_label("review.finalize"), "Review finalized");
        let unknown = action_words("something_new.happened");
        assert!(!unknown.contains('_') && !unknown.contains('.'), "{unknown}");
    }
}
