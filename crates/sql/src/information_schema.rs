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

use std::cmp::Ordering;

use rowtree_schema::ast::{DataType, InterleaveKind, Length, OnDelete};
use rowtree_schema::{Catalog, Column, ForeignKey, Table};
use rowtree_types::{Type, Value};

/// The schema name, as Spanner spells it.
const SCHEMA_NAME: &str = "INFORMATION_SCHEMA";

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
    let columns = def
        .columns
        .iter()
        .map(|c| (c.name.to_string(), c.ty()))
        .collect();
    Some((columns, rows(catalog, def)))
}

// ---------------------------------------------------------------------------
// Table definitions
// ---------------------------------------------------------------------------

/// One column of an information schema table.
struct MetaColumn {
    name: &'static str,
    /// As `COLUMNS.SPANNER_TYPE` reports it.
    spanner_type: &'static str,
    nullable: bool,
}

impl MetaColumn {
    fn ty(&self) -> Type {
        match self.spanner_type {
            "INT64" => Type::Int64,
            "BOOL" => Type::Bool,
            _ => Type::String,
        }
    }
}

/// An information schema table: columns in order and the primary key
/// (a prefix-free list of column names) its rows are sorted by.
struct Def {
    name: &'static str,
    columns: &'static [MetaColumn],
    key: &'static [&'static str],
}

const fn meta(name: &'static str, spanner_type: &'static str, nullable: bool) -> MetaColumn {
    MetaColumn {
        name,
        spanner_type,
        nullable,
    }
}
const fn s(name: &'static str) -> MetaColumn {
    meta(name, "STRING(MAX)", false)
}
const fn sn(name: &'static str) -> MetaColumn {
    meta(name, "STRING(MAX)", true)
}
const fn i(name: &'static str) -> MetaColumn {
    meta(name, "INT64", false)
}
const fn i_n(name: &'static str) -> MetaColumn {
    meta(name, "INT64", true)
}
const fn b(name: &'static str) -> MetaColumn {
    meta(name, "BOOL", false)
}

const CHECK_CONSTRAINTS: &str = "CHECK_CONSTRAINTS";
const COLUMN_COLUMN_USAGE: &str = "COLUMN_COLUMN_USAGE";
const COLUMN_OPTIONS: &str = "COLUMN_OPTIONS";
const COLUMNS: &str = "COLUMNS";
const CONSTRAINT_COLUMN_USAGE: &str = "CONSTRAINT_COLUMN_USAGE";
const CONSTRAINT_TABLE_USAGE: &str = "CONSTRAINT_TABLE_USAGE";
const DATABASE_OPTIONS: &str = "DATABASE_OPTIONS";
const INDEX_COLUMNS: &str = "INDEX_COLUMNS";
const INDEXES: &str = "INDEXES";
const KEY_COLUMN_USAGE: &str = "KEY_COLUMN_USAGE";
const REFERENTIAL_CONSTRAINTS: &str = "REFERENTIAL_CONSTRAINTS";
const SCHEMATA: &str = "SCHEMATA";
const SEQUENCE_OPTIONS: &str = "SEQUENCE_OPTIONS";
const SEQUENCES: &str = "SEQUENCES";
const SPANNER_STATISTICS: &str = "SPANNER_STATISTICS";
const TABLE_CONSTRAINTS: &str = "TABLE_CONSTRAINTS";
const TABLES: &str = "TABLES";
const VIEWS: &str = "VIEWS";

/// All tables, sorted by name (byte order), as `TABLES` lists them.
const DEFS: &[Def] = &[
    Def {
        name: CHECK_CONSTRAINTS,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            s("CHECK_CLAUSE"),
            s("SPANNER_STATE"),
        ],
        key: &["CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME"],
    },
    Def {
        name: COLUMN_COLUMN_USAGE,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            s("DEPENDENT_COLUMN"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "COLUMN_NAME",
            "DEPENDENT_COLUMN",
        ],
    },
    Def {
        name: COLUMN_OPTIONS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            s("OPTION_NAME"),
            s("OPTION_TYPE"),
            s("OPTION_VALUE"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "COLUMN_NAME",
            "OPTION_NAME",
        ],
    },
    Def {
        name: COLUMNS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            i("ORDINAL_POSITION"),
            sn("COLUMN_DEFAULT"),
            sn("DATA_TYPE"),
            sn("IS_NULLABLE"),
            sn("SPANNER_TYPE"),
            s("IS_GENERATED"),
            sn("GENERATION_EXPRESSION"),
            sn("IS_STORED"),
            b("IS_HIDDEN"),
            sn("ON_UPDATE_EXPRESSION"),
            sn("SPANNER_STATE"),
            sn("IS_IDENTITY"),
            sn("IDENTITY_GENERATION"),
            sn("IDENTITY_KIND"),
            sn("IDENTITY_START_WITH_COUNTER"),
            sn("IDENTITY_SKIP_RANGE_MIN"),
            sn("IDENTITY_SKIP_RANGE_MAX"),
        ],
        key: &["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME"],
    },
    Def {
        name: CONSTRAINT_COLUMN_USAGE,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
        ],
        key: &[
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
            "COLUMN_NAME",
        ],
    },
    Def {
        name: CONSTRAINT_TABLE_USAGE,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
        ],
    },
    Def {
        name: DATABASE_OPTIONS,
        columns: &[
            s("CATALOG_NAME"),
            s("SCHEMA_NAME"),
            s("OPTION_NAME"),
            s("OPTION_TYPE"),
            s("OPTION_VALUE"),
        ],
        key: &["CATALOG_NAME", "SCHEMA_NAME", "OPTION_NAME"],
    },
    Def {
        name: INDEX_COLUMNS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("INDEX_NAME"),
            s("INDEX_TYPE"),
            s("COLUMN_NAME"),
            i_n("ORDINAL_POSITION"),
            sn("COLUMN_ORDERING"),
            sn("IS_NULLABLE"),
            sn("SPANNER_TYPE"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "INDEX_NAME",
            "INDEX_TYPE",
            "COLUMN_NAME",
        ],
    },
    Def {
        name: INDEXES,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("INDEX_NAME"),
            s("INDEX_TYPE"),
            s("PARENT_TABLE_NAME"),
            b("IS_UNIQUE"),
            b("IS_NULL_FILTERED"),
            MetaColumn {
                name: "INDEX_STATE",
                spanner_type: "STRING(100)",
                nullable: true,
            },
            b("SPANNER_IS_MANAGED"),
        ],
        key: &[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "INDEX_NAME",
            "INDEX_TYPE",
        ],
    },
    Def {
        name: KEY_COLUMN_USAGE,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("COLUMN_NAME"),
            i("ORDINAL_POSITION"),
            i_n("POSITION_IN_UNIQUE_CONSTRAINT"),
        ],
        key: &[
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
            "COLUMN_NAME",
        ],
    },
    Def {
        name: REFERENTIAL_CONSTRAINTS,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            sn("UNIQUE_CONSTRAINT_CATALOG"),
            sn("UNIQUE_CONSTRAINT_SCHEMA"),
            sn("UNIQUE_CONSTRAINT_NAME"),
            s("MATCH_OPTION"),
            s("UPDATE_RULE"),
            s("DELETE_RULE"),
            s("SPANNER_STATE"),
        ],
        key: &["CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME"],
    },
    Def {
        name: SCHEMATA,
        columns: &[
            s("CATALOG_NAME"),
            s("SCHEMA_NAME"),
            i_n("EFFECTIVE_TIMESTAMP"),
            sn("SCHEMA_OWNER"),
        ],
        key: &["CATALOG_NAME", "SCHEMA_NAME"],
    },
    Def {
        name: SEQUENCE_OPTIONS,
        columns: &[
            s("CATALOG"),
            s("SCHEMA"),
            s("NAME"),
            s("OPTION_NAME"),
            s("OPTION_TYPE"),
            s("OPTION_VALUE"),
        ],
        key: &["CATALOG", "SCHEMA", "NAME", "OPTION_NAME"],
    },
    Def {
        name: SEQUENCES,
        columns: &[s("CATALOG"), s("SCHEMA"), s("NAME"), s("DATA_TYPE")],
        key: &["CATALOG", "SCHEMA", "NAME"],
    },
    Def {
        name: SPANNER_STATISTICS,
        columns: &[
            s("CATALOG_NAME"),
            s("SCHEMA_NAME"),
            s("PACKAGE_NAME"),
            b("ALLOW_GC"),
        ],
        key: &["CATALOG_NAME", "SCHEMA_NAME", "PACKAGE_NAME"],
    },
    Def {
        name: TABLE_CONSTRAINTS,
        columns: &[
            s("CONSTRAINT_CATALOG"),
            s("CONSTRAINT_SCHEMA"),
            s("CONSTRAINT_NAME"),
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            s("CONSTRAINT_TYPE"),
            s("IS_DEFERRABLE"),
            s("INITIALLY_DEFERRED"),
            s("ENFORCED"),
        ],
        key: &["CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME"],
    },
    Def {
        name: TABLES,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            MetaColumn {
                name: "TABLE_TYPE",
                spanner_type: "STRING(32)",
                nullable: false,
            },
            sn("PARENT_TABLE_NAME"),
            sn("ON_DELETE_ACTION"),
            sn("SPANNER_STATE"),
            sn("INTERLEAVE_TYPE"),
            sn("ROW_DELETION_POLICY_EXPRESSION"),
        ],
        key: &["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"],
    },
    Def {
        name: VIEWS,
        columns: &[
            s("TABLE_CATALOG"),
            s("TABLE_SCHEMA"),
            s("TABLE_NAME"),
            sn("VIEW_DEFINITION"),
            s("SECURITY_TYPE"),
        ],
        key: &["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"],
    },
];

fn find_def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

// ---------------------------------------------------------------------------
// A uniform view of user tables and information schema tables
// ---------------------------------------------------------------------------

/// A table as the metadata tables describe it: a user table of the catalog
/// or one of the information schema's own tables.
struct TableView<'a> {
    /// `''` for user tables.
    schema: &'static str,
    name: &'a str,
    columns: Vec<ColumnView<'a>>,
    /// Primary key: positions into `columns` and DESC.
    key: Vec<(usize, bool)>,
    user: Option<&'a Table>,
}

struct ColumnView<'a> {
    name: &'a str,
    spanner_type: String,
    nullable: bool,
    user: Option<&'a Column>,
}

fn table_views(catalog: &Catalog) -> Vec<TableView<'_>> {
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

/// `STRING(MAX)`, `BYTES(10)`, `ARRAY<STRING(10)>`, `INT64`, ...
fn spanner_type(data_type: &DataType) -> String {
    let length = |l: &Length| match l {
        Length::Max => "MAX".to_string(),
        Length::Limit(n) => n.to_string(),
    };
    match data_type {
        DataType::String(l) => format!("STRING({})", length(l)),
        DataType::Bytes(l) => format!("BYTES({})", length(l)),
        DataType::Array(inner) => format!("ARRAY<{}>", spanner_type(inner)),
        other => other.value_type().to_string(),
    }
}

fn pk_name(table: &str) -> String {
    format!("PK_{table}")
}

fn not_null_name(table: &str, column: &str) -> String {
    format!("CK_IS_NOT_NULL_{table}_{column}")
}

fn on_delete_text(action: OnDelete) -> &'static str {
    match action {
        OnDelete::Cascade => "CASCADE",
        OnDelete::NoAction => "NO ACTION",
    }
}

fn yes_no(b: bool) -> Value {
    text(if b { "YES" } else { "NO" })
}

fn text(s: &str) -> Value {
    Value::String(s.to_string())
}

fn opt_text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, text)
}

fn int(n: usize) -> Value {
    Value::Int64(n as i64)
}

/// The unique constraint a foreign key's referenced columns match: the
/// referenced table's primary key when they are exactly its columns (in any
/// order). Returns the constraint name and, per referenced column, its
/// 1-based position in that key.
fn fk_unique_constraint(catalog: &Catalog, fk: &ForeignKey) -> Option<(String, Vec<usize>)> {
    let referenced = catalog.table_by_id(fk.referenced_table)?;
    let columns = &fk.referenced_columns;
    if columns.len() != referenced.primary_key.len() || columns.is_empty() {
        return None;
    }
    let positions: Option<Vec<usize>> = columns
        .iter()
        .map(|c| {
            referenced
                .primary_key
                .iter()
                .position(|k| k.column == *c)
                .map(|p| p + 1)
        })
        .collect();
    positions.map(|p| (pk_name(&referenced.name), p))
}

// ---------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------

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

fn database_options(catalog: &Catalog) -> Vec<Vec<Value>> {
    let mut out = vec![vec![
        text(""),
        text(""),
        text("database_dialect"),
        text("STRING"),
        text("GOOGLE_STANDARD_SQL"),
    ]];
    for (name, literal) in catalog.database_options() {
        let (ty, value) = option_value(name, literal);
        out.push(vec![text(""), text(""), text(name), text(ty), text(&value)]);
    }
    out
}

/// The `OPTION_TYPE` and `OPTION_VALUE` of a database option kept as SQL
/// literal text: strings unquoted, booleans upper-case.
fn option_value(name: &str, literal: &str) -> (&'static str, String) {
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

fn unescape(body: &str) -> String {
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

fn tables_rows(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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
                Value::Null,
            ]
        })
        .collect()
}

/// `COLUMNS` rows of the views' output columns (their types found by
/// binding each view's query; a view that no longer binds lists none).
fn view_columns_rows(catalog: &Catalog) -> Vec<Vec<Value>> {
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

fn columns_rows(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn column_options(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn column_column_usage(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn indexes(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn index_columns(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn table_constraints(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn check_constraints(tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn constraint_table_usage(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn constraint_column_usage(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn key_column_usage(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn referential_constraints(catalog: &Catalog, tables: &[TableView<'_>]) -> Vec<Vec<Value>> {
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

fn sequence_options(catalog: &Catalog) -> Vec<Vec<Value>> {
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

// ---------------------------------------------------------------------------
// Ordering
// ---------------------------------------------------------------------------

fn sort_by_key(def: &Def, rows: &mut [Vec<Value>]) {
    let key: Vec<usize> = def
        .key
        .iter()
        .filter_map(|k| def.columns.iter().position(|c| c.name == *k))
        .collect();
    rows.sort_by(|a, b| {
        key.iter()
            .map(|&i| compare(&a[i], &b[i]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
}

/// Key order for the few value kinds these tables hold: NULL first, strings
/// by bytes.
fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Int64(x), Value::Int64(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &[&str] = &[
        "ALTER DATABASE music SET OPTIONS (version_retention_period = '7d', enable_key_visualizer = true)",
        "CREATE SEQUENCE Seq OPTIONS (sequence_kind = 'bit_reversed_positive', skip_range_min = 1, skip_range_max = 1000, start_with_counter = 5)",
        "CREATE TABLE Singers (
            SingerId INT64 NOT NULL,
            FirstName STRING(1024),
            LastName STRING(MAX) NOT NULL,
            FullName STRING(MAX) AS (FirstName || ' ' || LastName) STORED,
            Tags ARRAY<STRING(10)>,
            CONSTRAINT CK_Name CHECK (LastName != ''),
         ) PRIMARY KEY (SingerId)",
        "CREATE TABLE Albums (
            SingerId INT64 NOT NULL,
            AlbumId INT64 NOT NULL,
            Title STRING(MAX) DEFAULT ('untitled'),
            UpdatedAt TIMESTAMP OPTIONS (allow_commit_timestamp = true),
         ) PRIMARY KEY (SingerId, AlbumId DESC),
           INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
        "CREATE TABLE Reviews (
            ReviewId INT64 NOT NULL,
            SingerId INT64,
            CONSTRAINT FK_ReviewSinger FOREIGN KEY (SingerId) REFERENCES Singers (SingerId),
         ) PRIMARY KEY (ReviewId)",
        "CREATE NULL_FILTERED INDEX AlbumsByTitle ON Albums(Title DESC) STORING (UpdatedAt)",
        "CREATE TABLE Events (
            EventId INT64 GENERATED BY DEFAULT AS IDENTITY (BIT_REVERSED_POSITIVE SKIP RANGE 10, 20),
            Name STRING(MAX),
         ) PRIMARY KEY (EventId)",
    ];

    fn catalog() -> Catalog {
        let mut catalog = Catalog::new();
        for sql in SCHEMA {
            catalog = match catalog.apply_sql(sql) {
                Ok((next, _)) => next,
                Err(e) => panic!("{sql}: {} {}", e.code(), e.message()),
            };
        }
        catalog
    }

    fn cell(v: &Value) -> String {
        match v {
            Value::Null => "NULL".into(),
            Value::String(s) => s.clone(),
            Value::Int64(n) => n.to_string(),
            Value::Bool(b) => b.to_string().to_uppercase(),
            other => panic!("unexpected value {other:?}"),
        }
    }

    /// The rows of `INFORMATION_SCHEMA.<table>`, cells joined by `|`, keeping
    /// rows that `keep` accepts.
    fn rows_of(catalog: &Catalog, table: &str, keep: impl Fn(&[Value]) -> bool) -> Vec<String> {
        let (columns, rows) =
            virtual_table(catalog, &["information_schema", table]).expect("table exists");
        for row in &rows {
            assert_eq!(row.len(), columns.len(), "{table}: {row:?}");
        }
        rows.iter()
            .filter(|r| keep(r))
            .map(|r| r.iter().map(cell).collect::<Vec<_>>().join("|"))
            .collect()
    }

    /// Rows whose column `index` is the default schema `''`.
    fn user(index: usize) -> impl Fn(&[Value]) -> bool {
        move |r| r[index] == Value::String(String::new())
    }

    fn column_names(table: &str) -> Vec<String> {
        let (columns, _) = virtual_table(&Catalog::new(), &["INFORMATION_SCHEMA", table]).unwrap();
        columns.into_iter().map(|(name, _)| name).collect()
    }

    #[test]
    fn names_match_case_insensitively() {
        let catalog = catalog();
        assert!(virtual_table(&catalog, &["INFORMATION_SCHEMA", "TABLES"]).is_some());
        assert!(virtual_table(&catalog, &["information_schema", "tables"]).is_some());
        assert!(virtual_table(&catalog, &["Information_Schema", "Key_Column_Usage"]).is_some());
        assert!(virtual_table(&catalog, &["INFORMATION_SCHEMA", "NOPE"]).is_none());
        assert!(virtual_table(&catalog, &["TABLES"]).is_none());
        assert!(virtual_table(&catalog, &["Singers"]).is_none());
        assert!(virtual_table(&catalog, &["X", "INFORMATION_SCHEMA", "TABLES"]).is_none());
    }

    #[test]
    fn schemata() {
        assert_eq!(
            rows_of(&Catalog::new(), "SCHEMATA", |_| true),
            [
                "||NULL|NULL",
                "|INFORMATION_SCHEMA|NULL|NULL",
                "|SPANNER_SYS|NULL|NULL"
            ]
        );
    }

    #[test]
    fn tables() {
        assert_eq!(
            column_names("TABLES"),
            [
                "TABLE_CATALOG",
                "TABLE_SCHEMA",
                "TABLE_NAME",
                "TABLE_TYPE",
                "PARENT_TABLE_NAME",
                "ON_DELETE_ACTION",
                "SPANNER_STATE",
                "INTERLEAVE_TYPE",
                "ROW_DELETION_POLICY_EXPRESSION",
            ]
        );
        let catalog = catalog();
        assert_eq!(
            rows_of(&catalog, "TABLES", user(1)),
            [
                "||Albums|BASE TABLE|Singers|CASCADE|COMMITTED|IN PARENT|NULL",
                "||Events|BASE TABLE|NULL|NULL|COMMITTED|NULL|NULL",
                "||Reviews|BASE TABLE|NULL|NULL|COMMITTED|NULL|NULL",
                "||Singers|BASE TABLE|NULL|NULL|COMMITTED|NULL|NULL",
            ]
        );
        let meta = rows_of(&catalog, "TABLES", |r| !user(1)(r));
        assert_eq!(meta.len(), DEFS.len());
        assert_eq!(
            meta[0],
            "|INFORMATION_SCHEMA|CHECK_CONSTRAINTS|VIEW|NULL|NULL|NULL|NULL|NULL"
        );
        assert!(meta.contains(&"|INFORMATION_SCHEMA|TABLES|VIEW|NULL|NULL|NULL|NULL|NULL".into()));
    }

    #[test]
    fn interleave_in_has_a_parent_but_no_delete_action() {
        let (catalog, _) = Catalog::new()
            .apply_sql("CREATE TABLE P (K INT64) PRIMARY KEY (K)")
            .unwrap();
        let (catalog, _) = catalog
            .apply_sql("CREATE TABLE C (K INT64, C INT64) PRIMARY KEY (K, C), INTERLEAVE IN P")
            .unwrap();
        assert_eq!(
            rows_of(&catalog, "tables", user(1)),
            [
                "||C|BASE TABLE|P|NULL|COMMITTED|IN|NULL",
                "||P|BASE TABLE|NULL|NULL|COMMITTED|NULL|NULL",
            ]
        );
    }

    #[test]
    fn columns() {
        let catalog = catalog();
        let (columns, _) = virtual_table(&catalog, &["INFORMATION_SCHEMA", "COLUMNS"]).unwrap();
        assert_eq!(columns[4], ("ORDINAL_POSITION".to_string(), Type::Int64));
        assert_eq!(columns[12], ("IS_HIDDEN".to_string(), Type::Bool));
        assert_eq!(
            rows_of(&catalog, "COLUMNS", user(1)),
            [
                "||Albums|AlbumId|2|NULL|NULL|NO|INT64|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Albums|SingerId|1|NULL|NULL|NO|INT64|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Albums|Title|3|'untitled'|NULL|YES|STRING(MAX)|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Albums|UpdatedAt|4|NULL|NULL|YES|TIMESTAMP|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Events|EventId|1|NULL|NULL|YES|INT64|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|YES|BY DEFAULT|BIT_REVERSED_POSITIVE_SEQUENCE|NULL|10|20",
                "||Events|Name|2|NULL|NULL|YES|STRING(MAX)|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Reviews|ReviewId|1|NULL|NULL|NO|INT64|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Reviews|SingerId|2|NULL|NULL|YES|INT64|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Singers|FirstName|2|NULL|NULL|YES|STRING(1024)|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Singers|FullName|4|NULL|NULL|YES|STRING(MAX)|ALWAYS|FirstName || ' ' || LastName|YES|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Singers|LastName|3|NULL|NULL|NO|STRING(MAX)|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Singers|SingerId|1|NULL|NULL|NO|INT64|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
                "||Singers|Tags|5|NULL|NULL|YES|ARRAY<STRING(10)>|NEVER|NULL|NULL|FALSE|NULL|COMMITTED|NO|NULL|NULL|NULL|NULL|NULL",
            ]
        );
        // The information schema describes its own columns.
        let own = rows_of(&catalog, "COLUMNS", |r| {
            r[2] == Value::String("TABLES".into()) && r[1] != Value::String(String::new())
        });
        assert_eq!(own.len(), 9);
        assert_eq!(
            own[0],
            "|INFORMATION_SCHEMA|TABLES|INTERLEAVE_TYPE|8|NULL|NULL|YES|STRING(MAX)|NEVER|NULL|NULL|FALSE|NULL|NULL|NO|NULL|NULL|NULL|NULL|NULL"
        );
    }

    #[test]
    fn column_options_and_usage() {
        let catalog = catalog();
        assert_eq!(
            rows_of(&catalog, "COLUMN_OPTIONS", |_| true),
            ["||Albums|UpdatedAt|allow_commit_timestamp|BOOL|TRUE"]
        );
        assert_eq!(
            rows_of(&catalog, "COLUMN_COLUMN_USAGE", |_| true),
            [
                "||Singers|FirstName|FullName",
                "||Singers|LastName|FullName"
            ]
        );
    }

    #[test]
    fn indexes_and_their_columns() {
        let catalog = catalog();
        assert_eq!(
            rows_of(&catalog, "INDEXES", user(1)),
            [
                "||Albums|AlbumsByTitle|INDEX||FALSE|TRUE|READ_WRITE|FALSE",
                "||Albums|PRIMARY_KEY|PRIMARY_KEY||TRUE|FALSE|NULL|FALSE",
                "||Events|PRIMARY_KEY|PRIMARY_KEY||TRUE|FALSE|NULL|FALSE",
                "||Reviews|PRIMARY_KEY|PRIMARY_KEY||TRUE|FALSE|NULL|FALSE",
                "||Singers|PRIMARY_KEY|PRIMARY_KEY||TRUE|FALSE|NULL|FALSE",
            ]
        );
        assert!(rows_of(&catalog, "INDEXES", |r| !user(1)(r)).contains(
            &"|INFORMATION_SCHEMA|TABLES|PRIMARY_KEY|PRIMARY_KEY||TRUE|FALSE|NULL|FALSE".into()
        ));
        assert_eq!(
            rows_of(&catalog, "INDEX_COLUMNS", user(1)),
            [
                "||Albums|AlbumsByTitle|INDEX|Title|1|DESC|NO|STRING(MAX)",
                "||Albums|AlbumsByTitle|INDEX|UpdatedAt|NULL|NULL|YES|TIMESTAMP",
                "||Albums|PRIMARY_KEY|PRIMARY_KEY|AlbumId|2|DESC|NO|INT64",
                "||Albums|PRIMARY_KEY|PRIMARY_KEY|SingerId|1|ASC|NO|INT64",
                "||Events|PRIMARY_KEY|PRIMARY_KEY|EventId|1|ASC|YES|INT64",
                "||Reviews|PRIMARY_KEY|PRIMARY_KEY|ReviewId|1|ASC|NO|INT64",
                "||Singers|PRIMARY_KEY|PRIMARY_KEY|SingerId|1|ASC|NO|INT64",
            ]
        );
    }

    #[test]
    fn interleaved_index_names_its_parent() {
        let catalog = catalog();
        let (catalog, _) = catalog
            .apply_sql("CREATE UNIQUE INDEX AlbumsBySinger ON Albums(SingerId, Title), INTERLEAVE IN Singers")
            .unwrap();
        assert!(rows_of(&catalog, "INDEXES", user(1))
            .contains(&"||Albums|AlbumsBySinger|INDEX|Singers|TRUE|FALSE|READ_WRITE|FALSE".into()));
    }

    #[test]
    fn constraints() {
        let catalog = catalog();
        assert_eq!(
            rows_of(&catalog, "TABLE_CONSTRAINTS", user(1)),
            [
                "||CK_IS_NOT_NULL_Albums_AlbumId|||Albums|CHECK|NO|NO|YES",
                "||CK_IS_NOT_NULL_Albums_SingerId|||Albums|CHECK|NO|NO|YES",
                "||CK_IS_NOT_NULL_Reviews_ReviewId|||Reviews|CHECK|NO|NO|YES",
                "||CK_IS_NOT_NULL_Singers_LastName|||Singers|CHECK|NO|NO|YES",
                "||CK_IS_NOT_NULL_Singers_SingerId|||Singers|CHECK|NO|NO|YES",
                "||CK_Name|||Singers|CHECK|NO|NO|YES",
                "||FK_ReviewSinger|||Reviews|FOREIGN KEY|NO|NO|YES",
                "||PK_Albums|||Albums|PRIMARY KEY|NO|NO|YES",
                "||PK_Events|||Events|PRIMARY KEY|NO|NO|YES",
                "||PK_Reviews|||Reviews|PRIMARY KEY|NO|NO|YES",
                "||PK_Singers|||Singers|PRIMARY KEY|NO|NO|YES",
            ]
        );
        assert_eq!(
            rows_of(&catalog, "CHECK_CONSTRAINTS", user(1)),
            [
                "||CK_IS_NOT_NULL_Albums_AlbumId|AlbumId IS NOT NULL|COMMITTED",
                "||CK_IS_NOT_NULL_Albums_SingerId|SingerId IS NOT NULL|COMMITTED",
                "||CK_IS_NOT_NULL_Reviews_ReviewId|ReviewId IS NOT NULL|COMMITTED",
                "||CK_IS_NOT_NULL_Singers_LastName|LastName IS NOT NULL|COMMITTED",
                "||CK_IS_NOT_NULL_Singers_SingerId|SingerId IS NOT NULL|COMMITTED",
                "||CK_Name|LastName != ''|COMMITTED",
            ]
        );
        assert!(rows_of(&catalog, "CHECK_CONSTRAINTS", |r| !user(1)(r)).contains(
            &"|INFORMATION_SCHEMA|CK_IS_NOT_NULL_TABLES_TABLE_NAME|TABLE_NAME IS NOT NULL|COMMITTED"
                .into()
        ));
        assert_eq!(
            rows_of(&catalog, "REFERENTIAL_CONSTRAINTS", |_| true),
            ["||FK_ReviewSinger|||PK_Singers|SIMPLE|NO ACTION|NO ACTION|COMMITTED"]
        );
        assert_eq!(
            rows_of(&catalog, "KEY_COLUMN_USAGE", user(1)),
            [
                "||FK_ReviewSinger|||Reviews|SingerId|1|1",
                "||PK_Albums|||Albums|AlbumId|2|NULL",
                "||PK_Albums|||Albums|SingerId|1|NULL",
                "||PK_Events|||Events|EventId|1|NULL",
                "||PK_Reviews|||Reviews|ReviewId|1|NULL",
                "||PK_Singers|||Singers|SingerId|1|NULL",
            ]
        );
        assert_eq!(
            rows_of(&catalog, "CONSTRAINT_TABLE_USAGE", user(1)),
            [
                "||Albums|||CK_IS_NOT_NULL_Albums_AlbumId",
                "||Albums|||CK_IS_NOT_NULL_Albums_SingerId",
                "||Albums|||PK_Albums",
                "||Events|||PK_Events",
                "||Reviews|||CK_IS_NOT_NULL_Reviews_ReviewId",
                "||Reviews|||PK_Reviews",
                "||Singers|||CK_IS_NOT_NULL_Singers_LastName",
                "||Singers|||CK_IS_NOT_NULL_Singers_SingerId",
                "||Singers|||CK_Name",
                "||Singers|||FK_ReviewSinger",
                "||Singers|||PK_Singers",
            ]
        );
        assert_eq!(
            rows_of(&catalog, "CONSTRAINT_COLUMN_USAGE", user(1)),
            [
                "||Albums|AlbumId|||CK_IS_NOT_NULL_Albums_AlbumId",
                "||Albums|SingerId|||CK_IS_NOT_NULL_Albums_SingerId",
                "||Reviews|ReviewId|||CK_IS_NOT_NULL_Reviews_ReviewId",
                "||Singers|LastName|||CK_IS_NOT_NULL_Singers_LastName",
                "||Singers|SingerId|||CK_IS_NOT_NULL_Singers_SingerId",
                "||Singers|LastName|||CK_Name",
                "||Singers|SingerId|||FK_ReviewSinger",
                "||Albums|AlbumId|||PK_Albums",
                "||Albums|SingerId|||PK_Albums",
                "||Events|EventId|||PK_Events",
                "||Reviews|ReviewId|||PK_Reviews",
                "||Singers|SingerId|||PK_Singers",
            ]
        );
    }

    #[test]
    fn foreign_key_details() {
        let (catalog, _) = Catalog::new()
            .apply_sql("CREATE TABLE P (A INT64, B STRING(MAX), C INT64) PRIMARY KEY (A, B)")
            .unwrap();
        let (catalog, _) = catalog
            .apply_sql(
                "CREATE TABLE Q (K INT64, X STRING(MAX), Y INT64, Z INT64,
                   CONSTRAINT ByKey FOREIGN KEY (X, Y) REFERENCES P (B, A) ON DELETE CASCADE,
                   CONSTRAINT ByC FOREIGN KEY (Z) REFERENCES P (C) NOT ENFORCED,
                 ) PRIMARY KEY (K)",
            )
            .unwrap();
        assert_eq!(
            rows_of(&catalog, "REFERENTIAL_CONSTRAINTS", |_| true),
            [
                "||ByC|NULL|NULL|NULL|SIMPLE|NO ACTION|NO ACTION|COMMITTED",
                "||ByKey|||PK_P|SIMPLE|NO ACTION|CASCADE|COMMITTED",
            ]
        );
        assert_eq!(
            rows_of(&catalog, "KEY_COLUMN_USAGE", |r| user(1)(r)
                && r[2] != Value::String("PK_P".into())
                && r[2] != Value::String("PK_Q".into())),
            ["||ByC|||Q|Z|1|1", "||ByKey|||Q|X|1|2", "||ByKey|||Q|Y|2|1",]
        );
        assert!(rows_of(&catalog, "TABLE_CONSTRAINTS", |_| true)
            .contains(&"||ByC|||Q|FOREIGN KEY|NO|NO|NO".into()));
    }

    #[test]
    fn sequences_hide_identity_sequences() {
        let catalog = catalog();
        assert_eq!(rows_of(&catalog, "SEQUENCES", |_| true), ["||Seq|INT64"]);
        assert_eq!(
            rows_of(&catalog, "SEQUENCE_OPTIONS", |_| true),
            [
                "||Seq|sequence_kind|STRING|bit_reversed_positive",
                "||Seq|skip_range_max|INT64|1000",
                "||Seq|skip_range_min|INT64|1",
                "||Seq|start_with_counter|INT64|5",
            ]
        );
    }

    #[test]
    fn database_options() {
        assert_eq!(
            rows_of(&Catalog::new(), "DATABASE_OPTIONS", |_| true),
            ["||database_dialect|STRING|GOOGLE_STANDARD_SQL"]
        );
        assert_eq!(
            rows_of(&catalog(), "DATABASE_OPTIONS", |_| true),
            [
                "||database_dialect|STRING|GOOGLE_STANDARD_SQL",
                "||enable_key_visualizer|BOOL|TRUE",
                "||version_retention_period|STRING|7d",
            ]
        );
    }

    #[test]
    fn empty_tables_still_have_columns() {
        let catalog = catalog();
        for name in ["VIEWS", "SPANNER_STATISTICS"] {
            let (columns, rows) = virtual_table(&catalog, &["INFORMATION_SCHEMA", name]).unwrap();
            assert!(!columns.is_empty());
            assert!(rows.is_empty());
        }
        // Every table is listed in TABLES and has a primary key.
        for name in DEFS.iter().map(|d| d.name) {
            assert!(find_def(name).is_some_and(|d| d.key.len()
                == d.key
                    .iter()
                    .filter(|k| d.columns.iter().any(|c| c.name == **k))
                    .count()));
        }
    }
}
