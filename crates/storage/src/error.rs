//! Errors of the storage layer.

/// A storage failure. None of these is retryable by the client: an I/O failure
/// or corruption means the database needs attention.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The data directory is open in another process (or another
    /// `FjallEngine` of this one): one database, one owner.
    #[error("the database directory {0} is in use by another process")]
    InUse(String),
    /// The disk engine failed (I/O error, poisoned after a failed fsync, ...).
    #[error("storage engine error: {0}")]
    Engine(#[from] fjall::Error),
    /// Stored bytes do not have the expected shape.
    #[error("corrupt storage: {0}")]
    Corrupt(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;
