//! A node's Raft log store: one storage engine for the logs of every group
//! on the node, made durable in batches.
//!
//! In a cluster a node holds a replica of many splits, each a Raft group
//! with its own log. Giving each log its own file would cost an fsync per
//! group per append; instead every group's entries go into one engine
//! (`D/raft`, a [`FjallEngine`] of its own, separate from the databases'),
//! keyed by group, and one fsync covers whatever all groups appended since
//! the last one: the commit pipeline's group commit, applied to the log.
//!
//! Layout, in the engine's two spaces:
//!
//! ```text
//! Data:  group:u64be  index:u64be        -> entry   (codec: entry)
//! Meta:  group:u64be  b'v'               -> vote
//!        group:u64be  b'c'               -> committed log id
//!        group:u64be  b'p'               -> last purged log id
//!        group:u64be  b'f'               -> image floor: index:u64be
//! ```
//!
//! The image floor is what a node keeps of a group it left besides its
//! vote ([`LogStore::clear_group`]): the highest index it knew committed.
//! Placed in the group again, its replica awaits an image, and refuses
//! one older than that (see `super::peer`).
//!
//! # Durability, and the order of writes
//!
//! openraft asks two things of `append`: the entries are readable when it
//! returns, and a callback fires once they are on disk. An append writes
//! its entries to the engine at once with buffered durability (readable),
//! then hands the callback to the *flusher*, a thread that waits for
//! callbacks, takes all that are queued, syncs the engine once and fires
//! them. The engine writes batches to its journal in order and a sync
//! makes everything written before it durable, so every write of every
//! group is durable in the order it was made: a truncation or a purge is
//! never lost while a later append survives. A vote must be durable before
//! `save_vote` returns: it is written the same way and waits for the
//! flusher's next sync, which it shares with the appends around it.
//!
//! The simulator runs a store without the flusher
//! ([`LogStore::synchronous`]): each append and vote syncs on the task
//! that made it, so that nothing happens outside the simulated node.
//!
//! When a write or a sync fails, the engine stops (see `rowtree_storage`)
//! and every later write fails too; callbacks waiting for that sync get
//! the error, which makes openraft stop the group. Nothing reports success
//! for entries that might not be on disk.

use std::fmt;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use openraft::storage::{IOFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::OptionalSend;
use parking_lot::{Condvar, Mutex};
use rowtree_storage::{Durability, Engine, FjallEngine, FjallOptions, KeyRange, Space, WriteBatch};

use super::codec;
use super::{Entry, RaftLogId, TypeConfig, Vote};

/// A group's id in the log store: a split's id, or a reserved id for the
/// placement group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(pub u64);

impl fmt::Display for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "group {}", self.0)
    }
}

const VOTE: u8 = b'v';
const COMMITTED: u8 = b'c';
const PURGED: u8 = b'p';
const FLOOR: u8 = b'f';

/// How many entries [`LogStore::remove_group`] deletes per batch.
pub const REMOVE_BATCH: usize = 1_000;

fn entry_key(group: GroupId, index: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(16);
    key.extend_from_slice(&group.0.to_be_bytes());
    key.extend_from_slice(&index.to_be_bytes());
    key
}

fn meta_key(group: GroupId, what: u8) -> Vec<u8> {
    let mut key = Vec::with_capacity(9);
    key.extend_from_slice(&group.0.to_be_bytes());
    key.push(what);
    key
}

/// How many syncs the flusher made and how many appends and votes they
/// covered, since the store was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogStats {
    /// Engine syncs made by the flusher.
    pub syncs: u64,
    /// Appends and votes made durable by them.
    pub waiters: u64,
}

/// Something waiting for the flusher's next sync.
enum Waiter {
    /// openraft's callback for an append.
    Append(IOFlushed<TypeConfig>),
    /// A `save_vote` waiting to return.
    Vote(tokio::sync::oneshot::Sender<Result<(), String>>),
}

impl Waiter {
    fn complete(self, result: &Result<(), String>) {
        match self {
            Waiter::Append(callback) => {
                callback.io_completed(result.clone().map_err(io::Error::other))
            }
            Waiter::Vote(tx) => {
                let _ = tx.send(result.clone());
            }
        }
    }
}

#[derive(Default)]
struct Queue {
    waiters: Vec<Waiter>,
    closed: bool,
}

struct Shared {
    engine: Arc<dyn Engine>,
    /// Whether the caller syncs (no flusher thread; see
    /// [`LogStore::synchronous`]).
    inline: bool,
    queue: Mutex<Queue>,
    wake: Condvar,
    syncs: AtomicU64,
    waiters: AtomicU64,
}

impl Shared {
    /// Queues `waiter` for the next sync, or fails it if the store is
    /// closed.
    fn wait_for_sync(&self, waiter: Waiter) {
        if self.inline {
            let result = self.engine.sync().map_err(|e| e.to_string());
            self.syncs.fetch_add(1, Ordering::Relaxed);
            self.waiters.fetch_add(1, Ordering::Relaxed);
            waiter.complete(&result);
            return;
        }
        let mut queue = self.queue.lock();
        if queue.closed {
            drop(queue);
            waiter.complete(&Err("the log store is closed".into()));
            return;
        }
        queue.waiters.push(waiter);
        drop(queue);
        self.wake.notify_one();
    }

    /// The flusher: sync once for everything queued, fire it all, repeat.
    fn flush_loop(&self) {
        loop {
            let batch = {
                let mut queue = self.queue.lock();
                while queue.waiters.is_empty() && !queue.closed {
                    self.wake.wait(&mut queue);
                }
                if queue.waiters.is_empty() {
                    return;
                }
                std::mem::take(&mut queue.waiters)
            };
            let result = self.engine.sync().map_err(|e| e.to_string());
            self.syncs.fetch_add(1, Ordering::Relaxed);
            self.waiters
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            for waiter in batch {
                waiter.complete(&result);
            }
        }
    }

    fn write(&self, batch: WriteBatch) -> io::Result<()> {
        self.engine
            .write(batch, Durability::Buffered)
            .map_err(io::Error::other)
    }
}

/// A node's log store (see the module docs). Dropping it stops the
/// flusher after a last sync of whatever is queued, and syncs once more;
/// appends made through a [`GroupLog`] after that fail their callbacks.
pub struct LogStore {
    shared: Arc<Shared>,
    flusher: Option<JoinHandle<()>>,
}

impl fmt::Debug for LogStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogStore")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl LogStore {
    /// Opens (or creates) the log store in `dir`, with a small block cache:
    /// a log is read back only by lagging followers and after restarts.
    pub fn open(dir: impl AsRef<Path>) -> rowtree_storage::Result<LogStore> {
        let options = FjallOptions {
            cache_size: 8 * 1024 * 1024,
            ..FjallOptions::default()
        };
        let engine = FjallEngine::open(dir, options)?;
        Ok(LogStore::on(Arc::new(engine)))
    }

    /// A log store on `engine` with its flusher thread (a `MemoryEngine`
    /// for tests, where a sync is free and a crash loses everything).
    pub fn on(engine: Arc<dyn Engine>) -> LogStore {
        let shared = Arc::new(Shared {
            engine,
            inline: false,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            syncs: AtomicU64::new(0),
            waiters: AtomicU64::new(0),
        });
        let flusher = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("rowtree-raft-log".into())
                .spawn(move || shared.flush_loop())
                .expect("spawning the Raft log flusher thread")
        };
        LogStore {
            shared,
            flusher: Some(flusher),
        }
    }

    /// A log store on `engine` that syncs on the caller, once per append
    /// and per vote, with no flusher thread: for the deterministic
    /// simulator, where every step must happen on the simulated node's own
    /// tasks (a thread outside it would complete appends at moments the
    /// simulation does not control), and its engines make a sync cheap.
    /// The order of writes and what is durable when are as with
    /// [`LogStore::on`]; only the batching is lost.
    pub fn synchronous(engine: Arc<dyn Engine>) -> LogStore {
        LogStore {
            shared: Arc::new(Shared {
                engine,
                inline: true,
                queue: Mutex::new(Queue::default()),
                wake: Condvar::new(),
                syncs: AtomicU64::new(0),
                waiters: AtomicU64::new(0),
            }),
            flusher: None,
        }
    }

    /// The log of `group`, for openraft.
    pub fn group(&self, group: GroupId) -> GroupLog {
        GroupLog {
            shared: Arc::clone(&self.shared),
            group,
        }
    }

    /// Deletes everything stored of `group`: its entries, vote, committed
    /// and purged log ids; returns how many entries there were. For a
    /// group that is gone for good (its split merged into a neighbour, its
    /// database dropped or moved off this node), once its Raft instance
    /// has stopped: an instance still running would find its log gone.
    /// The entries go in batches of [`REMOVE_BATCH`], the metadata last,
    /// so a crash midway leaves a shorter log that is removed again the
    /// same way; the deletions are synced before it returns.
    pub fn remove_group(&self, group: GroupId) -> io::Result<usize> {
        self.remove(group, &[VOTE, COMMITTED, PURGED, FLOOR], None)
    }

    /// Deletes `group`'s entries, committed and purged log ids as
    /// [`LogStore::remove_group`] does, but keeps its vote: for a node
    /// leaving a group that may place it again later (a replica moved off
    /// it, or awaiting an image). Raft's safety rests on a node never
    /// forgetting its term and its vote: with them forgotten, a node placed
    /// again in a group accepted the log and image of a leader deposed
    /// since (which still counted it a voter), and voted for a candidate
    /// of that old configuration, which then won and overwrote entries the
    /// group had committed.
    ///
    /// It keeps an image floor as well: the highest of the index it knew
    /// committed, the floor it kept before and `known` (an index the
    /// caller knows committed, such as the applied index of the leader
    /// that told it out). An image older than its removal would still
    /// count it a voter, and its term alone does not keep it from
    /// installing one sent by a leader of a later term whose snapshot
    /// predates the removal; the floor does ([`LogStore::image_floor`]).
    /// Every index below it is committed, so every leader's images reach
    /// it in time. Returns how many entries there were.
    pub fn clear_group(&self, group: GroupId, known: u64) -> io::Result<usize> {
        let log = self.group(group);
        let committed = log.log_id_at(COMMITTED)?.map_or(0, |id| id.index);
        let floor = self.image_floor(group)?.max(committed).max(known);
        self.remove(group, &[COMMITTED, PURGED], Some(floor))
    }

    /// The image floor [`LogStore::clear_group`] kept for `group`: 0 if it
    /// kept none.
    pub fn image_floor(&self, group: GroupId) -> io::Result<u64> {
        match self.group(group).meta(FLOOR)? {
            None => Ok(0),
            Some(bytes) => {
                let bytes: [u8; 8] = bytes.as_slice().try_into().map_err(|_| {
                    corrupt(
                        group,
                        format!("an image floor of {} bytes, not 8", bytes.len()),
                    )
                })?;
                Ok(u64::from_be_bytes(bytes))
            }
        }
    }

    fn remove(&self, group: GroupId, metadata: &[u8], floor: Option<u64>) -> io::Result<usize> {
        let log = self.group(group);
        let mut removed = 0;
        loop {
            let mut batch = WriteBatch::new();
            let mut n = 0;
            for item in self.shared.engine.scan(
                Space::Data,
                log.entries((Bound::Unbounded, Bound::Unbounded)),
                false,
            ) {
                let (key, _) = item.map_err(io::Error::other)?;
                batch.delete(Space::Data, key);
                n += 1;
                if n == REMOVE_BATCH {
                    break;
                }
            }
            if n == 0 {
                break;
            }
            self.shared.write(batch)?;
            removed += n;
        }
        let mut batch = WriteBatch::new();
        for &what in metadata {
            batch.delete(Space::Meta, meta_key(group, what));
        }
        if let Some(floor) = floor {
            batch.put(
                Space::Meta,
                meta_key(group, FLOOR),
                floor.to_be_bytes().to_vec(),
            );
        }
        self.shared.write(batch)?;
        self.shared.engine.sync().map_err(io::Error::other)?;
        Ok(removed)
    }

    /// Whether anything of `group` is stored: an entry, or its vote,
    /// committed or purged log id, or image floor.
    pub fn holds_group(&self, group: GroupId) -> io::Result<bool> {
        let log = self.group(group);
        if let Some(item) = self
            .shared
            .engine
            .scan(
                Space::Data,
                log.entries((Bound::Unbounded, Bound::Unbounded)),
                false,
            )
            .next()
        {
            item.map_err(io::Error::other)?;
            return Ok(true);
        }
        for what in [VOTE, COMMITTED, PURGED, FLOOR] {
            if log.meta(what)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The flusher's counts so far.
    pub fn stats(&self) -> LogStats {
        LogStats {
            syncs: self.shared.syncs.load(Ordering::Relaxed),
            waiters: self.shared.waiters.load(Ordering::Relaxed),
        }
    }
}

impl Drop for LogStore {
    fn drop(&mut self) {
        self.shared.queue.lock().closed = true;
        self.shared.wake.notify_all();
        if let Some(flusher) = self.flusher.take() {
            let _ = flusher.join();
        }
        // A clean close leaves nothing buffered: truncations and purges
        // wait for no sync of their own.
        let _ = self.shared.engine.sync();
    }
}

/// One group's log in a [`LogStore`]: openraft's log storage and log
/// reader. Cheap to clone; clones are views of the same log.
#[derive(Clone)]
pub struct GroupLog {
    shared: Arc<Shared>,
    group: GroupId,
}

impl fmt::Debug for GroupLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupLog")
            .field("group", &self.group)
            .finish_non_exhaustive()
    }
}

fn corrupt(group: GroupId, e: impl fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{group}: {e}"))
}

impl GroupLog {
    /// The group this log belongs to.
    pub fn group_id(&self) -> GroupId {
        self.group
    }

    fn meta(&self, what: u8) -> io::Result<Option<Vec<u8>>> {
        self.shared
            .engine
            .get(Space::Meta, &meta_key(self.group, what))
            .map_err(io::Error::other)
    }

    fn log_id_at(&self, what: u8) -> io::Result<Option<RaftLogId>> {
        match self.meta(what)? {
            None => Ok(None),
            Some(bytes) => codec::decode_log_id(&bytes)
                .map(Some)
                .map_err(|e| corrupt(self.group, e)),
        }
    }

    /// The entries of this group with indexes in `range`, in order.
    fn entries(&self, range: (Bound<u64>, Bound<u64>)) -> KeyRange {
        let key = |b: Bound<u64>, missing: u64| match b {
            Bound::Included(i) => Bound::Included(entry_key(self.group, i)),
            Bound::Excluded(i) => Bound::Excluded(entry_key(self.group, i)),
            Bound::Unbounded => Bound::Included(entry_key(self.group, missing)),
        };
        KeyRange::new(key(range.0, 0), key(range.1, u64::MAX))
    }

    /// Deletes every entry with an index in `range`, in one batch with
    /// `extra`.
    fn delete_entries(
        &self,
        range: (Bound<u64>, Bound<u64>),
        mut batch: WriteBatch,
    ) -> io::Result<()> {
        for item in self
            .shared
            .engine
            .scan(Space::Data, self.entries(range), false)
        {
            let (key, _) = item.map_err(io::Error::other)?;
            batch.delete(Space::Data, key);
        }
        self.shared.write(batch)
    }
}

impl RaftLogReader<TypeConfig> for GroupLog {
    async fn try_get_log_entries<RB>(&mut self, range: RB) -> Result<Vec<Entry>, io::Error>
    where
        RB: RangeBounds<u64> + Clone + fmt::Debug + OptionalSend,
    {
        let bounds = (range.start_bound().cloned(), range.end_bound().cloned());
        let mut entries = Vec::new();
        for item in self
            .shared
            .engine
            .scan(Space::Data, self.entries(bounds), false)
        {
            let (_, value) = item.map_err(io::Error::other)?;
            entries.push(codec::decode_entry(&value).map_err(|e| corrupt(self.group, e))?);
        }
        Ok(entries)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        match self.meta(VOTE)? {
            None => Ok(None),
            Some(bytes) => codec::decode_vote(&bytes)
                .map(Some)
                .map_err(|e| corrupt(self.group, e)),
        }
    }
}

impl RaftLogStorage<TypeConfig> for GroupLog {
    type LogReader = GroupLog;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
        let last_purged_log_id = self.log_id_at(PURGED)?;
        let all = self.entries((Bound::Unbounded, Bound::Unbounded));
        let last = match self.shared.engine.scan(Space::Data, all, true).next() {
            None => last_purged_log_id,
            Some(item) => {
                let (_, value) = item.map_err(io::Error::other)?;
                Some(codec::entry_log_id(&value).map_err(|e| corrupt(self.group, e))?)
            }
        };
        Ok(LogState {
            last_purged_log_id,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> GroupLog {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), io::Error> {
        let mut batch = WriteBatch::new();
        batch.put(
            Space::Meta,
            meta_key(self.group, VOTE),
            codec::encode_vote(vote),
        );
        self.shared.write(batch)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.shared.wait_for_sync(Waiter::Vote(tx));
        match rx.await {
            Ok(result) => result.map_err(io::Error::other),
            Err(_) => Err(io::Error::other("the log store's flusher stopped")),
        }
    }

    async fn save_committed(&mut self, committed: Option<RaftLogId>) -> Result<(), io::Error> {
        let mut batch = WriteBatch::new();
        let key = meta_key(self.group, COMMITTED);
        match committed {
            Some(id) => batch.put(Space::Meta, key, codec::encode_log_id(&id)),
            None => batch.delete(Space::Meta, key),
        }
        self.shared.write(batch)
    }

    async fn read_committed(&mut self) -> Result<Option<RaftLogId>, io::Error> {
        self.log_id_at(COMMITTED)
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: IOFlushed<TypeConfig>,
    ) -> Result<(), io::Error>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = WriteBatch::new();
        for entry in entries {
            batch.put(
                Space::Data,
                entry_key(self.group, entry.log_id.index),
                codec::encode_entry(&entry),
            );
        }
        self.shared.write(batch)?;
        self.shared.wait_for_sync(Waiter::Append(callback));
        Ok(())
    }

    async fn truncate_after(&mut self, last_log_id: Option<RaftLogId>) -> Result<(), io::Error> {
        let from = match last_log_id {
            Some(id) => Bound::Excluded(id.index),
            None => Bound::Unbounded,
        };
        self.delete_entries((from, Bound::Unbounded), WriteBatch::new())
    }

    async fn purge(&mut self, log_id: RaftLogId) -> Result<(), io::Error> {
        let mut batch = WriteBatch::new();
        batch.put(
            Space::Meta,
            meta_key(self.group, PURGED),
            codec::encode_log_id(&log_id),
        );
        self.delete_entries((Bound::Unbounded, Bound::Included(log_id.index)), batch)
    }
}
