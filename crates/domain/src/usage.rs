//! Model usage and budgets as plain records: what one model request used and cost (a row of the usage ledger), and
//! the spending limits an organization sets. Money is integer micro-dollars (1 USD = 1 000 000), never a float.

use crate::ids::{OrgId, UserId};
use chrono::{DateTime, Datelike, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Token counts of one model request, as the API reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Uncached input tokens.
    pub input: u32,
    pub output: u32,
    /// Input tokens written to the cache with the 5-minute lifetime.
    pub cache_write_5m: u32,
    /// Input tokens written to the cache with the 1-hour lifetime.
    pub cache_write_1h: u32,
    /// Input tokens read from the cache.
    pub cache_read: u32,
}

impl TokenUsage {
    /// The whole prompt: uncached input plus cache writes plus cache reads.
    pub fn prompt_tokens(&self) -> u64 {
        u64::from(self.input)
            + u64::from(self.cache_write_5m)
            + u64::from(self.cache_write_1h)
            + u64::from(self.cache_read)
    }

    pub fn add(&mut self, other: &TokenUsage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_write_5m = self.cache_write_5m.saturating_add(other.cache_write_5m);
        self.cache_write_1h = self.cache_write_1h.saturating_add(other.cache_write_1h);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
    }
}

/// How one model request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum UsageOutcome {
    /// A complete reply.
    Ok,
    /// The model declined.
    Refused,
    /// The reply hit the token limit.
    Truncated,
    /// A complete reply that did not match the required schema.
    InvalidOutput,
    /// HTTP 429.
    RateLimited,
    /// HTTP 529 or an `overloaded_error`.
    Overloaded,
    /// Any other HTTP 5xx.
    ServerError,
    /// The request was rejected (other 4xx: bad request, bad key).
    Rejected,
    /// No HTTP answer: connection refused, reset, timed out.
    TransportError,
}

impl UsageOutcome {
    pub const ALL: [UsageOutcome; 9] = [
        UsageOutcome::Ok,
        UsageOutcome::Refused,
        UsageOutcome::Truncated,
        UsageOutcome::InvalidOutput,
        UsageOutcome::RateLimited,
        UsageOutcome::Overloaded,
        UsageOutcome::ServerError,
        UsageOutcome::Rejected,
        UsageOutcome::TransportError,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UsageOutcome::Ok => "ok",
            UsageOutcome::Refused => "refused",
            UsageOutcome::Truncated => "truncated",
            UsageOutcome::InvalidOutput => "invalid_output",
            UsageOutcome::RateLimited => "rate_limited",
            UsageOutcome::Overloaded => "overloaded",
            UsageOutcome::ServerError => "server_error",
            UsageOutcome::Rejected => "rejected",
            UsageOutcome::TransportError => "transport_error",
        }
    }
}

impl fmt::Display for UsageOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for UsageOutcome {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UsageOutcome::ALL.into_iter().find(|o| o.as_str() == s).ok_or_else(|| UnknownName(s.to_string()))
    }
}

/// A stored name (outcome, period, subject kind) that this program does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName(pub String);

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown name {:?}", self.0)
    }
}

impl std::error::Error for UnknownName {}

/// One row of the usage ledger: one HTTP request to the model, priced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRecord {
    /// This request's own id: a record written twice (a journal replayed after a crash) is kept once.
    pub id: uuid::Uuid,
    pub org: OrgId,
    /// The person on whose behalf the call ran; `None` for background work with no person behind it.
    pub user: Option<UserId>,
    /// What the call was for (`classify`, `checklist_section`, `assistant`, ...).
    pub purpose: String,
    /// The model id that was sent.
    pub model: String,
    pub tokens: TokenUsage,
    /// Price of this request in micro-dollars.
    pub cost_micros: i64,
    pub latency_ms: u32,
    pub outcome: UsageOutcome,
    /// When the request was sent.
    pub at: DateTime<Utc>,
}

/// What model spending was for, read from the purpose the ledger recorded with each call (the one home of that
/// reading); a purpose this build does not know, as older rows may hold, is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum UsageFeature {
    /// Telling a document's contract type.
    Classification,
    /// Pre-filling a document's checklist.
    Checklist,
    /// The Contract Assistant.
    Assistant,
    /// Prep Studio drafting and critique.
    PrepDrafting,
    /// The contract review report's model steps.
    ReviewReport,
    /// Other workflow agent steps.
    AgentSteps,
    /// Meaning-based search by a remote embedding model (Voyage): passages and queries.
    SearchEmbeddings,
    Other,
}

impl UsageFeature {
    pub fn of_purpose(purpose: &str) -> UsageFeature {
        match purpose {
            "classify" => UsageFeature::Classification,
            "checklist_section" => UsageFeature::Checklist,
            "assistant" => UsageFeature::Assistant,
            "prep_draft" => UsageFeature::PrepDrafting,
            p if p.starts_with("workflow_report_") => UsageFeature::ReviewReport,
            p if p.starts_with("workflow_") => UsageFeature::AgentSteps,
            "embed_query" | "embed_passages" => UsageFeature::SearchEmbeddings,
            _ => UsageFeature::Other,
        }
    }
}

/// Whose spending a budget limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case", tag = "kind", content = "user")]
pub enum BudgetSubject {
    /// The whole organization, all users and background work together.
    Organization,
    /// Every user of the organization, each on their own.
    EachUser,
    /// One named user.
    User(UserId),
}

impl BudgetSubject {
    /// The stored kind name (`organization`, `each_user`, `user`); the user id is stored beside it.
    pub fn kind(&self) -> &'static str {
        match self {
            BudgetSubject::Organization => "organization",
            BudgetSubject::EachUser => "each_user",
            BudgetSubject::User(_) => "user",
        }
    }

    /// Rebuild from the stored kind and user id.
    pub fn from_parts(kind: &str, user: Option<UserId>) -> Result<Self, UnknownName> {
        match (kind, user) {
            ("organization", None) => Ok(BudgetSubject::Organization),
            ("each_user", None) => Ok(BudgetSubject::EachUser),
            ("user", Some(user)) => Ok(BudgetSubject::User(user)),
            _ => Err(UnknownName(format!("{kind} (user {user:?})"))),
        }
    }

    /// Whose spending counts against this budget for a call made by `caller`: `Some(None)` is the whole
    /// organization's spending, `Some(Some(user))` that user's, and `None` means the budget does not apply.
    pub fn spender(&self, caller: Option<UserId>) -> Option<Option<UserId>> {
        match self {
            BudgetSubject::Organization => Some(None),
            BudgetSubject::EachUser => caller.map(Some),
            BudgetSubject::User(user) => (caller == Some(*user)).then_some(Some(*user)),
        }
    }
}

/// The length of a budget period; periods follow the UTC calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum BudgetPeriod {
    Daily,
    Monthly,
}

impl BudgetPeriod {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetPeriod::Daily => "daily",
            BudgetPeriod::Monthly => "monthly",
        }
    }

    /// The first instant of the period that contains `now`.
    pub fn start_containing(self, now: DateTime<Utc>) -> DateTime<Utc> {
        let (year, month, day) = match self {
            BudgetPeriod::Daily => (now.year(), now.month(), now.day()),
            BudgetPeriod::Monthly => (now.year(), now.month(), 1),
        };
        Utc.with_ymd_and_hms(year, month, day, 0, 0, 0).single().unwrap_or(now)
    }
}

impl FromStr for BudgetPeriod {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "daily" => Ok(BudgetPeriod::Daily),
            "monthly" => Ok(BudgetPeriod::Monthly),
            other => Err(UnknownName(other.to_string())),
        }
    }
}

/// A spending limit an organization sets; kept in the store and read before every model request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    pub org: OrgId,
    pub subject: BudgetSubject,
    pub period: BudgetPeriod,
    /// The most that may be spent in one period, in micro-dollars.
    pub limit_micros: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monthly_period_starts_on_the_first_at_midnight_utc() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 3, 4, 5).unwrap();
        assert_eq!(BudgetPeriod::Monthly.start_containing(now), Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap());
        assert_eq!(BudgetPeriod::Daily.start_containing(now), Utc.with_ymd_and_hms(2026, 11, 30, 0, 0, 0).unwrap());
    }

    #[test]
    fn stored_names_round_trip() {
        for outcome in UsageOutcome::ALL {
            assert_eq!(outcome.as_str().parse::<UsageOutcome>().unwrap(), outcome);
        }
        let user = UserId::new();
        for subject in [BudgetSubject::Organization, BudgetSubject::EachUser, BudgetSubject::User(user)] {
            let stored_user = match subject {
                BudgetSubject::User(u) => Some(u),
                _ => None,
            };
            assert_eq!(BudgetSubject::from_parts(subject.kind(), stored_user).unwrap(), subject);
        }
        assert!(BudgetSubject::from_parts("user", None).is_err());
    }

    #[test]
    fn each_recorded_purpose_reads_as_its_feature_and_unknown_ones_as_other() {
        for (purpose, feature) in [
            ("classify", UsageFeature::Classification),
            ("checklist_section", UsageFeature::Checklist),
            ("assistant", UsageFeature::Assistant),
            ("prep_draft", UsageFeature::PrepDrafting),
            ("workflow_report_extract", UsageFeature::ReviewReport),
            ("workflow_report_classify", UsageFeature::ReviewReport),
            ("workflow_draft_purchase_agreement", UsageFeature::AgentSteps),
            ("embed_query", UsageFeature::SearchEmbeddings),
            ("embed_passages", UsageFeature::SearchEmbeddings),
            ("pipeline", UsageFeature::Other),
            ("something_old", UsageFeature::Other),
        ] {
            assert_eq!(UsageFeature::of_purpose(purpose), feature, "{purpose}");
        }
    }

    #[test]
    fn a_named_user_budget_applies_only_to_that_user() {
        let alice = UserId::new();
        let bob = UserId::new();
        assert_eq!(BudgetSubject::User(alice).spender(Some(alice)), Some(Some(alice)));
        assert_eq!(BudgetSubject::User(alice).spender(Some(bob)), None);
        assert_eq!(BudgetSubject::EachUser.spender(Some(bob)), Some(Some(bob)));
        assert_eq!(BudgetSubject::EachUser.spender(None), None);
        assert_eq!(BudgetSubject::Organization.spender(Some(bob)), Some(None));
    }
}
