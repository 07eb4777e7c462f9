//! DML statements and EXPLAIN.
//!
//! ```text
//! INSERT [OR UPDATE | OR IGNORE] [INTO] t (c, ...) { VALUES (v, ...), ... | query } [returning]
//! UPDATE t [[AS] a] SET path = v, ... WHERE e [returning]
//! DELETE [FROM] t [[AS] a] WHERE e [returning]
//! returning := THEN RETURN item, ... [,]
//! v := DEFAULT | e
//! EXPLAIN [ANALYZE] statement
//! ```
//!
//! GoogleSQL requires the WHERE clause of UPDATE and DELETE (`WHERE true`
//! touches every row), and INSERT's column list.

use super::Parser;
use crate::ast::{
    Delete, Expr, Insert, InsertMode, InsertSource, Returning, StatementKind, Update,
};
use crate::error::{ParseError, Result};
use crate::lexer::{Keyword, Punct};

impl Parser<'_> {
    /// From `INSERT`.
    pub(super) fn parse_insert(&mut self) -> Result<StatementKind> {
        let start = self.expect_word("INSERT")?.start;
        let mode = if self.eat_keyword(Keyword::Or) {
            if self.eat_word("UPDATE") {
                InsertMode::OrUpdate
            } else if self.eat_keyword(Keyword::Ignore) {
                InsertMode::OrIgnore
            } else {
                return Err(self.expected("keyword UPDATE or keyword IGNORE"));
            }
        } else {
            InsertMode::Plain
        };
        self.eat_keyword(Keyword::Into);
        let table = self.parse_ident()?;
        let columns = self.parse_ident_list()?;
        let source = if self.eat_word("VALUES") {
            let mut rows = Vec::new();
            loop {
                self.expect_punct(Punct::LParen)?;
                let mut row = vec![self.parse_value()?];
                while self.eat_punct(Punct::Comma) {
                    row.push(self.parse_value()?);
                }
                self.expect_punct(Punct::RParen)?;
                rows.push(row);
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
            InsertSource::Values(rows)
        } else if self.at_query_start() {
            InsertSource::Query(Box::new(self.parse_query()?))
        } else {
            return Err(self.expected("keyword VALUES or a query"));
        };
        let returning = self.parse_returning()?;
        Ok(StatementKind::Insert(Box::new(Insert {
            mode,
            table,
            columns,
            source,
            returning,
            span: self.span_from(start),
        })))
    }

    /// From `UPDATE`.
    pub(super) fn parse_update(&mut self) -> Result<StatementKind> {
        let start = self.expect_word("UPDATE")?.start;
        let table = self.parse_ident()?;
        let alias = self.parse_optional_alias()?;
        self.expect_keyword(Keyword::Set)?;
        let mut assignments = Vec::new();
        loop {
            let mut path = vec![self.parse_ident()?];
            while self.eat_punct(Punct::Dot) {
                path.push(self.parse_ident()?);
            }
            self.expect_punct(Punct::Eq)?;
            assignments.push((path, self.parse_value()?));
            if !self.eat_punct(Punct::Comma) {
                break;
            }
        }
        self.expect_keyword(Keyword::Where)?;
        let where_clause = self.parse_expr()?;
        let returning = self.parse_returning()?;
        Ok(StatementKind::Update(Box::new(Update {
            table,
            alias,
            assignments,
            where_clause,
            returning,
            span: self.span_from(start),
        })))
    }

    /// From `DELETE`.
    pub(super) fn parse_delete(&mut self) -> Result<StatementKind> {
        let start = self.expect_word("DELETE")?.start;
        self.eat_keyword(Keyword::From);
        let table = self.parse_ident()?;
        let alias = self.parse_optional_alias()?;
        self.expect_keyword(Keyword::Where)?;
        let where_clause = self.parse_expr()?;
        let returning = self.parse_returning()?;
        Ok(StatementKind::Delete(Box::new(Delete {
            table,
            alias,
            where_clause,
            returning,
            span: self.span_from(start),
        })))
    }

    /// From `EXPLAIN`.
    pub(super) fn parse_explain(&mut self) -> Result<StatementKind> {
        self.expect_word("EXPLAIN")?;
        let analyze = self.eat_word("ANALYZE");
        if self.at_word("EXPLAIN") {
            return Err(ParseError::new(
                "Syntax error: EXPLAIN EXPLAIN is not allowed",
                self.peek().span.start,
            ));
        }
        let statement = self.parse_statement()?;
        Ok(StatementKind::Explain {
            analyze,
            statement: Box::new(statement),
        })
    }

    /// A value in VALUES or SET: `DEFAULT` or an expression.
    fn parse_value(&mut self) -> Result<Expr> {
        if self.at_keyword(Keyword::Default) {
            let span = self.advance().span;
            return Ok(Expr::Default { span });
        }
        self.parse_expr()
    }

    /// `[THEN RETURN item, ...]`.
    fn parse_returning(&mut self) -> Result<Option<Returning>> {
        if !self.eat_keyword(Keyword::Then) {
            return Ok(None);
        }
        self.expect_word("RETURN")?;
        if self.at_keyword(Keyword::With) && self.peek_at(1).is_word("ACTION") {
            return Err(ParseError::new(
                "Syntax error: THEN RETURN WITH ACTION is not supported",
                self.peek().span.start,
            ));
        }
        Ok(Some(self.parse_select_items()?))
    }
}
