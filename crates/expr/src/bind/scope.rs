//! What the binder is given: the [`Scope`] that resolves names (and, where
//! the engine allows them, plans aggregates and subqueries), and the
//! [`BindOptions`] of the statement.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rowtree_parser::ast::{self, Ident};
use rowtree_types::{ProtoBundle, Type};

use crate::Result;

/// Where column references (and sequence names) are resolved.
pub trait Scope {
    /// Resolves a (possibly qualified) column reference to its slot in the
    /// row passed to [`BoundExpr::eval`](crate::BoundExpr::eval) and its type; `None` if unknown.
    fn resolve(&self, path: &[Ident]) -> Option<(usize, Type)>;

    /// Whether a sequence of this name exists; `None` (the default) means
    /// "not checked here", and the caller checks
    /// [`BoundExpr::sequences`](crate::BoundExpr::sequences).
    fn sequence_exists(&self, name: &str) -> Option<bool> {
        let _ = name;
        None
    }

    /// A known name close to the unrecognized `name`, for the error's
    /// `Did you mean X?` (see [`closest_name`](crate::closest_name)); `None` (the default) for
    /// no suggestion.
    fn suggest(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }

    /// An aggregate call (`COUNT(*)`, `SUM(DISTINCT x)`, `ARRAY_AGG(x
    /// IGNORE NULLS ORDER BY y LIMIT 3)`, ...; `call` is the whole
    /// [`ast::Expr::Function`]) in a context where the engine computes
    /// aggregates: the slot of the row where its value will be, and its
    /// type. The binder then reads that slot like a column.
    ///
    /// `None` (the default) means aggregates are not allowed here; the
    /// binder reports `Aggregate function SUM not allowed in <context>`
    /// using [`Scope::aggregate_context_name`].
    fn bind_aggregate(&self, call: &ast::Expr) -> Option<Result<(usize, Type)>> {
        let _ = call;
        None
    }

    /// Where aggregates are refused, for the error message: `"WHERE
    /// clause"` gives `Aggregate function SUM not allowed in WHERE clause`.
    /// `None` (the default) gives `... not allowed here`.
    fn aggregate_context_name(&self) -> Option<&str> {
        None
    }

    /// A subquery expression: `expr` is the [`ast::Expr::Subquery`],
    /// [`ast::Expr::Exists`], [`ast::Expr::ArraySubquery`] or
    /// [`ast::Expr::InSubquery`] node and `query` its query. The engine
    /// plans it and returns an id, which evaluation passes to
    /// [`crate::EvalContext::subquery`], and the type of the value that call
    /// returns: [`SubqueryKind::Scalar`] the column's type,
    /// [`SubqueryKind::Exists`] BOOL, [`SubqueryKind::Array`] and
    /// [`SubqueryKind::In`] `ARRAY<column type>` (for `In`, the binder checks
    /// the left operand against the element type and computes `IN` itself).
    ///
    /// `None` (the default) means subqueries are not allowed here.
    fn bind_subquery(
        &self,
        expr: &ast::Expr,
        query: &ast::Query,
        kind: SubqueryKind,
    ) -> Option<Result<(usize, Type)>> {
        let _ = (expr, query, kind);
        None
    }
}

/// Which subquery expression [`Scope::bind_subquery`] is asked to plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubqueryKind {
    /// `(SELECT x ...)`: one column, at most one row; NULL when empty.
    Scalar,
    /// `EXISTS (SELECT ...)`: BOOL.
    Exists,
    /// `ARRAY(SELECT x ...)`: `ARRAY<type of x>`.
    Array,
    /// `e [NOT] IN (SELECT x ...)`: the candidates, as `ARRAY<type of x>`.
    In,
}

/// Whether `name` (any case) is an aggregate function, which
/// [`Scope::bind_aggregate`] binds instead of the scalar registry.
pub fn is_aggregate_function(name: &str) -> bool {
    crate::aggregate::AGGREGATE_FUNCTIONS
        .iter()
        .any(|f| f.eq_ignore_ascii_case(name))
}

/// A scope without columns, for constant expressions.
impl Scope for () {
    fn resolve(&self, _path: &[Ident]) -> Option<(usize, Type)> {
        None
    }
}

/// Options of [`bind`](crate::bind).
#[derive(Debug, Clone)]
pub struct BindOptions {
    /// Types of query parameters `@name` (names without `@`; looked up
    /// exactly first, then case-insensitively).
    pub params: HashMap<String, Type>,
    /// Parameters that are NULLs sent without a type: each binds as an
    /// untyped `NULL` literal, taking its type from where it is used
    /// (`WHERE d = @p`, `CASE ... THEN @p ELSE d END`). Looked up like
    /// `params`, which should not also hold them.
    pub untyped_null_params: HashSet<String>,
    /// Whether `GET_NEXT_SEQUENCE_VALUE` may be called here (Spanner allows
    /// it in DEFAULT expressions and read-write statements).
    pub allow_sequence_functions: bool,
    /// Whether `PENDING_COMMIT_TIMESTAMP()` may be called here (Spanner
    /// allows it only as a value written to a commit-timestamp column).
    pub allow_pending_commit_timestamp: bool,
    /// The proto bundle's descriptors, for PROTO and ENUM types: CAST to a
    /// bundle type, message fields, enum names. `None` when the database
    /// has none (then those fail to bind).
    pub protos: Option<Arc<ProtoBundle>>,
    /// Whether a literal, typed literal or cast that makes a NUMERIC must
    /// be exact: a value NUMERIC would have to round (a nonzero digit past
    /// the ninth decimal) is an error instead. Set in PostgreSQL-dialect
    /// databases, whose `numeric` Spanner keeps with arbitrary precision,
    /// so rounding would silently change what was written; GoogleSQL's
    /// NUMERIC rounds, as CAST does there.
    pub exact_numeric: bool,
}

impl Default for BindOptions {
    /// No parameters; every function allowed.
    fn default() -> Self {
        BindOptions {
            params: HashMap::new(),
            untyped_null_params: HashSet::new(),
            allow_sequence_functions: true,
            allow_pending_commit_timestamp: true,
            protos: None,
            exact_numeric: false,
        }
    }
}
