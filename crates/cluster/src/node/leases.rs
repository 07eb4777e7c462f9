//! Leases that follow the load (design §6, step 3): which node leads each
//! of a database's split groups, decided by every node for the groups it
//! leads, without a central scheduler.
//!
//! A split's commits, and its reads under locks, are made by the node
//! leading its group, so a database whose load falls on several splits
//! uses several nodes only if their groups are led by different nodes.
//! Each node measures its **utilization**: the share of a node its
//! databases used over the last [`WINDOW_SECS`] seconds (with
//! `--node-capacity`, the node gate's use of that capacity; without, the
//! CPU rates of the splits it leads as the router records them). Its
//! clock heartbeat answers carry it, so every node knows every other's
//! within a second or two. A group's share is the load of its splits.
//!
//! Every 200 ms (the node's `GATHER_EVERY`), for each database,
//! a node decides ([`decide`]):
//!
//! 0. **Lead the first split only from a node that holds every split.**
//!    Any voter of the first split may win its election after a failure,
//!    and with `--split-replicas` below `--replicas` some of them hold only
//!    part of the database. A node leading the first split without a
//!    replica of every other split hands the first split's group to a
//!    voter of it that holds every split ([`first_split_heir`]), at most once
//!    per [`FIRST_MOVE_PAUSE`] (a failed try is tried again after
//!    [`FIRST_MOVE_RETRY`]): the cold groups then gather there (step
//!    2), and transactions spanning splits commit again. (Without it, a
//!    database stayed unable to commit such transactions until the next
//!    failure moved the first split's leader by chance.)
//! 1. **Move the hottest group that helps.** A node at least [`BUSY`] and
//!    more than [`MARGIN`] above the cluster's mean hands one group to the
//!    least loaded voter of that group, the hottest group whose move does
//!    not overshoot: with `s` the group's share, only if the receiver's
//!    utilization plus `s` stays at or below the sender's minus `s`. A single
//!    split that saturates its node (a timestamp-first key) therefore stays
//!    where it is instead of hopping from node to node: it has to be split
//!    first. After a move the node waits [`PAUSE`] for the loads to be
//!    measured again. A group at least [`TIED`] (a tenth) of whose
//!    commits also write another group this node leads is not moved
//!    either: a commit
//!    across groups led by different nodes is refused until remote locking
//!    is built (design §6, step 2), so moving it would refuse most of its
//!    work (a table and its non-interleaved index, written by every
//!    update, stay together). When no voter of the group could take it
//!    but a host of the database holding no replica of it could (a
//!    database whose splits keep fewer replicas than it has hosts,
//!    `--split-replicas`), the group's busiest voter other than this node
//!    and the first split's leader is replaced by that host
//!    ([`Decision::Replace`], carried out by `node::databases::replicas`); the lease
//!    follows in a later round. The first split's group is not moved by load: the
//!    database's sessions live on its leader, and moving it would make
//!    every client make its sessions again.
//! 2. **Gather the cold groups.** A group below [`COLD`] is handed to the
//!    node leading the database's first split (if it holds a replica of
//!    the group), so that a database with
//!    little load is led by one node again and its transactions spanning
//!    splits commit (they need one node leading every split they touch).
//!    While any node of the cluster is busy, a group this node leads since
//!    less than [`SETTLE`], or has seen cold for less than [`COLD_FOR`],
//!    is left alone: one that just arrived by a move, or was just cut from
//!    a hot split, has not been measured here yet.
//!
//! A cluster with no load at all moves nothing and gathers everything,
//! which is how a database's groups were always led before.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rowtree_kv::SplitId;

use crate::raft::{GroupCommits, SplitGroups};

/// The seconds of load a decision looks at: short, so that a move shows
/// within the [`PAUSE`] after it.
pub const WINDOW_SECS: u64 = 10;

/// Below this share of a node a group is cold.
pub const COLD: f64 = 0.02;

/// A node moves leases away only at or above this share of a node.
pub const BUSY: f64 = 0.5;

/// ... and only when more than this above the cluster's mean.
pub const MARGIN: f64 = 0.15;

/// How long a node waits after a move before it moves again.
pub const PAUSE: Duration = Duration::from_secs(WINDOW_SECS + 2);

/// While the cluster is busy, a group led here for less than this is not
/// gathered back as cold (see the module docs).
pub const SETTLE: Duration = Duration::from_secs(3 * WINDOW_SECS);

/// While the cluster is busy, a group must have been cold this long before
/// it is gathered back: a split's halves start their load measures from
/// nothing.
pub const COLD_FOR: Duration = Duration::from_secs(WINDOW_SECS);

/// A group at least this share of whose commits also write another group
/// is not moved by load (see the module docs).
pub const TIED: f64 = 0.1;

/// How long each step of a move may take (giving up the lease, the
/// leader change).
pub const MOVE_WAIT: Duration = Duration::from_secs(5);

/// What a node knows of the cluster's load when it decides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadView {
    /// This node's id.
    pub me: u64,
    /// This node's utilization (a share of a node).
    pub mine: f64,
    /// Every other live node's, as its latest heartbeat answer said.
    pub others: BTreeMap<u64, f64>,
}

impl LoadView {
    /// The mean utilization of the nodes in view, this one included.
    pub fn mean(&self) -> f64 {
        (self.mine + self.others.values().sum::<f64>()) / (1 + self.others.len()) as f64
    }

    /// Whether any node in view is at least half [`BUSY`].
    pub fn busy(&self) -> bool {
        std::iter::once(&self.mine)
            .chain(self.others.values())
            .any(|u| *u >= BUSY / 2.0)
    }
}

/// A group this node leads, as [`decide`] sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Led {
    /// Its place in the database's groups (0: the first split's).
    pub index: usize,
    /// Its share of a node lately.
    pub share: f64,
    /// The share of its recent commits that also wrote another group.
    pub spanning: f64,
    /// Its voters (who may lead it).
    pub voters: BTreeSet<u64>,
    /// Whether it may be gathered while the cluster is busy: this node has
    /// led it for [`SETTLE`] and seen it cold for [`COLD_FOR`].
    pub settled: bool,
}

/// What a node does with a database's leases this round.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Hand group `index` to node `to` (a move by load).
    Move { index: usize, to: u64, share: f64 },
    /// Replace group `index`'s voter `from` by host `to`, which holds no
    /// replica of it: no voter could take the group's load, `to` can
    /// (its lease follows in a later round, `to` then a voter).
    Replace {
        index: usize,
        from: u64,
        to: u64,
        share: f64,
    },
    /// Hand these cold groups to node `to`, the first split's leader.
    Gather { indexes: Vec<usize>, to: u64 },
    /// Nothing to do.
    Stay,
}

/// The round's decision for the groups `led` of one database (see the
/// module docs). `hosts` are the nodes serving the database (the first
/// split's voters): a group's replica may move to one of them.
/// `first_leader` is the first split's leader as this node knows it;
/// `may_move` is false during the [`PAUSE`] after a move.
pub fn decide(
    view: &LoadView,
    led: &[Led],
    hosts: &BTreeSet<u64>,
    first_leader: Option<u64>,
    may_move: bool,
) -> Decision {
    if may_move && view.mine >= BUSY && view.mine > view.mean() + MARGIN {
        // Not the first split's group: the database's sessions live on
        // its leader, and a client would have to make them again.
        let mut hottest: Vec<&Led> = led
            .iter()
            .filter(|g| g.index != 0 && g.share >= COLD && g.spanning < TIED)
            .collect();
        hottest.sort_by(|a, b| b.share.total_cmp(&a.share));
        for g in hottest {
            let receiver = g
                .voters
                .iter()
                .filter(|v| **v != view.me)
                .filter_map(|v| view.others.get(v).map(|u| (*v, *u)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((to, load)) = receiver {
                if load + g.share <= view.mine - g.share {
                    return Decision::Move {
                        index: g.index,
                        to,
                        share: g.share,
                    };
                }
            }
            // No voter can take it: a host holding no replica of it may.
            // The voter it replaces is the busiest one other than this
            // node and the first split's leader (kept so that cold groups
            // can gather there).
            let host = hosts
                .iter()
                .filter(|h| !g.voters.contains(h))
                .filter_map(|h| view.others.get(h).map(|u| (*h, *u)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let from = g
                .voters
                .iter()
                .filter(|v| **v != view.me && Some(**v) != first_leader)
                .map(|v| (*v, view.others.get(v).copied().unwrap_or(0.0)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let (Some((to, load)), Some((from, _))) = (host, from) {
                if load + g.share <= view.mine - g.share {
                    return Decision::Replace {
                        index: g.index,
                        from,
                        to,
                        share: g.share,
                    };
                }
            }
        }
    }
    let Some(to) = first_leader.filter(|l| *l != view.me) else {
        return Decision::Stay;
    };
    let busy = view.busy();
    let indexes: Vec<usize> = led
        .iter()
        .filter(|g| g.index != 0 && g.share < COLD && (g.settled || !busy))
        .filter(|g| g.voters.contains(&to))
        .map(|g| g.index)
        .collect();
    if indexes.is_empty() {
        Decision::Stay
    } else {
        Decision::Gather { indexes, to }
    }
}

/// Where the first split's group goes when this node leads it but holds
/// no replica of some other split of the database (an election after a
/// failure can make any voter of the first split its leader, and with
/// `--split-replicas` below `--replicas` some of them hold only part of
/// the database): the least loaded node in `view` (so answering) that is
/// a voter of the first split answering its group (`hosts`,
/// [`GroupCommits::answering_voters`]) and holds a replica of every split
/// (`covering`; with no such node the group stays, since a node lacking
/// some split would hand it on again). Its sessions and every group then gather
/// on one node again; without the move, a transaction touching a split
/// this node lacks and one it leads could not commit until the next
/// failure moved the first split's leader by chance. `None`: no such node.
pub fn first_split_heir(
    view: &LoadView,
    hosts: &BTreeSet<u64>,
    covering: &BTreeSet<u64>,
) -> Option<u64> {
    view.others
        .iter()
        .filter(|(id, _)| **id != view.me && hosts.contains(id) && covering.contains(id))
        .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(b.0)))
        .map(|(id, _)| *id)
}

/// How long a node that handed the first split's group on waits before it
/// hands it on again.
pub const FIRST_MOVE_PAUSE: Duration = Duration::from_secs(5);

/// How long a node whose hand-over of the first split's group failed (the
/// receiver not ready: restarted a moment ago, say) waits before it tries
/// again.
pub const FIRST_MOVE_RETRY: Duration = Duration::from_secs(1);

/// One database's lease balancing on this node: [`decide`] with the
/// memory it needs (when each group came to be led here, when this node
/// last moved one), carried out.
#[derive(Debug, Default)]
pub struct LeaseBalancer {
    led_since: HashMap<SplitId, Instant>,
    cold_since: HashMap<SplitId, Instant>,
    last_move: Option<Instant>,
    /// When this node may next hand the first split's group on.
    next_first_move: Option<Instant>,
    /// Groups are spread over their voters by count instead of cold ones
    /// gathered (`--spread-leases`).
    spread: bool,
    /// When this node last handed a group on to even the counts.
    last_spread: Option<Instant>,
}

/// With `--spread-leases`: at most one group is handed on to even the
/// counts this often.
pub const SPREAD_PAUSE: Duration = Duration::from_secs(2);

/// What a round did, for the node's log.
#[derive(Debug, Clone, PartialEq)]
pub enum Done {
    /// A group moved by load.
    Moved { split: SplitId, to: u64, share: f64 },
    /// A group's replica is to move from voter `from` to host `to`
    /// (carried out by the node's replica placement, `node::databases::replicas`).
    Replace {
        split: SplitId,
        from: u64,
        to: u64,
        share: f64,
    },
    /// Cold groups gathered on the first split's leader.
    Gathered(usize),
    /// A group handed to node `to`, which led fewer of the database's
    /// groups (`--spread-leases`).
    Spread { split: SplitId, to: u64 },
    /// The first split's group handed to node `to`, which holds every
    /// split ([`first_split_heir`]).
    FirstHanded { to: u64 },
    /// Nothing.
    Nothing,
}

impl LeaseBalancer {
    /// Whether a database's groups are spread over their voters by count
    /// (`--spread-leases`) instead of cold ones gathered on the first
    /// split's leader (step 2 of the module docs; the default).
    pub fn set_spread(&mut self, spread: bool) {
        self.spread = spread;
    }

    /// With `--spread-leases`: hands one group this node leads (not the
    /// first split's) to a voter of it answering its heartbeats that leads
    /// at least two fewer of the database's groups, as this node knows
    /// their leaders; at most every [`SPREAD_PAUSE`].
    async fn spread_one(&mut self, groups: &SplitGroups, now: Instant) -> Option<Done> {
        if self
            .last_spread
            .is_some_and(|at| now.duration_since(at) < SPREAD_PAUSE)
        {
            return None;
        }
        let all = groups.groups();
        let me = all.first()?.node_id();
        let mut counts: HashMap<u64, usize> = HashMap::new();
        for g in &all {
            if let Some(leader) = g.current_leader() {
                *counts.entry(leader).or_default() += 1;
            }
        }
        let mine = counts.get(&me).copied().unwrap_or(0);
        for g in all.iter().skip(1).filter(|g| g.serves()) {
            let to = g
                .answering_voters()
                .into_iter()
                .filter(|v| *v != me)
                .min_by_key(|v| (counts.get(v).copied().unwrap_or(0), *v))
                .filter(|v| counts.get(v).copied().unwrap_or(0) + 2 <= mine);
            if let Some(to) = to {
                self.last_spread = Some(now);
                return Some(match g.move_to(to, MOVE_WAIT).await {
                    Ok(()) => Done::Spread {
                        split: g.split_id(),
                        to,
                    },
                    Err(e) => {
                        tracing::warn!("{e}");
                        Done::Nothing
                    }
                });
            }
        }
        None
    }

    /// One round for `groups` with the cluster's loads `view`.
    pub async fn round(&mut self, groups: &SplitGroups, view: &LoadView) -> Done {
        let now = Instant::now();
        let loads = groups.led_loads(WINDOW_SECS);
        self.led_since
            .retain(|split, _| loads.iter().any(|(_, g, _)| g.split_id() == *split));
        self.cold_since.retain(|split, _| {
            loads
                .iter()
                .any(|(_, g, share)| g.split_id() == *split && *share < COLD)
        });
        let led: Vec<Led> = loads
            .iter()
            .map(|(index, g, share)| {
                let since = *self.led_since.entry(g.split_id()).or_insert(now);
                let cold =
                    (*share < COLD).then(|| *self.cold_since.entry(g.split_id()).or_insert(now));
                Led {
                    index: *index,
                    share: *share,
                    spanning: groups.spanning_share(g.split_id(), WINDOW_SECS),
                    voters: g.members().0,
                    settled: now.duration_since(since) >= SETTLE
                        && cold.is_some_and(|c| now.duration_since(c) >= COLD_FOR),
                }
            })
            .collect();
        let first = groups.groups().first().cloned();
        let first_leader = first.as_ref().and_then(|g| g.current_leader());
        let hosts = first.as_ref().map(|g| g.members().0).unwrap_or_default();
        if let Some(first) = first.filter(|g| g.leads()) {
            let paused = self.next_first_move.is_some_and(|at| now < at);
            if !paused && !groups.holds_every_split() {
                // Only voters answering the group now: a node restarted a
                // moment ago (the least loaded, having served nothing yet)
                // may not have opened it.
                let answering = first.answering_voters();
                let heir = groups
                    .covering_every_split()
                    .and_then(|covering| first_split_heir(view, &answering, &covering));
                if let Some(to) = heir {
                    let moved = first.move_to(to, MOVE_WAIT).await;
                    let wait = if moved.is_ok() {
                        FIRST_MOVE_PAUSE
                    } else {
                        FIRST_MOVE_RETRY
                    };
                    self.next_first_move = Some(Instant::now() + wait);
                    return match moved {
                        Ok(()) => Done::FirstHanded { to },
                        Err(e) => {
                            // The transfer may still have started an
                            // election another holder of every split wins.
                            tracing::warn!(
                                to,
                                "this node leads the first split but lacks other splits, and \
                                 handing its group on did not finish: {e}"
                            );
                            Done::Nothing
                        }
                    };
                }
            }
        }
        if self.spread {
            if let Some(done) = self.spread_one(groups, now).await {
                return done;
            }
        }
        let may_move = self
            .last_move
            .is_none_or(|at| now.duration_since(at) >= PAUSE);
        let by_index = |i: usize| -> Option<&Arc<GroupCommits>> {
            loads
                .iter()
                .find(|(index, ..)| *index == i)
                .map(|(_, g, _)| g)
        };
        match decide(view, &led, &hosts, first_leader, may_move) {
            Decision::Replace {
                index,
                from,
                to,
                share,
            } => {
                let Some(group) = by_index(index) else {
                    return Done::Nothing;
                };
                self.last_move = Some(now);
                Done::Replace {
                    split: group.split_id(),
                    from,
                    to,
                    share,
                }
            }
            Decision::Move { index, to, share } => {
                let Some(group) = by_index(index) else {
                    return Done::Nothing;
                };
                self.last_move = Some(now);
                match group.move_to(to, MOVE_WAIT).await {
                    Ok(()) => Done::Moved {
                        split: group.split_id(),
                        to,
                        share,
                    },
                    Err(e) => {
                        tracing::warn!("{e}");
                        Done::Nothing
                    }
                }
            }
            Decision::Gather { .. } if self.spread => Done::Nothing,
            Decision::Gather { indexes, to } => {
                let mut handed = 0;
                for i in indexes {
                    if let Some(group) = by_index(i) {
                        match group.move_to(to, MOVE_WAIT).await {
                            Ok(()) => handed += 1,
                            Err(e) => tracing::warn!("{e}"),
                        }
                    }
                }
                Done::Gathered(handed)
            }
            Decision::Stay => Done::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(mine: f64, others: &[(u64, f64)]) -> LoadView {
        LoadView {
            me: 1,
            mine,
            others: others.iter().copied().collect(),
        }
    }

    /// No hosts beside the groups' voters: only leases move.
    fn no_hosts() -> BTreeSet<u64> {
        BTreeSet::new()
    }

    fn led(index: usize, share: f64, settled: bool) -> Led {
        Led {
            index,
            share,
            spanning: 0.0,
            voters: [1, 2, 3, 4].into_iter().collect(),
            settled,
        }
    }

    #[test]
    fn the_first_split_goes_to_the_least_loaded_node_holding_every_split() {
        // Node 1 leads the first split (voters 1-4) but lacks the others;
        // 2, 3 and 5 hold every split.
        let v = view(0.1, &[(2, 0.6), (3, 0.2), (4, 0.0), (5, 0.0)]);
        let hosts: BTreeSet<u64> = [1, 2, 3, 4].into_iter().collect();
        let covering: BTreeSet<u64> = [2, 3, 5].into_iter().collect();
        // Not 4 (lacks them too), not 5 (no replica of the first split).
        assert_eq!(first_split_heir(&v, &hosts, &covering), Some(3));
        // A node out of view (silent, stopping) is no heir.
        let v = view(0.1, &[(2, 0.6), (4, 0.0)]);
        assert_eq!(first_split_heir(&v, &hosts, &covering), Some(2));
        let v = view(0.1, &[(4, 0.0), (5, 0.0)]);
        assert_eq!(first_split_heir(&v, &hosts, &covering), None);
    }

    #[test]
    fn a_group_whose_commits_mostly_write_another_group_stays() {
        // A table's split and its index's, written together by every
        // update: moving either would refuse those commits.
        let v = view(1.0, &[(2, 0.0), (3, 0.0)]);
        let tied = |index, share, spanning| Led {
            spanning,
            ..led(index, share, true)
        };
        let groups = [led(0, 0.1, true), tied(1, 0.4, 0.9), tied(2, 0.3, 0.2)];
        assert_eq!(
            decide(&v, &groups, &no_hosts(), Some(1), true),
            Decision::Stay
        );
        // A group written alone most of the time still moves.
        let groups = [led(0, 0.1, true), tied(1, 0.4, 0.9), tied(2, 0.3, 0.05)];
        assert_eq!(
            decide(&v, &groups, &no_hosts(), Some(1), true),
            Decision::Move {
                index: 2,
                to: 2,
                share: 0.3
            }
        );
    }

    #[test]
    fn a_busy_node_hands_its_hottest_helpful_group_to_the_least_loaded_voter() {
        let v = view(1.0, &[(2, 0.3), (3, 0.0), (4, 0.6)]);
        let groups = [led(0, 0.9, true), led(1, 0.5, true), led(2, 0.3, true)];
        assert_eq!(
            decide(&v, &groups, &no_hosts(), Some(1), true),
            Decision::Move {
                index: 1,
                to: 3,
                share: 0.5
            }
        );
        // During the pause after a move, nothing moves by load.
        assert_eq!(
            decide(&v, &groups, &no_hosts(), Some(1), false),
            Decision::Stay
        );
    }

    #[test]
    fn a_group_whose_move_would_only_shift_the_hot_spot_stays() {
        // One split saturating its node: moving it makes another node hot.
        let v = view(1.0, &[(2, 0.0), (3, 0.0)]);
        assert_eq!(
            decide(&v, &[led(1, 1.0, true)], &no_hosts(), Some(1), true),
            Decision::Stay
        );
        // With a smaller group beside it, that one moves instead.
        let groups = [led(1, 0.8, true), led(2, 0.2, true)];
        assert_eq!(
            decide(&v, &groups, &no_hosts(), Some(1), true),
            Decision::Move {
                index: 2,
                to: 2,
                share: 0.2
            }
        );
        // The first split's group stays, however hot.
        let groups = [led(0, 0.5, true), led(1, 0.1, true)];
        assert_eq!(
            decide(&v, &groups, &no_hosts(), Some(1), true),
            Decision::Move {
                index: 1,
                to: 2,
                share: 0.1
            }
        );
    }

    #[test]
    fn a_group_no_voter_can_take_moves_a_replica_to_a_host_that_can() {
        // Voters 1 to 3 all busy; host 4 idle and holds no replica.
        let v = view(1.0, &[(2, 0.9), (3, 0.8), (4, 0.0)]);
        let on_three = |index, share| Led {
            voters: [1, 2, 3].into_iter().collect(),
            ..led(index, share, true)
        };
        let hosts: BTreeSet<u64> = [1, 2, 3, 4].into_iter().collect();
        assert_eq!(
            decide(&v, &[on_three(1, 0.4)], &hosts, Some(3), true),
            Decision::Replace {
                index: 1,
                from: 2,
                to: 4,
                share: 0.4
            }
        );
        // Not when the move would overshoot, nor without such a host.
        assert_eq!(
            decide(&v, &[on_three(1, 0.6)], &hosts, Some(3), true),
            Decision::Stay
        );
        assert_eq!(
            decide(&v, &[on_three(1, 0.4)], &no_hosts(), Some(3), true),
            Decision::Stay
        );
        // Cold groups gather only where the first split's leader votes.
        let v = view(0.1, &[(4, 0.0)]);
        assert_eq!(
            decide(&v, &[on_three(1, 0.0)], &hosts, Some(4), true),
            Decision::Stay
        );
    }

    #[test]
    fn nothing_moves_below_busy_or_near_the_mean() {
        let groups = [led(1, 0.2, true), led(2, 0.2, true)];
        assert_eq!(
            decide(&view(0.4, &[(2, 0.0)]), &groups, &no_hosts(), Some(1), true),
            Decision::Stay
        );
        assert_eq!(
            decide(
                &view(0.9, &[(2, 0.8), (3, 0.85)]),
                &groups,
                &no_hosts(),
                Some(1),
                true
            ),
            Decision::Stay
        );
    }

    #[test]
    fn only_a_voter_that_answers_receives() {
        let v = view(1.0, &[(5, 0.0)]);
        assert_eq!(
            decide(
                &v,
                &[led(1, 0.5, true), led(2, 0.5, true)],
                &no_hosts(),
                Some(1),
                true
            ),
            Decision::Stay
        );
    }

    #[test]
    fn cold_groups_gather_on_the_first_splits_leader_once_settled_while_the_cluster_is_busy() {
        let groups = [led(1, 0.0, true), led(2, 0.01, false), led(3, 0.3, true)];
        // An idle cluster gathers every cold group at once.
        assert_eq!(
            decide(&view(0.1, &[(2, 0.0)]), &groups, &no_hosts(), Some(2), true),
            Decision::Gather {
                indexes: vec![1, 2],
                to: 2
            }
        );
        // A busy one leaves the group that just arrived.
        assert_eq!(
            decide(&view(0.3, &[(2, 0.9)]), &groups, &no_hosts(), Some(2), true),
            Decision::Gather {
                indexes: vec![1],
                to: 2
            }
        );
        // This node leads the first split: nothing to gather.
        assert_eq!(
            decide(&view(0.3, &[]), &groups, &no_hosts(), Some(1), true),
            Decision::Stay
        );
        assert_eq!(
            decide(&view(0.3, &[]), &groups, &no_hosts(), None, true),
            Decision::Stay
        );
    }
}
