//! Applying mutations: each INSERT, UPDATE, INSERT_OR_UPDATE, REPLACE,
//! INSERT OR IGNORE and DELETE, in order, to the transaction's overlay.
//!
//! A written row is coerced to the column types, completed with its DEFAULT
//! and generated columns ([`crate::eval`]), checked ([`super::validate`])
//! and, for a table interleaved IN PARENT, checked to have its parent row.
//! A deleted row takes its row tree with it as its children's ON DELETE
//! says: CASCADE deletes them, NO ACTION refuses while one exists. Every row
//! is read under a lock (exclusive for a row it writes, shared for a parent
//! it only checks) and every row tree scanned under an exclusive range lock
//! ([`Resolver::current`], [`Resolver::scan_merged`]).

use std::collections::HashSet;

use rowtree_encoding::prefix_end;
use rowtree_parser::ast::{InterleaveKind, OnDelete};
use rowtree_schema::Table;
use rowtree_txn::LockMode;
use rowtree_types::Value;

use super::resolver::Resolver;
use super::{key_string, MAX_MUTATIONS};
use crate::error::{Error, Result};
use crate::eval::{eval_generated, fill_defaults};
use crate::keys::{self, Object};
use crate::mutation::{Mutation, WriteKind};
use crate::target::{table_target, Span};

impl Resolver<'_> {
    /// Applies mutations in order to the transaction's writes.
    pub fn apply(&mut self, mutations: &[Mutation]) -> Result<()> {
        let mutation_count: usize =
            self.state.mutation_count + mutations.iter().map(Mutation::count).sum::<usize>();
        self.state.mutation_count = mutation_count;
        if mutation_count > MAX_MUTATIONS {
            return Err(Error::InvalidArgument {
                message: format!(
                    "The transaction contains too many mutations: {mutation_count}, the limit is {MAX_MUTATIONS}"
                ),
            });
        }
        for m in mutations {
            match m {
                Mutation::Write {
                    kind,
                    table,
                    columns,
                    rows,
                } => {
                    let t = self.table(table)?;
                    let positions = self.column_positions(t, *kind, columns)?;
                    for values in rows {
                        self.write_row(t, *kind, &positions, values)?;
                    }
                }
                Mutation::Delete { table, key_set } => {
                    let t = self.table(table)?;
                    let target = table_target(self.catalog, t);
                    for span in target.ranges(key_set)? {
                        match span {
                            Span::Point(kb) => {
                                let Some((_, key)) = keys::decode_key(self.catalog, &kb)? else {
                                    continue;
                                };
                                if self.current(t, &kb, &key, LockMode::Exclusive)?.is_some() {
                                    self.direct.push(kb.clone());
                                    self.delete_row(t, kb, key)?;
                                }
                            }
                            Span::Range((start, end)) => {
                                self.lock_range(&start, end.as_deref(), LockMode::Exclusive)?;
                                for (kb, obj, key) in self.scan_merged(&start, end.as_deref())? {
                                    if obj == Object::Table(t.id) {
                                        self.direct.push(kb.clone());
                                        self.delete_row(t, kb, key)?;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn column_positions(
        &self,
        table: &Table,
        kind: WriteKind,
        columns: &[String],
    ) -> Result<Vec<usize>> {
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(columns.len());
        for name in columns {
            let (pos, col) = table.column(name).ok_or_else(|| {
                Error::not_found(format!("Column not found in table {}: {name}", table.name))
            })?;
            if !seen.insert(pos) {
                return Err(Error::invalid(format!(
                    "Duplicate column in mutation: {name}"
                )));
            }
            if col.generated.is_some() {
                return Err(Error::invalid(format!(
                    "Cannot write into generated column `{}.{}`.",
                    table.name, col.name
                )));
            }
            out.push(pos);
        }
        for k in &table.primary_key {
            let col = &table.columns[k.column];
            // A key column may be left out only when it is computed: generated,
            // or filled by its DEFAULT when the row is inserted.
            let defaulted =
                col.default.is_some() && matches!(kind, WriteKind::Insert | WriteKind::Replace);
            if col.generated.is_none() && !defaulted && !out.contains(&k.column) {
                return Err(Error::invalid(format!(
                    "Mutation for table {} is missing key column {}",
                    table.name, col.name
                )));
            }
        }
        Ok(out)
    }

    /// Fills the DEFAULT columns the writer did not give (when
    /// `fill_defaults`: the row is being inserted) and computes the generated
    /// columns, with one evaluation context for both.
    fn eval_defaults_and_generated(
        &self,
        table: &Table,
        row: &mut [Value],
        provided: &[usize],
        fill_defaults_too: bool,
    ) -> Result<()> {
        let mut ctx = self.eval_context();
        if fill_defaults_too {
            fill_defaults(table, row, provided, &mut ctx)?;
        }
        eval_generated(table, row, &mut ctx)
    }

    fn write_row(
        &mut self,
        table: &Table,
        kind: WriteKind,
        positions: &[usize],
        values: &[Value],
    ) -> Result<()> {
        if values.len() != positions.len() {
            return Err(Error::invalid(format!(
                "Mutation for table {} has {} columns but {} values",
                table.name,
                positions.len(),
                values.len()
            )));
        }
        let mut candidate = vec![Value::Null; table.columns.len()];
        for (&pos, v) in positions.iter().zip(values) {
            let col = &table.columns[pos];
            candidate[pos] = rowtree_expr::coerce_value(v.clone(), &col.ty).map_err(|e| {
                Error::invalid(format!(
                    "Invalid value for column {} in table {}: {e}",
                    col.name, table.name
                ))
            })?;
        }
        let inserting = matches!(
            kind,
            WriteKind::Insert | WriteKind::Replace | WriteKind::InsertOrIgnore
        );
        // Generated key columns are computed from the provided values.
        self.eval_defaults_and_generated(
            table,
            &mut candidate,
            positions,
            inserting || kind == WriteKind::InsertOrUpdate,
        )?;
        let key: Vec<Value> = table
            .primary_key
            .iter()
            .map(|k| candidate[k.column].clone())
            .collect();
        let levels = keys::table_levels(self.catalog, table);
        let kb = keys::encode_full(&levels, &key)?;
        let existing = self.current(table, &kb, &key, LockMode::Exclusive)?;
        let new_row = match (kind, existing) {
            (WriteKind::Insert, Some(_)) => {
                return Err(Error::AlreadyExists {
                    message: format!(
                        "Row {} in table {} already exists",
                        key_string(&key),
                        table.name
                    ),
                })
            }
            (WriteKind::Update, None) => {
                return Err(Error::not_found(format!(
                    "Row {} in table {} is missing. Update cannot be applied.",
                    key_string(&key),
                    table.name
                )))
            }
            // INSERT OR IGNORE leaves an existing row as it is.
            (WriteKind::InsertOrIgnore, Some(_)) => return Ok(()),
            (WriteKind::Insert, None)
            | (WriteKind::InsertOrUpdate, None)
            | (WriteKind::InsertOrIgnore, None) => candidate,
            (WriteKind::Replace, existing) => {
                if existing.is_some() {
                    self.delete_row(table, kb.clone(), key.clone())?;
                }
                candidate
            }
            (WriteKind::Update, Some(mut row)) | (WriteKind::InsertOrUpdate, Some(mut row)) => {
                for &pos in positions {
                    row[pos] = candidate[pos].clone();
                }
                self.eval_defaults_and_generated(table, &mut row, positions, false)?;
                row
            }
        };
        self.validate_row(table, &key, &new_row)?;
        if let Some(p) = table
            .parent
            .as_ref()
            .filter(|p| matches!(p.kind, InterleaveKind::InParent(_)))
        {
            let parent = self
                .catalog
                .table_by_id(p.table)
                .ok_or_else(|| Error::internal("parent vanished"))?;
            let pkey = &key[..parent.primary_key.len()];
            let plevels = keys::table_levels(self.catalog, parent);
            let pkb = keys::encode_full(&plevels, pkey)?;
            if self
                .current(parent, &pkb, pkey, LockMode::Shared)?
                .is_none()
            {
                return Err(Error::not_found(format!(
                    "Insert failed because key was not found in parent table:  Parent Table: {}  Child Table: {}  Key: {{{}}}",
                    parent.name,
                    table.name,
                    pkey.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
                )));
            }
        }
        self.direct.push(kb.clone());
        self.set(kb, Some(new_row));
        Ok(())
    }

    /// Deletes a row and, as its children's ON DELETE says, its row tree.
    pub(super) fn delete_row(&mut self, table: &Table, kb: Vec<u8>, key: Vec<Value>) -> Result<()> {
        // Make sure the row's old state is loaded and locked.
        self.current(table, &kb, &key, LockMode::Exclusive)?;
        self.set(kb.clone(), None);
        let children = self.catalog.children(table.id);
        if children.is_empty() {
            return Ok(());
        }
        let prefix = &kb[..kb.len() - 1];
        let end = prefix_end(prefix);
        self.lock_range(prefix, end.as_deref(), LockMode::Exclusive)?;
        let tree = self.scan_merged(prefix, end.as_deref())?;
        for child in children {
            let Some(parent) = &child.parent else {
                continue;
            };
            let InterleaveKind::InParent(on_delete) = parent.kind else {
                continue;
            };
            for (ckb, _, ckey) in tree
                .iter()
                .filter(|(_, o, _)| *o == Object::Table(child.id))
            {
                // A grandchild row may already be gone through an earlier cascade.
                if self.state.rows.get(ckb).is_some_and(|c| c.new.is_none()) {
                    continue;
                }
                match on_delete {
                    OnDelete::Cascade => self.delete_row(child, ckb.clone(), ckey.clone())?,
                    OnDelete::NoAction => {
                        return Err(Error::FailedPrecondition {
                            message: format!(
                                "Integrity constraint violation during DELETE/REPLACE. Found child row {} in table {}: delete of row {} in table {} would leave it without its parent (ON DELETE NO ACTION).",
                                key_string(ckey), child.name, key_string(&key), table.name
                            ),
                        })
                    }
                }
            }
        }
        Ok(())
    }
}
