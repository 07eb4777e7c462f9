//! A whole query: WITH, its body, LIMIT and OFFSET.
//!
//! CTEs are inlined: each WITH entry is pushed on the binder's CTE list
//! while the query's body is bound (a table name matching one binds its
//! query there, see [`super::from`]) and popped after. The body is a SELECT
//! or a set operation; LIMIT/OFFSET become a `Limit` node over it.

use rowtree_parser::ast::{Query, SetExpr};

use crate::error::{Error, Result};
use crate::plan::{Node, NodeKind};

use super::{Binder, Outer, Output};

impl Binder<'_> {
    /// Binds a whole query (WITH, body, ORDER BY, LIMIT).
    pub fn query(&self, q: &Query, outer: Option<&Outer<'_>>) -> Result<Output> {
        rowtree_types::stack::guarded(|| self.query_node(q, outer))
    }

    fn query_node(&self, q: &Query, outer: Option<&Outer<'_>>) -> Result<Output> {
        for (i, cte) in q.with.iter().enumerate() {
            if q.with[..i]
                .iter()
                .any(|c| c.name.value.eq_ignore_ascii_case(&cte.name.value))
            {
                return Err(Error::invalid_at(
                    cte.name.span,
                    format!("Duplicate alias {} for WITH subquery", cte.name.value),
                ));
            }
        }
        let pushed = q.with.len();
        for cte in &q.with {
            self.ctes
                .borrow_mut()
                .push((cte.name.value.clone(), (*cte.query).clone()));
        }
        let result = self.query_body(q, outer);
        let n = self.ctes.borrow().len();
        self.ctes.borrow_mut().truncate(n - pushed);
        result
    }

    fn query_body(&self, q: &Query, outer: Option<&Outer<'_>>) -> Result<Output> {
        let mut out = match &q.body {
            SetExpr::Select(s) => self.select(s, outer, &q.order_by)?,
            other => {
                let o = self.set_expr(other, outer)?;
                self.order_output(o, &q.order_by, outer)?
            }
        };
        if q.limit.is_some() || q.offset.is_some() {
            let limit = q
                .limit
                .as_ref()
                .map(|e| self.count(e, "LIMIT"))
                .transpose()?;
            let offset = q
                .offset
                .as_ref()
                .map(|e| self.count(e, "OFFSET"))
                .transpose()?
                .unwrap_or(0);
            let width = out.node.width;
            out.node = Node::new(
                NodeKind::Limit {
                    input: Box::new(out.node),
                    limit,
                    offset,
                },
                width,
            );
        }
        Ok(out)
    }
}
