//! GoogleSQL lexer and parser.
//!
//! Text becomes tokens ([`lexer`]), tokens become statements ([`ast`]).
//! Errors carry a byte offset that [`Position`] turns into `line:column`.

pub mod ast;
