//! Errors of the sequence generators, typed by what the caller should do.

use rowtree_types::Code;

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// A sequence generator error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The database (embedded or remote) refused a request. `code` says
    /// what kind of failure it was; [`Code::Aborted`] means the transaction
    /// lost a conflict and the whole transaction should be retried, which
    /// [`Store::run`](crate::Store::run) does by itself.
    #[error("{code:?}: {message}")]
    Database { code: Code, message: String },
    /// The `sequences` table has no row for this sequence: create it first
    /// with [`create_sequence`](crate::create_sequence).
    #[error("sequence {name:?} does not exist in the sequences table")]
    NoSuchSequence { name: String },
    /// Handing out more values would overflow INT64.
    #[error("sequence {name:?} is exhausted: next_value {next_value} + {count} overflows INT64")]
    Exhausted {
        name: String,
        next_value: i64,
        count: i64,
    },
    /// A generator was configured with impossible parameters (a batch of
    /// zero values, a low-water mark not below the batch size).
    #[error("invalid generator configuration: {0}")]
    Config(String),
    /// A transaction was still being aborted after this many attempts.
    #[error("gave up after {attempts} aborted attempts: {last}")]
    TooManyAborts { attempts: u32, last: String },
}

impl Error {
    /// The gRPC status code that describes this error.
    pub fn code(&self) -> Code {
        match self {
            Error::Database { code, .. } => *code,
            Error::NoSuchSequence { .. } => Code::NotFound,
            Error::Exhausted { .. } => Code::OutOfRange,
            Error::Config(_) => Code::InvalidArgument,
            Error::TooManyAborts { .. } => Code::Aborted,
        }
    }

    /// Whether retrying the whole transaction may succeed.
    pub fn is_aborted(&self) -> bool {
        matches!(
            self,
            Error::Database {
                code: Code::Aborted,
                ..
            }
        )
    }

    /// An ABORTED error, as a transaction that lost a conflict gets.
    pub fn aborted(message: impl Into<String>) -> Error {
        Error::Database {
            code: Code::Aborted,
            message: message.into(),
        }
    }
}

impl From<rowtree_db::Error> for Error {
    fn from(e: rowtree_db::Error) -> Error {
        Error::Database {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl From<rowtree_db::DdlError> for Error {
    fn from(e: rowtree_db::DdlError) -> Error {
        Error::Database {
            code: e.code(),
            message: e.to_string(),
        }
    }
}
