//! [`MemoryEngine`]: an [`Engine`] in memory, for tests and ephemeral
//! databases.
//!
//! One `BTreeMap` per [`Space`] behind a single `RwLock`: a batch takes the
//! write lock once, so it is atomic for readers; nothing survives a drop, so
//! durability modes are ignored.

use std::collections::BTreeMap;
use std::ops::Bound;

use parking_lot::RwLock;

use crate::engine::{Durability, Engine, KeyRange, ScanIter, Space, WriteBatch, WriteOp};
use crate::Result;

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// How many pairs a scan copies out per lock acquisition at most: large
/// enough to amortise the lock, small enough that a long scan neither holds
/// the lock nor copies the whole range up front.
const SCAN_CHUNK: usize = 256;

/// The first chunk of a scan, doubled on every refill up to [`SCAN_CHUNK`]:
/// a scan its caller stops after a few pairs copies few pairs.
const FIRST_SCAN_CHUNK: usize = 16;

/// An in-memory [`Engine`].
///
/// Scans read in chunks of a few hundred pairs, each under the read lock: a
/// chunk is a consistent snapshot, but a long scan may see batches committed
/// after it started (in the keys it has not reached yet).
#[derive(Debug, Default)]
pub struct MemoryEngine {
    spaces: RwLock<[Map; 3]>,
}

impl MemoryEngine {
    /// An empty engine.
    pub fn new() -> MemoryEngine {
        MemoryEngine::default()
    }
}

fn index(space: Space) -> usize {
    match space {
        Space::Data => 0,
        Space::Meta => 1,
        Space::Heads => 2,
    }
}

impl Engine for MemoryEngine {
    fn get(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.spaces.read()[index(space)].get(key).cloned())
    }

    fn scan(&self, space: Space, range: KeyRange, reverse: bool) -> ScanIter<'_> {
        Box::new(ChunkedScan {
            engine: self,
            space,
            range,
            reverse,
            chunk: Vec::new().into_iter(),
            size: FIRST_SCAN_CHUNK,
            done: false,
        })
    }

    fn first(&self, space: Space, range: KeyRange) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        // Unlike a scan, which copies a chunk of pairs, this copies one.
        if range.is_empty() {
            return Ok(None);
        }
        let spaces = self.spaces.read();
        let first = spaces[index(space)].range(range).next();
        Ok(first.map(|(k, v)| (k.clone(), v.clone())))
    }

    fn write(&self, batch: WriteBatch, _durability: Durability) -> Result<()> {
        let mut spaces = self.spaces.write();
        for op in batch.into_ops() {
            match op {
                WriteOp::Put { space, key, value } => {
                    spaces[index(space)].insert(key, value);
                }
                WriteOp::Delete { space, key } => {
                    spaces[index(space)].remove(&key);
                }
            }
        }
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        Ok(())
    }
}

/// A scan that copies [`SCAN_CHUNK`] pairs at a time, then narrows its range
/// past the last key it returned.
struct ChunkedScan<'a> {
    engine: &'a MemoryEngine,
    space: Space,
    /// The part of the range not read yet.
    range: KeyRange,
    reverse: bool,
    chunk: std::vec::IntoIter<(Vec<u8>, Vec<u8>)>,
    /// Pairs the next refill copies.
    size: usize,
    done: bool,
}

impl ChunkedScan<'_> {
    fn refill(&mut self) {
        if self.range.is_empty() {
            self.done = true;
            return;
        }
        let spaces = self.engine.spaces.read();
        let map = &spaces[index(self.space)];
        let iter = map.range(self.range.clone());
        let size = self.size;
        let chunk: Vec<_> = if self.reverse {
            iter.rev()
                .take(size)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        } else {
            iter.take(size)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        drop(spaces);
        if chunk.len() < size {
            self.done = true;
        }
        self.size = (size * 2).min(SCAN_CHUNK);
        if let Some((last, _)) = chunk.last() {
            if self.reverse {
                self.range.end = Bound::Excluded(last.clone());
            } else {
                self.range.start = Bound::Excluded(last.clone());
            }
        }
        self.chunk = chunk.into_iter();
    }
}

impl Iterator for ChunkedScan<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(pair) = self.chunk.next() {
                return Some(Ok(pair));
            }
            if self.done {
                return None;
            }
            self.refill();
        }
    }
}
