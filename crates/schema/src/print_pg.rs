//! GetDatabaseDdl for a PostgreSQL-dialect database: the schema printed back
//! in PostgreSQL's syntax.
//!
//! The catalog is the same whatever the dialect; only the spelling differs.
//! The statements come in the same order as GoogleSQL's ([`crate::print`]):
//! sequences, each table followed by its indexes, foreign keys that name a
//! later table as trailing `ALTER TABLE ... ADD CONSTRAINT`, then views. Names
//! are printed bare when PostgreSQL would fold them to themselves (lower
//! case, not reserved) and `"quoted"` otherwise, so re-applying the output
//! recreates the same names. Expressions are printed as the user wrote them.
//!
//! ```text
//! CREATE TABLE albums (
//!   singer_id bigint NOT NULL,
//!   album_id bigint NOT NULL,
//!   title character varying,
//!   PRIMARY KEY(singer_id, album_id)
//! ) INTERLEAVE IN PARENT singers ON DELETE CASCADE
//! ```
//!
//! Objects only GoogleSQL DDL can create (roles and grants, the proto
//! bundle, database options) have no PostgreSQL form here yet, and the
//! PostgreSQL parser cannot create them.

use crate::names::print_pg_name as name;
use std::collections::HashSet;

use rowtree_parser::ast::{self, DataType, Expr, Length};

use crate::index::Index;
use crate::print::views_in_dependency_order;
use crate::sequence::Sequence;
use crate::state::State;
use crate::table::{CheckConstraint, Column, ForeignKey, KeyColumn, Table};
use crate::TableId;

/// All statements of the schema, in PostgreSQL's syntax.
pub(crate) fn ddl(state: &State) -> Vec<String> {
    let mut out = Vec::new();
    for sequence in state.sequences.iter().filter(|s| !s.internal) {
        out.push(print_sequence(sequence));
    }
    let mut printed: HashSet<TableId> = HashSet::new();
    let mut deferred = Vec::new();
    for table in &state.tables {
        printed.insert(table.id);
        let (inline, later): (Vec<&ForeignKey>, Vec<&ForeignKey>) = table
            .foreign_keys
            .iter()
            .partition(|fk| printed.contains(&fk.referenced_table));
        out.push(print_table(state, table, &inline));
        for fk in later {
            deferred.push(format!(
                "ALTER TABLE {} ADD {}",
                name(&table.name),
                print_foreign_key(state, table, fk, true)
            ));
        }
        let mut indexes: Vec<&Index> = state
            .indexes
            .iter()
            .filter(|i| i.table == table.id)
            .collect();
        indexes.sort_by(|a, b| a.name.cmp(&b.name));
        for index in indexes {
            out.push(print_index(state, table, index));
        }
    }
    out.extend(deferred);
    for view in views_in_dependency_order(state) {
        out.push(format!(
            "CREATE VIEW {} SQL SECURITY {} AS {}",
            name(&view.name),
            view.security.as_str(),
            view.query_text
        ));
    }
    out
}

/// A declared type in PostgreSQL's words.
pub(crate) fn print_type(data_type: &DataType) -> String {
    match data_type {
        DataType::Bool => "boolean".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "real".into(),
        DataType::Float64 => "double precision".into(),
        DataType::Numeric => "numeric".into(),
        DataType::String(Length::Max) => "character varying".into(),
        DataType::String(Length::Limit(n)) => format!("character varying({n})"),
        DataType::Bytes(_) => "bytea".into(),
        DataType::Date => "date".into(),
        DataType::Timestamp => "timestamp with time zone".into(),
        DataType::Json => "jsonb".into(),
        DataType::Uuid => "uuid".into(),
        DataType::Array(inner) => format!("{}[]", print_type(inner)),
        // Not column types of a PostgreSQL database; the parser never
        // produces them there.
        DataType::Struct(_) | DataType::Proto(_) | DataType::Enum(_) => {
            data_type.value_type().to_string()
        }
    }
}

/// Whether an expression reads unambiguously without parentheses after
/// `DEFAULT`.
fn is_simple(expr: &Expr) -> bool {
    match expr {
        Expr::Literal { .. }
        | Expr::Column { .. }
        | Expr::Parameter { .. }
        | Expr::Function { .. }
        | Expr::Cast { .. } => true,
        Expr::Unary {
            op: ast::UnaryOp::Neg,
            expr,
            ..
        } => matches!(expr.as_ref(), Expr::Literal { .. }),
        _ => false,
    }
}

fn print_column(state: &State, column: &Column) -> String {
    let ty = if column.allow_commit_timestamp && column.ty == rowtree_types::Type::Timestamp {
        "spanner.commit_timestamp".to_string()
    } else {
        print_type(&column.data_type)
    };
    let mut out = format!("{} {ty}", name(&column.name));
    if column.not_null {
        out.push_str(" NOT NULL");
    }
    if let Some(generated) = &column.generated {
        out.push_str(&format!(
            " GENERATED ALWAYS AS ({}) {}",
            generated.text,
            if column.generated_stored {
                "STORED"
            } else {
                "VIRTUAL"
            }
        ));
    } else if let Some(sequence_name) = &column.identity_sequence {
        out.push_str(" GENERATED BY DEFAULT AS IDENTITY");
        if let Some(seq) = state.sequences.iter().find(|s| &s.name == sequence_name) {
            let clauses = sequence_clauses(seq);
            if !clauses.is_empty() {
                out.push_str(&format!(" ({clauses})"));
            }
        }
    } else if let Some(default) = &column.default {
        if is_simple(&default.source) {
            out.push_str(&format!(" DEFAULT {}", default.text));
        } else {
            out.push_str(&format!(" DEFAULT ({})", default.text));
        }
    }
    out
}

fn print_key(table: &Table, key: &[KeyColumn]) -> String {
    key.iter()
        .map(|k| {
            let n = name(&table.columns[k.column].name);
            if k.desc {
                format!("{n} DESC")
            } else {
                n
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn column_list(table: &Table, positions: &[usize]) -> String {
    positions
        .iter()
        .map(|&p| name(&table.columns[p].name))
        .collect::<Vec<_>>()
        .join(", ")
}

fn print_foreign_key(state: &State, table: &Table, fk: &ForeignKey, force_name: bool) -> String {
    let referenced = if fk.referenced_table == table.id {
        Some(table)
    } else {
        state.table_by_id(fk.referenced_table)
    };
    let mut out = String::new();
    if !fk.generated_name || force_name {
        out.push_str(&format!("CONSTRAINT {} ", name(&fk.name)));
    }
    let (ref_name, ref_columns) = match referenced {
        Some(r) => (name(&r.name), column_list(r, &fk.referenced_columns)),
        None => (String::new(), String::new()),
    };
    out.push_str(&format!(
        "FOREIGN KEY ({}) REFERENCES {ref_name}({ref_columns})",
        column_list(table, &fk.columns)
    ));
    if fk.on_delete == ast::OnDelete::Cascade {
        out.push_str(" ON DELETE CASCADE");
    }
    out
}

fn print_check(check: &CheckConstraint) -> String {
    let mut out = String::new();
    if !check.generated_name {
        out.push_str(&format!("CONSTRAINT {} ", name(&check.name)));
    }
    out.push_str(&format!("CHECK ({})", check.expr.text));
    out
}

fn print_table(state: &State, table: &Table, foreign_keys: &[&ForeignKey]) -> String {
    let mut out = format!("CREATE TABLE {} (\n", name(&table.name));
    for column in &table.columns {
        out.push_str(&format!("  {},\n", print_column(state, column)));
    }
    for fk in foreign_keys {
        out.push_str(&format!(
            "  {},\n",
            print_foreign_key(state, table, fk, false)
        ));
    }
    for check in &table.checks {
        out.push_str(&format!("  {},\n", print_check(check)));
    }
    out.push_str(&format!(
        "  PRIMARY KEY({})\n)",
        print_key(table, &table.primary_key)
    ));
    if let Some(parent) = &table.parent {
        let parent_name = state
            .table_by_id(parent.table)
            .map(|p| name(&p.name))
            .unwrap_or_default();
        match parent.kind {
            ast::InterleaveKind::InParent(action) => {
                let action = match action {
                    ast::OnDelete::Cascade => "CASCADE",
                    ast::OnDelete::NoAction => "NO ACTION",
                };
                out.push_str(&format!(
                    " INTERLEAVE IN PARENT {parent_name} ON DELETE {action}"
                ));
            }
            ast::InterleaveKind::In => out.push_str(&format!(" INTERLEAVE IN {parent_name}")),
        }
    }
    if let Some(policy) = table.row_deletion_expression(rowtree_types::Dialect::PostgreSql) {
        out.push_str(&format!(" TTL {policy}"));
    }
    out
}

pub(crate) fn print_index(state: &State, table: &Table, index: &Index) -> String {
    let mut out = String::from("CREATE");
    if index.unique {
        out.push_str(" UNIQUE");
    }
    out.push_str(&format!(
        " INDEX {} ON {} ({})",
        name(&index.name),
        name(&table.name),
        print_key(table, &index.keys)
    ));
    if !index.storing.is_empty() {
        out.push_str(&format!(
            " INCLUDE ({})",
            column_list(table, &index.storing)
        ));
    }
    if let Some(parent) = index.interleave_in.and_then(|id| state.table_by_id(id)) {
        out.push_str(&format!(" INTERLEAVE IN {}", name(&parent.name)));
    }
    if index.null_filtered {
        let filters: Vec<String> = index
            .keys
            .iter()
            .map(|k| format!("{} IS NOT NULL", name(&table.columns[k.column].name)))
            .collect();
        out.push_str(&format!(" WHERE {}", filters.join(" AND ")));
    }
    out
}

/// `BIT_REVERSED_POSITIVE SKIP RANGE a b START COUNTER WITH n`, each
/// clause only if it was given.
fn sequence_clauses(sequence: &Sequence) -> String {
    let mut clauses = Vec::new();
    if sequence.spelling.kind_explicit {
        clauses.push("BIT_REVERSED_POSITIVE".to_string());
    }
    if let Some((lo, hi)) = sequence.skip_range {
        clauses.push(format!("SKIP RANGE {lo} {hi}"));
    }
    if sequence.spelling.start_explicit {
        clauses.push(format!(
            "START COUNTER WITH {}",
            sequence.start_with_counter
        ));
    }
    clauses.join(" ")
}

fn print_sequence(sequence: &Sequence) -> String {
    let clauses = sequence_clauses(sequence);
    if clauses.is_empty() {
        format!("CREATE SEQUENCE {}", name(&sequence.name))
    } else {
        format!("CREATE SEQUENCE {} {clauses}", name(&sequence.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_unless_folding_keeps_them() {
        assert_eq!(name("singers"), "singers");
        assert_eq!(name("album_id2"), "album_id2");
        assert_eq!(name("Singers"), "\"Singers\"");
        assert_eq!(name("select"), "\"select\"");
        assert_eq!(name("a\"b"), "\"a\"\"b\"");
        assert_eq!(name("1a"), "\"1a\"");
    }
}
