//! openraft's state machine on a [`Replica`].
//!
//! openraft hands the state machine committed entries in log order and
//! asks it, after a restart, what it has applied (the last entry and the
//! last membership). Both answers live in the replica's applied state,
//! written in the same engine batch as each entry's data, so they never
//! disagree with the data (design invariant 16).
//!
//! A snapshot is a [`SnapshotImage`] of the replica. openraft asks for a
//! builder while applying is paused; the replica's engine is synced and the
//! image read then, so it holds exactly the entries applied up to that
//! moment, all of them durable before openraft purges the log up to it (it
//! purges only entries a snapshot covers), and the builder only packages
//! it. The last image built or installed is kept as the current
//! snapshot, in memory: after a restart none is current, and openraft
//! builds a new one when it needs it.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use openraft::storage::{EntryResponder, RaftSnapshotBuilder, RaftStateMachine};
use openraft::{EntryPayload, OptionalSend};
use parking_lot::Mutex;

use super::codec;
use super::{to_log_id, to_raft_log_id, RaftLogId, StoredMembership, TypeConfig};
use crate::command::{Command, LogId};
use crate::replica::{Replica, SnapshotImage};
use rowtree_kv::SplitId;

/// A snapshot as openraft carries it: metadata and the image.
type Snapshot = openraft::Snapshot<
    openraft::vote::leader_id_std::CommittedLeaderId<u64>,
    u64,
    openraft::BasicNode,
    SnapshotImage,
>;

/// openraft's metadata of a snapshot.
type SnapshotMeta = openraft::alias::SnapshotMetaOf<TypeConfig>;

/// How many snapshots a [`ReplicaMachine`] has built and installed since
/// it was made: shared, so that it can be read while openraft owns the
/// machine.
#[derive(Debug, Default)]
pub struct SnapshotCounts {
    built: AtomicU64,
    installed: AtomicU64,
}

impl SnapshotCounts {
    /// Snapshots of this replica built (for a lagging peer, or to purge
    /// the log).
    pub fn built(&self) -> u64 {
        self.built.load(Ordering::Relaxed)
    }

    /// Snapshots installed on this replica (it had fallen behind the
    /// leader's purged log).
    pub fn installed(&self) -> u64 {
        self.installed.load(Ordering::Relaxed)
    }
}

/// openraft's state machine for one replica (see the module docs).
#[derive(Debug)]
pub struct ReplicaMachine {
    replica: Replica,
    current: Arc<Mutex<Option<Snapshot>>>,
    counts: Arc<SnapshotCounts>,
}

impl ReplicaMachine {
    /// The state machine of `replica`.
    pub fn new(replica: Replica) -> ReplicaMachine {
        ReplicaMachine {
            replica,
            current: Arc::new(Mutex::new(None)),
            counts: Arc::default(),
        }
    }

    /// Its snapshot counts, readable after the machine is handed to
    /// openraft.
    pub fn snapshot_counts(&self) -> Arc<SnapshotCounts> {
        Arc::clone(&self.counts)
    }

    /// The replica underneath.
    pub fn replica(&self) -> &Replica {
        &self.replica
    }

    fn stored_membership(&self) -> io::Result<StoredMembership> {
        match self.replica.membership() {
            None => Ok(StoredMembership::default()),
            Some((id, bytes)) => {
                let membership = codec::decode_membership(bytes)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                Ok(StoredMembership::new(Some(to_raft_log_id(id)), membership))
            }
        }
    }

    fn applied_raft_id(&self) -> Option<RaftLogId> {
        self.replica.applied().map(to_raft_log_id)
    }
}

impl ReplicaMachine {
    /// Waits until the replica of `right` on this engine has applied its
    /// log up to `applied` (its `Freeze`) and is frozen, before a `Merge`
    /// of it is applied (see [`crate::merge`]): its group applies on its
    /// own schedule. Returns at once if the engine holds no replica of
    /// `right` (the `Merge` is then refused).
    async fn wait_for_freeze(&self, right: SplitId, applied: LogId) -> Result<(), io::Error> {
        let started = std::time::Instant::now();
        let mut warned = started;
        loop {
            let stored =
                Replica::stored_state(&self.replica.router, right).map_err(replica_error)?;
            match stored {
                None => return Ok(()),
                Some(held)
                    if held.frozen.is_some()
                        && held.applied.is_some_and(|d| d.index >= applied.index) =>
                {
                    return Ok(());
                }
                Some(_) => {}
            }
            if warned.elapsed() >= MERGE_WAIT_WARNING {
                warned = std::time::Instant::now();
                tracing::warn!(
                    split = %self.replica.descriptor().split,
                    %right,
                    waited_s = started.elapsed().as_secs(),
                    "a merge waits for the merged split's replica here to apply its freeze"
                );
            }
            tokio::time::sleep(MERGE_POLL).await;
        }
    }
}

/// How often a `Merge` waiting for the merged split's replica looks again.
const MERGE_POLL: std::time::Duration = std::time::Duration::from_millis(2);

/// How long a `Merge` waits between warnings that it still waits.
const MERGE_WAIT_WARNING: std::time::Duration = std::time::Duration::from_secs(10);

fn replica_error(e: crate::Error) -> io::Error {
    io::Error::other(e)
}

impl RaftStateMachine<TypeConfig> for ReplicaMachine {
    type SnapshotData = SnapshotImage;
    type SnapshotBuilder = ImageBuilder;

    async fn applied_state(&mut self) -> Result<(Option<RaftLogId>, StoredMembership), io::Error> {
        Ok((self.applied_raft_id(), self.stored_membership()?))
    }

    async fn apply<Strm>(&mut self, mut entries: Strm) -> Result<(), io::Error>
    where
        Strm: Stream<Item = Result<EntryResponder<TypeConfig>, io::Error>> + Unpin + OptionalSend,
    {
        while let Some(item) = entries.next().await {
            let (entry, responder) = item?;
            let id = to_log_id(&entry.log_id);
            if let EntryPayload::Normal(Command::Merge {
                right,
                right_applied,
                ..
            }) = &entry.payload
            {
                if self.replica.applied().is_none_or(|a| a.index < id.index) {
                    self.wait_for_freeze(*right, *right_applied).await?;
                }
            }
            match &entry.payload {
                EntryPayload::Blank => self.replica.apply_config(id, None),
                EntryPayload::Normal(command) => self.replica.apply(id, command),
                EntryPayload::Membership(membership) => self
                    .replica
                    .apply_config(id, Some(codec::encode_membership(membership))),
            }
            .map_err(replica_error)?;
            if let Some(responder) = responder {
                responder.send(());
            }
        }
        Ok(())
    }

    async fn get_snapshot_builder(&mut self) -> ImageBuilder {
        // openraft purges the log only up to a snapshot's last entry, so
        // what the snapshot covers must be durable here first: the replica
        // applies with buffered durability.
        let read = self
            .replica
            .sync()
            .and_then(|()| self.replica.image())
            .map_err(replica_error)
            .and_then(|image| {
                let meta = SnapshotMeta {
                    last_log_id: self.applied_raft_id(),
                    last_membership: self.stored_membership()?,
                };
                Ok((meta, image))
            });
        ImageBuilder {
            read: Some(read),
            current: Arc::clone(&self.current),
            counts: Arc::clone(&self.counts),
        }
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: SnapshotImage,
    ) -> Result<(), io::Error> {
        self.replica.install(&snapshot).map_err(replica_error)?;
        // The image and openraft's metadata describe the same moment; a
        // mismatch means the image is not the one the metadata came with.
        if self.applied_raft_id() != meta.last_log_id
            || self.stored_membership()? != meta.last_membership
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the snapshot image stops at {:?}, its metadata says {:?}",
                    self.replica.applied(),
                    meta.last_log_id.map(|id| to_log_id(&id)),
                ),
            ));
        }
        *self.current.lock() = Some(Snapshot {
            meta: meta.clone(),
            snapshot,
        });
        self.counts.installed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot>, io::Error> {
        Ok(self.current.lock().clone())
    }
}

/// Packages an image read by [`ReplicaMachine`] as openraft's snapshot,
/// and makes it the machine's current one.
pub struct ImageBuilder {
    read: Option<io::Result<(SnapshotMeta, SnapshotImage)>>,
    current: Arc<Mutex<Option<Snapshot>>>,
    counts: Arc<SnapshotCounts>,
}

impl RaftSnapshotBuilder<TypeConfig> for ImageBuilder {
    type SnapshotData = SnapshotImage;

    async fn build_snapshot(&mut self) -> Result<Snapshot, io::Error> {
        let (meta, image) = self
            .read
            .take()
            .unwrap_or_else(|| Err(io::Error::other("this snapshot builder was used already")))?;
        let snapshot = Snapshot {
            meta,
            snapshot: image,
        };
        *self.current.lock() = Some(snapshot.clone());
        self.counts.built.fetch_add(1, Ordering::Relaxed);
        Ok(snapshot)
    }
}
