//! `CREATE TABLE`.
//!
//! Checked in Spanner's order: the name, the columns one by one, the column
//! count, the expressions (which may read any column of the table), the
//! primary key, the interleaving (parent exists, key prefix, depth), then
//! the constraints.

use rowtree_parser::ast::{self, CreateTable, TableConstraint};

use crate::error::{Result, SchemaError};
use crate::limits::{MAX_COLUMNS_PER_TABLE, MAX_INTERLEAVE_DEPTH, MAX_TABLES_PER_DATABASE};
use crate::names;
use crate::state::State;
use crate::table::{Parent, Table};
use crate::Effect;

use super::columns::{bind_column_expressions, new_column};
use super::constraints::{build_check, build_foreign_key};
use super::keys::{check_interleave_prefix, primary_key, Child};

pub(crate) fn apply(state: &mut State, stmt: &CreateTable) -> Result<Vec<Effect>> {
    let name = &stmt.name;
    if stmt.if_not_exists && state.table(&name.value).is_some() {
        return Ok(Vec::new());
    }
    names::validate("Table", &name.value, name.span)?;
    if state.name_taken(&name.value) {
        return Err(SchemaError::precondition(
            format!("Duplicate name in schema: {}.", name.value),
            name.span,
        ));
    }
    if state.tables.len() >= MAX_TABLES_PER_DATABASE {
        return Err(SchemaError::precondition(
            format!(
                "Cannot add Table {} : too many tables (limit {MAX_TABLES_PER_DATABASE} per \
                 database).",
                name.value
            ),
            name.span,
        ));
    }

    let mut table = Table {
        id: 0,
        name: name.value.clone(),
        columns: Vec::with_capacity(stmt.columns.len()),
        primary_key: Vec::new(),
        parent: None,
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        row_deletion_policy: None,
        generated_order: Vec::new(),
        next_column_id: 1,
    };
    for def in &stmt.columns {
        if table.column(&def.name.value).is_some() {
            return Err(SchemaError::precondition(
                format!("Duplicate column name {}.{}.", table.name, def.name.value),
                def.name.span,
            ));
        }
        let column = new_column(state, &table.name, def, table.next_column_id)?;
        table.next_column_id += 1;
        table.columns.push(column);
    }
    if table.columns.len() > MAX_COLUMNS_PER_TABLE {
        return Err(SchemaError::precondition(
            format!(
                "Table {} has too many columns; the limit is {MAX_COLUMNS_PER_TABLE}.",
                table.name
            ),
            stmt.columns[MAX_COLUMNS_PER_TABLE].name.span,
        ));
    }

    // The id is taken before expressions are bound: identity sequences are
    // named after it. A refused statement discards the whole state copy.
    table.id = state.take_object_id();
    let defs: Vec<(usize, &ast::ColumnDef)> = stmt.columns.iter().enumerate().collect();
    bind_column_expressions(state, &mut table, &defs)?;
    table.primary_key = primary_key(&table, &stmt.primary_key)?;

    if let Some(interleave) = &stmt.interleave {
        let parent = state.table(&interleave.parent.value).ok_or_else(|| {
            SchemaError::not_found(
                format!("Table not found: {}", interleave.parent.value),
                interleave.parent.span,
            )
        })?;
        check_interleave_prefix(
            parent,
            &Child {
                kind: "Table",
                name: &table.name,
                table: &table,
                key: &table.primary_key,
                ignore_nullability: false,
                key_spans: stmt.primary_key.iter().map(|p| p.column.span).collect(),
                span: interleave.parent.span,
            },
        )?;
        let depth = 2 + state.ancestor_ids(parent).len();
        if depth > MAX_INTERLEAVE_DEPTH {
            return Err(SchemaError::precondition(
                format!(
                    "Table {} is too deeply nested; the limit is {MAX_INTERLEAVE_DEPTH}.",
                    table.name
                ),
                interleave.parent.span,
            ));
        }
        table.parent = Some(Parent {
            table: parent.id,
            kind: interleave.kind,
        });
    }

    for constraint in &stmt.constraints {
        match constraint {
            TableConstraint::Check(check) => {
                let built = build_check(state, &table, check)?;
                table.checks.push(built);
            }
            TableConstraint::ForeignKey(fk) => {
                let built = build_foreign_key(state, &table, fk)?;
                table.foreign_keys.push(built);
            }
        }
    }
    if let Some(policy) = &stmt.row_deletion_policy {
        table.row_deletion_policy = Some(super::row_deletion::build(&table, policy)?);
    }
    state.tables.push(table);
    Ok(Vec::new())
}
