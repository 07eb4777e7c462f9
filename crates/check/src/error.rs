//! The crate's one error type.
//!
//! Errors are sorted by what a check does about them: an RPC status the
//! server answered ([`Error::Rpc`], with [`Error::is_aborted`] for the ones a
//! transaction retries), a server that could not be reached or started
//! ([`Error::Connect`], [`Error::Server`]), a long-running operation that
//! finished with an error ([`Error::Operation`]), an answer that does not
//! have the shape Spanner's API promises ([`Error::Protocol`]), and a
//! deadline ([`Error::Timeout`]). A *violation* of what a check verifies
//! (a lost commit, a half-applied one) is not an error: the checks count
//! those in their reports.

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The server answered with a non-OK status.
    #[error("{}: {}", .0.code(), .0.message())]
    Rpc(Box<tonic::Status>),
    /// No connection could be made.
    #[error("cannot connect: {0}")]
    Connect(#[from] tonic::transport::Error),
    /// A long-running operation finished with an error.
    #[error("operation {name} failed with code {code}: {message}")]
    Operation {
        /// The operation's name.
        name: String,
        /// The `google.rpc.Code` it failed with.
        code: i32,
        /// Its message.
        message: String,
    },
    /// An answer that does not have the shape the API promises.
    #[error("unexpected answer: {0}")]
    Protocol(String),
    /// The `rowtree serve` process could not be started or stopped.
    #[error("server process: {0}")]
    Server(String),
    /// Local I/O (the log file, the data directory).
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// Something did not finish in time.
    #[error("timed out: {0}")]
    Timeout(String),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<tonic::Status> for Error {
    fn from(s: tonic::Status) -> Self {
        Error::Rpc(Box::new(s))
    }
}

impl Error {
    /// The gRPC code, for an RPC error or a failed operation.
    pub fn code(&self) -> Option<tonic::Code> {
        match self {
            Error::Rpc(s) => Some(s.code()),
            Error::Operation { code, .. } => Some(tonic::Code::from_i32(*code)),
            _ => None,
        }
    }

    /// Whether the transaction should be retried (ABORTED).
    pub fn is_aborted(&self) -> bool {
        self.code() == Some(tonic::Code::Aborted)
    }

    /// Whether the server was unreachable or went away mid-call: the
    /// outcome of a write that failed so is unknown.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Connect(_))
            || matches!(
                self.code(),
                Some(tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled)
            )
    }
}
