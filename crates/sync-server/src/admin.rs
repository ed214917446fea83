//! Administration: organizations, users and devices, for the `admin` subcommand, tests and the benchmark.

use crate::auth::{self, PasswordError};
use crate::storage::{Login, StorageError, SyncStorage};
use chrono::{DateTime, Utc};
use pactwise_domain::{OrgId, Role, UserId};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("{0}")]
    Invalid(String),
}

fn check_slug(slug: &str) -> Result<(), AdminError> {
    let ok = !slug.is_empty()
        && slug.len() <= 64
        && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok { Ok(()) } else { Err(AdminError::Invalid("a slug is 1-64 of a-z, 0-9 and '-'".into())) }
}

pub fn create_org(storage: &dyn SyncStorage, slug: &str, name: &str, now: DateTime<Utc>) -> Result<OrgId, AdminError> {
    check_slug(slug)?;
    if name.trim().is_empty() {
        return Err(AdminError::Invalid("an organization needs a name".into()));
    }
    Ok(storage.create_org(slug, name.trim(), now)?)
}

pub fn create_user(
    storage: &dyn SyncStorage,
    org_slug: &str,
    email: &str,
    password: &str,
    role: Role,
    now: DateTime<Utc>,
) -> Result<UserId, AdminError> {
    let email = email.trim().to_lowercase();
    if !email.contains('@') || email.len() > 320 {
        return Err(AdminError::Invalid(format!("{email:?} is not an email address")));
    }
    let org = storage
        .org_by_slug(org_slug)?
        .ok_or_else(|| AdminError::Invalid(format!("no organization {org_slug:?}; create it first")))?;
    let hash = auth::hash_password(password)?;
    Ok(storage.create_user(org, &email, &hash, role, now)?)
}

/// Issue a device token for a user without a password round-trip (tests and the benchmark; an operator could use
/// it to provision a kiosk). Returns the token and the device id.
pub fn issue_device(
    storage: &dyn SyncStorage,
    org_slug: &str,
    email: &str,
    device_name: &str,
    now: DateTime<Utc>,
    ttl: chrono::Duration,
) -> Result<(String, Uuid), AdminError> {
    let login: Login = storage
        .find_login(org_slug, &email.trim().to_lowercase())?
        .ok_or_else(|| AdminError::Invalid(format!("no user {email:?} in {org_slug:?}")))?;
    let (token, hash) = auth::new_token();
    let device = storage.create_device(&login, device_name, &hash, now, now + ttl)?;
    Ok((token, device))
}
