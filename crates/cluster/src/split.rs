//! Cutting a split group in two: what a replica does with a `SplitAt`
//! entry (design §7, "Split at key k").
//!
//! A group whose split is `[a, c)` applies `SplitAt { at: k, right: R }`
//! on every replica at the same point of its log: the replica shrinks to
//! `[a, k)`, and a replica of the new split `R`, `[k, c)`, comes into being
//! on the same engine, in the same batch. No data moves: the rows of
//! `[k, c)` are in the engine already, and from this entry on they belong
//! to `R`. Both descriptors get the old epoch plus one. `R`'s applied state
//! starts with nothing applied (its group starts a log of its own, with
//! the same voters), and with the split's lease and closed timestamp: the
//! node that held the lease on `[a, c)` holds it on both halves, and
//! everything at or below the closed timestamp is as final in `[k, c)` as
//! it was. A transaction prepared with all its writes and locks in `[k, c)`
//! moves to `R`'s prepared table (its coordinator will resolve the old
//! split, which now only records the outcome; `R`'s leader resolves its
//! half by asking the coordinator, as for any transaction whose resolution
//! did not come). Outcomes stay with the left half.
//!
//! From the entry on, the left replica refuses writes at or after `k` as
//! outside its range (design invariant 2), so a commit routed by an old
//! descriptor can never land in the wrong group.
//!
//! The rules: `k` must lie strictly inside the split, `R` must be another
//! split, and the engine must hold no replica of `R` already; an entry that
//! breaks them is refused whole, like any refused entry. A split while a
//! transaction is prepared with keys on both sides of `k` does not happen:
//! the entry is applied as a no-op (the descriptor is unchanged, which is
//! how the proposer learns it), since that transaction's prepared half
//! cannot be cut in two; the proposer tries again once it is resolved.
//!
//! What creates `R`'s Raft group on each node is the node's business
//! (not built yet); a replica of `R` is opened from the engine with
//! [`Replica::open`].

use rowtree_kv::SplitId;
use rowtree_storage::WriteBatch;

use crate::command::LogId;
use crate::error::{Error, Result};
use crate::replica::{encode_state, state_key, Descriptor, Replica, State};
use crate::twophase::{outside, txn_key, TableChange, PREPARED};
use crate::wire::hex;

impl Replica {
    /// Stages a `SplitAt { at, right }` entry (see the module docs):
    /// returns the halves' descriptors (left, right) and the transactions
    /// that move out of this replica's prepared table, or `None` when the
    /// split cannot happen now.
    pub(crate) fn stage_split(
        &self,
        id: LogId,
        at: &[u8],
        right: SplitId,
        batch: &mut WriteBatch,
    ) -> Result<(Option<(Descriptor, Descriptor)>, TableChange)> {
        let d = self.descriptor();
        let refuse = |why: String| Error::Replica {
            split: d.split,
            message: format!("log entry {} splits at {}: {why}", id.index, hex(at)),
        };
        if at <= d.start.as_slice() || d.limit.as_deref().is_some_and(|l| at >= l) {
            return Err(refuse(format!(
                "the key is not strictly inside the split {d}"
            )));
        }
        if right == d.split {
            return Err(refuse("the new split has this split's id".into()));
        }
        if self.router.meta_get(&state_key(right))?.is_some() {
            return Err(refuse(format!(
                "this engine holds a replica of {right} already"
            )));
        }
        let left = Descriptor {
            split: d.split,
            start: d.start.clone(),
            limit: Some(at.to_vec()),
            epoch: d.epoch + 1,
        };
        let new = Descriptor {
            split: right,
            start: at.to_vec(),
            limit: d.limit.clone(),
            epoch: d.epoch + 1,
        };
        let mut moved = Vec::new();
        for prepare in self.prepared() {
            if outside(&left, prepare).is_none() {
                continue;
            }
            if outside(&new, prepare).is_some() {
                // Keys on both sides: not now.
                return Ok((None, TableChange::None));
            }
            moved.push(prepare);
        }
        for prepare in &moved {
            self.router
                .stage_meta(batch, txn_key(d.split, PREPARED, prepare.txn), None);
            self.router.stage_meta(
                batch,
                txn_key(right, PREPARED, prepare.txn),
                Some(prepare.record()),
            );
        }
        let state = State {
            applied: None,
            closed_ts: self.closed_ts(),
            membership: None,
            lease: self.lease(),
        };
        let mut bytes = Vec::new();
        encode_state(&mut bytes, &new, &state);
        self.router.stage_meta(batch, state_key(right), Some(bytes));
        let moved = moved.into_iter().map(|p| p.txn).collect();
        Ok((Some((left, new)), TableChange::RemoveAll(moved)))
    }
}
