//! The edit lease of an RFP package (`/api/v1/leases/{package}`): one person of the organization edits a package at
//! a time, across all its desktops. `POST` takes or renews the caller's lease (`take_over` for another person's
//! expired one), `DELETE` releases it, `GET` says who holds it. The service's clock decides expiry and
//! `pactwise_rules::prep::lease::decide` decides who may take it (the same rule the desktop's store runs for an
//! organization that does not sync). Leases are per organization: another organization's package id reads as free
//! here and taking it touches nothing of theirs.
//!
//! In the transaction that grants or releases a lease the backend writes an audit row (`lease_audit`: taken, taken
//! over with the previous holder and when their lease expired, released) and, when the holder changes, a
//! service-authored `prep_lease` event into the organization's log (`crate::storage::lease_change`), so every
//! desktop learns who holds the lease and audits a take-over. A renewal changes only the expiry and logs nothing.
//! The decision over the stored lease is `crate::storage::plan_take`, shared by both backends.

use crate::http::{ApiError, AppState, blocking, json_rejection};
use crate::storage::{Actor, LeaseTake};
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use pactwise_domain::ErrorCode;
use pactwise_rules::prep::lease::LeaseRefusal;
use pactwise_rules::roles;
use pactwise_sync::lease::{LeaseGranted, LeaseRefusedBody, LeaseRequest, LeaseStatus};
use pactwise_sync::wire::ErrorDetail;
use uuid::Uuid;

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/leases/{package}", get(show).post(take).delete(release))
}

fn package_id(path: Result<Path<String>, PathRejection>) -> Result<Uuid, ApiError> {
    let Path(id) = path.map_err(|_| ApiError::NotFound("no such package".into()))?;
    Uuid::parse_str(&id).map_err(|_| ApiError::InvalidInput("a package id is a UUID".into()))
}

fn may_prepare(actor: &Actor) -> Result<(), ApiError> {
    roles::check(actor.role, roles::SharedChange::PrepPackage).map_err(|refusal| ApiError::Forbidden(refusal.message))
}

/// A refused take: 409 with the stable code, the holder's name and expiry in words, and the lease.
struct Refused(LeaseRefusedBody);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        (StatusCode::CONFLICT, Json(self.0)).into_response()
    }
}

/// The refusal in people's words (the service's clock, UTC).
pub fn refusal_message(refusal: &LeaseRefusal, holder_name: &str) -> String {
    let at = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    match refusal {
        LeaseRefusal::Held { lease } => format!(
            "{holder_name} is editing this package until {}; try again after that, or ask them to close it",
            at(lease.expires_at)
        ),
        LeaseRefusal::ExpiredTakeOverNeeded { lease } => format!(
            "{holder_name}'s edit lease on this package expired at {}; take it over to edit (their unsaved changes \
             are not kept)",
            at(lease.expires_at)
        ),
    }
}

async fn show(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<LeaseStatus>, ApiError> {
    let package = package_id(path)?;
    let (org, now) = (actor.org, state.0.clock.now());
    let lease = blocking(&state, move |s| s.lease(org, package)).await?;
    Ok(Json(LeaseStatus { lease: lease.map(|l| l.view(package, now)) }))
}

async fn take(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
    body: Result<Json<LeaseRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let package = package_id(path)?;
    may_prepare(&actor)?;
    let Json(request) = body.map_err(json_rejection)?;
    let now = state.0.clock.now();
    let ttl = state.0.config.lease_ttl;
    let a = actor.clone();
    let taken = blocking(&state, move |s| s.take_lease(&a, package, request.take_over, now, ttl)).await?;
    match taken {
        LeaseTake::Granted { grant, lease, seq } => {
            if let Some(seq) = seq {
                state.0.notifier.advanced(actor.org, seq);
                tracing::info!(org = %actor.org, by = %actor.user, %package, ?grant, "package lease taken");
            }
            Ok(Json(LeaseGranted { lease: lease.view(package, now), grant }).into_response())
        }
        LeaseTake::Refused { refusal, lease } => {
            let message = refusal_message(&refusal, &lease.holder_name);
            let error = ErrorDetail { code: ErrorCode::PackageLocked.as_str().to_string(), message };
            Ok(Refused(LeaseRefusedBody { error, lease: lease.view(package, now) }).into_response())
        }
    }
}

async fn release(
    State(state): State<AppState>,
    actor: Actor,
    path: Result<Path<String>, PathRejection>,
) -> Result<StatusCode, ApiError> {
    let package = package_id(path)?;
    let now = state.0.clock.now();
    let a = actor.clone();
    if let Some(seq) = blocking(&state, move |s| s.release_lease(&a, package, now)).await? {
        state.0.notifier.advanced(actor.org, seq);
    }
    Ok(StatusCode::NO_CONTENT)
}
