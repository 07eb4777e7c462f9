//! The registry of a cluster node: the document in the placement group,
//! the databases in Raft groups.
//!
//! Every node of a cluster serves the same instances and databases, so
//! their list cannot be a file of one node's. It is the same document as
//! `registry.json` (instances, databases with their metadata), stored in
//! the cluster's placement group with a version
//! (`rowtree_cluster::placement::Registry`), and each database's entry
//! also names its Raft group: the group's id, the nodes holding a replica
//! (the node that created it first, then the live nodes that hold the
//! fewest replicas so far, up to `--replicas`), the node that starts the
//! group, and the node that should lead it: the creating node applies the database's first schema,
//! then hands the leadership over ([`Registry::settle`]), so that
//! databases' leaders spread over the nodes (one database after another
//! around the members).
//!
//! **Changes** (create, update, drop) are made optimistically: a node
//! reads the document, makes the change on a copy (with the same checks as
//! a single process: the instance exists, the name is free, drop
//! protection), and asks the placement leader to store the copy if the
//! version is still the one it read. If another node changed the document
//! meanwhile the leader answers ABORTED, and the node reads again and
//! redoes the change; while the placement group has no leader it asks
//! again; both for up to [`CHANGE_TIMEOUT`]. A change is
//! acknowledged once it is replicated and this node's own state follows it,
//! so a client that creates a database and then uses it through the same
//! node finds it.
//!
//! **Following.** [`Registry::follow`] brings the node's state (what
//! lookups read) to the document: it opens the databases placed on this
//! node (each with `rowtree_cluster::node::databases::Hosting::open_database`,
//! which makes it a replica of its group), keeps those open already,
//! and closes and removes the files of those dropped. The server calls it
//! every [`FOLLOW_EVERY`], and after each change it makes. A database that
//! fails to open is tried again at the next call.
//!
//! **Repair.** The node leading a database's group keeps it replicated
//! ([`Registry::repair_replicas`], after each follow): when a node holding
//! one of its replicas is taken out of the cluster (`rowtree cluster
//! remove`), or has not answered the leader's node for longer than
//! `--dead-after` while the other members are a majority (a dead node:
//! killed, its machine gone, cut off), it names another live node that
//! answers in the document in its place (the
//! one holding the fewest replicas); that node opens an empty replica as it
//! follows the document, the leader adds it to the group as a learner,
//! which is sent the log or a snapshot, makes it a voter once it has
//! caught up, and the removed node leaves the group (and, following the
//! document, closes and deletes its copy). A removed node that leads a
//! group hands it to another member first. A dead node that comes back
//! finds itself no longer listed and deletes its copy once a listed
//! member says the database's groups took it out (a group that took it out
//! while it was away never tells it so itself).
//!
//! **Balance.** The same leader also keeps the replica counts of the
//! nodes within one of each other ([`Registry::repair_replicas`] once the
//! group's membership matches the document): if a member other than
//! itself holds at least two replicas more than the live node holding the
//! fewest (a node that just joined holds none), it names that node in the
//! member's place, one move per node every [`BALANCE_PAUSE`]. The group's
//! membership then follows as for a repair. The member moved off, still
//! serving and voting, hands any group it leads to a listed member and
//! keeps its replica until every listed member votes in each of the
//! database's groups as its replica sees them (or [`RELEASE_TIMEOUT`]
//! passed); then it closes the replica and deletes its files
//! ([`Registry::follow`]). A moved database no longer names a node to
//! start its group (the group exists), so a replica that later comes back
//! to the node that made it starts empty and is sent the data like any
//! other.
//!
//! A node that holds no replica of a database (with three replicas, one
//! of a cluster of four nodes or more) lists it from the document and
//! forwards its requests to a node that does (`forward.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rowtree_cluster::node::databases::{DatabaseGroup, Hosting};
use tonic::{Code, Status};

use super::{
    check_database_name, instance_of, now_nanos, with_advice, Document, GroupMeta, Hosted,
    InstanceMeta, Registry, State, POSTGRESQL, REGISTRY_FORMAT_VERSION,
};
use crate::status;

/// How long a change keeps retrying when other nodes' changes come first.
pub const CHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a replica moved off this node stays open at most, waiting for
/// its group to say that the replicas listed in its place vote
/// ([`Registry::follow`]).
pub const RELEASE_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a node waits after moving a replica to balance the nodes
/// before it moves another: one snapshot at a time, and time for the
/// other leaders to see the new counts.
pub const BALANCE_PAUSE: Duration = Duration::from_secs(10);

/// How often the server brings its state to the placement group's
/// document.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(200);

const INSTANCE: &str = "google.spanner.admin.instance.v1.Instance";
const DATABASE: &str = "google.spanner.admin.database.v1.Database";

/// A replica moved off this node and still open.
#[derive(Debug, Clone, Copy)]
struct Leaving {
    /// Since when the document no longer places it here.
    since: Instant,
    /// When this node last asked the listed members whether it is out of
    /// the database's groups ([`Hosting::members_say_released`]).
    asked: Option<Instant>,
}

/// How often a node whose replica moved off asks the listed members
/// whether the database's groups took it out.
pub const ASK_MEMBERS_EVERY: Duration = Duration::from_secs(1);

/// A cluster node's registry backing (see the module docs).
pub(super) struct Replicated {
    hosting: Hosting,
    /// How many nodes hold a replica of a new database.
    replicas: usize,
    /// The version of the document the state follows (0: none yet).
    followed: parking_lot::Mutex<u64>,
    /// Replicas moved off this node and still open, by directory (see
    /// [`Registry::follow`]).
    leaving: parking_lot::Mutex<BTreeMap<String, Leaving>>,
    /// When this node last moved a replica to balance the nodes.
    last_balance: parking_lot::Mutex<Option<Instant>>,
}

impl Registry {
    /// A cluster node's registry: the document in the placement group that
    /// `hosting` reaches, database files under `dir/databases`, new
    /// databases replicated on `replicas` nodes (fewer while the cluster
    /// has fewer). Opens the databases placed on this node.
    pub fn open_cluster(
        dir: &Path,
        hosting: Hosting,
        replicas: usize,
        options: rowtree_db::Options,
    ) -> Result<Registry, String> {
        std::fs::create_dir_all(dir.join("databases"))
            .map_err(|e| format!("cannot create {}: {e}", dir.join("databases").display()))?;
        let registry = Registry {
            dir: Some(dir.to_path_buf()),
            state: parking_lot::Mutex::new(State {
                instances: Default::default(),
                databases: Default::default(),
                elsewhere: Default::default(),
            }),
            writer: parking_lot::Mutex::new(()),
            options,
            cluster: Some(Replicated {
                hosting,
                replicas: replicas.max(1),
                followed: parking_lot::Mutex::new(0),
                leaving: Default::default(),
                last_balance: Default::default(),
            }),
        };
        registry
            .follow()
            .map_err(|e| format!("opening the cluster's databases: {}", e.message()))?;
        Ok(registry)
    }

    /// Brings this node's state to the placement group's document (see the
    /// module docs); nothing on a single process. Blocks on disk and on the
    /// databases' groups: call it from a thread that may.
    pub fn follow(&self) -> Result<(), Status> {
        let Some(c) = &self.cluster else {
            return Ok(());
        };
        let _writer = self.writer.lock();
        let stored = c.hosting.registry()?;
        if stored.version == *c.followed.lock() {
            return Ok(());
        }
        let doc = parse(&stored.document)?;
        let current = self.state.lock().clone();
        let mut next = State {
            instances: doc
                .instances
                .into_iter()
                .map(|i| (i.name.clone(), i))
                .collect(),
            databases: Default::default(),
            elsewhere: Default::default(),
        };
        let node = c.hosting.node_id();
        let mut failed = None;
        // Whether a replica moved off this node is still open: followed
        // again next time, until it is closed.
        let mut leaving = false;
        for meta in doc.databases {
            let open = current
                .databases
                .get(&meta.name)
                .filter(|h| h.meta.dir == meta.dir);
            let db = match (open, &meta.group) {
                // Moved off this node: served until the group no longer
                // needs this replica, then closed and removed (below).
                (Some(hosted), Some(group)) if !group.members.contains(&node) => {
                    if self.release(c, &meta.name, &meta.dir, group) {
                        next.elsewhere.insert(meta.name.clone(), meta);
                        continue;
                    }
                    leaving = true;
                    hosted.db.clone()
                }
                (Some(hosted), _) => hosted.db.clone(),
                (None, Some(group)) if group.members.contains(&node) => {
                    match self.open_replica(c, &meta, group) {
                        Ok(db) => db,
                        Err(e) => {
                            tracing::error!(database = %meta.name, error = %e, "cannot open a database placed on this node");
                            failed = Some(e);
                            continue;
                        }
                    }
                }
                // Placed on other nodes.
                _ => {
                    next.elsewhere.insert(meta.name.clone(), meta);
                    continue;
                }
            };
            next.databases
                .insert(meta.name.clone(), Hosted { meta, db });
        }
        // Each gone, and whether only from this node (it is placed on
        // others: it may be placed here again) rather than dropped.
        let gone: Vec<(Hosted, bool)> = current
            .databases
            .into_values()
            .filter(|h| {
                next.databases
                    .get(&h.meta.name)
                    .is_none_or(|n| n.meta.dir != h.meta.dir)
            })
            .map(|h| {
                let moved = next
                    .elsewhere
                    .get(&h.meta.name)
                    .is_some_and(|m| m.dir == h.meta.dir);
                (h, moved)
            })
            .collect();
        *self.state.lock() = next;
        for (hosted, moved) in gone {
            if let Some(group) = &hosted.meta.group {
                c.hosting.close_database(group.id, !moved);
            }
            let dir = hosted.meta.dir.clone();
            tracing::info!(database = %hosted.meta.name, "dropped");
            drop(hosted);
            self.remove_dir(&dir);
        }
        match failed {
            None => {
                if !leaving {
                    *c.followed.lock() = stored.version;
                }
                Ok(())
            }
            Some(e) => Err(Status::unavailable(e)),
        }
    }

    /// Keeps the databases this node leads fully replicated (see the
    /// module docs), one step per database per call: a replica on a node
    /// taken out of the cluster is replaced, in the document, by a live
    /// node that holds none (the one holding the fewest replicas); and
    /// the group's Raft membership follows the document's list
    /// ([`Hosting::reconcile_members`]). Nothing on a single process.
    /// Blocks: call it from a thread that may.
    pub fn repair_replicas(&self) -> Result<(), Status> {
        let Some(c) = &self.cluster else {
            return Ok(());
        };
        let node = c.hosting.node_id();
        let led: Vec<Hosted> = self
            .state
            .lock()
            .databases
            .values()
            .filter(|h| {
                h.meta
                    .group
                    .as_ref()
                    .is_some_and(|g| c.hosting.leader_of(g.id) == Some(node))
            })
            .cloned()
            .collect();
        if led.is_empty() {
            return Ok(());
        }
        let removed = c.hosting.removed_nodes()?;
        if removed.contains(&node) {
            // Taken out itself: the groups go to members that stay, which
            // then replace this node.
            for hosted in led {
                let to = hosted.meta.group.as_ref().and_then(|g| {
                    g.members
                        .iter()
                        .copied()
                        .find(|m| *m != node && !removed.contains(m))
                        .map(|m| (g.id, m))
                });
                if let Some((group, to)) = to {
                    tracing::info!(database = %hosted.meta.name, to, "removed: handing the database over");
                    c.hosting.hand_over(group, to);
                }
            }
            return Ok(());
        }
        let may_balance = c
            .last_balance
            .lock()
            .is_none_or(|at| at.elapsed() >= BALANCE_PAUSE);
        let mut balanced = false;
        for hosted in led {
            let Some(group) = &hosted.meta.group else {
                continue;
            };
            if let Some(gone) = group.members.iter().copied().find(|m| removed.contains(m)) {
                self.replace_member(c, &hosted.meta.name, gone, Gone::Removed)?;
                continue;
            }
            if let Some((gone, silent)) = dead_member(&group.members, |m| {
                (m != node)
                    .then(|| c.hosting.dead_for(m, &group.members))
                    .flatten()
            }) {
                self.replace_member(c, &hosted.meta.name, gone, Gone::Silent(silent))?;
                continue;
            }
            if !group.members.contains(&node) {
                // Moved off this node: following the document, it hands
                // the group to a member ([`Registry::follow`]).
                continue;
            }
            match c.hosting.reconcile_members(group.id, &group.members) {
                Ok(Some(what)) => {
                    tracing::info!(database = %hosted.meta.name, "replicas: {what}")
                }
                Ok(None) => {
                    if may_balance
                        && !balanced
                        && c.hosting.members_settled(group.id, &group.members)
                        && self.balance(c, &hosted.meta.name)?
                    {
                        balanced = true;
                        *c.last_balance.lock() = Some(Instant::now());
                    }
                }
                Err(e) => {
                    tracing::warn!(database = %hosted.meta.name, error = %e, "replicas")
                }
            }
        }
        Ok(())
    }

    /// For a replica of `database` (in `dir`) that the document no longer
    /// places on this node (`group` lists its members now): whether to
    /// close it now. Until then this node hands the groups it leads to a
    /// listed member and keeps serving as a voter; it closes the replica
    /// once every listed member votes in each of the database's groups,
    /// as its own replicas see them ([`Hosting::may_release`]) or as a
    /// listed member says ([`Hosting::members_say_released`], asked every
    /// [`ASK_MEMBERS_EVERY`]: a node taken out of a group while it was
    /// away never hears of it, the group no longer sending it anything),
    /// or after [`RELEASE_TIMEOUT`].
    fn release(&self, c: &Replicated, database: &str, dir: &str, group: &GroupMeta) -> bool {
        let Leaving { since, asked } =
            *c.leaving
                .lock()
                .entry(dir.to_string())
                .or_insert_with(|| Leaving {
                    since: Instant::now(),
                    asked: None,
                });
        if let Some(to) = group.members.first() {
            c.hosting.give_up_leadership(group.id, *to);
        }
        let mut ready = c.hosting.may_release(group.id, &group.members);
        if !ready && asked.is_none_or(|at| at.elapsed() >= ASK_MEMBERS_EVERY) {
            if let Some(leaving) = c.leaving.lock().get_mut(dir) {
                leaving.asked = Some(Instant::now());
            }
            ready = c.hosting.members_say_released(group.id, &group.members);
        }
        if !ready && since.elapsed() < RELEASE_TIMEOUT {
            return false;
        }
        c.leaving.lock().remove(dir);
        if ready {
            tracing::info!(database, members = ?group.members, "the replica moved off this node: closing it");
        } else {
            tracing::warn!(database, members = ?group.members, "the replica moved off this node; its group did not say so in time: closing it");
        }
        true
    }

    /// Moves one replica of `database`, which this node leads, from the
    /// member holding the most replicas to the live node holding the
    /// fewest, if they differ by two or more (see the module docs);
    /// whether it did. The leader itself is not moved.
    fn balance(&self, c: &Replicated, database: &str) -> Result<bool, Status> {
        let node = c.hosting.node_id();
        let live = c.answering_live_nodes()?;
        // Decided on the stored document first, so that the placement
        // group is written only when a replica moves; then again on the
        // copy being changed.
        let doc = parse(&c.hosting.registry()?.document)?;
        let wanted = doc
            .databases
            .iter()
            .find(|d| d.name == database)
            .and_then(|d| d.group.as_ref())
            .and_then(|g| balancing_move(&g.members, node, &replicas_held(&doc, &live)));
        if wanted.is_none() {
            return Ok(false);
        }
        let moved = c.change(self, |doc| {
            let held = replicas_held(doc, &live);
            let Some(group) = doc
                .databases
                .iter_mut()
                .find(|d| d.name == database)
                .and_then(|d| d.group.as_mut())
            else {
                return Ok(None);
            };
            let Some((donor, receiver)) = balancing_move(&group.members, node, &held) else {
                return Ok(None);
            };
            swap_member(group, donor, receiver);
            Ok(Some((donor, receiver)))
        })?;
        if let Some((donor, receiver)) = moved {
            tracing::info!(
                database,
                from = donor,
                to = receiver,
                "a replica moves to balance the nodes"
            );
        }
        Ok(moved.is_some())
    }

    /// Names, in the document, a live node that holds no replica of
    /// `database` and answers in place of `gone`, a node taken out of the
    /// cluster or silent for too long.
    fn replace_member(
        &self,
        c: &Replicated,
        database: &str,
        gone: u64,
        why: Gone,
    ) -> Result<(), Status> {
        let live = c.answering_live_nodes()?;
        let replaced = c.change(self, |doc| {
            let held = replicas_held(doc, &live);
            let Some(meta) = doc.databases.iter_mut().find(|d| d.name == database) else {
                return Ok(None);
            };
            let Some(group) = meta.group.as_mut() else {
                return Ok(None);
            };
            if !group.members.contains(&gone) {
                return Ok(None);
            }
            let spare = held
                .iter()
                .filter(|(n, _)| !group.members.contains(n))
                .min_by_key(|(n, count)| (**count, **n))
                .map(|(n, _)| *n);
            match spare {
                Some(spare) => {
                    swap_member(group, gone, spare);
                    Ok(Some(spare))
                }
                // No live node to take it: the group runs one replica
                // short (the node stays listed until one joins).
                None => Ok(None),
            }
        })?;
        match (replaced, why) {
            (Some(spare), Gone::Removed) => tracing::info!(
                database,
                removed = gone,
                replacement = spare,
                "a replica on a removed node is replaced"
            ),
            (Some(spare), Gone::Silent(silent)) => tracing::warn!(
                database,
                silent = gone,
                for_secs = silent.as_secs(),
                replacement = spare,
                "a replica on a node silent for longer than --dead-after is replaced"
            ),
            (None, _) => {}
        }
        Ok(())
    }

    /// Opens this node's replica of the database `meta` describes.
    fn open_replica(
        &self,
        c: &Replicated,
        meta: &super::DatabaseMeta,
        group: &GroupMeta,
    ) -> Result<rowtree_db::Database, String> {
        let root = self
            .dir
            .as_ref()
            .expect("a cluster registry has a directory");
        let options = rowtree_db::Options {
            dialect: if meta.dialect == POSTGRESQL {
                rowtree_types::Dialect::PostgreSql
            } else {
                rowtree_types::Dialect::GoogleSql
            },
            ..with_advice(&self.options, &meta.name)
        };
        let db = c
            .hosting
            .open_database(
                &DatabaseGroup {
                    group: group.id,
                    name: meta.name.clone(),
                    members: group.members.clone(),
                    bootstrap: group.bootstrap,
                    joined: group.joined.clone(),
                },
                &root.join("databases").join(&meta.dir),
                options,
            )
            .map_err(|e| e.to_string())?;
        tracing::info!(database = %meta.name, group = group.id, "opened");
        Ok(db)
    }
}

/// Names `receiver` a member of `group` in place of `donor` (a replacement,
/// or a move by load). The receiver is listed in `joined`: its replica of
/// the first split waits for an image, since the group's log from its
/// start need not hold every row. The group exists, so no node starts it
/// again: not even the one that did, if the replica comes back to it with
/// an empty directory.
fn swap_member(group: &mut GroupMeta, donor: u64, receiver: u64) {
    for m in group.members.iter_mut() {
        if *m == donor {
            *m = receiver;
        }
    }
    if !group.joined.contains(&receiver) {
        group.joined.push(receiver);
    }
    if group.bootstrap == donor {
        group.bootstrap = 0;
    }
}

/// Why a member of a database's group is replaced.
#[derive(Debug, Clone, Copy)]
enum Gone {
    /// Taken out of the cluster (`rowtree cluster remove`).
    Removed,
    /// Silent for this long, longer than `--dead-after`.
    Silent(Duration),
}

/// The member of a group on `members` to replace as dead, with how long it
/// has been silent (`silent` says it of each member: `None` unless it is
/// dead, silent for longer than `--dead-after` to this node and to a
/// majority of the other members, `Hosting::dead_for`): the
/// first such member, provided the members that are not dead are a
/// majority. Otherwise none: the group could not commit the change, and
/// replacing a majority at once would take the data away from the only
/// replicas that hold it.
fn dead_member(
    members: &[u64],
    silent: impl Fn(u64) -> Option<Duration>,
) -> Option<(u64, Duration)> {
    let dead: Vec<(u64, Duration)> = members
        .iter()
        .filter_map(|m| silent(*m).map(|d| (*m, d)))
        .collect();
    let alive = members.len() - dead.len();
    (2 * alive > members.len())
        .then(|| dead.first().copied())
        .flatten()
}

/// How many database replicas each live node holds in `doc` (a live node
/// holding none counts 0; replicas on nodes not in `live` are not counted).
fn replicas_held(doc: &Document, live: &[u64]) -> BTreeMap<u64, usize> {
    let mut held: BTreeMap<u64, usize> = live.iter().map(|n| (*n, 0)).collect();
    for m in doc
        .databases
        .iter()
        .flat_map(|d| d.group.iter().flat_map(|g| g.members.iter()))
    {
        if let Some(n) = held.get_mut(m) {
            *n += 1;
        }
    }
    held
}

/// The replica move that balances a database whose replicas are on
/// `members` and whose group `leader` leads, with `held` the replicas each
/// live node holds: `(donor, receiver)`, the member (not the leader)
/// holding the most replicas and the live non-member holding the fewest
/// (the lowest id among equals), if the donor holds at least two more.
/// None while a member is not live (its replacement comes first).
fn balancing_move(members: &[u64], leader: u64, held: &BTreeMap<u64, usize>) -> Option<(u64, u64)> {
    if members.iter().any(|m| !held.contains_key(m)) {
        return None;
    }
    let receiver = held
        .iter()
        .filter(|(n, _)| !members.contains(n))
        .min_by_key(|(n, count)| (**count, **n))
        .map(|(n, count)| (*n, *count))?;
    let donor = members
        .iter()
        .filter(|m| **m != leader)
        .map(|m| (*m, held[m]))
        .max_by_key(|(m, count)| (*count, std::cmp::Reverse(*m)))?;
    (donor.1 >= receiver.1 + 2).then_some((donor.0, receiver.0))
}

/// The nodes that hold a new database's `replicas` replicas: `node`, the
/// one creating it, first (it starts the group, so it is likely to lead
/// it, and the DDL that follows a creation runs here), then the live nodes
/// that hold the fewest replicas so far (`held`), the lowest id first
/// among equals. So the databases of a cluster larger than the replica
/// count spread over all of its nodes instead of piling onto the first
/// ones.
fn new_members(node: u64, held: &BTreeMap<u64, usize>, replicas: usize) -> Vec<u64> {
    let mut others: Vec<(usize, u64)> = held
        .iter()
        .filter(|(n, _)| **n != node)
        .map(|(n, count)| (*count, *n))
        .collect();
    others.sort_unstable();
    std::iter::once(node)
        .chain(others.into_iter().map(|(_, n)| n))
        .take(replicas.max(1))
        .collect()
}

/// The document from its stored bytes (empty: none yet).
fn parse(bytes: &[u8]) -> Result<Document, Status> {
    if bytes.is_empty() {
        return Ok(Document {
            format_version: Some(REGISTRY_FORMAT_VERSION),
            ..Document::default()
        });
    }
    let doc: Document = serde_json::from_slice(bytes).map_err(|e| {
        Status::internal(format!("the cluster's registry document is damaged: {e}"))
    })?;
    doc.check_format(Path::new("the cluster's registry"))
        .map_err(|e| Status::failed_precondition(e.to_string()))?;
    Ok(doc)
}

impl Replicated {
    /// Makes `change` on the current document and stores it, again on a
    /// fresh copy whenever another change came first (see the module
    /// docs); then brings `registry` up to it.
    fn change<T>(
        &self,
        registry: &Registry,
        mut change: impl FnMut(&mut Document) -> Result<T, Status>,
    ) -> Result<T, Status> {
        let deadline = Instant::now() + CHANGE_TIMEOUT;
        loop {
            let stored = self.hosting.registry()?;
            let mut doc = parse(&stored.document)?;
            let out = change(&mut doc)?;
            doc.format_version = Some(REGISTRY_FORMAT_VERSION);
            let bytes = serde_json::to_vec(&doc).map_err(|e| Status::internal(e.to_string()))?;
            match self.hosting.replace_registry(stored.version, bytes) {
                Ok(_) => {
                    registry.follow()?;
                    return Ok(out);
                }
                // Another change came first: redo this one on it.
                Err(s) if s.code() == Code::Aborted && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                // The placement group is electing a leader (or the one
                // this node knew is gone): ask again once it has one.
                Err(s) if s.code() == Code::Unavailable && Instant::now() < deadline => {
                    tracing::debug!(error = %s.message(), "changing the registry; again");
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(s) => return Err(s),
            }
        }
    }

    pub(super) fn create_instance(
        &self,
        registry: &Registry,
        meta: InstanceMeta,
    ) -> Result<(), Status> {
        self.change(registry, |doc| {
            if doc.instances.iter().any(|i| i.name == meta.name) {
                return Err(Status::already_exists(format!(
                    "Instance already exists: {}",
                    meta.name
                )));
            }
            doc.instances.push(meta.clone());
            Ok(())
        })
    }

    pub(super) fn update_instance(
        &self,
        registry: &Registry,
        meta: InstanceMeta,
    ) -> Result<(), Status> {
        self.change(registry, |doc| {
            let found = doc
                .instances
                .iter_mut()
                .find(|i| i.name == meta.name)
                .ok_or_else(|| status::not_found(INSTANCE, &meta.name))?;
            *found = meta.clone();
            Ok(())
        })
    }

    pub(super) fn delete_instance(&self, registry: &Registry, name: &str) -> Result<(), Status> {
        let prefix = format!("{name}/databases/");
        self.change(registry, |doc| {
            if !doc.instances.iter().any(|i| i.name == name) {
                return Err(status::not_found(INSTANCE, name));
            }
            if let Some(protected) = doc
                .databases
                .iter()
                .find(|d| d.name.starts_with(&prefix) && d.enable_drop_protection)
            {
                return Err(Status::failed_precondition(format!(
                    "Cannot delete instance {name}: database {} has drop protection enabled",
                    protected.name
                )));
            }
            doc.instances.retain(|i| i.name != name);
            doc.databases.retain(|d| !d.name.starts_with(&prefix));
            Ok(())
        })
    }

    pub(super) fn create_database(
        &self,
        registry: &Registry,
        name: &str,
        proto_descriptors: &[u8],
        dialect: i32,
    ) -> Result<Hosted, Status> {
        check_database_name(name)?;
        let instance = instance_of(name).unwrap_or_default().to_string();
        let node = self.hosting.node_id();
        let live = self.hosting.live_nodes()?;
        let dir = uuid::Uuid::new_v4().simple().to_string();
        use base64::Engine as _;
        let protos = base64::engine::general_purpose::STANDARD.encode(proto_descriptors);
        self.change(registry, |doc| {
            if !doc.instances.iter().any(|i| i.name == instance) {
                return Err(status::not_found(INSTANCE, &instance));
            }
            if doc.databases.iter().any(|d| d.name == name) {
                return Err(Status::already_exists(format!(
                    "Database already exists: {name}"
                )));
            }
            let id = doc.next_group.max(1);
            doc.next_group = id + 1;
            let members = new_members(node, &replicas_held(doc, &live), self.replicas);
            doc.databases.push(super::DatabaseMeta {
                name: name.to_string(),
                dir: dir.clone(),
                create_time: now_nanos(),
                enable_drop_protection: false,
                proto_descriptors: protos.clone(),
                dialect: if dialect == 0 { 1 } else { dialect },
                group: Some(GroupMeta {
                    id,
                    members: members.clone(),
                    bootstrap: node,
                    joined: Vec::new(),
                    // Leaders spread over the nodes, one database after
                    // another.
                    leader: members[(id as usize) % members.len()],
                }),
            });
            Ok(())
        })?;
        registry.database(name)
    }

    pub(super) fn update_database(
        &self,
        registry: &Registry,
        name: &str,
        f: impl FnOnce(&mut super::DatabaseMeta),
    ) -> Result<Hosted, Status> {
        // The change, made once on the metadata as it is now; a retry
        // stores the same result in a fresher document.
        let mut wanted = self
            .current(name)?
            .ok_or_else(|| status::not_found(DATABASE, name))?;
        f(&mut wanted);
        self.change(registry, |doc| {
            let found = doc
                .databases
                .iter_mut()
                .find(|d| d.name == name && d.dir == wanted.dir)
                .ok_or_else(|| status::not_found(DATABASE, name))?;
            *found = wanted.clone();
            Ok(())
        })?;
        registry.database(name)
    }

    pub(super) fn drop_database(&self, registry: &Registry, name: &str) -> Result<(), Status> {
        self.change(registry, |doc| {
            let found = doc
                .databases
                .iter()
                .find(|d| d.name == name)
                .ok_or_else(|| status::not_found(DATABASE, name))?;
            if found.enable_drop_protection {
                return Err(Status::failed_precondition(format!(
                    "Cannot drop database {name}: drop protection is enabled"
                )));
            }
            doc.databases.retain(|d| d.name != name);
            Ok(())
        })
    }

    /// Hands a database made here to the node that should lead it.
    pub(super) fn settle(&self, hosted: &Hosted) {
        if let Some(group) = &hosted.meta.group {
            if group.leader != 0 {
                self.hosting.hand_over(group.id, group.leader);
            }
        }
    }

    /// An instance in the stored document (made through another node, and
    /// not yet followed here).
    /// The live nodes that answer this node's clock heartbeats: those a
    /// replica may be placed on.
    fn answering_live_nodes(&self) -> Result<Vec<u64>, Status> {
        Ok(self
            .hosting
            .live_nodes()?
            .into_iter()
            .filter(|n| self.hosting.answering(*n))
            .collect())
    }

    /// The cluster's id (empty until the node knows its cluster).
    pub(super) fn cluster_id(&self) -> String {
        self.hosting.cluster_id()
    }

    pub(super) fn stored_instance(&self, name: &str) -> Result<Option<InstanceMeta>, Status> {
        let doc = parse(&self.hosting.registry()?.document)?;
        Ok(doc.instances.into_iter().find(|i| i.name == name))
    }

    /// Why this node does not serve database `name`: NOT_FOUND if the
    /// stored document does not list it; UNAVAILABLE if it does (made a
    /// moment ago through another node and not yet opened here, or placed
    /// on other nodes only), which clients retry.
    pub(super) fn not_here(&self, name: &str) -> Result<Status, Status> {
        Ok(match self.current(name)? {
            None => status::not_found(DATABASE, name),
            Some(meta) => match meta.group {
                Some(g) if !g.members.contains(&self.hosting.node_id()) => {
                    Status::unavailable(format!(
                        "database {name} is served by nodes {:?}, not by node {}; connect to one of them",
                        g.members,
                        self.hosting.node_id()
                    ))
                }
                _ => Status::unavailable(format!(
                    "database {name} is being opened on node {}; try again",
                    self.hosting.node_id()
                )),
            },
        })
    }

    /// A database's metadata in the stored document.
    fn current(&self, name: &str) -> Result<Option<super::DatabaseMeta>, Status> {
        let doc = parse(&self.hosting.registry()?.document)?;
        Ok(doc.databases.into_iter().find(|d| d.name == name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database(members: &[u64]) -> super::super::DatabaseMeta {
        super::super::DatabaseMeta {
            group: Some(GroupMeta {
                id: 1,
                members: members.to_vec(),
                bootstrap: members[0],
                leader: members[0],
                joined: Vec::new(),
            }),
            name: String::new(),
            dir: String::new(),
            create_time: 0,
            enable_drop_protection: false,
            proto_descriptors: String::new(),
            dialect: 1,
        }
    }

    #[test]
    fn new_databases_spread_over_the_least_loaded_nodes() {
        let live = [1, 2, 3, 4, 5];
        let mut doc = Document::default();
        // Four databases made through node 5, one after the other, as the
        // Python suite does through the last node of a five-node cluster.
        let mut placed = Vec::new();
        for _ in 0..4 {
            let members = new_members(5, &replicas_held(&doc, &live), 3);
            doc.databases.push(database(&members));
            placed.push(members);
        }
        assert_eq!(
            placed,
            vec![vec![5, 1, 2], vec![5, 3, 4], vec![5, 1, 2], vec![5, 3, 4]]
        );
        let held = replicas_held(&doc, &live);
        assert!(held.values().all(|n| *n >= 2), "{held:?}");
    }

    #[test]
    fn a_joining_node_receives_replicas_until_counts_are_within_one() {
        // Three nodes, three databases on all of them; nodes 4 and 5 join.
        let mut doc = Document::default();
        for _ in 0..3 {
            doc.databases.push(database(&[1, 2, 3]));
        }
        let live = [1, 2, 3, 4, 5];
        let mut moves = Vec::new();
        // Database i is led by node i + 1 (leaders spread over the nodes);
        // each leader balances, one move at a time.
        let leader = |i: usize| i as u64 + 1;
        while let Some(i) = (0..doc.databases.len()).find(|i| {
            let held = replicas_held(&doc, &live);
            let members = &doc.databases[*i].group.as_ref().unwrap().members;
            balancing_move(members, leader(*i), &held).is_some()
        }) {
            let held = replicas_held(&doc, &live);
            let group = doc.databases[i].group.as_mut().unwrap();
            let (from, to) = balancing_move(&group.members, leader(i), &held).unwrap();
            assert_ne!(from, leader(i), "the leader is not moved");
            for m in group.members.iter_mut() {
                if *m == from {
                    *m = to;
                }
            }
            moves.push((i, from, to));
            assert!(moves.len() <= 9, "balancing ends: {moves:?}");
        }
        let held = replicas_held(&doc, &live);
        let (min, max) = (held.values().min(), held.values().max());
        assert!(max.unwrap() - min.unwrap() <= 1, "{held:?} after {moves:?}");
        assert_eq!(held.values().sum::<usize>(), 9);
        assert!(held[&4] >= 1 && held[&5] >= 1, "{held:?}");
        // Already within one: nothing moves.
        assert!(balancing_move(&[1, 2, 4], 1, &held).is_none());
        // A member not live: its repair comes first.
        let without_3 = BTreeMap::from([(1, 3), (2, 3), (4, 0)]);
        assert_eq!(balancing_move(&[1, 2, 3], 1, &without_3), None);
    }

    #[test]
    fn a_member_named_later_is_listed_as_joined_and_never_starts_the_group() {
        let mut group = GroupMeta {
            id: 1,
            members: vec![1, 2, 3],
            bootstrap: 1,
            leader: 2,
            joined: Vec::new(),
        };
        swap_member(&mut group, 3, 4);
        assert_eq!(group.members, vec![1, 2, 4]);
        assert_eq!((group.bootstrap, group.joined.clone()), (1, vec![4]));
        // The node that made the group leaves, and comes back later: it is
        // a member named later like any other, and starts nothing.
        swap_member(&mut group, 1, 5);
        assert_eq!((group.bootstrap, group.joined.clone()), (0, vec![4, 5]));
        swap_member(&mut group, 4, 1);
        swap_member(&mut group, 5, 4);
        assert_eq!(group.members, vec![4, 2, 1]);
        assert_eq!(group.joined, vec![4, 5, 1]);
        let json = serde_json::to_string(&group).unwrap();
        let back: GroupMeta = serde_json::from_str(&json).unwrap();
        assert_eq!(back.joined, group.joined);
        // A registry written before `joined` existed reads as none joined.
        let old: GroupMeta =
            serde_json::from_str(r#"{"id":1,"members":[1,2,3],"bootstrap":1}"#).unwrap();
        assert!(old.joined.is_empty());
    }

    #[test]
    fn a_dead_member_is_replaced_only_while_the_others_are_a_majority() {
        let silent = |dead: &'static [u64]| {
            move |m: u64| dead.contains(&m).then_some(Duration::from_secs(70))
        };
        assert_eq!(dead_member(&[1, 2, 3], silent(&[])), None);
        assert_eq!(
            dead_member(&[1, 2, 3], silent(&[3])),
            Some((3, Duration::from_secs(70)))
        );
        assert_eq!(
            dead_member(&[1, 2, 3], silent(&[2, 3])),
            None,
            "no majority left"
        );
        assert_eq!(
            dead_member(&[1, 2, 3, 4, 5], silent(&[2, 4])),
            Some((2, Duration::from_secs(70)))
        );
        assert_eq!(dead_member(&[1, 2, 3, 4], silent(&[2, 4])), None);
        assert_eq!(dead_member(&[1], silent(&[])), None);
    }

    #[test]
    fn replicas_on_nodes_no_longer_live_are_not_counted() {
        let mut doc = Document::default();
        doc.databases.push(database(&[1, 2, 9]));
        let held = replicas_held(&doc, &[1, 2, 3]);
        assert_eq!(held, BTreeMap::from([(1, 1), (2, 1), (3, 0)]));
        // Node 3 is preferred to the loaded node 2; never more than the
        // live nodes.
        assert_eq!(new_members(1, &held, 3), vec![1, 3, 2]);
        assert_eq!(new_members(1, &held, 5), vec![1, 3, 2]);
    }
}
