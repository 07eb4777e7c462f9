//! Where a database's split groups keep their replicas.
//!
//! The registry places a database on its *hosts* (`--replicas` nodes):
//! they hold the first split, whose group carries the database's metadata,
//! and serve the database's sessions. Every other split is a group of its
//! own whose voters are some of the hosts: `--split-replicas` of them
//! ([`Hosting::set_split_replicas`]; by default all of them). So with four
//! hosts and three replicas per split, each split lives on three of the
//! four nodes, and the nodes can share a load no three of them could
//! carry. A host without a replica of a split reads it from one that has
//! one (`node::remote`); its commits go to the split's leader, which holds
//! a replica, as they do already.
//!
//! Each group's leader keeps its voters in line, one step per round
//! ([`DatabaseGroups::place_replicas`], every [`PLACE_EVERY`]):
//!
//! * the voters kept are those still among the hosts (a host taken out of
//!   the database, or out of the cluster, leaves every group);
//! * below the count, the host to add is the one holding the fewest of the
//!   database's split replicas, then the least loaded, not yet a voter
//!   (one already a learner of the group first); above it (a new half of a
//!   cut starts with the old group's voters, all the hosts), the voter
//!   holding the most, then the busiest, leaves, other than the leader and
//!   the first split's leader (where cold groups gather). Counts come from
//!   the groups held here, which is nearly all of them;
//! * the change itself is [`Hosting::reconcile_group`]'s: a new member is
//!   asked to hold an empty replica (`HostSplit`), sent a snapshot as a
//!   learner, made a voter once caught up; then the voters change in one
//!   joint step, and nodes no longer wanted leave the group.
//!
//! The lease balancer can also ask for a voter to be replaced by another
//! host (`node::leases`, `Decision::Replace`, recorded in
//! `DatabaseGroups::moves`): the load of a group whose voters are all busy
//! then moves to a node that held none of it, its lease following once it
//! votes. The first split's leader is never the voter taken out (cold
//! groups gather there).
//!
//! **Given back.** A node down while a split was cut, and back after the
//! cut split's log was purged past the cut, is sent an image of the left
//! half: its replica shrinks to it ([`crate::MergeObserver`]), but it never
//! applied the `SplitAt` that makes the right half's replica, so it holds
//! none, though it is a voter of the right half's group. The group's
//! leader sees it: a member that acknowledged none of the log for
//! [`GIVE_BACK_AFTER`] while its node answers. It asks the node (`Locate`)
//! whether a replica there covers the split's start; if none does (the
//! node has shrunk), it makes sure its log no longer starts at the group's
//! start ([`crate::raft::snapshot_and_purge`]),
//! then asks the node to hold an empty replica (`HostSplit`), which the
//! group fills with the snapshot. In that order: a replica made empty must
//! never be sent the log from the group's start, whose first writes were
//! the cut's own and are in no entry. (A node that has not applied the cut
//! yet still covers the start, and is asked again later.) The replica
//! `HostSplit` makes awaits an image ([`Replica::create_for_image`]): it
//! applies no entry before one, and its node refuses the log from the
//! group's start. So if leadership moved between the purge and
//! `HostSplit`, and the new leader's log is whole, the member acknowledges
//! nothing still; asked again, the node answers that its replica awaits an
//! image, and the leader purges its own log, which makes openraft send
//! one. The same holds for a member added by a membership change.
//!
//! **Leaving.** A node that is no longer a member of a split's group
//! (neither a voter nor a learner) releases its replica ([`DatabaseGroups::release`]): the group leaves
//! the database's groups here (its keys become a gap, read from the nodes
//! that hold them), its Raft instance stops, its log is cleared, and after
//! [`RELEASE_GRACE`] (reads already running on the replica finish) the
//! replica is deleted from the engine ([`Replica::discard_rows`]; its
//! applied state is deleted at once, before the log,
//! [`Replica::forget`], so that no crash leaves a replica without its log;
//! the group's vote is kept, [`crate::raft::LogStore::clear_group`], as the node may be
//! placed in the group again and must not forget its term, and so is an
//! image floor, an index known committed when it left: placed again, its
//! replica refuses an image older than that, which could still count it a
//! voter). It knows it
//! left from its own replica's membership, if that counted it before in
//! this process (the change taking it out reached it; a replica restarted
//! on an image taken before it was added applies a membership without it
//! that says nothing of the kind), or, since a group stops sending
//! anything to a node it took out, from the group's leader: every
//! [`ASK_EVERY`] it asks the voters it knows (`Locate` over the peer port)
//! and counts only the answer of one leading the group that has applied at
//! least as far as its own replica.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::type_config::async_runtime::WatchReceiver;
use rowtree_kv::SplitId;

use super::Hosting;
use crate::node::api::LocateRequest;
use crate::node::splits::{overlaps, raft_group, DatabaseGroups};
use crate::raft::{GroupCommits, GroupRaft};
use crate::Replica;

/// How often each node places the replicas of the groups it leads and
/// releases those it left.
pub const PLACE_EVERY: Duration = Duration::from_secs(1);

/// How often a node asks a voter of a group it holds a replica of, and
/// does not lead, whether it is still a member.
pub const ASK_EVERY: Duration = Duration::from_secs(5);

/// How long a released replica's rows stay on the engine after its group
/// left the database's groups here: reads already running on it finish.
/// (A replica of the split placed here again meanwhile keeps them: its
/// image clears them.)
pub const RELEASE_GRACE: Duration = Duration::from_secs(5);

/// A replica move the lease balancer asked for that is not done by then
/// (the new member never caught up, say) is given up: the group's voters
/// are placed by the usual rule again.
pub const MOVE_GIVEN_UP: Duration = Duration::from_secs(60);

/// In the score that picks which host gains or loses a split's replica,
/// one replica more counts as much as this many nodes' worth of load:
/// replica counts decide, load breaks ties.
const REPLICA_WEIGHT: f64 = 2.0;

/// How long a member of a group led here may go without acknowledging any
/// of the group's log, while its node answers, before the leader asks
/// whether the node holds a replica of the split at all (see the module
/// docs, "Given back"); and how long it then waits before asking again.
pub const GIVE_BACK_AFTER: Duration = Duration::from_secs(5);

/// How long a `Locate` question about a group's voters may take.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);

/// The members of a group led here (by `metrics`, this node `me`'s) that
/// acknowledged none of its log.
fn unmatched_members(
    metrics: &openraft::RaftMetrics<crate::raft::TypeConfig>,
    me: u64,
) -> Vec<u64> {
    metrics
        .replication
        .iter()
        .flatten()
        .filter(|(id, matched)| **id != me && matched.is_none())
        .map(|(id, _)| *id)
        .collect()
}

/// What one round did to a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Placed {
    /// A step of a membership change of a group this node leads.
    Changed(String),
    /// This node left the group; its replica is released.
    Released(SplitId),
}

/// The voters a group led here should have: those of `voters` among
/// `hosts`, then one added (below `target`) or one removed (above it).
/// `load` scores each node (its replicas of the database's splits, then
/// its utilization): the lowest is added, the highest removed; `learners` are the group's
/// non-voting members (preferred when adding: they hold a replica
/// already); the nodes in `keep` (the group's leader, and the first
/// split's, where cold groups gather) are never removed.
pub(super) fn wanted_voters(
    voters: &BTreeSet<u64>,
    learners: &BTreeSet<u64>,
    hosts: &BTreeSet<u64>,
    target: usize,
    keep: &[u64],
    load: &dyn Fn(u64) -> f64,
) -> BTreeSet<u64> {
    let mut wanted: BTreeSet<u64> = voters.intersection(hosts).copied().collect();
    let target = target.clamp(1, hosts.len().max(1));
    if wanted.len() < target {
        let add = hosts
            .iter()
            .copied()
            .filter(|h| !wanted.contains(h))
            .min_by(|a, b| {
                learners
                    .contains(b)
                    .cmp(&learners.contains(a))
                    .then(load(*a).total_cmp(&load(*b)))
                    .then(a.cmp(b))
            });
        wanted.extend(add);
    } else if wanted.len() > target {
        let drop = wanted
            .iter()
            .copied()
            .filter(|v| !keep.contains(v))
            .max_by(|a, b| load(*a).total_cmp(&load(*b)).then(a.cmp(b)));
        if let Some(drop) = drop {
            wanted.remove(&drop);
        }
    }
    wanted
}

impl DatabaseGroups {
    /// The node's hosting handle, for membership changes.
    fn hosting(&self) -> Option<Hosting> {
        Some(Hosting {
            shared: self.shared.upgrade()?,
            log: self.log.clone(),
            runtime: self.runtime.clone(),
        })
    }

    /// One round of placing the replicas of the split groups this node
    /// leads and releasing those it left (see the module docs). Blocks;
    /// run it from a thread that may.
    pub(super) fn place_replicas(self: &Arc<Self>, tending: &mut Tending) -> Vec<Placed> {
        let Some(hosting) = self.hosting() else {
            return Vec::new();
        };
        let shared = hosting.shared.clone();
        let me = shared.id;
        let groups = self.groups.groups();
        let Some(first) = groups.first() else {
            return Vec::new();
        };
        let hosts: BTreeSet<u64> = first.members().0;
        if hosts.is_empty() {
            return Vec::new();
        }
        let per_split = shared.split_replicas.load(Ordering::Relaxed);
        let target = if per_split == 0 {
            hosts.len()
        } else {
            per_split
        };
        let view = shared.load_view();
        // How many of the database's split replicas each node holds, as
        // the groups held here list their voters: replicas are spread by
        // count first (every replica applies every write of its split),
        // then by load.
        let mut held: BTreeMap<u64, usize> = BTreeMap::new();
        for group in groups.iter().skip(1) {
            for voter in group.members().0 {
                *held.entry(voter).or_default() += 1;
            }
        }
        let load = |held: &BTreeMap<u64, usize>, id: u64| {
            let utilization = if id == me {
                view.mine
            } else {
                view.others.get(&id).copied().unwrap_or(0.0)
            };
            held.get(&id).copied().unwrap_or(0) as f64 * REPLICA_WEIGHT + utilization.min(1.0)
        };
        let first_leader = first.current_leader();
        let mut done = Vec::new();
        let mut led = BTreeSet::new();
        // The first split's members are the hosts, placed by the registry:
        // its leader only sends an image to a member that awaits one.
        let first_raft = shared
            .hosted
            .lock()
            .get(&raft_group(self.database, first.split_id()).0)
            .cloned();
        if let Some(raft) = first_raft {
            let m = raft.metrics().borrow_watched().clone();
            if m.current_leader == Some(me) {
                led.insert(first.split_id());
                let unmatched = unmatched_members(&m, me);
                if let Some(what) = self.give_back(&hosting, first, &raft, &unmatched, false) {
                    done.push(Placed::Changed(what));
                }
            }
        }
        for group in groups.iter().skip(1) {
            let gid = raft_group(self.database, group.split_id());
            let Some(raft) = shared.hosted.lock().get(&gid.0).cloned() else {
                continue;
            };
            let m = raft.metrics().borrow_watched().clone();
            let membership = m.membership_config.membership().clone();
            let joint = membership.get_joint_config().len() > 1;
            let last: BTreeSet<u64> = membership
                .get_joint_config()
                .last()
                .cloned()
                .unwrap_or_default();
            if m.current_leader == Some(me) {
                let voters: BTreeSet<u64> = membership.voter_ids().collect();
                let nodes: BTreeSet<u64> = membership.nodes().map(|(id, _)| *id).collect();
                let learners: BTreeSet<u64> = nodes.difference(&voters).copied().collect();
                led.insert(group.split_id());
                let unmatched = unmatched_members(&m, me);
                if let Some(what) = self.give_back(&hosting, group, &raft, &unmatched, true) {
                    done.push(Placed::Changed(what));
                }
                // A joint configuration left by a leader that died in the
                // middle of a change is finished first: to its new voters.
                let requested = self
                    .moves
                    .lock()
                    .get(&group.split_id())
                    .copied()
                    .filter(|(_, _, at)| at.elapsed() < MOVE_GIVEN_UP);
                let moved = requested.and_then(|(from, to, _)| {
                    let mut wanted = voters.clone();
                    (from != me && hosts.contains(&to)).then(|| {
                        wanted.remove(&from);
                        wanted.insert(to);
                        wanted
                    })
                });
                let keep: Vec<u64> = std::iter::once(me).chain(first_leader).collect();
                // A merge into the left neighbour, declined because its
                // voters differ: this group takes the left one's voters
                // (all hosts, this node among them), whatever their count.
                let merging = self
                    .groups
                    .merge_wish(group.split_id())
                    .filter(|w| w.contains(&me) && w.is_subset(&hosts));
                let wanted = if joint {
                    last.clone()
                } else if let Some(moved) = moved {
                    moved
                } else if let Some(merging) = merging {
                    self.moves.lock().remove(&group.split_id());
                    merging
                } else {
                    self.moves.lock().remove(&group.split_id());
                    let wanted = wanted_voters(&voters, &learners, &hosts, target, &keep, &|id| {
                        load(&held, id)
                    });
                    // Counted as done for the groups placed after it in this
                    // round: groups cut at once (all on the same voters) are
                    // trimmed from different nodes, not all from the same.
                    for gone in voters.difference(&wanted) {
                        if let Some(n) = held.get_mut(gone) {
                            *n = n.saturating_sub(1);
                        }
                    }
                    for added in wanted.difference(&voters) {
                        *held.entry(*added).or_default() += 1;
                    }
                    wanted
                };
                if wanted == voters && nodes == wanted {
                    self.moves.lock().remove(&group.split_id());
                    continue;
                }
                let wanted: Vec<u64> = wanted.into_iter().collect();
                match hosting.reconcile_group(self.database, gid.0, raft, group, &wanted) {
                    Ok(Some(what)) => done.push(Placed::Changed(what)),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(
                        database = self.database,
                        split = %group.split_id(),
                        "placing the split's replicas: {e}"
                    ),
                }
                continue;
            }
            // Not led here: still a member (a voter, or a learner being
            // sent the log)? Out once a membership without this node is
            // applied here (so committed) after one with it was, or once
            // the group's leader says so (see the module docs, "Leaving").
            let applied = m.last_applied.map_or(0, |l| l.index);
            let config_applied = m
                .membership_config
                .log_id()
                .as_ref()
                .is_some_and(|l| l.index <= applied);
            let member = membership.nodes().any(|(id, _)| *id == me);
            let split = group.split_id();
            if member && config_applied {
                tending.members.insert(split);
            }
            // Out, and an index known committed then (the floor of the
            // images the replica takes if it is placed here again).
            let out = (!joint
                && !last.is_empty()
                && !member
                && config_applied
                && tending.members.contains(&split))
            .then_some(applied);
            let out = out.or_else(|| {
                let due = tending
                    .asked
                    .get(&split)
                    .is_none_or(|at| at.elapsed() >= ASK_EVERY);
                due.then(|| {
                    tending.asked.insert(split, Instant::now());
                    self.leader_says_out(&hosting, group, &last)
                })
                .flatten()
            });
            if out.is_some_and(|known| self.release(&hosting, split, known)) {
                tending.asked.remove(&split);
                tending.members.remove(&split);
                done.push(Placed::Released(split));
            }
        }
        let held = |split: &SplitId| groups.iter().any(|g| g.split_id() == *split);
        tending.asked.retain(|split, _| held(split));
        tending.members.retain(held);
        self.unmatched
            .lock()
            .retain(|(split, _), _| led.contains(split));
        done
    }

    /// Of the members of `group` (led here) in `unmatched`, which have
    /// acknowledged none of its log: one that has not for
    /// [`GIVE_BACK_AFTER`], whose node answers, is sent an image if its
    /// replica awaits one, or, if it holds no replica covering the split's
    /// start and `may_host` (a split other than the first), is given the
    /// split back (see the module docs). What was done, if anything.
    fn give_back(
        &self,
        hosting: &Hosting,
        group: &GroupCommits,
        raft: &GroupRaft,
        unmatched: &[u64],
        may_host: bool,
    ) -> Option<String> {
        let split = group.split_id();
        let due: Vec<u64> = {
            let mut since = self.unmatched.lock();
            since.retain(|(s, node), _| *s != split || unmatched.contains(node));
            unmatched
                .iter()
                .copied()
                .filter(|node| {
                    let at = *since.entry((split, *node)).or_insert_with(Instant::now);
                    at.elapsed() >= GIVE_BACK_AFTER && hosting.answering(*node)
                })
                .collect()
        };
        for node in due {
            // Asked again only after another while, whatever the answer.
            self.unmatched.lock().insert((split, node), Instant::now());
            let d = group.descriptor();
            let Some(reply) = self.locate_at(hosting, node, &d.start) else {
                continue;
            };
            if reply.found && reply.split == d.split.0 && reply.awaits_image {
                // The node holds the empty replica it was asked to hold,
                // and refuses this leader's log from its start: the log
                // is purged, so that it is sent an image instead. (This
                // leader was elected after the one that asked, whose log
                // was purged, or the node restarted before its image.)
                return match hosting.snapshot_and_purge(raft, &d, node) {
                    Ok(()) => Some(format!(
                        "node {node}'s replica of {} awaits an image: the group's log is \
                         purged, and it is sent the snapshot",
                        d.split
                    )),
                    Err(e) => {
                        tracing::warn!(
                            database = self.database,
                            split = %d.split,
                            "sending node {node} an image: {e}"
                        );
                        None
                    }
                };
            }
            if reply.found || !may_host {
                // A replica there covers the split's start: the split's
                // own (the member is only slow), or a wider one that has
                // not applied the cut yet. (The first split's replica is
                // made with the database.)
                continue;
            }
            let Ok(records) = hosting.shared.records() else {
                continue;
            };
            let Some(record) = records.get(&node) else {
                continue;
            };
            let floor = super::applied_index(raft);
            let given = hosting
                .snapshot_and_purge(raft, &d, node)
                .and_then(|()| hosting.host_at(self.database, &d, node, &record.peer_addr, floor));
            match given {
                Ok(None) => {
                    return Some(format!(
                        "node {node}, a member of {}'s group, held no replica of it (it missed \
                         the cut that made the split): it holds an empty one again and is sent \
                         the group's snapshot",
                        d.split
                    ))
                }
                Ok(Some(waiting)) => return Some(waiting),
                Err(e) => tracing::warn!(
                    database = self.database,
                    split = %d.split,
                    "giving node {node} its replica back: {e}"
                ),
            }
        }
        None
    }

    /// Node `node`'s answer to which of its replicas holds `key`, within
    /// [`ASK_TIMEOUT`]; `None` if it did not answer.
    fn locate_at(
        &self,
        hosting: &Hosting,
        node: u64,
        key: &[u8],
    ) -> Option<crate::node::api::LocateReply> {
        let records = hosting.shared.records().ok()?;
        let channel = records
            .get(&node)
            .and_then(|r| hosting.shared.peers.channel(&r.peer_addr).ok())?;
        let request = LocateRequest {
            database: self.database,
            key: key.to_vec(),
            before: false,
        };
        hosting
            .block_on(async move {
                let mut client = crate::node::api::NodeClient::new(channel);
                let mut request = tonic::Request::new(request);
                request.set_timeout(ASK_TIMEOUT);
                client
                    .locate(request)
                    .await
                    .ok()
                    .map(tonic::Response::into_inner)
            })
            .ok()
            .flatten()
    }

    /// Whether the leader of `group` says the group holds the split with
    /// members that do not include this node: if so, the index the leader
    /// had applied. Asks the voters as this
    /// node's replica lists them (`voters`) in turn, within
    /// [`ASK_TIMEOUT`] each, and then the leader one of them names, if it
    /// is not among them; only the answer of a node that leads the group,
    /// and has applied at least as far as this node's replica, counts. A
    /// follower's view may be older than this node's joining (a follower
    /// that has not yet applied the change adding it), and so may this
    /// node's own (a replica restarted on an image taken before the
    /// change), and a leader that applied less may have been cut off since
    /// and not know of the next one. (The term is no guide: a node taken
    /// out that never learned it stands for election again and again, and
    /// its term grows past the leader's.)
    fn leader_says_out(
        &self,
        hosting: &Hosting,
        group: &GroupCommits,
        voters: &BTreeSet<u64>,
    ) -> Option<u64> {
        let me = hosting.shared.id;
        let d = group.descriptor();
        let mine = group.last_applied().unwrap_or((0, 0));
        let leads = |r: &crate::node::api::LocateReply, node: u64| {
            r.found
                && r.split == d.split.0
                && r.leader == node
                && (r.applied_term, r.applied_index) >= mine
        };
        let mut asked = BTreeSet::new();
        let mut named = None;
        for voter in voters.iter().copied().filter(|v| *v != me) {
            if !hosting.answering(voter) {
                continue;
            }
            asked.insert(voter);
            let Some(reply) = self.locate_at(hosting, voter, &d.start) else {
                continue;
            };
            if !reply.found || reply.split != d.split.0 {
                continue;
            }
            if leads(&reply, voter) && !reply.voters.is_empty() {
                let out = !reply.voters.contains(&me) && !reply.learners.contains(&me);
                return out.then_some(reply.applied_index);
            }
            if reply.leader != 0 && reply.leader != me {
                named = Some(reply.leader);
            }
        }
        let leader = named.filter(|l| !asked.contains(l))?;
        self.locate_at(hosting, leader, &d.start)
            .filter(|r| leads(r, leader) && !r.voters.is_empty())
            .filter(|r| !r.voters.contains(&me) && !r.learners.contains(&me))
            .map(|r| r.applied_index)
    }

    /// Releases this node's replica of `split`, whose group it is no
    /// longer a member of (see the module docs): the group leaves the database's
    /// groups here, its Raft instance stops and its log is removed; the
    /// replica is deleted from the engine after [`RELEASE_GRACE`]. The
    /// log store keeps the group's vote and an image floor of at least
    /// `known`, an index known committed when the node was told out
    /// ([`crate::raft::LogStore::clear_group`]). False if the group is not
    /// here (or is the first split's, which is never released this way).
    pub(super) fn release(self: &Arc<Self>, hosting: &Hosting, split: SplitId, known: u64) -> bool {
        let Some(_group) = self.groups.remove(split) else {
            return false;
        };
        let shared = &hosting.shared;
        let gid = raft_group(self.database, split);
        shared.groups.remove(gid);
        shared.commits.lock().remove(&gid.0);
        let raft = shared.hosted.lock().remove(&gid.0);
        if let Some(raft) = raft {
            let _ = hosting.block_on(async move { raft.shutdown().await });
        }
        // The replica is forgotten before its log is removed: a replica
        // started again without its log would have forgotten its votes.
        let forgotten = match Replica::forget(&self.router, split) {
            Ok(forgotten) => forgotten,
            Err(e) => {
                // Its group stays stopped here and its log stays, so a
                // restart runs it again, as it was.
                tracing::warn!(database = self.database, %split, "a released split's replica could not be forgotten: {e}");
                return true;
            }
        };
        // Its vote stays: the split may be placed here again.
        if let Err(e) = self.log.clear_group(gid, known) {
            tracing::warn!(database = self.database, %split, "a released split's log could not be removed: {e}");
        }
        tracing::info!(
            database = self.database,
            %split,
            "this node left the split's group: its replica is released here"
        );
        let this = Arc::downgrade(self);
        let database = self.database;
        std::thread::spawn(move || {
            std::thread::sleep(RELEASE_GRACE);
            let Some(this) = this.upgrade() else { return };
            // Not if a replica covering any of its range was placed here
            // meanwhile (made under the same lock, `DatabaseGroups::host`):
            // it installs its image over the old rows, which clears them.
            let Some(range) = forgotten else { return };
            let _one = this.making.blocking_lock();
            if this
                .groups
                .groups()
                .iter()
                .any(|g| overlaps(&g.descriptor(), &range))
            {
                return;
            }
            match Replica::discard_rows(&this.router, &range) {
                Ok(keys) => {
                    tracing::info!(database, %split, keys, "a released replica's rows are deleted")
                }
                Err(e) => {
                    tracing::warn!(database, %split, "deleting a released replica's rows: {e}")
                }
            }
        });
        true
    }
}

/// What one node's rounds of [`DatabaseGroups::place_replicas`] remember
/// of the groups it holds and does not lead.
#[derive(Default)]
pub(super) struct Tending {
    /// When the group's leader was last asked whether this node is still
    /// a member.
    asked: BTreeMap<SplitId, Instant>,
    /// The groups whose replica here applied a membership that counts this
    /// node, since this process started: only for those is a membership
    /// applied later without this node its removal.
    members: BTreeSet<SplitId>,
}

/// Runs [`DatabaseGroups::place_replicas`] every [`PLACE_EVERY`] until the
/// database is closed.
pub(super) fn tend_replicas(runtime: &tokio::runtime::Handle, hosted: &Arc<DatabaseGroups>) {
    let hosted = Arc::downgrade(hosted);
    runtime.spawn(async move {
        let mut tending = Tending::default();
        loop {
            tokio::time::sleep(PLACE_EVERY).await;
            let Some(this) = hosted.upgrade() else { return };
            let round = tokio::task::spawn_blocking(move || {
                let done = this.place_replicas(&mut tending);
                (done, tending)
            })
            .await;
            match round {
                Ok((done, kept)) => {
                    tending = kept;
                    for placed in done {
                        if let Placed::Changed(what) = placed {
                            tracing::info!("split replicas: {what}");
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!("placing split replicas stopped: {e}");
                    return;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[u64]) -> BTreeSet<u64> {
        ids.iter().copied().collect()
    }

    #[test]
    fn a_group_keeps_its_voters_among_the_hosts_and_fills_to_the_count() {
        let no_load = |_: u64| 0.0;
        // Settled: nothing changes.
        let hosts = set(&[1, 2, 3, 4]);
        assert_eq!(
            wanted_voters(&set(&[1, 2, 3]), &set(&[]), &hosts, 3, &[1], &no_load),
            set(&[1, 2, 3])
        );
        // A new half of a cut holds every host: the busiest non-leader leaves.
        let load = |id: u64| [0.0, 0.9, 0.2, 0.7, 0.1, 0.3][id as usize];
        assert_eq!(
            wanted_voters(&hosts, &set(&[]), &hosts, 3, &[1], &load),
            set(&[1, 2, 4])
        );
        // Node 1 is the busiest but leads: node 3, the next busiest, leaves.
        // Led by node 3, node 1 leaves.
        assert_eq!(
            wanted_voters(&hosts, &set(&[]), &hosts, 3, &[3], &load),
            set(&[2, 3, 4])
        );
        // The first split's leader is kept too.
        assert_eq!(
            wanted_voters(&hosts, &set(&[]), &hosts, 3, &[3, 1], &load),
            set(&[1, 3, 4])
        );
        // A host gone: the least loaded other host comes in, a learner first.
        let hosts = set(&[1, 2, 4, 5]);
        assert_eq!(
            wanted_voters(&set(&[1, 2, 3]), &set(&[]), &hosts, 3, &[1], &load),
            set(&[1, 2, 4])
        );
        assert_eq!(
            wanted_voters(&set(&[1, 2, 3]), &set(&[5]), &hosts, 3, &[1], &load),
            set(&[1, 2, 5])
        );
        // Never more voters than hosts, never none.
        assert_eq!(
            wanted_voters(&set(&[1]), &set(&[]), &set(&[1, 2]), 3, &[1], &no_load),
            set(&[1, 2])
        );
        assert_eq!(
            wanted_voters(&set(&[1]), &set(&[]), &set(&[1]), 0, &[1], &no_load),
            set(&[1])
        );
    }
}
