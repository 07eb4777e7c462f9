//! The one error type of the schema layer.
//!
//! Variants are chosen by what the caller must do, and map one to one to the
//! gRPC status code Spanner returns for the same DDL mistake:
//!
//! | variant | code | the caller should |
//! |---|---|---|
//! | [`SchemaError::InvalidArgument`] | `INVALID_ARGUMENT` | fix the statement text |
//! | [`SchemaError::NotFound`] | `NOT_FOUND` | create the object first, or fix its name |
//! | [`SchemaError::AlreadyExists`] | `ALREADY_EXISTS` | pick another name |
//! | [`SchemaError::FailedPrecondition`] | `FAILED_PRECONDITION` | change the schema (or data) the statement depends on |
//! | [`SchemaError::Unimplemented`] | `UNIMPLEMENTED` | use a supported form |
//!
//! Spanner itself reports a duplicate schema name as `FAILED_PRECONDITION`
//! (`Duplicate name in schema: X.`), and so do we; `AlreadyExists` is kept for
//! callers that create whole databases.
//!
//! Messages are worded as Spanner words them, so clients that match on text
//! keep working. Each error may carry the [`Span`] of the offending token, which
//! the caller turns into `line:column` with [`rowtree_parser::Position`].

use rowtree_parser::ast::Span;
use rowtree_types::Code;

/// A DDL statement was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The statement is malformed or asks for something Spanner never allows.
    #[error("{message}")]
    InvalidArgument { message: String, span: Option<Span> },
    /// A named table, column, index, sequence or constraint does not exist.
    #[error("{message}")]
    NotFound { message: String, span: Option<Span> },
    /// The object to create exists already.
    #[error("{message}")]
    AlreadyExists { message: String, span: Option<Span> },
    /// The statement is well formed but the current schema forbids it
    /// (duplicate names, dependent objects, limits).
    #[error("{message}")]
    FailedPrecondition { message: String, span: Option<Span> },
    /// The statement uses a feature Rowtree (or Spanner) does not support.
    #[error("{message}")]
    Unimplemented { message: String, span: Option<Span> },
}

/// Result alias of this crate.
pub type Result<T, E = SchemaError> = std::result::Result<T, E>;

impl SchemaError {
    /// An [`SchemaError::InvalidArgument`] at `span`.
    pub fn invalid(message: impl Into<String>, span: impl Into<Option<Span>>) -> Self {
        SchemaError::InvalidArgument {
            message: message.into(),
            span: span.into(),
        }
    }

    /// A [`SchemaError::NotFound`] at `span`.
    pub fn not_found(message: impl Into<String>, span: impl Into<Option<Span>>) -> Self {
        SchemaError::NotFound {
            message: message.into(),
            span: span.into(),
        }
    }

    /// A [`SchemaError::FailedPrecondition`] at `span`.
    pub fn precondition(message: impl Into<String>, span: impl Into<Option<Span>>) -> Self {
        SchemaError::FailedPrecondition {
            message: message.into(),
            span: span.into(),
        }
    }

    /// A [`SchemaError::Unimplemented`] at `span`.
    pub fn unimplemented(message: impl Into<String>, span: impl Into<Option<Span>>) -> Self {
        SchemaError::Unimplemented {
            message: message.into(),
            span: span.into(),
        }
    }

    /// A parse failure, as Spanner reports it (`INVALID_ARGUMENT`), placed at
    /// the parser's byte offset.
    pub fn from_parse(error: &rowtree_parser::ParseError) -> Self {
        SchemaError::invalid(
            error.message.clone(),
            Span {
                start: error.offset,
                end: error.offset,
            },
        )
    }

    /// The gRPC status code Spanner uses for this error.
    pub fn code(&self) -> Code {
        match self {
            SchemaError::InvalidArgument { .. } => Code::InvalidArgument,
            SchemaError::NotFound { .. } => Code::NotFound,
            SchemaError::AlreadyExists { .. } => Code::AlreadyExists,
            SchemaError::FailedPrecondition { .. } => Code::FailedPrecondition,
            SchemaError::Unimplemented { .. } => Code::Unimplemented,
        }
    }

    /// The message, without code or position.
    pub fn message(&self) -> &str {
        match self {
            SchemaError::InvalidArgument { message, .. }
            | SchemaError::NotFound { message, .. }
            | SchemaError::AlreadyExists { message, .. }
            | SchemaError::FailedPrecondition { message, .. }
            | SchemaError::Unimplemented { message, .. } => message,
        }
    }

    /// Byte range of the offending token in the statement text, if known.
    pub fn span(&self) -> Option<Span> {
        match self {
            SchemaError::InvalidArgument { span, .. }
            | SchemaError::NotFound { span, .. }
            | SchemaError::AlreadyExists { span, .. }
            | SchemaError::FailedPrecondition { span, .. }
            | SchemaError::Unimplemented { span, .. } => *span,
        }
    }

    /// Converts an expression error, prefixing `context` (Spanner's
    /// `Error parsing the definition of generated column ...: `) to its
    /// message and keeping its position.
    pub(crate) fn from_expr(context: &str, error: &rowtree_expr::Error) -> Self {
        let message = format!("{context}{}", error.message());
        let span = error.span();
        match error {
            rowtree_expr::Error::NotFound { .. } => SchemaError::not_found(message, span),
            rowtree_expr::Error::FailedPrecondition { .. } => {
                SchemaError::precondition(message, span)
            }
            _ => SchemaError::invalid(message, span),
        }
    }
}
