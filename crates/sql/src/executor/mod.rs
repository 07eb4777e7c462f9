//! Pull-based execution.
//!
//! Each plan `Node` becomes an `Operator` whose `next` returns one row at
//! a time, pulling from its inputs only as far as it must: a `LIMIT` stops
//! pulling once it has its rows, so the scan below stops reading (a
//! `RowStream` reads its ranges in chunks). Operators that need all their
//! input (sort, aggregate, the build side of a hash join, set operations)
//! hold it in memory; everything else streams.
//!
//! Operators do not own the transaction: every `next` receives the
//! `ExecContext` that does (through [`DataSource`]), together with the
//! query parameters, the subquery plans and, inside a correlated subquery,
//! the outer row's values. Those are appended after each row before an
//! expression is evaluated, which is where the binder put their slots.
//!
//! The modules: `source` (the transaction behind it all), `context`
//! (what each `next` receives), `operator` (the interface), `build`
//! (plan to operators, subqueries, [`RowIter`]), then the operators by
//! family: `scan` (leaves), `stream` (row at a time), `sort`,
//! `window`, `aggregate`, `join`, `tree_join` and `set_op`;
//! `memory` accounts for what the buffering ones hold (and what DML
//! collects: the [`crate::dml`] statements draw on the same budget).

mod aggregate;
mod build;
mod context;
mod join;
mod memory;
mod operator;
mod scan;
mod set_op;
mod sort;
mod source;
mod stream;
mod tree_join;
mod window;

pub use build::RowIter;
pub(crate) use context::ExecContext;
pub(crate) use memory::{Memory, Reservation};
pub use source::DataSource;
