//! Where commits become durable: this process's disk, or a replicated log.
//!
//! A [`Router`](crate::Router) makes groups of commits durable with
//! [`Router::write_commits`](crate::Router::write_commits). Alone, it
//! writes them to its own engine in one synced batch, as it always has.
//! Given a [`Replication`] ([`Router::with_replication`](crate::Router::with_replication)),
//! it hands the group to it instead: in a cluster, the group becomes an
//! entry of a split group's Raft log, and the entry is applied to this
//! router's engine (by the replica state machine, through
//! [`Router::write`](crate::Router::write), which always writes locally)
//! before the commit is acknowledged. The commit path above does not know
//! which of the two it is talking to: one code path serves both.
//!
//! What goes through here is what must outlive the loss of this node:
//! row versions, and the database metadata written with them (the DDL
//! log, sequence reservations, the newest commit timestamp). What stays
//! local is written with [`Router::write`](crate::Router::write): the
//! format marker, the split map and its load history (each node's own),
//! and the replicas' own applied state.

use crate::Result;

/// One key written by a commit: the encoded key and its new value, `None`
/// for a delete.
pub type Write = (Vec<u8>, Option<Vec<u8>>);

/// The row versions of one committed transaction, all at its commit
/// timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The commit timestamp.
    pub ts: u64,
    /// Row and index writes, stored as versions at `ts`.
    pub writes: Vec<Write>,
}

/// Commits made durable together (one group of the commit pipeline), and
/// unversioned metadata written atomically with them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitGroup {
    /// The commits, in timestamp order.
    pub commits: Vec<Commit>,
    /// Metadata writes (`None` deletes), applied after the commits' rows in
    /// the same atomic write.
    pub meta: Vec<Write>,
    /// The commits (by timestamp) whose transactions also wrote splits led
    /// by other nodes and prepared there
    /// ([`Replication::prepare_elsewhere`]): their commit is the decision
    /// of a two-phase commit, and their prepared writes are resolved after
    /// it.
    pub elsewhere: Vec<ElsewhereCommit>,
}

/// A commit whose transaction prepared writes at the leaders of splits
/// led by other nodes ([`Replication::prepare_elsewhere`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElsewhereCommit {
    /// The commit's timestamp (a [`Commit`] of the group has it, perhaps
    /// with no writes).
    pub ts: u64,
    /// The transaction, as the other nodes know it.
    pub txn: TxnRef,
}

/// A read-write transaction as the leaders of splits led by other nodes
/// know it: they lock and prepare its keys on its behalf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxnRef {
    /// Unique in the cluster: chosen by the node running the transaction.
    pub id: u128,
    /// Its wound-wait priority, compared across nodes (smaller is older).
    pub priority: u64,
}

/// One write a transaction prepares at another node
/// ([`Replication::prepare_elsewhere`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElsewhereWrite {
    /// The encoded key.
    pub key: Vec<u8>,
    /// The value, `None` for a delete.
    pub value: Option<Vec<u8>>,
    /// The columns of the row `value` that take the transaction's commit
    /// timestamp (a write of `PENDING_COMMIT_TIMESTAMP()`, unknown when it
    /// is prepared): the row holds a stand-in for them, and the node that
    /// prepared the write sets them when the transaction commits. Empty for
    /// most writes.
    pub stamp: Vec<u32>,
}

impl CommitGroup {
    /// Metadata writes alone (a sequence reservation).
    pub fn meta(meta: Vec<Write>) -> CommitGroup {
        CommitGroup {
            commits: Vec::new(),
            meta,
            elsewhere: Vec::new(),
        }
    }

    /// The newest commit timestamp of the group, if it has commits.
    pub fn newest_ts(&self) -> Option<u64> {
        self.commits.iter().map(|c| c.ts).max()
    }
}

/// A read of rows this node holds no replica of, sent to a node that
/// holds them ([`Replication::read_elsewhere`]): the rows of
/// `[start, end)` visible at `ts`, in key order (descending if `reverse`),
/// at most `max_rows` of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRead {
    /// The first key wanted (in key order, whatever the direction).
    pub start: std::ops::Bound<Vec<u8>>,
    /// The end of the range (in key order).
    pub end: std::ops::Bound<Vec<u8>>,
    /// The read timestamp; `u64::MAX`: the latest, under locks, served
    /// only where the keys are locked, by their leader
    /// ([`Replication::locked_elsewhere`]).
    pub ts: u64,
    /// Descending key order.
    pub reverse: bool,
    /// The most rows wanted in this batch (at least one).
    pub max_rows: usize,
}

impl RemoteRead {
    /// The key the read starts from, in its order, and whether the keys
    /// wanted are those just below it (a reverse read): the key whose
    /// split serves the read's first batch.
    pub fn first_key(&self) -> (Vec<u8>, bool) {
        use std::ops::Bound;
        if self.reverse {
            match &self.end {
                Bound::Included(k) => ([k.as_slice(), &[0]].concat(), true),
                Bound::Excluded(k) => (k.clone(), true),
                Bound::Unbounded => (Vec::new(), true),
            }
        } else {
            match &self.start {
                Bound::Included(k) | Bound::Excluded(k) => (k.clone(), false),
                Bound::Unbounded => (Vec::new(), false),
            }
        }
    }

    /// The read clipped to the split `[start, limit)` holding its first
    /// key, and, if it was clipped, where the read goes on once that split
    /// is read to its edge (the next batch's `start`, or a reverse read's
    /// `end`).
    pub fn clipped(
        &self,
        start: &[u8],
        limit: Option<&[u8]>,
    ) -> (RemoteRead, Option<std::ops::Bound<Vec<u8>>>) {
        use std::ops::Bound;
        let mut clipped = self.clone();
        if !self.reverse {
            let Some(limit) = limit else {
                return (clipped, None);
            };
            let beyond = match &self.end {
                Bound::Unbounded => true,
                Bound::Included(k) => k.as_slice() >= limit,
                Bound::Excluded(k) => k.as_slice() > limit,
            };
            if !beyond {
                return (clipped, None);
            }
            clipped.end = Bound::Excluded(limit.to_vec());
            (clipped, Some(Bound::Included(limit.to_vec())))
        } else {
            let below = match &self.start {
                Bound::Unbounded => true,
                Bound::Included(k) | Bound::Excluded(k) => k.as_slice() < start,
            };
            if start.is_empty() || !below {
                return (clipped, None);
            }
            clipped.start = Bound::Included(start.to_vec());
            (clipped, Some(Bound::Excluded(start.to_vec())))
        }
    }
}

/// One batch of a [`RemoteRead`]'s rows, and where the read goes on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteBatch {
    /// `(key, value)` rows in the read's order.
    pub rows: Vec<(Vec<u8>, Vec<u8>)>,
    /// `None`: the range is read to its end. Else the bound to read on
    /// from: the new `start` of a forward read, the new `end` of a reverse
    /// one (a batch may stop short of `max_rows` where the node that
    /// served it stops holding the range, or at its byte limit).
    pub resume: Option<std::ops::Bound<Vec<u8>>>,
}

/// A key range `(start, limit)`, `limit` `None` for the end of the key
/// space.
pub type KeySpan = (Vec<u8>, Option<Vec<u8>>);

/// A replicated log that commit groups go through instead of the local
/// engine (see the module docs).
pub trait Replication: Send + Sync + 'static {
    /// Makes `group` durable on as many replicas as the implementation
    /// requires, applies it to the engine of the router it was installed
    /// on, and returns; or fails with nothing acknowledged. A failure does
    /// not say the group was not written: it may still be committed by a
    /// later leader. Blocks the calling thread; never called from an
    /// asynchronous task.
    fn replicate(&self, group: CommitGroup) -> Result<()>;

    /// Called by whoever commits a group, before the group's commit
    /// timestamps are issued: makes sure this node may assign timestamps
    /// now (a cluster node takes or extends the split's lease here, so
    /// that they fall inside it), or says why it may not. May block; never
    /// called from an asynchronous task.
    fn ready_to_commit(&self) -> Result<()>;

    /// Whether this node may serve a read at timestamp `ts` (`None`: at
    /// the latest, under locks, as a read-write transaction reads) from
    /// the router's engine now: what it applied must include every commit
    /// at or below the timestamp. `Err` says why not (another node serves
    /// the split). May block to take or extend what entitles the node to
    /// serve (a lease); never called from an asynchronous task.
    fn check_read(&self, ts: Option<u64>) -> Result<()>;

    /// This node's *safe time*: the newest timestamp at or below which it
    /// may serve a read from the router's engine without holding anything
    /// (a cluster replica's closed timestamp: every commit at or below it
    /// is applied here, and none can come later). [`check_read`](Self::check_read)
    /// accepts any timestamp at or below it at once. `None`: no such
    /// promise (every read goes through `check_read`'s other rules).
    fn safe_ts(&self) -> Option<u64> {
        None
    }

    /// Whether this node may read the keys in `[start, end)` (`end`
    /// `None`: to the end of the key space) at `ts` (`None`: the latest,
    /// under locks, as a read-write transaction reads) from the router's
    /// engine now. [`check_read`](Self::check_read) answers for the
    /// database as a whole; this answers for the splits a read touches,
    /// which a cluster whose splits are led by different nodes needs: a
    /// read under locks is served only by the node leading every split it
    /// touches (it holds those keys' locks), a read at a timestamp by any
    /// replica once its safe time reaches it. `Err`
    /// ([`Error::LedElsewhere`](crate::Error::LedElsewhere) when another
    /// node serves it) says why not. The router asks before reading each
    /// split. May block for a short while; never called from an
    /// asynchronous task.
    fn check_range(&self, ts: Option<u64>, start: &[u8], end: Option<&[u8]>) -> Result<()> {
        let _ = (ts, start, end);
        Ok(())
    }

    /// How this node serves a read at `ts` (`u64::MAX`: the latest, under
    /// locks) of `[start, end)` (`end` `None`: to the end of the key
    /// space): checks that it may read the parts it serves itself (see
    /// [`check_range`](Self::check_range); it may wait a short while), and
    /// returns the parts another node serves, in key order, each as
    /// `(start, limit)`, which the router reads with
    /// [`read_elsewhere`](Self::read_elsewhere). One call decides both, so
    /// that no part is neither checked here nor sent elsewhere when a
    /// split's leadership moves in between. By default: `check_range`,
    /// then [`locked_elsewhere`](Self::locked_elsewhere) for a read under
    /// locks, [`held_elsewhere`](Self::held_elsewhere) for a read at a
    /// timestamp. A cluster node also sends elsewhere a strong read of a
    /// split whose replica here has not reached the read's timestamp: its
    /// leader serves it at once, where this replica would wait for the
    /// next closed timestamp.
    fn route_read(&self, ts: u64, start: &[u8], end: Option<&[u8]>) -> Result<Vec<KeySpan>> {
        if ts == u64::MAX {
            self.check_range(None, start, end)?;
            Ok(self.locked_elsewhere(start, end))
        } else {
            self.check_range(Some(ts), start, end)?;
            Ok(self.held_elsewhere(start, end))
        }
    }

    /// Whether this node may commit writes to `keys` now: a cluster node
    /// must lead (and hold the lease of) every split they fall in. Asked
    /// once per commit, before it is queued for its timestamp, so that a
    /// commit another node must make fails alone, with
    /// [`Error::LedElsewhere`](crate::Error::LedElsewhere), rather than
    /// with the group of commits it would have joined.
    fn check_writes(&self, keys: &mut dyn Iterator<Item = &[u8]>) -> Result<()> {
        let _ = keys;
        Ok(())
    }

    /// The one node leading every split `keys` fall in, as this node
    /// knows it: where a commit of writes to them is made. `None` when the
    /// splits are led by different nodes, a leader is not known (an
    /// election), or nothing is replicated (the single-process path, where
    /// this node makes every commit). A hint, read without waiting: the
    /// node it names checks again ([`check_writes`](Self::check_writes))
    /// before it commits.
    fn leader_of_keys(&self, keys: &mut dyn Iterator<Item = &[u8]>) -> Option<u64> {
        let _ = keys;
        None
    }

    /// Whether the write of `key` by `txn` is prepared at another node
    /// ([`prepare_elsewhere`](Self::prepare_elsewhere)) rather than
    /// committed here: its split is led elsewhere, or `txn` locked it at
    /// another node (whose lock is the one that counts, even if this node
    /// leads the split by now). By default, never.
    fn written_elsewhere(&self, txn: TxnRef, key: &[u8]) -> bool {
        let _ = (txn, key);
        false
    }

    /// The parts of `[start, end)` whose locks, and latest rows, another
    /// node serves (a cluster node: the splits led by other nodes, and
    /// those it holds no replica of), in key order, each as `(start,
    /// limit)`. A read-write transaction locks them there
    /// ([`lock_elsewhere`](Self::lock_elsewhere)) and reads them there
    /// ([`read_elsewhere`](Self::read_elsewhere) at `u64::MAX`). By
    /// default, none. Answers at once.
    fn locked_elsewhere(&self, start: &[u8], end: Option<&[u8]>) -> Vec<KeySpan> {
        let _ = (start, end);
        Vec::new()
    }

    /// Takes a lock for `txn` on `[start, end)` (`point`: the one key
    /// `start`), shared or `exclusive`, at the node serving the split's
    /// locks ([`locked_elsewhere`](Self::locked_elsewhere)), which keeps
    /// it until the transaction is resolved or released there. Wound-wait
    /// rules apply there with `txn.priority`. Blocks while the lock is
    /// waited for; never called from an asynchronous task. Fails with
    /// [`Error::Aborted`](crate::Error::Aborted) when the transaction lost
    /// a conflict there (or its locks there were lost).
    fn lock_elsewhere(
        &self,
        txn: TxnRef,
        start: &[u8],
        end: Option<&[u8]>,
        point: bool,
        exclusive: bool,
    ) -> Result<()> {
        let _ = (txn, start, end, point, exclusive);
        Err(crate::Error::Replication(
            "this node serves every lock; nothing is locked elsewhere".into(),
        ))
    }

    /// Prepares `writes` (keys [`locked_elsewhere`](Self::locked_elsewhere),
    /// locked there by `txn`) at the nodes leading their splits: the first
    /// phase of a two-phase commit whose decision is this node's commit of
    /// the transaction's other writes (a [`CommitGroup`] naming it in
    /// [`CommitGroup::elsewhere`]). Returns the highest prepare timestamp:
    /// the commit's must be above it. Blocks; never called from an
    /// asynchronous task.
    fn prepare_elsewhere(&self, txn: TxnRef, writes: Vec<ElsewhereWrite>) -> Result<u64> {
        let _ = (txn, writes);
        Err(crate::Error::Replication(
            "this node leads every split; nothing is prepared elsewhere".into(),
        ))
    }

    /// Makes sure the locks `txn` took at other nodes, where it writes
    /// nothing, are all still held, and keeps them from being taken from
    /// it (wounded) until it ends: what it read under them is then still
    /// current when it commits. Called instead of
    /// [`prepare_elsewhere`](Self::prepare_elsewhere) by a commit that
    /// writes nothing elsewhere; refused ([`crate::Error::Aborted`]) if a
    /// lock was lost. Returns the latest timestamp of the nodes asked (0:
    /// none): the commit's must be above it. Blocks; never called from an
    /// asynchronous task.
    fn confirm_elsewhere(&self, txn: TxnRef) -> Result<u64> {
        let _ = txn;
        Ok(0)
    }

    /// The transaction ended (rolled back, or its commit answered): lets
    /// go of what it holds at other nodes, and settles a two-phase commit
    /// left undecided (aborted). Returns at once; the work is done in the
    /// background.
    fn release_elsewhere(&self, txn: TxnRef) {
        let _ = txn;
    }

    /// The parts of `[start, end)` (`end` `None`: to the end of the key
    /// space) that this node holds no replica of, in key order, each as
    /// `(start, limit)`: a cluster whose splits are placed on some of its
    /// nodes reads them from a node that holds them
    /// ([`read_elsewhere`](Self::read_elsewhere)). By default every key is
    /// held here. Answers at once.
    fn held_elsewhere(&self, start: &[u8], end: Option<&[u8]>) -> Vec<KeySpan> {
        let _ = (start, end);
        Vec::new()
    }

    /// One batch of rows of a range this node holds no replica of
    /// ([`held_elsewhere`](Self::held_elsewhere)), read at a node that
    /// holds them, which charges them to its own splits; or, at
    /// `u64::MAX`, of a range whose locks another node serves
    /// ([`locked_elsewhere`](Self::locked_elsewhere)), read at that node.
    /// Blocks; never called from an asynchronous task.
    fn read_elsewhere(&self, read: &RemoteRead) -> Result<RemoteBatch> {
        let _ = read;
        Err(crate::Error::Replication(
            "this node holds every key; nothing is read elsewhere".into(),
        ))
    }

    /// The nodes holding a replica of the split holding `key`, as this
    /// node knows them (what the split statistics and the key visualizer
    /// show). Empty when nothing is replicated (one process) or unknown.
    fn replicas_of(&self, key: &[u8]) -> Vec<u64> {
        let _ = key;
        Vec::new()
    }

    /// Whether this node serves reads at any timestamp it is asked for
    /// (a cluster node holding the split's lease, now), rather than only
    /// at or below its [`safe_ts`](Self::safe_ts) unless it first takes
    /// the lease. Answers at once, without taking anything.
    fn serves_fresh_reads(&self) -> bool {
        true
    }

    /// Whether a commit's metadata is written in the same atomic step as
    /// its rows, always: true where one log holds the whole key space.
    /// Where the key space is cut into groups, a commit's rows may go to
    /// other groups than its metadata (or in two phases), and metadata
    /// written after the rows says only that they were written: its
    /// absence proves nothing (see `rowtree_db::outcome`).
    fn metadata_is_atomic(&self) -> bool {
        true
    }

    /// Carries out a cut of the key space at `key` before the split
    /// manager records it in its map (a load or size split, or a manual
    /// split point): a cluster splits the group that holds `key` there,
    /// so that the split map and the groups agree. `Ok(true)`: go on and
    /// record it (done, or nothing to do); `Ok(false)`: not now (this node
    /// does not lead the group, or the group cannot be cut there yet);
    /// `Err`: the cut failed. By default there is nothing to carry out.
    /// Blocks; never called from an asynchronous task.
    fn cut(&self, key: &[u8]) -> Result<bool> {
        let _ = key;
        Ok(true)
    }

    /// Carries out the cut of a manual split point at `key`, to be kept
    /// until `expires_at` (a client's AddSplitPoints): as
    /// [`Replication::cut`], but where another node leads the group that
    /// holds `key`, or holds it while this node holds none of it, that
    /// node is asked to add the split point itself. `Ok(true)`: the key is
    /// a boundary of the groups now. By default, [`Replication::cut`].
    /// Blocks; never called from an asynchronous task.
    fn cut_at_split_point(&self, key: &[u8], expires_at: u64) -> Result<bool> {
        let _ = expires_at;
        self.cut(key)
    }

    /// Carries out the merge of the split starting at `key` into its left
    /// neighbour before the split manager records it in its map: a
    /// cluster merges their groups, so that the map and the groups agree.
    /// `Ok(true)`: go on and record it (done, or nothing to do);
    /// `Ok(false)`: not now (this node does not lead both groups, or one
    /// holds a transaction that must be resolved first); `Err`: the merge
    /// failed. By default there is nothing to carry out. Blocks; never
    /// called from an asynchronous task.
    fn merge(&self, key: &[u8]) -> Result<bool> {
        let _ = key;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;

    use super::RemoteRead;

    fn read(start: Bound<&[u8]>, end: Bound<&[u8]>, reverse: bool) -> RemoteRead {
        RemoteRead {
            start: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            ts: 7,
            reverse,
            max_rows: 8,
        }
    }

    #[test]
    fn a_read_starts_at_its_first_key_in_its_order() {
        let forward = read(Bound::Excluded(b"b"), Bound::Included(b"m"), false);
        assert_eq!(forward.first_key(), (b"b".to_vec(), false));
        let reverse = read(Bound::Included(b"b"), Bound::Included(b"m"), true);
        assert_eq!(reverse.first_key(), (b"m\0".to_vec(), true));
        let to_the_end = read(Bound::Unbounded, Bound::Unbounded, true);
        assert_eq!(to_the_end.first_key(), (Vec::new(), true));
    }

    #[test]
    fn a_read_is_clipped_to_its_first_split_and_goes_on_at_the_edge() {
        // Forward, past the split's limit: clipped there, resumed there.
        let forward = read(Bound::Included(b"b"), Bound::Unbounded, false);
        let (clipped, edge) = forward.clipped(b"a", Some(b"k"));
        assert_eq!(clipped.end, Bound::Excluded(b"k".to_vec()));
        assert_eq!(clipped.start, forward.start);
        assert_eq!(edge, Some(Bound::Included(b"k".to_vec())));
        // Within the split: unchanged, nothing to go on with.
        let inside = read(Bound::Included(b"b"), Bound::Excluded(b"k"), false);
        assert_eq!(inside.clipped(b"a", Some(b"k")), (inside.clone(), None));
        // Reverse, below the split's start: clipped there, resumed below.
        let reverse = read(Bound::Unbounded, Bound::Included(b"m"), true);
        let (clipped, edge) = reverse.clipped(b"k", None);
        assert_eq!(clipped.start, Bound::Included(b"k".to_vec()));
        assert_eq!(edge, Some(Bound::Excluded(b"k".to_vec())));
        // The first split starts at the empty key: nothing is below it.
        assert_eq!(reverse.clipped(b"", Some(b"z")), (reverse.clone(), None));
    }
}
