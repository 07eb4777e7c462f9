//! Window (analytic) functions.
//!
//! In a non-aggregating SELECT, each distinct window call of the select
//! list and ORDER BY is bound once over the row after WHERE; a `Window`
//! node appends one hidden column `$win{i}` per call, and the calls are
//! rewritten to read those columns. Only `IS_FIRST(n) OVER (PARTITION BY
//! ... ORDER BY ...)` exists so far.

use rowtree_parser::ast::{self, Expr, Ident, Select, SelectItem};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::expr_tree::{self, canonical, window_spec};
use crate::plan::{Node, NodeKind, WindowCall, WindowFunc};
use crate::scope::{RowScope, ScopeColumn};

use super::expr_scope::ExprScope;
use super::typing::groupable;
use super::{Binder, Outer};

impl Binder<'_> {
    /// Binds the window function `calls` (distinct, in order of appearance)
    /// of a non-aggregating SELECT over the FROM row `from`: returns a Window
    /// node over `node`, and the SELECT, scope and ORDER BY in which each call
    /// is replaced by its hidden column `$win{i}`.
    pub(super) fn windows(
        &self,
        s: &Select,
        node: Node,
        from: &RowScope,
        outer: Option<&Outer<'_>>,
        order_by: &[ast::OrderByItem],
        calls: &[Expr],
    ) -> Result<(Node, Select, RowScope, Vec<ast::OrderByItem>)> {
        if node.width != from.width() {
            return Err(Error::internal("window input width differs from its scope"));
        }
        let args_scope = ExprScope::new(self, from, outer, "analytic function argument");
        let over_scope = ExprScope::new(self, from, outer, "OVER clause");
        let mut bound = Vec::new();
        let mut scope = from.clone();
        for (i, call) in calls.iter().enumerate() {
            let Expr::Function {
                name,
                args,
                distinct,
                modifiers: Some(m),
                span,
                ..
            } = call
            else {
                return Err(Error::internal(
                    "window binding called on a non-window call",
                ));
            };
            let Some(w) = &m.over else {
                return Err(Error::internal(
                    "window binding called on a non-window call",
                ));
            };
            let upper = name.value.to_ascii_uppercase();
            let func = match upper.as_str() {
                "IS_FIRST" => WindowFunc::IsFirst,
                _ if rowtree_expr::is_aggregate_function(&name.value) => {
                    return Err(Error::invalid_at(
                        *span,
                        format!("Aggregate function {upper} cannot be used with an OVER clause"),
                    ))
                }
                _ => {
                    return Err(Error::invalid_at(
                        *span,
                        format!("Function {upper} cannot be used as an analytic function"),
                    ))
                }
            };
            if *distinct || m.ignore_nulls.is_some() || !m.order_by.is_empty() || m.limit.is_some()
            {
                return Err(Error::invalid_at(
                    *span,
                    format!(
                        "Analytic function {upper} does not support DISTINCT, IGNORE NULLS, ORDER BY or LIMIT"
                    ),
                ));
            }
            let mut bargs = Vec::new();
            for a in args {
                bargs.push(self.bind_in(a, &args_scope)?);
            }
            match func {
                WindowFunc::IsFirst => {
                    if bargs.len() != 1 || !matches!(bargs[0].ty(), Type::Int64) {
                        let types: Vec<String> = bargs.iter().map(|b| b.ty().to_string()).collect();
                        return Err(Error::invalid_at(
                            *span,
                            format!(
                                "No matching signature for analytic function IS_FIRST for argument types: {}. Supported signature: IS_FIRST(INT64)",
                                types.join(", ")
                            ),
                        ));
                    }
                }
            }
            let mut partition_by = Vec::new();
            for p in &w.partition_by {
                let b = self.bind_in(p, &over_scope)?;
                if !groupable(b.ty()) {
                    return Err(Error::invalid_at(
                        p.span(),
                        format!(
                            "Partitioning by expressions of type {} is not allowed",
                            b.ty()
                        ),
                    ));
                }
                partition_by.push(b);
            }
            let mut keys = Vec::new();
            for o in &w.order_by {
                let b = self.bind_in(&o.expr, &over_scope)?;
                if !b.ty().is_orderable() {
                    return Err(Error::invalid_at(
                        o.expr.span(),
                        format!("ORDER BY does not support expressions of type {}", b.ty()),
                    ));
                }
                keys.push((b, o.desc, o.nulls_first.unwrap_or(!o.desc)));
            }
            bound.push(WindowCall {
                func,
                args: bargs,
                partition_by,
                order_by: keys,
                text: expr_tree::text(call),
            });
            scope.columns.push(ScopeColumn {
                name: format!("$win{i}"),
                ty: Type::Bool,
                in_star: false,
                unqualified: true,
                origin: None,
            });
        }
        let keys: Vec<String> = calls.iter().map(canonical).collect();
        let replace = |e: &Expr| -> Expr {
            expr_tree::rewrite(e, &|x: &Expr| {
                window_spec(x)?;
                let i = keys.iter().position(|k| *k == canonical(x))?;
                Some(Expr::Column {
                    path: vec![Ident {
                        value: format!("$win{i}"),
                        span: x.span(),
                    }],
                    span: x.span(),
                })
            })
        };
        let mut select = s.clone();
        for item in select.items.iter_mut() {
            match item {
                SelectItem::Expr { expr, .. } => *expr = replace(expr),
                SelectItem::QualifiedStar {
                    expr: Some(expr), ..
                } => **expr = replace(expr),
                _ => {}
            }
        }
        let order: Vec<ast::OrderByItem> = order_by
            .iter()
            .map(|o| ast::OrderByItem {
                expr: replace(&o.expr),
                ..o.clone()
            })
            .collect();
        let width = node.width + bound.len();
        let node = Node::new(
            NodeKind::Window {
                input: Box::new(node),
                calls: bound,
            },
            width,
        );
        Ok((node, select, scope, order))
    }
}

/// The first window function call in `e` (outside subqueries).
pub(super) fn first_window(e: &Expr) -> Option<&Expr> {
    if window_spec(e).is_some() {
        return Some(e);
    }
    expr_tree::children(e).into_iter().find_map(first_window)
}

/// Appends the window function calls of `e` (outside subqueries) not already
/// in `out` (by canonical form); calls nested in a call's arguments or OVER
/// clause are left to the binder, which refuses them.
pub(super) fn collect_windows(e: &Expr, out: &mut Vec<Expr>) {
    if window_spec(e).is_some() {
        let key = canonical(e);
        if !out.iter().any(|c| canonical(c) == key) {
            out.push(e.clone());
        }
        return;
    }
    for c in expr_tree::children(e) {
        collect_windows(c, out);
    }
}
