//! The model usage ledger and the organization's model budgets. The ledger is written by the model client (its
//! records carry the organization of the session that made the call); budgets are set by owners and admins through
//! their scope.

use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, SecondsFormat, Utc};
use pactwise_domain::usage::{Budget, BudgetPeriod, BudgetSubject, UsageRecord};
use pactwise_domain::{OrgId, Role, UserId};
use rusqlite::params;

pub struct Usage<'s> {
    store: &'s Store,
}

fn ledger_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl<'s> Usage<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Usage { store }
    }

    /// Appends a batch of priced requests in one transaction; a record already written (same id) is kept once.
    pub fn record_batch(&self, records: &[UsageRecord]) -> Result<(), StoreError> {
        let tx = self.store.conn().unchecked_transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR IGNORE INTO usage_ledger (record_id, org_id, user_id, purpose, model, input_tokens,
                     output_tokens, cache_write_5m_tokens, cache_write_1h_tokens, cache_read_tokens, cost_micros,
                     latency_ms, outcome, at)
                 VALUES (?14, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?;
            for r in records {
                insert.execute(params![
                    r.org.to_string(),
                    r.user.map(|u| u.to_string()),
                    r.purpose,
                    r.model,
                    r.tokens.input,
                    r.tokens.output,
                    r.tokens.cache_write_5m,
                    r.tokens.cache_write_1h,
                    r.tokens.cache_read,
                    r.cost_micros,
                    r.latency_ms,
                    r.outcome.as_str(),
                    ledger_time(r.at),
                    r.id.to_string(),
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Micro-dollars spent since `since`, by the organization (`user` None) or by one user.
    pub fn spent_micros(&self, org: OrgId, user: Option<UserId>, since: DateTime<Utc>) -> Result<i64, StoreError> {
        Ok(self.store.conn().query_row(
            "SELECT IFNULL(SUM(cost_micros), 0) FROM usage_ledger
             WHERE org_id = ?1 AND at >= ?2 AND (?3 IS NULL OR user_id = ?3)",
            params![org.to_string(), ledger_time(since), user.map(|u| u.to_string())],
            |r| r.get(0),
        )?)
    }

    /// Every budget an organization has set (read by the model client before each request).
    pub fn budgets(&self, org: OrgId) -> Result<Vec<Budget>, StoreError> {
        let mut stmt = self
            .store
            .conn()
            .prepare("SELECT subject, user_id, period, limit_micros FROM model_budgets WHERE org_id = ?1")?;
        let rows = stmt.query_map([org.to_string()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (subject, user, period, limit_micros) = row?;
            let user = user
                .map(|u| u.parse::<UserId>())
                .transpose()
                .map_err(|_| StoreError::Corrupt("bad user id in model_budgets".into()))?;
            out.push(Budget {
                org,
                subject: BudgetSubject::from_parts(&subject, user).map_err(|e| StoreError::Corrupt(e.0))?,
                period: period.parse::<BudgetPeriod>().map_err(|e| StoreError::Corrupt(e.0))?,
                limit_micros,
            });
        }
        Ok(out)
    }

    /// The session's organization's budgets.
    pub fn list_budgets(&self, scope: &OrgScope) -> Result<Vec<Budget>, StoreError> {
        self.budgets(scope.org())
    }

    /// Sets (replaces) one budget of the session's organization; owners and admins only.
    pub fn set_budget(
        &self,
        scope: &OrgScope,
        subject: BudgetSubject,
        period: BudgetPeriod,
        limit_micros: i64,
    ) -> Result<(), StoreError> {
        require_admin(scope)?;
        let tx = self.store.conn().unchecked_transaction()?;
        let user = match subject {
            BudgetSubject::User(u) => Some(u.to_string()),
            _ => None,
        };
        tx.execute(
            "DELETE FROM model_budgets WHERE org_id = ?1 AND subject = ?2 AND IFNULL(user_id, '') = IFNULL(?3, '')
                 AND period = ?4",
            params![scope.org().to_string(), subject.kind(), user, period.as_str()],
        )?;
        tx.execute(
            "INSERT INTO model_budgets (org_id, subject, user_id, period, limit_micros, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                scope.org().to_string(),
                subject.kind(),
                user,
                period.as_str(),
                limit_micros,
                ledger_time(self.store.clock().now())
            ],
        )?;
        let now = crate::time::to_sql(self.store.clock().now());
        crate::audit::append_audit(
            &tx,
            scope,
            &now,
            "model_budget.set",
            "model_budget",
            None,
            &serde_json::json!({"subject": subject.kind(), "user": user, "period": period.as_str(), "limit_micros": limit_micros}),
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// One line of a spending summary: a month (`YYYY-MM`), a person (user id; `None` for background work) or a
/// purpose, with what was spent. Tokens in count the whole prompt (uncached, cache writes and reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendRow {
    pub key: Option<String>,
    /// The person's name, for rows by person.
    pub name: Option<String>,
    pub calls: i64,
    pub cost_micros: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// Whose spending a person may see (the one home of the rule): owners and admins see the whole organization's
/// (`None`), everyone else only their own.
pub fn spend_visible_to(scope: &OrgScope) -> Option<UserId> {
    match scope.role() {
        Role::Owner | Role::Admin => None,
        _ => Some(scope.user()),
    }
}

const SPEND_COLUMNS: &str = "count(*), IFNULL(SUM(cost_micros), 0),
    IFNULL(SUM(input_tokens + cache_write_5m_tokens + cache_write_1h_tokens + cache_read_tokens), 0),
    IFNULL(SUM(output_tokens), 0)";

fn spend_row(
    key: Option<String>,
    name: Option<String>,
    r: &rusqlite::Row<'_>,
    at: usize,
) -> rusqlite::Result<SpendRow> {
    Ok(SpendRow {
        key,
        name,
        calls: r.get(at)?,
        cost_micros: r.get(at + 1)?,
        input_tokens: r.get(at + 2)?,
        output_tokens: r.get(at + 3)?,
    })
}

impl Usage<'_> {
    /// The session's organization's spending by calendar month (UTC), newest first, at most `months` months; only
    /// the caller's own calls unless they are an owner or admin ([`spend_visible_to`]).
    pub fn spend_by_month(&self, scope: &OrgScope, months: u32) -> Result<Vec<SpendRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT substr(at, 1, 7) AS month, {SPEND_COLUMNS} FROM usage_ledger
             WHERE org_id = ?1 AND (?2 IS NULL OR user_id = ?2)
             GROUP BY month ORDER BY month DESC LIMIT ?3"
        ))?;
        let user = spend_visible_to(scope).map(|u| u.to_string());
        let rows =
            stmt.query_map(params![scope.org().to_string(), user, months], |r| spend_row(Some(r.get(0)?), None, r, 1))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Spending in `[from, to)` by person, most first; background work (no person) is one row with no key.
    pub fn spend_by_user(
        &self,
        scope: &OrgScope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<SpendRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT l.user_id, u.display_name, {SPEND_COLUMNS} FROM usage_ledger l LEFT JOIN users u ON u.id = l.user_id
             WHERE l.org_id = ?1 AND l.at >= ?2 AND l.at < ?3 AND (?4 IS NULL OR l.user_id = ?4)
             GROUP BY l.user_id ORDER BY 4 DESC, 2"
        ))?;
        let user = spend_visible_to(scope).map(|u| u.to_string());
        let rows = stmt.query_map(params![scope.org().to_string(), ledger_time(from), ledger_time(to), user], |r| {
            spend_row(r.get(0)?, r.get(1)?, r, 2)
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Spending in `[from, to)` by the purpose the ledger recorded, most first.
    pub fn spend_by_purpose(
        &self,
        scope: &OrgScope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<SpendRow>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(&format!(
            "SELECT purpose, {SPEND_COLUMNS} FROM usage_ledger
             WHERE org_id = ?1 AND at >= ?2 AND at < ?3 AND (?4 IS NULL OR user_id = ?4)
             GROUP BY purpose ORDER BY 3 DESC, 1"
        ))?;
        let user = spend_visible_to(scope).map(|u| u.to_string());
        let rows = stmt.query_map(params![scope.org().to_string(), ledger_time(from), ledger_time(to), user], |r| {
            spend_row(Some(r.get(0)?), None, r, 1)
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

fn require_admin(scope: &OrgScope) -> Result<(), StoreError> {
    if matches!(scope.role(), Role::Owner | Role::Admin) {
        Ok(())
    } else {
        Err(StoreError::Forbidden { role: scope.role() })
    }
}
