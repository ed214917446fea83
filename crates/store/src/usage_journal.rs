//! The usage journal: where a priced model request is kept, on disk, between its call and the ledger batch that
//! writes it, so a crash at that boundary loses no priced call. Each process appends to a file of its own
//! (`<data dir>/usage-journal/<id>.jsonl`, one JSON record per line, synced) and holds an exclusive lock on it for its
//! life; the file is emptied once the batch holding its records is committed. At start, a file whose lock is free
//! belonged to a process that is gone: its records go into the ledger (kept once by record id, so a batch that was
//! committed before the file could be emptied is not counted twice) and the file is removed.

use crate::{Store, StoreError};
use pactwise_domain::usage::UsageRecord;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct UsageJournal {
    path: PathBuf,
    file: Mutex<File>,
}

impl UsageJournal {
    /// Opens a new journal for this process in `dir` (created if needed) and locks it.
    pub fn open(dir: &Path) -> Result<UsageJournal, StoreError> {
        fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let path = dir.join(format!("{}.jsonl", uuid::Uuid::now_v7()));
        let file =
            OpenOptions::new().create_new(true).append(true).open(&path).map_err(|e| StoreError::io(&path, e))?;
        file.lock().map_err(|e| StoreError::io(&path, e))?;
        Ok(UsageJournal { path, file: Mutex::new(file) })
    }

    fn file(&self) -> std::sync::MutexGuard<'_, File> {
        self.file.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends one record and syncs it to disk before returning.
    pub fn append(&self, record: &UsageRecord) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(record).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        line.push(b'\n');
        let mut file = self.file();
        file.write_all(&line).and_then(|()| file.sync_data()).map_err(|e| StoreError::io(&self.path, e))
    }

    /// Forgets every record appended so far (their batch is committed).
    pub fn clear(&self) -> Result<(), StoreError> {
        let file = self.file();
        file.set_len(0).and_then(|()| file.sync_data()).map_err(|e| StoreError::io(&self.path, e))
    }

    /// Writes into `store`'s ledger the records of every journal in `dir` no live process holds, then removes those
    /// files. Returns how many records were read (records already in the ledger are kept once).
    pub fn recover(dir: &Path, store: &Store) -> Result<usize, StoreError> {
        let Ok(entries) = fs::read_dir(dir) else { return Ok(0) };
        let mut recovered = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let Ok(file) = File::open(&path) else { continue };
            if file.try_lock().is_err() {
                continue; // A running process's own journal.
            }
            let mut records = Vec::new();
            for line in BufReader::new(&file).lines() {
                let line = line.map_err(|e| StoreError::io(&path, e))?;
                match serde_json::from_str::<UsageRecord>(&line) {
                    Ok(record) => records.push(record),
                    // A line cut short by the crash itself: the call it described had not been journaled yet.
                    Err(error) => {
                        tracing::warn!(path = %path.display(), %error, "an unreadable usage journal line is skipped")
                    }
                }
            }
            store.usage().record_batch(&records)?;
            recovered += records.len();
            tracing::info!(path = %path.display(), records = records.len(), "usage journal of a stopped process written");
            fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
        }
        Ok(recovered)
    }
}

impl Drop for UsageJournal {
    /// A clean exit leaves no file behind once everything is written (a non-empty one waits for the next start).
    fn drop(&mut self) {
        let empty = self.file().metadata().map(|m| m.len() == 0).unwrap_or(false);
        if empty {
            let _ = fs::remove_file(&self.path);
        }
    }
}
