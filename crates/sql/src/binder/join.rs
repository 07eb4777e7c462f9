//! Joins: INNER, LEFT, RIGHT, FULL and CROSS, with ON or USING.
//!
//! The ON condition is split into conjuncts; an equality of one side's
//! expression with the other's (same, groupable type) becomes a hash key.
//! USING hides the right column (the left one for RIGHT JOIN) and, for FULL
//! JOIN, adds the merged `COALESCE(left, right)` column. Equalities of two
//! plain table columns are recorded as predicate-transfer edges (see
//! [`super::transfer`]); scans on the NULL-supplying side of an outer join
//! are marked so WHERE is not pushed into them. A join reading an
//! array of its left side (`JOIN UNNEST(t.arr)`, `JOIN t.arr`) is an UNNEST.
//!
//! The method: NESTED LOOP without keys or under an APPLY/LOOP hint, HASH
//! otherwise. Whether an interleaved parent/child pair runs as a merge is
//! the planner's choice.

use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{
    self, BinaryOp, Expr, Ident, JoinCondition, JoinKind, Literal, Span, TableExpr,
};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::expr_tree::{self, and_all, column_paths, conjuncts, has_subquery};
use crate::plan::{JoinMethod, Node, NodeKind};
use crate::scope::{Origin, Resolved, RowScope, ScopeColumn};

use super::expr_scope::ExprScope;
use super::from::alias_span;
use super::synthetic::{synthetic_column, synthetic_scope};
use super::typing::{common_type, groupable};
use super::{Binder, Outer};

impl Binder<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn join(
        &self,
        kind: JoinKind,
        left: &TableExpr,
        right: &TableExpr,
        condition: &JoinCondition,
        hints: &[ast::Hint],
        span: Span,
        outer: Option<&Outer<'_>>,
    ) -> Result<(Node, RowScope)> {
        let (lnode, lscope) = self.from(left, outer)?;
        // UNNEST of the left side's arrays (a correlated join).
        let lateral = match right {
            TableExpr::Unnest {
                array,
                alias,
                with_offset,
                span,
            } => Some((array.clone(), alias.clone(), with_offset.clone(), *span)),
            TableExpr::Table {
                path, alias, span, ..
            } if path.len() >= 2
                && !matches!(lscope.resolve(&path[..1]), Ok(Resolved::NotFound))
                || (path.len() >= 2
                    && lscope
                        .tables
                        .iter()
                        .any(|(a, _)| a.eq_ignore_ascii_case(&path[0].value))) =>
            {
                let e = Expr::Column {
                    path: path.clone(),
                    span: *span,
                };
                let alias = alias.clone().or_else(|| path.last().cloned());
                Some((e, alias, None, *span))
            }
            _ => None,
        };
        if let Some((array, alias, with_offset, uspan)) = lateral {
            let outer_join = match kind {
                JoinKind::Left => true,
                JoinKind::Inner | JoinKind::Cross => false,
                _ => {
                    return Err(Error::unimplemented(
                        "RIGHT and FULL JOIN with UNNEST are not supported",
                    )
                    .at(span))
                }
            };
            let (node, scope) = self.unnest(
                lnode,
                lscope,
                &array,
                alias.as_ref(),
                &with_offset,
                outer_join,
                uspan,
                outer,
            )?;
            return match condition {
                JoinCondition::None => Ok((node, scope)),
                JoinCondition::On(e) if !outer_join => {
                    let es = ExprScope::new(self, &scope, outer, "ON clause");
                    let p = self.bind_bool(e, &es, "JOIN ON clause")?;
                    Ok((Node::filter(node, p, expr_tree::text(e)), scope))
                }
                _ => Err(Error::unimplemented(
                    "LEFT JOIN UNNEST with a join condition is not supported",
                )
                .at(span)),
            };
        }
        let (rnode, rscope) = self.from(right, outer)?;
        if let Some((alias, _)) = rscope.tables.iter().find(|(a, _)| {
            !a.is_empty() && lscope.tables.iter().any(|(b, _)| b.eq_ignore_ascii_case(a))
        }) {
            return Err(Error::invalid_at(
                alias_span(right, alias).unwrap_or(span),
                format!("Duplicate table alias {alias} in the same FROM clause"),
            ));
        }
        let scans = |n: &Node| {
            let mut out = Vec::new();
            collect_scans(n, &mut out);
            out
        };
        match kind {
            JoinKind::Left => self.nonpushable.borrow_mut().extend(scans(&rnode)),
            JoinKind::Right => self.nonpushable.borrow_mut().extend(scans(&lnode)),
            JoinKind::Full => {
                self.nonpushable.borrow_mut().extend(scans(&rnode));
                self.nonpushable.borrow_mut().extend(scans(&lnode));
            }
            _ => {}
        }
        let mut scope = RowScope::concat(&lscope, &rscope);
        let shift = lscope.width();
        let join_width = scope.width();
        // FULL JOIN USING: (name, left slot, right slot) of each merged column.
        let mut full_using: Vec<(Ident, usize, usize)> = Vec::new();
        let les = ExprScope::new(self, &lscope, outer, "ON clause");
        let res = ExprScope::new(self, &rscope, outer, "ON clause");
        // (left key, right key) of each equality.
        let mut keys: Vec<(BoundExpr, BoundExpr)> = Vec::new();
        // (left column, right column) of each equality of two plain table
        // columns of the same type: the candidates for predicate transfer.
        let mut equal_columns: Vec<(Origin, Origin)> = Vec::new();
        let mut residual: Vec<Expr> = Vec::new();
        match condition {
            JoinCondition::None => {
                if kind != JoinKind::Cross && kind != JoinKind::Inner {
                    return Err(Error::invalid_at(
                        span,
                        "Join must have an ON or USING clause",
                    ));
                }
            }
            JoinCondition::On(e) => {
                for c in conjuncts(e) {
                    if let Expr::Binary {
                        op: BinaryOp::Eq,
                        left: a,
                        right: b,
                        ..
                    } = c
                    {
                        if !has_subquery(c) {
                            let sa = side(a, &lscope, &rscope);
                            let sb = side(b, &lscope, &rscope);
                            let pair = match (sa, sb) {
                                (Side::Left, Side::Right) => Some((&**a, &**b)),
                                (Side::Right, Side::Left) => Some((&**b, &**a)),
                                _ => None,
                            };
                            if let Some((l, r)) = pair {
                                let lb = self.bind_in(l, &les)?;
                                let rb = self.bind_in(r, &res)?;
                                if lb.ty() == rb.ty() && groupable(lb.ty()) {
                                    if let (Some(lo), Some(ro)) =
                                        (plain_origin(l, &lscope), plain_origin(r, &rscope))
                                    {
                                        equal_columns.push((lo, ro));
                                    }
                                    keys.push((lb, rb));
                                    residual.push(c.clone());
                                    continue;
                                }
                            }
                        }
                    }
                    residual.push(c.clone());
                }
            }
            JoinCondition::Using(names) => {
                let mut using_slots = Vec::new();
                for n in names {
                    let p = std::slice::from_ref(n);
                    let Ok(Resolved::Slot(ls, lt)) = lscope.resolve(p) else {
                        return Err(Error::invalid_at(
                            n.span,
                            format!(
                                "Column {} in USING clause not found on left side of join",
                                n.value
                            ),
                        ));
                    };
                    let Ok(Resolved::Slot(rs, rt)) = rscope.resolve(p) else {
                        return Err(Error::invalid_at(
                            n.span,
                            format!(
                                "Column {} in USING clause not found on right side of join",
                                n.value
                            ),
                        ));
                    };
                    if common_type(&lt, &rt).is_none() {
                        return Err(Error::invalid_at(n.span, format!("Column {} in USING has incompatible types on either side of the join: {lt} and {rt}", n.value)));
                    }
                    self.used.borrow().mark(lscope.columns[ls].origin);
                    self.used.borrow().mark(rscope.columns[rs].origin);
                    let lb = self.slot_expr(&lscope, ls)?;
                    let rb = self.slot_expr(&rscope, rs)?;
                    if kind == JoinKind::Full {
                        // Either side may be missing: the merged column is
                        // COALESCE(left, right), a new slot after the join's.
                        for hide in [ls, rs + shift] {
                            scope.columns[hide].unqualified = false;
                            scope.columns[hide].in_star = false;
                        }
                        using_slots.push(join_width + full_using.len());
                        full_using.push((n.clone(), ls, rs + shift));
                    } else {
                        let (hide, keep) = if kind == JoinKind::Right {
                            (ls, rs + shift)
                        } else {
                            (rs + shift, ls)
                        };
                        scope.columns[hide].unqualified = false;
                        scope.columns[hide].in_star = false;
                        using_slots.push(keep);
                    }
                    if lt == rt {
                        if let (Some(lo), Some(ro)) =
                            (lscope.columns[ls].origin, rscope.columns[rs].origin)
                        {
                            equal_columns.push((lo, ro));
                        }
                        keys.push((lb, rb));
                    } else {
                        let eq = Expr::Binary {
                            op: BinaryOp::Eq,
                            left: Box::new(Expr::Column {
                                path: vec![Ident {
                                    value: format!("$c{ls}"),
                                    span: n.span,
                                }],
                                span: n.span,
                            }),
                            right: Box::new(Expr::Column {
                                path: vec![Ident {
                                    value: format!("$c{}", rs + shift),
                                    span: n.span,
                                }],
                                span: n.span,
                            }),
                            span: n.span,
                        };
                        residual.push(eq);
                    }
                }
                let rest: Vec<usize> = scope
                    .star
                    .iter()
                    .copied()
                    .filter(|s| scope.columns[*s].in_star && !using_slots.contains(s))
                    .collect();
                scope.star = using_slots.into_iter().chain(rest).collect();
            }
        }
        {
            let mut transfers = self.transfers.borrow_mut();
            for (lo, ro) in equal_columns {
                match kind {
                    JoinKind::Inner | JoinKind::Cross => {
                        transfers.push((lo, ro));
                        transfers.push((ro, lo));
                    }
                    JoinKind::Left => transfers.push((lo, ro)),
                    JoinKind::Right => transfers.push((ro, lo)),
                    JoinKind::Full => {}
                }
            }
        }
        // USING's synthetic comparisons bind against slot names.
        let residual_pred = and_all(residual);
        let condition = match &residual_pred {
            None => None,
            Some(p) => {
                let uses_synthetic = {
                    let mut paths = Vec::new();
                    column_paths(p, &mut paths);
                    paths
                        .iter()
                        .any(|p| p.len() == 1 && p[0].value.starts_with("$c"))
                };
                if uses_synthetic {
                    let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
                    let syn = synthetic_scope(&types);
                    let es = ExprScope::new(self, &syn, outer, "ON clause");
                    Some(self.bind_bool(p, &es, "JOIN ON clause")?)
                } else {
                    let es = ExprScope::new(self, &scope, outer, "ON clause");
                    Some(self.bind_bool(p, &es, "JOIN ON clause")?)
                }
            }
        };
        let text = residual_pred
            .as_ref()
            .map(expr_tree::text)
            .unwrap_or_default();
        let hint = hints
            .iter()
            .find(|h| h.name.matches("JOIN_METHOD"))
            .and_then(|h| match &h.value {
                Expr::Column { path, .. } => path.last().map(|i| i.value.to_ascii_uppercase()),
                Expr::Literal {
                    value: Literal::String(s),
                    ..
                } => Some(s.to_ascii_uppercase()),
                _ => None,
            });
        // An interleaved parent/child pair may still run as a merge: the
        // planner decides (its `interleaved_merge` pass), unless a hint asks
        // for another method.
        let merge_allowed = hint.is_none() || hint.as_deref() == Some("MERGE_JOIN");
        let method = if keys.is_empty()
            || hint.as_deref() == Some("APPLY_JOIN")
            || hint.as_deref() == Some("LOOP_JOIN")
        {
            JoinMethod::NestedLoop
        } else {
            let (left_keys, right_keys) = keys.into_iter().unzip();
            JoinMethod::Hash {
                left_keys,
                right_keys,
            }
        };
        let node = Node::new(
            NodeKind::Join {
                left: Box::new(lnode),
                right: Box::new(rnode),
                kind,
                method,
                merge_allowed,
                condition,
                text,
            },
            join_width,
        );
        if full_using.is_empty() {
            return Ok((node, scope));
        }
        self.merge_full_using(node, scope, &full_using)
    }

    /// Appends the merged `COALESCE(left, right)` column of each FULL JOIN
    /// USING name to the join's row (the slots `using_slots` already points
    /// `*` at) and makes it what the unqualified name resolves to.
    fn merge_full_using(
        &self,
        node: Node,
        mut scope: RowScope,
        full_using: &[(Ident, usize, usize)],
    ) -> Result<(Node, RowScope)> {
        let width = node.width;
        let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
        let syn = synthetic_scope(&types);
        let es = ExprScope::new(self, &syn, None, "USING clause");
        let mut exprs = (0..width)
            .map(|i| self.bind_in(&synthetic_column(i, Span::default()), &es))
            .collect::<Result<Vec<_>>>()?;
        let mut names: Vec<String> = scope.columns.iter().map(|c| c.name.clone()).collect();
        for (name, ls, rs) in full_using {
            let coalesce = Expr::Function {
                name: Ident {
                    value: "COALESCE".into(),
                    span: name.span,
                },
                args: vec![
                    synthetic_column(*ls, name.span),
                    synthetic_column(*rs, name.span),
                ],
                safe: false,
                distinct: false,
                modifiers: None,
                span: name.span,
            };
            let b = self.bind_in(&coalesce, &es)?;
            scope.columns.push(ScopeColumn {
                name: name.value.clone(),
                ty: b.ty().clone(),
                in_star: true,
                unqualified: true,
                origin: None,
            });
            names.push(name.value.clone());
            exprs.push(b);
        }
        Ok((Node::project(node, exprs, names), scope))
    }
}

pub(super) enum Side {
    Left,
    Right,
    Neither,
    Both,
}

/// Which join input an expression reads.
pub(super) fn side(e: &Expr, left: &RowScope, right: &RowScope) -> Side {
    let mut paths = Vec::new();
    column_paths(e, &mut paths);
    let (mut l, mut r) = (false, false);
    for p in paths {
        let in_l = matches!(left.resolve(p), Ok(Resolved::Slot(..)));
        let in_r = matches!(right.resolve(p), Ok(Resolved::Slot(..)));
        match (in_l, in_r) {
            (true, false) => l = true,
            (false, true) => r = true,
            (true, true) => return Side::Both,
            _ => {}
        }
    }
    match (l, r) {
        (true, false) => Side::Left,
        (false, true) => Side::Right,
        (false, false) => Side::Neither,
        _ => Side::Both,
    }
}

/// The table column (scan, column) a plain column reference reads.
pub(super) fn plain_origin(e: &Expr, scope: &RowScope) -> Option<Origin> {
    match e {
        Expr::Column { path, .. } => match scope.resolve(path).ok()? {
            Resolved::Slot(s, _) => scope.columns[s].origin,
            Resolved::NotFound => None,
        },
        _ => None,
    }
}

pub(super) fn collect_scans(n: &Node, out: &mut Vec<usize>) {
    if let NodeKind::Scan(s) = &n.kind {
        out.push(s.scan_id);
    }
    for c in n.children() {
        collect_scans(c, out);
    }
}
