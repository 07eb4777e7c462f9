//! The key space cut into splits, and the router every data access goes through.
//!
//! Spanner divides each table's key space into *splits*: contiguous ranges of
//! keys `[start, limit)`, each served by one node. Splits are the unit of
//! distribution and of load: a read or write that touches two splits costs
//! more than one that touches one (and a transaction writing to several
//! splits pays two-phase commit), and a split that receives too much load is
//! a hotspot until it is split.
//!
//! * [`SplitMap`] holds the current splits, which always cover the whole key
//!   space without gaps or overlaps, cuts them at split points, merges
//!   neighbours and records which node serves each ([`Split::node`]).
//! * [`Router`] is the only door to storage: it resolves every get and scan
//!   of row data, and every commit's writes, to the splits they touch and
//!   charges each split the rows, bytes, requests and CPU time it served
//!   ([`SplitStats`], cumulative), and records each access, stamped with its
//!   clock, in the split's [`LoadTracker`]. Its [`Router::write`] is the one
//!   write path to storage; metadata, raw scans of what a split stores and
//!   garbage collection go through it too, uncharged. Because every
//!   versioned write passes through it, it also knows when a garbage
//!   collection pass can find nothing and may be skipped ([`gc_watch`]).
//!
//! # Splits that follow the load
//!
//! (The behaviour is specified in `docs/design/splits.md`.) All of it takes
//! time as an argument (`now`, nanoseconds): nothing here reads the wall
//! clock, so the database can inject its clock and the simulator virtual
//! time.
//!
//! 1. **Measure** ([`load`]): each split's [`LoadTracker`] keeps per-second
//!    buckets over a sliding 60 s window (requests, rows, bytes, CPU) and a
//!    reservoir sample of up to 20 accessed keys, each counting the accesses
//!    left of it, right of it, and the scans spanning it, plus how many
//!    accesses went beyond the largest (or smallest) key seen so far. The CPU
//!    score is CPU-seconds per second in percent of a node.
//! 2. **Decide** ([`policy`]): a split above `size_limit` is cut at its median
//!    row; a split with a score at or above `split_threshold` for `hot_for` is
//!    cut at the most balanced sampled key (imbalance under 0.25, spanning
//!    under 0.5), aligned to a root-row boundary by the [`KeyAligner`] (or a
//!    child-row boundary, to isolate a hot child row). If no key helps, the
//!    split is *unsplittable*, and the sample tells why
//!    ([`UnsplittableReason`]): sequential keys (`MOVING_HOT_SPOT`), one hot
//!    row (`HOT_ROW`, `UNISOLATABLE_HOT_ROW`), scans over everything
//!    (`LARGE_SCAN_HOT_SPOT`).
//! 3. **Act** ([`manager`]): [`SplitManager::tick`] applies the decisions:
//!    cuts (both halves stay on the parent's node), merges of neighbours
//!    that stayed cold for `merge_after` (never across a live manual split
//!    point), and every `interval` the [`Balancer`] ([`balance`]) moves a
//!    split off a node that stayed overloaded for `move_after` to the least
//!    loaded node. Every change is a [`SplitEvent`].
//! 4. **Remember** ([`history`]): every minute the manager rolls the trackers
//!    up into the [`LoadHistory`] (1-minute rows for 24 h, 10-minute for 4
//!    days, 1-hour for 30 days), the source of `SPANNER_SYS.SPLIT_STATS_*`
//!    and the key visualizer. Each row also carries [`KeyBuckets`]
//!    ([`buckets`]): where inside the split's range the interval's load
//!    fell, from the tracker's per-interval key sample.
//! 5. **Keep** ([`persist`]): the map and the manager's boundary state (manual
//!    split points, mergeable boundaries, the next id) convert to one
//!    versioned, validated [`SplitsRecord`] ([`SplitManager::to_record`],
//!    [`SplitManager::restore`]), which the database stores whenever
//!    [`SplitManager::generation`] changes and restores at open.
//!
//! All splits live in one process over one storage engine; a node is a
//! label the executor (or the simulator) uses to share capacity. With a
//! [`NodeGate`] ([`nodes`]) the router makes each access wait for its
//! split's node, so a node's capacity is real on one machine.

pub mod balance;
pub mod buckets;
mod clock;
mod error;
pub mod gc_watch;
pub mod history;
pub mod load;
pub mod manager;
pub mod nodes;
pub mod persist;
pub mod policy;
pub mod replication;
mod router;
mod split;
mod split_map;

pub use balance::{Balancer, BalancerConfig, Move};
pub use buckets::KeyBuckets;
pub use clock::{system_clock, RouterClock};
pub use error::{Error, Result};
pub use gc_watch::GcWatch;
pub use history::{Granularity, IntervalStat, LoadHistory};
pub use load::{
    Access, AccessKind, KeySample, LoadRate, LoadTotals, LoadTracker, SampleSnapshot,
    FRONTIER_LAG_SECS,
};
pub use manager::{ManagerConfig, SplitEvent, SplitManager, SplitReason, SplitSizes};
pub use nodes::NodeGate;
pub use persist::{ManualPoint, SplitRecord, SplitsRecord, SPLITS_RECORD_VERSION};
pub use policy::{KeyAligner, LoadDecision, RawKeys, SplitPolicy, UnsplittableReason};
pub use replication::{
    Commit, CommitGroup, ElsewhereCommit, ElsewhereWrite, KeySpan, RemoteBatch, RemoteRead,
    Replication, TxnRef,
};
pub use router::{
    Router, RouterScan, SplitSnapshot, SplitsTouched, SAMPLED_WRITES_PER_SPLIT,
    WRITE_CPU_NANOS_PER_ROW,
};
pub use split::{NodeId, Split, SplitCounters, SplitId, SplitStats};
pub use split_map::SplitMap;
