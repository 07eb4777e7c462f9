//! A database whose key space is cut into several split groups: commits
//! routed to their groups, and two-phase commit for those that span
//! several.
//!
//! [`SplitGroups`] is the [`Replication`] such a database's router hands
//! its commit groups to. It holds one [`GroupCommits`] per split, in key
//! order, the first split starting at the empty key (its group carries the
//! database's metadata). A commit whose writes all fall in one split goes
//! into that group's `Write` entry, as with a database of one group; the
//! groups that have such commits propose in parallel. A commit whose
//! writes span several splits is committed in two phases (design §6), at
//! the timestamp the database's pipeline gave it:
//!
//! 1. every participant other than the coordinator (the split of lowest
//!    key among those written) proposes a `Prepare` entry with its writes,
//!    their keys as its locks, and the commit timestamp as its prepare
//!    timestamp, in parallel;
//! 2. once all are applied, the coordinator proposes `Decide { Commit }`
//!    with its own writes: **the commit point**;
//! 3. then each participant proposes `Resolve { Commit }`, in parallel.
//!
//! Replication returns (and the pipeline acknowledges, after commit wait)
//! only after the decision is applied, and normally after every resolution
//! too, so that this node's reads see the commit whole at once. If step 1
//! fails, the transaction is aborted (`Decide { Abort }` on the
//! coordinator, `Resolve { Abort }` on the participants that prepared) and
//! the commit fails with nothing written. If step 2's answer is lost, the
//! outcome is read back from the coordinator's replica here: the first
//! decision applied is the outcome, whoever proposed it. If step 3 fails,
//! the commit stands (its decision is durable) and a participant holds the
//! prepared writes until it is resolved by recovery.
//!
//! **Recovery.** A transaction prepared in a split but not in flight on
//! this node (its leader died between the phases, or lost its leadership)
//! is resolved by whichever node leads next ([`SplitGroups::recover`],
//! also run before serving a read or a commit while such a transaction
//! exists): it proposes `Decide { Abort }` to the coordinator, a no-op if
//! the coordinator decided already, reads the coordinator's recorded
//! outcome from its replica on this node (its leader's replica has applied
//! everything it answered for), and proposes `Resolve` with it to the
//! participant. A reader waiting for a prepared transaction thus waits only
//! as long as recovery takes.
//!
//! **Splitting** ([`SplitGroups::split`], design §7). The group holding a
//! key is cut there by a `SplitAt` entry ([`crate::split`]) while commits
//! wait: every replica applies it, shrinking to the left half, and tells
//! the node through its split observer ([`crate::Replica::with_split_observer`]),
//! which shrinks the left group here at once ([`SplitGroups::adopt_split`])
//! and makes the right half's group on the same nodes, its log started
//! identically on every replica with the old group's voters, and adds it
//! ([`SplitGroups::add`]). The node that proposed waits for that before
//! letting commits through, so none is routed by the old descriptors; a
//! commit checks its keys against its group's range only once it holds the
//! lease, that is, once every entry before its lease's is applied, a split
//! included. The database's split manager asks for its cuts (load, size,
//! manual split points) through [`Replication::cut`], which splits the
//! group here when this node leads it.
//!
//! **Splits held elsewhere.** A database's splits other than its first may
//! keep their replicas on some of the nodes serving it only
//! (`--split-replicas`, `node::databases::replicas`): a split whose group has no
//! member here is a gap between this node's groups. Its keys are never
//! committed or read under locks here (refused with
//! [`rowtree_kv::Error::LedElsewhere`]); reads at a timestamp of them go
//! to a node that holds them ([`Replication::route_read`],
//! [`Replication::read_elsewhere`], through the node's [`Elsewhere`]),
//! and [`Replication::leader_of_keys`] names their leader as last learned
//! there, so that a gateway sends their commits to it. The first split is
//! held by every node serving the database.
//!
//! **Whose lock table.** A split's keys are locked only in the lock table
//! of the node leading the split's group. So a node commits, and reads
//! under locks, itself only what falls in the splits it leads
//! ([`Replication::check_writes`], asked before a commit is queued, and
//! [`Replication::check_range`], asked by the router before it reads each
//! split). A node leading the first split (where the database's sessions
//! live) locks, reads under locks and prepares the keys of splits led by
//! other nodes at their leaders, and decides those transactions with its
//! first split (`spanning`: remote locking and two-phase commit across
//! nodes, design §6 step 2); `node::participant` serves those calls. A
//! node not leading the first split refuses what it does not lead with
//! [`rowtree_kv::Error::LedElsewhere`], naming the split's leader (the
//! client sees UNAVAILABLE and retries where that split is led). A read
//! at a timestamp of a split led elsewhere is served from this node's
//! replica if its closed timestamp has reached the read's (a stale read),
//! else by the split's leader, at once (a strong read; `reads`); a node
//! serving another node's read waits for its replica instead
//! ([`FOLLOWER_READ_WAIT`] at most). The nodes keep a database's cold
//! groups led together, so that most transactions need no other node, and
//! spread only the hot ones (the node's lease balancer, `node::leases`,
//! over [`SplitGroups::led_loads`] and [`GroupCommits::move_to`]; while a
//! group moves, [`GroupCommits::serves`] is false and its commits are
//! refused here having done nothing). [`SplitGroups::gather_leaders`]
//! hands every group a node leads to the leader of the first split's
//! group, as the nodes did before. [`Replication::leader_of_keys`] tells a
//! gateway which node leads all of a commit's keys. Recovery resolves the
//! prepared transactions of the groups this node leads, asking the first
//! split's leader for those it decides.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;
use rowtree_kv::{CommitGroup, Replication, Router};
use rowtree_txn::lock::{LockMode, LockTarget};

use crate::command::{Command, Commit, Write};
use crate::raft::GroupCommits;
use crate::replica::{Descriptor, Replica};
use crate::twophase::{read_outcome, GlobalTxnId, Outcome, Prepare};
use rowtree_kv::TxnRef;

mod reads;
mod spanning;
pub(crate) use spanning::Spanning;

/// A database's commits through its split groups (see the module docs).
pub struct SplitGroups {
    /// One per split, in key order; the first starts at the empty key.
    groups: parking_lot::RwLock<Vec<Arc<GroupCommits>>>,
    /// Held (shared) by every commit while it is proposed, and
    /// (exclusive) by a split while it is proposed and its new group made:
    /// no commit is routed by descriptors a split is changing.
    gate: parking_lot::RwLock<()>,
    /// The database's router, whose engine the replicas apply to (set once
    /// the database is open; weak, since the router holds this).
    router: OnceLock<Weak<Router>>,
    /// The two-phase commits this node is running: recovery leaves them
    /// alone.
    in_flight: Mutex<HashSet<GlobalTxnId>>,
    /// Recoveries run one at a time.
    recovering: Mutex<()>,
    /// How this node asks another how far its replica of a split applied
    /// its group's log (set by the node; a merge needs it).
    probe: OnceLock<AppliedProbe>,
    /// When commits last tried to finish a merge left frozen
    /// ([`SplitGroups::finish_frozen`]): at most once a second.
    frozen_tried: Mutex<Option<std::time::Instant>>,
    /// Keys written per group per second, as this node's commits were
    /// checked ([`Replication::check_writes`]): how the node's load is
    /// shared among the groups it leads ([`SplitGroups::led_loads`]). Kept
    /// by the group's split id, so a cut does not clear the left half's.
    written: Mutex<BTreeMap<rowtree_kv::SplitId, [Written; WRITTEN_SECONDS]>>,
    /// How the splits this node holds no replica of are read (set by the
    /// node).
    elsewhere: OnceLock<Arc<dyn Elsewhere>>,
    /// The transactions run here that locked keys at other nodes, by id
    /// ([`spanning`]).
    spanning: Mutex<std::collections::HashMap<u128, Spanning>>,
    /// Transactions of other nodes prepared in the groups this node leads,
    /// whose locks this node's lock table holds (`node::participant`):
    /// not orphans, whatever recovery sees.
    held_for_others: Mutex<std::collections::HashMap<GlobalTxnId, std::time::Instant>>,
    /// The splits whose group holds a transaction prepared by another
    /// leader and not resolved yet (recovery could not settle it): their
    /// locks are not in this node's lock table, so they serve no lock or
    /// commit until it is.
    unsettled: Mutex<HashSet<rowtree_kv::SplitId>>,
    /// Merges decided and declined because the two groups' voters differ:
    /// the right split, the left one's voters, and when
    /// ([`SplitGroups::merge_wish`]). The node's replica placement moves
    /// the right group's replicas to those voters, and the next try
    /// merges.
    merge_wishes: Mutex<BTreeMap<rowtree_kv::SplitId, (BTreeSet<u64>, std::time::Instant)>>,
    /// Itself, for work done in the background (set with
    /// [`SplitGroups::set_elsewhere`]).
    this: OnceLock<Weak<SplitGroups>>,
}

thread_local! {
    /// Set while this thread serves another node's read
    /// ([`SplitGroups::locally`]).
    static LOCALLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How a node reaches the splits of a database it holds no replica of
/// (their groups placed on other nodes): set on [`SplitGroups`] by the
/// node, which finds where they are and asks over the peer port.
pub trait Elsewhere: Send + Sync {
    /// One batch of a read at a timestamp of keys this node holds no
    /// replica of, served by a node that holds them (see
    /// [`Replication::read_elsewhere`]). Blocks; never called from an
    /// asynchronous task.
    fn read(&self, read: &rowtree_kv::RemoteRead) -> rowtree_kv::Result<rowtree_kv::RemoteBatch>;

    /// The node leading the split holding `key`, as last learned, without
    /// waiting (a hint).
    fn leader_of(&self, key: &[u8]) -> Option<u64>;

    /// The voters of the split holding `key`, as last learned (empty if
    /// never), without waiting.
    fn replicas_of(&self, key: &[u8]) -> Vec<u64>;

    /// The split holding `key` as last learned, without waiting: its
    /// voters and its limit (`None`: the end of the key space). `None`
    /// if never learned; a lookup then starts in the background, so that
    /// a later call knows.
    fn split_of(&self, key: &[u8]) -> Option<(Vec<u64>, Option<Vec<u8>>)>;

    /// Asks the node leading the split holding `key` (`leader`, if this
    /// node knows it, else as found) to add a manual split point there,
    /// kept until `expires_at` (see [`Replication::cut_at_split_point`]).
    /// `Ok(true)`: `key` is a boundary of that node's groups now. Blocks;
    /// never called from an asynchronous task.
    fn add_split_point(
        &self,
        key: &[u8],
        expires_at: u64,
        leader: Option<u64>,
    ) -> rowtree_kv::Result<bool>;

    /// The split holding `key` (`before`: the keys just below it), one
    /// this node holds no replica of, as last learned (recently) or, if
    /// not, asked of the live nodes now. Blocks.
    fn locate(&self, key: &[u8], before: bool) -> rowtree_kv::Result<Located>;

    /// Forgets what was learned of the split holding `key` (its leader
    /// refused a call: it moved).
    fn forget(&self, key: &[u8]);

    /// Asks node `node` to lock `[start, end)` (`point`: the key `start`)
    /// for `txn` (`node::participant`); `holds`: `txn` took a lock there
    /// before (if the node let it go meanwhile, the call is refused as
    /// [`Refusal::Aborted`]). Blocks while it waits, at most a few seconds
    /// ([`Refusal::Waiting`] then: ask again).
    #[allow(clippy::too_many_arguments)]
    fn lock_at(
        &self,
        node: u64,
        txn: TxnRef,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
        exclusive: bool,
        holds: bool,
    ) -> Result<(), Refusal>;

    /// Asks node `node` to prepare `writes` of `txn`, which it locked
    /// there; the highest prepare timestamp. `pending`: every value is a
    /// template waiting for the commit timestamp
    /// ([`crate::twophase::template`]). Blocks.
    fn prepare_at(
        &self,
        node: u64,
        txn: TxnRef,
        coordinator: rowtree_kv::SplitId,
        participants: &[rowtree_kv::SplitId],
        writes: &[Write],
        pending: bool,
    ) -> Result<u64, Refusal>;

    /// Tells node `node` the outcome of `txn`, prepared there. Blocks.
    fn resolve_at(&self, node: u64, txn: GlobalTxnId, outcome: Outcome) -> Result<(), Refusal>;

    /// Tells node `node` that `txn` ended without preparing there. Blocks.
    fn release_at(&self, node: u64, txn: GlobalTxnId) -> Result<(), Refusal>;

    /// Asks node `node`, which leads the database's first split, for the
    /// outcome of `txn` (aborting it if undecided and not being
    /// committed there); `None`: it is being committed. Blocks.
    fn settle_at(&self, node: u64, txn: GlobalTxnId) -> Result<Option<Outcome>, Refusal>;

    /// One batch of a read of a range inside one split, served by its
    /// leader `node`: under locks (at `u64::MAX`), or at a timestamp this
    /// node's replica has not reached. A node that does not lead the split
    /// refuses it ([`Refusal::Moved`]) at once. Blocks.
    fn read_at(
        &self,
        node: u64,
        read: &rowtree_kv::RemoteRead,
    ) -> Result<rowtree_kv::RemoteBatch, Refusal>;
}

/// A split another node holds, as [`Elsewhere::locate`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub start: Vec<u8>,
    /// `None`: to the end of the key space.
    pub limit: Option<Vec<u8>>,
    /// Its leader, if known.
    pub leader: Option<u64>,
}

/// Why another node did not do what a transaction asked of it
/// ([`Elsewhere`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The transaction lost a conflict there, or its locks there are
    /// gone: it must abort.
    Aborted(String),
    /// That node does not lead the keys (any more): look the leader up
    /// again.
    Moved(String),
    /// The lock is still waited for there: ask again.
    Waiting,
    /// No answer, or a failure: the outcome of the call is unknown.
    Failed(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Aborted(why) | Refusal::Moved(why) | Refusal::Failed(why) => f.write_str(why),
            Refusal::Waiting => f.write_str("the lock is still waited for"),
        }
    }
}

/// A refusal as the database sees it. A node that does not lead the keys
/// refused having done nothing (it granted no lock, served no read,
/// prepared nothing), so a transaction refused so before its decision did
/// nothing anywhere: [`rowtree_kv::Error::LedElsewhere`], which a gateway
/// answers without looking an outcome up, and sends a single-use commit
/// again after. A call whose outcome is unknown stays a replication error.
impl From<Refusal> for rowtree_kv::Error {
    fn from(refusal: Refusal) -> rowtree_kv::Error {
        match refusal {
            Refusal::Aborted(why) => rowtree_kv::Error::Aborted(why),
            Refusal::Moved(why) => rowtree_kv::Error::LedElsewhere(format!("{why}; retry")),
            other => rowtree_kv::Error::Replication(format!("{other}; retry")),
        }
    }
}

/// One second of a group's writes, as this node's commits were checked.
#[derive(Debug, Clone, Copy)]
struct Written {
    /// The second (`u64::MAX`: never used).
    second: u64,
    /// Keys written to the group.
    keys: u64,
    /// Commits that wrote to it.
    commits: u64,
    /// Of those, the ones that also wrote to another group.
    spanning: u64,
}

impl Written {
    const UNUSED: Written = Written {
        second: u64::MAX,
        keys: 0,
        commits: 0,
        spanning: 0,
    };
}

/// At most this many splits of one gap are walked by
/// [`SplitGroups::covering_every_split`].
const MAX_SPLITS_WALKED: usize = 1024;

/// The seconds of written keys a group's count keeps.
const WRITTEN_SECONDS: usize = 16;

/// How a node learns how far another node's replica of a split has
/// applied its group's log: called with the split, the other node's id and
/// its peer address; answers the index of the last entry applied there
/// (`None`: the node holds no such group, or it did not answer). It may
/// block for a short while (a call to the node), and is called from
/// threads outside the node's async runtime.
pub type AppliedProbe =
    Arc<dyn Fn(rowtree_kv::SplitId, u64, &str) -> Result<Option<u64>, String> + Send + Sync>;

/// A right split frozen into its left neighbour, as the `Merge` entry
/// needs it ([`SplitGroups::merge`]).
struct Frozen {
    /// Its range and epoch, as this node's replica stored the freeze.
    descriptor: Descriptor,
    /// The freeze's log id (the replica's applied id since).
    applied: crate::command::LogId,
    /// The right group's members (the left's are the same): voters, and
    /// every member with its peer address.
    members: (std::collections::BTreeSet<u64>, BTreeMap<u64, String>),
}

/// How long [`SplitGroups::merge`] waits for every replica of the right
/// split to apply its freeze.
const FREEZE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a merge declined for its groups' different voters is wished
/// for ([`SplitGroups::merge_wish`]) after the last try: the split
/// manager tries again while the merge stays due, every few seconds.
pub const MERGE_WISH_FOR: std::time::Duration = std::time::Duration::from_secs(30);

/// How long a read at a timestamp of a split led by another node waits
/// for this node's replica to close that timestamp (see
/// [`Replication::check_range`]): closed timestamps trail the
/// leader's clock by a second and are proposed every 200 ms.
pub const FOLLOWER_READ_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl std::fmt::Debug for SplitGroups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitGroups")
            .field(
                "splits",
                &self
                    .groups
                    .read()
                    .iter()
                    .map(|g| g.descriptor().to_string())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl SplitGroups {
    /// The database's commits through `groups`, whose splits must not
    /// overlap, the first starting at the empty key (it carries the
    /// database's metadata, and every node serving the database holds
    /// it). Gaps between them are splits this node holds no replica of
    /// (their groups are placed on other nodes): read from those nodes
    /// ([`SplitGroups::set_elsewhere`]), never committed here.
    pub fn new(mut groups: Vec<Arc<GroupCommits>>) -> Result<SplitGroups, String> {
        groups.sort_by(|a, b| a.descriptor().start.cmp(&b.descriptor().start));
        let Some(first) = groups.first() else {
            return Err("a database needs at least one split group".into());
        };
        if !first.descriptor().start.is_empty() {
            return Err(format!(
                "the first split, {}, does not start at the empty key",
                first.descriptor()
            ));
        }
        for pair in groups.windows(2) {
            let (a, b) = (pair[0].descriptor(), pair[1].descriptor());
            if a.limit.as_ref().is_none_or(|limit| *limit > b.start) {
                return Err(format!("the splits {a} and {b} overlap"));
            }
        }
        Ok(SplitGroups {
            groups: parking_lot::RwLock::new(groups),
            gate: parking_lot::RwLock::new(()),
            router: OnceLock::new(),
            in_flight: Mutex::new(HashSet::new()),
            recovering: Mutex::new(()),
            probe: OnceLock::new(),
            frozen_tried: Mutex::new(None),
            written: Mutex::new(BTreeMap::new()),
            elsewhere: OnceLock::new(),
            spanning: Mutex::new(std::collections::HashMap::new()),
            held_for_others: Mutex::new(std::collections::HashMap::new()),
            unsettled: Mutex::new(HashSet::new()),
            merge_wishes: Mutex::new(BTreeMap::new()),
            this: OnceLock::new(),
        })
    }

    /// Tells the groups how this node reads, and finds the leaders of,
    /// the splits it holds no replica of (see [`Elsewhere`]). Without it,
    /// a read of such a split fails.
    pub fn set_elsewhere(self: &Arc<Self>, elsewhere: Arc<dyn Elsewhere>) {
        let _ = self.this.set(Arc::downgrade(self));
        let _ = self.elsewhere.set(elsewhere);
    }

    /// Runs `f` with reads of keys held elsewhere refused on this thread:
    /// how a node serves another's read of its keys (one hop, never a
    /// chain, should a replica leave while the read runs).
    pub fn locally<T>(f: impl FnOnce() -> T) -> T {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                LOCALLY.with(|l| l.set(false));
            }
        }
        LOCALLY.with(|l| l.set(true));
        let _reset = Reset;
        f()
    }

    /// Stops serving the group of `split` here: its replica left this
    /// node (a replica moved to another node). Its keys become a gap,
    /// read from the nodes that hold them. Returns the group, or `None`
    /// if it is not here; the first split's group is never removed.
    pub fn remove(&self, split: rowtree_kv::SplitId) -> Option<Arc<GroupCommits>> {
        let _gate = self.gate.write();
        let mut groups = self.groups.write();
        let i = groups.iter().position(|g| g.split_id() == split)?;
        if i == 0 {
            return None;
        }
        Some(groups.remove(i))
    }

    /// The key ranges in `[start, end)` no group here holds, in key order.
    fn gaps(&self, start: &[u8], end: Option<&[u8]>) -> Vec<rowtree_kv::KeySpan> {
        let groups = self.groups.read();
        // The common case, answered at once: one group here
        // holds the whole range.
        if let Some(i) = held_in(&groups, start) {
            let limit = groups[i].descriptor().limit;
            let within = match (end, limit.as_deref()) {
                (_, None) => true,
                (Some(end), Some(limit)) => end <= limit,
                (None, Some(_)) => false,
            };
            if within {
                return Vec::new();
            }
        }
        let mut gaps = Vec::new();
        let mut at = start.to_vec();
        for g in groups.iter() {
            let d = g.descriptor();
            if end.is_some_and(|end| at.as_slice() >= end) {
                return gaps;
            }
            if d.limit
                .as_ref()
                .is_some_and(|l| l.as_slice() <= at.as_slice())
            {
                continue;
            }
            if d.start > at {
                let limit = match end {
                    Some(end) if end < d.start.as_slice() => end.to_vec(),
                    _ => d.start.clone(),
                };
                gaps.push((at.clone(), Some(limit)));
            }
            match d.limit {
                Some(l) => at = at.max(l),
                None => return gaps,
            }
        }
        if end.is_none_or(|end| at.as_slice() < end) {
            gaps.push((at, end.map(<[u8]>::to_vec)));
        }
        gaps
    }

    /// Tells the groups the database's router (once it is open): the
    /// coordinator's recorded outcomes are read from its engine.
    pub fn set_router(&self, router: &Arc<Router>) {
        let _ = self.router.set(Arc::downgrade(router));
    }

    /// Tells the groups how to ask other nodes how far their replicas
    /// applied (see [`AppliedProbe`]); without it, nothing is merged.
    pub fn set_applied_probe(&self, probe: AppliedProbe) {
        let _ = self.probe.set(probe);
    }

    /// The groups, in key order.
    pub fn groups(&self) -> Vec<Arc<GroupCommits>> {
        self.groups.read().clone()
    }

    /// Cuts the split holding `at` in two there, the keys from `at` on
    /// going to a new group of split `right` on the same nodes (design §7;
    /// see [`crate::split`]): proposes the `SplitAt` entry and waits until
    /// the new group is made here ([`SplitGroups::add`], called by the
    /// node when its replica applies the entry). Commits wait meanwhile.
    /// `Ok(false)`: nothing was cut (`at` starts a split already, or a
    /// transaction prepared across `at` must be resolved first).
    pub fn split(&self, at: &[u8], right: rowtree_kv::SplitId) -> Result<bool, String> {
        let _gate = self.gate.write();
        let Some(group) = self.holding(at) else {
            return Ok(false);
        };
        if group.descriptor().start.as_slice() == at {
            return Ok(false);
        }
        // Not while a neighbour is frozen into it: the `Merge` it waits for
        // would no longer be of neighbours (the half cut off would lie
        // between them), and the frozen split would refuse writes for
        // good. The merge finishes first (`finish_frozen`).
        if self.frozen_into(group.split_id()) {
            return Ok(false);
        }
        group.propose(
            None,
            Command::SplitAt {
                at: at.to_vec(),
                right,
            },
        )?;
        crate::failpoints::crash_point(crate::failpoints::SPLIT_AFTER_SPLIT_AT);
        if group.descriptor().limit.as_deref() != Some(at) {
            return Ok(false);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !self.groups.read().iter().any(|g| g.split_id() == right) {
            if std::time::Instant::now() > deadline {
                return Err(format!(
                    "the split at {} was applied, but its new group {right} was not made here \
                     within 10 s",
                    crate::replica::hex(at)
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Ok(true)
    }

    /// Whether a split whose group is here is frozen into `split` for a
    /// merge not finished yet.
    fn frozen_into(&self, split: rowtree_kv::SplitId) -> bool {
        self.groups.read().iter().any(|g| g.frozen() == Some(split))
    }

    /// Adopts a split this node's replica applied: the group of `left`'s
    /// split shrinks to it. Called by the node from the replica's split
    /// observer, before it makes the new group.
    pub fn adopt_split(&self, left: &Descriptor) {
        if let Some(group) = self
            .groups
            .read()
            .iter()
            .find(|g| g.split_id() == left.split)
        {
            group.set_descriptor(left.clone());
        }
    }

    /// Adds the group of a split made by a split (see
    /// [`SplitGroups::split`]); a group of a split already here is left
    /// as it is.
    pub fn add(&self, group: Arc<GroupCommits>) {
        let mut groups = self.groups.write();
        if groups.iter().any(|g| g.split_id() == group.split_id()) {
            return;
        }
        let start = group.descriptor().start;
        let at = groups.partition_point(|g| g.descriptor().start <= start);
        groups.insert(at, group);
    }

    /// Merges the split starting at `start` into its left neighbour
    /// (design §7, "Merge of neighbours"; see [`crate::merge`]): proposes
    /// `Freeze` to the right group; waits until every member of the right
    /// group has applied it (asking the other nodes, [`AppliedProbe`]),
    /// for at most 10 s; then proposes `Merge` to the left
    /// group and waits until the node has dropped the right group
    /// ([`SplitGroups::adopt_merge`], called from the left replica's merge
    /// observer). Commits wait while an entry is proposed (the commit
    /// gate); while the members are asked, commits to the other splits go
    /// on, and the frozen split refuses its own.
    ///
    /// Why wait for every member: a node stops the right group's Raft
    /// instance as soon as its replica of the left split applies the
    /// `Merge`, and a replica of the left split applies it only after the
    /// replica of the right split beside it applied the `Freeze`. A member
    /// still behind the `Freeze` when the others stopped the right group
    /// would wait for it forever.
    ///
    /// `Ok(false)`: nothing was merged (no split starts at `start`, this
    /// node does not lead both groups, their members differ, or the right
    /// split holds prepared transactions, which must be resolved first).
    /// An error after the freeze leaves the right split frozen, refusing
    /// writes; commits finish the merge later
    /// (`finish_frozen`).
    pub fn merge(&self, start: &[u8]) -> Result<bool, String> {
        if self.probe.get().is_none() {
            return Err(
                "this node cannot ask the other replicas how far they applied: no merge".into(),
            );
        }
        let (left, right) = {
            let _gate = self.gate.write();
            let _one = self.recovering.lock();
            let groups = self.groups();
            let Some(i) = groups
                .iter()
                .position(|g| g.descriptor().start.as_slice() == start)
                .filter(|i| *i > 0)
            else {
                return Ok(false);
            };
            let (left, right) = (groups[i - 1].clone(), groups[i].clone());
            let adjacent = left.descriptor().limit.as_deref() == Some(start);
            if !adjacent || !left.leads() || !right.leads() {
                return Ok(false);
            }
            let (voters, members) = (left.members(), right.members());
            if voters != members {
                // The right group's replicas are moved to the left one's
                // voters first (a group in the middle of a change waits).
                let settled = voters.1.keys().all(|n| voters.0.contains(n));
                let mut wishes = self.merge_wishes.lock();
                if settled && !voters.0.is_empty() && right.frozen().is_none() {
                    wishes.insert(right.split_id(), (voters.0, std::time::Instant::now()));
                }
                return Ok(false);
            }
            self.merge_wishes.lock().remove(&right.split_id());
            // Not while the left split is frozen into its own left
            // neighbour, nor while another split is frozen into the right
            // one: that merge finishes first, or it would wait for a split
            // merged away and refuse writes for good.
            if left.frozen().is_some() || self.frozen_into(right.split_id()) {
                return Ok(false);
            }
            if right.frozen().is_none() {
                if !right.prepared().is_empty() {
                    return Ok(false);
                }
                right.propose(
                    None,
                    Command::Freeze {
                        into: left.split_id(),
                    },
                )?;
                crate::failpoints::crash_point(crate::failpoints::MERGE_AFTER_FREEZE);
            }
            if right.frozen() != Some(left.split_id()) {
                return Ok(false);
            }
            (left, right)
        };
        // The wait for the members runs outside the gate: commits to the
        // other splits go on meanwhile (the frozen one refuses its own).
        let Some(frozen) = self.frozen_state(&left, &right)? else {
            return Ok(false);
        };
        self.wait_for_members(
            right.split_id(),
            &frozen.members.1,
            frozen.applied.index,
            FREEZE_WAIT,
        )?;
        let _gate = self.gate.write();
        let _one = self.recovering.lock();
        self.propose_merge(&left, &right, frozen)
    }

    /// The voters the group of `split` should have for a merge into its
    /// left neighbour that was declined because they differ (the left
    /// group's voters), if one was tried in the last [`MERGE_WISH_FOR`].
    pub fn merge_wish(&self, split: rowtree_kv::SplitId) -> Option<BTreeSet<u64>> {
        let mut wishes = self.merge_wishes.lock();
        wishes.retain(|_, (_, at)| at.elapsed() < MERGE_WISH_FOR);
        wishes.get(&split).map(|(voters, _)| voters.clone())
    }

    /// What the `Merge` of `right`, frozen into `left`, is made of: the
    /// right split as this node's replica of it stored its freeze, and the
    /// members that must all have applied the freeze first. `None`: the
    /// groups' members differ (no merge).
    fn frozen_state(
        &self,
        left: &GroupCommits,
        right: &GroupCommits,
    ) -> Result<Option<Frozen>, String> {
        let router = self.router()?;
        let split = right.split_id();
        let stored = Replica::stored_state(&router, split).map_err(|e| e.to_string())?;
        let Some((descriptor, applied)) = stored
            .filter(|s| s.frozen == Some(left.split_id()))
            .and_then(|s| Some((s.descriptor, s.applied?)))
        else {
            return Err(format!(
                "{split} is frozen, but its replica here holds no applied freeze into {}",
                left.split_id()
            ));
        };
        let members = right.members();
        if left.members() != members {
            return Ok(None);
        }
        Ok(Some(Frozen {
            descriptor,
            applied,
            members,
        }))
    }

    /// The second step of a merge, under the commit gate, once every
    /// member applied the freeze: the `Merge` entry in `left`'s group, if
    /// both groups are still this node's and their members those waited
    /// for; then waits until the right group is gone here. `Ok(false)`:
    /// something changed meanwhile (a later try merges).
    fn propose_merge(
        &self,
        left: &GroupCommits,
        right: &GroupCommits,
        frozen: Frozen,
    ) -> Result<bool, String> {
        let split = right.split_id();
        let here = self.groups.read().iter().any(|g| g.split_id() == split);
        if !here
            || !left.leads()
            || right.members() != frozen.members
            || left.members() != frozen.members
        {
            return Ok(false);
        }
        left.propose(
            None,
            Command::Merge {
                right: split,
                start: frozen.descriptor.start,
                limit: frozen.descriptor.limit,
                epoch: frozen.descriptor.epoch,
                right_applied: frozen.applied,
            },
        )?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while self.groups.read().iter().any(|g| g.split_id() == split) {
            if std::time::Instant::now() > deadline {
                return Err(format!(
                    "the merge of {split} was applied, but its group was not dropped here \
                     within 10 s"
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Ok(true)
    }

    /// Waits until every one of `members` other than this node reports its
    /// replica of `split` applied up to `index`, for at most `wait` (one
    /// round of asking if `wait` is zero).
    fn wait_for_members(
        &self,
        split: rowtree_kv::SplitId,
        members: &BTreeMap<u64, String>,
        index: u64,
        wait: std::time::Duration,
    ) -> Result<(), String> {
        let probe = self
            .probe
            .get()
            .ok_or("this node cannot ask the other replicas how far they applied")?;
        let me = self.groups()[0].node_id();
        let mut behind: Vec<(u64, &str)> = members
            .iter()
            .filter(|(id, _)| **id != me)
            .map(|(id, addr)| (*id, addr.as_str()))
            .collect();
        let deadline = std::time::Instant::now() + wait;
        let mut last = String::new();
        loop {
            behind.retain(|(id, addr)| match probe(split, *id, addr) {
                Ok(Some(applied)) if applied >= index => false,
                Ok(answer) => {
                    last = format!("node {id} has applied {answer:?}");
                    true
                }
                Err(e) => {
                    last = format!("node {id} did not answer: {e}");
                    true
                }
            });
            if behind.is_empty() {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                return Err(format!(
                    "the merge of {split} waits for nodes {:?} to apply its freeze at {index} \
                     ({last}); it is finished once they have",
                    behind.iter().map(|(id, _)| *id).collect::<Vec<_>>()
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Adopts a merge this node's replica applied (or an image of a merged
    /// split it installed): the group of `merged`'s split widens to it,
    /// and the groups of `gone` leave the database's groups. Called by the
    /// node from the replica's merge observer; the node stops their Raft
    /// instances.
    pub fn adopt_merge(&self, merged: &Descriptor, gone: &[rowtree_kv::SplitId]) {
        let mut groups = self.groups.write();
        groups.retain(|g| !gone.contains(&g.split_id()));
        if let Some(group) = groups.iter().find(|g| g.split_id() == merged.split) {
            group.set_descriptor(merged.clone());
        }
    }

    /// One round of keeping the database's groups led by one node: every
    /// group this node leads while another node leads the first split's
    /// group is handed to that node (the new leader serves once this
    /// node's lease on it runs out). Run every few hundred milliseconds by
    /// the node on every replica, it brings the leaders back together after
    /// an election put them apart. Returns how many groups it handed over.
    pub async fn gather_leaders(&self) -> usize {
        let groups = self.groups();
        let Some(leader) = groups.first().and_then(|g| g.current_leader()) else {
            return 0;
        };
        let mut handed = 0;
        for group in &groups[1..] {
            if group.leads() && group.node_id() != leader {
                match group.transfer_to(leader).await {
                    Ok(()) => handed += 1,
                    Err(e) => tracing::warn!("{e}"),
                }
            }
        }
        handed
    }

    /// Counts the keys a commit checked here writes, per group.
    fn count_written(&self, groups: &[Arc<GroupCommits>], touched: &BTreeMap<usize, u64>) {
        let Ok(router) = self.router() else { return };
        let second = router.now() / 1_000_000_000;
        let mut written = self.written.lock();
        if written.len() > 2 * groups.len() + 8 {
            // Groups merged away or dropped.
            written.retain(|split, _| groups.iter().any(|g| g.split_id() == *split));
        }
        let spanning = u64::from(touched.len() > 1);
        for (i, keys) in touched {
            let ring = written
                .entry(groups[*i].split_id())
                .or_insert([Written::UNUSED; WRITTEN_SECONDS]);
            let slot = &mut ring[(second % WRITTEN_SECONDS as u64) as usize];
            if slot.second != second {
                *slot = Written {
                    second,
                    ..Written::UNUSED
                };
            }
            slot.keys += keys;
            slot.commits += 1;
            slot.spanning += spanning;
        }
    }

    /// Of the commits this node checked over the last `secs` seconds that
    /// wrote to the group of split `split`, the share that also wrote to
    /// another group (0 with none): how much of the group's work would be
    /// refused if it were led elsewhere, while commits across groups led
    /// by different nodes are (design §6, step 2; `node::leases`).
    pub fn spanning_share(&self, split: rowtree_kv::SplitId, secs: u64) -> f64 {
        let Ok(router) = self.router() else {
            return 0.0;
        };
        let current = router.now() / 1_000_000_000;
        let secs = secs.clamp(1, WRITTEN_SECONDS as u64 - 2);
        let written = self.written.lock();
        let Some(ring) = written.get(&split) else {
            return 0.0;
        };
        let (commits, spanning) = ring
            .iter()
            .filter(|w| w.second < current && current - w.second <= secs)
            .fold((0, 0), |(c, s), w| (c + w.commits, s + w.spanning));
        if commits == 0 {
            0.0
        } else {
            spanning as f64 / commits as f64
        }
    }

    /// Whether this node holds a replica of every split of the database.
    pub fn holds_every_split(&self) -> bool {
        self.gaps(&[], None).is_empty()
    }

    /// The nodes holding a replica of every split of the database: the
    /// voters common to the groups this node holds and to the splits it
    /// holds none of, as it last learned their voters
    /// ([`Elsewhere::split_of`]). `None` while the voters of one of those
    /// splits are not known yet (a lookup starts), or with no way to learn
    /// them.
    pub fn covering_every_split(&self) -> Option<BTreeSet<u64>> {
        let mut common: Option<BTreeSet<u64>> = None;
        let mut meet = |voters: BTreeSet<u64>| {
            common = Some(match common.take() {
                None => voters,
                Some(c) => c.intersection(&voters).copied().collect(),
            });
        };
        for group in self.groups() {
            meet(group.members().0);
        }
        let gaps = self.gaps(&[], None);
        if !gaps.is_empty() {
            let elsewhere = self.elsewhere.get()?;
            for (start, end) in gaps {
                let mut at = start;
                // A gap may hold several splits, walked in turn (a bounded
                // number: the lookups remember at most so many).
                for _ in 0..MAX_SPLITS_WALKED {
                    let (voters, limit) = elsewhere.split_of(&at)?;
                    meet(voters.into_iter().collect());
                    match limit {
                        Some(l) if end.as_ref().is_none_or(|e| l < *e) && l > at => at = l,
                        _ => break,
                    }
                }
            }
        }
        common
    }

    /// The groups this node leads, each with its index and its recent
    /// load, a share of a node over the last `secs` seconds (design §6,
    /// step 3; `node::leases`). With a node gate (`--node-capacity`), the
    /// gate's use is shared among the led groups by the keys this node's
    /// commits wrote to each; without, it is the CPU rate of the
    /// database's splits within each group's range, as this node's router
    /// recorded them. Either way a group's load is measured where it is
    /// led (its commits are made there).
    pub fn led_loads(&self, secs: u64) -> Vec<(usize, Arc<GroupCommits>, f64)> {
        let groups = self.groups();
        let mut loads: Vec<f64> = vec![0.0; groups.len()];
        if let Ok(router) = self.router() {
            let now = router.now();
            match router.gate() {
                Some(gate) => {
                    let current = now / 1_000_000_000;
                    let secs = secs.clamp(1, WRITTEN_SECONDS as u64 - 2);
                    let written = self.written.lock();
                    let rows: Vec<u64> = groups
                        .iter()
                        .map(|g| {
                            written.get(&g.split_id()).map_or(0, |ring| {
                                ring.iter()
                                    .filter(|w| w.second < current && current - w.second <= secs)
                                    .map(|w| w.keys)
                                    .sum()
                            })
                        })
                        .collect();
                    let led_rows: u64 = groups
                        .iter()
                        .zip(&rows)
                        .filter(|(g, _)| g.leads())
                        .map(|(_, n)| n)
                        .sum();
                    if led_rows > 0 {
                        let used = gate.recent_use(secs);
                        for (i, n) in rows.iter().enumerate() {
                            loads[i] = used * *n as f64 / led_rows as f64;
                        }
                    }
                }
                None => {
                    for split in router.splits().splits() {
                        let Some(i) = held_in(&groups, &split.start) else {
                            continue;
                        };
                        if groups[i].leads() {
                            loads[i] += split.load.lock().recent_cpu(now, secs);
                        }
                    }
                }
            }
        }
        groups
            .into_iter()
            .zip(loads)
            .enumerate()
            .filter(|(_, (g, _))| g.leads())
            .map(|(i, (g, load))| (i, g, load))
            .collect()
    }

    /// The group whose split holds `key`, if this node holds a replica
    /// of it.
    fn holding(&self, key: &[u8]) -> Option<Arc<GroupCommits>> {
        let groups = self.groups.read();
        held_in(&groups, key).map(|i| groups[i].clone())
    }

    /// The groups whose splits hold keys in `[start, end)` (`end` `None`:
    /// to the end of the key space), in key order.
    fn overlapping(&self, start: &[u8], end: Option<&[u8]>) -> Vec<Arc<GroupCommits>> {
        let groups = self.groups.read();
        let first = index_in(&groups, start);
        groups[first..]
            .iter()
            .take_while(|g| end.is_none_or(|end| g.descriptor().start.as_slice() < end))
            .filter(|g| g.descriptor().limit.is_none_or(|l| l.as_slice() > start))
            .cloned()
            .collect()
    }

    /// Whether this node may read `group`'s split at `ts` (see
    /// [`Replication::check_range`]): at or below the replica's safe time
    /// at once; under its lease if this node leads the group; else, for a
    /// read at a timestamp, once the replica's safe time reaches it
    /// (waiting at most [`FOLLOWER_READ_WAIT`]: closed timestamps trail
    /// the leader's clock by about a second); a read under locks of a
    /// split led elsewhere is refused.
    fn check_group_read(&self, group: &GroupCommits, ts: Option<u64>) -> rowtree_kv::Result<()> {
        if let (Some(ts), Some(safe)) = (ts, group.safe_ts()) {
            if ts <= safe {
                return Ok(());
            }
        }
        if group.serves() {
            return group.check_read(ts);
        }
        let Some(ts) = ts else {
            return Err(led_elsewhere(group, "read under locks"));
        };
        let deadline = std::time::Instant::now() + FOLLOWER_READ_WAIT;
        loop {
            if group.safe_ts().is_some_and(|safe| ts <= safe) {
                return Ok(());
            }
            if group.serves() {
                return group.check_read(Some(ts));
            }
            if std::time::Instant::now() >= deadline {
                return Err(rowtree_kv::Error::Replication(format!(
                    "{} is led by {}, and this node's replica of it has not reached the read's \
                     timestamp within {} ms; retry",
                    group.split_id(),
                    leader_name(group),
                    FOLLOWER_READ_WAIT.as_millis()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// The database's router (set once it is open).
    fn router(&self) -> Result<Arc<Router>, String> {
        self.router
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| "the database's router is not open".to_string())
    }

    fn outcome(
        &self,
        groups: &[Arc<GroupCommits>],
        coordinator: usize,
        txn: GlobalTxnId,
    ) -> Result<Option<Outcome>, String> {
        let router = self.router()?;
        read_outcome(&router, groups[coordinator].split_id(), txn).map_err(|e| e.to_string())
    }

    /// Commits `group`: single-split commits in their groups' entries,
    /// the others in two phases; then commit wait. Refused with
    /// [`rowtree_kv::Error::LedElsewhere`], nothing proposed, if this node
    /// no longer leads a group a single-split commit writes (its lease
    /// moved since the commit was checked), or such a group does not
    /// admit its commits now ([`GroupCommits::admits`]: a timestamp
    /// between two of this node's leases, a split frozen for a merge). A
    /// gateway then sends the commit again at once, where it draws a new
    /// timestamp, rather than looking up an outcome.
    fn replicate_all(&self, group: CommitGroup) -> rowtree_kv::Result<()> {
        let _gate = self.gate.read();
        let groups = self.groups();
        let newest = group.newest_ts();
        let mut single: Vec<CommitGroup> = vec![CommitGroup::default(); groups.len()];
        // Commit outcome tags (`rowtree_db::outcome`) say that their commit
        // took effect: they go with the rest of the metadata only when
        // every commit here is the first split's, in the same entry.
        let (tags, meta): (Vec<Write>, Vec<Write>) = group
            .meta
            .into_iter()
            .partition(|(key, _)| key.starts_with(rowtree_db::outcome::OUTCOME_PREFIX));
        single[0].meta = meta;
        if !groups[0].leads() {
            // The newest timestamp is a hint (see `META_LAST_TS`); another
            // node leads the split that carries the metadata.
            single[0]
                .meta
                .retain(|(key, _)| key.as_slice() != rowtree_db::database::META_LAST_TS);
        }
        // The commits deciding transactions prepared at other nodes
        // (`spanning`), each with its writes here.
        let mut deciding: Vec<(rowtree_kv::ElsewhereCommit, Vec<Write>)> = Vec::new();
        let mut commits = group.commits;
        for e in group.elsewhere {
            if let Some(at) = commits.iter().position(|c| c.ts == e.ts) {
                let commit = commits.remove(at);
                deciding.push((e, commit.writes));
            }
        }
        let mut spanning = Vec::new();
        for commit in commits {
            let mut parts: BTreeMap<usize, Vec<Write>> = BTreeMap::new();
            for (key, value) in commit.writes {
                let Some(i) = held_in(&groups, &key) else {
                    return Err(not_held_here(&key, "write to"));
                };
                parts.entry(i).or_default().push((key, value));
            }
            if parts.len() <= 1 {
                let (i, writes) = parts.into_iter().next().unwrap_or_default();
                single[i].commits.push(Commit {
                    ts: commit.ts,
                    writes,
                });
            } else {
                spanning.push((commit.ts, parts));
            }
        }
        let elsewhere = !spanning.is_empty()
            || !deciding.is_empty()
            || single.iter().skip(1).any(|g| !g.commits.is_empty());
        let mut tags_after = Vec::new();
        if elsewhere {
            tags_after = tags;
        } else {
            single[0].meta.extend(tags);
        }
        let proposals: Vec<(usize, CommitGroup)> = single
            .into_iter()
            .enumerate()
            .filter(|(_, g)| !g.commits.is_empty() || !g.meta.is_empty())
            .collect();
        // Nothing is proposed unless this node leads every group written:
        // a commit refused whole, not in part.
        if let Some((i, _)) = proposals.iter().find(|(i, _)| !groups[*i].serves()) {
            return Err(rowtree_kv::Error::LedElsewhere(format!(
                "this node no longer serves {} (led by {}): retry",
                groups[*i].split_id(),
                leader_name(&groups[*i])
            )));
        }
        for (i, g) in &proposals {
            groups[*i].admits(g).map_err(|why| {
                rowtree_kv::Error::LedElsewhere(format!("{why}; nothing was done"))
            })?;
        }
        in_parallel(proposals, |(i, g)| groups[i].propose_group(g))
            .map_err(rowtree_kv::Error::Replication)?;
        for (ts, parts) in spanning {
            self.two_phase(&groups, ts, parts)
                .map_err(rowtree_kv::Error::Replication)?;
        }
        for (e, writes) in deciding {
            self.commit_elsewhere(&groups, &e, writes)
                .map_err(rowtree_kv::Error::Replication)?;
        }
        // Every commit took effect: now their tags may say so. One not
        // recorded (this node lost the first split's lease meanwhile)
        // leaves its outcome unknown to a lookup, never wrong
        // (`Replication::metadata_is_atomic` is false here).
        if !tags_after.is_empty() {
            if let Err(e) = groups[0].propose_group(CommitGroup::meta(tags_after)) {
                tracing::info!("the outcomes of commits that took effect were not recorded: {e}");
            }
        }
        groups[0].commit_wait(newest);
        Ok(())
    }

    /// Commits the writes `parts` (by group) at `ts` in two phases.
    fn two_phase(
        &self,
        groups: &[Arc<GroupCommits>],
        ts: u64,
        mut parts: BTreeMap<usize, Vec<Write>>,
    ) -> Result<(), String> {
        let txn = GlobalTxnId(rand::random());
        self.in_flight.lock().insert(txn);
        let result = self.two_phase_of(groups, txn, ts, &mut parts);
        self.in_flight.lock().remove(&txn);
        result
    }

    fn two_phase_of(
        &self,
        groups: &[Arc<GroupCommits>],
        txn: GlobalTxnId,
        ts: u64,
        parts: &mut BTreeMap<usize, Vec<Write>>,
    ) -> Result<(), String> {
        let Some((coordinator, own)) = parts.pop_first() else {
            return Ok(());
        };
        let coordinator_split = groups[coordinator].descriptor().split;
        let mut participants: Vec<_> = parts
            .keys()
            .map(|i| groups[*i].descriptor().split)
            .collect();
        participants.push(coordinator_split);
        participants.sort_unstable();
        // 1. Prepare.
        let prepares: Vec<(usize, Prepare)> = std::mem::take(parts)
            .into_iter()
            .map(|(i, writes)| {
                let locks = writes
                    .iter()
                    .map(|(k, _)| (LockTarget::key(k.clone()), LockMode::Exclusive))
                    .collect();
                let prepare = Prepare {
                    txn,
                    ts,
                    coordinator: coordinator_split,
                    participants: participants.clone(),
                    writes,
                    pending: false,
                    locks,
                };
                (i, prepare)
            })
            .collect();
        let indexes: Vec<usize> = prepares.iter().map(|(i, _)| *i).collect();
        if let Err(e) = in_parallel(prepares, |(i, p)| {
            groups[i].propose(Some(ts), Command::Prepare(p))
        }) {
            // Abort: nothing was decided, and the first decision wins.
            let now = groups[0].clock().now_nanos();
            let aborted = Outcome::Abort { at: now };
            let decided = groups[coordinator].propose(
                None,
                Command::Decide {
                    txn,
                    outcome: aborted,
                    writes: Vec::new(),
                },
            );
            if decided.is_ok() {
                let _ = in_parallel(indexes, |i| self.resolve(groups, i, txn, aborted));
            }
            return Err(format!("a participant did not prepare: {e}"));
        }
        // 2. Decide: the commit point.
        let decided = groups[coordinator].propose(
            Some(ts),
            Command::Decide {
                txn,
                outcome: Outcome::Commit { ts },
                writes: own,
            },
        );
        let outcome = match (decided, self.outcome(groups, coordinator, txn)?) {
            (_, Some(outcome)) => outcome,
            (Err(e), None) => return Err(format!("the coordinator did not decide: {e}")),
            (Ok(()), None) => {
                return Err(format!(
                    "the coordinator applied the decision on {txn} but records no outcome"
                ))
            }
        };
        // 3. Resolve. A failure leaves the participant to recovery: the
        // decision stands.
        let _ = in_parallel(indexes, |i| self.resolve(groups, i, txn, outcome));
        match outcome {
            Outcome::Commit { ts: at } if at == ts => Ok(()),
            other => Err(format!(
                "{txn} was decided otherwise ({other}) by a recovery while it committed: retry"
            )),
        }
    }

    fn resolve(
        &self,
        groups: &[Arc<GroupCommits>],
        i: usize,
        txn: GlobalTxnId,
        outcome: Outcome,
    ) -> Result<(), String> {
        groups[i].propose(
            None,
            Command::Resolve {
                txn,
                outcome,
                writes: None,
            },
        )
    }

    /// Resolves every transaction prepared in a split whose two-phase
    /// commit is not in flight on this node (see the module docs). Returns
    /// how many it resolved.
    pub fn recover(&self) -> Result<usize, String> {
        let _one = self.recovering.lock();
        let groups = self.groups();
        let mut resolved = 0;
        // Only the participants this node leads: another leader resolves
        // its own.
        let mut unsettled = HashSet::new();
        for (i, group) in groups.iter().enumerate().filter(|(_, g)| g.leads()) {
            for p in group.prepared() {
                if self.in_flight.lock().contains(&p.txn) || self.holds_for_other(p.txn) {
                    continue;
                }
                // A coordinator merged away left its outcomes to the split
                // it merged into: the group recording the outcome answers
                // for it; with none recorded, the first split's group
                // decides, the same one for every participant.
                let coordinator = match groups
                    .iter()
                    .position(|g| g.descriptor().split == p.coordinator)
                {
                    Some(c) => c,
                    // Not held here, and other nodes hold splits this one
                    // does not: the coordinator may be one of theirs,
                    // whose decision this node cannot read. Its leader
                    // resolves the participants it leads; this one waits.
                    None if !self.gaps(&[], None).is_empty() => {
                        tracing::debug!(
                            txn = %p.txn,
                            coordinator = %p.coordinator,
                            "a transaction prepared here waits for a coordinator this node \
                             holds no replica of"
                        );
                        continue;
                    }
                    None => (0..groups.len())
                        .find(|c| matches!(self.outcome(&groups, *c, p.txn), Ok(Some(_))))
                        .unwrap_or(0),
                };
                if !groups[coordinator].leads() {
                    // Another node leads the coordinator: its decision, once
                    // this replica has applied it, is the outcome. A
                    // transaction run by another node and prepared under
                    // this split's previous leader is asked of the first
                    // split's leader (which decides those). Until then it
                    // stays prepared, and its locks are not in this node's
                    // table: the split serves no lock or commit.
                    let outcome = match self.outcome(&groups, coordinator, p.txn)? {
                        Some(outcome) => Some(outcome),
                        None if coordinator == 0 => {
                            self.settle_with_coordinator(p.txn).ok().flatten()
                        }
                        None => None,
                    };
                    match outcome {
                        Some(outcome) => {
                            self.resolve(&groups, i, p.txn, outcome)?;
                            resolved += 1;
                        }
                        None => {
                            unsettled.insert(group.split_id());
                        }
                    }
                    continue;
                }
                let now = groups[0].clock().now_nanos();
                groups[coordinator].propose(
                    None,
                    Command::Decide {
                        txn: p.txn,
                        outcome: Outcome::Abort { at: now },
                        writes: Vec::new(),
                    },
                )?;
                let outcome = self
                    .outcome(&groups, coordinator, p.txn)?
                    .ok_or_else(|| format!("the coordinator records no outcome of {}", p.txn))?;
                self.resolve(&groups, i, p.txn, outcome)?;
                resolved += 1;
            }
        }
        *self.unsettled.lock() = unsettled;
        Ok(resolved)
    }

    /// Finishes the merges a leader froze the right split of and did not
    /// complete (it died, lost a group between the two entries, or a
    /// member had not applied the freeze in time). Run before commits, at
    /// most once a second, with one round of asking the members: a
    /// member still behind leaves the right split frozen (its writes are
    /// refused) and the other splits' commits go on.
    fn finish_frozen(&self) -> Result<(), String> {
        let groups = self.groups();
        let frozen: Vec<_> = groups
            .iter()
            .filter(|g| g.frozen().is_some() && g.leads())
            .cloned()
            .collect();
        if frozen.is_empty() {
            return Ok(());
        }
        {
            let mut tried = self.frozen_tried.lock();
            if tried.is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(1)) {
                return Ok(());
            }
            *tried = Some(std::time::Instant::now());
        }
        for right in frozen {
            let into = right.frozen();
            let left = groups.iter().find(|g| Some(g.split_id()) == into).cloned();
            let Some(left) = left else {
                return Err(format!(
                    "{} is frozen into {}, which is not one of the database's splits here",
                    right.split_id(),
                    into.map_or_else(String::new, |s| s.to_string())
                ));
            };
            if !left.leads() {
                continue;
            }
            // One round of asking, outside the gate; the entry under it.
            let finished = self.frozen_state(&left, &right).and_then(|frozen| {
                let Some(frozen) = frozen else {
                    return Ok(false);
                };
                let split = right.split_id();
                let index = frozen.applied.index;
                self.wait_for_members(split, &frozen.members.1, index, std::time::Duration::ZERO)?;
                let _gate = self.gate.write();
                let _one = self.recovering.lock();
                self.propose_merge(&left, &right, frozen)
            });
            if let Err(e) = finished {
                tracing::info!(split = %right.split_id(), "a frozen split is not merged yet: {e}");
            }
        }
        Ok(())
    }

    /// Recovers if a split holds a prepared transaction not in flight here.
    fn recover_orphans(&self) -> Result<(), String> {
        self.finish_frozen()?;
        let orphaned = self.groups.read().iter().filter(|g| g.leads()).any(|g| {
            g.prepared()
                .iter()
                .any(|p| !self.in_flight.lock().contains(&p.txn) && !self.holds_for_other(p.txn))
        });
        if !orphaned {
            self.unsettled.lock().clear();
        }
        if orphaned {
            self.recover()?;
        }
        Ok(())
    }
}

/// The index of the group of `groups` holding `key`, if one here does.
fn held_in(groups: &[Arc<GroupCommits>], key: &[u8]) -> Option<usize> {
    let i = index_in(groups, key);
    groups[i]
        .descriptor()
        .limit
        .is_none_or(|l| l.as_slice() > key)
        .then_some(i)
}

/// The refusal of a read under locks or a write of keys this node holds
/// no replica of.
fn not_held_here(key: &[u8], what: &str) -> rowtree_kv::Error {
    rowtree_kv::Error::LedElsewhere(format!(
        "this node was asked to {what} key {} of the database, which it holds no replica \
         of: a transaction is served by the node leading every split it touches; retry",
        crate::replica::hex(key)
    ))
}

/// The index of the last group of `groups` (in key order, the first from
/// the empty key) whose split starts at or before `key`: the one holding
/// it, unless `key` falls in a gap after it.
fn index_in(groups: &[Arc<GroupCommits>], key: &[u8]) -> usize {
    // The first split starts at the empty key, so one always holds it.
    groups
        .partition_point(|g| g.descriptor().start.as_slice() <= key)
        .saturating_sub(1)
}

/// The group's leader, as this node knows it, in words.
fn leader_name(group: &GroupCommits) -> String {
    if group.leads() && !group.serves() {
        return "another node, as this node is handing it over".into();
    }
    match group.current_leader() {
        Some(node) => format!("node {node}"),
        None => "no node at the moment".into(),
    }
}

/// The refusal of a read under locks or a write of a split this node does
/// not lead.
fn led_elsewhere(group: &GroupCommits, what: &str) -> rowtree_kv::Error {
    rowtree_kv::Error::LedElsewhere(format!(
        "this node was asked to {what} {} of the database, led by {}: a transaction is \
         served by the node leading every split it touches; retry",
        group.split_id(),
        leader_name(group)
    ))
}

/// The refusal of a lock or commit in a split holding a transaction its
/// previous leader prepared, whose outcome is not known yet.
fn unsettled_error(group: &GroupCommits) -> rowtree_kv::Error {
    rowtree_kv::Error::Replication(format!(
        "{} holds a transaction prepared under its previous leader whose outcome is not \
         known yet; retry",
        group.split_id()
    ))
}

/// Runs `f` on each item, on threads of its own when there are several;
/// the first error, if any.
fn in_parallel<T: Send, F>(items: Vec<T>, f: F) -> Result<(), String>
where
    F: Fn(T) -> Result<(), String> + Sync,
{
    if items.len() <= 1 {
        return items.into_iter().try_for_each(f);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| scope.spawn(|| f(item)))
            .collect();
        let mut first = Ok(());
        for handle in handles {
            let result = handle
                .join()
                .unwrap_or_else(|_| Err("a proposal thread panicked".into()));
            if first.is_ok() {
                first = result;
            }
        }
        first
    })
}

impl Replication for SplitGroups {
    fn replicate(&self, group: CommitGroup) -> rowtree_kv::Result<()> {
        self.replicate_all(group)
    }

    /// The leases of the groups this node leads, taken or extended: the
    /// timestamps the pipeline issues next fall inside them. A commit to
    /// a group led elsewhere was refused before it was queued
    /// ([`Replication::check_writes`]). If this node leads no group, the
    /// first one's answer says who does.
    fn ready_to_commit(&self) -> rowtree_kv::Result<()> {
        let groups = self.groups();
        let led: Vec<_> = groups.iter().filter(|g| g.serves()).collect();
        if led.is_empty() {
            groups[0].ready().map_err(rowtree_kv::Error::Replication)?;
        }
        for group in led {
            group.ready().map_err(rowtree_kv::Error::Replication)?;
        }
        self.recover_orphans()
            .map_err(rowtree_kv::Error::Replication)
    }

    /// Recovery first, then the groups this node leads (under their
    /// leases, after their prepared transactions); the splits a read
    /// touches are checked again as it reads them
    /// ([`Replication::check_range`]), those led elsewhere included.
    fn check_read(&self, ts: Option<u64>) -> rowtree_kv::Result<()> {
        if let (Some(ts), Some(safe)) = (ts, self.safe_ts()) {
            if ts <= safe {
                return Ok(());
            }
        }
        self.recover_orphans()
            .map_err(rowtree_kv::Error::Replication)?;
        self.groups()
            .iter()
            .filter(|g| g.serves())
            .try_for_each(|g| g.check_read(ts))
    }

    fn check_range(
        &self,
        ts: Option<u64>,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> rowtree_kv::Result<()> {
        // Not spanning nodes: only what this node leads (serving another
        // node's read, never a second hop; or not leading the first
        // split, which decides the transactions that span nodes).
        let locally = !self.spans_nodes();
        if ts.is_none() {
            if locally {
                // Serving another node's read under locks: only what this
                // node leads (never a second hop).
                if let Some((gap, _)) = self.gaps(start, end).first() {
                    return Err(not_held_here(gap, "read under locks"));
                }
            }
            let unsettled = self.unsettled.lock().clone();
            for group in self.overlapping(start, end) {
                if unsettled.contains(&group.split_id()) {
                    return Err(unsettled_error(&group));
                }
                // Led elsewhere: read there (`locked_elsewhere`).
                if group.serves() || locally {
                    self.check_group_read(&group, ts)?;
                }
            }
            return Ok(());
        }
        for group in self.overlapping(start, end) {
            self.check_group_read(&group, ts)?;
        }
        Ok(())
    }

    fn route_read(
        &self,
        ts: u64,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> rowtree_kv::Result<Vec<rowtree_kv::KeySpan>> {
        if ts == u64::MAX {
            self.check_range(None, start, end)?;
            return Ok(self.spans_locked_elsewhere(start, end));
        }
        self.route_at(ts, start, end)
    }

    fn held_elsewhere(&self, start: &[u8], end: Option<&[u8]>) -> Vec<rowtree_kv::KeySpan> {
        self.gaps(start, end)
    }

    fn locked_elsewhere(&self, start: &[u8], end: Option<&[u8]>) -> Vec<rowtree_kv::KeySpan> {
        self.spans_locked_elsewhere(start, end)
    }

    fn written_elsewhere(&self, txn: TxnRef, key: &[u8]) -> bool {
        self.is_written_elsewhere(txn, key)
    }

    fn lock_elsewhere(
        &self,
        txn: TxnRef,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
        exclusive: bool,
    ) -> rowtree_kv::Result<()> {
        self.lock_spanning(txn, start, end, point, exclusive)
    }

    fn prepare_elsewhere(
        &self,
        txn: TxnRef,
        writes: Vec<rowtree_kv::ElsewhereWrite>,
    ) -> rowtree_kv::Result<u64> {
        self.prepare_spanning(txn, writes)
    }

    fn confirm_elsewhere(&self, txn: TxnRef) -> rowtree_kv::Result<u64> {
        self.confirm_spanning(txn)
    }

    fn release_elsewhere(&self, txn: TxnRef) {
        if let Some(this) = self.this.get().and_then(Weak::upgrade) {
            this.release_spanning(txn);
        }
    }

    fn read_elsewhere(
        &self,
        read: &rowtree_kv::RemoteRead,
    ) -> rowtree_kv::Result<rowtree_kv::RemoteBatch> {
        if LOCALLY.with(std::cell::Cell::get) {
            return Err(rowtree_kv::Error::Replication(
                "this node no longer holds all of the keys another node asked it to read; \
                 retry"
                    .into(),
            ));
        }
        if read.ts == u64::MAX {
            return self.read_led(read);
        }
        self.read_followed(read)
    }

    fn check_writes(&self, keys: &mut dyn Iterator<Item = &[u8]>) -> rowtree_kv::Result<()> {
        let groups = self.groups();
        let mut touched: BTreeMap<usize, u64> = BTreeMap::new();
        for key in keys {
            let Some(i) = held_in(&groups, key) else {
                return Err(not_held_here(key, "write to"));
            };
            *touched.entry(i).or_default() += 1;
        }
        let unsettled = self.unsettled.lock().clone();
        for i in touched.keys() {
            let group = &groups[*i];
            if !group.serves() {
                return Err(led_elsewhere(group, "write to"));
            }
            if unsettled.contains(&group.split_id()) {
                return Err(unsettled_error(group));
            }
            group.ready().map_err(rowtree_kv::Error::Replication)?;
        }
        self.count_written(&groups, &touched);
        Ok(())
    }

    fn leader_of_keys(&self, keys: &mut dyn Iterator<Item = &[u8]>) -> Option<u64> {
        let groups = self.groups.read();
        let mut leader = None;
        for key in keys {
            let node = match held_in(&groups, key) {
                Some(i) => groups[i].current_leader()?,
                None => self.elsewhere.get()?.leader_of(key)?,
            };
            if leader.is_some_and(|l| l != node) {
                return None;
            }
            leader = Some(node);
        }
        leader
    }

    fn replicas_of(&self, key: &[u8]) -> Vec<u64> {
        match self.holding(key) {
            Some(group) => group.members().0.into_iter().collect(),
            None => self
                .elsewhere
                .get()
                .map(|e| e.replicas_of(key))
                .unwrap_or_default(),
        }
    }

    fn safe_ts(&self) -> Option<u64> {
        self.groups
            .read()
            .iter()
            .map(|g| g.safe_ts())
            .min()
            .flatten()
    }

    fn serves_fresh_reads(&self) -> bool {
        self.groups.read().iter().all(|g| g.serves_fresh_reads())
    }

    /// One group holding the whole key space writes a commit's metadata
    /// and rows in one entry; once the key space is cut, they may go to
    /// different groups (`SplitGroups::replicate_all`).
    fn metadata_is_atomic(&self) -> bool {
        let groups = self.groups.read();
        groups.len() == 1 && groups[0].descriptor().limit.is_none()
    }

    /// A merge the database's split manager decided (cold neighbours): the
    /// group of the split starting at `key` is merged into its left
    /// neighbour's. A boundary that is no group's (a split of the map only)
    /// has nothing to carry out; a node that does not lead both groups
    /// declines quietly.
    fn merge(&self, key: &[u8]) -> rowtree_kv::Result<bool> {
        let groups = self.groups();
        let Some(right) = groups
            .iter()
            .find(|g| g.descriptor().start.as_slice() == key)
        else {
            return Ok(true);
        };
        if !right.leads() {
            return Ok(false);
        }
        match SplitGroups::merge(self, key) {
            Ok(merged) => Ok(merged),
            Err(e) => {
                tracing::warn!(split = %right.split_id(), "merging the split's group failed: {e}");
                Err(rowtree_kv::Error::Replication(e))
            }
        }
    }

    /// A cut the database's split manager decided (a load or size split,
    /// a manual split point): the group holding `key` is split there, with
    /// a new split id drawn at random at or above 2^32 (so that, used as
    /// the new group's id, it meets no database group's id, which the
    /// placement group numbers from 1). A node that does not lead the group
    /// declines quietly: its leader decides for it.
    fn cut(&self, key: &[u8]) -> rowtree_kv::Result<bool> {
        let Some(group) = self.holding(key) else {
            // Another node's split: its leader decides.
            return Ok(false);
        };
        if group.descriptor().start.as_slice() == key {
            return Ok(true);
        }
        if !group.leads() {
            return Ok(false);
        }
        let right = rowtree_kv::SplitId((1 << 32) | (rand::random::<u64>() >> 2));
        match self.split(key, right) {
            Ok(made) => Ok(made),
            Err(e) => {
                tracing::warn!(split = %group.split_id(), "cutting the split's group failed: {e}");
                Err(rowtree_kv::Error::Replication(e))
            }
        }
    }

    /// A manual split point (AddSplitPoints, sent to the node leading the
    /// database's first split): cut here if this node leads the group
    /// holding `key`; otherwise the group's leader is asked to add the
    /// split point itself ([`Elsewhere::add_split_point`]), once: a node
    /// serving such a request ([`SplitGroups::locally`]) asks no one.
    /// `Ok(false)` (no leader yet, or it did not answer) leaves the split
    /// point to the split manager's retries.
    fn cut_at_split_point(&self, key: &[u8], expires_at: u64) -> rowtree_kv::Result<bool> {
        let held = self.holding(key);
        if let Some(group) = &held {
            if group.leads() || group.descriptor().start.as_slice() == key {
                return self.cut(key);
            }
        }
        if LOCALLY.with(|l| l.get()) {
            return Ok(false);
        }
        let Some(elsewhere) = self.elsewhere.get() else {
            return Ok(false);
        };
        let leader = held.and_then(|g| g.current_leader());
        elsewhere.add_split_point(key, expires_at, leader)
    }
}

#[cfg(test)]
mod tests {
    use super::Refusal;

    /// A refusal by a node that does not lead the keys did nothing there:
    /// the database hears it as a refusal a gateway may act on at once,
    /// while a call whose outcome is unknown stays unknown.
    #[test]
    fn a_refusal_having_done_nothing_is_told_apart_from_an_unknown_outcome() {
        let moved: rowtree_kv::Error =
            Refusal::Moved("node 2: split-7 is led by node 3".into()).into();
        assert!(
            matches!(&moved, rowtree_kv::Error::LedElsewhere(m) if m.contains("split-7")),
            "{moved:?}"
        );
        let failed: rowtree_kv::Error = Refusal::Failed("node 2 did not answer".into()).into();
        assert!(
            matches!(failed, rowtree_kv::Error::Replication(_)),
            "{failed:?}"
        );
        let aborted: rowtree_kv::Error = Refusal::Aborted("wounded".into()).into();
        assert!(
            matches!(aborted, rowtree_kv::Error::Aborted(_)),
            "{aborted:?}"
        );
    }
}
