//! The platform's own credential. Claiming queued tasks, claiming runs under a lease, committing a run's super-steps
//! and the watchdog's sweep are the platform's work, not a user's: they take a [`PlatformCredential`], which has
//! no public constructor from anything a user session holds. Only code that owns the [`Store`] itself (the
//! process's workers, never a Tauri command or an api function taking an `OrgScope`) can issue one.

use crate::Store;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformCredential {
    worker: String,
}

impl PlatformCredential {
    /// Issues the credential of one of this process's workers (`worker` names it in leases and claims).
    pub fn issue(_store: &Store, worker: &str) -> PlatformCredential {
        let worker = worker.trim();
        PlatformCredential { worker: if worker.is_empty() { "worker".to_string() } else { worker.to_string() } }
    }

    /// The worker's name, written into leases and claims.
    pub fn worker(&self) -> &str {
        &self.worker
    }
}
