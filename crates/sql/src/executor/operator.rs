//! The [`Operator`] interface every operator implements, and the row type.

use rowtree_types::Value;

use crate::error::{Error, Result};
use crate::plan::Counters;

use super::context::ExecContext;

/// A row.
pub(crate) type Row = Vec<Value>;

/// A running operator.
pub(crate) trait Operator {
    fn next(&mut self, cx: &mut ExecContext<'_>) -> Result<Option<Row>>;
}

pub(super) fn emit(counters: &Counters, row: Row) -> Result<Option<Row>> {
    counters.add_rows(1);
    Ok(Some(row))
}

/// An operator that fails when run (a plan the builder cannot execute).
pub(super) struct Failed(pub(super) &'static str);

impl Operator for Failed {
    fn next(&mut self, _cx: &mut ExecContext<'_>) -> Result<Option<Row>> {
        Err(Error::internal(self.0))
    }
}
