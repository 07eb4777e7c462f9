//! Printing the fixes: CREATE TABLE and CREATE INDEX statements rebuilt from
//! the catalog, changed, and printed in the schema's dialect (GoogleSQL or
//! PostgreSQL) so a user can paste them into the DDL they came from.
//!
//! A fix is the whole rewritten statement rather than a diff, so it can be
//! applied as it is to a new database (or compared with the original by
//! eye). The catalog's own printer is private to the schema crate, so the
//! advisor keeps a small editable model ([`TableDdl`], [`IndexDdl`]) that
//! prints columns, keys, interleaving, CHECK and FOREIGN KEY constraints and
//! the row deletion policy.
//!
//! [`Sql`] holds what differs between the dialects in the advisor's own
//! fix expressions (`GENERATE_UUID()` is `spanner.generate_uuid()` in
//! PostgreSQL, a sequence's next value is `nextval('s')`, ...), so the rules
//! write each fix once. Expressions taken from the catalog (defaults,
//! generated columns, CHECKs) are kept as the user wrote them, which is
//! already the right dialect.

use rowtree_schema::ast::{DataType, InterleaveKind, Length, OnDelete};
use rowtree_schema::{Catalog, Index, Table};
use rowtree_types::Dialect;

/// The spelling of names, types and the advisor's fix expressions in one
/// dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sql(pub Dialect);

impl Sql {
    fn pg(&self) -> bool {
        self.0 == Dialect::PostgreSql
    }

    /// `name` quoted as the dialect needs.
    pub fn name(&self, name: &str) -> String {
        if self.pg() {
            rowtree_schema::print_pg_name(name)
        } else {
            rowtree_schema::print_name(name)
        }
    }

    /// The type's spelling.
    pub fn type_name(&self, data_type: &DataType) -> String {
        if self.pg() {
            pg_type_name(data_type)
        } else {
            type_name(data_type)
        }
    }

    /// A random (v4) UUID as text.
    pub fn uuid(&self) -> &'static str {
        if self.pg() {
            "spanner.generate_uuid()"
        } else {
            "GENERATE_UUID()"
        }
    }

    /// The type of a column holding [`Sql::uuid`]'s text.
    pub fn uuid_type(&self) -> DataType {
        DataType::String(Length::Limit(36))
    }

    /// The next value of the sequence `sequence`.
    pub fn next_value(&self, sequence: &str) -> String {
        if self.pg() {
            // nextval takes the name as a string literal; a quoted name
            // inside it keeps its case.
            format!("nextval('{}')", self.name(sequence).replace('\'', "''"))
        } else {
            format!("GET_NEXT_SEQUENCE_VALUE(SEQUENCE {})", self.name(sequence))
        }
    }

    /// `CREATE SEQUENCE` of a bit-reversed sequence, with its `;`.
    pub fn create_sequence(&self, sequence: &str) -> String {
        if self.pg() {
            format!(
                "CREATE SEQUENCE {} BIT_REVERSED_POSITIVE;",
                self.name(sequence)
            )
        } else {
            format!(
                "CREATE SEQUENCE {} OPTIONS (sequence_kind = 'bit_reversed_positive');",
                self.name(sequence)
            )
        }
    }

    /// The name the advisor gives a new column called `camel` in
    /// GoogleSQL (`ShardId`): the same, or snake case in PostgreSQL
    /// (`shard_id`), where unquoted names are lower case.
    pub fn new_name(&self, camel: &str) -> String {
        if !self.pg() {
            return camel.to_string();
        }
        let mut out = String::new();
        for (i, c) in camel.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }

    /// The name of the bit-reversed sequence the advisor proposes for `table`.
    pub fn sequence_name(&self, table: &str) -> String {
        if self.pg() {
            format!("{}_seq", table.to_ascii_lowercase())
        } else {
            format!("{table}Sequence")
        }
    }

    /// `MOD(hash of column of, shards)`: the shard of a row.
    pub fn shard_expr(&self, of: &str, of_is_text: bool, shards: u32) -> String {
        if self.pg() {
            let input = if of_is_text {
                self.name(of)
            } else {
                format!("{}::text", self.name(of))
            };
            format!("mod(spanner.farm_fingerprint({input}), {shards})")
        } else {
            let input = if of_is_text {
                self.name(of)
            } else {
                format!("CAST({} AS STRING)", self.name(of))
            };
            format!("MOD(FARM_FINGERPRINT({input}), {shards})")
        }
    }
}

/// One column of a table being rewritten.
#[derive(Debug, Clone)]
pub(crate) struct ColumnDdl {
    pub name: String,
    pub data_type: DataType,
    pub not_null: bool,
    pub default: Option<String>,
    pub generated: Option<(String, bool)>,
    pub hidden: bool,
    pub commit_timestamp: bool,
    pub identity: bool,
}

/// A CREATE TABLE being rewritten.
#[derive(Debug, Clone)]
pub(crate) struct TableDdl {
    pub sql: Sql,
    pub name: String,
    pub columns: Vec<ColumnDdl>,
    /// Key column names with `DESC`.
    pub key: Vec<(String, bool)>,
    /// Constraint clauses, printed as they are.
    pub constraints: Vec<String>,
    /// The parent, and whether deletes cascade (`None`: `INTERLEAVE IN`).
    pub interleave: Option<(String, Option<bool>)>,
    /// The row deletion policy's expression in the dialect's spelling.
    pub ttl: Option<String>,
}

/// A CREATE INDEX being rewritten.
#[derive(Debug, Clone)]
pub(crate) struct IndexDdl {
    pub sql: Sql,
    pub unique: bool,
    pub null_filtered: bool,
    pub name: String,
    pub table: String,
    pub keys: Vec<(String, bool)>,
    pub storing: Vec<String>,
    pub interleave: Option<String>,
}

/// GoogleSQL spelling of a column type.
pub(crate) fn type_name(data_type: &DataType) -> String {
    let length = |l: &Length| match l {
        Length::Max => "MAX".to_string(),
        Length::Limit(n) => n.to_string(),
    };
    match data_type {
        DataType::Bool => "BOOL".into(),
        DataType::Int64 => "INT64".into(),
        DataType::Float32 => "FLOAT32".into(),
        DataType::Float64 => "FLOAT64".into(),
        DataType::Numeric => "NUMERIC".into(),
        DataType::String(l) => format!("STRING({})", length(l)),
        DataType::Bytes(l) => format!("BYTES({})", length(l)),
        DataType::Date => "DATE".into(),
        DataType::Timestamp => "TIMESTAMP".into(),
        DataType::Json => "JSON".into(),
        DataType::Uuid => "UUID".into(),
        DataType::Array(inner) => format!("ARRAY<{}>", type_name(inner)),
        DataType::Struct(fields) => format!(
            "STRUCT<{}>",
            fields
                .iter()
                .map(|(n, t)| match n {
                    Some(n) => format!("{} {}", n.value, type_name(t)),
                    None => type_name(t),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        DataType::Proto(name) | DataType::Enum(name) => format!("`{name}`"),
    }
}

/// PostgreSQL spelling of a column type.
fn pg_type_name(data_type: &DataType) -> String {
    match data_type {
        DataType::Bool => "boolean".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "real".into(),
        DataType::Float64 => "double precision".into(),
        DataType::Numeric => "numeric".into(),
        DataType::String(Length::Max) => "varchar".into(),
        DataType::String(Length::Limit(n)) => format!("varchar({n})"),
        DataType::Bytes(_) => "bytea".into(),
        DataType::Date => "date".into(),
        DataType::Timestamp => "timestamptz".into(),
        DataType::Json => "jsonb".into(),
        DataType::Uuid => "uuid".into(),
        DataType::Array(inner) => format!("{}[]", pg_type_name(inner)),
        // Not in the PostgreSQL dialect; printed as GoogleSQL names them.
        DataType::Struct(_) | DataType::Proto(_) | DataType::Enum(_) => type_name(data_type),
    }
}

fn key_list(sql: Sql, key: &[(String, bool)]) -> String {
    key.iter()
        .map(|(n, desc)| {
            if *desc {
                format!("{} DESC", sql.name(n))
            } else {
                sql.name(n)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl TableDdl {
    /// The model of `table` as the catalog has it.
    pub fn of(catalog: &Catalog, table: &Table) -> TableDdl {
        let sql = Sql(catalog.dialect());
        let print_name = |n: &str| sql.name(n);
        let columns = table
            .columns
            .iter()
            .map(|c| ColumnDdl {
                name: c.name.clone(),
                data_type: c.data_type.clone(),
                not_null: c.not_null,
                default: if c.identity_sequence.is_some() {
                    None
                } else {
                    c.default.as_ref().map(|d| d.text.clone())
                },
                generated: c
                    .generated
                    .as_ref()
                    .map(|g| (g.text.clone(), c.generated_stored)),
                hidden: c.hidden,
                commit_timestamp: c.allow_commit_timestamp,
                identity: c.identity_sequence.is_some(),
            })
            .collect();
        let key = table
            .primary_key
            .iter()
            .map(|k| (table.columns[k.column].name.clone(), k.desc))
            .collect();
        let mut constraints = Vec::new();
        for fk in &table.foreign_keys {
            let Some(referenced) = catalog.table_by_id(fk.referenced_table) else {
                continue;
            };
            let cols = |t: &Table, ps: &[usize]| -> String {
                ps.iter()
                    .map(|p| print_name(&t.columns[*p].name))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut clause = String::new();
            if !fk.generated_name {
                clause.push_str(&format!("CONSTRAINT {} ", print_name(&fk.name)));
            }
            clause.push_str(&format!(
                "FOREIGN KEY ({}) REFERENCES {} ({})",
                cols(table, &fk.columns),
                print_name(&referenced.name),
                cols(referenced, &fk.referenced_columns)
            ));
            if fk.on_delete == OnDelete::Cascade {
                clause.push_str(" ON DELETE CASCADE");
            }
            if !fk.enforced && !sql.pg() {
                clause.push_str(" NOT ENFORCED");
            }
            constraints.push(clause);
        }
        for check in &table.checks {
            if check.generated_name {
                constraints.push(format!("CHECK ({})", check.expr.text));
            } else {
                constraints.push(format!(
                    "CONSTRAINT {} CHECK ({})",
                    print_name(&check.name),
                    check.expr.text
                ));
            }
        }
        let interleave = table.parent.and_then(|p| {
            let parent = catalog.table_by_id(p.table)?;
            Some(match p.kind {
                InterleaveKind::InParent(on_delete) => {
                    (parent.name.clone(), Some(on_delete == OnDelete::Cascade))
                }
                InterleaveKind::In => (parent.name.clone(), None),
            })
        });
        let ttl = table.row_deletion_expression(sql.0);
        TableDdl {
            sql,
            name: table.name.clone(),
            columns,
            key,
            constraints,
            interleave,
            ttl,
        }
    }

    /// The CREATE TABLE statement, with a trailing `;`.
    pub fn print(&self) -> String {
        if self.sql.pg() {
            return self.print_pg();
        }
        let print_name = |n: &str| self.sql.name(n);
        let mut out = format!("CREATE TABLE {} (\n", print_name(&self.name));
        for c in &self.columns {
            out.push_str("  ");
            out.push_str(&print_name(&c.name));
            out.push(' ');
            out.push_str(&type_name(&c.data_type));
            if c.not_null {
                out.push_str(" NOT NULL");
            }
            if c.identity {
                out.push_str(" GENERATED BY DEFAULT AS IDENTITY (BIT_REVERSED_POSITIVE)");
            }
            if let Some(d) = &c.default {
                out.push_str(&format!(" DEFAULT ({d})"));
            }
            if let Some((g, stored)) = &c.generated {
                out.push_str(&format!(" AS ({g})"));
                if *stored {
                    out.push_str(" STORED");
                }
            }
            if c.hidden {
                out.push_str(" HIDDEN");
            }
            if c.commit_timestamp {
                out.push_str(" OPTIONS (allow_commit_timestamp = true)");
            }
            out.push_str(",\n");
        }
        for c in &self.constraints {
            out.push_str(&format!("  {c},\n"));
        }
        out.push_str(&format!(
            ") PRIMARY KEY ({})",
            key_list(self.sql, &self.key)
        ));
        if let Some(i) = self.interleave_clause() {
            out.push_str(&format!(",\n  {i}"));
        }
        if let Some(t) = &self.ttl {
            out.push_str(&format!(",\n  ROW DELETION POLICY ({t})"));
        }
        out.push(';');
        out
    }

    fn interleave_clause(&self) -> Option<String> {
        let (parent, cascade) = self.interleave.as_ref()?;
        let parent = self.sql.name(parent);
        Some(match cascade {
            Some(true) => format!("INTERLEAVE IN PARENT {parent} ON DELETE CASCADE"),
            Some(false) => format!("INTERLEAVE IN PARENT {parent}"),
            None => format!("INTERLEAVE IN {parent}"),
        })
    }

    /// The CREATE TABLE statement in the PostgreSQL dialect.
    fn print_pg(&self) -> String {
        let sql = self.sql;
        let mut out = format!("CREATE TABLE {} (\n", sql.name(&self.name));
        for c in &self.columns {
            out.push_str("  ");
            out.push_str(&sql.name(&c.name));
            out.push(' ');
            if c.commit_timestamp && c.data_type == DataType::Timestamp {
                out.push_str("spanner.commit_timestamp");
            } else {
                out.push_str(&pg_type_name(&c.data_type));
            }
            if c.not_null {
                out.push_str(" NOT NULL");
            }
            if c.identity {
                out.push_str(" GENERATED BY DEFAULT AS IDENTITY (BIT_REVERSED_POSITIVE)");
            } else if let Some((g, stored)) = &c.generated {
                let kind = if *stored { "STORED" } else { "VIRTUAL" };
                out.push_str(&format!(" GENERATED ALWAYS AS ({g}) {kind}"));
            } else if let Some(d) = &c.default {
                out.push_str(&format!(" DEFAULT ({d})"));
            }
            out.push_str(",\n");
        }
        for c in &self.constraints {
            out.push_str(&format!("  {c},\n"));
        }
        out.push_str(&format!("  PRIMARY KEY ({})\n)", key_list(sql, &self.key)));
        if let Some(i) = self.interleave_clause() {
            out.push_str(&format!(" {i}"));
        }
        if let Some(t) = &self.ttl {
            out.push_str(&format!(" TTL {t}"));
        }
        out.push(';');
        out
    }

    /// The column named `name` (case-insensitive).
    pub fn column_mut(&mut self, name: &str) -> Option<&mut ColumnDdl> {
        self.columns
            .iter_mut()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// A column name not yet used in the table, `base` if free.
    pub fn fresh_name(&self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while self
            .columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&name))
        {
            name = format!("{base}{n}");
            n += 1;
        }
        name
    }

    /// Adds the stored generated column `MOD(FARM_FINGERPRINT(CAST(of AS
    /// STRING)), shards)` (in the dialect's spelling) first, and first in
    /// the key. Returns its name.
    pub fn add_shard_prefix(&mut self, of: &str, shards: u32) -> String {
        let name = self.fresh_name(&self.sql.new_name("ShardId"));
        let text = self
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(of))
            .is_some_and(|c| matches!(c.data_type, DataType::String(_) | DataType::Bytes(_)));
        self.columns
            .insert(0, shard_column(self.sql, &name, of, text, shards));
        self.key.insert(0, (name.clone(), false));
        name
    }
}

/// The stored generated shard column over column `of`.
/// STRING and BYTES values are hashed as they are; others are cast to
/// STRING first (FARM_FINGERPRINT takes only those two types).
pub(crate) fn shard_column(
    sql: Sql,
    name: &str,
    of: &str,
    of_is_text: bool,
    shards: u32,
) -> ColumnDdl {
    ColumnDdl {
        name: name.to_string(),
        data_type: DataType::Int64,
        not_null: true,
        default: None,
        generated: Some((sql.shard_expr(of, of_is_text, shards), true)),
        hidden: false,
        commit_timestamp: false,
        identity: false,
    }
}

impl IndexDdl {
    /// The model of `index` (on `table`) as the catalog has it.
    pub fn of(catalog: &Catalog, table: &Table, index: &Index) -> IndexDdl {
        IndexDdl {
            sql: Sql(catalog.dialect()),
            unique: index.unique,
            null_filtered: index.null_filtered,
            name: index.name.clone(),
            table: table.name.clone(),
            keys: index
                .keys
                .iter()
                .map(|k| (table.columns[k.column].name.clone(), k.desc))
                .collect(),
            storing: index
                .storing
                .iter()
                .map(|p| table.columns[*p].name.clone())
                .collect(),
            interleave: index
                .interleave_in
                .and_then(|id| catalog.table_by_id(id))
                .map(|t| t.name.clone()),
        }
    }

    /// The CREATE INDEX statement, with a trailing `;`.
    pub fn print(&self) -> String {
        if self.sql.pg() {
            return self.print_pg();
        }
        let print_name = |n: &str| self.sql.name(n);
        let mut out = String::from("CREATE ");
        if self.unique {
            out.push_str("UNIQUE ");
        }
        if self.null_filtered {
            out.push_str("NULL_FILTERED ");
        }
        out.push_str(&format!(
            "INDEX {} ON {}({})",
            print_name(&self.name),
            print_name(&self.table),
            key_list(self.sql, &self.keys)
        ));
        if !self.storing.is_empty() {
            out.push_str(&format!(
                " STORING ({})",
                self.storing
                    .iter()
                    .map(|s| print_name(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(p) = &self.interleave {
            out.push_str(&format!(", INTERLEAVE IN {}", print_name(p)));
        }
        out.push(';');
        out
    }

    /// The CREATE INDEX statement in the PostgreSQL dialect (NULL_FILTERED
    /// is a `WHERE key IS NOT NULL AND ...` filter there).
    fn print_pg(&self) -> String {
        let sql = self.sql;
        let mut out = String::from("CREATE ");
        if self.unique {
            out.push_str("UNIQUE ");
        }
        out.push_str(&format!(
            "INDEX {} ON {} ({})",
            sql.name(&self.name),
            sql.name(&self.table),
            key_list(sql, &self.keys)
        ));
        if !self.storing.is_empty() {
            out.push_str(&format!(
                " INCLUDE ({})",
                self.storing
                    .iter()
                    .map(|s| sql.name(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(p) = &self.interleave {
            out.push_str(&format!(" INTERLEAVE IN {}", sql.name(p)));
        }
        if self.null_filtered {
            let filters: Vec<String> = self
                .keys
                .iter()
                .map(|(k, _)| format!("{} IS NOT NULL", sql.name(k)))
                .collect();
            out.push_str(&format!(" WHERE {}", filters.join(" AND ")));
        }
        out.push(';');
        out
    }
}
