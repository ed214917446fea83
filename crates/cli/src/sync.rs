//! `pactwise sync …`: sign in to the organization's sync service (with a password, or the first time with a
//! one-time code and a new password), sync now, show where sync stands, sign out. Secrets come from
//! `PACTWISE_SYNC_PASSWORD` / `PACTWISE_SYNC_CODE` or standard input, never from the command line; the device token
//! goes to the OS keychain.

use crate::output::{Outcome, clean};
use clap::Subcommand;
use pactwise_api::{Api, ApiError, CodeSignInInput, SignInInput, SyncPhase, SyncStatusView};
use pactwise_domain::ErrorCode;
use serde_json::json;

/// The environment variable the password may come from (else standard input).
pub const PASSWORD_ENV: &str = "PACTWISE_SYNC_PASSWORD";
/// The environment variable a one-time sign-in code may come from (else standard input).
pub const CODE_ENV: &str = "PACTWISE_SYNC_CODE";

fn read_code() -> Result<String, ApiError> {
    if let Ok(code) = std::env::var(CODE_ENV)
        && !code.trim().is_empty()
    {
        return Ok(code);
    }
    let code = crate::secret::read_secret(
        &format!("Type the one-time sign-in code and press Enter (or set {CODE_ENV}): "),
        crate::secret::Piped::FirstLine,
    )
    .map_err(|e| {
        ApiError::new(ErrorCode::InvalidInput, format!("could not read the code from stdin ({e}); pipe it in"))
    })?;
    if code.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("no sign-in code given: pipe it on standard input or set {CODE_ENV}"),
        ));
    }
    Ok(code)
}

#[derive(Subcommand)]
pub enum SyncCommand {
    /// Sign this install in to an organization of the sync service (password from PACTWISE_SYNC_PASSWORD or stdin).
    /// Its organization becomes current; the one used before stays here, apart (`pactwise org switch|bring`)
    SignIn {
        /// The service's address, e.g. https://sync.example.com (plain http:// only to this computer: localhost,
        /// 127.0.0.1, ::1). A private CA's root certificate: PACTWISE_SYNC_CA_FILE=FILE.pem
        #[arg(long, value_name = "URL")]
        server: String,
        /// The organization's short name, as its administrator gave it
        #[arg(long, value_name = "SLUG")]
        org: String,
        #[arg(long, value_name = "EMAIL")]
        email: String,
        /// First sign-in of a new member: the one-time code from your administrator (from PACTWISE_SYNC_CODE or the
        /// first line of stdin), then the password you choose (PACTWISE_SYNC_PASSWORD or the next line)
        #[arg(long)]
        code: bool,
    },
    /// One round now: push local changes (and their files), pull the others', fetch and import new documents
    Now,
    /// Where sync stands: pending uploads, files waiting, last success
    Status,
    /// Sign out of sync: the device token is revoked and leaves the keychain; the data stays here
    SignOut,
}

fn read_password() -> Result<String, ApiError> {
    if let Ok(password) = std::env::var(PASSWORD_ENV)
        && !password.is_empty()
    {
        return Ok(password);
    }
    let password = crate::secret::read_secret(
        &format!("Type the sync password and press Enter (it is not shown; or set {PASSWORD_ENV}): "),
        crate::secret::Piped::FirstLine,
    )
    .map_err(|e| {
        ApiError::new(ErrorCode::InvalidInput, format!("could not read the password from stdin ({e}); pipe it in"))
    })?;
    if password.is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("no password given: pipe it on standard input or set {PASSWORD_ENV}"),
        ));
    }
    Ok(password)
}

/// The status as one line of text.
pub fn status_text(s: &SyncStatusView) -> String {
    let phase = match s.phase {
        SyncPhase::NotSignedIn => {
            return "Sync: not signed in (local only). Sign in with `pactwise sync sign-in`.".into();
        }
        SyncPhase::Syncing => "syncing",
        SyncPhase::WaitingToRetry => "waiting to retry",
        SyncPhase::Pending => "changes waiting",
        SyncPhase::Synced => "synced",
        SyncPhase::NotSyncedYet => "not synced yet",
    };
    let mut text = format!("Sync: {phase}");
    if let (Some(account), Some(org)) = (&s.account, &s.org_name) {
        text.push_str(&format!(
            " · {} ({}) as {} on {}",
            clean(org),
            clean(&account.org_slug),
            clean(&account.email),
            clean(&account.server)
        ));
    }
    text.push_str(&format!(" · {} pending upload(s) · {} file(s) waiting", s.pending_uploads, s.files_waiting));
    match &s.last_success {
        Some(at) => text.push_str(&format!(" · last success {at}")),
        None => text.push_str(" · never synced"),
    }
    if let Some(e) = &s.last_error {
        text.push_str(&format!("\nlast error: {}", e.message));
    }
    if s.refused_total > 0 {
        text.push_str(&format!(
            "\n{} change(s) not accepted by the sync service (they stay on this computer only):",
            s.refused_total
        ));
        for r in &s.refused_changes {
            text.push_str(&format!("\n  {} ({}): {}", r.what, r.refused_at, r.reason));
        }
    }
    text
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, ApiError> {
    serde_json::to_value(value).map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))
}

pub async fn run(api: &Api, command: SyncCommand) -> Result<Outcome, ApiError> {
    match command {
        SyncCommand::SignIn { server, org, email, code } => {
            pactwise_api::check_server(&server)?;
            let before = match api.local_session().await {
                Ok(scope) => api.session_info(&scope).await.ok().map(|s| s.org_name),
                Err(_) => None,
            };
            let scope = if code {
                let code = read_code()?;
                let password = read_password()?;
                api.sync_sign_in_with_code(CodeSignInInput { server, org, email, code, password }).await?
            } else {
                let password = read_password()?;
                api.sync_sign_in(SignInInput { server, org, email, password }).await?
            };
            let status = api.sync_status().await?;
            let session = api.session_info(&scope).await?;
            let mut text = format!(
                "Signed in to {} as {} ({}); it is now the current organization. Sync with `pactwise sync now`.",
                clean(&session.org_name),
                clean(&session.user_name),
                session.role
            );
            if let Some(before) = before.filter(|b| *b != session.org_name) {
                text.push_str(&format!(
                    "\n{0} stays on this computer, apart: `pactwise org switch {0:?}` goes back to it, and \
                     `pactwise org bring {0:?}` brings its documents and corrections into {1}.",
                    clean(&before),
                    clean(&session.org_name)
                ));
            }
            Ok(Outcome::ok(json!({ "session": session, "sync": to_json(&status)? }), text))
        }
        SyncCommand::Now => {
            let report = api.sync_now().await?;
            let text = format!(
                "Pushed {} change(s) ({} file(s) uploaded), pulled {} ({} file(s) fetched, {} document(s) imported).\n{}",
                report.pushed,
                report.files_uploaded,
                report.pulled,
                report.files_fetched,
                report.documents_imported,
                status_text(&report.status)
            );
            Ok(Outcome::ok(to_json(&report)?, text))
        }
        SyncCommand::Status => {
            let status = api.sync_status().await?;
            Ok(Outcome::ok(to_json(&status)?, status_text(&status)))
        }
        SyncCommand::SignOut => {
            let status = api.sync_sign_out().await?;
            Ok(Outcome::ok(to_json(&status)?, "Signed out of sync; the data stays on this computer.".into()))
        }
    }
}
