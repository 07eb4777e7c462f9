//! INFORMATION_SCHEMA: the catalog as tables (SCHEMATA, TABLES, COLUMNS,
//! INDEXES, ...), with Spanner's columns and values, for client libraries
//! and ORMs that read them.
//!
//! The binder asks [`virtual_table`] for any FROM path before it looks in
//! the catalog; a `Some` answer is scanned as precomputed rows, computed
//! from the catalog snapshot the statement reads.
//!
//! The tables, their columns and their values follow Spanner's GoogleSQL
//! dialect, because client libraries, ORMs and migration tools read them:
//!
//! | table | one row per |
//! |---|---|
//! | `SCHEMATA` | schema: the default `''`, `INFORMATION_SCHEMA`, `SPANNER_SYS` |
//! | `DATABASE_OPTIONS` | `database_dialect`, and each `ALTER DATABASE` option |
//! | `TABLES` | table (`BASE TABLE`), view and information schema table (`VIEW`) |
//! | `COLUMNS` | column of those (a view's columns typed by binding its query) |
//! | `COLUMN_OPTIONS` | `allow_commit_timestamp = true` column |
//! | `COLUMN_COLUMN_USAGE` | column a generated column reads |
//! | `INDEXES` | index, plus one `PRIMARY_KEY` pseudo-index per table |
//! | `INDEX_COLUMNS` | key or `STORING` column of those |
//! | `TABLE_CONSTRAINTS` | `PRIMARY KEY` (`PK_<table>`), `CHECK` (including the `CK_IS_NOT_NULL_<table>_<column>` Spanner reports for NOT NULL columns), `FOREIGN KEY` |
//! | `CHECK_CONSTRAINTS` | check, NOT NULL ones included |
//! | `CONSTRAINT_TABLE_USAGE` | constraint and the table it constrains (a foreign key: the referenced table) |
//! | `CONSTRAINT_COLUMN_USAGE` | constraint and each column it uses (a foreign key: the referenced columns) |
//! | `KEY_COLUMN_USAGE` | primary key or foreign key (referencing) column |
//! | `REFERENTIAL_CONSTRAINTS` | foreign key |
//! | `SEQUENCES`, `SEQUENCE_OPTIONS` | user sequence (identity columns' internal sequences are hidden), and its options |
//! | `VIEWS` | user view: its query text and `SQL SECURITY` (`INVOKER` or `DEFINER`) |
//! | `SPANNER_STATISTICS` | (always empty: no statistics packages) |
//!
//! The information schema describes itself too, as Spanner does: its tables
//! appear in `TABLES` (as views), `COLUMNS`, and with their primary keys and
//! NOT NULL checks in the index and constraint tables.
//!
//! Rows come in the order of each table's primary key (strings by bytes),
//! which is the order Spanner stores them in; queries that care still say
//! `ORDER BY`. Table and schema names match case-insensitively.
//!
//! What Rowtree does not model is left out rather than invented: Spanner's
//! managed foreign-key backing indexes (`IDX_..._U_<hash>`, with
//! `SPANNER_IS_MANAGED = TRUE`) have hashed names no client can rely on, so
//! a foreign key over non-key columns reports a NULL `UNIQUE_CONSTRAINT_NAME`.
//!
//! A PostgreSQL-dialect database shows the same tables in PostgreSQL's
//! shape (lower-case names, schema `public`, PostgreSQL type names; see
//! `postgresql`).
//!
//! Its `pg_catalog` (`pg_class`, `pg_attribute`, `pg_index`, `pg_tables`,
//! ...; see [`pg_catalog_table`]) is built here too, from the same view of
//! the tables, so the two descriptions of one schema cannot disagree.
//!
//! The modules: `defs` (each table's columns and key), `table_view`
//! (user and information schema tables alike), `value` (how cells are
//! spelled), the row builders `tables`, `indexes` and `constraints`,
//! and `order`.

mod constraints;
mod defs;
mod indexes;
mod order;
mod pg_catalog;
mod postgresql;
mod table_view;
mod tables;
#[cfg(test)]
mod tests;
mod value;

use rowtree_schema::Catalog;
use rowtree_types::{Dialect, Type, Value};

use constraints::{
    check_constraints, constraint_column_usage, constraint_table_usage, key_column_usage,
    referential_constraints, table_constraints,
};
use defs::{
    find_def, Def, CHECK_CONSTRAINTS, COLUMNS, COLUMN_COLUMN_USAGE, COLUMN_OPTIONS,
    CONSTRAINT_COLUMN_USAGE, CONSTRAINT_TABLE_USAGE, DATABASE_OPTIONS, INDEXES, INDEX_COLUMNS,
    KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS, SCHEMATA, SCHEMA_NAME, SEQUENCES, SEQUENCE_OPTIONS,
    TABLES, TABLE_CONSTRAINTS, VIEWS,
};
use indexes::{index_columns, indexes};
use order::sort_by_key;
use table_view::table_views;
use tables::{
    column_column_usage, column_options, columns_rows, database_options, sequence_options,
    tables_rows, view_columns_rows,
};
use value::text;

pub use pg_catalog::pg_catalog_table;

/// The columns and rows of the information schema table at `path`
/// (`["INFORMATION_SCHEMA", "TABLES"]`, any case), or `None` when `path`
/// names no such table.
#[allow(clippy::type_complexity)] // the binder's hook signature
pub fn virtual_table(
    catalog: &Catalog,
    path: &[&str],
) -> Option<(Vec<(String, Type)>, Vec<Vec<Value>>)> {
    let &[schema, name] = path else {
        return None;
    };
    if !schema.eq_ignore_ascii_case(SCHEMA_NAME) {
        return None;
    }
    let def = find_def(name)?;
    let pg = catalog.dialect() == Dialect::PostgreSql;
    let columns = def
        .columns
        .iter()
        .map(|c| {
            let name = if pg {
                postgresql::column_name(c.name)
            } else {
                c.name.to_string()
            };
            (name, c.ty())
        })
        .collect();
    let mut rows = rows(catalog, def);
    if pg {
        postgresql::reshape(def, &mut rows);
    }
    Some((columns, rows))
}

fn rows(catalog: &Catalog, def: &Def) -> Vec<Vec<Value>> {
    let tables = table_views(catalog);
    let mut rows = match def.name {
        SCHEMATA => ["", SCHEMA_NAME, "SPANNER_SYS"]
            .iter()
            .map(|name| vec![text(""), text(name), Value::Null, Value::Null])
            .collect(),
        DATABASE_OPTIONS => database_options(catalog),
        TABLES => tables_rows(catalog, &tables),
        COLUMNS => columns_rows(catalog, &tables),
        COLUMN_OPTIONS => column_options(&tables),
        COLUMN_COLUMN_USAGE => column_column_usage(&tables),
        INDEXES => indexes(catalog, &tables),
        INDEX_COLUMNS => index_columns(catalog, &tables),
        TABLE_CONSTRAINTS => table_constraints(&tables),
        CHECK_CONSTRAINTS => check_constraints(&tables),
        CONSTRAINT_TABLE_USAGE => constraint_table_usage(catalog, &tables),
        CONSTRAINT_COLUMN_USAGE => constraint_column_usage(catalog, &tables),
        KEY_COLUMN_USAGE => key_column_usage(catalog, &tables),
        REFERENTIAL_CONSTRAINTS => referential_constraints(catalog, &tables),
        SEQUENCES => catalog
            .sequences()
            .filter(|q| !q.internal)
            .map(|q| vec![text(""), text(""), text(&q.name), text("INT64")])
            .collect(),
        SEQUENCE_OPTIONS => sequence_options(catalog),
        VIEWS => catalog
            .views()
            .map(|v| {
                vec![
                    text(""),
                    text(""),
                    text(&v.name),
                    text(&v.query_text),
                    text(v.security.as_str()),
                ]
            })
            .collect(),
        _ => Vec::new(),
    };
    match def.name {
        TABLES => rows.extend(catalog.views().map(|v| {
            let mut row = vec![text(""), text(""), text(&v.name), text("VIEW")];
            row.resize(def.columns.len(), Value::Null);
            row
        })),
        COLUMNS => rows.extend(view_columns_rows(catalog)),
        _ => {}
    }
    sort_by_key(def, &mut rows);
    rows
}
