//! Transactions that reach splits led by other nodes.
//!
//! A database alone, or a cluster node leading every split a transaction
//! touches, locks and writes everything here: the lock table is this
//! node's, the commit one entry (or a two-phase commit among the groups
//! it leads). In a cluster whose splits are led by different nodes, a
//! split's keys are locked only in the lock table of the node leading it
//! (it is the one that commits them), so a read-write transaction run
//! here reaches the others ([`rowtree_kv::Replication`] carries the
//! calls):
//!
//! * **Locks.** Every lock is taken here, as always, and also, for the
//!   part of its keys whose split another node leads
//!   ([`Router::locked_elsewhere`](rowtree_kv::Router::locked_elsewhere)),
//!   at that node, which keeps it for the transaction under its wound-wait
//!   priority (the same priority here and there, so that every node orders
//!   conflicts alike). A transaction's rows there are read there, after
//!   the lock, at the latest (the router sends reads at `u64::MAX` of those
//!   keys to their leader).
//! * **Commit.** The writes to those keys are prepared at their leaders
//!   ([`prepare`]) before the commit is queued: each leader checks it
//!   still holds the transaction's locks, makes a prepare entry in its
//!   split's log at a timestamp above every read it served, and answers
//!   that timestamp. This node's clock observes the highest, so the commit
//!   timestamp the pipeline gives is above it; the commit of the
//!   transaction's writes here is the decision of the two-phase commit,
//!   and the prepared writes are resolved after it. A row there that takes
//!   the commit timestamp goes with the columns to set listed apart
//!   ([`PreparedWrite::for_elsewhere`]), and that node's replicas set them
//!   at the commit ([`crate::stamp_row`]); one holding it in a key column is
//!   refused, as its split is unknown until the commit.
//! * **End.** Whatever ends the transaction (a rollback, a commit's
//!   answer, a failure) lets go of what it holds elsewhere ([`release`]);
//!   a two-phase commit that did not reach its decision is aborted then.
//!
//! A transaction here is known elsewhere by a [`TxnRef`]: its lock handle's
//! id and this database's incarnation (random, drawn when the database
//! opened), so ids never repeat across nodes or restarts.

use std::sync::Arc;
use std::time::Instant;

use rowtree_kv::TxnRef;
use rowtree_txn::{LockMode, LockTarget, TxnHandle};

use crate::database::Inner;
use crate::error::{Error, Result};
use crate::write::PreparedWrite;

/// How other nodes know the transaction of `handle`.
pub(crate) fn txn_ref(inner: &Inner, handle: &TxnHandle) -> TxnRef {
    TxnRef {
        id: (u128::from(inner.incarnation) << 64) | u128::from(handle.id().0),
        priority: handle.priority(),
    }
}

/// Takes `target` in `mode` for the transaction of `handle`: here, and at
/// the nodes serving the locks of the parts of it led elsewhere.
/// `deadline`: how long a lock may be waited for (`None`: as long as
/// wound-wait says); a deadline already past also refuses to ask another
/// node (that is waiting too), failing with [`Error::DeadlineExceeded`].
pub(crate) fn lock(
    inner: &Inner,
    handle: &Arc<TxnHandle>,
    target: LockTarget,
    mode: LockMode,
    deadline: Option<Instant>,
) -> Result<()> {
    if !inner.router.replicated() {
        inner.locks.lock(handle, target, mode, deadline)?;
        return Ok(());
    }
    let (start, end, point) = match &target {
        LockTarget::Key(key) => (key.clone(), [key.as_slice(), &[0]].concat().into(), true),
        LockTarget::Range(range) => (range.start.clone(), range.end.clone(), false),
    };
    inner.locks.lock(handle, target, mode, deadline)?;
    let spans = inner.router.locked_elsewhere(&start, end.as_deref());
    if spans.is_empty() {
        return Ok(());
    }
    if deadline.is_some_and(|d| d <= Instant::now()) {
        return Err(Error::DeadlineExceeded {
            message: "a lock held at another node would be waited for".into(),
        });
    }
    let txn = txn_ref(inner, handle);
    let exclusive = mode == LockMode::Exclusive;
    for (from, limit) in spans {
        if point {
            inner
                .router
                .lock_elsewhere(txn, &start, None, true, exclusive)?;
        } else {
            inner
                .router
                .lock_elsewhere(txn, &from, limit.as_deref(), false, exclusive)?;
        }
    }
    Ok(())
}

/// The writes of a commit, split into those committed here and those
/// whose split another node leads (to prepare there).
pub(crate) struct Parted {
    /// Committed here.
    pub here: Vec<PreparedWrite>,
    /// Prepared at other nodes.
    pub elsewhere: Vec<PreparedWrite>,
}

/// Parts `writes` by where they are committed (see [`Parted`]).
pub(crate) fn part(
    inner: &Inner,
    handle: &TxnHandle,
    writes: Vec<PreparedWrite>,
) -> Result<Parted> {
    let mut parted = Parted {
        here: Vec::with_capacity(writes.len()),
        elsewhere: Vec::new(),
    };
    if !inner.router.replicated() {
        parted.here = writes;
        return Ok(parted);
    }
    let txn = txn_ref(inner, handle);
    for write in writes {
        let key = write.final_key()?;
        let routed = key.as_deref().unwrap_or(write.for_accounting().0);
        if !inner.router.written_elsewhere(txn, routed) {
            parted.here.push(write);
            continue;
        }
        if key.is_none() {
            // The commit timestamp in a key column: which split the row
            // falls in is known only at the commit.
            return Err(Error::FailedPrecondition {
                message: "a transaction run by one node cannot write the commit timestamp \
                          into a key column of a row in a split led by another node; write \
                          that row in a transaction of its own, or retry once the splits are \
                          led together"
                    .into(),
            });
        }
        parted.elsewhere.push(write);
    }
    Ok(parted)
}

/// Prepares `writes` at the nodes leading their splits (see the module
/// docs) and makes this node's timestamps from now on greater than every
/// prepare timestamp.
pub(crate) fn prepare(inner: &Inner, handle: &TxnHandle, writes: Vec<PreparedWrite>) -> Result<()> {
    let mut out = Vec::with_capacity(writes.len());
    for write in writes {
        // `part` kept back the writes with no final key.
        let write = write
            .for_elsewhere()?
            .ok_or_else(|| Error::internal("a write with no final key prepared elsewhere"))?;
        out.push(write);
    }
    let ts = inner
        .router
        .prepare_elsewhere(txn_ref(inner, handle), out)?;
    inner.pipeline.observe(ts);
    Ok(())
}

/// Confirms the locks the transaction of `handle` took at other nodes,
/// where it writes nothing (its reads under them must still hold at its
/// commit), and makes this node's timestamps from now on greater than
/// those nodes' clocks.
pub(crate) fn confirm(inner: &Inner, handle: &TxnHandle) -> Result<()> {
    if !inner.router.replicated() {
        return Ok(());
    }
    let ts = inner.router.confirm_elsewhere(txn_ref(inner, handle))?;
    if ts > 0 {
        inner.pipeline.observe(ts);
    }
    Ok(())
}

/// Lets go of what the transaction of `handle` holds at other nodes.
pub(crate) fn release(inner: &Inner, handle: &TxnHandle) {
    if inner.router.replicated() {
        inner.router.release_elsewhere(txn_ref(inner, handle));
    }
}
