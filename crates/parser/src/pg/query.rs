//! PostgreSQL queries: `WITH`, set operations, `SELECT` with its FROM
//! clause, `ORDER BY ... [NULLS FIRST|LAST]`, `LIMIT` and `OFFSET`.
//!
//! The grammar is PostgreSQL's where it differs from GoogleSQL's and the
//! result is the shared [`crate::ast::Query`]:
//!
//! * a bare `UNION`/`INTERSECT`/`EXCEPT` means `DISTINCT` (GoogleSQL
//!   requires the word), and `INTERSECT` binds tighter than `UNION` and
//!   `EXCEPT`, as in PostgreSQL;
//! * NULLs sort last in ascending order and first in descending order
//!   unless `NULLS FIRST|LAST` says otherwise (GoogleSQL's default is the
//!   reverse): the parser writes the default out in the AST;
//! * `LIMIT` and `OFFSET` come in either order; `LIMIT ALL` is no limit;
//!   `FETCH FIRST n ROWS ONLY` is a limit;
//! * a FROM item is a table (optionally `public.`-qualified), `(query)
//!   [AS] alias` or `unnest(array) [AS] alias`, joined by commas or
//!   `[INNER|LEFT|RIGHT|FULL [OUTER]|CROSS] JOIN ... ON | USING`.

use super::lexer::PgTok;
use super::PgParser;
use crate::ast::{
    Cte, JoinCondition, JoinKind, OrderByItem, Query, Select, SelectItem, SetExpr, SetOperator,
    TableExpr,
};
use crate::error::Result;

impl PgParser<'_> {
    /// Whether the current token starts a query (`SELECT`, `WITH`, or a
    /// parenthesised query).
    pub(super) fn at_query_start(&self) -> bool {
        let mut n = 0;
        while matches!(self.peek_at(n).tok, PgTok::Op("(")) {
            n += 1;
        }
        self.at_word_n(n, "select") || self.at_word_n(n, "with")
    }

    /// One query, one nesting level deeper.
    pub(super) fn parse_query(&mut self) -> Result<Query> {
        self.nested(|p| p.parse_query_inner())
    }

    fn parse_query_inner(&mut self) -> Result<Query> {
        let start = self.peek().span.start;
        let mut with = Vec::new();
        if self.eat_word("with") {
            if self.at_word("recursive") {
                return Err(self.unsupported("WITH RECURSIVE", self.peek().span.start));
            }
            loop {
                let name = self.parse_ident()?;
                self.expect_word("as")?;
                self.expect_op("(")?;
                let query = self.parse_query()?;
                self.expect_op(")")?;
                with.push(Cte {
                    name,
                    query: Box::new(query),
                });
                if !self.eat_op(",") {
                    break;
                }
            }
        }
        let body = self.parse_set_expr()?;
        let mut order_by = Vec::new();
        if self.eat_words(&["order", "by"]) {
            order_by = self.parse_order_by_list()?;
        }
        let mut limit = None;
        let mut offset = None;
        loop {
            if limit.is_none() && self.eat_word("limit") {
                if self.eat_word("all") {
                    continue;
                }
                limit = Some(self.parse_expr()?);
            } else if offset.is_none() && self.eat_word("offset") {
                offset = Some(self.parse_expr()?);
                if !self.eat_word("rows") {
                    self.eat_word("row");
                }
            } else if limit.is_none() && self.eat_word("fetch") {
                if !self.eat_word("first") {
                    self.expect_word("next")?;
                }
                limit = Some(self.parse_expr()?);
                if !self.eat_word("rows") {
                    self.expect_word("row")?;
                }
                self.expect_word("only")?;
            } else {
                break;
            }
        }
        Ok(Query {
            hints: Vec::new(),
            with,
            body,
            order_by,
            limit,
            offset,
            span: self.span_from(start),
        })
    }

    /// `expr [ASC|DESC] [NULLS FIRST|LAST], ...` (after `ORDER BY`).
    pub(super) fn parse_order_by_list(&mut self) -> Result<Vec<OrderByItem>> {
        let mut order_by = Vec::new();
        loop {
            let expr = self.parse_expr()?;
            let desc = if self.eat_word("desc") {
                true
            } else {
                self.eat_word("asc");
                false
            };
            let nulls_first = if self.eat_words(&["nulls", "first"]) {
                Some(true)
            } else if self.eat_words(&["nulls", "last"]) {
                Some(false)
            } else {
                // PostgreSQL sorts NULL above every value: last in
                // ascending order, first in descending (design D6).
                Some(desc)
            };
            order_by.push(OrderByItem {
                expr,
                desc,
                nulls_first,
            });
            if !self.eat_op(",") {
                return Ok(order_by);
            }
        }
    }

    /// `UNION` and `EXCEPT` over [`PgParser::parse_set_term`]s.
    fn parse_set_expr(&mut self) -> Result<SetExpr> {
        let start = self.peek().span.start;
        let mut chain = self.chain();
        let mut left = self.parse_set_term()?;
        loop {
            let op = if self.eat_word("union") {
                SetOperator::Union
            } else if self.eat_word("except") {
                SetOperator::Except
            } else {
                break;
            };
            let all = self.parse_set_quantifier();
            let right = self.parse_set_term()?;
            left = SetExpr::SetOperation {
                op,
                all,
                left: Box::new(left),
                right: Box::new(right),
                span: self.span_from(start),
            };
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    /// `INTERSECT` over SELECTs and parenthesised queries.
    fn parse_set_term(&mut self) -> Result<SetExpr> {
        let start = self.peek().span.start;
        let mut chain = self.chain();
        let mut left = self.parse_set_primary()?;
        while self.eat_word("intersect") {
            let all = self.parse_set_quantifier();
            let right = self.parse_set_primary()?;
            left = SetExpr::SetOperation {
                op: SetOperator::Intersect,
                all,
                left: Box::new(left),
                right: Box::new(right),
                span: self.span_from(start),
            };
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    /// `ALL` (true) or `DISTINCT`, the default (false).
    fn parse_set_quantifier(&mut self) -> bool {
        if self.eat_word("all") {
            true
        } else {
            self.eat_word("distinct");
            false
        }
    }

    fn parse_set_primary(&mut self) -> Result<SetExpr> {
        if self.eat_op("(") {
            let query = self.parse_query()?;
            self.expect_op(")")?;
            return Ok(SetExpr::Query(Box::new(query)));
        }
        Ok(SetExpr::Select(Box::new(self.parse_select()?)))
    }

    /// `SELECT [DISTINCT | ALL] items [FROM ...] [WHERE ...] [GROUP BY ...]
    /// [HAVING ...]`.
    fn parse_select(&mut self) -> Result<Select> {
        let start = self.peek().span.start;
        self.expect_word("select")?;
        let distinct = self.eat_word("distinct");
        if !distinct {
            self.eat_word("all");
        }
        if self.at_word("on") {
            return Err(self.unsupported("SELECT DISTINCT ON", self.peek().span.start));
        }
        let mut items = vec![self.parse_select_item()?];
        while self.eat_op(",") {
            items.push(self.parse_select_item()?);
        }
        let from = if self.eat_word("from") {
            Some(self.parse_from()?)
        } else {
            None
        };
        let where_clause = if self.eat_word("where") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        let mut group_by = Vec::new();
        if self.eat_words(&["group", "by"]) {
            group_by.push(self.parse_expr()?);
            while self.eat_op(",") {
                group_by.push(self.parse_expr()?);
            }
        }
        let having = if self.eat_word("having") {
            Some(self.parse_expr()?)
        } else {
            None
        };
        Ok(Select {
            distinct,
            as_struct: false,
            items,
            from,
            where_clause,
            group_by,
            having,
            span: self.span_from(start),
        })
    }

    /// One item of a select list (or of `RETURNING`).
    pub(super) fn parse_select_item(&mut self) -> Result<SelectItem> {
        let start = self.peek().span.start;
        if self.eat_op("*") {
            return Ok(SelectItem::Star {
                except: Vec::new(),
                replace: Vec::new(),
                span: self.span_from(start),
            });
        }
        if self.at_ident()
            && matches!(self.peek_at(1).tok, PgTok::Op("."))
            && matches!(self.peek_at(2).tok, PgTok::Op("*"))
        {
            let qualifier = self.parse_ident()?;
            self.advance();
            self.advance();
            return Ok(SelectItem::QualifiedStar {
                qualifier: vec![qualifier],
                expr: None,
                span: self.span_from(start),
            });
        }
        let expr = self.parse_expr()?;
        let alias = if self.eat_word("as") {
            Some(self.parse_col_label()?)
        } else if self.at_ident() {
            Some(self.parse_ident()?)
        } else {
            None
        };
        Ok(SelectItem::Expr { expr, alias })
    }

    /// `item [, item | [kind] JOIN item [ON e | USING (...)]] ...`.
    pub(super) fn parse_from(&mut self) -> Result<TableExpr> {
        let start = self.peek().span.start;
        let mut chain = self.chain();
        let mut left = self.parse_table_ref()?;
        loop {
            let kind = if self.eat_op(",") || self.eat_words(&["cross", "join"]) {
                JoinKind::Cross
            } else if self.eat_word("join") || self.eat_words(&["inner", "join"]) {
                JoinKind::Inner
            } else if self.eat_word("left") {
                self.eat_word("outer");
                self.expect_word("join")?;
                JoinKind::Left
            } else if self.eat_word("right") {
                self.eat_word("outer");
                self.expect_word("join")?;
                JoinKind::Right
            } else if self.eat_word("full") {
                self.eat_word("outer");
                self.expect_word("join")?;
                JoinKind::Full
            } else {
                break;
            };
            let right = self.parse_table_ref()?;
            let condition = if kind == JoinKind::Cross {
                JoinCondition::None
            } else if self.eat_word("on") {
                JoinCondition::On(self.parse_expr()?)
            } else if self.eat_word("using") {
                JoinCondition::Using(self.parse_ident_list()?)
            } else {
                return Err(self.unexpected());
            };
            left = TableExpr::Join {
                kind,
                left: Box::new(left),
                right: Box::new(right),
                condition,
                hints: Vec::new(),
                span: self.span_from(start),
            };
            self.link(&mut chain)?;
        }
        self.end_chain(chain);
        Ok(left)
    }

    /// A table in FROM: a user object (optionally `public.`-qualified), or
    /// a table of one of the built-in schemas a query can read,
    /// `information_schema.tables`, `pg_catalog.pg_class` or `spanner_sys.x`.
    fn parse_table_path(&mut self) -> Result<Vec<crate::ast::Ident>> {
        let builtin = matches!(&self.peek().tok, PgTok::Word(w)
            if w == "information_schema" || w == "pg_catalog" || w == "spanner_sys")
            && matches!(self.peek_at(1).tok, PgTok::Op("."));
        if builtin {
            let schema = self.parse_ident()?;
            self.advance();
            return Ok(vec![schema, self.parse_ident()?]);
        }
        Ok(vec![self.parse_object_name()?])
    }

    fn parse_alias(&mut self) -> Result<Option<crate::ast::Ident>> {
        if self.eat_word("as") || self.at_ident() {
            Ok(Some(self.parse_ident()?))
        } else {
            Ok(None)
        }
    }

    fn parse_table_ref(&mut self) -> Result<TableExpr> {
        let start = self.peek().span.start;
        if self.at_op("(") {
            if !self.at_query_start() {
                return Err(self.unsupported("a parenthesised join", start));
            }
            self.advance();
            let query = self.parse_query()?;
            self.expect_op(")")?;
            let alias = self.parse_alias()?;
            return Ok(TableExpr::Subquery {
                query: Box::new(query),
                alias,
                span: self.span_from(start),
            });
        }
        if self.at_word("unnest") && matches!(self.peek_at(1).tok, PgTok::Op("(")) {
            self.advance();
            self.advance();
            let array = self.parse_expr()?;
            self.expect_op(")")?;
            let alias = self.parse_alias()?;
            return Ok(TableExpr::Unnest {
                array,
                alias,
                with_offset: None,
                span: self.span_from(start),
            });
        }
        let path = self.parse_table_path()?;
        let alias = self.parse_alias()?;
        Ok(TableExpr::Table {
            path,
            alias,
            hints: Vec::new(),
            span: self.span_from(start),
        })
    }
}
