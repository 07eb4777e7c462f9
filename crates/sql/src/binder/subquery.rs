//! Subquery expressions: scalar, EXISTS, IN and ARRAY.
//!
//! The expression binder calls back here when it meets one. The subquery
//! is planned on its own with the current scope as its [`Outer`]; its plan
//! goes to the binder's subquery list and the expression reads it by
//! index. Names it resolves in the outer scope are its *correlations*,
//! appended to each row when it runs.

use std::cell::RefCell;

use rowtree_expr::SubqueryKind;
use rowtree_parser::ast::{Expr, Query};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::expr_tree::{self};
use crate::plan::SubqueryPlan;

use super::expr_scope::ExprScope;
use super::{Binder, Outer};

impl Binder<'_> {
    pub(super) fn bind_subquery(
        &self,
        scope: &ExprScope<'_, '_>,
        expr: &Expr,
        query: &Query,
        kind: SubqueryKind,
    ) -> Result<(usize, Type)> {
        let outer = Outer {
            scope,
            correlations: RefCell::new(Vec::new()),
        };
        let out = self.query(query, Some(&outer))?;
        let span = expr.span();
        let ty = match kind {
            SubqueryKind::Exists => Type::Bool,
            _ => {
                if out.columns.len() != 1 {
                    let what = match kind {
                        SubqueryKind::Scalar => "Scalar subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values",
                        SubqueryKind::Array => "ARRAY subquery cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values",
                        _ => "Subquery of type IN must have only one output column",
                    };
                    return Err(Error::invalid_at(span, what));
                }
                let t = out.columns[0].1.clone();
                match kind {
                    SubqueryKind::Scalar => t,
                    _ => Type::Array(Box::new(t)),
                }
            }
        };
        let mut subs = self.subqueries.borrow_mut();
        subs.push(Some(SubqueryPlan {
            root: out.node,
            kind,
            correlations: outer.correlations.into_inner(),
            text: expr_tree::text(expr),
        }));
        Ok((subs.len() - 1, ty))
    }
}
