//! Runtime values, and their two text forms.
//!
//! * [`fmt::Display`] is GoogleSQL's `CAST(value AS STRING)`: `1.5`, `true`,
//!   `2016-01-25 07:10:10.555555-08` (timestamps in Spanner's default zone,
//!   America/Los_Angeles). Strings print raw, without quotes.
//! * [`Value::sql_literal`] is an expression that evaluates back to the value
//!   (`"it's"`, `b"\x00"`, `NUMERIC "1.5"`, `TIMESTAMP "... +00"`), for error
//!   messages, DDL printing and tests.

use std::fmt;

use crate::float::{format_f32, format_f64};
use crate::{Date, Numeric, TimeZone, Timestamp, Type, Uuid};

/// A GoogleSQL value. `Null` is untyped at runtime: the type of a NULL is
/// known from the column or expression that produced it.
///
/// `PartialEq` is structural (so `Float64(NaN) == Float64(NaN)` is false, as
/// in Rust); SQL comparison and key ordering live in the expression evaluator
/// and the key codec.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int64(i64),
    Float32(f32),
    Float64(f64),
    Numeric(Numeric),
    String(String),
    Bytes(Vec<u8>),
    Date(Date),
    Timestamp(Timestamp),
    Json(serde_json::Value),
    Uuid(Uuid),
    Array(Vec<Value>),
    Struct(Vec<Value>),
}

impl Value {
    /// Whether this is SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type of a non-NULL scalar value; `None` for NULL, arrays and
    /// structs (whose element types are not recorded in the value).
    pub fn scalar_type(&self) -> Option<Type> {
        Some(match self {
            Value::Bool(_) => Type::Bool,
            Value::Int64(_) => Type::Int64,
            Value::Float32(_) => Type::Float32,
            Value::Float64(_) => Type::Float64,
            Value::Numeric(_) => Type::Numeric,
            Value::String(_) => Type::String,
            Value::Bytes(_) => Type::Bytes,
            Value::Date(_) => Type::Date,
            Value::Timestamp(_) => Type::Timestamp,
            Value::Json(_) => Type::Json,
            Value::Uuid(_) => Type::Uuid,
            Value::Null | Value::Array(_) | Value::Struct(_) => return None,
        })
    }

    /// An approximate in-memory/stored size in bytes, used for Spanner's
    /// size limits (10 MiB per cell, 8 KiB per key) and for split accounting.
    pub fn approx_size(&self) -> usize {
        match self {
            Value::Null => 1,
            Value::Bool(_) => 1,
            Value::Int64(_) | Value::Float64(_) => 8,
            Value::Float32(_) | Value::Date(_) => 4,
            Value::Numeric(_) | Value::Timestamp(_) => 12,
            Value::Uuid(_) => 16,
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::Json(j) => j.to_string().len(),
            Value::Array(items) | Value::Struct(items) => {
                items.iter().map(Value::approx_size).sum::<usize>() + 1
            }
        }
    }
}

impl Value {
    /// A GoogleSQL expression that evaluates to this value (see the module
    /// docs). Timestamps print in UTC so the literal does not depend on the
    /// reader's default zone.
    pub fn sql_literal(&self) -> String {
        match self {
            Value::Null => "NULL".into(),
            Value::Bool(true) => "TRUE".into(),
            Value::Bool(false) => "FALSE".into(),
            Value::Int64(v) => v.to_string(),
            Value::Float64(v) if !v.is_finite() => {
                format!("CAST(\"{}\" AS FLOAT64)", format_f64(*v))
            }
            Value::Float64(v) => {
                let text = format_f64(*v);
                if text.contains(['.', 'e']) {
                    text
                } else {
                    format!("{text}.0")
                }
            }
            Value::Float32(v) => format!("CAST(\"{}\" AS FLOAT32)", format_f32(*v)),
            Value::Numeric(n) => format!("NUMERIC \"{n}\""),
            Value::String(s) => quote(s.as_bytes(), false),
            Value::Bytes(b) => quote(b, true),
            Value::Date(d) => format!("DATE \"{d}\""),
            Value::Timestamp(t) => format!("TIMESTAMP \"{}\"", t.format_sql(&TimeZone::UTC)),
            Value::Json(j) => format!("JSON {}", quote(j.to_string().as_bytes(), false)),
            Value::Uuid(u) => format!("CAST(\"{u}\" AS UUID)"),
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(Value::sql_literal).collect();
                format!("[{}]", items.join(", "))
            }
            Value::Struct(fields) => {
                let fields: Vec<String> = fields.iter().map(Value::sql_literal).collect();
                format!("STRUCT({})", fields.join(", "))
            }
        }
    }
}

/// A GoogleSQL string (or, with `bytes`, bytes) literal. Double quotes unless
/// the text contains a double quote and no single quote, as GoogleSQL's own
/// printer does; control characters (and, for bytes, non-ASCII) as `\xHH`.
fn quote(raw: &[u8], bytes: bool) -> String {
    let q = if raw.contains(&b'"') && !raw.contains(&b'\'') {
        '\''
    } else {
        '"'
    };
    let mut out = String::new();
    if bytes {
        out.push('b');
    }
    out.push(q);
    let text = String::from_utf8_lossy(raw);
    let push_char = |c: char, out: &mut String| match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c == q => {
            out.push('\\');
            out.push(c);
        }
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push(c),
    };
    if bytes {
        for &b in raw {
            if b >= 0x80 {
                out.push_str(&format!("\\x{b:02x}"));
            } else {
                push_char(b as char, &mut out);
            }
        }
    } else {
        for c in text.chars() {
            push_char(c, &mut out);
        }
    }
    out.push(q);
    out
}

impl fmt::Display for Value {
    /// GoogleSQL's `CAST(value AS STRING)` form (see the module docs); arrays
    /// and structs, which have no such cast, print their elements as
    /// literals: `[1, "a"]`, `(1, "a")`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int64(v) => write!(f, "{v}"),
            Value::Float64(v) => f.write_str(&format_f64(*v)),
            Value::Float32(v) => f.write_str(&format_f32(*v)),
            Value::Numeric(n) => write!(f, "{n}"),
            Value::String(s) => f.write_str(s),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Date(d) => write!(f, "{d}"),
            Value::Timestamp(t) => f.write_str(&t.format_sql(&TimeZone::LOS_ANGELES)),
            Value::Json(j) => write!(f, "{j}"),
            Value::Uuid(u) => write!(f, "{u}"),
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(Value::sql_literal).collect();
                write!(f, "[{}]", items.join(", "))
            }
            Value::Struct(fields) => {
                let fields: Vec<String> = fields.iter().map(Value::sql_literal).collect();
                write!(f, "({})", fields.join(", "))
            }
        }
    }
}

impl From<Date> for Value {
    fn from(d: Date) -> Value {
        Value::Date(d)
    }
}

impl From<Timestamp> for Value {
    fn from(t: Timestamp) -> Value {
        Value::Timestamp(t)
    }
}

impl From<Numeric> for Value {
    fn from(n: Numeric) -> Value {
        Value::Numeric(n)
    }
}

impl From<Uuid> for Value {
    fn from(u: Uuid) -> Value {
        Value::Uuid(u)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int64(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Float64(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::String(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::String(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(Value::Null.sql_literal(), "NULL");
        assert_eq!(Value::Float64(1.0).sql_literal(), "1.0");
        assert_eq!(
            Value::Float64(f64::NAN).sql_literal(),
            "CAST(\"nan\" AS FLOAT64)"
        );
        assert_eq!(Value::from("it's").sql_literal(), "\"it's\"");
        assert_eq!(Value::from("say \"hi\"").sql_literal(), "'say \"hi\"'");
        assert_eq!(Value::from("a\nb\\").sql_literal(), "\"a\\nb\\\\\"");
        assert_eq!(
            Value::Bytes(vec![0, b'a', 0xff]).sql_literal(),
            "b\"\\x00a\\xff\""
        );
        assert_eq!(
            Value::Numeric(Numeric::parse("1.5").unwrap()).sql_literal(),
            "NUMERIC \"1.5\""
        );
        let ts = Timestamp::parse("2016-01-25T15:10:10.5Z", &TimeZone::UTC).unwrap();
        assert_eq!(
            Value::from(ts).sql_literal(),
            "TIMESTAMP \"2016-01-25 15:10:10.500+00\""
        );
        assert_eq!(
            Value::Array(vec![Value::Int64(1), Value::Null]).sql_literal(),
            "[1, NULL]"
        );
        let u = Uuid::from_u128(0xab);
        assert_eq!(
            Value::from(u).sql_literal(),
            "CAST(\"00000000-0000-0000-0000-0000000000ab\" AS UUID)"
        );
        assert_eq!(
            Value::from(u).to_string(),
            "00000000-0000-0000-0000-0000000000ab"
        );
    }

    #[test]
    fn display_is_cast_to_string() {
        assert_eq!(Value::Bool(true).to_string(), "true");
        assert_eq!(Value::Float64(1e20).to_string(), "1e+20");
        assert_eq!(Value::from("raw 'text'").to_string(), "raw 'text'");
        let ts = Timestamp::parse("2016-01-25 10:10:10.555555-05:00", &TimeZone::UTC).unwrap();
        assert_eq!(Value::from(ts).to_string(), "2016-01-25 07:10:10.555555-08");
        assert_eq!(
            Value::Date(Date::parse("2024-02-29").unwrap()).to_string(),
            "2024-02-29"
        );
    }
}
