//! [`Router`]: every access to storage goes through here.
//!
//! The router owns the MVCC layer over the storage engine and hands out no
//! reference to either, so what the database reads and writes is exactly
//! what these methods do. In particular there is one write path to the
//! engine, [`Router::write`] (garbage collection, below, is the one
//! exception), and one way commits become durable,
//! [`Router::write_commits`]: to this engine, or through a cluster's
//! replicated log that applies them here with [`Router::write`] (see
//! [`crate::replication`]).
//!
//! Row data is served split by split: the router resolves each request to
//! the splits it touches (through the [`SplitMap`]) and charges each split
//! what it served:
//!
//! * a **get** is one read request on the split holding the key, plus the
//!   row and its bytes if found;
//! * a **scan** is cut at split boundaries and read split by split, in key
//!   order (or reverse order); each split touched counts one read request and
//!   is charged the rows and bytes it returned and the CPU time spent reading
//!   them. Rows are read from storage in small batches, and time is measured
//!   per batch (not per row) to keep the overhead low; the counters are
//!   updated once, when the scan leaves the split or is dropped;
//! * a range **another node serves** ([`Replication::route_read`]: in a
//!   cluster whose splits are placed on some of its nodes, those this node
//!   holds no replica of; under locks, those led elsewhere; at a timestamp
//!   this node's replica has not reached, its leader) is read from that
//!   node, in batches of the same sizes ([`Replication::read_elsewhere`]);
//!   the scan cuts the split's part into local and remote pieces and reads
//!   them in order, and the serving node charges the rows to its own
//!   splits, not this one;
//! * a **commit** is charged with [`Router::charge_writes`]: one write request
//!   per split it writes to, and each key's row and bytes. The set of splits
//!   touched tells the commit path whether it needs two-phase commit.
//!
//! Each of these is also recorded as an [`Access`] in the split's
//! [`LoadTracker`](crate::LoadTracker) (for load-based splitting), stamped
//! with the router's clock ([`Router::with_clock`]). CPU time: gets and scans
//! charge the time measured around the storage calls (as for
//! [`SplitStats`](crate::SplitStats)); writes are not timed here (they are
//! applied later, in a batch, by the commit path), so each written row is
//! charged a modelled [`WRITE_CPU_NANOS_PER_ROW`], both to the tracker and to
//! the split's CPU counter.
//!
//! The rest is not charged to any split, because it is not load a split
//! serves:
//!
//! * **writes**: [`Router::write_commits`] makes a group of commits and the
//!   metadata written with them durable; the database's commit pipeline
//!   writes every group of commits this way (schema changes included), and
//!   so do the sequence reservations. [`Router::write`] writes one atomic
//!   batch of row versions ([`Router::stage_writes`]) and metadata
//!   ([`Router::stage_meta`]) to this engine: what `write_commits` does
//!   alone, what a replica does when it applies a log entry, and how the
//!   node-local records (split map, load history, format marker) are
//!   written. The rows were charged when the commit was resolved
//!   ([`Router::charge_writes`]); [`Router::commit`] charges, stages and
//!   writes for a caller with nothing else to write;
//! * **metadata reads** ([`Router::meta_get`], [`Router::meta_scan`]): the
//!   unversioned metadata space (DDL log, last commit timestamp, ...);
//! * **stored scans** ([`Router::scan_stored`]): every stored version of a
//!   key range, raw, to measure how much a split stores;
//! * **garbage collection** ([`Router::collect_garbage`]): the MVCC layer
//!   deletes versions no read can see any more. These deletions are the one
//!   write that does not go through [`Router::write`]: the MVCC layer writes
//!   them itself, row by row, as local maintenance that changes nothing any
//!   read at or after the horizon sees;
//! * **inspection** ([`Router::scan_uncharged`]): a snapshot read for tests
//!   and debugging that leaves the split counters alone.
//!
//! Keys and values are opaque bytes here; timestamps are MVCC commit/read
//! timestamps (see [`Mvcc`]).

use std::collections::{BTreeSet, VecDeque};
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rowtree_storage::mvcc::MvccScan;
use rowtree_storage::{Durability, GcStats, KeyRange, Mvcc, ScanIter, Space, WriteBatch};

use crate::clock::{system_clock, RouterClock};
use crate::gc_watch::GcWatch;
use crate::load::Access;
use crate::nodes::{NodeGate, READ_COST, WRITE_ROW_COST};
use crate::replication::{CommitGroup, RemoteBatch, RemoteRead, Replication};
use crate::split::{NodeId, Split, SplitCounters, SplitId};
use crate::split_map::{range_is_empty, SplitMap};
use crate::Result;

/// The first batch of rows a scan reads from a split; doubled up to
/// [`MAX_BATCH`] while the caller keeps reading, so a `LIMIT 1` reads little
/// and a long scan pays the clock rarely.
const FIRST_BATCH: usize = 8;
/// The largest batch of rows read at once.
const MAX_BATCH: usize = 256;

/// The modelled CPU cost of writing one row (WAL append, memtable insert,
/// commit bookkeeping on the local engine): 10 µs.
pub const WRITE_CPU_NANOS_PER_ROW: u64 = 10_000;

/// At most this many of a commit's writes in one split join the split's key
/// sample ([`Router::charge_writes`]).
pub const SAMPLED_WRITES_PER_SPLIT: u64 = 8;

/// Whether the `j`-th of a commit's `rows` writes in one split (from 0)
/// joins the key sample: all of them up to [`SAMPLED_WRITES_PER_SPLIT`],
/// else the first of each of that many equal runs.
fn sampled_write(j: u64, rows: u64) -> bool {
    rows <= SAMPLED_WRITES_PER_SPLIT
        || j == 0
        || j * SAMPLED_WRITES_PER_SPLIT / rows != (j - 1) * SAMPLED_WRITES_PER_SPLIT / rows
}

/// The splits a set of writes touched, in id order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitsTouched(BTreeSet<SplitId>);

impl SplitsTouched {
    /// How many splits.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no split was touched (no writes).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the writes span several splits, so committing them atomically
    /// takes two-phase commit.
    pub fn is_multi_split(&self) -> bool {
        self.0.len() > 1
    }

    /// Whether `id` was touched.
    pub fn contains(&self, id: SplitId) -> bool {
        self.0.contains(&id)
    }

    /// The ids, ascending.
    pub fn iter(&self) -> impl Iterator<Item = SplitId> + '_ {
        self.0.iter().copied()
    }
}

/// One split's row in [`Router::stats_snapshot`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitSnapshot {
    /// The split's id.
    pub id: SplitId,
    /// First key (inclusive).
    pub start: Vec<u8>,
    /// Limit (exclusive); `None` for the last split.
    pub limit: Option<Vec<u8>>,
    /// Serving node.
    pub node: NodeId,
    /// Its counters.
    pub counters: SplitCounters,
}

/// The data access layer: MVCC storage cut into splits.
pub struct Router {
    mvcc: Mvcc,
    splits: Arc<SplitMap>,
    clock: RouterClock,
    /// Per-node admission (none: nodes have unlimited capacity).
    gate: Option<Arc<NodeGate>>,
    /// The timestamps written since the last complete garbage collection.
    gc_watch: GcWatch,
    /// Where commit groups go (none: this router's engine, synced).
    replication: Option<Arc<dyn Replication>>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("mvcc", &self.mvcc)
            .field("splits", &self.splits)
            .finish_non_exhaustive()
    }
}

impl Router {
    /// A router over the MVCC data of `mvcc`, cut by `splits`, timing
    /// accesses with the system clock.
    pub fn new(mvcc: Mvcc, splits: SplitMap) -> Router {
        Router::with_clock(mvcc, Arc::new(splits), system_clock())
    }

    /// A router over a shared split map (e.g. one a
    /// [`SplitManager`](crate::SplitManager) also manages), stamping accesses
    /// with `clock` (nanoseconds since the epoch).
    pub fn with_clock(mvcc: Mvcc, splits: Arc<SplitMap>, clock: RouterClock) -> Router {
        Router {
            mvcc,
            splits,
            clock,
            gate: None,
            gc_watch: GcWatch::new(),
            replication: None,
        }
    }

    /// Whether accesses wait for their split's node at a [`NodeGate`]
    /// (simulated node capacity): such a wait blocks the calling thread.
    pub fn gated(&self) -> bool {
        self.gate.is_some()
    }

    /// Makes every access wait for its split's node at `gate` (see
    /// [`NodeGate`]): a get before it is served, a scan as it reads each
    /// batch of rows, a commit's writes per split before they are charged.
    pub fn with_gate(mut self, gate: Arc<NodeGate>) -> Router {
        self.gate = Some(gate);
        self
    }

    /// Makes [`Router::write_commits`] hand commit groups to `replication`
    /// (a cluster's replicated log) instead of writing them to this
    /// router's engine; see [`crate::replication`].
    pub fn with_replication(mut self, replication: Arc<dyn Replication>) -> Router {
        self.replication = Some(replication);
        self
    }

    /// Whether commit groups go through a replicated log.
    pub fn replicated(&self) -> bool {
        self.replication.is_some()
    }

    /// The per-node admission gate, if any.
    pub fn gate(&self) -> Option<&Arc<NodeGate>> {
        self.gate.as_ref()
    }

    /// The split map (to add split points, or inspect splits).
    pub fn splits(&self) -> &SplitMap {
        &self.splits
    }

    /// The shared split map.
    pub fn split_map(&self) -> &Arc<SplitMap> {
        &self.splits
    }

    /// The current time by the router's clock.
    pub fn now(&self) -> u64 {
        (self.clock)()
    }

    /// The row `key` as of `ts`, charged to the split holding it.
    pub fn get(&self, key: &[u8], ts: u64) -> Result<Option<Vec<u8>>> {
        Ok(self.get_from(key, ts)?.1)
    }

    /// [`Router::get`], also saying which split served the key (a reader
    /// that counts the splits it touched needs no second lookup).
    pub fn get_from(&self, key: &[u8], ts: u64) -> Result<(SplitId, Option<Vec<u8>>)> {
        if let Some(replication) = &self.replication {
            let end = [key, &[0]].concat();
            if !replication.route_read(ts, key, Some(&end))?.is_empty() {
                let row = get_elsewhere(replication.as_ref(), key, ts)?;
                return Ok((self.splits.split_for(key).id, row));
            }
        }
        let split = self.splits.split_for(key);
        if let Some(gate) = &self.gate {
            gate.admit(split.node(), READ_COST);
        }
        let started = Instant::now();
        let row = self.mvcc.get_at(key, ts);
        let cpu = started.elapsed();
        split.stats.record_cpu(cpu);
        let row = row?;
        let (rows, bytes) = match &row {
            Some(value) => (1, (key.len() + value.len()) as u64),
            None => (0, 0),
        };
        split.stats.record_read(1, rows, bytes);
        // With node gates, a split is charged the time it held its node, so
        // its CPU score is a percentage of that node; else the measured time.
        let cpu_nanos = match &self.gate {
            Some(gate) => gate.node_nanos(READ_COST),
            None => u64::try_from(cpu.as_nanos()).unwrap_or(u64::MAX),
        };
        split
            .load
            .lock()
            .record(self.now(), &Access::read(key, rows, bytes, cpu_nanos));
        Ok((split.id, row))
    }

    /// The rows with keys in `[start, end)` (no `end`: to the end of the key
    /// space) visible at `ts`, in key order (descending if `reverse`), read
    /// split by split. The usual form of a scan: a row tree or an object is
    /// `[prefix, prefix_end(prefix))`.
    pub fn scan(&self, start: &[u8], end: Option<&[u8]>, ts: u64, reverse: bool) -> RouterScan<'_> {
        let end = match end {
            Some(e) => Bound::Excluded(e),
            None => Bound::Unbounded,
        };
        self.scan_bounds(Bound::Included(start), end, ts, reverse)
    }

    /// Like [`Router::scan`], with each bound inclusive, exclusive or
    /// unbounded.
    pub fn scan_bounds(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        ts: u64,
        reverse: bool,
    ) -> RouterScan<'_> {
        let mut splits = self.splits.route(start, end);
        if reverse {
            splits.reverse();
        }
        RouterScan {
            router: self,
            start: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            ts,
            reverse,
            splits: splits.into(),
            pieces: VecDeque::new(),
            current: None,
            remaining: usize::MAX,
            done: range_is_empty(start, end),
        }
    }

    /// Charges each written key (`None`: a delete) to its split: one write
    /// request per split touched, and one row plus key and value bytes per
    /// key. Returns the splits touched.
    ///
    /// Every written key joins its split's key sample, up to
    /// [`SAMPLED_WRITES_PER_SPLIT`] per split, evenly spaced among the
    /// commit's writes there beyond that: a split's sample must see the row
    /// a commit appends at the tail of an index as well as the entry it
    /// deletes from the middle, or a moving hot spot hides behind the
    /// commit's first key.
    pub fn charge_writes<K, V>(&self, writes: &[(K, Option<V>)]) -> SplitsTouched
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        // Per split: the split, rows, bytes. Per write: its split's place
        // in `per_split`.
        let mut per_split: Vec<(Arc<Split>, u64, u64)> = Vec::new();
        let mut slot_of: Vec<u32> = Vec::with_capacity(writes.len());
        for (key, value) in writes {
            let key = key.as_ref();
            let bytes = (key.len() + value.as_ref().map_or(0, |v| v.as_ref().len())) as u64;
            // Writes of one commit are usually sorted or clustered: check the
            // last split before routing again.
            let slot = match per_split.last() {
                Some((split, ..)) if split.contains(key) => per_split.len() - 1,
                _ => {
                    let split = self.splits.split_for(key);
                    match per_split.iter().position(|(s, ..)| s.id == split.id) {
                        Some(slot) => slot,
                        None => {
                            per_split.push((split, 0, 0));
                            per_split.len() - 1
                        }
                    }
                }
            };
            let (_, rows, total) = &mut per_split[slot];
            *rows += 1;
            *total += bytes;
            slot_of.push(slot as u32);
        }
        let mut touched = BTreeSet::new();
        let now = if per_split.is_empty() { 0 } else { self.now() };
        if let Some(gate) = &self.gate {
            for (split, rows, _) in &per_split {
                gate.admit(split.node(), *rows as f64 * WRITE_ROW_COST);
            }
        }
        // The writes seen so far in each split.
        let mut seen = vec![0u64; per_split.len()];
        for ((key, _), &slot) in writes.iter().zip(&slot_of) {
            let (split, rows, bytes) = &per_split[slot as usize];
            let j = seen[slot as usize];
            seen[slot as usize] += 1;
            if j == 0 {
                // The first key carries the whole access's totals.
                let cpu_nanos = match &self.gate {
                    Some(gate) => gate.node_nanos(*rows as f64 * WRITE_ROW_COST),
                    None => rows.saturating_mul(WRITE_CPU_NANOS_PER_ROW),
                };
                split.stats.record_write(1, *rows, *bytes);
                split.stats.record_cpu(Duration::from_nanos(cpu_nanos));
                split
                    .load
                    .lock()
                    .record(now, &Access::write(key.as_ref(), *rows, *bytes, cpu_nanos));
                touched.insert(split.id);
            } else if sampled_write(j, *rows) {
                split.load.lock().sample_write(now, key.as_ref());
            }
        }
        SplitsTouched(touched)
    }

    /// Adds the versions of `writes` at commit timestamp `ts` to `batch`
    /// (see [`Mvcc::put_versions`]), to be written with [`Router::write`].
    pub fn stage_writes<K, V, I>(&self, batch: &mut WriteBatch, ts: u64, writes: I)
    where
        I: IntoIterator<Item = (K, Option<V>)>,
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.gc_watch.note_write(ts);
        self.mvcc.put_versions(batch, ts, writes);
    }

    /// Adds to `batch` what rebuilds the row heads of `ranges` (each
    /// `[start, limit)`) from `stored`, the raw versions they will hold, in
    /// the order [`Router::scan_stored`] gives them (see
    /// [`Mvcc::stage_heads`]): for a batch that replaces ranges' versions
    /// wholesale.
    pub fn stage_heads<'k>(
        &self,
        batch: &mut WriteBatch,
        ranges: &[(&[u8], Option<&[u8]>)],
        stored: impl IntoIterator<Item = &'k [u8]>,
    ) -> Result<()> {
        Ok(self.mvcc.stage_heads(batch, ranges, stored)?)
    }

    /// Adds an unversioned metadata write to `batch` (`None` deletes the
    /// key), to be written with [`Router::write`] atomically with the rest
    /// of the batch.
    pub fn stage_meta(&self, batch: &mut WriteBatch, key: Vec<u8>, value: Option<Vec<u8>>) {
        match value {
            Some(value) => batch.put(Space::Meta, key, value),
            None => batch.delete(Space::Meta, key),
        }
    }

    /// Writes `batch` (row versions from [`Router::stage_writes`], metadata
    /// from [`Router::stage_meta`]) atomically, durably if `durability`
    /// says so: the one write path to storage. Nothing is charged here; the
    /// rows were charged with [`Router::charge_writes`].
    pub fn write(&self, batch: WriteBatch, durability: Durability) -> Result<()> {
        self.mvcc.engine().write(batch, durability)?;
        Ok(())
    }

    /// Makes `group` durable: the commits' rows as versions at their
    /// timestamps and the metadata, atomically. Alone, one synced batch on
    /// this router's engine; with a [`Replication`], through it (it applies
    /// the group here, with [`Router::write`], before it returns). The
    /// commit path's one way to storage; nothing is charged (the rows were
    /// charged with [`Router::charge_writes`]).
    pub fn write_commits(&self, group: CommitGroup) -> Result<()> {
        if let Some(replication) = &self.replication {
            return replication.replicate(group);
        }
        let mut batch = WriteBatch::new();
        for commit in group.commits {
            self.stage_writes(&mut batch, commit.ts, commit.writes);
        }
        for (key, value) in group.meta {
            self.stage_meta(&mut batch, key, value);
        }
        self.write(batch, Durability::Sync)
    }

    /// Whether this node may assign commit timestamps now: always, alone;
    /// with a [`Replication`], as it says
    /// ([`Replication::ready_to_commit`]).
    pub fn ready_to_commit(&self) -> Result<()> {
        match &self.replication {
            None => Ok(()),
            Some(replication) => replication.ready_to_commit(),
        }
    }

    /// Whether this node may serve a read at `ts` (`None`: the latest, in
    /// a read-write transaction): always, alone; with a [`Replication`],
    /// as it says ([`Replication::check_read`]).
    pub fn check_read(&self, ts: Option<u64>) -> Result<()> {
        match &self.replication {
            None => Ok(()),
            Some(replication) => replication.check_read(ts),
        }
    }

    /// Whether this node may commit writes to `keys` now: always, alone;
    /// with a [`Replication`], as it says
    /// ([`Replication::check_writes`]).
    pub fn check_writes<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) -> Result<()> {
        match &self.replication {
            None => Ok(()),
            Some(replication) => replication.check_writes(&mut { keys }),
        }
    }

    /// The parts of `[start, end)` whose locks another node serves
    /// ([`Replication::locked_elsewhere`]); none alone.
    pub fn locked_elsewhere(&self, start: &[u8], end: Option<&[u8]>) -> Vec<crate::KeySpan> {
        match &self.replication {
            None => Vec::new(),
            Some(replication) => replication.locked_elsewhere(start, end),
        }
    }

    /// Takes a lock for `txn` at the node serving the locks of
    /// `[start, end)` ([`Replication::lock_elsewhere`]).
    pub fn lock_elsewhere(
        &self,
        txn: crate::TxnRef,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
        exclusive: bool,
    ) -> Result<()> {
        match &self.replication {
            None => Ok(()),
            Some(replication) => replication.lock_elsewhere(txn, start, end, point, exclusive),
        }
    }

    /// Prepares writes at the nodes leading their splits
    /// ([`Replication::prepare_elsewhere`]); the highest prepare
    /// timestamp.
    pub fn prepare_elsewhere(
        &self,
        txn: crate::TxnRef,
        writes: Vec<crate::ElsewhereWrite>,
    ) -> Result<u64> {
        match &self.replication {
            None => Err(crate::Error::Replication(
                "nothing is replicated: there is no other node to prepare at".into(),
            )),
            Some(replication) => replication.prepare_elsewhere(txn, writes),
        }
    }

    /// Confirms the locks `txn` holds at other nodes, where it writes
    /// nothing ([`Replication::confirm_elsewhere`]); 0 when nothing is
    /// replicated.
    pub fn confirm_elsewhere(&self, txn: crate::TxnRef) -> Result<u64> {
        match &self.replication {
            None => Ok(0),
            Some(replication) => replication.confirm_elsewhere(txn),
        }
    }

    /// Whether `txn`'s write of `key` is prepared at another node
    /// ([`Replication::written_elsewhere`]); never alone.
    pub fn written_elsewhere(&self, txn: crate::TxnRef, key: &[u8]) -> bool {
        self.replication
            .as_ref()
            .is_some_and(|replication| replication.written_elsewhere(txn, key))
    }

    /// Lets go of what `txn` holds at other nodes
    /// ([`Replication::release_elsewhere`]).
    pub fn release_elsewhere(&self, txn: crate::TxnRef) {
        if let Some(replication) = &self.replication {
            replication.release_elsewhere(txn);
        }
    }

    /// The one node leading every split `keys` fall in, if a
    /// [`Replication`] knows one ([`Replication::leader_of_keys`]); `None`
    /// alone.
    pub fn leader_of_keys<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) -> Option<u64> {
        self.replication
            .as_ref()
            .and_then(|replication| replication.leader_of_keys(&mut { keys }))
    }

    /// This node's safe time, if its [`Replication`] promises one
    /// ([`Replication::safe_ts`]); `None` alone.
    pub fn safe_ts(&self) -> Option<u64> {
        self.replication.as_ref().and_then(|r| r.safe_ts())
    }

    /// Whether this node serves reads at any timestamp: always, alone;
    /// with a [`Replication`], as it says
    /// ([`Replication::serves_fresh_reads`]).
    pub fn serves_fresh_reads(&self) -> bool {
        self.replication
            .as_ref()
            .is_none_or(|r| r.serves_fresh_reads())
    }

    /// Whether a commit's metadata and rows are written in one atomic
    /// step: always, alone; with a [`Replication`], as it says
    /// ([`Replication::metadata_is_atomic`]).
    pub fn metadata_is_atomic(&self) -> bool {
        self.replication
            .as_ref()
            .is_none_or(|r| r.metadata_is_atomic())
    }

    /// Makes every write made so far durable (one engine sync): for a
    /// caller that wrote with buffered durability and must now know it is
    /// on disk, as a cluster replica does before its log is purged.
    pub fn sync(&self) -> Result<()> {
        self.mvcc.engine().sync()?;
        Ok(())
    }

    /// Charges, stages and writes `writes` at `ts` in one atomic batch: the
    /// whole write path of a commit that has nothing else to write.
    pub fn commit<K, V>(
        &self,
        ts: u64,
        writes: &[(K, Option<V>)],
        durability: Durability,
    ) -> Result<SplitsTouched>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let touched = self.charge_writes(writes);
        let mut batch = WriteBatch::new();
        self.stage_writes(
            &mut batch,
            ts,
            writes
                .iter()
                .map(|(k, v)| (k.as_ref(), v.as_ref().map(AsRef::as_ref))),
        );
        self.write(batch, durability)?;
        Ok(touched)
    }

    /// The metadata value of `key` (the unversioned metadata space).
    pub fn meta_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.mvcc.engine().get(Space::Meta, key)?)
    }

    /// The metadata entries whose keys start with `prefix`, in key order.
    pub fn meta_scan(&self, prefix: &[u8]) -> ScanIter<'_> {
        self.mvcc
            .engine()
            .scan(Space::Meta, KeyRange::prefix(prefix), false)
    }

    /// Every stored version with a key in `[start, limit)` (no `limit`: to
    /// the end of the key space), in key order, raw: each key is a row key
    /// followed by its 8-byte version suffix, old versions and tombstones
    /// included. For measuring how many bytes a split stores; not charged.
    pub fn scan_stored(&self, start: &[u8], limit: Option<&[u8]>) -> ScanIter<'_> {
        let range = KeyRange::new(
            Bound::Included(start.to_vec()),
            limit.map_or(Bound::Unbounded, |l| Bound::Excluded(l.to_vec())),
        );
        self.mvcc.engine().scan(Space::Data, range, false)
    }

    /// Garbage-collects versions no read at or after `horizon` can see,
    /// examining about `budget` versions from where the last call stopped
    /// (see [`Mvcc::gc`]). The MVCC layer writes the deletions itself, not
    /// through [`Router::write`]; nothing is charged.
    pub fn collect_garbage(&self, horizon: u64, budget: usize) -> Result<GcStats> {
        let stats = self.mvcc.gc(horizon, budget)?;
        self.gc_watch.passed(horizon, stats.pass_complete);
        Ok(stats)
    }

    /// Whether a garbage-collection pass at `horizon` can delete anything:
    /// false when no row version was written at a timestamp above the last
    /// complete pass's horizon and at or below this one (see [`GcWatch`]).
    /// Right after the router is created it is true: what storage already
    /// holds is unknown.
    pub fn garbage_possible(&self, horizon: u64) -> bool {
        self.gc_watch.pass_needed(horizon)
    }

    /// Tells the garbage collector's watch that storage holds no row
    /// version yet and every commit will take a timestamp above `ts` (a
    /// database just created, not reopened): the first pass then waits for
    /// a write to fall behind the horizon instead of reading everything
    /// (see [`GcWatch::starts_empty`]).
    pub fn starts_empty(&self, ts: u64) {
        self.gc_watch.starts_empty(ts);
    }

    /// The rows in the bounds visible at `ts`, like [`Router::scan_bounds`]
    /// but charging no split and waiting at no node gate: for tests and
    /// debugging, never for serving a request.
    pub fn scan_uncharged(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        ts: u64,
        reverse: bool,
    ) -> MvccScan<'_> {
        self.mvcc.scan_at(start, end, ts, reverse)
    }

    /// Every split with its bounds, node and counters, in key order.
    pub fn stats_snapshot(&self) -> Vec<SplitSnapshot> {
        self.splits
            .splits()
            .iter()
            .map(|s| SplitSnapshot {
                id: s.id,
                start: s.start.clone(),
                limit: s.limit.clone(),
                node: s.node(),
                counters: s.stats.snapshot(),
            })
            .collect()
    }
}

/// The iterator of [`Router::scan`]: `(key, value)` rows, split by split.
pub struct RouterScan<'a> {
    router: &'a Router,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    ts: u64,
    reverse: bool,
    /// Splits still to read, in scan order.
    splits: VecDeque<Arc<Split>>,
    /// What is left of the split being read when parts of it are held by
    /// other nodes: its local and remote pieces, in scan order.
    pieces: VecDeque<Piece>,
    current: Option<Reader<'a>>,
    /// Rows the caller still wants ([`RouterScan::limit`]).
    remaining: usize,
    done: bool,
}

impl RouterScan<'_> {
    /// Ends the scan after `rows` rows, and reads no more than that from
    /// storage: a split's batches are cut to what is still wanted, where
    /// `take(rows)` would let the last batch read up to twice as many
    /// rows and drop them.
    pub fn limit(mut self, rows: usize) -> Self {
        self.remaining = rows;
        self
    }

    /// The reader of one piece of a split partly held elsewhere.
    fn piece_reader<'a>(router: &'a Router, ts: u64, reverse: bool, piece: Piece) -> Reader<'a> {
        if piece.elsewhere {
            let replication = router
                .replication
                .as_deref()
                .expect("pieces held elsewhere come from a replication");
            return Reader::Remote(RemoteReader {
                replication,
                read: RemoteRead {
                    start: piece.start,
                    end: piece.end,
                    ts,
                    reverse,
                    max_rows: FIRST_BATCH,
                },
                buffer: VecDeque::new(),
                exhausted: false,
            });
        }
        let range = (
            bound_key(piece.start.as_ref()),
            bound_limit(piece.end.as_ref()),
        );
        let scan = router.mvcc.scan_at(
            piece.start.as_ref().map(Vec::as_slice),
            piece.end.as_ref().map(Vec::as_slice),
            ts,
            reverse,
        );
        Reader::Local(SplitReader::new(
            piece.split,
            scan,
            &router.clock,
            router.gate.as_deref(),
            (range.0.unwrap_or_default(), range.1),
        ))
    }

    /// The part of the scan's range inside `split`.
    fn clip<'s>(&'s self, split: &'s Split) -> (Bound<&'s [u8]>, Bound<&'s [u8]>) {
        let start = match self.start.as_ref().map(Vec::as_slice) {
            Bound::Included(k) if k >= split.start.as_slice() => Bound::Included(k),
            Bound::Excluded(k) if k >= split.start.as_slice() => Bound::Excluded(k),
            _ => Bound::Included(split.start.as_slice()),
        };
        let end = match (self.end.as_ref().map(Vec::as_slice), split.limit.as_deref()) {
            (Bound::Included(k), Some(limit)) if k >= limit => Bound::Excluded(limit),
            (Bound::Excluded(k), Some(limit)) if k > limit => Bound::Excluded(limit),
            (Bound::Unbounded, Some(limit)) => Bound::Excluded(limit),
            (end, _) => end,
        };
        (start, end)
    }
}

impl Iterator for RouterScan<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done || self.remaining == 0 {
                return None;
            }
            if self.current.is_none() {
                if let Some(piece) = self.pieces.pop_front() {
                    self.current = Some(Self::piece_reader(
                        self.router,
                        self.ts,
                        self.reverse,
                        piece,
                    ));
                    continue;
                }
                let Some(split) = self.splits.pop_front() else {
                    self.done = true;
                    return None;
                };
                let (start, end) = self.clip(&split);
                let first = match start {
                    Bound::Included(k) | Bound::Excluded(k) => k.to_vec(),
                    Bound::Unbounded => split.start.clone(),
                };
                let last = match end {
                    Bound::Excluded(k) => Some(k.to_vec()),
                    Bound::Included(k) => Some([k, &[0]].concat()),
                    Bound::Unbounded => None,
                };
                if let Some(replication) = &self.router.replication {
                    let elsewhere = match replication.route_read(self.ts, &first, last.as_deref()) {
                        Ok(elsewhere) => elsewhere,
                        Err(e) => {
                            self.done = true;
                            return Some(Err(e));
                        }
                    };
                    if !elsewhere.is_empty() {
                        let pieces = pieces(&split, start, end, &elsewhere);
                        self.pieces = if self.reverse {
                            pieces.into_iter().rev().collect()
                        } else {
                            pieces.into()
                        };
                        continue;
                    }
                }
                let scan = self.router.mvcc.scan_at(start, end, self.ts, self.reverse);
                self.current = Some(Reader::Local(SplitReader::new(
                    split,
                    scan,
                    &self.router.clock,
                    self.router.gate.as_deref(),
                    (first, last),
                )));
            }
            if let Some(reader) = self.current.as_mut() {
                match reader.next_row(self.remaining) {
                    Some(Ok(row)) => {
                        self.remaining -= 1;
                        return Some(Ok(row));
                    }
                    Some(Err(e)) => {
                        self.done = true;
                        self.current = None;
                        return Some(Err(e));
                    }
                    // Dropping the reader charges the split.
                    None => self.current = None,
                }
            }
        }
    }
}

/// A piece of one split's part of a scan: held here, or read from a node
/// that holds it.
struct Piece {
    split: Arc<Split>,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    elsewhere: bool,
}

/// Cuts a split's part of a scan, `[start, end)`, into pieces at the edges
/// of the spans held elsewhere (in key order, as
/// [`Replication::route_read`] gives them), in key order; empty pieces
/// are left out.
fn pieces(
    split: &Arc<Split>,
    start: Bound<&[u8]>,
    end: Bound<&[u8]>,
    elsewhere: &[crate::KeySpan],
) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut push = |from: Bound<Vec<u8>>, to: Bound<Vec<u8>>, elsewhere: bool| {
        let empty = range_is_empty(
            from.as_ref().map(Vec::as_slice),
            to.as_ref().map(Vec::as_slice),
        );
        if !empty {
            out.push(Piece {
                split: split.clone(),
                start: from,
                end: to,
                elsewhere,
            });
        }
    };
    let mut from: Bound<Vec<u8>> = start.map(<[u8]>::to_vec);
    let end: Bound<Vec<u8>> = end.map(<[u8]>::to_vec);
    for (span_start, span_limit) in elsewhere {
        // The local piece before the span, then the span (clipped to the
        // scan's end).
        let before = Bound::Excluded(span_start.clone());
        push(from.clone(), min_end(&end, before), false);
        let span_from = max_start(&from, Bound::Included(span_start.clone()));
        let span_to = match span_limit {
            Some(limit) => min_end(&end, Bound::Excluded(limit.clone())),
            None => end.clone(),
        };
        push(span_from, span_to, true);
        match span_limit {
            Some(limit) => from = max_start(&from, Bound::Included(limit.clone())),
            None => return out,
        }
    }
    push(from, end, false);
    out
}

/// The later of two start bounds.
fn max_start(a: &Bound<Vec<u8>>, b: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    let later = match (a, &b) {
        (Bound::Unbounded, _) => false,
        (_, Bound::Unbounded) => true,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            x > y || (x == y && matches!(a, Bound::Excluded(_)))
        }
    };
    if later {
        a.clone()
    } else {
        b
    }
}

/// The earlier of two end bounds.
fn min_end(a: &Bound<Vec<u8>>, b: Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    let earlier = match (a, &b) {
        (Bound::Unbounded, _) => false,
        (_, Bound::Unbounded) => true,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            x < y || (x == y && matches!(a, Bound::Excluded(_)))
        }
    };
    if earlier {
        a.clone()
    } else {
        b
    }
}

/// The first key a start bound lets in, as far as a load record needs it.
fn bound_key(start: Bound<&Vec<u8>>) -> Option<Vec<u8>> {
    match start {
        Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
        Bound::Unbounded => None,
    }
}

/// The exclusive limit of an end bound.
fn bound_limit(end: Bound<&Vec<u8>>) -> Option<Vec<u8>> {
    match end {
        Bound::Excluded(k) => Some(k.clone()),
        Bound::Included(k) => Some([k.as_slice(), &[0]].concat()),
        Bound::Unbounded => None,
    }
}

/// Whatever reads a piece of a scan.
// The local reader, the common case, is the large variant: boxing it would
// allocate for every split a scan visits.
#[allow(clippy::large_enum_variant)]
enum Reader<'a> {
    /// From this node's engine, charged to the split.
    Local(SplitReader<'a>),
    /// From another node, which charges its own split.
    Remote(RemoteReader<'a>),
}

impl Reader<'_> {
    /// The next row; `cap` is how many rows the scan still wants.
    fn next_row(&mut self, cap: usize) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        match self {
            Reader::Local(reader) => {
                reader.cap = cap;
                reader.next_row()
            }
            Reader::Remote(reader) => reader.next_row(cap),
        }
    }
}

/// Reads a piece held by other nodes in batches
/// ([`Replication::read_elsewhere`]), doubling from [`FIRST_BATCH`] to
/// [`MAX_BATCH`] rows as the scan goes on.
struct RemoteReader<'a> {
    replication: &'a dyn Replication,
    /// What is still to read: its bounds move past each batch.
    read: RemoteRead,
    buffer: VecDeque<(Vec<u8>, Vec<u8>)>,
    exhausted: bool,
}

/// The most batches in a row that may come back empty, each resuming
/// further on (a range held by many groups, each empty there), before a
/// remote read gives up as making no progress.
const MAX_EMPTY_BATCHES: usize = 1024;

impl RemoteReader<'_> {
    fn next_row(&mut self, cap: usize) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        let mut empty = 0;
        while self.buffer.is_empty() && !self.exhausted {
            self.read.max_rows = self.read.max_rows.min(cap.max(1)).max(1);
            let batch = match self.replication.read_elsewhere(&self.read) {
                Ok(batch) => batch,
                Err(e) => {
                    self.exhausted = true;
                    return Some(Err(e));
                }
            };
            if let Err(e) = self.advance(batch) {
                self.exhausted = true;
                return Some(Err(e));
            }
            if self.buffer.is_empty() {
                empty += 1;
                if empty > MAX_EMPTY_BATCHES {
                    self.exhausted = true;
                    return Some(Err(crate::Error::Replication(
                        "a read of rows held by another node made no progress".into(),
                    )));
                }
            }
        }
        self.buffer.pop_front().map(Ok)
    }

    /// Takes a batch: its rows, checked to lie in the range still to read
    /// and in order, and the bound to resume from.
    fn advance(&mut self, batch: RemoteBatch) -> Result<()> {
        let read = &self.read;
        let mut previous: Option<&[u8]> = None;
        for (key, _) in &batch.rows {
            let inside = (
                read.start.as_ref().map(Vec::as_slice),
                read.end.as_ref().map(Vec::as_slice),
            )
                .contains(key.as_slice());
            let ordered = previous.is_none_or(|p| {
                if read.reverse {
                    key.as_slice() < p
                } else {
                    key.as_slice() > p
                }
            });
            if !inside || !ordered || batch.rows.len() > read.max_rows {
                return Err(crate::Error::Replication(
                    "another node answered a read with rows outside the range or out of order"
                        .into(),
                ));
            }
            previous = Some(key);
        }
        match batch.resume {
            None => self.exhausted = true,
            Some(resume) => {
                // A resume bound must lie within the range still to read,
                // past every row returned.
                let moved = if read.reverse {
                    min_end(&read.end, resume.clone()) == resume
                } else {
                    max_start(&read.start, resume.clone()) == resume
                };
                if !moved {
                    return Err(crate::Error::Replication(
                        "another node answered a read with a resume point behind it".into(),
                    ));
                }
                if read.reverse {
                    self.read.end = resume;
                } else {
                    self.read.start = resume;
                }
            }
        }
        self.read.max_rows = (self.read.max_rows * 2).min(MAX_BATCH);
        self.buffer.extend(batch.rows);
        Ok(())
    }
}

/// Reads one split's part of a scan in batches, and charges the split on drop.
struct SplitReader<'a> {
    split: Arc<Split>,
    scan: MvccScan<'a>,
    clock: &'a RouterClock,
    gate: Option<&'a NodeGate>,
    /// The scanned range within the split, for the load tracker.
    range: (Vec<u8>, Option<Vec<u8>>),
    buffer: VecDeque<(Vec<u8>, Vec<u8>)>,
    batch: usize,
    /// The most rows the next batch may read: what the scan still wants.
    cap: usize,
    exhausted: bool,
    /// An error met while filling the buffer, returned after its rows.
    error: Option<rowtree_storage::Error>,
    rows: u64,
    bytes: u64,
    cpu: Duration,
}

impl<'a> SplitReader<'a> {
    fn new(
        split: Arc<Split>,
        scan: MvccScan<'a>,
        clock: &'a RouterClock,
        gate: Option<&'a NodeGate>,
        range: (Vec<u8>, Option<Vec<u8>>),
    ) -> SplitReader<'a> {
        SplitReader {
            split,
            scan,
            clock,
            gate,
            range,
            buffer: VecDeque::new(),
            batch: FIRST_BATCH,
            cap: usize::MAX,
            exhausted: false,
            error: None,
            rows: 0,
            bytes: 0,
            cpu: Duration::ZERO,
        }
    }

    fn fill(&mut self) {
        let first = self.rows == 0 && self.buffer.is_empty();
        let before = self.buffer.len();
        let started = Instant::now();
        let batch = self.batch.min(self.cap.max(1));
        while self.buffer.len() < batch {
            match self.scan.next() {
                Some(Ok(row)) => self.buffer.push_back(row),
                Some(Err(e)) => {
                    self.error = Some(e);
                    self.exhausted = true;
                    break;
                }
                None => {
                    self.exhausted = true;
                    break;
                }
            }
        }
        self.cpu += started.elapsed();
        self.batch = (self.batch * 2).min(MAX_BATCH);
        if let Some(gate) = self.gate {
            // The rows just read (the first batch counts at least one read:
            // visiting the split costs even when it returns nothing).
            let read = (self.buffer.len() - before).max(usize::from(first));
            if read > 0 {
                gate.admit(self.split.node(), read as f64 * READ_COST);
            }
        }
    }

    fn next_row(&mut self) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if self.buffer.is_empty() && !self.exhausted {
            self.fill();
        }
        if let Some(row) = self.buffer.pop_front() {
            self.rows += 1;
            self.bytes += (row.0.len() + row.1.len()) as u64;
            return Some(Ok(row));
        }
        self.error.take().map(|e| Err(e.into()))
    }
}

impl Drop for SplitReader<'_> {
    fn drop(&mut self) {
        let stats = &self.split.stats;
        stats.record_read(1, self.rows, self.bytes);
        stats.record_cpu(self.cpu);
        let cpu_nanos = match self.gate {
            Some(gate) => gate.node_nanos(self.rows.max(1) as f64 * READ_COST),
            None => u64::try_from(self.cpu.as_nanos()).unwrap_or(u64::MAX),
        };
        let access = Access::scan(
            &self.range.0,
            self.range.1.as_deref(),
            self.rows,
            self.bytes,
            cpu_nanos,
        );
        self.split.load.lock().record((self.clock)(), &access);
    }
}

/// The row `key` at `ts`, read from a node holding it.
fn get_elsewhere(replication: &dyn Replication, key: &[u8], ts: u64) -> Result<Option<Vec<u8>>> {
    // An inclusive end: a scan's end bound must not have a stored key as a
    // proper prefix (`Mvcc::scan_at`), which `key` followed by 0 would.
    let mut reader = RemoteReader {
        replication,
        read: RemoteRead {
            start: Bound::Included(key.to_vec()),
            end: Bound::Included(key.to_vec()),
            ts,
            reverse: false,
            max_rows: 1,
        },
        buffer: VecDeque::new(),
        exhausted: false,
    };
    match reader.next_row(1) {
        Some(Ok((k, value))) if k == key => Ok(Some(value)),
        Some(Ok(_)) | None => Ok(None),
        Some(Err(e)) => Err(e),
    }
}
