//! The one error type of the parser: a message and where it applies.

use rowtree_types::Code;

/// A lexing or parsing failure in the text given to the parser.
///
/// `message` is written the way GoogleSQL words it (for example
/// `Syntax error: Expected ")" but got keyword PRIMARY`) so that clients see
/// the same text as from Spanner; `offset` is a byte offset into the parsed
/// text, turned into `line:column` by [`crate::Position::of`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    pub message: String,
    pub offset: usize,
}

impl ParseError {
    /// An error at `offset` with the given message.
    pub fn new(message: impl Into<String>, offset: usize) -> Self {
        ParseError {
            message: message.into(),
            offset,
        }
    }

    /// The status code of a parse failure: the text must be fixed.
    pub fn code(&self) -> Code {
        Code::InvalidArgument
    }
}

/// The parser's result type.
pub type Result<T, E = ParseError> = std::result::Result<T, E>;
