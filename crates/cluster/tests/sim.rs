//! The deterministic simulation of one Raft group (design §12; build order,
//! milestone 3).
//!
//! Four nodes run as turmoil hosts: the group's three voters and a fourth
//! that holds no replica. Every node runs the real
//! code of this crate (log store, replica, peer port over gRPC), on
//! simulated time and a simulated network, with a simulated disk that
//! keeps only what was synced when its node crashes (and any prefix of
//! what was not). Each node's clock is simulated time plus a fixed skew
//! within ±ε/2 of it, and its timestamps come from the database's
//! timestamp oracle over that clock. The leader of the moment takes and
//! extends the split's lease ([`rowtree_cluster::lease`]) and, while the
//! lease is valid by its clock, writes single-key commits at timestamps
//! inside the lease, and every 100 ms closes a timestamp 100 ms behind its
//! clock (a `ClosedTs` entry); every node that holds a valid lease serves a
//! strong read of every key from its replica every 10 ms, at a timestamp
//! from its oracle, and every node, leaseholder or not, serves a follower
//! read of every key at its replica's closed timestamp (its safe time).
//!
//! **Replica moves.** Every second or two the harness asks for a replica
//! to move from a voter to the node that holds none, and the leader of the
//! moment carries it out step by step as the product's replica placement
//! does (`node::databases::replicas`): it finishes a joint configuration
//! a dead leader left, hands the group over first if its own replica is
//! the one to move, asks the new node to hold an empty replica made for an
//! image (`Replica::create_for_image`, which votes in no election and
//! takes no entry from the log's start before it installs one), snapshots
//! and purges its log (`raft::snapshot_and_purge`), adds the node as a
//! learner, and once it has caught up replaces the old voter with it; a
//! learner no move is making a voter is removed. The node taken out
//! learns it from its own replica's membership (if that counted it before,
//! in this start of the node) or from the leader, and releases its
//! replica: the group stops, the replica's state is deleted, then the
//! group's log (its vote kept: Raft's term is never forgotten), and after
//! a grace the replica's rows. Moves reach every
//! node in turn, so nodes are placed again in groups they left.
//! **Lease handovers.** As often, the harness asks the leader to hand the
//! group to a node; if that node votes, the leader gives its lease up
//! (`LeaseKeeper::release`, ending it above every timestamp it used) and
//! transfers leadership (`raft::transfer_leadership`), as the product's
//! lease balancer does.
//!
//! A seeded nemesis crashes and restarts nodes (one at a time, or
//! all of them at once, as in a power failure), isolates nodes (the
//! leader half the time, which then serves on under its lease while the
//! others elect a new leader) and cuts single links (messages held and
//! delivered when the cut heals, or dropped so that connections break),
//! raises the network's latency, and **arms crash points**: every node
//! stops at the next of the named steps of a move, a release or a
//! handover ([`POINTS`]) it reaches, and is crashed at the end of that
//! simulation step (its disks keep what was synced), to restart a little
//! later.
//!
//! After every step of the simulation the harness checks:
//!
//! * **one leader per term** (Raft's election safety);
//! * **the minority is harmless** (invariant 13): a node that has been cut
//!   off from every other node since before a write was proposed does not
//!   acknowledge it;
//! * **membership** (invariant 14): a node that is not a voter in its own
//!   view of the membership never stands for election, and leads only
//!   while committing its own removal (as Raft lets a leader do); a
//!   configuration is at most joint (two voter sets: one change in flight);
//!   two nodes that know a membership by the same log id know the same
//!   membership;
//! * **log matching**: two acknowledged writes never share a log index;
//! * **leases are disjoint** (invariant 3): every node applies the same
//!   chain of leases, and a lease of a new holder starts at least ε after
//!   the one before it expires;
//! * **strong reads see every acknowledged write** (invariant 9): a read
//!   served under a lease, at its timestamp, shows for every key a version
//!   at least as new as every write acknowledged before the read began;
//!   so the commit timestamps of a new holder are above every timestamp
//!   the old one acknowledged, in spite of the skewed clocks;
//! * **reads do not move** (invariant 5, its follower half): a follower
//!   read at a replica's safe time shows, for every key, the newest write
//!   acknowledged at or below that timestamp, and no write at or below it
//!   is acknowledged after the read was served;
//! * no node stops on a fatal error (a replica refuses an entry that breaks
//!   its own invariants, or a store fails).
//!
//! Snapshots are taken every 40 entries and the log purged behind them, so
//! a node that was down long enough catches up by installing one, sent
//! over the peer port (the runs count them and require some).
//!
//! Then the faults stop, every node comes back, and the group must settle
//! within [`SETTLE`]: no move under way, one leader, every voter alive and
//! applied as far as the leader, nothing acknowledged beyond that, no
//! learner left, and no replica on a node that is not a voter. Finally
//! **durability** (invariant 6): every acknowledged write is in every
//! voter's data, and every voter stores the same bytes (invariant 16);
//! and a node taken out keeps no replica, nor its rows (unless it crashed
//! while deleting them, which leaves rows that nothing reads).
//!
//! The moves and crash points found five bugs in the product, fixed with
//! them (docs/reliability.md tells them in full):
//!
//! * a lease given up before it started ended before it started, which
//!   every replica refuses as an entry no correct leader writes (the group
//!   stopped);
//! * a lease given up whose entry timed out was served again by its old
//!   holder, whose replica had not applied it, while the entry committed
//!   and the next holder wrote (invariant 9);
//! * a node placed again in a group it had left, its vote (its term)
//!   forgotten with its log, voted for a candidate whose log still counted
//!   it a voter, or took the image of a leader deposed since and voted in
//!   its old configuration, whose candidate then won and overwrote
//!   committed entries (two leases of the same number applied);
//! * purging the leader's log up to its snapshot moved openraft's purge
//!   point back once its own policy purged after the next snapshot, which
//!   openraft's core asserts against (in debug builds);
//! * a node restarted on an image taken before it was added applied a
//!   membership without itself, took it for its removal and released the
//!   replica it had just been given.
//!
//! A seed fixes the nemesis, the network's randomness and openraft's
//! (election timeouts, through `raft::seeded`). CI plays seeds 0 to 63,
//! and for each crash point runs with the point armed on every node from
//! the start until one reaches it (and keeps every invariant);
//! the ignored test `replay` plays what the environment names, with each
//! seed's trace: `ROWTREE_SIM_SEED=n cargo test -p rowtree-cluster --test
//! sim replay -- --ignored --nocapture` (or `ROWTREE_SIM_SEEDS=a..b`, and
//! `ROWTREE_SIM_PLANT=lying-disk`, `early-lease` or `clock-safe-time` for a
//! planted bug). One
//! source of order is not seeded: tokio and `futures` choose at
//! random among ready branches of an unbiased `select!` (tokio's choice is
//! seeded only in a build with `--cfg tokio_unstable`), so a replayed seed
//! plays the same faults at the same moments but may interleave the tasks
//! of one step differently (so the leader that an isolation picks may be
//! another node, and the moves, handovers and crashes at named steps,
//! which draw from generators of their own, may differ).
//!
//! Three planted bugs prove the checks bite (`ROWTREE_SIM_PLANT`):
//!
//! * `lying-disk`: a disk that acknowledges a sync without making anything
//!   durable (as a drive with a volatile write cache that ignores flushes
//!   does); the simulator must find a lost acknowledged write, diverged
//!   replicas or a strong read that misses a write within 32 seeds;
//! * `early-lease`: a node that serves under a new lease as soon as its
//!   entry is applied, without waiting for its clock to reach the lease's
//!   start, i.e. for the previous holder's lease to run out; the simulator
//!   must find a strong read that misses an acknowledged write within 200
//!   seeds;
//! * `clock-safe-time`: a replica that takes its safe time from its clock
//!   (where the leader's closing would have put it by now) rather than
//!   from the closed timestamp it applied; the simulator must find a
//!   follower read that moved (invariant 5) within 32 seeds (a replica
//!   that has not caught up, a new one or one cut off, finds it at once).

mod simkit;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openraft::type_config::async_runtime::WatchReceiver;
use openraft::{BasicNode, ChangeMembers, Config, ServerState};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rowtree_cluster::raft::{
    renew_lease, seeded, snapshot_and_purge, to_log_id, transfer_leadership, GroupId, Groups,
    LogStore, ReplicaMachine, SnapshotCounts, TypeConfig,
};
use rowtree_cluster::{
    ClosedView, Command, Commit, Descriptor, ImageView, Lease, LeaseKeeper, LeaseRules, LeaseView,
    Replica,
};
use rowtree_kv::{Router, SplitId, SplitMap};
use rowtree_storage::{Engine, Mvcc};
use rowtree_txn::timestamp::{Clock, TimestampOracle};
use simkit::{
    every_point_reached, host, mix, nemesis_faults, now, pair, serve_peer_port, sim_peers, skew,
    CrashPoints, Cuts, Disk, Nemesis, NodeClock, Pair, PORT,
};

type Raft = openraft::Raft<TypeConfig, ReplicaMachine>;

/// Simulated time per step.
const TICK: Duration = Duration::from_millis(2);
/// How long the nemesis acts.
const FAULTS: Duration = Duration::from_secs(12);
/// How long the group has to settle once the faults stop.
const SETTLE: Duration = Duration::from_secs(20);
/// The group's first voters; node 4 holds no replica until a move makes
/// it a member.
const FIRST_VOTERS: [u64; 3] = [1, 2, 3];
const NODES: [u64; 4] = [1, 2, 3, 4];
/// How long a writer waits for a write before giving up on it (its
/// outcome is then unknown: it may still commit).
const WRITE_TIMEOUT: Duration = Duration::from_millis(500);
/// The leases of the simulated split: the design's 2 s, longer than an
/// election takes (so a new leader often has to wait for the old lease),
/// with an ε of 20 ms.
const LEASES: LeaseRules = LeaseRules {
    duration: Duration::from_millis(2000),
    max_offset: Duration::from_millis(20),
};
/// How far behind its clock a leader closes timestamps, and how often.
const CLOSE_LAG: Duration = Duration::from_millis(100);
const CLOSE_EVERY: Duration = Duration::from_millis(100);
/// A bug planted on purpose, to show the checks find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plant {
    /// None: the code as it is.
    Nothing,
    /// Disks that acknowledge a sync without making anything durable.
    LyingDisk,
    /// A node that serves under a new lease as soon as its entry is
    /// applied, before its clock reaches the lease's start (so before the
    /// previous holder's lease has run out).
    EarlyLease,
    /// A replica that takes its safe time from its clock (the leader
    /// closes timestamps [`CLOSE_LAG`] behind its own, on schedule) rather
    /// than from the closed timestamp it applied, and serves follower
    /// reads there.
    ClockSafeTime,
}

impl Plant {
    fn from_env() -> Plant {
        match std::env::var("ROWTREE_SIM_PLANT").as_deref() {
            Ok("lying-disk") => Plant::LyingDisk,
            Ok("early-lease") => Plant::EarlyLease,
            Ok("clock-safe-time") => Plant::ClockSafeTime,
            Ok(other) => {
                panic!("ROWTREE_SIM_PLANT={other}: lying-disk, early-lease or clock-safe-time")
            }
            Err(_) => Plant::Nothing,
        }
    }
}

fn member(id: u64) -> BasicNode {
    BasicNode {
        addr: format!("n{id}:{PORT}"),
    }
}

fn config() -> Arc<Config> {
    Arc::new(
        Config {
            heartbeat_interval: 50,
            election_timeout_min: 300,
            election_timeout_max: 600,
            // Snapshots and purges happen in every run, so that a node
            // that was down long catches up from a snapshot.
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(40),
            max_in_snapshot_log_to_keep: 10,
            purge_batch_size: 1,
            ..Config::default()
        }
        .validate()
        .unwrap(),
    )
}

fn descriptor() -> Descriptor {
    Descriptor {
        split: SplitId(1),
        start: b"k".to_vec(),
        limit: Some(b"l".to_vec()),
        epoch: 1,
    }
}

// ---------------------------------------------------------------------
// What the nodes and the harness share.

/// The crash points (see the module docs): the steps of a replica move,
/// of a release and of a lease handover at which the nemesis may stop a
/// node.
const POINTS: [&str; 10] = [
    // At the leader moving a replica: the new member holds an empty
    // replica, before the leader snapshots and purges its log.
    "move: after the host",
    // There: the log purged, before the new member joins.
    "move: after the purge",
    // There: the new member added as a learner, before it votes.
    "move: after the learner joins",
    // There: the voters changed (the old member out), before anything
    // else.
    "move: after the voters change",
    // At the new member: its replica made for an image, before its group
    // starts.
    "host: before the group starts",
    // There: the image installed, before anything else.
    "host: after the image",
    // At the member taken out, told so: before its group stops.
    "release: before the group stops",
    // There: its group stopped, its replica's state and its log (but the
    // vote) deleted, before its rows are.
    "release: before the discard",
    // At a leaseholder handing its group over: its lease given up (the
    // entry applied), before leadership moves.
    "hand-over: after the lease is given up",
    // At a node that took the lease from another holder: the lease
    // applied, before it serves under it.
    "lease: after taking over",
];

/// How long a node that left the group keeps its replica's rows (reads
/// already running on them finish) before it discards them.
const RELEASE_GRACE: Duration = Duration::from_millis(300);

/// A replica move the leader of the moment is asked to carry out, as the
/// product's replica placement does.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Move {
    from: u64,
    to: u64,
}

/// An acknowledged write.
#[derive(Clone, Debug)]
struct Ack {
    node: u64,
    key: Vec<u8>,
    ts: u64,
    value: Vec<u8>,
    term: u64,
    index: u64,
}

#[derive(Default)]
struct World {
    /// The Raft instances running now (a node's group, while it holds a
    /// replica), by node.
    nodes: BTreeMap<u64, Raft>,
    /// How many times each node has started.
    starts: BTreeMap<u64, u64>,
    /// The snapshot counts of every replica machine started.
    snapshots: Vec<Arc<SnapshotCounts>>,
    /// Nodes cut off from every other node, since when.
    isolated_since: BTreeMap<u64, Duration>,
    acks: Vec<Ack>,
    /// Per key, in the order they were acknowledged: when, and the highest
    /// timestamp acknowledged for the key up to then.
    acked_keys: BTreeMap<Vec<u8>, Vec<(Duration, u64)>>,
    /// Each node's view of its replica's current lease.
    lease_views: BTreeMap<u64, LeaseView>,
    /// Every lease seen applied on any node, by number.
    leases: BTreeMap<u64, Lease>,
    /// Strong reads served under a lease.
    lease_reads: usize,
    /// Each node's view of its replica's closed timestamp (its safe time).
    closed_views: BTreeMap<u64, ClosedView>,
    /// Each running replica's view of whether it awaits an image.
    images: BTreeMap<u64, ImageView>,
    /// Closed timestamps proposed and acknowledged, and follower reads
    /// served (at a replica's safe time, on any node).
    closes: usize,
    follower_reads: usize,
    /// Per key, every acknowledged commit timestamp; and what follower
    /// reads saw: the version's timestamp (0: none), mapped to the highest
    /// read timestamp at which a read saw it.
    acked_ts: BTreeMap<Vec<u8>, BTreeSet<u64>>,
    follower_seen: BTreeMap<Vec<u8>, BTreeMap<u64, u64>>,
    /// The term and timestamp acknowledged at each log index.
    acked_at: BTreeMap<u64, (u64, u64)>,
    /// Writes a leader proposed while cut off from every other node (none
    /// may be acknowledged while it stays cut off).
    proposed_alone: usize,
    /// The replica move under way, and those done.
    moving: Option<Move>,
    moves: usize,
    /// Nodes whose group runs now; nodes the leader asked to hold an
    /// empty replica (the product's `HostSplit`), until the move is done;
    /// with the leader's applied index then (the floor of the images the
    /// replica may install); nodes a voter told they are no longer members
    /// (the product's `Locate` answer); nodes that ever released their
    /// replica.
    hosting: BTreeSet<u64>,
    host_asked: BTreeMap<u64, u64>,
    told_out: BTreeSet<u64>,
    released: BTreeSet<u64>,
    /// Releases begun and replicas discarded; nodes that released a
    /// replica and have not finished discarding it (a crash while it
    /// deletes the rows leaves some, which nothing reads).
    releases: usize,
    discarding: BTreeSet<u64>,
    /// Nodes releasing a replica now (until they discard it or crash).
    releasing: BTreeSet<u64>,
    /// Nodes whose software runs (started, not crashed since).
    up: BTreeSet<u64>,
    discards: usize,
    /// A lease handover asked of the leader of the moment (to that node),
    /// and those that moved the group.
    hand_over: Option<u64>,
    hand_overs: usize,
    points: CrashPoints,
    /// Set once the faults stop: no new writes.
    quiet: bool,
    violations: Vec<String>,
    trace: Vec<String>,
}

impl World {
    /// Node `id`'s group no longer runs (it released its replica, or it
    /// crashed): what the harness follows of it goes, and what it was told
    /// (started again, it asks again). Its Raft instance, if it ran.
    fn group_stopped(&mut self, id: u64) -> Option<Raft> {
        self.hosting.remove(&id);
        self.images.remove(&id);
        self.told_out.remove(&id);
        self.nodes.remove(&id)
    }
}

type Shared = Arc<Mutex<World>>;

/// A crash point: if node `id` is armed with `point`, it goes no further
/// here and the harness crashes it at the end of the step.
async fn point(world: &Shared, id: u64, point: &'static str) {
    if world.lock().unwrap().points.reached(id, point) {
        std::future::pending::<()>().await;
    }
}

fn trace(world: &Shared, line: String) {
    world.lock().unwrap().trace.push(line);
}

/// One node's software, started again on every restart.
async fn node(
    id: u64,
    seed: u64,
    plant: Plant,
    log_disk: Arc<Disk>,
    data_disk: Arc<Disk>,
    world: Shared,
) -> turmoil::Result {
    let start = {
        let mut w = world.lock().unwrap();
        let start = w.starts.entry(id).or_default();
        *start += 1;
        *start
    };
    let clock = NodeClock {
        skew: skew(seed, id, LEASES.max_offset),
    };
    let seed = mix(mix(seed, id), start);
    seeded(
        seed,
        run_node(id, seed, start, plant, clock, log_disk, data_disk, world),
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn run_node(
    id: u64,
    seed: u64,
    start: u64,
    plant: Plant,
    clock: NodeClock,
    log_disk: Arc<Disk>,
    data_disk: Arc<Disk>,
    world: Shared,
) -> turmoil::Result {
    // Commit and read timestamps: the database's oracle over this node's
    // clock, started afresh by each process and told every commit
    // timestamp the replica applies (the hybrid clock's receive rule). Its
    // lease starts after every timestamp an earlier holder used anyway.
    let clock = Arc::new(clock);
    let node = Node {
        id,
        plant,
        oracle: Arc::new(TimestampOracle::new(clock.clone())),
        clock,
        log: LogStore::synchronous(log_disk),
        router: Arc::new(Router::new(Mvcc::new(data_disk), SplitMap::new())),
        groups: Groups::new(),
        world,
    };
    let _port = serve_peer_port(node.groups.clone()).await?;
    node.world.lock().unwrap().up.insert(id);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut initialize = id == FIRST_VOTERS[0] && start == 1;
    loop {
        let result = async {
            let replica = node.replica().await?;
            node.serve(replica, std::mem::take(&mut initialize), &mut rng)
                .await
        }
        .await;
        if let Err(e) = result {
            let v = format!("node {id}'s software failed: {e}");
            node.world.lock().unwrap().violations.push(v);
            return Err(e);
        }
    }
}

/// One start of a node's software.
struct Node {
    id: u64,
    plant: Plant,
    clock: Arc<NodeClock>,
    oracle: Arc<TimestampOracle>,
    log: LogStore,
    router: Arc<Router>,
    groups: Groups,
    world: Shared,
}

impl Node {
    /// The node's replica of the split: the one its engine holds; else a
    /// first voter's own (made again if a crash lost its unsynced making:
    /// it had applied nothing), until it ever released one; else, once
    /// the leader asks, an empty replica for an image (the product's
    /// `HostSplit`).
    async fn replica(&self) -> turmoil::Result<Replica> {
        let id = self.id;
        if let Ok(replica) = Replica::open(self.router.clone(), SplitId(1)) {
            return Ok(replica);
        }
        let released = self.world.lock().unwrap().released.contains(&id);
        if FIRST_VOTERS.contains(&id) && !released {
            return Ok(Replica::create(self.router.clone(), descriptor())?);
        }
        let floor = loop {
            if let Some(floor) = self.world.lock().unwrap().host_asked.get(&id) {
                break *floor;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let replica = Replica::create_for_image(self.router.clone(), descriptor(), floor)?;
        trace(
            &self.world,
            format!(
                "{:?} node {id}: holds an empty replica, for an image",
                now()
            ),
        );
        point(&self.world, id, POINTS[4]).await;
        Ok(replica)
    }

    /// Runs the group on `replica` until this node is out of it, then
    /// releases the replica. While the node leads, it makes the changes
    /// asked for (a replica move, a lease handover), takes and extends the
    /// lease, and writes under it; while it holds the lease it serves
    /// strong reads from its replica.
    async fn serve(
        &self,
        replica: Replica,
        initialize: bool,
        rng: &mut SmallRng,
    ) -> turmoil::Result {
        let (id, world, plant) = (self.id, &self.world, self.plant);
        let replica = replica.with_oracle(self.oracle.clone());
        let lease_view = replica.lease_view();
        let closed_view = replica.closed_view();
        let image = replica.image_view();
        let mut awaited = image.awaits();
        if awaited {
            // As the product does: a replica awaiting an image starts from
            // an empty log, with the vote and the image floor the node had.
            self.log.clear_group(GroupId(1), 0)?;
            image.raise_floor(self.log.image_floor(GroupId(1))?);
        }
        let machine = ReplicaMachine::new(replica);
        {
            let mut w = world.lock().unwrap();
            w.snapshots.push(machine.snapshot_counts());
            w.lease_views.insert(id, lease_view.clone());
            w.closed_views.insert(id, closed_view.clone());
            w.images.insert(id, image.clone());
        }
        let raft = Raft::new(
            id,
            config(),
            sim_peers().group(GroupId(1)),
            self.log.group(GroupId(1)),
            machine,
        )
        .await?;
        self.groups.watch_image(GroupId(1), image.clone());
        self.groups.insert(GroupId(1), raft.clone());
        if initialize {
            let members: BTreeMap<u64, BasicNode> =
                FIRST_VOTERS.iter().map(|&id| (id, member(id))).collect();
            raft.initialize(members).await?;
        }
        {
            let mut w = world.lock().unwrap();
            w.nodes.insert(id, raft.clone());
            w.hosting.insert(id);
            w.host_asked.remove(&id);
        }

        let keeper = Arc::new(Mutex::new(LeaseKeeper::new(id, LEASES)));
        // Set while the node hands its lease over: it serves nothing.
        let handing = Arc::new(AtomicBool::new(false));
        // The lease this node may serve under now.
        let serving = {
            let (keeper, lease_view, clock) =
                (keeper.clone(), lease_view.clone(), self.clock.clone());
            let handing = handing.clone();
            move || {
                if handing.load(Ordering::SeqCst) {
                    return None;
                }
                let keeper = keeper.lock().unwrap().clone();
                let (current, now) = (lease_view.get(), clock.now_nanos());
                match plant {
                    // The planted bug: the lease counts from the moment its
                    // entry is applied, not from its start.
                    Plant::EarlyLease => keeper
                        .held()
                        .filter(|h| current == Some(*h) && now < h.expiry),
                    _ => keeper.serving(current, now),
                }
            }
        };
        // The reader: a strong read every 10 ms while the node holds the
        // lease, and, leaseholder or not, a follower read at its replica's
        // safe time.
        let reader = tokio::spawn({
            let (serving, world, oracle) = (serving.clone(), world.clone(), self.oracle.clone());
            let (closed_view, clock, router) =
                (closed_view.clone(), self.clock.clone(), self.router.clone());
            async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    if let Some(lease) = serving() {
                        let ts = oracle.next();
                        if ts < lease.expiry {
                            strong_read(&world, id, &router, &lease, ts);
                        }
                    }
                    let safe = match plant {
                        // The planted bug: the safe time the leader would
                        // have closed by now, had everything reached this
                        // replica.
                        Plant::ClockSafeTime => clock
                            .now_nanos()
                            .saturating_sub(2 * CLOSE_LAG.as_nanos() as u64),
                        _ => closed_view.get(),
                    };
                    if safe > 0 {
                        follower_read(&world, id, &router, safe);
                    }
                }
            }
        });
        let mut last_close = Duration::ZERO;
        let mut last_purge = Duration::ZERO;
        let mut member = false;
        loop {
            tokio::time::sleep(Duration::from_millis(rng.random_range(5..40))).await;
            if awaited && !image.awaits() {
                awaited = false;
                let m = raft.metrics().borrow_watched().clone();
                trace(
                    world,
                    format!(
                        "{:?} node {id}: installed its image, applied {:?}, vote {}, membership {:?}",
                        now(),
                        m.last_applied.map(|l| (l.leader_id.term, l.index)),
                        m.vote,
                        m.membership_config.membership().get_joint_config()
                    ),
                );
                point(world, id, POINTS[5]).await;
            }
            if self.out(&raft, &mut member) {
                break;
            }
            if raft.metrics().borrow_watched().state != ServerState::Leader {
                continue;
            }
            let mut renewing = keeper.lock().unwrap().clone();
            let renewed = tokio::time::timeout(
                WRITE_TIMEOUT,
                renew_lease(&raft, &mut renewing, &lease_view, self.clock.now_nanos()),
            )
            .await;
            *keeper.lock().unwrap() = renewing;
            if let Ok(Ok(Some(lease))) = renewed {
                let taken_over = {
                    let mut w = world.lock().unwrap();
                    let fresh = !w.leases.contains_key(&lease.seq);
                    if fresh {
                        let line = format!("{:?} node {id}: took {lease}", now());
                        w.trace.push(line);
                    }
                    fresh
                        && w.leases
                            .get(&(lease.seq - 1))
                            .is_some_and(|before| before.holder != id)
                };
                if taken_over {
                    point(world, id, POINTS[9]).await;
                }
            }
            // Only a leader still leading after the lease's round trip, and
            // one of the voters of the latest configuration, changes the
            // membership: openraft's debug builds assert that a node which
            // has stopped leading (one a committed configuration left out)
            // makes no change, and a call racing that step-down trips the
            // assertion.
            let may_change = {
                let m = raft.metrics().borrow_watched().clone();
                m.state == ServerState::Leader
                    && m.membership_config
                        .membership()
                        .voter_ids()
                        .any(|v| v == id)
            };
            let (hand_over, moving) = {
                let w = world.lock().unwrap();
                (w.hand_over, w.moving)
            };
            if let Some(to) = hand_over.filter(|_| may_change) {
                world.lock().unwrap().hand_over = None;
                self.hand_over(&raft, &keeper, &lease_view, &handing, to)
                    .await;
                continue;
            }
            // A change to finish or to make: a move asked for, a joint
            // configuration left by a leader that died, or a learner that
            // no move is making a voter (one whose move a leader deposed
            // since dropped).
            let unsettled = {
                let m = raft.metrics().borrow_watched().clone();
                let membership = m.membership_config.membership();
                membership.get_joint_config().len() > 1
                    || membership.nodes().count() != membership.voter_ids().count()
            };
            if may_change && (moving.is_some() || unsettled) {
                self.move_step(&raft, moving, &mut last_purge).await;
                continue;
            }
            let Some(lease) = serving() else {
                continue;
            };
            // Close a timestamp now and then (design §5): `CLOSE_LAG`
            // behind the clock, below the lease's expiry, and above nothing
            // this node may still write: its writes are made one at a time,
            // each with a timestamp from the oracle, which is ahead of the
            // clock.
            if now() >= last_close + CLOSE_EVERY {
                last_close = now();
                let c = self
                    .clock
                    .now_nanos()
                    .saturating_sub(CLOSE_LAG.as_nanos() as u64);
                if c > closed_view.get() && c < lease.expiry {
                    let closed = tokio::time::timeout(
                        WRITE_TIMEOUT,
                        raft.client_write(Command::ClosedTs(c)),
                    )
                    .await;
                    if let Ok(Ok(_)) = closed {
                        world.lock().unwrap().closes += 1;
                    }
                }
                continue;
            }
            if world.lock().unwrap().quiet {
                continue;
            }
            self.write(&raft, &lease, rng).await;
        }
        self.release(raft, reader).await
    }

    /// One write under `lease`, at a timestamp inside it (invariant 3),
    /// and what the harness checks of it once acknowledged.
    async fn write(&self, raft: &Raft, lease: &Lease, rng: &mut SmallRng) {
        let (id, world) = (self.id, &self.world);
        let ts = self.oracle.next();
        if ts >= lease.expiry {
            return;
        }
        let key = format!("k{:02}", rng.random_range(0..16)).into_bytes();
        let value = format!("node {id} ts {ts}").into_bytes();
        let command = Command::Write {
            commits: vec![Commit {
                ts,
                writes: vec![(key.clone(), Some(value.clone()))],
            }],
            closed_ts: None,
            meta: Vec::new(),
        };
        let proposed = now();
        if world.lock().unwrap().isolated_since.contains_key(&id) {
            world.lock().unwrap().proposed_alone += 1;
        }
        let Ok(Ok(response)) =
            tokio::time::timeout(WRITE_TIMEOUT, raft.client_write(command)).await
        else {
            return;
        };
        let log_id = to_log_id(&response.log_id);
        let mut w = world.lock().unwrap();
        if let Some(&since) = w.isolated_since.get(&id) {
            if since <= proposed {
                let v = format!(
                    "invariant 13: node {id} acknowledged the write at ts {ts} (log {}.{}), \
                     proposed at {proposed:?}, while cut off from every other node since {since:?}",
                    log_id.term, log_id.index
                );
                w.violations.push(v);
            }
        }
        let seen = *w.acked_at.entry(log_id.index).or_insert((log_id.term, ts));
        if seen != (log_id.term, ts) {
            let v = format!(
                "log matching: two acknowledged writes at log index {}: ts {} (term {}) and \
                 ts {ts} (term {})",
                log_id.index, seen.1, seen.0, log_id.term
            );
            w.violations.push(v);
        }
        let at = now();
        let per_key = w.acked_keys.entry(key.clone()).or_default();
        let highest = per_key.last().map_or(ts, |&(_, h)| h.max(ts));
        per_key.push((at, highest));
        // Invariant 5: no commit lands at or below a timestamp at which a
        // follower read has already been served without it.
        let mut moved = Vec::new();
        if let Some(seen) = w.follower_seen.get(&key) {
            for (&version, &read_at) in seen.range(..ts) {
                if ts <= read_at {
                    moved.push(format!(
                        "invariant 5: a write of {} at ts {ts} was acknowledged after a follower \
                         read at ts {read_at} saw the version at ts {version}",
                        String::from_utf8_lossy(&key)
                    ));
                }
            }
        }
        w.violations.extend(moved);
        w.acked_ts.entry(key.clone()).or_default().insert(ts);
        w.acks.push(Ack {
            node: id,
            key,
            ts,
            value,
            term: log_id.term,
            index: log_id.index,
        });
    }

    /// Whether this node is out of the group, as the product's replica
    /// placement finds out: its replica applied a configuration without
    /// it after one with it (`member`: whether one with it was applied
    /// since the group started here), or the leader told it so. Never
    /// while the leader is making it a member.
    fn out(&self, raft: &Raft, member: &mut bool) -> bool {
        let id = self.id;
        let m = raft.metrics().borrow_watched().clone();
        let membership = m.membership_config.membership();
        let config_applied = config_applied(&m);
        let counted = membership.nodes().any(|(n, _)| *n == id);
        *member |= config_applied && counted;
        let own = *member && config_applied && membership.get_joint_config().len() == 1 && !counted;
        let mut w = self.world.lock().unwrap();
        let joining = w.host_asked.contains_key(&id) || w.moving.is_some_and(|op| op.to == id);
        let out = (own || w.told_out.contains(&id)) && !joining;
        if out {
            let line = format!(
                "{:?} node {id}: out ({}), its membership {:?}",
                now(),
                if own {
                    "its own replica says so"
                } else {
                    "told so"
                },
                membership.get_joint_config()
            );
            w.trace.push(line);
        }
        out
    }

    /// Releases this node's replica, as the product does for a group it
    /// left: the group stops, the replica's state is deleted, then the
    /// group's log; after [`RELEASE_GRACE`] the replica's rows.
    async fn release(&self, raft: Raft, reader: tokio::task::JoinHandle<()>) -> turmoil::Result {
        let (id, world) = (self.id, &self.world);
        point(world, id, POINTS[6]).await;
        reader.abort();
        // An index known committed: the floor of the images the node's
        // replica takes if it is placed in the group again.
        let known = raft
            .metrics()
            .borrow_watched()
            .last_applied
            .map_or(0, |l| l.index);
        {
            let mut w = world.lock().unwrap();
            w.group_stopped(id);
            w.lease_views.remove(&id);
            w.closed_views.remove(&id);
            w.released.insert(id);
            w.discarding.insert(id);
            w.releasing.insert(id);
            w.releases += 1;
            let line = format!(
                "{:?} node {id}: out of the group, releases its replica",
                now()
            );
            w.trace.push(line);
        }
        self.groups.remove(GroupId(1));
        raft.shutdown().await?;
        drop(raft);
        // The replica first, then its log (but for its vote: the node may
        // be placed in the group again, and must not forget its term).
        let range = Replica::forget(&self.router, SplitId(1))?;
        self.log.clear_group(GroupId(1), known)?;
        point(world, id, POINTS[7]).await;
        tokio::time::sleep(RELEASE_GRACE).await;
        let keys = match range {
            Some(range) => Replica::discard_rows(&self.router, &range)?,
            None => 0,
        };
        let mut w = world.lock().unwrap();
        w.discards += 1;
        w.discarding.remove(&id);
        w.releasing.remove(&id);
        let line = format!("{:?} node {id}: discarded its replica ({keys} keys)", now());
        w.trace.push(line);
        Ok(())
    }

    /// Hands the group (led here) over to node `to`, as the product's
    /// lease balancer does: gives the lease up, ending it now (above
    /// every timestamp served under it), then makes `to` the leader.
    async fn hand_over(
        &self,
        raft: &Raft,
        keeper: &Mutex<LeaseKeeper>,
        lease_view: &LeaseView,
        handing: &AtomicBool,
        to: u64,
    ) {
        let (id, world) = (self.id, &self.world);
        if to == id || !voters_of(raft).contains(&to) {
            return;
        }
        handing.store(true, Ordering::SeqCst);
        // Every timestamp this node used came from its oracle: the next is
        // above them all.
        let until = self.oracle.next();
        let released = keeper.lock().unwrap().release(lease_view.get(), until);
        if let Some(lease) = released {
            let given_up =
                tokio::time::timeout(WRITE_TIMEOUT, raft.client_write(Command::Lease(lease))).await;
            if let Ok(Ok(_)) = given_up {
                keeper.lock().unwrap().applied(lease, lease_view.get());
                trace(
                    world,
                    format!("{:?} node {id}: gave up its lease: {lease}", now()),
                );
                point(world, id, POINTS[8]).await;
            }
        }
        let moved = transfer_leadership(raft, to, Duration::from_millis(1500)).await;
        let line = match &moved {
            Ok(()) => format!("{:?} node {id}: handed the group to node {to}", now()),
            Err(e) => format!("{:?} node {id}: handing the group to node {to}: {e}", now()),
        };
        {
            let mut w = world.lock().unwrap();
            w.trace.push(line);
            w.hand_overs += usize::from(moved.is_ok());
        }
        keeper.lock().unwrap().resume();
        handing.store(false, Ordering::SeqCst);
    }

    /// One step of the replica move `op`, if any, made by the group's leader as
    /// the product's replica placement does (`reconcile_group`): a joint
    /// configuration left by a leader that died is finished first; the
    /// leader never moves its own replica (it hands the group over
    /// first); the new member is asked to hold an empty replica, the log
    /// is purged up to a snapshot (so that it is sent an image, never the
    /// log from the start), and it joins as a learner; once caught up it
    /// replaces the old member among the voters.
    async fn move_step(&self, raft: &Raft, op: Option<Move>, last_purge: &mut Duration) {
        let (id, world) = (self.id, &self.world);
        let m = raft.metrics().borrow_watched().clone();
        let membership = m.membership_config.membership().clone();
        let voters: BTreeSet<u64> = membership.voter_ids().collect();
        let nodes: BTreeSet<u64> = membership.nodes().map(|(n, _)| *n).collect();
        let change = |change: ChangeMembers<u64, BasicNode>, what: String| async move {
            let done =
                tokio::time::timeout(WRITE_TIMEOUT, raft.change_membership(change, false)).await;
            if let Ok(Ok(_)) = done {
                trace(world, format!("{:?} node {id}: {what}", now()));
                true
            } else {
                false
            }
        };
        if let [.., last] = membership.get_joint_config().as_slice() {
            if membership.get_joint_config().len() > 1 {
                let last = last.clone();
                change(
                    ChangeMembers::ReplaceAllVoters(last.clone()),
                    format!("finished a change to voters {last:?}"),
                )
                .await;
                return;
            }
        }
        let Some(op) = op else {
            let learners: BTreeSet<u64> = nodes.difference(&voters).copied().collect();
            if !learners.is_empty() {
                change(
                    ChangeMembers::RemoveNodes(learners.clone()),
                    format!("learners {learners:?} left"),
                )
                .await;
            }
            return;
        };
        // Done; or moot, when both nodes vote (the move was asked for on
        // the view of a leader deposed since, whose successor's voters
        // are others).
        let done = !nodes.contains(&op.from);
        if voters.contains(&op.to) && (done || voters.contains(&op.from)) {
            let mut w = world.lock().unwrap();
            if w.moving == Some(op) {
                w.moving = None;
                w.moves += usize::from(done);
                w.host_asked.remove(&op.to);
                let line = format!(
                    "{:?} node {id}: {} {op:?}",
                    now(),
                    if done { "done" } else { "dropped, moot," }
                );
                w.trace.push(line);
            }
            return;
        }
        if op.from == id {
            let heir = voters.iter().copied().find(|&v| v != id && v != op.to);
            world.lock().unwrap().hand_over = heir;
            return;
        }
        let hosting = world.lock().unwrap().hosting.contains(&op.to);
        if !hosting {
            // Asked until it holds an empty replica (again, if a crash lost
            // the one it made).
            let applied = m.last_applied.map_or(0, |l| l.index);
            let mut w = world.lock().unwrap();
            let floor = w.host_asked.entry(op.to).or_default();
            *floor = (*floor).max(applied);
            return;
        }
        if !nodes.contains(&op.to) {
            point(world, id, POINTS[0]).await;
            if snapshot_and_purge(raft, WRITE_TIMEOUT).await.is_err() {
                return;
            }
            *last_purge = now();
            point(world, id, POINTS[1]).await;
            if change(
                ChangeMembers::AddNodes(BTreeMap::from([(op.to, member(op.to))])),
                format!("node {} joins as a learner", op.to),
            )
            .await
            {
                point(world, id, POINTS[2]).await;
            }
            return;
        }
        if !voters.contains(&op.to) {
            let matched = m
                .replication
                .as_ref()
                .and_then(|r| r.get(&op.to).cloned().flatten())
                .map(|l| l.index);
            // A member that awaits its image and acknowledged nothing: this
            // leader's log may still start at the group's start (it was
            // elected after the purge); purge it, as the product's leader
            // does for such a member.
            let awaits = world
                .lock()
                .unwrap()
                .images
                .get(&op.to)
                .is_some_and(ImageView::awaits);
            if matched.is_none() && awaits && now() >= *last_purge + Duration::from_secs(1) {
                *last_purge = now();
                let _ = snapshot_and_purge(raft, WRITE_TIMEOUT).await;
                return;
            }
            let last = m.last_log_index.unwrap_or(0);
            if matched.is_none_or(|matched| matched + 5 < last) {
                return;
            }
            let mut wanted = voters.clone();
            wanted.remove(&op.from);
            wanted.insert(op.to);
            if change(
                ChangeMembers::ReplaceAllVoters(wanted.clone()),
                format!("voters are now {wanted:?}"),
            )
            .await
            {
                point(world, id, POINTS[3]).await;
            }
            return;
        }
        // The new member votes and the old one is still a learner.
        change(
            ChangeMembers::RemoveNodes(BTreeSet::from([op.from])),
            format!("node {} left", op.from),
        )
        .await;
    }
}

/// A strong read at node `id` under `lease`, at timestamp `ts` from the
/// node's oracle: every key of the replica as of `ts`, which must show
/// every write acknowledged before the read began (design invariant 9,
/// with invariant 3 behind it: a holder assigns timestamps and serves only
/// inside its lease, and leases of different holders never overlap).
fn strong_read(world: &Shared, id: u64, router: &Router, lease: &Lease, ts: u64) {
    let began = now();
    let mut w = world.lock().unwrap();
    w.lease_reads += 1;
    let mut found = Vec::new();
    for (key, acked) in &w.acked_keys {
        let before = acked.partition_point(|&(at, _)| at < began);
        let Some(&(_, highest)) = before.checked_sub(1).and_then(|i| acked.get(i)) else {
            continue;
        };
        let seen = match version_ts(router, key, ts) {
            Ok(seen) => seen,
            Err(e) => {
                found.push(format!("node {id} could not read its replica: {e}"));
                continue;
            }
        };
        if seen < highest {
            found.push(format!(
                "invariant 9: node {id}, serving under {lease}, read {} as of ts {ts} at \
                 {began:?} and found ts {seen}, but ts {highest} was acknowledged before",
                String::from_utf8_lossy(key)
            ));
        }
    }
    for v in found {
        if !w.violations.contains(&v) {
            w.violations.push(v);
        }
    }
}

/// The commit timestamp of the version of `key` a read at `ts` finds on
/// `router` (written into every value), 0 if none.
fn version_ts(router: &Router, key: &[u8], ts: u64) -> rowtree_kv::Result<u64> {
    Ok(router.get(key, ts)?.map_or(0, |value| {
        String::from_utf8_lossy(&value)
            .rsplit(' ')
            .next()
            .and_then(|ts| ts.parse::<u64>().ok())
            .unwrap_or(0)
    }))
}

/// A follower read at node `id` at its replica's safe time `ts`: every key
/// of the replica as of `ts`, served without a lease. It must show, for
/// every key, the newest write acknowledged at or below `ts`, whenever it
/// was acknowledged (invariant 5: reads do not move; a write acknowledged
/// later at or below `ts` is caught when it is).
fn follower_read(world: &Shared, id: u64, router: &Router, ts: u64) {
    let mut w = world.lock().unwrap();
    w.follower_reads += 1;
    let mut found = Vec::new();
    for k in 0..16 {
        let key = format!("k{k:02}").into_bytes();
        let seen = match version_ts(router, &key, ts) {
            Ok(seen) => seen,
            Err(e) => {
                found.push(format!("node {id} could not read its replica: {e}"));
                continue;
            }
        };
        if let Some(missed) = w
            .acked_ts
            .get(&key)
            .filter(|_| seen < ts)
            .and_then(|acked| acked.range(seen + 1..=ts).next_back())
        {
            found.push(format!(
                "invariant 5: node {id}'s follower read of {} at its safe time {ts} found the \
                 version at ts {seen}, but a write at ts {missed} was acknowledged",
                String::from_utf8_lossy(&key)
            ));
        }
        let highest = w
            .follower_seen
            .entry(key)
            .or_default()
            .entry(seen)
            .or_insert(ts);
        *highest = (*highest).max(ts);
    }
    for v in found {
        if !w.violations.contains(&v) {
            w.violations.push(v);
        }
    }
}

// ---------------------------------------------------------------------
// The harness.

/// What one seed's run found.
struct Outcome {
    violations: Vec<String>,
    trace: Vec<String>,
    /// Acknowledged writes, crashes, and cuts made.
    acks: usize,
    proposed_alone: usize,
    /// Snapshots installed on replicas that had fallen behind.
    installed: u64,
    crashes: usize,
    cuts: usize,
    /// Strong reads served under leases, and leases taken.
    lease_reads: usize,
    /// Closed timestamps acknowledged, and follower reads served.
    closes: usize,
    follower_reads: usize,
    leases: usize,
    /// Leases taken over from another node's.
    lease_changes: usize,
    /// Replica moves done, releases begun, replicas discarded, handovers
    /// that moved the group, and crashes at each named step.
    moves: usize,
    releases: usize,
    discards: usize,
    hand_overs: usize,
    hits: BTreeMap<&'static str, usize>,
    /// A digest of what happened (acknowledged writes and leaders by
    /// term), to compare two plays of a seed.
    digest: u64,
}

struct Checks {
    leaders: BTreeMap<u64, u64>,
    memberships: BTreeMap<(u64, u64), String>,
}

impl Checks {
    fn step(&mut self, w: &mut World) {
        let mut found = Vec::new();
        let mut w_trace = Vec::new();
        for (&id, raft) in &w.nodes {
            let m = raft.metrics().borrow_watched().clone();
            if let Err(fatal) = &m.running_state {
                found.push(format!("node {id} stopped: {fatal}"));
            }
            if m.state == ServerState::Leader {
                if !self.leaders.contains_key(&m.current_term) {
                    let line = format!(
                        "{:?} node {id}: leads term {}, last log {:?}, membership {:?}",
                        now(),
                        m.current_term,
                        m.last_log_index,
                        m.membership_config.membership().get_joint_config()
                    );
                    w_trace.push(line);
                }
                let leader = *self.leaders.entry(m.current_term).or_insert(id);
                if leader != id {
                    found.push(format!(
                        "election safety: nodes {leader} and {id} both led term {}",
                        m.current_term
                    ));
                }
            }
            let membership = m.membership_config.membership();
            let is_voter = membership.voter_ids().any(|v| v == id);
            // A leader that removes itself leads on until its removal is
            // committed (and proposed it itself, in its own term); any
            // other non-voter must not stand or lead.
            let removing_itself = m.state == ServerState::Leader
                && m.membership_config
                    .log_id()
                    .is_some_and(|l| l.leader_id.term == m.current_term);
            if matches!(m.state, ServerState::Candidate | ServerState::Leader)
                && !is_voter
                && !removing_itself
            {
                found.push(format!(
                    "invariant 14: node {id} is {:?} in term {} but not a voter in its own \
                     membership {membership:?}",
                    m.state, m.current_term
                ));
            }
            if membership.get_joint_config().len() > 2 {
                found.push(format!(
                    "invariant 14: node {id} has more than one membership change in flight: \
                     {membership:?}"
                ));
            }
            if let Some(log_id) = m.membership_config.log_id() {
                let key = (log_id.leader_id.term, log_id.index);
                let shown = format!("{:?}", membership.get_joint_config());
                let known = self.memberships.entry(key).or_insert_with(|| shown.clone());
                if *known != shown {
                    found.push(format!(
                        "invariant 14: the membership at log {}.{} is {known} on one node and \
                         {shown} on node {id}",
                        key.0, key.1
                    ));
                }
            }
        }
        // Invariant 3: one chain of leases, each new holder's starting ε
        // after the lease before it expires.
        let applied: Vec<(u64, Lease)> = w
            .lease_views
            .iter()
            .filter_map(|(&id, view)| view.get().map(|l| (id, l)))
            .collect();
        for (id, lease) in applied {
            let known = *w.leases.entry(lease.seq).or_insert(lease);
            if known != lease {
                found.push(format!(
                    "invariant 3: node {id} applied {lease}, another node {known}"
                ));
            }
            let offset = LEASES.max_offset.as_nanos() as u64;
            if let Some(before) = w.leases.get(&(lease.seq - 1)) {
                if before.holder != lease.holder && lease.start < before.expiry + offset {
                    found.push(format!(
                        "invariant 3: {lease} starts less than ε after {before} expires"
                    ));
                }
            }
        }
        w.trace.extend(w_trace);
        for v in found {
            if !w.violations.contains(&v) {
                w.violations.push(v);
            }
        }
    }
}

fn simulate(seed: u64, plant: Plant) -> Outcome {
    simulate_armed(seed, plant, None)
}

/// [`simulate`], with every node armed from the start with crash point
/// `armed` if one is given (the nemesis arms more as it goes).
fn simulate_armed(seed: u64, plant: Plant, armed: Option<&'static str>) -> Outcome {
    let world: Shared = Arc::default();
    if let Some(armed) = armed {
        let mut w = world.lock().unwrap();
        w.points.arm(&NODES, armed);
        w.points.keep_armed = true;
    }
    let disks: BTreeMap<u64, (Arc<Disk>, Arc<Disk>)> = NODES
        .iter()
        .map(|&id| {
            let lying = plant == Plant::LyingDisk;
            (id, (Disk::new(lying), Disk::new(lying)))
        })
        .collect();
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .tick_duration(TICK)
        .simulation_duration(FAULTS + SETTLE + Duration::from_secs(5))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(8))
        .build();
    for &id in &NODES {
        let (log_disk, data_disk) = disks[&id].clone();
        let world = world.clone();
        sim.host(host(id), move || {
            node(
                id,
                seed,
                plant,
                log_disk.clone(),
                data_disk.clone(),
                world.clone(),
            )
        });
    }

    let mut rng = SmallRng::seed_from_u64(mix(seed, 0x6e656d65));
    let mut checks = Checks {
        leaders: BTreeMap::new(),
        memberships: BTreeMap::new(),
    };
    let mut nemesis = Nemesis::default();
    let mut next_fault = Duration::from_millis(rng.random_range(500..1500));
    let mut settled = false;
    // The crashes at named steps, the replica moves and the lease
    // handovers depend on how the tasks interleave (not seeded): what they
    // draw comes from generators of their own, so that the nemesis's own
    // faults stay the same ones at the same moments on a replay.
    let mut reactions = SmallRng::seed_from_u64(mix(seed, 0x72656163));
    let mut admin = SmallRng::seed_from_u64(mix(seed, 0x61646d69));
    let mut next_move = Duration::from_millis(admin.random_range(500..1500));
    let mut next_hand_over = Duration::from_millis(admin.random_range(500..2500));
    let mut next_tell = Duration::ZERO;

    while sim.elapsed() < FAULTS + SETTLE {
        if let Err(e) = sim.step() {
            world
                .lock()
                .unwrap()
                .violations
                .push(format!("a node's software failed: {e}"));
            break;
        }
        let t = sim.elapsed();
        checks.step(&mut world.lock().unwrap());
        if !world.lock().unwrap().violations.is_empty() {
            break;
        }

        // Nodes that reached the crash point they were armed with.
        let reached = std::mem::take(&mut world.lock().unwrap().points.crash_now);
        for (id, at) in reached {
            let back = t + Duration::from_millis(reactions.random_range(100..1500));
            trace(
                &world,
                format!("{t:?} node {id} crashes at {at:?}, until {back:?}"),
            );
            crash(&mut sim, &world, &disks, id, &mut reactions);
            nemesis.crashed(id, back);
        }

        // Replica moves, one at a time, each once the node the last one
        // took out has released its replica; and lease handovers.
        if t < FAULTS {
            let mut w = world.lock().unwrap();
            if t >= next_move && w.moving.is_none() {
                if let Some(voters) = settled_voters(&w).filter(|v| *v == w.hosting) {
                    let spare: Vec<u64> = NODES
                        .iter()
                        .copied()
                        .filter(|n| !voters.contains(n))
                        .collect();
                    let voters: Vec<u64> = voters.into_iter().collect();
                    let from = voters[admin.random_range(0..voters.len())];
                    let to = spare[admin.random_range(0..spare.len())];
                    let op = Move { from, to };
                    w.trace.push(format!("{t:?} ask for {op:?}"));
                    w.moving = Some(op);
                    // What it was told before no longer holds.
                    w.told_out.remove(&to);
                    next_move = t + Duration::from_millis(admin.random_range(500..2000));
                }
            }
            if t >= next_hand_over {
                next_hand_over = t + Duration::from_millis(admin.random_range(800..2500));
                let to = NODES[admin.random_range(0..NODES.len())];
                w.trace
                    .push(format!("{t:?} ask for a handover to node {to}"));
                w.hand_over = Some(to);
            }
        }
        // What the leader tells a node that asks whether it is still a
        // member (the product's `Locate`), every 200 ms: a node whose group
        // runs, not the one a move makes a member, that the applied
        // configuration of the node leading in the latest term leaves out,
        // that applied no further than it, and that can reach it.
        if t >= next_tell {
            next_tell = t + Duration::from_millis(200);
            let mut w = world.lock().unwrap();
            if let Some((leader, nodes)) = leader_members(&w) {
                let joining = w.moving.map(|op| op.to);
                // As the node process counts it: the answer of a leader
                // that applied at least as far as the asker.
                let applied = |n: &u64| {
                    w.nodes
                        .get(n)
                        .and_then(|r| r.metrics().borrow_watched().last_applied)
                        .map_or((0, 0), |l| (l.leader_id.term, l.index))
                };
                let out: Vec<u64> = w
                    .hosting
                    .iter()
                    .copied()
                    .filter(|&n| !nodes.contains(&n) && Some(n) != joining)
                    .filter(|n| applied(n) <= applied(&leader))
                    .filter(|&n| !nemesis.cuts.links.contains_key(&pair(n, leader)))
                    .filter(|n| !w.told_out.contains(n))
                    .collect();
                for n in out {
                    w.trace.push(format!(
                        "{t:?} node {leader}, leading, tells node {n} it is out of {nodes:?}"
                    ));
                    w.told_out.insert(n);
                }
            }
        }

        // Restarts and heals that are due.
        for line in nemesis.recover(&mut sim, t) {
            trace(&world, line);
        }

        if t < FAULTS && t >= next_fault {
            next_fault = t + Duration::from_millis(rng.random_range(300..1500));
            // Who is down depends on the crashes at named steps too: the
            // draws below do not (a node drawn is crashed if it is up).
            match rng.random_range(0..100) {
                // One node crashes.
                0..=24 => {
                    let id = NODES[rng.random_range(0..NODES.len())];
                    let back = t + Duration::from_millis(rng.random_range(100..3000));
                    nemesis.crash_drawn(
                        id,
                        t,
                        back,
                        |line| trace(&world, line),
                        || crash(&mut sim, &world, &disks, id, &mut reactions),
                    );
                }
                // A power failure: every node crashes at once.
                25..=30 => {
                    trace(&world, format!("{t:?} power failure"));
                    for &id in &NODES {
                        let back = t + Duration::from_millis(rng.random_range(100..1500));
                        if !nemesis.down.contains_key(&id) {
                            crash(&mut sim, &world, &disks, id, &mut reactions);
                            nemesis.crashed(id, back);
                        }
                    }
                }
                // One node is cut off from all others: half the time the
                // leader, which then goes on serving under its lease
                // while the others elect a new one.
                31..=59 => {
                    let leader = world.lock().unwrap().nodes.iter().find_map(|(&id, raft)| {
                        (raft.metrics().borrow_watched().state == ServerState::Leader).then_some(id)
                    });
                    // Both draws are made either way, so that the
                    // nemesis's sequence does not depend on who leads.
                    let (pick_leader, any) = (
                        rng.random_bool(0.5),
                        NODES[rng.random_range(0..NODES.len())],
                    );
                    let (id, whom) = match leader {
                        Some(leader) if pick_leader => (leader, "the leader, "),
                        None if pick_leader => (any, "the leader, there is none, so "),
                        _ => (any, ""),
                    };
                    let line = nemesis.isolate(&mut sim, &mut rng, t, id, &NODES, 4000, whom);
                    trace(&world, line);
                }
                // One link is cut.
                60..=72 => {
                    if let Some(line) = nemesis.cut_link(&mut sim, &mut rng, t, &NODES, 3000) {
                        trace(&world, line);
                    }
                }
                // Every node is armed to crash at a step of a move, a
                // release or a handover: the next to reach it stops there.
                73..=87 => {
                    let at = POINTS[rng.random_range(0..POINTS.len())];
                    trace(&world, format!("{t:?} arm every node to crash at {at:?}"));
                    world.lock().unwrap().points.arm(&NODES, at);
                }
                // The network slows down.
                _ => {
                    let line = nemesis.slow(&mut sim, &mut rng, t, 500..3000);
                    trace(&world, line);
                }
            }
        }
        // Who is cut off now, after this step's faults, heals and restarts.
        isolation(&world, &nemesis.cuts, &nemesis.down, t);

        if t >= FAULTS {
            if !world.lock().unwrap().quiet {
                trace(&world, format!("{t:?} faults stop"));
                {
                    let mut w = world.lock().unwrap();
                    w.quiet = true;
                    w.points.faults_stop();
                }
                nemesis.stop(&mut sim);
                isolation(&world, &nemesis.cuts, &nemesis.down, t);
            }
            if settled_now(&world.lock().unwrap(), &disks) {
                settled = true;
                break;
            }
        }
    }

    let mut w = world.lock().unwrap();
    if w.violations.is_empty() && !settled {
        let state = describe(&w);
        w.violations.push(format!(
            "liveness: the group did not settle within {SETTLE:?} after the faults stopped: {state}"
        ));
    }
    if w.violations.is_empty() {
        durability(&mut w, &disks);
    }
    let mut digest = 0u64;
    for ack in &w.acks {
        digest = mix(digest, mix(mix(ack.node, ack.index), mix(ack.term, ack.ts)));
    }
    for (term, leader) in &checks.leaders {
        digest = mix(digest, mix(*term, *leader));
    }
    let outcome = Outcome {
        violations: w.violations.clone(),
        trace: w.trace.clone(),
        acks: w.acks.len(),
        proposed_alone: w.proposed_alone,
        installed: w.snapshots.iter().map(|c| c.installed()).sum(),
        crashes: nemesis.crashes,
        cuts: nemesis.cut_count,
        lease_reads: w.lease_reads,
        closes: w.closes,
        follower_reads: w.follower_reads,
        leases: w.leases.len(),
        lease_changes: w
            .leases
            .values()
            .filter(|l| {
                w.leases
                    .get(&(l.seq + 1))
                    .is_some_and(|next| next.holder != l.holder)
            })
            .count(),
        moves: w.moves,
        releases: w.releases,
        discards: w.discards,
        hand_overs: w.hand_overs,
        hits: w.points.hits.clone(),
        digest,
    };
    // The nodes' tasks end with the simulation, outside any lock.
    w.nodes.clear();
    drop(w);
    drop(sim);
    outcome
}

fn crash(
    sim: &mut turmoil::Sim<'_>,
    world: &Shared,
    disks: &BTreeMap<u64, (Arc<Disk>, Arc<Disk>)>,
    id: u64,
    rng: &mut SmallRng,
) {
    let raft = {
        let mut w = world.lock().unwrap();
        w.releasing.remove(&id);
        w.up.remove(&id);
        w.group_stopped(id)
    };
    drop(raft);
    sim.crash(host(id));
    let (log_disk, data_disk) = &disks[&id];
    log_disk.crash(rng);
    data_disk.crash(rng);
}

/// Records which running nodes are cut off from every other node.
fn isolation(world: &Shared, cuts: &Cuts, down: &BTreeMap<u64, Duration>, t: Duration) {
    let mut w = world.lock().unwrap();
    for &id in &NODES {
        let alone = !down.contains_key(&id)
            && NODES
                .iter()
                .all(|&other| other == id || cuts.links.contains_key(&pair(id, other)));
        if alone {
            w.isolated_since.entry(id).or_insert(t);
        } else {
            w.isolated_since.remove(&id);
        }
    }
}

/// The voters of the group, if one node leads it with a configuration of
/// one voter set, applied, that has every member voting (no learner).
fn settled_voters(w: &World) -> Option<BTreeSet<u64>> {
    let (leader, nodes) = leader_members(w)?;
    let voters = voters_of(&w.nodes[&leader]);
    (voters == nodes).then_some(voters)
}

/// The node leading the group in the latest term (one taken out may
/// still think it leads an earlier one) and its members, voters and
/// learners, if its configuration is one voter set and applied there.
fn leader_members(w: &World) -> Option<(u64, BTreeSet<u64>)> {
    let (id, m) = w
        .nodes
        .iter()
        .map(|(&id, raft)| (id, raft.metrics().borrow_watched().clone()))
        .filter(|(_, m)| m.state == ServerState::Leader)
        .max_by_key(|(_, m)| m.current_term)?;
    let membership = m.membership_config.membership();
    (config_applied(&m) && membership.get_joint_config().len() == 1)
        .then(|| (id, membership.nodes().map(|(n, _)| *n).collect()))
}

/// The voters of the membership `raft`'s node goes by.
fn voters_of(raft: &Raft) -> BTreeSet<u64> {
    raft.metrics()
        .borrow_watched()
        .membership_config
        .membership()
        .voter_ids()
        .collect()
}

/// Whether the node whose metrics are `m` has applied the membership it
/// goes by (so it is committed).
fn config_applied(m: &openraft::RaftMetrics<TypeConfig>) -> bool {
    let applied = m.last_applied.map_or(0, |l| l.index);
    m.membership_config
        .log_id()
        .is_some_and(|l| l.index <= applied)
}

/// Whether the group has settled: no move under way, one leader whose
/// voters all run and have applied what it has, every acknowledged write
/// at or below that, every node running, and no group running on a node
/// that is not a voter, nor a replica held there (a node taken out has
/// released its replica, and discarded it).
fn settled_now(w: &World, disks: &BTreeMap<u64, (Arc<Disk>, Arc<Disk>)>) -> bool {
    if w.moving.is_some()
        || !w.releasing.is_empty()
        || settled_voters(w).is_none_or(|voters| voters != w.hosting)
    {
        return false;
    }
    let leaders: Vec<_> = w
        .nodes
        .values()
        .map(|raft| raft.metrics().borrow_watched().clone())
        .filter(|m| m.state == ServerState::Leader)
        .collect();
    let [leader] = leaders.as_slice() else {
        return false;
    };
    let membership = leader.membership_config.membership();
    if membership.get_joint_config().len() != 1 || leader.last_applied.is_none() {
        return false;
    }
    let applied = leader.last_applied;
    let acked = w.acks.iter().map(|a| a.index).max().unwrap_or(0);
    if applied.map(|a| a.index) < Some(acked) || leader.last_log_index != applied.map(|a| a.index) {
        return false;
    }
    let caught_up = membership.voter_ids().all(|v| {
        w.nodes
            .get(&v)
            .is_some_and(|raft| raft.metrics().borrow_watched().last_applied == applied)
    });
    // Every node runs, and one whose group does not run holds no replica
    // (one restarted a moment ago may not have started it yet).
    caught_up
        && NODES.iter().all(|id| {
            w.up.contains(id)
                && (w.hosting.contains(id) || {
                    let data: Arc<dyn Engine> = disks[id].1.clone();
                    let router = Router::new(Mvcc::new(data), SplitMap::new());
                    Replica::stored_splits(&router).is_ok_and(|s| s.is_empty())
                })
        })
}

fn describe(w: &World) -> String {
    let mut out = String::new();
    for (id, raft) in &w.nodes {
        let m = raft.metrics().borrow_watched().clone();
        let _ = write!(
            out,
            "[node {id}: {:?} term {} leader {:?} applied {:?} last log {:?} membership {:?}] ",
            m.state,
            m.current_term,
            m.current_leader,
            m.last_applied.map(|l| (l.leader_id.term, l.index)),
            m.last_log_index,
            m.membership_config.membership().get_joint_config()
        );
    }
    let _ = write!(
        out,
        "move under way {:?}, groups running on {:?}, told out {:?}, asked to host {:?}, up {:?}",
        w.moving, w.hosting, w.told_out, w.host_asked, w.up
    );
    out
}

/// Invariants 6 and 16, once settled: every acknowledged write is in
/// every voter's data, and the voters store the same bytes; and a node
/// taken out of the group keeps no replica of the split (nor its rows,
/// unless it crashed while deleting them).
fn durability(w: &mut World, disks: &BTreeMap<u64, (Arc<Disk>, Arc<Disk>)>) {
    let leader = w
        .nodes
        .values()
        .map(|raft| raft.metrics().borrow_watched().clone())
        .find(|m| m.state == ServerState::Leader)
        .expect("settled with a leader");
    let voters: Vec<u64> = leader.membership_config.membership().voter_ids().collect();
    // The first voter read, and what it stores.
    let mut first: Option<(u64, Vec<Pair>)> = None;
    let mut found = Vec::new();
    for &voter in &voters {
        let data: Arc<dyn Engine> = disks[&voter].1.clone();
        let router = Router::new(Mvcc::new(data), SplitMap::new());
        for ack in &w.acks {
            let got = router.get(&ack.key, ack.ts).unwrap();
            if got.as_deref() != Some(&ack.value[..]) {
                found.push(format!(
                    "invariant 6: node {voter} lost the write acknowledged by node {} at ts {} \
                     (log {}.{}): it reads {:?}",
                    ack.node,
                    ack.ts,
                    ack.term,
                    ack.index,
                    got.map(|v| String::from_utf8_lossy(&v).into_owned())
                ));
                break;
            }
        }
        let stored: Vec<_> = router
            .scan_stored(b"k", Some(b"l"))
            .map(|r| r.unwrap())
            .collect();
        match &first {
            None => first = Some((voter, stored)),
            Some((other, theirs)) if *theirs != stored => found.push(format!(
                "invariant 16: voters {other} and {voter} store different data ({} and {} \
                 versions)",
                theirs.len(),
                stored.len()
            )),
            Some(_) => {}
        }
    }
    for &id in NODES.iter().filter(|id| !voters.contains(id)) {
        let data: Arc<dyn Engine> = disks[&id].1.clone();
        let router = Router::new(Mvcc::new(data), SplitMap::new());
        let splits = Replica::stored_splits(&router).unwrap();
        if !splits.is_empty() {
            found.push(format!(
                "node {id}, out of the group, still holds a replica of {splits:?}"
            ));
        }
        let rows = router.scan_stored(b"k", Some(b"l")).count();
        if rows > 0 && !w.discarding.contains(&id) {
            found.push(format!(
                "node {id}, out of the group, still stores {rows} versions of its rows"
            ));
        }
    }
    w.violations.extend(found);
}

// ---------------------------------------------------------------------
// The tests.

/// Plays `seeds` and fails with every seed that broke an invariant.
fn play(seeds: impl IntoIterator<Item = u64>, plant: Plant, verbose: bool) {
    let (mut played, mut acks, mut alone, mut crashes, mut cuts) = (0, 0, 0, 0, 0);
    let (mut installed, mut reads, mut leases, mut changes) = (0, 0, 0, 0);
    let (mut closes, mut follower_reads) = (0, 0);
    let (mut moves, mut releases, mut discards, mut hand_overs) = (0, 0, 0, 0);
    let mut hits: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for seed in seeds {
        let outcome = simulate(seed, plant);
        if verbose {
            for line in &outcome.trace {
                eprintln!("{line}");
            }
            eprintln!(
                "seed {seed}: {} acknowledged writes, digest {:016x}",
                outcome.acks, outcome.digest
            );
        }
        played += 1;
        acks += outcome.acks;
        alone += outcome.proposed_alone;
        installed += outcome.installed;
        crashes += outcome.crashes;
        cuts += outcome.cuts;
        reads += outcome.lease_reads;
        closes += outcome.closes;
        follower_reads += outcome.follower_reads;
        leases += outcome.leases;
        changes += outcome.lease_changes;
        moves += outcome.moves;
        releases += outcome.releases;
        discards += outcome.discards;
        hand_overs += outcome.hand_overs;
        for (point, n) in outcome.hits {
            *hits.entry(point).or_default() += n;
        }
        if !outcome.violations.is_empty() {
            failures.push(format!(
                "seed {seed} (replay: ROWTREE_SIM_SEED={seed}): {}",
                outcome.violations.join("; ")
            ));
        }
    }
    eprintln!(
        "{played} seeds: {acks} acknowledged writes, {alone} writes proposed by a leader cut \
         off from all others, {installed} snapshots installed, {crashes} crashes, {cuts} cuts, \
         {leases} leases ({changes} taken over from another node), {reads} strong reads under \
         a lease, {closes} timestamps closed, {follower_reads} follower reads, {moves} replica \
         moves, {releases} releases, {discards} replicas discarded, {hand_overs} handovers, \
         crashes at named steps: {hits:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The runs did something: runs without acknowledged writes or faults
    // would check nothing. The bounds are floors, not expectations: a seed
    // plays in real time, and on a loaded machine moves, handovers and
    // crashes take a larger share of it (a CI run of seeds 32 to 47 saw 850
    // acknowledged writes and 316 closed timestamps, a quiet one 875 and
    // 332), so they sit at about a third of what a loaded run reaches.
    assert!(acks > played * 20, "only {acks} acknowledged writes");
    assert!(crashes > 0 && cuts > 0, "{crashes} crashes, {cuts} cuts");
    assert!(alone > 0, "no leader was ever cut off while writing");
    assert!(installed > 0, "no replica caught up by a snapshot");
    assert!(
        changes > played,
        "leases changed hands only {changes} times"
    );
    assert!(reads > played * 100, "only {reads} strong reads");
    assert!(closes > played * 8, "only {closes} timestamps closed");
    assert!(
        follower_reads > played * 200,
        "only {follower_reads} follower reads"
    );
    assert!(
        moves >= played && releases >= played / 2 && discards > 0,
        "{moves} replica moves, {releases} releases, {discards} discards"
    );
    assert!(hand_overs >= played, "only {hand_overs} handovers");
    assert!(
        hits.values().sum::<usize>() > 0,
        "no node crashed at a named step"
    );
}

// CI plays seeds 0 to 63, in four tests that the test harness runs in
// parallel.

#[test]
fn one_group_keeps_its_invariants_seeds_0_to_15() {
    play(0..16, Plant::Nothing, false);
}

#[test]
fn one_group_keeps_its_invariants_seeds_16_to_31() {
    play(16..32, Plant::Nothing, false);
}

#[test]
fn one_group_keeps_its_invariants_seeds_32_to_47() {
    play(32..48, Plant::Nothing, false);
}

#[test]
fn one_group_keeps_its_invariants_seeds_48_to_63() {
    play(48..64, Plant::Nothing, false);
}

/// Plays the seeds the environment names, with each seed's trace:
/// `ROWTREE_SIM_SEED=n` or `ROWTREE_SIM_SEEDS=a..b`, and
/// `ROWTREE_SIM_PLANT=lying-disk` for disks that ignore fsync,
/// `ROWTREE_SIM_PLANT=early-lease` for leases used before they start.
#[test]
#[ignore = "plays the seeds named by ROWTREE_SIM_SEED or ROWTREE_SIM_SEEDS"]
fn replay() {
    let seeds: Vec<u64> = if let Ok(seed) = std::env::var("ROWTREE_SIM_SEED") {
        vec![seed.parse().expect("ROWTREE_SIM_SEED is a number")]
    } else if let Ok(range) = std::env::var("ROWTREE_SIM_SEEDS") {
        let (a, b) = range
            .split_once("..")
            .expect("ROWTREE_SIM_SEEDS is a range a..b");
        (a.parse().unwrap()..b.parse().unwrap()).collect()
    } else {
        panic!("set ROWTREE_SIM_SEED=n or ROWTREE_SIM_SEEDS=a..b");
    };
    play(seeds, Plant::from_env(), true);
}

/// The planted bug: with disks that ignore fsync, an acknowledged write is
/// lost (a later write takes its place in the log, a voter lacks it, or a
/// strong read misses it) within the first 32 seeds (the search stops at
/// the first). Other failures that such disks cause (a node that finds its
/// replica behind its purged log and refuses to start) do not count here:
/// the check must see the loss itself.
#[test]
fn the_simulator_finds_a_disk_that_ignores_fsync() {
    find_planted(Plant::LyingDisk, 32, "disks that ignore fsync", |v| {
        v.starts_with("invariant 6")
            || v.starts_with("invariant 16")
            || v.starts_with("invariant 9")
            || v.starts_with("log matching")
    });
}

/// Plays seeds `0..seeds` with `plant` until one finds a violation that
/// `found` accepts (the search stops there); fails if none does.
fn find_planted(plant: Plant, seeds: u64, what: &str, found: impl Fn(&str) -> bool) {
    let mut tried = Vec::new();
    for seed in 0..seeds {
        let outcome = simulate(seed, plant);
        if let Some(v) = outcome.violations.iter().find(|v| found(v)) {
            eprintln!("with {what}, seed {seed} found: {v}");
            return;
        }
        tried.push((seed, outcome.violations));
    }
    panic!("{seeds} seeds with {what} found nothing of what they should: {tried:?}");
}

#[test]
fn a_seed_plays_the_same_faults_again() {
    // Who leads at a given moment depends on how the tasks of a step
    // interleave, which is not seeded (see the module docs): the nemesis
    // must choose to isolate the leader at the same moments, but the
    // leader it finds may be another node. The crashes at named steps,
    // the moves and the handovers (and so who is down when the nemesis
    // draws a node to crash) depend on it too; the nemesis's own faults
    // must not.
    let faults = |outcome: Outcome| nemesis_faults(outcome.trace, "the leader, ", " until ");
    let a = faults(simulate(3, Plant::Nothing));
    let b = faults(simulate(3, Plant::Nothing));
    assert!(a.len() > 5, "{a:?}");
    assert_eq!(a, b);
}

/// Every crash point is reached, and the group survives a crash there
/// with its invariants: the `i`th point is armed on every node from the
/// start of seeds `200 + 8i` onwards (and stays armed once the faults
/// stop), until a run reaches it (one of eight must); every run played
/// must keep every invariant.
#[test]
fn a_node_crashing_at_each_step_of_a_move_or_a_handover_breaks_nothing() {
    let failures = every_point_reached(
        &POINTS,
        |_| false,
        |i| 200 + 8 * i as u64,
        8,
        |at, seed| {
            let outcome = simulate_armed(seed, Plant::Nothing, Some(at));
            let hit = outcome.hits.get(at).copied().unwrap_or(0);
            (outcome.violations, hit, outcome.acks)
        },
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The second planted bug: a node that serves under a new lease as soon as
/// its entry is applied, without waiting for its clock to reach the
/// lease's start. A partition leaves the old holder serving strong reads
/// until its lease runs out, while the new holder already acknowledges
/// writes: a strong read misses an acknowledged write (invariant 9) within
/// the first 200 seeds (the search stops at the first).
#[test]
fn the_simulator_finds_a_lease_used_before_it_starts() {
    find_planted(Plant::EarlyLease, 200, "leases used early", |v| {
        v.starts_with("invariant 9")
    });
}

/// The third planted bug: a replica that takes its safe time from its
/// clock, as if every timestamp the leader closed on schedule had reached
/// it, and serves follower reads there. A replica cut off or slowed down
/// serves a read that misses an acknowledged write, or a write lands below
/// a read already served (invariant 5), within the first 32 seeds (the
/// search stops at the first).
#[test]
fn the_simulator_finds_a_follower_read_above_the_safe_time() {
    find_planted(
        Plant::ClockSafeTime,
        32,
        "a safe time read off the clock",
        |v| v.starts_with("invariant 5"),
    );
}
