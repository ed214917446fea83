//! The Contracts area as user actions: the organization's finalized contracts listed, filtered and searched
//! (`store::contracts`, SQL over columns written with the fields), one contract in full (each extraction with its
//! verified quote and where it stands on its page, the checklist outcome and who confirmed what, its review
//! reports, the runs that name it, its vendor), the upcoming expirations and notice deadlines by month, and those
//! dates as an iCalendar file (RFC 5545, written here: folded lines, escaped text, all-day events).

use crate::review::catalog;
use crate::workspace::{TextSpan, cited_pages, quote_span};
use crate::{Api, ApiError, Existing};
use chrono::{DateTime, Datelike, Months, NaiveDate, Utc};
use pactwise_domain::{Decision, DocumentId, ErrorCode, Extracted, ItemStatus, RunId, RunStatus};
use pactwise_store::{ContractFilter, ContractListRow, ContractOutcome, ContractSort, OrgScope};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Rows per page when the caller does not say.
pub const DEFAULT_PAGE: u32 = 100;

/// The longest window of upcoming dates, in months.
pub const MAX_MONTHS: u32 = 60;

/// How a contract list is ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ContractOrder {
    #[default]
    Name,
    ExpiresOn,
    NoticeBy,
    Finalized,
}

/// What the Contracts list asks for; every filter that is set must hold. Empty texts are no filter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ContractQuery {
    pub type_id: Option<String>,
    /// Part of the counterparty's name.
    pub counterparty: Option<String>,
    pub governing_law: Option<String>,
    /// `high`, `medium` or `low`.
    pub risk: Option<String>,
    pub expiring_within_days: Option<u32>,
    pub notice_within_days: Option<u32>,
    /// Words in the name, the counterparty or the extracted values.
    pub search: Option<String>,
    pub order: ContractOrder,
    pub offset: u32,
    /// Rows wanted (1 to 500; 100 when 0).
    pub limit: u32,
}

/// A page of a list and how many match in all.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u32,
    pub offset: u32,
}

/// A finalized contract as the list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ContractRow {
    pub document: DocumentId,
    pub name: String,
    pub type_id: String,
    /// The contract type's name ("Distribution agreement").
    pub type_name: String,
    pub counterparty: Option<String>,
    pub governing_law: Option<String>,
    pub expires_on: Option<NaiveDate>,
    /// The last day to give notice so the contract does not renew.
    pub notice_by: Option<NaiveDate>,
    /// `high`, `medium`, `low`; null while not assessed.
    pub risk: Option<String>,
    pub red_flags: u32,
    pub critical_gaps: u32,
    pub vendor: Option<String>,
    pub finalized_at: DateTime<Utc>,
}

/// A value a filter offers, in words, with how many contracts have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct FacetOption {
    pub value: String,
    pub label: String,
    pub count: u32,
}

/// The values the list's filters offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ContractFacets {
    pub types: Vec<FacetOption>,
    pub governing_laws: Vec<FacetOption>,
    pub counterparties: Vec<FacetOption>,
    pub risks: Vec<FacetOption>,
}

/// One extracted field of a contract: its value, and the quote that supports it where that quote is on its page.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ContractField {
    /// `parties`, `agreement_date`, `effective_date`, `expiration_date`, `renewal`, `renewal_notice`,
    /// `governing_law`, `value`, `pricing`, `scope`, `key_terms`.
    pub field: String,
    /// The field's name in words ("Expiration date").
    pub label: String,
    pub value: String,
    /// The supporting words, only when they were found on the page they cite.
    pub quote: Option<String>,
    pub page: Option<u32>,
    /// Where the quote stands on its page (what the review view highlights).
    pub span: Option<TextSpan>,
    pub confidence: f32,
}

/// A checklist item as the contract's outcome lists it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct OutcomeItem {
    pub item_id: String,
    pub question: String,
    /// `critical`, `high`, `medium`, `low`.
    pub risk: String,
    pub status: ItemStatus,
    pub red_flags: Vec<String>,
    /// Who confirmed or corrected it, and when (RFC 3339); null when nobody did.
    pub confirmed_by: Option<String>,
    pub confirmed_at: Option<String>,
    pub note: Option<String>,
}

/// How the contract's checklist came out.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ChecklistOutcome {
    /// `high`, `medium`, `low`; null while not assessed.
    pub risk: Option<String>,
    pub red_flags: Vec<OutcomeItem>,
    pub critical: Vec<OutcomeItem>,
    /// Every item a person confirmed or corrected.
    pub confirmed: Vec<OutcomeItem>,
    pub items: u32,
}

/// A contract review report of the contract.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ContractReportLine {
    pub run: RunId,
    pub status: crate::ReportStatus,
    pub started_at: DateTime<Utc>,
    pub signed_off_by: Option<String>,
    pub decision: Option<Decision>,
}

/// A workflow run whose input names the contract.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ContractRunLine {
    pub run: RunId,
    /// The workflow's name in words.
    pub workflow: String,
    pub status: RunStatus,
    pub started_at: DateTime<Utc>,
}

/// One finalized contract in full.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ContractDetail {
    pub contract: ContractRow,
    pub fields: Vec<ContractField>,
    pub outcome: ChecklistOutcome,
    pub reports: Vec<ContractReportLine>,
    pub runs: Vec<ContractRunLine>,
    /// Whether a person set the vendor link (`person`) or the pipeline did (`auto`).
    pub vendor_link: Option<String>,
    pub finalized_by: Option<String>,
    /// The renewal reminder scheduled from the notice deadline (none without a deadline).
    pub reminder: Option<RenewalReminder>,
}

/// A contract's renewal reminder: on `remind_on` the organization's approvers get a renewal notice decision in their
/// inbox (a run of the renewal notice workflow), ahead of the last day to give notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct RenewalReminder {
    pub remind_on: NaiveDate,
    pub notice_by: NaiveDate,
    /// The renewal notice run went out for this deadline.
    pub started: bool,
    pub run: Option<RunId>,
}

/// What falls due on a date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DateKind {
    /// The contract expires.
    Expiration,
    /// The last day to give notice so the contract does not renew.
    NoticeDeadline,
}

impl DateKind {
    /// In words, for a calendar and a list.
    pub fn label(self) -> &'static str {
        match self {
            DateKind::Expiration => "Expires",
            DateKind::NoticeDeadline => "Last day to give notice of non-renewal",
        }
    }
}

/// A contract's date that falls due.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ContractDate {
    pub date: NaiveDate,
    pub kind: DateKind,
    pub label: String,
    pub document: DocumentId,
    pub name: String,
    pub counterparty: Option<String>,
}

/// One month of upcoming dates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct MonthDates {
    /// `YYYY-MM`.
    pub month: String,
    /// "March 2027".
    pub label: String,
    pub dates: Vec<ContractDate>,
}

/// Expirations and notice deadlines from a day for a number of months, by month (months without a date left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct UpcomingDates {
    pub from: NaiveDate,
    /// The first day after the window.
    pub until: NaiveDate,
    pub months: Vec<MonthDates>,
    pub total: u32,
}

/// Where a calendar export was written.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ExportedCalendar {
    pub path: String,
    pub bytes: u64,
    pub events: u32,
}

fn row(r: ContractListRow, catalog: &pactwise_checklists::Catalog) -> ContractRow {
    let type_name = catalog.contract_type(&r.type_id).map(|t| t.name.clone()).unwrap_or_else(|| r.type_id.clone());
    ContractRow {
        document: r.document,
        name: r.name,
        type_id: r.type_id,
        type_name,
        counterparty: r.counterparty,
        governing_law: r.governing_law,
        expires_on: r.expires_on,
        notice_by: r.notice_by,
        risk: r.risk,
        red_flags: r.red_flags,
        critical_gaps: r.critical_gaps,
        vendor: r.vendor,
        finalized_at: r.finalized_at,
    }
}

/// The checklist outcome the Contracts area keeps for a review: red flags and critical gaps after corrections.
pub(crate) fn outcome_of(review: &crate::DocumentReview) -> ContractOutcome {
    let red_flags = review.items.iter().filter(|i| !i.red_flags.is_empty()).count() as u32;
    let critical_gaps = review
        .items
        .iter()
        .filter(|i| i.risk == "critical" && matches!(i.status, ItemStatus::Absent | ItemStatus::Partial))
        .count() as u32;
    ContractOutcome { red_flags, critical_gaps }
}

fn risk_label(risk: &str) -> &'static str {
    match risk {
        "high" => "High: red flags",
        "medium" => "Medium: critical items missing",
        _ => "Low",
    }
}

impl Api {
    /// Today by the app's clock (the day the list's "within N days" filters count from).
    pub fn today(&self) -> NaiveDate {
        self.clock.now().date_naive()
    }

    /// Stamps the outcome of contracts finalized before outcomes were kept (once each).
    async fn assess_unassessed(&self, scope: &OrgScope) -> Result<(), ApiError> {
        let s = scope.clone();
        let pending = self.db.call(move |store| store.contracts().unassessed(&s)).await?;
        for id in pending {
            let outcome = outcome_of(&self.document_review(scope, id).await?);
            let s = scope.clone();
            self.db.call(move |store| store.contracts().set_outcome(&s, id, outcome)).await?;
        }
        Ok(())
    }

    /// A page of the organization's finalized contracts that pass the query.
    pub async fn contract_list(&self, scope: &OrgScope, query: ContractQuery) -> Result<Page<ContractRow>, ApiError> {
        self.assess_unassessed(scope).await?;
        let limit = if query.limit == 0 { DEFAULT_PAGE } else { query.limit };
        if limit > pactwise_store::CONTRACTS_MAX_PAGE {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("at most {} contracts per page", pactwise_store::CONTRACTS_MAX_PAGE),
            ));
        }
        if let Some(risk) = query.risk.as_deref().map(str::trim).filter(|r| !r.is_empty())
            && !matches!(risk, "high" | "medium" | "low")
        {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("{risk:?} is not a risk level; use high, medium or low"),
            ));
        }
        for days in [query.expiring_within_days, query.notice_within_days].into_iter().flatten() {
            if days > 3660 {
                return Err(ApiError::new(ErrorCode::InvalidInput, "look at most ten years (3660 days) ahead"));
            }
        }
        let filter = ContractFilter {
            type_id: query.type_id,
            counterparty: query.counterparty,
            governing_law: query.governing_law,
            risk: query.risk,
            expiring_within_days: query.expiring_within_days,
            notice_within_days: query.notice_within_days,
            search: query.search,
            meaning_matches: Vec::new(),
            sort: match query.order {
                ContractOrder::Name => ContractSort::Name,
                ContractOrder::ExpiresOn => ContractSort::ExpiresOn,
                ContractOrder::NoticeBy => ContractSort::NoticeBy,
                ContractOrder::Finalized => ContractSort::Finalized,
            },
            offset: query.offset,
            limit,
        };
        let (s, retriever) = (scope.clone(), self.retriever.clone());
        if let Some(search) = filter.search.as_deref().filter(|q| !q.trim().is_empty()) {
            self.use_voyage_if_configured().await;
            retriever.prepare_query(scope.org(), search).await;
        }
        let page = self
            .db
            .call(move |store| {
                let mut filter = filter;
                // Contracts whose text means what was searched are listed with those that contain its words.
                if let Some(search) = filter.search.as_deref().filter(|q| !q.trim().is_empty()) {
                    filter.meaning_matches = retriever.documents_by_meaning(store, &s, search, 50)?;
                }
                store.contracts().list(&s, &filter)
            })
            .await?;
        let catalog = catalog()?;
        Ok(Page {
            items: page.rows.into_iter().map(|r| row(r, &catalog)).collect(),
            total: page.total,
            offset: query.offset,
        })
    }

    /// The values the Contracts list's filters offer, in words.
    pub async fn contract_facets(&self, scope: &OrgScope) -> Result<ContractFacets, ApiError> {
        self.assess_unassessed(scope).await?;
        let s = scope.clone();
        let f = self.db.call(move |store| store.contracts().facets(&s)).await?;
        let catalog = catalog()?;
        let plain = |v: Vec<pactwise_store::FacetCount>| -> Vec<FacetOption> {
            v.into_iter().map(|f| FacetOption { label: f.value.clone(), value: f.value, count: f.count }).collect()
        };
        Ok(ContractFacets {
            types: f
                .types
                .into_iter()
                .map(|t| FacetOption {
                    label: catalog.contract_type(&t.value).map(|c| c.name.clone()).unwrap_or_else(|| t.value.clone()),
                    value: t.value,
                    count: t.count,
                })
                .collect(),
            governing_laws: plain(f.governing_laws),
            counterparties: plain(f.counterparties),
            risks: f
                .risks
                .into_iter()
                .map(|r| FacetOption { label: risk_label(&r.value).into(), value: r.value, count: r.count })
                .collect(),
        })
    }

    /// One finalized contract in full: fields with their verified quotes, the checklist outcome, its reports, the
    /// runs that name it and its vendor. A contract that is not finalized (or not the organization's) is not found.
    pub async fn contract_detail(&self, scope: &OrgScope, id: DocumentId) -> Result<ContractDetail, ApiError> {
        self.assess_unassessed(scope).await?;
        let s = scope.clone();
        let listed = self.db.call(move |store| store.contracts().row(&s, id)).await?;
        let listed = listed.ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, "no finalized contract with this id in your organization")
        })?;
        let s = scope.clone();
        let (stored, finalized_by) = self
            .db
            .call(move |store| {
                let c = store.reviews().contract(&s, id)?.ok_or(pactwise_store::StoreError::NotFound)?;
                let by = c.finalized_by.map(|u| store.platform().user_name(u).unwrap_or_else(|_| u.to_string()));
                Ok::<_, pactwise_store::StoreError>((c, by))
            })
            .await?;
        let fields_json: pactwise_domain::Extractions =
            serde_json::from_value(stored.extractions.clone()).unwrap_or_default();
        let mut fields = fields_of(&fields_json);
        let cited: Vec<u32> = fields.iter().filter_map(|(_, e)| e.quote.as_ref().map(|q| q.page)).collect();
        let s = scope.clone();
        let pages = self.db.call(move |store| cited_pages(store, &s, id, cited)).await?;
        let fields: Vec<ContractField> = fields
            .drain(..)
            .map(|((field, label), e)| {
                let placed = e.quote.as_ref().and_then(|q| quote_span(&pages, q.page, &q.text).map(|span| (q, span)));
                ContractField {
                    field: field.into(),
                    label: label.into(),
                    value: e.value.clone(),
                    quote: placed.map(|(q, _)| q.text.clone()),
                    page: placed.map(|(q, _)| q.page),
                    span: placed.map(|(_, span)| span),
                    confidence: e.confidence,
                }
            })
            .collect();
        let review = self.document_review(scope, id).await?;
        let item = |i: &crate::ReviewItem| OutcomeItem {
            item_id: i.id.clone(),
            question: i.question.clone(),
            risk: i.risk.clone(),
            status: i.status,
            red_flags: i.red_flags.clone(),
            confirmed_by: i.confirmed_by.clone(),
            confirmed_at: i.confirmed_at.clone(),
            note: i.note.clone(),
        };
        let outcome = ChecklistOutcome {
            risk: listed.risk.clone(),
            red_flags: review.items.iter().filter(|i| !i.red_flags.is_empty()).map(item).collect(),
            critical: review.items.iter().filter(|i| i.risk == "critical").map(item).collect(),
            confirmed: review.items.iter().filter(|i| i.confirmed_by.is_some()).map(item).collect(),
            items: review.items.len() as u32,
        };
        let reports = self
            .document_reports(scope, id)
            .await?
            .into_iter()
            .map(|r| ContractReportLine {
                run: r.run,
                status: r.status,
                started_at: r.started_at,
                signed_off_by: r.sign_off.as_ref().map(|s| s.by.clone()),
                decision: r.sign_off.as_ref().map(|s| s.decision),
            })
            .collect();
        let s = scope.clone();
        let needle = id.to_string();
        let runs = self
            .db
            .call(move |store| {
                Ok::<_, pactwise_store::StoreError>(
                    store
                        .runs()
                        .list(&s, 500)?
                        .into_iter()
                        .filter(|r| r.input.contains(&needle))
                        .map(|r| ContractRunLine {
                            run: r.id,
                            workflow: crate::run_words::humanize(&r.graph_name),
                            status: r.status,
                            started_at: r.created_at,
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .await?;
        let s = scope.clone();
        let reminder = self.db.call(move |store| store.contracts().reminder(&s, id)).await?.map(|r| RenewalReminder {
            remind_on: r.remind_on,
            notice_by: r.notice_by,
            started: r.started,
            run: r.run,
        });
        let catalog = catalog()?;
        Ok(ContractDetail {
            contract: row(listed, &catalog),
            fields,
            outcome,
            reports,
            runs,
            vendor_link: stored.vendor_link,
            finalized_by,
            reminder,
        })
    }

    /// Expirations and notice deadlines of the organization's finalized contracts from `from` for `months` months,
    /// by month.
    pub async fn upcoming_dates(
        &self,
        scope: &OrgScope,
        from: NaiveDate,
        months: u32,
    ) -> Result<UpcomingDates, ApiError> {
        if !(1..=MAX_MONTHS).contains(&months) {
            return Err(ApiError::new(
                ErrorCode::InvalidInput,
                format!("choose 1 to {MAX_MONTHS} months of upcoming dates"),
            ));
        }
        let until = from
            .checked_add_months(Months::new(months))
            .ok_or_else(|| ApiError::new(ErrorCode::InvalidInput, "that window ends too far in the future"))?;
        let s = scope.clone();
        let rows = self.db.call(move |store| store.contracts().dates(&s, from, until)).await?;
        let total = rows.len() as u32;
        let mut by_month: Vec<MonthDates> = Vec::new();
        for r in rows {
            let month = format!("{:04}-{:02}", r.date.year(), r.date.month());
            if by_month.last().map(|m| &m.month) != Some(&month) {
                by_month.push(MonthDates { label: r.date.format("%B %Y").to_string(), month, dates: Vec::new() });
            }
            let kind = if r.kind == "expiration" { DateKind::Expiration } else { DateKind::NoticeDeadline };
            by_month.last_mut().expect("pushed above").dates.push(ContractDate {
                date: r.date,
                kind,
                label: kind.label().into(),
                document: r.document,
                name: r.name,
                counterparty: r.counterparty,
            });
        }
        Ok(UpcomingDates { from, until, months: by_month, total })
    }

    /// The upcoming dates as an iCalendar document (one all-day event per date).
    pub async fn contract_calendar(&self, scope: &OrgScope, from: NaiveDate, months: u32) -> Result<String, ApiError> {
        let dates = self.upcoming_dates(scope, from, months).await?;
        let events: Vec<ContractDate> = dates.months.into_iter().flat_map(|m| m.dates).collect();
        Ok(icalendar(&events, self.clock.now()))
    }

    /// Writes the upcoming dates as an iCalendar file (`.ics`) to `path`, through the one export path.
    pub async fn export_contract_calendar(
        &self,
        scope: &OrgScope,
        from: NaiveDate,
        months: u32,
        path: PathBuf,
        existing: Existing,
    ) -> Result<ExportedCalendar, ApiError> {
        crate::export_file::check_target(&path, existing)?;
        let text = self.contract_calendar(scope, from, months).await?;
        let events = text.matches("BEGIN:VEVENT\r\n").count() as u32;
        crate::export_file::write_export(&path, text.as_bytes(), existing)?;
        Ok(ExportedCalendar { path: path.display().to_string(), bytes: text.len() as u64, events })
    }
}

/// The contract's fields in the order a person reads them, each with its name and label.
fn fields_of(x: &pactwise_domain::Extractions) -> Vec<((&'static str, &'static str), &Extracted)> {
    let mut out: Vec<((&'static str, &'static str), &Extracted)> = Vec::new();
    out.extend(x.parties.iter().map(|p| (("parties", "Party"), p)));
    let singles: [(&'static str, &'static str, &Option<Extracted>); 9] = [
        ("agreement_date", "Agreement date", &x.agreement_date),
        ("effective_date", "Effective date", &x.effective_date),
        ("expiration_date", "Expiration date", &x.expiration_date),
        ("renewal", "Renewal term", &x.renewal),
        ("renewal_notice", "Notice to stop renewal", &x.renewal_notice),
        ("governing_law", "Governing law", &x.governing_law),
        ("value", "Contract value", &x.value),
        ("pricing", "Pricing", &x.pricing),
        ("scope", "Scope", &x.scope),
    ];
    for (field, label, value) in singles {
        if let Some(v) = value {
            out.push(((field, label), v));
        }
    }
    out.extend(x.key_terms.iter().map(|t| (("key_terms", "Key term"), t)));
    out
}

/// RFC 5545 text: backslash, semicolon and comma escaped, line breaks as `\n`, other control characters dropped.
fn ical_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// One content line, folded so no line is longer than 75 octets (a continuation starts with a space), never
/// inside a UTF-8 character; ends with CRLF.
fn ical_line(out: &mut String, line: &str) {
    let mut width = 0;
    for c in line.chars() {
        let len = c.len_utf8();
        if width + len > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(c);
        width += len;
    }
    out.push_str("\r\n");
}

/// The dates as an iCalendar document: one all-day event each, with a stable UID (contract, kind, date), so
/// importing a newer export updates the events instead of adding copies.
pub fn icalendar(events: &[ContractDate], now: DateTime<Utc>) -> String {
    let mut out = String::new();
    let stamp = now.format("%Y%m%dT%H%M%SZ").to_string();
    for line in ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Pactwise//Pactwise Desk//EN", "CALSCALE:GREGORIAN"] {
        ical_line(&mut out, line);
    }
    ical_line(&mut out, "METHOD:PUBLISH");
    ical_line(&mut out, "X-WR-CALNAME:Contract dates");
    for e in events {
        let kind = match e.kind {
            DateKind::Expiration => "expiration",
            DateKind::NoticeDeadline => "notice-deadline",
        };
        let next = e.date.succ_opt().unwrap_or(e.date);
        let who = e.counterparty.as_deref().map(|c| format!(" ({c})")).unwrap_or_default();
        ical_line(&mut out, "BEGIN:VEVENT");
        ical_line(&mut out, &format!("UID:{}-{kind}-{}@pactwise.desk", e.document, e.date.format("%Y%m%d")));
        ical_line(&mut out, &format!("DTSTAMP:{stamp}"));
        ical_line(&mut out, &format!("DTSTART;VALUE=DATE:{}", e.date.format("%Y%m%d")));
        ical_line(&mut out, &format!("DTEND;VALUE=DATE:{}", next.format("%Y%m%d")));
        ical_line(&mut out, &format!("SUMMARY:{}", ical_text(&format!("{}: {}{who}", e.label, e.name))));
        ical_line(
            &mut out,
            &format!(
                "DESCRIPTION:{}",
                ical_text(&format!("{} — {}{who}. From Pactwise Desk (Contracts area).", e.label, e.name))
            ),
        );
        ical_line(&mut out, "TRANSP:TRANSPARENT");
        ical_line(&mut out, "END:VEVENT");
    }
    ical_line(&mut out, "END:VCALENDAR");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn event(name: &str, kind: DateKind) -> ContractDate {
        ContractDate {
            date: NaiveDate::from_ymd_opt(2027, 3, 31).unwrap(),
            kind,
            label: kind.label().into(),
            document: "0190b7b0-0000-7000-8000-000000000001".parse().unwrap(),
            name: name.into(),
            counterparty: Some("Globex, Inc.; EMEA".into()),
        }
    }

    /// Unfolds content lines as a reader does (RFC 5545 3.1): CRLF followed by one space joins.
    fn unfold(text: &str) -> Vec<String> {
        text.replace("\r\n ", "").split("\r\n").filter(|l| !l.is_empty()).map(str::to_owned).collect()
    }

    #[test]
    fn every_line_ends_in_crlf_and_is_at_most_75_octets_folded_on_character_boundaries() {
        let long = "Master services agreement for the supply of très spécialisé équipement ".repeat(4);
        let text =
            icalendar(&[event(&long, DateKind::NoticeDeadline)], Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap());
        assert!(text.ends_with("END:VCALENDAR\r\n"));
        assert!(!text.replace("\r\n", "").contains('\n'), "no bare line feed");
        for line in text.split("\r\n") {
            assert!(line.len() <= 75, "{} octets: {line:?}", line.len());
        }
        let lines = unfold(&text);
        let summary = lines.iter().find(|l| l.starts_with("SUMMARY:")).unwrap();
        assert_eq!(
            summary,
            &format!("SUMMARY:Last day to give notice of non-renewal: {long} (Globex\\, Inc.\\; EMEA)")
        );
    }

    #[test]
    fn events_are_all_day_with_stable_uids_and_the_calendar_has_its_required_properties() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
        let text = icalendar(&[event("A", DateKind::Expiration), event("A", DateKind::NoticeDeadline)], now);
        let lines = unfold(&text);
        for required in ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Pactwise//Pactwise Desk//EN", "END:VCALENDAR"] {
            assert!(lines.iter().any(|l| l == required), "{required}");
        }
        assert_eq!(lines.iter().filter(|l| *l == "BEGIN:VEVENT").count(), 2);
        assert!(lines.iter().any(|l| l == "DTSTART;VALUE=DATE:20270331"));
        assert!(lines.iter().any(|l| l == "DTEND;VALUE=DATE:20270401"), "an all-day event ends the next day");
        assert!(lines.iter().any(|l| l == "DTSTAMP:20261130T090000Z"));
        let uids: Vec<&String> = lines.iter().filter(|l| l.starts_with("UID:")).collect();
        assert_eq!(uids.len(), 2);
        assert_ne!(uids[0], uids[1], "one UID per contract, kind and date");
        assert_eq!(text, icalendar(&[event("A", DateKind::Expiration), event("A", DateKind::NoticeDeadline)], now));
    }

    #[test]
    fn text_escapes_backslashes_separators_and_line_breaks() {
        assert_eq!(ical_text("a\\b;c,d\r\ne\u{7}"), "a\\\\b\\;c\\,d\\ne");
    }
}
