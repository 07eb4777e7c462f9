//! The locality rules: rows read together should be stored together, and in
//! the order they are read.
//!
//! Interleaving a child in its parent stores each child row right after its
//! parent row, in one row tree that Spanner never splits apart: reading a
//! parent with its children is one range read on one split instead of a
//! lookup in another table on (often) another node. Within a row tree,
//! rows are in key order, so a history read newest-first wants the time
//! column `DESC`.

use rowtree_schema::ast::{DataType, Length};

use crate::classify::Order;
use crate::ddl::{Sql, TableDdl};
use crate::rules::Context;
use crate::{Finding, Rule, Severity};

/// Column name words that mark a large payload rarely read with its row.
const PAYLOAD_WORDS: &[&str] = &[
    "payload",
    "blob",
    "body",
    "content",
    "image",
    "photo",
    "picture",
    "attachment",
    "raw",
    "document",
    "file",
    "html",
    "thumbnail",
    "binary",
    "video",
    "audio",
];

/// `interleave-candidate`: a root table keyed by another table's full key
/// (same column names and types) but not interleaved in it; and a large
/// payload column kept inside a row tree that has children.
pub(crate) fn interleave_candidate(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for table in ctx.catalog.tables() {
        if table.parent.is_some() {
            continue;
        }
        let Some(parent) = ctx.key_prefix_tables(table).into_iter().next() else {
            continue;
        };
        let keys: Vec<&str> = parent
            .primary_key
            .iter()
            .map(|k| parent.columns[k.column].name.as_str())
            .collect();
        let mut ddl = TableDdl::of(ctx.catalog, table);
        ddl.interleave = Some((parent.name.clone(), None));
        // Interleaving requires the child's leading key directions to
        // match the parent's.
        for (i, k) in parent.primary_key.iter().enumerate() {
            ddl.key[i].1 = k.desc;
        }
        let message = format!(
            "{} is keyed by the key of {} ({}) followed by columns of its own, but is a separate root table: the {} rows of one {} row live in another part of the key space, often on another node, so reading a {} row with its {} rows touches two splits. Interleaving {} in {} stores them inside the parent's row tree, in one split. Use INTERLEAVE IN PARENT ... ON DELETE CASCADE instead if child rows must not outlive their parent; ignore this if the two are never read together.",
            table.name,
            parent.name,
            keys.join(", "),
            table.name,
            parent.name,
            parent.name,
            table.name,
            table.name,
            parent.name
        );
        out.push(ctx.finding(
            Rule::InterleaveCandidate,
            Severity::Info,
            &table.name,
            message,
            Some(ddl.print()),
        ));
    }
    let sql = Sql(ctx.catalog.dialect());
    let print_name = |n: &str| sql.name(n);
    for table in ctx.catalog.tables() {
        if ctx.catalog.children(table.id).is_empty() {
            continue;
        }
        for (pos, column) in table.columns.iter().enumerate() {
            if table.is_key_column(pos) {
                continue;
            }
            let unbounded = matches!(
                column.data_type,
                DataType::Bytes(Length::Max) | DataType::String(Length::Max) | DataType::Json
            );
            let lower = column.name.to_ascii_lowercase();
            if !unbounded || !PAYLOAD_WORDS.iter().any(|w| lower.contains(w)) {
                continue;
            }
            let key: Vec<String> = table
                .primary_key
                .iter()
                .map(|k| {
                    let c = &table.columns[k.column];
                    format!(
                        "  {} {} NOT NULL,",
                        print_name(&c.name),
                        sql.type_name(&c.data_type)
                    )
                })
                .collect();
            let key_names: Vec<String> = table
                .primary_key
                .iter()
                .map(|k| print_name(&table.columns[k.column].name))
                .collect();
            let side = if ctx.catalog.dialect() == rowtree_types::Dialect::PostgreSql {
                format!("{}_{}", table.name, column.name)
            } else {
                format!("{}{}", table.name, column.name)
            };
            let columns = format!(
                "{}\n  {} {},",
                key.join("\n"),
                print_name(&column.name),
                sql.type_name(&column.data_type)
            );
            let key_names = key_names.join(", ");
            let create = if ctx.catalog.dialect() == rowtree_types::Dialect::PostgreSql {
                format!(
                    "CREATE TABLE {} (\n{columns}\n  PRIMARY KEY ({key_names})\n);",
                    print_name(&side)
                )
            } else {
                format!(
                    "CREATE TABLE {} (\n{columns}\n) PRIMARY KEY ({key_names});",
                    print_name(&side)
                )
            };
            let fix = format!(
                "{create}\nALTER TABLE {} DROP COLUMN {};",
                print_name(&table.name),
                print_name(&column.name)
            );
            let message = format!(
                "{}.{} is an unbounded payload column in a table with interleaved children: every row tree of {} carries it, so splits fill with payload bytes, hold fewer row trees, and reads of {} with its children move more data. If the payload is read rarely, keep it in a table of its own keyed like {}.",
                table.name, column.name, table.name, table.name, table.name
            );
            out.push(ctx.finding(
                Rule::InterleaveCandidate,
                Severity::Info,
                &table.name,
                message,
                Some(fix),
            ));
        }
    }
}

/// `desc-history`: a table keyed (parent key, timestamp ASC), interleaved in
/// its parent or keyed by another table's full key.
pub(crate) fn desc_history(ctx: &Context<'_>, out: &mut Vec<Finding>) {
    for table in ctx.catalog.tables() {
        let parent = match table.parent {
            Some(p) => ctx.catalog.table_by_id(p.table),
            None => ctx.key_prefix_tables(table).into_iter().next(),
        };
        let Some(parent) = parent else { continue };
        let n = parent.primary_key.len();
        let Some(next) = table.primary_key.get(n) else {
            continue;
        };
        if next.desc {
            continue;
        }
        let column = &table.columns[next.column];
        if !matches!(column.data_type, DataType::Timestamp | DataType::Date)
            && !matches!(
                ctx.order(table, next.column),
                Order::Time { certain: true, .. }
            )
        {
            continue;
        }
        let mut ddl = TableDdl::of(ctx.catalog, table);
        ddl.key[n].1 = true;
        let message = format!(
            "{} keeps each {} row's history in {} ASC order, so the newest entries are the last rows of the range: \"latest N\" reads must scan to the end or sort. Keying {} DESC puts the newest first, so they are read with LIMIT N from the start of the range. Ignore this if history is read oldest-first.",
            table.name, parent.name, column.name, column.name
        );
        out.push(ctx.finding(
            Rule::DescHistory,
            Severity::Info,
            &table.name,
            message,
            Some(ddl.print()),
        ));
    }
}
