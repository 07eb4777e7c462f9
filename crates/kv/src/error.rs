//! Errors of the kv layer.

/// A failure while reading or writing through the [`Router`](crate::Router).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The storage layer failed (I/O error, corruption).
    #[error(transparent)]
    Storage(#[from] rowtree_storage::Error),
    /// Persisted split statistics do not decode.
    #[error("corrupt load history: {0}")]
    CorruptHistory(String),
    /// A persisted split map does not decode or is not a valid map.
    #[error("corrupt split map record: {0}")]
    CorruptSplitMap(String),
    /// A replicated log did not take a commit group (see
    /// [`Replication`](crate::Replication)); the message says why (no
    /// leader here, no quorum in time, the group stopped). The group may
    /// still be committed later.
    #[error("replication: {0}")]
    Replication(String),
    /// Another node serves the split a read under locks or a write
    /// touches (a cluster database whose splits are led by different
    /// nodes); the message names the split and its leader. Retrying the
    /// transaction where that split is led succeeds.
    #[error("{0}")]
    LedElsewhere(String),
    /// A transaction lost a conflict at another node (wound-wait there),
    /// or its locks there were lost (the split's lease moved): retry the
    /// transaction.
    #[error("{0}")]
    Aborted(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;
