//! `CREATE INDEX` and `DROP INDEX`.

use rowtree_parser::ast::{CreateIndex, Ident};

use crate::error::{Result, SchemaError};
use crate::index::Index;
use crate::limits::{MAX_INDEXES_PER_DATABASE, MAX_INDEXES_PER_TABLE, MAX_KEY_COLUMNS};
use crate::names;
use crate::state::State;
use crate::table::KeyColumn;
use crate::Effect;

use super::keys::{check_interleave_prefix, Child};

pub(crate) fn create(state: &mut State, stmt: &CreateIndex) -> Result<Vec<Effect>> {
    let name = &stmt.name;
    if stmt.if_not_exists && state.index_position(&name.value).is_some() {
        return Ok(Vec::new());
    }
    names::validate("Index", &name.value, name.span)?;
    if name.matches("PRIMARY_KEY") {
        return Err(SchemaError::invalid(
            "Cannot use reserved name PRIMARY_KEY for a secondary index",
            name.span,
        ));
    }
    if state.name_taken(&name.value) {
        return Err(SchemaError::precondition(
            format!("Duplicate name in schema: {}.", name.value),
            name.span,
        ));
    }
    let table = state.table(&stmt.table.value).ok_or_else(|| {
        SchemaError::not_found(
            format!("Table not found: {}", stmt.table.value),
            stmt.table.span,
        )
    })?;
    let index_name = name.value.as_str();

    let mut keys: Vec<KeyColumn> = Vec::with_capacity(stmt.keys.len());
    for part in &stmt.keys {
        let position = find_column(table, &part.column, index_name, "key")?;
        let column = &table.columns[position];
        if keys.iter().any(|k| k.column == position) {
            return Err(SchemaError::invalid(
                format!(
                    "Index {index_name} specifies key column {} twice.",
                    column.name
                ),
                part.column.span,
            ));
        }
        if !column.ty.is_key_type() {
            return Err(SchemaError::precondition(
                format!(
                    "Index {index_name} is defined on a column of unsupported type {}.",
                    column.ty
                ),
                part.column.span,
            ));
        }
        keys.push(KeyColumn {
            column: position,
            desc: part.desc,
        });
    }

    let mut storing: Vec<usize> = Vec::with_capacity(stmt.storing.len());
    for ident in &stmt.storing {
        let position = find_column(table, ident, index_name, "stored")?;
        let column = &table.columns[position];
        if keys.iter().any(|k| k.column == position) {
            return Err(SchemaError::invalid(
                format!(
                    "Index {index_name} specifies stored column {} already specified as primary \
                     key.",
                    column.name
                ),
                ident.span,
            ));
        }
        if table.is_key_column(position) {
            return Err(SchemaError::precondition(
                format!(
                    "Index {index_name} specifies stored column {} which is a key of table {}.",
                    column.name, table.name
                ),
                ident.span,
            ));
        }
        if storing.contains(&position) {
            return Err(SchemaError::invalid(
                format!(
                    "Index {index_name} specifies key column {} twice.",
                    column.name
                ),
                ident.span,
            ));
        }
        storing.push(position);
    }

    let index = Index {
        id: 0,
        name: index_name.to_string(),
        table: table.id,
        keys,
        storing,
        unique: stmt.unique,
        null_filtered: stmt.null_filtered,
        interleave_in: None,
    };
    let full_key = index.full_key(table);
    if full_key.len() > MAX_KEY_COLUMNS {
        return Err(SchemaError::invalid(
            format!(
                "Index {index_name} has too many keys ({}); the limit is {MAX_KEY_COLUMNS}.",
                full_key.len()
            ),
            name.span,
        ));
    }
    let on_table = state.indexes.iter().filter(|i| i.table == table.id).count();
    if on_table >= MAX_INDEXES_PER_TABLE {
        return Err(SchemaError::precondition(
            format!(
                "Cannot add index {index_name} to table {}: too many indices (limit \
                 {MAX_INDEXES_PER_TABLE} per table).",
                table.name
            ),
            name.span,
        ));
    }
    if state.indexes.len() >= MAX_INDEXES_PER_DATABASE {
        return Err(SchemaError::precondition(
            format!(
                "Cannot add Index {index_name} : too many indexes (limit \
                 {MAX_INDEXES_PER_DATABASE} per database)."
            ),
            name.span,
        ));
    }

    let mut interleave_in = None;
    if let Some(parent_name) = &stmt.interleave_in {
        let parent = state.table(&parent_name.value).ok_or_else(|| {
            SchemaError::precondition(
                format!(
                    "Cannot interleave index {index_name} within nonexistent table {}.",
                    parent_name.value
                ),
                parent_name.span,
            )
        })?;
        if parent.id != table.id && !state.ancestor_ids(table).contains(&parent.id) {
            return Err(SchemaError::precondition(
                format!(
                    "Cannot interleave index {index_name} of table {} within table {} because {} \
                     is not an ancestor of {}.",
                    table.name, parent.name, parent.name, table.name
                ),
                parent_name.span,
            ));
        }
        let mut key_spans: Vec<_> = stmt.keys.iter().map(|p| p.column.span).collect();
        key_spans.resize(full_key.len(), parent_name.span);
        check_interleave_prefix(
            parent,
            &Child {
                kind: "Index",
                name: index_name,
                table,
                key: &full_key,
                ignore_nullability: stmt.null_filtered,
                key_spans,
                span: parent_name.span,
            },
        )?;
        interleave_in = Some(parent.id);
    }

    let id = state.take_object_id();
    state.indexes.push(Index {
        id,
        interleave_in,
        ..index
    });
    Ok(vec![Effect::BackfillIndex(id)])
}

fn find_column(
    table: &crate::table::Table,
    ident: &Ident,
    index_name: &str,
    role: &str,
) -> Result<usize> {
    table.column(&ident.value).map(|(p, _)| p).ok_or_else(|| {
        SchemaError::invalid(
            format!(
                "Index {index_name} specifies {role} column {} which does not exist in the \
                 index's base table.",
                ident.value
            ),
            ident.span,
        )
    })
}

pub(crate) fn drop(state: &mut State, name: &Ident, if_exists: bool) -> Result<Vec<Effect>> {
    let Some(position) = state.index_position(&name.value) else {
        if if_exists {
            return Ok(Vec::new());
        }
        return Err(SchemaError::not_found(
            format!("Index not found: {}", name.value),
            name.span,
        ));
    };
    let index = state.indexes.remove(position);
    Ok(vec![Effect::DropIndexData(index.id)])
}
