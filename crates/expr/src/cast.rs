//! Conversions between types: `CAST` and assignment coercion.
//!
//! GoogleSQL has two kinds of conversion:
//!
//! * **CAST** ([`cast`]) is explicit and may fail at runtime on the value
//!   (`CAST('abc' AS INT64)` is an error, `SAFE_CAST` gives NULL). Which
//!   pairs of types may be cast at all is decided at bind time
//!   ([`castable`]): `CAST(TRUE AS DATE)` never binds.
//! * **Coercion** ([`coerce_value`], and the implicit coercions the binder
//!   inserts) only ever widens: `INT64` to `NUMERIC` or `FLOAT64`, `NUMERIC`
//!   to `FLOAT64`, `FLOAT32` to `FLOAT64`, plus the literal rule that a
//!   string literal may stand for a `DATE`, `TIMESTAMP` or `UUID`
//!   ([`string_literal_coerces_to`]).
//!
//! Timestamps meet text in Spanner's default zone, America/Los_Angeles. A
//! `UUID` casts to and from `STRING` (any form [`Uuid::parse`] accepts in, the
//! canonical lowercase form out) and to and from its 16 `BYTES`.

use rowtree_types::{parse_f64, Date, Numeric, TimeZone, Timestamp, Type, Uuid, Value};

use crate::{Error, Result};

/// Whether `CAST(x AS to)` is allowed for `x` of type `from`.
pub fn castable(from: &Type, to: &Type) -> bool {
    use Type::*;
    if from == to {
        return true;
    }
    match (from, to) {
        (Int64 | Float32 | Float64 | Numeric, Int64 | Float32 | Float64 | Numeric | String) => true,
        (Int64, Bool) | (Bool, Int64 | String) => true,
        (String, Int64 | Float32 | Float64 | Numeric | Bool | Bytes | Date | Timestamp) => true,
        (Bytes, String) => true,
        (String | Bytes, Uuid) | (Uuid, String | Bytes) => true,
        (Date, String | Timestamp) | (Timestamp, String | Date) => true,
        // A message is its bytes; an enum is its number, or its name (the
        // binder resolves names with the descriptors).
        (Bytes, Proto(_)) | (Proto(_), Bytes) => true,
        (Int64 | String, Enum(_)) | (Enum(_), Int64 | String) => true,
        (Array(a), Array(b)) => castable(a, b),
        (Struct(a), Struct(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|((_, x), (_, y))| castable(x, y))
        }
        _ => false,
    }
}

/// Whether a value of type `from` implicitly coerces to `to` (assignment,
/// function arguments, operator operands).
pub(crate) fn coercible(from: &Type, to: &Type) -> bool {
    use Type::*;
    from == to
        || matches!(
            (from, to),
            (Int64, Numeric | Float64) | (Numeric, Float64) | (Float32, Float64)
        )
        || matches!((from, to), (Array(a), Array(b)) if coercible(a, b))
        || matches!((from, to), (Struct(a), Struct(b))
            if a.len() == b.len() && a.iter().zip(b).all(|((_, x), (_, y))| coercible(x, y)))
}

/// Whether a string *literal* (or a STRING query parameter) may stand for a
/// value of type `to`: GoogleSQL parses it as a `DATE`, `TIMESTAMP` or `UUID`
/// where one is expected, e.g. `WHERE Id = 'f81d4fae-...'`.
pub(crate) fn string_literal_coerces_to(to: &Type) -> bool {
    matches!(to, Type::Date | Type::Timestamp | Type::Uuid)
}

/// `CAST(value AS to)` with GoogleSQL's rules. NULL casts to NULL.
pub fn cast(value: Value, to: &Type) -> Result<Value> {
    let from = match value_type(&value) {
        None => return Ok(value),
        Some(t) => t,
    };
    if from == *to {
        return Ok(value);
    }
    let invalid = || Error::invalid(format!("Invalid cast from {from} to {to}"));
    if matches!(to, Type::Proto(_) | Type::Enum(_)) && from == to.representation() {
        // Bytes to a message, a number to an enum: the stored form already.
        return Ok(value);
    }
    Ok(match (value, to) {
        (Value::Int64(v), Type::Bool) => Value::Bool(v != 0),
        (Value::Int64(v), Type::Float64) => Value::Float64(v as f64),
        (Value::Int64(v), Type::Float32) => Value::Float32(v as f32),
        (Value::Int64(v), Type::Numeric) => Value::Numeric(Numeric::from_i64(v)),
        (Value::Bool(b), Type::Int64) => Value::Int64(b as i64),
        (Value::Float64(f), Type::Int64) => Value::Int64(float_to_i64(f)?),
        (Value::Float64(f), Type::Float32) => Value::Float32(f64_to_f32(f)?),
        (Value::Float64(f), Type::Numeric) => Value::Numeric(Numeric::from_f64(f)?),
        (Value::Float32(f), Type::Int64) => Value::Int64(float_to_i64(f as f64)?),
        (Value::Float32(f), Type::Float64) => Value::Float64(f as f64),
        (Value::Float32(f), Type::Numeric) => Value::Numeric(Numeric::from_f64(f as f64)?),
        (Value::Numeric(n), Type::Int64) => Value::Int64(n.to_i64()?),
        (Value::Numeric(n), Type::Float64) => Value::Float64(n.to_f64()),
        (Value::Numeric(n), Type::Float32) => Value::Float32(f64_to_f32(n.to_f64())?),
        (Value::String(s), t) => from_string(s, t)?,
        (Value::Bytes(b), Type::String) => Value::String(
            String::from_utf8(b)
                .map_err(|_| Error::out_of_range("Invalid cast of bytes to UTF8 string"))?,
        ),
        (Value::Date(d), Type::Timestamp) => {
            Value::Timestamp(Timestamp::from_date(d, &TimeZone::LOS_ANGELES)?)
        }
        (Value::Timestamp(t), Type::Date) => Value::Date(t.to_date(&TimeZone::LOS_ANGELES)?),
        (Value::Uuid(u), Type::Bytes) => Value::Bytes(u.to_bytes().to_vec()),
        (Value::Bytes(b), Type::Uuid) => {
            let bytes: [u8; 16] = b.as_slice().try_into().map_err(|_| {
                Error::out_of_range(format!(
                    "Invalid cast of BYTES to UUID: a UUID is 16 bytes, the value has {}",
                    b.len()
                ))
            })?;
            Value::Uuid(Uuid::from_bytes(bytes))
        }
        (v, Type::String) if castable(&from, to) => Value::String(v.to_string()),
        // Element by element (the binder has checked the types; a value's
        // own type may be vaguer, e.g. for NULL struct fields).
        (Value::Array(items), Type::Array(elem)) => Value::Array(
            items
                .into_iter()
                .map(|v| cast(v, elem))
                .collect::<Result<_>>()?,
        ),
        (Value::Struct(fields), Type::Struct(types)) if fields.len() == types.len() => {
            Value::Struct(
                fields
                    .into_iter()
                    .zip(types)
                    .map(|(v, (_, t))| cast(v, t))
                    .collect::<Result<_>>()?,
            )
        }
        _ => return Err(invalid()),
    })
}

/// Assignment coercion, for DEFAULT values and mutation values: NULL, the
/// same type, a widening (`INT64` to `FLOAT64`/`NUMERIC`, `NUMERIC` to
/// `FLOAT64`, `FLOAT32` to `FLOAT64`), or a string that parses as the
/// target `DATE`/`TIMESTAMP`/`UUID` (GoogleSQL's string-literal rule). Arrays
/// coerce element by element.
///
/// A PROTO or ENUM target takes its stored form: BYTES for a message, an
/// INT64 number for an enum (values carry no proto type of their own).
pub fn coerce_value(value: Value, to: &Type) -> Result<Value> {
    let from = match value_type(&value) {
        None => return Ok(value),
        Some(t) => t,
    };
    if from == *to {
        return Ok(value);
    }
    if matches!(to, Type::Proto(_) | Type::Enum(_)) && from == to.representation() {
        return Ok(value);
    }
    match (value, to) {
        (Value::String(s), to) if string_literal_coerces_to(to) => from_string(s, to),
        (Value::Array(items), Type::Array(elem)) => Ok(Value::Array(
            items
                .into_iter()
                .map(|v| coerce_value(v, elem))
                .collect::<Result<_>>()?,
        )),
        (Value::Struct(fields), Type::Struct(types)) if fields.len() == types.len() => {
            Ok(Value::Struct(
                fields
                    .into_iter()
                    .zip(types)
                    .map(|(v, (_, t))| coerce_value(v, t))
                    .collect::<Result<_>>()?,
            ))
        }
        (v, to) if coercible(&from, to) => cast(v, to),
        _ => Err(Error::invalid(format!(
            "Value has type {from} which cannot be assigned to type {to}"
        ))),
    }
}

/// The type of a value as far as the value itself tells: arrays take their
/// first non-NULL element's type (an empty array says `ARRAY<INT64>`, which
/// only matters for error messages).
pub(crate) fn value_type(v: &Value) -> Option<Type> {
    match v {
        Value::Null => None,
        Value::Array(items) => Some(Type::Array(Box::new(
            items.iter().find_map(value_type).unwrap_or(Type::Int64),
        ))),
        Value::Struct(fields) => Some(Type::Struct(
            fields
                .iter()
                .map(|f| (String::new(), value_type(f).unwrap_or(Type::Int64)))
                .collect(),
        )),
        v => v.scalar_type(),
    }
}

/// The NUMERIC a text or FLOAT64 value is, exactly, or an error saying why
/// NUMERIC cannot hold it: a nonzero digit past the ninth decimal is
/// INVALID_ARGUMENT, too many integer digits OUT_OF_RANGE. A FLOAT64 is
/// read as its shortest decimal form (`0.1`, not the binary fraction
/// nearest to it), the digits a literal was written with.
pub fn exact_numeric(text: &str) -> Result<Numeric> {
    Numeric::parse_exact(text).map_err(|e| {
        let message = format!(
            "{e}; numeric holds at most 29 digits before the decimal point and 9 after it here, \
             and a value it cannot hold exactly is refused rather than rounded"
        );
        match e {
            rowtree_types::Error::OutOfRange(_) => Error::out_of_range(message),
            _ => Error::invalid(message),
        }
    })
}

/// [`exact_numeric`] of a STRING or FLOAT64 argument (the function
/// `EXACT_NUMERIC_CAST` evaluates).
pub(crate) fn eval_exact_numeric(args: &[Value], _: &mut dyn crate::EvalContext) -> Result<Value> {
    match &args[0] {
        Value::String(s) => exact_numeric(s).map(Value::Numeric),
        Value::Float64(f) if f.is_finite() => exact_numeric(&f.to_string()).map(Value::Numeric),
        Value::Float64(f) => Err(Error::out_of_range(format!("Invalid NUMERIC value: {f}"))),
        other => cast(other.clone(), &Type::Numeric),
    }
}

fn from_string(s: String, to: &Type) -> Result<Value> {
    Ok(match to {
        Type::String => Value::String(s),
        Type::Bytes => Value::Bytes(s.into_bytes()),
        Type::Int64 => Value::Int64(
            parse_i64(&s).ok_or_else(|| Error::out_of_range(format!("Bad int64 value: {s}")))?,
        ),
        Type::Float64 => Value::Float64(
            parse_f64(&s).ok_or_else(|| Error::out_of_range(format!("Bad double value: {s}")))?,
        ),
        Type::Float32 => Value::Float32(
            s.trim()
                .parse::<f32>()
                .map_err(|_| Error::out_of_range(format!("Bad float value: {s}")))?,
        ),
        Type::Numeric => Value::Numeric(Numeric::parse(&s)?),
        Type::Bool => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(Error::out_of_range(format!("Bad bool value: {s}"))),
        },
        Type::Date => Value::Date(Date::parse(&s)?),
        Type::Timestamp => Value::Timestamp(Timestamp::parse(&s, &TimeZone::LOS_ANGELES)?),
        // Like the other runtime cast failures, a malformed UUID is
        // OUT_OF_RANGE (the message says what is wrong with the text).
        Type::Uuid => Value::Uuid(Uuid::parse(&s).map_err(|e| Error::out_of_range(e.to_string()))?),
        _ => return Err(Error::invalid(format!("Invalid cast from STRING to {to}"))),
    })
}

/// Decimal or `0x` hexadecimal, optionally signed, surrounding whitespace
/// allowed (GoogleSQL's `CAST(STRING AS INT64)`).
pub(crate) fn parse_i64(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let magnitude: u64 = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u64::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().ok()?
        }
        None => return None,
    };
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Rounds half away from zero; NaN, infinities and out-of-range values are
/// errors.
fn float_to_i64(f: f64) -> Result<i64> {
    if !f.is_finite() {
        return Err(Error::out_of_range(format!(
            "Illegal conversion of non-finite floating point number to int64: {}",
            rowtree_types::format_f64(f)
        )));
    }
    let r = f.round();
    // 2^63 is exactly representable; anything at or above it overflows.
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&r) {
        return Err(Error::out_of_range(format!(
            "int64 out of range: {}",
            rowtree_types::format_f64(f)
        )));
    }
    Ok(r as i64)
}

fn f64_to_f32(f: f64) -> Result<f32> {
    let r = f as f32;
    if f.is_finite() && !r.is_finite() {
        return Err(Error::out_of_range(format!(
            "float out of range: {}",
            rowtree_types::format_f64(f)
        )));
    }
    Ok(r)
}
