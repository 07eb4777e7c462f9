//! The [`Engine`] trait: what Rowtree needs from an ordered key-value store.
//!
//! Keys and values are byte strings; keys are ordered lexicographically
//! (`memcmp`), which is why the key codec in `rowtree-encoding` makes byte
//! order equal SQL order. An engine offers:
//!
//! * point reads ([`Engine::get`]) and ordered range scans in either direction
//!   ([`Engine::scan`]);
//! * atomic write batches ([`Engine::write`]): every put and delete of a batch
//!   becomes visible at once, and after a crash either all of it or none of it
//!   is there. With [`Durability::Sync`] the call returns only once the batch is
//!   on disk;
//! * independent key spaces ([`Space::Data`], [`Space::Meta`] and
//!   [`Space::Heads`]), which one batch may update together (so a schema
//!   change and its data can commit atomically, and a row's version and its
//!   head).
//!
//! A write or a sync that fails leaves the engine unsure of what reached the
//! disk. An engine that can fail this way (the disk engine) then stops: that
//! call and every later write or sync return [`Error::Stopped`](crate::Error),
//! reads go on, and reopening the database recovers what is durable.

use std::ops::{Bound, RangeBounds};

use crate::Result;

/// One of the engine's independent, ordered key spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// Rows and index entries (MVCC versions).
    Data,
    /// Catalog, schema versions, sequences and other metadata.
    Meta,
    /// Each row's *head*: the timestamp of its newest version, written by
    /// the MVCC layer on engines that [prefer point
    /// gets](Engine::prefers_point_gets). Kept apart from the versions so
    /// that scans of [`Space::Data`] never step over them.
    Heads,
}

impl Space {
    /// Every space, in a fixed order.
    pub const ALL: [Space; 3] = [Space::Data, Space::Meta, Space::Heads];
}

/// A range of keys: a start and an end bound, each inclusive, exclusive or
/// unbounded.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyRange {
    /// The lower bound.
    pub start: Bound<Vec<u8>>,
    /// The upper bound.
    pub end: Bound<Vec<u8>>,
}

impl KeyRange {
    /// A range from explicit bounds.
    pub fn new(start: Bound<Vec<u8>>, end: Bound<Vec<u8>>) -> KeyRange {
        KeyRange { start, end }
    }

    /// Every key.
    pub fn all() -> KeyRange {
        KeyRange::new(Bound::Unbounded, Bound::Unbounded)
    }

    /// The half-open range `[start, end)`.
    pub fn half_open(start: impl Into<Vec<u8>>, end: impl Into<Vec<u8>>) -> KeyRange {
        KeyRange::new(Bound::Included(start.into()), Bound::Excluded(end.into()))
    }

    /// Every key that starts with `prefix`.
    pub fn prefix(prefix: &[u8]) -> KeyRange {
        let end = match prefix.iter().rposition(|&b| b != 0xFF) {
            Some(last) => {
                let mut end = prefix[..=last].to_vec();
                end[last] += 1;
                Bound::Excluded(end)
            }
            None => Bound::Unbounded,
        };
        KeyRange::new(Bound::Included(prefix.to_vec()), end)
    }

    /// Whether `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        let after_start = match &self.start {
            Bound::Included(s) => key >= s.as_slice(),
            Bound::Excluded(s) => key > s.as_slice(),
            Bound::Unbounded => true,
        };
        let before_end = match &self.end {
            Bound::Included(e) => key <= e.as_slice(),
            Bound::Excluded(e) => key < e.as_slice(),
            Bound::Unbounded => true,
        };
        after_start && before_end
    }

    /// Whether no key can lie in the range (`start > end`, or `start == end`
    /// with one bound exclusive). Engines must not pass such a range to
    /// `BTreeMap::range`, which panics on it.
    pub fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e))
            | (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
            _ => false,
        }
    }
}

impl From<(Bound<Vec<u8>>, Bound<Vec<u8>>)> for KeyRange {
    fn from((start, end): (Bound<Vec<u8>>, Bound<Vec<u8>>)) -> KeyRange {
        KeyRange::new(start, end)
    }
}

impl RangeBounds<Vec<u8>> for KeyRange {
    fn start_bound(&self) -> Bound<&Vec<u8>> {
        self.start.as_ref()
    }

    fn end_bound(&self) -> Bound<&Vec<u8>> {
        self.end.as_ref()
    }
}

/// How durable a write must be when [`Engine::write`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Durability {
    /// On disk (fsync/fdatasync) before returning: survives power loss. Use
    /// for acknowledged commits.
    Sync,
    /// Handed to the operating system before returning: survives a crash of
    /// the process (SIGKILL) but not of the machine, until the next
    /// [`Engine::sync`] or synced write. Use for work that can be redone
    /// (garbage collection) or when a later [`Engine::sync`] covers a group of
    /// commits.
    Buffered,
}

/// One operation of a [`WriteBatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// Set `key` to `value`.
    Put {
        /// The key space.
        space: Space,
        /// The key.
        key: Vec<u8>,
        /// The new value.
        value: Vec<u8>,
    },
    /// Remove `key` (no-op if absent).
    Delete {
        /// The key space.
        space: Space,
        /// The key.
        key: Vec<u8>,
    },
}

/// Puts and deletes, in either space, applied atomically by [`Engine::write`].
/// When several operations touch the same key, the last one wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<WriteOp>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> WriteBatch {
        WriteBatch::default()
    }

    /// Adds a put.
    pub fn put(&mut self, space: Space, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        self.ops.push(WriteOp::Put {
            space,
            key: key.into(),
            value: value.into(),
        });
    }

    /// Adds a delete.
    pub fn delete(&mut self, space: Space, key: impl Into<Vec<u8>>) {
        self.ops.push(WriteOp::Delete {
            space,
            key: key.into(),
        });
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch has no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations, in the order they were added.
    pub fn ops(&self) -> &[WriteOp] {
        &self.ops
    }

    /// Consumes the batch, yielding its operations in order.
    pub fn into_ops(self) -> Vec<WriteOp> {
        self.ops
    }
}

/// The iterator returned by [`Engine::scan`]: `(key, value)` pairs in key
/// order (or reverse order), or an error, after which it should be dropped.
pub type ScanIter<'a> = Box<dyn Iterator<Item = Result<(Vec<u8>, Vec<u8>)>> + Send + 'a>;

/// What [`Engine::get_via`] calls with the first key's value: the space and
/// key to read second, or `None` to stop.
pub type NextKey<'a> = dyn FnMut(&[u8]) -> Result<Option<(Space, Vec<u8>)>> + 'a;

/// An ordered byte key-value store with atomic batches and a few key spaces.
///
/// Implementations are shared between threads (`Send + Sync`); reads never
/// block on other reads.
pub trait Engine: Send + Sync + 'static {
    /// The value of `key` in `space`, if present.
    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// The pairs of `space` with keys in `range`, in ascending key order, or
    /// descending if `reverse`.
    ///
    /// Consistency: a scan never sees part of a batch in the pairs it reads
    /// together. Each implementation documents whether the whole scan reads one
    /// snapshot ([`FjallEngine`](crate::FjallEngine)) or may see batches
    /// committed while it runs ([`MemoryEngine`](crate::MemoryEngine)); the
    /// MVCC layer is correct with either, since versions are immutable.
    fn scan(&self, space: Space, range: KeyRange, reverse: bool) -> ScanIter<'_>;

    /// The first pair of `space` with a key in `range`, in ascending key
    /// order: one seek, as a point read of a row's newest visible version
    /// needs. The default takes the first item of a [`Engine::scan`];
    /// engines whose scans read ahead override it.
    fn first(&self, space: Space, range: KeyRange) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.scan(space, range, false).next().transpose()
    }

    /// Gets `key` in `space` and, if it is present and `next` turns its
    /// value into a second key (in any space), that key's value, both as of
    /// one moment: `None` if either is absent or `next` says `None`. A read
    /// that follows a pointer (a row's head to its newest version) takes one
    /// snapshot instead of two.
    fn get_via(&self, space: Space, key: &[u8], next: &mut NextKey<'_>) -> Result<Option<Vec<u8>>> {
        let Some(first) = self.get(space, key)? else {
            return Ok(None);
        };
        match next(&first)? {
            Some((space, second)) => self.get(space, &second),
            None => Ok(None),
        }
    }

    /// Whether an exact-key [`Engine::get`] costs much less than a
    /// [`Engine::first`] seek. True for an LSM tree, where a get is answered
    /// by one table (the others are skipped by their bloom filters) and a
    /// seek merges every table that overlaps the key; false (the default)
    /// for an ordered map, where both are one tree walk. The MVCC layer
    /// reads a row's newest version with two gets when this is true
    /// ([`Mvcc::get_at`](crate::Mvcc::get_at)).
    fn prefers_point_gets(&self) -> bool {
        false
    }

    /// Applies `batch` atomically: all of it or none of it becomes visible,
    /// also across a crash. With [`Durability::Sync`], returns only after the
    /// batch is on disk. After an error the batch is not visible to reads,
    /// but may or may not be on disk (see the module docs on stopping).
    fn write(&self, batch: WriteBatch, durability: Durability) -> Result<()>;

    /// Makes every write that has returned so far durable (one fsync for many
    /// [`Durability::Buffered`] writes: group commit).
    fn sync(&self) -> Result<()>;
}
