//! Row deletion policies (Spanner's TTL): checking one against its table.
//!
//! A policy names a column and an age in days; the database deletes rows
//! whose column is older than that. Spanner's rules, checked here for
//! CREATE TABLE, ADD and REPLACE alike:
//!
//! * the column exists in the table and is a `TIMESTAMP` (a commit
//!   timestamp column will do, and so will a generated column, unless it
//!   reads a commit timestamp column: its value is only known at commit);
//! * the age is a whole number of days, zero or more (the parsers take
//!   `DAY` as the only unit).
//!
//! Whether a table may have one (one at most; REPLACE and DROP need one) is
//! decided by the ALTER TABLE code.

use rowtree_parser::ast;
use rowtree_types::Type;

use crate::error::{Result, SchemaError};
use crate::table::{RowDeletionPolicy, Table};

/// The catalog's policy for `policy` on `table`, or the reason it is
/// refused.
pub(crate) fn build(table: &Table, policy: &ast::RowDeletionPolicy) -> Result<RowDeletionPolicy> {
    let name = &policy.column.value;
    let (_, column) = table.column(name).ok_or_else(|| {
        SchemaError::not_found(
            format!(
                "Column {name} used in the row deletion policy of table {} does not exist.",
                table.name
            ),
            policy.column.span,
        )
    })?;
    if column.ty != Type::Timestamp {
        return Err(SchemaError::invalid(
            format!(
                "Column {} used in the row deletion policy of table {} must be of type \
                 TIMESTAMP, not {}.",
                column.name, table.name, column.ty
            ),
            policy.column.span,
        ));
    }
    if let Some(generated) = &column.generated {
        let reads_commit_timestamp = generated.expr.columns().iter().any(|&p| {
            table
                .columns
                .get(p)
                .is_some_and(|c| c.allow_commit_timestamp)
        });
        if reads_commit_timestamp {
            return Err(SchemaError::invalid(
                format!(
                    "Column {} used in the row deletion policy of table {} is a generated \
                     column that reads a commit timestamp column.",
                    column.name, table.name
                ),
                policy.column.span,
            ));
        }
    }
    if policy.days < 0 {
        return Err(SchemaError::invalid(
            format!(
                "The interval of the row deletion policy of table {} must not be negative: {} \
                 DAY.",
                table.name, policy.days
            ),
            policy.days_span,
        ));
    }
    Ok(RowDeletionPolicy {
        column: column.id,
        days: policy.days as u64,
    })
}
