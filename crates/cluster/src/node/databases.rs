//! The databases a node serves: each one or more Raft groups (one per
//! split), replicated on a few nodes, whose replicas on this node apply to
//! the database's own engine.
//!
//! The server's registry (instances and databases, kept as one document in
//! the placement group, [`crate::placement::Registry`]) says which group
//! holds each database and which nodes hold a replica of it. Every node
//! named there opens the database with [`Hosting::open_database`]:
//!
//! * the database's engine, in the directory the registry names, with a
//!   [`SplitGroups`] as its replication, so its commits go through their
//!   splits' logs under the groups' leases, with commit wait (design §5),
//!   and in two phases when they span splits (design §6);
//! * for each split its engine holds a replica of (one over the whole key
//!   space for a new database), the replica over the database's own router
//!   (so a node that leads reads what its replica applied), telling the
//!   database the commit timestamps it applies (the hybrid clock's receive
//!   rule) and the schema keys it writes (so a follower reloads its schema
//!   and serves the new tables as soon as it leads), and the group's Raft
//!   instance, on the node's shared log store and peer port. The node that
//!   created the database (the registry names it) initializes the first
//!   group with every replica as a voter; the others wait to be contacted.
//!   The groups a split makes later are started by every voter alike (the
//!   `splits` module).
//!
//! The first split, which starts at the empty key, carries the database's
//! metadata (the DDL log, sequence reservations); its group has the id the
//! registry gave the database, and the registry's calls here
//! ([`Hosting::leader_of`], [`Hosting::hand_over`],
//! [`Hosting::reconcile_members`], [`Hosting::close_database`]) name the
//! database by it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use openraft::type_config::async_runtime::WatchReceiver;
use openraft::BasicNode;
use rowtree_db::Database;
use rowtree_txn::Clock;
use tonic::Status;

mod replicas;

use super::splits::{self, DatabaseGroups};
pub use super::splits::{whole_database, CLOSE_EVERY, GROUP_TIMEOUT, IDLE_CLOSE_EVERY};
use super::{NodeError, Shared};
use crate::lease::LeaseRules;
use crate::placement::{NodeState, Registry};
use crate::raft::{transfer_leadership, GroupCommits, GroupId, GroupRaft, LogStore, SplitGroups};
use crate::{Descriptor, Replica};

/// How long a database's lease lasts; a node that takes over waits for
/// its predecessor's to run out (plus the clock offset).
pub const DATABASE_LEASE: Duration = Duration::from_secs(2);

/// How recently a node must have answered a clock heartbeat to count as
/// answering ([`Hosting::answering`]): two and a half heartbeats.
pub const ANSWERED_WITHIN: Duration = Duration::from_millis(2_500);

/// How long [`Hosting::members_say_released`] waits for one member's
/// answer.
pub const MEMBERS_ASKED_WITHIN: Duration = Duration::from_millis(500);

/// How long [`Hosting::hand_over`] waits for the new leader.
pub const HAND_OVER_TIMEOUT: Duration = Duration::from_secs(5);

/// How many log entries behind the leader a new replica may be when it
/// becomes a voter ([`Hosting::reconcile_members`]).
pub const CAUGHT_UP_WITHIN: u64 = 100;

/// How long one membership change of a database group may take.
const MEMBERSHIP_TIMEOUT: Duration = Duration::from_secs(20);

/// How long opening a database waits for its group's Raft instance.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// A database's group, as the registry records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseGroup {
    /// The group's id (1 and up; 0 is the placement group).
    pub group: u64,
    /// The database's name (`projects/p/instances/i/databases/d`), as
    /// `rowtree cluster status` shows it.
    pub name: String,
    /// The nodes that hold a replica, each a voter.
    pub members: Vec<u64>,
    /// The node that initializes the group (the one that created the
    /// database).
    pub bootstrap: u64,
    /// The members named after the group was made: such a node's replica
    /// of the first split, made here, awaits an image
    /// ([`Replica::create_for_image`]), since the group's log from its
    /// start need not hold every row of the split (a merge took in its
    /// neighbour's rows without writing them).
    pub joined: Vec<u64>,
}

/// The node's clock as the database and its leases read it: the node's
/// wall clock (microseconds) in nanoseconds.
#[derive(Debug, Clone)]
struct NodeClock(super::clock::WallClock);

impl Clock for NodeClock {
    fn now_nanos(&self) -> u64 {
        self.0.now().saturating_mul(1_000)
    }
}

/// What the server needs of a node to serve databases from it: the
/// registry's document in the placement group, and the databases' groups.
/// A cheap handle ([`super::Node::hosting`]); cloning it shares the node.
#[derive(Clone)]
pub struct Hosting {
    pub(super) shared: Arc<Shared>,
    pub(super) log: Arc<LogStore>,
    pub(super) runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for Hosting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hosting")
            .field("node", &self.shared.id)
            .finish_non_exhaustive()
    }
}

impl Hosting {
    /// How many voters each split group of a database other than its
    /// first keeps, chosen among the database's hosts (the first split's
    /// voters, the registry's members): `0` (the default) for all of them,
    /// every host holding every split; fewer spreads the splits' replicas
    /// over the hosts, each group's leader placing them by load
    /// (`node::databases::replicas`). Set before databases are opened; every node of
    /// a cluster should have the same.
    pub fn set_split_replicas(&self, replicas: usize) {
        self.shared
            .split_replicas
            .store(replicas, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the lease balancer spreads each database's split groups
    /// over their voters by count (`--spread-leases`: a node leading two
    /// or more groups more than one of a group's voters hands it one, every
    /// 2 s at most) instead of handing the cold ones to the node leading
    /// the first split (the default, so that most transactions need no
    /// other node). Spread, most transactions touching several groups run
    /// across nodes (`raft::groups::spanning`). Every node of a cluster
    /// should have the same.
    pub fn set_spread_leases(&self, spread: bool) {
        self.shared
            .spread_leases
            .store(spread, std::sync::atomic::Ordering::Relaxed);
    }

    /// This node's id.
    pub fn node_id(&self) -> u64 {
        self.shared.id
    }

    /// The cluster's id (empty until the node knows its cluster).
    pub fn cluster_id(&self) -> String {
        self.shared.cluster_id.lock().clone()
    }

    /// The registry's document as this node's replica of the placement
    /// group holds it (possibly a moment behind the leader's).
    pub fn registry(&self) -> Result<Registry, Status> {
        match self.shared.get(crate::placement::REGISTRY_KEY)? {
            Some(bytes) => Registry::decode(&bytes)
                .map_err(|e| Status::internal(format!("the placement replica holds {e}"))),
            None => Ok(Registry::default()),
        }
    }

    /// Replaces the registry's document if its stored version is still
    /// `expected` (asking the placement leader, wherever it is), and
    /// returns the new version once the document is replicated. ABORTED
    /// if another change came first: read again and redo the change.
    /// Blocks; call it from a thread that may (not from the runtime).
    pub fn replace_registry(&self, expected: u64, document: Vec<u8>) -> Result<u64, Status> {
        if document.len() > crate::placement::MAX_REGISTRY_BYTES {
            return Err(Status::resource_exhausted(format!(
                "the registry document would be {} bytes, above the limit of {}",
                document.len(),
                crate::placement::MAX_REGISTRY_BYTES
            )));
        }
        let shared = self.shared.clone();
        let version = self
            .block_on(async move {
                shared
                    .replace_registry_anywhere(expected, document, false)
                    .await
            })
            .map_err(|e| Status::unavailable(e.to_string()))??;
        // Read-your-writes: wait until this node's replica has it.
        let deadline = std::time::Instant::now() + GROUP_TIMEOUT;
        while self.registry()?.version < version {
            if std::time::Instant::now() > deadline {
                return Err(Status::unavailable(
                    "the registry changed, but this node's copy did not catch up in time",
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(version)
    }

    /// Records in the placement group that this node serves Spanner's API
    /// at `client_addr`, so other nodes can forward requests here. Asks
    /// again while the placement group has no leader, for up to
    /// [`GROUP_TIMEOUT`].
    pub async fn announce(&self, client_addr: String) -> Result<(), Status> {
        let deadline = tokio::time::Instant::now() + GROUP_TIMEOUT;
        loop {
            match self
                .shared
                .announce_anywhere(self.shared.id, client_addr.clone(), false)
                .await
            {
                Ok(()) => return Ok(()),
                Err(e)
                    if e.code() == tonic::Code::Unavailable
                        && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Where node `id` serves Spanner's API, as it announced.
    pub fn client_addr(&self, id: u64) -> Result<Option<String>, Status> {
        Ok(self
            .shared
            .get(&crate::placement::client_key(id))?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    }

    /// The address this node dials for `addr`, an address another node
    /// announced: itself, or where `--route` sends it.
    pub fn dial_addr(&self, addr: &str) -> String {
        self.shared.peers.routes().dial(addr).to_string()
    }

    /// The leader of the database group `group` as this node's replica
    /// knows it; `None` if this node holds no replica of it or knows no
    /// leader (an election).
    pub fn leader_of(&self, group: u64) -> Option<u64> {
        let raft = self.shared.hosted.lock().get(&group).cloned()?;
        let leader = raft.metrics().borrow_watched().current_leader;
        leader
    }

    /// Hands the leadership of database group `group` to node `to`, if
    /// this node leads it (and `to` is another node), with every split
    /// group of the database this node leads, and waits (up to
    /// [`HAND_OVER_TIMEOUT`]) until this node knows `to` leads: how a
    /// database's leaders are spread over the nodes. The new leader serves
    /// once it has taken the lease, which starts after this node's lease
    /// has run out (design §5), so the database's first requests there
    /// wait for up to a lease's length. Blocks.
    pub fn hand_over(&self, group: u64, to: u64) {
        if to == self.shared.id || self.leader_of(group) != Some(self.shared.id) {
            return;
        }
        let rafts = self.database_rafts(group);
        tracing::info!(
            group,
            to,
            groups = rafts.len(),
            "handing the database's leadership over"
        );
        let me = self.shared.id;
        let _ = self.block_on(async move {
            let moves = rafts.into_iter().map(|(_, raft)| async move {
                if raft.metrics().borrow_watched().current_leader == Some(me) {
                    if let Err(e) = transfer_leadership(&raft, to, HAND_OVER_TIMEOUT).await {
                        tracing::warn!(group, to, error = %e, "handing a group over");
                    }
                }
            });
            futures_util::future::join_all(moves).await
        });
        let deadline = std::time::Instant::now() + HAND_OVER_TIMEOUT;
        while self.leader_of(group) != Some(to) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Asks openraft to hand every group of the database whose registry
    /// group is `group` that this node leads to node `to`, without waiting
    /// for the new leaders: how a node whose replica is moved elsewhere
    /// stops leading before it closes the replica
    /// ([`Hosting::may_release`] waits for it). Blocks while the transfers
    /// are asked for.
    pub fn give_up_leadership(&self, group: u64, to: u64) {
        let me = self.shared.id;
        let led: Vec<GroupRaft> = self
            .database_rafts(group)
            .into_iter()
            .map(|(_, raft)| raft)
            .filter(|raft| raft.metrics().borrow_watched().current_leader == Some(me))
            .collect();
        if to == me || led.is_empty() {
            return;
        }
        tracing::info!(
            group,
            to,
            groups = led.len(),
            "moving off: handing the groups over"
        );
        // Each transfer waits until `to`'s log is caught up; none is waited
        // for here.
        for raft in led {
            self.runtime.spawn(async move {
                if let Err(e) = transfer_leadership(&raft, to, HAND_OVER_TIMEOUT).await {
                    tracing::warn!(group, to, error = %e, "moving off: handing a group over");
                }
            });
        }
    }

    /// Whether node `id` answered this node's clock heartbeat (once a
    /// second) within the last [`ANSWERED_WITHIN`], has not refused one
    /// since, and did not say it is stopping: a node to send requests to. A
    /// killed process refuses the first heartbeat after its death, and one
    /// stopped on purpose says so in its first answer after the stop
    /// began, so either stops answering within a second; a paused or
    /// overloaded one, after [`ANSWERED_WITHIN`]. This node itself always
    /// answers.
    pub fn answering(&self, id: u64) -> bool {
        self.shared.answering(id)
    }

    /// How long node `id` has gone without answering this node's clock
    /// heartbeats: zero while it [answers](Self::answering); otherwise
    /// the time since its last answer, or since this process started if
    /// it never answered it.
    pub fn silent_for(&self, id: u64) -> Duration {
        self.shared.unanswered_for(id)
    }

    /// Whether `member` of a group whose members are `members` is dead as
    /// far as placement goes, and if so for how long it has been silent
    /// here: it has not answered this node for longer than
    /// [`Hosting::dead_after`], and a majority of the other members, this
    /// node included, say the same of it in their heartbeat answers
    /// ([`Clocks::silent_to_majority`](super::clock::Clocks::silent_to_majority)).
    /// A member cut off from this node alone is not dead. The databases'
    /// leaders replace a dead member's replicas (as the placement group's
    /// leader replaces it as a voter).
    pub fn dead_for(&self, member: u64, members: &[u64]) -> Option<Duration> {
        let silent = self.silent_for(member);
        (silent > self.shared.dead_after
            && self.shared.clocks.lock().silent_to_majority(
                self.shared.id,
                member,
                members,
                self.shared.dead_after,
                std::time::Instant::now(),
            ))
        .then_some(silent)
    }

    /// How long a node may stay silent before its replicas are replaced
    /// (`--dead-after`).
    pub fn dead_after(&self) -> Duration {
        self.shared.dead_after
    }

    /// Whether node `id`'s process started after `wall_nanos` (a time of
    /// this node's wall clock, nanoseconds since the Unix epoch), by more
    /// than the clocks may differ, as its latest clock heartbeat answer
    /// said: what a client began through it before then was begun through
    /// a process that is gone, even one that came back between two
    /// heartbeats and so never stopped answering.
    pub fn started_after(&self, id: u64, wall_nanos: i64) -> bool {
        self.shared.started_after(id, wall_nanos)
    }

    /// Whether the process of node `id` that ran at `wall_nanos` (this
    /// node's wall clock, nanoseconds since the Unix epoch) is gone for
    /// good: the node started again since ([`Hosting::started_after`];
    /// for this node, its own process started after `wall_nanos`, by more
    /// than the clocks may differ). A paused or cut-off process is not
    /// gone: it may still act when it comes back. Nor does a stopping mark
    /// count: it may be left from an earlier process of the node, not yet
    /// cleared by an answer of the one running now.
    pub fn process_gone_since(&self, id: u64, wall_nanos: i64) -> bool {
        if id == self.shared.id {
            let margin =
                i128::try_from(self.shared.max_clock_offset.as_nanos()).unwrap_or(i128::MAX);
            return i128::from(self.shared.started_micros) * 1_000
                > i128::from(wall_nanos).saturating_add(margin);
        }
        self.started_after(id, wall_nanos)
    }

    /// Whether node `id` settles the outcome of a tagged commit, as its
    /// latest clock heartbeat answer said (this node does).
    pub fn settles_outcomes(&self, id: u64) -> bool {
        id == self.shared.id || self.shared.clocks.lock().settles_outcomes(id)
    }

    /// The live nodes, by id.
    pub fn live_nodes(&self) -> Result<Vec<u64>, Status> {
        self.nodes_in(NodeState::Live)
    }

    /// The nodes whose placement record is in `state`, by id.
    fn nodes_in<C: FromIterator<u64>>(&self, state: NodeState) -> Result<C, Status> {
        Ok(self
            .shared
            .records()?
            .into_values()
            .filter(|r| r.state == state)
            .map(|r| r.id)
            .collect())
    }

    /// Opens the database whose group is `group` from `dir` (creating it
    /// there if the directory is new) with `options`, as this node's
    /// replica of the group (see the module docs). Blocks; call it from a
    /// thread that may.
    pub fn open_database(
        &self,
        group: &DatabaseGroup,
        dir: &Path,
        options: rowtree_db::Options,
    ) -> Result<Database, NodeError> {
        let cannot_open =
            |e: rowtree_db::Error| NodeError::Config(format!("cannot open {}: {e}", dir.display()));
        let clock: Arc<dyn Clock> = Arc::new(NodeClock(self.shared.clock.clone()));
        let rules = LeaseRules {
            duration: DATABASE_LEASE,
            max_offset: self.shared.max_clock_offset,
        };
        // The database's commits need its groups when it opens, and what
        // they are is in its engine.
        let engine = Database::open_engine(dir, &options).map_err(cannot_open)?;
        let (descriptors, fresh) = splits::stored_descriptors(&engine)?;
        let unstarted = |d: &Descriptor| {
            Arc::new(GroupCommits::new(
                self.shared.id,
                d.clone(),
                rules,
                clock.clone(),
                self.runtime.clone(),
                GROUP_TIMEOUT,
            ))
        };
        let commits: Vec<Arc<GroupCommits>> = descriptors.iter().map(unstarted).collect();
        let split_groups =
            Arc::new(SplitGroups::new(commits.clone()).map_err(|e| {
                NodeError::Config(format!("{} holds splits that {e}", dir.display()))
            })?);
        let db = Database::with_engine(
            engine,
            rowtree_db::Options {
                replication: Some(split_groups.clone()),
                clock: clock.clone(),
                ..options
            },
        )
        .map_err(cannot_open)?;
        let router = db.shared_router();
        split_groups.set_router(&router);
        split_groups.set_applied_probe(splits::applied_probe(
            Arc::downgrade(&self.shared),
            group.group,
            self.runtime.clone(),
        ));
        split_groups.set_elsewhere(super::remote::RemoteSplits::new(
            Arc::downgrade(&self.shared),
            self.runtime.clone(),
            group.group,
        ));
        let hosted = Arc::new(DatabaseGroups {
            shared: Arc::downgrade(&self.shared),
            log: self.log.clone(),
            runtime: self.runtime.clone(),
            database: group.group,
            name: group.name.clone(),
            rules,
            clock,
            router: router.clone(),
            db: db.downgrade(),
            groups: split_groups,
            making: tokio::sync::Mutex::new(()),
            moves: parking_lot::Mutex::new(BTreeMap::new()),
            unmatched: parking_lot::Mutex::new(BTreeMap::new()),
            proxies: Default::default(),
        });
        self.shared
            .databases
            .lock()
            .insert(group.group, hosted.clone());
        for (d, commits) in descriptors.iter().zip(&commits) {
            let replica = if fresh {
                if d.split == whole_database().split && group.joined.contains(&self.shared.id) {
                    // Its floor is the one this node's log store kept, if
                    // it held the group before (raised when the group starts).
                    Replica::create_for_image(router.clone(), d.clone(), 0)?
                } else {
                    Replica::create(router.clone(), d.clone())?
                }
            } else {
                Replica::open(router.clone(), d.split)?
            };
            let runner = hosted.clone();
            let commits = commits.clone();
            let raft = self.block_on(async move { runner.run(replica, &commits).await })??;
            // A member named after the group was made never starts it.
            if d.split == whole_database().split
                && group.bootstrap == self.shared.id
                && !group.joined.contains(&self.shared.id)
            {
                self.initialize(&raft, group)?;
            }
        }
        splits::tend(&self.runtime, group.group, &hosted);
        super::participant::tend(&self.runtime, &hosted);
        replicas::tend_replicas(&self.runtime, &hosted);
        tracing::info!(
            group = group.group,
            splits = descriptors.len(),
            dir = %dir.display(),
            "serving a database"
        );
        Ok(db)
    }

    /// The Raft instances of the database whose registry group is `group`
    /// on this node, by Raft group id, its first split's first.
    fn database_rafts(&self, group: u64) -> Vec<(u64, GroupRaft)> {
        self.database_groups(group)
            .into_iter()
            .map(|(id, raft, _)| (id, raft))
            .collect()
    }

    /// [`Hosting::database_rafts`] with each group's commits.
    fn database_groups(&self, group: u64) -> Vec<(u64, GroupRaft, Arc<GroupCommits>)> {
        let Some(hosted) = self.shared.databases.lock().get(&group).cloned() else {
            return Vec::new();
        };
        let rafts = self.shared.hosted.lock();
        hosted
            .rafts()
            .into_iter()
            .filter_map(|(id, commits)| rafts.get(&id).map(|r| (id, r.clone(), commits)))
            .collect()
    }

    /// Makes `raft` the first leader of `group` with every member a voter,
    /// unless it was initialized before (a restart).
    fn initialize(&self, raft: &GroupRaft, group: &DatabaseGroup) -> Result<(), NodeError> {
        let records = self.shared.records().map_err(|s| {
            NodeError::Raft(format!("reading the members' addresses: {}", s.message()))
        })?;
        let mut members = BTreeMap::new();
        for id in &group.members {
            let record = records.get(id).ok_or_else(|| {
                NodeError::Raft(format!(
                    "group {}: node {id} is not a member of the cluster",
                    group.group
                ))
            })?;
            members.insert(
                *id,
                BasicNode {
                    addr: record.peer_addr.clone(),
                },
            );
        }
        let raft = raft.clone();
        self.block_on(async move {
            if raft.is_initialized().await.unwrap_or(true) {
                return Ok(());
            }
            raft.initialize(members).await.map_err(|e| e.to_string())
        })?
        .map_err(|e| NodeError::Raft(format!("cannot start group {}: {e}", group.group)))
    }

    /// The nodes taken out of the cluster (`rowtree cluster remove`): as
    /// this node's copy of the placement group records them, and this node
    /// itself if another node told it so, which it may never learn from its
    /// copy (the leader can take it out of the group first).
    pub fn removed_nodes(&self) -> Result<BTreeSet<u64>, Status> {
        let mut removed: BTreeSet<u64> = self.nodes_in(NodeState::Removed)?;
        if self.shared.is_removed(self.shared.id) {
            removed.insert(self.shared.id);
        }
        Ok(removed)
    }

    /// One step of bringing the Raft membership of database group `group`
    /// (the database's first split's group) to `members` (the registry's
    /// list of its hosts), if this node leads the group; what it did, if
    /// anything. The database's other split groups follow the first's
    /// voters on their own leaders (`node::databases::replicas`). In order: a member the
    /// group lacks is added as a learner (it is sent the log, or a
    /// snapshot); once every learner among `members` has caught up
    /// (within [`CAUGHT_UP_WITHIN`] entries of the leader's log), the
    /// voters become exactly `members`, and the nodes no longer listed
    /// leave the group. Blocks; call it from a thread that may.
    pub fn reconcile_members(
        &self,
        group: u64,
        members: &[u64],
    ) -> Result<Option<String>, NodeError> {
        let Some((id, raft, commits)) = self.database_groups(group).into_iter().next() else {
            return Ok(None);
        };
        self.reconcile_group(group, id, raft, &commits, members)
    }

    /// [`Hosting::reconcile_members`] for the Raft group `group`, one of
    /// the split groups of the database whose registry group is
    /// `database`. A member added to the group of a split other than the
    /// first is first asked to hold an empty replica of the split
    /// ([`Hosting::prepare_member`]).
    pub(super) fn reconcile_group(
        &self,
        database: u64,
        group: u64,
        raft: GroupRaft,
        commits: &GroupCommits,
        members: &[u64],
    ) -> Result<Option<String>, NodeError> {
        use openraft::ChangeMembers;
        let m = raft.metrics().borrow_watched().clone();
        if m.current_leader != Some(self.shared.id) {
            return Ok(None);
        }
        let membership = m.membership_config.membership().clone();
        let wanted: BTreeSet<u64> = members.iter().copied().collect();
        let voters: BTreeSet<u64> = membership.voter_ids().collect();
        let nodes: BTreeSet<u64> = membership.nodes().map(|(id, _)| *id).collect();
        if voters == wanted && nodes == wanted {
            return Ok(None);
        }
        let change = if let Some(missing) = wanted.difference(&nodes).next().copied() {
            let records = self.shared.records().map_err(|s| {
                NodeError::Raft(format!("reading the members' addresses: {}", s.message()))
            })?;
            let record = records.get(&missing).ok_or_else(|| {
                NodeError::Raft(format!(
                    "group {group}: node {missing} is not a member of the cluster"
                ))
            })?;
            let split = commits.descriptor();
            if group != database {
                if let Some(waiting) =
                    self.prepare_member(database, &raft, &split, missing, &record.peer_addr)?
                {
                    return Ok(Some(format!("group {group}: {waiting}")));
                }
            } else {
                // The first split's replica is made with the database on
                // the new member (empty, for an image); the log from its
                // start need not hold every row of it (a merge took in a
                // neighbour's without writing them), so it is sent the
                // snapshot.
                self.snapshot_and_purge(&raft, &split, missing)?;
            }
            let node = BasicNode {
                addr: record.peer_addr.clone(),
            };
            (
                ChangeMembers::AddNodes(BTreeMap::from([(missing, node)])),
                format!("node {missing} added to group {group} as a learner"),
            )
        } else if voters != wanted {
            let last = m.last_log_index.unwrap_or(0);
            let lagging = wanted.difference(&voters).find(|id| {
                let matched = m
                    .replication
                    .as_ref()
                    .and_then(|r| r.get(*id).cloned().flatten())
                    .map_or(0, |log_id| log_id.index);
                matched + CAUGHT_UP_WITHIN < last
            });
            if let Some(id) = lagging {
                return Ok(Some(format!(
                    "group {group}: waiting for node {id} to catch up before it votes"
                )));
            }
            (
                ChangeMembers::ReplaceAllVoters(wanted.clone()),
                format!("group {group}'s voters are now nodes {wanted:?}"),
            )
        } else {
            let extra: BTreeSet<u64> = nodes.difference(&wanted).copied().collect();
            (
                ChangeMembers::RemoveNodes(extra.clone()),
                format!("nodes {extra:?} left group {group}"),
            )
        };
        let (change, what) = change;
        tracing::info!(group, "{what}");
        self.block_on(async move {
            tokio::time::timeout(MEMBERSHIP_TIMEOUT, raft.change_membership(change, false))
                .await
                .map_err(|_| "took too long".to_string())?
                .map_err(|e| e.to_string())
        })?
        .map_err(|e| NodeError::Raft(format!("{what}: {e}")))?;
        Ok(Some(what))
    }

    /// Whether the database whose registry group is `group` has, as this
    /// node's replicas know it, exactly `members` as its first group's
    /// voters and nodes, and every other group it holds here has its
    /// voters among them, with no change under way: no membership change
    /// of the database is pending or under way. False if this node holds
    /// no replica of it.
    pub fn members_settled(&self, group: u64, members: &[u64]) -> bool {
        let wanted: BTreeSet<u64> = members.iter().copied().collect();
        let groups = self.database_groups(group);
        !groups.is_empty()
            && groups.iter().enumerate().all(|(i, (_, raft, _))| {
                let m = raft.metrics().borrow_watched().clone();
                let membership = m.membership_config.membership();
                let voters: BTreeSet<u64> = membership.voter_ids().collect();
                let nodes: BTreeSet<u64> = membership.nodes().map(|(id, _)| *id).collect();
                if i == 0 {
                    voters == wanted && nodes == wanted
                } else {
                    membership.get_joint_config().len() == 1
                        && nodes == voters
                        && voters.is_subset(&wanted)
                }
            })
    }

    /// Whether this node, no longer listed among the hosts of the
    /// database whose registry group is `group` (whose members are now
    /// `members`), may close its replica: it leads none of the database's
    /// groups; in the first, as its replica knows it, all of `members`
    /// vote; and in every other, the newest configuration does not count
    /// this node (the changes that take this node out are committed or
    /// under way, so no group's majority needs it). False if this node
    /// holds no replica of it.
    pub fn may_release(&self, group: u64, members: &[u64]) -> bool {
        let groups = self.database_groups(group);
        !groups.is_empty()
            && groups.iter().enumerate().all(|(i, (_, raft, _))| {
                let m = raft.metrics().borrow_watched().clone();
                let membership = m.membership_config.membership();
                let voters: BTreeSet<u64> = membership.voter_ids().collect();
                let out = if i == 0 {
                    members.iter().all(|id| voters.contains(id))
                } else {
                    membership
                        .get_joint_config()
                        .last()
                        .is_some_and(|last| !last.contains(&self.shared.id))
                };
                m.current_leader != Some(self.shared.id) && out
            })
    }

    /// Whether the listed members of the database whose registry group is
    /// `group` (whose members are now `members`, this node not among
    /// them) say, for every one of the database's groups this node holds
    /// a replica of, that the change taking this node out is done: that
    /// exactly `members` vote in the first split's group, and that this
    /// node does not vote in the others (each said by some member). What a node goes by that was away while
    /// it was taken out: its own replicas never hear of the change, since
    /// the groups no longer send them anything ([`Hosting::may_release`]
    /// would wait forever). Asks each answering member in turn for the
    /// status of its groups over the peer port, each within
    /// [`MEMBERS_ASKED_WITHIN`]; false if none says so (a group it does
    /// not report, one merged away say, does not count). Blocks; call it
    /// from a thread that may.
    pub fn members_say_released(&self, group: u64, members: &[u64]) -> bool {
        let mut mine: BTreeSet<u64> = self
            .database_groups(group)
            .into_iter()
            .map(|(id, _, _)| id)
            .collect();
        if mine.is_empty() || members.contains(&self.shared.id) {
            return false;
        }
        let Ok(records) = self.shared.records() else {
            return false;
        };
        let wanted: BTreeSet<u64> = members.iter().copied().collect();
        for member in members {
            if !self.answering(*member) {
                continue;
            }
            let Some(channel) = records
                .get(member)
                .and_then(|r| self.shared.peers.channel(&r.peer_addr).ok())
            else {
                continue;
            };
            let asked = self.block_on(async move {
                let mut client = super::api::NodeClient::new(channel);
                let mut request = tonic::Request::new(super::api::StatusRequest {
                    forwarded: true,
                    groups_only: true,
                });
                request.set_timeout(MEMBERS_ASKED_WITHIN);
                let reply = client.status(request).await.ok()?;
                serde_json::from_str::<super::status::ClusterStatus>(&reply.into_inner().json).ok()
            });
            let Ok(Some(status)) = asked else {
                continue;
            };
            mine.retain(|id| {
                !status.groups.iter().any(|g| {
                    let voters: BTreeSet<u64> = g.members.iter().copied().collect();
                    g.group == *id
                        && if *id == group {
                            voters == wanted
                        } else {
                            !voters.contains(&self.shared.id)
                        }
                })
            });
            if mine.is_empty() {
                return true;
            }
        }
        false
    }

    /// Readies node `node` (its peer port at `peer_addr`) to join the
    /// group of `split`, a split of `database` other than its first:
    ///
    /// 1. the node is asked to hold an empty replica of the split
    ///    ([`api::HostSplitRequest`]); `Some(why)` while it cannot yet (it
    ///    does not serve the database yet, or its replica of a split to the
    ///    left has not applied the cut that made this one);
    /// 2. this node (the group's leader) takes a snapshot of its replica
    ///    and purges its log up to it, so that the new member is sent the
    ///    snapshot's image, whose range is the split's as it is now: the
    ///    group's log from its start may hold writes beyond it, made
    ///    before later cuts, which the empty replica would refuse.
    ///
    /// [`api::HostSplitRequest`]: super::api::HostSplitRequest
    fn prepare_member(
        &self,
        database: u64,
        raft: &GroupRaft,
        split: &Descriptor,
        node: u64,
        peer_addr: &str,
    ) -> Result<Option<String>, NodeError> {
        let floor = applied_index(raft);
        if let Some(waiting) = self.host_at(database, split, node, peer_addr, floor)? {
            return Ok(Some(waiting));
        }
        self.snapshot_and_purge(raft, split, node)?;
        Ok(None)
    }

    /// Asks node `node` (at `peer_addr`) to hold an empty replica of
    /// `split` ([`api::HostSplitRequest`]), which refuses images older
    /// than `floor` (this leader's applied index, so committed);
    /// `Some(why)` while it cannot yet.
    ///
    /// [`api::HostSplitRequest`]: super::api::HostSplitRequest
    pub(super) fn host_at(
        &self,
        database: u64,
        split: &Descriptor,
        node: u64,
        peer_addr: &str,
        floor: u64,
    ) -> Result<Option<String>, NodeError> {
        let request = super::api::HostSplitRequest {
            database,
            split: split.split.0,
            start: split.start.clone(),
            limit: split.limit.clone(),
            epoch: split.epoch,
            floor,
        };
        let addr = self.dial_addr(peer_addr);
        let reply = self
            .block_on(async move {
                let mut client = super::api::client(&addr, GROUP_TIMEOUT)?;
                client
                    .host_split(request)
                    .await
                    .map(tonic::Response::into_inner)
                    .map_err(|s| format!("node at {addr}: {:?}: {}", s.code(), s.message()))
            })?
            .map_err(|e| {
                NodeError::Raft(format!("asking node {node} to hold {}: {e}", split.split))
            })?;
        if !reply.hosted {
            return Ok(Some(format!(
                "waiting for node {node} to hold a replica of {}: {}",
                split.split, reply.why
            )));
        }
        Ok(None)
    }

    /// Takes a snapshot of this node's replica of `split` (the group's
    /// leader) and purges the group's log up to it, so that a member
    /// whose log is empty (`node`, for the errors) is sent the image,
    /// whose range is the split's as it is now, never the log from its
    /// start. Blocks.
    pub(super) fn snapshot_and_purge(
        &self,
        raft: &GroupRaft,
        split: &Descriptor,
        node: u64,
    ) -> Result<(), NodeError> {
        let raft = raft.clone();
        self.block_on(async move { crate::raft::snapshot_and_purge(&raft, GROUP_TIMEOUT).await })?
            .map_err(|e| {
                NodeError::Raft(format!(
                    "{}: snapshotting for node {node} to join: {e}",
                    split.split
                ))
            })
    }

    /// Stops serving the database of `group` on this node, for good (it
    /// was dropped, or its replicas moved off this node): every group's
    /// Raft instance stops, the peer port forgets it, and its log is
    /// removed from the node's log store (a replica placed here again
    /// later starts from an empty log, as from an empty engine). Unless
    /// the database was `dropped`, each group's vote stays: a database
    /// moved off a node may be placed on it again, and a node must never
    /// forget its term in a group ([`LogStore::clear_group`]). The caller
    /// drops the database and removes its files.
    pub fn close_database(&self, group: u64, dropped: bool) {
        let rafts = self.database_rafts(group);
        self.shared.databases.lock().remove(&group);
        for (id, raft) in rafts {
            self.shared.groups.remove(GroupId(id));
            self.shared.hosted.lock().remove(&id);
            self.shared.commits.lock().remove(&id);
            let _ = self.block_on(async move { raft.shutdown().await });
            let cleared = if dropped {
                self.log.remove_group(GroupId(id))
            } else {
                self.log.clear_group(GroupId(id), 0)
            };
            if let Err(e) = cleared {
                tracing::warn!(
                    group = id,
                    "the log of a closed group could not be removed: {e}"
                );
            }
        }
    }

    /// Runs `future` on the node's runtime and waits for it here.
    pub(super) fn block_on<T: Send + 'static>(
        &self,
        future: impl std::future::Future<Output = T> + Send + 'static,
    ) -> Result<T, NodeError> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.runtime.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv_timeout(OPEN_TIMEOUT)
            .map_err(|_| NodeError::Raft("the node's runtime did not answer in time".into()))
    }
}

/// The index `raft`'s replica here has applied (0 if none): committed, so
/// a floor for the images a member placed now may install.
pub(super) fn applied_index(raft: &GroupRaft) -> u64 {
    raft.metrics()
        .borrow_watched()
        .last_applied
        .map_or(0, |l| l.index)
}
