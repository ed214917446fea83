//! The edit lease of an RFP package on the sync service (`/api/v1/leases/{package}`): one person of the organization
//! edits a package at a time, across all its desktops. The service's clock decides expiry and
//! `pactwise_rules::prep::lease::decide` decides who may take it. A take-over (and so the expiry it ends) and a
//! new holder are written by the service into the organization's log as a `prep_lease` event, so every desktop
//! knows who holds the lease and audits a take-over; a desktop never pushes one.

use crate::error::SyncError;
use crate::http::{HttpApi, check, clip, json_or_error, unreachable};
use crate::wire::{ErrorBody, ErrorDetail};
use chrono::{DateTime, Utc};
use pactwise_domain::UserId;
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// How long a lease lasts from its last take or renewal; every edit renews it.
pub const LEASE_MINUTES: i64 = 30;

/// `POST /api/v1/leases/{package}`: take or renew the caller's lease; `take_over` takes over another person's
/// expired lease (a live one is never taken over).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseRequest {
    #[serde(default)]
    pub take_over: bool,
}

/// A lease as the service holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseView {
    pub package_id: Uuid,
    pub holder: UserId,
    pub holder_name: String,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// Expired by the service's clock when it answered.
    pub expired: bool,
}

/// What a granted request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseGrantKind {
    Taken,
    Renewed,
    TakenOver,
}

/// The answer to a granted take (200).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseGranted {
    pub lease: LeaseView,
    pub grant: LeaseGrantKind,
}

/// The answer to a refused take (409): the stable code (`package_locked`), a message naming the holder and the
/// expiry, and the lease as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRefusedBody {
    pub error: ErrorDetail,
    pub lease: LeaseView,
}

/// `GET /api/v1/leases/{package}`: the lease, if anyone holds one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseStatus {
    pub lease: Option<LeaseView>,
}

/// What the client gets for a take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOutcome {
    Granted(LeaseGranted),
    Refused { message: String, lease: LeaseView },
}

/// What happened to a lease, as the service writes it into the organization's log (model `prep_lease`, an event;
/// record id: the package's id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseEventKind {
    Taken,
    TakenOver,
    Released,
}

/// A `prep_lease` event. `holder` is who holds the lease after it (who released it, for a release);
/// `previous_*` name the holder whose expired lease was taken over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseEvent {
    pub event: LeaseEventKind,
    pub holder: UserId,
    pub holder_name: String,
    pub acquired_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    #[serde(default)]
    pub previous_holder: Option<UserId>,
    #[serde(default)]
    pub previous_holder_name: Option<String>,
    #[serde(default)]
    pub previous_expires_at: Option<DateTime<Utc>>,
}

/// The longest name a lease event may carry.
pub const MAX_NAME: usize = 200;

impl LeaseEvent {
    pub fn to_event(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Read at the edge: the shape, names of text, a take-over that names whom it took over from.
    pub fn from_event(event: &Value) -> Result<Self, String> {
        let e: LeaseEvent =
            serde_json::from_value(event.clone()).map_err(|e| format!("a lease event is malformed: {e}"))?;
        let name_ok =
            |n: &str| !n.trim().is_empty() && n.chars().count() <= MAX_NAME && !n.chars().any(char::is_control);
        if !name_ok(&e.holder_name) || e.previous_holder_name.as_deref().is_some_and(|n| !name_ok(n)) {
            return Err("a lease event names a holder without a readable name".into());
        }
        let took_over = e.previous_holder.is_some() && e.previous_expires_at.is_some();
        if (e.event == LeaseEventKind::TakenOver) != took_over || e.expires_at < e.acquired_at {
            return Err("a lease event's take-over or times do not add up".into());
        }
        Ok(e)
    }
}

impl HttpApi {
    /// Takes or renews this device's user's lease on `package` (`take_over`: another person's expired one).
    pub async fn take_lease(&self, package: Uuid, take_over: bool) -> Result<LeaseOutcome, SyncError> {
        let response = self
            .authorized(self.client().post(self.url(&format!("/leases/{package}"))))
            .json(&LeaseRequest { take_over })
            .send()
            .await
            .map_err(unreachable)?;
        if response.status() == StatusCode::CONFLICT {
            let bytes = response.bytes().await.map_err(unreachable)?;
            if let Ok(body) = serde_json::from_slice::<LeaseRefusedBody>(&bytes) {
                return Ok(LeaseOutcome::Refused { message: clip(&body.error.message, 500), lease: body.lease });
            }
            let detail = serde_json::from_slice::<ErrorBody>(&bytes).ok().map(|b| b.error);
            return Err(SyncError::Rejected {
                code: detail.as_ref().map(|d| d.code.clone()).unwrap_or_else(|| "conflict".into()),
                message: detail.map(|d| clip(&d.message, 500)).unwrap_or_else(|| "HTTP 409".into()),
            });
        }
        json_or_error(response).await.map(LeaseOutcome::Granted)
    }

    /// Gives this device's user's lease back (nothing when they do not hold it).
    pub async fn release_lease(&self, package: Uuid) -> Result<(), SyncError> {
        let response = self
            .authorized(self.client().delete(self.url(&format!("/leases/{package}"))))
            .send()
            .await
            .map_err(unreachable)?;
        check(response).await.map(|_| ())
    }

    /// Who holds the lease on `package` now, by the service's clock.
    pub async fn lease(&self, package: Uuid) -> Result<LeaseStatus, SyncError> {
        let response = self
            .authorized(self.client().get(self.url(&format!("/leases/{package}"))))
            .send()
            .await
            .map_err(unreachable)?;
        json_or_error(response).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_lease_event_is_checked_at_the_edge() {
        let ann = UserId::new();
        let ok = LeaseEvent {
            event: LeaseEventKind::TakenOver,
            holder: ann,
            holder_name: "Ann".into(),
            acquired_at: "2026-03-01T09:00:00Z".parse().unwrap(),
            expires_at: "2026-03-01T09:30:00Z".parse().unwrap(),
            previous_holder: Some(UserId::new()),
            previous_holder_name: Some("Bob".into()),
            previous_expires_at: Some("2026-03-01T08:59:00Z".parse().unwrap()),
        };
        assert_eq!(LeaseEvent::from_event(&ok.to_event()).unwrap(), ok);
        let mut no_previous = ok.to_event();
        no_previous["previous_holder"] = Value::Null;
        assert!(LeaseEvent::from_event(&no_previous).is_err(), "a take-over names whom it took over from");
        let mut bad_name = ok.to_event();
        bad_name["holder_name"] = json!("\u{7}");
        assert!(LeaseEvent::from_event(&bad_name).is_err());
        let mut extra = ok.to_event();
        extra["org_id"] = json!("x");
        assert!(LeaseEvent::from_event(&extra).is_err());
        let mut backwards = ok.to_event();
        backwards["expires_at"] = json!("2026-03-01T08:00:00Z");
        assert!(LeaseEvent::from_event(&backwards).is_err());
    }
}
