//! The tree printer of the parse tests: a statement as an indented outline
//! headed by its kind and span, its expressions on one line each with every
//! operation parenthesized and every column reference marked `col:`, so
//! precedence and name resolution show at a glance.
//!
//! This module prints whole statements (DML and DDL alike, one arm per
//! statement kind) and holds the small helpers every part shares; the parts
//! of a statement print in files of their own:
//!
//! * `ddl`: columns, types, constraints, keys, interleaving, options;
//! * `expr`: an expression on one line ([`expr_str`]);
//! * `query`: queries, as an indented tree or inline (in subqueries).

mod ddl;
mod expr;
mod query;

use rowtree_parser::ast::*;
use rowtree_parser::{ParseError, Position};

use ddl::{
    interleave_str, key_parts, on_delete_str, options_str, proto_types, render_column,
    render_constraint, sequence_options_str, source_str,
};
pub use expr::expr_str;
use query::{render_query, render_query_body, render_returning};

/// `line:column: message`, the position counted in `text` from `base` on.
pub fn error(text: &str, base: usize, error: &ParseError) -> String {
    format!(
        "{}: {}",
        Position::of(text, base + error.offset),
        error.message
    )
}

/// `start..end`, byte offsets into the parsed text.
pub fn span_str(span: Span) -> String {
    format!("{}..{}", span.start, span.end)
}

/// A statement as lines: a header with its span, then its parts indented.
pub fn render_statement(text: &str, statement: &Statement) -> Vec<String> {
    let mut out = Vec::new();
    let span = statement.span;
    let header = |s: String| format!("{s}  [{}]", span_str(span));
    assert_eq!(
        text.get(span.start..span.end).map(str::trim),
        text.get(span.start..span.end),
        "a statement span never starts or ends with whitespace"
    );
    match &statement.kind {
        StatementKind::Query(q) => {
            out.push(header("query".to_string()));
            render_query_body(&mut out, 1, q);
        }
        StatementKind::Insert(i) => {
            out.push(header(format!(
                "insert{} {} ({})",
                match i.mode {
                    InsertMode::Plain => "",
                    InsertMode::OrUpdate => " or update",
                    InsertMode::OrIgnore => " or ignore",
                },
                i.table.value,
                idents(&i.columns)
            )));
            match &i.source {
                InsertSource::Values(rows) => {
                    for row in rows {
                        out.push(format!("  values ({})", list(row)));
                    }
                }
                InsertSource::Query(q) => render_query(&mut out, 1, q),
            }
            render_returning(&mut out, &i.returning);
        }
        StatementKind::Update(u) => {
            out.push(header(format!(
                "update {}{}",
                u.table.value,
                alias_str(&u.alias)
            )));
            for (path, value) in &u.assignments {
                out.push(format!("  set {} = {}", dotted(path), expr_str(value)));
            }
            out.push(format!("  where {}", expr_str(&u.where_clause)));
            render_returning(&mut out, &u.returning);
        }
        StatementKind::Delete(d) => {
            out.push(header(format!(
                "delete {}{}",
                d.table.value,
                alias_str(&d.alias)
            )));
            out.push(format!("  where {}", expr_str(&d.where_clause)));
            render_returning(&mut out, &d.returning);
        }
        StatementKind::Explain { analyze, statement } => {
            out.push(header(format!("explain{}", flag(*analyze, " analyze"))));
            out.extend(
                render_statement(text, statement)
                    .into_iter()
                    .map(|l| format!("  {l}")),
            );
        }
        StatementKind::CreateTable(t) => {
            out.push(header(format!(
                "create table {}{}",
                t.name.value,
                flag(t.if_not_exists, " if not exists")
            )));
            for c in &t.columns {
                render_column(&mut out, "column", c);
            }
            for c in &t.constraints {
                render_constraint(&mut out, c);
            }
            out.push(format!("  primary key ({})", key_parts(&t.primary_key)));
            if let Some(i) = &t.interleave {
                out.push(format!("  {}", interleave_str(i)));
            }
            if let Some(p) = &t.row_deletion_policy {
                out.push(format!("  {}", policy_str(p)));
            }
        }
        StatementKind::AlterTable(a) => {
            out.push(header(format!("alter table {}", a.name.value)));
            match &a.action {
                AlterTableAction::AddColumn {
                    if_not_exists,
                    column,
                } => render_column(
                    &mut out,
                    if *if_not_exists {
                        "add column if not exists"
                    } else {
                        "add column"
                    },
                    column,
                ),
                AlterTableAction::DropColumn { name } => {
                    out.push(format!("  drop column {}", name.value))
                }
                AlterTableAction::AlterColumn { column } => {
                    render_column(&mut out, "alter column", column)
                }
                AlterTableAction::AlterColumnSetOptions { name, options } => out.push(format!(
                    "  alter column {} set options ({})",
                    name.value,
                    options_str(options)
                )),
                AlterTableAction::AlterColumnSetDefault { name, default } => out.push(format!(
                    "  alter column {} set default {}",
                    name.value,
                    source_str(default)
                )),
                AlterTableAction::AlterColumnDropDefault { name } => {
                    out.push(format!("  alter column {} drop default", name.value))
                }
                AlterTableAction::AlterColumnType {
                    name, data_type, ..
                } => out.push(format!("  alter column {} type {data_type:?}", name.value)),
                AlterTableAction::AlterColumnSetNotNull { name, not_null } => out.push(format!(
                    "  alter column {} {} not null",
                    name.value,
                    if *not_null { "set" } else { "drop" }
                )),
                AlterTableAction::SetOnDelete(d) => {
                    out.push(format!("  set on delete {}", on_delete_str(*d)))
                }
                AlterTableAction::AddConstraint(c) => {
                    out.push("  add constraint".to_string());
                    render_constraint(&mut out, c);
                }
                AlterTableAction::DropConstraint { name } => {
                    out.push(format!("  drop constraint {}", name.value))
                }
                AlterTableAction::AddRowDeletionPolicy(p) => {
                    out.push(format!("  add {}", policy_str(p)))
                }
                AlterTableAction::ReplaceRowDeletionPolicy(p) => {
                    out.push(format!("  replace {}", policy_str(p)))
                }
                AlterTableAction::DropRowDeletionPolicy => {
                    out.push("  drop row deletion policy".to_string())
                }
            }
        }
        StatementKind::DropTable { name, if_exists } => out.push(header(format!(
            "drop table {}{}",
            name.value,
            flag(*if_exists, " if exists")
        ))),
        StatementKind::DropIndex { name, if_exists } => out.push(header(format!(
            "drop index {}{}",
            name.value,
            flag(*if_exists, " if exists")
        ))),
        StatementKind::DropSequence { name, if_exists } => out.push(header(format!(
            "drop sequence {}{}",
            name.value,
            flag(*if_exists, " if exists")
        ))),
        StatementKind::CreateIndex(i) => {
            out.push(header(format!(
                "create{}{} index {}{} on {}",
                flag(i.unique, " unique"),
                flag(i.null_filtered, " null_filtered"),
                i.name.value,
                flag(i.if_not_exists, " if not exists"),
                i.table.value
            )));
            out.push(format!("  keys ({})", key_parts(&i.keys)));
            if !i.storing.is_empty() {
                out.push(format!("  storing ({})", idents(&i.storing)));
            }
            if let Some(p) = &i.interleave_in {
                out.push(format!("  interleave in {}", p.value));
            }
        }
        StatementKind::CreateSequence(s) => {
            out.push(header(format!(
                "create sequence {}{}",
                s.name.value,
                flag(s.if_not_exists, " if not exists")
            )));
            out.push(format!("  {}", sequence_options_str(text, &s.options)));
        }
        StatementKind::AlterSequence(s) => {
            out.push(header(format!("alter sequence {}", s.name.value)));
            out.push(match &s.action {
                AlterSequenceAction::SetOptions(o) => {
                    format!("  set {}", sequence_options_str(text, o))
                }
                AlterSequenceAction::RestartCounterWith(n) => format!("  restart counter with {n}"),
                AlterSequenceAction::SkipRange(a, b) => format!("  skip range {a}, {b}"),
                AlterSequenceAction::NoSkipRange => "  no skip range".to_string(),
            });
        }
        StatementKind::AlterDatabase { name, options } => {
            out.push(header(format!("alter database {}", name.value)));
            out.push(format!("  set options ({})", options_str(options)));
        }
        StatementKind::CreateView(v) => {
            out.push(header(format!(
                "create{} view {} sql security {}",
                flag(v.or_replace, " or replace"),
                v.name.value,
                v.security.as_str()
            )));
            out.push(format!(
                "  query [{}] text={:?}",
                span_str(v.query.span),
                v.query_text
            ));
            render_query_body(&mut out, 2, &v.query);
        }
        StatementKind::DropView { name } => out.push(header(format!("drop view {}", name.value))),
        StatementKind::CreateRole { name } => {
            out.push(header(format!("create role {}", name.value)))
        }
        StatementKind::DropRole { name } => out.push(header(format!("drop role {}", name.value))),
        StatementKind::Grant(g) | StatementKind::Revoke(g) => {
            let (verb, to) = match &statement.kind {
                StatementKind::Grant(_) => ("grant", "to"),
                _ => ("revoke", "from"),
            };
            out.push(header(verb.to_string()));
            match &g.what {
                GrantItems::Roles(roles) => out.push(format!("  roles {}", idents(roles))),
                GrantItems::Privileges {
                    privileges,
                    object_kind,
                    objects,
                } => {
                    for p in privileges {
                        let mut line = format!("  privilege {}", p.kind.as_str());
                        if !p.columns.is_empty() {
                            line.push_str(&format!(" ({})", idents(&p.columns)));
                        }
                        line.push_str(&format!("  [{}]", span_str(p.span)));
                        out.push(line);
                    }
                    out.push(format!("  on {} {}", object_kind.as_str(), idents(objects)));
                }
            }
            out.push(format!("  {to} roles {}", idents(&g.roles)));
        }
        StatementKind::CreateProtoBundle { types } => {
            out.push(header("create proto bundle".to_string()));
            out.push(format!("  types ({})", proto_types(types)));
        }
        StatementKind::AlterProtoBundle(a) => {
            out.push(header("alter proto bundle".to_string()));
            for (what, list) in [
                ("insert", &a.insert),
                ("update", &a.update),
                ("delete", &a.delete),
            ] {
                if !list.is_empty() {
                    out.push(format!("  {what} ({})", proto_types(list)));
                }
            }
        }
        StatementKind::DropProtoBundle => out.push(header("drop proto bundle".to_string())),
        StatementKind::Analyze => out.push(header("analyze".to_string())),
    }
    out
}

fn flag(on: bool, text: &str) -> &str {
    if on {
        text
    } else {
        ""
    }
}

fn idents(list: &[Ident]) -> String {
    list.iter()
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(items: &[Expr]) -> String {
    items.iter().map(expr_str).collect::<Vec<_>>().join(", ")
}

fn dotted(path: &[Ident]) -> String {
    path.iter()
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

fn alias_str(alias: &Option<Ident>) -> String {
    alias
        .as_ref()
        .map(|a| format!(" AS {}", a.value))
        .unwrap_or_default()
}

/// A row deletion policy: its column and age in days.
fn policy_str(p: &RowDeletionPolicy) -> String {
    format!(
        "row deletion policy older_than({}, {} day)",
        p.column.value, p.days
    )
}
