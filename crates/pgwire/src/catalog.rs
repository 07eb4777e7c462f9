//! psql's meta-commands: `\dt`, `\d`, `\d name` and their kin.
//!
//! psql implements its describe commands as SQL queries against
//! PostgreSQL's system catalogs (`pg_class`, `pg_attribute`, `pg_index`,
//! ...), joined, filtered with regular expressions and calling catalog
//! functions (`pg_get_indexdef`, `format_type`, `pg_table_is_visible`).
//! Rowtree's engine has no `pg_class`; implementing enough of the system
//! catalogs *and* those functions to run psql's queries unchanged would be a
//! second catalog. Instead this module recognises the queries psql sends for
//! its common meta-commands (by the clauses that make each one distinctive,
//! not by the exact text, so that nearby psql versions match too) and
//! answers them from Rowtree's catalog with the columns psql reads:
//!
//! - the relation list of `\d`, `\dt`, `\dv`, `\di`, `\ds` (`Schema`,
//!   `Name`, `Type`, `Owner`, and `Table` for indexes; views and sequences
//!   are listed, `\d view` shows no columns);
//! - `\d name`: the lookup of the name (its `oid`), the relation's flags,
//!   its columns (name, type, default or generation expression, NOT NULL)
//!   and its indexes (the primary key first).
//!
//! `SELECT version()` and `SELECT current_schema()` (what drivers and
//! tools ask on connect) are answered here too.
//!
//! Object ids are made up per statement from the catalog's order (tables
//! from 16384), which is all psql needs to tie its queries together. The
//! other queries psql sends for `\d name` (check constraints, policies,
//! statistics, publications, inheritance) are answered with no rows by
//! the connection when the engine cannot run them and the client is psql
//! (its `application_name`; see `crate::conn`).

use rowtree_db::Database;
use rowtree_types::{Type, Value};

use crate::errors::PgError;
use crate::outcome::Outcome;
use crate::values::pg_type_name;

/// The first table's made-up object id.
const FIRST_OID: i64 = 16384;

/// An unquoted name folded to lower case, a quoted one as written.
pub fn fold_name(name: &str) -> String {
    let name = name.trim();
    let name = name.strip_prefix("public.").unwrap_or(name);
    if name.len() >= 2 && name.starts_with('"') && name.ends_with('"') {
        name[1..name.len() - 1].replace("\"\"", "\"")
    } else {
        name.to_ascii_lowercase()
    }
}

/// The answer to the one-function queries tools send on connect
/// (`SELECT version()`, `SELECT current_schema()`), which the engine does
/// not know.
fn session_function(sql: &str) -> Option<Outcome> {
    let normal: String = sql
        .trim()
        .trim_end_matches(';')
        .to_ascii_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let (name, value) = match normal.as_str() {
        "select version()" | "select pg_catalog.version()" => (
            "version",
            format!(
                "PostgreSQL {} on Rowtree, Spanner's PostgreSQL dialect",
                crate::settings::SERVER_VERSION
            ),
        ),
        "select current_schema()" | "select pg_catalog.current_schema()" => {
            ("current_schema", "public".to_string())
        }
        _ => return None,
    };
    Some(rows_outcome(
        &[(name, Type::String)],
        vec![vec![Value::String(value)]],
    ))
}

/// Psql's answer for `sql`, if it is one of the recognised queries.
pub fn answer(db: &Database, sql: &str) -> Option<Result<Outcome, PgError>> {
    if let Some(o) = session_function(sql) {
        return Some(Ok(o));
    }
    if !sql.contains("pg_catalog.") {
        return None;
    }
    let compact: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    let catalog = db.catalog();
    let relations = Relations::of(&catalog);
    if compact.contains("FROM pg_catalog.pg_class c")
        && compact.contains("as \"Owner\"")
        && compact.contains("c.relkind IN (")
    {
        return Some(Ok(list(&relations, &compact)));
    }
    if compact.starts_with("SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c") {
        let pattern = regex_pattern(&compact)?;
        let rows = relations
            .all
            .iter()
            .filter(|r| matches_pattern(&pattern, &r.name))
            .map(|r| {
                vec![
                    Value::Int64(r.oid),
                    Value::String("public".into()),
                    Value::String(r.name.clone()),
                ]
            })
            .collect::<Vec<_>>();
        return Some(Ok(rows_outcome(
            &[
                ("oid", Type::Int64),
                ("nspname", Type::String),
                ("relname", Type::String),
            ],
            rows,
        )));
    }
    if compact.starts_with("SELECT c.relchecks, c.relkind, c.relhasindex") {
        let oid = oid_literal(&compact, "WHERE c.oid = '")?;
        let r = relations.by_oid(oid)?;
        let b = |v: bool| Value::Bool(v);
        let s = |v: &str| Value::String(v.to_string());
        let row = vec![
            Value::Int64(r.checks as i64),
            s(r.kind),
            b(r.kind == "r"),
            b(false),
            b(false),
            b(false),
            b(false),
            b(false),
            b(false),
            s(""),
            Value::Int64(0),
            s(""),
            s("p"),
            s("d"),
            s(if r.kind == "r" { "heap" } else { "" }),
        ];
        let names = [
            "relchecks",
            "relkind",
            "relhasindex",
            "relhasrules",
            "relhastriggers",
            "relrowsecurity",
            "relforcerowsecurity",
            "relhasoids",
            "relispartition",
            "?column?",
            "reltablespace",
            "reloftype",
            "relpersistence",
            "relreplident",
            "amname",
        ];
        let columns: Vec<(String, Type)> = names
            .iter()
            .zip(&row)
            .map(|(n, v)| (n.to_string(), v.scalar_type().unwrap_or(Type::String)))
            .collect();
        return Some(Ok(Outcome::Rows {
            tag: "SELECT 1".into(),
            columns,
            rows: vec![row],
        }));
    }
    if compact.contains("FROM pg_catalog.pg_attribute a") && compact.contains("a.attrelid = '") {
        let oid = oid_literal(&compact, "a.attrelid = '")?;
        let r = relations.by_oid(oid)?;
        let rows = r
            .columns
            .iter()
            .map(|c| {
                vec![
                    Value::String(c.name.clone()),
                    Value::String(c.type_name.clone()),
                    c.default.clone().map_or(Value::Null, Value::String),
                    Value::Bool(c.not_null),
                    Value::Null,
                    Value::String(String::new()),
                    Value::String(if c.generated { "s" } else { "" }.into()),
                ]
            })
            .collect::<Vec<_>>();
        // psql reads as many columns as its version asks for; the first
        // seven are the same from PostgreSQL 12 on.
        return Some(Ok(rows_outcome(
            &[
                ("attname", Type::String),
                ("format_type", Type::String),
                ("pg_get_expr", Type::String),
                ("attnotnull", Type::Bool),
                ("attcollation", Type::String),
                ("attidentity", Type::String),
                ("attgenerated", Type::String),
            ],
            rows,
        )));
    }
    if compact.contains("FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i")
    {
        let oid = oid_literal(&compact, "WHERE c.oid = '")?;
        let r = relations.by_oid(oid)?;
        let rows = r
            .indexes
            .iter()
            .map(|i| {
                vec![
                    Value::String(i.name.clone()),
                    Value::Bool(i.primary),
                    Value::Bool(i.unique),
                    Value::Bool(false),
                    Value::Bool(true),
                    Value::String(i.definition.clone()),
                    if i.primary {
                        Value::String(format!("PRIMARY KEY ({})", i.columns))
                    } else {
                        Value::Null
                    },
                    if i.primary {
                        Value::String("p".into())
                    } else {
                        Value::Null
                    },
                    Value::Bool(false),
                    Value::Bool(false),
                    Value::Bool(false),
                    Value::Int64(0),
                ]
            })
            .collect::<Vec<_>>();
        return Some(Ok(rows_outcome(
            &[
                ("relname", Type::String),
                ("indisprimary", Type::Bool),
                ("indisunique", Type::Bool),
                ("indisclustered", Type::Bool),
                ("indisvalid", Type::Bool),
                ("pg_get_indexdef", Type::String),
                ("pg_get_constraintdef", Type::String),
                ("contype", Type::String),
                ("condeferrable", Type::Bool),
                ("condeferred", Type::Bool),
                ("indisreplident", Type::Bool),
                ("reltablespace", Type::Int64),
            ],
            rows,
        )));
    }
    None
}

/// An empty answer: psql's other describe queries, when the engine cannot
/// run them.
pub fn empty() -> Outcome {
    Outcome::Rows {
        tag: "SELECT 0".into(),
        columns: Vec::new(),
        rows: Vec::new(),
    }
}

fn rows_outcome(columns: &[(&str, Type)], rows: Vec<Vec<Value>>) -> Outcome {
    Outcome::Rows {
        tag: format!("SELECT {}", rows.len()),
        columns: columns
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect(),
        rows,
    }
}

/// The relation list (`\d`, `\dt`, `\dv`, `\di`, `\ds`).
fn list(relations: &Relations, compact: &str) -> Outcome {
    let kinds_text = compact
        .split("c.relkind IN (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .unwrap_or("");
    let wanted: Vec<String> = kinds_text
        .split(',')
        .map(|k| k.trim().trim_matches('\'').to_string())
        .filter(|k| !k.is_empty())
        .collect();
    let pattern = regex_pattern(compact);
    let with_table = compact.contains("as \"Table\"");
    let mut rows: Vec<Vec<Value>> = relations
        .all
        .iter()
        .filter(|r| wanted.iter().any(|k| k == r.kind))
        .filter(|r| pattern.as_ref().is_none_or(|p| matches_pattern(p, &r.name)))
        .map(|r| {
            let mut row = vec![
                Value::String("public".into()),
                Value::String(r.name.clone()),
                Value::String(
                    match r.kind {
                        "r" => "table",
                        "v" => "view",
                        "i" => "index",
                        "S" => "sequence",
                        _ => "",
                    }
                    .into(),
                ),
                Value::String("rowtree".into()),
            ];
            if with_table {
                row.push(Value::String(r.table.clone().unwrap_or_default()));
            }
            row
        })
        .collect();
    rows.sort_by(|a, b| format!("{:?}", a[1]).cmp(&format!("{:?}", b[1])));
    let mut columns = vec![
        ("Schema", Type::String),
        ("Name", Type::String),
        ("Type", Type::String),
        ("Owner", Type::String),
    ];
    if with_table {
        columns.push(("Table", Type::String));
    }
    rows_outcome(&columns, rows)
}

/// The name pattern of `c.relname OPERATOR(pg_catalog.~) '^(...)$'`.
fn regex_pattern(compact: &str) -> Option<String> {
    let start = compact.find("OPERATOR(pg_catalog.~) '^(")? + "OPERATOR(pg_catalog.~) '^(".len();
    let end = compact[start..].find(")$'")?;
    Some(compact[start..start + end].to_string())
}

/// psql turns `*` into `.*` and `?` into `.`; everything else is literal
/// for the names Rowtree allows.
fn matches_pattern(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p {
            [] => n.is_empty(),
            ['.', '*', rest @ ..] => (0..=n.len()).any(|i| go(rest, &n[i..])),
            ['.', rest @ ..] => !n.is_empty() && go(rest, &n[1..]),
            ['\\', c, rest @ ..] => n.first() == Some(c) && go(rest, &n[1..]),
            [c, rest @ ..] => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

fn oid_literal(compact: &str, prefix: &str) -> Option<i64> {
    let start = compact.find(prefix)? + prefix.len();
    let end = compact[start..].find('\'')?;
    compact[start..start + end].parse().ok()
}

struct ColumnInfo {
    name: String,
    type_name: String,
    default: Option<String>,
    not_null: bool,
    generated: bool,
}

struct IndexInfo {
    name: String,
    primary: bool,
    unique: bool,
    columns: String,
    definition: String,
}

struct Relation {
    oid: i64,
    name: String,
    /// `r` table, `v` view, `i` index.
    kind: &'static str,
    /// An index's table.
    table: Option<String>,
    checks: usize,
    columns: Vec<ColumnInfo>,
    indexes: Vec<IndexInfo>,
}

struct Relations {
    all: Vec<Relation>,
}

impl Relations {
    fn of(catalog: &rowtree_schema::Catalog) -> Relations {
        let mut all = Vec::new();
        let mut oid = FIRST_OID;
        for t in catalog.tables() {
            let key_names: Vec<String> = t
                .primary_key
                .iter()
                .map(|k| t.columns[k.column].name.clone())
                .collect();
            let mut indexes = vec![IndexInfo {
                name: format!("{}_pkey", t.name),
                primary: true,
                unique: true,
                columns: key_names.join(", "),
                definition: format!(
                    "CREATE UNIQUE INDEX {}_pkey ON public.{} USING btree ({})",
                    t.name,
                    t.name,
                    key_names.join(", ")
                ),
            }];
            let mut secondary = Vec::new();
            for i in catalog.indexes_of(t.id) {
                let cols: Vec<String> = i
                    .keys
                    .iter()
                    .map(|k| {
                        let n = t.columns[k.column].name.clone();
                        if k.desc {
                            format!("{n} DESC")
                        } else {
                            n
                        }
                    })
                    .collect();
                let definition = format!(
                    "CREATE {}INDEX {} ON public.{} USING btree ({})",
                    if i.unique { "UNIQUE " } else { "" },
                    i.name,
                    t.name,
                    cols.join(", ")
                );
                secondary.push(i.name.clone());
                indexes.push(IndexInfo {
                    name: i.name.clone(),
                    primary: false,
                    unique: i.unique,
                    columns: cols.join(", "),
                    definition,
                });
            }
            indexes[1..].sort_by(|a, b| a.name.cmp(&b.name));
            all.push(Relation {
                oid,
                name: t.name.clone(),
                kind: "r",
                table: None,
                checks: t.checks.len(),
                columns: t
                    .columns
                    .iter()
                    .map(|c| ColumnInfo {
                        name: c.name.clone(),
                        type_name: pg_type_name(&c.ty),
                        default: c
                            .generated
                            .as_ref()
                            .or(c.default.as_ref())
                            .map(|e| e.text.clone()),
                        not_null: c.not_null,
                        generated: c.generated.is_some(),
                    })
                    .collect(),
                indexes,
            });
            oid += 1;
            for name in secondary {
                all.push(Relation {
                    oid,
                    name,
                    kind: "i",
                    table: Some(t.name.clone()),
                    checks: 0,
                    columns: Vec::new(),
                    indexes: Vec::new(),
                });
                oid += 1;
            }
        }
        // Views and sequences are listed (`\dv`, `\ds`, `\d`) without
        // columns.
        let others = catalog
            .views()
            .map(|v| (v.name.clone(), "v"))
            .chain(catalog.sequences().map(|q| (q.name.clone(), "S")))
            .collect::<Vec<_>>();
        for (name, kind) in others {
            all.push(Relation {
                oid,
                name,
                kind,
                table: None,
                checks: 0,
                columns: Vec::new(),
                indexes: Vec::new(),
            });
            oid += 1;
        }
        Relations { all }
    }

    fn by_oid(&self, oid: i64) -> Option<&Relation> {
        self.all.iter().find(|r| r.oid == oid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_like_psqls_regexes() {
        assert!(matches_pattern("singers", "singers"));
        assert!(!matches_pattern("singers", "singers2"));
        assert!(matches_pattern("sing.*", "singers"));
        assert_eq!(fold_name("\"Mixed\""), "Mixed");
        assert_eq!(fold_name("Public.T"), "public.t");
    }
}
