//! GoogleSQL expression typing and evaluation.
//!
//! An expression goes through two steps:
//!
//! 1. **Binding** ([`bind`]): the parser's [`ast::Expr`](rowtree_parser::ast::Expr) is
//!    resolved against a [`Scope`] (which columns exist, and where they sit in a
//!    row) and typed. Every GoogleSQL typing rule lives here: which operator
//!    signatures exist, how `INT64` is coerced to `FLOAT64` or `NUMERIC`, which
//!    functions are known. Errors carry the [`Span`](rowtree_parser::ast::Span) of
//!    the node at fault, so callers can print `[at line:col]`.
//! 2. **Evaluation** ([`BoundExpr::eval`]): the typed tree is evaluated against a
//!    row (a slice of [`Value`](rowtree_types::Value)s) and an [`EvalContext`],
//!    which supplies everything that is not a pure function of the row: the
//!    statement's `CURRENT_TIMESTAMP`, sequences, the pending commit timestamp and
//!    query parameters.
//!
//! The value-level semantics that do not need a tree ([`cast`], [`coerce_value`],
//! [`compare`]) are public on their own, for the schema layer (DEFAULT values,
//! mutations) and the SQL layer (ORDER BY).

pub mod aggregate;
mod bind;
mod bound;
mod cast;
mod compare;
mod context;
mod datetime;
mod error;
mod eval;
mod functions;
mod like;
mod membership;
mod operator;

pub use bind::{bind, closest_name, is_aggregate_function, BindOptions, Scope, SubqueryKind};
pub use bound::BoundExpr;
pub use cast::{cast, castable, coerce_value};
pub use compare::compare;
pub use context::EvalContext;
pub use error::{Error, Result};
pub use membership::{InSet, SetId};

/// Largest STRING or BYTES value a function or operator may produce
/// (CONCAT, `||`, REPEAT, LPAD/RPAD, FORMAT): Spanner's cell limit. Without it a
/// chain of subqueries each doubling a string would exhaust memory.
pub const MAX_OUTPUT_BYTES: usize = 10 << 20;

/// Most elements an ARRAY built by ARRAY_CONCAT or `||` may have.
pub const MAX_OUTPUT_ELEMENTS: usize = 10_000_000;

/// Checks the size of a value about to be produced by `what`.
pub(crate) fn check_output(what: &str, bytes: usize, elements: usize) -> Result<()> {
    if bytes > MAX_OUTPUT_BYTES || elements > MAX_OUTPUT_ELEMENTS {
        return Err(Error::out_of_range(format!(
            "Output of {what} exceeds the maximum allowed size ({} bytes, {} array elements)",
            MAX_OUTPUT_BYTES, MAX_OUTPUT_ELEMENTS
        )));
    }
    Ok(())
}
