//! Errors of the database layer, typed by what the caller should do.
//!
//! Lower layers have their own error enums; they are converted here into the
//! categories a client acts on. Only the API server maps these to gRPC status
//! codes, using [`Error::code`].

use rowtree_types::Code;

/// Result alias for the database layer.
pub type Result<T> = std::result::Result<T, Error>;

/// A database error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The request is malformed: fix it and send it again.
    #[error("{message}")]
    InvalidArgument { message: String },
    /// A named object or a row the request requires does not exist.
    #[error("{message}")]
    NotFound { message: String },
    /// The object or row being created exists already.
    #[error("{message}")]
    AlreadyExists { message: String },
    /// The database is not in a state that allows the request (a constraint,
    /// a referenced row, a stale timestamp).
    #[error("{message}")]
    FailedPrecondition { message: String },
    /// A value is outside its type's range, or a limit is exceeded.
    #[error("{message}")]
    OutOfRange { message: String },
    /// The transaction lost a conflict (wound-wait) or was aborted: retry
    /// the whole transaction, keeping its priority.
    #[error("Transaction was aborted: {reason}")]
    Aborted { reason: String },
    /// The deadline passed before the request finished.
    #[error("Deadline exceeded: {message}")]
    DeadlineExceeded { message: String },
    /// A resource limit (mutations or bytes per commit) was exceeded.
    #[error("{message}")]
    ResourceExhausted { message: String },
    /// The transaction has already committed or rolled back.
    #[error("{message}")]
    TransactionClosed { message: String },
    /// This node cannot serve the request now: in a cluster, it does not
    /// hold the lease of the split the request needs, or the split's group
    /// has no majority within reach. Retrying (on this node later, or on
    /// the node the message names) may succeed.
    #[error("unavailable: {message}")]
    Unavailable { message: String },
    /// In a cluster: the request needs splits another node leads (their
    /// keys are locked only there), and was refused before anything of it
    /// was done, so sending it again, to the node the message names, is
    /// always safe. The client sees UNAVAILABLE, as for
    /// [`Error::Unavailable`].
    #[error("unavailable: {message}")]
    LedElsewhere { message: String },
    /// Storage failed (the database stops accepting writes after a failed
    /// write or fsync, until it is reopened) or an invariant broke. Not the
    /// client's fault.
    #[error("internal error: {message}")]
    Internal { message: String },
    /// Stored data failed a check (a checksum): it is damaged on disk and is
    /// not served. Not the client's fault; retrying does not help.
    #[error("data loss: {message}")]
    DataLoss { message: String },
    /// The data directory was written in an on-disk format this build does
    /// not read (a newer Rowtree made it, or the marker is not one we ever
    /// wrote): use a Rowtree that reads format `found`. Nothing was changed.
    #[error(
        "the database is in on-disk format version {found}, but this build of Rowtree reads \
         format version {supported} (and older versions, which it upgrades) only; open it with \
         a Rowtree that reads version {found}"
    )]
    UnsupportedFormat {
        /// The version recorded in the data directory.
        found: u32,
        /// The version this build reads and writes
        /// ([`FORMAT_VERSION`](crate::FORMAT_VERSION)).
        supported: u32,
    },
}

impl Error {
    /// The gRPC status code of this error.
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidArgument { .. } => Code::InvalidArgument,
            Error::NotFound { .. } => Code::NotFound,
            Error::AlreadyExists { .. } => Code::AlreadyExists,
            Error::FailedPrecondition { .. } | Error::TransactionClosed { .. } => {
                Code::FailedPrecondition
            }
            Error::OutOfRange { .. } => Code::OutOfRange,
            Error::Aborted { .. } => Code::Aborted,
            Error::DeadlineExceeded { .. } => Code::DeadlineExceeded,
            Error::ResourceExhausted { .. } => Code::ResourceExhausted,
            Error::Unavailable { .. } | Error::LedElsewhere { .. } => Code::Unavailable,
            Error::Internal { .. } => Code::Internal,
            Error::DataLoss { .. } => Code::DataLoss,
            Error::UnsupportedFormat { .. } => Code::FailedPrecondition,
        }
    }

    /// Whether retrying the whole transaction may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Aborted { .. })
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            message: message.into(),
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Error {
        Error::NotFound {
            message: message.into(),
        }
    }

    pub(crate) fn internal(message: impl Into<String>) -> Error {
        Error::Internal {
            message: message.into(),
        }
    }
}

impl From<rowtree_storage::Error> for Error {
    fn from(e: rowtree_storage::Error) -> Error {
        match e {
            rowtree_storage::Error::InUse(_) => Error::FailedPrecondition {
                message: e.to_string(),
            },
            rowtree_storage::Error::Corrupt(_) => Error::DataLoss {
                message: e.to_string(),
            },
            // Says what failed and what to do (reopen): no prefix needed.
            rowtree_storage::Error::Stopped(_) => Error::internal(e.to_string()),
            other => Error::internal(format!("storage: {other}")),
        }
    }
}

impl From<rowtree_kv::Error> for Error {
    fn from(e: rowtree_kv::Error) -> Error {
        match e {
            rowtree_kv::Error::Storage(e) => e.into(),
            rowtree_kv::Error::Replication(message) => Error::Unavailable { message },
            // Not ABORTED: retrying here (as `Database::write` does with
            // an abort) would meet the same leader; the client retries
            // through a node the split's leader serves.
            rowtree_kv::Error::LedElsewhere(message) => Error::LedElsewhere { message },
            rowtree_kv::Error::Aborted(reason) => Error::Aborted { reason },
            other => Error::internal(format!("kv: {other}")),
        }
    }
}

impl From<rowtree_encoding::Error> for Error {
    fn from(e: rowtree_encoding::Error) -> Error {
        Error::internal(format!("encoding: {e}"))
    }
}

impl From<rowtree_txn::Error> for Error {
    fn from(e: rowtree_txn::Error) -> Error {
        if e.is_retryable() {
            Error::Aborted {
                reason: e.to_string(),
            }
        } else {
            match e {
                rowtree_txn::Error::DeadlineExceeded => Error::DeadlineExceeded {
                    message: "waiting for a lock".into(),
                },
                // The commit's flush failed; the message is the storage
                // error's own (a stopped engine says to reopen).
                rowtree_txn::Error::Storage(message) => Error::internal(message),
                rowtree_txn::Error::Unavailable(message) => Error::Unavailable { message },
                rowtree_txn::Error::Refused(message) => Error::LedElsewhere { message },
                other => Error::internal(other.to_string()),
            }
        }
    }
}
