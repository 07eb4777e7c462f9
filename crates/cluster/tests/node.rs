//! Nodes forming a cluster in one test process, each with its own data
//! directory and peer port on loopback: bootstrap, joins (to a follower,
//! which forwards to the leader), the placement group surviving its
//! leader's stop, a restart from the data directory, and the refusals (a
//! directory of another node, a node id reused at another address, a
//! directory of another cluster); a silent voter replaced by a learner,
//! a join that never completes undone, a node whose clock is off stopping
//! itself (the offset guard), removals (of a follower, of
//! the leader itself) after which the id cannot join again, a node
//! removed while it was down learning so from the others, and a node
//! that sees another say it is stopping and, after its restart, knows its
//! process is a new one. `crates/cli/tests/cluster.rs` does the
//! same with real processes and kill -9.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use rowtree_cluster::node::clock::WallClock;
use rowtree_cluster::node::status::ClusterStatus;
use rowtree_cluster::node::{api, Node, NodeConfig, NodeError};

/// How far the test nodes' clocks may differ.
const MAX_CLOCK_OFFSET: Duration = Duration::from_millis(10);

fn config(id: u64, dir: &Path, listen: SocketAddr, join: &[&str]) -> NodeConfig {
    NodeConfig {
        node_id: id,
        data_dir: dir.join(format!("node-{id}")),
        listen,
        advertise: None,
        join: join.iter().map(|s| s.to_string()).collect(),
        join_timeout: Duration::from_secs(30),
        dead_after: Duration::from_secs(60),
        max_clock_offset: MAX_CLOCK_OFFSET,
        clock: WallClock::system(),
        routes: Default::default(),
        snapshot_every: rowtree_cluster::raft::SNAPSHOT_EVERY,
    }
}

fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// A free port for a node the test starts again at the same address: one
/// below the system's ephemeral range, which no outgoing connection takes
/// while the node is down.
fn lasting_port() -> SocketAddr {
    let port = rowtree_check::server::lasting_port().expect("a free port");
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Asks the node at `addr` for the status until `ok` holds, or fails
/// after 30 s with the last answer.
async fn wait_for(addr: &str, what: &str, ok: impl Fn(&ClusterStatus) -> bool) -> ClusterStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = api::status(addr, Duration::from_secs(5)).await;
        if let Ok(s) = &status {
            if ok(s) {
                return s.clone();
            }
        }
        assert!(Instant::now() < deadline, "{what}: last status {status:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Node 1, which makes the cluster, and node 2, which joins it, in `dir`;
/// and node 1's peer address.
async fn two_nodes(dir: &Path) -> (Node, Node, String) {
    let n1 = Node::start(config(1, dir, any_port(), &[])).await.unwrap();
    let a1 = n1.peer_addr().to_string();
    let n2 = Node::start(config(2, dir, any_port(), &[&a1]))
        .await
        .unwrap();
    (n1, n2, a1)
}

fn live_voters(s: &ClusterStatus) -> usize {
    s.nodes
        .iter()
        .filter(|n| n.state == "live" && n.placement == "voter")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_form_a_cluster_that_outlives_its_leader() {
    let dir = tempfile::tempdir().unwrap();
    let n1 = Node::start(config(1, dir.path(), lasting_port(), &[]))
        .await
        .unwrap();
    let a1 = n1.peer_addr().to_string();
    let cluster = n1.cluster_id();
    assert_eq!(cluster.len(), 32);
    // Node 2 joins through node 1; node 3 through node 2, a follower by
    // then, which forwards the request to the leader.
    let n2 = Node::start(config(2, dir.path(), any_port(), &[&a1]))
        .await
        .unwrap();
    let a2 = n2.peer_addr().to_string();
    let n3 = Node::start(config(3, dir.path(), any_port(), &[&a2]))
        .await
        .unwrap();
    let a3 = n3.peer_addr().to_string();
    assert_eq!(n2.cluster_id(), cluster);
    assert_eq!(n3.cluster_id(), cluster);
    for addr in [&a1, &a2, &a3] {
        let s = wait_for(addr, "three live voters", |s| {
            s.from_leader && live_voters(s) == 3
        })
        .await;
        assert_eq!(s.cluster_id, cluster);
        assert_eq!(s.leader, Some(1));
        assert!(
            s.nodes.iter().all(|n| n.reachable(true) == Some(true)),
            "{s:?}"
        );
    }
    let table = n3.status().await.to_table();
    assert!(table.contains("leader node 1"), "{table}");
    assert_eq!(table.matches("live").count(), 3, "{table}");

    // A fourth node joins as a learner: three voters are enough.
    let n4 = Node::start(config(4, dir.path(), any_port(), &[&a3, &a1]))
        .await
        .unwrap();
    let s = wait_for(&a1, "node 4 a live learner", |s| {
        s.nodes
            .iter()
            .any(|n| n.id == 4 && n.state == "live" && n.placement == "learner")
    })
    .await;
    assert_eq!(live_voters(&s), 3);

    // The leader stops: the two other voters elect a new one, which sees
    // node 1 fall silent.
    let first_term = s.term;
    n1.shutdown().await;
    let s = wait_for(
        n4.peer_addr(),
        "a new leader that sees node 1 silent",
        |s| {
            s.from_leader
                && s.leader.is_some_and(|l| l != 1)
                && s.nodes
                    .iter()
                    .any(|n| n.id == 1 && n.reachable(true) == Some(false))
        },
    )
    .await;
    assert!(s.term > first_term, "{s:?}");
    assert_eq!(s.nodes.len(), 4);

    // Node 1 comes back from its directory, at its old address, and is a
    // member again without asking anyone.
    let n1 = Node::start(config(1, dir.path(), a1.parse().unwrap(), &[]))
        .await
        .unwrap();
    assert_eq!(n1.cluster_id(), cluster);
    wait_for(&a1, "node 1 heard again", |s| {
        s.from_leader
            && s.nodes
                .iter()
                .all(|n| n.reachable(true) == Some(true) && n.state == "live")
    })
    .await;

    // Refusals.
    let err = Node::start(NodeConfig {
        data_dir: dir.path().join("node-2"),
        ..config(7, dir.path(), any_port(), &[&a1])
    })
    .await
    .unwrap_err();
    assert!(
        matches!(&err, NodeError::Identity(m) if m.contains("holds node 2")),
        "{err}"
    );
    let err = Node::start(NodeConfig {
        data_dir: dir.path().join("impostor"),
        ..config(3, dir.path(), any_port(), &[&a1])
    })
    .await
    .unwrap_err();
    assert!(
        matches!(&err, NodeError::Join(m) if m.contains("node ids are never reused")),
        "{err}"
    );
    // Raft messages from another cluster's node are refused.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{a2}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut peer = rowtree_cluster::raft::peer::api::peer_client::PeerClient::new(channel);
    let foreign = peer
        .vote(rowtree_cluster::raft::peer::PeerRequest {
            group: 0,
            payload: Vec::new(),
            cluster: "f".repeat(32),
        })
        .await
        .unwrap_err();
    assert_eq!(
        foreign.code(),
        tonic::Code::FailedPrecondition,
        "{foreign:?}"
    );
    assert!(
        foreign.message().contains("this node belongs to cluster"),
        "{foreign:?}"
    );

    // A join carrying another cluster's id, or an id out of range, is
    // refused for good (the joiner stops asking).
    let mut client = api::client(&a2, Duration::from_secs(10)).unwrap();
    let refused = client
        .join(api::JoinRequest {
            cluster_id: "0".repeat(32),
            node_id: 9,
            peer_addr: "127.0.0.1:1".into(),
            forwarded: false,
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.code(),
        tonic::Code::FailedPrecondition,
        "{refused:?}"
    );
    assert!(
        refused.message().contains("belongs to cluster"),
        "{refused:?}"
    );
    let bad = client
        .join(api::JoinRequest {
            cluster_id: String::new(),
            node_id: 1000,
            peer_addr: "127.0.0.1:1".into(),
            forwarded: false,
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument, "{bad:?}");

    for node in [n1, n2, n3, n4] {
        node.shutdown().await;
    }
}

fn role(s: &ClusterStatus, id: u64) -> (&str, &str) {
    let n = s.nodes.iter().find(|n| n.id == id).expect("node in status");
    (n.state.as_str(), n.placement.as_str())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_voter_is_replaced_and_removed_nodes_stay_out() {
    let dir = tempfile::tempdir().unwrap();
    let fast = |id: u64, join: &[&str]| NodeConfig {
        dead_after: Duration::from_secs(3),
        ..config(id, dir.path(), any_port(), join)
    };
    let n1 = Node::start(fast(1, &[])).await.unwrap();
    let a1 = n1.peer_addr().to_string();
    let n2 = Node::start(fast(2, &[&a1])).await.unwrap();
    let n3 = Node::start(fast(3, &[&a1])).await.unwrap();
    let n4 = Node::start(fast(4, &[&a1])).await.unwrap();
    let a2 = n2.peer_addr().to_string();
    let a4 = n4.peer_addr().to_string();
    wait_for(&a1, "voters 1-3, learner 4", |s| {
        s.from_leader && live_voters(s) == 3 && role(s, 4) == ("live", "learner")
    })
    .await;

    // Voter 3 stops; after 3 s of silence the leader (node 1) makes the
    // learner a voter in its place, and keeps node 3 as a learner.
    n3.shutdown().await;
    let s = wait_for(&a1, "node 4 a voter in node 3's place", |s| {
        s.from_leader && role(s, 4).1 == "voter" && role(s, 3).1 == "learner"
    })
    .await;
    assert_eq!(live_voters(&s), 3, "{s:?}");
    assert_eq!(s.leader, Some(1));

    // Node 3 is taken out for good, through a follower.
    let reply = api::remove(&a2, 3, Duration::from_secs(30)).await.unwrap();
    assert_eq!(reply.leader, 1);
    let s = wait_for(&a1, "node 3 removed", |s| role(s, 3) == ("removed", "none")).await;
    assert_eq!(live_voters(&s), 3, "{s:?}");
    // Its id cannot come back, even from an empty directory.
    let err = Node::start(NodeConfig {
        data_dir: dir.path().join("node-3-again"),
        join_timeout: Duration::from_secs(5),
        ..fast(3, &[&a2])
    })
    .await
    .unwrap_err();
    assert!(
        matches!(&err, NodeError::Join(m) if m.contains("was removed")),
        "{err}"
    );
    // Unknown ids and the last voter are refused.
    let unknown = api::remove(&a1, 77, Duration::from_secs(10))
        .await
        .unwrap_err();
    assert!(unknown.contains("NotFound"), "{unknown}");

    // A join from an address nobody answers at fails, and after 3 s of
    // silence the half-added learner is taken out again.
    let mut client = api::client(&a2, Duration::from_secs(30)).unwrap();
    let ghost = client
        .join(api::JoinRequest {
            cluster_id: String::new(),
            node_id: 50,
            peer_addr: "127.0.0.1:1".into(),
            forwarded: false,
        })
        .await
        .unwrap_err();
    assert_eq!(ghost.code(), tonic::Code::Unavailable, "{ghost:?}");
    wait_for(&a1, "the ghost's join undone", |s| {
        s.from_leader && s.nodes.iter().all(|n| n.id != 50)
    })
    .await;

    // The leader removes itself: the other voters carry on without it.
    api::remove(&a4, 1, Duration::from_secs(30)).await.unwrap();
    let s = wait_for(&a2, "node 1 removed, a new leader", |s| {
        s.from_leader && s.leader.is_some_and(|l| l != 1) && role(s, 1) == ("removed", "none")
    })
    .await;
    let voters: Vec<u64> = s
        .nodes
        .iter()
        .filter(|n| n.placement == "voter")
        .map(|n| n.id)
        .collect();
    assert_eq!(voters, [2, 4], "{s:?}");
    for node in [n1, n2, n4] {
        node.shutdown().await;
    }
}

/// A node removed while it was down never gets the record of its removal
/// into its own copy of the placement group: the leader took it out of
/// the group at once (it was a learner). Started again, it learns from the
/// other nodes' heartbeat answers, and counts itself among the removed
/// (which is what makes a removed node hand over the databases it leads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_removed_while_down_learns_it_from_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let n1 = Node::start(config(1, dir.path(), any_port(), &[]))
        .await
        .unwrap();
    let a1 = n1.peer_addr().to_string();
    let n2 = Node::start(config(2, dir.path(), any_port(), &[&a1]))
        .await
        .unwrap();
    let n3 = Node::start(config(3, dir.path(), any_port(), &[&a1]))
        .await
        .unwrap();
    let n4 = Node::start(config(4, dir.path(), any_port(), &[&a1]))
        .await
        .unwrap();
    wait_for(&a1, "voters 1-3, learner 4", |s| {
        s.from_leader && live_voters(s) == 3 && role(s, 4) == ("live", "learner")
    })
    .await;
    assert!(
        !n4.hosting().removed_nodes().unwrap().contains(&4),
        "not removed yet"
    );
    n4.shutdown().await;
    api::remove(&a1, 4, Duration::from_secs(30)).await.unwrap();
    wait_for(&a1, "node 4 removed and out of the group", |s| {
        s.from_leader && role(s, 4) == ("removed", "none")
    })
    .await;

    // On another port: the others need not reach it, it asks them.
    let n4 = Node::start(config(4, dir.path(), any_port(), &[]))
        .await
        .unwrap();
    let hosting = n4.hosting();
    eventually("node 4 knowing it was removed", || {
        hosting.removed_nodes().is_ok_and(|r| r.contains(&4))
    })
    .await;
    for node in [n4, n3, n2, n1] {
        node.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_whose_clock_is_off_stops_and_the_others_see_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let (n1, n2, a1) = two_nodes(dir.path()).await;
    // Node 3's clock is 50 ms ahead; the maximum offset is 10 ms.
    let n3 = Node::start(NodeConfig {
        clock: WallClock::skewed(50_000),
        ..config(3, dir.path(), any_port(), &[&a1])
    })
    .await
    .unwrap();
    let why = tokio::time::timeout(Duration::from_secs(15), n3.stopped())
        .await
        .expect("node 3 stops");
    assert!(why.contains("2 of the 3 live nodes"), "{why}");
    assert!(
        why.contains("node 1 -4") || why.contains("node 1 -5"),
        "{why}"
    );
    // The others see its offset (the leader measures every member), and
    // their own clocks agree.
    let s = wait_for(&a1, "node 3's offset measured", |s| {
        s.nodes
            .iter()
            .any(|n| n.id == 3 && n.clock_offset_ms.is_some_and(|o| (45.0..55.0).contains(&o)))
    })
    .await;
    let n2_offset = s.nodes.iter().find(|n| n.id == 2).unwrap().clock_offset_ms;
    assert!(n2_offset.is_some_and(|o| o.abs() < 5.0), "{s:?}");
    // The table shows it as measured (45 to 55 ms: "+49.7 ms" or "+50.2 ms").
    let n3_offset = s.nodes.iter().find(|n| n.id == 3).unwrap().clock_offset_ms;
    let shown = format!("{:+.1} ms", n3_offset.unwrap());
    assert!(s.to_table().contains(&shown), "{shown}: {}", s.to_table());
    // Nodes 1 and 2 carry on.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for node in [&n1, &n2] {
        assert!(
            tokio::time::timeout(Duration::from_millis(10), node.stopped())
                .await
                .is_err(),
            "node {} stopped",
            node.id()
        );
    }
    for node in [n1, n2, n3] {
        node.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_that_failed_can_be_retried() {
    let dir = tempfile::tempdir().unwrap();
    // The peer port is taken: the first start fails after creating the
    // node's stores, and must not leave the directory unusable.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let err = Node::start(config(1, dir.path(), addr, &[]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, NodeError::Config(m) if m.contains("cannot listen")),
        "{err}"
    );
    drop(taken);
    // The retry listens on a port the system picks: the one just freed may
    // meanwhile be taken by another test's connection.
    let node = Node::start(config(1, dir.path(), any_port(), &[]))
        .await
        .unwrap();
    let s = wait_for(node.peer_addr(), "a cluster of one", |s| {
        s.from_leader && live_voters(s) == 1
    })
    .await;
    assert_eq!(s.cluster_id, node.cluster_id());
    node.shutdown().await;
}

/// Wall-clock nanoseconds since the Unix epoch, as the server stamps a
/// transaction's start.
fn wall_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// Polls `ok` every 50 ms for up to 10 s.
async fn eventually(what: &str, ok: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ok() {
        assert!(Instant::now() < deadline, "{what}: not within 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_sees_another_stop_and_knows_it_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let n1 = Node::start(config(1, dir.path(), any_port(), &[]))
        .await
        .unwrap();
    let a1 = n1.peer_addr().to_string();
    let n2 = Node::start(config(2, dir.path(), lasting_port(), &[&a1]))
        .await
        .unwrap();
    let a2: SocketAddr = n2.peer_addr().parse().unwrap();
    let hosting = n1.hosting();
    eventually("node 2 answering", || hosting.answering(2)).await;
    let before_restart = wall_nanos();
    assert!(
        !hosting.started_after(2, before_restart),
        "node 2's process started before now"
    );
    assert!(
        !hosting.started_after(1, 0),
        "a node never restarts for itself"
    );

    // Stopped on purpose, node 2 says so: node 1 stops counting on it at
    // once, before its process is gone.
    let stopped = Instant::now();
    n2.hand_over_groups().await;
    assert!(
        !hosting.answering(2),
        "node 2 said it is stopping ({:?} after the stop began)",
        stopped.elapsed()
    );
    n2.shutdown().await;
    // The stop takes a few milliseconds. A process that started within
    // the clocks' possible offset of `before_restart` cannot be proven to
    // have started after it (`started_after` rightly says no), so the new
    // one starts later than that.
    tokio::time::sleep(MAX_CLOCK_OFFSET * 3).await;

    // Back at the same address: answering again, and a process that
    // started after `before_restart`, so what was begun through the old
    // one is known to be orphaned even had no heartbeat seen it gone.
    let n2 = Node::start(config(2, dir.path(), a2, &[])).await.unwrap();
    eventually("node 2 answering after its restart", || {
        hosting.answering(2)
    })
    .await;
    assert!(
        hosting.started_after(2, before_restart),
        "node 2 restarted after {before_restart}"
    );
    assert!(!hosting.started_after(2, wall_nanos()));
    n2.shutdown().await;
    n1.shutdown().await;
}
