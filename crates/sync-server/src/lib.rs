//! The hosted sync service, as a library with a thin binary (`pactwise-sync-server`). Owns tenancy and auth
//! (organizations, users with roles, devices with bearer tokens stored only as hashes, argon2 passwords), the
//! per-organization change log (server-assigned sequence, idempotent pushes, paged pulls), the server-side approval
//! check that stamps exactly one decision per step, content-addressed blobs, and the HTTP surface (`/api/v1`, size
//! and rate limits, structured errors that never leak internals, `/health`, `/metrics`, graceful shutdown), served
//! over TLS by the service itself (rustls) or as plain HTTP for loopback and a TLS proxy in front. Connected
//! desktops learn of new changes at once through the push channel (a long poll woken by the organization's own
//! pushes, [`notify`]).
//!
//! Storage sits behind one trait, [`storage::SyncStorage`], with two implementations: embedded SQLite (the default,
//! no setup) and PostgreSQL. The same test suite runs against both.
//!
//! The organization of every request comes from its bearer token, never from the request.

pub mod admin;
pub mod auth;
pub mod drain;
pub mod http;
pub mod leases;
pub mod listen;
pub mod members;
pub mod metrics;
pub mod notify;
pub mod postgres;
pub mod rate;
pub mod source;
pub mod source_files;
pub mod source_pg;
pub mod source_rows;
pub mod source_store;
pub mod source_uploads;
pub mod sqlite;
pub mod steps;
pub mod storage;
pub mod vendor_page;

pub use http::{AppState, ServerConfig};
pub use listen::{load_tls, serve, serve_tls};
pub use storage::{Actor, StorageError, SyncStorage};

use std::sync::Arc;

/// The service's HTTP routes over `state` (`/api/v1`, with the members, lease and Source routes, `/health`,
/// `/metrics`, and the vendor page under `/source/`).
pub fn router(state: AppState) -> axum::Router {
    http::router_with(
        state,
        members::routes().merge(leases::routes()).merge(source::routes()).merge(source_uploads::routes()),
    )
    .merge(vendor_page::routes())
}

/// Open storage from a database URL: `sqlite:PATH` (or a plain path) or `postgres://…`.
pub fn open_storage(url: &str) -> Result<Arc<dyn SyncStorage>, StorageError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(postgres::PgStorage::connect(url, 16)?))
    } else {
        let path = url.strip_prefix("sqlite:").unwrap_or(url);
        Ok(Arc::new(sqlite::SqliteStorage::open(std::path::Path::new(path))?))
    }
}
