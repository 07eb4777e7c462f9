//! A database whose commits go through a Raft group: three nodes, each
//! with its own storage engine, a `Database` on it whose router hands
//! commit groups to the group's log (`GroupCommits`), and a replica that
//! applies the log to that engine through the database's own router; the
//! nodes talk over their peer ports on loopback.
//!
//! What it shows: schema changes and rows committed on the leader are on
//! every replica's engine once acknowledged, and each commit is
//! acknowledged only after commit wait (the leader's clock past its
//! timestamp plus ε); a node that does not lead refuses to commit or read,
//! and the refusal names the leader; when the leader's group stops, a
//! survivor takes over (under a lease that starts after the old one's
//! expiry plus ε), reloads the schema from the replicated DDL log, serves
//! every acknowledged row, and commits more, which the other survivor
//! stores byte for byte, while the old leader, its lease run out, refuses
//! to serve reads; sequence reservations are replicated too, so the new
//! leader never hands out a value again. The nodes' clocks disagree by
//! less than ε.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openraft::type_config::async_runtime::WatchReceiver;
use openraft::{BasicNode, Config};
use rowtree_cluster::raft::{
    GroupCommits, GroupId, GroupRaft, Groups, LogStore, PeerPort, Peers, ReplicaMachine,
};
use rowtree_cluster::{Descriptor, LeaseRules, Replica};
use rowtree_db::{Database, KeySet, Mutation, Options, ReadRequest, Value};
use rowtree_kv::{Router, SplitId};
use rowtree_storage::{Engine, FjallEngine, FjallOptions};
use rowtree_txn::{Clock, SystemClock};

const GROUP: GroupId = GroupId(1);

/// 2 s leases; clocks within 50 ms of each other.
const RULES: LeaseRules = LeaseRules {
    duration: Duration::from_secs(2),
    max_offset: Duration::from_millis(50),
};

/// The one group of a database in a cluster today: the whole key space.
fn descriptor() -> Descriptor {
    Descriptor {
        split: SplitId(1),
        start: Vec::new(),
        limit: None,
        epoch: 1,
    }
}

fn config() -> Arc<Config> {
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

/// The system clock moved by an offset a test sets: nodes whose clocks
/// disagree, as on separate machines.
#[derive(Default)]
struct OffsetClock {
    behind_nanos: AtomicU64,
}

impl Clock for OffsetClock {
    fn now_nanos(&self) -> u64 {
        SystemClock.now_nanos() - self.behind_nanos.load(Ordering::Relaxed)
    }
}

struct Node {
    db: Database,
    clock: Arc<OffsetClock>,
    raft: GroupRaft,
    router: Arc<Router>,
    port: PeerPort,
    _log: LogStore,
}

/// Starts node `id` in `dir`: its log store, engine, database (committing
/// through the group), replica (applying through the database's router),
/// Raft instance and peer port.
fn start(rt: &tokio::runtime::Runtime, id: u64, dir: &Path) -> Node {
    let log = LogStore::open(dir.join("raft")).unwrap();
    let engine: Arc<dyn Engine> =
        Arc::new(FjallEngine::open(dir.join("data"), FjallOptions::default()).unwrap());
    let clock = Arc::new(OffsetClock::default());
    let commits = Arc::new(GroupCommits::new(
        id,
        descriptor(),
        RULES,
        clock.clone(),
        rt.handle().clone(),
        Duration::from_secs(10),
    ));
    let db = Database::with_engine(
        engine,
        Options {
            replication: Some(commits.clone()),
            clock: clock.clone(),
            ..Options::default()
        },
    )
    .unwrap();
    let router = db.shared_router();
    let observer = db.clone();
    let replica = Replica::create(router.clone(), descriptor())
        .unwrap()
        .with_observer(Arc::new(move |ts| observer.observe_applied(ts)));
    let leases = replica.lease_view();
    let (raft, port) = rt.block_on(async {
        let raft = GroupRaft::new(
            id,
            config(),
            Peers::new().group(GROUP),
            log.group(GROUP),
            ReplicaMachine::new(replica),
        )
        .await
        .unwrap();
        let groups = Groups::new();
        groups.insert(GROUP, raft.clone());
        let port = PeerPort::start(SocketAddr::from(([127, 0, 0, 1], 0)), groups)
            .await
            .unwrap();
        (raft, port)
    });
    commits.start(raft.clone(), leases).map_err(|_| ()).unwrap();
    Node {
        db,
        clock,
        raft,
        router,
        port,
        _log: log,
    }
}

/// Stops the node's peer port and Raft instance, keeping its database.
fn halt(rt: &tokio::runtime::Runtime, node: Node) -> Database {
    rt.block_on(async {
        node.port.shutdown().await;
        node.raft.shutdown().await.unwrap();
    });
    node.db
}

/// Stops the node's peer port and Raft instance, then drops its database.
fn stop(rt: &tokio::runtime::Runtime, node: Node) {
    rt.block_on(async {
        node.port.shutdown().await;
        node.raft.shutdown().await.unwrap();
    });
    drop(node.db);
}

/// The node that leads the group, by its own account (not `not`): one
/// that others name and that calls itself leader.
fn leader(rt: &tokio::runtime::Runtime, nodes: &BTreeMap<u64, Node>, not: Option<u64>) -> u64 {
    rt.block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            for (id, node) in nodes {
                let m = node.raft.metrics().borrow_watched().clone();
                if Some(*id) != not && m.current_leader == Some(*id) && m.state.is_leader() {
                    return *id;
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no leader within 20 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

fn insert(db: &Database, ids: std::ops::Range<i64>) -> rowtree_db::Result<()> {
    for id in ids {
        db.write(vec![Mutation::insert(
            "Accounts",
            &["Id", "Owner"],
            vec![vec![Value::Int64(id), Value::String(format!("owner {id}"))]],
        )])?;
    }
    Ok(())
}

/// A value of the sequence `Numbers`, taken in a read-write transaction.
fn next_number(db: &Database) -> i64 {
    let mut txn = db.begin();
    let value = txn.next_sequence_value("Numbers").unwrap();
    txn.commit().unwrap();
    value
}

fn ids(db: &Database) -> Vec<i64> {
    db.read(&ReadRequest::new("Accounts", &["Id"], KeySet::all()))
        .unwrap()
        .into_iter()
        .map(|row| match row[0] {
            Value::Int64(id) => id,
            ref other => panic!("unexpected id {other:?}"),
        })
        .collect()
}

/// Every version the node's engine stores, raw.
fn stored(router: &Router) -> Vec<(Vec<u8>, Vec<u8>)> {
    router.scan_stored(b"", None).map(|r| r.unwrap()).collect()
}

fn ddl_log(router: &Router) -> Vec<(Vec<u8>, Vec<u8>)> {
    router.meta_scan(b"ddl/").map(|r| r.unwrap()).collect()
}

fn wait_applied(rt: &tokio::runtime::Runtime, raft: &GroupRaft, index: u64) {
    rt.block_on(async {
        raft.wait(Some(Duration::from_secs(20)))
            .applied_index_at_least(Some(index), "applied")
            .await
            .unwrap();
    });
}

fn last_applied(raft: &GroupRaft) -> u64 {
    raft.metrics()
        .borrow_watched()
        .last_applied
        .map_or(0, |id| id.index)
}

#[test]
fn a_database_commits_through_its_group_and_survives_the_loss_of_its_leader() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut nodes: BTreeMap<u64, Node> = (1..=3)
        .map(|id| (id, start(&rt, id, &dir.path().join(format!("n{id}")))))
        .collect();
    let members: BTreeMap<u64, BasicNode> = nodes
        .iter()
        .map(|(id, n)| {
            (
                *id,
                BasicNode {
                    addr: n.port.local_addr.to_string(),
                },
            )
        })
        .collect();
    rt.block_on(nodes[&1].raft.initialize(members)).unwrap();
    let first = leader(&rt, &nodes, None);
    let db = &nodes[&first].db;
    // The other nodes' clocks run 40 ms behind the first leader's (ε is
    // 50 ms).
    for (id, node) in &nodes {
        if *id != first {
            node.clock.behind_nanos.store(40_000_000, Ordering::Relaxed);
        }
    }

    // Schema and rows through the leader.
    db.apply_ddl(&[
        "CREATE TABLE Accounts (Id INT64 NOT NULL, Owner STRING(MAX)) PRIMARY KEY (Id)",
        "CREATE SEQUENCE Numbers OPTIONS (sequence_kind = 'bit_reversed_positive')",
    ])
    .unwrap();
    insert(db, 0..49).unwrap();
    // Commit wait: acknowledged once the clock is past the timestamp + ε.
    let committed = db
        .write(vec![Mutation::insert(
            "Accounts",
            &["Id", "Owner"],
            vec![vec![Value::Int64(49), Value::String("owner 49".into())]],
        )])
        .unwrap();
    let now = nodes[&first].clock.now_nanos();
    assert!(
        now >= committed.commit_timestamp + 50_000_000,
        "acknowledged at {now}, before {} + ε",
        committed.commit_timestamp
    );
    assert_eq!(ids(db), (0..50).collect::<Vec<_>>());
    let numbers: Vec<i64> = (0..5).map(|_| next_number(db)).collect();

    // Acknowledged means on every replica once they catch up: the same
    // versions, the same DDL log.
    let index = last_applied(&nodes[&first].raft);
    for node in nodes.values() {
        wait_applied(&rt, &node.raft, index);
    }
    let on_leader = stored(&nodes[&first].router);
    assert!(on_leader.len() >= 50, "{} versions", on_leader.len());
    for (id, node) in &nodes {
        assert_eq!(stored(&node.router), on_leader, "node {id}'s versions");
        assert_eq!(
            ddl_log(&node.router),
            ddl_log(&nodes[&first].router),
            "node {id}'s DDL log"
        );
    }

    // A node that does not lead refuses to commit, and says who leads.
    let follower = *nodes.keys().find(|id| **id != first).unwrap();
    assert!(nodes[&follower].db.reload_schema().unwrap());
    let refused = insert(&nodes[&follower].db, 1000..1001).unwrap_err();
    assert_eq!(
        refused.code(),
        rowtree_types::Code::Unavailable,
        "{refused}"
    );
    assert!(
        refused.to_string().contains(&format!("node {first} does")),
        "the refusal names the leader: {refused}"
    );
    let refused = nodes[&follower]
        .db
        .read(&ReadRequest::new("Accounts", &["Id"], KeySet::all()))
        .unwrap_err();
    assert!(
        refused.to_string().contains(&format!("node {first} does")),
        "a read on a follower is refused too: {refused}"
    );

    // The leader's group stops (its database stays, as on a node cut off
    // from the others); a survivor leads, reloads the schema the log
    // carried, serves every acknowledged row and commits more.
    let deposed = halt(&rt, nodes.remove(&first).unwrap());
    let second = leader(&rt, &nodes, Some(first));
    let db = &nodes[&second].db;
    db.reload_schema().unwrap();
    assert_eq!(ids(db), (0..50).collect::<Vec<_>>());
    // Its first commit waits for its lease, which starts after the old
    // one's expiry plus ε.
    insert(db, 50..80).unwrap();
    assert_eq!(ids(db), (0..80).collect::<Vec<_>>());
    // A row the first leader wrote takes a newer version.
    db.write(vec![Mutation::update(
        "Accounts",
        &["Id", "Owner"],
        vec![vec![Value::Int64(0), Value::String("new owner".into())]],
    )])
    .unwrap();
    let owner = db
        .read(&ReadRequest::new(
            "Accounts",
            &["Owner"],
            KeySet::keys(vec![vec![Value::Int64(0)]]),
        ))
        .unwrap();
    assert_eq!(owner, vec![vec![Value::String("new owner".into())]]);
    // The sequence resumes above what the old leader reserved.
    let next = next_number(db);
    assert!(!numbers.contains(&next), "{next} handed out twice");

    // The new leader's lease began after the old one's expiry plus ε: the
    // deposed leader serves no more reads.
    let refused = deposed
        .read(&ReadRequest::new("Accounts", &["Id"], KeySet::all()))
        .unwrap_err();
    assert_eq!(
        refused.code(),
        rowtree_types::Code::Unavailable,
        "{refused}"
    );
    drop(deposed);

    let index = last_applied(&nodes[&second].raft);
    for node in nodes.values() {
        wait_applied(&rt, &node.raft, index);
    }
    let on_leader = stored(&nodes[&second].router);
    for (id, node) in &nodes {
        assert_eq!(stored(&node.router), on_leader, "node {id}'s versions");
    }

    for node in nodes.into_values() {
        stop(&rt, node);
    }
}
