//! Row assembly: between the rows the database works with and the key/value
//! pairs it stores.
//!
//! Everything above the key layout handles a row as one [`Value`] per table
//! column, in column order. Storage holds something else: a key (the key
//! columns, encoded by [`crate::keys`]) and a value with the other columns
//! (the row codec's `(column id, value)` pairs, NULLs left out), plus one
//! entry per secondary index. This module converts in both directions:
//!
//! * [`materialize`]: a stored key's values and value bytes become a
//!   table-shaped row (reads, scans, the commit resolver's overlay, DDL
//!   backfills);
//! * [`stored_columns`]: a row becomes the columns its stored value holds;
//! * [`index_entry`]: a row becomes its entry in an index (the entry's key
//!   values and STORING columns), or none for a NULL_FILTERED index.
//!
//! Reads, the commit resolver and DDL all go through these, so a row is
//! assembled one way everywhere.

use rowtree_encoding::decode_row_with;
use rowtree_schema::{Catalog, ColumnId, Index, Table};
use rowtree_types::Value;

use crate::error::Result;
use crate::keys::{self, Level};
use crate::target::Target;

/// Turns a stored key and value into a full table-shaped row (`Value::Null`
/// for columns an index does not hold) indexed by table column position.
pub(crate) fn materialize(
    target: &Target<'_>,
    key_values: Vec<Value>,
    value: &[u8],
) -> Result<Vec<Value>> {
    let columns = &target.table.columns;
    assemble(
        columns.len(),
        |id| columns.iter().position(|c| c.id == id),
        None,
        &target.key_columns,
        key_values,
        value,
    )
}

/// [`materialize`] for callers that resolved the table's shape once and
/// keep it without borrowing the catalog (streams): a row of `width`
/// columns, the key values at `key_columns`, each stored column at
/// `position(column id)` (columns dropped since the row was written have
/// none and are skipped). With `wanted` (by column position), only those
/// stored columns are decoded; the others stay `Value::Null`.
pub(crate) fn assemble(
    width: usize,
    position: impl Fn(ColumnId) -> Option<usize>,
    wanted: Option<&[bool]>,
    key_columns: &[usize],
    key_values: Vec<Value>,
    value: &[u8],
) -> Result<Vec<Value>> {
    let mut row = vec![Value::Null; width];
    for (pos, v) in key_columns.iter().zip(key_values) {
        row[*pos] = v;
    }
    // The position of a wanted column, found once per column.
    let at = std::cell::Cell::new(None);
    decode_row_with(
        value,
        |id| {
            at.set(position(id).filter(|&p| wanted.is_none_or(|w| w[p])));
            at.get().is_some()
        },
        |_, v| {
            if let Some(pos) = at.get() {
                row[pos] = v;
            }
        },
    )?;
    Ok(row)
}

/// The non-key, non-NULL columns of a row as the row codec stores them.
pub(crate) fn stored_columns(table: &Table, row: &[Value]) -> Vec<(u32, Value)> {
    table
        .columns
        .iter()
        .enumerate()
        .filter(|(pos, _)| !table.primary_key.iter().any(|k| k.column == *pos))
        .filter(|(pos, _)| !row[*pos].is_null())
        .map(|(pos, c)| (c.id, row[pos].clone()))
        .collect()
}

/// One index entry: its key values (declared columns first, then the rest
/// of the table key) and its STORING values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexEntry {
    pub levels: Vec<Level>,
    pub key: Vec<Value>,
    /// How many leading key values are the index's declared columns.
    pub declared: usize,
    pub stored: Vec<(u32, Value)>,
}

/// The entry `row` has in `index`, or `None` when a NULL_FILTERED index
/// skips it.
pub(crate) fn index_entry(
    catalog: &Catalog,
    table: &Table,
    index: &Index,
    row: &[Value],
) -> Result<Option<IndexEntry>> {
    if index.null_filtered && index.keys.iter().any(|k| row[k.column].is_null()) {
        return Ok(None);
    }
    let cols = keys::index_key_columns(table, index);
    let key: Vec<Value> = cols.iter().map(|(p, _, _)| row[*p].clone()).collect();
    let stored = index
        .storing
        .iter()
        .filter(|&&p| !row[p].is_null())
        .map(|&p| (table.columns[p].id, row[p].clone()))
        .collect();
    Ok(Some(IndexEntry {
        levels: keys::index_levels(catalog, table, index),
        key,
        declared: index.keys.len(),
        stored,
    }))
}
