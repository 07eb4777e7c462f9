//! Primary keys and the interleaving rule.
//!
//! A child's key (a table's primary key, or an interleaved index's full key)
//! must begin with every key column of the parent, in the parent's order,
//! with the same name, type, length, direction and nullability. Spanner
//! reports the first difference it finds, in that order of checks.

use rowtree_parser::ast::{self, KeyPart, Span};

use crate::error::{Result, SchemaError};
use crate::limits::MAX_KEY_COLUMNS;
use crate::table::{declared_length, KeyColumn, Table};

/// Resolves a table's `PRIMARY KEY (...)` against its columns.
pub(crate) fn primary_key(table: &Table, parts: &[KeyPart]) -> Result<Vec<KeyColumn>> {
    let mut key: Vec<KeyColumn> = Vec::with_capacity(parts.len());
    for part in parts {
        let Some((position, column)) = table.column(&part.column.value) else {
            return Err(SchemaError::precondition(
                format!(
                    "Table {} references nonexistent key column {}.",
                    table.name, part.column.value
                ),
                part.column.span,
            ));
        };
        if key.iter().any(|k| k.column == position) {
            return Err(SchemaError::invalid(
                format!(
                    "Table {} references key column {} more than once.",
                    table.name, column.name
                ),
                part.column.span,
            ));
        }
        if !column.ty.is_key_type() {
            return Err(SchemaError::invalid(
                format!(
                    "Column {}.{} has type {}, but is part of the primary key.",
                    table.name, column.name, column.ty
                ),
                part.column.span,
            ));
        }
        if column.generated.is_some() && !column.generated_stored {
            return Err(SchemaError::invalid(
                format!(
                    "Generated column `{}.{}` cannot be part of the primary key unless it is \
                     STORED.",
                    table.name, column.name
                ),
                part.column.span,
            ));
        }
        key.push(KeyColumn {
            column: position,
            desc: part.desc,
        });
    }
    if key.len() > MAX_KEY_COLUMNS {
        return Err(SchemaError::invalid(
            format!(
                "Table {} has too many keys ({}); the limit is {MAX_KEY_COLUMNS}.",
                table.name,
                key.len()
            ),
            parts.get(MAX_KEY_COLUMNS).map(|p| p.column.span),
        ));
    }
    Ok(key)
}

/// What is interleaved: a table or an index (Spanner words the errors
/// slightly differently).
pub(crate) struct Child<'a> {
    /// `Table` or `Index`.
    pub kind: &'static str,
    pub name: &'a str,
    /// The table whose columns `key` points into.
    pub table: &'a Table,
    /// The child's (full) key.
    pub key: &'a [KeyColumn],
    /// Null-filtered indexes may differ in nullability.
    pub ignore_nullability: bool,
    /// Where to point errors about key part `i`; falls back to `span`.
    pub key_spans: Vec<Span>,
    pub span: Span,
}

/// Checks that `child`'s key starts with `parent`'s key.
pub(crate) fn check_interleave_prefix(parent: &Table, child: &Child<'_>) -> Result<()> {
    let (kind, name) = (child.kind, child.name);
    let index_word = if kind == "Index" { "index " } else { "" };
    for (i, parent_key) in parent.primary_key.iter().enumerate() {
        let parent_column = &parent.columns[parent_key.column];
        let span = child.key_spans.get(i).copied().unwrap_or(child.span);
        let must_reference = || {
            SchemaError::precondition(
                format!(
                    "{kind} {name} does not reference {index_word}parent key column {}.",
                    parent_column.name
                ),
                span,
            )
        };
        let Some(child_key) = child.key.get(i) else {
            return Err(must_reference());
        };
        let child_column = &child.table.columns[child_key.column];
        if !child_column.name.eq_ignore_ascii_case(&parent_column.name) {
            if let Some(j) = child.key.iter().position(|k| {
                child.table.columns[k.column]
                    .name
                    .eq_ignore_ascii_case(&parent_column.name)
            }) {
                return Err(SchemaError::precondition(
                    format!(
                        "{kind} {name} references parent key column {} at incorrect position {j}.",
                        parent_column.name
                    ),
                    child.key_spans.get(j).copied().unwrap_or(child.span),
                ));
            }
            return Err(must_reference());
        }
        if child_key.desc != parent_key.desc {
            return Err(SchemaError::precondition(
                format!(
                    "{kind} {name} references parent key column {} with incorrect order {}.",
                    parent_column.name,
                    if child_key.desc { "ASC" } else { "DESC" }
                ),
                span,
            ));
        }
        if child_column.ty != parent_column.ty {
            return Err(SchemaError::precondition(
                format!(
                    "{kind} {name} references parent key column {} with incorrect type {} \
                     (should be {}).",
                    parent_column.name, child_column.ty, parent_column.ty
                ),
                span,
            ));
        }
        let length = |t: &ast::DataType| {
            declared_length(t).map_or_else(|| "MAX".to_string(), |n| n.to_string())
        };
        if declared_length(&child_column.data_type) != declared_length(&parent_column.data_type) {
            return Err(SchemaError::precondition(
                format!(
                    "{kind} {name} references parent key column {} with incorrect length {} \
                     (should be {}).",
                    parent_column.name,
                    length(&child_column.data_type),
                    length(&parent_column.data_type)
                ),
                span,
            ));
        }
        if child.ignore_nullability || child_column.not_null == parent_column.not_null {
            continue;
        }
        // An index key column may be NOT NULL where the parent's is nullable.
        if kind == "Index" && child_column.not_null {
            continue;
        }
        let nullability = |not_null: bool| if not_null { "not null" } else { "nullable" };
        return Err(SchemaError::precondition(
            format!(
                "{kind} {name} references parent key column {} that is {}, but child key is {}.",
                parent_column.name,
                nullability(parent_column.not_null),
                nullability(child_column.not_null)
            ),
            span,
        ));
    }
    Ok(())
}
