//! Budgets per organization and per user, checked before a request reaches the model. Settings and spending come
//! from a [`BudgetSource`] (the store) on every check, so changing a budget needs no rebuild or restart.

use crate::ledger::{LedgerError, UsageLedger};
use chrono::{DateTime, Utc};
use pactwise_domain::usage::{Budget, BudgetPeriod, BudgetSubject, UsageRecord};
use pactwise_domain::{OrgId, UserId};
use std::sync::Mutex;

/// Budget settings and spending so far. The store implements it over the `budgets` and `usage_ledger` tables.
pub trait BudgetSource: Send + Sync {
    /// Every budget the organization has set.
    fn budgets(&self, org: OrgId) -> Result<Vec<Budget>, BudgetSourceError>;
    /// Micro-dollars spent since `since`: by the whole organization when `user` is `None`, else by that user.
    fn spent_micros(&self, org: OrgId, user: Option<UserId>, since: DateTime<Utc>) -> Result<i64, BudgetSourceError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("model budgets could not be read: {0}")]
pub struct BudgetSourceError(pub String);

/// A budget that is spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exhausted {
    pub subject: BudgetSubject,
    pub period: BudgetPeriod,
    pub limit_micros: i64,
    pub spent_micros: i64,
}

/// Check every budget that applies to a call by `user` in `org`. `unflushed` adds the cost of ledger records not yet
/// written to the source.
pub fn check(
    source: &dyn BudgetSource,
    org: OrgId,
    user: Option<UserId>,
    now: DateTime<Utc>,
    unflushed: &dyn Fn(Option<UserId>, DateTime<Utc>) -> i64,
) -> Result<Result<(), Exhausted>, BudgetSourceError> {
    for budget in source.budgets(org)? {
        if budget.org != org {
            continue;
        }
        let Some(spender) = budget.subject.spender(user) else { continue };
        let since = budget.period.start_containing(now);
        let spent = source.spent_micros(org, spender, since)?.saturating_add(unflushed(spender, since));
        if spent >= budget.limit_micros {
            return Ok(Err(Exhausted {
                subject: budget.subject,
                period: budget.period,
                limit_micros: budget.limit_micros,
                spent_micros: spent,
            }));
        }
    }
    Ok(Ok(()))
}

/// Budgets and a ledger in memory, for tests and demos: it is both the ledger sink and the budget source, the way
/// the store is.
#[derive(Debug, Default)]
pub struct InMemoryUsage {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    budgets: Vec<Budget>,
    records: Vec<UsageRecord>,
    batch_sizes: Vec<usize>,
    fail_writes: bool,
}

impl InMemoryUsage {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Set or replace the budget with the same organization, subject and period.
    pub fn set_budget(&self, budget: Budget) {
        let mut inner = self.lock();
        inner.budgets.retain(|b| !(b.org == budget.org && b.subject == budget.subject && b.period == budget.period));
        inner.budgets.push(budget);
    }

    pub fn clear_budgets(&self) {
        self.lock().budgets.clear();
    }

    /// Every record written so far.
    pub fn records(&self) -> Vec<UsageRecord> {
        self.lock().records.clone()
    }

    /// The size of each batch written, in order.
    pub fn batch_sizes(&self) -> Vec<usize> {
        self.lock().batch_sizes.clone()
    }

    /// Make writes fail (to test that batches survive a failed write).
    pub fn fail_writes(&self, fail: bool) {
        self.lock().fail_writes = fail;
    }
}

impl UsageLedger for InMemoryUsage {
    fn record_batch(&self, records: &[UsageRecord]) -> Result<(), LedgerError> {
        let mut inner = self.lock();
        if inner.fail_writes {
            return Err(LedgerError("writes are switched off in this test".into()));
        }
        inner.records.extend_from_slice(records);
        inner.batch_sizes.push(records.len());
        Ok(())
    }
}

impl BudgetSource for InMemoryUsage {
    fn budgets(&self, org: OrgId) -> Result<Vec<Budget>, BudgetSourceError> {
        Ok(self.lock().budgets.iter().filter(|b| b.org == org).cloned().collect())
    }

    fn spent_micros(&self, org: OrgId, user: Option<UserId>, since: DateTime<Utc>) -> Result<i64, BudgetSourceError> {
        Ok(self
            .lock()
            .records
            .iter()
            .filter(|r| r.org == org && r.at >= since && (user.is_none() || r.user == user))
            .map(|r| r.cost_micros)
            .sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use pactwise_domain::usage::{TokenUsage, UsageOutcome};

    fn spend(usage: &InMemoryUsage, org: OrgId, user: Option<UserId>, at: DateTime<Utc>, cost: i64) {
        usage
            .record_batch(&[UsageRecord {
                id: uuid::Uuid::now_v7(),
                org,
                user,
                purpose: "test".into(),
                model: "claude-haiku-5-5".into(),
                tokens: TokenUsage::default(),
                cost_micros: cost,
                latency_ms: 0,
                outcome: UsageOutcome::Ok,
                at,
            }])
            .unwrap();
    }

    #[test]
    fn each_user_budget_counts_only_the_callers_own_spending_this_month() {
        let usage = InMemoryUsage::new();
        let org = OrgId::new();
        let (alice, bob) = (UserId::new(), UserId::new());
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        usage.set_budget(Budget {
            org,
            subject: BudgetSubject::EachUser,
            period: BudgetPeriod::Monthly,
            limit_micros: 100,
        });
        spend(&usage, org, Some(alice), now, 100);
        spend(&usage, org, Some(bob), Utc.with_ymd_and_hms(2026, 10, 31, 23, 0, 0).unwrap(), 500);
        let none = |_: Option<UserId>, _: DateTime<Utc>| 0;
        assert!(check(&usage, org, Some(alice), now, &none).unwrap().is_err());
        assert!(check(&usage, org, Some(bob), now, &none).unwrap().is_ok(), "last month's spending does not count");
    }

    #[test]
    fn unflushed_spending_counts_against_the_organization_budget() {
        let usage = InMemoryUsage::new();
        let org = OrgId::new();
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        usage.set_budget(Budget {
            org,
            subject: BudgetSubject::Organization,
            period: BudgetPeriod::Daily,
            limit_micros: 50,
        });
        spend(&usage, org, None, now, 30);
        assert!(check(&usage, org, None, now, &|_, _| 19).unwrap().is_ok());
        let exhausted = check(&usage, org, None, now, &|_, _| 20).unwrap().unwrap_err();
        assert_eq!(exhausted.spent_micros, 50);
        assert_eq!(exhausted.limit_micros, 50);
    }
}
