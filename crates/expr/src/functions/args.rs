//! Reading evaluated arguments. The binder has already checked every
//! argument against a signature, so a value of the wrong kind here is a bug
//! in the registry, reported as an internal error naming what was expected
//! rather than a panic.

use rowtree_types::{Date, Timestamp, Value};

use crate::{Error, Result};

/// The error for an argument of a kind the registry's signatures exclude.
pub(super) fn internal(name: &str) -> Error {
    Error::invalid(format!(
        "internal error: {name} called with unexpected argument types"
    ))
}

/// An OUT_OF_RANGE error: the arguments are well typed but their values
/// are not accepted.
pub(super) fn oor(message: impl Into<String>) -> Error {
    Error::out_of_range(message)
}

pub(super) fn int(v: &Value) -> Result<i64> {
    match v {
        Value::Int64(i) => Ok(*i),
        _ => Err(internal("integer argument")),
    }
}

pub(super) fn float(v: &Value) -> Result<f64> {
    match v {
        Value::Float64(f) => Ok(*f),
        Value::Float32(f) => Ok(*f as f64),
        Value::Int64(i) => Ok(*i as f64),
        _ => Err(internal("FLOAT64 argument")),
    }
}

pub(super) fn string(v: &Value) -> Result<&str> {
    match v {
        Value::String(s) => Ok(s),
        _ => Err(internal("STRING argument")),
    }
}

pub(super) fn date(v: &Value) -> Result<Date> {
    match v {
        Value::Date(d) => Ok(*d),
        _ => Err(internal("DATE argument")),
    }
}

pub(super) fn timestamp(v: &Value) -> Result<Timestamp> {
    match v {
        Value::Timestamp(t) => Ok(*t),
        _ => Err(internal("TIMESTAMP argument")),
    }
}

pub(super) fn array(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Array(items) => Ok(items),
        _ => Err(internal("ARRAY argument")),
    }
}

/// The bytes of a STRING (UTF-8) or BYTES value.
pub(super) fn bytes_of(v: &Value) -> Result<&[u8]> {
    match v {
        Value::String(s) => Ok(s.as_bytes()),
        Value::Bytes(b) => Ok(b),
        _ => Err(internal("string function")),
    }
}

/// A STRING result for STRING inputs, BYTES for BYTES.
pub(super) fn same_kind(like: &Value, bytes: Vec<u8>) -> Result<Value> {
    match like {
        Value::String(_) => String::from_utf8(bytes)
            .map(Value::String)
            .map_err(|_| oor("Result is not valid UTF-8")),
        _ => Ok(Value::Bytes(bytes)),
    }
}

/// Units of a STRING (characters) or BYTES (bytes) value, as strings of
/// bytes, so one implementation serves both.
pub(super) fn units(v: &Value) -> Result<Vec<Vec<u8>>> {
    Ok(match v {
        Value::String(s) => s.chars().map(|c| c.to_string().into_bytes()).collect(),
        Value::Bytes(b) => b.iter().map(|x| vec![*x]).collect(),
        _ => return Err(internal("string function")),
    })
}

/// A FLOAT64 result; infinite from finite inputs is an overflow error.
pub(super) fn float_result(name: &str, r: f64, inputs_finite: bool) -> Result<Value> {
    if r.is_infinite() && inputs_finite {
        return Err(oor(format!("Floating point overflow in function {name}")));
    }
    Ok(Value::Float64(r))
}
