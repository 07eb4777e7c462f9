//! The databases a node serves: each one Raft group, replicated on a few
//! nodes, whose replica on this node is the database's own engine.
//!
//! The server's registry (instances and databases, kept as one document in
//! the placement group, [`crate::placement::Registry`]) says which group
//! holds each database and which nodes hold a replica of it. Every node
//! named there opens the database with [`Hosting::open_database`]:
//!
//! * the database's engine, in the directory the registry names, with a
//!   [`GroupCommits`] as its replication, so its commits go through the
//!   group's log under the group's lease, with commit wait (design §5);
//! * the group's replica over the database's own router (so a node that
//!   leads reads what its replica applied), telling the database the
//!   commit timestamps it applies (the hybrid clock's receive rule) and
//!   the schema keys it writes (so a follower reloads its schema and
//!   serves the new tables as soon as it leads);
//! * the group's Raft instance, on the node's shared log store and peer
//!   port. The node that created the database (the registry names it)
//!   initializes the group with every replica as a voter; the others wait
//!   to be contacted.
//!
//! Until split groups are cut at table starts, a database is one group
//! over its whole key space, which therefore also carries its metadata
//! (the DDL log, sequence reservations).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use openraft::BasicNode;
use rowtree_db::Database;
use rowtree_kv::SplitId;
use rowtree_txn::Clock;
use tonic::Status;

use super::{NodeError, Shared};
use crate::lease::LeaseRules;
use crate::placement::{NodeState, Registry};
use crate::raft::{split_group_config, GroupCommits, GroupId, GroupRaft, LogStore, ReplicaMachine};
use crate::{Descriptor, Replica};

/// How long a database's lease lasts; a node that takes over waits for
/// its predecessor's to run out (plus the clock offset).
pub const DATABASE_LEASE: Duration = Duration::from_secs(2);

/// How long a commit or read waits for the group: for a majority, or for
/// an election's outcome.
pub const GROUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How recently a node must have answered a clock heartbeat to count as
/// answering ([`Hosting::answering`]): two and a half heartbeats.
pub const ANSWERED_WITHIN: Duration = Duration::from_millis(2_500);

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
    /// The nodes that hold a replica, each a voter.
    pub members: Vec<u64>,
    /// The node that initializes the group (the one that created the
    /// database).
    pub bootstrap: u64,
}

/// The one split of a database's group: its whole key space.
pub fn whole_database() -> Descriptor {
    Descriptor {
        split: SplitId(1),
        start: Vec::new(),
        limit: None,
        epoch: 1,
    }
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
    /// This node's id.
    pub fn node_id(&self) -> u64 {
        self.shared.id
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
        use openraft::type_config::async_runtime::WatchReceiver;
        let raft = self.shared.hosted.lock().get(&group).cloned()?;
        let leader = raft.metrics().borrow_watched().current_leader;
        leader
    }

    /// Hands the leadership of database group `group` to node `to`, if
    /// this node leads it (and `to` is another node), and waits (up to
    /// [`HAND_OVER_TIMEOUT`]) until this node knows `to` leads: how a
    /// database's leaders are spread over the nodes. The new leader serves
    /// once it has taken the lease, which starts after this node's lease
    /// has run out (design §5), so the database's first requests there
    /// wait for up to a lease's length. Blocks.
    pub fn hand_over(&self, group: u64, to: u64) {
        if to == self.shared.id || self.leader_of(group) != Some(self.shared.id) {
            return;
        }
        let Some(raft) = self.shared.hosted.lock().get(&group).cloned() else {
            return;
        };
        tracing::info!(group, to, "handing the group's leadership over");
        let _ = self.block_on(async move { raft.trigger().transfer_leader(to).await });
        let deadline = std::time::Instant::now() + HAND_OVER_TIMEOUT;
        while self.leader_of(group) != Some(to) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
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
        if id == self.shared.id {
            return true;
        }
        let now = std::time::Instant::now();
        let clocks = self.shared.clocks.lock();
        !clocks.refused(id)
            && !clocks.stopping(id)
            && clocks
                .get(id, now)
                .is_some_and(|s| now.duration_since(s.at) <= ANSWERED_WITHIN)
    }

    /// Whether node `id`'s process started after `wall_nanos` (a time of
    /// this node's wall clock, nanoseconds since the Unix epoch), by more
    /// than the clocks may differ, as its latest clock heartbeat answer
    /// said: what a client began through it before then was begun through
    /// a process that is gone, even one that came back between two
    /// heartbeats and so never stopped answering.
    pub fn started_after(&self, id: u64, wall_nanos: i64) -> bool {
        if id == self.shared.id {
            return false;
        }
        let Some(started) = self.shared.clocks.lock().started(id) else {
            return false;
        };
        let margin = i128::try_from(self.shared.max_clock_offset.as_nanos()).unwrap_or(i128::MAX);
        i128::from(started) * 1_000 > i128::from(wall_nanos).saturating_add(margin)
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
        let id = self.shared.id;
        let clock: Arc<dyn Clock> = Arc::new(NodeClock(self.shared.clock.clone()));
        let rules = LeaseRules {
            duration: DATABASE_LEASE,
            max_offset: self.shared.max_clock_offset,
        };
        let commits = Arc::new(GroupCommits::new(
            id,
            whole_database(),
            rules,
            clock.clone(),
            self.runtime.clone(),
            GROUP_TIMEOUT,
        ));
        let db = Database::open_with(
            dir,
            rowtree_db::Options {
                replication: Some(commits.clone()),
                clock,
                ..options
            },
        )
        .map_err(|e| NodeError::Config(format!("cannot open {}: {e}", dir.display())))?;
        let router = db.shared_router();
        let split = whole_database().split;
        let replica = match Replica::open(router.clone(), split) {
            Ok(replica) => replica,
            Err(crate::Error::Replica { .. }) => Replica::create(router, whole_database())?,
            Err(e) => return Err(e.into()),
        };
        let observer = db.clone();
        let replica = replica
            .with_observer(Arc::new(move |ts| observer.observe_applied(ts)))
            .with_meta_observer(schema_follower(&db, self.runtime.clone()));
        let leases = replica.lease_view();
        let closed = replica.closed_view();
        let prepared = replica.prepared_view();
        let gid = GroupId(group.group);
        let network = self.shared.peers.group(gid);
        let log = self.log.group(gid);
        let raft = self
            .block_on(async move {
                GroupRaft::new(
                    id,
                    split_group_config(),
                    network,
                    log,
                    ReplicaMachine::new(replica),
                )
                .await
            })?
            .map_err(|e| NodeError::Raft(format!("group {}: {e}", group.group)))?;
        self.shared.groups.insert(gid, raft.clone());
        self.shared.hosted.lock().insert(group.group, raft.clone());
        self.shared
            .commits
            .lock()
            .insert(group.group, commits.clone());
        if commits
            .start(raft.clone(), leases, closed, prepared)
            .is_err()
        {
            unreachable!("a new GroupCommits is started once");
        }
        self.runtime.spawn(close_timestamps(
            group.group,
            db.downgrade(),
            Arc::downgrade(&commits),
        ));
        if group.bootstrap == id {
            self.initialize(&raft, group)?;
        }
        tracing::info!(group = group.group, dir = %dir.display(), "serving a database");
        Ok(db)
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

    /// The nodes taken out of the cluster (`rowtree cluster remove`).
    pub fn removed_nodes(&self) -> Result<BTreeSet<u64>, Status> {
        self.nodes_in(NodeState::Removed)
    }

    /// One step of bringing the Raft membership of database group `group`
    /// to `members` (the registry's list of its replicas), if this node
    /// leads the group; what it did, if anything. In order: a member the
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
        use openraft::type_config::async_runtime::WatchReceiver;
        use openraft::ChangeMembers;
        let Some(raft) = self.shared.hosted.lock().get(&group).cloned() else {
            return Ok(None);
        };
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

    /// Stops serving the database of `group` on this node: its Raft
    /// instance stops and the peer port forgets it. The caller drops the
    /// database and removes its files.
    pub fn close_database(&self, group: u64) {
        self.shared.groups.remove(GroupId(group));
        let raft = self.shared.hosted.lock().remove(&group);
        self.shared.commits.lock().remove(&group);
        if let Some(raft) = raft {
            let _ = self.block_on(async move { raft.shutdown().await });
        }
    }

    /// Runs `future` on the node's runtime and waits for it here.
    fn block_on<T: Send + 'static>(
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

/// How often a leader closes timestamps on a database it commits to.
pub const CLOSE_EVERY: Duration = Duration::from_millis(200);

/// How often a leader closes timestamps on a database that had no commits
/// since it last did: each round writes a log entry on every replica (and
/// keeps the lease), which an idle database need not pay five times a
/// second.
pub const IDLE_CLOSE_EVERY: Duration = Duration::from_secs(1);

/// The closed-timestamp ticker of database group `group` on this node
/// (design §5): every [`CLOSE_EVERY`], or [`IDLE_CLOSE_EVERY`] while no
/// commit came, [`GroupCommits::close_timestamp`] with the database's read
/// at the timestamp to close as the barrier. It does something only while
/// the node leads the group, and ends once the database is closed.
async fn close_timestamps(
    group: u64,
    db: rowtree_db::WeakDatabase,
    commits: std::sync::Weak<GroupCommits>,
) {
    let mut last_close = tokio::time::Instant::now();
    let mut proposed_then = u64::MAX;
    loop {
        tokio::time::sleep(CLOSE_EVERY).await;
        let (Some(database), Some(group_commits)) = (db.upgrade(), commits.upgrade()) else {
            return;
        };
        let proposed = group_commits.proposed();
        if proposed == proposed_then && last_close.elapsed() < IDLE_CLOSE_EVERY {
            continue;
        }
        let step = tokio::task::spawn_blocking(move || {
            group_commits.close_timestamp(|c| {
                database
                    .read_only(rowtree_db::TimestampBound::ReadTimestamp(c))
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
        });
        match step.await {
            Ok(Ok(Some(_))) => {
                last_close = tokio::time::Instant::now();
                proposed_then = proposed;
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => tracing::debug!(group, error = %e, "closing a timestamp"),
            Err(_) => return,
        }
    }
}

/// What a database's replica calls with the metadata keys it wrote: when
/// they include the schema's (or an image was installed), the database
/// reloads its schema from the DDL log, on a blocking thread (a schema
/// change running here holds the DDL lock while its entry is applied),
/// once for any number of changes that arrive meanwhile.
fn schema_follower(db: &Database, runtime: tokio::runtime::Handle) -> crate::MetaObserver {
    let db = db.clone();
    let pending = Arc::new(AtomicBool::new(false));
    Arc::new(move |keys: &[Vec<u8>]| {
        let schema = keys.is_empty() || keys.iter().any(|k| Database::is_schema_key(k));
        if !schema || pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let (db, pending) = (db.clone(), pending.clone());
        runtime.spawn_blocking(move || {
            pending.store(false, Ordering::Release);
            if let Err(e) = db.reload_schema() {
                tracing::warn!(error = %e, "reloading the schema a replica applied");
            }
        });
    })
}
