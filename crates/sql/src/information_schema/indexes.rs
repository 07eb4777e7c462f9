//! Rows of `INDEXES` and `INDEX_COLUMNS`: each secondary index, plus the
//! `PRIMARY_KEY` pseudo-index Spanner reports for every table.

use rowtree_schema::Catalog;
use rowtree_types::Value;

use super::table_view::TableView;
use super::value::{int, text, yes_no};

pub(super) fn indexes(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        if let Some(table) = t.user {
            for index in catalog.indexes_of(table.id) {
                let parent = index
                    .interleave_in
                    .and_then(|id| catalog.table_by_id(id))
                    .map_or("", |p| p.name.as_str());
                out.push(vec![
                    text(""),
                    text(""),
                    text(&table.name),
                    text(&index.name),
                    text("INDEX"),
                    text(parent),
                    Value::Bool(index.unique),
                    Value::Bool(index.null_filtered),
                    text("READ_WRITE"),
                    Value::Bool(false),
                ]);
            }
        }
        out.push(vec![
            text(""),
            text(t.schema),
            text(t.name),
            text("PRIMARY_KEY"),
            text("PRIMARY_KEY"),
            text(""),
            Value::Bool(true),
            Value::Bool(false),
            Value::Null,
            Value::Bool(false),
        ]);
    }
    out
}

pub(super) fn index_columns(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let ordering = |desc: bool| text(if desc { "DESC" } else { "ASC" });
    for t in tables {
        if let Some(table) = t.user {
            for index in catalog.indexes_of(table.id) {
                let row = |column: usize, ordinal: Value, order: Value, nullable: bool| {
                    vec![
                        text(""),
                        text(""),
                        text(&table.name),
                        text(&index.name),
                        text("INDEX"),
                        text(t.columns[column].name),
                        ordinal,
                        order,
                        yes_no(nullable),
                        text(&t.columns[column].spanner_type),
                    ]
                };
                for (n, k) in index.keys.iter().enumerate() {
                    let nullable = t.columns[k.column].nullable && !index.null_filtered;
                    out.push(row(k.column, int(n + 1), ordering(k.desc), nullable));
                }
                for &column in &index.storing {
                    out.push(row(
                        column,
                        Value::Null,
                        Value::Null,
                        t.columns[column].nullable,
                    ));
                }
            }
        }
        for (n, &(column, desc)) in t.key.iter().enumerate() {
            out.push(vec![
                text(""),
                text(t.schema),
                text(t.name),
                text("PRIMARY_KEY"),
                text("PRIMARY_KEY"),
                text(t.columns[column].name),
                int(n + 1),
                ordering(desc),
                yes_no(t.columns[column].nullable),
                text(&t.columns[column].spanner_type),
            ]);
        }
    }
    out
}
