//! Expression evaluation glue: the contexts DEFAULT, generated-column and
//! CHECK expressions are evaluated in, and the loops that fill a row's
//! computed columns.
//!
//! An expression ([`rowtree_expr`]) asks its [`EvalContext`] for what is not
//! in the row: the time (`CURRENT_TIMESTAMP()`), a sequence's next value,
//! the pending commit timestamp. What the answer may be depends on who
//! evaluates:
//!
//! | context | used by | sequences | `PENDING_COMMIT_TIMESTAMP()` |
//! |---|---|---|---|
//! | [`CommitEval`] | the commit resolver | yes | the pending marker, replaced at commit |
//! | [`DdlEval`] | DDL backfills of existing rows | yes | refused |
//! | [`NoSideEffects`] | DDL checks of existing rows | refused | refused |
//! | [`KeyEval`] | [`crate::keys::RowKeys`] (the simulator's keys) | refused | `now` |
//!
//! [`fill_defaults`] and [`eval_generated`] are the one implementation of
//! "compute this row's DEFAULT and generated columns", shared by commits and
//! by `RowKeys`, so a key computed outside the database is the key a commit
//! would write. This module depends only on the sequences and the error
//! type, so the key layout can use it.

use rowtree_expr::EvalContext;
use rowtree_schema::{Catalog, Column, Table};
use rowtree_types::{Timestamp, Value};

use crate::error::{Error, Result};
use crate::sequences::Sequences;

/// Evaluation context of DEFAULT, generated-column and CHECK expressions at
/// commit: sequences hand out values, `PENDING_COMMIT_TIMESTAMP()` is the
/// pending marker the commit replaces with its timestamp.
pub(crate) struct CommitEval<'a> {
    pub sequences: &'a Sequences,
    pub catalog: &'a Catalog,
    pub now: Timestamp,
}

impl EvalContext for CommitEval<'_> {
    fn now(&self) -> Timestamp {
        self.now
    }
    fn next_sequence_value(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<i64, rowtree_expr::Error> {
        self.sequences
            .next_value(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn sequence_state(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<Option<i64>, rowtree_expr::Error> {
        self.sequences
            .state(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn pending_commit_timestamp(&mut self) -> std::result::Result<Value, rowtree_expr::Error> {
        Ok(Value::Timestamp(Timestamp::PENDING_COMMIT))
    }
}

/// Evaluation context of DDL backfills: sequences work, commit timestamps do not.
pub(crate) struct DdlEval<'a> {
    pub sequences: &'a Sequences,
    pub catalog: &'a Catalog,
    pub now: Timestamp,
}

impl EvalContext for DdlEval<'_> {
    fn now(&self) -> Timestamp {
        self.now
    }
    fn next_sequence_value(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<i64, rowtree_expr::Error> {
        self.sequences
            .next_value(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn sequence_state(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<Option<i64>, rowtree_expr::Error> {
        self.sequences
            .state(self.catalog, sequence)
            .map_err(|e| rowtree_expr::Error::invalid(e.to_string()))
    }
    fn pending_commit_timestamp(&mut self) -> std::result::Result<Value, rowtree_expr::Error> {
        Err(rowtree_expr::Error::invalid(
            "PENDING_COMMIT_TIMESTAMP() cannot fill existing rows",
        ))
    }
}

/// Evaluation context for validating constraints over existing rows.
pub(crate) struct NoSideEffects {
    pub now: Timestamp,
}

impl EvalContext for NoSideEffects {
    fn now(&self) -> Timestamp {
        self.now
    }
    fn next_sequence_value(&mut self, _: &str) -> std::result::Result<i64, rowtree_expr::Error> {
        Err(rowtree_expr::Error::invalid(
            "sequence functions are not allowed here",
        ))
    }
    fn sequence_state(&mut self, _: &str) -> std::result::Result<Option<i64>, rowtree_expr::Error> {
        Err(rowtree_expr::Error::invalid(
            "sequence functions are not allowed here",
        ))
    }
    fn pending_commit_timestamp(&mut self) -> std::result::Result<Value, rowtree_expr::Error> {
        Err(rowtree_expr::Error::invalid(
            "PENDING_COMMIT_TIMESTAMP is not allowed here",
        ))
    }
}

/// Evaluation context for generated columns outside a transaction: a fixed
/// `CURRENT_TIMESTAMP()`, no sequences, no commit timestamps.
pub(crate) struct KeyEval {
    pub now: Timestamp,
}

impl EvalContext for KeyEval {
    fn now(&self) -> Timestamp {
        self.now
    }
    fn next_sequence_value(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<i64, rowtree_expr::Error> {
        Err(rowtree_expr::Error::invalid(format!(
            "sequence {sequence}: give the value explicitly when computing keys"
        )))
    }
    fn sequence_state(
        &mut self,
        sequence: &str,
    ) -> std::result::Result<Option<i64>, rowtree_expr::Error> {
        Err(rowtree_expr::Error::invalid(format!(
            "sequence {sequence}: no sequence state when computing keys"
        )))
    }
    fn pending_commit_timestamp(&mut self) -> std::result::Result<Value, rowtree_expr::Error> {
        Ok(Value::Timestamp(self.now))
    }
}

/// Fills the DEFAULT of every column of `row` that is neither in `provided`
/// (positions the writer gave) nor generated, in column order.
pub(crate) fn fill_defaults<C: EvalContext>(
    table: &Table,
    row: &mut [Value],
    provided: &[usize],
    ctx: &mut C,
) -> Result<()> {
    for (pos, col) in table.columns.iter().enumerate() {
        if provided.contains(&pos) || col.generated.is_some() {
            continue;
        }
        if let Some(d) = &col.default {
            let v = d
                .expr
                .eval(row, ctx)
                .map_err(|e| expr_error(table, col, e))?;
            row[pos] =
                rowtree_expr::coerce_value(v, &col.ty).map_err(|e| expr_error(table, col, e))?;
        }
    }
    Ok(())
}

/// Computes every generated column of `row` (in dependency order) with the
/// same expressions and coercions as a commit. Shared by commits and by
/// [`crate::keys::RowKeys`] (the simulator's key encoder).
pub(crate) fn eval_generated<C: EvalContext>(
    table: &Table,
    row: &mut [Value],
    ctx: &mut C,
) -> Result<()> {
    for &pos in table.generated_order() {
        let col = &table.columns[pos];
        if let Some(g) = &col.generated {
            let v = g
                .expr
                .eval(row, ctx)
                .map_err(|e| expr_error(table, col, e))?;
            row[pos] =
                rowtree_expr::coerce_value(v, &col.ty).map_err(|e| expr_error(table, col, e))?;
        }
    }
    Ok(())
}

fn expr_error(table: &Table, col: &Column, e: rowtree_expr::Error) -> Error {
    Error::OutOfRange {
        message: format!("Error evaluating column {}.{}: {e}", table.name, col.name),
    }
}
