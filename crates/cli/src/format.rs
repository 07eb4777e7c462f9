//! How `rowtree sql` prints results: aligned tables, CSV, or JSON lines.
//!
//! JSON values are encoded as Spanner's REST API encodes them: INT64 and
//! NUMERIC as strings (they may not fit a double), FLOAT64 as numbers (or
//! the strings "NaN", "Infinity", "-Infinity"), BYTES as base64, TIMESTAMP
//! as RFC 3339 in UTC, DATE as `YYYY-MM-DD`, JSON as its text, UUID as
//! its lowercase `8-4-4-4-12` text, ARRAY as a
//! list, STRUCT as a list of its fields, NULL as null.

use base64::Engine as _;
use rowtree_types::{format_f64, Type, Value};
use serde_json::json;

/// A value as Spanner's REST API encodes it.
pub fn rest_value(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => json!(b),
        Value::Int64(i) => json!(i.to_string()),
        Value::Float32(f) => float_json(*f as f64),
        Value::Float64(f) => float_json(*f),
        Value::Numeric(n) => json!(n.to_string()),
        Value::String(s) => json!(s),
        Value::Bytes(b) => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::Date(d) => json!(d.to_string()),
        Value::Timestamp(t) => json!(t.to_rfc3339()),
        Value::Json(j) => json!(j.to_string()),
        Value::Uuid(u) => json!(u.to_string()),
        Value::Array(items) | Value::Struct(items) => {
            serde_json::Value::Array(items.iter().map(rest_value).collect())
        }
    }
}

fn float_json(f: f64) -> serde_json::Value {
    if f.is_nan() {
        json!("NaN")
    } else if f.is_infinite() {
        json!(if f > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(f)
    }
}

/// A value as a table cell: GoogleSQL's text form, NULL as `NULL`.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::String(s) => s.clone(),
        Value::Float64(f) => format_f64(*f),
        Value::Timestamp(t) => t.to_rfc3339(),
        Value::Bytes(b) => base64::engine::general_purpose::STANDARD.encode(b),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(cell).collect::<Vec<_>>().join(", ")
        ),
        Value::Struct(items) => format!(
            "({})",
            items.iter().map(cell).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

/// An aligned text table with a header, like a database shell prints.
pub fn table(columns: &[(String, Type)], rows: &[Vec<Value>]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(cell).collect()).collect();
    let mut widths: Vec<usize> = columns.iter().map(|(n, _)| n.chars().count()).collect();
    for r in &cells {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |parts: Vec<String>| format!("| {} |", parts.join(" | "));
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let sep = format!(
        "+-{}-+",
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("-+-")
    );
    let mut out = vec![sep.clone()];
    out.push(line(
        columns
            .iter()
            .zip(&widths)
            .map(|((n, _), w)| pad(n, *w))
            .collect(),
    ));
    out.push(sep.clone());
    for r in &cells {
        out.push(line(
            r.iter().zip(&widths).map(|(c, w)| pad(c, *w)).collect(),
        ));
    }
    out.push(sep);
    out.join("\n")
}

/// RFC 4180 CSV with a header row.
pub fn csv(columns: &[(String, Type)], rows: &[Vec<Value>]) -> String {
    let field = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = vec![columns
        .iter()
        .map(|(n, _)| field(n))
        .collect::<Vec<_>>()
        .join(",")];
    for r in rows {
        out.push(
            r.iter()
                .map(|v| {
                    if v.is_null() {
                        String::new()
                    } else {
                        field(&cell(v))
                    }
                })
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    out.join("\n")
}

/// The JSON line of a query result: `{"columns":[..],"rows":[[..]]}`.
pub fn json_rows(columns: &[(String, Type)], rows: &[Vec<Value>]) -> serde_json::Value {
    json!({
        "columns": columns.iter().map(|(n, _)| json!(n)).collect::<Vec<_>>(),
        "rows": rows.iter().map(|r| r.iter().map(rest_value).collect::<Vec<_>>()).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_encoding_follows_spanner() {
        assert_eq!(
            rest_value(&Value::Int64(9007199254740993)),
            json!("9007199254740993")
        );
        assert_eq!(rest_value(&Value::Float64(1.5)), json!(1.5));
        assert_eq!(rest_value(&Value::Float64(f64::NAN)), json!("NaN"));
        assert_eq!(rest_value(&Value::Bytes(b"hi".to_vec())), json!("aGk="));
        assert_eq!(rest_value(&Value::Null), serde_json::Value::Null);
        assert_eq!(
            rest_value(&Value::Array(vec![Value::Int64(1), Value::Null])),
            json!(["1", null])
        );
    }

    #[test]
    fn tables_align_and_csv_quotes() {
        let cols = vec![
            ("Id".to_string(), Type::Int64),
            ("Name".to_string(), Type::String),
        ];
        let rows = vec![
            vec![Value::Int64(1), Value::String("a,b".into())],
            vec![Value::Int64(22), Value::Null],
        ];
        assert_eq!(
            table(&cols, &rows),
            "+----+------+\n| Id | Name |\n+----+------+\n| 1  | a,b  |\n| 22 | NULL |\n+----+------+"
        );
        assert_eq!(csv(&cols, &rows), "Id,Name\n1,\"a,b\"\n22,");
    }
}
