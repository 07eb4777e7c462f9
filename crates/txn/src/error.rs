//! The crate's one error type, typed by what the caller should do about it.

/// A `Result` whose error is this crate's [`enum@Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Errors of the lock manager and the commit pipeline.
///
/// Only [`Error::Aborted`] is retryable: the transaction lost a conflict and should be run
/// again from the start (keeping its priority, see [`crate::LockManager::begin`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The transaction was wounded by an older one (or its commit was refused because of
    /// that). It must release its locks and retry.
    #[error("transaction aborted: {reason}")]
    Aborted {
        /// Why the transaction was aborted, for the client and for logs.
        reason: String,
    },
    /// The caller's deadline passed while waiting (for a lock or for a timestamp to become
    /// visible). The transaction is still active and keeps its locks.
    #[error("deadline exceeded")]
    DeadlineExceeded,
    /// Writing a commit group failed. The outcome of the commits in that group is unknown
    /// unless the flush function is all-or-nothing.
    #[error("storage error: {0}")]
    Storage(String),
    /// The commit could not be made durable here now: in a cluster, this node may not
    /// assign commit timestamps for the split (another node holds its lease), or the split's
    /// group could not reach a majority. Refused before timestamps were issued, nothing was
    /// written; refused by the flush, the outcome is unknown (a later leader may still commit
    /// it).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The commit was refused before anything of it was proposed: in a
    /// cluster, another node leads a split it writes (the lease moved
    /// after the commit was checked). Nothing was written, so sending it
    /// again, to that node, is safe.
    #[error("unavailable: {0}")]
    Refused(String),
    /// The commit pipeline has shut down; nothing was committed.
    #[error("commit pipeline is shut down")]
    Shutdown,
    /// The call does not fit the transaction's state, e.g. a lock request from a
    /// transaction that is already committing or done. A bug in the caller.
    #[error("failed precondition: {0}")]
    FailedPrecondition(String),
    /// An invariant of this crate broke (e.g. a write-set builder panicked).
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// Whether running the whole transaction again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Aborted { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_aborted_is_retryable() {
        assert!(Error::Aborted { reason: "x".into() }.is_retryable());
        for e in [
            Error::DeadlineExceeded,
            Error::Storage("disk".into()),
            Error::Shutdown,
            Error::FailedPrecondition("p".into()),
            Error::Internal("i".into()),
        ] {
            assert!(!e.is_retryable(), "{e}");
        }
    }
}
