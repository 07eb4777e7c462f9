//! Expressions the binder builds itself.
//!
//! Casts for set operations, the STRUCT of `SELECT AS STRUCT`, the
//! projection that drops ORDER BY's extra columns: these read slots of a
//! row, not names the user wrote. They are bound in a *synthetic* scope of
//! anonymous columns `$c0`, `$c1`, ... so the ordinary expression binder
//! types them.

use rowtree_expr::BoundExpr;
use rowtree_parser::ast::{Expr, Ident, Span};
use rowtree_types::Type;

use crate::error::Result;
use crate::plan::Node;
use crate::scope::RowScope;

use super::expr_scope::ExprScope;
use super::Binder;

impl Binder<'_> {
    /// A plain reference to `slot` of `scope`, as a bound expression.
    pub(super) fn slot_expr(&self, scope: &RowScope, slot: usize) -> Result<BoundExpr> {
        let types: Vec<Type> = scope.columns.iter().map(|c| c.ty.clone()).collect();
        let syn = synthetic_scope(&types);
        let es = ExprScope::new(self, &syn, None, "SELECT list");
        self.bind_in(&synthetic_column(slot, Span::default()), &es)
    }
}

/// A row scope of anonymous columns `$c0`, `$c1`, ... for expressions the
/// binder builds itself (casts for set operations, STRUCT for AS STRUCT).
pub(crate) fn synthetic_scope(types: &[Type]) -> RowScope {
    RowScope::single(
        "$synthetic",
        types
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("$c{i}"), t.clone(), false, None))
            .collect(),
    )
}

pub(crate) fn synthetic_column(i: usize, span: Span) -> Expr {
    Expr::Column {
        path: vec![Ident {
            value: format!("$c{i}"),
            span,
        }],
        span,
    }
}

/// Keeps the first `types.len()` columns.
pub(super) fn trim(
    binder: &Binder<'_>,
    node: Node,
    types: &[Type],
    names: Vec<String>,
) -> Result<Node> {
    let mut all = types.to_vec();
    all.resize(node.width, Type::Int64);
    let syn = synthetic_scope(&all);
    let es = ExprScope::new(binder, &syn, None, "SELECT list");
    let exprs = (0..types.len())
        .map(|i| binder.bind_in(&synthetic_column(i, Span::default()), &es))
        .collect::<Result<Vec<_>>>()?;
    Ok(Node::project(node, exprs, names))
}
