//! Binding: resolving names and typing an expression.

use std::collections::HashMap;

use rowtree_parser::ast::{self, Ident};
use rowtree_types::Type;

use crate::{BoundExpr, Result};

/// Where column references are resolved.
pub trait Scope {
    /// Resolves a (possibly qualified) column reference to its slot in the
    /// row passed to [`BoundExpr::eval`] and its type.
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)>;
}

/// Options of [`bind`].
#[derive(Debug, Clone)]
pub struct BindOptions {
    /// Types of query parameters `@name` (names without `@`, case-sensitive).
    pub params: HashMap<String, Type>,
    /// Whether `GET_NEXT_SEQUENCE_VALUE` may be called here.
    pub allow_sequence_functions: bool,
    /// Whether `PENDING_COMMIT_TIMESTAMP()` may be called here.
    pub allow_pending_commit_timestamp: bool,
}

impl Default for BindOptions {
    fn default() -> Self {
        BindOptions {
            params: HashMap::new(),
            allow_sequence_functions: true,
            allow_pending_commit_timestamp: true,
        }
    }
}

/// Resolves and types `expr`.
pub fn bind(expr: &ast::Expr, scope: &dyn Scope, options: &BindOptions) -> Result<BoundExpr> {
    let _ = (expr, scope, options);
    todo!()
}
