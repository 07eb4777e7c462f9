//! `IN`: against a list of values, a subquery or `UNNEST(array)`. The
//! needle and the candidates must have an equality-comparable common type;
//! evaluation compares across numeric types exactly, so only an untyped
//! literal needle is coerced.

use rowtree_parser::ast::{self, Expr, Span};
use rowtree_types::{Type, Value};

use super::coerce::{comparison_supertype, equality_comparable, supertype, type_names};
use super::{invalid_at, Binder, SubqueryKind};
use crate::bound::{BoundExpr, Node};
use crate::membership::next_set_id;
use crate::Result;

impl Binder<'_> {
    /// `expr [NOT] IN (a, b, ...)`.
    pub(super) fn bind_in_list(
        &self,
        expr: &Expr,
        list: &[Expr],
        negated: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let needle = self.bind(expr)?;
        let list = list
            .iter()
            .map(|i| self.bind(i))
            .collect::<Result<Vec<_>>>()?;
        let all: Vec<&BoundExpr> = std::iter::once(&needle).chain(list.iter()).collect();
        let ty = comparison_supertype(&all)
            .filter(equality_comparable)
            .ok_or_else(|| {
                invalid_at(
                    span,
                    format!(
                        "No matching signature for operator IN for argument types: {}",
                        type_names(&[&[needle.clone()][..], &list[..]].concat())
                    ),
                )
            })?;
        let needle = self.coerce(needle, &ty)?;
        let list: Vec<BoundExpr> = list
            .into_iter()
            .map(|i| self.coerce(i, &ty))
            .collect::<Result<_>>()?;
        let set =
            (ty.is_key_type() && list.iter().all(BoundExpr::is_row_independent)).then(next_set_id);
        Ok(BoundExpr::new(
            Node::InList {
                expr: Box::new(needle),
                list,
                negated,
                set,
            },
            Type::Bool,
            span,
        ))
    }

    /// `expr [NOT] IN (SELECT ...)` (`e` is the whole node, for the scope).
    pub(super) fn bind_in_subquery(
        &self,
        e: &Expr,
        expr: &Expr,
        query: &ast::Query,
        negated: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let needle = self.bind(expr)?;
        let (id, ty) = self.plan_subquery(e, query, SubqueryKind::In, span)?;
        let elem = match ty {
            Type::Array(elem) => *elem,
            other => other,
        };
        let needle = self.coerce_in_needle(needle, &elem, span)?;
        Ok(BoundExpr::new(
            Node::InSubquery {
                expr: Box::new(needle),
                id,
                negated,
            },
            Type::Bool,
            span,
        ))
    }

    /// `expr [NOT] IN UNNEST(array)`.
    pub(super) fn bind_in_unnest(
        &self,
        expr: &Expr,
        array: &Expr,
        negated: bool,
        span: Span,
    ) -> Result<BoundExpr> {
        let needle = self.bind(expr)?;
        let array = self.bind(array)?;
        let elem = match &array.ty {
            _ if array.is_null_literal() => needle.ty.clone(),
            Type::Array(elem) => (**elem).clone(),
            other => {
                return Err(invalid_at(
                    array.span,
                    format!("Second argument of IN UNNEST must be an array but was {other}"),
                ))
            }
        };
        let array = self.coerce(array, &Type::Array(Box::new(elem.clone())))?;
        let needle = self.coerce_in_needle(needle, &elem, span)?;
        let set = (elem.is_key_type() && array.is_row_independent()).then(next_set_id);
        Ok(BoundExpr::new(
            Node::InUnnest {
                expr: Box::new(needle),
                array: Box::new(array),
                negated,
                set,
            },
            Type::Bool,
            span,
        ))
    }

    /// Checks that `needle IN <candidates of type elem>` is comparable and
    /// coerces the needle to the common type.
    pub(super) fn coerce_in_needle(
        &self,
        needle: BoundExpr,
        elem: &Type,
        span: Span,
    ) -> Result<BoundExpr> {
        let probe = BoundExpr::new(Node::Literal(Value::Null), elem.clone(), span);
        let ty = supertype(&[&needle, &probe])
            .filter(equality_comparable)
            .ok_or_else(|| {
                invalid_at(
                    span,
                    format!(
                        "No matching signature for operator IN for argument types: {}, {elem}",
                        needle.type_name()
                    ),
                )
            })?;
        // The candidates are not coerced; comparison across numeric types
        // is exact, so only the needle needs the common type when it is an
        // untyped literal.
        if needle.literal {
            self.coerce(needle, &ty)
        } else {
            Ok(needle)
        }
    }
}
