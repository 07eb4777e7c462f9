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
//!   space without gaps or overlaps, and cuts them at split points.
//! * [`Router`] is the only door to the data: it resolves every get, scan and
//!   write to the splits it touches and charges each split the rows, bytes,
//!   requests and CPU time it served ([`SplitStats`]). These counters are what
//!   split statistics, the key visualizer and load-based splitting read.
//!
//! Today splits are static (created at table boundaries and explicit split
//! points) and all live in one process over one storage engine; dynamic
//! splitting, merging and placement on nodes plug in here later.

mod error;
mod router;
mod split;
mod split_map;

pub use error::{Error, Result};
pub use router::{Router, RouterScan, SplitSnapshot, SplitsTouched};
pub use split::{NodeId, Split, SplitCounters, SplitId, SplitStats};
pub use split_map::SplitMap;
