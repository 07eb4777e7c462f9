//! `limits`: keys that Spanner accepts in the schema but that data can
//! break.
//!
//! A key is at most 8 KiB, and Spanner checks it when a row is written, not
//! when the table is created: a schema whose key columns can hold more than
//! that accepts the DDL and then refuses some inserts. `STRING(MAX)` and
//! `BYTES(MAX)` key columns are the usual cause (each can hold megabytes).
//! The limits the catalog enforces at DDL time (16 key columns, 7
//! interleave levels) are reported while loading, where they are refused.

use rowtree_schema::ast::{DataType, Length};
use rowtree_schema::limits::MAX_KEY_SIZE_BYTES;
use rowtree_schema::{KeyColumn, Table};

use crate::rules::Context;
use crate::{Finding, Rule, Severity};

/// The most bytes a value of `data_type` can take in a key, counting one
/// byte per character of a `STRING(n)` (so the total is a lower bound of the
/// worst case), or `None` for `MAX`.
fn max_bytes(data_type: &DataType) -> Option<u64> {
    Some(match data_type {
        DataType::Bool => 1,
        DataType::Int64 | DataType::Float64 => 8,
        DataType::Float32 | DataType::Date => 4,
        DataType::Timestamp => 12,
        DataType::Numeric => 22,
        DataType::Uuid => 16,
        DataType::String(Length::Limit(n)) | DataType::Bytes(Length::Limit(n)) => *n,
        _ => return None,
    })
}

fn check_key(
    ctx: &Context<'_>,
    table: &Table,
    key: &[KeyColumn],
    what: &str,
    object: &str,
    out: &mut Vec<Finding>,
) {
    let unbounded: Vec<&str> = key
        .iter()
        .map(|k| &table.columns[k.column])
        .filter(|c| {
            matches!(
                c.data_type,
                DataType::String(Length::Max) | DataType::Bytes(Length::Max)
            )
        })
        .map(|c| c.name.as_str())
        .collect();
    if !unbounded.is_empty() {
        out.push(ctx.finding(
            Rule::Limits,
            Severity::Warning,
            object,
            format!(
                "The key of {what} includes {} declared with MAX length: such a value can be megabytes, but a whole key is limited to 8 KiB, so rows with long values are refused at write time, not at DDL time. Declare a bound that fits (e.g. STRING(256)), or key by a hash or UUID of the value.",
                unbounded.join(", ")
            ),
            None,
        ));
        return;
    }
    let total: u64 = key
        .iter()
        .filter_map(|k| max_bytes(&table.columns[k.column].data_type))
        .sum();
    if total > MAX_KEY_SIZE_BYTES as u64 {
        out.push(ctx.finding(
            Rule::Limits,
            Severity::Warning,
            object,
            format!(
                "The key columns of {what} can hold at least {total} bytes together, more than Spanner's 8 KiB ({MAX_KEY_SIZE_BYTES} bytes) key limit, which is checked when rows are written: rows with long values would be refused. Shorten the declared lengths or key by a hash of the long value."
            ),
            None,
        ));
    }
}

/// `limits` on tables (their full key) and indexes (their stored key).
pub(crate) fn limits(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for table in ctx.catalog.tables() {
        check_key(
            ctx,
            table,
            &table.primary_key,
            &format!("table {}", table.name),
            &table.name,
            out,
        );
    }
    for index in ctx.catalog.indexes() {
        let Some(table) = ctx.catalog.table_by_id(index.table) else {
            continue;
        };
        check_key(
            ctx,
            table,
            &index.full_key(table),
            &format!("index {}", index.name),
            &index.name,
            out,
        );
    }
}
