//! Set operations: UNION, INTERSECT and EXCEPT, ALL or DISTINCT.
//!
//! Both sides must have as many columns; each column gets the common
//! supertype of its two sides (INT64 and NUMERIC widen to NUMERIC, other
//! numbers to FLOAT64), and a side whose type differs is cast. An untyped
//! `NULL` column takes the other side's type. The output names are the
//! left side's.

use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{self, Expr, SetExpr, Span};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::plan::{Node, NodeKind};

use super::expr_scope::ExprScope;
use super::synthetic::{synthetic_column, synthetic_scope};
use super::typing::{common_type, data_type};
use super::{Binder, Outer, Output};

impl Binder<'_> {
    pub(super) fn set_expr(&self, e: &SetExpr, outer: Option<&Outer<'_>>) -> Result<Output> {
        rowtree_types::stack::guarded(|| self.set_expr_node(e, outer))
    }

    fn set_expr_node(&self, e: &SetExpr, outer: Option<&Outer<'_>>) -> Result<Output> {
        match e {
            SetExpr::Select(s) => self.select(s, outer, &[]),
            SetExpr::Query(q) => self.query(q, outer),
            SetExpr::SetOperation {
                op,
                all,
                left,
                right,
                span,
            } => {
                let l = self.set_expr(left, outer)?;
                let r = self.set_expr(right, outer)?;
                let name = set_op_name(*op, *all);
                if l.columns.len() != r.columns.len() {
                    return Err(Error::invalid_at(
                        *span,
                        format!(
                            "Queries in {name} have mismatched column count; query 1 has {} column{}, query 2 has {} column{}",
                            l.columns.len(),
                            if l.columns.len() == 1 { "" } else { "s" },
                            r.columns.len(),
                            if r.columns.len() == 1 { "" } else { "s" }
                        ),
                    ));
                }
                let mut types = Vec::new();
                // An untyped NULL column takes the other side's type.
                let nulls = |o: &Output| -> Vec<bool> {
                    (0..o.columns.len())
                        .map(|i| untyped_null_column(&o.node, i))
                        .collect()
                };
                let (lnull, rnull) = (nulls(&l), nulls(&r));
                for (i, ((_, a), (_, b))) in l.columns.iter().zip(&r.columns).enumerate() {
                    let common = if rnull[i] {
                        Some(a.clone())
                    } else if lnull[i] {
                        Some(b.clone())
                    } else {
                        common_type(a, b)
                    };
                    match common {
                        Some(t) => types.push(t),
                        None => {
                            return Err(Error::invalid_at(
                                *span,
                                format!(
                                    "Column {} in {name} has incompatible types: {a}, {b}",
                                    i + 1
                                ),
                            ))
                        }
                    }
                }
                let columns: Vec<(String, Type)> = l
                    .columns
                    .iter()
                    .zip(&types)
                    .map(|((n, _), t)| (n.clone(), t.clone()))
                    .collect();
                let left = self.coerce_output(l, &types, &lnull, *span)?;
                let right = self.coerce_output(r, &types, &rnull, *span)?;
                let width = columns.len();
                Ok(Output {
                    node: Node::new(
                        NodeKind::SetOp {
                            left: Box::new(left),
                            right: Box::new(right),
                            op: *op,
                            all: *all,
                        },
                        width,
                    ),
                    origins: vec![None; width],
                    columns,
                })
            }
        }
    }

    /// Casts an output's columns to `types` where they differ; a column that
    /// is an untyped NULL (`nulls`) becomes a NULL of its new type.
    fn coerce_output(&self, o: Output, types: &[Type], nulls: &[bool], span: Span) -> Result<Node> {
        if o.columns.iter().zip(types).all(|((_, a), b)| a == b) {
            return Ok(o.node);
        }
        let current: Vec<Type> = o.columns.iter().map(|(_, t)| t.clone()).collect();
        let scope = synthetic_scope(&current);
        let es = ExprScope::new(self, &scope, None, "SELECT list");
        let mut exprs = Vec::new();
        for (i, t) in types.iter().enumerate() {
            if current[i] != *t && nulls.get(i).copied().unwrap_or(false) {
                exprs.push(BoundExpr::null_of(t.clone(), span));
                continue;
            }
            let col = synthetic_column(i, span);
            let e = if current[i] == *t {
                col
            } else {
                Expr::Cast {
                    expr: Box::new(col),
                    to: data_type(t).ok_or_else(|| {
                        Error::invalid_at(span, "Cannot coerce set operation column")
                    })?,
                    safe: false,
                    span,
                }
            };
            exprs.push(self.bind_in(&e, &es)?);
        }
        Ok(Node::project(
            o.node,
            exprs,
            o.columns.iter().map(|(n, _)| n.clone()).collect(),
        ))
    }
}

pub(super) fn set_op_name(op: ast::SetOperator, all: bool) -> String {
    let op = match op {
        ast::SetOperator::Union => "UNION",
        ast::SetOperator::Intersect => "INTERSECT",
        ast::SetOperator::Except => "EXCEPT",
    };
    format!("{op} {}", if all { "ALL" } else { "DISTINCT" })
}

/// Whether output column `i` of a query block's plan is an untyped `NULL`
/// literal (`SELECT NULL`), possibly under the block's own DISTINCT, ORDER
/// BY and LIMIT, or such a column on both sides of a set operation. A NULL
/// read from a derived table is typed (INT64) and does not count.
pub(super) fn untyped_null_column(node: &Node, i: usize) -> bool {
    match &node.kind {
        NodeKind::Project { input, exprs, .. } => match exprs.get(i) {
            Some(e) if e.is_untyped_null() => true,
            // The projection that drops ORDER BY's extra columns.
            Some(e) => {
                matches!(input.kind, NodeKind::Sort { .. })
                    && e.as_column().is_some_and(|s| untyped_null_column(input, s))
            }
            None => false,
        },
        NodeKind::Sort { input, .. }
        | NodeKind::Limit { input, .. }
        | NodeKind::Distinct { input } => untyped_null_column(input, i),
        NodeKind::SetOp { left, right, .. } => {
            untyped_null_column(left, i) && untyped_null_column(right, i)
        }
        _ => false,
    }
}
