//! The members routes (`/api/v1/members…`, `/api/v1/sign-in/code`): owners and admins add members, change roles
//! and remove members (the role table decides, `pactwise_rules::roles::check_member_change`; the storage applies
//! it in one transaction with the member's change in the organization's log, and the push channel wakes the
//! organization's desktops). A new member gets a one-time code, shown once to the admin and stored only as a hash;
//! they redeem it once, before it expires, choosing their password. A removed member's device tokens stop working
//! at their next request. Another organization's member id answers exactly like a missing one.

use crate::auth;
use crate::http::{ApiError, AppState, MAX_FIELD, blocking, client_addr, json_rejection};
use crate::metrics::Metrics;
use crate::storage::{Actor, MemberOp};
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use pactwise_domain::UserId;
use pactwise_rules::roles;
use pactwise_sync::members::{
    AddMemberRequest, AddedMember, ChangeRoleRequest, CodeSignInRequest, MAX_DISPLAY_NAME, Member, MembersResponse,
    OpenCodesResponse,
};
use pactwise_sync::wire::SignInResponse;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/members", get(list).post(add))
        .route("/members/codes", get(open_codes))
        .route("/members/{user_id}", put(change_role).delete(remove))
        .route("/members/{user_id}/code", post(new_code))
        .route("/sign-in/code", post(sign_in_with_code))
}

fn member_id(path: Result<Path<String>, PathRejection>) -> Result<UserId, ApiError> {
    let missing = || ApiError::NotFound("no such member in this organization".into());
    let Path(id) = path.map_err(|_| missing())?;
    id.parse().map_err(|_| missing())
}

fn not_found_as_member(e: ApiError) -> ApiError {
    match e {
        ApiError::NotFound(_) => ApiError::NotFound("no such member in this organization".into()),
        other => other,
    }
}

/// An email as the service keeps it (trimmed, lowercase), or why not.
pub fn clean_email(email: &str) -> Result<String, ApiError> {
    let email = email.trim().to_lowercase();
    let ok = email.len() <= MAX_FIELD
        && email.split_once('@').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    if ok { Ok(email) } else { Err(ApiError::InvalidInput(format!("{email:?} is not an email address"))) }
}

fn clean_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_DISPLAY_NAME || name.chars().any(char::is_control) {
        return Err(ApiError::InvalidInput(format!(
            "a member's name must be 1 to {MAX_DISPLAY_NAME} characters of text"
        )));
    }
    Ok(name.to_string())
}

/// Wakes the organization's waits for changes after a logged members change.
fn advanced(state: &AppState, actor: &Actor, seq: Option<u64>) {
    if let Some(seq) = seq {
        state.0.notifier.advanced(actor.org, seq);
    }
}

/// Every member may read who the members are (their desktops keep the same list from the log).
async fn list(State(state): State<AppState>, actor: Actor) -> Result<Json<MembersResponse>, ApiError> {
    let org = actor.org;
    let members = blocking(&state, move |s| s.list_members(org)).await?;
    Ok(Json(MembersResponse { members }))
}

async fn open_codes(State(state): State<AppState>, actor: Actor) -> Result<Json<OpenCodesResponse>, ApiError> {
    roles::check_member_change(actor.role, roles::MemberChange::SeeCodes, 1)
        .map_err(|refusal| ApiError::Forbidden(refusal.message))?;
    let (org, now) = (actor.org, state.0.clock.now());
    let codes = blocking(&state, move |s| s.open_codes(org, now)).await?;
    Ok(Json(OpenCodesResponse { codes }))
}

async fn add(
    State(state): State<AppState>,
    actor: Actor,
    body: Result<Json<AddMemberRequest>, JsonRejection>,
) -> Result<(StatusCode, Json<AddedMember>), ApiError> {
    let Json(request) = body.map_err(json_rejection)?;
    let email = clean_email(&request.email)?;
    let display_name = clean_name(&request.display_name)?;
    let now = state.0.clock.now();
    let (code, code_hash) = auth::new_code();
    let code_expires_at = now + state.0.config.code_ttl;
    let op = MemberOp::Add { email, display_name, role: request.role, code_hash, code_expires_at };
    let a = actor.clone();
    let changed = blocking(&state, move |s| s.change_members(&a, &op, now)).await.map_err(|e| match e {
        ApiError::InvalidInput(_) => {
            ApiError::InvalidInput("a member with this email already belongs to the organization".into())
        }
        other => other,
    })?;
    advanced(&state, &actor, changed.seq);
    tracing::info!(org = %actor.org, by = %actor.user, member = %changed.member.user_id, role = %changed.member.role, "member added");
    Ok((StatusCode::CREATED, Json(AddedMember { member: changed.member, code, code_expires_at })))
}

async fn change_role(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<ChangeRoleRequest>, JsonRejection>,
) -> Result<Json<Member>, ApiError> {
    let user = member_id(path)?;
    let Json(request) = body.map_err(json_rejection)?;
    let now = state.0.clock.now();
    let a = actor.clone();
    let op = MemberOp::ChangeRole { user, role: request.role };
    let changed = blocking(&state, move |s| s.change_members(&a, &op, now)).await.map_err(not_found_as_member)?;
    advanced(&state, &actor, changed.seq);
    tracing::info!(org = %actor.org, by = %actor.user, member = %user, role = %request.role, "member's role changed");
    Ok(Json(changed.member))
}

async fn remove(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let user = member_id(path)?;
    let now = state.0.clock.now();
    let a = actor.clone();
    let changed = blocking(&state, move |s| s.change_members(&a, &MemberOp::Remove { user }, now))
        .await
        .map_err(not_found_as_member)?;
    advanced(&state, &actor, changed.seq);
    tracing::info!(org = %actor.org, by = %actor.user, member = %user, "member removed");
    Ok(StatusCode::NO_CONTENT)
}

async fn new_code(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<AddedMember>, ApiError> {
    let user = member_id(path)?;
    let now = state.0.clock.now();
    let (code, code_hash) = auth::new_code();
    let code_expires_at = now + state.0.config.code_ttl;
    let a = actor.clone();
    let op = MemberOp::NewCode { user, code_hash, code_expires_at };
    let changed = blocking(&state, move |s| s.change_members(&a, &op, now)).await.map_err(not_found_as_member)?;
    tracing::info!(org = %actor.org, by = %actor.user, member = %user, "new sign-in code issued");
    Ok(Json(AddedMember { member: changed.member, code, code_expires_at }))
}

/// Redeems a one-time code: the member chooses a password and this device gets a token, as after a sign-in.
async fn sign_in_with_code(State(state): State<AppState>, request: Request) -> Result<Json<SignInResponse>, ApiError> {
    let addr = client_addr(request.extensions());
    if let Err(retry_after_s) = state.0.sign_in_limiter.check(&addr) {
        Metrics::add(&state.0.metrics.rate_limited, 1);
        return Err(ApiError::RateLimited { retry_after_s });
    }
    let Json(body): Json<CodeSignInRequest> =
        <Json<CodeSignInRequest> as axum::extract::FromRequest<AppState>>::from_request(request, &state)
            .await
            .map_err(json_rejection)?;
    for (name, value) in
        [("org", &body.org), ("email", &body.email), ("code", &body.code), ("device_name", &body.device_name)]
    {
        if value.trim().is_empty() || value.len() > MAX_FIELD {
            return Err(ApiError::InvalidInput(format!("{name} must be 1 to {MAX_FIELD} characters")));
        }
    }
    if body.password.len() > 1024 {
        return Err(ApiError::InvalidInput("the password is too long".into()));
    }
    // The new password is checked before the code is touched, so a short password does not use the code up.
    let password = body.password.clone();
    let password_hash = tokio::task::spawn_blocking(move || auth::hash_password(&password))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|e| ApiError::InvalidInput(format!("choose another password: {e}")))?;
    let (org, email, code_hash) =
        (body.org.trim().to_string(), body.email.trim().to_lowercase(), auth::code_hash(&body.code));
    let now = state.0.clock.now();
    let login = blocking(&state, move |s| s.redeem_code(&org, &email, &code_hash, &password_hash, now)).await?;
    let Some(login) = login else {
        Metrics::add(&state.0.metrics.sign_ins_failed, 1);
        return Err(ApiError::CodeRefused);
    };
    let (token, hash) = auth::new_token();
    let expires_at = now + state.0.config.token_ttl;
    let device_name = body.device_name.trim().to_string();
    let l2 = login.clone();
    let device_id = blocking(&state, move |s| s.create_device(&l2, &device_name, &hash, now, expires_at)).await?;
    Metrics::add(&state.0.metrics.sign_ins, 1);
    tracing::info!(org = %login.org, user = %login.user, "signed in with a one-time code");
    Ok(Json(SignInResponse { token, device_id, user_id: login.user, org_id: login.org, role: login.role, expires_at }))
}
