//! The data work a schema change needs, as typed commands.
//!
//! [`crate::Catalog::apply`] only decides whether a statement is valid for the
//! schema; whether it is valid for the *data* (no NULLs in a column that
//! becomes NOT NULL, no duplicate keys in a new UNIQUE index) is for the db
//! layer to find out. It runs the effects in order against the new catalog;
//! if one fails, the statement is rolled back and the old catalog kept.

use crate::{IndexId, SequenceId, TableId};

/// One piece of data work after a catalog change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Build the entries of a new index from the existing rows (and fail on a
    /// UNIQUE violation).
    BackfillIndex(IndexId),
    /// Delete the entries of a dropped index.
    DropIndexData(IndexId),
    /// Delete all rows of a dropped table.
    DropTableData(TableId),
    /// Fill a newly added column in existing rows: evaluate its DEFAULT (per
    /// row) or its generated expression. `column` is its position.
    BackfillColumn { table: TableId, column: usize },
    /// Fail unless the column (position) holds no NULL.
    ValidateNotNull { table: TableId, column: usize },
    /// Fail if a row makes the named CHECK constraint FALSE.
    ValidateCheck { table: TableId, check: String },
    /// Fail if a row's (non-NULL) foreign key has no referenced row.
    ValidateForeignKey { table: TableId, foreign_key: String },
    /// Fail if a value is longer than the column's new (shorter) length.
    ValidateColumnLength { table: TableId, column: usize },
    /// Rewrite the column's values to its new type (`STRING` <-> `BYTES`,
    /// also inside arrays); fails if a BYTES value is not valid UTF-8.
    ConvertColumn { table: TableId, column: usize },
    /// Reset a sequence's state: `None` means "never used" (the first value
    /// comes from the sequence's `start_with_counter`), `Some(c)` means the
    /// next counter handed out is `c`.
    ResetSequence {
        sequence: SequenceId,
        counter: Option<i64>,
    },
    /// Forget a dropped sequence's state.
    DropSequence(SequenceId),
}
