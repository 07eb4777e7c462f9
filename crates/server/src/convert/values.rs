//! Values: a [`Value`] of a known [`Type`] to `google.protobuf.Value` and
//! back, by the table in the [module docs](super).
//!
//! [`value_to_proto`] writes Spanner's canonical forms; `decode` is the one
//! decoder behind [`value_from_proto`], query parameters, key parts and
//! mutation values, which differ only in how they prefix its message (it
//! returns a bare `String` for that reason).

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use prost_types::value::Kind;
use prost_types::{ListValue, NullValue};
use rowtree_types::{parse_json, Date, Numeric, TimeZone, Timestamp, Type, Uuid, Value};
use tonic::Status;

use super::describe::{describe, invalid, quote};

/// The TIMESTAMP placeholder a client writes to store the commit timestamp.
pub const COMMIT_TIMESTAMP_PLACEHOLDER: &str = "spanner.commit_timestamp()";

/// Standard base64 alphabet; padding optional on input, always written.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

pub(super) fn kind(kind: Kind) -> prost_types::Value {
    prost_types::Value { kind: Some(kind) }
}

pub(super) fn null() -> prost_types::Value {
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
        Value::Uuid(u) => Kind::StringValue(u.to_string()),
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

/// Whether `n` is an integer an `i64` holds exactly.
pub(super) fn as_i64(n: f64) -> Option<i64> {
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

/// Why wire text `s` is not a NUMERIC: not a number, or one NUMERIC cannot
/// hold exactly (too many digits before or after the point).
fn numeric_error(s: &str) -> String {
    format!(
        "Could not parse {} as NUMERIC. The NUMERIC type supports 38 digits of precision and 9 digits of scale",
        quote(s)
    )
}

/// For a NUMERIC or `ARRAY<NUMERIC>` column, the error for a wire number
/// that has a nonzero digit past the ninth decimal (it would have to be
/// rounded to be stored). Mutations check this first: Spanner answers it
/// with INVALID_ARGUMENT, where a value of the wrong kind is
/// FAILED_PRECONDITION.
pub(super) fn numeric_scale_error(v: &prost_types::Value, t: &Type) -> Option<String> {
    match (t, &v.kind) {
        (Type::Numeric, Some(Kind::StringValue(s))) => (Numeric::parse(s).is_ok()
            && Numeric::parse_exact(s).is_err())
        .then(|| numeric_error(s)),
        (Type::Array(element), Some(Kind::ListValue(l))) => {
            l.values.iter().enumerate().find_map(|(i, item)| {
                numeric_scale_error(item, element).map(|e| format!("{e} (array element {i})"))
            })
        }
        _ => None,
    }
}

pub(super) fn decode(v: &prost_types::Value, t: &Type) -> Result<Value, String> {
    let Some(k) = &v.kind else {
        return Err(format!("Could not parse {} as {t}", describe(v)));
    };
    let mismatch = || format!("Could not parse {} as {t}", describe(v));
    match (t, k) {
        (_, Kind::NullValue(_)) => Ok(Value::Null),
        // A message travels as its serialized bytes, an enum as its number.
        (Type::Proto(_) | Type::Enum(_), _) => decode(v, &t.representation())
            .map_err(|e| format!("{e} (for a value of type {t})")),
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
        (Type::Numeric, Kind::StringValue(s)) => {
            Numeric::parse_exact(s).map(Value::Numeric).map_err(|_| numeric_error(s))
        }
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
        (Type::Uuid, Kind::StringValue(s)) => Uuid::parse(s).map(Value::Uuid).map_err(|_| {
            format!(
                "Could not parse {} as UUID. UUIDs are 32 hexadecimal digits, optionally in braces and with single hyphens between digits, such as \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\"",
                quote(s)
            )
        }),
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
