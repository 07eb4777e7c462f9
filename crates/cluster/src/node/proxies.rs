//! The locks a node holds for transactions run by other nodes: one
//! [`Proxy`] per transaction, kept by database ([`Proxies`]). What they are
//! for, and the calls that make and end them, are in `node::participant`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use rowtree_txn::TxnHandle;

use crate::twophase::GlobalTxnId;

/// Another node's transaction, as this node holds its locks.
pub(super) struct Proxy {
    pub(super) handle: Arc<TxnHandle>,
    /// The term of each split it took locks in.
    pub(super) terms: BTreeMap<rowtree_kv::SplitId, u64>,
    /// When it was last called for.
    pub(super) used: Instant,
    /// Its writes are prepared here (it waits for its outcome).
    pub(super) prepared: bool,
    /// It writes nothing here, and confirmed its locks to commit
    /// elsewhere: no longer woundable, held until it ends.
    pub(super) confirmed: bool,
    /// The node running it (0: its calls did not say), and when the
    /// proxy was made (this node's wall clock, nanoseconds since the Unix
    /// epoch): once that node's process is gone or silent, the locks of a
    /// proxy that did not prepare are let go.
    pub(super) origin: (u64, i64),
}

/// The proxies of one database's transactions run by other nodes.
#[derive(Default)]
pub(super) struct Proxies {
    pub(super) by_txn: Mutex<HashMap<GlobalTxnId, Proxy>>,
}

impl std::fmt::Debug for Proxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxies")
            .field("count", &self.by_txn.lock().len())
            .finish()
    }
}
