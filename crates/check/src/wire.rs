//! Spanner's wire format for values, key sets and mutations.
//!
//! Over gRPC every value travels as a `google.protobuf.Value` whose kind
//! depends on the column type, not on the value: INT64, NUMERIC, DATE,
//! TIMESTAMP, JSON and STRING are JSON strings (`"42"`), BYTES is a base64
//! string, FLOAT64 is a number except NaN and the infinities (the strings
//! `"NaN"`, `"Infinity"`, `"-Infinity"`), BOOL is a bool, ARRAY and STRUCT
//! are lists, and NULL of any type is the null kind. So decoding needs the
//! type ([`decode`] takes the column's [`Type`]), and encoding a parameter
//! sends its type beside it ([`Value::type_of`]).
//!
//! [`Value`] is the decoded form the checks compare; [`KeySet`] and the
//! mutation builders ([`insert`], [`insert_or_update`], [`update`],
//! [`replace`], [`delete`]) produce the request messages.

use base64::Engine as _;
use prost_types::value::Kind;

use crate::error::{Error, Result};
use crate::proto::pb;

/// A GoogleSQL value, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// NULL of any type.
    Null,
    /// BOOL.
    Bool(bool),
    /// INT64.
    Int64(i64),
    /// FLOAT64 (and FLOAT32, widened).
    Float64(f64),
    /// STRING.
    String(String),
    /// BYTES, decoded from base64.
    Bytes(Vec<u8>),
    /// TIMESTAMP, as the RFC 3339 text the server sent.
    Timestamp(String),
    /// DATE, as `YYYY-MM-DD`.
    Date(String),
    /// NUMERIC, as its decimal text.
    Numeric(String),
    /// JSON, as its text.
    Json(String),
    /// ARRAY.
    Array(Vec<Value>),
    /// STRUCT, its fields in order.
    Struct(Vec<Value>),
}

impl Value {
    /// The INT64, if it is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int64(i) => Some(*i),
            _ => None,
        }
    }

    /// The text of a STRING (or of a TIMESTAMP, DATE, NUMERIC, JSON).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s)
            | Value::Timestamp(s)
            | Value::Date(s)
            | Value::Numeric(s)
            | Value::Json(s) => Some(s),
            _ => None,
        }
    }

    /// Whether it is NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type a parameter holding this value is declared with; `None`
    /// for NULL (an untyped parameter) and for an empty array.
    pub fn type_of(&self) -> Option<Type> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => Type::Bool,
            Value::Int64(_) => Type::Int64,
            Value::Float64(_) => Type::Float64,
            Value::String(_) => Type::String,
            Value::Bytes(_) => Type::Bytes,
            Value::Timestamp(_) => Type::Timestamp,
            Value::Date(_) => Type::Date,
            Value::Numeric(_) => Type::Numeric,
            Value::Json(_) => Type::Json,
            Value::Array(items) => Type::Array(Box::new(items.iter().find_map(Value::type_of)?)),
            Value::Struct(_) => return None,
        })
    }

    /// The wire form.
    pub fn encode(&self) -> prost_types::Value {
        let kind = match self {
            Value::Null => Kind::NullValue(0),
            Value::Bool(b) => Kind::BoolValue(*b),
            Value::Int64(i) => Kind::StringValue(i.to_string()),
            Value::Float64(f) if f.is_nan() => Kind::StringValue("NaN".into()),
            Value::Float64(f) if f.is_infinite() => {
                Kind::StringValue(if *f > 0.0 { "Infinity" } else { "-Infinity" }.into())
            }
            Value::Float64(f) => Kind::NumberValue(*f),
            Value::Bytes(b) => {
                Kind::StringValue(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::String(s)
            | Value::Timestamp(s)
            | Value::Date(s)
            | Value::Numeric(s)
            | Value::Json(s) => Kind::StringValue(s.clone()),
            Value::Array(items) | Value::Struct(items) => Kind::ListValue(list(items)),
        };
        prost_types::Value { kind: Some(kind) }
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int64(i)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float64(f)
    }
}

/// A column or parameter type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// BOOL.
    Bool,
    /// INT64.
    Int64,
    /// FLOAT64.
    Float64,
    /// FLOAT32.
    Float32,
    /// STRING.
    String,
    /// BYTES.
    Bytes,
    /// TIMESTAMP.
    Timestamp,
    /// DATE.
    Date,
    /// NUMERIC.
    Numeric,
    /// JSON.
    Json,
    /// ARRAY of the element type.
    Array(Box<Type>),
    /// STRUCT with named fields.
    Struct(Vec<(String, Type)>),
    /// Any other type code (PROTO, ENUM, INTERVAL, UUID): decoded as text.
    Other(i32),
}

impl Type {
    /// From the API's type message.
    pub fn from_pb(t: &pb::Type) -> Type {
        use pb::TypeCode as C;
        match C::try_from(t.code) {
            Ok(C::Bool) => Type::Bool,
            Ok(C::Int64) => Type::Int64,
            Ok(C::Float64) => Type::Float64,
            Ok(C::Float32) => Type::Float32,
            Ok(C::String) => Type::String,
            Ok(C::Bytes) => Type::Bytes,
            Ok(C::Timestamp) => Type::Timestamp,
            Ok(C::Date) => Type::Date,
            Ok(C::Numeric) => Type::Numeric,
            Ok(C::Json) => Type::Json,
            Ok(C::Array) => Type::Array(Box::new(
                t.array_element_type
                    .as_deref()
                    .map_or(Type::Other(0), Type::from_pb),
            )),
            Ok(C::Struct) => Type::Struct(fields(t.struct_type.as_ref())),
            _ => Type::Other(t.code),
        }
    }

    /// To the API's type message.
    pub fn to_pb(&self) -> pb::Type {
        use pb::TypeCode as C;
        let code = |c: C| pb::Type {
            code: c as i32,
            ..Default::default()
        };
        match self {
            Type::Bool => code(C::Bool),
            Type::Int64 => code(C::Int64),
            Type::Float64 => code(C::Float64),
            Type::Float32 => code(C::Float32),
            Type::String => code(C::String),
            Type::Bytes => code(C::Bytes),
            Type::Timestamp => code(C::Timestamp),
            Type::Date => code(C::Date),
            Type::Numeric => code(C::Numeric),
            Type::Json => code(C::Json),
            Type::Array(element) => pb::Type {
                array_element_type: Some(Box::new(element.to_pb())),
                ..code(C::Array)
            },
            Type::Struct(fields) => pb::Type {
                struct_type: Some(pb::StructType {
                    fields: fields
                        .iter()
                        .map(|(name, t)| pb::struct_type::Field {
                            name: name.clone(),
                            r#type: Some(t.to_pb()),
                        })
                        .collect(),
                }),
                ..code(C::Struct)
            },
            Type::Other(c) => pb::Type {
                code: *c,
                ..Default::default()
            },
        }
    }
}

/// The named fields of a struct type (a result's row type).
pub fn fields(t: Option<&pb::StructType>) -> Vec<(String, Type)> {
    t.map(|s| {
        s.fields
            .iter()
            .map(|f| {
                (
                    f.name.clone(),
                    f.r#type.as_ref().map_or(Type::Other(0), Type::from_pb),
                )
            })
            .collect()
    })
    .unwrap_or_default()
}

/// Decodes a wire value of type `t`.
pub fn decode(t: &Type, v: &prost_types::Value) -> Result<Value> {
    let bad = || Error::Protocol(format!("a {t:?} value encoded as {v:?}"));
    let kind = match &v.kind {
        None | Some(Kind::NullValue(_)) => return Ok(Value::Null),
        Some(k) => k,
    };
    Ok(match (t, kind) {
        (Type::Bool, Kind::BoolValue(b)) => Value::Bool(*b),
        (Type::Int64, Kind::StringValue(s)) => Value::Int64(s.parse().map_err(|_| bad())?),
        (Type::Float64 | Type::Float32, Kind::NumberValue(n)) => Value::Float64(*n),
        (Type::Float64 | Type::Float32, Kind::StringValue(s)) => Value::Float64(match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            _ => return Err(bad()),
        }),
        (Type::String | Type::Other(_), Kind::StringValue(s)) => Value::String(s.clone()),
        (Type::Bytes, Kind::StringValue(s)) => Value::Bytes(
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| bad())?,
        ),
        (Type::Timestamp, Kind::StringValue(s)) => Value::Timestamp(s.clone()),
        (Type::Date, Kind::StringValue(s)) => Value::Date(s.clone()),
        (Type::Numeric, Kind::StringValue(s)) => Value::Numeric(s.clone()),
        (Type::Json, Kind::StringValue(s)) => Value::Json(s.clone()),
        (Type::Array(element), Kind::ListValue(l)) => Value::Array(
            l.values
                .iter()
                .map(|v| decode(element, v))
                .collect::<Result<_>>()?,
        ),
        (Type::Struct(fields), Kind::ListValue(l)) if fields.len() == l.values.len() => {
            Value::Struct(
                fields
                    .iter()
                    .zip(&l.values)
                    .map(|((_, t), v)| decode(t, v))
                    .collect::<Result<_>>()?,
            )
        }
        _ => return Err(bad()),
    })
}

/// Values as a wire list (a row, a key).
pub fn list(values: &[Value]) -> prost_types::ListValue {
    prost_types::ListValue {
        values: values.iter().map(Value::encode).collect(),
    }
}

/// Which rows a Read or a delete touches, by primary key (or index key
/// when reading through an index).
#[derive(Debug, Clone, PartialEq)]
pub enum KeySet {
    /// Every row.
    All,
    /// These keys, each a list of key column values.
    Keys(Vec<Vec<Value>>),
    /// Keys from `start` to `end`; a bound is a key prefix.
    Range {
        /// Lower bound.
        start: Vec<Value>,
        /// Whether `start` itself is included.
        start_closed: bool,
        /// Upper bound.
        end: Vec<Value>,
        /// Whether `end` itself is included.
        end_closed: bool,
    },
}

impl KeySet {
    /// One key.
    pub fn key(key: Vec<Value>) -> KeySet {
        KeySet::Keys(vec![key])
    }

    /// `[start, end]`, both included.
    pub fn closed(start: Vec<Value>, end: Vec<Value>) -> KeySet {
        KeySet::Range {
            start,
            start_closed: true,
            end,
            end_closed: true,
        }
    }

    /// The wire form.
    pub fn to_pb(&self) -> pb::KeySet {
        use pb::key_range::{EndKeyType, StartKeyType};
        match self {
            KeySet::All => pb::KeySet {
                all: true,
                ..Default::default()
            },
            KeySet::Keys(keys) => pb::KeySet {
                keys: keys.iter().map(|k| list(k)).collect(),
                ..Default::default()
            },
            KeySet::Range {
                start,
                start_closed,
                end,
                end_closed,
            } => pb::KeySet {
                ranges: vec![pb::KeyRange {
                    start_key_type: Some(if *start_closed {
                        StartKeyType::StartClosed(list(start))
                    } else {
                        StartKeyType::StartOpen(list(start))
                    }),
                    end_key_type: Some(if *end_closed {
                        EndKeyType::EndClosed(list(end))
                    } else {
                        EndKeyType::EndOpen(list(end))
                    }),
                }],
                ..Default::default()
            },
        }
    }
}

fn write(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> pb::mutation::Write {
    pb::mutation::Write {
        table: table.to_string(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        values: rows.iter().map(|r| list(r)).collect(),
    }
}

/// An INSERT mutation (fails with ALREADY_EXISTS if a row exists).
pub fn insert(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> pb::Mutation {
    pb::Mutation {
        operation: Some(pb::mutation::Operation::Insert(write(table, columns, rows))),
    }
}

/// An INSERT OR UPDATE mutation.
pub fn insert_or_update(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> pb::Mutation {
    pb::Mutation {
        operation: Some(pb::mutation::Operation::InsertOrUpdate(write(
            table, columns, rows,
        ))),
    }
}

/// An UPDATE mutation (fails with NOT_FOUND if a row is missing).
pub fn update(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> pb::Mutation {
    pb::Mutation {
        operation: Some(pb::mutation::Operation::Update(write(table, columns, rows))),
    }
}

/// A REPLACE mutation (unnamed columns become NULL).
pub fn replace(table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> pb::Mutation {
    pb::Mutation {
        operation: Some(pb::mutation::Operation::Replace(write(
            table, columns, rows,
        ))),
    }
}

/// A DELETE mutation.
pub fn delete(table: &str, keys: &KeySet) -> pb::Mutation {
    pb::Mutation {
        operation: Some(pb::mutation::Operation::Delete(pb::mutation::Delete {
            table: table.to_string(),
            key_set: Some(keys.to_pb()),
        })),
    }
}

/// Joins a chunked value with the next message's first value, as
/// `PartialResultSet.chunked_value` asks: strings concatenate, lists
/// concatenate with their boundary elements merged the same way.
pub fn merge_chunks(a: prost_types::Value, b: prost_types::Value) -> Result<prost_types::Value> {
    let kind = match (a.kind, b.kind) {
        (Some(Kind::StringValue(mut x)), Some(Kind::StringValue(y))) => {
            x.push_str(&y);
            Kind::StringValue(x)
        }
        (Some(Kind::ListValue(mut x)), Some(Kind::ListValue(y))) => {
            let mut rest = y.values.into_iter();
            match (x.values.pop(), rest.next()) {
                (Some(last), Some(first)) if chunkable(&last) && chunkable(&first) => {
                    x.values.push(merge_chunks(last, first)?)
                }
                (last, first) => x.values.extend(last.into_iter().chain(first)),
            }
            x.values.extend(rest);
            Kind::ListValue(x)
        }
        (x, y) => {
            return Err(Error::Protocol(format!(
                "cannot merge chunks {x:?} and {y:?}"
            )))
        }
    };
    Ok(prost_types::Value { kind: Some(kind) })
}

fn chunkable(v: &prost_types::Value) -> bool {
    matches!(v.kind, Some(Kind::StringValue(_) | Kind::ListValue(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_the_wire() {
        let cases = [
            (Type::Int64, Value::Int64(-42)),
            (Type::Float64, Value::Float64(1.5)),
            (Type::Float64, Value::Float64(f64::INFINITY)),
            (Type::Bytes, Value::Bytes(vec![0, 255, 7])),
            (Type::String, Value::String("é".into())),
            (Type::Bool, Value::Bool(true)),
            (
                Type::Array(Box::new(Type::Int64)),
                Value::Array(vec![Value::Int64(1), Value::Null]),
            ),
            (Type::Date, Value::Null),
        ];
        for (t, v) in cases {
            assert_eq!(decode(&t, &v.encode()).unwrap(), v);
        }
        assert_eq!(
            Value::Int64(7).encode().kind,
            Some(Kind::StringValue("7".into()))
        );
    }

    #[test]
    fn chunks_merge() {
        let s = |t: &str| Value::String(t.into()).encode();
        let l = |v: Vec<prost_types::Value>| prost_types::Value {
            kind: Some(Kind::ListValue(prost_types::ListValue { values: v })),
        };
        assert_eq!(merge_chunks(s("ab"), s("cd")).unwrap(), s("abcd"));
        assert_eq!(
            merge_chunks(l(vec![s("a"), s("b")]), l(vec![s("c"), s("d")])).unwrap(),
            l(vec![s("a"), s("bc"), s("d")])
        );
        let b = Value::Bool(true).encode();
        assert_eq!(
            merge_chunks(l(vec![b.clone()]), l(vec![b.clone()])).unwrap(),
            l(vec![b.clone(), b])
        );
    }
}
