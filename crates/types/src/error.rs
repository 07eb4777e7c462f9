//! Errors from parsing, converting and computing values.

use crate::Code;

/// A value-level error. Callers above turn these into statement errors with a
/// position; the category tells the client what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input is malformed for the type (bad literal, bad cast).
    #[error("{0}")]
    InvalidArgument(String),
    /// The value is well formed but outside the type's range (overflow,
    /// timestamp past 9999-12-31).
    #[error("{0}")]
    OutOfRange(String),
}

impl Error {
    /// The status code of this error.
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidArgument(_) => Code::InvalidArgument,
            Error::OutOfRange(_) => Code::OutOfRange,
        }
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;
