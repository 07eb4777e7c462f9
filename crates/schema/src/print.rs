//! GetDatabaseDdl: printing the schema back as DDL, in Spanner's canonical
//! format.
//!
//! Order: `ALTER DATABASE` options, the proto bundle, roles, sequences (user
//! ones; identity sequences print inside their column), then every table in
//! creation order, each followed by its indexes sorted by name; then views
//! (each after the views it reads), privileges and role memberships. A table whose foreign key names a
//! table printed later (possible after `ALTER TABLE ADD CONSTRAINT`) gets
//! that key as a trailing `ALTER TABLE ... ADD` statement, so the output
//! always re-applies cleanly.
//!
//! ```text
//! CREATE TABLE Albums (
//!   SingerId INT64 NOT NULL,
//!   AlbumId INT64 NOT NULL,
//!   Title STRING(MAX),
//!   ReleasedAt TIMESTAMP,
//! ) PRIMARY KEY(SingerId, AlbumId),
//!   INTERLEAVE IN PARENT Singers ON DELETE CASCADE,
//!   ROW DELETION POLICY (OLDER_THAN(ReleasedAt, INTERVAL 30 DAY))
//! ```

use std::collections::HashSet;

use rowtree_parser::ast::{self, DataType, GrantObjectKind, Length, PrivilegeKind};

use crate::access::PrivilegeGrant;

use crate::index::Index;
use crate::names::print_name;
use crate::sequence::Sequence;
use crate::state::State;
use crate::table::{CheckConstraint, Column, ForeignKey, KeyColumn, Table};
use crate::view::View;
use crate::TableId;

/// All statements of the schema.
pub(crate) fn ddl(state: &State) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(db) = &state.database_name {
        for (name, value) in &state.database_options {
            out.push(format!(
                "ALTER DATABASE {} SET OPTIONS ({name} = {value})",
                print_name(db)
            ));
        }
    }
    if let Some(types) = &state.proto_bundle {
        out.push(print_proto_bundle(types));
    }
    for role in &state.roles {
        out.push(format!("CREATE ROLE {}", print_name(&role.name)));
    }
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
                print_name(&table.name),
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
            print_name(&view.name),
            view.security.as_str(),
            view.query_text
        ));
    }
    out.extend(print_grants(state));
    out
}

/// `CREATE PROTO BUNDLE (` one type per line, each with a trailing comma `)`.
fn print_proto_bundle(types: &[String]) -> String {
    let mut out = String::from("CREATE PROTO BUNDLE (\n");
    for t in types {
        let parts: Vec<String> = t.split('.').map(print_name).collect();
        out.push_str(&format!("  {},\n", parts.join(".")));
    }
    out.push(')');
    out
}

/// Views with every view printed after the views it reads (creation order
/// otherwise; CREATE OR REPLACE may make a view read a later one).
pub(crate) fn views_in_dependency_order(state: &State) -> Vec<&View> {
    let mut out: Vec<&View> = Vec::new();
    let mut left: Vec<&View> = state.views.iter().collect();
    while !left.is_empty() {
        let before = left.len();
        let mut i = 0;
        while i < left.len() {
            let ready = left[i].dependencies.iter().all(|d| {
                state.view(d).is_none() || out.iter().any(|v| v.name.eq_ignore_ascii_case(d))
            });
            if ready {
                out.push(left.remove(i));
            } else {
                i += 1;
            }
        }
        if left.len() == before {
            // A cycle cannot be created; print the rest as they are.
            out.append(&mut left);
        }
    }
    out
}

/// GRANT statements: per role and object in the order first granted, one
/// statement per privilege (table-wide, then its columns); then role
/// memberships.
fn print_grants(state: &State) -> Vec<String> {
    let mut out = Vec::new();
    let mut groups: Vec<(&str, GrantObjectKind, &str)> = Vec::new();
    for g in &state.privilege_grants {
        let key = (g.role.as_str(), g.object_kind, g.object.as_str());
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    let kinds = [
        PrivilegeKind::Select,
        PrivilegeKind::Insert,
        PrivilegeKind::Update,
        PrivilegeKind::Delete,
    ];
    for (role, object_kind, object) in groups {
        let of_group: Vec<&PrivilegeGrant> = state
            .privilege_grants
            .iter()
            .filter(|g| g.role == role && g.object_kind == object_kind && g.object == object)
            .collect();
        let tail = format!(
            "ON {} {} TO ROLE {}",
            object_kind.as_str(),
            print_name(object),
            print_name(role)
        );
        for kind in kinds {
            let of_kind: Vec<&&PrivilegeGrant> =
                of_group.iter().filter(|g| g.privilege == kind).collect();
            if of_kind.iter().any(|g| g.column.is_none()) {
                out.push(format!("GRANT {} {tail}", kind.as_str()));
            }
            let columns: Vec<String> = of_kind
                .iter()
                .filter_map(|g| g.column.as_deref().map(print_name))
                .collect();
            if !columns.is_empty() {
                out.push(format!(
                    "GRANT {}({}) {tail}",
                    kind.as_str(),
                    columns.join(", ")
                ));
            }
        }
    }
    for m in &state.role_grants {
        out.push(format!(
            "GRANT ROLE {} TO ROLE {}",
            print_name(&m.granted),
            print_name(&m.member)
        ));
    }
    out
}

fn print_type(data_type: &DataType) -> String {
    match data_type {
        DataType::String(length) => format!("STRING({})", print_length(length)),
        DataType::Bytes(length) => format!("BYTES({})", print_length(length)),
        DataType::Array(inner) => format!("ARRAY<{}>", print_type(inner)),
        other => other.value_type().to_string(),
    }
}

fn print_length(length: &Length) -> String {
    match length {
        Length::Max => "MAX".to_string(),
        Length::Limit(n) => n.to_string(),
    }
}

fn print_column(state: &State, column: &Column) -> String {
    let mut out = format!(
        "{} {}",
        print_name(&column.name),
        print_type(&column.data_type)
    );
    if column.not_null {
        out.push_str(" NOT NULL");
    }
    if let Some(generated) = &column.generated {
        out.push_str(&format!(" AS ({})", generated.text));
        if column.generated_stored {
            out.push_str(" STORED");
        }
    } else if let Some(sequence_name) = &column.identity_sequence {
        out.push_str(" GENERATED BY DEFAULT AS IDENTITY");
        if let Some(seq) = state.sequences.iter().find(|s| &s.name == sequence_name) {
            let mut options = Vec::new();
            if seq.spelling.kind_explicit {
                options.push("BIT_REVERSED_POSITIVE".to_string());
            }
            if let Some((lo, hi)) = seq.skip_range {
                options.push(format!("SKIP RANGE {lo}, {hi}"));
            }
            if seq.spelling.start_explicit {
                options.push(format!("START COUNTER WITH {}", seq.start_with_counter));
            }
            if !options.is_empty() {
                out.push_str(&format!(" ({})", options.join(" ")));
            }
        }
    } else if let Some(default) = &column.default {
        out.push_str(&format!(" DEFAULT ({})", default.text));
    }
    if column.ty == rowtree_types::Type::Timestamp && column.commit_timestamp_option_set {
        out.push_str(&format!(
            " OPTIONS (\n    allow_commit_timestamp = {}\n  )",
            column.allow_commit_timestamp
        ));
    }
    if column.hidden {
        out.push_str(" HIDDEN");
    }
    out
}

fn print_key(table: &Table, key: &[KeyColumn]) -> String {
    key.iter()
        .map(|k| {
            let name = print_name(&table.columns[k.column].name);
            if k.desc {
                format!("{name} DESC")
            } else {
                name
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn column_list(table: &Table, positions: &[usize]) -> String {
    positions
        .iter()
        .map(|&p| print_name(&table.columns[p].name))
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
        out.push_str(&format!("CONSTRAINT {} ", print_name(&fk.name)));
    }
    let (ref_name, ref_columns) = match referenced {
        Some(r) => (print_name(&r.name), column_list(r, &fk.referenced_columns)),
        None => (String::new(), String::new()),
    };
    out.push_str(&format!(
        "FOREIGN KEY({}) REFERENCES {ref_name}({ref_columns})",
        column_list(table, &fk.columns)
    ));
    if fk.on_delete == ast::OnDelete::Cascade {
        out.push_str(" ON DELETE CASCADE");
    }
    if !fk.enforced {
        out.push_str(" NOT ENFORCED");
    }
    out
}

fn print_check(check: &CheckConstraint) -> String {
    let mut out = String::new();
    if !check.generated_name {
        out.push_str(&format!("CONSTRAINT {} ", print_name(&check.name)));
    }
    out.push_str(&format!("CHECK({})", check.expr.text));
    out
}

fn print_table(state: &State, table: &Table, foreign_keys: &[&ForeignKey]) -> String {
    let mut out = format!("CREATE TABLE {} (\n", print_name(&table.name));
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
        ") PRIMARY KEY({})",
        print_key(table, &table.primary_key)
    ));
    if let Some(parent) = &table.parent {
        let parent_name = state
            .table_by_id(parent.table)
            .map(|p| print_name(&p.name))
            .unwrap_or_default();
        match parent.kind {
            ast::InterleaveKind::InParent(action) => {
                let action = match action {
                    ast::OnDelete::Cascade => "CASCADE",
                    ast::OnDelete::NoAction => "NO ACTION",
                };
                out.push_str(&format!(
                    ",\n  INTERLEAVE IN PARENT {parent_name} ON DELETE {action}"
                ));
            }
            ast::InterleaveKind::In => out.push_str(&format!(",\n  INTERLEAVE IN {parent_name}")),
        }
    }
    if let Some(policy) = table.row_deletion_expression(rowtree_types::Dialect::GoogleSql) {
        out.push_str(&format!(",\n  ROW DELETION POLICY ({policy})"));
    }
    out
}

fn print_index(state: &State, table: &Table, index: &Index) -> String {
    let mut out = String::from("CREATE");
    if index.unique {
        out.push_str(" UNIQUE");
    }
    if index.null_filtered {
        out.push_str(" NULL_FILTERED");
    }
    out.push_str(&format!(
        " INDEX {} ON {}({})",
        print_name(&index.name),
        print_name(&table.name),
        print_key(table, &index.keys)
    ));
    if !index.storing.is_empty() {
        out.push_str(&format!(
            " STORING ({})",
            column_list(table, &index.storing)
        ));
    }
    if let Some(parent) = index.interleave_in.and_then(|id| state.table_by_id(id)) {
        out.push_str(&format!(", INTERLEAVE IN {}", print_name(&parent.name)));
    }
    out
}

fn print_sequence(sequence: &Sequence) -> String {
    let mut out = format!("CREATE SEQUENCE {}", print_name(&sequence.name));
    let spelling = &sequence.spelling;
    if spelling.options_form {
        let mut options = Vec::new();
        if spelling.kind_explicit {
            options.push("  sequence_kind = 'bit_reversed_positive'".to_string());
        }
        if let Some((lo, hi)) = sequence.skip_range {
            options.push(format!("  skip_range_min = {lo}"));
            options.push(format!("  skip_range_max = {hi}"));
        }
        if spelling.start_explicit {
            options.push(format!(
                "  start_with_counter = {}",
                sequence.start_with_counter
            ));
        }
        out.push_str(&format!(" OPTIONS (\n{})", options.join(",\n")));
    } else {
        if spelling.kind_explicit {
            out.push_str(" BIT_REVERSED_POSITIVE");
        }
        if let Some((lo, hi)) = sequence.skip_range {
            out.push_str(&format!(" SKIP RANGE {lo}, {hi}"));
        }
        if spelling.start_explicit {
            out.push_str(&format!(
                " START COUNTER WITH {}",
                sequence.start_with_counter
            ));
        }
    }
    out
}
