//! PactWise Source on the service (`/api/v1/source/…`): publishing a tender with a second member's approval,
//! invitations, vendor accounts, sealed submissions, and opening after the deadline. The rules are
//! `pactwise_source`'s (the tender machine, envelopes, the evaluation's arithmetic, the audit chain),
//! `pactwise_rules::prep::publish_gate` (the same gate the desktop runs) and `pactwise_inspect` (every uploaded file,
//! before it is sealed). The service's clock decides every deadline.
//!
//! Buyers call with their device token (the organization is the token's). Vendors call with a vendor session token
//! (`pwv_…`) from accepting an invitation or signing in; a vendor sees only the tenders it joined. Submissions are
//! inspected in memory, then sealed (`pactwise_source::envelope`): only ciphertext reaches the database, and the
//! deadline key's secret half is stored only wrapped by the service's key-wrapping key
//! ([`crate::ServerConfig::source_wrapping_key`]), which is not in the database.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, State};
use axum::http::{StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use chrono::{DateTime, FixedOffset, NaiveTime, Utc};
use pactwise_inspect::{Limits, inspect};
use pactwise_rules::prep::{Artifacts, hash_content, publish_gate};
use pactwise_rules::roles;
use pactwise_source::audit::{self, AuditEntry, SourceAction};
use pactwise_source::envelope::{self, EnvelopeContext, EnvelopeKind, KeyPair, PublicKey};
use pactwise_source::evaluation::{PriceOffer, price_total};
use pactwise_source::tender::{self, Deadlines, Event, Phase, Tender};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::http::{ApiError, AppState, blocking, json_rejection};
use crate::source_store::{EnvelopeRow, Invitation, SourceCommit, TenderRow, VendorAccount};
use crate::storage::Actor;

/// The largest submission body (files travel base64-encoded in JSON).
const SUBMISSION_LIMIT: usize = 96 * 1024 * 1024;
const VENDOR_TOKEN_PREFIX: &str = "pwv_";
const INVITATION_PREFIX: &str = "pwi_";
const VENDOR_SESSION_DAYS: i64 = 30;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/source/tenders", post(request_publication))
        .route("/source/tenders/{id}", get(status))
        .route("/source/tenders/{id}/approve", post(approve_publication))
        .route("/source/tenders/{id}/invitations", post(invite))
        .route("/source/tenders/{id}/open", post(open_envelopes))
        .route("/source/tenders/{id}/audit", get(audit_trail))
        .route("/source/vendor/accept", post(accept_invitation))
        .route("/source/vendor/sign-in", post(vendor_sign_in))
        .route("/source/vendor/tenders", get(vendor_tenders))
        .route("/source/vendor/tenders/{id}/submission", post(submit).layer(DefaultBodyLimit::max(SUBMISSION_LIMIT)))
}

fn tender_id(path: Result<Path<String>, PathRejection>) -> Result<Uuid, ApiError> {
    let Path(id) = path.map_err(|_| ApiError::NotFound("no such tender".into()))?;
    Uuid::parse_str(&id).map_err(|_| ApiError::NotFound("no such tender".into()))
}

fn wrapping_key(state: &AppState) -> Result<Arc<KeyPair>, ApiError> {
    state.0.config.source_wrapping_key.clone().ok_or_else(|| {
        ApiError::Forbidden(
            "PactWise Source is not set up on this server: it has no key-wrapping key (see the service's \
             --source-key-file)"
                .into(),
        )
    })
}

fn machine(row: &TenderRow) -> Result<Tender, ApiError> {
    serde_json::from_str(&row.machine_json).map_err(|e| ApiError::Internal(format!("tender state unreadable: {e}")))
}

fn machine_json(tender: &Tender) -> Result<String, ApiError> {
    serde_json::to_string(tender).map_err(|e| ApiError::Internal(e.to_string()))
}

/// The tender, when it belongs to the caller's organization; another organization's reads as absent.
async fn own_tender(state: &AppState, actor: &Actor, id: Uuid) -> Result<TenderRow, ApiError> {
    let row = blocking(state, move |s| s.source_tender(id)).await?;
    row.filter(|row| row.org == actor.org).ok_or_else(|| ApiError::NotFound("no such tender".into()))
}

fn refused(refusal: tender::Refused) -> ApiError {
    ApiError::InvalidInput(refusal.to_string())
}

/// The next audit entry after the stored trail.
async fn next_audit(
    state: &AppState,
    row: &TenderRow,
    actor: &str,
    action: SourceAction,
    details: &str,
) -> Result<AuditEntry, ApiError> {
    let id = row.id;
    let trail = blocking(state, move |s| s.source_audit(id)).await?;
    Ok(audit::append(trail.last(), state.0.clock.now(), actor, action, details, &row.published_hash))
}

fn member_name(actor: &Actor) -> String {
    format!("member {}", actor.user)
}

#[derive(Debug, Deserialize)]
pub struct PublicationRequest {
    pub title: String,
    pub artifacts: Artifacts,
    /// The buyer's opening key (public half, hex), made on the desktop; its secret half stays there.
    pub opening_key: PublicKey,
    /// The time of day deadlines close, `HH:MM`, in the buyer's time zone.
    pub closing_time: String,
    /// The buyer's time zone as minutes east of UTC.
    pub utc_offset_minutes: i32,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TenderStatus {
    pub id: Uuid,
    pub title: String,
    /// `awaiting_approval` or `published`.
    pub status: String,
    pub phase: Phase,
    pub deadlines: Deadlines,
    pub vendors_joined: usize,
    /// How many vendors have submitted (content stays sealed until opening).
    pub submissions: usize,
    pub published_hash: String,
}

fn status_of(row: &TenderRow, tender: &Tender, joined: usize) -> TenderStatus {
    TenderStatus {
        id: row.id,
        title: row.title.clone(),
        status: row.status.clone(),
        phase: tender.phase,
        deadlines: tender.deadlines,
        vendors_joined: joined,
        submissions: tender.submission_count(),
        published_hash: row.published_hash.clone(),
    }
}

/// `POST /source/tenders`: the package is checked by the publish gate (the desktop's rule) and its deadlines are
/// computed from its milestones by the service's clock; the tender then waits for a second member's approval.
async fn request_publication(
    State(state): State<AppState>,
    actor: Actor,
    body: Result<Json<PublicationRequest>, JsonRejection>,
) -> Result<(StatusCode, Json<TenderStatus>), ApiError> {
    let Json(request) = body.map_err(json_rejection)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let violations = publish_gate(&request.artifacts);
    if !violations.is_empty() {
        let list: Vec<String> = violations.iter().map(|v| v.message.clone()).collect();
        return Err(ApiError::InvalidInput(format!("the package cannot be published yet: {}", list.join("; "))));
    }
    let deadlines = deadlines_of(&request, state.0.clock.now())?;
    let title = request.title.trim();
    if title.is_empty() || title.chars().count() > 200 {
        return Err(ApiError::InvalidInput("give the tender a title of at most 200 characters".into()));
    }
    let now = state.0.clock.now();
    let tender = Tender::new(deadlines);
    let row = TenderRow {
        id: Uuid::new_v4(),
        org: actor.org,
        version: 1,
        status: "awaiting_approval".into(),
        title: title.to_owned(),
        requested_by: actor.user,
        approved_by: None,
        published_hash: hash_content(&request.artifacts),
        artifacts_json: serde_json::to_string(&request.artifacts).map_err(|e| ApiError::Internal(e.to_string()))?,
        opening_key: hex::encode(request.opening_key.0),
        deadline_key: String::new(),
        deadline_key_wrapped: Vec::new(),
        machine_json: machine_json(&tender)?,
        created_at: now,
    };
    let status = status_of(&row, &tender, 0);
    let commit = SourceCommit { tender: Some(row), ..SourceCommit::default() };
    blocking(&state, move |s| s.source_commit(&commit)).await?;
    Ok((StatusCode::CREATED, Json(status)))
}

fn deadlines_of(request: &PublicationRequest, now: DateTime<Utc>) -> Result<Deadlines, ApiError> {
    let closing = NaiveTime::parse_from_str(request.closing_time.trim(), "%H:%M")
        .map_err(|_| ApiError::InvalidInput("the closing time is HH:MM, such as 17:00".into()))?;
    let offset = FixedOffset::east_opt(request.utc_offset_minutes.saturating_mul(60))
        .ok_or_else(|| ApiError::InvalidInput("the time zone offset is out of range".into()))?;
    let milestones = request.artifacts.milestones.content.as_ref().map(|m| m.items.clone()).unwrap_or_default();
    Deadlines::from_milestones(&milestones, closing, offset, now).map_err(|e| ApiError::InvalidInput(e.to_string()))
}

/// `POST /source/tenders/{id}/approve`: a second member (not the one who asked) publishes the tender. The
/// service makes the tender's deadline key and keeps its secret half only wrapped.
async fn approve_publication(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<TenderStatus>, ApiError> {
    let id = tender_id(path)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let wrapping = wrapping_key(&state)?;
    let mut row = own_tender(&state, &actor, id).await?;
    if row.status != "awaiting_approval" {
        return Err(ApiError::InvalidInput("this tender is already published".into()));
    }
    if row.requested_by == actor.user {
        return Err(ApiError::Forbidden(
            "a second member must approve the publication: ask a colleague who may prepare packages".into(),
        ));
    }
    let tender = machine(&row)?;
    if tender.deadlines.submissions_close <= state.0.clock.now() {
        return Err(ApiError::InvalidInput(
            "the submission deadline has passed; move it in Prep Studio and ask for publication again".into(),
        ));
    }
    let deadline = KeyPair::generate();
    let wrapped = envelope::wrap_deadline_key(&deadline, &row.id.to_string(), wrapping.public())
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let expected = row.version;
    row.version += 1;
    row.status = "published".into();
    row.approved_by = Some(actor.user);
    row.deadline_key = hex::encode(deadline.public().0);
    row.deadline_key_wrapped = wrapped;
    let details = format!("requested by member {}, approved by {}", row.requested_by, member_name(&actor));
    let entry = next_audit(&state, &row, &member_name(&actor), SourceAction::Published, &details).await?;
    let status = status_of(&row, &tender, 0);
    let commit =
        SourceCommit { expected_version: Some(expected), tender: Some(row), audit: vec![entry], ..Default::default() };
    blocking(&state, move |s| s.source_commit(&commit)).await?;
    Ok(Json(status))
}

async fn status(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<TenderStatus>, ApiError> {
    let id = tender_id(path)?;
    let row = own_tender(&state, &actor, id).await?;
    let joined = blocking(&state, move |s| s.source_participants(id)).await?.len();
    Ok(Json(status_of(&row, &machine(&row)?, joined)))
}

#[derive(Debug, Deserialize)]
pub struct InvitationRequest {
    pub vendor_name: String,
    pub email: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct InvitationCreated {
    /// Shown once: the desktop shows and copies the link; the service keeps only its hash.
    pub token: String,
    /// The vendor page's path with the token.
    pub link: String,
}

fn random_token(prefix: &str) -> (String, String) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = format!("{prefix}{}", hex::encode(bytes));
    let hash = hex::encode(Sha256::digest(token.as_bytes()));
    (token, hash)
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn plausible_email(email: &str) -> bool {
    let email = email.trim();
    email.len() <= 254
        && email
            .split_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.') && !domain.starts_with('.'))
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `POST /source/tenders/{id}/invitations`: a single-use invitation link for one vendor.
async fn invite(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<InvitationRequest>, JsonRejection>,
) -> Result<(StatusCode, Json<InvitationCreated>), ApiError> {
    let id = tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let mut row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    if row.status != "published" || tender.phase != Phase::Open {
        return Err(ApiError::InvalidInput(
            "vendors can be invited only to a published tender that is still open".into(),
        ));
    }
    let name = request.vendor_name.trim();
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(ApiError::InvalidInput("give the vendor's name (at most 200 characters)".into()));
    }
    if !plausible_email(&request.email) {
        return Err(ApiError::InvalidInput("the vendor's email address does not look right; check it".into()));
    }
    let (token, hash) = random_token(INVITATION_PREFIX);
    let expected = row.version;
    row.version += 1;
    let details = format!("{name} <{}>", request.email.trim());
    let entry = next_audit(&state, &row, &member_name(&actor), SourceAction::Invited, &details).await?;
    let commit = SourceCommit {
        expected_version: Some(expected),
        tender: Some(row),
        audit: vec![entry],
        invitation: Some(Invitation {
            token_hash: hash,
            tender: id,
            vendor_name: name.to_owned(),
            email: request.email.trim().to_ascii_lowercase(),
            used: false,
        }),
        ..Default::default()
    };
    blocking(&state, move |s| s.source_commit(&commit)).await?;
    let link = format!("/source/invitation#{token}");
    Ok((StatusCode::CREATED, Json(InvitationCreated { token, link })))
}

#[derive(Debug, Deserialize)]
pub struct OpenRequest {
    pub kind: EnvelopeKind,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct OpenedPart {
    pub vendor: String,
    pub vendor_account: Uuid,
    pub submission: u32,
    pub part: String,
    pub summary: String,
    /// Still sealed to the buyer's opening key (base64): only the buyer's desktop reads it.
    pub sealed_for_opening_key: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Opened {
    pub phase: Phase,
    pub parts: Vec<OpenedPart>,
}

/// `POST /source/tenders/{id}/open`: after the submission deadline, the technical envelopes (and, once the
/// technical evaluation is locked, the price envelopes) of each vendor's last submission, with the service's layer
/// removed.
async fn open_envelopes(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<OpenRequest>, JsonRejection>,
) -> Result<Json<Opened>, ApiError> {
    let id = tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let wrapping = wrapping_key(&state)?;
    let mut row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    let now = state.0.clock.now();
    let already = match request.kind {
        EnvelopeKind::Technical => tender.phase != Phase::Open,
        EnvelopeKind::Price => matches!(tender.phase, Phase::PriceOpened | Phase::Awarded),
    };
    let tender = if already {
        tender
    } else {
        let event = match request.kind {
            EnvelopeKind::Technical => Event::OpenTechnical { at: now },
            EnvelopeKind::Price => Event::OpenPrice,
        };
        let (next, _commands) = tender::step(&tender, event).map_err(refused)?;
        let expected = row.version;
        row.version += 1;
        row.machine_json = machine_json(&next)?;
        let what = match request.kind {
            EnvelopeKind::Technical => "technical envelopes opened",
            EnvelopeKind::Price => "price envelopes opened",
        };
        let entry = next_audit(&state, &row, &member_name(&actor), SourceAction::Opening, what).await?;
        let commit = SourceCommit {
            expected_version: Some(expected),
            tender: Some(row.clone()),
            audit: vec![entry],
            ..Default::default()
        };
        blocking(&state, move |s| s.source_commit(&commit)).await?;
        next
    };
    if !tender.may_release_deadline_key(now) {
        return Err(ApiError::InvalidInput("the envelopes stay sealed until the submission deadline".into()));
    }
    let deadline = envelope::unwrap_deadline_key(&row.deadline_key_wrapped, &row.id.to_string(), &wrapping)
        .map_err(|e| ApiError::Internal(format!("deadline key: {e}")))?;
    let kind_name = kind_name(request.kind);
    let rows = blocking(&state, move |s| s.source_envelopes(id, kind_name)).await?;
    let names: BTreeMap<Uuid, String> =
        blocking(&state, move |s| s.source_participants(id)).await?.into_iter().collect();
    let mut parts = Vec::new();
    for envelope_row in
        rows.iter().filter(|r| tender.vendors.get(&r.account.to_string()).copied() == Some(r.submission))
    {
        let bound = BoundContext::new(&row, envelope_row, request.kind);
        let inner = envelope::remove_deadline_layer(&envelope_row.sealed, &bound.context(), &deadline)
            .map_err(|e| ApiError::Internal(format!("an envelope does not open: {e}")))?;
        parts.push(OpenedPart {
            vendor: names.get(&envelope_row.account).cloned().unwrap_or_default(),
            vendor_account: envelope_row.account,
            submission: envelope_row.submission,
            part: envelope_row.part.clone(),
            summary: envelope_row.summary.clone(),
            sealed_for_opening_key: base64::engine::general_purpose::STANDARD.encode(inner),
        });
    }
    Ok(Json(Opened { phase: tender.phase, parts }))
}

fn kind_name(kind: EnvelopeKind) -> &'static str {
    match kind {
        EnvelopeKind::Technical => "technical",
        EnvelopeKind::Price => "price",
    }
}

/// The context an envelope is bound to (the desktop rebuilds the same one to open it): the tender, the vendor's
/// account, the kind, the submission number, the published version's hash and the part's name.
pub struct BoundContext {
    tender_id: String,
    vendor_id: String,
    kind: EnvelopeKind,
    submission: u32,
    published_hash: String,
    part: String,
}

impl BoundContext {
    pub fn new(row: &TenderRow, envelope_row: &EnvelopeRow, kind: EnvelopeKind) -> Self {
        Self {
            tender_id: row.id.to_string(),
            vendor_id: envelope_row.account.to_string(),
            kind,
            submission: envelope_row.submission,
            published_hash: row.published_hash.clone(),
            part: envelope_row.part.clone(),
        }
    }

    pub fn context(&self) -> EnvelopeContext<'_> {
        EnvelopeContext {
            tender_id: &self.tender_id,
            vendor_id: &self.vendor_id,
            kind: self.kind,
            submission: self.submission,
            published_hash: &self.published_hash,
            part: &self.part,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct AuditTrail {
    pub entries: Vec<AuditEntry>,
    /// Whether the chain checks out ([`audit::verify`]).
    pub verified: bool,
    pub problem: Option<String>,
}

async fn audit_trail(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<AuditTrail>, ApiError> {
    let id = tender_id(path)?;
    own_tender(&state, &actor, id).await?;
    let entries = blocking(&state, move |s| s.source_audit(id)).await?;
    let check = audit::verify(&entries);
    Ok(Json(AuditTrail { verified: check.is_ok(), problem: check.err().map(|e| e.to_string()), entries }))
}

/// A vendor, from its session token.
#[derive(Debug, Clone)]
pub struct Vendor {
    pub account: Uuid,
}

impl FromRequestParts<AppState> for Vendor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| t.starts_with(VENDOR_TOKEN_PREFIX) && t.len() == VENDOR_TOKEN_PREFIX.len() + 64)
            .ok_or(ApiError::Unauthenticated)?;
        let hash = token_hash(token);
        let (account, expires) =
            blocking(state, move |s| s.source_session(&hash)).await?.ok_or(ApiError::Unauthenticated)?;
        if expires <= state.0.clock.now() {
            return Err(ApiError::Unauthenticated);
        }
        Ok(Vendor { account })
    }
}

#[derive(Debug, Deserialize)]
pub struct AcceptRequest {
    pub token: String,
    pub email: String,
    pub password: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct VendorSession {
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

async fn new_session(state: &AppState, account: Uuid) -> Result<VendorSession, ApiError> {
    let (token, hash) = random_token(VENDOR_TOKEN_PREFIX);
    let expires_at = state.0.clock.now() + chrono::Duration::days(VENDOR_SESSION_DAYS);
    blocking(state, move |s| s.source_create_session(&hash, account, expires_at)).await?;
    Ok(VendorSession { token, expires_at })
}

/// `POST /source/vendor/accept`: the invitation link's token, once; the vendor creates its account (or signs in to
/// the one it has with that email) and joins the tender.
async fn accept_invitation(
    State(state): State<AppState>,
    body: Result<Json<AcceptRequest>, JsonRejection>,
) -> Result<Json<VendorSession>, ApiError> {
    let Json(request) = body.map_err(json_rejection)?;
    let refused = || {
        ApiError::Forbidden("this invitation link is not valid or was used already; ask the buyer for a new one".into())
    };
    if !request.token.starts_with(INVITATION_PREFIX) {
        return Err(refused());
    }
    let hash = token_hash(request.token.trim());
    let lookup = hash.clone();
    let invitation = blocking(&state, move |s| s.source_invitation(&lookup)).await?.ok_or_else(refused)?;
    if invitation.used {
        return Err(refused());
    }
    let email = request.email.trim().to_ascii_lowercase();
    if !plausible_email(&email) {
        return Err(ApiError::InvalidInput("the email address does not look right; check it".into()));
    }
    let lookup_email = email.clone();
    let existing = blocking(&state, move |s| s.source_vendor_by_email(&lookup_email)).await?;
    let (account, new_account) = match existing {
        Some(account) => {
            let (password, stored) = (request.password.clone(), account.password_hash.clone());
            let ok = tokio::task::spawn_blocking(move || crate::auth::verify_password(&password, &stored))
                .await
                .unwrap_or(false);
            if !ok {
                return Err(ApiError::Forbidden(
                    "an account with this email exists and the password does not match; sign in with it".into(),
                ));
            }
            (account.id, None)
        }
        None => {
            let password = request.password.clone();
            let hashed = tokio::task::spawn_blocking(move || crate::auth::hash_password(&password))
                .await
                .map_err(|e| ApiError::Internal(e.to_string()))?
                .map_err(|_| ApiError::InvalidInput("choose a password of at least 10 characters".into()))?;
            let id = Uuid::new_v4();
            (id, Some(VendorAccount { id, email: email.clone(), password_hash: hashed }))
        }
    };
    let mut row = blocking(&state, move |s| s.source_tender(invitation.tender)).await?.ok_or_else(refused)?;
    let tender = machine(&row)?;
    let (next, _) = tender::step(&tender, Event::Invite { vendor: account.to_string() }).map_err(refused_join)?;
    let expected = row.version;
    row.version += 1;
    row.machine_json = machine_json(&next)?;
    let entry =
        next_audit(&state, &row, &invitation.vendor_name, SourceAction::Joined, &invitation.vendor_name).await?;
    let commit = SourceCommit {
        expected_version: Some(expected),
        tender: Some(row),
        audit: vec![entry],
        accepted: Some((hash, account, invitation.vendor_name.clone())),
        new_account,
        ..Default::default()
    };
    blocking(&state, move |s| s.source_commit(&commit)).await.map_err(|e| match e {
        ApiError::InvalidInput(_) => refused(),
        other => other,
    })?;
    Ok(Json(new_session(&state, account).await?))
}

fn refused_join(refusal: tender::Refused) -> ApiError {
    ApiError::InvalidInput(format!("the tender no longer takes new vendors: {refusal}"))
}

#[derive(Debug, Deserialize)]
pub struct VendorSignIn {
    pub email: String,
    pub password: String,
}

async fn vendor_sign_in(
    State(state): State<AppState>,
    body: Result<Json<VendorSignIn>, JsonRejection>,
) -> Result<Json<VendorSession>, ApiError> {
    let Json(request) = body.map_err(json_rejection)?;
    let email = request.email.trim().to_ascii_lowercase();
    let account = blocking(&state, move |s| s.source_vendor_by_email(&email)).await?;
    let stored =
        account.as_ref().map(|a| a.password_hash.clone()).unwrap_or_else(|| crate::auth::decoy_hash().to_owned());
    let password = request.password.clone();
    let ok =
        tokio::task::spawn_blocking(move || crate::auth::verify_password(&password, &stored)).await.unwrap_or(false);
    match account {
        Some(account) if ok => Ok(Json(new_session(&state, account.id).await?)),
        _ => Err(ApiError::SignInRefused),
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct VendorTender {
    pub id: Uuid,
    pub title: String,
    pub joined_as: String,
    pub deadlines: Deadlines,
    pub phase: Phase,
    /// This vendor's submissions so far (the last one counts).
    pub my_submissions: u32,
}

async fn vendor_tenders(State(state): State<AppState>, vendor: Vendor) -> Result<Json<Vec<VendorTender>>, ApiError> {
    let account = vendor.account;
    let joined = blocking(&state, move |s| s.source_participations(account)).await?;
    let mut out = Vec::new();
    for (id, name) in joined {
        let Some(row) = blocking(&state, move |s| s.source_tender(id)).await? else { continue };
        let tender = machine(&row)?;
        out.push(VendorTender {
            id,
            title: row.title.clone(),
            joined_as: name,
            deadlines: tender.deadlines,
            phase: tender.phase,
            my_submissions: tender.vendors.get(&account.to_string()).copied().unwrap_or(0),
        });
    }
    Ok(Json(out))
}

#[derive(Debug, Deserialize)]
pub struct UploadedFile {
    pub name: String,
    pub content_base64: String,
}

#[derive(Debug, Deserialize)]
pub struct SubmissionRequest {
    /// Requirement code → the vendor's answer.
    #[serde(default)]
    pub answers: BTreeMap<String, String>,
    #[serde(default)]
    pub files: Vec<UploadedFile>,
    pub prices: PriceOffer,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SubmissionReceived {
    pub submission: u32,
    /// What the inspection found in each accepted file.
    pub files: Vec<(String, String)>,
    pub received_at: DateTime<Utc>,
}

/// One refused file or price line, for the form.
#[derive(Debug, Serialize, Deserialize)]
pub struct FormProblem {
    pub field: String,
    pub code: String,
    pub message: String,
}

struct FormRefused(Vec<FormProblem>);

impl IntoResponse for FormRefused {
    fn into_response(self) -> Response {
        let message = self.0.iter().map(|p| format!("{}: {}", p.field, p.message)).collect::<Vec<_>>().join(" ");
        let body = serde_json::json!({
            "error": {"code": "invalid_input", "message": format!("Nothing was submitted. {message}")},
            "problems": self.0,
        });
        (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response()
    }
}

/// `POST /source/vendor/tenders/{id}/submission`: before the deadline, every file inspected, the prices checked
/// against the pricing schedule, everything sealed; a later submission replaces the earlier (all are kept).
async fn submit(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<SubmissionRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let id = tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    let mut row = blocking(&state, move |s| s.source_tender(id))
        .await?
        .ok_or_else(|| ApiError::NotFound("no such tender".into()))?;
    let tender = machine(&row)?;
    let vendor_key = vendor.account.to_string();
    if row.status != "published" || !tender.vendors.contains_key(&vendor_key) {
        return Err(ApiError::NotFound("no such tender".into()));
    }
    let now = state.0.clock.now();
    let (next, _) = tender::step(&tender, Event::Submit { vendor: vendor_key.clone(), at: now }).map_err(refused)?;
    let number = next.vendors.get(&vendor_key).copied().unwrap_or(1);

    let mut problems = Vec::new();
    let mut parts: Vec<(EnvelopeKind, String, String, Vec<u8>)> = Vec::new();
    let answers = serde_json::to_vec(&request.answers).map_err(|e| ApiError::Internal(e.to_string()))?;
    parts.push((EnvelopeKind::Technical, "answers.json".into(), format!("{} answers", request.answers.len()), answers));
    let mut names = std::collections::BTreeSet::new();
    for file in &request.files {
        let name = file.name.trim().rsplit(['/', '\\']).next().unwrap_or("").to_owned();
        if name.is_empty()
            || name.chars().count() > 150
            || name == "answers.json"
            || name == "prices.json"
            || !names.insert(name.to_lowercase())
        {
            problems.push(FormProblem {
                field: file.name.clone(),
                code: "bad_name".into(),
                message: "give each file its own name".into(),
            });
            continue;
        }
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(file.content_base64.as_bytes()) else {
            problems.push(FormProblem {
                field: name,
                code: "unreadable".into(),
                message: "the upload arrived damaged; upload it again".into(),
            });
            continue;
        };
        match inspect(&name, &bytes, &Limits::default()) {
            Ok(found) => parts.push((EnvelopeKind::Technical, name, found.summary, bytes)),
            Err(refusal) => {
                problems.push(FormProblem { field: name, code: refusal.finding().into(), message: refusal.to_string() })
            }
        }
    }
    let artifacts: Artifacts =
        serde_json::from_str(&row.artifacts_json).map_err(|e| ApiError::Internal(e.to_string()))?;
    match artifacts.pricing.content.as_ref() {
        Some(pricing) => match price_total(pricing, &request.prices) {
            Ok(total) => {
                let offer = serde_json::to_vec(&request.prices).map_err(|e| ApiError::Internal(e.to_string()))?;
                parts.push((
                    EnvelopeKind::Price,
                    "prices.json".into(),
                    format!("{} priced lines", total.lines.len()),
                    offer,
                ));
            }
            Err(errors) => problems.extend(errors.into_iter().map(|e| FormProblem {
                field: "prices".into(),
                code: "price".into(),
                message: e.to_string(),
            })),
        },
        None => return Err(ApiError::Internal("a published tender without a pricing schedule".into())),
    }
    if !problems.is_empty() {
        return Ok(FormRefused(problems).into_response());
    }

    let opening = public_key(&row.opening_key)?;
    let deadline = public_key(&row.deadline_key)?;
    let mut envelopes = Vec::new();
    let mut files = Vec::new();
    for (kind, part, summary, bytes) in parts {
        let envelope_row = EnvelopeRow {
            tender: id,
            account: vendor.account,
            submission: number,
            kind: kind_name(kind).into(),
            part: part.clone(),
            summary: summary.clone(),
            sealed: Vec::new(),
            created_at: now,
        };
        let bound = BoundContext::new(&row, &envelope_row, kind);
        let sealed = envelope::seal(&bytes, &bound.context(), &opening, &deadline)
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        drop(bytes);
        if kind == EnvelopeKind::Technical && part != "answers.json" {
            files.push((part.clone(), summary.clone()));
        }
        envelopes.push(EnvelopeRow { sealed, ..envelope_row });
    }
    let names = blocking(&state, move |s| s.source_participants(id)).await?;
    let vendor_name = names.iter().find(|(a, _)| *a == vendor.account).map(|(_, n)| n.clone()).unwrap_or_default();
    let expected = row.version;
    row.version += 1;
    row.machine_json = machine_json(&next)?;
    let (action, what) =
        if number == 1 { (SourceAction::Submission, "submission") } else { (SourceAction::Replacement, "replacement") };
    let details = format!("{vendor_name}: {what} {number}, {} files, sealed", files.len());
    let entry = next_audit(&state, &row, &vendor_name, action, &details).await?;
    let commit = SourceCommit {
        expected_version: Some(expected),
        tender: Some(row),
        audit: vec![entry],
        envelopes,
        ..Default::default()
    };
    blocking(&state, move |s| s.source_commit(&commit)).await?;
    Ok((StatusCode::CREATED, Json(SubmissionReceived { submission: number, files, received_at: now })).into_response())
}

fn public_key(hex_text: &str) -> Result<PublicKey, ApiError> {
    let bytes = hex::decode(hex_text).map_err(|_| ApiError::Internal("a stored tender key is not hex".into()))?;
    let bytes: [u8; 32] =
        bytes.try_into().map_err(|_| ApiError::Internal("a stored tender key is not 32 bytes".into()))?;
    Ok(PublicKey(bytes))
}
