//! Expressions, one method per precedence level.
//!
//! GoogleSQL's binary operators, loosest first (each level left-associative
//! except comparisons, which do not chain):
//!
//! ```text
//! OR
//! AND
//! NOT (prefix)
//! = != <> < <= > >=, IS [NOT], [NOT] IN, [NOT] BETWEEN, [NOT] LIKE
//! |
//! ^
//! &
//! << >>
//! + -
//! * / ||
//! - + ~ (prefix)
//! a[...], a.field (postfix)
//! ```
//!
//! `BETWEEN`'s bounds and `LIKE`'s pattern are parsed at the `|` level, so the
//! `AND` in `x BETWEEN 1 AND 2` ends the lower bound instead of starting a
//! conjunction.

use super::query::further;
use super::Parser;
use crate::ast::{
    BinaryOp, CallModifiers, Expr, Ident, IsTest, Literal, SubscriptMode, UnaryOp, WindowSpec,
};
use crate::error::{ParseError, Result};
use crate::lexer::{Keyword, Punct, TokenKind};
use rowtree_types::Type;

/// Reserved keywords that GoogleSQL still accepts as function names when a
/// `(` follows, e.g. `IF(cond, a, b)`.
const KEYWORD_FUNCTIONS: &[Keyword] = &[
    Keyword::If,
    Keyword::Left,
    Keyword::Right,
    Keyword::Grouping,
    Keyword::Range,
    Keyword::Collate,
];

/// Date/time functions that may be written without parentheses.
const NILADIC_FUNCTIONS: &[&str] = &["CURRENT_DATE", "CURRENT_TIMESTAMP"];

impl Parser<'_> {
    /// A whole expression.
    pub(crate) fn parse_expr(&mut self) -> Result<Expr> {
        self.nested(Self::parse_or)
    }

    fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        let span = crate::ast::Span {
            start: left.span().start,
            end: right.span().end,
        };
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
            span,
        }
    }

    fn parse_or(&mut self) -> Result<Expr> {
        self.parse_keyword_level(Keyword::Or, BinaryOp::Or, Self::parse_and)
    }

    fn parse_and(&mut self) -> Result<Expr> {
        self.parse_keyword_level(Keyword::And, BinaryOp::And, Self::parse_not)
    }

    /// `AND` or `OR`: a left-associative level whose operator is a keyword.
    fn parse_keyword_level(
        &mut self,
        keyword: Keyword,
        op: BinaryOp,
        next: fn(&mut Self) -> Result<Expr>,
    ) -> Result<Expr> {
        let mut chain = self.chain();
        let mut left = next(self)?;
        while self.eat_keyword(keyword) {
            let right = next(self)?;
            left = Self::binary(op, left, right);
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    fn parse_not(&mut self) -> Result<Expr> {
        if self.at_keyword(Keyword::Not) {
            let start = self.advance().span.start;
            let expr = self.nested(Self::parse_not)?;
            return Ok(Expr::Unary {
                op: UnaryOp::Not,
                expr: Box::new(expr),
                span: self.span_from(start),
            });
        }
        self.parse_comparison()
    }

    /// One optional comparison-level operator after a `|`-level operand.
    fn parse_comparison(&mut self) -> Result<Expr> {
        let left = self.parse_bit_or()?;
        let start = left.span().start;
        let op = match self.peek().kind {
            TokenKind::Punct(Punct::Eq) => Some(BinaryOp::Eq),
            TokenKind::Punct(Punct::NotEq) => Some(BinaryOp::NotEq),
            TokenKind::Punct(Punct::Lt) => Some(BinaryOp::Lt),
            TokenKind::Punct(Punct::LtEq) => Some(BinaryOp::LtEq),
            TokenKind::Punct(Punct::Gt) => Some(BinaryOp::Gt),
            TokenKind::Punct(Punct::GtEq) => Some(BinaryOp::GtEq),
            _ => None,
        };
        if let Some(op) = op {
            self.advance();
            let right = self.parse_bit_or()?;
            return Ok(Self::binary(op, left, right));
        }
        if self.eat_keyword(Keyword::Is) {
            let negated = self.eat_keyword(Keyword::Not);
            let test = if self.eat_keyword(Keyword::Null) {
                IsTest::Null
            } else if self.eat_keyword(Keyword::True) {
                IsTest::True
            } else if self.eat_keyword(Keyword::False) {
                IsTest::False
            } else {
                return Err(self.expected("NULL, TRUE or FALSE"));
            };
            return Ok(Expr::Is {
                expr: Box::new(left),
                test,
                negated,
                span: self.span_from(start),
            });
        }
        // `NOT` here can only start NOT IN / NOT BETWEEN / NOT LIKE.
        let negated = self.at_keyword(Keyword::Not)
            && matches!(
                self.peek_at(1).kind,
                TokenKind::Keyword(Keyword::In | Keyword::Between | Keyword::Like)
            );
        if negated {
            self.advance();
        }
        if self.eat_keyword(Keyword::In) {
            if self.eat_keyword(Keyword::Unnest) {
                self.expect_punct(Punct::LParen)?;
                let array = self.parse_expr()?;
                self.expect_punct(Punct::RParen)?;
                return Ok(Expr::InUnnest {
                    expr: Box::new(left),
                    array: Box::new(array),
                    negated,
                    span: self.span_from(start),
                });
            }
            if !self.at_punct(Punct::LParen) {
                return Err(self.expected("\"(\" or keyword UNNEST"));
            }
            let mut query_error = None;
            if self.parens_then_query() {
                match self.attempt(Self::parse_paren_query) {
                    Ok((query, _)) => {
                        return Ok(Expr::InSubquery {
                            expr: Box::new(left),
                            query: Box::new(query),
                            negated,
                            span: self.span_from(start),
                        })
                    }
                    Err(error) => query_error = Some(error),
                }
            }
            let list = match (self.parse_paren_list(), query_error) {
                (Ok(list), _) => list,
                (Err(e), None) => return Err(e),
                (Err(e), Some(q)) => return Err(further(q, e)),
            };
            return Ok(Expr::InList {
                expr: Box::new(left),
                list,
                negated,
                span: self.span_from(start),
            });
        }
        if self.eat_keyword(Keyword::Between) {
            let low = self.parse_bit_or()?;
            self.expect_keyword(Keyword::And)?;
            let high = self.parse_bit_or()?;
            return Ok(Expr::Between {
                expr: Box::new(left),
                low: Box::new(low),
                high: Box::new(high),
                negated,
                span: self.span_from(start),
            });
        }
        if self.eat_keyword(Keyword::Like) {
            let pattern = self.parse_bit_or()?;
            return Ok(Expr::Like {
                expr: Box::new(left),
                pattern: Box::new(pattern),
                negated,
                span: self.span_from(start),
            });
        }
        Ok(left)
    }

    /// One left-associative level: operands from `next`, operators from `ops`.
    fn parse_level(
        &mut self,
        ops: &[(Punct, BinaryOp)],
        next: fn(&mut Self) -> Result<Expr>,
    ) -> Result<Expr> {
        let mut chain = self.chain();
        let mut left = next(self)?;
        'more: loop {
            for (punct, op) in ops {
                if self.eat_punct(*punct) {
                    let right = next(self)?;
                    left = Self::binary(*op, left, right);
                    self.link(&mut chain)?;
                    continue 'more;
                }
            }
            self.end_chain(chain);
            return Ok(left);
        }
    }

    fn parse_bit_or(&mut self) -> Result<Expr> {
        self.parse_level(&[(Punct::Pipe, BinaryOp::BitOr)], Self::parse_bit_xor)
    }

    fn parse_bit_xor(&mut self) -> Result<Expr> {
        self.parse_level(&[(Punct::Caret, BinaryOp::BitXor)], Self::parse_bit_and)
    }

    fn parse_bit_and(&mut self) -> Result<Expr> {
        self.parse_level(&[(Punct::Amp, BinaryOp::BitAnd)], Self::parse_shift)
    }

    fn parse_shift(&mut self) -> Result<Expr> {
        self.parse_level(
            &[
                (Punct::ShiftLeft, BinaryOp::ShiftLeft),
                (Punct::ShiftRight, BinaryOp::ShiftRight),
            ],
            Self::parse_additive,
        )
    }

    fn parse_additive(&mut self) -> Result<Expr> {
        self.parse_level(
            &[(Punct::Plus, BinaryOp::Add), (Punct::Minus, BinaryOp::Sub)],
            Self::parse_multiplicative,
        )
    }

    fn parse_multiplicative(&mut self) -> Result<Expr> {
        self.parse_level(
            &[
                (Punct::Star, BinaryOp::Mul),
                (Punct::Slash, BinaryOp::Div),
                (Punct::Concat, BinaryOp::Concat),
            ],
            Self::parse_unary,
        )
    }

    pub(super) fn parse_unary(&mut self) -> Result<Expr> {
        let op = match self.peek().kind {
            TokenKind::Punct(Punct::Minus) => UnaryOp::Neg,
            TokenKind::Punct(Punct::Plus) => UnaryOp::Plus,
            TokenKind::Punct(Punct::Tilde) => UnaryOp::BitNot,
            _ => return self.parse_postfix(),
        };
        let start = self.advance().span.start;
        let expr = self.nested(Self::parse_unary)?;
        Ok(Expr::Unary {
            op,
            expr: Box::new(expr),
            span: self.span_from(start),
        })
    }

    /// A primary followed by any number of `[...]` subscripts and `.field`s.
    fn parse_postfix(&mut self) -> Result<Expr> {
        let mut chain = self.chain();
        let mut expr = self.parse_primary()?;
        let start = expr.span().start;
        loop {
            if self.eat_punct(Punct::LBracket) {
                let (mode, index) = self.parse_subscript_index()?;
                self.expect_punct(Punct::RBracket)?;
                expr = Expr::Subscript {
                    expr: Box::new(expr),
                    index: Box::new(index),
                    mode,
                    span: self.span_from(start),
                };
            } else if self.at_punct(Punct::Dot)
                && self.peek_at(1).kind != TokenKind::Punct(Punct::Star)
            {
                self.advance();
                let field = self.parse_ident()?;
                expr = Expr::Field {
                    expr: Box::new(expr),
                    field,
                    span: self.span_from(start),
                };
            } else {
                self.end_chain(chain);
                return Ok(expr);
            }
            self.link(&mut chain)?;
        }
    }

    /// Inside `[...]`: `OFFSET(i)`, `ORDINAL(i)`, `SAFE_OFFSET(i)`,
    /// `SAFE_ORDINAL(i)` or a bare index.
    fn parse_subscript_index(&mut self) -> Result<(SubscriptMode, Expr)> {
        let modes = [
            ("OFFSET", SubscriptMode::Offset),
            ("ORDINAL", SubscriptMode::Ordinal),
            ("SAFE_OFFSET", SubscriptMode::SafeOffset),
            ("SAFE_ORDINAL", SubscriptMode::SafeOrdinal),
        ];
        if self.peek_at(1).kind == TokenKind::Punct(Punct::LParen) {
            for (word, mode) in modes {
                if self.eat_word(word) {
                    self.expect_punct(Punct::LParen)?;
                    let index = self.parse_expr()?;
                    self.expect_punct(Punct::RParen)?;
                    return Ok((mode, index));
                }
            }
        }
        Ok((SubscriptMode::Bare, self.parse_expr()?))
    }

    fn parse_primary(&mut self) -> Result<Expr> {
        let token = self.peek().clone();
        let span = token.span;
        let literal = |value| Expr::Literal { value, span };
        match token.kind {
            TokenKind::Integer(text) => {
                self.advance();
                Ok(literal(Literal::Integer(text)))
            }
            TokenKind::Float(text) => {
                self.advance();
                Ok(literal(Literal::Float(text)))
            }
            TokenKind::String(s) => {
                self.advance();
                Ok(literal(Literal::String(s)))
            }
            TokenKind::Bytes(b) => {
                self.advance();
                Ok(literal(Literal::Bytes(b)))
            }
            TokenKind::Parameter(name) => {
                self.advance();
                Ok(Expr::Parameter { name, span })
            }
            TokenKind::Keyword(Keyword::Null) => {
                self.advance();
                Ok(literal(Literal::Null))
            }
            TokenKind::Keyword(Keyword::True) => {
                self.advance();
                Ok(literal(Literal::Bool(true)))
            }
            TokenKind::Keyword(Keyword::False) => {
                self.advance();
                Ok(literal(Literal::Bool(false)))
            }
            TokenKind::Punct(Punct::LParen) => self.parse_paren_or_struct(),
            TokenKind::Punct(Punct::LBracket) => {
                self.advance();
                let items = self.parse_list_until(Punct::RBracket)?;
                Ok(Expr::Array {
                    element_type: None,
                    items,
                    span: self.span_from(span.start),
                })
            }
            TokenKind::Keyword(Keyword::Array) => self.parse_array_constructor(),
            TokenKind::Keyword(Keyword::Struct) => self.parse_struct_constructor(),
            TokenKind::Keyword(Keyword::Case) => self.parse_case(),
            TokenKind::Keyword(Keyword::Exists) => {
                self.advance();
                let (query, _) = self.parse_paren_query()?;
                Ok(Expr::Exists {
                    query: Box::new(query),
                    span: self.span_from(span.start),
                })
            }
            TokenKind::Keyword(Keyword::Extract) => self.parse_extract(),
            TokenKind::Keyword(Keyword::Cast) => self.parse_cast(false),
            TokenKind::Keyword(Keyword::Interval) => self.parse_interval(),
            TokenKind::Keyword(k)
                if KEYWORD_FUNCTIONS.contains(&k)
                    && self.peek_at(1).kind == TokenKind::Punct(Punct::LParen) =>
            {
                self.advance();
                let name = Ident {
                    value: k.as_str().to_string(),
                    span,
                };
                self.parse_call(name, false, span.start)
            }
            TokenKind::Ident { quoted: false, .. }
                if token.is_word("SAFE_CAST")
                    && self.peek_at(1).kind == TokenKind::Punct(Punct::LParen) =>
            {
                self.parse_cast(true)
            }
            TokenKind::Ident {
                quoted: false,
                ref value,
            } if matches!(self.peek_at(1).kind, TokenKind::String(_))
                && typed_literal_type(value).is_some() =>
            {
                self.advance();
                let ty = typed_literal_type(value).unwrap_or(Type::String);
                let TokenKind::String(text) = self.advance().kind else {
                    return Err(ParseError::new(
                        "Syntax error: Expected string literal",
                        span.end,
                    ));
                };
                Ok(Expr::Literal {
                    value: Literal::Typed(ty, text),
                    span: self.span_from(span.start),
                })
            }
            TokenKind::Ident { .. } => self.parse_path_or_call(),
            _ => Err(self.unexpected()),
        }
    }

    /// `a`, `t.c`, `f(...)`, `SAFE.f(...)`, `NET.HOST(...)`.
    fn parse_path_or_call(&mut self) -> Result<Expr> {
        let start = self.peek().span.start;
        let mut path = vec![self.parse_ident()?];
        while self.at_punct(Punct::Dot) && matches!(self.peek_at(1).kind, TokenKind::Ident { .. }) {
            self.advance();
            path.push(self.parse_ident()?);
        }
        if self.at_punct(Punct::LParen) {
            let safe = path.len() > 1 && path[0].matches("SAFE");
            let parts = if safe { &path[1..] } else { &path[..] };
            let name = Ident {
                value: parts
                    .iter()
                    .map(|i| i.value.as_str())
                    .collect::<Vec<_>>()
                    .join("."),
                span: crate::ast::Span {
                    start: parts[0].span.start,
                    end: parts[parts.len() - 1].span.end,
                },
            };
            return self.parse_call(name, safe, start);
        }
        let span = self.span_from(start);
        if path.len() == 1 && NILADIC_FUNCTIONS.iter().any(|f| path[0].matches(f)) {
            let name = path.remove(0);
            return Ok(Expr::Function {
                name,
                args: Vec::new(),
                safe: false,
                distinct: false,
                modifiers: None,
                span,
            });
        }
        Ok(Expr::Column { path, span })
    }

    /// The argument list of a call, from `(`. `SEQUENCE s` and
    /// `INTERVAL n unit` are accepted as arguments.
    ///
    /// `f(*)` (COUNT) takes [`Expr::Star`]; aggregate calls may start with
    /// `DISTINCT` and end with `IGNORE|RESPECT NULLS`, `ORDER BY ...` and
    /// `LIMIT n`, in that order. Which functions accept them is the binder's
    /// business.
    fn parse_call(&mut self, name: Ident, safe: bool, start: usize) -> Result<Expr> {
        self.expect_punct(Punct::LParen)?;
        let distinct = self.eat_keyword(Keyword::Distinct);
        let mut args = Vec::new();
        if !distinct
            && self.at_punct(Punct::Star)
            && self.peek_at(1).kind == TokenKind::Punct(Punct::RParen)
        {
            let span = self.advance().span;
            args.push(Expr::Star { span });
        } else if distinct || !self.at_punct(Punct::RParen) {
            args.push(self.parse_argument()?);
            while self.eat_punct(Punct::Comma) {
                args.push(self.parse_argument()?);
            }
        }
        let mut modifiers = CallModifiers::default();
        if self.eat_keyword(Keyword::Ignore) {
            self.expect_keyword(Keyword::Nulls)?;
            modifiers.ignore_nulls = Some(true);
        } else if self.eat_keyword(Keyword::Respect) {
            self.expect_keyword(Keyword::Nulls)?;
            modifiers.ignore_nulls = Some(false);
        }
        if self.eat_keyword(Keyword::Order) {
            self.expect_keyword(Keyword::By)?;
            modifiers.order_by = self.parse_order_by_list()?;
        }
        if self.eat_keyword(Keyword::Limit) {
            modifiers.limit = Some(self.parse_expr()?);
        }
        self.expect_punct(Punct::RParen)?;
        if self.at_keyword(Keyword::Over) {
            modifiers.over = Some(self.parse_over()?);
        }
        let modifiers = (modifiers != CallModifiers::default()).then(|| Box::new(modifiers));
        Ok(Expr::Function {
            name,
            args,
            safe,
            distinct,
            modifiers,
            span: self.span_from(start),
        })
    }

    /// `OVER ([PARTITION BY e, ...] [ORDER BY e [ASC|DESC], ...])`, from `OVER`.
    /// Spanner's GoogleSQL has neither named windows nor window frames.
    fn parse_over(&mut self) -> Result<WindowSpec> {
        let start = self.expect_keyword(Keyword::Over)?.start;
        if !self.at_punct(Punct::LParen) {
            return Err(ParseError::new(
                "Syntax error: Expected \"(\" after OVER; named windows are not supported",
                self.peek().span.start,
            ));
        }
        self.expect_punct(Punct::LParen)?;
        let mut partition_by = Vec::new();
        if self.eat_keyword(Keyword::Partition) {
            self.expect_keyword(Keyword::By)?;
            partition_by.push(self.parse_expr()?);
            while self.eat_punct(Punct::Comma) {
                partition_by.push(self.parse_expr()?);
            }
        }
        let mut order_by = Vec::new();
        if self.eat_keyword(Keyword::Order) {
            self.expect_keyword(Keyword::By)?;
            order_by = self.parse_order_by_list()?;
        }
        if self.at_keyword(Keyword::Rows) || self.at_keyword(Keyword::Range) {
            return Err(ParseError::new(
                "Syntax error: Window frame clauses (ROWS/RANGE) are not supported",
                self.peek().span.start,
            ));
        }
        self.expect_punct(Punct::RParen)?;
        Ok(WindowSpec {
            partition_by,
            order_by,
            span: self.span_from(start),
        })
    }

    /// `EXTRACT(part FROM e [AT TIME ZONE tz])`.
    fn parse_extract(&mut self) -> Result<Expr> {
        let start = self.expect_keyword(Keyword::Extract)?.start;
        self.expect_punct(Punct::LParen)?;
        let part = self.parse_ident()?;
        if self.at_punct(Punct::LParen) {
            return Err(ParseError::new(
                format!(
                    "Syntax error: EXTRACT({}(...) FROM ...) is not supported",
                    part.value.to_ascii_uppercase()
                ),
                self.peek().span.start,
            ));
        }
        self.expect_keyword(Keyword::From)?;
        let expr = self.parse_expr()?;
        let time_zone = if self.eat_keyword(Keyword::At) {
            self.expect_word("TIME")?;
            self.expect_word("ZONE")?;
            Some(Box::new(self.parse_expr()?))
        } else {
            None
        };
        self.expect_punct(Punct::RParen)?;
        Ok(Expr::Extract {
            part,
            expr: Box::new(expr),
            time_zone,
            span: self.span_from(start),
        })
    }

    fn parse_argument(&mut self) -> Result<Expr> {
        if self.at_word("SEQUENCE") && matches!(self.peek_at(1).kind, TokenKind::Ident { .. }) {
            let start = self.advance().span.start;
            let name = self.parse_ident()?;
            return Ok(Expr::Sequence {
                name,
                span: self.span_from(start),
            });
        }
        self.parse_expr()
    }

    /// `INTERVAL value unit`.
    fn parse_interval(&mut self) -> Result<Expr> {
        let start = self.expect_keyword(Keyword::Interval)?.start;
        let value = self.parse_additive()?;
        let unit = self.parse_ident()?;
        Ok(Expr::Interval {
            value: Box::new(value),
            unit,
            span: self.span_from(start),
        })
    }

    /// `CAST(e AS T)` or `SAFE_CAST(e AS T)`.
    fn parse_cast(&mut self, safe: bool) -> Result<Expr> {
        let start = self.advance().span.start;
        self.expect_punct(Punct::LParen)?;
        let expr = self.parse_expr()?;
        self.expect_keyword(Keyword::As)?;
        let (to, _) = self.parse_data_type(false)?;
        self.expect_punct(Punct::RParen)?;
        Ok(Expr::Cast {
            expr: Box::new(expr),
            to,
            safe,
            span: self.span_from(start),
        })
    }

    /// `(e)` is `e` with a span that covers the parentheses; `(e1, e2, ...)`
    /// is an anonymous struct.
    /// `(SELECT ...)` is a scalar subquery.
    fn parse_paren_or_struct(&mut self) -> Result<Expr> {
        let mut query_error = None;
        if self.parens_then_query() {
            match self.attempt(Self::parse_paren_query) {
                Ok((query, span)) => {
                    return Ok(Expr::Subquery {
                        query: Box::new(query),
                        span,
                    })
                }
                Err(error) => query_error = Some(error),
            }
        }
        match (self.attempt(Self::parse_paren_expr), query_error) {
            (Ok(expr), _) => Ok(expr),
            (Err(e), None) => Err(e),
            (Err(e), Some(q)) => Err(further(q, e)),
        }
    }

    /// `(e)` or `(e1, e2, ...)`.
    fn parse_paren_expr(&mut self) -> Result<Expr> {
        let start = self.expect_punct(Punct::LParen)?.start;
        let first = self.parse_expr()?;
        if self.eat_punct(Punct::RParen) {
            return Ok(with_span(first, self.span_from(start)));
        }
        let mut fields = vec![(None, first)];
        while self.eat_punct(Punct::Comma) {
            fields.push((None, self.parse_expr()?));
        }
        self.expect_punct(Punct::RParen)?;
        Ok(Expr::Struct {
            fields,
            field_types: None,
            span: self.span_from(start),
        })
    }

    /// `ARRAY<T>[...]`, `ARRAY[...]` or `ARRAY(SELECT ...)`.
    fn parse_array_constructor(&mut self) -> Result<Expr> {
        let start = self.expect_keyword(Keyword::Array)?.start;
        if self.at_punct(Punct::LParen) {
            let (query, _) = self.parse_paren_query()?;
            return Ok(Expr::ArraySubquery {
                query: Box::new(query),
                span: self.span_from(start),
            });
        }
        let element_type = if self.eat_punct(Punct::Lt) {
            let (ty, _) = self.parse_data_type(false)?;
            self.expect_punct(Punct::Gt)?;
            Some(ty)
        } else {
            None
        };
        self.expect_punct(Punct::LBracket)?;
        let items = self.parse_list_until(Punct::RBracket)?;
        Ok(Expr::Array {
            element_type,
            items,
            span: self.span_from(start),
        })
    }

    /// `STRUCT(e [AS name], ...)` or `STRUCT<[name] type, ...>(e, ...)`.
    fn parse_struct_constructor(&mut self) -> Result<Expr> {
        let start = self.expect_keyword(Keyword::Struct)?.start;
        if self.at_punct(Punct::Lt) || self.at_punct(Punct::NotEq) {
            return self.parse_typed_struct(start);
        }
        self.expect_punct(Punct::LParen)?;
        let mut fields = Vec::new();
        if !self.eat_punct(Punct::RParen) {
            loop {
                let value = self.parse_expr()?;
                let name = if self.eat_keyword(Keyword::As) {
                    Some(self.parse_ident()?)
                } else {
                    None
                };
                fields.push((name, value));
                if self.eat_punct(Punct::Comma) {
                    continue;
                }
                self.expect_punct(Punct::RParen)?;
                break;
            }
        }
        Ok(Expr::Struct {
            fields,
            field_types: None,
            span: self.span_from(start),
        })
    }

    /// The typed constructor after `STRUCT`: `<[name] type, ...>(e, ...)`,
    /// with as many values as field types.
    fn parse_typed_struct(&mut self, start: usize) -> Result<Expr> {
        let (names, types): (Vec<_>, Vec<_>) = self.parse_struct_type_fields()?.into_iter().unzip();
        let open = self.expect_punct(Punct::LParen)?.start;
        let values = self.parse_list_until(Punct::RParen)?;
        if values.len() != types.len() {
            return Err(ParseError::new(
                format!(
                    "STRUCT type has {} fields but constructor call has {} fields",
                    types.len(),
                    values.len()
                ),
                open,
            ));
        }
        Ok(Expr::Struct {
            fields: names.into_iter().zip(values).collect(),
            field_types: Some(types),
            span: self.span_from(start),
        })
    }

    /// `CASE [operand] WHEN .. THEN .. [ELSE ..] END`.
    fn parse_case(&mut self) -> Result<Expr> {
        let start = self.expect_keyword(Keyword::Case)?.start;
        let operand = if self.at_keyword(Keyword::When) {
            None
        } else {
            Some(Box::new(self.parse_expr()?))
        };
        let mut branches = Vec::new();
        while self.eat_keyword(Keyword::When) {
            let when = self.parse_expr()?;
            self.expect_keyword(Keyword::Then)?;
            let then = self.parse_expr()?;
            branches.push((when, then));
        }
        if branches.is_empty() {
            return Err(self.expected("keyword WHEN"));
        }
        let else_expr = if self.eat_keyword(Keyword::Else) {
            Some(Box::new(self.parse_expr()?))
        } else {
            None
        };
        self.expect_keyword(Keyword::End)?;
        Ok(Expr::Case {
            operand,
            branches,
            else_expr,
            span: self.span_from(start),
        })
    }

    /// `( e, ... )`, at least one element.
    pub(super) fn parse_paren_list(&mut self) -> Result<Vec<Expr>> {
        self.expect_punct(Punct::LParen)?;
        let mut items = vec![self.parse_expr()?];
        while self.eat_punct(Punct::Comma) {
            items.push(self.parse_expr()?);
        }
        self.expect_punct(Punct::RParen)?;
        Ok(items)
    }

    /// Elements up to and including `close`, possibly none (the opening
    /// bracket is already consumed).
    fn parse_list_until(&mut self, close: Punct) -> Result<Vec<Expr>> {
        let mut items = Vec::new();
        if self.eat_punct(close) {
            return Ok(items);
        }
        loop {
            items.push(self.parse_expr()?);
            if self.eat_punct(Punct::Comma) {
                continue;
            }
            self.expect_punct(close)?;
            return Ok(items);
        }
    }
}

/// The type of a typed literal prefix: `DATE '...'` and friends.
fn typed_literal_type(word: &str) -> Option<Type> {
    let ty = match word.to_ascii_uppercase().as_str() {
        "DATE" => Type::Date,
        "TIMESTAMP" => Type::Timestamp,
        "NUMERIC" => Type::Numeric,
        "JSON" => Type::Json,
        _ => return None,
    };
    Some(ty)
}

/// `expr` with its outermost span replaced (used to cover parentheses).
fn with_span(mut expr: Expr, new_span: crate::ast::Span) -> Expr {
    match &mut expr {
        Expr::Literal { span, .. }
        | Expr::Column { span, .. }
        | Expr::Parameter { span, .. }
        | Expr::Unary { span, .. }
        | Expr::Binary { span, .. }
        | Expr::Function { span, .. }
        | Expr::Sequence { span, .. }
        | Expr::Cast { span, .. }
        | Expr::Is { span, .. }
        | Expr::InList { span, .. }
        | Expr::Between { span, .. }
        | Expr::Like { span, .. }
        | Expr::Case { span, .. }
        | Expr::Array { span, .. }
        | Expr::Struct { span, .. }
        | Expr::Subscript { span, .. }
        | Expr::Field { span, .. }
        | Expr::Interval { span, .. }
        | Expr::Star { span }
        | Expr::Default { span }
        | Expr::Subquery { span, .. }
        | Expr::Exists { span, .. }
        | Expr::ArraySubquery { span, .. }
        | Expr::InSubquery { span, .. }
        | Expr::InUnnest { span, .. }
        | Expr::Extract { span, .. } => *span = new_span,
    }
    expr
}
