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
use axum::http::{StatusCode, request::Parts};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use pactwise_inspect::{Limits, inspect};
use pactwise_rules::prep::{Artifacts, hash_content, publish_gate};
use pactwise_rules::roles;
use pactwise_source::audit::{self, AuditEntry, SourceAction};
use pactwise_source::envelope::{self, EnvelopeKind, KeyPair, PublicKey};
use pactwise_source::evaluation::{PriceOffer, price_total};
use pactwise_source::tender::{self, Deadlines, Event, Phase, Tender};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use pactwise_source::wire::{
    AnswerRequest, AuditTrail, AwardRequest, BoundContext, ExtensionRequest, InvitationCreated, InvitationRequest,
    MAX_POINTS, OpenRequest, Opened, OpenedPart, PublicationRequest, PublishedQuestion, ScoreRequest, TenderStatus,
    VendorResult,
};

use crate::http::{ApiError, AppState, blocking, json_rejection};
pub use crate::source_files::FormProblem;
use crate::source_files::FormRefused;
use crate::source_rows::{EnvelopeRow, Invitation, SourceCommit, TenderRow, VendorAccount};
use crate::storage::Actor;

/// The largest submission body (files travel base64-encoded in JSON).
const SUBMISSION_LIMIT: usize = 96 * 1024 * 1024;
const VENDOR_TOKEN_PREFIX: &str = "pwv_";
const INVITATION_PREFIX: &str = "pwi_";
const VENDOR_SESSION_DAYS: i64 = 30;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/source/tenders", post(request_publication).get(list_tenders))
        .route("/source/tenders/{id}", get(status))
        .route("/source/tenders/{id}/package", get(published_package))
        .route("/source/tenders/{id}/approve", post(approve_publication))
        .route("/source/tenders/{id}/invitations", post(invite))
        .route("/source/tenders/{id}/open", post(open_envelopes))
        .route("/source/tenders/{id}/audit", get(audit_trail))
        .route("/source/tenders/{id}/questions", get(buyer_questions))
        .route("/source/tenders/{id}/questions/{question}/answer", post(answer_question))
        .route("/source/tenders/{id}/extension", post(extend))
        .route("/source/tenders/{id}/scores", post(record_score))
        .route("/source/tenders/{id}/lock", post(lock_technical))
        .route("/source/tenders/{id}/evaluation", get(evaluation))
        .route("/source/tenders/{id}/award", post(award))
        .route("/source/tenders/{id}/ocds", get(ocds_record))
        .route("/source/vendor/tenders/{id}/questions", get(vendor_questions).post(ask))
        .route("/source/vendor/accept", post(accept_invitation))
        .route("/source/vendor/sign-in", post(vendor_sign_in))
        .route("/source/vendor/tenders", get(vendor_tenders))
        .route("/source/vendor/tenders/{id}", get(vendor_tender))
        .route("/source/vendor/tenders/{id}/submission", post(submit).layer(DefaultBodyLimit::max(SUBMISSION_LIMIT)))
}

pub(crate) fn tender_id(path: Result<Path<String>, PathRejection>) -> Result<Uuid, ApiError> {
    let Path(id) = path.map_err(|_| ApiError::NotFound("no such tender".into()))?;
    Uuid::parse_str(&id).map_err(|_| ApiError::NotFound("no such tender".into()))
}

pub(crate) fn wrapping_key(state: &AppState) -> Result<Arc<KeyPair>, ApiError> {
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

/// The member as people know them (their name, else their email), for the trail.
async fn member_name(state: &AppState, actor: &Actor) -> Result<String, ApiError> {
    let (org, user) = (actor.org, actor.user);
    let members = blocking(state, move |s| s.list_members(org)).await?;
    Ok(members
        .into_iter()
        .find(|m| m.user_id == user)
        .map(|m| if m.display_name.trim().is_empty() { m.email } else { m.display_name })
        .unwrap_or_else(|| "a former member".into()))
}

/// One change to a tender: the next version (with the machine's new state, when it moved) and its audit entry,
/// chained to the trail. The caller adds the rows the change appends and commits it.
async fn change(
    state: &AppState,
    row: &mut TenderRow,
    next: Option<&Tender>,
    actor: &str,
    action: SourceAction,
    details: &str,
) -> Result<SourceCommit, ApiError> {
    let expected = row.version;
    row.version += 1;
    if let Some(next) = next {
        row.machine_json = machine_json(next)?;
    }
    let entry = next_audit(state, row, actor, action, details).await?;
    Ok(SourceCommit {
        expected_version: Some(expected),
        tender: Some(row.clone()),
        audit: vec![entry],
        ..Default::default()
    })
}

async fn commit(state: &AppState, commit: SourceCommit) -> Result<(), ApiError> {
    blocking(state, move |s| s.source_commit(&commit)).await
}

/// The tender as its organization's members see it: counts (invited, joined, submitted: never content), who asked
/// for the publication, and where the opening key is kept.
async fn status_for(
    state: &AppState,
    actor: &Actor,
    row: &TenderRow,
    tender: &Tender,
) -> Result<TenderStatus, ApiError> {
    let id = row.id;
    let joined = blocking(state, move |s| s.source_participants(id)).await?.len();
    let trail = blocking(state, move |s| s.source_audit(id)).await?;
    let invited = trail.iter().filter(|e| e.action == SourceAction::Invited).count();
    let requester = Actor { user: row.requested_by, ..actor.clone() };
    Ok(TenderStatus {
        id: row.id,
        title: row.title.clone(),
        status: row.status.clone(),
        phase: tender.phase,
        deadlines: tender.deadlines,
        invited,
        vendors_joined: joined,
        submissions: tender.submission_count(),
        published_hash: row.published_hash.clone(),
        opening_key: public_key(&row.opening_key).ok(),
        opening_key_holder: tender.opening_key_holder.clone(),
        requested_by: member_name(state, &requester).await?,
        requested_by_you: row.requested_by == actor.user,
        service_now: Some(state.0.clock.now()),
    })
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
    let holder = request.opening_key_holder.trim();
    if holder.chars().count() > 200 || holder.chars().any(char::is_control) {
        return Err(ApiError::InvalidInput(
            "name the desktop that keeps the opening key in at most 200 characters".into(),
        ));
    }
    let tender = Tender { opening_key_holder: holder.to_owned(), ..Tender::new(deadlines) };
    let row = TenderRow {
        id: Uuid::new_v4(),
        org: actor.org,
        version: 1,
        status: pactwise_source::wire::AWAITING_APPROVAL.into(),
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
    let tender_release = request.tender_release.as_ref().map(serde_json::Value::to_string);
    let commit = SourceCommit { tender: Some(row.clone()), tender_release, ..SourceCommit::default() };
    blocking(&state, move |s| s.source_commit(&commit)).await?;
    let status = status_for(&state, &actor, &row, &tender).await?;
    Ok((StatusCode::CREATED, Json(status)))
}

fn deadlines_of(request: &PublicationRequest, now: DateTime<Utc>) -> Result<Deadlines, ApiError> {
    let milestones = request.artifacts.milestones.content.as_ref().map(|m| m.items.clone()).unwrap_or_default();
    Deadlines::from_milestones(&milestones, now).map_err(|e| ApiError::InvalidInput(e.to_string()))
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
    if row.status != pactwise_source::wire::AWAITING_APPROVAL {
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
    row.status = pactwise_source::wire::PUBLISHED.into();
    row.approved_by = Some(actor.user);
    row.deadline_key = hex::encode(deadline.public().0);
    row.deadline_key_wrapped = wrapped;
    let requester = Actor { user: row.requested_by, ..actor.clone() };
    let (approver, requester) = (member_name(&state, &actor).await?, member_name(&state, &requester).await?);
    let details = format!("asked for by {requester}, approved by {approver}");
    let published = change(&state, &mut row, None, &approver, SourceAction::Published, &details).await?;
    commit(&state, published).await?;
    let status = status_for(&state, &actor, &row, &tender).await?;
    Ok(Json(status))
}

async fn status(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<TenderStatus>, ApiError> {
    let id = tender_id(path)?;
    let row = own_tender(&state, &actor, id).await?;
    Ok(Json(status_for(&state, &actor, &row, &machine(&row)?).await?))
}

/// `GET /source/tenders`: the caller's organization's tenders, newest first (another organization's never).
async fn list_tenders(State(state): State<AppState>, actor: Actor) -> Result<Json<Vec<TenderStatus>>, ApiError> {
    let org = actor.org;
    let ids = blocking(&state, move |s| s.source_tenders_of(org)).await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let row = own_tender(&state, &actor, id).await?;
        out.push(status_for(&state, &actor, &row, &machine(&row)?).await?);
    }
    Ok(Json(out))
}

/// `GET /source/tenders/{id}/package`: the published package's artifacts (criteria and pricing schedule for the
/// scoring grid and the price totals on the desktop; the requirements the answers refer to).
async fn published_package(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Artifacts>, ApiError> {
    let id = tender_id(path)?;
    let row = own_tender(&state, &actor, id).await?;
    let artifacts: Artifacts =
        serde_json::from_str(&row.artifacts_json).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(artifacts))
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
    let (token, hash) = crate::auth::new_token_with(INVITATION_PREFIX);
    let details = format!("{name} <{}>", request.email.trim());
    let who = member_name(&state, &actor).await?;
    let invited = change(&state, &mut row, None, &who, SourceAction::Invited, &details).await?;
    let invited = SourceCommit {
        invitation: Some(Invitation {
            token_hash: hash,
            tender: id,
            vendor_name: name.to_owned(),
            email: request.email.trim().to_ascii_lowercase(),
            used: false,
        }),
        ..invited
    };
    commit(&state, invited).await?;
    let link = pactwise_source::wire::invitation_path(&token);
    Ok((StatusCode::CREATED, Json(InvitationCreated { token, link })))
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
        let what = match request.kind {
            EnvelopeKind::Technical => "technical envelopes opened",
            EnvelopeKind::Price => "price envelopes opened",
        };
        let who = member_name(&state, &actor).await?;
        let opened = change(&state, &mut row, Some(&next), &who, SourceAction::Opening, what).await?;
        commit(&state, opened).await?;
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
        let bound = bound(&row, envelope_row, request.kind);
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

/// The context an envelope of `row` is bound to (the desktop rebuilds the same one to open it:
/// [`BoundContext::of_part`]).
fn bound(row: &TenderRow, envelope_row: &EnvelopeRow, kind: EnvelopeKind) -> BoundContext {
    BoundContext {
        tender_id: row.id.to_string(),
        vendor_id: envelope_row.account.to_string(),
        kind,
        submission: envelope_row.submission,
        published_hash: row.published_hash.clone(),
        part: envelope_row.part.clone(),
    }
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
        let token = crate::http::bearer_token(&parts.headers, VENDOR_TOKEN_PREFIX).ok_or(ApiError::Unauthenticated)?;
        let hash = crate::auth::token_hash(token);
        let (account, expires) =
            blocking(state, move |s| s.source_session(&hash)).await?.ok_or(ApiError::Unauthenticated)?;
        if expires <= state.0.clock.now() {
            return Err(ApiError::Unauthenticated);
        }
        Ok(Vendor { account })
    }
}

/// Where a request came from, for the sign-in rate limit (vendors sign in and accept invitations by address, as
/// members sign in).
pub struct SignInAttempt;

impl FromRequestParts<AppState> for SignInAttempt {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let addr = crate::http::client_addr(&parts.extensions);
        if let Err(retry_after_s) = state.0.sign_in_limiter.check(&format!("vendor:{addr}")) {
            crate::metrics::Metrics::add(&state.0.metrics.rate_limited, 1);
            return Err(ApiError::RateLimited { retry_after_s });
        }
        Ok(SignInAttempt)
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
    let (token, hash) = crate::auth::new_token_with(VENDOR_TOKEN_PREFIX);
    let expires_at = state.0.clock.now() + chrono::Duration::days(VENDOR_SESSION_DAYS);
    blocking(state, move |s| s.source_create_session(&hash, account, expires_at)).await?;
    Ok(VendorSession { token, expires_at })
}

/// `POST /source/vendor/accept`: the invitation link's token, once; the vendor creates its account (or signs in to
/// the one it has with that email) and joins the tender.
async fn accept_invitation(
    State(state): State<AppState>,
    _attempt: SignInAttempt,
    body: Result<Json<AcceptRequest>, JsonRejection>,
) -> Result<Json<VendorSession>, ApiError> {
    let Json(request) = body.map_err(json_rejection)?;
    let refused = || {
        ApiError::Forbidden("this invitation link is not valid or was used already; ask the buyer for a new one".into())
    };
    if !request.token.starts_with(INVITATION_PREFIX) {
        return Err(refused());
    }
    let hash = crate::auth::token_hash(request.token.trim());
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
    let name = invitation.vendor_name.clone();
    let joined = change(&state, &mut row, Some(&next), &name, SourceAction::Joined, &name).await?;
    let joined = SourceCommit { accepted: Some((hash, account, name.clone())), new_account, ..joined };
    commit(&state, joined).await.map_err(|e| match e {
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
    _attempt: SignInAttempt,
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
    /// Finished resumable uploads (`crate::source_uploads`) of this tender, sealed like `files`.
    #[serde(default)]
    pub uploads: Vec<Uuid>,
    pub prices: PriceOffer,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SubmissionReceived {
    pub submission: u32,
    /// What the inspection found in each accepted file.
    pub files: Vec<(String, String)>,
    pub received_at: DateTime<Utc>,
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
    let upload_key = wrapping_key(&state)?;
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
        let Some(name) = crate::source_files::file_name(&file.name).filter(|n| names.insert(n.to_lowercase())) else {
            problems.push(FormProblem {
                field: file.name.clone(),
                code: "bad_name".into(),
                message: "give each file its own name".into(),
            });
            continue;
        };
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
    let mut sealed_uploads = Vec::new();
    let mut uploaded_bytes = 0u64;
    for upload in request.uploads.iter().copied() {
        let row = blocking(&state, move |s| s.source_upload(upload)).await?;
        let Some(row) = row.filter(|r| r.account == vendor.account && r.tender == id && r.expires_at > now) else {
            problems.push(FormProblem {
                field: upload.to_string(),
                code: "no_upload".into(),
                message: "this upload is not there any more (submitted, cancelled or expired); upload the file again"
                    .into(),
            });
            continue;
        };
        let Some(summary) = row.finished.clone() else {
            problems.push(FormProblem {
                field: row.name.clone(),
                code: "incomplete".into(),
                message: "this file has not finished uploading; let it finish (or resume it), then submit".into(),
            });
            continue;
        };
        uploaded_bytes += row.size;
        if uploaded_bytes > crate::source_files::SUBMISSION_UPLOADS_LIMIT {
            problems.push(FormProblem {
                field: row.name.clone(),
                code: "too_large".into(),
                message: format!(
                    "the files of one submission may add up to {} MB; leave some out or compress them",
                    crate::source_files::SUBMISSION_UPLOADS_LIMIT / (1024 * 1024)
                ),
            });
            continue;
        }
        if !names.insert(row.name.to_lowercase()) {
            problems.push(FormProblem {
                field: row.name.clone(),
                code: "bad_name".into(),
                message: "give each file its own name".into(),
            });
            continue;
        }
        match crate::source_files::whole_file(&state, &row, &upload_key).await? {
            Ok(bytes) => {
                parts.push((EnvelopeKind::Technical, row.name.clone(), summary, bytes));
                sealed_uploads.push(row.id);
            }
            Err(problem) => problems.push(problem),
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
        let bound = bound(&row, &envelope_row, kind);
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
    let (action, what) =
        if number == 1 { (SourceAction::Submission, "submission") } else { (SourceAction::Replacement, "replacement") };
    let details = format!("{vendor_name}: {what} {number}, {} files, sealed", files.len());
    let submitted = change(&state, &mut row, Some(&next), &vendor_name, action, &details).await?;
    commit(&state, SourceCommit { envelopes, sealed_uploads, ..submitted }).await?;
    Ok((StatusCode::CREATED, Json(SubmissionReceived { submission: number, files, received_at: now })).into_response())
}

fn public_key(hex_text: &str) -> Result<PublicKey, ApiError> {
    let bytes = hex::decode(hex_text).map_err(|_| ApiError::Internal("a stored tender key is not hex".into()))?;
    let bytes: [u8; 32] =
        bytes.try_into().map_err(|_| ApiError::Internal("a stored tender key is not 32 bytes".into()))?;
    Ok(PublicKey(bytes))
}

pub(crate) async fn vendor_row(
    state: &AppState,
    vendor: &Vendor,
    id: Uuid,
) -> Result<(TenderRow, Tender, String), ApiError> {
    let row = blocking(state, move |s| s.source_tender(id))
        .await?
        .ok_or_else(|| ApiError::NotFound("no such tender".into()))?;
    let tender = machine(&row)?;
    if row.status != "published" || !tender.vendors.contains_key(&vendor.account.to_string()) {
        return Err(ApiError::NotFound("no such tender".into()));
    }
    let account = vendor.account;
    let names = blocking(state, move |s| s.source_participants(id)).await?;
    let name = names.into_iter().find(|(a, _)| *a == account).map(|(_, n)| n).unwrap_or_default();
    Ok((row, tender, name))
}

#[derive(Debug, Deserialize)]
pub struct AskRequest {
    pub question: String,
}

/// `POST /source/vendor/tenders/{id}/questions`: before the questions deadline.
async fn ask(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<AskRequest>, JsonRejection>,
) -> Result<(StatusCode, Json<PublishedQuestion>), ApiError> {
    let id = tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    let text = request.question.trim();
    if text.is_empty() || text.chars().count() > 4000 {
        return Err(ApiError::InvalidInput("write the question in at most 4,000 characters".into()));
    }
    let (mut row, tender, name) = vendor_row(&state, &vendor, id).await?;
    let now = state.0.clock.now();
    let (next, _) =
        tender::step(&tender, Event::Ask { vendor: vendor.account.to_string(), at: now }).map_err(refused)?;
    let question = crate::source_rows::Question {
        id: Uuid::new_v4(),
        tender: id,
        account: vendor.account,
        question: text.to_owned(),
        asked_at: now,
        answer: None,
        answered_at: None,
    };
    let asked =
        change(&state, &mut row, Some(&next), &name, SourceAction::Question, &format!("{name} asked a question"))
            .await?;
    let shown = PublishedQuestion {
        id: question.id,
        question: question.question.clone(),
        answer: None,
        answered_at: None,
        mine: true,
        asked_by: None,
    };
    commit(&state, SourceCommit { question: Some(question), ..asked }).await?;
    Ok((StatusCode::CREATED, Json(shown)))
}

/// `GET /source/vendor/tenders/{id}/questions`: every answered question (no asker), and the vendor's own.
async fn vendor_questions(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Vec<PublishedQuestion>>, ApiError> {
    let id = tender_id(path)?;
    vendor_row(&state, &vendor, id).await?;
    let all = blocking(&state, move |s| s.source_questions(id)).await?;
    Ok(Json(
        all.into_iter()
            .filter(|q| q.answer.is_some() || q.account == vendor.account)
            .map(|q| PublishedQuestion {
                mine: q.account == vendor.account,
                id: q.id,
                question: q.question,
                answer: q.answer,
                answered_at: q.answered_at,
                asked_by: None,
            })
            .collect(),
    ))
}

async fn buyer_questions(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Vec<PublishedQuestion>>, ApiError> {
    let id = tender_id(path)?;
    own_tender(&state, &actor, id).await?;
    let all = blocking(&state, move |s| s.source_questions(id)).await?;
    let names: BTreeMap<Uuid, String> =
        blocking(&state, move |s| s.source_participants(id)).await?.into_iter().collect();
    Ok(Json(
        all.into_iter()
            .map(|q| PublishedQuestion {
                asked_by: names.get(&q.account).cloned(),
                id: q.id,
                question: q.question,
                answer: q.answer,
                answered_at: q.answered_at,
                mine: false,
            })
            .collect(),
    ))
}

/// `POST /source/tenders/{id}/questions/{question}/answer`: published to every vendor, without the asker's name.
async fn answer_question(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<(String, String)>, PathRejection>,
    body: Result<Json<AnswerRequest>, JsonRejection>,
) -> Result<Json<PublishedQuestion>, ApiError> {
    let Path((id, question)) = path.map_err(|_| ApiError::NotFound("no such question".into()))?;
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::NotFound("no such tender".into()))?;
    let question = Uuid::parse_str(&question).map_err(|_| ApiError::NotFound("no such question".into()))?;
    let Json(request) = body.map_err(json_rejection)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let text = request.answer.trim().to_owned();
    if text.is_empty() || text.chars().count() > 8000 {
        return Err(ApiError::InvalidInput("write the answer in at most 8,000 characters".into()));
    }
    let mut row = own_tender(&state, &actor, id).await?;
    if machine(&row)?.phase != Phase::Open {
        return Err(ApiError::InvalidInput("questions can be answered only while the tender is open".into()));
    }
    let asked = blocking(&state, move |s| s.source_questions(id)).await?;
    let found =
        asked.into_iter().find(|q| q.id == question).ok_or_else(|| ApiError::NotFound("no such question".into()))?;
    if found.answer.is_some() {
        return Err(ApiError::InvalidInput("this question has an answer already".into()));
    }
    let now = state.0.clock.now();
    let who = member_name(&state, &actor).await?;
    let answered =
        change(&state, &mut row, None, &who, SourceAction::Answer, "an answer published to every vendor").await?;
    commit(&state, SourceCommit { answer: Some((question, text.clone(), now)), ..answered }).await?;
    Ok(Json(PublishedQuestion {
        id: question,
        question: found.question,
        answer: Some(text),
        answered_at: Some(now),
        mine: false,
        asked_by: None,
    }))
}

/// `POST /source/tenders/{id}/extension`: later deadlines with a reason, before the submission deadline; every
/// vendor sees them at once (their tender list carries the deadlines).
async fn extend(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<ExtensionRequest>, JsonRejection>,
) -> Result<Json<TenderStatus>, ApiError> {
    let id = tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let mut row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    let to = Deadlines { questions_close: request.questions_close, submissions_close: request.submissions_close };
    let reason = request.reason.trim().to_owned();
    let (next, _) = tender::step(&tender, Event::Extend { to, reason: reason.clone(), at: state.0.clock.now() })
        .map_err(refused)?;
    let details = format!(
        "questions until {}, submissions until {}: {reason}",
        to.questions_close.format("%Y-%m-%d %H:%M UTC"),
        to.submissions_close.format("%Y-%m-%d %H:%M UTC")
    );
    let who = member_name(&state, &actor).await?;
    let extended = change(&state, &mut row, Some(&next), &who, SourceAction::Extension, &details).await?;
    commit(&state, extended).await?;
    let status = status_for(&state, &actor, &row, &next).await?;
    Ok(Json(status))
}

fn criteria_of(row: &TenderRow) -> Result<pactwise_rules::prep::Criteria, ApiError> {
    let artifacts: Artifacts =
        serde_json::from_str(&row.artifacts_json).map_err(|e| ApiError::Internal(e.to_string()))?;
    artifacts.criteria.content.ok_or_else(|| ApiError::Internal("a published tender without criteria".into()))
}

/// The vendors whose last submission counts, in the order they joined the tender's list (by name): never ranked.
fn bidders(tender: &Tender) -> Vec<String> {
    tender.vendors.iter().filter(|(_, n)| **n > 0).map(|(v, _)| v.clone()).collect()
}

fn as_scores(stored: &[crate::source_rows::StoredScore]) -> Vec<pactwise_source::evaluation::Score> {
    stored
        .iter()
        .map(|s| pactwise_source::evaluation::Score {
            vendor: s.account.to_string(),
            criterion_id: s.criterion_id.clone(),
            evaluator: s.evaluator.to_string(),
            points: s.points,
            reason: s.reason.clone(),
        })
        .collect()
}

/// `POST /source/tenders/{id}/scores`: a member scores one vendor on one criterion, by hand, with a reason, while
/// the technical envelopes are open and not locked. The member's later score replaces their earlier one.
async fn record_score(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<ScoreRequest>, JsonRejection>,
) -> Result<StatusCode, ApiError> {
    let id = tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let mut row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    if tender.phase != Phase::TechnicalOpened {
        return Err(ApiError::InvalidInput(
            "scores are recorded after the technical envelopes open and before the evaluation is locked".into(),
        ));
    }
    if tender.vendors.get(&request.vendor_account.to_string()).copied().unwrap_or(0) == 0 {
        return Err(ApiError::InvalidInput("that vendor did not submit".into()));
    }
    let criteria = criteria_of(&row)?;
    let score = pactwise_source::evaluation::Score {
        vendor: request.vendor_account.to_string(),
        criterion_id: request.criterion_id.clone(),
        evaluator: actor.user.to_string(),
        points: request.points,
        reason: request.reason.trim().to_owned(),
    };
    pactwise_source::evaluation::check_score(&criteria, &score, MAX_POINTS)
        .map_err(|e| ApiError::InvalidInput(e.to_string()))?;
    let account = request.vendor_account;
    let names: BTreeMap<Uuid, String> =
        blocking(&state, move |s| s.source_participants(id)).await?.into_iter().collect();
    let who = member_name(&state, &actor).await?;
    let criterion = criteria.criteria.iter().find(|c| c.id == score.criterion_id).map_or("", |c| c.name.as_str());
    let details = format!(
        "{who} scored {} on {criterion}: {} out of {MAX_POINTS}",
        names.get(&account).cloned().unwrap_or_default(),
        request.points
    );
    let scored = change(&state, &mut row, None, &who, SourceAction::Score, &details).await?;
    let stored = crate::source_rows::StoredScore {
        tender: id,
        account,
        criterion_id: score.criterion_id,
        evaluator: actor.user,
        points: score.points,
        reason: score.reason,
        scored_at: state.0.clock.now(),
    };
    commit(&state, SourceCommit { score: Some(stored), ..scored }).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /source/tenders/{id}/lock`: every criterion of every bidder scored with a reason, then the technical
/// evaluation is locked and the price envelopes may open.
async fn lock_technical(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<TenderStatus>, ApiError> {
    let id = tender_id(path)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let mut row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    let criteria = criteria_of(&row)?;
    let stored = blocking(&state, move |s| s.source_scores(id)).await?;
    let names: BTreeMap<Uuid, String> =
        blocking(&state, move |s| s.source_participants(id)).await?.into_iter().collect();
    let unscored: Vec<String> =
        pactwise_source::evaluation::unscored(&criteria, &bidders(&tender), &as_scores(&stored))
            .iter()
            .map(|v| Uuid::parse_str(v).ok().and_then(|u| names.get(&u).cloned()).unwrap_or_else(|| v.clone()))
            .collect();
    let (next, _) = tender::step(&tender, Event::LockTechnical { unscored }).map_err(refused)?;
    let who = member_name(&state, &actor).await?;
    let locked =
        change(&state, &mut row, Some(&next), &who, SourceAction::Score, "technical evaluation locked").await?;
    commit(&state, locked).await?;
    let status = status_for(&state, &actor, &row, &next).await?;
    Ok(Json(status))
}

/// `GET /source/tenders/{id}/evaluation`: the weighted technical totals, once locked; vendors in name order, not
/// ranked. Price totals are computed on the buyer's desktop from the opened price envelopes (the service never
/// reads them).
async fn evaluation(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Vec<VendorResult>>, ApiError> {
    let id = tender_id(path)?;
    let row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    if matches!(tender.phase, Phase::Open | Phase::TechnicalOpened) {
        return Err(ApiError::InvalidInput("the totals are shown once the technical evaluation is locked".into()));
    }
    let criteria = criteria_of(&row)?;
    let stored = blocking(&state, move |s| s.source_scores(id)).await?;
    let names: BTreeMap<Uuid, String> =
        blocking(&state, move |s| s.source_participants(id)).await?.into_iter().collect();
    let mut vendors = bidders(&tender);
    vendors.sort_by_key(|v| Uuid::parse_str(v).ok().and_then(|u| names.get(&u).cloned()).unwrap_or_default());
    let totals = pactwise_source::evaluation::technical_totals(&criteria, &vendors, &as_scores(&stored), MAX_POINTS)
        .map_err(ApiError::InvalidInput)?;
    let shown = |d| pactwise_source::evaluation::shown(d, 2);
    Ok(Json(
        totals
            .into_iter()
            .map(|t| {
                let account = Uuid::parse_str(&t.vendor).unwrap_or_default();
                VendorResult {
                    vendor: names.get(&account).cloned().unwrap_or_default(),
                    vendor_account: account,
                    technical_total: shown(t.total),
                    criteria: t
                        .criteria
                        .into_iter()
                        .map(|c| (c.criterion_id, shown(c.mean_points), shown(c.weighted)))
                        .collect(),
                }
            })
            .collect(),
    ))
}

/// `POST /source/tenders/{id}/award`: a person's decision with a reason, after the price envelopes opened.
async fn award(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<AwardRequest>, JsonRejection>,
) -> Result<Json<TenderStatus>, ApiError> {
    let id = tender_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|r| ApiError::Forbidden(r.message))?;
    let mut row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    let now = state.0.clock.now();
    let reason = request.reason.trim().to_owned();
    let event = Event::Award { vendor: request.vendor_account.to_string(), reason: reason.clone(), at: now };
    let (mut next, _) = tender::step(&tender, event).map_err(refused)?;
    if let Some((amount, currency)) = &request.price_total {
        if pactwise_source::evaluation::parse_amount(amount).is_none() || currency.trim().len() != 3 {
            return Err(ApiError::InvalidInput("the price total is an amount and a three-letter currency".into()));
        }
        if let Some(record) = next.award.as_mut() {
            record.price = Some((amount.trim().to_owned(), currency.trim().to_ascii_uppercase()));
        }
    }
    let names: BTreeMap<Uuid, String> =
        blocking(&state, move |s| s.source_participants(id)).await?.into_iter().collect();
    let name = names.get(&request.vendor_account).cloned().unwrap_or_default();
    let who = member_name(&state, &actor).await?;
    let awarded =
        change(&state, &mut row, Some(&next), &who, SourceAction::Award, &format!("awarded to {name}: {reason}"))
            .await?;
    commit(&state, awarded).await?;
    let status = status_for(&state, &actor, &row, &next).await?;
    Ok(Json(status))
}

/// `GET /source/tenders/{id}/ocds`: the tender's OCDS 1.1 release package (published tender, extensions, number of
/// tenderers once closed, award).
async fn ocds_record(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = tender_id(path)?;
    let row = own_tender(&state, &actor, id).await?;
    let tender = machine(&row)?;
    let release = blocking(&state, move |s| s.source_tender_release(id)).await?.ok_or_else(|| {
        ApiError::InvalidInput("this tender was published without its OCDS release; publish it from Prep Studio".into())
    })?;
    let release: serde_json::Value = serde_json::from_str(&release).map_err(|e| ApiError::Internal(e.to_string()))?;
    let trail = blocking(&state, move |s| s.source_audit(id)).await?;
    let published_at = trail.iter().find(|e| e.action == SourceAction::Published).map_or(row.created_at, |e| e.at);
    let names: BTreeMap<Uuid, String> =
        blocking(&state, move |s| s.source_participants(id)).await?.into_iter().collect();
    let first_deadlines = tender.extension_log.first().map_or(tender.deadlines, |e| e.from);
    let extensions: Vec<pactwise_source::ocds::Extension> = tender
        .extension_log
        .iter()
        .map(|e| pactwise_source::ocds::Extension { at: e.at, to: e.to, reason: e.reason.clone() })
        .collect();
    let closed = !matches!(tender.phase, Phase::Open);
    let award = tender.award.as_ref().map(|a| {
        let account = Uuid::parse_str(&a.vendor).unwrap_or_default();
        pactwise_source::ocds::Award {
            at: a.at,
            supplier_id: format!("vendor-{account}"),
            supplier_name: names.get(&account).cloned().unwrap_or_default(),
            reason: a.reason.clone(),
            value: a.price.as_ref().and_then(|(amount, currency)| {
                pactwise_source::evaluation::parse_amount(amount).map(|value| (value, currency.clone()))
            }),
        }
    });
    let record = pactwise_source::ocds::TenderRecord {
        tender_release: &release,
        published_at,
        deadlines: first_deadlines,
        extensions: &extensions,
        tenderers: closed.then(|| tender.submission_count()),
        award,
        publisher: &actor.org_name,
        uri: &format!("urn:pactwise:tender:{id}"),
    };
    Ok(Json(pactwise_source::ocds::release_package(&record, state.0.clock.now())))
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TenderRequirement {
    pub code: String,
    pub text: String,
    pub mandatory: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct TenderPriceLine {
    pub code: String,
    pub description: String,
    pub unit: String,
    pub quantity: Option<u32>,
    /// The line's amount is left open: no price is asked for it.
    pub open_amount: bool,
}

/// What a vendor needs to answer: the tender's requirements and pricing schedule, from the published package.
#[derive(Debug, Serialize, Deserialize)]
pub struct VendorTenderDetail {
    pub id: Uuid,
    pub title: String,
    pub buyer: String,
    pub summary: String,
    pub deadlines: Deadlines,
    pub phase: Phase,
    pub joined_as: String,
    pub my_submissions: u32,
    pub currency: String,
    pub requirements: Vec<TenderRequirement>,
    pub price_lines: Vec<TenderPriceLine>,
    /// The accepted file types, in words.
    pub accepted_files: Vec<String>,
}

/// `GET /source/vendor/tenders/{id}`: the published tender as the vendor page shows it.
async fn vendor_tender(
    State(state): State<AppState>,
    vendor: Vendor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<VendorTenderDetail>, ApiError> {
    let id = tender_id(path)?;
    let (row, tender, name) = vendor_row(&state, &vendor, id).await?;
    let artifacts: Artifacts =
        serde_json::from_str(&row.artifacts_json).map_err(|e| ApiError::Internal(e.to_string()))?;
    let requirements = artifacts
        .requirements
        .content
        .map(|r| {
            r.items
                .into_iter()
                .map(|item| TenderRequirement {
                    mandatory: item.kind == pactwise_rules::prep::RequirementKind::Mandatory,
                    code: item.code,
                    text: item.text,
                })
                .collect()
        })
        .unwrap_or_default();
    let pricing = artifacts.pricing.content;
    Ok(Json(VendorTenderDetail {
        id,
        title: row.title.clone(),
        buyer: artifacts.intake.content.as_ref().map(|i| i.buyer.clone()).unwrap_or_default(),
        summary: artifacts.scope.content.as_ref().map(|s| s.summary.clone()).unwrap_or_default(),
        deadlines: tender.deadlines,
        phase: tender.phase,
        joined_as: name,
        my_submissions: tender.vendors.get(&vendor.account.to_string()).copied().unwrap_or(0),
        currency: pricing.as_ref().map(|p| p.currency.clone()).unwrap_or_default(),
        price_lines: pricing
            .map(|p| {
                p.lines
                    .into_iter()
                    .map(|line| TenderPriceLine {
                        code: line.code,
                        description: line.description,
                        unit: line.unit,
                        quantity: line.quantity,
                        open_amount: line.open_amount,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        requirements,
        accepted_files: pactwise_inspect::Kind::ALL.iter().map(|k| k.label().to_owned()).collect(),
    }))
}
