//! Errors of the SQL layer.
//!
//! Inside the crate an [`Error`] carries a gRPC category (what the caller
//! does about it: fix the statement, create the object, retry), GoogleSQL's
//! message text and, when known, the [`Span`] of the statement text at
//! fault. At the session boundary [`Error::render`] turns the span into
//! `[at line:column]` against the statement text, giving a [`SqlError`].

use rowtree_parser::ast::Span;
use rowtree_parser::Position;
use rowtree_types::Code;

/// Characters of the statement quoted on each side of an error's caret.
pub const SNIPPET_CONTEXT: usize = 60;

/// An error while binding, planning or executing a statement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// The gRPC status code: what the caller does about the error.
    pub code: Code,
    /// GoogleSQL's wording, without the position.
    pub message: String,
    /// Where in the statement text, when known.
    pub span: Option<Span>,
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            span: None,
        }
    }

    /// `INVALID_ARGUMENT`: the statement must be fixed.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(Code::InvalidArgument, message)
    }

    /// `INVALID_ARGUMENT` at a place in the text.
    pub fn invalid_at(span: Span, message: impl Into<String>) -> Error {
        Error::invalid(message).at(span)
    }

    /// `NOT_FOUND`: a named object does not exist.
    pub fn not_found(message: impl Into<String>) -> Error {
        Error::new(Code::NotFound, message)
    }

    /// `OUT_OF_RANGE`: a value or a row count left its allowed range.
    pub fn out_of_range(message: impl Into<String>) -> Error {
        Error::new(Code::OutOfRange, message)
    }

    /// `RESOURCE_EXHAUSTED`: the statement needs more than a limit allows.
    pub fn resource_exhausted(message: impl Into<String>) -> Error {
        Error::new(Code::ResourceExhausted, message)
    }

    /// `UNIMPLEMENTED`: valid GoogleSQL that Rowtree does not run yet.
    pub fn unimplemented(message: impl Into<String>) -> Error {
        Error::new(Code::Unimplemented, message)
    }

    /// `FAILED_PRECONDITION`: the session or transaction is not in a state
    /// that allows the statement.
    pub fn failed_precondition(message: impl Into<String>) -> Error {
        Error::new(Code::FailedPrecondition, message)
    }

    /// `INTERNAL`: a bug in Rowtree, never the client's fault.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(Code::Internal, message)
    }

    /// Attaches `span` unless the error already has a (more precise) one.
    pub fn at(mut self, span: Span) -> Error {
        if self.span.is_none() {
            self.span = Some(span);
        }
        self
    }

    /// The gRPC status code of this error.
    pub fn code(&self) -> Code {
        self.code
    }

    /// Whether retrying the whole transaction may succeed.
    pub fn is_retryable(&self) -> bool {
        self.code == Code::Aborted
    }

    /// The client-facing error: the message with ` [at L:C]` appended when
    /// the position is known (`text` is the statement the span points into).
    /// Like [`Error::render`], and then, as Spanner's API does, the
    /// statement's line with a caret under the error's column:
    /// `Table not found: T [at 1:8]\nUPDATE T SET ...\n       ^`.
    ///
    /// A long line is quoted only around the caret ([`SNIPPET_CONTEXT`]
    /// characters each side, `...` where it was cut), so the error of a
    /// 200 KB one-line statement stays small enough for a gRPC status.
    pub fn render_with_snippet(&self, text: &str) -> SqlError {
        let mut out = self.render(text);
        if let Some(span) = self.span.filter(|s| text.is_char_boundary(s.start)) {
            let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[span.start..]
                .find('\n')
                .map_or(text.len(), |i| span.start + i);
            let before: Vec<char> = text[line_start..span.start].chars().collect();
            let cut_before = before.len().saturating_sub(SNIPPET_CONTEXT);
            let mut line = String::new();
            if cut_before > 0 {
                line.push_str("...");
            }
            line.extend(&before[cut_before..]);
            let column = line.chars().count();
            let mut after = text[span.start..line_end].chars();
            line.extend(after.by_ref().take(SNIPPET_CONTEXT));
            if after.next().is_some() {
                line.push_str("...");
            }
            out.message = format!("{}\n{}\n{}^", out.message, line, " ".repeat(column));
        }
        out
    }

    pub fn render(&self, text: &str) -> SqlError {
        let message = match self.span {
            Some(span) if text.is_char_boundary(span.start) => {
                format!("{} [at {}]", self.message, Position::of(text, span.start))
            }
            _ => self.message.clone(),
        };
        SqlError {
            code: self.code,
            message,
        }
    }
}

impl From<rowtree_expr::Error> for Error {
    fn from(e: rowtree_expr::Error) -> Error {
        Error {
            code: e.code(),
            message: e.message().to_string(),
            span: e.span(),
        }
    }
}

impl From<rowtree_db::Error> for Error {
    fn from(e: rowtree_db::Error) -> Error {
        let message = match &e {
            // The db layer's Display adds a prefix for these two; keep it.
            rowtree_db::Error::Aborted { .. } | rowtree_db::Error::DeadlineExceeded { .. } => {
                e.to_string()
            }
            _ => e.to_string(),
        };
        Error::new(e.code(), message)
    }
}

impl From<rowtree_parser::ParseError> for Error {
    fn from(e: rowtree_parser::ParseError) -> Error {
        Error::invalid(e.message).at(Span {
            start: e.offset,
            end: e.offset,
        })
    }
}

/// The error a client sees: a gRPC status code and GoogleSQL's message,
/// ending in ` [at line:column]` when the position is known. It prints as
/// `CODE_NAME: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct SqlError {
    pub code: Code,
    pub message: String,
}

impl SqlError {
    /// The gRPC status code of this error.
    pub fn code(&self) -> Code {
        self.code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: usize) -> Error {
        Error::invalid("Unrecognized name: x").at(Span {
            start: offset,
            end: offset + 1,
        })
    }

    #[test]
    fn the_snippet_quotes_the_line_with_a_caret() {
        let text = "SELECT 1,\n  x FROM T";
        let e = at(text.find('x').unwrap()).render_with_snippet(text);
        assert_eq!(e.message, "Unrecognized name: x [at 2:3]\n  x FROM T\n  ^");
    }

    #[test]
    fn a_long_line_is_quoted_around_the_caret_only() {
        let text = format!("SELECT {}x{}", "1 + ".repeat(50_000), " + 1".repeat(50_000));
        let offset = text.find('x').unwrap();
        let e = at(offset).render_with_snippet(&text);
        let lines: Vec<&str> = e.message.lines().collect();
        assert_eq!(
            lines[0],
            format!("Unrecognized name: x [at 1:{}]", offset + 1)
        );
        assert!(lines[1].starts_with("...") && lines[1].ends_with("..."));
        assert_eq!(lines[1].chars().count(), 2 * SNIPPET_CONTEXT + 6);
        // The caret is under the `x`.
        let caret = lines[2].len() - 1;
        assert_eq!(lines[1].chars().nth(caret), Some('x'));
        assert!(e.message.len() < 400);
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = format!("SELECT '{}', x", "é".repeat(500));
        let e = at(text.find('x').unwrap()).render_with_snippet(&text);
        let lines: Vec<&str> = e.message.lines().collect();
        assert!(lines[1].starts_with("...é"));
        assert_eq!(lines[1].chars().nth(lines[2].len() - 1), Some('x'));
    }
}
