//! Helpers the cluster crate's test files share: replicas on in-memory
//! engines fed one entry after another, and the Raft settings and runtime
//! of tests that run groups on loopback. (Each test file uses some.)

#![allow(dead_code)]

use std::sync::Arc;

use openraft::Config;
use rowtree_cluster::{Command, Descriptor, Error, LogId, Replica};
use rowtree_kv::{Router, SplitMap};
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
