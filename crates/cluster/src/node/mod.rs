//! A node of a cluster: one process, its peer port and its replica of the
//! placement group (design §2 and §3).
//!
//! A node is started with a data directory, a node id and, unless it is
//! the first, the peer addresses of nodes already in the cluster:
//!
//! * **Bootstrap.** A node with an empty directory and no peers to join
//!   makes a new cluster: a fresh cluster id in `D/node.json`
//!   ([`identity`]) and a placement group with itself as its only voter.
//! * **Join.** A node with an empty directory and peers to join starts its
//!   peer port and an empty replica, then asks any of the peers to let it
//!   in (`Join`). A node that is not the placement leader forwards the
//!   request to the leader (one hop at most), which records the node as
//!   joining, adds it to the placement group as a learner (replicating the
//!   group's state to it before answering), promotes it to voter while the
//!   group has fewer than three voters (five once the cluster has seven
//!   nodes), and records it as live. Only then does the node write its
//!   `node.json`, so a node that stopped half-way asks again when started
//!   again; joining is idempotent.
//! * **Restart.** A node whose directory holds a `node.json` is a member
//!   already: it opens its log and replica and rejoins its group as Raft
//!   does, without asking anyone.
//!
//! * **Removal.** `Remove` (any node forwards it to the leader) marks the
//!   node's record `removed` first, then takes it out of the voters
//!   (replacing it by a reachable learner if there is one) and out of the
//!   group. A removed id can never join again. The removed node may
//!   never see its record (a learner is taken out at once, perhaps before
//!   the commit reached it), so the answers to its clock heartbeats tell
//!   it ([`ClockReply::removed`]).
//!
//! The placement leader also runs a small loop ([`MAINTAIN_EVERY`]) that
//! finishes what an interrupted join, bootstrap or removal left (so a
//! leader that removed itself leaves the rest to its successor), and keeps
//! the group whole: a member the leader hears from gets a live record, a
//! learner whose join never completed (silent for [`NodeConfig::dead_after`])
//! is taken out again, a voter silent
//! for longer than [`NodeConfig::dead_after`] is replaced by a reachable
//! learner (and stays a member, as a learner, in case it returns), and
//! reachable learners are promoted while voters are missing. A voter is
//! silent only if a majority of the voters find it so: each node's clock
//! heartbeat answers list the members it does not hear
//! ([`clock::Clocks::silent_to_majority`]), so a voter cut off from the
//! leader alone is not replaced (nor, by a database's leader, is a
//! database replica: `databases::Hosting::dead_for`). Every change
//! is evaluated after a linearizable read and proposed by the leader alone,
//! one at a time (see [`crate::placement`]).
//!
//! Losing the placement group's quorum stops joins and status answers from
//! the leader; the nodes themselves keep running, and a new leader is
//! elected among the voters that remain once a majority of them can talk.
//! A node serves the databases the registry places on it ([`databases`]):
//! each is one Raft group per split, the first over the database's whole
//! key space until the database's split manager cuts it; all of a
//! database's groups are led by one node (`splits`).

pub mod api;
pub mod clock;
pub mod databases;
pub mod identity;
pub mod leases;
mod participant;
mod proxies;
mod remote;
mod splits;
pub mod status;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use openraft::type_config::async_runtime::WatchReceiver;
use openraft::{BasicNode, ChangeMembers, Config, Instant as _, ReadPolicy, ServerState};
use rowtree_kv::{Router, SplitMap};
use rowtree_storage::{FjallEngine, FjallOptions, Mvcc};
use tonic::{Request, Response, Status};

use crate::command::{Command, Commit, Write};
use crate::placement::{self, NodeRecord, NodeState, CLOCK_KEY, MAX_ADDR_LEN, MAX_NODE_ID};
use crate::raft::{GroupId, GroupRaft, Groups, LogStore, PeerPort, Peers, ReplicaMachine, Routes};
use crate::Replica;
use api::{
    AddSplitPointReply, AddSplitPointRequest, AnnounceReply, AnnounceRequest, ClockReply,
    ClockRequest, HostSplitReply, HostSplitRequest, JoinReply, JoinRequest, LocateReply,
    LocateRequest, NodeClient, NodeServer, ReadRangeReply, ReadRangeRequest, RegistryReply,
    RegistryRequest, RemoveReply, RemoveRequest, SplitHistoryReply, SplitHistoryRequest,
    StatusReply, StatusRequest,
};
use clock::{Clocks, Sample, WallClock};
use identity::{Identity, FORMAT_VERSION};
use status::{ClusterStatus, NodeStatus, UNREACHABLE_AFTER_MS};

/// The placement group's heartbeat interval, in milliseconds.
pub const HEARTBEAT_MS: u64 = 200;
/// The placement group's election timeout, in milliseconds: a follower
/// that hears nothing from a leader for a random time in this range
/// stands for election.
pub const ELECTION_TIMEOUT_MS: (u64, u64) = (1_000, 2_000);
/// How often the placement leader finishes interrupted joins.
pub const MAINTAIN_EVERY: Duration = Duration::from_millis(500);
/// How long the leader gives each step of a join (catching the new
/// learner up, promoting it).
const JOIN_STEP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one `Join` call may take, forwarding and catching up included.
const JOIN_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a node reads every other member's clock (design §5).
pub const CLOCK_EVERY: Duration = Duration::from_secs(1);
/// How recently a voter must have answered a group's heartbeats to be
/// handed the group.
pub const HEARD_WITHIN: Duration = Duration::from_secs(1);
/// How long a stopping node waits for each group it hands over.
pub const HAND_OVER_WAIT: Duration = Duration::from_secs(3);
/// How long a clock heartbeat may take; a slower answer is no sample.
const CLOCK_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a forwarded `Status` may take before the node answers itself.
const STATUS_FORWARD_TIMEOUT: Duration = Duration::from_secs(2);

/// The key of the cluster's id in the placement group.
const CLUSTER_KEY: &[u8] = b"cluster";

/// Why a node could not start or join.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The data directory belongs to another node or cluster, or its
    /// `node.json` cannot be read.
    #[error("{0}")]
    Identity(String),
    /// A bad setting (node id, address).
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Storage(#[from] rowtree_storage::Error),
    #[error(transparent)]
    Replica(#[from] crate::Error),
    /// The placement group's Raft instance failed to start.
    #[error("placement group: {0}")]
    Raft(String),
    /// No node accepted the join, or the leader refused it.
    #[error("joining the cluster: {0}")]
    Join(String),
}

impl NodeError {
    fn io(path: &Path, source: std::io::Error) -> NodeError {
        NodeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// How to start a node.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// 1..=999, never reused.
    pub node_id: u64,
    pub data_dir: PathBuf,
    /// Where the peer port listens.
    pub listen: SocketAddr,
    /// The peer address other nodes dial (default: the address listened
    /// on, with the port it got).
    pub advertise: Option<String>,
    /// Peer addresses of nodes already in the cluster; empty to bootstrap
    /// a new cluster (or to restart a member).
    pub join: Vec<String>,
    /// How long to keep asking the peers to join before giving up.
    pub join_timeout: Duration,
    /// How long a placement voter may stay silent before the leader
    /// replaces it with a reachable learner (if there is one); the silent
    /// node stays a member, as a learner.
    pub dead_after: Duration,
    /// The maximum clock offset ε between any two nodes: a node provably
    /// further than 0.8 ε from a majority stops ([`clock`]).
    pub max_clock_offset: Duration,
    /// The node's wall clock ([`WallClock::system`] but in tests).
    pub clock: WallClock,
    /// Addresses dialled in place of others (`--route`).
    pub routes: Routes,
    /// How many entries each split group applies between snapshots
    /// ([`crate::raft::split_group_config`]; default
    /// [`crate::raft::SNAPSHOT_EVERY`]).
    pub snapshot_every: u64,
}

/// A running node.
pub struct Node {
    shared: Arc<Shared>,
    port: Option<PeerPort>,
    maintainer: tokio::task::JoinHandle<()>,
    heartbeat: tokio::task::JoinHandle<()>,
    stopped: tokio::sync::watch::Receiver<Option<String>>,
    peer_addr: String,
    /// The node's log store (its flusher thread runs while it lives).
    log: Arc<LogStore>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.shared.id)
            .field("peer_addr", &self.peer_addr)
            .finish_non_exhaustive()
    }
}

/// What the node's service and its maintenance loop share.
struct Shared {
    id: u64,
    /// Empty until the node knows its cluster (a joiner before it is
    /// accepted).
    cluster_id: parking_lot::Mutex<String>,
    raft: GroupRaft,
    /// The placement replica's data, read directly (writes go through
    /// Raft).
    router: Arc<Router>,
    peers: Peers,
    /// The groups the peer port serves (to tell them the cluster id).
    groups: Groups,
    /// Held by the leader while it evaluates and proposes one change.
    changes: tokio::sync::Mutex<()>,
    /// How long a voter may stay silent before the leader replaces it.
    dead_after: Duration,
    /// The term this node last led in, and since when.
    leading_since: parking_lot::Mutex<Option<(u64, std::time::Instant)>>,
    clock: WallClock,
    /// The latest sample of every other member's clock.
    clocks: parking_lot::Mutex<Clocks>,
    max_clock_offset: Duration,
    /// How many entries each split group applies between snapshots.
    snapshot_every: u64,
    /// The database groups this node serves ([`databases`]), by group id.
    hosted: parking_lot::Mutex<BTreeMap<u64, GroupRaft>>,
    /// Their commits and leases, to hand them over when the node stops.
    commits: parking_lot::Mutex<BTreeMap<u64, Arc<crate::raft::GroupCommits>>>,
    /// The databases this node serves, by their registry group (their
    /// first split's group), with all their split groups.
    databases: parking_lot::Mutex<BTreeMap<u64, Arc<splits::DatabaseGroups>>>,
    /// Set when the node begins to stop on purpose; its clock heartbeat
    /// answers say so from then on ([`ClockReply::stopping`]).
    stopping: std::sync::atomic::AtomicBool,
    /// Another node's heartbeat answer said this node was removed from
    /// the cluster ([`ClockReply::removed`]), whatever its own copy of the
    /// placement group says.
    told_removed: std::sync::atomic::AtomicBool,
    /// When this process started (its wall clock, microseconds), which
    /// its clock heartbeat answers carry ([`ClockReply::started_micros`]).
    started_micros: u64,
    /// When this process started, to measure the silence of a node that
    /// has not answered it once ([`databases::Hosting::silent_for`]).
    started_at: std::time::Instant,
    /// How many voters each split group of a database other than its
    /// first keeps, among the database's hosts (0: all of them;
    /// [`databases::Hosting::set_split_replicas`]).
    split_replicas: std::sync::atomic::AtomicUsize,
    /// Split groups are spread over their voters by count
    /// ([`databases::Hosting::set_spread_leases`]).
    spread_leases: std::sync::atomic::AtomicBool,
}

/// openraft's settings for the placement group.
fn raft_config() -> Arc<Config> {
    Arc::new(
        Config {
            cluster_name: "rowtree-placement".into(),
            heartbeat_interval: HEARTBEAT_MS,
            election_timeout_min: ELECTION_TIMEOUT_MS.0,
            election_timeout_max: ELECTION_TIMEOUT_MS.1,
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(1_000),
            ..Config::default()
        }
        .validate()
        .expect("valid placement group settings"),
    )
}

/// How many voters the placement group wants with `nodes` nodes.
fn voter_target(nodes: usize) -> usize {
    if nodes >= 7 {
        5
    } else {
        3
    }
}

/// Checks a peer address: `host:port`, not empty, at most
/// [`MAX_ADDR_LEN`] bytes.
fn check_addr(addr: &str) -> Result<(), String> {
    let (host, port) = addr
        .rsplit_once(':')
        .ok_or_else(|| format!("peer address {addr:?} is not host:port"))?;
    if host.is_empty() || port.parse::<u16>().is_err() || addr.len() > MAX_ADDR_LEN {
        return Err(format!("peer address {addr:?} is not host:port"));
    }
    Ok(())
}

impl Node {
    /// Starts a node as [`NodeConfig`] says (see the module docs): opens or
    /// creates its directory, starts its peer port, and bootstraps,
    /// joins, or restarts as a member. Returns once the node is a member.
    ///
    /// Errors: a bad id or address, a directory of another node or
    /// cluster, storage errors, a port that cannot be bound, or no peer
    /// accepting the join within [`NodeConfig::join_timeout`].
    pub async fn start(config: NodeConfig) -> Result<Node, NodeError> {
        if !(1..=MAX_NODE_ID).contains(&config.node_id) {
            return Err(NodeError::Config(format!(
                "node id {} is outside 1..={MAX_NODE_ID}",
                config.node_id
            )));
        }
        for addr in config.advertise.iter().chain(&config.join) {
            check_addr(addr).map_err(NodeError::Config)?;
        }
        let dir = &config.data_dir;
        std::fs::create_dir_all(dir).map_err(|e| NodeError::io(dir, e))?;
        let identity = Identity::load(dir)?;
        if let Some(i) = &identity {
            if i.node_id != config.node_id {
                return Err(NodeError::Identity(format!(
                    "{} holds node {} of cluster {}; it cannot be started as node {}",
                    dir.display(),
                    i.node_id,
                    i.cluster_id,
                    config.node_id
                )));
            }
        }
        let log = LogStore::open(dir.join("raft"))?;
        let engine = FjallEngine::open(dir.join("placement"), FjallOptions::default())?;
        let router = Arc::new(Router::new(Mvcc::new(Arc::new(engine)), SplitMap::new()));
        let split = placement::descriptor().split;
        let replica = match Replica::open(router.clone(), split) {
            Ok(replica) => replica,
            Err(crate::Error::Replica { .. }) => {
                Replica::create(router.clone(), placement::descriptor())?
            }
            Err(e) => return Err(e.into()),
        };
        let peers = Peers::new().routed(config.routes.clone());
        let group = GroupId(placement::PLACEMENT_GROUP);
        let raft = GroupRaft::new(
            config.node_id,
            raft_config(),
            peers.group(group),
            log.group(group),
            ReplicaMachine::new(replica),
        )
        .await
        .map_err(|e| NodeError::Raft(e.to_string()))?;
        let groups = Groups::new();
        groups.insert(group, raft.clone());
        let shared = Arc::new(Shared {
            id: config.node_id,
            cluster_id: parking_lot::Mutex::new(String::new()),
            raft: raft.clone(),
            router,
            peers,
            groups: groups.clone(),
            changes: tokio::sync::Mutex::new(()),
            dead_after: config.dead_after,
            leading_since: parking_lot::Mutex::new(None),
            clock: config.clock.clone(),
            clocks: parking_lot::Mutex::new(Clocks::default()),
            max_clock_offset: config.max_clock_offset,
            snapshot_every: config.snapshot_every,
            hosted: parking_lot::Mutex::new(BTreeMap::new()),
            commits: parking_lot::Mutex::new(BTreeMap::new()),
            databases: parking_lot::Mutex::new(BTreeMap::new()),
            stopping: std::sync::atomic::AtomicBool::new(false),
            told_removed: std::sync::atomic::AtomicBool::new(false),
            started_micros: config.clock.now(),
            started_at: std::time::Instant::now(),
            split_replicas: std::sync::atomic::AtomicUsize::new(0),
            spread_leases: std::sync::atomic::AtomicBool::new(false),
        });
        if let Some(i) = &identity {
            shared.set_cluster(&i.cluster_id);
        }
        let routes = PeerPort::routes(groups).add_service(NodeServer::new(Handler {
            shared: shared.clone(),
        }));
        let port = PeerPort::start_routes(config.listen, routes)
            .await
            .map_err(|e| {
                NodeError::Config(format!(
                    "cannot listen on {} for the peer port: {e}",
                    config.listen
                ))
            })?;
        let peer_addr = config
            .advertise
            .clone()
            .unwrap_or_else(|| port.local_addr.to_string());
        let initialized = raft
            .is_initialized()
            .await
            .map_err(|e| NodeError::Raft(e.to_string()))?;
        if identity.is_none() && initialized && config.join.is_empty() {
            // Accepted into a cluster's placement group, stopped before its
            // node.json was written: it must finish joining, not make a
            // cluster of its own.
            return Err(NodeError::Identity(format!(
                "{} holds a node that was joining a cluster and has no node.json yet; \
                 start it again with --join",
                dir.display()
            )));
        }
        match identity {
            None if config.join.is_empty() => {
                let cluster_id = format!("{:032x}", rand::random::<u128>());
                Identity {
                    cluster_id: cluster_id.clone(),
                    node_id: config.node_id,
                    format_version: FORMAT_VERSION,
                    bootstrap: true,
                }
                .store(dir)?;
                shared.set_cluster(&cluster_id);
                shared.bootstrap(&peer_addr).await?;
            }
            None => {
                let reply =
                    join_cluster(&shared, &config.join, &peer_addr, config.join_timeout).await?;
                Identity {
                    cluster_id: reply.cluster_id.clone(),
                    node_id: config.node_id,
                    format_version: FORMAT_VERSION,
                    bootstrap: false,
                }
                .store(dir)?;
                shared.set_cluster(&reply.cluster_id);
            }
            // Made the cluster, then stopped before the group was
            // initialized. (A node that joined is initialized before it is
            // accepted: the leader waits for its acknowledgement.)
            Some(i) if i.bootstrap && !initialized => {
                shared.bootstrap(&peer_addr).await?;
            }
            Some(_) => {}
        }
        let maintainer = {
            let shared = shared.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(MAINTAIN_EVERY).await;
                    if shared.is_leader() {
                        if let Err(e) = shared.maintain().await {
                            tracing::debug!(error = %e, "placement upkeep");
                        }
                    }
                }
            })
        };
        let (stop, stopped) = tokio::sync::watch::channel(None);
        let heartbeat = {
            let shared = shared.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(CLOCK_EVERY).await;
                    shared.read_clocks().await;
                    let verdict = shared
                        .clocks
                        .lock()
                        .verdict(shared.max_clock_offset, std::time::Instant::now());
                    if let Some(why) = verdict {
                        // Invariant 15: a node whose clock is off serves
                        // nothing; it leaves its groups at once.
                        tracing::error!("{why}");
                        let _ = shared.raft.shutdown().await;
                        let _ = stop.send(Some(why));
                        return;
                    }
                }
            })
        };
        Ok(Node {
            shared,
            port: Some(port),
            maintainer,
            heartbeat,
            stopped,
            peer_addr,
            log: Arc::new(log),
        })
    }

    /// What the server needs to serve databases from this node: the
    /// registry's document and the databases' groups ([`databases`]).
    pub fn hosting(&self) -> databases::Hosting {
        databases::Hosting {
            shared: self.shared.clone(),
            log: self.log.clone(),
            runtime: tokio::runtime::Handle::current(),
        }
    }

    /// The node's id.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The cluster's id.
    pub fn cluster_id(&self) -> String {
        self.shared.cluster_id.lock().clone()
    }

    /// The address other nodes reach its peer port at.
    pub fn peer_addr(&self) -> &str {
        &self.peer_addr
    }

    /// The cluster as this node sees it, asking the placement leader if
    /// this node is not it (see [`status`]).
    pub async fn status(&self) -> ClusterStatus {
        self.shared.status(false, false).await
    }

    /// Resolves when the node has stopped on its own, with why: its clock
    /// is off from a majority of the others ([`clock`]). Never resolves
    /// otherwise.
    pub async fn stopped(&self) -> String {
        let mut stopped = self.stopped.clone();
        let why = match stopped.wait_for(Option::is_some).await {
            Ok(why) => why.clone(),
            Err(_) => None,
        };
        match why {
            Some(why) => why,
            None => std::future::pending().await,
        }
    }

    /// Stops the node: hands the groups it leads to other nodes, then
    /// stops its maintenance loop, its Raft instances and its peer port.
    pub async fn shutdown(mut self) {
        self.maintainer.abort();
        self.hand_over_groups().await;
        self.heartbeat.abort();
        let hosted: Vec<GroupRaft> = self.shared.hosted.lock().values().cloned().collect();
        for raft in hosted {
            let _ = raft.shutdown().await;
        }
        let _ = self.shared.raft.shutdown().await;
        if let Some(port) = self.port.take() {
            port.shutdown().await;
        }
    }
}

impl Node {
    /// Hands every group this node leads to the voter that answered its
    /// heartbeats within [`HEARD_WITHIN`] and is furthest along its log,
    /// all at once, so that a node stopped on
    /// purpose (a rolling restart) pauses its groups' writes for a moment
    /// instead of for an election and the rest of a lease: a database
    /// group's lease is given up first ([`GroupCommits::hand_over`]), the
    /// placement group's leadership simply moves. A group no voter can
    /// take is left to elect a leader once this node is gone. Waits at most
    /// [`HAND_OVER_WAIT`] for each. [`Node::shutdown`] calls it; a server
    /// that drains its requests first calls it as the drain begins, so that
    /// a request that will not finish does not hold the groups back (a
    /// second call finds nothing left to hand over).
    ///
    /// It first marks the node stopping and says so to every other node in
    /// a round of clock heartbeats (a second at most); from then on they
    /// count it as not answering ([`databases::Hosting::answering`]),
    /// send it no more requests, and roll back the idle read-write
    /// transactions of clients that came in through it, whose connections
    /// the stopping server is closing. A request of its own still in
    /// flight may be waiting for one of their locks; otherwise it would
    /// wait for them to time out.
    ///
    /// [`GroupCommits::hand_over`]: crate::raft::GroupCommits::hand_over
    pub async fn hand_over_groups(&self) {
        let shared = &self.shared;
        shared
            .stopping
            .store(true, std::sync::atomic::Ordering::Relaxed);
        // Tell every node now (a heartbeat round that says so), while the
        // groups are handed over: the next regular round may come after a
        // quick restart.
        let ((), ()) = tokio::join!(shared.read_clocks(), self.hand_over_led_groups());
    }

    /// [`Node::hand_over_groups`] once the node is marked stopping.
    async fn hand_over_led_groups(&self) {
        let shared = &self.shared;
        // A voter answered the group's own heartbeats lately (they go out
        // every 100 ms for a database group, 200 ms for the placement
        // group): the clock heartbeat, once a second, is too slow to know
        // a node that was itself restarted a moment ago.
        // Among those, the most up to date; of the ones in `prefer` if any
        // is.
        let target_of = |raft: &GroupRaft, prefer: Option<&BTreeSet<u64>>| -> Option<u64> {
            let m = raft.metrics().borrow_watched().clone();
            if !m.state.is_leader() {
                return None;
            }
            let matched = m.replication.clone().unwrap_or_default();
            let heard = m.heartbeat.clone().unwrap_or_default();
            let candidates: Vec<u64> = m
                .membership_config
                .membership()
                .voter_ids()
                .filter(|id| *id != shared.id)
                .filter(|id| {
                    heard
                        .get(id)
                        .cloned()
                        .flatten()
                        .is_some_and(|at| at.elapsed() <= HEARD_WITHIN)
                })
                .collect();
            let preferred: Vec<u64> = candidates
                .iter()
                .copied()
                .filter(|id| prefer.is_some_and(|p| p.contains(id)))
                .collect();
            let pool = if preferred.is_empty() {
                candidates
            } else {
                preferred
            };
            pool.into_iter()
                .max_by_key(|id| matched.get(id).copied().flatten().map(|l| l.index))
        };
        let target = |raft: &GroupRaft| target_of(raft, None);
        let groups: Vec<(u64, GroupRaft, Option<Arc<crate::raft::GroupCommits>>)> = {
            let hosted = shared.hosted.lock();
            let commits = shared.commits.lock();
            hosted
                .iter()
                .map(|(g, raft)| (*g, raft.clone(), commits.get(g).cloned()))
                .collect()
        };
        // A database's groups go to one node, its first group's choice, so
        // that they stay led together (`node::splits`).
        let mut first_of = BTreeMap::new();
        // The nodes holding every split of each database: its first group
        // goes to one of them if one answers, since a leader of the first
        // split lacking a split would hand it on again (`node::leases`).
        let mut covering = BTreeMap::new();
        for (database, hosted) in shared.databases.lock().iter() {
            for (group, _) in hosted.rafts() {
                first_of.insert(group, *database);
            }
            if let Some(nodes) = hosted.groups.covering_every_split() {
                covering.insert(*database, nodes);
            }
        }
        let rafts: BTreeMap<u64, GroupRaft> = groups
            .iter()
            .map(|(group, raft, _)| (*group, raft.clone()))
            .collect();
        let mut moves = Vec::new();
        for (group, raft, commits) in groups {
            let first = first_of
                .get(&group)
                .and_then(|d| Some((rafts.get(d)?, covering.get(d))));
            let to = match first.and_then(|(raft, prefer)| target_of(raft, prefer)) {
                Some(to)
                    if raft
                        .metrics()
                        .borrow_watched()
                        .membership_config
                        .membership()
                        .voter_ids()
                        .any(|v| v == to) =>
                {
                    Some(to)
                }
                _ => target(&raft),
            };
            moves.push(async move {
                let result = match &commits {
                    Some(commits) => commits.hand_over(to, HAND_OVER_WAIT).await,
                    None => Ok(()),
                };
                match (result, to) {
                    (Ok(()), Some(to)) => {
                        tracing::info!(group, to, "handed the group over");
                    }
                    (Err(e), _) => {
                        tracing::warn!(group, error = %e, "could not hand the group over")
                    }
                    (Ok(()), None) => {}
                }
            });
        }
        futures_util::future::join_all(moves).await;
        if let Some(to) = target(&shared.raft) {
            match crate::raft::transfer_leadership(&shared.raft, to, HAND_OVER_WAIT).await {
                Ok(()) => tracing::info!(to, "handed the placement group over"),
                Err(e) => tracing::warn!(to, error = %e, "handing the placement group over"),
            }
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.maintainer.abort();
        self.heartbeat.abort();
    }
}

/// Asks the nodes at `join` in turn to let this node in, backing off
/// between rounds, until one accepts, one refuses for good (another
/// cluster, an id in use), or `timeout` passes.
async fn join_cluster(
    shared: &Shared,
    join: &[String],
    peer_addr: &str,
    timeout: Duration,
) -> Result<JoinReply, NodeError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(100);
    let mut last = String::from("no peer was asked");
    loop {
        for addr in join {
            let request = JoinRequest {
                cluster_id: shared.cluster_id.lock().clone(),
                node_id: shared.id,
                peer_addr: peer_addr.to_string(),
                forwarded: false,
            };
            let mut client = api::client(addr, JOIN_CALL_TIMEOUT).map_err(NodeError::Join)?;
            match client.join(request).await {
                Ok(reply) => {
                    let reply = reply.into_inner();
                    tracing::info!(
                        cluster = %reply.cluster_id,
                        leader = reply.leader,
                        "joined the cluster"
                    );
                    return Ok(reply);
                }
                Err(s)
                    if matches!(
                        s.code(),
                        tonic::Code::FailedPrecondition | tonic::Code::InvalidArgument
                    ) =>
                {
                    return Err(NodeError::Join(format!("{addr} refused: {}", s.message())));
                }
                Err(s) => last = format!("{addr}: {:?}: {}", s.code(), s.message()),
            }
        }
        if tokio::time::Instant::now() + pause > deadline {
            return Err(NodeError::Join(format!(
                "no node accepted within {} s; last answer: {last}",
                timeout.as_secs()
            )));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}

/// openraft's metrics of the placement group.
type Metrics = openraft::RaftMetrics<crate::raft::TypeConfig>;

fn unavailable(what: &str, e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("{what}: {e}"))
}

impl Shared {
    /// Whether node `id`'s process started after `wall_nanos`
    /// ([`databases::Hosting::started_after`]).
    fn started_after(&self, id: u64, wall_nanos: i64) -> bool {
        if id == self.id {
            return false;
        }
        let Some(started) = self.clocks.lock().started(id) else {
            return false;
        };
        let margin = i128::try_from(self.max_clock_offset.as_nanos()).unwrap_or(i128::MAX);
        i128::from(started) * 1_000 > i128::from(wall_nanos).saturating_add(margin)
    }

    /// This node's wall clock in nanoseconds since the Unix epoch, as
    /// [`Shared::started_after`] compares it.
    fn wall_nanos(&self) -> i64 {
        i64::try_from(self.clock.now()).unwrap_or(i64::MAX / 1_000) * 1_000
    }

    /// Whether node `id` answers this node's clock heartbeats
    /// ([`databases::Hosting::answering`]).
    fn answering(&self, id: u64) -> bool {
        if id == self.id {
            return true;
        }
        let now = std::time::Instant::now();
        let clocks = self.clocks.lock();
        !clocks.refused(id)
            && !clocks.stopping(id)
            && clocks
                .get(id, now)
                .is_some_and(|s| now.duration_since(s.at) <= databases::ANSWERED_WITHIN)
    }

    /// How long node `id` has gone without answering this node's clock
    /// heartbeats ([`databases::Hosting::silent_for`]).
    fn unanswered_for(&self, id: u64) -> Duration {
        if self.answering(id) {
            return Duration::ZERO;
        }
        let since = self
            .clocks
            .lock()
            .last_answer(id)
            .unwrap_or(self.started_at)
            .max(self.started_at);
        since.elapsed()
    }

    /// The members of the placement group this node does not hear, each
    /// with how long it has been silent, as its clock answers report them
    /// ([`ClockReply::silent`]).
    fn silent_peers(&self) -> Vec<api::SilentPeer> {
        let members: Vec<u64> = self
            .metrics()
            .membership_config
            .membership()
            .nodes()
            .map(|(id, _)| *id)
            .filter(|id| *id != self.id)
            .collect();
        members
            .into_iter()
            .filter(|id| !self.answering(*id))
            .map(|id| api::SilentPeer {
                node_id: id,
                silent_ms: u64::try_from(self.unanswered_for(id).as_millis()).unwrap_or(u64::MAX),
            })
            .collect()
    }

    /// This node's utilization: the share of a node its databases used
    /// over the last [`leases::WINDOW_SECS`] seconds, summed over the
    /// databases it hosts. A database capped by a node gate
    /// (`--node-capacity`) reports the gate's use (which a split does not
    /// reset); one without, the load of the splits this node leads.
    fn utilization(&self) -> f64 {
        let databases: Vec<Arc<splits::DatabaseGroups>> =
            self.databases.lock().values().cloned().collect();
        databases
            .iter()
            .map(|d| match d.router.gate() {
                Some(gate) => gate.recent_use(leases::WINDOW_SECS),
                None => d
                    .groups
                    .led_loads(leases::WINDOW_SECS)
                    .into_iter()
                    .fold(0.0, |total, (_, _, load)| total + load),
            })
            // From +0.0: an empty float `sum` is -0.0 ("-0%" in status).
            .fold(0.0, |total, load| total + load)
    }

    /// What this node knows of the cluster's load (see `leases`).
    fn load_view(&self) -> leases::LoadView {
        leases::LoadView {
            me: self.id,
            mine: self.utilization(),
            others: self
                .clocks
                .lock()
                .live_utilization(std::time::Instant::now()),
        }
    }

    fn metrics(&self) -> Metrics {
        self.raft.metrics().borrow_watched().clone()
    }

    /// Adopts the cluster id: Raft messages carry it from now on, and
    /// messages carrying another are refused.
    fn set_cluster(&self, cluster_id: &str) {
        *self.cluster_id.lock() = cluster_id.to_string();
        self.peers.set_cluster(cluster_id);
        self.groups.set_cluster(cluster_id);
    }

    fn is_leader(&self) -> bool {
        let m = self.raft.metrics();
        let m = m.borrow_watched();
        m.state == ServerState::Leader && m.current_leader == Some(self.id)
    }

    /// The placement leader and its peer address, if this node knows them.
    fn leader(&self) -> Option<(u64, String)> {
        let m = self.metrics();
        let leader = m.current_leader?;
        let addr = m
            .membership_config
            .membership()
            .get_node(&leader)?
            .addr
            .clone();
        Some((leader, addr))
    }

    /// One clock heartbeat: reads every other member's clock, all at once,
    /// and records a sample of each that answers in time (and whether it
    /// said it is stopping), and a refusal of each whose call fails
    /// outright (a process that is gone).
    async fn read_clocks(&self) {
        let members: Vec<(u64, String)> = self
            .metrics()
            .membership_config
            .membership()
            .nodes()
            .filter(|(id, _)| **id != self.id)
            .map(|(id, n)| (*id, n.addr.clone()))
            .collect();
        let reads = members.into_iter().map(|(id, addr)| async move {
            let channel = self.peers.channel(&addr).ok()?;
            let mut request = Request::new(ClockRequest {
                sender: self.id,
                stopping: self.stopping.load(std::sync::atomic::Ordering::Relaxed),
                started_micros: self.started_micros,
            });
            request.set_timeout(CLOCK_TIMEOUT);
            let t0 = self.clock.now();
            let reply =
                tokio::time::timeout(CLOCK_TIMEOUT, NodeClient::new(channel).clock(request))
                    .await
                    .ok()?;
            let at = std::time::Instant::now();
            Some(match reply {
                Ok(reply) => {
                    let t1 = self.clock.now();
                    let reply = reply.into_inner();
                    let sample = Sample::of(t0, reply.micros, t1, at);
                    let silences = reply.reports_silence.then(|| {
                        reply
                            .silent
                            .iter()
                            .map(|p| (p.node_id, Duration::from_millis(p.silent_ms)))
                            .take(clock::MAX_SILENCES_KEPT)
                            .collect::<Vec<_>>()
                    });
                    (
                        id,
                        Ok((
                            sample,
                            reply.stopping,
                            reply.started_micros,
                            reply.settles_outcomes,
                            reply.utilization,
                            silences,
                            reply.removed,
                        )),
                    )
                }
                // The clock service itself never fails: the transport did.
                Err(status) if status.code() == tonic::Code::Unavailable => (id, Err(at)),
                Err(_) => return None,
            })
        });
        let outcomes = futures_util::future::join_all(reads).await;
        let mut clocks = self.clocks.lock();
        for (id, outcome) in outcomes.into_iter().flatten() {
            match outcome {
                Ok((
                    sample,
                    stopping,
                    started,
                    settles_outcomes,
                    utilization,
                    silences,
                    removed,
                )) => {
                    if removed
                        && !self
                            .told_removed
                            .swap(true, std::sync::atomic::Ordering::Relaxed)
                    {
                        tracing::info!(by = id, "this node was removed from the cluster");
                    }
                    clocks.record_silences(id, sample.at, silences);
                    if stopping {
                        clocks.record_stopping(id, sample, started);
                    } else {
                        clocks.record(id, sample, started);
                    }
                    clocks.record_settles_outcomes(id, settles_outcomes);
                    clocks.record_utilization(id, utilization);
                }
                Err(at) => clocks.record_refusal(id, at),
            }
        }
    }

    /// A client of the placement leader's node service, for a request this
    /// node (not the leader) forwards; refused if the request was
    /// forwarded already (one hop at most) or no leader is known.
    fn leader_client(
        &self,
        forwarded: bool,
    ) -> Result<NodeClient<tonic::transport::Channel>, Status> {
        if forwarded {
            return Err(Status::unavailable(format!(
                "node {} is not the placement leader; ask again",
                self.id
            )));
        }
        let (leader, addr) = self.leader().ok_or_else(|| {
            Status::unavailable(format!(
                "node {} knows no placement leader yet; ask again",
                self.id
            ))
        })?;
        let channel = self
            .peers
            .channel(&addr)
            .map_err(|e| unavailable(&format!("placement leader {leader} at {addr}"), e))?;
        Ok(NodeClient::new(channel))
    }

    /// Makes this node the only voter of a new placement group, waits for
    /// it to lead, and writes the cluster's id and its own record.
    async fn bootstrap(&self, peer_addr: &str) -> Result<(), NodeError> {
        let members = BTreeMap::from([(
            self.id,
            BasicNode {
                addr: peer_addr.to_string(),
            },
        )]);
        self.raft
            .initialize(members)
            .await
            .map_err(|e| NodeError::Raft(format!("cannot bootstrap: {e}")))?;
        self.raft
            .wait(Some(Duration::from_secs(10)))
            .state(ServerState::Leader, "the bootstrapping node leads")
            .await
            .map_err(|e| NodeError::Raft(format!("cannot bootstrap: {e}")))?;
        self.maintain()
            .await
            .map_err(|e| NodeError::Raft(format!("cannot bootstrap: {}", e.message())))?;
        tracing::info!(cluster = %self.cluster_id.lock(), node = self.id, "bootstrapped a new cluster");
        Ok(())
    }

    /// Waits until every entry committed before now is applied here, and
    /// confirms this node still leads.
    async fn read_fresh(&self) -> Result<(), Status> {
        self.raft
            .ensure_linearizable(ReadPolicy::ReadIndex)
            .await
            .map(|_| ())
            .map_err(|e| unavailable("the placement group cannot confirm its leader", e))
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Status> {
        self.router
            .get(key, u64::MAX)
            .map_err(|e| Status::internal(format!("reading the placement replica: {e}")))
    }

    /// Every node record this replica holds, by id.
    /// Whether node `id` is removed from the cluster: recorded so in this
    /// node's copy of the placement group, or, for this node itself, told
    /// so by another node ([`ClockReply::removed`]).
    fn is_removed(&self, id: u64) -> bool {
        if id == self.id && self.told_removed.load(std::sync::atomic::Ordering::Relaxed) {
            return true;
        }
        self.get(&NodeRecord::key(id))
            .ok()
            .flatten()
            .and_then(|bytes| NodeRecord::decode(&bytes).ok())
            .is_some_and(|r| r.state == NodeState::Removed)
    }

    fn records(&self) -> Result<BTreeMap<u64, NodeRecord>, Status> {
        let (start, end) = NodeRecord::key_range();
        let mut out = BTreeMap::new();
        for item in self.router.scan(&start, Some(&end), u64::MAX, false) {
            let (_, value) =
                item.map_err(|e| Status::internal(format!("reading the placement replica: {e}")))?;
            let record = NodeRecord::decode(&value)
                .map_err(|e| Status::internal(format!("the placement replica holds {e}")))?;
            out.insert(record.id, record);
        }
        Ok(out)
    }

    /// Proposes `writes` as one placement entry, above every version
    /// stored, and returns once it is applied here. The caller holds
    /// `changes` and has read fresh.
    async fn write(&self, mut writes: Vec<Write>) -> Result<(), Status> {
        let stored = self
            .get(CLOCK_KEY)?
            .map_or(0, |b| b.try_into().map_or(0, u64::from_be_bytes));
        let ts = self.clock.now().max(stored + 1);
        writes.push((CLOCK_KEY.to_vec(), Some(ts.to_be_bytes().to_vec())));
        let command = Command::Write {
            commits: vec![Commit { ts, writes }],
            closed_ts: None,
            meta: Vec::new(),
        };
        tokio::time::timeout(JOIN_STEP_TIMEOUT, self.raft.client_write(command))
            .await
            .map_err(|_| Status::unavailable("the placement group did not commit in time"))?
            .map_err(|e| unavailable("the placement group refused the change", e))?;
        Ok(())
    }

    /// Records where node `id` serves Spanner's API: here if this node
    /// leads the placement group, else at the leader (one hop).
    pub(super) async fn announce_anywhere(
        &self,
        id: u64,
        client_addr: String,
        forwarded: bool,
    ) -> Result<(), Status> {
        if !self.is_leader() {
            let mut client = self.leader_client(forwarded)?;
            let mut request = Request::new(AnnounceRequest {
                node_id: id,
                client_addr,
                forwarded: true,
            });
            request.set_timeout(JOIN_CALL_TIMEOUT);
            client.announce(request).await?;
            return Ok(());
        }
        let _change = self.changes.lock().await;
        self.read_fresh().await?;
        let key = placement::client_key(id);
        if self.get(&key)?.as_deref() == Some(client_addr.as_bytes()) {
            return Ok(());
        }
        self.write(vec![(key, Some(client_addr.into_bytes()))])
            .await
    }

    /// Replaces the registry's document if its version is still
    /// `expected`: here if this node leads the placement group, else at
    /// the leader (one hop). Returns the new version.
    pub(super) async fn replace_registry_anywhere(
        &self,
        expected: u64,
        document: Vec<u8>,
        forwarded: bool,
    ) -> Result<u64, Status> {
        if self.is_leader() {
            return self.replace_registry(expected, document).await;
        }
        let mut client = self.leader_client(forwarded)?;
        let mut request = Request::new(RegistryRequest {
            expected_version: expected,
            document,
            forwarded: true,
        });
        request.set_timeout(JOIN_CALL_TIMEOUT);
        Ok(client.replace_registry(request).await?.into_inner().version)
    }

    /// The leader's compare and set of the registry's document, evaluated
    /// after a linearizable read, under the change lock.
    async fn replace_registry(&self, expected: u64, document: Vec<u8>) -> Result<u64, Status> {
        let _change = self.changes.lock().await;
        self.read_fresh().await?;
        let stored = match self.get(placement::REGISTRY_KEY)? {
            Some(bytes) => {
                placement::Registry::decode(&bytes)
                    .map_err(|e| Status::internal(format!("the placement replica holds {e}")))?
                    .version
            }
            None => 0,
        };
        if stored != expected {
            return Err(Status::aborted(format!(
                "the registry changed meanwhile (version {stored}, not {expected}); read it again"
            )));
        }
        let next = placement::Registry {
            version: stored + 1,
            document,
        };
        self.write(vec![(
            placement::REGISTRY_KEY.to_vec(),
            Some(next.encode()),
        )])
        .await?;
        Ok(next.version)
    }

    /// How long the leader has not heard from node `id`: since its last
    /// acknowledged heartbeat, or, for a node it never heard from, since it
    /// became leader. `None` on a node that is not the leader.
    fn silent_for(&self, m: &Metrics, id: u64) -> Option<Duration> {
        if m.state != ServerState::Leader {
            return None;
        }
        if id == self.id {
            return Some(Duration::ZERO);
        }
        let since = {
            let mut leading = self.leading_since.lock();
            match *leading {
                Some((term, at)) if term == m.current_term => at,
                _ => {
                    let now = std::time::Instant::now();
                    *leading = Some((m.current_term, now));
                    now
                }
            }
        };
        let heard = m
            .heartbeat
            .as_ref()
            .and_then(|h| h.get(&id).cloned().flatten())
            .map(|t| t.elapsed());
        Some(heard.unwrap_or_else(|| since.elapsed()))
    }

    /// Whether the leader heard from `id` within [`UNREACHABLE_AFTER_MS`].
    fn reachable(&self, m: &Metrics, id: u64) -> bool {
        self.silent_for(m, id)
            .is_some_and(|d| d <= Duration::from_millis(UNREACHABLE_AFTER_MS))
    }

    /// Changes the placement group's voters, with a time bound.
    async fn change(
        &self,
        change: ChangeMembers<u64, BasicNode>,
        what: &str,
    ) -> Result<(), Status> {
        tracing::info!(?change, "placement group: {what}");
        tokio::time::timeout(JOIN_STEP_TIMEOUT, self.raft.change_membership(change, true))
            .await
            .map_err(|_| Status::unavailable(format!("{what} took too long")))?
            .map_err(|e| unavailable(what, e))?;
        Ok(())
    }

    /// The leader's upkeep (module docs): the cluster id, a live record for
    /// every member, removals finished, a silent voter replaced, voters up
    /// to the target. One membership change per call.
    async fn maintain(&self) -> Result<(), Status> {
        let _change = self.changes.lock().await;
        if !self.is_leader() {
            return Ok(());
        }
        self.read_fresh().await?;
        let mut writes = Vec::new();
        let cluster_id = self.cluster_id.lock().clone();
        if self.get(CLUSTER_KEY)?.is_none() && !cluster_id.is_empty() {
            writes.push((CLUSTER_KEY.to_vec(), Some(cluster_id.into_bytes())));
        }
        let m = self.metrics();
        let membership = m.membership_config.membership().clone();
        let records = self.records()?;
        let removed = |id: &u64| {
            records
                .get(id)
                .is_some_and(|r| r.state == NodeState::Removed)
        };
        let voters: BTreeSet<u64> = membership.voter_ids().collect();
        // A learner whose join never completed: it was added, but the leader
        // has not heard from it for `dead_after` (an address nobody answers
        // at, a node that died while joining). It is taken out again, and
        // its record dropped, so that it may ask again.
        let mut abandoned = None;
        for (id, node) in membership.nodes() {
            if removed(id) {
                continue;
            }
            let live = NodeRecord {
                id: *id,
                peer_addr: node.addr.clone(),
                state: NodeState::Live,
            };
            match records.get(id) {
                Some(r) if *r == live => {}
                Some(r) if r.state == NodeState::Live => {
                    writes.push((NodeRecord::key(*id), Some(live.encode())));
                }
                _ if self.reachable(&m, *id) => {
                    writes.push((NodeRecord::key(*id), Some(live.encode())));
                }
                _ if !voters.contains(id)
                    && self
                        .silent_for(&m, *id)
                        .is_some_and(|d| d > self.dead_after) =>
                {
                    abandoned = Some(*id);
                }
                _ => {}
            }
        }
        if !writes.is_empty() {
            self.write(writes).await?;
        }
        if let Some(id) = abandoned {
            tracing::warn!(
                node = id,
                "a join never completed; taking the node out again"
            );
            self.change(
                ChangeMembers::RemoveNodes(BTreeSet::from([id])),
                "taking out a node whose join never completed",
            )
            .await?;
            return self.write(vec![(NodeRecord::key(id), None)]).await;
        }
        // A reachable learner that may become a voter.
        let spare = membership
            .learner_ids()
            .filter(|id| !removed(id) && self.reachable(&m, *id))
            .collect::<Vec<u64>>();
        // A removed member: out of the voters (replaced by a spare if there
        // is one), then out of the group.
        if let Some(id) = membership.nodes().map(|(id, _)| *id).find(|id| removed(id)) {
            if voters.contains(&id) {
                let mut next: BTreeSet<u64> = voters.iter().copied().filter(|v| *v != id).collect();
                if let Some(s) = spare.first() {
                    next.insert(*s);
                }
                if next.is_empty() {
                    return Err(Status::failed_precondition(format!(
                        "node {id} is the placement group's only voter"
                    )));
                }
                return self
                    .change(
                        ChangeMembers::ReplaceAllVoters(next),
                        "taking a removed node out of the voters",
                    )
                    .await;
            }
            return self
                .change(
                    ChangeMembers::RemoveNodes(BTreeSet::from([id])),
                    "taking a removed node out of the group",
                )
                .await;
        }
        // A voter silent for longer than `dead_after`, replaced by a spare:
        // silent to a majority of the voters, not only to this one (a
        // voter cut off from the leader alone still votes for the others).
        let voter_list: Vec<u64> = voters.iter().copied().collect();
        let dead = voters.iter().copied().find(|v| {
            self.silent_for(&m, *v).is_some_and(|d| d > self.dead_after)
                && self.clocks.lock().silent_to_majority(
                    self.id,
                    *v,
                    &voter_list,
                    self.dead_after,
                    std::time::Instant::now(),
                )
        });
        if let (Some(dead), Some(spare)) = (dead, spare.first()) {
            let next: BTreeSet<u64> = voters
                .iter()
                .copied()
                .filter(|v| *v != dead)
                .chain([*spare])
                .collect();
            tracing::warn!(
                node = dead,
                replacement = spare,
                "a placement voter is silent; replacing it"
            );
            return self
                .change(
                    ChangeMembers::ReplaceAllVoters(next),
                    "replacing a silent voter",
                )
                .await;
        }
        let live_nodes = records
            .values()
            .filter(|r| r.state != NodeState::Removed)
            .count();
        let target = voter_target(live_nodes.max(voters.len()));
        if voters.len() < target {
            let promote: BTreeSet<u64> = spare.into_iter().take(target - voters.len()).collect();
            if !promote.is_empty() {
                return self
                    .change(
                        ChangeMembers::AddVoterIds(promote),
                        "promoting learners to voters",
                    )
                    .await;
            }
        }
        Ok(())
    }

    /// The leader's side of a removal: the record becomes `removed` first,
    /// so that whichever node leads next finishes the membership changes
    /// ([`Shared::maintain`]); then as many of them as this leader can
    /// make. Removing the leader itself hands the group to another voter.
    async fn remove(&self, id: u64) -> Result<RemoveReply, Status> {
        {
            let _change = self.changes.lock().await;
            if !self.is_leader() {
                return Err(Status::unavailable(format!(
                    "node {} is no longer the placement leader; ask again",
                    self.id
                )));
            }
            self.read_fresh().await?;
            let records = self.records()?;
            let membership = self.metrics().membership_config.membership().clone();
            let record = match records.get(&id) {
                Some(r) => r.clone(),
                None => match membership.get_node(&id) {
                    Some(n) => NodeRecord {
                        id,
                        peer_addr: n.addr.clone(),
                        state: NodeState::Live,
                    },
                    None => {
                        return Err(Status::not_found(format!(
                            "node {id} is not in the cluster"
                        )))
                    }
                },
            };
            let voters: Vec<u64> = membership.voter_ids().collect();
            if voters == [id] {
                return Err(Status::failed_precondition(format!(
                    "node {id} is the placement group's only voter; add a node first"
                )));
            }
            if record.state != NodeState::Removed {
                let removed = NodeRecord {
                    state: NodeState::Removed,
                    ..record
                };
                self.write(vec![(NodeRecord::key(id), Some(removed.encode()))])
                    .await?;
            }
        }
        // At most two changes (out of the voters, out of the group); a
        // leader that removed itself stops here and its successor finishes.
        for _ in 0..2 {
            if !self.is_leader() {
                break;
            }
            self.maintain().await?;
        }
        Ok(RemoveReply { leader: self.id })
    }

    /// The leader's side of a join (module docs).
    async fn accept(&self, request: JoinRequest) -> Result<JoinReply, Status> {
        let id = request.node_id;
        if !(1..=MAX_NODE_ID).contains(&id) {
            return Err(Status::invalid_argument(format!(
                "node id {id} is outside 1..={MAX_NODE_ID}"
            )));
        }
        check_addr(&request.peer_addr).map_err(Status::invalid_argument)?;
        let _change = self.changes.lock().await;
        if !self.is_leader() {
            return Err(Status::unavailable(format!(
                "node {} is no longer the placement leader; ask again",
                self.id
            )));
        }
        self.read_fresh().await?;
        let cluster_id = match self.get(CLUSTER_KEY)? {
            Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            None => {
                return Err(Status::unavailable(
                    "the cluster is still being bootstrapped",
                ))
            }
        };
        if !request.cluster_id.is_empty() && request.cluster_id != cluster_id {
            return Err(Status::failed_precondition(format!(
                "node {id} belongs to cluster {}; this is cluster {cluster_id}",
                request.cluster_id
            )));
        }
        let membership = self.metrics().membership_config.membership().clone();
        let records = self.records()?;
        if records
            .get(&id)
            .is_some_and(|r| r.state == NodeState::Removed)
        {
            return Err(Status::failed_precondition(format!(
                "node id {id} was removed from the cluster; node ids are never reused, \
                 so a new node needs a new id"
            )));
        }
        let known = records
            .get(&id)
            .map(|r| r.peer_addr.clone())
            .or_else(|| membership.get_node(&id).map(|n| n.addr.clone()));
        if let Some(addr) = &known {
            if *addr != request.peer_addr {
                return Err(Status::failed_precondition(format!(
                    "node id {id} is a member already, at {addr}; node ids are never reused, \
                     so a new node needs a new id"
                )));
            }
        }
        if !records.contains_key(&id) {
            let joining = NodeRecord {
                id,
                peer_addr: request.peer_addr.clone(),
                state: NodeState::Joining,
            };
            self.write(vec![(NodeRecord::key(id), Some(joining.encode()))])
                .await?;
        }
        if membership.get_node(&id).is_none() {
            tracing::info!(node = id, addr = %request.peer_addr, "adding a node to the placement group");
            tokio::time::timeout(
                JOIN_STEP_TIMEOUT,
                self.raft.add_learner(
                    id,
                    BasicNode {
                        addr: request.peer_addr.clone(),
                    },
                    true,
                ),
            )
            .await
            .map_err(|_| Status::unavailable(format!("node {id} did not catch up in time")))?
            .map_err(|e| unavailable("adding the node as a learner", e))?;
        }
        // openraft's blocking add_learner returns once the learner is
        // within its lag threshold, which a short log always is: only an
        // acknowledgement shows the node is there. Without one the join
        // fails, and the upkeep loop undoes it after `dead_after`.
        self.raft
            .wait(Some(JOIN_STEP_TIMEOUT))
            .metrics(
                |m| {
                    m.heartbeat
                        .as_ref()
                        .is_some_and(|h| h.get(&id).is_some_and(|t| t.is_some()))
                },
                "the new node answers",
            )
            .await
            .map_err(|_| {
                Status::unavailable(format!(
                    "node {id} at {} did not answer the placement leader",
                    request.peer_addr
                ))
            })?;
        let membership = self.metrics().membership_config.membership().clone();
        let voters = membership.voter_ids().count();
        let live_records = records
            .values()
            .filter(|r| r.state != NodeState::Removed && r.id != id)
            .count();
        let nodes = membership.nodes().count().max(live_records + 1);
        if voters < voter_target(nodes) && !membership.voter_ids().any(|v| v == id) {
            tokio::time::timeout(
                JOIN_STEP_TIMEOUT,
                self.raft
                    .change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([id])), true),
            )
            .await
            .map_err(|_| Status::unavailable(format!("promoting node {id} took too long")))?
            .map_err(|e| unavailable("promoting the node to voter", e))?;
        }
        let live = NodeRecord {
            id,
            peer_addr: request.peer_addr,
            state: NodeState::Live,
        };
        if self.records()?.get(&id) != Some(&live) {
            self.write(vec![(NodeRecord::key(id), Some(live.encode()))])
                .await?;
        }
        Ok(JoinReply {
            cluster_id,
            leader: self.id,
        })
    }

    /// The status: from the leader if this node is it or can ask it
    /// (unless `forwarded`), else from this node's own replica.
    async fn status(&self, forwarded: bool, groups_only: bool) -> ClusterStatus {
        if groups_only {
            return self.local_status();
        }
        if self.is_leader() {
            let mut status = self.local_status();
            let others = self.others_groups(&status).await;
            status.groups = status::merge_groups(status.groups.drain(..).chain(others));
            return status;
        }
        if !forwarded {
            if let Some((_, addr)) = self.leader() {
                if let Ok(channel) = self.peers.channel(&addr) {
                    let mut client = NodeClient::new(channel);
                    let mut request = Request::new(StatusRequest {
                        forwarded: true,
                        groups_only: false,
                    });
                    request.set_timeout(STATUS_FORWARD_TIMEOUT);
                    if let Ok(reply) = client.status(request).await {
                        if let Ok(status) = serde_json::from_str(&reply.into_inner().json) {
                            return status;
                        }
                    }
                }
            }
        }
        self.local_status()
    }

    /// The database groups the other nodes of `status` hold, as each
    /// reports them: the live nodes the leader heard from lately, asked at
    /// once, each within [`STATUS_FORWARD_TIMEOUT`]; a node that does not
    /// answer is left out (its groups' other replicas still report them).
    async fn others_groups(&self, status: &ClusterStatus) -> Vec<status::GroupStatus> {
        let asks = status
            .nodes
            .iter()
            .filter(|n| {
                n.id != self.id
                    && n.state == NodeState::Live.as_str()
                    && n.reachable(status.from_leader) == Some(true)
            })
            .map(|n| {
                let channel = self.peers.channel(&n.peer_addr);
                async move {
                    let mut client = NodeClient::new(channel.ok()?);
                    let mut request = Request::new(StatusRequest {
                        forwarded: true,
                        groups_only: true,
                    });
                    request.set_timeout(STATUS_FORWARD_TIMEOUT);
                    let reply = client.status(request).await.ok()?;
                    let theirs: ClusterStatus =
                        serde_json::from_str(&reply.into_inner().json).ok()?;
                    Some(theirs.groups)
                }
            });
        futures_util::future::join_all(asks)
            .await
            .into_iter()
            .flatten()
            .flatten()
            .collect()
    }

    /// The status from this node's replica and Raft metrics.
    fn local_status(&self) -> ClusterStatus {
        let m = self.metrics();
        let from_leader = m.state == ServerState::Leader;
        let membership = m.membership_config.membership().clone();
        let voters: BTreeSet<u64> = membership.voter_ids().collect();
        let mut nodes: BTreeMap<u64, NodeStatus> = BTreeMap::new();
        let records = self.records().unwrap_or_default();
        let heard = m.heartbeat.clone().unwrap_or_default();
        let last_heard = |id: u64| {
            if !from_leader {
                return None;
            }
            if id == self.id {
                return Some(0);
            }
            heard
                .get(&id)
                .and_then(|t| t.as_ref())
                .map(|t| u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX))
        };
        let role = |id: u64| {
            if voters.contains(&id) {
                "voter"
            } else if membership.get_node(&id).is_some() {
                "learner"
            } else {
                "none"
            }
        };
        // Before the clocks' lock: this takes the databases'.
        let mine = self.utilization();
        // Which nodes this one does not hear (before the lock: `answering`
        // takes it).
        let ids: BTreeSet<u64> = records
            .keys()
            .copied()
            .chain(membership.nodes().map(|(id, _)| *id))
            .collect();
        let unheard_here: BTreeSet<u64> = ids
            .iter()
            .copied()
            .filter(|id| !self.answering(*id))
            .collect();
        let clocks = self.clocks.lock();
        let now = std::time::Instant::now();
        let offset = |id: u64| -> (Option<f64>, Option<f64>) {
            if id == self.id {
                return (Some(0.0), Some(0.0));
            }
            match clocks.get(id, now) {
                Some(s) => (
                    Some(s.offset_us as f64 / 1000.0),
                    Some(s.error_us as f64 / 1000.0),
                ),
                None => (None, None),
            }
        };
        let utilization = clocks.live_utilization(now);
        let node_status = |id: u64, peer_addr: &str, state: &str| {
            let (clock_offset_ms, clock_error_ms) = offset(id);
            NodeStatus {
                id,
                peer_addr: peer_addr.to_string(),
                state: state.to_string(),
                placement: role(id).to_string(),
                last_heard_ms: last_heard(id),
                clock_offset_ms,
                clock_error_ms,
                client_addr: self
                    .get(&placement::client_key(id))
                    .ok()
                    .flatten()
                    .map(|b| String::from_utf8_lossy(&b).into_owned()),
                utilization: if id == self.id {
                    Some(mine)
                } else {
                    utilization.get(&id).copied()
                },
                unheard_by: {
                    let mut by = clocks.unheard_by(id, ids.iter().copied(), now);
                    if unheard_here.contains(&id) {
                        by.push(self.id);
                        by.sort_unstable();
                    }
                    by
                },
            }
        };
        for r in records.values() {
            nodes.insert(r.id, node_status(r.id, &r.peer_addr, r.state.as_str()));
        }
        for (id, node) in membership.nodes() {
            nodes
                .entry(*id)
                .or_insert_with(|| node_status(*id, &node.addr, NodeState::Joining.as_str()));
        }
        drop(clocks);
        // Which database and split each group serves, its range as the
        // schema reads it, and the load of those this node leads.
        let hosted: Vec<Arc<splits::DatabaseGroups>> =
            self.databases.lock().values().cloned().collect();
        let mut splits = BTreeMap::new();
        for hosted in &hosted {
            let catalog = hosted.db.upgrade().map(|db| db.catalog());
            let loads: Vec<(Arc<crate::raft::GroupCommits>, f64)> = hosted
                .groups
                .led_loads(leases::WINDOW_SECS)
                .into_iter()
                .map(|(_, commits, load)| (commits, load))
                .collect();
            for (group, commits) in hosted.rafts() {
                let d = commits.descriptor();
                let range = catalog.as_ref().map(|catalog| {
                    format!(
                        "{} .. {}",
                        rowtree_db::keys::describe_start(catalog, &d.start),
                        rowtree_db::keys::describe_limit(catalog, &d.start, d.limit.as_deref())
                    )
                });
                let load = loads
                    .iter()
                    .find(|(led, _)| Arc::ptr_eq(led, &commits))
                    .map(|(_, load)| *load);
                splits.insert(
                    group,
                    SplitReport {
                        database: hosted.database,
                        name: hosted.name.clone(),
                        split: format!("{} {d}", d.split),
                        frozen: commits.frozen().map(|into| into.to_string()),
                        range,
                        load,
                    },
                );
            }
        }
        let groups = self
            .hosted
            .lock()
            .iter()
            .map(|(group, raft)| {
                let m = raft.metrics().borrow_watched().clone();
                let report = splits.remove(group);
                status::GroupStatus {
                    group: *group,
                    leader: m.current_leader,
                    term: m.current_term,
                    members: m.membership_config.membership().voter_ids().collect(),
                    applied_index: m.last_applied.map(|l| l.index),
                    purged_index: m.purged.map(|l| l.index),
                    database: report.as_ref().map(|r| r.database),
                    split: report.as_ref().map(|r| r.split.clone()),
                    frozen_into: report.as_ref().and_then(|r| r.frozen.clone()),
                    database_name: report.as_ref().map(|r| r.name.clone()),
                    range: report.as_ref().and_then(|r| r.range.clone()),
                    load: report.and_then(|r| r.load),
                }
            })
            .collect();
        ClusterStatus {
            groups,
            cluster_id: self.cluster_id.lock().clone(),
            answered_by: self.id,
            from_leader,
            leader: m.current_leader,
            term: m.current_term,
            applied_index: m.last_applied.map(|l| l.index),
            nodes: nodes.into_values().collect(),
        }
    }
}

/// What a node reports of one split group it holds
/// ([`status::GroupStatus`]).
struct SplitReport {
    database: u64,
    name: String,
    split: String,
    frozen: Option<String>,
    range: Option<String>,
    load: Option<f64>,
}

/// The node service on the peer port.
struct Handler {
    shared: Arc<Shared>,
}

impl Handler {
    /// The database `database` as this node hosts it, or the refusal a
    /// node that does not host it answers.
    fn hosted(&self, database: u64) -> Result<Arc<splits::DatabaseGroups>, Status> {
        self.shared
            .databases
            .lock()
            .get(&database)
            .cloned()
            .ok_or_else(|| {
                Status::failed_precondition(format!(
                    "node {} does not serve database group {database}",
                    self.shared.id
                ))
            })
    }
}

#[tonic::async_trait]
impl api::NodeService for Handler {
    async fn join(&self, request: Request<JoinRequest>) -> Result<Response<JoinReply>, Status> {
        let request = request.into_inner();
        if self.shared.is_leader() {
            return self.shared.accept(request).await.map(Response::new);
        }
        let mut client = self.shared.leader_client(request.forwarded)?;
        let mut forwarded = Request::new(JoinRequest {
            forwarded: true,
            ..request
        });
        forwarded.set_timeout(JOIN_CALL_TIMEOUT);
        client.join(forwarded).await
    }

    async fn remove(
        &self,
        request: Request<RemoveRequest>,
    ) -> Result<Response<RemoveReply>, Status> {
        let request = request.into_inner();
        if self.shared.is_leader() {
            return self.shared.remove(request.node_id).await.map(Response::new);
        }
        let mut client = self.shared.leader_client(request.forwarded)?;
        let mut forwarded = Request::new(RemoveRequest {
            forwarded: true,
            ..request
        });
        forwarded.set_timeout(JOIN_CALL_TIMEOUT);
        client.remove(forwarded).await
    }

    async fn announce(
        &self,
        request: Request<AnnounceRequest>,
    ) -> Result<Response<AnnounceReply>, Status> {
        let request = request.into_inner();
        check_addr(&request.client_addr).map_err(Status::invalid_argument)?;
        self.shared
            .announce_anywhere(request.node_id, request.client_addr, request.forwarded)
            .await
            .map(|()| Response::new(AnnounceReply {}))
    }

    async fn replace_registry(
        &self,
        request: Request<RegistryRequest>,
    ) -> Result<Response<RegistryReply>, Status> {
        let request = request.into_inner();
        if request.document.len() > placement::MAX_REGISTRY_BYTES {
            return Err(Status::resource_exhausted(format!(
                "a registry document of {} bytes is above the limit of {}",
                request.document.len(),
                placement::MAX_REGISTRY_BYTES
            )));
        }
        self.shared
            .replace_registry_anywhere(
                request.expected_version,
                request.document,
                request.forwarded,
            )
            .await
            .map(|version| Response::new(RegistryReply { version }))
    }

    async fn host_split(
        &self,
        request: Request<HostSplitRequest>,
    ) -> Result<Response<HostSplitReply>, Status> {
        let r = request.into_inner();
        let longest = r.start.len().max(r.limit.as_ref().map_or(0, Vec::len));
        if longest > api::MAX_SPLIT_KEY {
            return Err(Status::invalid_argument(format!(
                "a split boundary of {longest} bytes is above the limit of {}",
                api::MAX_SPLIT_KEY
            )));
        }
        if r.limit.as_ref().is_some_and(|l| *l <= r.start) {
            return Err(Status::invalid_argument(
                "a split's limit must sort after its start",
            ));
        }
        let hosted = self.shared.databases.lock().get(&r.database).cloned();
        let Some(hosted) = hosted else {
            return Ok(Response::new(HostSplitReply {
                hosted: false,
                why: format!(
                    "node {} does not serve database group {} yet",
                    self.shared.id, r.database
                ),
            }));
        };
        let descriptor = crate::Descriptor {
            split: rowtree_kv::SplitId(r.split),
            start: r.start,
            limit: r.limit,
            epoch: r.epoch,
        };
        let reply = match hosted.host(descriptor, r.floor).await {
            Ok(()) => HostSplitReply {
                hosted: true,
                why: String::new(),
            },
            Err(why) => HostSplitReply { hosted: false, why },
        };
        Ok(Response::new(reply))
    }

    async fn locate(
        &self,
        request: Request<LocateRequest>,
    ) -> Result<Response<LocateReply>, Status> {
        let r = request.into_inner();
        if r.key.len() > api::MAX_SPLIT_KEY {
            return Err(Status::invalid_argument(format!(
                "a key of {} bytes is above the limit of {}",
                r.key.len(),
                api::MAX_SPLIT_KEY
            )));
        }
        let hosted = self.shared.databases.lock().get(&r.database).cloned();
        Ok(Response::new(
            hosted.map_or_else(LocateReply::default, |h| h.locate(&r.key, r.before)),
        ))
    }

    async fn read_range(
        &self,
        request: Request<ReadRangeRequest>,
    ) -> Result<Response<ReadRangeReply>, Status> {
        let r = request.into_inner();
        let hosted = self.shared.databases.lock().get(&r.database).cloned();
        let Some(hosted) = hosted else {
            return Err(Status::failed_precondition(format!(
                "node {} does not serve database group {}",
                self.shared.id, r.database
            )));
        };
        tokio::task::spawn_blocking(move || hosted.read_range(r))
            .await
            .map_err(|e| Status::internal(format!("the read stopped: {e}")))?
            .map(Response::new)
    }

    async fn lock_keys(
        &self,
        request: Request<api::LockKeysRequest>,
    ) -> Result<Response<api::TxnReply>, Status> {
        let r = request.into_inner();
        let hosted = self.hosted(r.database)?;
        tokio::task::spawn_blocking(move || hosted.lock_keys(r))
            .await
            .map_err(|e| Status::internal(format!("the lock stopped: {e}")))?
            .map(Response::new)
    }

    async fn prepare_keys(
        &self,
        request: Request<api::PrepareKeysRequest>,
    ) -> Result<Response<api::PrepareKeysReply>, Status> {
        let r = request.into_inner();
        let hosted = self.hosted(r.database)?;
        tokio::task::spawn_blocking(move || hosted.prepare_keys(r))
            .await
            .map_err(|e| Status::internal(format!("the prepare stopped: {e}")))?
            .map(|ts| Response::new(api::PrepareKeysReply { ts }))
    }

    async fn resolve_keys(
        &self,
        request: Request<api::ResolveKeysRequest>,
    ) -> Result<Response<api::TxnReply>, Status> {
        let r = request.into_inner();
        let hosted = self.hosted(r.database)?;
        tokio::task::spawn_blocking(move || hosted.resolve_keys(r))
            .await
            .map_err(|e| Status::internal(format!("the resolution stopped: {e}")))?
            .map(Response::new)
    }

    async fn release_keys(
        &self,
        request: Request<api::ReleaseKeysRequest>,
    ) -> Result<Response<api::TxnReply>, Status> {
        let r = request.into_inner();
        let hosted = self.hosted(r.database)?;
        tokio::task::spawn_blocking(move || hosted.release_keys(r))
            .await
            .map_err(|e| Status::internal(format!("the release stopped: {e}")))?
            .map(Response::new)
    }

    async fn settle(
        &self,
        request: Request<api::SettleRequest>,
    ) -> Result<Response<api::SettleReply>, Status> {
        let r = request.into_inner();
        let hosted = self.hosted(r.database)?;
        tokio::task::spawn_blocking(move || hosted.settle(r))
            .await
            .map_err(|e| Status::internal(format!("settling stopped: {e}")))?
            .map(Response::new)
    }

    async fn add_split_point(
        &self,
        request: Request<AddSplitPointRequest>,
    ) -> Result<Response<AddSplitPointReply>, Status> {
        let r = request.into_inner();
        if r.key.len() > api::MAX_SPLIT_KEY {
            return Err(Status::invalid_argument(format!(
                "a split point of {} bytes is above the limit of {}",
                r.key.len(),
                api::MAX_SPLIT_KEY
            )));
        }
        let hosted = self.shared.databases.lock().get(&r.database).cloned();
        let Some(hosted) = hosted else {
            return Err(Status::failed_precondition(format!(
                "node {} does not serve database group {}",
                self.shared.id, r.database
            )));
        };
        tokio::task::spawn_blocking(move || hosted.add_split_point(&r.key, r.expires_at))
            .await
            .map_err(|e| Status::internal(format!("adding the split point stopped: {e}")))?
            .map(|made| Response::new(AddSplitPointReply { made }))
    }

    async fn split_history(
        &self,
        request: Request<SplitHistoryRequest>,
    ) -> Result<Response<SplitHistoryReply>, Status> {
        let database = request.into_inner().database;
        let hosted = self.shared.databases.lock().get(&database).cloned();
        let history = hosted
            .and_then(|hosted| hosted.db.upgrade())
            .map(|db| db.local_split_history().to_bytes())
            .unwrap_or_default();
        Ok(Response::new(SplitHistoryReply { history }))
    }

    async fn clock(&self, request: Request<ClockRequest>) -> Result<Response<ClockReply>, Status> {
        let request = request.into_inner();
        if request.stopping && request.sender != self.shared.id {
            self.shared
                .clocks
                .lock()
                .mark_stopping(request.sender, request.started_micros);
        }
        Ok(Response::new(ClockReply {
            micros: self.shared.clock.now(),
            stopping: self
                .shared
                .stopping
                .load(std::sync::atomic::Ordering::Relaxed),
            started_micros: self.shared.started_micros,
            settles_outcomes: true,
            utilization: self.shared.utilization(),
            silent: self.shared.silent_peers(),
            reports_silence: true,
            removed: self.shared.is_removed(request.sender),
        }))
    }

    async fn status(
        &self,
        request: Request<StatusRequest>,
    ) -> Result<Response<StatusReply>, Status> {
        let request = request.into_inner();
        let status = self
            .shared
            .status(request.forwarded, request.groups_only)
            .await;
        let json = serde_json::to_string(&status)
            .map_err(|e| Status::internal(format!("encoding the status: {e}")))?;
        Ok(Response::new(StatusReply { json }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_addresses_must_be_host_and_port() {
        assert!(check_addr("127.0.0.1:7001").is_ok());
        assert!(check_addr("node-3.internal:7001").is_ok());
        assert!(check_addr("[::1]:7001").is_ok());
        for bad in ["", "127.0.0.1", ":7001", "h:99999", "h:port"] {
            assert!(check_addr(bad).is_err(), "{bad:?}");
        }
        assert!(check_addr(&format!("{}:1", "h".repeat(300))).is_err());
    }

    #[test]
    fn the_placement_group_wants_three_voters_then_five() {
        assert_eq!(voter_target(1), 3);
        assert_eq!(voter_target(6), 3);
        assert_eq!(voter_target(7), 5);
    }
}
