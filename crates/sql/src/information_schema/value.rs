//! How the metadata tables spell their cells: text, integers, `YES`/`NO`,
//! and the names Spanner gives implicit constraints (`PK_<table>`,
//! `CK_IS_NOT_NULL_<table>_<column>`).

use rowtree_schema::ast::OnDelete;
use rowtree_schema::{Catalog, ForeignKey};
use rowtree_types::Value;

pub(super) fn pk_name(table: &str) -> String {
    format!("PK_{table}")
}

pub(super) fn not_null_name(table: &str, column: &str) -> String {
    format!("CK_IS_NOT_NULL_{table}_{column}")
}

pub(super) fn on_delete_text(action: OnDelete) -> &'static str {
    match action {
        OnDelete::Cascade => "CASCADE",
        OnDelete::NoAction => "NO ACTION",
    }
}

pub(super) fn yes_no(b: bool) -> Value {
    text(if b { "YES" } else { "NO" })
}

pub(super) fn text(s: &str) -> Value {
    Value::String(s.to_string())
}

pub(super) fn opt_text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, text)
}

pub(super) fn int(n: usize) -> Value {
    Value::Int64(n as i64)
}

/// The unique constraint a foreign key's referenced columns match: the
/// referenced table's primary key when they are exactly its columns (in any
/// order). Returns the constraint name and, per referenced column, its
/// 1-based position in that key.
pub(super) fn fk_unique_constraint(
    catalog: &Catalog,
    fk: &ForeignKey,
) -> Option<(String, Vec<usize>)> {
    let referenced = catalog.table_by_id(fk.referenced_table)?;
    let columns = &fk.referenced_columns;
    if columns.len() != referenced.primary_key.len() || columns.is_empty() {
        return None;
    }
    let positions: Option<Vec<usize>> = columns
        .iter()
        .map(|c| {
            referenced
                .primary_key
                .iter()
                .position(|k| k.column == *c)
                .map(|p| p + 1)
        })
        .collect();
    positions.map(|p| (pk_name(&referenced.name), p))
}
