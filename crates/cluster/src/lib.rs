//! Rowtree as a cluster: every split a Raft group (design:
//! `docs/design/cluster.md`; the library is openraft, ADR 3).
//!
//! In a cluster, a split is replicated on several nodes. What one replica
//! holds is the split's key range in its node's storage engine, exactly as
//! a single process stores it, plus a small *applied state*. The group's
//! Raft log orders the changes; every replica applies the same entries in
//! the same order and so ends in the same state. This crate holds the
//! pieces every other part of the cluster builds on:
//!
//! * [`command`]: what a log entry carries ([`Command`]) and its binary
//!   form, versioned and decoded defensively (an entry arrives from another
//!   process, so malformed bytes must give an error, never a panic or an
//!   unbounded allocation);
//! * [`replica`]: the replica state machine ([`Replica`]), which applies an
//!   entry through the router's write path as one engine batch together
//!   with the applied state, so that replaying the log after a crash is
//!   idempotent, and which checks on every entry the invariants that are
//!   local to one replica (keys inside the split's range, timestamps above
//!   every stored version and above the closed timestamp, no gap in the
//!   log), and which can be copied whole as a [`SnapshotImage`];
//! * [`twophase`]: what a replica keeps of two-phase commit (the
//!   transactions prepared on its split, the outcomes decided or resolved
//!   there) and the rules it applies `Prepare`, `Decide` and `Resolve`
//!   entries by, so that the first decision is final and prepared writes
//!   stay invisible until resolved;
//! * [`split`]: a replica cut in two by a `SplitAt` entry, the new
//!   split's replica made on the same engine in the same batch;
//! * [`merge`]: two neighbours joined again: the right one frozen by a
//!   `Freeze` entry, then taken over by the left one's `Merge`;
//! * [`lease`]: which replica may serve a split, and when: leases
//!   numbered in a chain in the split's log, a new holder starting only
//!   after the old lease's expiry plus the maximum clock offset, and a
//!   keeper that takes and extends a node's lease;
//! * [`raft`]: where openraft meets these: the node's shared log store
//!   (every group's log in one engine, made durable in batches),
//!   openraft's state machine on a replica, the peer port over which
//!   a group's replicas on different nodes talk, and [`raft::GroupCommits`],
//!   through which a database's commits become entries of its group's log
//!   ([`raft::SplitGroups`] for a database cut into several groups that one
//!   node leads, with two-phase commit across them);
//! * [`node`] and [`placement`]: the node process (its identity, its peer
//!   port, joining and leaving a cluster, the clock guard, the databases
//!   it serves, [`node::databases`]) and the placement group that holds
//!   the cluster's membership and the server's registry;
//! * [`failpoints`]: the steps where a test can make a node crash (with
//!   the `failpoints` feature);
//! * [`local`]: a cluster in one process (N nodes on loopback serving one
//!   database), for benchmarks that want replicated commits without a
//!   client API in front (`rowtree bench sequences --replicas 3`).
//!
//! What is built is milestones 1, 2, 3 and 5 of the design's build order,
//! the commit half of 4, of 6 the leases, commit wait and single-group
//! commits, and of 7 serving: the replica, the storage openraft needs
//! (checked by openraft's own storage test suite), the network, a
//! deterministic simulator that runs a group under crashes, partitions,
//! membership changes and skewed clocks, nodes that form a cluster, and
//! databases, each one group per split (cut by the database's split
//! manager, all led by one node), that nodes open for the server (`rowtree_server`'s registry and forwarding use
//! [`node::databases::Hosting`]). The single-process database does not use
//! this crate. Its tests feed
//! replicas the same entries and compare what they store, run openraft's
//! suite, kill a process in the middle of appending to its log, run a
//! group of three over loopback, run a database on three nodes through the
//! loss of its leader (`tests/replicated_db.rs`), simulate a group
//! (`tests/sim.rs`), and start node processes.

pub mod command;
pub mod error;
pub mod failpoints;
pub mod lease;
pub mod local;
pub mod merge;
pub mod node;
pub mod placement;
pub mod raft;
pub mod replica;
pub mod split;
pub mod twophase;
mod wire;

pub use command::{Command, Commit, LogId, Write};
pub use error::{DecodeError, Error, Result};
pub use lease::{Lease, LeaseKeeper, LeaseRules, LeaseStatus, LeaseView, Renewal};
pub use merge::StoredReplica;
pub use replica::{
    Applied, ClosedView, Descriptor, FrozenView, ImageView, MergeObserver, MetaObserver, Observer,
    Replica, SnapshotImage, SplitObserver,
};
pub use twophase::{GlobalTxnId, Outcome, Prepare, PreparedSummary, PreparedView};
