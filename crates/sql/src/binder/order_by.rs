//! ORDER BY, DISTINCT and `SELECT AS STRUCT`: what follows the select list.
//!
//! An ORDER BY key is a select item (by ordinal, alias, or the same
//! expression) or any expression of the FROM scope: such an *extra* is
//! computed as a hidden column after the select list, sorted on, then
//! dropped by a projection. Keys remember the table column they read
//! (`origin`), so the planner can see when the key order already gives the
//! sort. Over a set operation's output only ordinals and output names are
//! visible.

use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{self, Expr, Ident, Literal, Select, SelectItem, Span};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::expr_tree::{self, same};
use crate::plan::{Node, NodeKind, SortKey};
use crate::scope::{Resolved, RowScope};

use super::expr_scope::ExprScope;
use super::synthetic::{synthetic_column, synthetic_scope, trim};
use super::typing::groupable;
use super::{Binder, Outer, Output};

impl Binder<'_> {
    /// ORDER BY over a set operation's (or parenthesised query's) output.
    pub(super) fn order_output(
        &self,
        o: Output,
        order_by: &[ast::OrderByItem],
        outer: Option<&Outer<'_>>,
    ) -> Result<Output> {
        if order_by.is_empty() {
            return Ok(o);
        }
        let types: Vec<Type> = o.columns.iter().map(|(_, t)| t.clone()).collect();
        let scope = RowScope::single(
            "",
            o.columns
                .iter()
                .map(|(n, t)| (n.clone(), t.clone(), true, None))
                .collect(),
        );
        let mut scope = scope;
        scope.tables.clear();
        let es = ExprScope::new(self, &scope, outer, "ORDER BY clause");
        let width = types.len();
        let mut extras = Vec::new();
        let mut keys = Vec::new();
        for item in order_by {
            let slot = match self.ordinal(&item.expr, width)? {
                Some(i) => i,
                None => {
                    let b = self.bind_in(&item.expr, &es)?;
                    extras.push(b);
                    width + extras.len() - 1
                }
            };
            keys.push(sort_key(item, slot, None));
        }
        let Output {
            node,
            columns,
            origins,
        } = o;
        let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
        let node = sort_with_extras(self, node, &types, extras, keys, &names)?;
        Ok(Output {
            node,
            columns,
            origins,
        })
    }

    /// `ORDER BY 2`: the 0-based output slot.
    fn ordinal(&self, e: &Expr, width: usize) -> Result<Option<usize>> {
        if let Expr::Literal {
            value: Literal::Integer(text),
            span,
        } = e
        {
            let n: i64 = text.parse().unwrap_or(0);
            if n < 1 || n as usize > width {
                return Err(Error::invalid_at(*span, format!("ORDER BY column number exceeds the number of columns in the SELECT list: {n}")));
            }
            return Ok(Some(n as usize - 1));
        }
        Ok(None)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_select(
        &self,
        s: &Select,
        node: Node,
        mut exprs: Vec<BoundExpr>,
        mut columns: Vec<(String, Type)>,
        mut origins: Vec<Option<(usize, usize)>>,
        asts: Vec<Option<Expr>>,
        order_by: &[ast::OrderByItem],
        pre: PreProjection<'_, '_, '_>,
    ) -> Result<Output> {
        let n = exprs.len();
        // ORDER BY: ordinal, select alias, same expression as an item, or extra column.
        let mut keys = Vec::new();
        let mut extras = 0;
        for item in order_by {
            let slot = if let Some(i) = self.ordinal(&item.expr, n)? {
                i
            } else if let Some(i) = alias_slot(&item.expr, s) {
                i
            } else if let Some(i) = asts
                .iter()
                .position(|a| a.as_ref().is_some_and(|a| same(a, &item.expr)))
            {
                i
            } else {
                if s.distinct {
                    return Err(Error::invalid_at(
                        item.expr.span(),
                        "ORDER BY clause expression references a column that is not visible after SELECT DISTINCT",
                    ));
                }
                let e = pre.rewrite(&item.expr);
                let b = self.bind_in(&e, &pre.es.with_clause("ORDER BY clause"))?;
                let origin = match &item.expr {
                    Expr::Column { path, .. } => match pre.scope.resolve(path) {
                        Ok(Resolved::Slot(s, _)) => pre.scope.columns[s].origin,
                        _ => None,
                    },
                    _ => None,
                };
                columns.push((String::new(), b.ty().clone()));
                origins.push(origin);
                exprs.push(b);
                extras += 1;
                n + extras - 1
            };
            if !columns[slot].1.is_orderable() {
                return Err(Error::invalid_at(
                    item.expr.span(),
                    format!(
                        "ORDER BY does not support expressions of type {}",
                        columns[slot].1
                    ),
                ));
            }
            keys.push(sort_key(item, slot, origins[slot]));
        }
        let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
        let mut node = Node::project(node, exprs, names);
        if s.distinct {
            if let Some((_, t)) = columns.iter().find(|(_, t)| !groupable(t)) {
                return Err(Error::invalid_at(
                    s.span,
                    format!("Column of type {t} cannot be used in SELECT DISTINCT"),
                ));
            }
            let width = node.width;
            node = Node::new(
                NodeKind::Distinct {
                    input: Box::new(node),
                },
                width,
            );
        }
        if !keys.is_empty() {
            let width = node.width;
            node = Node::new(
                NodeKind::Sort {
                    input: Box::new(node),
                    keys,
                },
                width,
            );
        }
        columns.truncate(n);
        origins.truncate(n);
        if extras > 0 {
            let types: Vec<Type> = columns.iter().map(|(_, t)| t.clone()).collect();
            node = trim(
                self,
                node,
                &types,
                columns.iter().map(|(n, _)| n.clone()).collect(),
            )?;
        }
        if s.as_struct {
            let types: Vec<Type> = columns.iter().map(|(_, t)| t.clone()).collect();
            let syn = synthetic_scope(&types);
            let es = ExprScope::new(self, &syn, None, "SELECT list");
            let fields = columns
                .iter()
                .enumerate()
                .map(|(i, (name, _))| {
                    let alias = (!name.is_empty()).then(|| Ident {
                        value: name.clone(),
                        span: s.span,
                    });
                    (alias, synthetic_column(i, s.span))
                })
                .collect();
            let b = self.bind_in(
                &Expr::Struct {
                    fields,
                    field_types: None,
                    span: s.span,
                },
                &es,
            )?;
            let ty = b.ty().clone();
            node = Node::project(node, vec![b], vec![String::new()]);
            columns = vec![(String::new(), ty)];
            origins = vec![None];
        }
        Ok(Output {
            node,
            columns,
            origins,
        })
    }
}

/// The scope ORDER BY extras are bound in: before the projection.
pub(super) struct PreProjection<'x, 'a, 'c> {
    pub(super) scope: &'x RowScope,
    pub(super) es: &'x ExprScope<'a, 'c>,
}

impl PreProjection<'_, '_, '_> {
    fn rewrite(&self, e: &Expr) -> Expr {
        e.clone()
    }
}

/// Sorts `node` (width `width`) by keys that may read `extras`, expressions
/// computed over its row: they are appended for the sort, then dropped.
pub(super) fn sort_with_extras(
    binder: &Binder<'_>,
    node: Node,
    types: &[Type],
    extras: Vec<BoundExpr>,
    keys: Vec<SortKey>,
    names: &[String],
) -> Result<Node> {
    let width = types.len();
    if extras.is_empty() {
        return Ok(Node::new(
            NodeKind::Sort {
                input: Box::new(node),
                keys,
            },
            width,
        ));
    }
    let syn = synthetic_scope(types);
    let es = ExprScope::new(binder, &syn, None, "ORDER BY clause");
    let mut exprs = (0..width)
        .map(|i| binder.bind_in(&synthetic_column(i, Span::default()), &es))
        .collect::<Result<Vec<_>>>()?;
    let mut all_names = names.to_vec();
    all_names.extend(extras.iter().map(|_| String::new()));
    exprs.extend(extras);
    let all_types: Vec<Type> = exprs.iter().map(|e| e.ty().clone()).collect();
    let node = Node::project(node, exprs, all_names);
    let node = Node::new(
        NodeKind::Sort {
            input: Box::new(node),
            keys,
        },
        all_types.len(),
    );
    trim(binder, node, types, names.to_vec())
}

pub(super) fn sort_key(
    item: &ast::OrderByItem,
    slot: usize,
    origin: Option<(usize, usize)>,
) -> SortKey {
    SortKey {
        slot,
        desc: item.desc,
        nulls_first: item.nulls_first.unwrap_or(!item.desc),
        origin,
        text: format!(
            "{}{}",
            expr_tree::text(&item.expr),
            if item.desc { " DESC" } else { "" }
        ),
    }
}

/// `ORDER BY name` where `name` is a select-list alias.
pub(super) fn alias_slot(e: &Expr, s: &Select) -> Option<usize> {
    let Expr::Column { path, .. } = e else {
        return None;
    };
    if path.len() != 1 {
        return None;
    }
    let mut i = 0;
    for item in &s.items {
        match item {
            SelectItem::Expr { alias: Some(a), .. } if a.matches(&path[0].value) => return Some(i),
            SelectItem::Expr { .. } => i += 1,
            // After a star the positions are not known from the items alone.
            _ => return None,
        }
    }
    None
}
