//! GROUP BY, aggregate functions and HAVING.
//!
//! When a SELECT aggregates, its select list, HAVING and ORDER BY are bound
//! in the *post-aggregation* scope: the group keys, then one slot per
//! distinct aggregate call. A group key is a select ordinal, a select
//! alias, or an expression of the FROM scope; a non-column key is
//! matched structurally and replaced by its slot `$group{i}`. Aggregate
//! calls are found by the expression binder's hook ([`AggContext`]): their
//! arguments are bound in the FROM scope. The clauses are bound over a
//! placeholder leaf, since ORDER BY may add aggregates too; the `Aggregate`
//! node is then built and spliced in underneath.

use std::cell::RefCell;

use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{self, Expr, Ident, Literal, Select, SelectItem};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::expr_tree::{self, canonical, has_aggregate, same};
use crate::plan::{AggregateCall, Node, NodeKind};
use crate::scope::{Resolved, RowScope, ScopeColumn};

use super::expr_scope::{AggContext, ExprScope};
use super::order_by::PreProjection;
use super::select::{dot_star_fields, dot_star_target, item_name};
use super::typing::groupable;
use super::{Binder, Outer, Output};

impl Binder<'_> {
    pub(super) fn aggregate_select(
        &self,
        s: &Select,
        node: Node,
        from: &RowScope,
        outer: Option<&Outer<'_>>,
        order_by: &[ast::OrderByItem],
    ) -> Result<Output> {
        // Group keys: ordinals and select aliases name select items.
        let mut group_asts = Vec::new();
        for g in &s.group_by {
            let e = match g {
                Expr::Literal {
                    value: Literal::Integer(t),
                    span,
                } => {
                    let n: usize = t.parse().unwrap_or(0);
                    match s.items.get(n.wrapping_sub(1)) {
                        Some(SelectItem::Expr { expr, .. }) => expr.clone(),
                        _ => {
                            return Err(Error::invalid_at(
                                *span,
                                format!("GROUP BY is out of SELECT column number range: {n}"),
                            ))
                        }
                    }
                }
                Expr::Column { path, .. }
                    if path.len() == 1 && matches!(from.resolve(path), Ok(Resolved::NotFound)) =>
                {
                    match s.items.iter().find_map(|i| match i {
                        SelectItem::Expr {
                            expr,
                            alias: Some(a),
                        } if a.matches(&path[0].value) => Some(expr.clone()),
                        _ => None,
                    }) {
                        Some(e) => e,
                        None => g.clone(),
                    }
                }
                other => other.clone(),
            };
            if has_aggregate(&e) {
                return Err(Error::invalid_at(
                    e.span(),
                    "Aggregate function not allowed in GROUP BY",
                ));
            }
            group_asts.push(e);
        }
        let es = ExprScope::new(self, from, outer, "GROUP BY clause");
        let mut groups = Vec::new();
        let mut post = RowScope::default();
        let mut group_from_slot = Vec::new();
        for (i, g) in group_asts.iter().enumerate() {
            let b = self.bind_in(g, &es)?;
            if !groupable(b.ty()) {
                return Err(Error::invalid_at(
                    g.span(),
                    format!("Grouping by expressions of type {} is not allowed", b.ty()),
                ));
            }
            let from_slot = match g {
                Expr::Column { path, .. } => match from.resolve(path)? {
                    Resolved::Slot(s, _) => Some(s),
                    Resolved::NotFound => None,
                },
                _ => None,
            };
            group_from_slot.push(from_slot);
            let column = match from_slot {
                Some(s) => ScopeColumn {
                    origin: None,
                    ..from.columns[s].clone()
                },
                None => ScopeColumn {
                    name: format!("$group{i}"),
                    ty: b.ty().clone(),
                    in_star: false,
                    unqualified: true,
                    origin: None,
                },
            };
            post.columns.push(column);
            groups.push(b);
        }
        for (alias, slots) in &from.tables {
            let mine: Vec<usize> = group_from_slot
                .iter()
                .enumerate()
                .filter(|(_, fs)| fs.is_some_and(|f| slots.contains(&f)))
                .map(|(i, _)| i)
                .collect();
            post.tables.push((alias.clone(), mine));
        }
        let agg = AggContext {
            from,
            groups: groups.len(),
            calls: RefCell::new(Vec::new()),
            keys: RefCell::new(Vec::new()),
        };
        let group_count = groups.len();
        let non_column_groups: Vec<(usize, &Expr)> = group_asts
            .iter()
            .enumerate()
            .filter(|(i, _)| group_from_slot[*i].is_none())
            .collect();
        let rewrite = |e: &Expr| -> Expr {
            expr_tree::rewrite(e, &|x: &Expr| {
                if let Expr::Function { name, .. } = x {
                    if rowtree_expr::is_aggregate_function(&name.value) {
                        return Some(x.clone());
                    }
                }
                non_column_groups
                    .iter()
                    .find(|(_, g)| same(g, x))
                    .map(|(i, _)| Expr::Column {
                        path: vec![Ident {
                            value: format!("$group{i}"),
                            span: x.span(),
                        }],
                        span: x.span(),
                    })
            })
        };
        let mut es = ExprScope::new(self, &post, outer, "SELECT list");
        es.agg = Some(&agg);
        let mut exprs = Vec::new();
        let mut columns = Vec::new();
        let mut asts = Vec::new();
        for item in &s.items {
            match item {
                SelectItem::Expr { expr, alias } => {
                    let b = self.bind_in(&rewrite(expr), &es)?;
                    columns.push((item_name(expr, alias.as_ref()), b.ty().clone()));
                    exprs.push(b);
                    asts.push(Some(expr.clone()));
                }
                SelectItem::QualifiedStar {
                    qualifier,
                    expr,
                    span,
                } if expr.is_some()
                    || qualifier.len() != 1
                    || from.table_star(&qualifier[0].value).is_none() =>
                {
                    // `expr.*` on a STRUCT value: one column per field.
                    let target = dot_star_target(qualifier, expr.as_deref());
                    let b = self.bind_in(&rewrite(&target), &es)?;
                    for (name, field) in dot_star_fields(b, *span)? {
                        columns.push((name, field.ty().clone()));
                        exprs.push(field);
                        asts.push(None);
                    }
                }
                SelectItem::Star { span, .. } | SelectItem::QualifiedStar { span, .. } => {
                    // GoogleSQL: every column of * must be grouped.
                    let star_slots: Vec<usize> = match item {
                        SelectItem::QualifiedStar { qualifier, .. } => {
                            from.table_star(&qualifier[0].value).unwrap_or_default()
                        }
                        _ => from.star.clone(),
                    };
                    for slot in star_slots {
                        let Some(g) = group_from_slot.iter().position(|f| *f == Some(slot)) else {
                            return Err(Error::invalid_at(
                                *span,
                                format!(
                                    "SELECT list expression references column {} which is neither grouped nor aggregated",
                                    from.columns[slot].name
                                ),
                            ));
                        };
                        exprs.push(self.slot_expr(&post, g)?);
                        columns.push((
                            from.columns[slot].name.clone(),
                            from.columns[slot].ty.clone(),
                        ));
                        asts.push(None);
                    }
                }
            }
        }
        let having = match &s.having {
            Some(h) => {
                let hs = es.with_clause("HAVING clause");
                // HAVING sees the SELECT list's aliases (FROM names first).
                let with_aliases = expr_tree::rewrite(h, &|x: &Expr| match x {
                    Expr::Column { path, .. }
                        if path.len() == 1
                            && matches!(from.resolve(path), Ok(Resolved::NotFound)) =>
                    {
                        s.items.iter().find_map(|i| match i {
                            SelectItem::Expr {
                                expr,
                                alias: Some(a),
                            } if a.matches(&path[0].value) => Some(expr.clone()),
                            _ => None,
                        })
                    }
                    _ => None,
                });
                Some((
                    self.bind_bool(&rewrite(&with_aliases), &hs, "HAVING clause")?,
                    expr_tree::text(h),
                ))
            }
            None => None,
        };
        // ORDER BY may add aggregates too, so the Aggregate node is built after it.
        let pre = PreProjection {
            scope: &post,
            es: &es,
        };
        let rewrite_ref: &dyn Fn(&Expr) -> Expr = &rewrite;
        let pre = PreProjection { ..pre };
        let origins = vec![None; exprs.len()];
        // Bind ORDER BY extras now through finish_select with a placeholder input,
        // then splice the real aggregate input underneath.
        let placeholder = Node::new(NodeKind::Values { rows: vec![] }, post.width());
        let out = self.finish_select_with(
            s,
            placeholder,
            exprs,
            columns,
            origins,
            asts,
            order_by,
            pre,
            rewrite_ref,
        )?;
        let calls = agg.calls.into_inner();
        let mut texts: Vec<String> = group_asts.iter().map(expr_tree::text).collect();
        texts.extend(calls.iter().map(|c| c.text.clone()));
        let width = group_count + calls.len();
        let mut input = Node::new(
            NodeKind::Aggregate {
                input: Box::new(node),
                groups,
                aggregates: calls,
                texts,
            },
            width,
        );
        if let Some((predicate, text)) = having {
            input = Node::filter(input, predicate, text);
        }
        let Output {
            mut node,
            columns,
            origins,
        } = out;
        splice(&mut node, input);
        Ok(Output {
            node,
            columns,
            origins,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_select_with(
        &self,
        s: &Select,
        node: Node,
        exprs: Vec<BoundExpr>,
        columns: Vec<(String, Type)>,
        origins: Vec<Option<(usize, usize)>>,
        asts: Vec<Option<Expr>>,
        order_by: &[ast::OrderByItem],
        pre: PreProjection<'_, '_, '_>,
        rewrite: &dyn Fn(&Expr) -> Expr,
    ) -> Result<Output> {
        let pre = PreProjection {
            scope: pre.scope,
            es: pre.es,
        };
        // Rewrite ORDER BY expressions over group keys before binding.
        let order: Vec<ast::OrderByItem> = order_by
            .iter()
            .map(|o| ast::OrderByItem {
                expr: if matches!(o.expr, Expr::Literal { .. }) {
                    o.expr.clone()
                } else {
                    rewrite(&o.expr)
                },
                ..o.clone()
            })
            .collect();
        // Matching select items by AST must use the rewritten forms too.
        let asts: Vec<Option<Expr>> = asts.into_iter().map(|a| a.map(|e| rewrite(&e))).collect();
        self.finish_select(s, node, exprs, columns, origins, asts, &order, pre)
    }

    pub(super) fn bind_aggregate(
        &self,
        agg: &AggContext<'_>,
        call: &Expr,
        outer: Option<&Outer<'_>>,
    ) -> Result<(usize, Type)> {
        let Expr::Function {
            name,
            args,
            distinct,
            modifiers,
            span,
            ..
        } = call
        else {
            return Err(Error::internal("aggregate hook called on a non-call"));
        };
        let key = canonical(call).to_ascii_lowercase();
        if let Some(j) = agg.keys.borrow().iter().position(|k| *k == key) {
            let ty = agg.calls.borrow()[j].ty.clone();
            return Ok((agg.groups + j, ty));
        }
        let es = ExprScope::new(self, agg.from, outer, "aggregate function argument");
        let mut bound = Vec::new();
        for a in args {
            if matches!(a, Expr::Star { .. }) {
                continue;
            }
            if has_aggregate(a) {
                return Err(Error::invalid_at(
                    a.span(),
                    "Aggregations of aggregations are not allowed",
                ));
            }
            bound.push(self.bind_in(a, &es)?);
        }
        let types: Vec<Type> = bound.iter().map(|b| b.ty().clone()).collect();
        let ty = rowtree_expr::aggregate::aggregate_signature(&name.value, &types, *distinct)
            .map_err(|e| Error::from(e).at(*span))?;
        let mut order_by = Vec::new();
        let mut limit = None;
        let mut ignore_nulls = None;
        if let Some(m) = modifiers {
            ignore_nulls = m.ignore_nulls;
            for o in &m.order_by {
                let b = self.bind_in(&o.expr, &es)?;
                order_by.push((b, o.desc, o.nulls_first.unwrap_or(!o.desc)));
            }
            if let Some(l) = &m.limit {
                limit = Some(self.count(l, "LIMIT")?);
            }
        }
        let mut calls = agg.calls.borrow_mut();
        calls.push(AggregateCall {
            name: name.value.to_ascii_uppercase(),
            args: bound,
            distinct: *distinct,
            ignore_nulls,
            order_by,
            limit,
            ty: ty.clone(),
            text: expr_tree::text(call),
        });
        agg.keys.borrow_mut().push(key);
        Ok((agg.groups + calls.len() - 1, ty))
    }
}

/// Replaces the placeholder leaf (an empty `Values`) under `node` with `input`.
pub(super) fn splice(node: &mut Node, input: Node) {
    let mut slot = Some(input);
    splice_inner(node, &mut slot);
}

pub(super) fn splice_inner(node: &mut Node, input: &mut Option<Node>) {
    if input.is_none() {
        return;
    }
    match &mut node.kind {
        NodeKind::Values { rows } if rows.is_empty() => {
            if let Some(i) = input.take() {
                *node = i;
            }
        }
        NodeKind::Filter { input: c, .. }
        | NodeKind::Project { input: c, .. }
        | NodeKind::Aggregate { input: c, .. }
        | NodeKind::Sort { input: c, .. }
        | NodeKind::Limit { input: c, .. }
        | NodeKind::Distinct { input: c }
        | NodeKind::Unnest { input: c, .. }
        | NodeKind::Window { input: c, .. } => splice_inner(c, input),
        _ => {}
    }
}
