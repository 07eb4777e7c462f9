//! UNNEST: one row per array element, optionally with its offset.
//!
//! Alone in FROM, UNNEST runs over a single empty row; joined, it is
//! *lateral*: evaluated for each row of the left side (LEFT JOIN keeps rows
//! whose array is empty). The element of an array of STRUCTs also exposes
//! each uniquely named field as a column.

use rowtree_parser::ast::{Expr, Ident, Span};
use rowtree_types::Type;

use crate::error::{Error, Result};
use crate::expr_tree::{self};
use crate::plan::{Node, NodeKind};
use crate::scope::{RowScope, ScopeColumn};

use super::expr_scope::ExprScope;
use super::synthetic::{synthetic_column, synthetic_scope};
use super::{Binder, Outer};

impl Binder<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn unnest(
        &self,
        input: Node,
        left: RowScope,
        array: &Expr,
        alias: Option<&Ident>,
        with_offset: &Option<Option<Ident>>,
        outer_join: bool,
        span: Span,
        outer: Option<&Outer<'_>>,
    ) -> Result<(Node, RowScope)> {
        let es = ExprScope::new(self, &left, outer, "UNNEST");
        let b = self.bind_in(array, &es)?;
        let Type::Array(elem) = b.ty().clone() else {
            return Err(Error::invalid_at(
                array.span(),
                format!("Values referenced in UNNEST must be arrays. UNNEST contains expression of type {}", b.ty()),
            ));
        };
        let name = alias.map(|a| a.value.clone()).unwrap_or_default();
        let mut cols = vec![(name.clone(), *elem, true, None)];
        if let Some(off) = with_offset {
            cols.push((
                off.as_ref()
                    .map(|o| o.value.clone())
                    .unwrap_or_else(|| "offset".into()),
                Type::Int64,
                true,
                None,
            ));
        }
        let elem_ty = cols[0].1.clone();
        let mut right = RowScope::single(&name, cols);
        // The element is a value, not a range variable with fields
        // (`t.f` is a field access on the value `t`).
        right.tables.clear();
        let elem_slot = left.width();
        let scope = RowScope::concat(&left, &right);
        let width = scope.width();
        let text = expr_tree::text(array);
        let node = Node::new(
            NodeKind::Unnest {
                input: Box::new(input),
                array: b,
                with_offset: with_offset.is_some(),
                outer: outer_join,
                text,
            },
            width,
        );
        match elem_ty {
            Type::Struct(fields) if !fields.is_empty() => {
                self.struct_fields_as_columns(node, scope, elem_slot, &fields, span)
            }
            _ => Ok((node, scope)),
        }
    }

    /// UNNEST of an array of STRUCTs: each field is also a column (after
    /// the row's others), so `SELECT f FROM UNNEST(structs)` works and `*`
    /// expands to the fields. An anonymous or repeated field name has no
    /// column; `*` then keeps the whole STRUCT instead.
    fn struct_fields_as_columns(
        &self,
        node: Node,
        mut scope: RowScope,
        elem_slot: usize,
        fields: &[(String, Type)],
        span: Span,
    ) -> Result<(Node, RowScope)> {
        let width = node.width;
        let named = |n: &str| {
            !n.is_empty()
                && fields
                    .iter()
                    .filter(|(m, _)| m.eq_ignore_ascii_case(n))
                    .count()
                    == 1
        };
        let all_named = fields.iter().all(|(n, _)| named(n));
        let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
        let syn = synthetic_scope(&types);
        let es = ExprScope::new(self, &syn, None, "UNNEST");
        let mut exprs = (0..width)
            .map(|i| self.bind_in(&synthetic_column(i, span), &es))
            .collect::<Result<Vec<_>>>()?;
        let mut names: Vec<String> = scope.columns.iter().map(|c| c.name.clone()).collect();
        let mut field_slots = Vec::new();
        for (field, _) in fields.iter().filter(|(n, _)| named(n)) {
            let access = Expr::Field {
                expr: Box::new(synthetic_column(elem_slot, span)),
                field: Ident {
                    value: field.clone(),
                    span,
                },
                span,
            };
            let b = self.bind_in(&access, &es)?;
            field_slots.push(scope.columns.len());
            scope.columns.push(ScopeColumn {
                name: field.clone(),
                ty: b.ty().clone(),
                in_star: all_named,
                unqualified: true,
                origin: None,
            });
            names.push(field.clone());
            exprs.push(b);
        }
        if all_named {
            scope.columns[elem_slot].in_star = false;
            match scope.star.iter().position(|&s| s == elem_slot) {
                Some(at) => {
                    scope.star.splice(at..at + 1, field_slots);
                }
                None => scope.star.extend(field_slots),
            }
        }
        Ok((Node::project(node, exprs, names), scope))
    }
}
