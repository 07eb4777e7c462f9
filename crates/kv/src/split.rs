//! One split: a key range `[start, limit)`, the node serving it, and its load
//! counters.

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::load::LoadTracker;

/// The identity of a split. Ids are never reused: when a split is cut in two,
/// both halves get new ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SplitId(pub u64);

impl fmt::Display for SplitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "split-{}", self.0)
    }
}

/// The node (an executor in-process, later a server) that serves a split.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub struct NodeId(pub u32);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node-{}", self.0)
    }
}

/// A contiguous range of the key space, served by one node.
pub struct Split {
    /// Its identity.
    pub id: SplitId,
    /// The first key of the split (inclusive); empty for the first split.
    pub start: Vec<u8>,
    /// The first key after the split (exclusive); `None` for the last split.
    pub limit: Option<Vec<u8>>,
    /// The node serving it (changed by [`SplitMap::set_node`](crate::SplitMap::set_node)).
    node: AtomicU32,
    /// Load served since the split was created.
    pub stats: SplitStats,
    /// Recent load and key sample, for load-based splitting.
    pub load: Mutex<LoadTracker>,
    /// When the split was created (nanoseconds; 0 if unknown).
    pub created_at: u64,
}

impl fmt::Debug for Split {
    /// Everything but the load tracker's buckets (too long to read).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Split")
            .field("id", &self.id)
            .field("start", &self.start)
            .field("limit", &self.limit)
            .field("node", &self.node())
            .field("created_at", &self.created_at)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Split {
    /// A split of `[start, limit)` on `node` with zeroed counters.
    pub fn new(id: SplitId, start: Vec<u8>, limit: Option<Vec<u8>>, node: NodeId) -> Split {
        Split::new_at(id, start, limit, node, 0)
    }

    /// A split created at `created_at` (its load tracker starts then).
    pub fn new_at(
        id: SplitId,
        start: Vec<u8>,
        limit: Option<Vec<u8>>,
        node: NodeId,
        created_at: u64,
    ) -> Split {
        Split {
            id,
            start,
            limit,
            node: AtomicU32::new(node.0),
            stats: SplitStats::default(),
            load: Mutex::new(LoadTracker::starting_at(created_at)),
            created_at,
        }
    }

    /// A split read back from storage: created at `created_at`, its load
    /// tracker (whose past was not kept) starting at `now`.
    pub(crate) fn restored(
        id: SplitId,
        start: Vec<u8>,
        limit: Option<Vec<u8>>,
        node: NodeId,
        created_at: u64,
        now: u64,
    ) -> Split {
        let mut split = Split::new_at(id, start, limit, node, created_at);
        split.load = Mutex::new(LoadTracker::starting_at(now));
        split
    }

    /// The node serving the split now.
    pub fn node(&self) -> NodeId {
        NodeId(self.node.load(Ordering::Relaxed))
    }

    pub(crate) fn store_node(&self, node: NodeId) {
        self.node.store(node.0, Ordering::Relaxed);
    }

    /// Whether `key` lies in `[start, limit)`.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.limit.as_deref().is_none_or(|limit| key < limit)
    }
}

/// Load counters of a split, updated concurrently by every request that
/// touches it (relaxed atomics: each counter is exact, but a snapshot of
/// several counters is not one instant).
#[derive(Debug, Default)]
pub struct SplitStats {
    reads: AtomicU64,
    rows_read: AtomicU64,
    bytes_read: AtomicU64,
    writes: AtomicU64,
    rows_written: AtomicU64,
    bytes_written: AtomicU64,
    cpu_nanos: AtomicU64,
}

/// A plain copy of [`SplitStats`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SplitCounters {
    /// Read requests (gets, and scans that touched the split).
    pub reads: u64,
    /// Rows returned.
    pub rows_read: u64,
    /// Key and value bytes returned.
    pub bytes_read: u64,
    /// Write requests (commits that wrote to the split).
    pub writes: u64,
    /// Rows written (puts and deletes).
    pub rows_written: u64,
    /// Key and value bytes written.
    pub bytes_written: u64,
    /// CPU time spent serving the split, in nanoseconds.
    pub cpu_nanos: u64,
}

impl SplitStats {
    /// Records one read request that returned `rows` rows of `bytes` bytes.
    pub fn record_read(&self, requests: u64, rows: u64, bytes: u64) {
        self.reads.fetch_add(requests, Ordering::Relaxed);
        self.rows_read.fetch_add(rows, Ordering::Relaxed);
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Records `requests` write requests writing `rows` rows of `bytes` bytes.
    pub fn record_write(&self, requests: u64, rows: u64, bytes: u64) {
        self.writes.fetch_add(requests, Ordering::Relaxed);
        self.rows_written.fetch_add(rows, Ordering::Relaxed);
        self.bytes_written.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Records CPU time spent on the split.
    pub fn record_cpu(&self, cpu: Duration) {
        let nanos = u64::try_from(cpu.as_nanos()).unwrap_or(u64::MAX);
        self.cpu_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The current values.
    pub fn snapshot(&self) -> SplitCounters {
        SplitCounters {
            reads: self.reads.load(Ordering::Relaxed),
            rows_read: self.rows_read.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            rows_written: self.rows_written.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            cpu_nanos: self.cpu_nanos.load(Ordering::Relaxed),
        }
    }
}
