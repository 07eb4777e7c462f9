//! The SELECT block and its select list.
//!
//! [`Binder::select`](super::Binder) binds a block clause by clause: FROM,
//! WHERE, then either the aggregating path ([`super::aggregate`]) or window
//! functions ([`super::window`]) and the select list here: expressions,
//! `*` and `t.*` (with EXCEPT and REPLACE), and `expr.*` over a STRUCT.
//! Each output column remembers the table column it passes through
//! unchanged, if any, for ORDER BY and the planner.

use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{self, Expr, Ident, Select, SelectItem, Span};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::expr_tree::has_aggregate;
use crate::plan::{Node, NodeKind};
use crate::scope::{Resolved, RowScope};

use super::expr_scope::ExprScope;
use super::order_by::PreProjection;
use super::window::{collect_windows, first_window};
use super::{Binder, Outer, Output};

impl Binder<'_> {
    pub(super) fn select(
        &self,
        s: &Select,
        outer: Option<&Outer<'_>>,
        order_by: &[ast::OrderByItem],
    ) -> Result<Output> {
        // 1. FROM.
        let (mut node, from) = match &s.from {
            None => (
                Node::new(NodeKind::Values { rows: vec![vec![]] }, 0),
                RowScope::default(),
            ),
            Some(te) => self.from(te, outer)?,
        };
        // 2. WHERE: push what a single scan can answer, filter the rest.
        if let Some(w) = &s.where_clause {
            if let Some(call) = first_window(w) {
                return Err(Error::invalid_at(
                    call.span(),
                    "Analytic function not allowed in WHERE clause",
                ));
            }
            if has_aggregate(w) {
                let es = ExprScope::new(self, &from, outer, "WHERE clause");
                self.bind_in(w, &es)?;
            }
            node = self.apply_where(w, &from, node, outer)?;
        }
        // 3. Aggregation.
        let aggregating = !s.group_by.is_empty()
            || s.having.is_some()
            || s.items.iter().any(|i| match i {
                SelectItem::Expr { expr, .. } => has_aggregate(expr),
                SelectItem::QualifiedStar {
                    expr: Some(expr), ..
                } => has_aggregate(expr),
                _ => false,
            })
            || order_by.iter().any(|o| has_aggregate(&o.expr));
        let mut window_calls = Vec::new();
        for item in &s.items {
            match item {
                SelectItem::Expr { expr, .. } => collect_windows(expr, &mut window_calls),
                SelectItem::QualifiedStar {
                    expr: Some(expr), ..
                } => collect_windows(expr, &mut window_calls),
                _ => {}
            }
        }
        for o in order_by {
            collect_windows(&o.expr, &mut window_calls);
        }
        if aggregating {
            if let Some(call) = window_calls.first() {
                return Err(Error::unimplemented(
                    "Analytic functions in a query with GROUP BY or aggregate functions are not supported",
                )
                .at(call.span()));
            }
            return self.aggregate_select(s, node, &from, outer, order_by);
        }
        // 3b. Window functions, over the FROM row after WHERE: a Window node
        // appends one hidden column per call, which the select list and ORDER
        // BY then read in place of the call.
        let windowed;
        let (s, from, order_by): (&Select, &RowScope, &[ast::OrderByItem]) =
            if window_calls.is_empty() {
                (s, &from, order_by)
            } else {
                let (n, sel, scope, order) =
                    self.windows(s, node, &from, outer, order_by, &window_calls)?;
                node = n;
                windowed = (sel, scope, order);
                (&windowed.0, &windowed.1, &windowed.2[..])
            };
        // 4. SELECT list.
        let es = ExprScope::new(self, from, outer, "SELECT list");
        let mut exprs = Vec::new();
        let mut columns = Vec::new();
        let mut origins = Vec::new();
        let mut asts: Vec<Option<Expr>> = Vec::new();
        for item in &s.items {
            let (slots, except, replace): (Vec<usize>, &[Ident], &[(Expr, Ident)]) = match item {
                SelectItem::Star {
                    except,
                    replace,
                    span,
                } => {
                    if from.star.is_empty() && s.from.is_none() {
                        return Err(Error::invalid_at(*span, "SELECT * must have a FROM clause"));
                    }
                    (from.star.clone(), except, replace)
                }
                SelectItem::QualifiedStar {
                    qualifier,
                    expr,
                    span,
                } => {
                    let name = qualifier
                        .iter()
                        .map(|i| i.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".");
                    let table = match expr {
                        None => from.table_star(&name),
                        Some(_) => None,
                    };
                    if let Some(slots) = table {
                        (slots, &[], &[])
                    } else {
                        // `expr.*` on a STRUCT value: one column per field.
                        let target = dot_star_target(qualifier, expr.as_deref());
                        let b = self.bind_in(&target, &es)?;
                        for (name, field) in dot_star_fields(b, *span)? {
                            columns.push((name, field.ty().clone()));
                            exprs.push(field);
                            origins.push(None);
                            asts.push(None);
                        }
                        continue;
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let b = self.bind_in(expr, &es)?;
                    let mut name = item_name(expr, alias.as_ref());
                    if alias.is_none() && name.starts_with("$win") {
                        name.clear();
                    }
                    columns.push((name, b.ty().clone()));
                    origins.push(match expr {
                        Expr::Column { path, .. } => match from.resolve(path) {
                            Ok(Resolved::Slot(s, _)) => from.columns[s].origin,
                            _ => None,
                        },
                        _ => None,
                    });
                    exprs.push(b);
                    asts.push(Some(expr.clone()));
                    continue;
                }
            };
            // A star's columns, less its EXCEPT ones, with its REPLACE ones
            // bound anew.
            for slot in slots {
                let col = &from.columns[slot];
                if except.iter().any(|e| e.matches(&col.name)) {
                    continue;
                }
                if let Some((e, name)) = replace.iter().find(|(_, n)| n.matches(&col.name)) {
                    exprs.push(self.bind_in(e, &es)?);
                    columns.push((
                        name.value.clone(),
                        exprs
                            .last()
                            .map(|b: &BoundExpr| b.ty().clone())
                            .unwrap_or(Type::Int64),
                    ));
                    origins.push(None);
                    asts.push(Some(e.clone()));
                    continue;
                }
                self.used.borrow().mark(col.origin);
                exprs.push(self.slot_expr(from, slot)?);
                columns.push((col.name.clone(), col.ty.clone()));
                origins.push(col.origin);
                asts.push(None);
            }
        }
        let pre = PreProjection {
            scope: from,
            es: &es,
        };
        self.finish_select(s, node, exprs, columns, origins, asts, order_by, pre)
    }
}

/// The output name of a select item: its alias, or the last name of a path.
pub(super) fn item_name(e: &Expr, alias: Option<&Ident>) -> String {
    if let Some(a) = alias {
        return a.value.clone();
    }
    match e {
        Expr::Column { path, .. } => path.last().map(|i| i.value.clone()).unwrap_or_default(),
        Expr::Field { field, .. } => field.value.clone(),
        _ => String::new(),
    }
}

/// The expression `expr.*` expands: `expr` itself, or the path `a.b` of
/// `a.b.*` when that names no table.
pub(super) fn dot_star_target(qualifier: &[Ident], expr: Option<&Expr>) -> Expr {
    match expr {
        Some(e) => e.clone(),
        None => Expr::Column {
            path: qualifier.to_vec(),
            span: crate::scope::path_span(qualifier),
        },
    }
}

/// The columns of `expr.*`: one per STRUCT field, named by the field
/// (anonymous fields give unnamed columns). Other types are refused as
/// GoogleSQL does.
pub(super) fn dot_star_fields(b: BoundExpr, span: Span) -> Result<Vec<(String, BoundExpr)>> {
    b.struct_fields().ok_or_else(|| {
        Error::invalid_at(
            span,
            format!("Dot-star is not supported for type {}", b.ty()),
        )
    })
}
