//! The storage openraft runs on, checked by openraft's own storage test
//! suite (`openraft::testing::log::Suite`: log state, votes, reads,
//! truncation, purging, applying, snapshots built and installed), on the
//! engines a node uses; and what the suite does not check: that groups
//! sharing one log store stay apart, that one sync covers the appends of
//! many groups, that a snapshot copies a replica's data, and that the log
//! and the replica come back after a restart.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use openraft::storage::{
    IOFlushed, RaftLogReader, RaftLogStorage, RaftSnapshotBuilder, RaftStateMachine,
};
use openraft::testing::log::{StoreBuilder, Suite};
use openraft::type_config::TypeConfigExt;
use openraft::{BasicNode, EntryPayload, StorageError};
use rowtree_cluster::raft::{
    to_raft_log_id, Entry, GroupId, GroupLog, LogStore, Membership, ReplicaMachine, TypeConfig,
};
use rowtree_cluster::{Command, Commit, Descriptor, LogId, Replica};
use rowtree_kv::{Router, SplitId, SplitMap};
use rowtree_storage::{Engine, FjallEngine, FjallOptions, MemoryEngine, Mvcc};

fn descriptor() -> Descriptor {
    Descriptor {
        split: SplitId(7),
        start: b"k".to_vec(),
        limit: Some(b"l".to_vec()),
        epoch: 1,
    }
}

fn router(engine: Arc<dyn Engine>) -> Arc<Router> {
    Arc::new(Router::new(Mvcc::new(engine), SplitMap::new()))
}

/// What each suite case needs alive while it runs: the directory and the
/// log store (whose flusher the group logs use).
struct Held {
    _dir: tempfile::TempDir,
    _store: LogStore,
}

/// Builds a fresh log (group 1 of a log store) and state machine (a new
/// replica) per suite case: on disk, or in memory with the flusher thread
/// or syncing on the caller (the simulator's store).
struct Builder {
    on_disk: bool,
    synchronous: bool,
}

impl StoreBuilder<TypeConfig, GroupLog, ReplicaMachine, Held> for Builder {
    async fn build(&self) -> Result<(Held, GroupLog, ReplicaMachine), StorageError<TypeConfig>> {
        let dir = tempfile::tempdir().unwrap();
        let (store, data): (LogStore, Arc<dyn Engine>) = if self.on_disk {
            (
                LogStore::open(dir.path().join("raft")).unwrap(),
                Arc::new(
                    FjallEngine::open(dir.path().join("db"), FjallOptions::default()).unwrap(),
                ),
            )
        } else if self.synchronous {
            (
                LogStore::synchronous(Arc::new(MemoryEngine::new())),
                Arc::new(MemoryEngine::new()),
            )
        } else {
            (
                LogStore::on(Arc::new(MemoryEngine::new())),
                Arc::new(MemoryEngine::new()),
            )
        };
        let log = store.group(GroupId(1));
        let replica = Replica::create(router(data), descriptor()).unwrap();
        Ok((
            Held {
                _dir: dir,
                _store: store,
            },
            log,
            ReplicaMachine::new(replica),
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_storage_suite_passes_on_disk() {
    Suite::test_all(Builder {
        on_disk: true,
        synchronous: false,
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_storage_suite_passes_in_memory() {
    Suite::test_all(Builder {
        on_disk: false,
        synchronous: false,
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openraft_storage_suite_passes_on_a_store_that_syncs_on_the_caller() {
    Suite::test_all(Builder {
        on_disk: false,
        synchronous: true,
    })
    .await
    .unwrap();
}

fn id(term: u64, index: u64) -> rowtree_cluster::raft::RaftLogId {
    to_raft_log_id(LogId::new(term, index))
}

fn blank(term: u64, index: u64) -> Entry {
    openraft::Entry {
        log_id: id(term, index),
        payload: EntryPayload::Blank,
    }
}

fn normal(term: u64, index: u64, command: Command) -> Entry {
    openraft::Entry {
        log_id: id(term, index),
        payload: EntryPayload::Normal(command),
    }
}

fn membership(voters: &[u64]) -> Membership {
    let nodes: BTreeMap<u64, BasicNode> = voters
        .iter()
        .map(|&n| {
            (
                n,
                BasicNode {
                    addr: format!("127.0.0.1:{}", 9000 + n),
                },
            )
        })
        .collect();
    Membership::new(vec![voters.iter().copied().collect::<BTreeSet<_>>()], nodes).unwrap()
}

/// Applies `entries` to `machine`, in order.
async fn apply_all(machine: &mut ReplicaMachine, entries: Vec<Entry>) {
    let stream = futures_util::stream::iter(entries.into_iter().map(|e| Ok((e, None))));
    machine.apply(stream).await.unwrap();
}

/// Builds a snapshot of `machine` as openraft does.
async fn snapshot_of(
    machine: &mut ReplicaMachine,
) -> openraft::alias::SnapshotOf<TypeConfig, rowtree_cluster::SnapshotImage> {
    machine
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap()
}

/// Appends `entries` and waits until the store says they are durable.
async fn append(log: &mut GroupLog, entries: Vec<Entry>) {
    let (tx, rx) = TypeConfig::oneshot();
    log.append(entries, IOFlushed::signal(tx)).await.unwrap();
    rx.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_share_one_store_and_one_sync_covers_many_appends() {
    let dir = tempfile::tempdir().unwrap();
    let store = LogStore::open(dir.path()).unwrap();
    // 16 groups append 20 entries each, one entry per append, concurrently.
    let mut tasks = Vec::new();
    for g in 0..16u64 {
        let mut log = store.group(GroupId(g));
        tasks.push(tokio::spawn(async move {
            for i in 0..20 {
                append(&mut log, vec![blank(g + 1, i)]).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let stats = store.stats();
    assert_eq!(stats.waiters, 16 * 20);
    assert!(
        stats.syncs < stats.waiters,
        "every append had a sync of its own: {stats:?}"
    );
    // Each group reads back its own entries and no other group's.
    for g in 0..16u64 {
        let mut log = store.group(GroupId(g));
        let entries = log.try_get_log_entries(0..100).await.unwrap();
        let ids: Vec<_> = entries.iter().map(|e| e.log_id).collect();
        let expected: Vec<_> = (0..20).map(|i| id(g + 1, i)).collect();
        assert_eq!(ids, expected, "group {g}");
        let state = log.get_log_state().await.unwrap();
        assert_eq!(state.last_log_id, Some(id(g + 1, 19)));
    }
    // Purging and truncating one group leaves its neighbours alone.
    let mut five = store.group(GroupId(5));
    five.purge(id(6, 9)).await.unwrap();
    five.truncate_after(Some(id(6, 14))).await.unwrap();
    let left: Vec<_> = five
        .try_get_log_entries(..)
        .await
        .unwrap()
        .iter()
        .map(|e| e.log_id.index)
        .collect();
    assert_eq!(left, (10..=14).collect::<Vec<_>>());
    for g in [4u64, 6] {
        let n = store
            .group(GroupId(g))
            .try_get_log_entries(..)
            .await
            .unwrap()
            .len();
        assert_eq!(n, 20, "group {g}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_vote_and_replica_come_back_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let write = |ts: u64, k: &[u8], v: &[u8]| Command::Write {
        commits: vec![Commit {
            ts,
            writes: vec![(k.to_vec(), Some(v.to_vec()))],
        }],
        closed_ts: None,
        meta: Vec::new(),
    };
    let entries = vec![
        openraft::Entry {
            log_id: id(1, 0),
            payload: EntryPayload::Membership(membership(&[1, 2, 3])),
        },
        blank(1, 1),
        normal(1, 2, write(10, b"k1", b"one")),
        normal(2, 3, write(20, b"k2", b"two")),
    ];
    let vote = openraft::Vote {
        leader_id: openraft::impls::leader_id_std::LeaderId {
            term: 2,
            voted_for: 3,
        },
        committed: true,
    };
    {
        let store = LogStore::open(dir.path().join("raft")).unwrap();
        let mut log = store.group(GroupId(7));
        log.save_vote(&vote).await.unwrap();
        append(&mut log, entries.clone()).await;
        log.save_committed(Some(id(2, 3))).await.unwrap();
        let data = FjallEngine::open(dir.path().join("db"), FjallOptions::default()).unwrap();
        let replica = Replica::create(router(Arc::new(data)), descriptor()).unwrap();
        let mut machine = ReplicaMachine::new(replica);
        apply_all(&mut machine, entries.clone()).await;
        // Dropped without a sync of the data engine: it is written with
        // buffered durability, the log being the durable copy.
    }
    let store = LogStore::open(dir.path().join("raft")).unwrap();
    let mut log = store.group(GroupId(7));
    assert_eq!(log.read_vote().await.unwrap(), Some(vote));
    assert_eq!(log.read_committed().await.unwrap(), Some(id(2, 3)));
    assert_eq!(log.try_get_log_entries(..).await.unwrap(), entries);
    let data = FjallEngine::open(dir.path().join("db"), FjallOptions::default()).unwrap();
    let replica = Replica::open(router(Arc::new(data)), SplitId(7)).unwrap();
    let mut machine = ReplicaMachine::new(replica);
    let (applied, stored) = machine.applied_state().await.unwrap();
    // The engine kept some prefix of what was applied; whatever it kept,
    // the membership it reports is the one of the entries it kept.
    if let Some(applied) = applied {
        assert!(applied.index <= 3);
        assert_eq!(stored.membership(), &membership(&[1, 2, 3]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_copies_the_replica_and_its_state() {
    let leader = router(Arc::new(MemoryEngine::new()));
    let mut source = ReplicaMachine::new(Replica::create(leader.clone(), descriptor()).unwrap());
    let mut entries = vec![openraft::Entry {
        log_id: id(1, 0),
        payload: EntryPayload::Membership(membership(&[1, 2, 3])),
    }];
    for i in 1..=30u64 {
        let k = format!("k{:02}", i % 7).into_bytes();
        let v = (i % 5 != 0).then(|| format!("v{i}").into_bytes());
        entries.push(normal(
            1,
            i,
            Command::Write {
                commits: vec![Commit {
                    ts: 100 + i,
                    writes: vec![(k, v)],
                }],
                closed_ts: Some(90 + i),
                meta: Vec::new(),
            },
        ));
    }
    apply_all(&mut source, entries).await;
    let snapshot = snapshot_of(&mut source).await;
    assert_eq!(snapshot.meta.last_log_id, Some(id(1, 30)));

    // A follower holding stale data in the range, and data outside it.
    let follower = router(Arc::new(MemoryEngine::new()));
    let mut stale = Replica::create(follower.clone(), descriptor()).unwrap();
    stale
        .apply(
            LogId::new(1, 0),
            &Command::Write {
                commits: vec![Commit {
                    ts: 5,
                    writes: vec![(b"k99".to_vec(), Some(b"stale".to_vec()))],
                }],
                closed_ts: None,
                meta: Vec::new(),
            },
        )
        .unwrap();
    follower
        .commit(
            5,
            &[(b"m1".to_vec(), Some(b"other split".to_vec()))],
            rowtree_storage::Durability::Buffered,
        )
        .unwrap();
    let mut target = ReplicaMachine::new(stale);
    target
        .install_snapshot(&snapshot.meta, snapshot.snapshot.clone())
        .await
        .unwrap();
    assert_eq!(
        target.applied_state().await.unwrap(),
        source.applied_state().await.unwrap()
    );
    assert_eq!(target.replica().closed_ts(), source.replica().closed_ts());
    let range = |r: &Router, start: &[u8], limit: &[u8]| -> Vec<_> {
        r.scan_stored(start, Some(limit))
            .map(|p| p.unwrap())
            .collect()
    };
    assert_eq!(range(&follower, b"k", b"l"), range(&leader, b"k", b"l"));
    assert_eq!(range(&follower, b"m", b"n").len(), 1, "outside the range");
    assert_eq!(
        target.get_current_snapshot().await.unwrap().unwrap().meta,
        snapshot.meta
    );

    // An image whose metadata says otherwise is refused.
    let mut wrong = snapshot.meta.clone();
    wrong.last_log_id = Some(id(1, 31));
    let fresh = router(Arc::new(MemoryEngine::new()));
    let mut other = ReplicaMachine::new(Replica::create(fresh, descriptor()).unwrap());
    let e = other
        .install_snapshot(&wrong, snapshot.snapshot)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("metadata"), "{e}");
}

/// An engine that counts its syncs, can be told to fail them, and
/// remembers for each write how many syncs had started before it.
struct Watched {
    inner: MemoryEngine,
    /// Syncs started so far (the next sync's sequence number).
    started: std::sync::atomic::AtomicU64,
    /// One more than the sequence number of the newest finished sync.
    finished: std::sync::atomic::AtomicU64,
    fail: std::sync::atomic::AtomicBool,
    /// Writes made with `Durability::Sync`.
    synced_writes: std::sync::atomic::AtomicU64,
    /// Per group (the first 8 bytes of a write's first key): the syncs
    /// started before its latest write.
    writes: std::sync::Mutex<HashMap<Vec<u8>, u64>>,
}

impl Watched {
    fn new() -> Arc<Watched> {
        Arc::new(Watched {
            inner: MemoryEngine::new(),
            started: 0.into(),
            finished: 0.into(),
            fail: false.into(),
            synced_writes: 0.into(),
            writes: Default::default(),
        })
    }
}

impl Engine for Watched {
    fn get(
        &self,
        space: rowtree_storage::Space,
        key: &[u8],
    ) -> rowtree_storage::Result<Option<Vec<u8>>> {
        self.inner.get(space, key)
    }

    fn scan(
        &self,
        space: rowtree_storage::Space,
        range: rowtree_storage::KeyRange,
        reverse: bool,
    ) -> rowtree_storage::ScanIter<'_> {
        self.inner.scan(space, range, reverse)
    }

    fn write(
        &self,
        batch: rowtree_storage::WriteBatch,
        durability: rowtree_storage::Durability,
    ) -> rowtree_storage::Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        if durability == rowtree_storage::Durability::Sync {
            self.synced_writes.fetch_add(1, SeqCst);
        }
        let mut writes = self.writes.lock().unwrap();
        if let Some(op) = batch.ops().first() {
            let key = match op {
                rowtree_storage::WriteOp::Put { key, .. } => key,
                rowtree_storage::WriteOp::Delete { key, .. } => key,
            };
            writes.insert(key[..8].to_vec(), self.started.load(SeqCst));
        }
        self.inner.write(batch, durability)
    }

    fn sync(&self) -> rowtree_storage::Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        let seq = {
            // No write slips between taking the number and starting.
            let _writes = self.writes.lock().unwrap();
            self.started.fetch_add(1, SeqCst)
        };
        std::thread::sleep(std::time::Duration::from_micros(200));
        if self.fail.load(SeqCst) {
            return Err(rowtree_storage::Error::Stopped(rowtree_storage::Stop::io(
                rowtree_storage::Failed::Fsync,
                &std::io::Error::from_raw_os_error(5),
            )));
        }
        self.finished.fetch_max(seq + 1, SeqCst);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_is_acknowledged_only_after_a_sync_that_followed_it() {
    use std::sync::atomic::Ordering::SeqCst;
    let engine = Watched::new();
    let store = LogStore::on(engine.clone());
    let mut tasks = Vec::new();
    for g in 0..4u64 {
        let mut log = store.group(GroupId(g));
        let engine = engine.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..50 {
                let (tx, rx) = TypeConfig::oneshot();
                log.append(vec![blank(1, i)], IOFlushed::signal(tx))
                    .await
                    .unwrap();
                // How many syncs had started before the append's write.
                let before = engine.writes.lock().unwrap()[&g.to_be_bytes().to_vec()];
                rx.await.unwrap().unwrap();
                let finished = engine.finished.load(SeqCst);
                assert!(
                    finished > before,
                    "group {g} entry {i}: acknowledged with no sync started after its write \
                     (syncs before the write {before}, finished through {finished})"
                );
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // A vote, too, returns only once a sync covers it.
    let mut log = store.group(GroupId(9));
    let before = engine.started.load(SeqCst);
    let vote = openraft::Vote {
        leader_id: openraft::impls::leader_id_std::LeaderId {
            term: 1,
            voted_for: 1,
        },
        committed: false,
    };
    log.save_vote(&vote).await.unwrap();
    assert!(engine.finished.load(SeqCst) > before);

    // A failed sync fails what waited for it: nothing is acknowledged as
    // durable that may not be.
    engine.fail.store(true, SeqCst);
    let (tx, rx) = TypeConfig::oneshot();
    log.append(vec![blank(1, 0)], IOFlushed::signal(tx))
        .await
        .unwrap();
    let e = rx.await.unwrap().unwrap_err();
    assert!(e.to_string().contains("fsync"), "{e}");
    let e = log.save_vote(&vote).await.unwrap_err();
    assert!(e.to_string().contains("fsync"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_snapshot_covers_is_durable_before_the_log_can_be_purged() {
    use std::sync::atomic::Ordering::SeqCst;
    let engine = Watched::new();
    let mut machine =
        ReplicaMachine::new(Replica::create(router(engine.clone()), descriptor()).unwrap());
    // Making the replica is synced; what follows is counted from there.
    let (finished, synced) = (
        engine.finished.load(SeqCst),
        engine.synced_writes.load(SeqCst),
    );
    assert_eq!(synced, 1, "the replica's making is synced");
    let entries = vec![
        blank(1, 0),
        normal(
            1,
            1,
            Command::Write {
                commits: vec![Commit {
                    ts: 10,
                    writes: vec![(b"k1".to_vec(), Some(b"v".to_vec()))],
                }],
                closed_ts: None,
                meta: Vec::new(),
            },
        ),
    ];
    apply_all(&mut machine, entries).await;
    // Entries are applied with buffered durability: nothing synced yet.
    assert_eq!(engine.finished.load(SeqCst), finished);
    assert_eq!(engine.synced_writes.load(SeqCst), synced);
    let snapshot = snapshot_of(&mut machine).await;
    assert_eq!(snapshot.meta.last_log_id, Some(id(1, 1)));
    assert_eq!(
        engine.finished.load(SeqCst),
        finished + 1,
        "the engine was not synced before the snapshot that lets openraft purge the log"
    );
    // Installing a snapshot writes the replica durably too.
    let other = Watched::new();
    let mut follower =
        ReplicaMachine::new(Replica::create(router(other.clone()), descriptor()).unwrap());
    let made = other.synced_writes.load(SeqCst);
    follower
        .install_snapshot(&snapshot.meta, snapshot.snapshot)
        .await
        .unwrap();
    assert_eq!(other.synced_writes.load(SeqCst), made + 1);
}

/// A group gone for good (merged away, its database dropped) has its whole
/// log removed: entries in batches, then vote, committed and purged ids;
/// after a restart nothing of it is left, and its neighbours keep theirs.
/// A group cleared (left by this node, which may hold it again) keeps its
/// vote, and as its image floor the highest index it knew committed (or
/// the caller did); a group removed keeps no floor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_groups_log_is_gone_and_its_neighbours_stay() {
    let dir = tempfile::tempdir().unwrap();
    let n = rowtree_cluster::raft::REMOVE_BATCH as u64 * 2 + 17;
    let vote = openraft::Vote {
        leader_id: openraft::impls::leader_id_std::LeaderId {
            term: 1,
            voted_for: 1,
        },
        committed: true,
    };
    {
        let store = LogStore::open(dir.path()).unwrap();
        for g in [4u64, 5, 6] {
            let mut log = store.group(GroupId(g));
            log.save_vote(&vote).await.unwrap();
            append(&mut log, (0..n).map(|i| blank(1, i)).collect()).await;
            log.save_committed(Some(id(1, n - 1))).await.unwrap();
        }
        store.group(GroupId(5)).purge(id(1, 9)).await.unwrap();
        // A group cleared once, then removed: its floor goes with the rest.
        store.group(GroupId(7)).save_vote(&vote).await.unwrap();
        store.clear_group(GroupId(7), 12).unwrap();
        assert_eq!(store.image_floor(GroupId(7)).unwrap(), 12);
        store.remove_group(GroupId(7)).unwrap();
        assert!(!store.holds_group(GroupId(7)).unwrap());
        assert_eq!(store.image_floor(GroupId(7)).unwrap(), 0);
        assert!(store.holds_group(GroupId(5)).unwrap());
        assert_eq!(store.remove_group(GroupId(5)).unwrap(), (n - 10) as usize);
        assert!(!store.holds_group(GroupId(5)).unwrap());
        assert_eq!(store.remove_group(GroupId(5)).unwrap(), 0, "nothing left");
        // A group this node leaves, and may be placed in again, keeps its
        // vote (its term) and loses the rest.
        assert_eq!(store.image_floor(GroupId(6)).unwrap(), 0);
        assert_eq!(store.clear_group(GroupId(6), 3).unwrap(), n as usize);
        assert!(store.holds_group(GroupId(6)).unwrap(), "the vote stays");
        assert_eq!(
            store.image_floor(GroupId(6)).unwrap(),
            n - 1,
            "what it knew committed"
        );
        // Cleared again (a replica awaiting an image starts so), knowing
        // less: the floor never falls; told more, it rises.
        assert_eq!(store.clear_group(GroupId(6), 0).unwrap(), 0);
        assert_eq!(store.image_floor(GroupId(6)).unwrap(), n - 1);
        store.clear_group(GroupId(6), n + 40).unwrap();
        assert_eq!(store.image_floor(GroupId(6)).unwrap(), n + 40);
    }
    let store = LogStore::open(dir.path()).unwrap();
    let mut six = store.group(GroupId(6));
    assert_eq!(six.read_vote().await.unwrap(), Some(vote));
    assert_eq!(
        store.image_floor(GroupId(6)).unwrap(),
        n + 40,
        "kept across a restart"
    );
    assert_eq!(six.read_committed().await.unwrap(), None);
    let state = six.get_log_state().await.unwrap();
    assert_eq!((state.last_purged_log_id, state.last_log_id), (None, None));
    assert!(!store.holds_group(GroupId(5)).unwrap());
    let mut five = store.group(GroupId(5));
    assert_eq!(five.read_vote().await.unwrap(), None);
    assert_eq!(five.read_committed().await.unwrap(), None);
    let state = five.get_log_state().await.unwrap();
    assert_eq!((state.last_purged_log_id, state.last_log_id), (None, None));
    let mut four = store.group(GroupId(4));
    assert_eq!(four.try_get_log_entries(..).await.unwrap().len() as u64, n);
    assert_eq!(four.read_vote().await.unwrap(), Some(vote));
}
