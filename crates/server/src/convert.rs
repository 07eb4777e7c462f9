//! Conversions between Spanner's wire format and Rowtree's types.
//!
//! Spanner's gRPC API does not carry typed values. Every cell, key part and
//! query parameter travels as a `google.protobuf.Value` (JSON's data model:
//! null, bool, number, string, list, struct), and its GoogleSQL type travels
//! separately as a `google.spanner.v1.Type`: in a result set's
//! [`ResultSetMetadata`](pb::ResultSetMetadata), in `param_types`, or implied
//! by the schema for mutations and key sets. The reader needs both to decode a
//! value.
//!
//! # The encoding
//!
//! | GoogleSQL type | wire kind | example |
//! |---|---|---|
//! | any type, `NULL` | `null_value` | `null` |
//! | `BOOL` | `bool_value` | `true` |
//! | `INT64` | `string_value`, decimal (a double would lose digits past 2^53) | `"9007199254740993"` |
//! | `FLOAT64`, `FLOAT32` | `number_value`, or the strings `"NaN"`, `"Infinity"`, `"-Infinity"` | `1.5`, `"NaN"` |
//! | `NUMERIC` | `string_value`, decimal or scientific notation | `"-1.5"`, `"1e-9"` |
//! | `STRING` | `string_value` | `"héllo"` |
//! | `BYTES` | `string_value`, base64 (RFC 4648 §4, standard alphabet) | `"aGk="` |
//! | `DATE` | `string_value`, `YYYY-MM-DD` | `"2024-02-29"` |
//! | `TIMESTAMP` | `string_value`, RFC 3339 | `"2016-01-25T15:10:10.555555Z"` |
//! | `JSON` | `string_value`, the JSON text | `"{\"a\":1}"` |
//! | `ARRAY<T>` | `list_value` of `T`s (elements may be `null`) | `["1", null]` |
//! | `STRUCT<a T, b U>` | `list_value` of the fields in order, names only in the type | `["1", "x"]` |
//!
//! # What Rowtree sends
//!
//! [`value_to_proto`] writes the canonical forms Spanner writes: INT64 and
//! NUMERIC in plain decimal (NUMERIC without trailing zeros, `"1.5"`),
//! TIMESTAMP in UTC with `Z` and only the fractional digits it needs
//! (`...:10Z`, `...:10.5Z`, up to nine digits), JSON compact with sorted
//! keys, FLOAT32 widened to a double.
//!
//! # What Rowtree accepts
//!
//! [`value_from_proto`] is as strict as Spanner about the *kind* of each
//! value (an INT64 is never a `bool_value`, a STRING never a `number_value`)
//! with a few leniencies clients rely on:
//!
//! * INT64 also accepts an integral `number_value` in range (`3.0`, not
//!   `3.5` or `1e19`).
//! * TIMESTAMP accepts any RFC 3339 offset (`-05:00`, not only `Z`), and the
//!   placeholder `"spanner.commit_timestamp()"`, decoded as
//!   [`Timestamp::PENDING_COMMIT`]; the database replaces it with the commit
//!   timestamp when writing a column with `allow_commit_timestamp = true`
//!   (and refuses it elsewhere).
//! * BYTES accepts base64 with or without `=` padding.
//! * NUMERIC rounds digits past the ninth decimal half away from zero, as
//!   GoogleSQL's NUMERIC conversion does; more than 29 integer digits is an
//!   error.
//! * FLOAT32 accepts any double that rounds to a finite float (`1e39` is an
//!   error).
//! * JSON is parsed with Spanner's rules ([`rowtree_types::parse_json`]: the
//!   first of duplicate keys wins, numbers must round-trip).
//!
//! # Errors
//!
//! A malformed value is `INVALID_ARGUMENT` naming what it was for and the
//! type expected: `Invalid value for column Age in table Singers: Could not
//! parse "abc" as INT64`, `Invalid value for bind parameter id: ...`. Missing
//! tables, indexes and columns are `NOT_FOUND` with the emulator's wording
//! (`Table not found: T`, `Index not found on table T: I`, `Column not found
//! in table T: c`). Types Rowtree does not implement (PROTO, ENUM, INTERVAL,
//! UUID, the PostgreSQL annotations) are `UNIMPLEMENTED`, as are queue
//! mutations (`send`, `ack`).
//!
//! # Keys
//!
//! A key is a `ListValue` of the key columns' values in key order
//! ([`key_types`] lists those types for a table or an index read). Point
//! keys in a key set must name every key column; the bounds of a
//! [`KeyRange`] may be prefixes, and every range needs both a start and an
//! end (`start_closed: []` / `end_closed: []` spans everything).

use std::collections::HashMap;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use googleapis_tonic_google_spanner_v1::google::spanner::v1 as pb;
use pb::key_range::{EndKeyType, StartKeyType};
use pb::mutation::Operation;
use pb::struct_type::Field;
use pb::{TypeAnnotationCode, TypeCode};
use prost_types::value::Kind;
use prost_types::{ListValue, NullValue, Struct};
use rowtree_db::{Bound, KeyRange, KeySet, Mutation, WriteKind};
use rowtree_schema::{Catalog, Table};
use rowtree_types::{parse_json, Date, Numeric, TimeZone, Timestamp, Type, Value};
use tonic::Status;

/// The TIMESTAMP placeholder a client writes to store the commit timestamp.
pub const COMMIT_TIMESTAMP_PLACEHOLDER: &str = "spanner.commit_timestamp()";

/// Standard base64 alphabet; padding optional on input, always written.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

const NANOS_PER_SECOND: i128 = 1_000_000_000;

fn invalid(message: impl Into<String>) -> Status {
    Status::invalid_argument(message)
}

// ---------------------------------------------------------------------------
// Types

/// The wire type of a GoogleSQL type.
pub fn type_to_proto(t: &Type) -> pb::Type {
    let code = match t {
        Type::Bool => TypeCode::Bool,
        Type::Int64 => TypeCode::Int64,
        Type::Float32 => TypeCode::Float32,
        Type::Float64 => TypeCode::Float64,
        Type::Numeric => TypeCode::Numeric,
        Type::String => TypeCode::String,
        Type::Bytes => TypeCode::Bytes,
        Type::Date => TypeCode::Date,
        Type::Timestamp => TypeCode::Timestamp,
        Type::Json => TypeCode::Json,
        Type::Array(_) => TypeCode::Array,
        Type::Struct(_) => TypeCode::Struct,
    };
    let mut out = pb::Type {
        code: code as i32,
        ..Default::default()
    };
    match t {
        Type::Array(element) => out.array_element_type = Some(Box::new(type_to_proto(element))),
        Type::Struct(fields) => out.struct_type = Some(struct_type(fields)),
        _ => {}
    }
    out
}

/// A `StructType` with named fields (row types, struct types).
fn struct_type(fields: &[(String, Type)]) -> pb::StructType {
    pb::StructType {
        fields: fields
            .iter()
            .map(|(name, t)| Field {
                name: name.clone(),
                r#type: Some(type_to_proto(t)),
            })
            .collect(),
    }
}

/// The GoogleSQL type of a wire type. `TYPE_CODE_UNSPECIFIED`, unknown codes
/// and incomplete ARRAY/STRUCT types are `INVALID_ARGUMENT`; types Rowtree
/// does not implement (PROTO, ENUM, INTERVAL, UUID, PostgreSQL annotations)
/// are `UNIMPLEMENTED`.
pub fn type_from_proto(t: &pb::Type) -> Result<Type, Status> {
    match TypeAnnotationCode::try_from(t.type_annotation) {
        Ok(TypeAnnotationCode::Unspecified) => {}
        Ok(annotation) => {
            return Err(Status::unimplemented(format!(
                "Unsupported type annotation {}: Rowtree serves GoogleSQL-dialect databases only",
                annotation.as_str_name()
            )))
        }
        Err(_) => {
            return Err(invalid(format!(
                "Unknown type annotation code {}",
                t.type_annotation
            )))
        }
    }
    let code =
        TypeCode::try_from(t.code).map_err(|_| invalid(format!("Unknown type code {}", t.code)))?;
    Ok(match code {
        TypeCode::Unspecified => {
            return Err(invalid(
                "Type code must be specified, found TYPE_CODE_UNSPECIFIED",
            ))
        }
        TypeCode::Bool => Type::Bool,
        TypeCode::Int64 => Type::Int64,
        TypeCode::Float64 => Type::Float64,
        TypeCode::Float32 => Type::Float32,
        TypeCode::Timestamp => Type::Timestamp,
        TypeCode::Date => Type::Date,
        TypeCode::String => Type::String,
        TypeCode::Bytes => Type::Bytes,
        TypeCode::Numeric => Type::Numeric,
        TypeCode::Json => Type::Json,
        TypeCode::Array => {
            let element = t
                .array_element_type
                .as_deref()
                .ok_or_else(|| invalid("Array types must specify element type"))?;
            let element = type_from_proto(element)?;
            if matches!(element, Type::Array(_)) {
                return Err(invalid(
                    "Unsupported type ARRAY<ARRAY<...>>: arrays of arrays do not exist in GoogleSQL",
                ));
            }
            Type::Array(Box::new(element))
        }
        TypeCode::Struct => {
            let st = t
                .struct_type
                .as_ref()
                .ok_or_else(|| invalid("Struct types must specify struct_type"))?;
            let fields = st
                .fields
                .iter()
                .map(|f| {
                    let ft = f.r#type.as_ref().ok_or_else(|| {
                        invalid(format!("Struct field '{}' must specify a type", f.name))
                    })?;
                    Ok((f.name.clone(), type_from_proto(ft)?))
                })
                .collect::<Result<Vec<_>, Status>>()?;
            Type::Struct(fields)
        }
        TypeCode::Proto | TypeCode::Enum | TypeCode::Interval | TypeCode::Uuid => {
            return Err(Status::unimplemented(format!(
                "Unsupported type: {}",
                code.as_str_name()
            )))
        }
    })
}

// ---------------------------------------------------------------------------
// Values

fn kind(kind: Kind) -> prost_types::Value {
    prost_types::Value { kind: Some(kind) }
}

fn null() -> prost_types::Value {
    kind(Kind::NullValue(NullValue::NullValue as i32))
}

fn float_kind(f: f64) -> Kind {
    if f.is_nan() {
        Kind::StringValue("NaN".into())
    } else if f.is_infinite() {
        Kind::StringValue(if f > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Kind::NumberValue(f)
    }
}

/// The wire form of a value of type `t` (see the module docs). `t` supplies
/// the element and field types of arrays and structs; an INT64 value under a
/// FLOAT64/FLOAT32 type is written as a number.
pub fn value_to_proto(v: &Value, t: &Type) -> prost_types::Value {
    kind(match v {
        Value::Null => return null(),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Int64(i) if matches!(t, Type::Float64 | Type::Float32) => {
            Kind::NumberValue(*i as f64)
        }
        Value::Int64(i) => Kind::StringValue(i.to_string()),
        Value::Float32(f) => float_kind(*f as f64),
        Value::Float64(f) => float_kind(*f),
        Value::Numeric(n) => Kind::StringValue(n.to_string()),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Bytes(b) => Kind::StringValue(BASE64.encode(b)),
        Value::Date(d) => Kind::StringValue(d.to_string()),
        Value::Timestamp(ts) => Kind::StringValue(ts.to_rfc3339()),
        Value::Json(j) => Kind::StringValue(j.to_string()),
        Value::Array(items) => {
            let element = match t {
                Type::Array(e) => e.as_ref(),
                other => other,
            };
            Kind::ListValue(ListValue {
                values: items.iter().map(|i| value_to_proto(i, element)).collect(),
            })
        }
        Value::Struct(fields) => {
            let types: &[(String, Type)] = match t {
                Type::Struct(f) => f,
                _ => &[],
            };
            Kind::ListValue(ListValue {
                values: fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| value_to_proto(f, types.get(i).map_or(&Type::String, |(_, t)| t)))
                    .collect(),
            })
        }
    })
}

/// Decodes a wire value of type `t` (see the module docs for what is
/// accepted). Errors are `INVALID_ARGUMENT`; the message names the value and
/// the type, and callers that know the column or parameter prefix it.
pub fn value_from_proto(v: &prost_types::Value, t: &Type) -> Result<Value, Status> {
    decode(v, t).map_err(invalid)
}

/// A short description of a wire value for error messages.
fn describe(v: &prost_types::Value) -> String {
    match &v.kind {
        None => "an empty google.protobuf.Value".into(),
        Some(Kind::NullValue(_)) => "NULL".into(),
        Some(Kind::BoolValue(b)) => b.to_string(),
        Some(Kind::NumberValue(n)) => n.to_string(),
        Some(Kind::StringValue(s)) => quote(s),
        Some(Kind::ListValue(l)) => describe_list(l),
        Some(Kind::StructValue(_)) => "a struct_value".into(),
    }
}

fn describe_list(l: &ListValue) -> String {
    let items: Vec<String> = l.values.iter().map(describe).collect();
    format!("[{}]", items.join(", "))
}

/// A string quoted for a message, cut after 64 characters.
fn quote(s: &str) -> String {
    if s.chars().count() > 64 {
        let cut: String = s.chars().take(64).collect();
        format!("{:?}...", cut)
    } else {
        format!("{s:?}")
    }
}

/// Whether `n` is an integer an `i64` holds exactly.
fn as_i64(n: f64) -> Option<i64> {
    // 2^63 is exactly representable; every double below it and >= -2^63
    // that has no fraction converts exactly.
    (n.fract() == 0.0 && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n))
        .then_some(n as i64)
}

fn special_float(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn decode(v: &prost_types::Value, t: &Type) -> Result<Value, String> {
    let Some(k) = &v.kind else {
        return Err(format!("Could not parse {} as {t}", describe(v)));
    };
    let mismatch = || format!("Could not parse {} as {t}", describe(v));
    match (t, k) {
        (_, Kind::NullValue(_)) => Ok(Value::Null),
        (Type::Bool, Kind::BoolValue(b)) => Ok(Value::Bool(*b)),
        (Type::Int64, Kind::StringValue(s)) => s
            .parse::<i64>()
            .map(Value::Int64)
            .map_err(|_| format!("Could not parse {} as INT64", quote(s))),
        (Type::Int64, Kind::NumberValue(n)) => as_i64(*n)
            .map(Value::Int64)
            .ok_or_else(|| format!("Could not parse {n} as INT64: not an integer in range")),
        (Type::Float64, Kind::NumberValue(n)) => Ok(Value::Float64(*n)),
        (Type::Float32, Kind::NumberValue(n)) => {
            let f = *n as f32;
            if f.is_infinite() && n.is_finite() {
                Err(format!("Could not parse {n} as FLOAT32: out of range"))
            } else {
                Ok(Value::Float32(f))
            }
        }
        (Type::Float64 | Type::Float32, Kind::StringValue(s)) => match special_float(s) {
            Some(f) if *t == Type::Float32 => Ok(Value::Float32(f as f32)),
            Some(f) => Ok(Value::Float64(f)),
            None => Err(format!(
                "Could not parse {} as {t}. Only the following string values are supported for {t}: 'Infinity', 'NaN', and '-Infinity'",
                quote(s)
            )),
        },
        (Type::Numeric, Kind::StringValue(s)) => Numeric::parse(s).map(Value::Numeric).map_err(|_| {
            format!(
                "Could not parse {} as NUMERIC. The NUMERIC type supports 38 digits of precision and 9 digits of scale",
                quote(s)
            )
        }),
        (Type::String, Kind::StringValue(s)) => Ok(Value::String(s.clone())),
        (Type::Bytes, Kind::StringValue(s)) => BASE64.decode(s).map(Value::Bytes).map_err(|_| {
            format!(
                "Could not parse {} as BYTES. Byte strings must be base64-encoded",
                quote(s)
            )
        }),
        (Type::Date, Kind::StringValue(s)) => Date::parse(s).map(Value::Date).map_err(|_| {
            format!(
                "Could not parse {} as DATE. Dates must be in the format YYYY-[M]M-[D]D and the year must be in the range [1, 9999]",
                quote(s)
            )
        }),
        (Type::Timestamp, Kind::StringValue(s)) => parse_wire_timestamp(s).map(Value::Timestamp),
        (Type::Json, Kind::StringValue(s)) => parse_json(s)
            .map(Value::Json)
            .map_err(|e| format!("Could not parse {} as JSON: {e}", quote(s))),
        (Type::Array(element), Kind::ListValue(l)) => l
            .values
            .iter()
            .enumerate()
            .map(|(i, item)| decode(item, element).map_err(|e| format!("{e} (array element {i})")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        (Type::Struct(fields), Kind::ListValue(l)) => {
            if l.values.len() != fields.len() {
                return Err(format!(
                    "Could not parse {} as {t}: expected {} fields, found {}",
                    describe(v),
                    fields.len(),
                    l.values.len()
                ));
            }
            l.values
                .iter()
                .zip(fields)
                .enumerate()
                .map(|(i, (item, (name, ft)))| {
                    decode(item, ft).map_err(|e| {
                        if name.is_empty() {
                            format!("{e} (struct field {i})")
                        } else {
                            format!("{e} (struct field {name})")
                        }
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Struct)
        }
        _ => Err(mismatch()),
    }
}

/// RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.F{1,9}](Z|±HH:MM)`), or the commit
/// timestamp placeholder.
fn parse_wire_timestamp(s: &str) -> Result<Timestamp, String> {
    if s == COMMIT_TIMESTAMP_PLACEHOLDER {
        return Ok(Timestamp::PENDING_COMMIT);
    }
    let bad = |why: &str| {
        format!(
            "Could not parse {} as TIMESTAMP: {why}. Timestamps must be RFC 3339 strings such as \"2016-01-25T15:10:10.555555Z\"",
            quote(s)
        )
    };
    if !is_rfc3339(s) {
        return Err(bad("not an RFC 3339 timestamp with a time zone"));
    }
    Timestamp::parse(s, &TimeZone::UTC).map_err(|e| bad(&e.to_string()))
}

/// The shape of RFC 3339; field ranges are left to [`Timestamp::parse`].
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |from: usize, to: usize| {
        b.get(from..to)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let shape = digits(0, 4)
        && at(4, b'-')
        && digits(5, 7)
        && at(7, b'-')
        && digits(8, 10)
        && (at(10, b'T') || at(10, b't'))
        && digits(11, 13)
        && at(13, b':')
        && digits(14, 16)
        && at(16, b':')
        && digits(17, 19);
    if !shape {
        return false;
    }
    let mut i = 19;
    if at(i, b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Result sets

/// A row's wire values, each encoded with its column's type.
pub fn row_to_proto(row: &[Value], columns: &[(String, Type)]) -> Vec<prost_types::Value> {
    row.iter()
        .enumerate()
        .map(|(i, v)| value_to_proto(v, columns.get(i).map_or(&Type::String, |(_, t)| t)))
        .collect()
}

/// Result set metadata with the row type of `columns`. `transaction` is left
/// `None` for the caller to fill in when the request began a transaction;
/// `undeclared_parameters` is `None`.
pub fn metadata(columns: &[(String, Type)]) -> pb::ResultSetMetadata {
    pb::ResultSetMetadata {
        row_type: Some(struct_type(columns)),
        transaction: None,
        undeclared_parameters: None,
    }
}

// ---------------------------------------------------------------------------
// Query parameters

/// Query parameters from `ExecuteSqlRequest.params` and `param_types`.
///
/// Names are stored without a leading `@` (clients send them without one).
/// A parameter with an entry in `types` (matched exactly, else ignoring case)
/// is decoded with that type. A parameter without one is *untyped*, which
/// Spanner allows; Spanner infers its type from the query, Rowtree from the
/// value's kind:
///
/// | wire kind | type |
/// |---|---|
/// | `string_value` | `STRING` |
/// | `bool_value` | `BOOL` |
/// | integral `number_value` within INT64 | `INT64` |
/// | other `number_value` | `FLOAT64` |
/// | `null_value` | `INT64` (a NULL of any type compares and assigns alike) |
/// | `list_value` | `ARRAY` of the elements' type (INT64 mixed with FLOAT64 is FLOAT64; all NULL or empty is `ARRAY<INT64>`) |
/// | `struct_value` | error: structs need a declared type |
///
/// Entries of `types` without a value are ignored.
pub fn params_from_proto(
    params: Option<&Struct>,
    types: &HashMap<String, pb::Type>,
) -> Result<rowtree_sql::Params, Status> {
    let mut out = rowtree_sql::Params::new();
    let Some(params) = params else {
        return Ok(out);
    };
    for (name, v) in &params.fields {
        let key = name.strip_prefix('@').unwrap_or(name);
        let declared = types.get(name).or_else(|| types.get(key)).or_else(|| {
            types
                .iter()
                .find(|(k, _)| k.strip_prefix('@').unwrap_or(k).eq_ignore_ascii_case(key))
                .map(|(_, t)| t)
        });
        let bad = |e: String| invalid(format!("Invalid value for bind parameter {key}: {e}"));
        let (ty, value) = match declared {
            Some(pt) => {
                let ty = type_from_proto(pt).map_err(|s| {
                    Status::new(
                        s.code(),
                        format!("Invalid type for bind parameter {key}: {}", s.message()),
                    )
                })?;
                let value = decode(v, &ty).map_err(bad)?;
                (ty, value)
            }
            None => infer_untyped(v).map_err(bad)?,
        };
        out.insert(key.to_string(), (ty, value));
    }
    Ok(out)
}

/// The type of an untyped scalar wire value; `None` for NULL.
fn untyped_scalar_type(v: &prost_types::Value) -> Result<Option<Type>, String> {
    Ok(Some(match &v.kind {
        Some(Kind::NullValue(_)) => return Ok(None),
        Some(Kind::BoolValue(_)) => Type::Bool,
        Some(Kind::StringValue(_)) => Type::String,
        Some(Kind::NumberValue(n)) if as_i64(*n).is_some() => Type::Int64,
        Some(Kind::NumberValue(_)) => Type::Float64,
        Some(Kind::StructValue(_)) => {
            return Err("a struct_value parameter must have its type in param_types".into())
        }
        Some(Kind::ListValue(_)) => return Err("untyped arrays cannot hold arrays".into()),
        None => return Err(format!("Could not parse {}", describe(v))),
    }))
}

fn infer_untyped(v: &prost_types::Value) -> Result<(Type, Value), String> {
    let ty = match &v.kind {
        Some(Kind::ListValue(l)) => {
            let mut element: Option<Type> = None;
            for item in &l.values {
                let Some(t) = untyped_scalar_type(item)? else {
                    continue;
                };
                element = Some(match (element, t) {
                    (None, t) => t,
                    (Some(a), b) if a == b => a,
                    (Some(Type::Int64 | Type::Float64), Type::Int64 | Type::Float64) => {
                        Type::Float64
                    }
                    (Some(a), b) => {
                        return Err(format!("an untyped array cannot mix {a} and {b} elements"))
                    }
                });
            }
            Type::Array(Box::new(element.unwrap_or(Type::Int64)))
        }
        _ => untyped_scalar_type(v)?.unwrap_or(Type::Int64),
    };
    let value = decode(v, &ty)?;
    Ok((ty, value))
}

// ---------------------------------------------------------------------------
// Keys

/// The key columns (name, type) of a read of `table`, or of `index` on it:
/// an index's key is its own key columns followed by the table's primary-key
/// columns it does not already name ([`rowtree_schema::Index::full_key`], the
/// order `rowtree_db` reads and stores index entries in).
pub fn key_columns(
    catalog: &Catalog,
    table: &str,
    index: Option<&str>,
) -> Result<Vec<(String, Type)>, Status> {
    let t = catalog
        .table(table)
        .ok_or_else(|| Status::not_found(format!("Table not found: {table}")))?;
    let keys = match index {
        None => t.primary_key.clone(),
        Some(name) => catalog
            .index(name)
            .filter(|ix| ix.table == t.id)
            .ok_or_else(|| {
                Status::not_found(format!("Index not found on table {}: {name}", t.name))
            })?
            .full_key(t),
    };
    Ok(keys
        .iter()
        .map(|k| {
            let c = &t.columns[k.column];
            (c.name.clone(), c.ty.clone())
        })
        .collect())
}

/// The key column types of a read of `table` or of `index` on it (see
/// [`key_columns`]).
pub fn key_types(catalog: &Catalog, table: &str, index: Option<&str>) -> Result<Vec<Type>, Status> {
    Ok(key_columns(catalog, table, index)?
        .into_iter()
        .map(|(_, t)| t)
        .collect())
}

/// A key set whose keys have the types `key_types` (from [`key_types`]).
/// Point keys must have one value per key column; range bounds may be
/// prefixes; every range needs a start and an end.
pub fn key_set_from_proto(ks: &pb::KeySet, key_types: &[Type]) -> Result<KeySet, Status> {
    let columns: Vec<(Option<&str>, &Type)> = key_types.iter().map(|t| (None, t)).collect();
    key_set(ks, &columns, None)
}

/// A key set for a read through an index. An index key is the index's
/// columns followed by the table's key columns it lacks; clients address
/// index rows by the index's own columns, so a point key with fewer parts
/// than the full index key means every row with that prefix.
pub fn index_key_set_from_proto(ks: &pb::KeySet, key_types: &[Type]) -> Result<KeySet, Status> {
    let columns: Vec<(Option<&str>, &Type)> = key_types.iter().map(|t| (None, t)).collect();
    let points = pb::KeySet {
        keys: Vec::new(),
        ..ks.clone()
    };
    let mut set = key_set(&points, &columns, None)?;
    for k in &ks.keys {
        let values = key(k, &columns, None, true)?;
        if values.len() < columns.len() {
            set.ranges.push(KeyRange::prefix(values));
        } else {
            set.keys.push(values);
        }
    }
    Ok(set)
}

/// [`key_set_from_proto`] with column names (for messages) and the name of
/// the table or index.
fn key_set(
    ks: &pb::KeySet,
    columns: &[(Option<&str>, &Type)],
    object: Option<&str>,
) -> Result<KeySet, Status> {
    let keys = ks
        .keys
        .iter()
        .map(|k| key(k, columns, object, false))
        .collect::<Result<Vec<_>, _>>()?;
    let ranges = ks
        .ranges
        .iter()
        .map(|r| {
            let start = match &r.start_key_type {
                Some(StartKeyType::StartClosed(k)) => Bound::Closed(key(k, columns, object, true)?),
                Some(StartKeyType::StartOpen(k)) => Bound::Open(key(k, columns, object, true)?),
                None => {
                    return Err(invalid(
                        "Key range must contain either start_closed or start_open.",
                    ))
                }
            };
            let end = match &r.end_key_type {
                Some(EndKeyType::EndClosed(k)) => Bound::Closed(key(k, columns, object, true)?),
                Some(EndKeyType::EndOpen(k)) => Bound::Open(key(k, columns, object, true)?),
                None => {
                    return Err(invalid(
                        "Key range must contain either end_closed or end_open.",
                    ))
                }
            };
            Ok(KeyRange { start, end })
        })
        .collect::<Result<Vec<_>, Status>>()?;
    Ok(KeySet {
        keys,
        ranges,
        all: ks.all,
    })
}

fn key(
    list: &ListValue,
    columns: &[(Option<&str>, &Type)],
    object: Option<&str>,
    prefix_ok: bool,
) -> Result<Vec<Value>, Status> {
    let n = list.values.len();
    if n > columns.len() || (!prefix_ok && n < columns.len()) {
        let object = object.map(|o| format!(" for {o}")).unwrap_or_default();
        return Err(invalid(format!(
            "Wrong number of key parts{object}. Expected {} key parts, found {n} key parts. Supplied key: {}",
            columns.len(),
            describe_list(list)
        )));
    }
    list.values
        .iter()
        .zip(columns)
        .enumerate()
        .map(|(i, (v, (name, t)))| {
            decode(v, t).map_err(|e| match name {
                Some(name) => invalid(format!("Invalid value for key column {name}: {e}")),
                None => invalid(format!("Invalid value for key part {} ({t}): {e}", i + 1)),
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Mutations

fn table<'c>(catalog: &'c Catalog, name: &str) -> Result<&'c Table, Status> {
    if name.is_empty() {
        return Err(invalid("Mutation does not specify table."));
    }
    catalog
        .table(name)
        .ok_or_else(|| Status::not_found(format!("Table not found: {name}")))
}

/// Commit mutations against `catalog`. Table and column names match case
/// insensitively and come out as the schema spells them; each value is
/// decoded with its column's type; a delete's key set with the table's
/// primary key types. Queue mutations (`send`, `ack`) are `UNIMPLEMENTED`.
pub fn mutations_from_proto(
    ms: &[pb::Mutation],
    catalog: &Catalog,
) -> Result<Vec<Mutation>, Status> {
    ms.iter().map(|m| mutation_from_proto(m, catalog)).collect()
}

fn mutation_from_proto(m: &pb::Mutation, catalog: &Catalog) -> Result<Mutation, Status> {
    let (kind, write) = match &m.operation {
        None => return Err(invalid("Mutation does not specify an operation.")),
        Some(Operation::Insert(w)) => (WriteKind::Insert, w),
        Some(Operation::Update(w)) => (WriteKind::Update, w),
        Some(Operation::InsertOrUpdate(w)) => (WriteKind::InsertOrUpdate, w),
        Some(Operation::Replace(w)) => (WriteKind::Replace, w),
        Some(Operation::Delete(d)) => {
            let t = table(catalog, &d.table)?;
            let ks = d.key_set.as_ref().ok_or_else(|| {
                invalid(format!(
                    "Delete mutation on table {} does not specify a key_set.",
                    t.name
                ))
            })?;
            let columns: Vec<(Option<&str>, &Type)> = t
                .primary_key
                .iter()
                .map(|k| {
                    let c = &t.columns[k.column];
                    (Some(c.name.as_str()), &c.ty)
                })
                .collect();
            return Ok(Mutation::Delete {
                table: t.name.clone(),
                key_set: key_set(ks, &columns, Some(&t.name))?,
            });
        }
        Some(Operation::Send(_)) | Some(Operation::Ack(_)) => {
            return Err(Status::unimplemented(
                "Queue mutations (send, ack) are not supported",
            ))
        }
    };
    let t = table(catalog, &write.table)?;
    let mut positions = Vec::with_capacity(write.columns.len());
    for name in &write.columns {
        let (pos, col) = t.column(name).ok_or_else(|| {
            Status::not_found(format!("Column not found in table {}: {name}", t.name))
        })?;
        if positions.contains(&pos) {
            return Err(invalid(format!("Multiple values for column {}.", col.name)));
        }
        positions.push(pos);
    }
    let columns: Vec<&rowtree_schema::Column> = positions.iter().map(|&p| &t.columns[p]).collect();
    let rows = write
        .values
        .iter()
        .map(|list| {
            if list.values.len() != columns.len() {
                return Err(invalid(format!(
                    "Mutation on table {} names {} columns but a row has {} values: {}",
                    t.name,
                    columns.len(),
                    list.values.len(),
                    describe_list(list)
                )));
            }
            list.values
                .iter()
                .zip(&columns)
                .map(|(v, c)| {
                    // Spanner answers a value of the wrong kind in a
                    // mutation with FAILED_PRECONDITION.
                    decode(v, &c.ty).map_err(|e| {
                        Status::failed_precondition(format!(
                            "Invalid value for column {} in table {}: {e}",
                            c.name, t.name
                        ))
                    })
                })
                .collect::<Result<Vec<_>, Status>>()
        })
        .collect::<Result<Vec<_>, Status>>()?;
    Ok(Mutation::Write {
        kind,
        table: t.name.clone(),
        columns: columns.iter().map(|c| c.name.clone()).collect(),
        rows,
    })
}

// ---------------------------------------------------------------------------
// Timestamps and durations

/// A TIMESTAMP as `google.protobuf.Timestamp`. [`Timestamp::PENDING_COMMIT`]
/// never reaches a client; if it does it is sent as [`Timestamp::MAX`].
pub fn timestamp_to_proto(ts: Timestamp) -> prost_types::Timestamp {
    let ts = if ts == Timestamp::PENDING_COMMIT {
        Timestamp::MAX
    } else {
        ts
    };
    let (seconds, nanos) = ts.to_seconds_nanos();
    prost_types::Timestamp {
        seconds,
        nanos: nanos as i32,
    }
}

/// A `google.protobuf.Timestamp` as a TIMESTAMP: `INVALID_ARGUMENT` if
/// `nanos` is outside `0..1e9` or the instant outside
/// 0001-01-01..9999-12-31.
pub fn timestamp_from_proto(ts: &prost_types::Timestamp) -> Result<Timestamp, Status> {
    if !(0..NANOS_PER_SECOND as i32).contains(&ts.nanos) {
        return Err(invalid(format!(
            "Invalid timestamp: nanos must be in [0, 999999999], found {}",
            ts.nanos
        )));
    }
    Timestamp::from_seconds_nanos(ts.seconds, ts.nanos as u32).ok_or_else(|| {
        invalid(format!(
            "Timestamp out of range: {} seconds since the epoch. Timestamps must be within [0001-01-01T00:00:00Z, 9999-12-31T23:59:59.999999999Z]",
            ts.seconds
        ))
    })
}

/// A database timestamp — `CommitResult::commit_timestamp`,
/// `ReadOnlyTransaction::read_timestamp`: `u64` nanoseconds since the epoch —
/// as `google.protobuf.Timestamp`.
pub fn commit_ts_to_proto(nanos: u64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: (nanos / NANOS_PER_SECOND as u64) as i64,
        nanos: (nanos % NANOS_PER_SECOND as u64) as i32,
    }
}

/// A `google.protobuf.Timestamp` as a database timestamp (`u64` nanoseconds
/// since the epoch), e.g. for `TimestampBound::ReadTimestamp` and
/// `MinReadTimestamp`. Instants before 1970 are `INVALID_ARGUMENT`.
pub fn commit_ts_from_proto(ts: &prost_types::Timestamp) -> Result<u64, Status> {
    let t = timestamp_from_proto(ts)?;
    u64::try_from(t.nanos()).map_err(|_| {
        invalid(format!(
            "Invalid timestamp {}: read timestamps must not be before 1970-01-01T00:00:00Z",
            t.to_rfc3339()
        ))
    })
}

/// A `google.protobuf.Duration` (staleness bounds) as a `std` duration;
/// negative durations become zero.
pub fn duration_from_proto(d: &prost_types::Duration) -> std::time::Duration {
    let total = d.seconds as i128 * NANOS_PER_SECOND + d.nanos as i128;
    if total <= 0 {
        return std::time::Duration::ZERO;
    }
    std::time::Duration::new(
        (total / NANOS_PER_SECOND) as u64,
        (total % NANOS_PER_SECOND) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Code;

    fn s(text: &str) -> prost_types::Value {
        kind(Kind::StringValue(text.into()))
    }

    fn n(v: f64) -> prost_types::Value {
        kind(Kind::NumberValue(v))
    }

    fn b(v: bool) -> prost_types::Value {
        kind(Kind::BoolValue(v))
    }

    fn list(values: Vec<prost_types::Value>) -> prost_types::Value {
        kind(Kind::ListValue(ListValue { values }))
    }

    fn lv(values: Vec<prost_types::Value>) -> ListValue {
        ListValue { values }
    }

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text, &TimeZone::UTC).unwrap()
    }

    fn num(text: &str) -> Numeric {
        Numeric::parse(text).unwrap()
    }

    fn date(text: &str) -> Date {
        Date::parse(text).unwrap()
    }

    /// Decoding `v` as `t` fails with INVALID_ARGUMENT and a message
    /// containing every one of `parts`.
    fn decode_err(v: &prost_types::Value, t: &Type, parts: &[&str]) {
        let err = value_from_proto(v, t).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{v:?} as {t}: {err:?}");
        for p in parts {
            assert!(err.message().contains(p), "{:?} lacks {p:?}", err.message());
        }
    }

    fn all_types() -> Vec<Type> {
        vec![
            Type::Bool,
            Type::Int64,
            Type::Float32,
            Type::Float64,
            Type::Numeric,
            Type::String,
            Type::Bytes,
            Type::Date,
            Type::Timestamp,
            Type::Json,
            Type::Array(Box::new(Type::Int64)),
            Type::Array(Box::new(Type::Struct(vec![
                ("a".into(), Type::String),
                (String::new(), Type::Array(Box::new(Type::Date))),
            ]))),
            Type::Struct(vec![]),
            Type::Struct(vec![
                ("x".into(), Type::Float64),
                ("y".into(), Type::Struct(vec![("z".into(), Type::Bytes)])),
            ]),
        ]
    }

    #[test]
    fn types_round_trip() {
        for t in all_types() {
            let p = type_to_proto(&t);
            assert_eq!(type_from_proto(&p).unwrap(), t, "{t}");
        }
        let p = type_to_proto(&Type::Array(Box::new(Type::Numeric)));
        assert_eq!(p.code, TypeCode::Array as i32);
        assert_eq!(p.array_element_type.unwrap().code, TypeCode::Numeric as i32);
        let p = type_to_proto(&Type::Struct(vec![("f".into(), Type::Json)]));
        let fields = p.struct_type.unwrap().fields;
        assert_eq!(fields[0].name, "f");
        assert_eq!(
            fields[0].r#type.as_ref().unwrap().code,
            TypeCode::Json as i32
        );
        assert_eq!(fields[0].r#type.as_ref().unwrap().type_annotation, 0);
    }

    #[test]
    fn unsupported_types() {
        let code = |c: TypeCode| pb::Type {
            code: c as i32,
            ..Default::default()
        };
        let err = type_from_proto(&code(TypeCode::Unspecified)).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        for c in [
            TypeCode::Proto,
            TypeCode::Enum,
            TypeCode::Interval,
            TypeCode::Uuid,
        ] {
            let err = type_from_proto(&code(c)).unwrap_err();
            assert_eq!(err.code(), Code::Unimplemented);
            assert!(
                err.message().starts_with("Unsupported type"),
                "{}",
                err.message()
            );
        }
        for a in [TypeAnnotationCode::PgNumeric, TypeAnnotationCode::PgJsonb] {
            let t = pb::Type {
                type_annotation: a as i32,
                ..code(TypeCode::Numeric)
            };
            assert_eq!(type_from_proto(&t).unwrap_err().code(), Code::Unimplemented);
        }
        let unknown = pb::Type {
            code: 99,
            ..Default::default()
        };
        assert_eq!(
            type_from_proto(&unknown).unwrap_err().code(),
            Code::InvalidArgument
        );
        // ARRAY without an element type, ARRAY<ARRAY<..>>, STRUCT without fields info.
        assert_eq!(
            type_from_proto(&code(TypeCode::Array)).unwrap_err().code(),
            Code::InvalidArgument
        );
        let nested = pb::Type {
            array_element_type: Some(Box::new(type_to_proto(&Type::Array(Box::new(Type::Int64))))),
            ..code(TypeCode::Array)
        };
        assert_eq!(
            type_from_proto(&nested).unwrap_err().code(),
            Code::InvalidArgument
        );
        assert_eq!(
            type_from_proto(&code(TypeCode::Struct)).unwrap_err().code(),
            Code::InvalidArgument
        );
    }

    /// (type, value) pairs covering every type, their limits and NULLs.
    fn samples() -> Vec<(Type, Value)> {
        let mut out = vec![
            (Type::Bool, Value::Bool(true)),
            (Type::Bool, Value::Bool(false)),
            (Type::Int64, Value::Int64(i64::MIN)),
            (Type::Int64, Value::Int64(i64::MAX)),
            (Type::Int64, Value::Int64(0)),
            (Type::Float64, Value::Float64(1.5)),
            (Type::Float64, Value::Float64(-0.0)),
            (Type::Float64, Value::Float64(f64::MAX)),
            (Type::Float64, Value::Float64(f64::MIN_POSITIVE)),
            (Type::Float64, Value::Float64(f64::INFINITY)),
            (Type::Float64, Value::Float64(f64::NEG_INFINITY)),
            (Type::Float32, Value::Float32(0.1)),
            (Type::Float32, Value::Float32(f32::MAX)),
            (Type::Float32, Value::Float32(f32::NEG_INFINITY)),
            (Type::Numeric, Value::Numeric(Numeric::MAX)),
            (Type::Numeric, Value::Numeric(Numeric::MIN)),
            (Type::Numeric, Value::Numeric(Numeric::ZERO)),
            (Type::Numeric, Value::Numeric(num("-0.000000001"))),
            (Type::String, Value::String(String::new())),
            (Type::String, Value::String("héllo, \"wörld\"\n".into())),
            (Type::Bytes, Value::Bytes((0..=255).collect())),
            (Type::Bytes, Value::Bytes(vec![])),
            (Type::Date, Value::Date(Date::MIN)),
            (Type::Date, Value::Date(Date::MAX)),
            (Type::Date, Value::Date(date("2024-02-29"))),
            (Type::Timestamp, Value::Timestamp(Timestamp::MIN)),
            (Type::Timestamp, Value::Timestamp(Timestamp::MAX)),
            (Type::Timestamp, Value::Timestamp(Timestamp::UNIX_EPOCH)),
            (
                Type::Timestamp,
                Value::Timestamp(ts("1969-12-31T23:59:59.999999999Z")),
            ),
            (Type::Timestamp, Value::Timestamp(Timestamp::PENDING_COMMIT)),
            (
                Type::Json,
                Value::Json(parse_json(r#"{"b": [1, 2.5, null, "x"], "a": {"c": true}}"#).unwrap()),
            ),
            (Type::Json, Value::Json(serde_json::Value::Null)),
            (
                Type::Array(Box::new(Type::Int64)),
                Value::Array(vec![Value::Int64(1), Value::Null, Value::Int64(-3)]),
            ),
            (Type::Array(Box::new(Type::String)), Value::Array(vec![])),
            (
                Type::Array(Box::new(Type::Timestamp)),
                Value::Array(vec![Value::Null, Value::Timestamp(Timestamp::MAX)]),
            ),
            (
                Type::Array(Box::new(Type::Bytes)),
                Value::Array(vec![Value::Bytes(b"hi".to_vec()), Value::Null]),
            ),
            (
                Type::Struct(vec![
                    ("a".into(), Type::Int64),
                    (String::new(), Type::Array(Box::new(Type::Numeric))),
                ]),
                Value::Struct(vec![
                    Value::Null,
                    Value::Array(vec![Value::Numeric(num("1.5")), Value::Null]),
                ]),
            ),
            (
                Type::Array(Box::new(Type::Struct(vec![("d".into(), Type::Date)]))),
                Value::Array(vec![
                    Value::Struct(vec![Value::Date(date("2000-01-01"))]),
                    Value::Null,
                ]),
            ),
        ];
        for t in all_types() {
            out.push((t, Value::Null));
        }
        out
    }

    #[test]
    fn values_round_trip() {
        for (t, v) in samples() {
            let wire = value_to_proto(&v, &t);
            let back = value_from_proto(&wire, &t).unwrap_or_else(|e| panic!("{t} {v:?}: {e}"));
            assert_eq!(back, v, "{t}: {wire:?}");
        }
        // NaN != NaN, so check it separately.
        for t in [Type::Float64, Type::Float32] {
            let v = if t == Type::Float64 {
                Value::Float64(f64::NAN)
            } else {
                Value::Float32(f32::NAN)
            };
            let wire = value_to_proto(&v, &t);
            assert_eq!(wire, s("NaN"));
            match value_from_proto(&wire, &t).unwrap() {
                Value::Float64(f) => assert!(f.is_nan()),
                Value::Float32(f) => assert!(f.is_nan()),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn wire_forms_follow_spanner() {
        let enc = |v: Value, t: Type| value_to_proto(&v, &t);
        assert_eq!(enc(Value::Null, Type::Int64), null());
        assert_eq!(
            enc(Value::Int64(9007199254740993), Type::Int64),
            s("9007199254740993")
        );
        assert_eq!(enc(Value::Float64(1.5), Type::Float64), n(1.5));
        assert_eq!(
            enc(Value::Float64(f64::INFINITY), Type::Float64),
            s("Infinity")
        );
        assert_eq!(
            enc(Value::Float64(f64::NEG_INFINITY), Type::Float64),
            s("-Infinity")
        );
        assert_eq!(enc(Value::Float32(1.5), Type::Float32), n(1.5));
        assert_eq!(enc(Value::Int64(2), Type::Float64), n(2.0));
        assert_eq!(
            enc(Value::Numeric(Numeric::MAX), Type::Numeric),
            s("99999999999999999999999999999.999999999")
        );
        assert_eq!(enc(Value::Numeric(num("1.50")), Type::Numeric), s("1.5"));
        assert_eq!(enc(Value::Bytes(b"hi".to_vec()), Type::Bytes), s("aGk="));
        assert_eq!(
            enc(Value::Date(date("2024-2-9")), Type::Date),
            s("2024-02-09")
        );
        assert_eq!(
            enc(Value::Timestamp(Timestamp::MAX), Type::Timestamp),
            s("9999-12-31T23:59:59.999999999Z")
        );
        assert_eq!(
            enc(Value::Timestamp(Timestamp::MIN), Type::Timestamp),
            s("0001-01-01T00:00:00Z")
        );
        assert_eq!(
            enc(
                Value::Timestamp(ts("2016-01-25T15:10:10.500Z")),
                Type::Timestamp
            ),
            s("2016-01-25T15:10:10.5Z")
        );
        assert_eq!(
            enc(Value::Timestamp(Timestamp::PENDING_COMMIT), Type::Timestamp),
            s(COMMIT_TIMESTAMP_PLACEHOLDER)
        );
        assert_eq!(
            enc(
                Value::Json(parse_json(r#"{"b":1, "a":[true, null]}"#).unwrap()),
                Type::Json
            ),
            s(r#"{"a":[true,null],"b":1}"#)
        );
        assert_eq!(
            enc(
                Value::Array(vec![Value::Int64(1), Value::Null]),
                Type::Array(Box::new(Type::Int64))
            ),
            list(vec![s("1"), null()])
        );
        assert_eq!(
            enc(
                Value::Struct(vec![Value::Int64(1), Value::String("x".into())]),
                Type::Struct(vec![("a".into(), Type::Int64), ("b".into(), Type::String)])
            ),
            list(vec![s("1"), s("x")])
        );
    }

    #[test]
    fn lenient_inputs() {
        let dec = |v: prost_types::Value, t: Type| value_from_proto(&v, &t).unwrap();
        assert_eq!(dec(n(3.0), Type::Int64), Value::Int64(3));
        assert_eq!(dec(n(i64::MIN as f64), Type::Int64), Value::Int64(i64::MIN));
        assert_eq!(
            dec(s("-Infinity"), Type::Float32),
            Value::Float32(f32::NEG_INFINITY)
        );
        assert_eq!(dec(n(0.1), Type::Float32), Value::Float32(0.1));
        assert_eq!(
            dec(s("2016-01-25T10:10:10.5-05:00"), Type::Timestamp),
            Value::Timestamp(ts("2016-01-25T15:10:10.5Z"))
        );
        assert_eq!(
            dec(s("2016-01-25t15:10:10z"), Type::Timestamp),
            Value::Timestamp(ts("2016-01-25T15:10:10Z"))
        );
        assert_eq!(
            dec(s(COMMIT_TIMESTAMP_PLACEHOLDER), Type::Timestamp),
            Value::Timestamp(Timestamp::PENDING_COMMIT)
        );
        assert_eq!(
            dec(s("9999-12-31T23:59:59.999999999Z"), Type::Timestamp),
            Value::Timestamp(Timestamp::MAX)
        );
        assert_eq!(
            dec(s("0001-01-01T00:00:00Z"), Type::Timestamp),
            Value::Timestamp(Timestamp::MIN)
        );
        assert_eq!(dec(s("aGk"), Type::Bytes), Value::Bytes(b"hi".to_vec()));
        assert_eq!(
            dec(s("1e-9"), Type::Numeric),
            Value::Numeric(num("0.000000001"))
        );
        assert_eq!(dec(s("+1.5E2"), Type::Numeric), Value::Numeric(num("150")));
        assert_eq!(
            dec(s("1.0000000005"), Type::Numeric),
            Value::Numeric(num("1.000000001"))
        );
        assert_eq!(
            dec(s("-99999999999999999999999999999.999999999"), Type::Numeric),
            Value::Numeric(Numeric::MIN)
        );
        assert_eq!(
            dec(s(r#"{"a": 1, "a": 2}"#), Type::Json),
            Value::Json(parse_json(r#"{"a":1}"#).unwrap())
        );
    }

    #[test]
    fn bad_inputs() {
        decode_err(&s("abc"), &Type::Int64, &["\"abc\"", "INT64"]);
        decode_err(&s("1.0"), &Type::Int64, &["INT64"]);
        decode_err(&s("9223372036854775808"), &Type::Int64, &["INT64"]);
        decode_err(&n(3.5), &Type::Int64, &["INT64"]);
        decode_err(&n(1e19), &Type::Int64, &["INT64"]);
        decode_err(&b(true), &Type::Int64, &["true", "INT64"]);
        decode_err(&s("1.5"), &Type::Float64, &["FLOAT64", "'NaN'"]);
        decode_err(&s("nan"), &Type::Float64, &["FLOAT64"]);
        decode_err(&n(1e39), &Type::Float32, &["FLOAT32", "out of range"]);
        decode_err(&n(1.0), &Type::String, &["STRING"]);
        decode_err(&s("true"), &Type::Bool, &["BOOL"]);
        decode_err(&s("1e29"), &Type::Numeric, &["NUMERIC"]);
        decode_err(
            &s("100000000000000000000000000000"),
            &Type::Numeric,
            &["NUMERIC"],
        );
        decode_err(&s("1.2.3"), &Type::Numeric, &["NUMERIC"]);
        decode_err(&n(1.5), &Type::Numeric, &["NUMERIC"]);
        decode_err(&s("!!"), &Type::Bytes, &["BYTES", "base64"]);
        decode_err(&s("2024-02-30"), &Type::Date, &["DATE"]);
        decode_err(&s("10000-01-01"), &Type::Date, &["DATE"]);
        decode_err(&s("2016-01-25 15:10:10Z"), &Type::Timestamp, &["TIMESTAMP"]);
        decode_err(&s("2016-01-25T15:10:10"), &Type::Timestamp, &["TIMESTAMP"]);
        decode_err(&s("2016-01-25"), &Type::Timestamp, &["TIMESTAMP"]);
        decode_err(
            &s("2016-01-25T15:10:10.1234567891Z"),
            &Type::Timestamp,
            &["TIMESTAMP"],
        );
        decode_err(&s("2016-01-25T25:10:10Z"), &Type::Timestamp, &["TIMESTAMP"]);
        decode_err(
            &s("9999-12-31T23:59:59-01:00"),
            &Type::Timestamp,
            &["TIMESTAMP", "range"],
        );
        decode_err(
            &s("0001-01-01T00:00:00+01:00"),
            &Type::Timestamp,
            &["TIMESTAMP", "range"],
        );
        decode_err(&s("{"), &Type::Json, &["JSON"]);
        decode_err(&s("1e400"), &Type::Json, &["JSON"]);
        decode_err(
            &s("[1]"),
            &Type::Array(Box::new(Type::Int64)),
            &["ARRAY<INT64>"],
        );
        decode_err(
            &list(vec![s("1"), s("x")]),
            &Type::Array(Box::new(Type::Int64)),
            &["\"x\"", "INT64", "array element 1"],
        );
        let st = Type::Struct(vec![("a".into(), Type::Int64), ("b".into(), Type::Bool)]);
        decode_err(&list(vec![s("1")]), &st, &["expected 2 fields, found 1"]);
        decode_err(
            &list(vec![s("1"), s("no")]),
            &st,
            &["BOOL", "struct field b"],
        );
        decode_err(&prost_types::Value { kind: None }, &Type::Int64, &["empty"]);
        decode_err(
            &kind(Kind::StructValue(Struct::default())),
            &Type::String,
            &["struct_value", "STRING"],
        );
    }

    #[test]
    fn rows_and_metadata() {
        let columns = vec![
            ("Id".to_string(), Type::Int64),
            ("Tags".to_string(), Type::Array(Box::new(Type::String))),
            ("Score".to_string(), Type::Float64),
        ];
        let row = vec![
            Value::Int64(7),
            Value::Array(vec![Value::String("a".into()), Value::Null]),
            Value::Null,
        ];
        assert_eq!(
            row_to_proto(&row, &columns),
            vec![s("7"), list(vec![s("a"), null()]), null()]
        );
        let md = metadata(&columns);
        assert!(md.transaction.is_none() && md.undeclared_parameters.is_none());
        let fields = md.row_type.unwrap().fields;
        let got: Vec<(String, Type)> = fields
            .iter()
            .map(|f| {
                (
                    f.name.clone(),
                    type_from_proto(f.r#type.as_ref().unwrap()).unwrap(),
                )
            })
            .collect();
        assert_eq!(got, columns);
    }

    #[test]
    fn params() {
        let mut fields = std::collections::BTreeMap::new();
        fields.insert("id".to_string(), s("42"));
        fields.insert("when".to_string(), s("2020-01-01T00:00:00Z"));
        fields.insert("name".to_string(), s("x"));
        fields.insert("flag".to_string(), b(true));
        fields.insert("count".to_string(), n(3.0));
        fields.insert("ratio".to_string(), n(0.5));
        fields.insert("nothing".to_string(), null());
        fields.insert("mixed".to_string(), list(vec![n(1.0), null(), n(2.5)]));
        fields.insert("strs".to_string(), list(vec![null(), s("a")]));
        fields.insert("empty".to_string(), list(vec![]));
        fields.insert("Typed_Case".to_string(), s("7"));
        let params = Struct { fields };
        let mut types = HashMap::new();
        types.insert("id".to_string(), type_to_proto(&Type::Int64));
        types.insert("when".to_string(), type_to_proto(&Type::Timestamp));
        types.insert("typed_case".to_string(), type_to_proto(&Type::Int64));
        types.insert("unused".to_string(), type_to_proto(&Type::Bool));
        let p = params_from_proto(Some(&params), &types).unwrap();
        let get = |k: &str| p.get(k).cloned().unwrap();
        assert_eq!(get("id"), (Type::Int64, Value::Int64(42)));
        assert_eq!(
            get("when"),
            (
                Type::Timestamp,
                Value::Timestamp(ts("2020-01-01T00:00:00Z"))
            )
        );
        assert_eq!(get("name"), (Type::String, Value::String("x".into())));
        assert_eq!(get("flag"), (Type::Bool, Value::Bool(true)));
        assert_eq!(get("count"), (Type::Int64, Value::Int64(3)));
        assert_eq!(get("ratio"), (Type::Float64, Value::Float64(0.5)));
        assert_eq!(get("nothing"), (Type::Int64, Value::Null));
        assert_eq!(
            get("mixed"),
            (
                Type::Array(Box::new(Type::Float64)),
                Value::Array(vec![Value::Float64(1.0), Value::Null, Value::Float64(2.5)])
            )
        );
        assert_eq!(
            get("strs"),
            (
                Type::Array(Box::new(Type::String)),
                Value::Array(vec![Value::Null, Value::String("a".into())])
            )
        );
        assert_eq!(
            get("empty"),
            (Type::Array(Box::new(Type::Int64)), Value::Array(vec![]))
        );
        assert_eq!(get("Typed_Case"), (Type::Int64, Value::Int64(7)));
        assert!(!p.contains_key("unused"));
        assert!(params_from_proto(None, &types).unwrap().is_empty());

        let one = |name: &str, v: prost_types::Value| Struct {
            fields: [(name.to_string(), v)].into_iter().collect(),
        };
        let err = params_from_proto(Some(&one("id", s("x"))), &types).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(
            err.message()
                .starts_with("Invalid value for bind parameter id:")
                && err.message().contains("INT64"),
            "{}",
            err.message()
        );
        let err = params_from_proto(
            Some(&one("s", kind(Kind::StructValue(Struct::default())))),
            &types,
        )
        .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(
            err.message().contains("bind parameter s"),
            "{}",
            err.message()
        );
        let err =
            params_from_proto(Some(&one("l", list(vec![s("a"), b(true)]))), &types).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        let mut uuid = HashMap::new();
        uuid.insert(
            "u".to_string(),
            pb::Type {
                code: TypeCode::Uuid as i32,
                ..Default::default()
            },
        );
        let err = params_from_proto(Some(&one("u", s("x"))), &uuid).unwrap_err();
        assert_eq!(err.code(), Code::Unimplemented);
        assert!(
            err.message().contains("bind parameter u"),
            "{}",
            err.message()
        );
    }

    fn catalog() -> Catalog {
        let mut c = Catalog::new();
        for ddl in [
            "CREATE TABLE Singers (SingerId INT64 NOT NULL, FirstName STRING(MAX), LastName STRING(1024), \
             Info BYTES(MAX), Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true)) PRIMARY KEY (SingerId)",
            "CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), \
             Released DATE, Price NUMERIC, Tags ARRAY<STRING(MAX)>) PRIMARY KEY (SingerId, AlbumId DESC), \
             INTERLEAVE IN PARENT Singers ON DELETE CASCADE",
            "CREATE INDEX AlbumsByTitle ON Albums (Title DESC, SingerId)",
            "CREATE INDEX SingersByName ON Singers (LastName)",
        ] {
            c = c.apply_sql(ddl).expect(ddl).0;
        }
        c
    }

    #[test]
    fn key_types_of_tables_and_indexes() {
        let c = catalog();
        assert_eq!(key_types(&c, "Singers", None).unwrap(), vec![Type::Int64]);
        assert_eq!(
            key_types(&c, "albums", None).unwrap(),
            vec![Type::Int64, Type::Int64]
        );
        // Index keys, then the table's key columns the index does not name.
        assert_eq!(
            key_columns(&c, "Albums", Some("albumsbytitle")).unwrap(),
            vec![
                ("Title".to_string(), Type::String),
                ("SingerId".to_string(), Type::Int64),
                ("AlbumId".to_string(), Type::Int64),
            ]
        );
        assert_eq!(
            key_types(&c, "Singers", Some("SingersByName")).unwrap(),
            vec![Type::String, Type::Int64]
        );
        let err = key_types(&c, "Nope", None).unwrap_err();
        assert_eq!(
            (err.code(), err.message()),
            (Code::NotFound, "Table not found: Nope")
        );
        let err = key_types(&c, "Singers", Some("AlbumsByTitle")).unwrap_err();
        assert_eq!(
            (err.code(), err.message()),
            (
                Code::NotFound,
                "Index not found on table Singers: AlbumsByTitle"
            )
        );
    }

    #[test]
    fn key_sets() {
        let types = vec![Type::Int64, Type::String];
        let ks = pb::KeySet {
            keys: vec![lv(vec![s("1"), s("a")]), lv(vec![n(2.0), null()])],
            ranges: vec![
                pb::KeyRange {
                    start_key_type: Some(StartKeyType::StartClosed(lv(vec![s("1")]))),
                    end_key_type: Some(EndKeyType::EndOpen(lv(vec![s("5"), s("m")]))),
                },
                pb::KeyRange {
                    start_key_type: Some(StartKeyType::StartOpen(lv(vec![]))),
                    end_key_type: Some(EndKeyType::EndClosed(lv(vec![]))),
                },
            ],
            all: true,
        };
        let got = key_set_from_proto(&ks, &types).unwrap();
        assert_eq!(
            got,
            KeySet {
                keys: vec![
                    vec![Value::Int64(1), Value::String("a".into())],
                    vec![Value::Int64(2), Value::Null],
                ],
                ranges: vec![
                    KeyRange {
                        start: Bound::Closed(vec![Value::Int64(1)]),
                        end: Bound::Open(vec![Value::Int64(5), Value::String("m".into())]),
                    },
                    KeyRange {
                        start: Bound::Open(vec![]),
                        end: Bound::Closed(vec![]),
                    },
                ],
                all: true,
            }
        );
        assert_eq!(
            key_set_from_proto(&pb::KeySet::default(), &types).unwrap(),
            KeySet::default()
        );

        let err_of = |ks: pb::KeySet| key_set_from_proto(&ks, &types).unwrap_err();
        let missing_start = err_of(pb::KeySet {
            ranges: vec![pb::KeyRange {
                start_key_type: None,
                end_key_type: Some(EndKeyType::EndClosed(lv(vec![]))),
            }],
            ..Default::default()
        });
        assert_eq!(missing_start.code(), Code::InvalidArgument);
        assert!(missing_start
            .message()
            .contains("start_closed or start_open"));
        let missing_end = err_of(pb::KeySet {
            ranges: vec![pb::KeyRange {
                start_key_type: Some(StartKeyType::StartClosed(lv(vec![]))),
                end_key_type: None,
            }],
            ..Default::default()
        });
        assert!(missing_end.message().contains("end_closed or end_open"));
        let too_many = err_of(pb::KeySet {
            ranges: vec![pb::KeyRange {
                start_key_type: Some(StartKeyType::StartClosed(lv(vec![s("1"), s("a"), s("x")]))),
                end_key_type: Some(EndKeyType::EndClosed(lv(vec![]))),
            }],
            ..Default::default()
        });
        assert_eq!(too_many.code(), Code::InvalidArgument);
        assert!(
            too_many.message().starts_with("Wrong number of key parts"),
            "{}",
            too_many.message()
        );
        let partial_point = err_of(pb::KeySet {
            keys: vec![lv(vec![s("1")])],
            ..Default::default()
        });
        assert!(partial_point
            .message()
            .contains("Expected 2 key parts, found 1"));
        let bad_value = err_of(pb::KeySet {
            keys: vec![lv(vec![s("one"), s("a")])],
            ..Default::default()
        });
        assert_eq!(bad_value.code(), Code::InvalidArgument);
        assert!(
            bad_value.message().contains("key part 1 (INT64)"),
            "{}",
            bad_value.message()
        );
    }

    fn write(
        table: &str,
        columns: &[&str],
        rows: Vec<Vec<prost_types::Value>>,
    ) -> pb::mutation::Write {
        pb::mutation::Write {
            table: table.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            values: rows.into_iter().map(lv).collect(),
        }
    }

    fn op(o: Operation) -> pb::Mutation {
        pb::Mutation { operation: Some(o) }
    }

    #[test]
    fn mutations() {
        let c = catalog();
        let ms = vec![
            op(Operation::Insert(write(
                "singers",
                &["singerid", "FIRSTNAME", "Info", "Updated"],
                vec![
                    vec![
                        s("1"),
                        s("Marc"),
                        s("aGk="),
                        s(COMMIT_TIMESTAMP_PLACEHOLDER),
                    ],
                    vec![s("2"), null(), null(), s("2020-01-01T00:00:00Z")],
                ],
            ))),
            op(Operation::Update(write(
                "Singers",
                &["SingerId", "LastName"],
                vec![vec![s("1"), s("R")]],
            ))),
            op(Operation::InsertOrUpdate(write(
                "Albums",
                &["SingerId", "AlbumId", "Released", "Price", "Tags"],
                vec![vec![
                    s("1"),
                    s("10"),
                    s("2001-02-03"),
                    s("9.99"),
                    list(vec![s("rock"), null()]),
                ]],
            ))),
            op(Operation::Replace(write(
                "Albums",
                &["SingerId", "AlbumId"],
                vec![vec![s("1"), s("11")]],
            ))),
            op(Operation::Delete(pb::mutation::Delete {
                table: "ALBUMS".into(),
                key_set: Some(pb::KeySet {
                    keys: vec![lv(vec![s("1"), s("10")])],
                    ranges: vec![pb::KeyRange {
                        start_key_type: Some(StartKeyType::StartClosed(lv(vec![s("2")]))),
                        end_key_type: Some(EndKeyType::EndClosed(lv(vec![s("2")]))),
                    }],
                    all: false,
                }),
            })),
            op(Operation::Delete(pb::mutation::Delete {
                table: "Singers".into(),
                key_set: Some(pb::KeySet {
                    all: true,
                    ..Default::default()
                }),
            })),
        ];
        let got = mutations_from_proto(&ms, &c).unwrap();
        let expected = vec![
            Mutation::insert(
                "Singers",
                &["SingerId", "FirstName", "Info", "Updated"],
                vec![
                    vec![
                        Value::Int64(1),
                        Value::String("Marc".into()),
                        Value::Bytes(b"hi".to_vec()),
                        Value::Timestamp(Timestamp::PENDING_COMMIT),
                    ],
                    vec![
                        Value::Int64(2),
                        Value::Null,
                        Value::Null,
                        Value::Timestamp(ts("2020-01-01T00:00:00Z")),
                    ],
                ],
            ),
            Mutation::update(
                "Singers",
                &["SingerId", "LastName"],
                vec![vec![Value::Int64(1), Value::String("R".into())]],
            ),
            Mutation::insert_or_update(
                "Albums",
                &["SingerId", "AlbumId", "Released", "Price", "Tags"],
                vec![vec![
                    Value::Int64(1),
                    Value::Int64(10),
                    Value::Date(date("2001-02-03")),
                    Value::Numeric(num("9.99")),
                    Value::Array(vec![Value::String("rock".into()), Value::Null]),
                ]],
            ),
            Mutation::replace(
                "Albums",
                &["SingerId", "AlbumId"],
                vec![vec![Value::Int64(1), Value::Int64(11)]],
            ),
            Mutation::delete(
                "Albums",
                KeySet {
                    keys: vec![vec![Value::Int64(1), Value::Int64(10)]],
                    ranges: vec![KeyRange::prefix(vec![Value::Int64(2)])],
                    all: false,
                },
            ),
            Mutation::delete("Singers", KeySet::all()),
        ];
        assert_eq!(got, expected);
        assert!(mutations_from_proto(&[], &c).unwrap().is_empty());
    }

    #[test]
    fn mutation_errors() {
        let c = catalog();
        let err_of = |m: pb::Mutation| mutations_from_proto(&[m], &c).unwrap_err();

        let err = err_of(op(Operation::Insert(write("Nope", &["a"], vec![]))));
        assert_eq!(
            (err.code(), err.message()),
            (Code::NotFound, "Table not found: Nope")
        );
        let err = err_of(op(Operation::Insert(write("", &["a"], vec![]))));
        assert_eq!(err.code(), Code::InvalidArgument);
        let err = err_of(op(Operation::Update(write(
            "Singers",
            &["SingerId", "Age"],
            vec![],
        ))));
        assert_eq!(
            (err.code(), err.message()),
            (Code::NotFound, "Column not found in table Singers: Age")
        );
        let err = err_of(op(Operation::Insert(write(
            "Singers",
            &["SingerId", "FirstName"],
            vec![vec![s("1"), s("a")], vec![s("x"), s("b")]],
        ))));
        assert_eq!(err.code(), Code::FailedPrecondition);
        assert!(
            err.message()
                .starts_with("Invalid value for column SingerId in table Singers:")
                && err.message().contains("\"x\" as INT64"),
            "{}",
            err.message()
        );
        let err = err_of(op(Operation::Insert(write(
            "Albums",
            &["SingerId", "AlbumId", "Price"],
            vec![vec![s("1"), s("2"), s("1e30")]],
        ))));
        assert!(
            err.message().contains("column Price in table Albums"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("NUMERIC"), "{}", err.message());
        let err = err_of(op(Operation::Insert(write(
            "Singers",
            &["SingerId", "FirstName"],
            vec![vec![s("1")]],
        ))));
        assert_eq!(err.code(), Code::InvalidArgument);
        let err = err_of(op(Operation::Insert(write(
            "Singers",
            &["SingerId", "singerid"],
            vec![],
        ))));
        assert_eq!(
            (err.code(), err.message()),
            (
                Code::InvalidArgument,
                "Multiple values for column SingerId."
            )
        );
        let err = err_of(op(Operation::Delete(pb::mutation::Delete {
            table: "Albums".into(),
            key_set: Some(pb::KeySet {
                keys: vec![lv(vec![s("1"), b(false)])],
                ..Default::default()
            }),
        })));
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(
            err.message().contains("key column AlbumId"),
            "{}",
            err.message()
        );
        let err = err_of(op(Operation::Delete(pb::mutation::Delete {
            table: "Albums".into(),
            key_set: Some(pb::KeySet {
                keys: vec![lv(vec![s("1")])],
                ..Default::default()
            }),
        })));
        assert!(
            err.message()
                .starts_with("Wrong number of key parts for Albums. Expected 2 key parts, found 1"),
            "{}",
            err.message()
        );
        let err = err_of(op(Operation::Delete(pb::mutation::Delete {
            table: "Albums".into(),
            key_set: None,
        })));
        assert_eq!(err.code(), Code::InvalidArgument);
        let err = err_of(op(Operation::Send(pb::mutation::Send::default())));
        assert_eq!(err.code(), Code::Unimplemented);
        let err = err_of(op(Operation::Ack(pb::mutation::Ack::default())));
        assert_eq!(err.code(), Code::Unimplemented);
        let err = err_of(pb::Mutation { operation: None });
        assert_eq!(err.code(), Code::InvalidArgument);
    }

    #[test]
    fn timestamps_and_durations() {
        for t in [
            Timestamp::MIN,
            Timestamp::MAX,
            Timestamp::UNIX_EPOCH,
            ts("1969-12-31T23:59:59.5Z"),
            ts("2024-02-29T12:34:56.123456789Z"),
        ] {
            let p = timestamp_to_proto(t);
            assert!((0..1_000_000_000).contains(&p.nanos));
            assert_eq!(timestamp_from_proto(&p).unwrap(), t);
        }
        let p = timestamp_to_proto(ts("1969-12-31T23:59:59.5Z"));
        assert_eq!((p.seconds, p.nanos), (-1, 500_000_000));
        let p = timestamp_to_proto(Timestamp::MAX);
        assert_eq!((p.seconds, p.nanos), (253_402_300_799, 999_999_999));
        let bad = |seconds: i64, nanos: i32| {
            timestamp_from_proto(&prost_types::Timestamp { seconds, nanos })
                .unwrap_err()
                .code()
        };
        assert_eq!(bad(0, -1), Code::InvalidArgument);
        assert_eq!(bad(0, 1_000_000_000), Code::InvalidArgument);
        assert_eq!(bad(253_402_300_800, 0), Code::InvalidArgument);
        assert_eq!(bad(-62_135_596_801, 0), Code::InvalidArgument);

        let p = commit_ts_to_proto(1_700_000_000_123_456_000);
        assert_eq!((p.seconds, p.nanos), (1_700_000_000, 123_456_000));
        assert_eq!(commit_ts_from_proto(&p).unwrap(), 1_700_000_000_123_456_000);
        assert_eq!(
            commit_ts_from_proto(&prost_types::Timestamp {
                seconds: -1,
                nanos: 0
            })
            .unwrap_err()
            .code(),
            Code::InvalidArgument
        );

        let d = |seconds: i64, nanos: i32| {
            duration_from_proto(&prost_types::Duration { seconds, nanos })
        };
        assert_eq!(d(10, 500), std::time::Duration::new(10, 500));
        assert_eq!(d(0, 250_000_000), std::time::Duration::from_millis(250));
        assert_eq!(d(-5, 0), std::time::Duration::ZERO);
        assert_eq!(d(0, -1), std::time::Duration::ZERO);
        assert_eq!(
            d(315_576_000_000, 0),
            std::time::Duration::from_secs(315_576_000_000)
        );
    }
}
