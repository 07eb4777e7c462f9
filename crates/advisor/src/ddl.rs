//! Printing the fixes: CREATE TABLE and CREATE INDEX statements rebuilt from
//! the catalog, changed, and printed as GoogleSQL a user can paste.
//!
//! A fix is the whole rewritten statement rather than a diff, so it can be
//! applied as it is to a new database (or compared with the original by
//! eye). The catalog's own printer is private to the schema crate, so the
//! advisor keeps a small editable model ([`TableDdl`], [`IndexDdl`]) that
//! prints columns, keys, interleaving, CHECK and FOREIGN KEY constraints and
//! the row deletion policy.

use rowtree_schema::ast::{DataType, InterleaveKind, Length, OnDelete};
use rowtree_schema::{print_name, Catalog, Index, Table};

/// One column of a table being rewritten.
#[derive(Debug, Clone)]
pub(crate) struct ColumnDdl {
    pub name: String,
    pub data_type: String,
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
    pub name: String,
    pub columns: Vec<ColumnDdl>,
    /// Key column names with `DESC`.
    pub key: Vec<(String, bool)>,
    /// Constraint clauses, printed as they are.
    pub constraints: Vec<String>,
    /// `INTERLEAVE IN ...` clause.
    pub interleave: Option<String>,
    /// `ROW DELETION POLICY (...)` clause.
    pub ttl: Option<String>,
}

/// A CREATE INDEX being rewritten.
#[derive(Debug, Clone)]
pub(crate) struct IndexDdl {
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

fn key_list(key: &[(String, bool)]) -> String {
    key.iter()
        .map(|(n, desc)| {
            if *desc {
                format!("{} DESC", print_name(n))
            } else {
                print_name(n)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl TableDdl {
    /// The model of `table` as the catalog has it.
    pub fn of(catalog: &Catalog, table: &Table) -> TableDdl {
        let columns = table
            .columns
            .iter()
            .map(|c| ColumnDdl {
                name: c.name.clone(),
                data_type: type_name(&c.data_type),
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
            let cols = |t: &Table, ps: &[usize]| {
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
            if !fk.enforced {
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
                InterleaveKind::InParent(OnDelete::Cascade) => format!(
                    "INTERLEAVE IN PARENT {} ON DELETE CASCADE",
                    print_name(&parent.name)
                ),
                InterleaveKind::InParent(OnDelete::NoAction) => {
                    format!("INTERLEAVE IN PARENT {}", print_name(&parent.name))
                }
                InterleaveKind::In => format!("INTERLEAVE IN {}", print_name(&parent.name)),
            })
        });
        let ttl = table
            .row_deletion_expression(rowtree_types::Dialect::GoogleSql)
            .map(|e| format!("ROW DELETION POLICY ({e})"));
        TableDdl {
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
        let mut out = format!("CREATE TABLE {} (\n", print_name(&self.name));
        for c in &self.columns {
            out.push_str("  ");
            out.push_str(&print_name(&c.name));
            out.push(' ');
            out.push_str(&c.data_type);
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
        out.push_str(&format!(") PRIMARY KEY ({})", key_list(&self.key)));
        if let Some(i) = &self.interleave {
            out.push_str(&format!(",\n  {i}"));
        }
        if let Some(t) = &self.ttl {
            out.push_str(&format!(",\n  {t}"));
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
    /// STRING)), shards)` first, and first in the key. Returns its name.
    pub fn add_shard_prefix(&mut self, of: &str, shards: u32) -> String {
        let name = self.fresh_name("ShardId");
        let text = self
            .columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(of))
            .is_some_and(|c| c.data_type.starts_with("STRING") || c.data_type.starts_with("BYTES"));
        self.columns
            .insert(0, shard_column(&name, of, text, shards));
        self.key.insert(0, (name.clone(), false));
        name
    }
}

/// The stored generated shard column over column `of`.
/// STRING and BYTES values are hashed as they are; others are cast to
/// STRING first (FARM_FINGERPRINT takes only those two types).
pub(crate) fn shard_column(name: &str, of: &str, of_is_text: bool, shards: u32) -> ColumnDdl {
    let input = if of_is_text {
        print_name(of)
    } else {
        format!("CAST({} AS STRING)", print_name(of))
    };
    ColumnDdl {
        name: name.to_string(),
        data_type: "INT64".into(),
        not_null: true,
        default: None,
        generated: Some((format!("MOD(FARM_FINGERPRINT({input}), {shards})"), true)),
        hidden: false,
        commit_timestamp: false,
        identity: false,
    }
}

impl IndexDdl {
    /// The model of `index` (on `table`) as the catalog has it.
    pub fn of(catalog: &Catalog, table: &Table, index: &Index) -> IndexDdl {
        IndexDdl {
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
            key_list(&self.keys)
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
}
