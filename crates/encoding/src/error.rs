//! Errors of the key and row codecs.

/// An encoding or decoding failure.
///
/// Encoding fails only when asked to encode something the format cannot hold
/// (a caller bug or an unvalidated schema); decoding fails when the bytes are
/// not a valid encoding, which means corruption or a format mismatch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The value's type cannot be part of a key (JSON, ARRAY, STRUCT).
    #[error("values of type {0} cannot be key columns")]
    NotAKeyType(String),
    /// The value cannot be stored in a row (STRUCT, or an array of arrays).
    #[error("values of type {0} cannot be stored in a row")]
    NotStorable(String),
    /// The input ended in the middle of an encoded item.
    #[error("truncated encoding: input ended while decoding {0}")]
    Truncated(&'static str),
    /// The input is not a valid encoding.
    #[error("corrupt encoding: {0}")]
    Corrupt(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;
