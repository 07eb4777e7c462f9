//! Rows of `DATABASE_OPTIONS`, `TABLES`, `COLUMNS` (a view's columns typed
//! by binding its query), `COLUMN_OPTIONS`, `COLUMN_COLUMN_USAGE` and
//! `SEQUENCE_OPTIONS`.

use rowtree_schema::ast::InterleaveKind;
use rowtree_schema::Catalog;
use rowtree_types::Value;

use super::table_view::{spanner_type, TableView};
use super::value::{int, on_delete_text, opt_text, text, yes_no};

pub(super) fn database_options(catalog: &Catalog) -> Vec<Vec<Value>> {
    let mut out = vec![vec![
        text(""),
        text(""),
        text("database_dialect"),
        text("STRING"),
        text(match catalog.dialect() {
            rowtree_types::Dialect::GoogleSql => "GOOGLE_STANDARD_SQL",
            rowtree_types::Dialect::PostgreSql => "POSTGRESQL",
        }),
    ]];
    for (name, literal) in catalog.database_options() {
        let (ty, value) = option_value(name, literal);
        out.push(vec![text(""), text(""), text(name), text(ty), text(&value)]);
    }
    out
}

/// The `OPTION_TYPE` and `OPTION_VALUE` of a database option kept as SQL
/// literal text: strings unquoted, booleans upper-case.
pub(super) fn option_value(name: &str, literal: &str) -> (&'static str, String) {
    if let Some(body) = literal
        .strip_prefix('\'')
        .and_then(|l| l.strip_suffix('\''))
    {
        return ("STRING", unescape(body));
    }
    if literal.eq_ignore_ascii_case("true") || literal.eq_ignore_ascii_case("false") {
        return ("BOOL", literal.to_ascii_uppercase());
    }
    let ty = match name.to_ascii_lowercase().as_str() {
        "optimizer_version" => "INT64",
        _ if literal.parse::<i64>().is_ok() => "INT64",
        _ => "STRING",
    };
    (ty, literal.to_string())
}

pub(super) fn unescape(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

pub(super) fn tables_rows(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    tables
        .iter()
        .map(|t| {
            let Some(table) = t.user else {
                return vec![
                    text(""),
                    text(t.schema),
                    text(t.name),
                    text("VIEW"),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ];
            };
            let parent = table
                .parent
                .and_then(|p| catalog.table_by_id(p.table).map(|pt| (p, pt)));
            let (parent_name, on_delete, interleave) = match parent {
                Some((p, pt)) => match p.kind {
                    InterleaveKind::InParent(action) => (
                        text(&pt.name),
                        text(on_delete_text(action)),
                        text("IN PARENT"),
                    ),
                    InterleaveKind::In => (text(&pt.name), Value::Null, text("IN")),
                },
                None => (Value::Null, Value::Null, Value::Null),
            };
            vec![
                text(""),
                text(""),
                text(&table.name),
                text("BASE TABLE"),
                parent_name,
                on_delete,
                text("COMMITTED"),
                interleave,
                table
                    .row_deletion_expression(catalog.dialect())
                    .map_or(Value::Null, |e| text(&e)),
            ]
        })
        .collect()
}

/// `COLUMNS` rows of the views' output columns (their types found by
/// binding each view's query; a view that no longer binds lists none).
pub(super) fn view_columns_rows(catalog: &Catalog) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for view in catalog.views() {
        let Ok(columns) = crate::views::view_columns(catalog, view) else {
            continue;
        };
        for (pos, (name, ty)) in columns.iter().enumerate() {
            let spanner = crate::binder::data_type(ty)
                .map(|d| spanner_type(&d))
                .unwrap_or_else(|| ty.to_string());
            out.push(vec![
                text(""),
                text(""),
                text(&view.name),
                text(name),
                int(pos + 1),
                Value::Null,
                Value::Null,
                text("YES"),
                text(&spanner),
                text("NEVER"),
                Value::Null,
                Value::Null,
                Value::Bool(false),
                Value::Null,
                Value::Null,
                text("NO"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ]);
        }
    }
    out
}

pub(super) fn columns_rows(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        for (pos, c) in t.columns.iter().enumerate() {
            let mut row = vec![
                text(""),
                text(t.schema),
                text(t.name),
                text(c.name),
                int(pos + 1),
            ];
            let Some(column) = c.user else {
                row.extend([
                    Value::Null,
                    Value::Null,
                    yes_no(c.nullable),
                    text(&c.spanner_type),
                    text("NEVER"),
                    Value::Null,
                    Value::Null,
                    Value::Bool(false),
                    Value::Null,
                    Value::Null,
                    text("NO"),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
                out.push(row);
                continue;
            };
            let identity = column
                .identity_sequence
                .as_deref()
                .map(|name| catalog.sequence(name));
            let default = match (&column.default, &identity) {
                (Some(d), None) => text(&d.text),
                _ => Value::Null,
            };
            let (generated, expression, stored) = match &column.generated {
                Some(g) => (
                    text("ALWAYS"),
                    text(&g.text),
                    yes_no(column.generated_stored),
                ),
                None => (text("NEVER"), Value::Null, Value::Null),
            };
            row.extend([
                default,
                Value::Null,
                yes_no(!column.not_null),
                text(&c.spanner_type),
                generated,
                expression,
                stored,
                Value::Bool(column.hidden),
                Value::Null,
                text("COMMITTED"),
            ]);
            match identity {
                None => row.extend([
                    text("NO"),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]),
                Some(sequence) => {
                    let start = sequence
                        .filter(|q| q.start_with_counter != 1)
                        .map(|q| q.start_with_counter.to_string());
                    let skip = sequence.and_then(|q| q.skip_range);
                    row.extend([
                        text("YES"),
                        text("BY DEFAULT"),
                        text("BIT_REVERSED_POSITIVE_SEQUENCE"),
                        opt_text(start.as_deref()),
                        opt_text(skip.map(|(lo, _)| lo.to_string()).as_deref()),
                        opt_text(skip.map(|(_, hi)| hi.to_string()).as_deref()),
                    ]);
                }
            }
            out.push(row);
        }
    }
    out
}

pub(super) fn column_options(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        for c in &t.columns {
            if c.user.is_some_and(|u| u.allow_commit_timestamp) {
                out.push(vec![
                    text(""),
                    text(t.schema),
                    text(t.name),
                    text(c.name),
                    text("allow_commit_timestamp"),
                    text("BOOL"),
                    text("TRUE"),
                ]);
            }
        }
    }
    out
}

pub(super) fn column_column_usage(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in tables {
        let Some(table) = t.user else { continue };
        for column in &table.columns {
            let Some(generated) = &column.generated else {
                continue;
            };
            for used in generated.expr.columns() {
                if let Some(used) = table.columns.get(used) {
                    out.push(vec![
                        text(""),
                        text(""),
                        text(&table.name),
                        text(&used.name),
                        text(&column.name),
                    ]);
                }
            }
        }
    }
    out
}

pub(super) fn sequence_options(catalog: &Catalog) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for q in catalog.sequences().filter(|q| !q.internal) {
        let row = |name: &str, ty: &str, value: String| {
            vec![
                text(""),
                text(""),
                text(&q.name),
                text(name),
                text(ty),
                text(&value),
            ]
        };
        out.push(row(
            "sequence_kind",
            "STRING",
            rowtree_schema::BIT_REVERSED_POSITIVE.to_string(),
        ));
        if let Some((lo, hi)) = q.skip_range {
            out.push(row("skip_range_min", "INT64", lo.to_string()));
            out.push(row("skip_range_max", "INT64", hi.to_string()));
        }
        if q.start_with_counter != 1 {
            out.push(row(
                "start_with_counter",
                "INT64",
                q.start_with_counter.to_string(),
            ));
        }
    }
    out
}
