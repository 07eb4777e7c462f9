//! Helpers the cluster crate's test files share: replicas on in-memory
//! engines fed one entry after another, and the Raft settings and runtime
//! of tests that run groups on loopback, and the split `[k, l)` that the
//! split and merge tests cut and join. (Each test file uses some.)

#![allow(dead_code)]

use std::sync::Arc;

use openraft::Config;
use rowtree_cluster::{Command, Commit, Descriptor, Error, GlobalTxnId, LogId, Prepare, Replica};
use rowtree_kv::{Router, SplitId, SplitMap};
use rowtree_storage::mvcc::split_version_key;
use rowtree_storage::{MemoryEngine, Mvcc};

/// A router over a new in-memory engine.
pub fn memory() -> Arc<Router> {
    Arc::new(Router::new(
        Mvcc::new(Arc::new(MemoryEngine::new())),
        SplitMap::new(),
    ))
}

/// Everything the engine stores: every version of the data space, then
/// the metadata space.
pub fn stored(router: &Router) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut all: Vec<_> = router.scan_stored(b"", None).map(|r| r.unwrap()).collect();
    all.extend(router.meta_scan(b"").map(|r| r.unwrap()));
    all
}

/// A replica on an in-memory engine that applies entries one after the
/// other.
pub struct Log {
    pub router: Arc<Router>,
    pub replica: Replica,
    pub next: u64,
}

impl Log {
    /// A new replica of `descriptor`, nothing applied.
    pub fn new(descriptor: Descriptor) -> Log {
        let router = memory();
        let replica = Replica::create(router.clone(), descriptor).unwrap();
        Log {
            router,
            replica,
            next: 0,
        }
    }

    /// Applies `command` as the next entry; it must be accepted.
    pub fn apply(&mut self, command: Command) {
        self.replica
            .apply(LogId::new(1, self.next), &command)
            .unwrap_or_else(|e| panic!("{command}: {e}"));
        self.next += 1;
    }

    /// Applies `command` as the next entry expecting a refusal that
    /// leaves the engine, the applied id, the descriptor and the prepared
    /// transactions as they were.
    pub fn refuse(&mut self, command: Command) -> Error {
        let before = stored(&self.router);
        let applied = self.replica.applied();
        let descriptor = self.replica.descriptor().clone();
        let floor = self.replica.prepared_view().floor();
        let err = self
            .replica
            .apply(LogId::new(1, self.next), &command)
            .expect_err("the entry was applied");
        assert_eq!(
            stored(&self.router),
            before,
            "a refused entry wrote something"
        );
        assert_eq!(self.replica.applied(), applied);
        assert_eq!(self.replica.descriptor(), &descriptor);
        assert_eq!(self.replica.prepared_view().floor(), floor);
        err
    }

    /// The value of `key` a read at `ts` sees, as text.
    pub fn read(&self, key: &[u8], ts: u64) -> Option<String> {
        self.router
            .get(key, ts)
            .unwrap()
            .map(|v| String::from_utf8(v).unwrap())
    }
}

/// The Raft settings of groups in tests: heartbeats every 100 ms,
/// elections after 0.8 to 1.6 s.
pub fn config() -> Arc<Config> {
    Arc::new(
        Config {
            heartbeat_interval: 100,
            election_timeout_min: 800,
            election_timeout_max: 1600,
            ..Config::default()
        }
        .validate()
        .unwrap(),
    )
}

/// The runtime the nodes of a test run on.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The split of keys `[b"k", b"l")`, id 7, at epoch 3: what the split and
/// merge tests cut and join.
pub fn split_k() -> Descriptor {
    Descriptor {
        split: SplitId(7),
        start: b"k".to_vec(),
        limit: Some(b"l".to_vec()),
        epoch: 3,
    }
}

/// Key `i` of [`split_k`]'s range.
pub fn key(i: u8) -> Vec<u8> {
    vec![b'k', i]
}

/// A write entry: one commit at `ts` writing `v{ts}` to each of `keys`.
pub fn write_keys(ts: u64, keys: &[u8]) -> Command {
    Command::Write {
        commits: vec![Commit {
            ts,
            writes: keys
                .iter()
                .map(|k| (key(*k), Some(format!("v{ts}").into_bytes())))
                .collect(),
        }],
        closed_ts: None,
        meta: Vec::new(),
    }
}

/// Transaction `txn` prepared at `ts`, writing `p{txn}` to each of
/// `keys`, coordinated by split 1 with `other` the second participant.
pub fn prepare_keys(txn: u128, ts: u64, keys: &[u8], other: SplitId) -> Command {
    Command::Prepare(Prepare {
        txn: GlobalTxnId(txn),
        ts,
        coordinator: SplitId(1),
        participants: vec![SplitId(1), other],
        writes: keys
            .iter()
            .map(|k| (key(*k), Some(format!("p{txn}").into_bytes())))
            .collect(),
        pending: false,
        locks: Vec::new(),
    })
}

/// The row keys of the versions `router` stores, each once.
pub fn row_keys(router: &Router) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = router
        .scan_stored(b"", None)
        .map(|r| split_version_key(&r.unwrap().0).unwrap().0.to_vec())
        .collect();
    keys.dedup();
    keys
}
