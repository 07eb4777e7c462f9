//! The SQL lexers and parsers: GoogleSQL's, and PostgreSQL's ([`pg`]).
//!
//! Text becomes tokens ([`lexer`]), tokens become statements ([`ast`]).
//! Errors carry a byte offset that [`Position`] turns into `line:column`.
//!
//! A script is handled in three steps:
//!
//! 1. [`split_statements`] cuts it at every `;` that is not inside a literal,
//!    a backquoted identifier or a comment, and drops empty pieces.
//! 2. [`parse_statement`] lexes one piece and parses exactly one statement
//!    (DDL, a query, DML or EXPLAIN) from it; [`parse_query`] and
//!    [`parse_expr`] do the same for one query or one expression.
//! 3. A [`ParseError`] names what went wrong in GoogleSQL's words and where,
//!    as a byte offset into the text that was parsed.
//!
//! A PostgreSQL-dialect database goes through [`pg`] instead, which builds
//! the same [`ast`]; [`parse_statement_in`] and [`split_statements_in`]
//! choose by the database's [`Dialect`].

pub mod ast;
mod error;
pub mod lexer;
mod parser;
pub mod pg;
mod position;
mod split;

pub use error::{ParseError, Result};
pub use parser::{parse_expr, parse_query, parse_statement, MAX_NESTING};
pub use position::Position;
pub use split::{split_statements, StatementText};

use rowtree_types::Dialect;

/// [`parse_statement`] in `dialect`: GoogleSQL's parser or PostgreSQL's
/// ([`pg::parse_statement`]).
pub fn parse_statement_in(dialect: Dialect, text: &str) -> Result<ast::Statement> {
    match dialect {
        Dialect::GoogleSql => parse_statement(text),
        Dialect::PostgreSql => pg::parse_statement(text),
    }
}

/// [`split_statements`] by `dialect`'s lexical rules.
pub fn split_statements_in(dialect: Dialect, text: &str) -> Vec<StatementText<'_>> {
    match dialect {
        Dialect::GoogleSql => split_statements(text),
        Dialect::PostgreSql => pg::split_statements(text),
    }
}
