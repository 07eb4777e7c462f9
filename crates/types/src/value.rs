//! Runtime values.

use crate::{Date, Numeric, Timestamp, Type};

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
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::Json(j) => j.to_string().len(),
            Value::Array(items) | Value::Struct(items) => {
                items.iter().map(Value::approx_size).sum::<usize>() + 1
            }
        }
    }
}
