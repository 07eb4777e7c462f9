//! FOREIGN KEY checks over everything a commit changed.
//!
//! Two directions are checked once all mutations are applied:
//!
//! 1. A referenced row removed, or its referenced columns changed: unless
//!    another row still provides the old values, rows still pointing at them
//!    violate the foreign key, or, for an ON DELETE CASCADE foreign key and
//!    a deleted row, are deleted too (with their own cascades, repeated
//!    until nothing more changes).
//! 2. A referencing row added or changed: the row it points at must exist.
//!
//! Looking rows up by the referenced columns uses the primary key when they
//! are the key, and otherwise scans the table under a shared range lock.

use rowtree_parser::ast::OnDelete;
use rowtree_schema::Table;
use rowtree_txn::LockMode;
use rowtree_types::Value;

use super::resolver::Resolver;
use crate::error::{Error, Result};
use crate::keys::{self, Object};
use crate::overlay::RowChange;

impl Resolver<'_> {
    /// FOREIGN KEY checks over everything the transaction changed, with
    /// ON DELETE CASCADE foreign keys deleting referencing rows.
    pub(super) fn check_foreign_keys(&mut self) -> Result<()> {
        let catalog = self.catalog;
        let has_fk = catalog
            .tables()
            .any(|t| t.foreign_keys.iter().any(|fk| fk.enforced));
        if !has_fk {
            return Ok(());
        }
        // Referenced rows removed or changed: look for rows still pointing at them.
        let mut round = 0;
        loop {
            round += 1;
            if round > 64 {
                return Err(Error::internal("foreign key cascades do not converge"));
            }
            let changes: Vec<RowChange> = self.state.rows.values().cloned().collect();
            let mut cascaded = false;
            for referencing in catalog.tables() {
                for fk in referencing.foreign_keys.iter().filter(|fk| fk.enforced) {
                    for c in changes.iter().filter(|c| c.table == fk.referenced_table) {
                        let Some(old) = &c.old else { continue };
                        let old_vals = values_at(old, &fk.referenced_columns);
                        if c.new
                            .as_ref()
                            .is_some_and(|new| values_at(new, &fk.referenced_columns) == old_vals)
                        {
                            continue;
                        }
                        // Is another row still providing the old values?
                        let referenced = catalog
                            .table_by_id(fk.referenced_table)
                            .ok_or_else(|| Error::internal("table vanished"))?;
                        if self
                            .find_row(referenced, &fk.referenced_columns, &old_vals)?
                            .is_some()
                        {
                            continue;
                        }
                        let dependents = self.find_rows(referencing, &fk.columns, &old_vals)?;
                        for (kb, key) in dependents {
                            if fk.on_delete == OnDelete::Cascade && c.new.is_none() {
                                self.delete_row(referencing, kb, key)?;
                                cascaded = true;
                            } else {
                                return Err(fk_violation(fk, referencing, referenced));
                            }
                        }
                    }
                }
            }
            if !cascaded {
                break;
            }
        }
        // New or changed referencing rows: their referenced row must exist.
        let changes: Vec<RowChange> = self.state.rows.values().cloned().collect();
        for c in &changes {
            let Some(new) = &c.new else { continue };
            let table = catalog
                .table_by_id(c.table)
                .ok_or_else(|| Error::internal("table vanished"))?;
            for fk in table.foreign_keys.iter().filter(|fk| fk.enforced) {
                let vals = values_at(new, &fk.columns);
                if vals.iter().any(Value::is_null) {
                    continue;
                }
                if c.old
                    .as_ref()
                    .is_some_and(|old| values_at(old, &fk.columns) == vals)
                {
                    continue;
                }
                let referenced = catalog
                    .table_by_id(fk.referenced_table)
                    .ok_or_else(|| Error::internal("table vanished"))?;
                if self
                    .find_row(referenced, &fk.referenced_columns, &vals)?
                    .is_none()
                {
                    return Err(fk_violation(fk, table, referenced));
                }
            }
        }
        Ok(())
    }

    /// One live row of `table` whose `columns` equal `values`.
    fn find_row(
        &mut self,
        table: &Table,
        columns: &[usize],
        values: &[Value],
    ) -> Result<Option<Vec<u8>>> {
        let pk: Vec<usize> = table.primary_key.iter().map(|k| k.column).collect();
        if columns == pk.as_slice() {
            let levels = keys::table_levels(self.catalog, table);
            let kb = keys::encode_full(&levels, values)?;
            return Ok(self
                .current(table, &kb, values, LockMode::Shared)?
                .map(|_| kb));
        }
        Ok(self
            .find_rows(table, columns, values)?
            .into_iter()
            .next()
            .map(|(k, _)| k))
    }

    /// Every live row of `table` whose `columns` equal `values` (a scan of
    /// the table; foreign keys on non-key columns pay this cost).
    fn find_rows(
        &mut self,
        table: &Table,
        columns: &[usize],
        values: &[Value],
    ) -> Result<Vec<(Vec<u8>, Vec<Value>)>> {
        let root = self.catalog.root_of(table.id);
        let (start, end) = keys::object_range(root.id);
        self.lock_range(&start, end.as_deref(), LockMode::Shared)?;
        let mut out = Vec::new();
        for (kb, obj, key) in self.scan_merged(&start, end.as_deref())? {
            if obj != Object::Table(table.id) {
                continue;
            }
            let Some(row) = self.state.rows.get(&kb).and_then(|c| c.new.clone()) else {
                continue;
            };
            if columns.iter().zip(values).all(|(&p, v)| &row[p] == v) {
                out.push((kb, key));
            }
        }
        Ok(out)
    }
}

/// The values of `row` at `positions`, in that order.
fn values_at(row: &[Value], positions: &[usize]) -> Vec<Value> {
    positions.iter().map(|&p| row[p].clone()).collect()
}

fn fk_violation(fk: &rowtree_schema::ForeignKey, table: &Table, referenced: &Table) -> Error {
    let columns: Vec<&str> = fk
        .referenced_columns
        .iter()
        .map(|&p| referenced.columns[p].name.as_str())
        .collect();
    Error::FailedPrecondition {
        message: format!(
            "Foreign key constraint `{}` is violated on table `{}`. Cannot find referenced values in {}({}).",
            fk.name,
            table.name,
            referenced.name,
            columns.join(", ")
        ),
    }
}
