//! Secondary indexes.
//!
//! An index is stored like a table whose key is the index key columns
//! followed by the indexed table's key columns that the index key does not
//! already name; that full key is what the 16-key-column limit counts.
//! A non-interleaved index is a root-level object of its own. An index
//! `INTERLEAVE IN p` stores its entries inside `p`'s row trees, so its full
//! key must start with `p`'s key, and `p` must be the indexed table or one of
//! its ancestors.

use crate::table::{KeyColumn, Table};
use crate::{IndexId, TableId};

/// A secondary index.
#[derive(Debug, Clone)]
pub struct Index {
    /// Object id: shares one counter (and the key space) with tables.
    pub id: IndexId,
    /// The name as written; lookups ignore case.
    pub name: String,
    /// The indexed table.
    pub table: TableId,
    /// The index key columns as declared (positions in the indexed table).
    pub keys: Vec<KeyColumn>,
    /// `STORING` columns (positions in the indexed table).
    pub storing: Vec<usize>,
    /// `UNIQUE`: no two entries with equal index keys.
    pub unique: bool,
    /// `NULL_FILTERED`: rows with a NULL in any key column are not indexed.
    pub null_filtered: bool,
    /// `INTERLEAVE IN p`.
    pub interleave_in: Option<TableId>,
}

impl Index {
    /// The key the index is stored under: [`Index::keys`] followed by the
    /// indexed table's primary key columns not already among them (in the
    /// table's directions). `table` must be the indexed table.
    pub fn full_key(&self, table: &Table) -> Vec<KeyColumn> {
        let mut key = self.keys.clone();
        for k in &table.primary_key {
            if !key.iter().any(|existing| existing.column == k.column) {
                key.push(*k);
            }
        }
        key
    }

    /// Whether the index reads the column at `position` (as key or stored).
    pub fn uses_column(&self, position: usize) -> bool {
        self.keys.iter().any(|k| k.column == position) || self.storing.contains(&position)
    }
}
