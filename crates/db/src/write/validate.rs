//! The checks one written row must pass before it joins the overlay: NOT
//! NULL, the declared lengths of STRING and BYTES columns (and Spanner's
//! 10 MiB cell limit), the commit-timestamp rules of
//! `allow_commit_timestamp` columns, and the table's CHECK constraints.
//!
//! Checks that look at other rows — the parent row, UNIQUE indexes, FOREIGN
//! KEYs — are in [`super::mutations`], [`super::index`] and
//! [`super::foreign_keys`].

use rowtree_parser::ast::Length;
use rowtree_schema::{Column, Table};
use rowtree_types::Value;

use super::prepared::is_pending;
use super::resolver::Resolver;
use super::{key_string, MAX_CELL_BYTES, PENDING_COMMIT_TIMESTAMP};
use crate::error::{Error, Result};

impl Resolver<'_> {
    pub(super) fn validate_row(&self, table: &Table, key: &[Value], row: &[Value]) -> Result<()> {
        for (col, v) in table.columns.iter().zip(row) {
            if v.is_null() {
                if col.not_null {
                    return Err(Error::FailedPrecondition {
                        message: format!("{} must not be NULL in table {}.", col.name, table.name),
                    });
                }
                continue;
            }
            check_length(table, col, v)?;
            if let Value::Timestamp(t) = v {
                if *t == PENDING_COMMIT_TIMESTAMP && !col.allow_commit_timestamp {
                    return Err(Error::FailedPrecondition {
                        message: format!(
                            "Cannot write commit timestamp because the allow_commit_timestamp column option is not set to true for column {}.{}, or for all corresponding shared key columns in this table's interleaved table hierarchy.",
                            table.name, col.name
                        ),
                    });
                }
                if col.allow_commit_timestamp
                    && !is_pending(v)
                    && t.nanos() > self.inner.options.clock.now_nanos() as i128
                {
                    return Err(Error::FailedPrecondition {
                        message: format!(
                            "Cannot write timestamps in the future {} to a commit timestamp column {}.{}",
                            t.nanos(), table.name, col.name
                        ),
                    });
                }
            }
        }
        let mut ctx = self.eval_context();
        for check in &table.checks {
            match check.expr.expr.eval(row, &mut ctx) {
                Ok(Value::Bool(false)) => {
                    return Err(Error::OutOfRange {
                        message: format!(
                            "Check constraint `{}`.`{}` is violated for key {}",
                            table.name,
                            check.name,
                            key_string(key)
                        ),
                    })
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(Error::OutOfRange {
                        message: e.to_string(),
                    })
                }
            }
        }
        Ok(())
    }
}

fn check_length(table: &Table, col: &Column, v: &Value) -> Result<()> {
    use rowtree_parser::ast::DataType;
    // STRING(MAX) holds 2,621,440 characters (Spanner's limit); BYTES(MAX)
    // is bounded by the 10 MiB cell limit below.
    let limit = |dt: &DataType| match dt {
        DataType::String(Length::Limit(n)) | DataType::Bytes(Length::Limit(n)) => Some(*n as usize),
        DataType::String(Length::Max) => Some(2_621_440),
        _ => None,
    };
    let too_long = |dt: &DataType, v: &Value| -> Option<(usize, usize)> {
        let n = limit(dt)?;
        let len = match v {
            Value::String(s) => s.chars().count(),
            Value::Bytes(b) => b.len(),
            _ => return None,
        };
        (len > n).then_some((len, n))
    };
    let elem_type = match &col.data_type {
        DataType::Array(inner) => Some(inner.as_ref()),
        _ => None,
    };
    let bad = match (v, elem_type) {
        (Value::Array(items), Some(dt)) => items.iter().find_map(|i| too_long(dt, i)),
        (v, _) => too_long(&col.data_type, v),
    };
    if let Some((len, n)) = bad {
        return Err(Error::FailedPrecondition {
            message: format!(
                "New value exceeds the maximum size limit for this column: {}.{}, size: {len}, limit: {n}.",
                table.name, col.name
            ),
        });
    }
    if v.approx_size() > MAX_CELL_BYTES {
        return Err(Error::InvalidArgument {
            message: format!(
                "Value of column {}.{} exceeds the 10 MiB cell limit",
                table.name, col.name
            ),
        });
    }
    Ok(())
}
