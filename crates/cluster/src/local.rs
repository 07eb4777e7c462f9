//! A cluster in one process: N nodes, each with its own directory, storage
//! engine, Raft log and peer port on loopback, and one database replicated
//! on all of them.
//!
//! It is the replicated commit path exactly as separate processes run it
//! (a commit is appended to the leader's log, sent over TCP to the other
//! replicas, acknowledged once a majority has made it durable, applied,
//! and held through commit wait) without a client API in front: the caller
//! gets the leader's [`Database`] and uses it as an embedded database. That
//! is what a benchmark needs to see what replication does to contention
//! (`rowtree bench sequences --replicas 3`): the locks of a committing
//! transaction are held for a replicated commit's time, as in Spanner,
//! while nothing else (RPCs, a client library) is added.
//!
//! Node 1 bootstraps the cluster and the database's group, so it is the
//! first leader; the others join through it. Their clocks are the same
//! clock, so the maximum clock offset given is the one commit wait and the
//! leases allow for, not one the nodes are ever apart by.

use std::path::Path;
use std::time::{Duration, Instant};

use rowtree_db::Database;

use crate::node::clock::WallClock;
use crate::node::databases::DatabaseGroup;
use crate::node::{Node, NodeConfig, NodeError};

/// The most replicas a local cluster runs (each is a node with its own
/// engine and threads).
pub const MAX_REPLICAS: usize = 7;

/// How long [`LocalCluster::start`] waits for the database's first leader
/// to be able to commit.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The database's group id (the placement group is 0).
const GROUP: u64 = 1;

/// N nodes in this process serving one replicated database.
pub struct LocalCluster {
    runtime: tokio::runtime::Handle,
    nodes: Vec<Node>,
    /// Each node's replica of the database, in node order.
    databases: Vec<Database>,
}

impl std::fmt::Debug for LocalCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCluster")
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

impl LocalCluster {
    /// Starts `replicas` nodes under `dir` (`dir/node-I`, created if new)
    /// with peer ports on 127.0.0.1, and the database on all of them
    /// (`dir/node-I/database`) opened with `options` (their replication
    /// and clock are the cluster's). Returns once node 1 leads the
    /// database and may commit. `max_clock_offset` is ε: what commit wait
    /// waits out and leases allow for.
    ///
    /// Blocks; `runtime` (a multi-threaded tokio runtime) runs the nodes
    /// and must outlive the cluster. Call it outside that runtime.
    pub fn start(
        runtime: tokio::runtime::Handle,
        dir: &Path,
        replicas: usize,
        max_clock_offset: Duration,
        options: rowtree_db::Options,
    ) -> Result<LocalCluster, NodeError> {
        if !(1..=MAX_REPLICAS).contains(&replicas) {
            return Err(NodeError::Config(format!(
                "a local cluster has 1 to {MAX_REPLICAS} replicas, not {replicas}"
            )));
        }
        let config = |id: u64, join: Vec<String>| NodeConfig {
            node_id: id,
            data_dir: dir.join(format!("node-{id}")),
            listen: ([127, 0, 0, 1], 0).into(),
            advertise: None,
            join,
            join_timeout: Duration::from_secs(30),
            dead_after: Duration::from_secs(60),
            max_clock_offset,
            clock: WallClock::system(),
            routes: Default::default(),
            snapshot_every: crate::raft::SNAPSHOT_EVERY,
        };
        let mut nodes = Vec::with_capacity(replicas);
        let first = runtime.block_on(Node::start(config(1, Vec::new())))?;
        let seed = first.peer_addr().to_string();
        nodes.push(first);
        for id in 2..=replicas as u64 {
            nodes.push(runtime.block_on(Node::start(config(id, vec![seed.clone()])))?);
        }
        let group = DatabaseGroup {
            group: GROUP,
            name: "local".into(),
            members: (1..=replicas as u64).collect(),
            bootstrap: 1,
            joined: Vec::new(),
        };
        let mut databases = Vec::with_capacity(replicas);
        // The followers first, so that the group is whole when node 1
        // initializes it.
        for node in nodes.iter().rev() {
            let hosting = {
                let _entered = runtime.enter();
                node.hosting()
            };
            let db_dir = dir.join(format!("node-{}", node.id())).join("database");
            databases.push(hosting.open_database(&group, &db_dir, options.clone())?);
        }
        databases.reverse();
        let cluster = LocalCluster {
            runtime,
            nodes,
            databases,
        };
        cluster.wait_ready()?;
        Ok(cluster)
    }

    /// Waits until node 1 may commit to the database.
    fn wait_ready(&self) -> Result<(), NodeError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let router = self.databases[0].shared_router();
        loop {
            match router.ready_to_commit() {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(NodeError::Raft(format!(
                        "the database's group has no leader after {} s: {e}",
                        READY_TIMEOUT.as_secs()
                    )))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// The leader's database: node 1's, which leads unless it lost its
    /// lease (nothing in this process takes it away).
    pub fn leader(&self) -> &Database {
        &self.databases[0]
    }

    /// Every node's replica of the database, in node order.
    pub fn databases(&self) -> &[Database] {
        &self.databases
    }

    /// How many replicas the database has.
    pub fn replicas(&self) -> usize {
        self.nodes.len()
    }

    /// Stops every node (their Raft groups and peer ports) and closes the
    /// databases.
    pub fn shutdown(self) {
        let LocalCluster {
            runtime,
            nodes,
            databases,
        } = self;
        drop(databases);
        for node in nodes {
            runtime.block_on(node.shutdown());
        }
    }
}
