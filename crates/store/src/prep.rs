//! Prep Studio's records: RFP packages (the six artifacts as one JSON document whose shape `pactwise-prep` owns),
//! the one-editor lease lock, drafting traces, and the **publish gate**: the only path to a published package.
//!
//! The gate ([`publish_gate`]) reads the stored package JSON itself, never the caller's copy, and checks every rule
//! again: each artifact approved with an approval bound to the hash of its current content, criteria weights that
//! sum to exactly 10,000 basis points, each scored requirement mapped to exactly one criterion, unique requirement
//! codes, measurable scored requirements, priceable pricing lines, and the six milestones in order on business
//! days. `pactwise-prep`'s pre-check mirrors these rules one for one (tested against this function); this one is
//! authoritative. Publishing needs the buyer's own session (role owner, admin or buyer) and no other editor's live
//! lease.
//!
//! The JSON contract read here: `artifacts.<kind>.state.status` (`approved` with `state.hash`), `artifacts.<kind>
//! .content` for the kinds `intake`, `scope`, `requirements`, `criteria`, `pricing`, `milestones`; requirement
//! `items[] {code, kind, measure {metric, threshold, verification}}`; criteria `criteria[] {id, weight_bp,
//! requirement_codes[]}`; pricing `lines[] {code, description, unit, quantity, basis, open_amount}`; milestones
//! `items[] {kind, date}`; intake `holidays[]` (ISO dates).

use crate::audit::append_audit;
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Datelike, NaiveDate, Utc, Weekday};
use pactwise_domain::{Role, UserId};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// The six artifacts in dependency order.
pub const ARTIFACT_KINDS: [&str; 6] = ["intake", "scope", "requirements", "criteria", "pricing", "milestones"];

/// The milestone kinds, in the order their dates must follow.
pub const MILESTONE_KINDS: [&str; 6] =
    ["publication", "questions_deadline", "submission_deadline", "evaluation", "award", "contract_start"];

/// Weights are basis points of the total: 10,000 is 100 %.
pub const WEIGHT_TOTAL_BP: u64 = 10_000;

/// Words that make a pricing line an open amount (compared in lower case).
pub const OPEN_AMOUNT_MARKERS: [&str; 5] = ["tbd", "to be determined", "as required", "open amount", "at cost"];

/// A rule of the publish gate. Stable names: the pre-check, the UI and scripts branch on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PublishRule {
    /// The package JSON lacks an artifact or a field the gate needs.
    Malformed,
    /// An artifact is not approved.
    NotApproved,
    /// An approval names content that is not the artifact's current content.
    ApprovalOutdated,
    /// Criteria weights do not sum to exactly 100 % (10,000 basis points).
    WeightsNotHundred,
    /// A scored requirement is mapped to no criterion or to several, or a criterion maps an unknown or unscored code.
    ScoredRequirementMapping,
    /// Two requirements share a code.
    DuplicateRequirementCode,
    /// A scored requirement lacks a metric, a threshold or a verification method.
    RequirementNotMeasurable,
    /// A pricing line lacks a unit, a quantity or basis, or leaves its amount open.
    PricingLineNotPriceable,
    /// Milestones are missing, repeated, out of order or not on business days.
    MilestonesInvalid,
}

impl PublishRule {
    pub const ALL: [PublishRule; 9] = [
        PublishRule::Malformed,
        PublishRule::NotApproved,
        PublishRule::ApprovalOutdated,
        PublishRule::WeightsNotHundred,
        PublishRule::ScoredRequirementMapping,
        PublishRule::DuplicateRequirementCode,
        PublishRule::RequirementNotMeasurable,
        PublishRule::PricingLineNotPriceable,
        PublishRule::MilestonesInvalid,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PublishRule::Malformed => "malformed",
            PublishRule::NotApproved => "not_approved",
            PublishRule::ApprovalOutdated => "approval_outdated",
            PublishRule::WeightsNotHundred => "weights_not_hundred",
            PublishRule::ScoredRequirementMapping => "scored_requirement_mapping",
            PublishRule::DuplicateRequirementCode => "duplicate_requirement_code",
            PublishRule::RequirementNotMeasurable => "requirement_not_measurable",
            PublishRule::PricingLineNotPriceable => "pricing_line_not_priceable",
            PublishRule::MilestonesInvalid => "milestones_invalid",
        }
    }
}

/// One failed rule, with the artifact and the item (a requirement code, a line code, a milestone) it is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct GateViolation {
    pub rule: PublishRule,
    pub artifact: String,
    pub subject: Option<String>,
    pub message: String,
}

impl GateViolation {
    fn new(rule: PublishRule, artifact: &str, subject: Option<String>, message: impl Into<String>) -> Self {
        GateViolation { rule, artifact: artifact.to_string(), subject, message: message.into() }
    }
}

/// The content hash an approval is bound to: SHA-256 of the value's canonical JSON (object keys sorted at every
/// level, no whitespace). `pactwise-prep` uses this same function.
pub fn content_hash(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn text_of<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

fn blank(text: Option<&str>) -> bool {
    text.is_none_or(|t| t.trim().is_empty())
}

/// Is this day a business day: not a Saturday, Sunday or listed holiday?
pub fn is_business_day(day: NaiveDate, holidays: &BTreeSet<NaiveDate>) -> bool {
    !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) && !holidays.contains(&day)
}

/// Does this pricing text leave the amount open?
pub fn has_open_amount_marker(text: &str) -> bool {
    let lower = text.to_lowercase();
    OPEN_AMOUNT_MARKERS.iter().any(|m| {
        lower.match_indices(m).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + m.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })
}

/// The publish gate: every rule that the package breaks (empty when it may be published). Pure; see the module
/// documentation for the JSON it reads.
pub fn publish_gate(package: &Value) -> Vec<GateViolation> {
    let mut out = Vec::new();
    let Some(artifacts) = package.get("artifacts") else {
        out.push(GateViolation::new(PublishRule::Malformed, "package", None, "the package has no artifacts"));
        return out;
    };
    for kind in ARTIFACT_KINDS {
        let slot = artifacts.get(kind);
        let content = slot.and_then(|s| s.get("content")).filter(|c| !c.is_null());
        let Some(content) = content else {
            out.push(GateViolation::new(PublishRule::Malformed, kind, None, format!("the {kind} has no content")));
            continue;
        };
        let state = slot.and_then(|s| s.get("state"));
        if state.and_then(|s| text_of(s, "status")) != Some("approved") {
            out.push(GateViolation::new(PublishRule::NotApproved, kind, None, format!("the {kind} is not approved")));
        } else if state.and_then(|s| text_of(s, "hash")) != Some(content_hash(content).as_str()) {
            out.push(GateViolation::new(
                PublishRule::ApprovalOutdated,
                kind,
                None,
                format!("the {kind} changed after it was approved"),
            ));
        }
    }
    let content = |kind: &str| artifacts.get(kind).and_then(|s| s.get("content")).filter(|c| !c.is_null());
    let empty = Vec::new();
    let list = |kind: &str, key: &str| -> Vec<Value> {
        content(kind).and_then(|c| c.get(key)).and_then(Value::as_array).unwrap_or(&empty).clone()
    };

    // Requirements: unique codes, scored ones measurable.
    let requirements = list("requirements", "items");
    let mut seen = BTreeSet::new();
    let mut scored = BTreeSet::new();
    for r in &requirements {
        let code = text_of(r, "code").unwrap_or("").trim().to_string();
        if !seen.insert(code.clone()) {
            out.push(GateViolation::new(
                PublishRule::DuplicateRequirementCode,
                "requirements",
                Some(code.clone()),
                format!("the requirement code {code:?} is used more than once"),
            ));
        }
        if text_of(r, "kind") == Some("scored") {
            scored.insert(code.clone());
            let measure = r.get("measure").filter(|m| m.is_object());
            let measurable = measure.is_some_and(|m| {
                !blank(text_of(m, "metric")) && !blank(text_of(m, "threshold")) && !blank(text_of(m, "verification"))
            });
            if !measurable {
                out.push(GateViolation::new(
                    PublishRule::RequirementNotMeasurable,
                    "requirements",
                    Some(code.clone()),
                    format!("scored requirement {code} needs a metric, a threshold and a verification method"),
                ));
            }
        }
    }

    // Criteria: weights sum to exactly 100 %, each scored requirement mapped exactly once.
    let criteria = list("criteria", "criteria");
    let mut total: u128 = 0;
    let mut weights_ok = !criteria.is_empty();
    let mut mapped: BTreeMap<String, u32> = BTreeMap::new();
    for c in &criteria {
        match c.get("weight_bp").and_then(Value::as_u64) {
            Some(w) => total += u128::from(w),
            None => weights_ok = false,
        }
        for code in c.get("requirement_codes").and_then(Value::as_array).unwrap_or(&empty) {
            let code = code.as_str().unwrap_or("").trim().to_string();
            *mapped.entry(code).or_default() += 1;
        }
    }
    if !weights_ok || total != u128::from(WEIGHT_TOTAL_BP) {
        out.push(GateViolation::new(
            PublishRule::WeightsNotHundred,
            "criteria",
            None,
            format!("criteria weights sum to {total} basis points; they must sum to exactly 10000 (100 %)"),
        ));
    }
    for code in &scored {
        let n = mapped.get(code).copied().unwrap_or(0);
        if n != 1 {
            out.push(GateViolation::new(
                PublishRule::ScoredRequirementMapping,
                "criteria",
                Some(code.clone()),
                format!("scored requirement {code} is mapped to {n} criteria; it must be mapped to exactly one"),
            ));
        }
    }
    for code in mapped.keys().filter(|c| !scored.contains(*c)) {
        out.push(GateViolation::new(
            PublishRule::ScoredRequirementMapping,
            "criteria",
            Some(code.clone()),
            format!("a criterion maps {code:?}, which is not a scored requirement"),
        ));
    }

    // Pricing: every line priceable.
    for line in list("pricing", "lines") {
        let code = text_of(&line, "code").unwrap_or("").to_string();
        let quantity_ok = line.get("quantity").and_then(Value::as_u64).is_some_and(|q| q > 0);
        let basis_ok = !blank(text_of(&line, "basis"));
        let open = line.get("open_amount").and_then(Value::as_bool).unwrap_or(true)
            || has_open_amount_marker(text_of(&line, "description").unwrap_or(""))
            || has_open_amount_marker(text_of(&line, "unit").unwrap_or(""));
        if blank(text_of(&line, "unit")) || !(quantity_ok || basis_ok) || open {
            out.push(GateViolation::new(
                PublishRule::PricingLineNotPriceable,
                "pricing",
                Some(code.clone()),
                format!("pricing line {code} needs a unit, a quantity or pricing basis, and no open amount"),
            ));
        }
    }

    // Milestones: the six kinds once each, in order, on business days.
    let holidays: BTreeSet<NaiveDate> = list("intake", "holidays")
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        .collect();
    let milestones = list("milestones", "items");
    let mut previous: Option<NaiveDate> = None;
    for (index, kind) in MILESTONE_KINDS.iter().enumerate() {
        let found: Vec<&Value> = milestones.iter().filter(|m| text_of(m, "kind") == Some(kind)).collect();
        let date = text_of(found.first().copied().unwrap_or(&Value::Null), "date")
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok());
        let problem = match (found.len(), date) {
            (0, _) => Some(format!("the {kind} milestone is missing")),
            (1, None) => Some(format!("the {kind} milestone has no valid date")),
            (1, Some(d)) if !is_business_day(d, &holidays) => {
                Some(format!("the {kind} date {d} is not a business day"))
            }
            (1, Some(d)) if previous.is_some_and(|p| d <= p) => {
                Some(format!("the {kind} date {d} is not after the {} milestone", MILESTONE_KINDS[index - 1]))
            }
            (1, _) => None,
            (n, _) => Some(format!("the {kind} milestone appears {n} times")),
        };
        if let Some(message) = problem {
            out.push(GateViolation::new(PublishRule::MilestonesInvalid, "milestones", Some(kind.to_string()), message));
        }
        if date.is_some() {
            previous = date;
        }
    }
    if milestones.len() > MILESTONE_KINDS.len() {
        out.push(GateViolation::new(
            PublishRule::MilestonesInvalid,
            "milestones",
            None,
            format!("{} milestones where six are expected", milestones.len()),
        ));
    }
    out.sort();
    out.dedup();
    out
}

/// Who may draft and publish packages.
pub fn can_prepare_packages(role: Role) -> bool {
    matches!(role, Role::Owner | Role::Admin | Role::Buyer)
}

/// A stored package.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageRow {
    pub id: String,
    pub title: String,
    pub package: Value,
    pub version: u32,
    pub status: String,
    pub created_by: UserId,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub published_by: Option<UserId>,
    pub published_at: Option<DateTime<Utc>>,
}

/// Who holds a package's edit lease and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockInfo {
    pub holder: UserId,
    pub holder_name: String,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The lease had expired when it was read (anyone may take it over).
    pub expired: bool,
}

/// One model call of a drafting run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrepTrace {
    pub artifact: String,
    pub prompt_module: String,
    pub prompt_version: u32,
    pub prompt_hash: String,
    pub outcome: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_micros: i64,
    pub re_asks: u32,
    pub detail: Option<String>,
    #[serde(default)]
    pub at: Option<DateTime<Utc>>,
}

/// A precedent passage for drafting, never from competitors' released bid text.
#[derive(Debug, Clone, PartialEq)]
pub struct GroundingHit {
    pub precedent: String,
    pub title: String,
    pub text: String,
}

pub struct Prep<'s> {
    store: &'s Store,
}

impl<'s> Prep<'s> {
    pub(crate) fn new(store: &'s Store) -> Self {
        Prep { store }
    }

    fn require_preparer(scope: &OrgScope) -> Result<(), StoreError> {
        if can_prepare_packages(scope.role()) { Ok(()) } else { Err(StoreError::Forbidden { role: scope.role() }) }
    }

    /// Creates a package; the creator holds its edit lease for `lease` from now.
    pub fn create(
        &self,
        scope: &OrgScope,
        title: &str,
        package: &Value,
        lease: chrono::Duration,
    ) -> Result<String, StoreError> {
        Self::require_preparer(scope)?;
        let id = uuid::Uuid::now_v7().to_string();
        let now_t = self.store.clock().now();
        let now = to_sql(now_t);
        let tx = self.store.conn().unchecked_transaction()?;
        tx.execute(
            "INSERT INTO prep_packages (id, org_id, title, package_json, created_by, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            params![id, scope.org().to_string(), title, package.to_string(), scope.user().to_string(), now],
        )?;
        tx.execute(
            "INSERT INTO prep_locks (package_id, org_id, holder, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, scope.org().to_string(), scope.user().to_string(), now, to_sql(now_t + lease)],
        )?;
        append_audit(&tx, scope, &now, "prep.create", "prep_package", Some(&id), &serde_json::json!({"title": title}))?;
        tx.commit()?;
        Ok(id)
    }

    /// A package of the organization (not deleted); another organization's id is `NotFound`.
    pub fn get(&self, scope: &OrgScope, id: &str) -> Result<PackageRow, StoreError> {
        let row = self
            .store
            .conn()
            .query_row(
                "SELECT id, title, package_json, version, status, created_by, created_at, updated_at, published_by,
                        published_at
                 FROM prep_packages WHERE id = ?1 AND org_id = ?2 AND deleted_at IS NULL",
                params![id, scope.org().to_string()],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, u32>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, Option<String>>(8)?,
                        r.get::<_, Option<String>>(9)?,
                    ))
                },
            )
            .optional()?
            .ok_or(StoreError::NotFound)?;
        let (id, title, json, version, status, created_by, created_at, updated_at, published_by, published_at) = row;
        let user = |s: &str| s.parse::<UserId>().map_err(|_| StoreError::Corrupt(format!("bad user id {s:?}")));
        Ok(PackageRow {
            id,
            title,
            package: serde_json::from_str(&json).map_err(|e| StoreError::Corrupt(format!("package JSON: {e}")))?,
            version,
            status,
            created_by: user(&created_by)?,
            created_at: from_sql(&created_at)?,
            updated_at: from_sql(&updated_at)?,
            published_by: published_by.as_deref().map(user).transpose()?,
            published_at: from_sql_opt(published_at)?,
        })
    }

    /// The organization's packages, most recently changed first.
    pub fn list(&self, scope: &OrgScope) -> Result<Vec<PackageRow>, StoreError> {
        let ids: Vec<String> = {
            let mut stmt = self.store.conn().prepare(
                "SELECT id FROM prep_packages WHERE org_id = ?1 AND deleted_at IS NULL ORDER BY updated_at DESC, id",
            )?;
            stmt.query_map([scope.org().to_string()], |r| r.get(0))?.collect::<Result<_, _>>()?
        };
        ids.iter().map(|id| self.get(scope, id)).collect()
    }

    /// Saves a new version of the package. The caller must hold a live lease and name the version it read;
    /// a published package is not edited.
    pub fn save(&self, scope: &OrgScope, id: &str, read_version: u32, package: &Value) -> Result<u32, StoreError> {
        Self::require_preparer(scope)?;
        let current = self.get(scope, id)?;
        if current.status == "published" {
            return Err(StoreError::AlreadyPublished);
        }
        self.require_own_lease(scope, id)?;
        if current.version != read_version {
            return Err(StoreError::EditConflict { expected: read_version, found: current.version });
        }
        let now = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        let changed = tx.execute(
            "UPDATE prep_packages SET package_json = ?3, version = version + 1, updated_at = ?4
             WHERE id = ?1 AND org_id = ?2 AND version = ?5 AND deleted_at IS NULL",
            params![id, scope.org().to_string(), package.to_string(), now, read_version],
        )?;
        if changed != 1 {
            return Err(StoreError::EditConflict { expected: read_version, found: current.version });
        }
        append_audit(
            &tx,
            scope,
            &now,
            "prep.save",
            "prep_package",
            Some(id),
            &serde_json::json!({"version": read_version + 1}),
        )?;
        tx.commit()?;
        Ok(read_version + 1)
    }

    fn require_own_lease(&self, scope: &OrgScope, id: &str) -> Result<(), StoreError> {
        match self.lock(scope, id)? {
            Some(lock) if lock.holder == scope.user() && !lock.expired => Ok(()),
            Some(lock) if !lock.expired => Err(StoreError::Locked { holder: lock.holder_name, until: lock.expires_at }),
            _ => Err(StoreError::LeaseRequired),
        }
    }

    /// Who holds the package's edit lease, if anyone ever took it.
    pub fn lock(&self, scope: &OrgScope, id: &str) -> Result<Option<LockInfo>, StoreError> {
        self.get(scope, id)?;
        let now = self.store.clock().now();
        let row = self
            .store
            .conn()
            .query_row(
                "SELECT l.holder, u.display_name, l.acquired_at, l.expires_at FROM prep_locks l
                 JOIN users u ON u.id = l.holder WHERE l.package_id = ?1 AND l.org_id = ?2",
                params![id, scope.org().to_string()],
                |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
                },
            )
            .optional()?;
        let Some((holder, holder_name, acquired_at, expires_at)) = row else { return Ok(None) };
        let expires_at = from_sql(&expires_at)?;
        Ok(Some(LockInfo {
            holder: holder.parse().map_err(|_| StoreError::Corrupt(format!("bad user id {holder:?}")))?,
            holder_name,
            acquired_at: from_sql(&acquired_at)?,
            expires_at,
            expired: expires_at <= now,
        }))
    }

    /// Takes (or renews) the edit lease for `lease` from now. Refused with `Locked` while another person's lease
    /// is live; an expired lease is taken over (and the takeover audited).
    pub fn acquire_lock(&self, scope: &OrgScope, id: &str, lease: chrono::Duration) -> Result<LockInfo, StoreError> {
        Self::require_preparer(scope)?;
        let previous = self.lock(scope, id)?;
        if let Some(lock) = &previous
            && lock.holder != scope.user()
            && !lock.expired
        {
            return Err(StoreError::Locked { holder: lock.holder_name.clone(), until: lock.expires_at });
        }
        let now_t = self.store.clock().now();
        let now = to_sql(now_t);
        let tx = self.store.conn().unchecked_transaction()?;
        tx.execute(
            "INSERT INTO prep_locks (package_id, org_id, holder, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (package_id) DO UPDATE SET holder = excluded.holder, acquired_at = excluded.acquired_at,
                 expires_at = excluded.expires_at",
            params![id, scope.org().to_string(), scope.user().to_string(), now, to_sql(now_t + lease)],
        )?;
        if let Some(lock) = previous.filter(|l| l.holder != scope.user()) {
            append_audit(
                &tx,
                scope,
                &now,
                "prep.lock_taken_over",
                "prep_package",
                Some(id),
                &serde_json::json!({"previous_holder": lock.holder.to_string(), "expired_at": to_sql(lock.expires_at)}),
            )?;
        }
        tx.commit()?;
        self.lock(scope, id)?.ok_or(StoreError::NotFound)
    }

    /// Gives the lease back (only its holder can).
    pub fn release_lock(&self, scope: &OrgScope, id: &str) -> Result<(), StoreError> {
        self.get(scope, id)?;
        self.store.conn().execute(
            "DELETE FROM prep_locks WHERE package_id = ?1 AND org_id = ?2 AND holder = ?3",
            params![id, scope.org().to_string(), scope.user().to_string()],
        )?;
        Ok(())
    }

    /// Records the model calls of a drafting run, in one transaction.
    pub fn record_traces(&self, scope: &OrgScope, id: &str, traces: &[PrepTrace]) -> Result<(), StoreError> {
        self.get(scope, id)?;
        let now = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO prep_traces (id, org_id, package_id, at, artifact, prompt_module, prompt_version,
                     prompt_hash, outcome, input_tokens, output_tokens, cost_micros, re_asks, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            for t in traces {
                insert.execute(params![
                    uuid::Uuid::now_v7().to_string(),
                    scope.org().to_string(),
                    id,
                    t.at.map(to_sql).unwrap_or_else(|| now.clone()),
                    t.artifact,
                    t.prompt_module,
                    t.prompt_version,
                    t.prompt_hash,
                    t.outcome,
                    t.input_tokens as i64,
                    t.output_tokens as i64,
                    t.cost_micros,
                    t.re_asks,
                    t.detail,
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The package's traces, oldest first.
    pub fn traces(&self, scope: &OrgScope, id: &str) -> Result<Vec<PrepTrace>, StoreError> {
        self.get(scope, id)?;
        let mut stmt = self.store.conn().prepare(
            "SELECT artifact, prompt_module, prompt_version, prompt_hash, outcome, input_tokens, output_tokens,
                    cost_micros, re_asks, detail, at
             FROM prep_traces WHERE org_id = ?1 AND package_id = ?2 ORDER BY at, rowid",
        )?;
        let rows = stmt.query_map(params![scope.org().to_string(), id], |r| {
            Ok(PrepTrace {
                artifact: r.get(0)?,
                prompt_module: r.get(1)?,
                prompt_version: r.get(2)?,
                prompt_hash: r.get(3)?,
                outcome: r.get(4)?,
                input_tokens: r.get::<_, i64>(5)? as u64,
                output_tokens: r.get::<_, i64>(6)? as u64,
                cost_micros: r.get(7)?,
                re_asks: r.get(8)?,
                detail: r.get(9)?,
                at: Some(from_sql(&r.get::<_, String>(10)?)?),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Publishes the stored package: the gate runs on what is stored, under the buyer's own session. Refused with
    /// `PublishRefused` (every violation) when a rule fails, `Forbidden` for a role that may not publish,
    /// `Locked` while another person's lease is live, `NotFound` for another organization's package.
    pub fn publish(&self, scope: &OrgScope, id: &str) -> Result<PackageRow, StoreError> {
        Self::require_preparer(scope)?;
        let row = self.get(scope, id)?;
        if row.status == "published" {
            return Err(StoreError::AlreadyPublished);
        }
        if let Some(lock) = self.lock(scope, id)?
            && lock.holder != scope.user()
            && !lock.expired
        {
            return Err(StoreError::Locked { holder: lock.holder_name, until: lock.expires_at });
        }
        let violations = publish_gate(&row.package);
        if !violations.is_empty() {
            return Err(StoreError::PublishRefused { violations });
        }
        let now = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
        let changed = tx.execute(
            "UPDATE prep_packages SET status = 'published', published_by = ?3, published_at = ?4,
                 published_json = package_json, updated_at = ?4
             WHERE id = ?1 AND org_id = ?2 AND version = ?5 AND status = 'draft' AND deleted_at IS NULL",
            params![id, scope.org().to_string(), scope.user().to_string(), now, row.version],
        )?;
        if changed != 1 {
            return Err(StoreError::EditConflict { expected: row.version, found: row.version });
        }
        append_audit(
            &tx,
            scope,
            &now,
            "prep.publish",
            "prep_package",
            Some(id),
            &serde_json::json!({"version": row.version, "hash": content_hash(&row.package)}),
        )?;
        tx.commit()?;
        self.get(scope, id)
    }

    /// Marks a precedent as a competitor's released bid text (or back to public); such texts are never retrieved
    /// for drafting. Precedents belong to no organization; only the platform marks them.
    pub fn set_precedent_provenance(&self, precedent: &str, competitor_bid: bool) -> Result<(), StoreError> {
        let changed = self.store.conn().execute(
            "UPDATE precedents SET provenance = ?2 WHERE id = ?1",
            params![precedent, if competitor_bid { "competitor_bid" } else { "public" }],
        )?;
        if changed == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }

    /// Full-text search of the precedent corpus for drafting; competitors' released bid text is excluded inside
    /// the query itself.
    pub fn grounding_precedents(&self, match_expression: &str, limit: u32) -> Result<Vec<GroundingHit>, StoreError> {
        let mut stmt = self.store.conn().prepare_cached(
            "SELECT c.id, c.title, p.text
             FROM precedent_passages_fts JOIN precedent_passages p ON p.id = precedent_passages_fts.rowid
             JOIN precedents c ON c.id = p.precedent_id
             WHERE precedent_passages_fts MATCH ?1 AND c.provenance = 'public'
             ORDER BY bm25(precedent_passages_fts) LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![match_expression, limit], |r| {
            Ok(GroundingHit { precedent: r.get(0)?, title: r.get(1)?, text: r.get(2)? })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_content_hash_ignores_key_order_and_sees_every_change() {
        let a = json!({"b": 1, "a": [1, {"y": "x", "x": null}]});
        let b = json!({"a": [1, {"x": null, "y": "x"}], "b": 1});
        assert_eq!(content_hash(&a), content_hash(&b));
        assert_ne!(content_hash(&a), content_hash(&json!({"b": 2, "a": [1, {"y": "x", "x": null}]})));
        assert_eq!(content_hash(&a).len(), 64);
    }

    #[test]
    fn open_amount_markers_match_whole_words_only() {
        assert!(has_open_amount_marker("Travel, as required"));
        assert!(has_open_amount_marker("TBD"));
        assert!(!has_open_amount_marker("TBDX hours"));
        assert!(!has_open_amount_marker("Monthly licence fee"));
    }

    #[test]
    fn a_package_without_artifacts_is_malformed() {
        let v = publish_gate(&json!({}));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].rule, PublishRule::Malformed);
    }
}
