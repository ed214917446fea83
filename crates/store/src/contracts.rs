//! The contract repository: the organization's finalized contracts as the Contracts area lists them. Filters and
//! search are SQL over columns written with the contract's fields (expiration date, notice deadline, governing law,
//! from `pactwise_rules::contract_dates`), the checklist outcome stamped at finalize (risk, red flags, critical
//! gaps), and an FTS5 index over name, counterparty and extracted values that triggers keep (migration 0016).
//! Every query is scoped to the session's organization and leaves out deleted documents.

use crate::time::from_sql;
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, NaiveDate, Utc};
use pactwise_domain::{DocumentId, Extractions};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

/// The version of the rule that wrote `expires_on`, `notice_by` and `governing_law`; rows written by an older one
/// are derived again when the store opens.
pub const DERIVED_VERSION: i64 = 2;

/// At most this many rows per page.
pub const MAX_PAGE: u32 = 500;

pub struct Contracts<'s> {
    store: &'s Store,
}

/// How a contract's checklist came out, as finalize saw it (people's corrections applied).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContractOutcome {
    /// Items whose evidence triggers one of the catalog's red flags.
    pub red_flags: u32,
    /// Critical items the contract lacks (absent) or covers only in part.
    pub critical_gaps: u32,
}

impl ContractOutcome {
    /// `high` while red flags remain, `medium` when a critical item is missing or partial, else `low`.
    pub fn risk(&self) -> &'static str {
        if self.red_flags > 0 {
            "high"
        } else if self.critical_gaps > 0 {
            "medium"
        } else {
            "low"
        }
    }
}

/// The order of a contract list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ContractSort {
    /// By the document's name.
    #[default]
    Name,
    /// Soonest expiration first (contracts without one last).
    ExpiresOn,
    /// Soonest notice deadline first (contracts without one last).
    NoticeBy,
    /// Most recently finalized first.
    Finalized,
}

/// What a contract list asks for; every filter that is set must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContractFilter {
    pub type_id: Option<String>,
    /// Part of the counterparty's name, in any case.
    pub counterparty: Option<String>,
    /// The governing law's name, in any case.
    pub governing_law: Option<String>,
    /// `high`, `medium` or `low`.
    pub risk: Option<String>,
    /// Expires between today and this many days from today.
    pub expiring_within_days: Option<u32>,
    /// The renewal notice is due between today and this many days from today.
    pub notice_within_days: Option<u32>,
    /// Words to find in the name, counterparty or extracted values (every word must match, the last as a prefix).
    pub search: Option<String>,
    /// Contracts whose text matches `search` by meaning (chosen by the caller's retrieval, at most 50): listed too,
    /// under every other filter.
    pub meaning_matches: Vec<DocumentId>,
    pub sort: ContractSort,
    pub offset: u32,
    /// Rows per page (1 to [`MAX_PAGE`]).
    pub limit: u32,
}

/// One finalized contract in a list.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractListRow {
    pub document: DocumentId,
    pub name: String,
    pub type_id: String,
    pub counterparty: Option<String>,
    pub governing_law: Option<String>,
    pub expires_on: Option<NaiveDate>,
    pub notice_by: Option<NaiveDate>,
    /// `high`, `medium`, `low`, or `None` while not assessed.
    pub risk: Option<String>,
    pub red_flags: u32,
    pub critical_gaps: u32,
    pub vendor: Option<String>,
    pub finalized_at: DateTime<Utc>,
}

/// A contract's renewal reminder.
#[derive(Debug, Clone, PartialEq)]
pub struct Reminder {
    pub document: DocumentId,
    pub org: pactwise_domain::OrgId,
    /// The document's name (in the due list; empty from `Contracts::reminder`).
    pub name: String,
    pub notice_by: NaiveDate,
    pub remind_on: NaiveDate,
    /// A renewal notice run went out for this deadline.
    pub started: bool,
    pub run: Option<pactwise_domain::RunId>,
    pub expires_on: Option<NaiveDate>,
}

/// A page of a contract list and how many contracts match in all.
#[derive(Debug, Clone, PartialEq)]
pub struct ContractListPage {
    pub rows: Vec<ContractListRow>,
    pub total: u32,
}

/// A value a filter can take, with how many finalized contracts have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FacetCount {
    pub value: String,
    pub count: u32,
}

/// The values the list's filters offer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContractFacets {
    pub types: Vec<FacetCount>,
    pub governing_laws: Vec<FacetCount>,
    pub counterparties: Vec<FacetCount>,
    pub risks: Vec<FacetCount>,
}

/// A dated event of a finalized contract: its expiration or the last day to give notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContractDateRow {
    pub date: NaiveDate,
    /// `expiration` or `notice_deadline`.
    pub kind: &'static str,
    pub document: DocumentId,
    pub name: String,
    pub counterparty: Option<String>,
}

impl<'s> Contracts<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Contracts { store }
    }

    fn today(&self) -> NaiveDate {
        self.store.clock().now().date_naive()
    }

    /// A page of the organization's finalized contracts that pass the filter, and how many pass it in all.
    pub fn list(&self, scope: &OrgScope, filter: &ContractFilter) -> Result<ContractListPage, StoreError> {
        if !(1..=MAX_PAGE).contains(&filter.limit) {
            return Err(StoreError::Invalid(format!("a page holds 1 to {MAX_PAGE} contracts")));
        }
        let (clause, args) = self.where_clause(scope, filter)?;
        let conn = self.store.conn();
        let total: u32 = conn
            .prepare_cached(&format!("SELECT count(*) {clause}"))?
            .query_row(params_from_iter(args.iter()), |r| r.get(0))?;
        let order = match filter.sort {
            ContractSort::Name => "d.name COLLATE NOCASE, c.document_id",
            ContractSort::ExpiresOn => "c.expires_on IS NULL, c.expires_on, d.name COLLATE NOCASE, c.document_id",
            ContractSort::NoticeBy => "c.notice_by IS NULL, c.notice_by, d.name COLLATE NOCASE, c.document_id",
            ContractSort::Finalized => "c.finalized_at DESC, c.document_id",
        };
        let sql = format!(
            "SELECT c.document_id, d.name, c.type_id, c.counterparty, c.governing_law, c.expires_on, c.notice_by,
                    c.risk, c.red_flags, c.critical_gaps, v.name, c.finalized_at
             {clause} ORDER BY {order} LIMIT {} OFFSET {}",
            filter.limit, filter.offset
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(args.iter()), |r| {
            Ok(ContractListRow {
                document: crate::sql::parse_text("document id", &r.get::<_, String>(0)?)?,
                name: r.get(1)?,
                type_id: r.get(2)?,
                counterparty: r.get(3)?,
                governing_law: r.get(4)?,
                expires_on: date_opt(r.get(5)?),
                notice_by: date_opt(r.get(6)?),
                risk: r.get(7)?,
                red_flags: r.get(8)?,
                critical_gaps: r.get(9)?,
                vendor: r.get(10)?,
                finalized_at: from_sql(&r.get::<_, String>(11)?)?,
            })
        })?;
        Ok(ContractListPage { rows: rows.collect::<Result<_, _>>()?, total })
    }

    /// The FROM and WHERE of a list, with its arguments in order.
    fn where_clause(&self, scope: &OrgScope, f: &ContractFilter) -> Result<(String, Vec<SqlValue>), StoreError> {
        let mut sql = String::from(
            "FROM contracts c
             JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id AND d.deleted_at IS NULL
             LEFT JOIN vendors v ON v.id = c.vendor_id AND v.org_id = c.org_id AND v.deleted_at IS NULL
             WHERE c.org_id = ? AND c.finalized_at IS NOT NULL",
        );
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(scope.org().to_string())];
        let text = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        if let Some(t) = text(&f.type_id) {
            sql.push_str(" AND c.type_id = ?");
            args.push(SqlValue::Text(t));
        }
        if let Some(cp) = text(&f.counterparty) {
            sql.push_str(" AND c.counterparty LIKE ? ESCAPE '\\'");
            args.push(SqlValue::Text(format!("%{}%", like_escape(&cp))));
        }
        if let Some(law) = text(&f.governing_law) {
            sql.push_str(" AND c.governing_law = ? COLLATE NOCASE");
            args.push(SqlValue::Text(law));
        }
        if let Some(risk) = text(&f.risk) {
            if !matches!(risk.as_str(), "high" | "medium" | "low") {
                return Err(StoreError::Invalid(format!("{risk:?} is not a risk level; use high, medium or low")));
            }
            sql.push_str(" AND c.risk = ?");
            args.push(SqlValue::Text(risk));
        }
        let today = self.today();
        for (days, column) in [(f.expiring_within_days, "c.expires_on"), (f.notice_within_days, "c.notice_by")] {
            if let Some(days) = days {
                let until = today
                    .checked_add_days(chrono::Days::new(u64::from(days)))
                    .ok_or_else(|| StoreError::Invalid(format!("{days} days is too far ahead")))?;
                sql.push_str(&format!(" AND {column} BETWEEN ? AND ?"));
                args.push(SqlValue::Text(today.to_string()));
                args.push(SqlValue::Text(until.to_string()));
            }
        }
        if let Some(query) = f.search.as_deref().and_then(fts_query) {
            let by_meaning: Vec<&DocumentId> = f.meaning_matches.iter().take(50).collect();
            if by_meaning.is_empty() {
                sql.push_str(
                    " AND c.document_id IN (SELECT document_id FROM contracts_fts WHERE contracts_fts MATCH ?)",
                );
            } else {
                sql.push_str(&format!(
                    " AND (c.document_id IN (SELECT document_id FROM contracts_fts WHERE contracts_fts MATCH ?) \
                     OR c.document_id IN ({}))",
                    vec!["?"; by_meaning.len()].join(", ")
                ));
            }
            args.push(SqlValue::Text(query));
            args.extend(by_meaning.into_iter().map(|d| SqlValue::Text(d.to_string())));
        }
        Ok((sql, args))
    }

    /// The values each filter can take among the organization's finalized contracts, with their counts.
    pub fn facets(&self, scope: &OrgScope) -> Result<ContractFacets, StoreError> {
        let conn = self.store.conn();
        let org = scope.org().to_string();
        let facet = |column: &str| -> Result<Vec<FacetCount>, StoreError> {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {column}, count(*) FROM contracts c
                 JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id AND d.deleted_at IS NULL
                 WHERE c.org_id = ?1 AND c.finalized_at IS NOT NULL AND {column} IS NOT NULL
                 GROUP BY {column} COLLATE NOCASE ORDER BY count(*) DESC, {column} COLLATE NOCASE LIMIT 200"
            ))?;
            let rows = stmt.query_map([&org], |r| Ok(FacetCount { value: r.get(0)?, count: r.get(1)? }))?;
            Ok(rows.collect::<Result<_, _>>()?)
        };
        Ok(ContractFacets {
            types: facet("c.type_id")?,
            governing_laws: facet("c.governing_law")?,
            counterparties: facet("c.counterparty")?,
            risks: facet("c.risk")?,
        })
    }

    /// One finalized contract as a list shows it; `None` when it is not finalized (or not the organization's).
    pub fn row(&self, scope: &OrgScope, id: DocumentId) -> Result<Option<ContractListRow>, StoreError> {
        let filter = ContractFilter { limit: MAX_PAGE, ..ContractFilter::default() };
        let (clause, mut args) = self.where_clause(scope, &filter)?;
        args.push(SqlValue::Text(id.to_string()));
        let sql = format!(
            "SELECT c.document_id, d.name, c.type_id, c.counterparty, c.governing_law, c.expires_on, c.notice_by,
                    c.risk, c.red_flags, c.critical_gaps, v.name, c.finalized_at
             {clause} AND c.document_id = ?"
        );
        self.store
            .conn()
            .prepare_cached(&sql)?
            .query_row(params_from_iter(args.iter()), |r| {
                Ok(ContractListRow {
                    document: id,
                    name: r.get(1)?,
                    type_id: r.get(2)?,
                    counterparty: r.get(3)?,
                    governing_law: r.get(4)?,
                    expires_on: date_opt(r.get(5)?),
                    notice_by: date_opt(r.get(6)?),
                    risk: r.get(7)?,
                    red_flags: r.get(8)?,
                    critical_gaps: r.get(9)?,
                    vendor: r.get(10)?,
                    finalized_at: from_sql(&r.get::<_, String>(11)?)?,
                })
            })
            .optional()
            .map_err(StoreError::from)
    }

    /// Expirations and notice deadlines of finalized contracts from `from` up to (not including) `until`, by date.
    pub fn dates(
        &self,
        scope: &OrgScope,
        from: NaiveDate,
        until: NaiveDate,
    ) -> Result<Vec<ContractDateRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT date, kind, document_id, name, counterparty FROM (
                 SELECT c.expires_on AS date, 'expiration' AS kind, c.document_id, d.name, c.counterparty
                 FROM contracts c JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id
                 WHERE c.org_id = ?1 AND c.finalized_at IS NOT NULL AND d.deleted_at IS NULL
                   AND c.expires_on >= ?2 AND c.expires_on < ?3
                 UNION ALL
                 SELECT c.notice_by, 'notice_deadline', c.document_id, d.name, c.counterparty
                 FROM contracts c JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id
                 WHERE c.org_id = ?1 AND c.finalized_at IS NOT NULL AND d.deleted_at IS NULL
                   AND c.notice_by >= ?2 AND c.notice_by < ?3)
             ORDER BY date, name COLLATE NOCASE, document_id, kind",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), from.to_string(), until.to_string()], |r| {
            let kind: String = r.get(1)?;
            Ok(ContractDateRow {
                date: crate::sql::parse_text("date", &r.get::<_, String>(0)?)?,
                kind: if kind == "expiration" { "expiration" } else { "notice_deadline" },
                document: crate::sql::parse_text("document id", &r.get::<_, String>(2)?)?,
                name: r.get(3)?,
                counterparty: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// A contract's renewal reminder, if it has one (finalized, with a notice deadline).
    pub fn reminder(&self, scope: &OrgScope, id: DocumentId) -> Result<Option<Reminder>, StoreError> {
        self.store
            .conn()
            .prepare_cached(
                "SELECT r.notice_by, r.remind_on, r.status, r.run_id FROM renewal_reminders r
                 JOIN documents d ON d.id = r.document_id AND d.org_id = r.org_id AND d.deleted_at IS NULL
                 WHERE r.document_id = ?1 AND r.org_id = ?2",
            )?
            .query_row(params![id.to_string(), scope.org().to_string()], |r| {
                let run: Option<String> = r.get(3)?;
                Ok(Reminder {
                    document: id,
                    org: scope.org(),
                    name: String::new(),
                    notice_by: crate::sql::parse_text("date", &r.get::<_, String>(0)?)?,
                    remind_on: crate::sql::parse_text("date", &r.get::<_, String>(1)?)?,
                    started: r.get::<_, String>(2)? == "started",
                    run: run.map(|r| crate::sql::parse_text("run id", &r)).transpose()?,
                    expires_on: None,
                })
            })
            .optional()
            .map_err(StoreError::from)
    }

    /// Reminders of every organization that fall due on or before `today` and have not gone out, oldest first (the
    /// platform's work: the work loop starts a renewal notice run for each). Deleted documents are left out.
    pub fn due_reminders_for_worker(
        &self,
        _credential: &crate::PlatformCredential,
        today: NaiveDate,
        limit: u32,
    ) -> Result<Vec<Reminder>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT r.document_id, r.org_id, d.name, r.notice_by, r.remind_on, c.expires_on FROM renewal_reminders r
             JOIN documents d ON d.id = r.document_id AND d.org_id = r.org_id AND d.deleted_at IS NULL
             JOIN contracts c ON c.document_id = r.document_id AND c.finalized_at IS NOT NULL
             WHERE r.status = 'scheduled' AND r.remind_on <= ?1 ORDER BY r.remind_on, r.document_id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![today.to_string(), limit], |r| {
            Ok(Reminder {
                document: crate::sql::parse_text("document id", &r.get::<_, String>(0)?)?,
                org: crate::sql::parse_text("organization id", &r.get::<_, String>(1)?)?,
                name: r.get(2)?,
                notice_by: crate::sql::parse_text("date", &r.get::<_, String>(3)?)?,
                remind_on: crate::sql::parse_text("date", &r.get::<_, String>(4)?)?,
                started: false,
                run: None,
                expires_on: r.get::<_, Option<String>>(5)?.map(|e| crate::sql::parse_text("date", &e)).transpose()?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Whether the reminder of `document` for `notice_by` already went out (a run was started for it). `false` also
    /// when there is no such reminder.
    pub fn reminder_went_out_for_worker(
        &self,
        _credential: &crate::PlatformCredential,
        document: DocumentId,
        notice_by: NaiveDate,
    ) -> Result<bool, StoreError> {
        let status: Option<String> = self
            .store
            .conn()
            .prepare_cached("SELECT status FROM renewal_reminders WHERE document_id = ?1 AND notice_by = ?2")?
            .query_row(params![document.to_string(), notice_by.to_string()], |r| r.get(0))
            .optional()?;
        Ok(status.as_deref() == Some("started"))
    }

    /// Records that the reminder for `notice_by` went out as `run`. Only a still scheduled reminder for that same
    /// deadline is marked (a deadline moved meanwhile keeps the new one scheduled); `false` when none was.
    pub fn reminder_started_for_worker(
        &self,
        _credential: &crate::PlatformCredential,
        document: DocumentId,
        notice_by: NaiveDate,
        run: pactwise_domain::RunId,
    ) -> Result<bool, StoreError> {
        let at = crate::time::to_sql(self.store.clock().now());
        let n = self.store.conn().execute(
            "UPDATE renewal_reminders SET status = 'started', run_id = ?1, updated_at = ?2
             WHERE document_id = ?3 AND notice_by = ?4 AND status = 'scheduled'",
            params![run.to_string(), at, document.to_string(), notice_by.to_string()],
        )?;
        Ok(n == 1)
    }

    /// Finalized contracts whose checklist outcome was never stamped (finalized before the repository existed).
    pub fn unassessed(&self, scope: &OrgScope) -> Result<Vec<DocumentId>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT c.document_id FROM contracts c
             JOIN documents d ON d.id = c.document_id AND d.org_id = c.org_id AND d.deleted_at IS NULL
             WHERE c.org_id = ?1 AND c.finalized_at IS NOT NULL AND c.risk IS NULL",
        )?;
        let rows = stmt.query_map([scope.org().to_string()], |r| {
            crate::sql::parse_text::<DocumentId>("document id", &r.get::<_, String>(0)?)
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Stamps a finalized contract's checklist outcome (for contracts finalized before outcomes were kept).
    pub fn set_outcome(&self, scope: &OrgScope, id: DocumentId, outcome: ContractOutcome) -> Result<(), StoreError> {
        let changed = self.store.conn().execute(
            "UPDATE contracts SET risk = ?1, red_flags = ?2, critical_gaps = ?3
             WHERE document_id = ?4 AND org_id = ?5 AND finalized_at IS NOT NULL",
            params![outcome.risk(), outcome.red_flags, outcome.critical_gaps, id.to_string(), scope.org().to_string()],
        )?;
        if changed == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }
}

fn date_opt(text: Option<String>) -> Option<NaiveDate> {
    text.and_then(|t| NaiveDate::parse_from_str(&t, "%Y-%m-%d").ok())
}

fn like_escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

/// Words as an FTS5 query: each word quoted (no operator in the input has a meaning), every word required, the
/// last one as a prefix so results follow typing. `None` when there is no word.
pub(crate) fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(16)
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    let last = words.len().checked_sub(1)?;
    Some(
        words
            .iter()
            .enumerate()
            .map(|(i, w)| if i == last { format!("{w}*") } else { w.clone() })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Writes the columns derived from a contract's fields (inside the caller's transaction, right after the fields).
pub(crate) fn derive_in(conn: &Connection, document: &str, extractions_json: &str) -> Result<(), StoreError> {
    let fields: Extractions = serde_json::from_str(extractions_json).unwrap_or_default();
    let dates = pactwise_rules::contract_dates::contract_dates(&fields);
    let law = pactwise_rules::contract_dates::governing_law(&fields);
    conn.prepare_cached(
        "UPDATE contracts SET expires_on = ?1, notice_by = ?2, governing_law = ?3, derived_version = ?4
         WHERE document_id = ?5",
    )?
    .execute(params![
        dates.expires_on.map(|d| d.to_string()),
        dates.notice_by.map(|d| d.to_string()),
        law,
        DERIVED_VERSION,
        document
    ])?;
    reminder_in(conn, document)?;
    Ok(())
}

/// Keeps the contract's renewal reminder in step with its row (inside the caller's transaction): a finalized
/// contract with a notice deadline has one, falling due on `rules::contract_dates::reminder_date`; a deadline that
/// moved schedules it again for the new date (even if it had gone out for the old one); no deadline, or a review
/// reopened, removes it.
pub(crate) fn reminder_in(conn: &Connection, document: &str) -> Result<(), StoreError> {
    let row: Option<(String, Option<String>, bool, String)> = conn
        .prepare_cached(
            "SELECT org_id, notice_by, finalized_at IS NOT NULL, updated_at FROM contracts WHERE document_id = ?1",
        )?
        .query_row([document], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    let wanted = row.and_then(|(org, notice, finalized, at)| {
        let notice = notice.and_then(|n| NaiveDate::parse_from_str(&n, "%Y-%m-%d").ok());
        notice.filter(|_| finalized).map(|n| (org, n, at))
    });
    let Some((org, notice_by, at)) = wanted else {
        conn.prepare_cached("DELETE FROM renewal_reminders WHERE document_id = ?1")?.execute([document])?;
        return Ok(());
    };
    let remind_on = pactwise_rules::contract_dates::reminder_date(notice_by);
    conn.prepare_cached(
        "INSERT INTO renewal_reminders (document_id, org_id, notice_by, remind_on, status, updated_at)
         VALUES (?1, ?2, ?3, ?4, 'scheduled', ?5)
         ON CONFLICT (document_id) DO UPDATE SET notice_by = excluded.notice_by, remind_on = excluded.remind_on,
             status = 'scheduled', run_id = NULL, updated_at = excluded.updated_at
         WHERE renewal_reminders.notice_by <> excluded.notice_by",
    )?
    .execute(params![document, org, notice_by.to_string(), remind_on.to_string(), at])?;
    Ok(())
}

/// Derives the columns of rows written before this version of the rule (at open, after the migrations).
pub(crate) fn refresh_derived(conn: &mut Connection) -> Result<(), StoreError> {
    let stale: Vec<(String, String)> = conn
        .prepare("SELECT document_id, extractions_json FROM contracts WHERE derived_version < ?1")?
        .query_map([DERIVED_VERSION], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    if stale.is_empty() {
        return Ok(());
    }
    let tx = conn.transaction()?;
    for (document, json) in &stale {
        derive_in(&tx, document, json)?;
    }
    tx.commit()?;
    tracing::info!(contracts = stale.len(), "derived the dates of contracts written by an older version");
    Ok(())
}

/// Stamps the outcome at finalize (inside the finalize transaction).
pub(crate) fn stamp_outcome_in(
    conn: &Connection,
    scope: &OrgScope,
    id: DocumentId,
    outcome: ContractOutcome,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE contracts SET risk = ?1, red_flags = ?2, critical_gaps = ?3 WHERE document_id = ?4 AND org_id = ?5",
        params![outcome.risk(), outcome.red_flags, outcome.critical_gaps, id.to_string(), scope.org().to_string()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_words_are_quoted_required_and_the_last_is_a_prefix() {
        assert_eq!(fts_query("Acme supp").as_deref(), Some("\"acme\" \"supp\"*"));
        assert_eq!(fts_query("NEAR(a b) OR \"x").as_deref(), Some("\"near\" \"a\" \"b\" \"or\" \"x\"*"));
        assert_eq!(fts_query("  -- "), None);
    }

    #[test]
    fn every_list_filter_is_answered_from_an_index_without_reading_the_fields() {
        use pactwise_domain::{FixedClock, OrgId, Role, SessionId, UserId};
        let store = Store::open_in_memory(std::sync::Arc::new(FixedClock::new(chrono::Utc::now()))).unwrap();
        let scope = OrgScope::from_verified_session(OrgId::new(), UserId::new(), Role::Owner, SessionId::new());
        let base = ContractFilter { limit: 50, ..ContractFilter::default() };
        let filters = [
            base.clone(),
            ContractFilter { type_id: Some("license".into()), ..base.clone() },
            ContractFilter { counterparty: Some("globex".into()), ..base.clone() },
            ContractFilter { governing_law: Some("Delaware".into()), ..base.clone() },
            ContractFilter { risk: Some("high".into()), ..base.clone() },
            ContractFilter { expiring_within_days: Some(90), ..base.clone() },
            ContractFilter { notice_within_days: Some(90), ..base.clone() },
            ContractFilter { search: Some("supply".into()), ..base.clone() },
        ];
        let contracts = store.contracts();
        for f in filters {
            let (clause, args) = contracts.where_clause(&scope, &f).unwrap();
            let plan: Vec<String> = store
                .conn()
                .prepare(&format!("EXPLAIN QUERY PLAN SELECT c.document_id, c.counterparty, c.risk {clause}"))
                .unwrap()
                .query_map(params_from_iter(args.iter()), |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let on_contracts: Vec<&String> = plan.iter().filter(|l| l.contains(" c ")).collect();
            assert!(on_contracts.iter().all(|l| l.contains("contracts_final_")), "{f:?}: {plan:?}");
            assert!(!plan.iter().any(|l| l == "SCAN c" || l.starts_with("SCAN c ")), "{f:?}: {plan:?}");
        }
    }

    #[test]
    fn risk_follows_red_flags_then_critical_gaps() {
        assert_eq!(ContractOutcome { red_flags: 1, critical_gaps: 3 }.risk(), "high");
        assert_eq!(ContractOutcome { red_flags: 0, critical_gaps: 1 }.risk(), "medium");
        assert_eq!(ContractOutcome::default().risk(), "low");
    }
}
