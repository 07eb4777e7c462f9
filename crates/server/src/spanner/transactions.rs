//! Transactions between requests: what a transaction id stands for.
//!
//! A read-only transaction is held nowhere: its id carries its read
//! timestamp ([`read_only_id`]), and a request naming it opens a snapshot at
//! that timestamp again. Read-write and partitioned DML transactions are
//! held in their session as a [`TxnSlot`] (see `sessions.rs`) under a
//! random id starting with [`HELD_TAG`]. A slot's [`TxnState`] ends as
//! `Ended` with the status later uses answer: after Commit or Rollback, or
//! when the transaction was aborted (wound-wait, or idle too long), which
//! also frees its locks ([`end_aborted`]).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rowtree_db::{ReadOnlyTransaction, ReadWriteTransaction};
use rowtree_types::Code;

use crate::registry::now_nanos;

/// The first byte of a read-only transaction's id; held transactions' ids
/// start with [`HELD_TAG`], so the two never collide.
pub(super) const READ_ONLY_TAG: u8 = 0x52;
pub(super) const HELD_TAG: u8 = 0x57;

/// A read-only transaction's id: the tag, the read timestamp (nanoseconds,
/// big-endian) and 7 random bytes so that two transactions begun at the same
/// timestamp still have different ids.
pub(super) fn read_only_id(read_ts: u64) -> Vec<u8> {
    let mut id = Vec::with_capacity(16);
    id.push(READ_ONLY_TAG);
    id.extend_from_slice(&read_ts.to_be_bytes());
    id.extend_from_slice(&uuid::Uuid::new_v4().as_bytes()[..7]);
    id
}

/// The read timestamp in a read-only transaction's id, if `id` is one.
pub(super) fn read_only_timestamp(id: &[u8]) -> Option<u64> {
    match id {
        [READ_ONLY_TAG, rest @ ..] if rest.len() == 15 => {
            Some(u64::from_be_bytes(rest[..8].try_into().ok()?))
        }
        _ => None,
    }
}

/// A transaction's state between requests.
pub(super) enum TxnState {
    ReadOnly(ReadOnlyTransaction),
    ReadWrite(ReadWriteTransaction),
    /// A partitioned DML transaction: each statement runs in transactions of
    /// its own.
    PartitionedDml,
    /// Ended: the message to answer later uses with, and its code.
    Ended(Code, String),
}

/// A held transaction: its state (locked while a request uses it), when a
/// request last named it, and whether it is read-write (what the reaper
/// rolls back when it sits idle).
pub(super) struct TxnSlot {
    pub(super) state: Mutex<TxnState>,
    pub(super) last_use: AtomicI64,
    pub(super) read_write: bool,
    /// When it was begun (wall clock, nanoseconds since the Unix epoch).
    pub(super) created: i64,
    /// On a cluster node: the node the request that began it came in
    /// through, 0 if this one. When that node stops answering, or its
    /// process is replaced, an idle read-write transaction is rolled back
    /// at once: the client, cut off with it, cannot end it, and its locks
    /// would hold every transaction behind them for
    /// [`IDLE_READ_WRITE`](super::IDLE_READ_WRITE).
    pub(super) via: u64,
}

impl TxnSlot {
    pub(super) fn new(state: TxnState) -> Arc<TxnSlot> {
        TxnSlot::begun_via(state, 0)
    }

    /// A slot for a transaction begun by a request that came in through
    /// node `via` (0: this one).
    pub(super) fn begun_via(state: TxnState, via: u64) -> Arc<TxnSlot> {
        let read_write = matches!(state, TxnState::ReadWrite(_));
        let now = now_nanos();
        Arc::new(TxnSlot {
            state: Mutex::new(state),
            last_use: AtomicI64::new(now),
            read_write,
            created: now,
            via,
        })
    }

    pub(super) fn touch(&self) {
        self.last_use.store(now_nanos(), Ordering::Relaxed);
    }
}

/// Ends a read-write transaction that was aborted (its locks are freed).
pub(super) fn end_aborted(state: &mut TxnState, message: &str) {
    if let TxnState::ReadWrite(_) = state {
        let old = std::mem::replace(state, TxnState::Ended(Code::Aborted, message.to_string()));
        if let TxnState::ReadWrite(txn) = old {
            txn.rollback();
        }
    }
}
