//! A hosted database's split groups on this node: the groups it opens
//! with the database, the ones a split makes while it serves, and the
//! per-database tasks that keep them led together and their timestamps
//! closed.
//!
//! A database starts as one split over its whole key space, whose Raft
//! group has the id the registry gave the database. Its commits go through
//! a [`SplitGroups`] (the `raft::groups` module), which routes each commit
//! to the group of its keys and commits the ones that span groups in two
//! phases. When the database's split manager cuts a split (a load or size
//! split, a manual split point), the group's leader proposes a `SplitAt`
//! entry; every replica applies it, shrinking to the left half and writing
//! the right half's replica in the same batch, and tells this module
//! through its split observer. Here, on every node holding a replica, the
//! left group's commits adopt the smaller range at once, and the right
//! half gets a group of its own: a Raft instance whose id is the new
//! split's id (drawn at or above 2^32, so it meets no database's id), its
//! log started identically on every voter of the old group with the same
//! voters, so no election is needed to agree on who holds it.
//!
//! A node that restarts reopens every split its engine holds a replica of
//! ([`crate::Replica::stored_splits`]): the split's descriptor and state
//! are in the engine, written by the entry that made it, so a crash
//! between applying a split and making its group loses nothing; the
//! group's instance then learns its log from the other voters.
//!
//! A database's cold groups are led by one node, its hot ones spread by
//! load (see `raft::groups` and `node::leases`): [`tend`] runs on every
//! replica's node, balances the leases of the groups this node leads
//! every [`GATHER_EVERY`], and closes the timestamps of the groups it
//! leads. Each node keeps the load history of the splits it led; on the
//! node leading the first split, which answers `SPANNER_SYS` and the key
//! visualizer, [`tend`] also gathers the other nodes' histories.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use openraft::BasicNode;
use rowtree_db::{Database, WeakDatabase};
use rowtree_kv::{Replication, Router, SplitId};
use rowtree_txn::Clock;

use super::api::{NodeClient, StatusRequest};
use super::leases::{Done, LeaseBalancer};
use super::status::ClusterStatus;
use super::{NodeError, Shared};
use crate::lease::LeaseRules;
use crate::raft::{
    decode_membership, split_group_config, AppliedProbe, GroupCommits, GroupId, GroupRaft,
    LogStore, ReplicaMachine, SplitGroups,
};
use crate::{Descriptor, MergeObserver, Replica, SplitObserver};

/// How long a voter that won the election of a new split's group waits to
/// take its lease before handing the group to the node that cut the split
/// ([`DatabaseGroups::make`]).
const CUTTER_WAIT: Duration = Duration::from_secs(5);

/// How long a commit or read waits for the group: for a majority, or for
/// an election's outcome.
pub const GROUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The one split of a database's group: its whole key space.
pub fn whole_database() -> Descriptor {
    Descriptor {
        split: SplitId(1),
        start: Vec::new(),
        limit: None,
        epoch: 1,
    }
}

/// How often a leader closes timestamps on a database it commits to.
pub const CLOSE_EVERY: Duration = Duration::from_millis(200);

/// How often a leader closes timestamps on a database that had no commits
/// since it last did: each round writes a log entry on every replica (and
/// keeps the lease), which an idle database need not pay five times a
/// second.
pub const IDLE_CLOSE_EVERY: Duration = Duration::from_secs(1);

/// How often a node balances the leases of the groups it leads (hot ones
/// to less loaded nodes, cold ones to the database's first split's
/// leader; `node::leases`).
pub const GATHER_EVERY: Duration = Duration::from_millis(200);

/// The Raft group of split `split` of the database whose registry group is
/// `database`: the database's own id for its first split (the one it was
/// created with), the split's id for the splits cut from it.
pub fn raft_group(database: u64, split: SplitId) -> GroupId {
    if split == whole_database().split {
        GroupId(database)
    } else {
        GroupId(split.0)
    }
}

/// What this node needs to run a database's split groups: at opening, and
/// whenever one of its replicas applies a split.
pub(super) struct DatabaseGroups {
    /// The node (weak: the node's tables hold this).
    pub(super) shared: Weak<Shared>,
    pub(super) log: Arc<LogStore>,
    pub(super) runtime: tokio::runtime::Handle,
    /// The database's group in the registry (its first split's group).
    pub(super) database: u64,
    /// The database's name, for the status.
    pub(super) name: String,
    pub(super) rules: LeaseRules,
    pub(super) clock: Arc<dyn Clock>,
    /// The database's router: the replicas apply to its engine.
    pub(super) router: Arc<Router>,
    pub(super) db: WeakDatabase,
    /// The database's commits through its groups.
    pub(super) groups: Arc<SplitGroups>,
    /// Held while a split's group is made here.
    pub(super) making: tokio::sync::Mutex<()>,
    /// Replica moves the lease balancer asked for, by split: replace
    /// voter `.0` by host `.1`, asked at `.2` (carried out by
    /// `node::databases::replicas`, given up after `replicas::MOVE_GIVEN_UP`).
    pub(super) moves: parking_lot::Mutex<BTreeMap<SplitId, (u64, u64, std::time::Instant)>>,
    /// Members of the groups led here that have acknowledged none of the
    /// group's log, by split and node, since when (or since they were
    /// last given the split back: `node::databases::replicas`).
    pub(super) unmatched: parking_lot::Mutex<BTreeMap<(SplitId, u64), std::time::Instant>>,
    /// The locks this node holds for transactions run by other nodes
    /// (`node::participant`).
    pub(super) proxies: super::proxies::Proxies,
}

/// Whether the ranges of `a` and `b` share a key.
pub(super) fn overlaps(a: &Descriptor, b: &Descriptor) -> bool {
    let below =
        |start: &[u8], limit: &Option<Vec<u8>>| limit.as_ref().is_none_or(|l| start < l.as_slice());
    below(&a.start, &b.limit) && below(&b.start, &a.limit)
}

impl DatabaseGroups {
    /// The commits of a split's group on this node, not yet started.
    pub(super) fn commits(&self, descriptor: Descriptor) -> Arc<GroupCommits> {
        let shared = self.shared.upgrade();
        let node = shared.as_ref().map_or(0, |s| s.id);
        Arc::new(GroupCommits::new(
            node,
            descriptor,
            self.rules,
            self.clock.clone(),
            self.runtime.clone(),
            GROUP_TIMEOUT,
        ))
    }

    /// The Raft ids of the database's groups, in key order, with their
    /// commits.
    pub(super) fn rafts(&self) -> Vec<(u64, Arc<GroupCommits>)> {
        self.groups
            .groups()
            .into_iter()
            .map(|g| (raft_group(self.database, g.split_id()).0, g))
            .collect()
    }

    /// Runs `replica` in its group's Raft instance on this node: its
    /// observers set (applied commit timestamps and schema changes to the
    /// database, splits to this module), registered with the node and its
    /// peer port, and `commits` started on it.
    pub(super) async fn run(
        self: &Arc<Self>,
        replica: Replica,
        commits: &Arc<GroupCommits>,
    ) -> Result<GroupRaft, NodeError> {
        let shared = self
            .shared
            .upgrade()
            .ok_or_else(|| NodeError::Raft("the node is stopping".into()))?;
        let split = replica.descriptor().split;
        let gid = raft_group(self.database, split);
        let db = self.db.clone();
        let replica = replica
            .with_observer(Arc::new(move |ts| {
                if let Some(db) = db.upgrade() {
                    db.observe_applied(ts);
                }
            }))
            .with_meta_observer(schema_follower(self.db.clone(), self.runtime.clone()))
            .with_split_observer(self.split_observer())
            .with_merge_observer(self.merge_observer());
        commits.watch_frozen(replica.frozen_view());
        commits.watch_image(replica.image_view());
        let image = replica.image_view();
        // A replica awaiting an image starts from an empty log: one left
        // by an earlier replica of the split here (released, its log's
        // removal cut short by a crash) holds entries this one must not
        // apply. The replica applies nothing before its image, so its own
        // log holds nothing yet that matters. The vote stays (Raft's term
        // is never forgotten), and so does the image floor the log store
        // kept of the group, if this node left it before: the replica
        // refuses images older than that.
        if image.awaits() {
            let floor = self
                .log
                .clear_group(gid, 0)
                .and_then(|_| self.log.image_floor(gid))
                .map_err(|e| NodeError::Raft(format!("group {}: clearing its log: {e}", gid.0)))?;
            image.raise_floor(floor);
        }
        let (leases, closed, prepared) = (
            replica.lease_view(),
            replica.closed_view(),
            replica.prepared_view(),
        );
        let raft = GroupRaft::new(
            shared.id,
            split_group_config(shared.snapshot_every),
            shared.peers.group(gid),
            self.log.group(gid),
            ReplicaMachine::new(replica),
        )
        .await
        .map_err(|e| NodeError::Raft(format!("group {}: {e}", gid.0)))?;
        shared.groups.watch_image(gid, image);
        shared.groups.insert(gid, raft.clone());
        shared.hosted.lock().insert(gid.0, raft.clone());
        shared.commits.lock().insert(gid.0, commits.clone());
        commits
            .start(raft.clone(), leases, closed, prepared)
            .map_err(|_| NodeError::Raft(format!("group {} was started twice", gid.0)))?;
        Ok(raft)
    }

    /// What the database's replicas call when they apply a split: the left
    /// group's commits shrink at once, and the right half's group is made
    /// on the node's runtime ([`DatabaseGroups::make`]).
    fn split_observer(self: &Arc<Self>) -> SplitObserver {
        let this = Arc::downgrade(self);
        Arc::new(move |left, right, membership| {
            let Some(this) = this.upgrade() else {
                return;
            };
            // The node leading the split being cut: the new group's
            // leadership goes to it (below).
            let cutter = this
                .groups
                .groups()
                .iter()
                .find(|g| g.split_id() == left.split)
                .and_then(|g| g.current_leader());
            this.groups.adopt_split(left);
            let voters = membership
                .and_then(|m| match decode_membership(m) {
                    Ok(m) => Some(m),
                    Err(e) => {
                        tracing::warn!(error = %e, "a split's group membership");
                        None
                    }
                })
                .map(|m| {
                    let nodes: BTreeMap<u64, BasicNode> =
                        m.nodes().map(|(id, n)| (*id, n.clone())).collect();
                    m.voter_ids()
                        .filter_map(|id| nodes.get(&id).map(|n| (id, n.clone())))
                        .collect()
                })
                .unwrap_or_default();
            let right = right.clone();
            let runtime = this.runtime.clone();
            runtime.spawn(async move {
                if let Err(e) = this.make(&right, voters, cutter).await {
                    tracing::warn!(split = %right, error = %e, "making a split's group");
                }
            });
        })
    }

    /// What the database's replicas call when they apply a merge (or
    /// install the image of a merged split): the surviving group's commits
    /// widen at once and the merged groups leave the database's groups;
    /// their Raft instances are stopped on the node's runtime.
    fn merge_observer(self: &Arc<Self>) -> MergeObserver {
        let this = Arc::downgrade(self);
        Arc::new(move |merged, gone| {
            let Some(this) = this.upgrade() else {
                return;
            };
            this.groups.adopt_merge(merged, gone);
            let gone = gone.to_vec();
            let runtime = this.runtime.clone();
            runtime.spawn(async move { this.stop_groups(&gone).await });
        })
    }

    /// Stops and forgets the groups of the splits `gone` (merged away).
    async fn stop_groups(&self, gone: &[SplitId]) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        for split in gone {
            let gid = raft_group(self.database, *split);
            shared.groups.remove(gid);
            shared.commits.lock().remove(&gid.0);
            let raft = shared.hosted.lock().remove(&gid.0);
            if let Some(raft) = raft {
                let _ = raft.shutdown().await;
            }
            // Stopped, the group is gone for good: so is its log.
            let log = self.log.clone();
            let removed = tokio::task::spawn_blocking(move || log.remove_group(gid)).await;
            match removed {
                Ok(Ok(entries)) => tracing::info!(
                    database = self.database,
                    %split,
                    entries,
                    "a split merged into its neighbour: its group is stopped here and its log \
                     removed"
                ),
                Ok(Err(e)) => tracing::warn!(
                    database = self.database,
                    %split,
                    "a split merged into its neighbour, but its log could not be removed: {e}"
                ),
                Err(e) => tracing::warn!(%split, "removing a merged split's log failed: {e}"),
            }
        }
    }

    /// Makes the group of `d`, the right half of a split whose replica the
    /// engine now holds, with `voters` (the old group's): every voter
    /// starts the new group's log the same way; a node that was only a
    /// learner waits to be sent the log. The new group's leadership then
    /// goes to `cutter`, the node that led the split being cut: it asks
    /// for it at once, before any other voter's election timeout, and a
    /// voter that wins the election anyway hands it over
    /// ([`CUTTER_WAIT`]). So both halves stay led by the node that led the
    /// whole, and the commits spanning them still commit (an election left
    /// to chance would put the halves on different nodes about two times
    /// in three, and such commits are refused until remote locking is
    /// built); the lease balancer moves them apart only if the load says
    /// so.
    async fn make(
        self: &Arc<Self>,
        d: &Descriptor,
        voters: BTreeMap<u64, BasicNode>,
        cutter: Option<u64>,
    ) -> Result<(), NodeError> {
        let _one = self.making.lock().await;
        if self.groups.groups().iter().any(|g| g.split_id() == d.split) {
            return Ok(());
        }
        let replica = Replica::open(self.router.clone(), d.split)?;
        let node = self.shared.upgrade().map_or(0, |s| s.id);
        let voter = voters.contains_key(&node);
        let cutter = cutter.filter(|c| voters.contains_key(c));
        let raft = self.make_from(replica, d, voters).await?;
        match cutter {
            Some(c) if c == node => {
                // With a pre-vote: a leader already elected keeps its term.
                if let Err(e) = raft.trigger().elect(true).await {
                    tracing::warn!(split = %d, error = %e, "asking to lead a new split's group");
                }
            }
            Some(c) if voter => {
                let commits = self
                    .groups
                    .groups()
                    .into_iter()
                    .find(|g| g.split_id() == d.split);
                if let Some(commits) = commits {
                    let d = d.clone();
                    tokio::spawn(async move {
                        let deadline = tokio::time::Instant::now() + CUTTER_WAIT;
                        while tokio::time::Instant::now() < deadline {
                            match commits.current_leader() {
                                Some(l) if l == node && commits.leads() => {
                                    if let Err(e) = commits.transfer_to(c).await {
                                        tracing::warn!(split = %d, error = %e, "handing a new split's group to the node that cut it");
                                    }
                                    return;
                                }
                                Some(l) if l != node => return,
                                _ => tokio::time::sleep(Duration::from_millis(20)).await,
                            }
                        }
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Holds a replica of split `d` on this node, made empty if there is
    /// none, for the group's leader to fill with a snapshot image (it
    /// takes nothing else first, [`Replica::create_for_image`]): how a
    /// node added to the database's replicas (a replacement) gets the
    /// splits other than the first, whose group it opens with the
    /// database. Refused while a replica here still covers part of `d`'s
    /// range: it has not yet applied the split that cut `d` off, and will
    /// make `d`'s replica itself when it does (or, given an image instead,
    /// shrink). So no two replicas here ever cover one key, and an image a
    /// replica installs clears only keys of its own.
    ///
    /// `floor` is an index the group had committed when its leader asked
    /// (its applied index): the replica refuses an image older than that
    /// ([`crate::ImageView::floor`]); a replica already here that still
    /// awaits its image has its floor raised to it.
    pub(super) async fn host(self: &Arc<Self>, d: Descriptor, floor: u64) -> Result<(), String> {
        let _one = self.making.lock().await;
        let groups = self.groups.groups();
        if let Some(g) = groups.iter().find(|g| g.split_id() == d.split) {
            g.raise_image_floor(floor);
            return Ok(());
        }
        if d.split == whole_database().split {
            return Err("the first split's replica is made with the database".into());
        }
        if let Some(g) = groups.iter().find(|g| overlaps(&g.descriptor(), &d)) {
            return Err(format!(
                "{} {} here still covers part of {} {d}: it has not applied that split yet",
                g.split_id(),
                g.descriptor(),
                d.split
            ));
        }
        let replica = Replica::create_for_image(self.router.clone(), d.clone(), floor)
            .map_err(|e| e.to_string())?;
        self.make_from(replica, &d, BTreeMap::new())
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// [`DatabaseGroups::make`] and [`DatabaseGroups::host`] once the
    /// replica is on the engine; the group's Raft instance.
    async fn make_from(
        self: &Arc<Self>,
        replica: Replica,
        d: &Descriptor,
        voters: BTreeMap<u64, BasicNode>,
    ) -> Result<GroupRaft, NodeError> {
        let commits = self.commits(d.clone());
        let raft = self.run(replica, &commits).await?;
        let node = self.shared.upgrade().map_or(0, |s| s.id);
        if voters.contains_key(&node) && !raft.is_initialized().await.unwrap_or(true) {
            match raft.initialize(voters).await {
                Ok(()) => {}
                // Another voter of the new group got here first (this
                // node, busy, applied the cut later than its election
                // timeout): its instance has voted in the group's first
                // election, so it is no longer blank, and it is sent the
                // group's log (which starts with the same voters) by the
                // leader elected. Nothing to start, and the group is ours
                // all the same.
                Err(openraft::error::RaftError::APIError(
                    openraft::error::InitializeError::NotAllowed(e),
                )) => tracing::info!(
                    split = %d,
                    "the split's new group was started by another voter first: {e}"
                ),
                Err(e) => {
                    return Err(NodeError::Raft(format!(
                        "starting {}'s group: {e}",
                        d.split
                    )))
                }
            }
        }
        self.groups.add(commits);
        tracing::info!(
            database = self.database,
            split = %d,
            "a split of the database has a group of its own"
        );
        Ok(raft)
    }
}

/// How long a merge's leader waits for one node's answer to how far its
/// replica of a split applied.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// How this node asks another how far its replica of one of `database`'s
/// splits applied (what a merge waits on, [`crate::raft::AppliedProbe`]):
/// the other node's status of its groups, over the peer port.
pub(super) fn applied_probe(
    shared: Weak<Shared>,
    database: u64,
    runtime: tokio::runtime::Handle,
) -> AppliedProbe {
    Arc::new(move |split, node, addr| {
        let shared = shared.upgrade().ok_or("the node is stopping")?;
        let group = raft_group(database, split).0;
        let channel = shared
            .peers
            .channel(addr)
            .map_err(|e| format!("node {node} at {addr}: {e}"))?;
        let (tx, rx) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            let mut client = NodeClient::new(channel);
            let mut request = tonic::Request::new(StatusRequest {
                forwarded: true,
                groups_only: true,
            });
            request.set_timeout(PROBE_TIMEOUT);
            let answer = match client.status(request).await {
                Ok(reply) => serde_json::from_str::<ClusterStatus>(&reply.into_inner().json)
                    .map_err(|e| format!("its status does not parse: {e}"))
                    .map(|status| {
                        status
                            .groups
                            .iter()
                            .find(|g| g.group == group)
                            .and_then(|g| g.applied_index)
                    }),
                Err(e) => Err(e.message().to_string()),
            };
            let _ = tx.send(answer);
        });
        rx.recv_timeout(PROBE_TIMEOUT + Duration::from_millis(100))
            .map_err(|_| format!("node {node} did not answer within {PROBE_TIMEOUT:?}"))?
    })
}

/// The descriptors of the splits whose replicas the database's engine
/// holds, read before the database opens over it (its commits need its
/// groups); a new database is one split over its whole key space.
pub(super) fn stored_descriptors(
    engine: &Arc<dyn rowtree_storage::Engine>,
) -> Result<(Vec<Descriptor>, bool), NodeError> {
    let look = Arc::new(Router::new(
        rowtree_storage::Mvcc::new(engine.clone()),
        rowtree_kv::SplitMap::new(),
    ));
    let stored = Replica::stored_splits(&look)?;
    if stored.is_empty() {
        return Ok((vec![whole_database()], true));
    }
    let descriptors = stored
        .into_iter()
        .map(|s| Replica::open(look.clone(), s).map(|r| r.descriptor().clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let (kept, left_over) = current_replicas(descriptors);
    for d in &left_over {
        tracing::warn!(split = %d.split, range = %d, "a replica merged into a neighbour is left over: not opened");
    }
    Ok((kept, false))
}

/// Of the descriptors of the replicas an engine holds, those to open, and
/// those left over. A replica merged into a neighbour is normally gone
/// with the merge; a lagging one may have written its state again before
/// its group was stopped. Every split made from another (either half of
/// a cut, or a merge) has a higher epoch than the splits it was made from,
/// so of two stored replicas that share a key, the one with the lower
/// epoch is the stale one: the merged split covers it, or the merged
/// split was cut again since and its halves each cover a part of it.
/// Opened, it would apply its log's remaining entries over keys the
/// newer replicas wrote since (and refuse to, their versions being
/// newer: the node could not start).
fn current_replicas(descriptors: Vec<Descriptor>) -> (Vec<Descriptor>, Vec<Descriptor>) {
    let stale = |d: &Descriptor| {
        descriptors
            .iter()
            .any(|e| e.split != d.split && e.epoch > d.epoch && overlaps(e, d))
    };
    let (left_over, kept): (Vec<Descriptor>, Vec<Descriptor>) =
        descriptors.iter().cloned().partition(stale);
    (kept, left_over)
}

/// The tasks a node runs for each database it hosts, until the database is
/// closed: every [`GATHER_EVERY`], a round of the lease balancer
/// ([`LeaseBalancer::round`]); and
/// every [`CLOSE_EVERY`] (or [`IDLE_CLOSE_EVERY`] while a group had no
/// commit), [`GroupCommits::close_timestamp`] on each group this node
/// leads, with the database's read at the timestamp to close as the
/// barrier (design §5).
pub(super) fn tend(runtime: &tokio::runtime::Handle, database: u64, hosted: &Arc<DatabaseGroups>) {
    let groups = Arc::downgrade(&hosted.groups);
    let shared = hosted.shared.clone();
    let this = Arc::downgrade(hosted);
    runtime.spawn(async move {
        let mut balancer = LeaseBalancer::default();
        let mut leaders = BTreeMap::new();
        loop {
            tokio::time::sleep(GATHER_EVERY).await;
            let (Some(groups), Some(shared)) = (groups.upgrade(), shared.upgrade()) else {
                return;
            };
            log_leader_changes(database, &groups, &mut leaders);
            let view = shared.load_view();
            balancer.set_spread(shared.spread_leases.load(Ordering::Relaxed));
            drop(shared);
            match balancer.round(&groups, &view).await {
                Done::Replace {
                    split,
                    from,
                    to,
                    share,
                } => {
                    tracing::info!(
                        database,
                        %split,
                        from,
                        to,
                        share,
                        utilization = view.mine,
                        "a hot split's voters are all busy: its replica moves to a less loaded node"
                    );
                    if let Some(this) = this.upgrade() {
                        this.moves
                            .lock()
                            .insert(split, (from, to, std::time::Instant::now()));
                    }
                }
                Done::Moved { split, to, share } => tracing::info!(
                    database,
                    %split,
                    to,
                    share,
                    utilization = view.mine,
                    "a hot split's group handed to a less loaded node"
                ),
                Done::FirstHanded { to } => tracing::info!(
                    database,
                    to,
                    "this node leads the first split but lacks other splits: its group handed \
                     to a node holding them all"
                ),
                Done::Spread { split, to } => tracing::info!(
                    database,
                    %split,
                    to,
                    "a group handed to a node leading fewer of the database's groups"
                ),
                Done::Gathered(handed) if handed > 0 => {
                    tracing::info!(
                        database,
                        handed,
                        "cold groups handed to the database's leader"
                    )
                }
                _ => {}
            }
        }
    });
    runtime.spawn(close_timestamps(
        database,
        hosted.db.clone(),
        Arc::downgrade(&hosted.groups),
    ));
    runtime.spawn(gather_histories(
        database,
        hosted.db.clone(),
        Arc::downgrade(&hosted.groups),
        hosted.shared.clone(),
    ));
}

/// Logs (at info) each change of leader of the database's groups this node
/// has seen since the last round, as its instances know them (`seen`: the
/// leader and term last logged, by split): how a node's log tells when
/// a split had no leader, and who led it next.
fn log_leader_changes(
    database: u64,
    groups: &SplitGroups,
    seen: &mut BTreeMap<rowtree_kv::SplitId, (Option<u64>, u64)>,
) {
    let now: BTreeMap<_, _> = groups
        .groups()
        .iter()
        .map(|g| (g.split_id(), (g.current_leader(), g.term())))
        .collect();
    for (split, (leader, term)) in &now {
        if seen.get(split).is_some_and(|(l, _)| l == leader) {
            continue;
        }
        match leader {
            Some(node) => {
                tracing::info!(database, %split, leader = node, term, "a split's group has a leader")
            }
            None => tracing::info!(database, %split, term, "a split's group has no leader"),
        }
    }
    *seen = now;
}

/// How often the node leading a database's first split gathers the other
/// nodes' split load histories of it (their minute rows change once a
/// minute).
pub const GATHER_HISTORIES_EVERY: Duration = Duration::from_secs(15);

/// Each node keeps the load history of the splits it led; the node leading
/// the database's first split, which serves its sessions (and so
/// `SPANNER_SYS` and the key visualizer), asks every other node holding
/// one of its groups for theirs every [`GATHER_HISTORIES_EVERY`] and hands
/// them to the database ([`Database::set_peer_histories`]). A node that
/// does not answer keeps the history it last sent. Ends once the database
/// is closed.
async fn gather_histories(
    database: u64,
    db: WeakDatabase,
    groups: Weak<SplitGroups>,
    shared: Weak<Shared>,
) {
    let mut last: BTreeMap<u64, rowtree_kv::LoadHistory> = BTreeMap::new();
    loop {
        tokio::time::sleep(GATHER_HISTORIES_EVERY).await;
        let (Some(split_groups), Some(node)) = (groups.upgrade(), shared.upgrade()) else {
            return;
        };
        let all = split_groups.groups();
        drop(split_groups);
        if !all.first().is_some_and(|g| g.serves()) {
            last.clear();
            continue;
        }
        let me = node.id;
        let mut peers: BTreeMap<u64, String> = BTreeMap::new();
        for group in &all {
            for (id, addr) in group.members().1 {
                if id != me {
                    peers.insert(id, node.peers.routes().dial(&addr).to_string());
                }
            }
        }
        drop((all, node));
        last.retain(|id, _| peers.contains_key(id));
        for (id, addr) in peers {
            match fetch_history(&addr, database).await {
                Ok(history) => {
                    last.insert(id, history);
                }
                Err(e) => {
                    tracing::debug!(database, node = id, error = %e, "a node's split history")
                }
            }
        }
        let Some(database_now) = db.upgrade() else {
            return;
        };
        let label = |id: u64| rowtree_kv::NodeId(u32::try_from(id).unwrap_or(u32::MAX));
        database_now.set_peer_histories(
            label(me),
            last.iter().map(|(id, h)| (label(*id), h.clone())).collect(),
        );
    }
}

/// The split load history of `database` kept by the node at `addr`.
async fn fetch_history(addr: &str, database: u64) -> Result<rowtree_kv::LoadHistory, String> {
    let mut client = super::api::client(addr, GROUP_TIMEOUT)?;
    let reply = client
        .split_history(super::api::SplitHistoryRequest { database })
        .await
        .map_err(|s| format!("node at {addr}: {:?}: {}", s.code(), s.message()))?
        .into_inner();
    if reply.history.is_empty() {
        return Ok(rowtree_kv::LoadHistory::new());
    }
    rowtree_kv::LoadHistory::from_bytes(&reply.history).map_err(|e| e.to_string())
}

/// The closed-timestamp ticker of a database's groups on this node (see
/// [`tend`]). It does something only for the groups this node leads, and
/// ends once the database is closed.
async fn close_timestamps(database: u64, db: WeakDatabase, groups: Weak<SplitGroups>) {
    // Per split: when it last closed, and its proposals then.
    let mut last: HashMap<SplitId, (tokio::time::Instant, u64)> = HashMap::new();
    loop {
        tokio::time::sleep(CLOSE_EVERY).await;
        let (Some(database_now), Some(split_groups)) = (db.upgrade(), groups.upgrade()) else {
            return;
        };
        let now = tokio::time::Instant::now();
        let due: Vec<(SplitId, u64, Arc<GroupCommits>)> = split_groups
            .groups()
            .into_iter()
            .filter(|g| g.serves())
            .filter_map(|g| {
                let proposed = g.proposed();
                let idle = last.get(&g.split_id()).is_some_and(|(at, then)| {
                    *then == proposed && now.duration_since(*at) < IDLE_CLOSE_EVERY
                });
                (!idle).then(|| (g.split_id(), proposed, g))
            })
            .collect();
        if due.is_empty() {
            continue;
        }
        let step = tokio::task::spawn_blocking(move || {
            due.into_iter()
                .map(|(split, proposed, g)| {
                    let closed = g.close_timestamp(|c| {
                        close_barrier(&database_now, c)?;
                        // This group's own rules: its lease, its prepared
                        // transactions (the database's read checks only
                        // the groups the node leads, maybe not this one by
                        // now).
                        Replication::check_read(g.as_ref(), Some(c)).map_err(|e| e.to_string())
                    });
                    (split, proposed, closed)
                })
                .collect::<Vec<_>>()
        });
        let Ok(results) = step.await else {
            return;
        };
        for (split, proposed, closed) in results {
            match closed {
                Ok(Some(_)) => {
                    last.insert(split, (tokio::time::Instant::now(), proposed));
                }
                Ok(None) => {}
                Err(e) => tracing::debug!(database, %split, error = %e, "closing a timestamp"),
            }
        }
        let live: Vec<SplitId> = split_groups.groups().iter().map(|g| g.split_id()).collect();
        last.retain(|split, _| live.contains(split));
    }
}

/// The barrier before closing `c`: a read of the database at `c`, which
/// waits for the commits below it that are still under way.
fn close_barrier(db: &Database, c: u64) -> Result<(), String> {
    db.read_only(rowtree_db::TimestampBound::ReadTimestamp(c))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// What a database's replica calls with the metadata keys it wrote: when
/// they include the schema's (or an image was installed), the database
/// reloads its schema from the DDL log, on a blocking thread (a schema
/// change running here holds the DDL lock while its entry is applied),
/// once for any number of changes that arrive meanwhile.
pub(super) fn schema_follower(
    db: rowtree_db::WeakDatabase,
    runtime: tokio::runtime::Handle,
) -> crate::MetaObserver {
    let pending = Arc::new(AtomicBool::new(false));
    Arc::new(move |keys: &[Vec<u8>]| {
        let schema = keys.is_empty() || keys.iter().any(|k| Database::is_schema_key(k));
        if !schema || pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let Some(db) = db.upgrade() else {
            pending.store(false, Ordering::Release);
            return;
        };
        let pending = pending.clone();
        runtime.spawn_blocking(move || {
            pending.store(false, Ordering::Release);
            if let Err(e) = db.reload_schema() {
                tracing::warn!(error = %e, "reloading the schema a replica applied");
            }
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(split: u64, start: &[u8], limit: Option<&[u8]>, epoch: u64) -> Descriptor {
        Descriptor {
            split: SplitId(split),
            start: start.to_vec(),
            limit: limit.map(<[u8]>::to_vec),
            epoch,
        }
    }

    fn ids(ds: &[Descriptor]) -> Vec<u64> {
        ds.iter().map(|d| d.split.0).collect()
    }

    #[test]
    fn neighbours_are_all_opened() {
        let (kept, left) = current_replicas(vec![
            d(1, b"", Some(b"m"), 3),
            d(7, b"m", Some(b"t"), 2),
            d(9, b"t", None, 5),
        ]);
        assert_eq!(ids(&kept), [1, 7, 9]);
        assert!(left.is_empty());
    }

    #[test]
    fn a_replica_merged_into_a_neighbour_is_left_over() {
        // 7 [m, t) merged into 1, which became [a, t) at epoch 4.
        let (kept, left) =
            current_replicas(vec![d(1, b"", Some(b"t"), 4), d(7, b"m", Some(b"t"), 2)]);
        assert_eq!(ids(&kept), [1]);
        assert_eq!(ids(&left), [7]);
    }

    #[test]
    fn a_merged_replica_is_left_over_once_its_range_is_cut_again() {
        // 7 [m, t) merged into 1 ([.., t), epoch 4), which was cut at p
        // since: neither half covers 7's range, each covers a part.
        let (kept, left) = current_replicas(vec![
            d(1, b"", Some(b"p"), 5),
            d(7, b"m", Some(b"t"), 2),
            d(8, b"p", Some(b"t"), 5),
        ]);
        assert_eq!(ids(&kept), [1, 8]);
        assert_eq!(ids(&left), [7]);
    }
}
