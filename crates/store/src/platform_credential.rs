//! The platform's own credential. Claiming queued tasks, claiming runs under a lease, committing a run's super-steps
//! and the watchdog's sweep are the platform's work, not a user's: they take a [`PlatformCredential`].
//!
//! **How it is kept from tenant code.** The credential has private fields and exactly one way in:
//! [`Store::into_platform_worker`], which takes the [`Store`] *by value*. Tenant code never owns a store: the
//! repositories, the api's functions and the Tauri commands see `&Store` (the closures of `Db::call`) and an
//! [`crate::OrgScope`], and neither can be turned into a credential. Only the code that opens a database and keeps it
//! — the process's worker path (`Api::open`, which keeps the credential for the engine it drives; a report run on its
//! own connection; the engine benchmark; tests that own their store) — can enter the platform path, by name, in one
//! visible call. A credential may name further workers ([`PlatformCredential::for_worker`]); it cannot be made from
//! anything a session holds.
//!
//! Code that only borrows the store does not compile:
//!
//! ```compile_fail,E0507
//! fn tenant_code(store: &pactwise_store::Store) {
//!     let _ = store.into_platform_worker("sneaky"); // cannot move out of a borrowed store
//! }
//! ```
//!
//! nor does building the credential by hand:
//!
//! ```compile_fail,E0451
//! let _ = pactwise_store::PlatformCredential { worker: "sneaky".to_string() }; // private field
//! ```

use crate::Store;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformCredential {
    worker: String,
}

fn worker_name(worker: &str) -> String {
    let worker = worker.trim();
    if worker.is_empty() { "worker".to_string() } else { worker.to_string() }
}

impl PlatformCredential {
    /// The credential of another worker of the same platform (`worker` names it in leases and claims).
    pub fn for_worker(&self, worker: &str) -> PlatformCredential {
        PlatformCredential { worker: worker_name(worker) }
    }

    /// The worker's name, written into leases and claims.
    pub fn worker(&self) -> &str {
        &self.worker
    }
}

/// A store entered on the platform worker path, with the credential of one worker. See the module documentation.
pub struct PlatformWorker {
    store: Store,
    credential: PlatformCredential,
}

impl Store {
    /// The platform worker path: gives this store up to a [`PlatformWorker`] named `worker` (its name in leases and
    /// claims). It takes the store by value, so code that only borrows a store — every tenant-scoped path — cannot
    /// call it.
    pub fn into_platform_worker(self, worker: &str) -> PlatformWorker {
        PlatformWorker { store: self, credential: PlatformCredential { worker: worker_name(worker) } }
    }
}

impl PlatformWorker {
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn credential(&self) -> &PlatformCredential {
        &self.credential
    }

    /// The store and the credential apart (the api keeps the credential beside the store's thread).
    pub fn into_parts(self) -> (Store, PlatformCredential) {
        (self.store, self.credential)
    }
}
