//! [`FjallEngine`]: the on-disk [`Engine`], on the fjall LSM tree.
//!
//! One fjall database holds one keyspace per [`Space`]; fjall write batches
//! span keyspaces atomically and go through one journal, so a batch touching
//! several spaces is all-or-nothing across a crash. Durability maps to fjall's
//! journal persistence: [`Durability::Sync`] is `PersistMode::SyncData`
//! (fdatasync before the write returns), [`Durability::Buffered`] is
//! `PersistMode::Buffer` (flushed to the OS: survives SIGKILL, not power loss).
//! Without either, fjall would keep the batch in its own buffer and a SIGKILL
//! could lose an acknowledged commit.
//!
//! # Failures
//!
//! * A failed write or fsync stops the engine: it returns
//!   [`Error::Stopped`] then and for every later write, and keeps serving
//!   reads. After a failed fsync the kernel may have dropped the dirty pages
//!   and cleared the error, so a retried fsync could "succeed" without the
//!   data being on disk; the only safe way on is to reopen, which replays the
//!   journal from what really is on disk. fjall poisons itself the same way;
//!   this engine keeps the first cause so every refused write can name it.
//! * fjall checksums every journal batch (xxh3) and every block of its
//!   tables (xxh3, checked each time a block is read from disk). A torn last
//!   batch of the journal is dropped at open (it was never acknowledged); any
//!   other checksum failure comes back as [`Error::Corrupt`] and the bytes are
//!   not served.
//!
//! # Fail points
//!
//! With the `failpoints` feature, the fault-injection tests can make a write
//! fail before fjall sees it (see docs/reliability.md): `storage::fjall::write`
//! (every batch write) and `storage::fjall::fsync` (every synced write and
//! [`Engine::sync`]). Configured as `return` they fail with EIO, as
//! `return(enospc)` with ENOSPC (the disk is full).

use std::path::Path;

use fjall::config::PinningPolicy;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable};
use parking_lot::Mutex;

use crate::engine::{Durability, Engine, KeyRange, NextKey, ScanIter, Space, WriteBatch, WriteOp};
use crate::error::{Failed, Stop};
use crate::{Error, Result};

/// Tuning of a [`FjallEngine`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FjallOptions {
    /// Block cache capacity in bytes (default 64 MiB).
    pub cache_size: u64,
    /// Delete the directory when the engine is dropped (tests, scratch
    /// databases).
    pub temporary: bool,
    /// How large a keyspace's in-memory table grows before fjall writes it
    /// out as a table file (default 64 MiB, fjall's). Fixed when a directory
    /// is created: reopening keeps the size it was created with.
    pub memtable_size: u64,
}

impl Default for FjallOptions {
    fn default() -> Self {
        FjallOptions {
            cache_size: 64 * 1024 * 1024,
            temporary: false,
            memtable_size: 64 * 1024 * 1024,
        }
    }
}

/// An [`Engine`] stored in a directory by fjall.
///
/// Reads go through a fjall snapshot: a get or a whole scan sees exactly the
/// batches whose write had finished when it started, never part of a batch.
pub struct FjallEngine {
    db: Database,
    data: Keyspace,
    meta: Keyspace,
    heads: Keyspace,
    /// The first failed write or fsync; once set, every write is refused
    /// with it (see the module docs).
    stopped: Mutex<Option<Stop>>,
}

impl std::fmt::Debug for FjallEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FjallEngine").finish_non_exhaustive()
    }
}

impl FjallEngine {
    /// Opens the database in `dir`, creating it if needed, and recovers
    /// every batch whose write had returned before a crash (all of those
    /// written with [`Durability::Sync`]).
    pub fn open(dir: impl AsRef<Path>, options: FjallOptions) -> Result<FjallEngine> {
        let builder = Database::builder(dir.as_ref())
            .cache_size(options.cache_size)
            .temporary(options.temporary);
        // Recovery decodes whatever is on disk, and a damaged journal can
        // trip one of fjall's assertions: report that as the error it is
        // rather than let the panic cross the caller.
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.open()))
            .map_err(|panic| {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("no message");
                Error::Corrupt(format!(
                    "the disk engine panicked while recovering the data directory ({what}); \
                     a damaged file is the likely cause"
                ))
            })?;
        let db = opened.map_err(|e| match e {
            fjall::Error::Locked => Error::InUse(dir.as_ref().display().to_string()),
            other => Error::from(other),
        })?;
        // Index blocks stay in memory on every level (fjall pins only L0's
        // and L1's): a read seeks by key range, so each table that overlaps
        // the key is searched through its index, and an index block evicted
        // from the block cache by data blocks is read and parsed again in
        // full (hundreds of KB for a 64 MiB table) on the next read. Pinned,
        // they cost about 1% of the data held. Fixed when a keyspace is
        // created, like the memtable size.
        let keyspace_options = || {
            KeyspaceCreateOptions::default()
                .max_memtable_size(options.memtable_size)
                .index_block_pinning_policy(PinningPolicy::all(true))
        };
        let data = db.keyspace("data", keyspace_options)?;
        let meta = db.keyspace("meta", keyspace_options)?;
        // Created on first open by a build that has it, empty until then:
        // a directory from an older build opens unchanged.
        let heads = db.keyspace("heads", keyspace_options)?;
        Ok(FjallEngine {
            db,
            data,
            meta,
            heads,
            stopped: Mutex::new(None),
        })
    }

    fn keyspace(&self, space: Space) -> &Keyspace {
        match space {
            Space::Data => &self.data,
            Space::Meta => &self.meta,
            Space::Heads => &self.heads,
        }
    }

    /// Refuses a write once the engine has stopped.
    fn check_running(&self) -> Result<()> {
        match &*self.stopped.lock() {
            Some(stop) => Err(Error::Stopped(stop.clone())),
            None => Ok(()),
        }
    }

    /// Stops the engine because of `error` (unless it stopped already) and
    /// returns the error every write gets from now on: the first cause.
    fn stop(&self, error: Error) -> Error {
        let stop = match error {
            Error::Stopped(stop) => stop,
            other => Stop {
                failed: Failed::WriteOrFsync,
                cause: other.to_string(),
                disk_full: false,
            },
        };
        let mut stopped = self.stopped.lock();
        Error::Stopped(stopped.get_or_insert(stop).clone())
    }

    /// Stops the engine because fjall failed `failed`.
    fn stop_fjall(&self, failed: Failed, error: fjall::Error) -> Error {
        let error = match crate::error::io_error(&error) {
            Some(io) => Error::Stopped(Stop::io(failed, io)),
            None => Error::from(error),
        };
        self.stop(error)
    }

    /// A failure of `failed` injected by the fail point `point`, if the tests
    /// configured one.
    fn injected(&self, point: &str, failed: Failed) -> Result<()> {
        match injected_io_error(point) {
            Some(e) => Err(self.stop(Error::Stopped(Stop::io(failed, &e)))),
            None => Ok(()),
        }
    }
}

/// The I/O error the fail point `point` injects: with `return(enospc)`,
/// ENOSPC; with `return` or `return(eio)`, EIO.
#[cfg(feature = "failpoints")]
fn injected_io_error(point: &str) -> Option<std::io::Error> {
    fail::eval(point, |arg| match arg.as_deref() {
        Some("enospc") => std::io::Error::from_raw_os_error(28),
        _ => std::io::Error::from_raw_os_error(5),
    })
}

/// Without the `failpoints` feature nothing is ever injected.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
fn injected_io_error(_point: &str) -> Option<std::io::Error> {
    None
}

impl Engine for FjallEngine {
    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        // Reading through a snapshot (not `Keyspace::get`, which reads the
        // newest sequence number) hides batches that are still being applied.
        let snapshot = self.db.snapshot();
        Ok(snapshot.get(self.keyspace(space), key)?.map(|v| v.to_vec()))
    }

    fn scan(&self, space: Space, range: KeyRange, reverse: bool) -> ScanIter<'_> {
        if range.is_empty() {
            return Box::new(std::iter::empty());
        }
        // As in `get`: a snapshot never shows part of a batch.
        let iter = self.db.snapshot().range(self.keyspace(space), range);
        let convert = |guard: fjall::Guard| {
            let (k, v) = guard.into_inner()?;
            Ok((k.to_vec(), v.to_vec()))
        };
        if reverse {
            Box::new(iter.rev().map(convert))
        } else {
            Box::new(iter.map(convert))
        }
    }

    fn first(&self, space: Space, range: KeyRange) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if range.is_empty() {
            return Ok(None);
        }
        let mut iter = self.db.snapshot().range(self.keyspace(space), range);
        match iter.next() {
            None => Ok(None),
            Some(guard) => {
                let (k, v) = guard.into_inner()?;
                Ok(Some((k.to_vec(), v.to_vec())))
            }
        }
    }

    fn get_via(&self, space: Space, key: &[u8], next: &mut NextKey<'_>) -> Result<Option<Vec<u8>>> {
        // One snapshot for both gets: opening one registers it with fjall's
        // tracker, which concurrent readers share.
        let snapshot = self.db.snapshot();
        let keyspace = self.keyspace(space);
        let Some(first) = snapshot.get(keyspace, key)? else {
            return Ok(None);
        };
        let Some((space, second)) = next(&first)? else {
            return Ok(None);
        };
        Ok(snapshot
            .get(self.keyspace(space), &second)?
            .map(|v| v.to_vec()))
    }

    fn prefers_point_gets(&self) -> bool {
        // A get consults each table's bloom filter and reads one block; a
        // seek reads a block from every table overlapping the key (one per
        // level and more in level 0): about 17 against 33 µs per row read
        // with a million 1 KB rows (`docs/performance.md`).
        true
    }

    fn write(&self, batch: WriteBatch, durability: Durability) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.check_running()?;
        self.injected("storage::fjall::write", Failed::Write)?;
        if durability == Durability::Sync {
            self.injected("storage::fjall::fsync", Failed::Fsync)?;
        }
        let mode = match durability {
            Durability::Sync => PersistMode::SyncData,
            Durability::Buffered => PersistMode::Buffer,
        };
        let mut fjall_batch = self.db.batch().durability(Some(mode));
        for op in batch.into_ops() {
            match op {
                WriteOp::Put { space, key, value } => {
                    fjall_batch.insert(self.keyspace(space), key, value)
                }
                WriteOp::Delete { space, key } => fjall_batch.remove(self.keyspace(space), key),
            }
        }
        // fjall applies the batch to its memtables only once the journal
        // write (and fsync) succeeded, so reads never see a failed batch;
        // whether it reached the disk is unknown (the next open may recover
        // it from the journal).
        let failed = match durability {
            Durability::Sync => Failed::WriteOrFsync,
            Durability::Buffered => Failed::Write,
        };
        fjall_batch.commit().map_err(|e| self.stop_fjall(failed, e))
    }

    fn sync(&self) -> Result<()> {
        self.check_running()?;
        self.injected("storage::fjall::fsync", Failed::Fsync)?;
        self.db
            .persist(PersistMode::SyncData)
            .map_err(|e| self.stop_fjall(Failed::Fsync, e))
    }
}
