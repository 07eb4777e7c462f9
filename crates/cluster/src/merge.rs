//! Merging two neighbouring split groups into one: what a replica does
//! with the `Freeze` and `Merge` entries (design §7, "Merge of neighbours").
//!
//! A merge joins a split `R`, `[b, c)`, to its left neighbour `L`,
//! `[a, b)`, when both have replicas on the same nodes (as the halves of a
//! split do until a replica moves) and one node leads both. It takes two
//! entries, one in each group:
//!
//! 1. **`Freeze { into: L }` in `R`'s group.** Applying it, every replica
//!    of `R` records that it is frozen (a side key, `raft/<R>/frozen/`,
//!    written in the entry's batch and carried in images). From then on
//!    the replica takes no writes: an entry that would write (a commit, a
//!    prepare, a decision, a resolution, a split, a merge) is refused, and
//!    every other entry (closed timestamps, leases, Raft's own) is applied
//!    in memory only, with nothing written, so the replica's stored state
//!    stays exactly as the `Freeze` left it. A split holding prepared
//!    transactions is not frozen (their resolutions are writes): the
//!    entry is then a no-op, which is how the proposer learns to wait.
//! 2. **`Merge { right: R, its range and epoch, right_applied }` in `L`'s
//!    group**, where `right_applied` is the id of `R`'s `Freeze` entry.
//!    A replica of `L` applies it only once the replica of `R` on the same
//!    engine has applied its log up to there (the Raft state machine waits
//!    for it before applying, `raft::ReplicaMachine`): then everything `R`
//!    will ever write is in the engine. In one batch, `L` takes over `[b,
//!    c)`; its epoch becomes one more than the larger of the two; it keeps
//!    its own closed timestamp (a read of `[b, c)` at or below it is safe:
//!    everything `R` wrote is applied, and every later write there comes
//!    through `L`, above `L`'s closed timestamp); `R`'s kept outcomes move to `L`'s
//!    outcome table (a participant asking `R`'s coordinator record finds
//!    it in `L`, which answers for `R` from now on); and `R`'s applied state
//!    and side keys are deleted, so `R` is no longer among the engine's
//!    replicas ([`Replica::stored_splits`]). No data moves: `[b, c)`'s rows
//!    are in the engine already.
//!
//! The rules of `Merge`: `R` must start where `L` ends, be another split,
//! and be held on this engine with the range and epoch the entry names,
//! frozen into `L`, applied up to `right_applied`, with no prepared
//! transaction. An entry that breaks them is refused whole, like any
//! refused entry.
//!
//! A replica of `L` that installs an image of the merged `L` (it was
//! behind, and the leader sent the image instead of the log) drops the
//! replicas of the engine whose ranges the image's covers, as the `Merge`
//! would have. Either way the replica tells the node through its merge
//! observer ([`Replica::with_merge_observer`]), which stops the groups of
//! the splits that are gone.

use rowtree_kv::SplitId;
use rowtree_storage::WriteBatch;

use crate::command::LogId;
use crate::error::{Error, Result};
use crate::replica::{decode_stored_state, state_key, Descriptor, Replica, State};
use crate::twophase::{
    self, frozen_key, side_prefix, stored_frozen, table_prefix, OUTCOME_TABLES, PREPARED,
};
use crate::wire::hex;

/// What an engine stores of one of its replicas, read without opening it
/// ([`Replica::stored_state`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReplica {
    /// Its split and range.
    pub descriptor: Descriptor,
    /// The last entry of its group's log it applied (a frozen replica
    /// stores the `Freeze`: what it applies later changes nothing stored).
    pub applied: Option<LogId>,
    /// The split it is frozen into for a merge, if it is.
    pub frozen: Option<SplitId>,
}

impl Replica {
    /// The applied state of the replica of `split` that `router`'s engine
    /// holds, as stored: its range, the last entry it applied, and whether
    /// it is frozen. What a node waits on before applying a `Merge` of
    /// `split`.
    pub fn stored_state(
        router: &rowtree_kv::Router,
        split: SplitId,
    ) -> Result<Option<StoredReplica>> {
        let Some(bytes) = router.meta_get(&state_key(split))? else {
            return Ok(None);
        };
        let (descriptor, state) = decode_stored_state(split, &bytes)?;
        Ok(Some(StoredReplica {
            descriptor,
            applied: state.applied,
            frozen: stored_frozen(router, split)?,
        }))
    }

    /// Stages a `Freeze { into }` entry (see the module docs): whether the
    /// replica is frozen by it (`false`: it holds prepared transactions,
    /// or was frozen before).
    pub(crate) fn stage_freeze(
        &self,
        id: LogId,
        into: SplitId,
        batch: &mut WriteBatch,
    ) -> Result<bool> {
        let split = self.descriptor().split;
        if into == split {
            return Err(Error::Replica {
                split,
                message: format!("log entry {} freezes the split into itself", id.index),
            });
        }
        if self.frozen().is_some() || self.prepared().next().is_some() {
            return Ok(false);
        }
        self.router.stage_meta(
            batch,
            frozen_key(split),
            Some(into.0.to_be_bytes().to_vec()),
        );
        Ok(true)
    }

    /// Stages a `Merge` of split `right`, `[start, limit)` at `epoch`,
    /// frozen at `right_applied` (see the module docs): returns this
    /// replica's new descriptor.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stage_merge(
        &self,
        id: LogId,
        right: SplitId,
        start: &[u8],
        limit: Option<&[u8]>,
        epoch: u64,
        right_applied: LogId,
        batch: &mut WriteBatch,
    ) -> Result<Descriptor> {
        let d = self.descriptor();
        let refuse = |why: String| Error::Replica {
            split: d.split,
            message: format!("log entry {} merges {right}: {why}", id.index),
        };
        if right == d.split {
            return Err(refuse("it is this split".into()));
        }
        if d.limit.as_deref() != Some(start) {
            return Err(refuse(format!(
                "it starts at {}, and this split {d} does not end there",
                hex(start)
            )));
        }
        let Some(bytes) = self.router.meta_get(&state_key(right))? else {
            return Err(refuse("this engine holds no replica of it".into()));
        };
        let (held, state): (Descriptor, State) = decode_stored_state(right, &bytes)?;
        if held.start != start || held.limit.as_deref() != limit || held.epoch != epoch {
            return Err(refuse(format!(
                "this engine holds it as {held} at epoch {}, the entry names [{}, {}) at epoch \
                 {epoch}",
                held.epoch,
                hex(start),
                limit.map_or_else(|| "end".to_string(), hex)
            )));
        }
        if stored_frozen(&self.router, right)? != Some(d.split) {
            return Err(refuse(format!("it is not frozen into {}", d.split)));
        }
        if state.applied.is_none_or(|a| a.index < right_applied.index) {
            return Err(refuse(format!(
                "its replica here has applied {:?}, not yet its freeze at {}",
                state.applied.map(|a| a.index),
                right_applied.index
            )));
        }
        if self
            .router
            .meta_scan(&table_prefix(right, PREPARED))
            .next()
            .is_some()
        {
            return Err(refuse("it holds prepared transactions".into()));
        }
        // R's side keys: its outcomes (and their expiry marks) move to this
        // split's tables; the rest (the frozen mark) goes.
        let from = side_prefix(right);
        let to = side_prefix(d.split);
        for item in self.router.meta_scan(&from) {
            let (key, value) = item?;
            if !twophase::is_side_key(right, &key) {
                continue;
            }
            let rest = &key[from.len()..];
            if OUTCOME_TABLES
                .iter()
                .any(|t| rest.starts_with(t.as_bytes()) && rest.get(t.len()) == Some(&b'/'))
            {
                let mut moved = to.clone();
                moved.extend_from_slice(rest);
                self.router.stage_meta(batch, moved, Some(value));
            }
            self.router.stage_meta(batch, key, None);
        }
        self.router.stage_meta(batch, state_key(right), None);
        let merged = Descriptor {
            split: d.split,
            start: d.start.clone(),
            limit: limit.map(<[u8]>::to_vec),
            epoch: d.epoch.max(epoch) + 1,
        };
        Ok(merged)
    }
}
