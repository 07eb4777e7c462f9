//! A database's commits through its split group's Raft log.
//!
//! [`GroupCommits`] is the [`Replication`] a cluster node installs on a
//! database's router (`rowtree_db::Options::replication`): each group of
//! commits the database's commit pipeline flushes becomes one `Write`
//! entry of the group's log, carrying the commits' row versions and the
//! metadata written with them. openraft answers a proposal once the entry
//! is committed (on a majority's disks) and applied to this node's
//! replica, which writes it to the very engine the database reads, through
//! the same router. So when the pipeline acknowledges a commit, a majority
//! holds it, and a read here sees it.
//!
//! Before proposing, the group is checked against the split, so that a
//! commit the replicas would refuse never reaches the log: every key
//! inside the split's range, and metadata only in the group of the whole
//! key space. Until split groups are cut at table starts (design
//! milestone 6) and two-phase commit exists (milestone 9), a database in a
//! cluster is one group over the whole key space, and every commit is a
//! single-group commit.
//!
//! Only the group's leader can propose. On another node, or when the
//! leader cannot reach a majority within the timeout, the commit fails with
//! [`rowtree_kv::Error::Replication`] saying why; such a failure does not
//! say the entry is lost, only that this node cannot acknowledge it (a
//! later leader may still commit it). Leases and commit wait do not yet
//! gate these commits: a deposed leader that has not heard of its
//! successor fails its proposals rather than acknowledging them, because
//! Raft commits nothing without a majority, but it could still serve a
//! stale read. Reads at a leaseholder are the next step.

use std::sync::{mpsc, OnceLock};
use std::time::Duration;

use openraft::error::{ClientWriteError, RaftError};
use rowtree_kv::{CommitGroup, Replication};

use crate::command::Command;
use crate::raft::{GroupRaft, TypeConfig};
use crate::replica::{hex, Descriptor};

/// How long a proposal may wait for a majority by default.
pub const DEFAULT_PROPOSAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Commits proposed to one split group (see the module docs).
pub struct GroupCommits {
    /// The group's split, as this node knows it.
    descriptor: Descriptor,
    /// The group's instance on this node, once started (the database that
    /// uses this is opened first: its replica needs the database's router).
    raft: OnceLock<GroupRaft>,
    /// The runtime the group runs on; proposals are made there and waited
    /// for on the committing thread.
    runtime: tokio::runtime::Handle,
    timeout: Duration,
}

impl std::fmt::Debug for GroupCommits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommits")
            .field("descriptor", &self.descriptor)
            .field("started", &self.raft.get().is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl GroupCommits {
    /// Commits for the group of `descriptor`'s split, proposed on
    /// `runtime`, each waiting at most `timeout` for a majority. Commits
    /// fail until [`GroupCommits::start`] is given the group.
    pub fn new(
        descriptor: Descriptor,
        runtime: tokio::runtime::Handle,
        timeout: Duration,
    ) -> GroupCommits {
        GroupCommits {
            descriptor,
            raft: OnceLock::new(),
            runtime,
            timeout,
        }
    }

    /// Proposes to `raft` from now on. A second call is refused: a database
    /// commits through one group instance for its life.
    pub fn start(&self, raft: GroupRaft) -> Result<(), GroupRaft> {
        self.raft.set(raft)
    }

    /// The checks the replicas make on an entry's keys, made before
    /// proposing (see the module docs).
    fn check(&self, group: &CommitGroup) -> Result<(), String> {
        let d = &self.descriptor;
        for commit in &group.commits {
            if let Some((key, _)) = commit.writes.iter().find(|(k, _)| !d.contains(k)) {
                return Err(format!(
                    "a commit writes the key {} outside {}'s range {d}; commits that \
                     span several split groups need two-phase commit, which is not built yet",
                    hex(key),
                    d.split
                ));
            }
        }
        if !group.meta.is_empty() && !d.is_whole() {
            return Err(format!(
                "a commit writes database metadata, which only the group of the whole key \
                 space carries, and {}'s range is {d}",
                d.split
            ));
        }
        Ok(())
    }
}

impl Replication for GroupCommits {
    fn replicate(&self, group: CommitGroup) -> rowtree_kv::Result<()> {
        let failed = rowtree_kv::Error::Replication;
        self.check(&group).map_err(failed)?;
        let raft = self
            .raft
            .get()
            .ok_or_else(|| failed(format!("{}'s group is not started", self.descriptor.split)))?
            .clone();
        let command = Command::Write {
            commits: group.commits,
            closed_ts: None,
            meta: group.meta,
        };
        let timeout = self.timeout;
        let (answer, answered) = mpsc::sync_channel(1);
        self.runtime.spawn(async move {
            let result = tokio::time::timeout(timeout, raft.client_write(command)).await;
            // The committer may have gone; the entry's fate is the log's.
            let _ = answer.send(result);
        });
        match answered.recv() {
            Ok(Ok(Ok(_))) => Ok(()),
            Ok(Ok(Err(e))) => Err(failed(refusal(self.descriptor.split, e))),
            Ok(Err(_)) => Err(failed(format!(
                "{}'s group did not commit the entry within {timeout:?} (no majority \
                 reachable?); it may still commit",
                self.descriptor.split
            ))),
            Err(_) => Err(failed(
                "the runtime stopped before the proposal was answered".into(),
            )),
        }
    }
}

/// Why openraft did not take a proposal, in words.
fn refusal(
    split: rowtree_kv::SplitId,
    e: RaftError<TypeConfig, ClientWriteError<TypeConfig>>,
) -> String {
    match e {
        RaftError::APIError(ClientWriteError::ForwardToLeader(f)) => match f.leader_id {
            Some(leader) => format!("this node does not lead {split}'s group; node {leader} does"),
            None => format!("{split}'s group has no leader at the moment"),
        },
        other => format!("{split}'s group refused the entry: {other}"),
    }
}
