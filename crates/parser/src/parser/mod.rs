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

use std::collections::HashMap;

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

/// How deep the syntax tree of one statement may nest: parentheses,
/// subqueries, function arguments and operator chains all count, one level
/// per node between the statement and its deepest leaf.
///
/// Every later layer (binder, planner, evaluator, `Drop`) walks these trees
/// recursively, so this bound is what keeps a hostile statement from
/// recursing without end; `rowtree_types::stack::guarded` keeps the bounded
/// recursion off any thread's stack limit. Spanner itself allows far less
/// (75 nested function calls, 25 nested subquery expressions), so no real
/// query comes near it.
pub const MAX_NESTING: usize = 1000;

/// The token cursor shared by the grammar modules.
pub(crate) struct Parser<'a> {
    text: &'a str,
    /// Never empty: the last token is [`TokenKind::Eof`].
    tokens: Vec<Token>,
    pos: usize,
    /// Nesting of the construct being parsed: how many [`Parser::nested`]
    /// calls are open.
    depth: usize,
    /// The deepest level a node has been built at since the innermost open
    /// [`Chain`] started (or since the start): together with the links of
    /// the open chains, an upper bound of the tree's depth.
    deepest: usize,
    /// The `( query )` readings that failed, by the token position of their
    /// `(`, with their error. Every enclosing `(` that may open a query tries
    /// that reading and then another, and both reach the `(`s inside it, so
    /// without this a statement could be read once per path: twice as often
    /// for each level (`f(((SELECT ((SELECT ((SELECT ...`). The syntax of
    /// `( query )` at a position does not depend on how the parser got
    /// there, so the first failure stands for all.
    failed_queries: HashMap<usize, ParseError>,
    /// The error of the first reading that nested deeper than
    /// [`MAX_NESTING`]. Whether a reading is too deep depends on the path
    /// to it, so it cannot be remembered by position; instead the statement
    /// fails with it: every later step fails at once, and the other
    /// readings of a statement that deep are never tried (each would again
    /// run down to the limit, once per path).
    too_deep_error: Option<ParseError>,
}

/// A left-associative chain being built (`a + b + c`, `a.b.c`, `x[1][2]`,
/// `q UNION ALL q`, `t JOIN u JOIN v`): the parser loops instead of
/// recursing, but every link puts the whole tree built so far one level
/// deeper, so links count toward [`MAX_NESTING`] like recursion does.
pub(crate) struct Chain {
    /// `Parser::deepest` when the chain started.
    outer: usize,
    links: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Result<Self> {
        Ok(Parser {
            text,
            tokens: lexer::tokenize(text)?,
            pos: 0,
            depth: 0,
            deepest: 0,
            failed_queries: HashMap::new(),
            too_deep_error: None,
        })
    }

    /// Runs `f` one nesting level deeper, or fails if that is deeper than
    /// [`MAX_NESTING`]. Every recursive path of the grammar passes here.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_NESTING || self.too_deep_error.is_some() {
            return Err(self.too_deep());
        }
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        let result = rowtree_types::stack::guarded(|| f(self));
        self.depth -= 1;
        result
    }

    /// Starts a left-associative chain, before its first operand is parsed.
    fn chain(&mut self) -> Chain {
        let chain = Chain {
            outer: self.deepest,
            links: 0,
        };
        self.deepest = self.depth;
        chain
    }

    /// One more link in `chain` (after the node is built): fails once the
    /// tree built so far is deeper than [`MAX_NESTING`], before the next
    /// link could make it deeper still.
    fn link(&mut self, chain: &mut Chain) -> Result<()> {
        chain.links += 1;
        if self.deepest + chain.links > MAX_NESTING || self.too_deep_error.is_some() {
            return Err(self.too_deep());
        }
        Ok(())
    }

    /// Ends `chain`: the levels its links added count for the enclosing
    /// constructs.
    fn end_chain(&mut self, chain: Chain) {
        self.deepest = chain.outer.max(self.deepest + chain.links);
    }

    /// GoogleSQL's wording for a statement nested too deeply, at the
    /// current token the first time, and the same error from then on (see
    /// [`Parser::too_deep_error`]).
    fn too_deep(&mut self) -> ParseError {
        if let Some(error) = &self.too_deep_error {
            return error.clone();
        }
        let error = ParseError::new(
            format!(
                "Out of stack space due to deeply nested query expression during parsing: \
                 the statement nests deeper than {MAX_NESTING} levels"
            ),
            self.peek().span.start,
        );
        self.too_deep_error = Some(error.clone());
        error
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
            // Positions after this one moved: failures remembered by
            // position no longer name the same tokens.
            self.failed_queries.clear();
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
