//! The recursive-descent parser.
//!
//! A [`Parser`] walks the token list of one statement with one token of
//! lookahead (two or three where GoogleSQL's non-reserved words make the
//! grammar ambiguous, such as a column named `Check` versus `CHECK (...)`).
//! Every `parse_*` method consumes exactly the tokens of its construct or
//! returns an error naming the token it could not use, so the first error is
//! the one reported and positions are always those of a real token.
//!
//! The grammar is split by topic: [`ddl`] for statement dispatch, DDL,
//! column definitions and types; [`query`] for queries (SELECT, set
//! operations, FROM, hints); [`dml`] for INSERT, UPDATE, DELETE and EXPLAIN;
//! [`expr`] for expressions, by precedence; [`objects`] for views, roles,
//! GRANT / REVOKE and the proto bundle.

mod ddl;
mod dml;
mod expr;
mod objects;
mod query;

use crate::ast::{Expr, Ident, Query, Span, Statement};
use crate::error::{ParseError, Result};
use crate::lexer::{self, Keyword, Punct, Token, TokenKind};

/// Parses exactly one statement: DDL, a query, DML or EXPLAIN (a trailing
/// `;` is allowed).
///
/// Spans in the result are byte offsets into `text`.
pub fn parse_statement(text: &str) -> Result<Statement> {
    let mut parser = Parser::new(text)?;
    let statement = parser.parse_statement()?;
    parser.eat_punct(Punct::Semicolon);
    parser.expect_end()?;
    Ok(statement)
}

/// Parses exactly one query (a trailing `;` is allowed).
pub fn parse_query(text: &str) -> Result<Query> {
    let mut parser = Parser::new(text)?;
    let query = parser.parse_query()?;
    parser.eat_punct(Punct::Semicolon);
    parser.expect_end()?;
    Ok(query)
}

/// Parses one expression, such as the body of a `DEFAULT (...)`.
pub fn parse_expr(text: &str) -> Result<Expr> {
    let mut parser = Parser::new(text)?;
    let expr = parser.parse_expr()?;
    parser.expect_end()?;
    Ok(expr)
}

/// The token cursor shared by the grammar modules.
pub(crate) struct Parser<'a> {
    text: &'a str,
    /// Never empty: the last token is [`TokenKind::Eof`].
    tokens: Vec<Token>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Result<Self> {
        Ok(Parser {
            text,
            tokens: lexer::tokenize(text)?,
            pos: 0,
        })
    }

    /// The current token (the final `Eof` once everything is consumed).
    fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    /// The token `n` places ahead of the current one, or `Eof`.
    fn peek_at(&self, n: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + n).min(last)]
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        token
    }

    /// End offset of the last consumed token.
    fn prev_end(&self) -> usize {
        match self.pos.checked_sub(1) {
            Some(i) => self.tokens[i].span.end,
            None => 0,
        }
    }

    /// The span from `start` to the end of the last consumed token.
    fn span_from(&self, start: usize) -> Span {
        Span {
            start,
            end: self.prev_end().max(start),
        }
    }

    fn describe_current(&self) -> String {
        self.peek().describe(self.text)
    }

    /// `Syntax error: Expected <what> but got <current token>`.
    fn expected(&self, what: &str) -> ParseError {
        ParseError::new(
            format!(
                "Syntax error: Expected {what} but got {}",
                self.describe_current()
            ),
            self.peek().span.start,
        )
    }

    /// `Syntax error: Unexpected <current token>`.
    fn unexpected(&self) -> ParseError {
        ParseError::new(
            format!("Syntax error: Unexpected {}", self.describe_current()),
            self.peek().span.start,
        )
    }

    fn at_punct(&self, p: Punct) -> bool {
        self.peek().kind == TokenKind::Punct(p)
    }

    fn eat_punct(&mut self, p: Punct) -> bool {
        let found = self.at_punct(p);
        if found {
            self.advance();
        }
        found
    }

    fn expect_punct(&mut self, p: Punct) -> Result<Span> {
        if self.at_punct(p) {
            Ok(self.advance().span)
        } else {
            Err(self.expected(&format!("\"{}\"", p.as_str())))
        }
    }

    /// Consumes the `>` that closes a type's parameter list. A `>>` token
    /// (two lists closing at once, `STRUCT<a ARRAY<INT64>>`) is split into
    /// two `>` tokens first.
    fn expect_type_close(&mut self) -> Result<Span> {
        if self.at_punct(Punct::ShiftRight) {
            let span = self.peek().span;
            let first = Span {
                start: span.start,
                end: span.start + 1,
            };
            let second = Token {
                kind: TokenKind::Punct(Punct::Gt),
                span: Span {
                    start: span.start + 1,
                    end: span.end,
                },
            };
            self.tokens[self.pos] = Token {
                kind: TokenKind::Punct(Punct::Gt),
                span: first,
            };
            self.tokens.insert(self.pos + 1, second);
        }
        self.expect_punct(Punct::Gt)
    }

    fn at_keyword(&self, k: Keyword) -> bool {
        self.peek().kind == TokenKind::Keyword(k)
    }

    fn eat_keyword(&mut self, k: Keyword) -> bool {
        let found = self.at_keyword(k);
        if found {
            self.advance();
        }
        found
    }

    fn expect_keyword(&mut self, k: Keyword) -> Result<Span> {
        if self.at_keyword(k) {
            Ok(self.advance().span)
        } else {
            Err(self.expected(&format!("keyword {}", k.as_str())))
        }
    }

    /// Whether the current token is the non-reserved word `word`.
    fn at_word(&self, word: &str) -> bool {
        self.peek().is_word(word)
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let found = self.at_word(word);
        if found {
            self.advance();
        }
        found
    }

    fn expect_word(&mut self, word: &str) -> Result<Span> {
        if self.at_word(word) {
            Ok(self.advance().span)
        } else {
            Err(self.expected(&format!("keyword {word}")))
        }
    }

    /// An identifier: an unreserved word or a backquoted name. A reserved
    /// keyword here is reported as such (`Unexpected keyword ORDER`).
    fn parse_ident(&mut self) -> Result<Ident> {
        match &self.peek().kind {
            TokenKind::Ident { value, .. } => {
                let ident = Ident {
                    value: value.clone(),
                    span: self.peek().span,
                };
                self.advance();
                Ok(ident)
            }
            TokenKind::Keyword(_) | TokenKind::Eof => Err(self.unexpected()),
            _ => Err(self.expected("identifier")),
        }
    }

    /// `( ident, ... )`, at least one.
    fn parse_ident_list(&mut self) -> Result<Vec<Ident>> {
        self.expect_punct(Punct::LParen)?;
        let mut idents = vec![self.parse_ident()?];
        while self.eat_punct(Punct::Comma) {
            idents.push(self.parse_ident()?);
        }
        self.expect_punct(Punct::RParen)?;
        Ok(idents)
    }

    fn expect_end(&self) -> Result<()> {
        if self.peek().kind == TokenKind::Eof {
            Ok(())
        } else {
            Err(self.expected("end of input"))
        }
    }
}

#[cfg(test)]
mod tests;
