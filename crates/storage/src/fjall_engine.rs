//! [`FjallEngine`]: the on-disk [`Engine`], on the fjall LSM tree.
//!
//! One fjall database holds one keyspace per [`Space`]; fjall write batches
//! span keyspaces atomically and go through one journal, so a batch touching
//! both spaces is all-or-nothing across a crash. Durability maps to fjall's
//! journal persistence: [`Durability::Sync`] is `PersistMode::SyncData`
//! (fdatasync before the write returns), [`Durability::Buffered`] is
//! `PersistMode::Buffer` (flushed to the OS: survives SIGKILL, not power loss).
//! Without either, fjall would keep the batch in its own buffer and a SIGKILL
//! could lose an acknowledged commit.

use std::path::Path;

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable};

use crate::engine::{Durability, Engine, KeyRange, ScanIter, Space, WriteBatch, WriteOp};
use crate::{Error, Result};

/// Tuning of a [`FjallEngine`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FjallOptions {
    /// Block cache capacity in bytes (default 64 MiB).
    pub cache_size: u64,
    /// Delete the directory when the engine is dropped (tests, scratch
    /// databases).
    pub temporary: bool,
}

impl Default for FjallOptions {
    fn default() -> Self {
        FjallOptions {
            cache_size: 64 * 1024 * 1024,
            temporary: false,
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
        let db = Database::builder(dir.as_ref())
            .cache_size(options.cache_size)
            .temporary(options.temporary)
            .open()
            .map_err(|e| match e {
                fjall::Error::Locked => Error::InUse(dir.as_ref().display().to_string()),
                other => Error::Engine(other),
            })?;
        let data = db.keyspace("data", KeyspaceCreateOptions::default)?;
        let meta = db.keyspace("meta", KeyspaceCreateOptions::default)?;
        Ok(FjallEngine { db, data, meta })
    }

    fn keyspace(&self, space: Space) -> &Keyspace {
        match space {
            Space::Data => &self.data,
            Space::Meta => &self.meta,
        }
    }
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

    fn write(&self, batch: WriteBatch, durability: Durability) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
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
        fjall_batch.commit()?;
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        self.db.persist(PersistMode::SyncData)?;
        Ok(())
    }
}
