//! A cluster in one process (`rowtree_cluster::local`): three nodes on
//! loopback serving one database. What the leader commits reaches every
//! replica's engine; the followers refuse to commit; a bad replica count is
//! an error, not a panic.

use std::time::{Duration, Instant};

use rowtree_cluster::local::LocalCluster;
use rowtree_cluster::node::NodeError;
use rowtree_db::{Database, Mutation, Options, Value};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Every version the replica's engine stores, raw.
fn stored(db: &Database) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.shared_router()
        .scan_stored(b"", None)
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn the_leaders_commits_reach_every_replica() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    let cluster = LocalCluster::start(
        rt.handle().clone(),
        dir.path(),
        3,
        Duration::from_millis(2),
        Options::default(),
    )
    .unwrap();
    assert_eq!(cluster.replicas(), 3);
    let leader = cluster.leader();
    leader
        .apply_ddl(&["CREATE TABLE T (Id INT64 NOT NULL, Name STRING(MAX)) PRIMARY KEY (Id)"])
        .unwrap();
    for id in 0..20 {
        leader
            .write(vec![Mutation::insert(
                "T",
                &["Id", "Name"],
                vec![vec![Value::Int64(id), Value::String(format!("row {id}"))]],
            )])
            .unwrap();
    }
    let want = stored(leader);
    assert!(
        want.len() >= 20,
        "the leader stores the rows: {}",
        want.len()
    );
    // A commit is acknowledged once a majority has it; the last replica
    // applies it soon after.
    let deadline = Instant::now() + Duration::from_secs(10);
    for (i, db) in cluster.databases().iter().enumerate().skip(1) {
        loop {
            let got = stored(db);
            if got == want {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "node {} stores {} versions, the leader {}",
                i + 1,
                got.len(),
                want.len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // A follower does not commit: it names the leader instead.
        let refused = db.write(vec![Mutation::insert(
            "T",
            &["Id", "Name"],
            vec![vec![Value::Int64(100), Value::String("no".into())]],
        )]);
        assert!(refused.is_err(), "node {} committed as a follower", i + 1);
    }
    cluster.shutdown();
}

#[test]
fn a_replica_count_out_of_range_is_refused() {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    for replicas in [0, rowtree_cluster::local::MAX_REPLICAS + 1] {
        match LocalCluster::start(
            rt.handle().clone(),
            dir.path(),
            replicas,
            Duration::from_millis(2),
            Options::default(),
        ) {
            Err(NodeError::Config(message)) => {
                assert!(message.contains("1 to 7 replicas"), "{message}")
            }
            other => panic!("{replicas} replicas: {other:?}"),
        }
    }
}
