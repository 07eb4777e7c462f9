//! The information schema of a PostgreSQL-dialect database: the same
//! tables and rows, in the shape Spanner's PostgreSQL interface shows them.
//!
//! The catalog behind both dialects is one, so the rows are built once (in
//! GoogleSQL's spelling) and reshaped here, rather than by a second set of
//! row builders that could drift from the first:
//!
//! - column names are lower case (`table_name`), as PostgreSQL folds them;
//! - the default schema is `public` (GoogleSQL's is `''`) and the
//!   information schema is `information_schema`, with its own tables and
//!   columns named in lower case;
//! - types are PostgreSQL's names: `spanner_type` says `bigint`,
//!   `character varying(1024)`, `timestamp with time zone`, `jsonb`,
//!   `bigint[]`, and `columns.data_type` (NULL in GoogleSQL) gives the
//!   type without its length, `ARRAY` for arrays, as PostgreSQL does;
//!   option types and a sequence's type are PostgreSQL's names too.
//!
//! Rows are sorted again afterwards, since `public` does not sort where
//! `''` did.

use rowtree_types::Value;

use super::defs::{Def, COLUMNS, SCHEMA_NAME};
use super::order::sort_by_key;

/// Column names of the information schema as PostgreSQL spells them.
pub(super) fn column_name(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// Reshapes `rows` of `def` (built in GoogleSQL's spelling) in place.
pub(super) fn reshape(def: &Def, rows: &mut [Vec<Value>]) {
    let position = |name: &str| def.columns.iter().position(|c| c.name == name);
    let schema_columns: Vec<usize> = def
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            c.name.ends_with("_SCHEMA") || c.name == "SCHEMA_NAME" || c.name == "SCHEMA"
        })
        .map(|(i, _)| i)
        .collect();
    // Names of the information schema's own objects, lower-cased in rows
    // that describe it.
    let own_names: Vec<usize> = ["TABLE_NAME", "COLUMN_NAME"]
        .iter()
        .filter_map(|n| position(n))
        .collect();
    let spanner_type = position("SPANNER_TYPE");
    let data_type = (def.name == COLUMNS)
        .then(|| position("DATA_TYPE"))
        .flatten();
    // Other columns that name a type: option types, a sequence's type.
    let other_types: Vec<usize> = ["OPTION_TYPE", "DATA_TYPE"]
        .iter()
        .filter_map(|n| position(n))
        .filter(|&i| Some(i) != data_type)
        .collect();
    for row in rows.iter_mut() {
        let mut describes_itself = false;
        for &i in &schema_columns {
            if let Value::String(s) = &mut row[i] {
                if s.is_empty() {
                    *s = "public".to_string();
                } else if s.eq_ignore_ascii_case(SCHEMA_NAME) {
                    *s = s.to_ascii_lowercase();
                    describes_itself = true;
                }
            }
        }
        if describes_itself {
            for &i in &own_names {
                if let Value::String(s) = &mut row[i] {
                    *s = s.to_ascii_lowercase();
                }
            }
        }
        for &i in &other_types {
            if let Value::String(s) = &row[i] {
                row[i] = Value::String(type_name(s));
            }
        }
        if let Some(i) = spanner_type {
            if let Value::String(s) = &row[i] {
                let google = s.clone();
                row[i] = Value::String(type_name(&google));
                if let Some(d) = data_type {
                    row[d] = Value::String(data_type_name(&google));
                }
            }
        }
    }
    sort_by_key(def, rows);
}

/// The PostgreSQL name of a GoogleSQL type as `SPANNER_TYPE` spells it:
/// `INT64` is `bigint`, `STRING(10)` is `character varying(10)`,
/// `ARRAY<FLOAT64>` is `double precision[]`. A name it does not know is
/// kept.
pub(super) fn type_name(google: &str) -> String {
    if let Some(inner) = google
        .strip_prefix("ARRAY<")
        .and_then(|t| t.strip_suffix('>'))
    {
        return format!("{}[]", type_name(inner));
    }
    if let Some(length) = google
        .strip_prefix("STRING(")
        .and_then(|t| t.strip_suffix(')'))
    {
        return match length {
            "MAX" => "character varying".to_string(),
            n => format!("character varying({n})"),
        };
    }
    if google.starts_with("BYTES(") {
        return "bytea".to_string();
    }
    match google {
        "STRING" => "character varying",
        "BYTES" => "bytea",
        "INT64" => "bigint",
        "BOOL" => "boolean",
        "FLOAT64" => "double precision",
        "FLOAT32" => "real",
        "NUMERIC" => "numeric",
        "DATE" => "date",
        "TIMESTAMP" => "timestamp with time zone",
        "JSON" => "jsonb",
        "UUID" => "uuid",
        other => other,
    }
    .to_string()
}

/// `columns.data_type`: the type without its length, and `ARRAY` for
/// arrays (whose element type PostgreSQL reports elsewhere).
fn data_type_name(google: &str) -> String {
    if google.starts_with("ARRAY<") {
        return "ARRAY".to_string();
    }
    let name = type_name(google);
    match name.find('(') {
        Some(i) => name[..i].to_string(),
        None => name,
    }
}
