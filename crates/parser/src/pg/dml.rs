//! PostgreSQL DML, lowered to the shared [`crate::ast`] forms.
//!
//! ```text
//! INSERT INTO t [AS a] (c, ...) { VALUES (v, ...), ... | query }
//!     [ON CONFLICT (key, ...) DO NOTHING | DO UPDATE SET c = excluded.c, ...]
//!     [RETURNING item, ...]
//! UPDATE t [[AS] a] SET c = v, ... [WHERE e] [RETURNING ...]
//! DELETE FROM t [[AS] a] [WHERE e] [RETURNING ...]
//! v := DEFAULT | e
//! ```
//!
//! `RETURNING` is GoogleSQL's `THEN RETURN`. A missing `WHERE` means every
//! row (PostgreSQL's rule; the AST's WHERE is then `TRUE`). `ON CONFLICT`
//! lowers to the engine's two upserts (design D3): `DO NOTHING` is
//! `INSERT OR IGNORE`; `DO UPDATE` is `INSERT OR UPDATE`, which writes
//! every inserted column of a row that exists, so it is accepted only in
//! that shape: each inserted column outside the conflict target set to
//! `excluded.` itself, and nothing else. Other `DO UPDATE` forms are
//! refused as not supported rather than run with different semantics.

use super::PgParser;
use crate::ast::{
    Delete, Expr, Ident, Insert, InsertMode, InsertSource, Literal, Returning, StatementKind,
    Update,
};
use crate::error::{ParseError, Result};

impl PgParser<'_> {
    /// From `INSERT`.
    pub(super) fn parse_insert(&mut self, start: usize) -> Result<StatementKind> {
        self.expect_word("into")?;
        let table = self.parse_object_name()?;
        if self.eat_word("as") {
            return Err(self.unsupported("an alias on INSERT's table", self.prev_end()));
        }
        if !self.at_op("(") || self.at_query_start() {
            return Err(self.unsupported("INSERT without a column list", self.peek().span.start));
        }
        let columns = self.parse_ident_list()?;
        let source = if self.eat_word("values") {
            let mut rows = Vec::new();
            loop {
                self.expect_op("(")?;
                let mut row = vec![self.parse_value()?];
                while self.eat_op(",") {
                    row.push(self.parse_value()?);
                }
                self.expect_op(")")?;
                rows.push(row);
                if !self.eat_op(",") {
                    break;
                }
            }
            InsertSource::Values(rows)
        } else if self.at_query_start() {
            InsertSource::Query(Box::new(self.parse_query()?))
        } else {
            return Err(self.unexpected());
        };
        let mode = if self.eat_words(&["on", "conflict"]) {
            self.parse_on_conflict(&columns)?
        } else {
            InsertMode::Plain
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

    /// After `ON CONFLICT`: the conflict target and action, as the insert
    /// mode they lower to.
    fn parse_on_conflict(&mut self, columns: &[Ident]) -> Result<InsertMode> {
        let at = self.peek().span.start;
        if !self.at_op("(") {
            return Err(self.unsupported("ON CONFLICT without a conflict target", at));
        }
        let target = self.parse_ident_list()?;
        if let Some(c) = target.iter().find(|t| !columns.contains(t)) {
            return Err(ParseError::new(
                format!(
                    "ON CONFLICT column \"{}\" is not among the inserted columns",
                    c.value
                ),
                c.span.start,
            ));
        }
        self.expect_word("do")?;
        if self.eat_word("nothing") {
            return Ok(InsertMode::OrIgnore);
        }
        let update_at = self.peek().span.start;
        self.expect_word("update")?;
        self.expect_word("set")?;
        let mut assigned: Vec<Ident> = Vec::new();
        loop {
            let column = self.parse_ident()?;
            self.expect_op("=")?;
            let value = self.parse_expr()?;
            let is_excluded_self = matches!(&value, Expr::Column { path, .. }
                if path.len() == 2 && path[0].value == "excluded" && path[1] == column);
            if !is_excluded_self {
                return Err(self.unsupported(
                    "ON CONFLICT DO UPDATE other than SET column = excluded.column",
                    column.span.start,
                ));
            }
            assigned.push(column);
            if !self.eat_op(",") {
                break;
            }
        }
        if self.at_word("where") {
            return Err(self.unsupported("ON CONFLICT DO UPDATE ... WHERE", self.peek().span.start));
        }
        let expected: Vec<&Ident> = columns.iter().filter(|c| !target.contains(c)).collect();
        let covers =
            expected.len() == assigned.len() && expected.iter().all(|c| assigned.contains(c));
        if !covers {
            return Err(self.unsupported(
                "ON CONFLICT DO UPDATE that does not set every inserted non-key column to excluded",
                update_at,
            ));
        }
        Ok(InsertMode::OrUpdate)
    }

    /// A value in VALUES or SET: `DEFAULT` or an expression.
    fn parse_value(&mut self) -> Result<Expr> {
        if self.at_word("default") {
            let span = self.advance().span;
            return Ok(Expr::Default { span });
        }
        self.parse_expr()
    }

    /// `[RETURNING item, ...]`.
    fn parse_returning(&mut self) -> Result<Option<Returning>> {
        if !self.eat_word("returning") {
            return Ok(None);
        }
        let mut items = vec![self.parse_select_item()?];
        while self.eat_op(",") {
            items.push(self.parse_select_item()?);
        }
        Ok(Some(items))
    }

    /// `[[AS] alias]` of UPDATE and DELETE, where `SET` is not an alias.
    fn parse_dml_alias(&mut self) -> Result<Option<Ident>> {
        if self.eat_word("as") || (self.at_ident() && !self.at_word("set")) {
            Ok(Some(self.parse_ident()?))
        } else {
            Ok(None)
        }
    }

    /// `[WHERE e]`, `TRUE` when absent.
    fn parse_dml_where(&mut self) -> Result<Expr> {
        if self.eat_word("where") {
            return self.parse_expr();
        }
        let at = self.prev_end();
        Ok(Expr::Literal {
            value: Literal::Bool(true),
            span: crate::ast::Span { start: at, end: at },
        })
    }

    /// From `UPDATE`.
    pub(super) fn parse_update(&mut self, start: usize) -> Result<StatementKind> {
        if self.at_word("only") {
            return Err(self.unsupported("UPDATE ONLY", self.peek().span.start));
        }
        let table = self.parse_object_name()?;
        let alias = self.parse_dml_alias()?;
        self.expect_word("set")?;
        let mut assignments = Vec::new();
        loop {
            if self.at_op("(") {
                return Err(self.unsupported("a multi-column SET", self.peek().span.start));
            }
            let column = self.parse_ident()?;
            self.expect_op("=")?;
            let value = self.parse_value()?;
            assignments.push((vec![column], value));
            if !self.eat_op(",") {
                break;
            }
        }
        if self.at_word("from") {
            return Err(self.unsupported("UPDATE ... FROM", self.peek().span.start));
        }
        let where_clause = self.parse_dml_where()?;
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
    pub(super) fn parse_delete(&mut self, start: usize) -> Result<StatementKind> {
        self.expect_word("from")?;
        if self.at_word("only") {
            return Err(self.unsupported("DELETE FROM ONLY", self.peek().span.start));
        }
        let table = self.parse_object_name()?;
        let alias = self.parse_dml_alias()?;
        if self.at_word("using") {
            return Err(self.unsupported("DELETE ... USING", self.peek().span.start));
        }
        let where_clause = self.parse_dml_where()?;
        let returning = self.parse_returning()?;
        Ok(StatementKind::Delete(Box::new(Delete {
            table,
            alias,
            where_clause,
            returning,
            span: self.span_from(start),
        })))
    }
}
