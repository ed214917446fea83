//! The store on its own thread. The store's API is synchronous; async callers (the desktop shell, the async `api`)
//! send closures to this thread and await the answer, so SQLite work never blocks an async runtime.

use crate::{Store, StoreError};
use std::sync::mpsc;
use std::thread;

type Job = Box<dyn FnOnce(&mut Store) + Send>;

/// A handle to the store's thread. Cloning shares the thread; it ends when the last handle is dropped.
#[derive(Clone)]
pub struct Db {
    jobs: mpsc::Sender<Job>,
}

impl Db {
    pub fn spawn(mut store: Store) -> Db {
        let (jobs, inbox) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("pactwise-store".into())
            .spawn(move || {
                for job in inbox {
                    job(&mut store);
                }
            })
            .map(|_| ())
            .unwrap_or_else(|e| tracing::error!(error = %e, "could not start the store thread"));
        Db { jobs }
    }

    /// Runs `f` on the store thread and awaits its result.
    pub async fn call<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Store) -> Result<R, StoreError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Box::new(move |store| {
                let _ = reply.send(f(store));
            }))
            .map_err(|_| StoreError::WorkerGone)?;
        answer.await.map_err(|_| StoreError::WorkerGone)?
    }

    /// Runs `f` on the store thread and blocks the calling thread until it answers. For synchronous callers that
    /// run on an async runtime's thread anyway (the sync client's `LocalReplica` calls): the store thread needs no
    /// runtime, so this cannot deadlock on one; keep the work short.
    pub fn call_blocking<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Store) -> Result<R, StoreError> + Send + 'static,
    {
        let (reply, answer) = mpsc::sync_channel(1);
        self.jobs
            .send(Box::new(move |store| {
                let _ = reply.send(f(store));
            }))
            .map_err(|_| StoreError::WorkerGone)?;
        answer.recv().map_err(|_| StoreError::WorkerGone)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pactwise_domain::SystemClock;
    use std::sync::Arc;

    #[tokio::test]
    async fn calls_run_on_the_store_thread_and_return_their_result() {
        let store = Store::open_in_memory(Arc::new(SystemClock)).unwrap();
        let db = Db::spawn(store);
        let name = db.call(|_| Ok(thread::current().name().map(str::to_owned))).await.unwrap();
        assert_eq!(name.as_deref(), Some("pactwise-store"));
        let version = db.call(|s| s.schema_version()).await.unwrap();
        assert_eq!(version, crate::SCHEMA_VERSION);
    }
}
