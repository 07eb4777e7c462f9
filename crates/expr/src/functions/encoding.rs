//! Conversions between BYTES and their text encodings: base64, hex, code
//! points, and the lossy `SAFE_CONVERT_BYTES_TO_STRING`.

use base64::Engine as _;
use rowtree_types::Value;

use super::args::{array, bytes_of, internal, oor, string};
use crate::{EvalContext, Result};

pub(super) fn eval_code_points_to_string(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let mut out = String::new();
    for v in array(&args[0])? {
        match v {
            Value::Null => return Ok(Value::Null),
            Value::Int64(c) => out.push(
                u32::try_from(*c)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| oor(format!("Invalid code point: {c}")))?,
            ),
            _ => return Err(internal("CODE_POINTS_TO_STRING")),
        }
    }
    Ok(Value::String(out))
}

pub(super) fn eval_to_code_points(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Array(match &args[0] {
        Value::String(s) => s.chars().map(|c| Value::Int64(c as i64)).collect(),
        Value::Bytes(b) => b.iter().map(|c| Value::Int64(*c as i64)).collect(),
        _ => return Err(internal("TO_CODE_POINTS")),
    }))
}

pub(super) fn eval_from_hex(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let s = string(&args[0])?;
    let padded = if s.len() % 2 == 1 {
        format!("0{s}")
    } else {
        s.to_string()
    };
    let bad = || {
        oor(format!(
            "Failed to decode invalid hexadecimal string: \"{s}\""
        ))
    };
    let digits = padded.as_bytes();
    let mut out = Vec::with_capacity(digits.len() / 2);
    for pair in digits.chunks(2) {
        let text = std::str::from_utf8(pair).map_err(|_| bad())?;
        out.push(u8::from_str_radix(text, 16).map_err(|_| bad())?);
    }
    Ok(Value::Bytes(out))
}

pub(super) fn eval_to_base64(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::String(
        base64::engine::general_purpose::STANDARD.encode(bytes_of(&args[0])?),
    ))
}

pub(super) fn eval_from_base64(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let s = string(&args[0])?;
    base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map(Value::Bytes)
        .map_err(|_| oor(format!("Failed to decode invalid base64 string: \"{s}\"")))
}

pub(super) fn eval_to_hex(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::String(
        bytes_of(&args[0])?
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    ))
}

pub(super) fn eval_safe_convert_bytes_to_string(
    args: &[Value],
    _: &mut dyn EvalContext,
) -> Result<Value> {
    Ok(Value::String(
        String::from_utf8_lossy(bytes_of(&args[0])?).into_owned(),
    ))
}

pub(super) fn eval_code_points_to_bytes(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let mut out = Vec::new();
    for v in array(&args[0])? {
        match v {
            Value::Null => return Ok(Value::Null),
            Value::Int64(c) => {
                out.push(u8::try_from(*c).map_err(|_| oor(format!("Invalid code point: {c}")))?)
            }
            _ => return Err(internal("CODE_POINTS_TO_BYTES")),
        }
    }
    Ok(Value::Bytes(out))
}
