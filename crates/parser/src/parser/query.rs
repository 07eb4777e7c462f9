//! Queries: `WITH`, set operations, `SELECT`, the FROM clause, ORDER BY and
//! LIMIT, plus the hint syntax `@{name=value, ...}` shared with tables and
//! joins.
//!
//! ```text
//! query      := [hints] [WITH name AS (query), ...] set_expr
//!               [ORDER BY item, ...] [LIMIT e [OFFSET e]]
//! set_expr   := operand { (UNION | INTERSECT | EXCEPT) (ALL | DISTINCT) operand }
//! operand    := select | ( query )
//! select     := SELECT [ALL | DISTINCT] [AS STRUCT] item, ... [,]
//!               [FROM from] [WHERE e] [GROUP BY e, ...] [HAVING e]
//! from       := primary { , primary | join_kind JOIN [hints] primary [ON e | USING (c, ...)] }
//! primary    := path [hints] [[AS] a] [WITH OFFSET [[AS] o]]
//!             | ( query ) [[AS] a]
//!             | UNNEST ( e ) [[AS] a] [WITH OFFSET [[AS] o]]
//!             | ( from )
//! ```
//!
//! Set operations are left-associative, and one chain may not mix
//! operators (GoogleSQL requires parentheses for that). A `(` in FROM or in
//! an expression may open a query or something else (a parenthesised join,
//! an expression); when the tokens after the run of `(` start a query, the
//! query reading is tried first and the parser backs up if it does not end
//! at the matching `)`.

use super::Parser;
use crate::ast::{
    Cte, Hint, Ident, JoinCondition, JoinKind, OrderByItem, Query, Select, SelectItem, SetExpr,
    SetOperator, Span, TableExpr,
};
use crate::error::{ParseError, Result};
use crate::lexer::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// Whether the current token starts a query: `SELECT`, `WITH`, a hint,
    /// or parentheses around one of those.
    pub(super) fn at_query_start(&self) -> bool {
        match self.peek().kind {
            TokenKind::Keyword(Keyword::Select | Keyword::With) | TokenKind::Punct(Punct::At) => {
                true
            }
            TokenKind::Punct(Punct::LParen) => self.parens_then_query(),
            _ => false,
        }
    }

    /// Whether the current token is `(` and the first token after the run
    /// of `(` starts a query.
    pub(super) fn parens_then_query(&self) -> bool {
        let mut n = 0;
        while self.peek_at(n).kind == TokenKind::Punct(Punct::LParen) {
            n += 1;
        }
        n > 0
            && matches!(
                self.peek_at(n).kind,
                TokenKind::Keyword(Keyword::Select | Keyword::With) | TokenKind::Punct(Punct::At)
            )
    }

    /// Runs `f`; if it fails, moves the cursor back to where it was.
    pub(super) fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let (pos, deepest) = (self.pos, self.deepest);
        let result = f(self);
        if result.is_err() {
            self.pos = pos;
            self.deepest = deepest;
        }
        result
    }

    /// `( query )`: the query and the span including the parentheses.
    /// A reading that failed here before fails again at once (see
    /// `Parser::failed_queries`).
    pub(super) fn parse_paren_query(&mut self) -> Result<(Query, Span)> {
        let at = self.pos;
        if let Some(error) = self.failed_queries.get(&at) {
            return Err(error.clone());
        }
        let result: Result<(Query, Span)> = (|| {
            let start = self.expect_punct(Punct::LParen)?.start;
            let query = self.parse_query()?;
            self.expect_punct(Punct::RParen)?;
            Ok((query, self.span_from(start)))
        })();
        if let Err(error) = &result {
            self.failed_queries.insert(at, error.clone());
        }
        result
    }

    /// A whole query, without a trailing `;`.
    pub(super) fn parse_query(&mut self) -> Result<Query> {
        self.nested(Self::parse_query_body)
    }

    fn parse_query_body(&mut self) -> Result<Query> {
        let start = self.peek().span.start;
        let hints = if self.at_punct(Punct::At) {
            self.parse_hints()?
        } else {
            Vec::new()
        };
        let mut with = Vec::new();
        if self.eat_keyword(Keyword::With) {
            if self.at_keyword(Keyword::Recursive) {
                return Err(ParseError::new(
                    "Syntax error: WITH RECURSIVE is not supported",
                    self.peek().span.start,
                ));
            }
            loop {
                let name = self.parse_ident()?;
                self.expect_keyword(Keyword::As)?;
                let (query, _) = self.parse_paren_query()?;
                with.push(Cte {
                    name,
                    query: Box::new(query),
                });
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
        }
        let body = self.parse_set_expr()?;
        let order_by = if self.eat_keyword(Keyword::Order) {
            self.expect_keyword(Keyword::By)?;
            self.parse_order_by_list()?
        } else {
            Vec::new()
        };
        let (limit, offset) = if self.eat_keyword(Keyword::Limit) {
            let limit = self.parse_expr()?;
            let offset = if self.eat_word("OFFSET") {
                Some(self.parse_expr()?)
            } else {
                None
            };
            (Some(limit), offset)
        } else {
            (None, None)
        };
        Ok(Query {
            hints,
            with,
            body,
            order_by,
            limit,
            offset,
            span: self.span_from(start),
        })
    }

    /// Operands joined by set operators, left-associative.
    fn parse_set_expr(&mut self) -> Result<SetExpr> {
        let start = self.peek().span.start;
        let mut depth = self.chain();
        let mut left = self.parse_set_operand()?;
        let mut chain: Option<(SetOperator, bool)> = None;
        loop {
            let op = match self.peek().kind {
                TokenKind::Keyword(Keyword::Union) => SetOperator::Union,
                TokenKind::Keyword(Keyword::Intersect) => SetOperator::Intersect,
                TokenKind::Keyword(Keyword::Except) => SetOperator::Except,
                _ => break,
            };
            let op_start = self.advance().span.start;
            let all = if self.eat_keyword(Keyword::All) {
                true
            } else if self.eat_keyword(Keyword::Distinct) {
                false
            } else {
                return Err(self.expected("keyword ALL or keyword DISTINCT"));
            };
            match chain {
                None => chain = Some((op, all)),
                Some(first) if first != (op, all) => {
                    return Err(ParseError::new(
                        "Syntax error: Different set operations cannot be used in the same \
                         query without using parentheses for grouping",
                        op_start,
                    ))
                }
                Some(_) => {}
            }
            let right = self.parse_set_operand()?;
            left = SetExpr::SetOperation {
                op,
                all,
                left: Box::new(left),
                right: Box::new(right),
                span: self.span_from(start),
            };
            self.link(&mut depth)?;
        }
        self.end_chain(depth);
        Ok(left)
    }

    /// A SELECT or a parenthesised query.
    fn parse_set_operand(&mut self) -> Result<SetExpr> {
        if self.at_punct(Punct::LParen) {
            let (query, _) = self.parse_paren_query()?;
            return Ok(SetExpr::Query(Box::new(query)));
        }
        if self.at_keyword(Keyword::Select) {
            return Ok(SetExpr::Select(Box::new(self.parse_select()?)));
        }
        Err(self.expected("\"(\" or keyword SELECT"))
    }

    fn parse_select(&mut self) -> Result<Select> {
        let start = self.expect_keyword(Keyword::Select)?.start;
        let distinct = if self.eat_keyword(Keyword::All) {
            false
        } else {
            self.eat_keyword(Keyword::Distinct)
        };
        let as_struct = self.at_keyword(Keyword::As)
            && self.peek_at(1).kind == TokenKind::Keyword(Keyword::Struct);
        if as_struct {
            self.advance();
            self.advance();
        }
        let items = self.parse_select_items()?;
        let from = if self.eat_keyword(Keyword::From) {
            Some(self.parse_from()?)
        } else {
            None
        };
        let where_clause = if self.eat_keyword(Keyword::Where) {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let mut group_by = Vec::new();
        if self.eat_keyword(Keyword::Group) {
            self.expect_keyword(Keyword::By)?;
            loop {
                group_by.push(self.parse_expr()?);
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
        }
        let having = if self.eat_keyword(Keyword::Having) {
            Some(self.parse_expr()?)
        } else {
            None
        };
        Ok(Select {
            distinct,
            as_struct,
            items,
            from,
            where_clause,
            group_by,
            having,
            span: self.span_from(start),
        })
    }

    /// `item, ...`: a select list or a THEN RETURN list.
    ///
    /// GoogleSQL allows one trailing comma after the last item
    /// (`SELECT a, b, FROM t`, `SELECT 1,`): a comma followed by something
    /// that cannot start an item ends the list.
    pub(super) fn parse_select_items(&mut self) -> Result<Vec<SelectItem>> {
        let mut items = vec![self.parse_select_item()?];
        while self.eat_punct(Punct::Comma) {
            if self.at_select_list_end() {
                break;
            }
            items.push(self.parse_select_item()?);
        }
        Ok(items)
    }

    /// Whether the current token ends a select list: the end of the text,
    /// `;`, `)`, or a reserved keyword that starts the next clause (none of
    /// them can start an expression).
    fn at_select_list_end(&self) -> bool {
        match &self.peek().kind {
            TokenKind::Eof => true,
            TokenKind::Punct(p) => matches!(p, Punct::Semicolon | Punct::RParen),
            TokenKind::Keyword(k) => matches!(
                k,
                Keyword::From
                    | Keyword::Where
                    | Keyword::Group
                    | Keyword::Having
                    | Keyword::Window
                    | Keyword::Order
                    | Keyword::Limit
                    | Keyword::Union
                    | Keyword::Intersect
                    | Keyword::Except
                    | Keyword::For
            ),
            _ => false,
        }
    }

    fn parse_select_item(&mut self) -> Result<SelectItem> {
        let start = self.peek().span.start;
        if self.eat_punct(Punct::Star) {
            let except = if self.at_keyword(Keyword::Except) && self.peek_at(1).kind == paren_open()
            {
                self.advance();
                self.parse_ident_list()?
            } else {
                Vec::new()
            };
            let mut replace = Vec::new();
            if self.at_word("REPLACE") && self.peek_at(1).kind == paren_open() {
                self.advance();
                self.expect_punct(Punct::LParen)?;
                loop {
                    let expr = self.parse_expr()?;
                    self.expect_keyword(Keyword::As)?;
                    replace.push((expr, self.parse_ident()?));
                    if !self.eat_punct(Punct::Comma) {
                        break;
                    }
                }
                self.expect_punct(Punct::RParen)?;
            }
            return Ok(SelectItem::Star {
                except,
                replace,
                span: self.span_from(start),
            });
        }
        if self.at_qualified_star() {
            let mut qualifier = vec![self.parse_ident()?];
            loop {
                self.expect_punct(Punct::Dot)?;
                if self.eat_punct(Punct::Star) {
                    break;
                }
                qualifier.push(self.parse_ident()?);
            }
            self.refuse_star_modifier()?;
            return Ok(SelectItem::QualifiedStar {
                qualifier,
                expr: None,
                span: self.span_from(start),
            });
        }
        let expr = self.parse_expr()?;
        // `expr.*` on any other expression: `CAST(t AS STRUCT<...>).*`.
        if self.at_punct(Punct::Dot) && self.peek_at(1).kind == TokenKind::Punct(Punct::Star) {
            self.advance();
            self.advance();
            self.refuse_star_modifier()?;
            return Ok(SelectItem::QualifiedStar {
                qualifier: Vec::new(),
                expr: Some(Box::new(expr)),
                span: self.span_from(start),
            });
        }
        let alias = self.parse_optional_alias()?;
        Ok(SelectItem::Expr { expr, alias })
    }

    /// After `t.*` or `expr.*`: EXCEPT / REPLACE are not supported there.
    fn refuse_star_modifier(&self) -> Result<()> {
        let modifier = (self.at_keyword(Keyword::Except) || self.at_word("REPLACE"))
            && self.peek_at(1).kind == paren_open();
        if modifier {
            return Err(ParseError::new(
                "Syntax error: EXCEPT and REPLACE are only supported after an unqualified *",
                self.peek().span.start,
            ));
        }
        Ok(())
    }

    /// `name(.name)*.*` ahead.
    fn at_qualified_star(&self) -> bool {
        let mut n = 0;
        loop {
            if !matches!(self.peek_at(n).kind, TokenKind::Ident { .. })
                || self.peek_at(n + 1).kind != TokenKind::Punct(Punct::Dot)
            {
                return false;
            }
            if self.peek_at(n + 2).kind == TokenKind::Punct(Punct::Star) {
                return true;
            }
            n += 2;
        }
    }

    /// `[AS] alias`. Without AS only an identifier (not a reserved keyword)
    /// can be an alias, so `FROM t WHERE ...` does not take WHERE as one.
    pub(super) fn parse_optional_alias(&mut self) -> Result<Option<Ident>> {
        if self.eat_keyword(Keyword::As) {
            return Ok(Some(self.parse_ident()?));
        }
        if matches!(self.peek().kind, TokenKind::Ident { .. }) {
            return Ok(Some(self.parse_ident()?));
        }
        Ok(None)
    }

    /// `expr [ASC|DESC] [NULLS FIRST|LAST], ...`.
    pub(super) fn parse_order_by_list(&mut self) -> Result<Vec<OrderByItem>> {
        let mut items = Vec::new();
        loop {
            let expr = self.parse_expr()?;
            let desc = if self.eat_keyword(Keyword::Desc) {
                true
            } else {
                self.eat_keyword(Keyword::Asc);
                false
            };
            let nulls_first = if self.eat_keyword(Keyword::Nulls) {
                if self.eat_word("FIRST") {
                    Some(true)
                } else if self.eat_word("LAST") {
                    Some(false)
                } else {
                    return Err(self.expected("keyword FIRST or keyword LAST"));
                }
            } else {
                None
            };
            items.push(OrderByItem {
                expr,
                desc,
                nulls_first,
            });
            if !self.eat_punct(Punct::Comma) {
                return Ok(items);
            }
        }
    }

    /// `@{name = value, ...}`. Values are literals, identifiers (such as an
    /// index name) or parameters; identifiers become one-part column paths.
    pub(super) fn parse_hints(&mut self) -> Result<Vec<Hint>> {
        self.expect_punct(Punct::At)?;
        self.expect_punct(Punct::LBrace)?;
        let mut hints = Vec::new();
        loop {
            let name = self.parse_ident()?;
            self.expect_punct(Punct::Eq)?;
            let value = self.parse_unary()?;
            hints.push(Hint { name, value });
            if !self.eat_punct(Punct::Comma) {
                break;
            }
        }
        self.expect_punct(Punct::RBrace)?;
        Ok(hints)
    }

    /// The FROM clause: items joined by commas and JOINs, left to right.
    fn parse_from(&mut self) -> Result<TableExpr> {
        let start = self.peek().span.start;
        let mut chain = self.chain();
        let mut left = self.parse_table_primary()?;
        loop {
            let (kind, hints) = if self.eat_punct(Punct::Comma) {
                (JoinKind::Cross, Vec::new())
            } else if let Some(kind) = self.parse_join_kind()? {
                let hints = if self.at_punct(Punct::At) {
                    self.parse_hints()?
                } else {
                    Vec::new()
                };
                (kind, hints)
            } else {
                self.end_chain(chain);
                return Ok(left);
            };
            let right = self.parse_table_primary()?;
            let condition = if kind == JoinKind::Cross {
                JoinCondition::None
            } else if self.eat_keyword(Keyword::On) {
                JoinCondition::On(self.parse_expr()?)
            } else if self.eat_keyword(Keyword::Using) {
                JoinCondition::Using(self.parse_ident_list()?)
            } else {
                // `t JOIN t.arr` / `JOIN UNNEST(...)` need no condition; the
                // binder rejects a missing one where GoogleSQL requires it.
                JoinCondition::None
            };
            left = TableExpr::Join {
                kind,
                left: Box::new(left),
                right: Box::new(right),
                condition,
                hints,
                span: self.span_from(start),
            };
            self.link(&mut chain)?;
        }
    }

    /// `[INNER] JOIN`, `LEFT|RIGHT|FULL [OUTER] JOIN`, `CROSS JOIN`, or
    /// `None` if no join starts here.
    fn parse_join_kind(&mut self) -> Result<Option<JoinKind>> {
        let kind = match self.peek().kind {
            TokenKind::Keyword(Keyword::Join) => JoinKind::Inner,
            TokenKind::Keyword(Keyword::Inner) => JoinKind::Inner,
            TokenKind::Keyword(Keyword::Cross) => JoinKind::Cross,
            TokenKind::Keyword(Keyword::Left) => JoinKind::Left,
            TokenKind::Keyword(Keyword::Right) => JoinKind::Right,
            TokenKind::Keyword(Keyword::Full) => JoinKind::Full,
            _ => return Ok(None),
        };
        if self.eat_keyword(Keyword::Join) {
            return Ok(Some(kind));
        }
        self.advance();
        if matches!(kind, JoinKind::Left | JoinKind::Right | JoinKind::Full) {
            self.eat_keyword(Keyword::Outer);
        }
        self.expect_keyword(Keyword::Join)?;
        Ok(Some(kind))
    }

    /// One FROM item: a table path, a subquery, UNNEST, or a parenthesised join.
    fn parse_table_primary(&mut self) -> Result<TableExpr> {
        let start = self.peek().span.start;
        if self.at_punct(Punct::LParen) {
            let mut query_error = None;
            if self.parens_then_query() {
                match self.attempt(Self::parse_paren_query) {
                    Ok((query, _)) => {
                        let alias = self.parse_optional_alias()?;
                        return Ok(TableExpr::Subquery {
                            query: Box::new(query),
                            alias,
                            span: self.span_from(start),
                        });
                    }
                    Err(error) => query_error = Some(error),
                }
            }
            let joined = self.attempt(|p| {
                p.expect_punct(Punct::LParen)?;
                let inner = p.nested(Self::parse_from)?;
                p.expect_punct(Punct::RParen)?;
                Ok(inner)
            });
            return match (joined, query_error) {
                (Ok(inner), _) => Ok(inner),
                (Err(e), None) => Err(e),
                (Err(e), Some(q)) => Err(further(q, e)),
            };
        }
        if self.eat_keyword(Keyword::Unnest) {
            self.expect_punct(Punct::LParen)?;
            let array = self.parse_expr()?;
            self.expect_punct(Punct::RParen)?;
            let alias = self.parse_optional_alias()?;
            let with_offset = self.parse_with_offset()?;
            return Ok(TableExpr::Unnest {
                array,
                alias,
                with_offset,
                span: self.span_from(start),
            });
        }
        let mut path = vec![self.parse_ident()?];
        while self.eat_punct(Punct::Dot) {
            path.push(self.parse_ident()?);
        }
        let path_span = self.span_from(start);
        let mut hints = if self.at_punct(Punct::At) {
            self.parse_hints()?
        } else {
            Vec::new()
        };
        let alias = self.parse_optional_alias()?;
        if hints.is_empty() && self.at_punct(Punct::At) {
            hints = self.parse_hints()?;
        }
        let with_offset = self.parse_with_offset()?;
        if with_offset.is_some() {
            // `t.arr AS x WITH OFFSET`: only an array can have offsets.
            if !hints.is_empty() {
                return Err(ParseError::new(
                    "Syntax error: WITH OFFSET cannot be combined with table hints",
                    path_span.start,
                ));
            }
            return Ok(TableExpr::Unnest {
                array: crate::ast::Expr::Column {
                    path,
                    span: path_span,
                },
                alias,
                with_offset,
                span: self.span_from(start),
            });
        }
        Ok(TableExpr::Table {
            path,
            alias,
            hints,
            span: self.span_from(start),
        })
    }

    /// `[WITH OFFSET [[AS] name]]`.
    fn parse_with_offset(&mut self) -> Result<Option<Option<Ident>>> {
        if !(self.at_keyword(Keyword::With) && self.peek_at(1).is_word("OFFSET")) {
            return Ok(None);
        }
        self.advance();
        self.advance();
        Ok(Some(self.parse_optional_alias()?))
    }
}

fn paren_open() -> TokenKind {
    TokenKind::Punct(Punct::LParen)
}

/// Of two errors from alternative readings, the one that got further.
pub(super) fn further(a: ParseError, b: ParseError) -> ParseError {
    if b.offset > a.offset {
        b
    } else {
        a
    }
}
