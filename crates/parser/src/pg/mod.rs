//! The PostgreSQL dialect's lexer and parser: DDL, queries and DML.
//!
//! A PostgreSQL-dialect database speaks PostgreSQL's syntax and type names,
//! but everything below the parser is the one engine: this parser produces
//! the same [`crate::ast`] nodes as the GoogleSQL one, so the schema, the DDL
//! log and the catalog do not know which dialect a statement was written in.
//! It follows the GoogleSQL parser's contracts: one statement per call (a
//! trailing `;` allowed), [`ParseError`]s with byte offsets into the text,
//! nesting bounded by [`crate::MAX_NESTING`], and a splitter that cuts only
//! at `;` tokens ([`split_statements`]).
//!
//! What differs is PostgreSQL's: unquoted names fold to lower case and
//! `"quoted"` ones keep their case (the catalog stores the folded name);
//! types are `bigint`, `varchar(n)`, `T[]`, ...; errors are worded as
//! PostgreSQL words them (`syntax error at or near "x"`).
//!
//! Covered today (steps 2 and 3 of `docs/design/postgresql.md`):
//! CREATE/ALTER/DROP TABLE, CREATE/DROP INDEX, CREATE/ALTER/DROP SEQUENCE,
//! CREATE/DROP VIEW (`ddl`); queries (`query`); INSERT, UPDATE, DELETE with
//! RETURNING and ON CONFLICT (`dml`); EXPLAIN; and expressions (`expr`),
//! where `$n` parameters become the request's `pn`, PostgreSQL function
//! names map onto the engine's, and the few semantics that differ by
//! dialect are written into the AST (NULL order, integer division).

mod ddl;
mod dml;
mod expr;
pub mod lexer;
mod query;

use crate::ast::{Ident, Span, Statement};
use crate::error::{ParseError, Result};
use crate::split::StatementText;
use crate::MAX_NESTING;
use lexer::{PgTok, PgToken};

/// Parses exactly one PostgreSQL statement (a trailing `;` is allowed).
/// Spans in the result are byte offsets into `text`.
pub fn parse_statement(text: &str) -> Result<Statement> {
    let mut parser = PgParser::new(text)?;
    let statement = parser.parse_statement()?;
    parser.eat_op(";");
    parser.expect_end()?;
    Ok(statement)
}

/// Splits a PostgreSQL script at `;` tokens (outside literals, quoted
/// identifiers and comments), skipping empty statements. Never fails: from
/// a literal or comment left open, the rest of the script is one statement,
/// where parsing reports the error.
pub fn split_statements(text: &str) -> Vec<StatementText<'_>> {
    let (tokens, error) = lexer::scan_prefix(text);
    let mut spans = Vec::new();
    let mut current: Option<Span> = None;
    for token in tokens {
        if token.tok == PgTok::Op(";") {
            spans.extend(current.take());
        } else {
            current = Some(match current {
                Some(s) => Span {
                    start: s.start,
                    end: token.span.end,
                },
                None => token.span,
            });
        }
    }
    if let Some(error) = error {
        let start = current.map_or(error.offset, |s| s.start);
        current = Some(Span {
            start,
            end: text.trim_end().len().max(start),
        });
    }
    spans.extend(current);
    spans
        .into_iter()
        .map(|span| StatementText {
            text: &text[span.start..span.end],
            offset: span.start,
        })
        .collect()
}

/// PostgreSQL's reserved words that this grammar relies on: they cannot be
/// unquoted names (`"select"` can).
const RESERVED: &[&str] = &[
    "all",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "current_date",
    "current_timestamp",
    "default",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "inner",
    "intersect",
    "into",
    "join",
    "leading",
    "left",
    "limit",
    "natural",
    "not",
    "null",
    "full",
    "cross",
    "right",
    "outer",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "primary",
    "references",
    "returning",
    "select",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "when",
    "where",
    "window",
    "with",
];

/// Whether `word` (folded to lower case) is one of the reserved words this
/// grammar will not read as a bare name: printers quote such names.
pub fn is_reserved(word: &str) -> bool {
    RESERVED.contains(&word)
}

/// The token cursor of one statement.
pub(crate) struct PgParser<'a> {
    text: &'a str,
    /// Never empty: the last token is `Eof`.
    tokens: Vec<PgToken>,
    pos: usize,
    /// How many [`PgParser::nested`] calls are open.
    depth: usize,
    /// The deepest level reached since the innermost open chain started
    /// (see `expr::Chain`): with the open chains' links, a bound of the
    /// tree's depth.
    deepest: usize,
}

impl<'a> PgParser<'a> {
    fn new(text: &'a str) -> Result<Self> {
        Ok(PgParser {
            text,
            tokens: lexer::tokenize(text)?,
            pos: 0,
            depth: 0,
            deepest: 0,
        })
    }

    /// Runs `f` one nesting level deeper, or fails past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_NESTING {
            return Err(ParseError::new(
                format!("statement too complex: it nests deeper than {MAX_NESTING} levels"),
                self.peek().span.start,
            ));
        }
        self.depth += 1;
        let result = rowtree_types::stack::guarded(|| f(self));
        self.depth -= 1;
        result
    }

    /// The error for a statement nested deeper than [`MAX_NESTING`], at
    /// the current token.
    fn too_deep(&self) -> ParseError {
        ParseError::new(
            format!("statement too complex: it nests deeper than {MAX_NESTING} levels"),
            self.peek().span.start,
        )
    }

    fn peek(&self) -> &PgToken {
        self.peek_at(0)
    }

    fn peek_at(&self, n: usize) -> &PgToken {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + n).min(last)]
    }

    fn advance(&mut self) -> PgToken {
        let token = self.peek().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        token
    }

    /// End offset of the last consumed token.
    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.tokens[self.pos - 1].span.end
        }
    }

    fn span_from(&self, start: usize) -> Span {
        Span {
            start,
            end: self.prev_end().max(start),
        }
    }

    /// Whether the current token is the unquoted word `word` (lower case).
    fn at_word(&self, word: &str) -> bool {
        self.at_word_n(0, word)
    }

    fn at_word_n(&self, n: usize, word: &str) -> bool {
        matches!(&self.peek_at(n).tok, PgTok::Word(w) if w == word)
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if self.at_word(word) {
            self.advance();
            true
        } else {
            false
        }
    }

    /// `eat_word` for each of `words` in turn, all or nothing.
    fn eat_words(&mut self, words: &[&str]) -> bool {
        if words.iter().enumerate().all(|(i, w)| self.at_word_n(i, w)) {
            for _ in words {
                self.advance();
            }
            true
        } else {
            false
        }
    }

    fn expect_word(&mut self, word: &str) -> Result<()> {
        if self.eat_word(word) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn at_op(&self, op: &str) -> bool {
        matches!(self.peek().tok, PgTok::Op(o) if o == op)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if self.at_op(op) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect_op(&mut self, op: &str) -> Result<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn expect_end(&self) -> Result<()> {
        if self.peek().tok == PgTok::Eof {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// PostgreSQL's error for the current token.
    fn unexpected(&self) -> ParseError {
        let token = self.peek();
        if token.tok == PgTok::Eof {
            ParseError::new("syntax error at end of input", token.span.start)
        } else {
            ParseError::new(
                format!(
                    "syntax error at or near \"{}\"",
                    &self.text[token.span.start..token.span.end]
                ),
                token.span.start,
            )
        }
    }

    /// An error for a construct PostgreSQL has but Rowtree does not.
    fn unsupported(&self, what: &str, offset: usize) -> ParseError {
        ParseError::new(format!("{what} is not supported"), offset)
    }

    /// A name: an unreserved word (folded) or a quoted identifier (exact).
    fn parse_ident(&mut self) -> Result<Ident> {
        let token = self.peek().clone();
        let value = match &token.tok {
            PgTok::Word(w) if !is_reserved(w) => w.clone(),
            PgTok::Quoted(q) => q.clone(),
            _ => return Err(self.unexpected()),
        };
        self.advance();
        Ok(Ident {
            value,
            span: token.span,
        })
    }

    /// A column label after `AS` in a select list: any word, reserved ones
    /// included (`SELECT 1 AS column`, as PostgreSQL allows), folded, or a
    /// quoted identifier.
    fn parse_col_label(&mut self) -> Result<Ident> {
        let token = self.peek().clone();
        let value = match &token.tok {
            PgTok::Word(w) => w.clone(),
            PgTok::Quoted(q) => q.clone(),
            _ => return Err(self.unexpected()),
        };
        self.advance();
        Ok(Ident {
            value,
            span: token.span,
        })
    }

    /// Whether the current token can start a name.
    fn at_ident(&self) -> bool {
        match &self.peek().tok {
            PgTok::Word(w) => !is_reserved(w),
            PgTok::Quoted(_) => true,
            _ => false,
        }
    }

    /// An object name, optionally qualified by the `public` schema (the only
    /// one Rowtree's PostgreSQL databases have).
    fn parse_object_name(&mut self) -> Result<Ident> {
        let first = self.parse_ident()?;
        if first.value == "public" && self.at_op(".") {
            self.advance();
            return self.parse_ident();
        }
        if self.at_op(".") {
            return Err(ParseError::new(
                format!("schema \"{}\" does not exist", first.value),
                first.span.start,
            ));
        }
        Ok(first)
    }

    /// `( name, ... )`.
    fn parse_ident_list(&mut self) -> Result<Vec<Ident>> {
        self.expect_op("(")?;
        let mut out = vec![self.parse_ident()?];
        while self.eat_op(",") {
            out.push(self.parse_ident()?);
        }
        self.expect_op(")")?;
        Ok(out)
    }

    /// An optionally signed integer literal.
    fn parse_signed_int(&mut self) -> Result<i64> {
        let start = self.peek().span.start;
        let negative = self.eat_op("-");
        if !negative {
            self.eat_op("+");
        }
        let token = self.peek().clone();
        let PgTok::Number(text, false) = &token.tok else {
            return Err(self.unexpected());
        };
        self.advance();
        let text = if negative {
            format!("-{text}")
        } else {
            text.clone()
        };
        text.parse::<i64>()
            .map_err(|_| ParseError::new(format!("integer out of range: {text}"), start))
    }
}

#[cfg(test)]
mod tests;
