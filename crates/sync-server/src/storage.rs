//! The storage trait both backends implement, and the rules they share. The trait is synchronous (SQLite and the
//! blocking PostgreSQL client); the HTTP layer calls it on blocking threads. Every method that touches tenant data
//! takes the organization explicitly, and the HTTP layer passes only the one from the caller's token.

use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, Role, UserId};
use pactwise_rules::prep::lease::{self as rule, Lease, LeaseGrant, LeaseRefusal};
use pactwise_rules::roles;
use pactwise_sync::lease::{LeaseEvent, LeaseEventKind, LeaseGrantKind, LeaseView};
use pactwise_sync::members::{Member, MemberFields, OpenCode};
use pactwise_sync::wire::{Change, ChangeBody, ErrorDetail, PullResponse, PushRequest, PushResponse};
use pactwise_sync::{Hlc, SyncedModel};
use uuid::Uuid;

use crate::source_rows::{self, EnvelopeRow, Invitation, SourceCommit, TenderRow, VendorAccount};
use pactwise_source::audit::AuditEntry;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A unique value is taken (an organization's slug, a user's email in the organization).
    #[error("{0} already exists")]
    Conflict(String),
    #[error("{0} not found")]
    NotFound(String),
    /// The caller's role may not do this (the message says who may).
    #[error("{0}")]
    Forbidden(String),
    /// Anything from the database itself; logged, never shown to a client.
    #[error("database error: {0}")]
    Database(String),
}

impl From<rusqlite::Error> for StorageError {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(code, _) = &e
            && code.code == rusqlite::ErrorCode::ConstraintViolation
        {
            return StorageError::Conflict("a record with these unique values".into());
        }
        StorageError::Database(e.to_string())
    }
}

impl From<postgres::Error> for StorageError {
    fn from(e: postgres::Error) -> Self {
        if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) {
            return StorageError::Conflict("a record with these unique values".into());
        }
        StorageError::Database(e.to_string())
    }
}

/// Who is calling: resolved from a bearer token, never from a request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub org: OrgId,
    pub org_name: String,
    pub user: UserId,
    pub role: Role,
    pub device: Uuid,
}

/// A user's sign-in record.
#[derive(Debug, Clone)]
pub struct Login {
    pub org: OrgId,
    pub user: UserId,
    pub role: Role,
    pub password_hash: String,
}

/// A device token's record.
#[derive(Debug, Clone)]
pub struct DeviceRecord {
    pub actor: Actor,
    pub expires_at: DateTime<Utc>,
    pub revoked: bool,
}

/// Row counts, for tests that prove a refused request stored nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub organizations: u64,
    pub users: u64,
    pub devices: u64,
    pub changes: u64,
    pub receipts: u64,
    pub approvals: u64,
    pub blobs: u64,
}

pub trait SyncStorage: Send + Sync + 'static {
    /// `sqlite` or `postgres`.
    fn backend(&self) -> &'static str;
    fn health(&self) -> Result<(), StorageError>;

    fn create_org(&self, slug: &str, name: &str, now: DateTime<Utc>) -> Result<OrgId, StorageError>;
    fn org_by_slug(&self, slug: &str) -> Result<Option<OrgId>, StorageError>;
    fn create_user(
        &self,
        org: OrgId,
        email: &str,
        password_hash: &str,
        role: Role,
        now: DateTime<Utc>,
    ) -> Result<UserId, StorageError>;
    fn find_login(&self, org_slug: &str, email: &str) -> Result<Option<Login>, StorageError>;

    fn create_device(
        &self,
        login: &Login,
        name: &str,
        token_hash: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<Uuid, StorageError>;
    fn find_device(&self, token_hash: &str) -> Result<Option<DeviceRecord>, StorageError>;
    fn revoke_device(&self, org: OrgId, device: Uuid, now: DateTime<Utc>) -> Result<(), StorageError>;

    /// Store a batch in one transaction: a key seen before returns the first answer (`replayed`); a change id seen
    /// before keeps its first place; new changes get the organization's next sequence numbers; approval requests
    /// get the server's outcome and published approval steps are pinned (`crate::steps`).
    fn push(&self, actor: &Actor, request: &PushRequest, now: DateTime<Utc>) -> Result<PushResponse, StorageError>;
    /// Changes with `seq > since`, at most `limit`.
    fn pull(&self, org: OrgId, since: u64, limit: u32) -> Result<PullResponse, StorageError>;
    /// Escalates every open, undecided approval step whose escalation time (pinned at its first publication) is at
    /// or before `now`: marks it escalated and appends its `approval_escalation` change
    /// ([`crate::steps::escalation_change`]) to its organization's log, each step once, in one transaction. Returns
    /// each organization's new last sequence number, so waiting desktops can be woken.
    fn escalate_due(&self, now: DateTime<Utc>) -> Result<Vec<(OrgId, u64)>, StorageError>;

    /// Store a blob for the organization; `false` when it was already there.
    fn put_blob(&self, org: OrgId, hash: &str, bytes: &[u8], now: DateTime<Utc>) -> Result<bool, StorageError>;
    fn blob_size(&self, org: OrgId, hash: &str) -> Result<Option<u64>, StorageError>;
    /// `len` bytes from `offset` (fewer at the end).
    fn read_blob(&self, org: OrgId, hash: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StorageError>;

    fn counts(&self) -> Result<Counts, StorageError>;

    /// The organization's members (removed ones are not), by display name.
    fn list_members(&self, org: OrgId) -> Result<Vec<Member>, StorageError>;
    /// Members with a sign-in code not used yet and not expired at `now`.
    fn open_codes(&self, org: OrgId, now: DateTime<Utc>) -> Result<Vec<OpenCode>, StorageError>;
    /// Changes the actor's organization's members in one transaction: checks the change with
    /// [`check_member_op`] (role table, last owner; another organization's member is `NotFound`), applies it and,
    /// except for a new code, appends the member's state to the organization's log ([`member_change`]).
    fn change_members(&self, actor: &Actor, op: &MemberOp, now: DateTime<Utc>) -> Result<MemberChanged, StorageError>;
    /// Redeems a one-time code: when the member (not removed) of the organization `org_slug` with this email has an
    /// unused, unexpired code with this hash, the code is used up and the member's password becomes
    /// `password_hash`, in one transaction. None otherwise (which of the reasons is not said).
    fn redeem_code(
        &self,
        org_slug: &str,
        email: &str,
        code_hash: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Login>, StorageError>;

    /// The organization's lease on `package`, if someone holds one (expired or not; a released one is gone).
    fn lease(&self, org: OrgId, package: Uuid) -> Result<Option<StoredLease>, StorageError>;
    /// Takes or renews the actor's lease, decided by [`plan_take`] over the stored lease by the
    /// service's clock `now`, in one transaction with its audit row and, for a new holder, its `prep_lease` event
    /// in the organization's log (`seq`).
    fn take_lease(
        &self,
        actor: &Actor,
        package: Uuid,
        take_over: bool,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> Result<LeaseTake, StorageError>;
    /// Releases the actor's own lease (audited and logged); None when they held none.
    fn release_lease(&self, actor: &Actor, package: Uuid, now: DateTime<Utc>) -> Result<Option<u64>, StorageError>;
    /// The service's audit of the organization's lease on `package`, oldest first.
    fn lease_audit(&self, org: OrgId, package: Uuid) -> Result<Vec<LeaseAudit>, StorageError>;

    // PactWise Source (`crate::source`; rows in `crate::source_rows`, stored by `crate::source_store` on SQLite and `crate::source_pg`).
    /// Writes one change to a tender and its appended rows in one transaction.
    fn source_commit(&self, change: &SourceCommit) -> Result<(), StorageError>;
    /// A tender by id, whatever its organization: callers check the organization (buyers) or the participation
    /// (vendors) before showing anything.
    fn source_tender(&self, tender: Uuid) -> Result<Option<TenderRow>, StorageError>;
    fn source_audit(&self, tender: Uuid) -> Result<Vec<AuditEntry>, StorageError>;
    fn source_envelopes(&self, tender: Uuid, kind: &str) -> Result<Vec<EnvelopeRow>, StorageError>;
    fn source_invitation(&self, token_hash: &str) -> Result<Option<Invitation>, StorageError>;
    fn source_vendor_by_email(&self, email: &str) -> Result<Option<VendorAccount>, StorageError>;
    fn source_create_session(
        &self,
        token_hash: &str,
        account: Uuid,
        expires: DateTime<Utc>,
    ) -> Result<(), StorageError>;
    fn source_session(&self, token_hash: &str) -> Result<Option<(Uuid, DateTime<Utc>)>, StorageError>;
    fn source_participations(&self, account: Uuid) -> Result<Vec<(Uuid, String)>, StorageError>;
    fn source_participants(&self, tender: Uuid) -> Result<Vec<(Uuid, String)>, StorageError>;
    fn source_questions(&self, tender: Uuid) -> Result<Vec<source_rows::Question>, StorageError>;
    fn source_scores(&self, tender: Uuid) -> Result<Vec<source_rows::StoredScore>, StorageError>;
    fn source_tender_release(&self, tender: Uuid) -> Result<Option<String>, StorageError>;
    /// The organization's tenders (ids), newest first.
    fn source_tenders_of(&self, org: OrgId) -> Result<Vec<Uuid>, StorageError>;
    /// A new upload, after deleting every upload expired at `now`; refused ([`StorageError::Forbidden`]) when its
    /// account already has `max_open` uploads not yet sealed. One transaction.
    fn source_upload_create(
        &self,
        upload: &source_rows::UploadRow,
        max_open: usize,
        now: DateTime<Utc>,
    ) -> Result<(), StorageError>;
    fn source_upload(&self, id: Uuid) -> Result<Option<source_rows::UploadRow>, StorageError>;
    /// Appends a sealed chunk of `length` plaintext bytes at `first_byte` when that is exactly what the upload has
    /// received, it is not finished and the chunk stays within its size; `false` (nothing written) otherwise.
    fn source_upload_append(
        &self,
        id: Uuid,
        first_byte: u64,
        length: u64,
        sealed: &[u8],
        expires_at: DateTime<Utc>,
    ) -> Result<bool, StorageError>;
    /// The upload's sealed chunks in order: (first byte, sealed bytes).
    fn source_upload_chunks(&self, id: Uuid) -> Result<Vec<(u64, Vec<u8>)>, StorageError>;
    /// Marks a complete upload finished with what the inspection found.
    fn source_upload_finish(&self, id: Uuid, summary: &str) -> Result<(), StorageError>;
    /// Deletes an upload and its chunks.
    fn source_upload_delete(&self, id: Uuid) -> Result<(), StorageError>;
}

/// A change to an organization's members, as the members routes ask for it (the organization is the actor's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberOp {
    /// Add a member (or bring back a removed one with the same email) with a new one-time code.
    Add {
        email: String,
        display_name: String,
        role: Role,
        code_hash: String,
        code_expires_at: DateTime<Utc>,
    },
    ChangeRole {
        user: UserId,
        role: Role,
    },
    /// Remove a member: their device tokens stop working at their next request; their past work keeps their name.
    Remove {
        user: UserId,
    },
    /// A new one-time code for a member (replaces an earlier one).
    NewCode {
        user: UserId,
        code_hash: String,
        code_expires_at: DateTime<Utc>,
    },
}

/// What a change to the members did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberChanged {
    pub member: Member,
    /// The place of the member's change in the organization's log (None when nothing was logged: a new code).
    pub seq: Option<u64>,
}

/// A member as the backends read them for a check: their current state and whether they were removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMember {
    pub member: Member,
    pub removed: bool,
}

/// The one check of a members change, shared by both backends: the role table
/// (`pactwise_rules::roles::check_member_change`) over the target as stored (`None` or removed: not found, which is
/// also how another organization's member answers) and the organization's number of owners.
pub fn check_member_op(
    actor: &Actor,
    op: &MemberOp,
    target: Option<&StoredMember>,
    owners: u64,
) -> Result<(), StorageError> {
    use roles::MemberChange;
    let live = target.filter(|t| !t.removed);
    let change = match op {
        MemberOp::Add { role, .. } => {
            if live.is_some() {
                return Err(StorageError::Conflict("a member with this email".into()));
            }
            MemberChange::Add { role: *role }
        }
        MemberOp::ChangeRole { role, .. } => {
            let t = live.ok_or_else(|| StorageError::NotFound("the member".into()))?;
            MemberChange::ChangeRole { from: t.member.role, to: *role }
        }
        MemberOp::Remove { .. } => {
            let t = live.ok_or_else(|| StorageError::NotFound("the member".into()))?;
            MemberChange::Remove { role: t.member.role }
        }
        MemberOp::NewCode { .. } => {
            let t = live.ok_or_else(|| StorageError::NotFound("the member".into()))?;
            MemberChange::Add { role: t.member.role }
        }
    };
    roles::check_member_change(actor.role, change, owners).map_err(|refusal| {
        tracing::info!(org = %actor.org, user = %actor.user, role = %actor.role, "members change refused: {refusal}");
        StorageError::Forbidden(refusal.message)
    })
}

/// The service-authored change that tells every desktop a member's state: all fields, last-writer-wins by the
/// service's clock (the service is the only writer of members, and desktops apply them in log order).
pub fn member_change(member: &Member, removed: bool, now: DateTime<Utc>, seq: u64) -> Change {
    let fields = MemberFields {
        email: member.email.clone(),
        display_name: member.display_name.clone(),
        role: member.role,
        removed,
    };
    Change {
        id: Uuid::now_v7(),
        model: SyncedModel::Member,
        record_id: member.user_id.to_string(),
        hlc: Hlc {
            wall_ms: u64::try_from(now.timestamp_millis()).unwrap_or(0),
            counter: (seq % u64::from(u32::MAX)) as u32,
            node: Uuid::nil(),
        },
        body: ChangeBody::Fields { fields: fields.to_fields() },
    }
}

/// Does the service refuse this change? The role table (`pactwise_rules::roles`) says whether the author may make
/// it, and a synced setting's value must pass the same check the desktops run (`pactwise_rules::settings`). A
/// refusal is answered for that change alone (it is not stored, so no device receives it) with a reason the
/// author's desktop shows.
pub fn refuse_change(actor: &Actor, change: &Change) -> Option<ErrorDetail> {
    use pactwise_domain::ErrorCode;
    let (code, message) = match roles::SharedChange::of_synced(change.model.as_str(), &change.record_id) {
        None => (ErrorCode::InvalidInput, format!("this service does not accept {} changes", change.model)),
        Some(shared) => match roles::check(actor.role, shared) {
            Err(refusal) => (ErrorCode::Forbidden, refusal.message),
            Ok(()) => match (shared, &change.body) {
                (roles::SharedChange::Setting(key), ChangeBody::Fields { fields }) => {
                    let checked = match fields.get("value") {
                        Some(value) if fields.len() == 1 => pactwise_rules::settings::check_synced_setting(key, value),
                        _ => Err("a setting change carries exactly one field, `value`".to_string()),
                    };
                    match checked {
                        Ok(()) => return None,
                        Err(why) => (ErrorCode::InvalidInput, format!("the value of {key} was refused: {why}")),
                    }
                }
                _ => return None,
            },
        },
    };
    tracing::info!(org = %actor.org, user = %actor.user, role = %actor.role, model = %change.model, "change refused: {message}");
    Some(ErrorDetail { code: code.as_str().to_string(), message })
}

/// A step's eligible roles as stored (`owner,admin`).
pub(crate) fn roles_text(roles: &[Role]) -> String {
    roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(",")
}

pub(crate) fn parse_roles(text: &str) -> Result<Vec<Role>, StorageError> {
    text.split(',').map(parse_role).collect()
}

pub(crate) fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

pub(crate) fn parse_ts(s: &str) -> Result<DateTime<Utc>, StorageError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StorageError::Database(format!("bad timestamp {s:?}: {e}")))
}

pub(crate) fn parse_uuid(s: &str) -> Result<Uuid, StorageError> {
    Uuid::parse_str(s).map_err(|e| StorageError::Database(format!("bad id {s:?}: {e}")))
}

pub(crate) fn parse_role(s: &str) -> Result<Role, StorageError> {
    s.parse().map_err(StorageError::Database)
}

pub(crate) fn db_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T, StorageError> {
    serde_json::from_str(s).map_err(|e| StorageError::Database(format!("bad stored JSON: {e}")))
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Result<String, StorageError> {
    serde_json::to_string(v).map_err(|e| StorageError::Database(format!("cannot encode JSON: {e}")))
}

/// Cut a fetched `limit + 1` rows down to a page and say whether there is more.
pub(crate) fn page(
    mut changes: Vec<pactwise_sync::wire::ServerChange>,
    since: u64,
    limit: u32,
) -> pactwise_sync::wire::PullResponse {
    let has_more = changes.len() > limit as usize;
    changes.truncate(limit as usize);
    let next_cursor = changes.last().map(|c| c.seq).unwrap_or(since);
    pactwise_sync::wire::PullResponse { changes, next_cursor, has_more }
}

// ---------------------------------------------------------------------------------------------------------------
// RFP packages' edit leases (the lease routes): the decision over the stored lease and what it writes, for both
// backends.

/// A lease as a backend stores it, with its holder's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLease {
    pub holder: UserId,
    pub holder_name: String,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl StoredLease {
    fn rule(&self) -> Lease {
        Lease { holder: self.holder, acquired_at: self.acquired_at, expires_at: self.expires_at }
    }

    pub fn view(&self, package: Uuid, now: DateTime<Utc>) -> LeaseView {
        LeaseView {
            package_id: package,
            holder: self.holder,
            holder_name: self.holder_name.clone(),
            acquired_at: self.acquired_at,
            expires_at: self.expires_at,
            expired: self.rule().expired(now),
        }
    }
}

/// A take's outcome, as a backend returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseTake {
    Granted { grant: LeaseGrantKind, lease: StoredLease, seq: Option<u64> },
    Refused { refusal: LeaseRefusal, lease: StoredLease },
}

/// One row of the service's lease audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseAudit {
    pub at: DateTime<Utc>,
    /// `taken`, `taken_over` or `released`.
    pub action: String,
    pub actor: UserId,
    pub previous_holder: Option<UserId>,
    pub previous_expires_at: Option<DateTime<Utc>>,
}

/// What a backend writes for a take, decided by the one rule: the lease to store, and for a new holder the event
/// (its audit row and its log entry).
pub struct TakePlan {
    pub grant: LeaseGrantKind,
    pub lease: StoredLease,
    pub event: Option<LeaseEvent>,
}

/// Decides a take over the stored lease (`pactwise_rules::prep::lease::decide`, by the service's clock `now`).
pub fn plan_take(
    current: Option<&StoredLease>,
    asker: UserId,
    asker_name: &str,
    take_over: bool,
    now: DateTime<Utc>,
    ttl: chrono::Duration,
) -> Result<TakePlan, LeaseTake> {
    let decided = rule::decide(current.map(StoredLease::rule).as_ref(), asker, take_over, now, ttl);
    let (grant, lease) = match decided {
        Ok(granted) => granted,
        Err(refusal) => {
            let lease = current.cloned().expect("a refusal names a lease someone holds");
            return Err(LeaseTake::Refused { refusal, lease });
        }
    };
    let stored = StoredLease {
        holder: asker,
        holder_name: asker_name.to_string(),
        acquired_at: lease.acquired_at,
        expires_at: lease.expires_at,
    };
    let event = |event, previous: Option<&StoredLease>| LeaseEvent {
        event,
        holder: asker,
        holder_name: asker_name.to_string(),
        acquired_at: stored.acquired_at,
        expires_at: stored.expires_at,
        previous_holder: previous.map(|p| p.holder),
        previous_holder_name: previous.map(|p| p.holder_name.clone()),
        previous_expires_at: previous.map(|p| p.expires_at),
    };
    let (grant, event) = match grant {
        LeaseGrant::Taken => (LeaseGrantKind::Taken, Some(event(LeaseEventKind::Taken, None))),
        LeaseGrant::Renewed => (LeaseGrantKind::Renewed, None),
        LeaseGrant::TakenOver { .. } => (LeaseGrantKind::TakenOver, Some(event(LeaseEventKind::TakenOver, current))),
    };
    Ok(TakePlan { grant, lease: stored, event })
}

/// The release event of the caller's lease.
pub fn release_event(lease: &StoredLease) -> LeaseEvent {
    LeaseEvent {
        event: LeaseEventKind::Released,
        holder: lease.holder,
        holder_name: lease.holder_name.clone(),
        acquired_at: lease.acquired_at,
        expires_at: lease.expires_at,
        previous_holder: None,
        previous_holder_name: None,
        previous_expires_at: None,
    }
}

/// The service-authored log entry of a lease event (record id: the package), stamped by the service's clock.
pub fn lease_change(package: Uuid, event: &LeaseEvent, now: DateTime<Utc>, seq: u64) -> Change {
    Change {
        id: Uuid::now_v7(),
        model: SyncedModel::PrepLease,
        record_id: package.to_string(),
        hlc: Hlc {
            wall_ms: u64::try_from(now.timestamp_millis()).unwrap_or(0),
            counter: (seq % u64::from(u32::MAX)) as u32,
            node: Uuid::nil(),
        },
        body: ChangeBody::Event { event: event.to_event() },
    }
}

/// The audit action of an event.
pub fn audit_action(event: LeaseEventKind) -> &'static str {
    match event {
        LeaseEventKind::Taken => "taken",
        LeaseEventKind::TakenOver => "taken_over",
        LeaseEventKind::Released => "released",
    }
}

/// A stored lease as the backends read it (the holder's name: display name, else email).
pub fn parse_lease(
    holder: &str,
    holder_name: String,
    acquired_at: &str,
    expires_at: &str,
) -> Result<StoredLease, StorageError> {
    Ok(StoredLease {
        holder: UserId::from_uuid(parse_uuid(holder)?),
        holder_name,
        acquired_at: parse_ts(acquired_at)?,
        expires_at: parse_ts(expires_at)?,
    })
}
