//! String functions over STRING (counted in characters) and BYTES (counted
//! in bytes): `CONCAT`, `SUBSTR`, `LENGTH`, `UPPER`/`LOWER`, `TRIM`, `LPAD`,
//! `REPEAT`, `REPLACE`, `SPLIT`, `STRPOS`, `REVERSE`, `STARTS_WITH`... Most
//! accept either kind and return the kind they were given; [`units`] lets
//! one implementation serve both.

use rowtree_types::Value;

use super::args::{bytes_of, int, internal, oor, same_kind, string, units};
use crate::{Error, EvalContext, Result};

pub(super) fn eval_concat(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let bytes = args
        .iter()
        .map(|a| match a {
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            _ => 0,
        })
        .sum();
    crate::check_output("CONCAT", bytes, 0)?;
    match args.first() {
        Some(Value::String(_)) => {
            let mut out = String::new();
            for a in args {
                if let Value::String(s) = a {
                    out.push_str(s);
                }
            }
            Ok(Value::String(out))
        }
        Some(Value::Bytes(_)) => {
            let mut out = Vec::new();
            for a in args {
                if let Value::Bytes(b) = a {
                    out.extend_from_slice(b);
                }
            }
            Ok(Value::Bytes(out))
        }
        _ => Err(internal("CONCAT")),
    }
}

/// GoogleSQL `SUBSTR(value, position[, length])`: positions count from 1;
/// a negative position counts from the end; 0 means 1; a position past
/// the end gives an empty result; a negative length is an error.
pub(super) fn eval_substr(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let position = match &args[1] {
        Value::Int64(p) => *p,
        _ => return Err(internal("SUBSTR")),
    };
    let length = match args.get(2) {
        None => None,
        Some(Value::Int64(l)) if *l < 0 => {
            return Err(Error::out_of_range(
                "Third argument in SUBSTR() cannot be negative",
            ))
        }
        Some(Value::Int64(l)) => Some(*l as u64),
        Some(_) => return Err(internal("SUBSTR")),
    };
    let range = |len: usize| -> (usize, usize) {
        let len = len as i64;
        let start = if position > 0 {
            (position - 1).min(len)
        } else if position < 0 {
            (len + position).max(0)
        } else {
            0
        };
        let end = match length {
            Some(l) => (start as u64).saturating_add(l).min(len as u64) as i64,
            None => len,
        };
        (start as usize, end as usize)
    };
    match &args[0] {
        Value::String(s) => {
            let chars: Vec<char> = s.chars().collect();
            let (start, end) = range(chars.len());
            Ok(Value::String(chars[start..end].iter().collect()))
        }
        Value::Bytes(b) => {
            let (start, end) = range(b.len());
            Ok(Value::Bytes(b[start..end].to_vec()))
        }
        _ => Err(internal("SUBSTR")),
    }
}

pub(super) fn eval_strpos(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let (hay, needle) = (bytes_of(&args[0])?, bytes_of(&args[1])?);
    let pos = if needle.is_empty() {
        Some(0)
    } else {
        hay.windows(needle.len()).position(|w| w == needle)
    };
    Ok(Value::Int64(match (pos, &args[0]) {
        (None, _) => 0,
        (Some(p), Value::String(s)) => s[..p].chars().count() as i64 + 1,
        (Some(p), _) => p as i64 + 1,
    }))
}

pub(super) fn eval_trim(kind: u8, args: &[Value]) -> Result<Value> {
    let items = units(&args[0])?;
    let set: Vec<Vec<u8>> = match args.get(1) {
        Some(v) => units(v)?,
        None => vec![b" ".to_vec()],
    };
    let (mut start, mut end) = (0, items.len());
    if kind != b'R' {
        while start < end && set.contains(&items[start]) {
            start += 1;
        }
    }
    if kind != b'L' {
        while end > start && set.contains(&items[end - 1]) {
            end -= 1;
        }
    }
    let out: Vec<u8> = match (&args[0], args.get(1)) {
        // TRIM(s) removes all Unicode whitespace.
        (Value::String(s), None) => {
            let t = match kind {
                b'L' => s.trim_start(),
                b'R' => s.trim_end(),
                _ => s.trim(),
            };
            return Ok(Value::String(t.to_string()));
        }
        _ => items[start..end].concat(),
    };
    same_kind(&args[0], out)
}

pub(super) fn eval_pad(left: bool, args: &[Value]) -> Result<Value> {
    let items = units(&args[0])?;
    let len = int(&args[1])?;
    if len < 0 {
        return Err(oor(format!(
            "Second argument (length) of {} cannot be negative: {len}",
            if left { "LPAD" } else { "RPAD" }
        )));
    }
    if len > 1 << 20 {
        return Err(oor("Output of LPAD/RPAD exceeds the maximum allowed size"));
    }
    let pattern = match args.get(2) {
        Some(p) => units(p)?,
        None => vec![b" ".to_vec()],
    };
    let len = len as usize;
    if len <= items.len() {
        return same_kind(&args[0], items[..len].concat());
    }
    if pattern.is_empty() {
        return Err(oor("Third argument (pattern) of LPAD/RPAD cannot be empty"));
    }
    let fill: Vec<Vec<u8>> = pattern
        .iter()
        .cycle()
        .take(len - items.len())
        .cloned()
        .collect();
    let out = if left {
        [fill, items].concat()
    } else {
        [items, fill].concat()
    };
    same_kind(&args[0], out.concat())
}

pub(super) fn eval_repeat(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let n = int(&args[1])?;
    if n < 0 {
        return Err(oor(format!(
            "Second argument of REPEAT cannot be negative: {n}"
        )));
    }
    let b = bytes_of(&args[0])?;
    if b.len().saturating_mul(n as usize) > crate::MAX_OUTPUT_BYTES {
        return Err(oor("Output of REPEAT exceeds the maximum allowed size"));
    }
    same_kind(&args[0], b.repeat(n as usize))
}

pub(super) fn eval_replace(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], &args[1], &args[2]) {
        (Value::String(s), Value::String(from), Value::String(to)) => {
            Ok(Value::String(if from.is_empty() {
                s.clone()
            } else {
                s.replace(from.as_str(), to)
            }))
        }
        (Value::Bytes(s), Value::Bytes(from), Value::Bytes(to)) => {
            if from.is_empty() {
                return Ok(Value::Bytes(s.clone()));
            }
            let mut out = Vec::new();
            let mut i = 0;
            while i < s.len() {
                if s[i..].starts_with(from) {
                    out.extend_from_slice(to);
                    i += from.len();
                } else {
                    out.push(s[i]);
                    i += 1;
                }
            }
            Ok(Value::Bytes(out))
        }
        _ => Err(internal("REPLACE")),
    }
}

pub(super) fn eval_split(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match (&args[0], args.get(1)) {
        (Value::String(s), delim) => {
            let delim = match delim {
                Some(d) => string(d)?,
                None => ",",
            };
            let parts: Vec<Value> = if delim.is_empty() {
                if s.is_empty() {
                    vec![Value::String(String::new())]
                } else {
                    s.chars().map(|c| Value::String(c.to_string())).collect()
                }
            } else {
                s.split(delim)
                    .map(|p| Value::String(p.to_string()))
                    .collect()
            };
            Ok(Value::Array(parts))
        }
        (Value::Bytes(b), Some(Value::Bytes(delim))) => {
            let mut parts = Vec::new();
            if delim.is_empty() {
                parts = b.iter().map(|x| Value::Bytes(vec![*x])).collect();
            } else {
                let mut start = 0;
                let mut i = 0;
                while i + delim.len() <= b.len() {
                    if b[i..].starts_with(delim) {
                        parts.push(Value::Bytes(b[start..i].to_vec()));
                        i += delim.len();
                        start = i;
                    } else {
                        i += 1;
                    }
                }
                parts.push(Value::Bytes(b[start..].to_vec()));
            }
            Ok(Value::Array(parts))
        }
        _ => Err(internal("SPLIT")),
    }
}

pub(super) fn eval_length(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::String(s) => Ok(Value::Int64(s.chars().count() as i64)),
        Value::Bytes(b) => Ok(Value::Int64(b.len() as i64)),
        _ => Err(internal("LENGTH")),
    }
}

/// `CHAR_LENGTH` and `CHARACTER_LENGTH`: characters of a STRING.
pub(super) fn eval_char_length(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Int64(string(&args[0])?.chars().count() as i64))
}

pub(super) fn eval_byte_length(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Int64(bytes_of(&args[0])?.len() as i64))
}

pub(super) fn eval_upper(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::String(s) => Ok(Value::String(s.to_uppercase())),
        Value::Bytes(b) => Ok(Value::Bytes(b.to_ascii_uppercase())),
        _ => Err(internal("UPPER")),
    }
}

pub(super) fn eval_lower(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::String(s) => Ok(Value::String(s.to_lowercase())),
        Value::Bytes(b) => Ok(Value::Bytes(b.to_ascii_lowercase())),
        _ => Err(internal("LOWER")),
    }
}

pub(super) fn eval_starts_with(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Bool(
        bytes_of(&args[0])?.starts_with(bytes_of(&args[1])?),
    ))
}

pub(super) fn eval_ends_with(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Bool(
        bytes_of(&args[0])?.ends_with(bytes_of(&args[1])?),
    ))
}

pub(super) fn eval_reverse(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::String(s) => Ok(Value::String(s.chars().rev().collect())),
        Value::Bytes(b) => Ok(Value::Bytes(b.iter().rev().copied().collect())),
        _ => Err(internal("REVERSE")),
    }
}
