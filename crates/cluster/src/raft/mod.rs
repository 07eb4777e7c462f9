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
//! The node process that runs a node's groups is [`crate::node`].
//! openraft's own storage test suite (`openraft::testing::log::Suite`)
//! checks [`GroupLog`] and [`ReplicaMachine`] together
//! (`tests/raft_storage.rs`); `tests/group.rs` runs a group of three `Raft`
//! instances on them, over an in-process network and over the peer port;
//! and `tests/sim.rs` plays a group under a deterministic simulation
//! (turmoil) with crashes, partitions and membership changes.

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

/// openraft's settings for a split's group: a heartbeat every 100 ms, an
/// election after 0.8 to 1.6 s without one, so a group whose leader dies
/// has a new one within about two seconds (and its lease, design §5, a
/// moment later).
pub fn split_group_config() -> std::sync::Arc<openraft::Config> {
    std::sync::Arc::new(
        openraft::Config {
            cluster_name: "rowtree-split".into(),
            heartbeat_interval: 100,
            election_timeout_min: 800,
            election_timeout_max: 1600,
            snapshot_policy: openraft::SnapshotPolicy::LogsSinceLast(5_000),
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
