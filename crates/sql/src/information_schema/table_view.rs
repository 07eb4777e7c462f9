//! A uniform view of the tables the metadata tables describe: the
//! catalog's user tables and the information schema's own tables (which
//! Spanner lists too), each with its columns, Spanner types and key.

use rowtree_schema::ast::{DataType, Length};
use rowtree_schema::{Catalog, Column, Table};

use super::defs::{DEFS, SCHEMA_NAME};

/// A table as the metadata tables describe it: a user table of the catalog
/// or one of the information schema's own tables.
pub(super) struct TableView<'a> {
    /// `''` for user tables.
    pub(super) schema: &'static str,
    pub(super) name: &'a str,
    pub(super) columns: Vec<ColumnView<'a>>,
    /// Primary key: positions into `columns` and DESC.
    pub(super) key: Vec<(usize, bool)>,
    pub(super) user: Option<&'a Table>,
}

pub(super) struct ColumnView<'a> {
    pub(super) name: &'a str,
    pub(super) spanner_type: String,
    pub(super) nullable: bool,
    pub(super) user: Option<&'a Column>,
}

pub(super) fn table_views(catalog: &Catalog) -> Vec<TableView<'_>> {
    let mut out: Vec<TableView<'_>> = catalog
        .tables()
        .map(|t| TableView {
            schema: "",
            name: &t.name,
            columns: t
                .columns
                .iter()
                .map(|c| ColumnView {
                    name: &c.name,
                    spanner_type: spanner_type(&c.data_type),
                    nullable: !c.not_null,
                    user: Some(c),
                })
                .collect(),
            key: t.primary_key.iter().map(|k| (k.column, k.desc)).collect(),
            user: Some(t),
        })
        .collect();
    for def in DEFS {
        out.push(TableView {
            schema: SCHEMA_NAME,
            name: def.name,
            columns: def
                .columns
                .iter()
                .map(|c| ColumnView {
                    name: c.name,
                    spanner_type: c.spanner_type.to_string(),
                    nullable: c.nullable,
                    user: None,
                })
                .collect(),
            key: def
                .key
                .iter()
                .filter_map(|k| def.columns.iter().position(|c| c.name == *k))
                .map(|p| (p, false))
                .collect(),
            user: None,
        });
    }
    out
}

/// `STRING(MAX)`, `BYTES(10)`, `ARRAY<STRING(10)>`, `INT64`,
/// `PROTO<a.b.Message>`, `ENUM<a.b.Enum>`, ...
pub(super) fn spanner_type(data_type: &DataType) -> String {
    let length = |l: &Length| match l {
        Length::Max => "MAX".to_string(),
        Length::Limit(n) => n.to_string(),
    };
    match data_type {
        DataType::String(l) => format!("STRING({})", length(l)),
        DataType::Bytes(l) => format!("BYTES({})", length(l)),
        DataType::Array(inner) => format!("ARRAY<{}>", spanner_type(inner)),
        DataType::Proto(name) => format!("PROTO<{name}>"),
        DataType::Enum(name) => format!("ENUM<{name}>"),
        other => other.value_type().to_string(),
    }
}
