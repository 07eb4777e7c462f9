//! The typed expression tree produced by [`crate::bind`].

use rowtree_parser::ast::Span;
use rowtree_types::{Type, Value};

use crate::{EvalContext, Result};

/// A bound (resolved and typed) expression, ready to evaluate.
#[derive(Debug, Clone)]
pub struct BoundExpr {
    pub(crate) ty: Type,
    pub(crate) span: Span,
}

impl BoundExpr {
    /// The static type of the expression's result.
    pub fn ty(&self) -> &Type {
        &self.ty
    }

    /// The source range of the expression.
    pub fn span(&self) -> Span {
        self.span
    }

    /// Evaluates against `row` (indexed by the slots [`crate::Scope`] handed out).
    pub fn eval(&self, row: &[Value], ctx: &mut dyn EvalContext) -> Result<Value> {
        let _ = (row, ctx);
        todo!()
    }

    /// The row slots the expression reads, sorted and without duplicates.
    pub fn columns(&self) -> Vec<usize> {
        todo!()
    }

    /// Sequences named in `GET_NEXT_SEQUENCE_VALUE` / `GET_INTERNAL_SEQUENCE_STATE`.
    pub fn sequences(&self) -> Vec<String> {
        todo!()
    }

    /// Whether evaluating twice on the same row always gives the same value.
    pub fn is_deterministic(&self) -> bool {
        todo!()
    }

    /// Whether the expression calls `PENDING_COMMIT_TIMESTAMP()`.
    pub fn uses_pending_commit_timestamp(&self) -> bool {
        todo!()
    }
}
