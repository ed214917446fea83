//! Prep Studio's records: RFP packages (the six artifacts as one JSON document whose shape `pactwise-prep` owns),
//! the one-editor lease lock, drafting traces, and publishing: the only path to a published package.
//!
//! Publishing reads the stored package inside its transaction, parses its artifacts into the typed package of
//! `pactwise_rules::prep` (anything that does not read whole is refused as malformed) and runs the one publish gate
//! there, `pactwise_rules::prep::publish_gate`, which `pactwise-prep` shows as its pre-check: each artifact approved
//! with an approval bound to the hash of its current content, criteria weights that sum to exactly 10,000 basis
//! points, each scored requirement mapped to exactly one criterion, unique requirement codes, measurable scored
//! requirements, priceable pricing lines, and the six milestones in order on business days. The store never trusts
//! the caller's copy. Publishing needs the buyer's own session (role owner, admin or buyer) and no other editor's
//! live lease.
//!
//! The edit lease is decided by `pactwise_rules::prep::lease::decide`: here ([`Prep::acquire_lock`]) for an
//! organization that does not sync; for one that syncs the sync service decides with the same rule and `prep_locks`
//! keeps what it last answered ([`Prep::adopt_lease`]), so a save — online or offline — needs the caller's own
//! lease that has not expired. Packages of a syncing organization travel to its other desktops
//! (`crate::prep_sync`).

use crate::audit::append_audit;
use crate::time::{from_sql, from_sql_opt, to_sql};
use crate::{OrgScope, Store, StoreError};
use chrono::{DateTime, Utc};
use pactwise_domain::{Role, UserId};
use pactwise_rules::prep::lease::{self as lease_rule, Lease, LeaseRefusal};
use pactwise_rules::prep::{content_hash, publish_gate, stored_artifacts};
use pactwise_rules::roles;
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use pactwise_rules::prep::{GateViolation, PublishRule};

/// Who may draft and publish packages (the role table's row for RFP packages).
pub fn can_prepare_packages(role: Role) -> bool {
    roles::check(role, roles::SharedChange::PrepPackage).is_ok()
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

impl LockInfo {
    fn rule(&self) -> Lease {
        Lease { holder: self.holder, acquired_at: self.acquired_at, expires_at: self.expires_at }
    }
}

/// A lease as the sync service answered it, kept here for display and for saves made offline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceLease {
    pub holder: UserId,
    pub holder_name: String,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
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
        crate::prep_sync::package_changed_in(self.store, &tx, scope, &id, crate::prep_sync::ALL_FIELDS)?;
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
        let title = package.get("title").and_then(Value::as_str).filter(|t| !t.trim().is_empty());
        let changed = tx.execute(
            "UPDATE prep_packages SET package_json = ?3, version = version + 1, updated_at = ?4,
                 title = COALESCE(?6, title)
             WHERE id = ?1 AND org_id = ?2 AND version = ?5 AND deleted_at IS NULL",
            params![id, scope.org().to_string(), package.to_string(), now, read_version, title],
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
        crate::prep_sync::package_changed_in(self.store, &tx, scope, id, &["title", "package"])?;
        tx.commit()?;
        Ok(read_version + 1)
    }

    fn require_own_lease(&self, scope: &OrgScope, id: &str) -> Result<(), StoreError> {
        let lock = self.lock(scope, id)?;
        if lease_rule::may_edit(lock.as_ref().map(LockInfo::rule).as_ref(), scope.user(), self.store.clock().now()) {
            return Ok(());
        }
        match lock {
            Some(lock) if !lock.expired && lock.holder != scope.user() => {
                Err(StoreError::Locked { holder: lock.holder_name, until: lock.expires_at })
            }
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

    /// Takes (or renews) the edit lease for `lease` from now, as `pactwise_rules::prep::lease::decide` says: refused
    /// with `Locked` while another person's lease is live, with `LeaseExpired` for another person's expired lease
    /// unless `take_over` (then taken over, and audited with the previous holder and when their lease expired). For
    /// an organization that does not sync; one that syncs asks the sync service and keeps its answer with
    /// [`Prep::adopt_lease`].
    pub fn acquire_lock(
        &self,
        scope: &OrgScope,
        id: &str,
        lease: chrono::Duration,
        take_over: bool,
    ) -> Result<LockInfo, StoreError> {
        Self::require_preparer(scope)?;
        let previous = self.lock(scope, id)?;
        let now_t = self.store.clock().now();
        let decided =
            lease_rule::decide(previous.as_ref().map(LockInfo::rule).as_ref(), scope.user(), take_over, now_t, lease);
        let (grant, granted) = match decided {
            Ok(granted) => granted,
            Err(LeaseRefusal::Held { lease }) => {
                let holder = previous.map(|p| p.holder_name).unwrap_or_default();
                return Err(StoreError::Locked { holder, until: lease.expires_at });
            }
            Err(LeaseRefusal::ExpiredTakeOverNeeded { lease }) => {
                let holder = previous.map(|p| p.holder_name).unwrap_or_default();
                return Err(StoreError::LeaseExpired { holder, expired_at: lease.expires_at });
            }
        };
        let now = to_sql(now_t);
        let tx = self.store.conn().unchecked_transaction()?;
        tx.execute(
            "INSERT INTO prep_locks (package_id, org_id, holder, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (package_id) DO UPDATE SET holder = excluded.holder, acquired_at = excluded.acquired_at,
                 expires_at = excluded.expires_at",
            params![
                id,
                scope.org().to_string(),
                scope.user().to_string(),
                to_sql(granted.acquired_at),
                to_sql(granted.expires_at)
            ],
        )?;
        if let lease_rule::LeaseGrant::TakenOver { previous } = grant {
            append_audit(
                &tx,
                scope,
                &now,
                "prep.lock_taken_over",
                "prep_package",
                Some(id),
                &serde_json::json!({"previous_holder": previous.holder.to_string(), "expired_at": to_sql(previous.expires_at)}),
            )?;
        }
        tx.commit()?;
        self.lock(scope, id)?.ok_or(StoreError::NotFound)
    }

    /// Keeps the lease the sync service answered for a package of a syncing organization (`None`: nobody holds
    /// it): shown in Prep Studio, and what a save checks when the service cannot be reached. No audit here: the
    /// service logs take-overs and every desktop audits them from its log.
    pub fn adopt_lease(&self, scope: &OrgScope, id: &str, lease: Option<&ServiceLease>) -> Result<(), StoreError> {
        self.get(scope, id)?;
        let tx = self.store.conn().unchecked_transaction()?;
        let now = to_sql(self.store.clock().now());
        crate::prep_sync::write_lock_in(&tx, &scope.org().to_string(), id, lease, &now)?;
        tx.commit()?;
        Ok(())
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

    /// Publishes the stored package: the gate runs on what is stored, under the buyer's own session, in the same
    /// transaction that publishes it (the package checked is the package published). Refused with `PublishRefused`
    /// (every violation) when a rule fails or the stored package does not read as the package format, `Forbidden`
    /// for a role that may not publish, `Locked` while another person's lease is live, `NotFound` for another
    /// organization's package.
    pub fn publish(&self, scope: &OrgScope, id: &str) -> Result<PackageRow, StoreError> {
        Self::require_preparer(scope)?;
        let now = to_sql(self.store.clock().now());
        let tx = self.store.conn().unchecked_transaction()?;
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
        let violations = match stored_artifacts(&row.package) {
            Ok(artifacts) => publish_gate(&artifacts),
            Err(malformed) => malformed,
        };
        if !violations.is_empty() {
            return Err(StoreError::PublishRefused { violations });
        }
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
        crate::prep_sync::package_changed_in(self.store, &tx, scope, id, &["package", "published"])?;
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
