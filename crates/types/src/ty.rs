//! GoogleSQL data types.

use std::fmt;

/// A GoogleSQL data type, without column-level details such as a `STRING`
/// length limit (those belong to the schema's column definition).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    Bool,
    Int64,
    Float32,
    Float64,
    Numeric,
    String,
    Bytes,
    Date,
    Timestamp,
    Json,
    /// A 128-bit universally unique identifier ([`crate::Uuid`]).
    Uuid,
    /// `ARRAY<T>`; arrays of arrays do not exist in GoogleSQL.
    Array(Box<Type>),
    /// `STRUCT<name T, ...>`; field names may be empty (anonymous fields).
    Struct(Vec<(String, Type)>),
    /// A protocol buffer message of the proto bundle, by its fully
    /// qualified name; its values are the message's serialized bytes
    /// ([`crate::Value::Bytes`]).
    Proto(String),
    /// A protocol buffer enum of the proto bundle, by its fully qualified
    /// name; its values are the enum value's number ([`crate::Value::Int64`]).
    Enum(String),
}

impl Type {
    /// Whether a column of this type may be part of a primary or index key.
    /// Spanner refuses `JSON`, `ARRAY` and `STRUCT` key columns.
    /// PROTO columns cannot be keys either; ENUM columns can (they sort by
    /// number).
    pub fn is_key_type(&self) -> bool {
        !matches!(
            self,
            Type::Json | Type::Array(_) | Type::Struct(_) | Type::Proto(_)
        )
    }

    /// Whether values of this type can be compared with `<` and sorted.
    pub fn is_orderable(&self) -> bool {
        !matches!(
            self,
            Type::Json | Type::Array(_) | Type::Struct(_) | Type::Proto(_)
        )
    }

    /// The type its values are stored and computed as: BYTES for a PROTO,
    /// INT64 for an ENUM, arrays of them alike; other types unchanged.
    pub fn representation(&self) -> Type {
        match self {
            Type::Proto(_) => Type::Bytes,
            Type::Enum(_) => Type::Int64,
            Type::Array(t) => Type::Array(Box::new(t.representation())),
            t => t.clone(),
        }
    }
}

impl fmt::Display for Type {
    /// The GoogleSQL spelling: `INT64`, `ARRAY<STRING>`, `STRUCT<a INT64>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => f.write_str("BOOL"),
            Type::Int64 => f.write_str("INT64"),
            Type::Float32 => f.write_str("FLOAT32"),
            Type::Float64 => f.write_str("FLOAT64"),
            Type::Numeric => f.write_str("NUMERIC"),
            Type::String => f.write_str("STRING"),
            Type::Bytes => f.write_str("BYTES"),
            Type::Date => f.write_str("DATE"),
            Type::Timestamp => f.write_str("TIMESTAMP"),
            Type::Json => f.write_str("JSON"),
            Type::Uuid => f.write_str("UUID"),
            Type::Array(t) => write!(f, "ARRAY<{t}>"),
            Type::Proto(name) | Type::Enum(name) => f.write_str(name),
            Type::Struct(fields) => {
                f.write_str("STRUCT<")?;
                for (i, (name, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if name.is_empty() {
                        write!(f, "{t}")?;
                    } else {
                        write!(f, "{name} {t}")?;
                    }
                }
                f.write_str(">")
            }
        }
    }
}
