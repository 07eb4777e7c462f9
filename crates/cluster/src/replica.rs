//! The replica state machine: one node's copy of one split.
//!
//! A replica's data is the split's key range in its node's storage engine,
//! stored exactly as a single process stores it (MVCC versions written
//! through the router). Next to it, in the engine's metadata space, sits
//! the replica's *applied state*: the id of the last log entry applied, the
//! closed timestamp, the split's descriptor (id, range, epoch) and its
//! current lease (see [`crate::lease`]), which the replica also publishes
//! in a [`LeaseView`] for the code that serves, as it publishes the closed
//! timestamp in a [`ClosedView`]: the replica's *safe time*, at or below
//! which it serves reads by itself (a follower read; see
//! `raft::GroupCommits::close_timestamp`).
//!
//! [`Replica::apply`] turns one log entry into one engine batch holding
//! both the entry's row versions and the new applied state, written with
//! buffered durability: the Raft log is the durable copy. After a crash the
//! engine holds some prefix of the applied entries, each whole, and the
//! applied id says which; replaying the log skips what is already there, so
//! a replica that crashed ends exactly where one that never crashed does
//! (design invariant 16).
//!
//! Before writing, an entry is checked against what the replica knows, and
//! refused whole (nothing written) if it breaks a rule no correct leader
//! breaks: a gap in the log, a key outside the split (invariant 2), a
//! version at or below a stored version of its key (invariant 4), a commit
//! at or below the closed timestamp, a lease numbered 0, empty, or taking
//! over from another holder before that holder's lease expires. A refusal
//! means a bug or corruption upstream; the caller stops serving the group.
//! A lease entry that names as the one it replaces a lease that is no
//! longer current is not an error: two leaders raced, and the first in the
//! log won. It is applied as a no-op.
//!
//! Besides commands, a group's log holds the consensus library's own
//! entries: a blank entry each new leader writes, and membership changes.
//! [`Replica::apply_config`] records those in the applied state (the last
//! membership as opaque bytes, which only the `raft` module reads). They
//! carry no data, so they only have to move the applied id forward.
//!
//! A replica given its node's timestamp oracle ([`Replica::with_oracle`])
//! passes it the commit timestamps of every `Write` it applies, so that
//! whatever the node's clock reads, a timestamp it assigns later (as the
//! split's next leaseholder) is above every version it stores. A database
//! on the node is told the same way ([`Replica::with_observer`] with
//! `Database::observe_applied`), which also makes what was applied visible
//! to its strong reads.
//!
//! A replica also applies two-phase commit's entries (`Prepare`, `Decide`,
//! `Resolve`), keeping the transactions prepared on its split and the
//! outcomes it recorded next to the applied state; the rules and tables are
//! in [`crate::twophase`].
//!
//! A replica can also be copied whole: [`Replica::image`] reads the split's
//! stored versions, applied state, prepared transactions and outcomes into
//! a [`SnapshotImage`], and
//! [`Replica::install`] replaces a replica's range and state with one, in
//! one engine batch. A new or lagging replica catches up this way when the
//! log entries it misses are gone. A replica made empty for a group that
//! already runs ([`Replica::create_for_image`]) must catch up this way:
//! until it installs an image it refuses every entry, since the group's
//! log from its start need not hold every row of the split (a cut's right
//! half begins with the rows its parent held; a merge takes in its
//! neighbour's).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rowtree_kv::{Router, SplitId};
use rowtree_storage::mvcc::{split_version_key, version_key, MAX_READ_TS};
use rowtree_storage::{Durability, Space, WriteBatch};
use rowtree_txn::timestamp::TimestampOracle;

use crate::command::{Command, LogId, FORMAT};
use crate::error::{DecodeError, Error, Result};
use crate::lease::{Lease, LeaseView};
use crate::twophase::{self, PreparedTable, TableChange};
use crate::wire::{put_bytes, put_u8, put_varint, Reader};

/// A split as its group knows it: id, key range `[start, limit)` (no
/// `limit`: to the end of the key space) and epoch, raised by every change
/// of the range or the replica set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descriptor {
    pub split: SplitId,
    pub start: Vec<u8>,
    pub limit: Option<Vec<u8>>,
    pub epoch: u64,
}

impl Descriptor {
    /// Whether the split owns `key`.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && self.limit.as_deref().is_none_or(|l| key < l)
    }

    /// Whether the split's group carries the database's metadata (its DDL
    /// log, sequence reservations): the group of the first split, whose
    /// range starts at the empty key; for a database of one group, the
    /// group of the whole key space.
    pub fn carries_meta(&self) -> bool {
        self.start.is_empty()
    }
}

impl fmt::Display for Descriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, ", hex(&self.start))?;
        match &self.limit {
            Some(l) => write!(f, "{})", hex(l)),
            None => write!(f, "end)"),
        }
    }
}

pub(crate) use crate::wire::hex;

/// What a replica tells of the commit timestamps it applies
/// ([`Replica::with_observer`]).
pub type Observer = Arc<dyn Fn(u64) + Send + Sync>;

/// A replica's closed timestamp, readable from other threads
/// ([`Replica::closed_view`]). It only rises.
#[derive(Debug, Clone, Default)]
pub struct ClosedView(Arc<AtomicU64>);

impl ClosedView {
    /// The closed timestamp (0 before the first).
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    fn raise(&self, ts: u64) {
        self.0.fetch_max(ts, Ordering::AcqRel);
    }
}

/// Whether a replica is frozen for a merge, readable from other threads
/// ([`Replica::frozen_view`]): the split it is frozen into, if any.
#[derive(Debug, Clone, Default)]
pub struct FrozenView(Arc<AtomicU64>);

impl FrozenView {
    /// The split the replica is frozen into, if it is.
    pub fn get(&self) -> Option<SplitId> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            id => Some(SplitId(id)),
        }
    }

    fn set(&self, into: Option<SplitId>) {
        self.0.store(into.map_or(0, |s| s.0), Ordering::Release);
    }
}

/// Whether a replica awaits an image, readable from other threads
/// ([`Replica::image_view`]): true from [`Replica::create_for_image`]
/// until it installs one; and the *floor*, the lowest last index of an
/// image it may install: an index known committed when it was placed
/// (by the leader that placed it, or by this node before it left the
/// group, [`crate::raft::LogStore::image_floor`]), so that an older image,
/// from before the node was last taken out of the group, is refused.
#[derive(Debug, Clone, Default)]
pub struct ImageView {
    awaits: Arc<AtomicBool>,
    floor: Arc<AtomicU64>,
}

impl ImageView {
    /// Whether the replica still awaits its first image.
    pub fn awaits(&self) -> bool {
        self.awaits.load(Ordering::Acquire)
    }

    /// The lowest last index of an image the replica may install.
    pub fn floor(&self) -> u64 {
        self.floor.load(Ordering::Acquire)
    }

    /// Raises the floor to `index` (never lowers it).
    pub fn raise_floor(&self, index: u64) {
        self.floor.fetch_max(index, Ordering::AcqRel);
    }

    fn set(&self, awaits: bool) {
        self.awaits.store(awaits, Ordering::Release);
    }
}

/// What a replica tells of the metadata keys it writes
/// ([`Replica::with_meta_observer`]).
pub type MetaObserver = Arc<dyn Fn(&[Vec<u8>]) + Send + Sync>;

/// What a replica tells of a split it applied ([`Replica::with_split_observer`]):
/// its own new descriptor (the left half), the new split's (the right
/// half, whose replica is now on the engine), and the group's last
/// membership applied (the `raft` module's bytes), which the new group
/// starts with.
pub type SplitObserver = Arc<dyn Fn(&Descriptor, &Descriptor, Option<&[u8]>) + Send + Sync>;

/// What a replica tells of a merge it applied, or of an image it installed
/// whose range is not the replica's ([`Replica::with_merge_observer`]):
/// its own new descriptor, and the splits whose replicas on the engine are
/// gone into it (see [`crate::merge`]). An image wider than the replica
/// covers merges it missed (the splits gone are listed); a narrower one
/// follows cuts it missed (none gone: the cut-off range's splits have no
/// replica on this engine, and the node must be given them again).
pub type MergeObserver = Arc<dyn Fn(&Descriptor, &[SplitId]) + Send + Sync>;

/// What [`Replica::apply`] did with an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The entry was applied.
    Applied,
    /// The entry was applied before (a replay after a restart): nothing
    /// was written.
    AlreadyApplied,
}

/// One node's replica of one split, applying the split's log.
pub struct Replica {
    pub(crate) router: Arc<Router>,
    descriptor: Descriptor,
    state: State,
    /// The current lease, as `state` has it, for readers elsewhere.
    lease_view: LeaseView,
    /// The closed timestamp, as `state` has it, for readers elsewhere.
    closed_view: ClosedView,
    /// Told the newest commit timestamp of every write applied (the
    /// node's oracle, or its database).
    observer: Option<Observer>,
    /// Told the metadata keys every entry or image wrote (a database that
    /// follows the schema changes its group applies).
    meta_observer: Option<MetaObserver>,
    /// Told every split applied.
    split_observer: Option<SplitObserver>,
    /// Told every merge applied.
    merge_observer: Option<MergeObserver>,
    /// The split this one is frozen into, once a `Freeze` is applied (see
    /// [`crate::merge`]): it takes no more writes.
    frozen: Option<SplitId>,
    /// `frozen`, for readers elsewhere.
    frozen_view: FrozenView,
    /// Whether the replica was made empty for an image and has not
    /// installed one yet (see [`Replica::create_for_image`]), for readers
    /// elsewhere too.
    awaits_image: ImageView,
    /// The distributed transactions prepared here (see
    /// [`crate::twophase`]), as the engine holds them.
    pub(crate) prepared: PreparedTable,
}

/// What a replica records next to its data, in the same batches.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// The last entry applied; `None` before the first.
    pub(crate) applied: Option<LogId>,
    /// The closed timestamp.
    pub(crate) closed_ts: u64,
    /// The last membership entry applied: its id and its bytes, opaque
    /// here.
    pub(crate) membership: Option<(LogId, Vec<u8>)>,
    /// The split's current lease.
    pub(crate) lease: Option<Lease>,
}

impl State {
    /// The index the next entry must have.
    fn next_index(&self) -> u64 {
        self.applied.map_or(0, |a| a.index + 1)
    }

    /// Whether the entry at `id` was applied already.
    fn covers(&self, id: LogId) -> bool {
        self.applied.is_some_and(|a| id.index <= a.index)
    }
}

/// Where the replicas' applied states live in the metadata space.
const REPLICA_PREFIX: &[u8] = b"raft/";

/// The metadata key of a split's applied state.
pub(crate) fn state_key(split: SplitId) -> Vec<u8> {
    let mut key = REPLICA_PREFIX.to_vec();
    key.extend_from_slice(format!("{:016x}/state", split.0).as_bytes());
    key
}

/// The metadata key of the mark a replica made empty for an image keeps
/// until it installs one ([`Replica::create_for_image`]); its value is the
/// image floor (8 bytes, big-endian; empty for 0). Not one of the side
/// tables an image copies.
fn awaits_key(split: SplitId) -> Vec<u8> {
    let mut key = REPLICA_PREFIX.to_vec();
    key.extend_from_slice(format!("{:016x}/awaits-image", split.0).as_bytes());
    key
}

/// How many stored keys [`Replica::discard`] deletes per batch.
pub const DISCARD_BATCH: usize = 10_000;

/// Whether a metadata key is a replica's own (not the database's).
fn is_replica_key(key: &[u8]) -> bool {
    key.starts_with(REPLICA_PREFIX)
}

impl Replica {
    /// Creates the replica of a new split on `router`'s engine: nothing
    /// applied, closed timestamp 0. Refused if the engine already holds a
    /// replica of that split.
    pub fn create(router: Arc<Router>, descriptor: Descriptor) -> Result<Replica> {
        Self::make(router, descriptor, None)
    }

    /// Creates an empty replica of an existing split, for its group to
    /// fill with an image: how a node added to a group, or given back a
    /// split it missed, gets its replica. Until it installs an image it
    /// applies no entry (refused, as a rule no correct leader breaks), and
    /// [`Replica::image_view`] says it awaits one, so that the node's peer
    /// port refuses the group's log from its start: the split's rows did
    /// not all come through that log (a cut's right half began with the
    /// rows its parent held, a merge took in its neighbour's), so a replica
    /// that replayed it from nothing would hold less than the others, for
    /// good. The mark is stored, and survives a restart.
    ///
    /// `floor` is an index the caller knows the group committed (the
    /// applied index of the leader placing the replica, or 0): the replica
    /// refuses an image older than that ([`ImageView::floor`]), which a
    /// leader deposed since could still send, listing this node a voter
    /// from before it was last taken out of the group.
    pub fn create_for_image(
        router: Arc<Router>,
        descriptor: Descriptor,
        floor: u64,
    ) -> Result<Replica> {
        Self::make(router, descriptor, Some(floor))
    }

    fn make(router: Arc<Router>, descriptor: Descriptor, floor: Option<u64>) -> Result<Replica> {
        let split = descriptor.split;
        if router.meta_get(&state_key(split))?.is_some() {
            return Err(Error::Replica {
                split,
                message: "a replica of this split already exists on this engine".into(),
            });
        }
        let replica = Replica {
            router,
            descriptor,
            state: State::default(),
            lease_view: LeaseView::default(),
            closed_view: ClosedView::default(),
            observer: None,
            meta_observer: None,
            split_observer: None,
            merge_observer: None,
            frozen: None,
            frozen_view: FrozenView::default(),
            awaits_image: ImageView::default(),
            prepared: PreparedTable::default(),
        };
        replica.awaits_image.set(floor.is_some());
        replica.awaits_image.raise_floor(floor.unwrap_or(0));
        let mut batch = WriteBatch::new();
        replica.stage_state(&mut batch, &replica.descriptor, &replica.state);
        replica.router.stage_meta(
            &mut batch,
            awaits_key(split),
            floor.map(|f| f.to_be_bytes().to_vec()),
        );
        // Synced: the group's log (another store, synced as it goes) may
        // soon hold entries for it, and a replica lost under a log that
        // survived would leave the node a member holding nothing.
        replica.router.write(batch, Durability::Sync)?;
        Ok(replica)
    }

    /// Opens the replica of `split` that `router`'s engine holds (after a
    /// restart), with the applied state stored there.
    pub fn open(router: Arc<Router>, split: SplitId) -> Result<Replica> {
        let Some(bytes) = router.meta_get(&state_key(split))? else {
            return Err(Error::Replica {
                split,
                message: "no replica of this split on this engine".into(),
            });
        };
        let (descriptor, state) = decode_state(split, &mut Reader::new(&bytes, "applied state"))?;
        let lease_view = LeaseView::default();
        lease_view.set(state.lease);
        let closed_view = ClosedView::default();
        closed_view.raise(state.closed_ts);
        let prepared = PreparedTable::load(&router, split)?;
        let frozen = twophase::stored_frozen(&router, split)?;
        let frozen_view = FrozenView::default();
        frozen_view.set(frozen);
        let awaits_image = ImageView::default();
        if let Some(mark) = router.meta_get(&awaits_key(split))? {
            awaits_image.set(true);
            let floor = match mark.len() {
                0 => 0,
                8 => u64::from_be_bytes(mark.as_slice().try_into().expect("8 bytes")),
                n => {
                    return Err(Error::Replica {
                        split,
                        message: format!("its image mark holds {n} bytes, not 8"),
                    })
                }
            };
            awaits_image.raise_floor(floor);
        }
        Ok(Replica {
            router,
            descriptor,
            state,
            lease_view,
            closed_view,
            observer: None,
            meta_observer: None,
            split_observer: None,
            merge_observer: None,
            frozen,
            frozen_view,
            awaits_image,
            prepared,
        })
    }

    /// Deletes the replica of `split` from `router`'s engine: its applied
    /// state and side tables first ([`Replica::forget`]), then the row
    /// versions of its range ([`Replica::discard_rows`]). Returns how
    /// many stored keys were deleted; a split with no replica here
    /// deletes nothing.
    pub fn discard(router: &Router, split: SplitId) -> Result<u64> {
        match Self::forget(router, split)? {
            Some(descriptor) => Self::discard_rows(router, &descriptor),
            None => Ok(0),
        }
    }

    /// Deletes the applied state and side tables of the replica of `split`
    /// in one synced batch: from then on the engine holds no replica of it
    /// and a restart opens none. Its rows stay (reads already running on
    /// them finish); [`Replica::discard_rows`] deletes them. What a node
    /// leaving a split's group does before it removes the group's log, so
    /// that no crash leaves a replica whose log is gone: started again, it
    /// would have forgotten its votes, and could vote twice in a term. The
    /// descriptor of the replica forgotten, if there was one.
    pub fn forget(router: &Router, split: SplitId) -> Result<Option<Descriptor>> {
        let Some(bytes) = router.meta_get(&state_key(split))? else {
            return Ok(None);
        };
        let (descriptor, _) = decode_state(split, &mut Reader::new(&bytes, "applied state"))?;
        let mut batch = WriteBatch::new();
        for item in router.meta_scan(&twophase::side_prefix(split)) {
            let (key, _) = item?;
            if twophase::is_side_key(split, &key) {
                router.stage_meta(&mut batch, key, None);
            }
        }
        router.stage_meta(&mut batch, state_key(split), None);
        router.stage_meta(&mut batch, awaits_key(split), None);
        router.write(batch, Durability::Sync)?;
        Ok(Some(descriptor))
    }

    /// Deletes the row versions of `descriptor`'s range,
    /// [`DISCARD_BATCH`] stored keys at a time, so that a large split does
    /// not become one large batch; the caller makes sure no replica here
    /// covers any of the range. A crash before the end leaves versions in
    /// a range no replica here holds: nothing reads them, and a replica
    /// placed here again installs its image over them, which clears them.
    /// Returns how many stored keys were deleted.
    pub fn discard_rows(router: &Router, descriptor: &Descriptor) -> Result<u64> {
        let limit = descriptor.limit.as_deref();
        let mut deleted = 0;
        loop {
            let mut batch = WriteBatch::new();
            let mut last = None;
            for item in router
                .scan_stored(&descriptor.start, limit)
                .take(DISCARD_BATCH)
            {
                let (key, _) = item?;
                batch.delete(Space::Data, key.clone());
                deleted += 1;
                last = Some(key);
            }
            let Some(last) = last else { break };
            // The heads of the rows deleted so far (on an engine keeping
            // them): every row up to the last one this batch touched.
            let (user, _) = split_version_key(&last)?;
            let through = [user, &[0]].concat();
            router.stage_heads(&mut batch, &[(&descriptor.start, Some(&through))], [])?;
            router.write(batch, Durability::Buffered)?;
        }
        router.sync()?;
        Ok(deleted)
    }

    /// The splits whose replicas `router`'s engine holds (made by
    /// [`Replica::create`] or by a split), in id order: what a node opens
    /// again after a restart.
    pub fn stored_splits(router: &Router) -> Result<Vec<SplitId>> {
        let mut splits = Vec::new();
        for item in router.meta_scan(REPLICA_PREFIX) {
            let (key, _) = item?;
            let id = key
                .strip_prefix(REPLICA_PREFIX)
                .and_then(|rest| rest.strip_suffix(b"/state"))
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .filter(|hex| hex.len() == 16)
                .and_then(|hex| u64::from_str_radix(hex, 16).ok());
            if let Some(id) = id {
                splits.push(SplitId(id));
            }
        }
        Ok(splits)
    }

    /// Tells `oracle` the commit timestamp of every write applied from now
    /// on (see the module docs).
    pub fn with_oracle(self, oracle: Arc<TimestampOracle>) -> Replica {
        self.with_observer(Arc::new(move |ts| oracle.observe(ts)))
    }

    /// Calls `observer` with the newest commit timestamp of every write
    /// applied from now on, after it is written (see the module docs).
    pub fn with_observer(mut self, observer: Observer) -> Replica {
        self.observer = Some(observer);
        self
    }

    /// Calls `observer` with the metadata keys of every entry applied from
    /// now on that writes metadata, and with every metadata key of an
    /// image installed, after they are written. A database on the node
    /// reloads its schema when they include its schema's keys, so a
    /// follower follows the schema changes its leader makes.
    pub fn with_meta_observer(mut self, observer: MetaObserver) -> Replica {
        self.meta_observer = Some(observer);
        self
    }

    /// Calls `observer` after every `SplitAt` entry applied from now on
    /// that split the replica (see [`SplitObserver`]): the node makes the
    /// new split's group from it.
    pub fn with_split_observer(mut self, observer: SplitObserver) -> Replica {
        self.split_observer = Some(observer);
        self
    }

    /// Calls `observer` after every `Merge` entry applied from now on, and
    /// after an image installed that covers replicas merged into this one
    /// (see [`MergeObserver`]): the node stops the merged splits' groups.
    pub fn with_merge_observer(mut self, observer: MergeObserver) -> Replica {
        self.merge_observer = Some(observer);
        self
    }

    /// The split this one is frozen into for a merge, if it is (see
    /// [`crate::merge`]).
    pub fn frozen(&self) -> Option<SplitId> {
        self.frozen
    }

    /// A view of [`Replica::frozen`] that follows this replica as it
    /// applies entries (and installs images).
    pub fn frozen_view(&self) -> FrozenView {
        self.frozen_view.clone()
    }

    /// Whether this replica was made empty for an image and awaits it
    /// ([`Replica::create_for_image`]); a view that follows it.
    pub fn image_view(&self) -> ImageView {
        self.awaits_image.clone()
    }

    /// The split this replica holds.
    pub fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }

    /// The last entry applied, `None` before the first (whose index is 0).
    pub fn applied(&self) -> Option<LogId> {
        self.state.applied
    }

    /// The closed timestamp: no entry after the one that set it writes at
    /// or below it.
    pub fn closed_ts(&self) -> u64 {
        self.state.closed_ts
    }

    /// The split's current lease, if it has had one.
    pub fn lease(&self) -> Option<Lease> {
        self.state.lease
    }

    /// A view of the current lease that follows this replica as it applies
    /// entries (and installs images).
    pub fn lease_view(&self) -> LeaseView {
        self.lease_view.clone()
    }

    /// A view of the closed timestamp that follows this replica as it
    /// applies entries (and installs images): the replica's *safe time*.
    /// Every commit at or below it is applied here, and no entry after the
    /// one that closed it writes at or below it, so a read at or below it
    /// may be served from this replica's data without the lease.
    pub fn closed_view(&self) -> ClosedView {
        self.closed_view.clone()
    }

    /// The last membership applied ([`Replica::apply_config`]): the id of
    /// its entry and its bytes.
    pub fn membership(&self) -> Option<(LogId, &[u8])> {
        self.state
            .membership
            .as_ref()
            .map(|(id, m)| (*id, m.as_slice()))
    }

    /// Decodes and applies the entry `bytes` at `id` (see [`Replica::apply`]).
    pub fn apply_bytes(&mut self, id: LogId, bytes: &[u8]) -> Result<Applied> {
        if self.state.covers(id) {
            return Ok(Applied::AlreadyApplied);
        }
        let command = Command::decode(bytes)?;
        self.apply(id, &command)
    }

    /// Applies the entry `command` at log position `id`: its row versions
    /// and the new applied state in one engine batch. An entry at or below
    /// the applied index was applied before and is skipped; the entry must
    /// otherwise be the next one. Refused whole, with nothing written, if
    /// it breaks one of the rules in the module docs.
    pub fn apply(&mut self, id: LogId, command: &Command) -> Result<Applied> {
        if self.state.covers(id) {
            return Ok(Applied::AlreadyApplied);
        }
        self.check_not_awaiting(id)?;
        let expected = self.state.next_index();
        if id.index != expected {
            return Err(Error::LogGap {
                split: self.descriptor.split,
                index: id.index,
                expected,
            });
        }
        if let Some(into) = self.frozen {
            return self.apply_frozen(id, command, into);
        }
        let mut batch = WriteBatch::new();
        let mut lease = self.state.lease;
        let mut newest = None;
        let mut change = TableChange::None;
        let mut descriptor = None;
        let mut merged = None;
        let mut froze = None;
        let closed_ts = match command {
            Command::Write {
                commits,
                closed_ts,
                meta,
            } => {
                self.check_writes(id, commits)?;
                self.check_meta(id, meta)?;
                for commit in commits {
                    newest = newest.max(Some(commit.ts));
                    self.router.stage_writes(
                        &mut batch,
                        commit.ts,
                        commit
                            .writes
                            .iter()
                            .map(|(k, v)| (k.as_slice(), v.as_deref())),
                    );
                }
                for (key, value) in meta {
                    self.router
                        .stage_meta(&mut batch, key.clone(), value.clone());
                }
                closed_ts.map_or(self.state.closed_ts, |ts| ts.max(self.state.closed_ts))
            }
            Command::ClosedTs(ts) => (*ts).max(self.state.closed_ts),
            Command::Lease(new) => {
                if self.check_lease(id, new)? {
                    // A lease taken over from another holder: every commit
                    // below its start was made under an earlier lease,
                    // which ended at least ε before it, by a node that led
                    // in an earlier term, so its entry is before this one
                    // (Raft commits no entry of an earlier term after one
                    // of a later) and applied. Everything below the start
                    // is visible, and the new holder's strong reads and
                    // commits are above every timestamp an earlier holder
                    // served. (Not for a holder retaking its own expired
                    // lease: a commit it checked under the old lease may
                    // still be proposed after the new one, in the same term.)
                    if lease.is_some_and(|old| old.holder != new.holder) {
                        newest = Some(new.start.saturating_sub(1));
                    }
                    lease = Some(*new);
                }
                self.state.closed_ts
            }
            Command::Prepare(prepare) => {
                change = self.stage_prepare(id, prepare, &mut batch)?;
                self.state.closed_ts
            }
            Command::Decide {
                txn,
                outcome,
                writes,
            } => {
                newest = self.stage_decide(id, *txn, *outcome, writes, &mut batch)?;
                self.state.closed_ts
            }
            Command::Resolve {
                txn,
                outcome,
                writes,
            } => {
                let (c, written) =
                    self.stage_resolve(id, *txn, *outcome, writes.as_deref(), &mut batch)?;
                change = c;
                newest = written;
                self.state.closed_ts
            }
            Command::SplitAt { at, right } => {
                let (halves, moved) = self.stage_split(id, at, *right, &mut batch)?;
                descriptor = halves;
                change = moved;
                self.state.closed_ts
            }
            Command::Freeze { into } => {
                if self.stage_freeze(id, *into, &mut batch)? {
                    froze = Some(*into);
                }
                self.state.closed_ts
            }
            Command::Merge {
                right,
                start,
                limit,
                epoch,
                right_applied,
            } => {
                let wider = self.stage_merge(
                    id,
                    *right,
                    start,
                    limit.as_deref(),
                    *epoch,
                    *right_applied,
                    &mut batch,
                )?;
                merged = Some((wider, *right));
                self.state.closed_ts
            }
        };
        if closed_ts > self.state.closed_ts {
            self.check_close(id, closed_ts)?;
            self.stage_outcome_purge(&mut batch, closed_ts)?;
        }
        let state = State {
            applied: Some(id),
            closed_ts,
            lease,
            ..self.state.clone()
        };
        // A closed timestamp raised: every commit at or below it is
        // applied, so it is visible here too (a follower's reads below its
        // safe time do not wait).
        if closed_ts > self.state.closed_ts {
            newest = newest.max(Some(closed_ts));
        }
        // A split: the left half's descriptor is written with the state;
        // a merge: the wider one.
        let right = descriptor.map(|(left, right)| {
            let before = std::mem::replace(&mut self.descriptor, left);
            (before, right)
        });
        let absorbed = merged.map(|(wider, gone)| {
            let before = std::mem::replace(&mut self.descriptor, wider);
            (before, gone)
        });
        if let Err(e) = self.commit(batch, state, change) {
            if let Some((before, _)) = right {
                self.descriptor = before;
            }
            if let Some((before, _)) = absorbed {
                self.descriptor = before;
            }
            return Err(e);
        }
        if froze.is_some() {
            self.frozen = froze;
            self.frozen_view.set(froze);
        }
        if let (Some(observer), Some((_, gone))) = (&self.merge_observer, &absorbed) {
            observer(&self.descriptor, &[*gone]);
        }
        if let (Some(observer), Some((_, right))) = (&self.split_observer, &right) {
            let membership = self.state.membership.as_ref().map(|(_, m)| m.as_slice());
            observer(&self.descriptor, right, membership);
        }
        if let (Some(observer), Some(ts)) = (&self.observer, newest) {
            observer(ts);
        }
        if let (Some(observer), Command::Write { meta, .. }) = (&self.meta_observer, command) {
            if !meta.is_empty() {
                let keys: Vec<Vec<u8>> = meta.iter().map(|(k, _)| k.clone()).collect();
                observer(&keys);
            }
        }
        Ok(Applied::Applied)
    }

    /// Applies entry `id` on a replica frozen into split `into` for a merge
    /// (see [`crate::merge`]): an entry that would write is refused; any
    /// other is applied in memory only, so the stored state stays as the
    /// `Freeze` left it. A lease taken is served (the leader of a frozen
    /// split keeps answering reads and proposing until the merge), and a
    /// closed timestamp raised is visible to reads here; after a restart
    /// both are learned again from the log, whose entries after the
    /// `Freeze` are applied again.
    fn apply_frozen(&mut self, id: LogId, command: &Command, into: SplitId) -> Result<Applied> {
        match command {
            Command::ClosedTs(ts) => {
                if *ts > self.state.closed_ts {
                    self.check_close(id, *ts)?;
                    self.state.closed_ts = *ts;
                    self.closed_view.raise(*ts);
                    if let Some(observer) = &self.observer {
                        observer(*ts);
                    }
                }
                self.state.applied = Some(id);
                Ok(Applied::Applied)
            }
            Command::Lease(new) => {
                if self.check_lease(id, new)? {
                    self.state.lease = Some(*new);
                    self.lease_view.set(self.state.lease);
                }
                self.state.applied = Some(id);
                Ok(Applied::Applied)
            }
            Command::Freeze { .. } => {
                self.state.applied = Some(id);
                Ok(Applied::Applied)
            }
            other => Err(Error::Replica {
                split: self.descriptor.split,
                message: format!(
                    "log entry {} ({other}) writes to a split frozen for its merge into {into}",
                    id.index
                ),
            }),
        }
    }

    /// Applies an entry of the consensus library's own at `id`: a blank
    /// entry (`membership` is `None`) or a membership change (its bytes).
    /// Only the applied state changes. Such an entry carries no data, so it
    /// need not be the next index, only a later one: what it must not do
    /// is move the applied id back, and an entry at or below it is skipped
    /// as applied before.
    pub fn apply_config(&mut self, id: LogId, membership: Option<Vec<u8>>) -> Result<Applied> {
        if self.state.covers(id) {
            return Ok(Applied::AlreadyApplied);
        }
        self.check_not_awaiting(id)?;
        if self.frozen.is_some() {
            // Nothing is written once frozen (see `crate::merge`).
            self.state.applied = Some(id);
            return Ok(Applied::Applied);
        }
        let state = State {
            applied: Some(id),
            closed_ts: self.state.closed_ts,
            membership: match membership {
                Some(bytes) => Some((id, bytes)),
                None => self.state.membership.clone(),
            },
            lease: self.state.lease,
        };
        self.commit(WriteBatch::new(), state, TableChange::None)?;
        Ok(Applied::Applied)
    }

    /// Refuses the entry at `id` if this replica awaits an image: it was
    /// made empty, and the log does not hold all of the split's rows.
    fn check_not_awaiting(&self, id: LogId) -> Result<()> {
        if self.awaits_image.awaits() {
            return Err(Error::Replica {
                split: self.descriptor.split,
                message: format!(
                    "entry {} was sent to a replica made empty for an image: it applies no \
                     entry before it installs one, since the split's rows did not all come \
                     through the log",
                    id.index
                ),
            });
        }
        Ok(())
    }

    /// Writes `batch` with `state` as the new applied state, then adopts
    /// it and what the entry did to the prepared table.
    fn commit(&mut self, mut batch: WriteBatch, state: State, change: TableChange) -> Result<()> {
        self.stage_state(&mut batch, &self.descriptor, &state);
        self.router.write(batch, Durability::Buffered)?;
        self.prepared.adopt(change);
        self.lease_view.set(state.lease);
        self.closed_view.raise(state.closed_ts);
        self.state = state;
        Ok(())
    }

    /// Makes everything applied so far durable in the engine (entries are
    /// applied with buffered durability, the log being the durable copy):
    /// once it returns, the log may be purged up to the applied id.
    pub fn sync(&self) -> Result<()> {
        self.router.sync()?;
        Ok(())
    }

    /// A copy of the whole replica: every stored version in the split's
    /// range (old versions and tombstones included, as the engine holds
    /// them) and the applied state. Held in memory: a split is cut by size
    /// long before it is large.
    pub fn image(&self) -> Result<SnapshotImage> {
        let d = &self.descriptor;
        let mut out = Vec::new();
        put_u8(&mut out, FORMAT);
        put_varint(&mut out, d.split.0);
        let mut state = Vec::new();
        encode_state(&mut state, d, &self.state);
        put_bytes(&mut out, &state);
        let mut pairs = Vec::new();
        let mut count = 0u64;
        for item in self.router.scan_stored(&d.start, d.limit.as_deref()) {
            let (key, value) = item?;
            put_bytes(&mut pairs, &key);
            put_bytes(&mut pairs, &value);
            count += 1;
        }
        put_varint(&mut out, count);
        out.extend_from_slice(&pairs);
        // The database's metadata, when this replica carries it.
        let mut meta = Vec::new();
        let mut count = 0u64;
        if d.carries_meta() {
            for item in self.router.meta_scan(b"") {
                let (key, value) = item?;
                if !is_replica_key(&key) {
                    put_bytes(&mut meta, &key);
                    put_bytes(&mut meta, &value);
                    count += 1;
                }
            }
        }
        put_varint(&mut out, count);
        out.extend_from_slice(&meta);
        // The replica's prepared transactions and kept outcomes.
        let mut side = Vec::new();
        let mut count = 0u64;
        for item in self.router.meta_scan(&twophase::side_prefix(d.split)) {
            let (key, value) = item?;
            if twophase::is_side_key(d.split, &key) {
                put_bytes(&mut side, &key);
                put_bytes(&mut side, &value);
                count += 1;
            }
        }
        put_varint(&mut out, count);
        out.extend_from_slice(&side);
        Ok(SnapshotImage {
            applied: self.state.applied,
            bytes: out.into(),
        })
    }

    /// Replaces this replica with `image` (from [`Replica::image`] on a
    /// replica of the same split): the stored versions of the range and
    /// the applied state, in one engine batch, synced (the log entries the
    /// image covers may be purged once it is installed). The image is checked whole
    /// before anything is written: its split, its format, and every key
    /// inside the range it describes.
    pub fn install(&mut self, image: &SnapshotImage) -> Result<()> {
        let split = self.descriptor.split;
        let mut r = Reader::new(&image.bytes, "snapshot image");
        r.version(FORMAT)?;
        let of = r.varint()?;
        if of != split.0 {
            return Err(Error::Replica {
                split,
                message: format!("the snapshot image is of split {}", SplitId(of)),
            });
        }
        let state_bytes = r.bytes()?;
        let (descriptor, state) =
            decode_state(split, &mut Reader::new(state_bytes, "applied state"))?;
        let n = r.count(2)?;
        let mut pairs = Vec::with_capacity(n);
        for _ in 0..n {
            let key = r.bytes()?;
            let value = r.bytes()?;
            let (user, _) = split_version_key(key)?;
            // Both the row key and the stored key (row key and version) lie
            // in the range: the second is what `image` reads and what is
            // cleared below. Row keys are prefix-free, so for them the two
            // agree; bytes from elsewhere need not be.
            if !descriptor.contains(user) || !descriptor.contains(key) {
                return Err(Error::OutOfRange {
                    split,
                    index: state.applied.map_or(0, |a| a.index),
                    key: hex(user),
                    range: descriptor.to_string(),
                });
            }
            pairs.push((key, value));
        }
        let n = r.count(2)?;
        let mut meta = Vec::with_capacity(n);
        for _ in 0..n {
            let key = r.bytes()?;
            let value = r.bytes()?;
            if !descriptor.carries_meta() || is_replica_key(key) {
                return Err(Error::Replica {
                    split,
                    message: format!(
                        "the snapshot image holds the metadata key {}, which a replica of {descriptor} may not write",
                        hex(key)
                    ),
                });
            }
            meta.push((key, value));
        }
        // The side tables: the replica's prepared transactions and kept
        // outcomes.
        let n = r.count(2)?;
        let mut side = Vec::with_capacity(n);
        let mut prepared = Vec::new();
        for _ in 0..n {
            let key = r.bytes()?;
            let value = r.bytes()?;
            if !twophase::is_side_key(split, key) {
                return Err(Error::Replica {
                    split,
                    message: format!(
                        "the snapshot image holds the key {} among its transactions, which is not one of this split's",
                        hex(key)
                    ),
                });
            }
            if let Some(prepare) = Self::check_image_record(&descriptor, key, value)? {
                prepared.push(prepare);
            }
            side.push((key, value));
        }
        r.finish()?;
        // Whatever the range holds now (as this replica has it, and as the
        // image has it) and the image does not, goes.
        let kept: HashSet<&[u8]> = pairs.iter().map(|(k, _)| *k).collect();
        let mut batch = WriteBatch::new();
        let mut ranges = vec![&self.descriptor];
        if descriptor.start != self.descriptor.start || descriptor.limit != self.descriptor.limit {
            ranges.push(&descriptor);
        }
        let mut dropped = HashSet::new();
        for d in &ranges {
            for item in self.router.scan_stored(&d.start, d.limit.as_deref()) {
                let (key, _) = item?;
                if !kept.contains(key.as_slice()) && dropped.insert(key.clone()) {
                    batch.delete(Space::Data, key);
                }
            }
        }
        // The rows' heads (on an engine that keeps them) are derived from
        // the versions, so they are rebuilt from the image, not copied.
        let bounds: Vec<(&[u8], Option<&[u8]>)> = ranges
            .iter()
            .map(|d| (d.start.as_slice(), d.limit.as_deref()))
            .collect();
        self.router
            .stage_heads(&mut batch, &bounds, pairs.iter().map(|(k, _)| *k))?;
        for (key, value) in pairs {
            batch.put(Space::Data, key, value);
        }
        // The database's metadata likewise, when the image carries it.
        let mut meta_keys = Vec::new();
        if descriptor.carries_meta() {
            let kept: HashSet<&[u8]> = meta.iter().map(|(k, _)| *k).collect();
            for item in self.router.meta_scan(b"") {
                let (key, _) = item?;
                if !is_replica_key(&key) && !kept.contains(key.as_slice()) {
                    batch.delete(Space::Meta, key);
                }
            }
            for (key, value) in meta {
                meta_keys.push(key.to_vec());
                batch.put(Space::Meta, key, value);
            }
        }
        let kept: HashSet<&[u8]> = side.iter().map(|(k, _)| *k).collect();
        for item in self.router.meta_scan(&twophase::side_prefix(split)) {
            let (key, _) = item?;
            if twophase::is_side_key(split, &key) && !kept.contains(key.as_slice()) {
                batch.delete(Space::Meta, key);
            }
        }
        let frozen_mark = twophase::frozen_key(split);
        let mut frozen = None;
        for (key, value) in side {
            if key == frozen_mark.as_slice() {
                let into: [u8; 8] = value.try_into().map_err(|_| Error::Replica {
                    split,
                    message: format!(
                        "the snapshot image holds a malformed frozen mark {}",
                        hex(value)
                    ),
                })?;
                frozen = Some(SplitId(u64::from_be_bytes(into)));
            }
            batch.put(Space::Meta, key, value);
        }
        // Replicas of splits merged into this one (this replica was behind
        // and is sent the merged image instead of the `Merge`) go, as the
        // `Merge` would have removed them: no two replicas of an engine
        // cover one key.
        let mut gone = Vec::new();
        for other in Self::stored_splits(&self.router)? {
            if other == split {
                continue;
            }
            let Some(held) = Self::stored_state(&self.router, other)? else {
                continue;
            };
            let held = held.descriptor;
            let inside = held.start >= descriptor.start
                && match (&held.limit, &descriptor.limit) {
                    (_, None) => true,
                    (Some(h), Some(l)) => h <= l,
                    (None, Some(_)) => false,
                };
            if inside {
                for item in self.router.meta_scan(&twophase::side_prefix(other)) {
                    let (key, _) = item?;
                    if twophase::is_side_key(other, &key) {
                        batch.delete(Space::Meta, key);
                    }
                }
                batch.delete(Space::Meta, state_key(other));
                batch.delete(Space::Meta, awaits_key(other));
                gone.push(other);
            }
        }
        let reranged =
            descriptor.start != self.descriptor.start || descriptor.limit != self.descriptor.limit;
        self.stage_state(&mut batch, &descriptor, &state);
        batch.delete(Space::Meta, awaits_key(split));
        // Synced: the log entries the image replaces may be purged next.
        self.router.write(batch, Durability::Sync)?;
        self.awaits_image.set(false);
        self.prepared.replace(prepared);
        self.frozen = frozen;
        self.frozen_view.set(frozen);
        self.descriptor = descriptor;
        self.lease_view.set(state.lease);
        self.closed_view.raise(state.closed_ts);
        let closed_ts = state.closed_ts;
        self.state = state;
        if let Some(observer) = &self.meta_observer {
            observer(&meta_keys);
        }
        if let (Some(observer), true) = (&self.merge_observer, reranged || !gone.is_empty()) {
            observer(&self.descriptor, &gone);
        }
        // Everything at or below the image's closed timestamp is in it.
        if let (Some(observer), true) = (&self.observer, closed_ts > 0) {
            observer(closed_ts);
        }
        Ok(())
    }

    /// The checks of a `Write` entry: every key in the range, every
    /// version above the closed timestamp and above every version of its
    /// key stored or written earlier in the entry.
    pub(crate) fn check_writes(&self, id: LogId, commits: &[crate::command::Commit]) -> Result<()> {
        let split = self.descriptor.split;
        let mut newest: HashMap<&[u8], u64> = HashMap::new();
        for commit in commits {
            for (key, _) in &commit.writes {
                if !self.descriptor.contains(key) {
                    return Err(Error::OutOfRange {
                        split,
                        index: id.index,
                        key: hex(key),
                        range: self.descriptor.to_string(),
                    });
                }
                if commit.ts <= self.state.closed_ts {
                    return Err(Error::TimestampOrder {
                        split,
                        index: id.index,
                        key: hex(key),
                        ts: commit.ts,
                        bound: self.state.closed_ts,
                        why: "the closed timestamp",
                    });
                }
                let (before, why) = match newest.get(key.as_slice()) {
                    Some(&ts) if ts == commit.ts => {
                        (Some(ts), "the key written twice by one commit")
                    }
                    Some(&ts) => (
                        Some(ts),
                        "a version written by an earlier commit of the entry",
                    ),
                    None => (
                        self.newest_stored(key)?,
                        "a version of the key already stored",
                    ),
                };
                if let Some(bound) = before {
                    if commit.ts <= bound {
                        return Err(Error::TimestampOrder {
                            split,
                            index: id.index,
                            key: hex(key),
                            ts: commit.ts,
                            bound,
                            why,
                        });
                    }
                }
                newest.insert(key, commit.ts);
            }
        }
        Ok(())
    }

    /// The checks of a `Lease` entry: whether it replaces the current lease
    /// (`false`: it lost a race and changes nothing), or an error if it
    /// breaks the chain's rules.
    fn check_lease(&self, id: LogId, new: &Lease) -> Result<bool> {
        let refuse = |why| Error::Lease {
            split: self.descriptor.split,
            index: id.index,
            lease: new.to_string(),
            why,
        };
        if new.seq == 0 {
            return Err(refuse("leases are numbered from 1"));
        }
        if new.expiry <= new.start {
            return Err(refuse("it ends before it starts"));
        }
        let current_seq = self.state.lease.map_or(0, |l| l.seq);
        if new.seq != current_seq + 1 {
            return Ok(false);
        }
        if let Some(current) = &self.state.lease {
            if current.holder != new.holder && new.start < current.expiry {
                return Err(refuse(
                    "it starts before the current lease of another node expires",
                ));
            }
            if new.start < current.start {
                return Err(refuse("it starts before the lease it replaces"));
            }
        }
        Ok(true)
    }

    /// The checks of a `Write` entry's metadata: only a replica of the
    /// first split holds the database's metadata, and no key may fall
    /// among the replicas' own states.
    fn check_meta(&self, id: LogId, meta: &[crate::command::Write]) -> Result<()> {
        let refuse = |key: &[u8], why: &str| Error::Replica {
            split: self.descriptor.split,
            message: format!(
                "entry {} writes the metadata key {}: {why}",
                id.index,
                hex(key)
            ),
        };
        if let Some((key, _)) = meta.first().filter(|_| !self.descriptor.carries_meta()) {
            return Err(refuse(
                key,
                "only the group of the first split (whose range starts at the empty key) carries metadata, and this split is not one",
            ));
        }
        if let Some((key, _)) = meta.iter().find(|(k, _)| is_replica_key(k)) {
            return Err(refuse(key, "it lies among the replicas' own states"));
        }
        Ok(())
    }

    /// The timestamp of the newest stored version of `key`, if any.
    fn newest_stored(&self, key: &[u8]) -> Result<Option<u64>> {
        // Versions of a key sort newest first, from version_key(key,
        // MAX_READ_TS) to version_key(key, 0); an old-style head before them
        // (see `rowtree_storage::mvcc`) is not a version.
        let start = version_key(key, MAX_READ_TS);
        let mut limit = version_key(key, 0);
        limit.push(0);
        for item in self.router.scan_stored(&start, Some(&limit)) {
            let (stored, _) = item?;
            let (user, ts) = split_version_key(&stored)?;
            if user == key {
                return Ok(Some(ts));
            }
        }
        Ok(None)
    }

    fn stage_state(&self, batch: &mut WriteBatch, descriptor: &Descriptor, state: &State) {
        let mut out = Vec::new();
        encode_state(&mut out, descriptor, state);
        self.router
            .stage_meta(batch, state_key(descriptor.split), Some(out));
    }
}

/// A copy of a whole replica, from [`Replica::image`]: opaque bytes (the
/// same on every node, so they can be sent as they are) and the id of the
/// last entry they include. Cheap to clone.
#[derive(Clone, PartialEq, Eq)]
pub struct SnapshotImage {
    applied: Option<LogId>,
    bytes: Arc<[u8]>,
}

impl SnapshotImage {
    /// An image received as `bytes` (checked only when installed).
    pub fn from_bytes(bytes: Vec<u8>) -> SnapshotImage {
        SnapshotImage {
            applied: None,
            bytes: bytes.into(),
        }
    }

    /// The image's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The last entry the image includes, when it was made here (an image
    /// from [`SnapshotImage::from_bytes`] says `None` until installed).
    pub fn applied(&self) -> Option<LogId> {
        self.applied
    }
}

impl fmt::Debug for SnapshotImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SnapshotImage")
            .field("applied", &self.applied)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// The applied state's binary form:
///
/// ```text
/// state = FORMAT:u8  applied:(0 | 1 term index)  closed_ts  epoch  start
///         limit:(0 | 1 bytes)  membership:(0 | 1 term index bytes)
///         [lease:(0 | 1 seq holder start expiry)]
/// ```
///
/// The lease came after the first nodes stored states: a state that ends
/// before it has no lease.
pub(crate) fn encode_state(out: &mut Vec<u8>, d: &Descriptor, state: &State) {
    put_u8(out, FORMAT);
    put_log_id(out, state.applied);
    put_varint(out, state.closed_ts);
    put_varint(out, d.epoch);
    put_bytes(out, &d.start);
    match &d.limit {
        None => put_u8(out, 0),
        Some(l) => {
            put_u8(out, 1);
            put_bytes(out, l);
        }
    }
    match &state.membership {
        None => put_u8(out, 0),
        Some((id, bytes)) => {
            put_log_id(out, Some(*id));
            put_bytes(out, bytes);
        }
    }
    match &state.lease {
        None => put_u8(out, 0),
        Some(l) => {
            put_u8(out, 1);
            l.encode_into(out);
        }
    }
}

fn put_log_id(out: &mut Vec<u8>, id: Option<LogId>) {
    match id {
        None => put_u8(out, 0),
        Some(id) => {
            put_u8(out, 1);
            put_varint(out, id.term);
            put_varint(out, id.index);
        }
    }
}

fn read_log_id(r: &mut Reader<'_>) -> std::result::Result<Option<LogId>, DecodeError> {
    match r.u8()? {
        0 => Ok(None),
        1 => Ok(Some(LogId::new(r.varint()?, r.varint()?))),
        other => Err(r.error(format!("log id flag {other}"))),
    }
}

/// The descriptor and applied state of `split` from their stored bytes.
pub(crate) fn decode_stored_state(split: SplitId, bytes: &[u8]) -> Result<(Descriptor, State)> {
    Ok(decode_state(
        split,
        &mut Reader::new(bytes, "applied state"),
    )?)
}

fn decode_state(
    split: SplitId,
    r: &mut Reader<'_>,
) -> std::result::Result<(Descriptor, State), DecodeError> {
    r.version(FORMAT)?;
    let applied = read_log_id(r)?;
    let closed_ts = r.varint()?;
    let epoch = r.varint()?;
    let start = r.bytes()?.to_vec();
    let limit = match r.u8()? {
        0 => None,
        1 => Some(r.bytes()?.to_vec()),
        other => return Err(r.error(format!("limit flag {other}"))),
    };
    let membership = match read_log_id(r)? {
        None => None,
        Some(id) => Some((id, r.bytes()?.to_vec())),
    };
    let lease = if r.remaining() == 0 {
        None
    } else {
        match r.u8()? {
            0 => None,
            1 => Some(Lease::decode_from(r)?),
            other => return Err(r.error(format!("lease flag {other}"))),
        }
    };
    r.finish()?;
    Ok((
        Descriptor {
            split,
            start,
            limit,
            epoch,
        },
        State {
            applied,
            closed_ts,
            membership,
            lease,
        },
    ))
}

impl fmt::Debug for Replica {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replica")
            .field("descriptor", &self.descriptor)
            .field("applied", &self.state.applied)
            .field("closed_ts", &self.state.closed_ts)
            .field("lease", &self.state.lease)
            .finish()
    }
}
