//! Where the consensus library meets Rowtree's storage (ADR 3: openraft).
//!
//! openraft runs the protocol of a group (elections, replication, commit)
//! and leaves three things to the application: where the log and the vote
//! are kept, what applying an entry does, and how nodes talk. This module
//! holds all three, and is the only place that names openraft's types,
//! so that a change of its (pre-1.0) API touches one module.
//!
//! * [`TypeConfig`] fixes openraft's types for Rowtree: an entry's data is
//!   a [`Command`], nodes are numbered `u64`s, and leader ids are standard
//!   Raft's (at most one leader per term, so a log id is a term and an
//!   index, as [`crate::LogId`] is).
//! * [`LogStore`] is a node's one log store, shared by every group on it
//!   (design §4, "Log storage"): a storage engine of its own, in which each
//!   group's entries, vote, committed id and purge point are keyed by the
//!   group's id. Appends are written at once (readable as soon as `append`
//!   returns) and made durable by a flusher thread that syncs once for all
//!   the appends of all groups queued since its last sync, then tells each
//!   group its entries are on disk. [`GroupLog`] is one group's view of
//!   it, and implements openraft's `RaftLogStorage` and `RaftLogReader`.
//! * [`ReplicaMachine`] implements openraft's `RaftStateMachine` on a
//!   [`crate::Replica`]: commands are applied through the replica,
//!   blank and membership entries are recorded in its applied state, and a
//!   snapshot is the replica's [`crate::SnapshotImage`].
//!
//! * [`peer`] is the network: the peer port (`rowtree.peer.v1.Peer`, one
//!   gRPC service for all of a node's groups) and openraft's network
//!   factory over it, with the messages in this crate's own binary form
//!   ([`messages`]).
//!
//! * [`runtime`] is openraft's runtime: tokio's, with the random numbers
//!   openraft draws (election timeouts) seeded when a simulation asks.
//!
//! * [`GroupCommits`] is how a database's commits reach its group's log:
//!   the `Replication` a node installs on the database's router ([`commits`]).
//!
//! * [`renew_lease`] proposes a group's next lease (see [`crate::lease`])
//!   through the group's leader.
//!
//! * [`transfer_leadership`] hands a group to another voter, asking only
//!   once that voter's log has caught up (openraft's transfer is ignored
//!   by a voter that is behind), and [`caught_up`] waits for that.
//!
//! * [`snapshot_and_purge`] makes a leader send an image, never its log
//!   from the start, to a member whose replica is empty (moves of a
//!   replica, and a split given back).
//!
//! The node process that runs a node's groups is [`crate::node`].
//! openraft's own storage test suite (`openraft::testing::log::Suite`)
//! checks [`GroupLog`] and [`ReplicaMachine`] together
//! (`tests/raft_storage.rs`); `tests/group.rs` runs a group of three `Raft`
//! instances on them, over an in-process network and over the peer port;
//! and `tests/sim.rs` plays a group under a deterministic simulation
//! (turmoil) with crashes, partitions, replica moves and lease
//! handovers, crashing nodes at each of their steps.

mod codec;
pub mod commits;
pub mod groups;
pub mod log_store;
pub mod messages;
pub mod peer;
pub mod runtime;
pub mod state_machine;

pub use codec::{decode_entry, decode_membership, encode_entry, encode_membership};
pub use commits::{GroupCommits, CLOSED_LAG, RECEIVER_HEARD_WITHIN};
pub use groups::{AppliedProbe, Elsewhere, Located, Refusal, SplitGroups};
pub use log_store::{GroupId, GroupLog, LogStats, LogStore, REMOVE_BATCH};
pub use peer::{GroupNetwork, GroupRaft, Groups, PeerPort, Peers, Routes};
pub use runtime::{seeded, RaftRuntime};
pub use state_machine::{ImageBuilder, ReplicaMachine, SnapshotCounts};

use crate::command::{Command, LogId};
use crate::lease::{Lease, LeaseKeeper, LeaseView, Renewal};

openraft::declare_raft_types!(
    /// openraft's types as Rowtree uses them: [`Command`] entries, `u64`
    /// node ids with an address each, standard Raft leader ids (a term,
    /// and in a vote the node voted for), and tokio as the runtime, with
    /// randomness a simulation can seed ([`RaftRuntime`]).
    pub TypeConfig:
        D = Command,
        R = (),
        LeaderId = openraft::impls::leader_id_std::LeaderId<u64, u64>,
        AsyncRuntime = RaftRuntime,
);

/// A log entry: a log id and a blank, command or membership payload.
pub type Entry = openraft::alias::EntryOf<TypeConfig>;
/// An entry's position as openraft has it.
pub type RaftLogId = openraft::alias::LogIdOf<TypeConfig>;
/// A vote: a term, the node voted for, and whether a quorum granted it.
pub type Vote = openraft::alias::VoteOf<TypeConfig>;
/// A group's membership: its voters (one set, or two while changing) and
/// every member's address.
pub type Membership = openraft::Membership<u64, openraft::BasicNode>;
/// A membership and the id of the entry that carried it.
pub type StoredMembership = openraft::alias::StoredMembershipOf<TypeConfig>;

/// openraft's log id as this crate's [`LogId`].
pub fn to_log_id(id: &RaftLogId) -> LogId {
    LogId::new(id.leader_id.term, id.index)
}

/// This crate's [`LogId`] as openraft's.
pub fn to_raft_log_id(id: LogId) -> RaftLogId {
    openraft::LogId::new(
        openraft::vote::leader_id_std::CommittedLeaderId::new(id.term),
        id.index,
    )
}

/// How many entries a split's group applies between two snapshots of its
/// replica, by default (`rowtree serve --cluster --snapshot-every`).
pub const SNAPSHOT_EVERY: u64 = 5_000;

/// openraft's settings for a split's group: a heartbeat every 100 ms, an
/// election after 0.8 to 1.6 s without one, so a group whose leader dies
/// has a new one within about two seconds (and its lease, design §5, a
/// moment later). A snapshot of the replica every `snapshot_every`
/// entries applied (at least 10); the log then keeps a fifth of that many
/// entries below the snapshot, for a follower a little behind, and purges
/// the rest: a follower further behind is sent the snapshot.
pub fn split_group_config(snapshot_every: u64) -> std::sync::Arc<openraft::Config> {
    let every = snapshot_every.max(10);
    std::sync::Arc::new(
        openraft::Config {
            cluster_name: "rowtree-split".into(),
            heartbeat_interval: 100,
            election_timeout_min: 800,
            election_timeout_max: 1600,
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(every),
            max_in_snapshot_log_to_keep: every / 5,
            ..openraft::Config::default()
        }
        .validate()
        .expect("valid split group settings"),
    )
}

/// Why [`renew_lease`] could not propose a lease: the node does not lead
/// the group (openraft's answer names the leader it knows), or the group
/// could not commit.
#[derive(Debug, thiserror::Error)]
#[error("the lease could not be proposed: {0}")]
pub struct LeaseProposalError(
    #[from] openraft::error::RaftError<TypeConfig, openraft::error::ClientWriteError<TypeConfig>>,
);

/// Takes or extends this node's lease on the group that `raft` runs, if
/// `keeper` says it is time, at `clock` on the node's clock: proposes the
/// lease and, once the entry is applied on this node, records in `keeper`
/// whether it won (another proposal may have come first in the log).
/// Returns the lease the node holds afterwards, which may not have
/// started yet ([`LeaseKeeper::serving`] says when it may be used), or
/// `None`. Only the group's leader can propose; on another node this is
/// an error that names the leader.
pub async fn renew_lease(
    raft: &GroupRaft,
    keeper: &mut LeaseKeeper,
    view: &LeaseView,
    clock: u64,
) -> Result<Option<Lease>, LeaseProposalError> {
    let current = view.get();
    let proposed = match keeper.proposal(current, clock) {
        Renewal::Keep => return Ok(current),
        Renewal::Propose(lease) => lease,
    };
    raft.client_write(Command::Lease(proposed)).await?;
    // openraft answers once the entry is applied here.
    Ok(keeper.applied(proposed, view.get()).then_some(proposed))
}

/// How often [`transfer_leadership`] asks again while the node it hands
/// the group to has not taken it.
pub const TRANSFER_ASKED_EVERY: std::time::Duration = std::time::Duration::from_millis(150);

/// Makes node `to` the leader of the group `raft` runs here (this node
/// leads it), within `wait`: returns once this node knows `to` leads.
///
/// openraft's transfer is one message: the leader stops sending heartbeats
/// and tells its voters; the node named starts an election at once only if
/// its log holds every entry the leader had. A node that is behind (one
/// restarted a moment ago, or slow to store) ignores it, and the group is
/// then without a leader until some voter's election timeout, after which
/// any voter may win. So the transfer is asked for only once `to`'s log
/// matches the leader's last entry, and asked again every
/// [`TRANSFER_ASKED_EVERY`] while `to` has not taken over (the leader
/// accepts no entry while transferring, so a node that was one entry
/// behind when asked catches up and takes the next request). An error if
/// another node is elected instead, or if `wait` runs out.
pub async fn transfer_leadership(
    raft: &GroupRaft,
    to: u64,
    wait: std::time::Duration,
) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut asked: Option<tokio::time::Instant> = None;
    let mut state = String::new();
    while tokio::time::Instant::now() < deadline {
        let (leader, leads, matched, last) = replication_of(raft, to);
        if leader == Some(to) {
            return Ok(());
        }
        if leads {
            let caught_up = matched.is_some() && matched >= last;
            let due = asked.is_none_or(|at| at.elapsed() >= TRANSFER_ASKED_EVERY);
            if caught_up && due {
                tokio::time::timeout_at(deadline, raft.trigger().transfer_leader(to))
                    .await
                    .map_err(|_| format!("asking node {to} to lead took over {wait:?}"))?
                    .map_err(|e| format!("asking node {to} to lead: {e}"))?;
                asked = Some(tokio::time::Instant::now());
            }
            state = format!(
                "node {to}'s log reaches index {matched:?} of this node's {last:?}{}",
                if asked.is_some() {
                    ", transfer asked"
                } else {
                    ""
                }
            );
        } else if let Some(other) = leader {
            return Err(if asked.is_some() {
                format!("node {other} was elected rather than node {to}")
            } else {
                format!("this node no longer leads; node {other} does, not node {to}")
            });
        } else {
            state = "an election is under way".into();
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    Err(format!(
        "node {to} did not take the group over within {wait:?} ({state})"
    ))
}

/// What this node's instance of a group knows of node `to`: the group's
/// leader, whether this node leads, the last index of `to`'s log that
/// matches this node's (a leader's knowledge), and this node's last index.
fn replication_of(raft: &GroupRaft, to: u64) -> (Option<u64>, bool, Option<u64>, Option<u64>) {
    use openraft::type_config::async_runtime::WatchReceiver;
    let m = raft.metrics().borrow_watched().clone();
    let matched = m
        .replication
        .as_ref()
        .and_then(|r| r.get(&to).cloned().flatten())
        .map(|id| id.index);
    (
        m.current_leader,
        m.state.is_leader(),
        matched,
        m.last_log_index,
    )
}

/// Makes sure a member whose log is empty is sent an image of this node's
/// replica (the group's leader's) as it is now, never the log from the
/// group's start (which need not hold every row: a cut's right half
/// starts with its parent's rows, a merge takes in its neighbour's), nor
/// an older image. A snapshot is taken of everything applied here (the
/// image openraft sends next: an older one could list as a voter a node
/// since taken out, which, placed in the group again, would take it for
/// its own state). Then, unless some prefix of the log is purged already
/// (the member lacks the entry before the leader's first, so openraft
/// sends it the snapshot), the log is purged up to where openraft's own
/// policy would purge after the snapshot (keeping
/// `max_in_snapshot_log_to_keep` entries below it, and at least the first
/// entry purged): openraft requires that the point it purges up to never
/// moves back, which a purge up to the snapshot itself would break when
/// its policy next purges. Each step waits at most `wait`.
pub async fn snapshot_and_purge(raft: &GroupRaft, wait: std::time::Duration) -> Result<(), String> {
    use openraft::type_config::async_runtime::WatchReceiver;
    let Some(applied) = raft
        .metrics()
        .borrow_watched()
        .last_applied
        .map(|l| l.index)
    else {
        return Ok(());
    };
    raft.trigger().snapshot().await.map_err(|e| e.to_string())?;
    let m = raft
        .wait(Some(wait))
        .metrics(
            |m| m.snapshot.is_some_and(|s| s.index >= applied),
            "the snapshot for a new member",
        )
        .await
        .map_err(|e| e.to_string())?;
    if m.purged.is_some() {
        return Ok(());
    }
    let snapshot = m.snapshot.map_or(applied, |s| s.index);
    let upto = snapshot.saturating_sub(raft.config().max_in_snapshot_log_to_keep);
    raft.trigger()
        .purge_log(upto)
        .await
        .map_err(|e| e.to_string())?;
    raft.wait(Some(wait))
        .metrics(|m| m.purged.is_some(), "the log purged")
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Waits, at most `wait`, until node `to`'s log holds every entry of this
/// node's (its leader's): a node to hand the group to without leaving it
/// unserved while it catches up. An error if this node stops leading or
/// `wait` runs out.
pub async fn caught_up(raft: &GroupRaft, to: u64, wait: std::time::Duration) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let (_, leads, matched, last) = replication_of(raft, to);
        if !leads {
            return Err("this node no longer leads the group".into());
        }
        if matched.is_some() && matched >= last {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "node {to}'s log reaches index {matched:?} of this node's {last:?} after {wait:?}"
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
