//! Errors of binding and evaluation.
//!
//! Each variant names what the caller should do about it: fix the statement
//! (`InvalidArgument`), fix the data or the arithmetic (`OutOfRange`), create
//! the missing object (`NotFound`), or retry/adjust the transaction
//! (`FailedPrecondition`), or ask for less (`ResourceExhausted`). Each carries the [`Span`] of the expression node at
//! fault when one is known, so the statement layer can print `[at line:col]`.

use rowtree_parser::ast::Span;
use rowtree_types::Code;

/// An error while binding or evaluating an expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The expression is malformed or ill-typed, or a value cannot be
    /// converted (`Invalid cast from BOOL to DATE`, a bad literal).
    #[error("{message}")]
    InvalidArgument { message: String, span: Option<Span> },
    /// A computation left its type's range (`int64 overflow: ...`, division
    /// by zero, a timestamp past 9999-12-31).
    #[error("{message}")]
    OutOfRange { message: String, span: Option<Span> },
    /// A named object the expression refers to does not exist (a sequence).
    #[error("{message}")]
    NotFound { message: String, span: Option<Span> },
    /// The expression is valid but not allowed here (e.g.
    /// `GET_NEXT_SEQUENCE_VALUE` outside a read-write transaction).
    #[error("{message}")]
    FailedPrecondition { message: String, span: Option<Span> },
    /// Evaluating needs more than a limit allows (a subquery's rows past
    /// the query's memory limit).
    #[error("{message}")]
    ResourceExhausted { message: String, span: Option<Span> },
    /// An error of the statement's context that evaluation only passes on,
    /// with the context's own code: a subquery's read aborted by a
    /// conflicting transaction (ABORTED, which the client retries), a
    /// cancelled or timed-out query, an internal error. It is not about
    /// the expression, so it takes no position.
    #[error("{message}")]
    Context { code: Code, message: String },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An [`Error::InvalidArgument`] without a position.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidArgument {
            message: message.into(),
            span: None,
        }
    }

    /// An [`Error::OutOfRange`] without a position.
    pub fn out_of_range(message: impl Into<String>) -> Error {
        Error::OutOfRange {
            message: message.into(),
            span: None,
        }
    }

    /// An [`Error::NotFound`] without a position.
    pub fn not_found(message: impl Into<String>) -> Error {
        Error::NotFound {
            message: message.into(),
            span: None,
        }
    }

    /// The status code of this error's category.
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidArgument { .. } => Code::InvalidArgument,
            Error::OutOfRange { .. } => Code::OutOfRange,
            Error::NotFound { .. } => Code::NotFound,
            Error::FailedPrecondition { .. } => Code::FailedPrecondition,
            Error::ResourceExhausted { .. } => Code::ResourceExhausted,
            Error::Context { code, .. } => *code,
        }
    }

    /// The message, without the category.
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArgument { message, .. }
            | Error::OutOfRange { message, .. }
            | Error::NotFound { message, .. }
            | Error::FailedPrecondition { message, .. }
            | Error::ResourceExhausted { message, .. }
            | Error::Context { message, .. } => message,
        }
    }

    /// The source range of the node at fault, if known.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::InvalidArgument { span, .. }
            | Error::OutOfRange { span, .. }
            | Error::NotFound { span, .. }
            | Error::FailedPrecondition { span, .. }
            | Error::ResourceExhausted { span, .. } => *span,
            Error::Context { .. } => None,
        }
    }

    /// Attaches `span` unless the error already has a (more precise) one.
    pub fn at(mut self, at: Span) -> Error {
        match &mut self {
            Error::InvalidArgument { span, .. }
            | Error::OutOfRange { span, .. }
            | Error::NotFound { span, .. }
            | Error::FailedPrecondition { span, .. }
            | Error::ResourceExhausted { span, .. } => {
                if span.is_none() {
                    *span = Some(at);
                }
            }
            Error::Context { .. } => {}
        }
        self
    }
}

impl From<rowtree_types::Error> for Error {
    fn from(e: rowtree_types::Error) -> Error {
        match e {
            rowtree_types::Error::InvalidArgument(message) => Error::InvalidArgument {
                message,
                span: None,
            },
            rowtree_types::Error::OutOfRange(message) => Error::OutOfRange {
                message,
                span: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_errors_keep_their_code_and_take_no_position() {
        let at = Span { start: 3, end: 9 };
        let aborted = Error::Context {
            code: Code::Aborted,
            message: "Transaction was aborted: wounded".into(),
        }
        .at(at);
        assert_eq!(aborted.code(), Code::Aborted);
        assert_eq!(aborted.span(), None);
        assert_eq!(aborted.message(), "Transaction was aborted: wounded");
        // The expression's own errors do take the position.
        assert_eq!(Error::invalid("bad").at(at).span(), Some(at));
    }
}
