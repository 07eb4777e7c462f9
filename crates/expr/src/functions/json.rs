//! JSON functions: `JSON_VALUE`, `JSON_QUERY` and their `_ARRAY` forms
//! (with a small JSONPath: `$`, `.name`, `["name"]`, `[index]`),
//! `PARSE_JSON`, `TO_JSON`, `TO_JSON_STRING`, `JSON_TYPE`, the conversions
//! `BOOL`, `INT64`, `FLOAT64` and `STRING` of a JSON value, and the
//! subscript operators `json['a']`, `json[0]`, `json.a`.
//!
//! The `JSON_*` extractors also take a STRING holding JSON text; they then
//! return STRINGs, as in GoogleSQL.

use base64::Engine as _;
use rowtree_types::{format_f64, TimeZone, Type, Value};

use super::args::{internal, oor, string};
use crate::datetime::zone_of;
use crate::{EvalContext, Result};

enum PathStep {
    Key(String),
    Index(usize),
}

fn json_path(path: &str) -> Result<Vec<PathStep>> {
    let bad = || oor(format!("Invalid JSONPath: {path}"));
    let rest = path.strip_prefix('$').ok_or_else(bad)?;
    let chars: Vec<char> = rest.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                i += 1;
                if i < chars.len() && chars[i] == '"' {
                    let end = chars[i + 1..]
                        .iter()
                        .position(|c| *c == '"')
                        .ok_or_else(bad)?;
                    steps.push(PathStep::Key(chars[i + 1..i + 1 + end].iter().collect()));
                    i += end + 2;
                } else {
                    let start = i;
                    while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                        i += 1;
                    }
                    if start == i {
                        return Err(bad());
                    }
                    steps.push(PathStep::Key(chars[start..i].iter().collect()));
                }
            }
            '[' => {
                let end = chars[i..].iter().position(|c| *c == ']').ok_or_else(bad)? + i;
                let inner: String = chars[i + 1..end].iter().collect();
                let inner = inner.trim();
                if let Some(q) = inner
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                {
                    steps.push(PathStep::Key(q.to_string()));
                } else {
                    steps.push(PathStep::Index(inner.parse().map_err(|_| bad())?));
                }
                i = end + 1;
            }
            _ => return Err(bad()),
        }
    }
    Ok(steps)
}

fn json_at<'a>(json: &'a serde_json::Value, path: &str) -> Result<Option<&'a serde_json::Value>> {
    let mut cur = json;
    for step in json_path(path)? {
        let next = match (&step, cur) {
            (PathStep::Key(k), serde_json::Value::Object(m)) => m.get(k),
            (PathStep::Index(n), serde_json::Value::Array(a)) => a.get(*n),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return Ok(None),
        }
    }
    Ok(Some(cur))
}

fn json_input(v: &Value) -> Result<serde_json::Value> {
    match v {
        Value::Json(j) => Ok(j.clone()),
        Value::String(s) => Ok(rowtree_types::parse_json(s)?),
        _ => Err(internal("JSON argument")),
    }
}

fn path_arg(args: &[Value]) -> Result<&str> {
    match args.get(1) {
        Some(p) => string(p),
        None => Ok("$"),
    }
}

fn json_scalar_text(j: &serde_json::Value) -> Option<String> {
    match j {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub(super) fn eval_json_value(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(json_at(&j, path_arg(args)?)?
        .and_then(json_scalar_text)
        .map_or(Value::Null, Value::String))
}

pub(super) fn eval_json_query(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(match (json_at(&j, path_arg(args)?)?, &args[0]) {
        (None, _) => Value::Null,
        (Some(v), Value::Json(_)) => Value::Json(v.clone()),
        (Some(v), _) => Value::String(v.to_string()),
    })
}

pub(super) fn eval_json_query_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(match (json_at(&j, path_arg(args)?)?, &args[0]) {
        (Some(serde_json::Value::Array(items)), Value::Json(_)) => {
            Value::Array(items.iter().cloned().map(Value::Json).collect())
        }
        (Some(serde_json::Value::Array(items)), _) => {
            Value::Array(items.iter().map(|i| Value::String(i.to_string())).collect())
        }
        _ => Value::Null,
    })
}

pub(super) fn eval_json_value_array(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(match json_at(&j, path_arg(args)?)? {
        Some(serde_json::Value::Array(items)) => {
            let mut out = Vec::new();
            for i in items {
                match i {
                    serde_json::Value::Null => out.push(Value::Null),
                    i => match json_scalar_text(i) {
                        Some(t) => out.push(Value::String(t)),
                        None => return Ok(Value::Null),
                    },
                }
            }
            Value::Array(out)
        }
        _ => Value::Null,
    })
}

pub(super) fn eval_json_type(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let j = json_input(&args[0])?;
    Ok(Value::String(
        match j {
            serde_json::Value::Null => "null",
            serde_json::Value::Bool(_) => "boolean",
            serde_json::Value::Number(_) => "number",
            serde_json::Value::String(_) => "string",
            serde_json::Value::Array(_) => "array",
            serde_json::Value::Object(_) => "object",
        }
        .into(),
    ))
}

pub(super) fn json_convert(args: &[Value], to: &str) -> Result<Value> {
    let j = json_input(&args[0])?;
    let bad = || oor(format!("The provided JSON input is not {to}"));
    Ok(match (to, &j) {
        ("a boolean", serde_json::Value::Bool(b)) => Value::Bool(*b),
        ("an integer", serde_json::Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Int64(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => Value::Int64(f as i64),
            _ => return Err(bad()),
        },
        ("a number", serde_json::Value::Number(n)) => Value::Float64(n.as_f64().ok_or_else(bad)?),
        ("a string", serde_json::Value::String(s)) => Value::String(s.clone()),
        _ => return Err(bad()),
    })
}

/// `STRING(json)` (a JSON string's value) or `STRING(timestamp[,
/// time_zone])` (the timestamp as `CAST(... AS STRING)` writes it, in the
/// zone, by default America/Los_Angeles).
pub(super) fn eval_string(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    match &args[0] {
        Value::Timestamp(t) => {
            let tz = match args.get(1) {
                Some(z) => zone_of(z)?,
                None => TimeZone::LOS_ANGELES,
            };
            Ok(Value::String(t.format_sql(&tz)))
        }
        _ => json_convert(args, "a string"),
    }
}

/// A JSON value for `TO_JSON`: structs become objects with positional
/// keys when their field names are not known to the value.
pub(crate) fn to_json(v: &Value, ty: Option<&Type>) -> Result<serde_json::Value> {
    let json = json_of(v, ty)?;
    // A JSON value inside an array or struct comes out one level deeper.
    rowtree_types::check_json_depth(&json)?;
    Ok(json)
}

fn json_of(v: &Value, ty: Option<&Type>) -> Result<serde_json::Value> {
    use serde_json::Value as J;
    Ok(match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int64(i) => J::from(*i),
        Value::Float64(f) if !f.is_finite() => J::String(format_f64(*f)),
        Value::Float64(f) => J::from(*f),
        Value::Float32(f) => J::from(*f as f64),
        Value::Numeric(n) => {
            serde_json::from_str(&n.to_string()).unwrap_or(J::String(n.to_string()))
        }
        Value::String(s) => J::String(s.clone()),
        Value::Bytes(b) => J::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::Date(d) => J::String(d.to_string()),
        Value::Timestamp(t) => J::String(t.to_rfc3339()),
        Value::Uuid(u) => J::String(u.to_string()),
        Value::Json(j) => j.clone(),
        Value::Array(items) => {
            let elem = match ty {
                Some(Type::Array(e)) => Some(&**e),
                _ => None,
            };
            J::Array(
                items
                    .iter()
                    .map(|i| json_of(i, elem))
                    .collect::<Result<_>>()?,
            )
        }
        Value::Struct(fields) => {
            let names: Vec<(String, Option<&Type>)> = match ty {
                Some(Type::Struct(f)) => f.iter().map(|(n, t)| (n.clone(), Some(t))).collect(),
                _ => (0..fields.len()).map(|_| (String::new(), None)).collect(),
            };
            let mut map = serde_json::Map::new();
            for (i, (v, (name, t))) in fields.iter().zip(names).enumerate() {
                let key = if name.is_empty() {
                    format!("_field_{}", i + 1)
                } else {
                    name
                };
                if !map.contains_key(&key) {
                    map.insert(key, json_of(v, t)?);
                }
            }
            J::Object(map)
        }
    })
}

pub(super) fn check_any_one(args: &[Option<Type>], result: Type) -> Option<(Vec<Type>, Type)> {
    if args.len() != 1 {
        return None;
    }
    Some((vec![args[0].clone().unwrap_or(Type::Int64)], result))
}

pub(super) fn eval_json_subscript(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    let found = match (&args[0], &args[1]) {
        (Value::Json(serde_json::Value::Object(members)), Value::String(name)) => {
            members.get(name.as_str())
        }
        (Value::Json(serde_json::Value::Array(items)), Value::Int64(i)) => {
            usize::try_from(*i).ok().and_then(|i| items.get(i))
        }
        (Value::Json(_), Value::String(_) | Value::Int64(_)) => None,
        _ => return Err(internal("JSON subscript")),
    };
    Ok(found.map_or(Value::Null, |j| Value::Json(j.clone())))
}

pub(super) fn eval_parse_json(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Json(rowtree_types::parse_json(string(&args[0])?)?))
}

pub(super) fn eval_to_json(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::Json(to_json(&args[0], None)?))
}

pub(super) fn eval_to_json_string(args: &[Value], _: &mut dyn EvalContext) -> Result<Value> {
    Ok(Value::String(to_json(&args[0], None)?.to_string()))
}
