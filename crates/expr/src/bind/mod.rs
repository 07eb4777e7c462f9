//! Binding: resolving names and typing an expression.
//!
//! [`bind`] walks the parser's [`ast::Expr`] once, bottom-up. For each node
//! it binds the children, decides the node's signature with GoogleSQL's
//! rules, and inserts the coercions that make the children fit:
//!
//! * **Supertypes.** Operands that must agree (`=`, `IN`, `CASE` results,
//!   `COALESCE`) are coerced to their common supertype: `INT64` < `NUMERIC`
//!   < `FLOAT64`, `FLOAT32` < `FLOAT64`. Nothing else mixes: `'1' = 1` is an
//!   error, as in GoogleSQL.
//! * **Literals coerce more freely.** An untyped `NULL` takes any type, and
//!   a string literal may stand for a `DATE`, `TIMESTAMP` or `UUID` (`d >
//!   '2020-01-01'`, `id = 'f81d4fae-...'`); such coercions are done at bind time, so a bad literal
//!   is reported with its position before any row is read.
//! * **Functions** come from the registry in [`crate::functions`]; `IF`,
//!   `IFNULL`, `COALESCE` and `NULLIF` are special forms here because they
//!   are generic over their argument type (and the first three are lazy).
//!
//! Errors use GoogleSQL's wording (`Unrecognized name: Foo`, `No matching
//! signature for operator + for argument types: STRING, INT64`) and carry
//! the span of the offending node.
//!
//! The binder is one [`Binder`] (the scope and options of a [`bind`] call)
//! whose methods are spread over one module per job; [`node`] dispatches
//! each kind of AST node to its job:
//!
//! | module | job |
//! |---|---|
//! | [`scope`] | what the caller provides: [`Scope`], [`BindOptions`] |
//! | [`names`] | column paths, query parameters, "Did you mean" |
//! | [`literal`] | typed literals |
//! | [`operators`] | unary and binary operators, `IS`, `BETWEEN`, `LIKE` |
//! | [`membership`] | `IN` lists, subqueries and `UNNEST` |
//! | [`conditional`] | `CASE`, `IF`, `IFNULL`, `COALESCE`, `NULLIF` |
//! | [`call`] | function calls, aggregates, `EXTRACT` |
//! | [`composite`] | ARRAY and STRUCT constructors, subscripts, fields |
//! | [`subquery`] | scalar, `EXISTS` and `ARRAY` subqueries |
//! | [`coerce`] | supertypes, coercions, `CAST` |

mod call;
mod coerce;
mod composite;
mod conditional;
mod literal;
mod membership;
mod names;
mod node;
mod operators;
mod scope;
mod subquery;

use rowtree_parser::ast::{self, Span};

pub use names::closest_name;
pub use scope::{is_aggregate_function, BindOptions, Scope, SubqueryKind};

use crate::bound::BoundExpr;
use crate::{Error, Result};

/// Resolves and types `expr` against `scope`.
pub fn bind(expr: &ast::Expr, scope: &dyn Scope, options: &BindOptions) -> Result<BoundExpr> {
    Binder { scope, options }.bind(expr)
}

/// One [`bind`] call: where names resolve and what is allowed. Each job's
/// module adds its methods.
struct Binder<'a> {
    scope: &'a dyn Scope,
    options: &'a BindOptions,
}

/// An `INVALID_ARGUMENT` error at `span`, the binder's usual error.
fn invalid_at(span: Span, message: impl Into<String>) -> Error {
    Error::InvalidArgument {
        message: message.into(),
        span: Some(span),
    }
}
