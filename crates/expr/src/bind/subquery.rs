//! Subquery expressions: `(SELECT ...)`, `EXISTS (SELECT ...)` and
//! `ARRAY(SELECT ...)` (`IN (SELECT ...)` is in [`membership`](super::membership)).
//! The binder cannot plan a query; it hands the query to
//! [`Scope::bind_subquery`](super::Scope::bind_subquery) and keeps the id
//! the engine returns, which evaluation passes back to the context.

use rowtree_parser::ast::{self, Expr, Span};
use rowtree_types::Type;

use super::{invalid_at, Binder, SubqueryKind};
use crate::bound::{BoundExpr, Node};
use crate::Result;

impl Binder<'_> {
    /// A scalar, `EXISTS` or `ARRAY` subquery (`e` is the whole node).
    pub(super) fn bind_subquery(
        &self,
        e: &Expr,
        query: &ast::Query,
        kind: SubqueryKind,
        span: Span,
    ) -> Result<BoundExpr> {
        let (id, ty) = self.plan_subquery(e, query, kind, span)?;
        // EXISTS is a BOOL whatever the query selects.
        let ty = if kind == SubqueryKind::Exists {
            Type::Bool
        } else {
            ty
        };
        Ok(BoundExpr::new(Node::Subquery { id, kind }, ty, span))
    }

    pub(super) fn plan_subquery(
        &self,
        e: &Expr,
        query: &ast::Query,
        kind: SubqueryKind,
        span: Span,
    ) -> Result<(usize, Type)> {
        match self.scope.bind_subquery(e, query, kind) {
            Some(result) => result.map_err(|err| err.at(span)),
            None => Err(invalid_at(span, "Subqueries are not allowed here")),
        }
    }
}
