//! Index maintenance: the index entries a changed row deletes and adds,
//! and UNIQUE.
//!
//! For every index of a changed row's table, the row's old entry and new
//! entry ([`crate::row::index_entry`]) are compared: an entry whose key
//! changed is deleted and the new one added; an entry whose key stayed but
//! whose STORING values changed is rewritten; a NULL_FILTERED index has no
//! entry for a row with a NULL in its key. Entry keys are locked
//! exclusively like row keys.
//!
//! A UNIQUE index is checked for each new entry, over both what is
//! committed (a shared range lock on the entry's declared values, so no
//! other transaction adds a duplicate before this commit is durable) and the
//! transaction's own other rows.

use rowtree_encoding::prefix_end;
use rowtree_schema::{Index, Table};
use rowtree_txn::LockMode;
use rowtree_types::Value;

use super::key_string;
use super::prepared::{is_pending, prepare, PreparedWrite};
use super::resolver::Resolver;
use crate::error::{Error, Result};
use crate::keys;
use crate::overlay::RowChange;
use crate::row::{index_entry, IndexEntry};

impl Resolver<'_> {
    /// Index entries to delete and add for one changed row.
    pub(super) fn index_writes(
        &mut self,
        table: &Table,
        change: &RowChange,
        writes: &mut Vec<PreparedWrite>,
    ) -> Result<()> {
        for index in self.catalog.indexes_of(table.id) {
            let old = change
                .old
                .as_ref()
                .and_then(|r| index_entry(self.catalog, table, index, r).transpose())
                .transpose()?;
            let new = change
                .new
                .as_ref()
                .and_then(|r| index_entry(self.catalog, table, index, r).transpose())
                .transpose()?;
            if old == new {
                continue;
            }
            if let Some(o) = &old {
                if new.as_ref().is_none_or(|n| n.key != o.key) {
                    let kb = keys::encode_full(&o.levels, &o.key)?;
                    self.lock(&kb, LockMode::Exclusive)?;
                    writes.push(prepare(o.levels.clone(), o.key.clone(), None)?);
                }
            }
            if let Some(n) = new {
                if index.unique {
                    self.check_unique(table, index, &n, change)?;
                }
                if !n.key.iter().any(is_pending) {
                    let kb = keys::encode_full(&n.levels, &n.key)?;
                    self.lock(&kb, LockMode::Exclusive)?;
                }
                writes.push(prepare(n.levels, n.key, Some(n.stored))?);
            }
        }
        Ok(())
    }

    fn check_unique(
        &mut self,
        table: &Table,
        index: &Index,
        entry: &IndexEntry,
        change: &RowChange,
    ) -> Result<()> {
        let declared = entry.declared;
        let prefix = keys::encode_prefix(&entry.levels, &entry.key[..declared])?;
        let end = prefix_end(&prefix);
        self.lock_range(&prefix, end.as_deref(), LockMode::Shared)?;
        let own_key = keys::encode_full(&entry.levels, &entry.key)?;
        // Committed entries with the same indexed values, other than this row's.
        for item in self
            .inner
            .router
            .scan(&prefix, end.as_deref(), u64::MAX, false)
        {
            let (kb, _) = item?;
            if kb == own_key {
                continue;
            }
            // The row behind that entry may be changed by this transaction.
            let Some((_, ikey)) = keys::decode_key(self.catalog, &kb)? else {
                continue;
            };
            let table_key = index_entry_table_key(table, index, &ikey);
            let tkb = keys::encode_full(&keys::table_levels(self.catalog, table), &table_key)?;
            let still = match self.state.rows.get(&tkb) {
                Some(c) => c.new.as_ref().is_some_and(|r| {
                    index_entry(self.catalog, table, index, r)
                        .ok()
                        .flatten()
                        .is_some_and(|e| e.key[..declared] == entry.key[..declared])
                }),
                None => true,
            };
            if still {
                return Err(unique_violation(index, &entry.key[..declared]));
            }
        }
        // Other rows of this transaction with the same indexed values.
        for other in self.state.rows.values() {
            if other.table != table.id || other.key == change.key {
                continue;
            }
            if let Some(r) = &other.new {
                if let Some(e) = index_entry(self.catalog, table, index, r)? {
                    if e.key[..declared] == entry.key[..declared] {
                        return Err(unique_violation(index, &entry.key[..declared]));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The table key of the row behind an index entry's key values.
fn index_entry_table_key(table: &Table, index: &Index, entry_key: &[Value]) -> Vec<Value> {
    let cols = keys::index_key_columns(table, index);
    table
        .primary_key
        .iter()
        .map(|k| {
            cols.iter()
                .position(|(p, _, _)| *p == k.column)
                .map(|i| entry_key[i].clone())
                .unwrap_or(Value::Null)
        })
        .collect()
}

fn unique_violation(index: &Index, values: &[Value]) -> Error {
    Error::AlreadyExists {
        message: format!(
            "Unique index violation on index {} at index key {}. It conflicts with another row.",
            index.name,
            key_string(values)
        ),
    }
}
