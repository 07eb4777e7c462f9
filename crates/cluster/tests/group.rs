//! A real Raft group on the storage of this crate: three openraft
//! instances, each with its own log store and replica on disk, carried
//! through elections, replication, a leader's crash and restart, log
//! purging, and a new replica that catches up by snapshot; every replica
//! must end up storing the same bytes. What openraft's storage suite cannot
//! show. The same scenario runs twice: over an in-process network (the
//! target's `Raft` called directly), and over each node's peer port on
//! loopback, as separate processes talk.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openraft::error::{NetworkError, RPCError, StreamingError, Unreachable};
use openraft::network::{RPCOption, RaftNetworkFactory, RaftNetworkV2};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::type_config::async_runtime::WatchReceiver;
use openraft::{BasicNode, Config};
use rowtree_cluster::raft::messages;
use rowtree_cluster::raft::peer::api::peer_client::PeerClient;
use rowtree_cluster::raft::peer::PeerRequest;
use rowtree_cluster::raft::{
    GroupId, Groups, LogStore, PeerPort, Peers, ReplicaMachine, TypeConfig, Vote,
};
use rowtree_cluster::{Command, Commit, Descriptor, Replica, SnapshotImage};
use rowtree_kv::{Router, SplitId, SplitMap};
use rowtree_storage::{FjallEngine, FjallOptions, Mvcc};

type Raft = openraft::Raft<TypeConfig, ReplicaMachine>;

/// How the nodes of a test reach each other.
#[derive(Clone)]
enum Transport {
    /// In one process: a call goes straight to the target's `Raft`.
    InProcess(Network),
    /// Over each node's peer port on 127.0.0.1; a node keeps its address
    /// across restarts (the group's membership names it).
    PeerPort(Arc<Mutex<BTreeMap<u64, SocketAddr>>>),
}

impl Transport {
    fn peer_port() -> Transport {
        Transport::PeerPort(Arc::default())
    }

    /// Node `id` as a member of the group (it must have been started).
    fn member(&self, id: u64) -> (u64, BasicNode) {
        let addr = match self {
            Transport::InProcess(_) => format!("node-{id}"),
            Transport::PeerPort(addrs) => addrs.lock().unwrap()[&id].to_string(),
        };
        (id, BasicNode { addr })
    }
}

/// The nodes that are up, by id.
#[derive(Clone, Default)]
struct Network {
    nodes: Arc<Mutex<BTreeMap<u64, Raft>>>,
}

impl Network {
    fn node(&self, id: u64) -> Result<Raft, Unreachable<TypeConfig>> {
        self.nodes
            .lock()
            .unwrap()
            .get(&id)
            .cloned()
            .ok_or_else(|| Unreachable::new(&std::io::Error::other(format!("node {id} is down"))))
    }
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Connection;

    async fn new_client(&mut self, target: u64, _node: &BasicNode) -> Connection {
        Connection {
            network: self.clone(),
            target,
        }
    }
}

struct Connection {
    network: Network,
    target: u64,
}

impl RaftNetworkV2<TypeConfig> for Connection {
    type SnapshotData = SnapshotImage;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        let node = self.network.node(self.target)?;
        node.append_entries(rpc)
            .await
            .map_err(|e| RPCError::Network(NetworkError::new(&e)))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let node = self.network.node(self.target)?;
        node.vote(rpc)
            .await
            .map_err(|e| RPCError::Network(NetworkError::new(&e)))
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: openraft::alias::SnapshotOf<TypeConfig, SnapshotImage>,
        _cancel: impl std::future::Future<Output = openraft::error::ReplicationClosed>
            + openraft::OptionalSend
            + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let node = self.network.node(self.target)?;
        node.install_full_snapshot(vote, snapshot)
            .await
            .map_err(|e| StreamingError::Network(NetworkError::new(&e)))
    }
}

fn descriptor() -> Descriptor {
    Descriptor {
        split: SplitId(1),
        start: b"k".to_vec(),
        limit: Some(b"l".to_vec()),
        epoch: 1,
    }
}

/// One node's directories and the router over its data, kept so the test
/// can read what the replica stores.
struct Node {
    raft: Raft,
    router: Arc<Router>,
    /// Its peer port, over the peer port.
    port: Option<PeerPort>,
    /// Kept alive while the node runs (its flusher thread).
    _log: LogStore,
}

fn config() -> Arc<Config> {
    Arc::new(
        Config {
            // Generous for a busy two-core machine: a heartbeat that is
            // late by a scheduling hiccup must not start elections.
            heartbeat_interval: 100,
            election_timeout_min: 800,
            election_timeout_max: 1600,
            // Snapshots only when the test asks.
            snapshot_policy: openraft::SnapshotPolicy::Never,
            max_in_snapshot_log_to_keep: 0,
            ..Config::default()
        }
        .validate()
        .unwrap(),
    )
}

/// Starts node `id` on `dir`: a new replica, or the one stored there.
async fn start(id: u64, dir: &std::path::Path, transport: &Transport) -> Node {
    start_with(id, dir, transport, None).await
}

/// [`start`], a new replica made empty for an image if `for_image`.
async fn start_with(
    id: u64,
    dir: &std::path::Path,
    transport: &Transport,
    // Made empty for an image, with this floor.
    for_image: Option<u64>,
) -> Node {
    let log = LogStore::open(dir.join("raft")).unwrap();
    let data = FjallEngine::open(dir.join("data"), FjallOptions::default()).unwrap();
    let router = Arc::new(Router::new(Mvcc::new(Arc::new(data)), SplitMap::new()));
    let replica = match Replica::open(router.clone(), SplitId(1)) {
        Ok(replica) => replica,
        Err(_) => match for_image {
            Some(floor) => Replica::create_for_image(router.clone(), descriptor(), floor).unwrap(),
            None => Replica::create(router.clone(), descriptor()).unwrap(),
        },
    };
    let image = replica.image_view();
    let machine = ReplicaMachine::new(replica);
    let group = log.group(GroupId(1));
    let (raft, port) = match transport {
        Transport::InProcess(network) => {
            let raft = Raft::new(id, config(), network.clone(), group, machine)
                .await
                .unwrap();
            network.nodes.lock().unwrap().insert(id, raft.clone());
            (raft, None)
        }
        Transport::PeerPort(addrs) => {
            let network = Peers::new().group(GroupId(1));
            let raft = Raft::new(id, config(), network, group, machine)
                .await
                .unwrap();
            let groups = Groups::new();
            groups.watch_image(GroupId(1), image);
            groups.insert(GroupId(1), raft.clone());
            let addr = addrs
                .lock()
                .unwrap()
                .get(&id)
                .copied()
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
            let port = PeerPort::start(addr, groups).await.unwrap();
            addrs.lock().unwrap().insert(id, port.local_addr);
            (raft, Some(port))
        }
    };
    Node {
        raft,
        router,
        port,
        _log: log,
    }
}

async fn stop(node: Node, transport: &Transport, id: u64) {
    if let Transport::InProcess(network) = transport {
        network.nodes.lock().unwrap().remove(&id);
    }
    if let Some(port) = node.port {
        port.shutdown().await;
    }
    node.raft.shutdown().await.unwrap();
}

async fn leader_of(raft: &Raft) -> u64 {
    raft.wait(Some(Duration::from_secs(20)))
        .metrics(|m| m.current_leader.is_some(), "a leader")
        .await
        .unwrap()
        .current_leader
        .unwrap()
}

/// Writes `n` single-key commits through whichever node leads (asking
/// again when leadership moved), returning the last entry's index.
async fn write(nodes: &BTreeMap<u64, Node>, from: u64, n: u64) -> u64 {
    let mut last = 0;
    for i in from..from + n {
        let command = Command::Write {
            commits: vec![Commit {
                ts: 1000 + i,
                writes: vec![(
                    format!("k{:03}", i % 40).into_bytes(),
                    Some(format!("value {i}").into_bytes()),
                )],
            }],
            closed_ts: None,
            meta: Vec::new(),
        };
        let mut tries = 0;
        last = loop {
            let any = nodes.values().next().unwrap();
            let leader = leader_of(&any.raft).await;
            let Some(node) = nodes.get(&leader) else {
                // A node that is down still looks like the leader to some.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            };
            match node.raft.client_write(command.clone()).await {
                Ok(response) => break response.log_id.index,
                Err(e) => {
                    tries += 1;
                    assert!(tries < 100, "write {i} kept failing: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
    }
    last
}

fn stored(router: &Router) -> Vec<(Vec<u8>, Vec<u8>)> {
    router
        .scan_stored(b"k", Some(b"l"))
        .map(|r| r.unwrap())
        .collect()
}

async fn applied(raft: &Raft, index: u64) {
    raft.wait(Some(Duration::from_secs(20)))
        .applied_index_at_least(Some(index), "applied")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_a_group_of_three_elects_replicates_survives_a_leader_crash_and_catches_up() {
    a_group_of_three(Transport::InProcess(Network::default())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_peer_port_a_group_of_three_elects_replicates_survives_a_leader_crash_and_catches_up(
) {
    a_group_of_three(Transport::peer_port()).await;
}

/// Nodes 1 to 3 started under `dir`, node 1 making the group of the
/// three.
async fn three_nodes(dir: &std::path::Path, network: &Transport) -> BTreeMap<u64, Node> {
    let mut nodes = BTreeMap::new();
    for id in 1..=3 {
        nodes.insert(id, start(id, &dir.join(format!("n{id}")), network).await);
    }
    let members: BTreeMap<u64, BasicNode> = (1..=3).map(|id| network.member(id)).collect();
    nodes[&1].raft.initialize(members).await.unwrap();
    nodes
}

/// Snapshots `raft`'s replica once it covers `last`, and purges its log up
/// to there.
async fn snapshot_and_purge(raft: &Raft, last: u64) {
    raft.trigger().snapshot().await.unwrap();
    raft.wait(Some(Duration::from_secs(20)))
        .metrics(
            |m| m.snapshot.is_some_and(|s| s.index >= last),
            "a snapshot of everything",
        )
        .await
        .unwrap();
    raft.trigger().purge_log(last).await.unwrap();
}

/// [`write`], then waits until every node applied the writes.
async fn write_everywhere(nodes: &BTreeMap<u64, Node>, from: u64, n: u64) -> u64 {
    let last = write(nodes, from, n).await;
    for node in nodes.values() {
        applied(&node.raft, last).await;
    }
    last
}

/// Node `id` joins the group led by `leader` as a learner; the call
/// returns without waiting for it to catch up.
async fn add_learner(nodes: &BTreeMap<u64, Node>, leader: u64, network: &Transport, id: u64) {
    let (id, addr) = network.member(id);
    nodes[&leader]
        .raft
        .add_learner(id, addr, false)
        .await
        .unwrap();
}

async fn a_group_of_three(network: Transport) {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = three_nodes(dir.path(), &network).await;

    // Elections and replication.
    let leader = leader_of(&nodes[&1].raft).await;
    write_everywhere(&nodes, 0, 60).await;
    let first = stored(&nodes[&1].router);
    assert!(first.len() >= 60, "{} versions stored", first.len());
    for node in nodes.values() {
        assert_eq!(stored(&node.router), first);
    }

    // The leader crashes; the other two elect one of them and go on.
    let old = leader;
    stop(nodes.remove(&old).unwrap(), &network, old).await;
    let survivor = *nodes.keys().next().unwrap();
    while leader_of(&nodes[&survivor].raft).await == old {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let last = write(&nodes, 60, 40).await;

    // The old leader restarts from its own log and replica, and catches up.
    nodes.insert(
        old,
        start(old, &dir.path().join(format!("n{old}")), &network).await,
    );
    for node in nodes.values() {
        applied(&node.raft, last).await;
    }
    let all = stored(&nodes[&survivor].router);
    for (id, node) in &nodes {
        assert_eq!(stored(&node.router), all, "node {id}");
    }

    // Every voter snapshots and purges its log; a fourth node, added as a
    // learner, can then only catch up by installing a snapshot.
    for node in nodes.values() {
        let raft = &node.raft;
        snapshot_and_purge(raft, last).await;
        raft.wait(Some(Duration::from_secs(20)))
            .metrics(|m| m.purged.is_some_and(|p| p.index >= last), "purged")
            .await
            .unwrap();
    }
    let learner = start(4, &dir.path().join("n4"), &network).await;
    let mut tries = 0;
    loop {
        let leader = leader_of(&nodes[&survivor].raft).await;
        let (id, addr) = network.member(4);
        match nodes[&leader].raft.add_learner(id, addr, true).await {
            Ok(_) => break,
            Err(e) => {
                tries += 1;
                assert!(tries < 100, "adding the learner kept failing: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    nodes.insert(4, learner);
    applied(&nodes[&4].raft, last).await;
    assert_eq!(stored(&nodes[&4].router), all);
    let learned = nodes[&4].raft.metrics().borrow_watched().clone();
    assert!(
        learned.snapshot.is_some(),
        "the learner caught up without a snapshot: {learned:?}"
    );
    let voters: BTreeSet<u64> = learned.membership_config.membership().voter_ids().collect();
    assert_eq!(voters, (1..=3).collect());

    for (id, node) in std::mem::take(&mut nodes) {
        stop(node, &network, id).await;
    }
}

/// A member whose replica was made empty for an image (a node given a
/// split it holds no replica of) is never sent the group's log from its
/// start, which need not hold all of the split's rows: its peer port
/// refuses those entries, and it waits, applying nothing, until the
/// leader's log is purged and openraft sends it the snapshot instead.
/// Without the refusal it replays the log (here the log happens to hold
/// every row, so only the missing snapshot would show it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_made_for_an_image_is_never_sent_the_log_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let network = Transport::peer_port();
    let mut nodes = three_nodes(dir.path(), &network).await;
    let last = write_everywhere(&nodes, 0, 60).await;
    let all = stored(&nodes[&1].router);

    // Node 4 holds an empty replica for an image and is added while every
    // log is whole: the leader would send it the log from index 0.
    let waiting = start_with(4, &dir.path().join("n4"), &network, Some(0)).await;
    let leader = leader_of(&nodes[&1].raft).await;
    add_learner(&nodes, leader, &network, 4).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let m = waiting.raft.metrics().borrow_watched().clone();
    assert_eq!(m.last_applied, None, "it applied entries: {m:?}");
    assert_eq!(m.last_log_index, None, "it took entries: {m:?}");
    assert!(stored(&waiting.router).is_empty());
    let matched = nodes[&leader]
        .raft
        .metrics()
        .borrow_watched()
        .replication
        .clone()
        .and_then(|r| r.get(&4).cloned().flatten());
    assert_eq!(matched, None, "the leader counts entries as sent");
    // Nor does it vote: its votes of an earlier membership (a node placed
    // again in a group it left) are forgotten, and a candidate that still
    // counts it a voter must not win with its vote.
    let term = nodes[&leader].raft.metrics().borrow_watched().current_term;
    let channel = tonic::transport::Endpoint::from_shared(format!(
        "http://{}",
        waiting.port.as_ref().unwrap().local_addr
    ))
    .unwrap()
    .connect()
    .await
    .unwrap();
    let mut client = PeerClient::new(channel);
    let ask = VoteRequest::new(openraft::Vote::new(term + 1, 2), None);
    let vote = || PeerRequest {
        group: 1,
        payload: messages::encode_vote_request(&ask),
        cluster: String::new(),
    };
    let e = client.vote(vote()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("votes in no election"), "{e:?}");

    // The leader snapshots and purges its log: the member is sent the
    // image, installs it, and follows the log from there.
    snapshot_and_purge(&nodes[&leader].raft, last).await;
    applied(&waiting.raft, last).await;
    // Now it answers a vote request, and grants none to a candidate whose
    // log is behind its own.
    let answer = client.vote(vote()).await.unwrap().into_inner();
    let answer = messages::decode_vote_response(&answer.payload).unwrap();
    assert!(!answer.vote_granted, "{answer:?}");
    assert!(waiting.raft.metrics().borrow_watched().snapshot.is_some());
    assert_eq!(stored(&waiting.router), all);
    nodes.insert(4, waiting);
    let more = write(&nodes, 60, 10).await;
    applied(&nodes[&4].raft, more).await;
    assert_eq!(stored(&nodes[&4].router), stored(&nodes[&leader].router));

    for (id, node) in std::mem::take(&mut nodes) {
        stop(node, &network, id).await;
    }
}

/// A replica placed with an image floor (the leader's applied index when
/// it asked) refuses an image older than that: such an image could count
/// the node a voter from before it last left the group, and a leader
/// whose snapshot predates the removal would send it. The leader's next,
/// fresh image is installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_awaiting_an_image_refuses_one_older_than_its_floor() {
    let dir = tempfile::tempdir().unwrap();
    let network = Transport::peer_port();
    let mut nodes = three_nodes(dir.path(), &network).await;
    let first = write_everywhere(&nodes, 0, 30).await;
    // The leader's snapshot, then more writes: its log now starts after
    // the snapshot, which is all it can send a member with an empty log.
    let leader = leader_of(&nodes[&1].raft).await;
    snapshot_and_purge(&nodes[&leader].raft, first).await;
    let last = write(&nodes, 30, 30).await;
    let leader = leader_of(&nodes[&1].raft).await;
    applied(&nodes[&leader].raft, last).await;
    assert!(last > first + 20);

    let waiting = start_with(4, &dir.path().join("n4"), &network, Some(last)).await;
    add_learner(&nodes, leader, &network, 4).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let m = waiting.raft.metrics().borrow_watched().clone();
    assert_eq!(
        m.snapshot, None,
        "it installed an image older than its floor: {m:?}"
    );
    assert_eq!(m.last_applied, None, "{m:?}");
    assert!(stored(&waiting.router).is_empty());

    // A fresh snapshot, as the product's leader takes for a new member:
    // installed, and the member follows the log from there.
    snapshot_and_purge(&nodes[&leader].raft, last).await;
    applied(&waiting.raft, last).await;
    assert!(waiting
        .raft
        .metrics()
        .borrow_watched()
        .snapshot
        .is_some_and(|s| s.index >= last));
    assert_eq!(stored(&waiting.router), stored(&nodes[&leader].router));
    nodes.insert(4, waiting);
    for (id, node) in std::mem::take(&mut nodes) {
        stop(node, &network, id).await;
    }
}

/// What the peer port answers a broken or misdirected message: a clear
/// error, and the group goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_peer_port_refuses_malformed_and_misdirected_messages() {
    let dir = tempfile::tempdir().unwrap();
    let network = Transport::peer_port();
    let node = start(1, dir.path(), &network).await;
    let addr = node.port.as_ref().unwrap().local_addr;
    node.raft
        .initialize(BTreeMap::from([network.member(1)]))
        .await
        .unwrap();
    leader_of(&node.raft).await;
    let vote = node.raft.metrics().borrow_watched().vote;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = PeerClient::new(channel);
    let request = |group: u64, payload: Vec<u8>| PeerRequest {
        group,
        payload,
        cluster: String::new(),
    };

    let e = client
        .append_entries(request(1, vec![1, 0xff, 0xff]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    let e = client.vote(request(1, Vec::new())).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    // An append whose entry count is far past the bytes present is refused
    // without allocating for it (the count replaces the real one, 0).
    let mut huge = messages::encode_append(&AppendEntriesRequest {
        vote,
        prev_log_id: None,
        entries: Vec::new(),
        leader_commit: None,
    });
    let tail = huge.split_off(huge.len() - 2);
    assert_eq!(tail, [0, 0], "entry count 0, then no commit id");
    huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0]);
    let e = client.append_entries(request(1, huge)).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("append-entries"), "{e:?}");
    let e = client
        .install_snapshot(request(1, vec![1, 2, 3]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    // A well-formed message for a group this node does not hold.
    let e = client
        .vote(request(
            7,
            messages::encode_vote_request(&VoteRequest::new(vote, None)),
        ))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e:?}");
    assert!(e.message().contains("group 7"), "{e:?}");

    // The group was not disturbed: it still takes writes.
    let command = Command::Write {
        commits: vec![Commit {
            ts: 5,
            writes: vec![(b"k1".to_vec(), Some(b"v".to_vec()))],
        }],
        closed_ts: None,
        meta: Vec::new(),
    };
    node.raft.client_write(command).await.unwrap();
    stop(node, &network, 1).await;
}
