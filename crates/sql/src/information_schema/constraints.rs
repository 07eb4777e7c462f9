//! Rows of the constraint tables: `TABLE_CONSTRAINTS`,
//! `CHECK_CONSTRAINTS`, `CONSTRAINT_TABLE_USAGE`, `CONSTRAINT_COLUMN_USAGE`,
//! `KEY_COLUMN_USAGE` and `REFERENTIAL_CONSTRAINTS`. Primary keys and NOT
//! NULL columns appear as constraints, named as Spanner names them.

use rowtree_schema::Catalog;
use rowtree_types::Value;

use super::table_view::TableView;
use super::value::{
    fk_unique_constraint, int, not_null_name, on_delete_text, opt_text, pk_name, text, yes_no,
};

pub(super) fn table_constraints(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let row = |name: &str, table: &str, kind: &str, enforced: bool| {
            vec![
                text(""),
                text(t.schema),
                text(name),
                text(""),
                text(t.schema),
                text(table),
                text(kind),
                text("NO"),
                text("NO"),
                yes_no(enforced),
            ]
        };
        out.push(row(&pk_name(t.name), t.name, "PRIMARY KEY", true));
        for c in t.columns.iter().filter(|c| !c.nullable) {
            out.push(row(&not_null_name(t.name, c.name), t.name, "CHECK", true));
        }
        let Some(table) = t.user else { continue };
        for check in &table.checks {
            out.push(row(&check.name, t.name, "CHECK", true));
        }
        for fk in &table.foreign_keys {
            out.push(row(&fk.name, t.name, "FOREIGN KEY", fk.enforced));
        }
    }
    out
}

pub(super) fn check_constraints(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let row = |name: &str, clause: &str| {
            vec![
                text(""),
                text(t.schema),
                text(name),
                text(clause),
                text("COMMITTED"),
            ]
        };
        for c in t.columns.iter().filter(|c| !c.nullable) {
            out.push(row(
                &not_null_name(t.name, c.name),
                &format!("{} IS NOT NULL", c.name),
            ));
        }
        if let Some(table) = t.user {
            for check in &table.checks {
                out.push(row(&check.name, &check.expr.text));
            }
        }
    }
    out
}

pub(super) fn constraint_table_usage(
    catalog: &Catalog,
    tables: &[TableView<'_>],
) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let row = |table: &str, name: &str| {
            vec![
                text(""),
                text(t.schema),
                text(table),
                text(""),
                text(t.schema),
                text(name),
            ]
        };
        out.push(row(t.name, &pk_name(t.name)));
        for c in t.columns.iter().filter(|c| !c.nullable) {
            out.push(row(t.name, &not_null_name(t.name, c.name)));
        }
        let Some(table) = t.user else { continue };
        for check in &table.checks {
            out.push(row(t.name, &check.name));
        }
        for fk in &table.foreign_keys {
            if let Some(referenced) = catalog.table_by_id(fk.referenced_table) {
                out.push(row(&referenced.name, &fk.name));
            }
        }
    }
    out
}

pub(super) fn constraint_column_usage(
    catalog: &Catalog,
    tables: &[TableView<'_>],
) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let row = |table: &str, column: &str, name: &str| {
            vec![
                text(""),
                text(t.schema),
                text(table),
                text(column),
                text(""),
                text(t.schema),
                text(name),
            ]
        };
        let pk = pk_name(t.name);
        for &(column, _) in &t.key {
            out.push(row(t.name, t.columns[column].name, &pk));
        }
        for c in t.columns.iter().filter(|c| !c.nullable) {
            out.push(row(t.name, c.name, &not_null_name(t.name, c.name)));
        }
        let Some(table) = t.user else { continue };
        for check in &table.checks {
            for column in check.expr.expr.columns() {
                if let Some(c) = table.columns.get(column) {
                    out.push(row(t.name, &c.name, &check.name));
                }
            }
        }
        for fk in &table.foreign_keys {
            let Some(referenced) = catalog.table_by_id(fk.referenced_table) else {
                continue;
            };
            for &column in &fk.referenced_columns {
                if let Some(c) = referenced.columns.get(column) {
                    out.push(row(&referenced.name, &c.name, &fk.name));
                }
            }
        }
    }
    out
}

pub(super) fn key_column_usage(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let row = |name: &str, column: &str, ordinal: usize, unique_position: Value| {
            vec![
                text(""),
                text(t.schema),
                text(name),
                text(""),
                text(t.schema),
                text(t.name),
                text(column),
                int(ordinal),
                unique_position,
            ]
        };
        let pk = pk_name(t.name);
        for (n, &(column, _)) in t.key.iter().enumerate() {
            out.push(row(&pk, t.columns[column].name, n + 1, Value::Null));
        }
        let Some(table) = t.user else { continue };
        for fk in &table.foreign_keys {
            let positions = fk_unique_constraint(catalog, fk).map(|(_, positions)| positions);
            for (n, &column) in fk.columns.iter().enumerate() {
                let position = positions.as_ref().map_or(n + 1, |p| p[n]);
                out.push(row(&fk.name, t.columns[column].name, n + 1, int(position)));
            }
        }
    }
    out
}

pub(super) fn referential_constraints(
    catalog: &Catalog,
    tables: &[TableView<'_>],
) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let Some(table) = t.user else { continue };
        for fk in &table.foreign_keys {
            let unique = fk_unique_constraint(catalog, fk).map(|(name, _)| name);
            let (catalog_name, schema_name) = if unique.is_some() {
                (text(""), text(""))
            } else {
                (Value::Null, Value::Null)
            };
            out.push(vec![
                text(""),
                text(""),
                text(&fk.name),
                catalog_name,
                schema_name,
                opt_text(unique.as_deref()),
                text("SIMPLE"),
                text("NO ACTION"),
                text(on_delete_text(fk.on_delete)),
                text("COMMITTED"),
            ]);
        }
    }
    out
}
