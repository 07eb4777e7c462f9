//! `--param name=TYPE:value`: typed query parameters on the command line.

use rowtree_types::{Type, Value};

/// Parses `name=TYPE:value` (e.g. `id=INT64:42`, `ts=TIMESTAMP:2024-01-01T00:00:00Z`,
/// `tags=ARRAY<STRING>:["a","b"]` is not supported: scalar types only).
pub fn parse(spec: &str) -> Result<(String, Type, Value), String> {
    let (name, rest) = spec
        .split_once('=')
        .ok_or_else(|| format!("bad --param {spec:?}: expected name=TYPE:value"))?;
    let (ty, text) = rest
        .split_once(':')
        .ok_or_else(|| format!("bad --param {spec:?}: expected name=TYPE:value"))?;
    let ty = match ty.trim().to_ascii_uppercase().as_str() {
        "BOOL" => Type::Bool,
        "INT64" => Type::Int64,
        "FLOAT32" => Type::Float32,
        "FLOAT64" => Type::Float64,
        "NUMERIC" => Type::Numeric,
        "STRING" => Type::String,
        "BYTES" => Type::Bytes,
        "DATE" => Type::Date,
        "TIMESTAMP" => Type::Timestamp,
        "JSON" => Type::Json,
        "UUID" => Type::Uuid,
        other => return Err(format!("bad --param {spec:?}: unknown type {other}")),
    };
    let name = name.trim().trim_start_matches('@').to_string();
    if text.eq_ignore_ascii_case("NULL") {
        return Ok((name, ty, Value::Null));
    }
    let value = rowtree_expr::cast(Value::String(text.to_string()), &ty)
        .map_err(|e| format!("bad --param {spec:?}: {e}"))?;
    Ok((name, ty, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_typed_values() {
        assert_eq!(
            parse("id=INT64:42").unwrap(),
            ("id".into(), Type::Int64, Value::Int64(42))
        );
        assert_eq!(
            parse("@s=string:a:b").unwrap().2,
            Value::String("a:b".into())
        );
        assert_eq!(parse("x=BOOL:NULL").unwrap().2, Value::Null);
        assert!(parse("id=INT32:1").is_err());
        assert!(parse("id=INT64:abc").is_err());
        assert!(parse("nothing").is_err());
    }
}
